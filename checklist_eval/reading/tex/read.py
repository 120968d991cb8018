"""TeX's reading of a LaTeX project: compile it (or take the cached compile), read the checklist out
of the PDF with the PDF reader, and place each printed answer at its ``file:line`` with SyncTeX.

As few passes as the checklist needs: one, and a second only when the first left the checklist's
justifications with unresolved references ("Section ??") and the log asks for a rerun. A project TeX
cannot read says why in one line (:class:`TexUnread`): the engine is not on the machine, a package or
class is missing (named with the Debian package that has it), TeX stopped, ran out of time, or printed
no checklist.
"""

from __future__ import annotations

import posixpath
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from checklist_eval.errors import InputError, NoChecklistError
from checklist_eval.models import ChecklistSpec, Paper
from checklist_eval.reading.tex import compile as tex
from checklist_eval.reading.tex.engine import (
    STAND_IN,
    cm_super_stand_in,
    engine_for,
    engine_version,
    missing_file_line,
    missing_font_line,
    missing_venue_styles,
    read_log,
)
from checklist_eval.reading.tex.project import Files
from checklist_eval.reading.tex.synctex import answer_points, source_line

MAX_PASSES = 2
_INSTALL = {"pdflatex": "texlive-latex-base", "xelatex": "texlive-xetex", "lualatex": "texlive-luatex"}


class TexUnread(Exception):
    """TeX gave no reading of this project; the message is the one line that says why."""


class NoPrintedChecklist(TexUnread):
    """TeX compiled the project and its PDF shows no checklist (``\\includeonly`` left it out, a switch
    skips it): the source's checklist is one no reader of the PDF sees."""


@dataclass
class TexReading:
    paper: Paper  # the checklist and body as TeX printed them, answers placed at file:line where SyncTeX knows
    engine: str
    passes: int
    seconds: float  # compile wall time (0 when it came from the cache)
    cached: bool
    notes: list[str]  # what TeX's reading should be read with (a missing font)


def _latexmkrc(files: Files) -> str | None:
    for name in ("latexmkrc", ".latexmkrc"):
        if name in files.data:
            return files.text(name)
    return None


def engine_of(files: Files, root: str) -> tuple[str, str]:
    return engine_for(files.text(root), _latexmkrc(files))


def read_with_tex(files: Files, root: str, spec: ChecklistSpec | None, label: str, budget_s: float) -> TexReading:
    """TeX's reading of ``root`` in ``files`` within ``budget_s`` seconds of wall time; TexUnread when none."""
    engine, _why = engine_of(files, root)
    version = engine_version(engine)
    if version is None:
        raise TexUnread(f"{engine} not found on this machine ({_INSTALL[engine]})")
    stood_in = _stand_ins(files, root)
    # Latin Modern for the T1 fonts where cm-super is missing: a missing font package should not stop the reading
    fonts = cm_super_stand_in() if engine == "pdflatex" else ""
    if fonts and _uses_t1(files):
        stood_in.append("cm-super is not installed: TeX printed the T1 Computer Modern text in Latin Modern (lmodern)")
    digest = files.digest(root, engine, version, tex.CACHE_FORMAT, *([fonts] if fonts else []))
    compiled = tex.cached(digest)
    if compiled is not None:  # a failed compile is kept too: it fails again at no cost
        paper = _checked_paper(compiled, spec, label)
        return _placed(compiled, paper, root, stood_in)
    workdir = Path(tempfile.mkdtemp(prefix="checklist-eval-tex-"))
    try:
        try:
            files.write(workdir)
        except OSError as err:  # a member name the file system refuses (longer than 255 bytes)...
            raise TexUnread(f"the project's files cannot be written for TeX ({err.strerror or err})") from None
        compiled, outcome = _compile(engine, workdir, root, spec, label, time.monotonic() + budget_s, fonts)
        tex.keep(digest, compiled)  # a failed compile too: a rerun says the same without compiling again
        if isinstance(outcome, TexUnread):
            raise outcome
        return _placed(compiled, outcome, root, stood_in)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _compile(engine: str, workdir: Path, root: str, spec: ChecklistSpec | None, label: str,
             deadline: float, prelude: str) -> tuple[tex.Compiled, Paper | TexUnread]:
    start = time.monotonic()
    out = tex.output_folder(workdir, root)
    passes = 0
    while True:
        passes += 1
        finished = tex.run_pass(engine, workdir, root, deadline, prelude)
        findings = read_log(tex.log_text(workdir, root))
        compiled = tex.Compiled(out, str(workdir), engine, passes, time.monotonic() - start, findings,
                                timed_out=not finished)
        if not finished:
            raise TexUnread(f"{engine} did not finish within {max(deadline - start, 0):.0f} s")
        try:
            paper = _checked_paper(compiled, spec, label)
        except TexUnread as err:
            return compiled, err
        unresolved = any("??" in (it.justification or "") for it in paper.checklist.items)
        if not (unresolved and findings.rerun) or passes >= MAX_PASSES:
            return compiled, paper


