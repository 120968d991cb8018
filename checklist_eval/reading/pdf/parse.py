"""The PDF entry point: a paper PDF read into a :class:`Paper`, its body and its checklist."""

from __future__ import annotations

import bisect
import itertools
from pathlib import Path

from checklist_eval.errors import InputError, NoChecklistError
from checklist_eval.models import Checklist, ChecklistSpec, Paper, ParseWarning
from checklist_eval.reading import checklists
from checklist_eval.reading.checklists.assembly import Locate
from checklist_eval.reading.pdf import hidden
from checklist_eval.reading.pdf.checklist import _Region, build_checklist, find_checklist
from checklist_eval.reading.pdf.cleaning import clean_pages
from checklist_eval.reading.pdf.extract import extract_pages
from checklist_eval.reading.pdf.structure import find_abstract, find_anchors, find_sections


def parse_pdf(path: Path, spec: ChecklistSpec | None = None, data: bytes | None = None) -> Paper:
    """Parse a paper PDF: its body for the assessor and its checklist matched to ``spec`` (or to
    the version detected from the checklist text). ``data``: the PDF's bytes, when held in memory."""
    path = Path(path)
    if data is None and not path.is_file():
        raise InputError(path, "file not found")
    extracted = extract_pages(path, data)
    pages = clean_pages(extracted.pages)
    text = "\n".join(pages)
    region, checklist, warnings = _read_checklist(path, text, spec, _page_locator(pages))
    head, tail = text[: region.start].rstrip(), text[region.end:].lstrip()
    joined = head + "\n\n" + tail
    body = joined.strip()
    sections = find_sections(body)
    return Paper(
        source=str(path),
        format="pdf",
        title=extracted.title,
        abstract=find_abstract(body, sections),
        body=body,
        sections=sections,
        anchors=find_anchors(body, sections),
        checklist=checklist,
        warnings=warnings + [hidden.warning(run) for run in extracted.hidden],
        hidden_text=extracted.hidden,
        places=_page_places(pages, len(head), len(text) - len(tail), len(joined) - len(joined.lstrip())),
    )


def _page_places(pages: list[str], head_end: int, tail_start: int, lead: int) -> list[tuple[int, str]]:
    """Where each page starts in the body (the checklist cut out of the text between ``head_end`` and
    ``tail_start``, ``lead`` blanks stripped from its start): the page a passage is on."""
    places: list[tuple[int, str]] = []
    for n, start in enumerate(itertools.accumulate((len(p) + 1 for p in pages[:-1]), initial=0), start=1):
        if start <= head_end:
            at = start
        elif start >= tail_start:
            at = head_end + 2 + start - tail_start
        else:
            at = head_end + 2  # a page inside the checklist: its rest starts where the body resumes
        places.append((max(0, at - lead), f"page {n}"))
    return places


def _page_locator(pages: list[str]) -> Locate:
    """The 1-based page of a position in the pages joined by newlines."""
    starts = list(itertools.accumulate((len(p) + 1 for p in pages[:-1]), initial=0))
    return lambda pos: {"page": bisect.bisect_right(starts, pos)}


def _read_checklist(
    path: Path, text: str, spec: ChecklistSpec | None, locate: Locate
) -> tuple[_Region, Checklist, list[ParseWarning]]:
    """The checklist region of the cleaned text and its answers matched to ``spec`` (or to the
    version detected from the region's text); a PDF without one is not a submission."""
    region = find_checklist(text)
    if region is None or not region.blocks:
        raise NoChecklistError(path, "no NeurIPS paper checklist found in the PDF text")
    if spec is None:
        spec = checklists.load(checklists.detect(text[region.start: region.end]))
    checklist, warnings = build_checklist(region, spec, locate)
    if all(it.answer is None for it in checklist.items):
        raise NoChecklistError(path, f"checklist found but no answers matched {spec.id}")
    return region, checklist, warnings
