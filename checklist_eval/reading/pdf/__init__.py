"""Read a paper and its filled-in checklist out of a PDF (text layer via pypdfium2, BSD/Apache).

The pipeline is: extract each page's text once, hidden text cut out (:mod:`.extract`,
:mod:`.hidden`, :mod:`.hidden_objects`) -> clean it: line numbers, running headers and page
numbers, hyphenation, ligatures (:mod:`.cleaning`) -> find the checklist region, split it into
question blocks and read answer and justification from each (:mod:`.checklist`) -> everything
outside the region is the body an assessor sees, with its sections, anchors and abstract
(:mod:`.structure`). :func:`parse_pdf` (:mod:`.parse`) runs it.

The names below are imported from their modules when first used, not with the package: a batch's
parent process parses in isolated workers and must never load PDFium, yet it reads
:mod:`.techniques` to describe the hidden text its workers found.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the same names, for type checkers (``as``: re-exported)
    from checklist_eval.reading.pdf.checklist import build_checklist as build_checklist
    from checklist_eval.reading.pdf.checklist import find_checklist as find_checklist
    from checklist_eval.reading.pdf.cleaning import clean_pages as clean_pages
    from checklist_eval.reading.pdf.cleaning import clean_text as clean_text
    from checklist_eval.reading.pdf.cleaning import dehyphenate as dehyphenate
    from checklist_eval.reading.pdf.cleaning import fix_ligatures as fix_ligatures
    from checklist_eval.reading.pdf.cleaning import has_line_numbers as has_line_numbers
    from checklist_eval.reading.pdf.cleaning import squash as squash
    from checklist_eval.reading.pdf.cleaning import strip_line_numbers as strip_line_numbers
    from checklist_eval.reading.pdf.extract import MAX_PDF_BYTES as MAX_PDF_BYTES
    from checklist_eval.reading.pdf.extract import MAX_PDF_PAGES as MAX_PDF_PAGES
    from checklist_eval.reading.pdf.extract import extract_pages as extract_pages
    from checklist_eval.reading.pdf.parse import parse_pdf as parse_pdf
    from checklist_eval.reading.pdf.structure import find_abstract as find_abstract
    from checklist_eval.reading.pdf.structure import find_anchors as find_anchors
    from checklist_eval.reading.pdf.structure import find_sections as find_sections

_HOME = {  # public name -> the module of this package that defines it
    "build_checklist": "checklist",
    "find_checklist": "checklist",
    "clean_pages": "cleaning",
    "clean_text": "cleaning",
    "dehyphenate": "cleaning",
    "fix_ligatures": "cleaning",
    "has_line_numbers": "cleaning",
    "squash": "cleaning",
    "strip_line_numbers": "cleaning",
    "MAX_PDF_BYTES": "extract",
    "MAX_PDF_PAGES": "extract",
    "extract_pages": "extract",
    "parse_pdf": "parse",
    "find_abstract": "structure",
    "find_anchors": "structure",
    "find_sections": "structure",
}

__all__ = list(_HOME)


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
