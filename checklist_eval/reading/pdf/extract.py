"""Text extraction: each page's visible text and the paper's title, read once through pypdfium2.

Hidden runs are cut out of the text as each page is read (:mod:`checklist_eval.reading.pdf.hidden`), so
nothing downstream sees what a reader cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from checklist_eval.errors import InputError
from checklist_eval.models import HiddenRun
from checklist_eval.reading.pdf import hidden
from checklist_eval.reading.pdf.cleaning import clean_text

# Fewer visible characters than this per page on average means the pages are images: a scan, or a
# PDF whose fonts carry no Unicode mapping.
_MIN_CHARS_PER_PAGE = 20


@dataclass
class _Extracted:
    pages: list[str]  # what a reader sees: hidden runs are cut out
    title: str | None
    hidden: list[HiddenRun]


# Conference papers with appendices run to tens of pages; these stop files built to tie up a batch.
MAX_PDF_BYTES = 100 * 1024 * 1024
MAX_PDF_PAGES = 1000


def extract_pages(path: Path, data: bytes | None = None) -> _Extracted:
    """Each page's raw text (extracted exactly once) and the first page's largest-font text; from
    ``data`` when given (a PDF held in memory), else from the file, read under the size limit."""
    doc = _open_document(path, data)
    try:
        extracted = _read_document(path, doc)
    except pdfium.PdfiumError as err:
        raise InputError(path, f"corrupt PDF: {err}") from None
    finally:
        doc.close()
    _require_text_layer(path, extracted.pages)
    return extracted


def _open_document(path: Path, data: bytes | None) -> pdfium.PdfDocument:
    if data is None:
        from checklist_eval.reading.sources import read_regular

        data = read_regular(path, MAX_PDF_BYTES, "PDF")
    if len(data) > MAX_PDF_BYTES:
        raise InputError(path, f"PDF larger than {MAX_PDF_BYTES // 2**20} MB")
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as err:
        raise InputError(path, _pdfium_problem(str(err))) from None
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read PDF: {err}") from None


def _read_document(path: Path, doc: pdfium.PdfDocument) -> _Extracted:
    """Every page's visible text and the title, each page opened once and closed at once."""
    if len(doc) > MAX_PDF_PAGES:
        raise InputError(path, f"PDF has {len(doc)} pages, more than {MAX_PDF_PAGES}")
    pages: list[str] = []
    cutter = hidden.Cutter()
    title = None
    for i in range(len(doc)):
        page = doc[i]
        textpage = page.get_textpage()
        pages.append(cutter.visible_text(page, textpage, i + 1))
        if i == 0:
            title = _largest_font_text(textpage)
        textpage.close()
        page.close()
    return _Extracted(pages, cutter.visible_title(title), cutter.runs)


def _require_text_layer(path: Path, pages: list[str]) -> None:
    if not pages:
        raise InputError(path, "PDF has no pages")
    visible = sum(len(p) - p.count(" ") - p.count("\n") - p.count("\r") for p in pages)
    if visible < _MIN_CHARS_PER_PAGE * len(pages):
        raise InputError(path, "no text layer (scanned PDF?)")


def _pdfium_problem(message: str) -> str:
    low = message.lower()
    if "password" in low or "security" in low:
        return "encrypted PDF (password required); decrypt it first"
    if "format" in low or "file" in low:
        return f"not a readable PDF (corrupt or not a PDF): {message}"
    return f"cannot open PDF: {message}"


_TITLE_SCAN_CHARS = 600


def _largest_font_text(textpage: pdfium.PdfTextPage) -> str | None:
    """The first run of the largest font among a page's opening characters: the paper's title.

    Layout heuristics on lines confuse titles with author lists and dates; font size does not. An
    arXiv margin stamp ("arXiv:2305.18290v2 [cs.LG]") can be bigger still, so it is passed over.
    """
    n = min(textpage.count_chars(), _TITLE_SCAN_CHARS)
    chars = [chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, i)) for i in range(n)]
    sizes = [pdfium_c.FPDFText_GetFontSize(textpage.raw, i) for i in range(n)]
    # pdfium's own line breaks and spaces carry size 1 or whitespace: they never end a run
    generated = [size <= 1.0 or ch.isspace() for ch, size in zip(chars, sizes, strict=True)]
    candidates = sorted({round(s, 1) for s, g in zip(sizes, generated, strict=True) if not g}, reverse=True)
    for biggest in candidates[:3]:
        title = _font_run(chars, sizes, generated, biggest)
        if title and not title.lower().startswith("arxiv"):
            return title
    return None


def _font_run(chars: list[str], sizes: list[float], generated: list[bool], size: float) -> str:
    out: list[str] = []
    for ch, sz, gen in zip(chars, sizes, generated, strict=True):
        if not gen and abs(sz - size) <= 0.5:
            out.append(ch)
        elif gen and out:
            out.append(" ")
        elif out and not gen and ch.isalnum():
            break  # smaller letters: the run ended (smaller marks such as "*" are skipped)
    title = clean_text("".join(out)).replace("\n", " ")
    return re.sub(r"\s+", " ", title).strip(" ∗*")
