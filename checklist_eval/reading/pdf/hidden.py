"""Text a PDF's text layer carries but a reader cannot see, cut from each page's text as it is read.

A sentence hidden from the reader still reaches an assessor that reads the text layer, which makes it
the cheapest prompt injection. :mod:`checklist_eval.reading.pdf.hidden_objects` says which text objects of a
page are hidden and how; here their characters become runs, each cut from the text and kept as a
:class:`HiddenRun` with its page.

Only pages with a hidden object pay for the mapping from characters to objects. Runs with fewer than
:data:`MIN_ALNUM` letters or digits (a white dash in a table rule, a bullet) are left alone, and so
are runs under :data:`MIN_SENTENCE_WORDS` words inside figures or off the page.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from checklist_eval.models import HiddenRun, ParseWarning, WarningKind
from checklist_eval.reading.pdf.hidden_objects import Box, _address, _untyped, hidden_objects
from checklist_eval.reading.pdf.techniques import TECHNIQUES

__all__ = ["Cutter", "visible_text", "warning"]

MIN_ALNUM = 3  # a run needs this many letters or digits to say anything ("[Yes]" has 3)
# Inside a figure (a form XObject drawn by another program) and beyond the page edge a hidden run must
# be a sentence: plots and slides leave white labels and placeholder titles behind ("USELESSLY
# ELONGATED REVIEW"), and a table too wide for the page pushes cells out of view ("67 65").
MIN_SENTENCE_WORDS = 5
EXCERPT_CHARS = 200

_text_object_of = _untyped(pdfium_c.FPDFText_GetTextObject, pdfium_c.FPDF_PAGEOBJECT)


def _char_text(textpage: object, text: str) -> str:
    """The page text with one character per pdfium char index (get_text_range's UTF-16 can differ
    in length when a page has characters outside the BMP)."""
    n = pdfium_c.FPDFText_CountChars(textpage)
    if len(text) == n:
        return text
    get = pdfium_c.FPDFText_GetUnicode
    # pdfium reports its line-end hyphen as 2 here and as U+FFFE in get_text_range: keep the latter
    return "".join(chr(code) if code != 2 else "\ufffe" for code in (get(textpage, i) for i in range(n)))


@dataclass
class _Run:
    technique: str
    chars: list[int] = field(default_factory=list)  # hidden char indices
    end: int = 0  # index after the last hidden char
    in_figure: bool = True  # every character of it is drawn inside a form XObject


def _runs(textpage: object, text: str, hidden: dict[int, str], in_figure: set[int]) -> list[_Run]:
    """Consecutive hidden characters of one technique (whitespace and pdfium's generated characters
    between them belong to the run; a visible character ends it)."""
    get_obj = _text_object_of
    runs: list[_Run] = []
    current: _Run | None = None
    for i, ch in enumerate(text):
        obj = get_obj(textpage, i)
        addr = _address(obj) if obj else 0
        technique = hidden.get(addr) if addr else None
        if technique is None:
            if obj and not ch.isspace():
                current = None
            continue
        if current is None or current.technique != technique:
            current = _Run(technique)
            runs.append(current)
        current.chars.append(i)
        current.end = i + 1
        current.in_figure = current.in_figure and addr in in_figure
    return runs


def _excerpt(text: str, run: _Run) -> str:
    keep = set(run.chars)
    span = text[run.chars[0]: run.end]
    shown = "".join(ch if (run.chars[0] + k) in keep or ch.isspace() else " " for k, ch in enumerate(span))
    return " ".join(shown.replace("\ufffe", "").split())


def _says_something(excerpt: str, accidental: bool) -> bool:
    """Whether a run is long enough to be an instruction (``accidental``: where genuine papers
    leave short hidden fragments)."""
    if accidental and len(excerpt.split()) < MIN_SENTENCE_WORDS:
        return False
    return sum(ch.isalnum() for ch in excerpt) >= MIN_ALNUM


def visible_text(page: object, textpage: object, text: str, page_no: int) -> tuple[str, list[HiddenRun]]:
    """The page's text without its hidden runs, and the runs (``page_no`` counts from 1)."""
    hidden, in_figure = hidden_objects(page, _crop_box(page))
    if not hidden:
        return text, []
    chars = _char_text(textpage, text)
    cut: set[int] = set()
    found = []
    for run in _runs(textpage, chars, hidden, in_figure):
        excerpt = _excerpt(chars, run)
        if not _says_something(excerpt, run.in_figure or run.technique == "off_page"):
            continue
        cut.update(run.chars)
        found.append(HiddenRun(page=page_no, technique=run.technique, text=excerpt[:EXCERPT_CHARS]))
    if not cut:
        return text, []
    return "".join(ch for i, ch in enumerate(chars) if i not in cut), found


class Cutter:
    """Cuts the hidden runs out of each page's text while a document is read, keeping them in ``runs``."""

    def __init__(self) -> None:
        self.runs: list[HiddenRun] = []

    def visible_text(self, page: pdfium.PdfPage, textpage: pdfium.PdfTextPage, page_no: int) -> str:
        text, runs = visible_text(page.raw, textpage.raw, textpage.get_text_range(), page_no)
        self.runs += runs
        return text

    def visible_title(self, title: str | None) -> str | None:
        """The title read from the largest font, unless it is hidden text (it goes to the assessor)."""
        if title and any(title in run.text for run in self.runs if run.page == 1):
            return None
        return title


def _crop_box(page: object) -> Box:
    """What a viewer shows: pdfium's bounding box is the crop box clipped to the media box."""
    rect = pdfium_c.FS_RECTF()
    if pdfium_c.FPDF_GetPageBoundingBox(page, ctypes.byref(rect)):
        return rect.left, min(rect.bottom, rect.top), rect.right, max(rect.bottom, rect.top)
    return 0.0, 0.0, pdfium_c.FPDF_GetPageWidthF(page), pdfium_c.FPDF_GetPageHeightF(page)


def warning(run: HiddenRun) -> ParseWarning:
    """The paper-level warning for one run, worded like the LaTeX side's."""
    quote = run.text if len(run.text) <= 80 else run.text[:77] + "..."
    return ParseWarning(
        kind=WarningKind.HIDDEN_TEXT, location=f"page {run.page}",
        message=f'hidden text ({TECHNIQUES[run.technique]}, page {run.page}, invisible when printed): "{quote}"')
