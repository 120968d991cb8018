"""Where in the sources TeX typeset each printed answer: the PDF's position, mapped back by SyncTeX.

The answer's first glyph is found on its page (after the "Answer:" label of the 2024-2026 templates;
the 2021/22 template prints no label, so its bracketed answer, "[Yes]"), and the ``synctex`` tool that
ships with TeX names the input file and line TeX was reading when it put that glyph on the page: the
line of the answer macro as TeX met it, through every macro, conditional and ``\\input``.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from checklist_eval.models import ChecklistItem

_LABELS = ("Answer:",)
_BRACKETS = ("[Yes]", "[No]", "[N/A]", "[NA]", "[TODO]")
_TIMEOUT_S = 20


def _anchors(textpage, needles: Sequence[str]) -> list[tuple[int, int]]:
    """(index of the first character after the needle, needle length) of every occurrence, in order."""
    found = []
    for needle in needles:
        searcher = textpage.search(needle, match_case=True)
        while (hit := searcher.get_next()) is not None:
            found.append((hit[0] + hit[1], hit[1]))
        searcher.close()
    return sorted(found)


def _point_after(textpage, index: int, height: float, back: int) -> tuple[float, float] | None:
    """The middle of the first visible glyph at or after ``index`` (``back``: the needle was the answer
    itself, so its own first glyph), in SyncTeX's coordinates (points from the top-left corner)."""
    count = textpage.count_chars()
    i = index - back if back else index
    while 0 <= i < count and i < index + 8:
        if textpage.get_text_range(i, 1).strip():
            left, bottom, right, top = textpage.get_charbox(i)
            return (left + right) / 2, height - (bottom + top) / 2
        i += 1
    return None


def _page_anchors(doc, number: int) -> tuple[list[tuple[int, float, float]], bool]:
    """Every answer anchor's point on a page ((page, x, y), in text order), and whether they are labels
    ("Answer:") rather than bracketed answers."""
    page = doc[number - 1]
    textpage = page.get_textpage()
    try:
        labelled = _anchors(textpage, _LABELS)
        anchors, back = (labelled, False) if labelled else (_anchors(textpage, _BRACKETS), True)
        height = page.get_height()
        points = [_point_after(textpage, index, height, length if back else 0) for index, length in anchors]
        return [(number, *p) for p in points if p is not None], not back
    finally:
        textpage.close()
        page.close()


def answer_points(pdf: Path, items: Sequence[ChecklistItem]) -> dict[str, tuple[int, float, float]]:
    """Each answered item's (page, x, y). The anchors of the checklist's pages, in order, are matched to
    the answered items in order; where there are more anchors than answers (an "Answer:" in the body
    before the checklist, or after it), at the offset that puts most answers on the page the PDF reader
    found them on or the next (a question that starts at a page's foot has its answer overleaf)."""
    import pypdfium2 as pdfium

    answered = [it for it in items if it.page and it.answer is not None]
    if not answered:
        return {}
    doc = pdfium.PdfDocument(str(pdf))
    try:
        pages = range(min(it.page or 1 for it in answered), min(max(it.page or 1 for it in answered) + 1, len(doc)) + 1)
        found = [_page_anchors(doc, n) for n in pages]
    finally:
        doc.close()
    labelled = any(lab for _, lab in found)
    anchors = [a for points, lab in found if lab == labelled for a in points]
    if len(anchors) < len(answered):
        return {}  # a label the text layer lost: no guess at which answer is which

    def fits(offset: int) -> int:
        return sum(anchors[offset + i][0] - (it.page or 0) in (0, 1) for i, it in enumerate(answered))

    best = max(range(len(anchors) - len(answered) + 1), key=lambda o: (fits(o), -o))
    return {it.id: anchors[best + i] for i, it in enumerate(answered)}


def source_line(pdf: Path, page: int, x: float, y: float, copy_root: str, cwd: str) -> tuple[str, int] | None:
    """The project file and line SyncTeX gives for a point. ``copy_root``: the project copy TeX
    compiled; ``cwd``: the root file's folder in it, where TeX ran (relative input names start there)."""
    tool = shutil.which("synctex")
    if tool is None:
        return None
    try:
        out = subprocess.run([tool, "edit", "-o", f"{page}:{x:.2f}:{y:.2f}:{pdf.name}", "-d", str(pdf.parent)],
                             cwd=pdf.parent, capture_output=True, text=True, timeout=_TIMEOUT_S,
                             stdin=subprocess.DEVNULL, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    name = line = None
    for row in out.splitlines():
        if row.startswith("Input:") and name is None:
            name = row[len("Input:"):].strip()
        elif row.startswith("Line:") and line is None:
            try:
                line = int(row[len("Line:"):].strip())
            except ValueError:
                return None
    if not name or not line or line < 1:
        return None
    return relative_input(name, copy_root, cwd), line


def relative_input(name: str, copy_root: str, cwd: str) -> str:
    """A SyncTeX input name (absolute, or relative to the folder TeX ran in: "./x.tex") as a project
    path ("sections/checklist.tex")."""
    if not os.path.isabs(name):
        name = os.path.join(copy_root, cwd, name)
    rel = os.path.relpath(os.path.normpath(name), copy_root)
    return posixpath.basename(name) if rel.startswith("..") else Path(rel).as_posix()