def _checked_paper(compiled: tex.Compiled, spec: ChecklistSpec | None, label: str) -> Paper:
    """The PDF's paper, or TexUnread when the run is not one to read answers from."""
    findings = compiled.findings
    if findings.missing:
        more = f" (+{len(findings.missing) - 1} more)" if len(findings.missing) > 1 else ""
        raise TexUnread(missing_file_line(findings.missing[0]) + more)
    pdf = compiled.pdf
    if pdf is None and findings.fonts:  # pdfTeX stops on a font it has no Type 1 file for
        raise TexUnread(missing_font_line(findings.fonts[-1]))
    if pdf is None:
        raise TexUnread(f"{compiled.engine} printed no PDF" + (f" ({findings.fatal})" if findings.fatal else ""))
    from checklist_eval.reading.pdf import parse_pdf

    try:
        paper = parse_pdf(pdf, spec)
    except NoChecklistError:
        if _answer_marks(pdf):
            raise TexUnread("the PDF reader did not read the checklist TeX printed") from None
        raise NoPrintedChecklist("the PDF TeX prints shows no checklist") from None
    except InputError as err:
        raise TexUnread(f"the PDF TeX prints is unreadable: {err.problem}") from None
    return paper.model_copy(update={"source": label})


def _stand_ins(files: Files, root: str) -> list[str]:
    """Venue styles the project loads but does not carry, each given a stand-in beside the root file
    (the answer macros, nothing else): a missing conference style should not stop the reading. Says so."""
    present = {posixpath.basename(n) for n in files.data}
    sources = "\n".join(files.text(n) for n in files.data if n.lower().endswith((".tex", ".sty", ".cls")))
    notes = []
    for name in missing_venue_styles(sources, present):
        files.add(posixpath.join(posixpath.dirname(root), f"{name}.sty"), (STAND_IN % {"name": name}).encode())
        notes.append(f"{name}.sty is not in the project: TeX compiled with a stand-in (the answer macros, "
                     "the article layout)")
    return notes


_T1 = re.compile(r"\\usepackage\s*\[[^\]]{0,200}\bT1\b[^\]]{0,200}\]\s*\{fontenc\}")


def _uses_t1(files: Files) -> bool:
    return any(_T1.search(files.text(n)) for n in files.data if n.lower().endswith((".tex", ".sty", ".cls")))


_MARKS = re.compile(r"\[\s*(?:Yes|No|N/?A|TODO)\s*\]|\bAnswer\s*:")


def _answer_marks(pdf: Path) -> bool:
    """Whether the PDF's text shows answer marks at all: a checklist printed in a shape the PDF reader
    does not read is not a checklist the PDF leaves out."""
    from checklist_eval.reading.pdf import extract_pages

    try:
        return any(_MARKS.search(page) for page in extract_pages(pdf).pages)
    except InputError:
        return False


def _placed(compiled: tex.Compiled, paper: Paper, root: str, stood_in: list[str]) -> TexReading:
    """The paper with each printed answer at the file:line SyncTeX gives (its page where it gives none)."""
    pdf = compiled.pdf
    notes = stood_in + [f"font {f} not found: the text set in it is missing from the PDF or in a substitute font"
                        for f in compiled.findings.fonts[:1]]
    items = paper.checklist.items
    if pdf is not None and compiled.synctex is not None:
        cwd = str(Path(root).parent)
        points = answer_points(pdf, items)
        placed = []
        for it in items:
            where = source_line(pdf, *points[it.id], compiled.workdir, cwd) if it.id in points else None
            placed.append(it.model_copy(update={"file": where[0], "line": where[1]}) if where else it)
        paper = paper.model_copy(update={"checklist": paper.checklist.model_copy(update={"items": placed})})
    return TexReading(paper, compiled.engine, compiled.passes, 0.0 if compiled.cached else compiled.seconds,
                      compiled.cached, notes)
