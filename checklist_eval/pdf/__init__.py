"""Read a paper and its filled-in checklist out of a PDF (text layer via pypdfium2, BSD/Apache).

The pipeline is: extract each page's text once, hidden text cut out (:mod:`.extract`,
:mod:`.hidden`, :mod:`.hidden_objects`) -> clean it: line numbers, running headers and page
numbers, hyphenation, ligatures (:mod:`.cleaning`) -> find the checklist region, split it into
question blocks and read answer and justification from each (:mod:`.checklist`) -> everything
outside the region is the body an assessor sees, with its sections, anchors and abstract
(:mod:`.structure`). :func:`parse_pdf` (:mod:`.parse`) runs it.

Importing this package loads pypdfium2: batch parents reach it only through isolated workers.
"""

from checklist_eval.pdf.checklist import build_checklist, find_checklist
from checklist_eval.pdf.cleaning import (
    clean_pages,
    clean_text,
    dehyphenate,
    fix_ligatures,
    has_line_numbers,
    squash,
    strip_line_numbers,
)
from checklist_eval.pdf.extract import MAX_PDF_BYTES, MAX_PDF_PAGES, extract_pages
from checklist_eval.pdf.parse import parse_pdf
from checklist_eval.pdf.structure import find_abstract, find_anchors, find_sections

__all__ = [
    "MAX_PDF_BYTES",
    "MAX_PDF_PAGES",
    "build_checklist",
    "clean_pages",
    "clean_text",
    "dehyphenate",
    "extract_pages",
    "find_abstract",
    "find_anchors",
    "find_checklist",
    "find_sections",
    "fix_ligatures",
    "has_line_numbers",
    "parse_pdf",
    "squash",
    "strip_line_numbers",
]
