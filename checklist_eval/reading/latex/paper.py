"""Reading a paper and its checklist out of LaTeX source.

The pipeline for one flattened document (see :func:`parse_latex`):

1. dead code is already gone (``dead.live_file``, applied per file while the project is flattened),
   and what TeX would print is decided where the source decides it (``conditionals``);
2. the checklist region is located and cut out of the body (``checklist``);
3. the body is converted to text once, which also numbers sections, floats and theorems and so learns
   what each ``\\label`` displays as (``render``);
4. each answer mark in the region is tied to a question by meaning, and its justification is kept raw
   and as readable text with references resolved (``checklist``, ``readable``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from checklist_eval.errors import NoChecklistError
from checklist_eval.models import ChecklistSpec, Paper, ParseWarning, WarningKind
from checklist_eval.reading import checklists
from checklist_eval.reading.checklists.assembly import Locate
from checklist_eval.reading.latex.checklist import Region, clear_landmarks, extract_checklist, find_region
from checklist_eval.reading.latex.hidden import find_hidden_runs, hidden_warning
from checklist_eval.reading.latex.lexer import clear_group_tables, group_end
from checklist_eval.reading.latex.macros import collect_macros
from checklist_eval.reading.latex.numbering import theorem_kinds
from checklist_eval.reading.latex.printed import Printed, what_tex_prints
from checklist_eval.reading.latex.render import convert_body
from checklist_eval.reading.latex.unmodelled import unmodelled


def clear_scan_caches() -> None:
    """Drop the brace tables and landmarks kept for recent texts (a long-lived worker calls this
    between papers so one paper's tables do not outlive it)."""
    clear_group_tables()
    clear_landmarks()


def _skipped_inputs_note(warnings: list[ParseWarning]) -> str:
    """The checklist often lives in its own file: when an \\input was skipped, say so in the error."""
    skipped = [w for w in warnings if w.kind is WarningKind.INPUT_SKIPPED]
    return f"; note: {skipped[0]}" + (f" (+{len(skipped) - 1} more)" if len(skipped) > 1 else "") if skipped else ""


UNTAKEN_CHECKLIST = ("the checklist is only in a branch of a conditional that TeX does not take (a \\newif "
                     "switch such as an arXiv flag, \\if...): read as written, not as the PDF prints it")


def _printed_or_written(written: str, printed: Printed, warnings: list[ParseWarning]
                        ) -> tuple[str, Region | None, Callable[[int], int]]:
    """The text to read, its checklist region and the map from a place in it to the text as written. A
    checklist that only an untaken branch holds (a repository left in its arXiv mode) is still the
    authors' checklist: it is read as written, and the typed warning shows in reports and the records'
    manipulation column, since the PDF would not show it."""
    region = find_region(printed.text)
    if region is not None or written == printed.text:
        return printed.text, region, printed.written_offset
    region = find_region(written)
    if region is not None:
        warnings.append(ParseWarning(kind=WarningKind.UNDECIDED, message=UNTAKEN_CHECKLIST, location="checklist"))
        return written, region, lambda pos: pos
    return printed.text, None, printed.written_offset


def parse_latex(
    text: str,
    source: str,
    *,
    spec: ChecklistSpec | None = None,
    warnings: list[ParseWarning] | None = None,
    locate: Callable[[int], tuple[str, int]] | None = None,
) -> Paper:
    """A :class:`Paper` from flattened live LaTeX (see ``project.load_latex``); ``locate`` gives the
    file and line of a position in ``text`` (each checklist item's place)."""
    warnings = list(warnings or [])
    written = text
    printed = what_tex_prints(text, _line_of(locate))
    warnings.extend(printed.warnings)
    warnings.extend(unmodelled(written, _line_of(locate)))
    text, region, written_offset = _printed_or_written(written, printed, warnings)
    if region is None:
        raise NoChecklistError(source, "no live checklist found (no \\answerYes/\\answerNo/\\answerNA/\\answerTODO "
                                       "or [Yes]/[No]/[NA] marks outside comments)" + _skipped_inputs_note(warnings))
    region_text = text[region.start : region.end]
    warnings.extend(ParseWarning(kind=WarningKind.OTHER_CHECKLIST, location=title,
                                 message=f"the section \"{title}\" holds answer marks but fewer NeurIPS checklist "
                                         "questions than the one read; left aside")
                    for title in region.left_aside)
    if spec is None:
        spec = checklists.load(checklists.detect(region_text))
    macros = collect_macros(text[: region.start] if "\\begin{document}" in text else text)
    body_src = _body_source(text, region)
    theorems = theorem_kinds(text)
    converted = convert_body(body_src, macros, theorems)
    place = _item_place(locate and (lambda pos: locate(written_offset(pos))))
    result, check_warnings, answered = extract_checklist(text, region, spec, macros, converted.targets, place)
    if answered == 0:
        raise NoChecklistError(source, f"a checklist section is present but no answer could be matched to a "
                                       f"{spec.id} question")
    warnings.extend(check_warnings)
    hidden = find_hidden_runs(text, macros)
    warnings.extend(hidden_warning(run) for run in hidden)
    return Paper(
        source=source,
        format="latex",
        title=converted.title,
        abstract=converted.abstract,
        body=converted.text,
        sections=converted.sections,
        anchors=converted.anchors,
        checklist=result,
        warnings=warnings,
        hidden_text=hidden,
        # places in the printed text, located in the text as written (a skipped branch is not in the first)
        places=source_places(converted.text, text, locate and (lambda pos: locate(written_offset(pos)))),
    )


def _line_of(locate: Callable[[int], tuple[str, int]] | None) -> Callable[[int], str] | None:
    """``file:line`` of a place in the text as written, for a warning."""
    if locate is None:
        return None
    return lambda pos: "{}:{}".format(*locate(pos))


MAX_PLACES = 800  # paragraphs located in the source; beyond them a passage takes the last place found
# Paragraphs looked up, and how far ahead in the source each is searched: a hostile body of countless
# paragraphs found nowhere costs at most MAX_TRIES bounded scans.
MAX_TRIES, SEARCH_WINDOW = 2000, 60_000
_WORD_RUN = re.compile(r"(?<![\\\w])[A-Za-z]{3,}(?:[ ,]+[A-Za-z]{2,}){3}")


def source_places(body: str, source: str, locate: Callable[[int], tuple[str, int]] | None) -> list[tuple[int, str]]:
    """Where the body's paragraphs are in the author's files: each paragraph's first run of four plain
    words found in the flattened source (searched forward from the previous one, in a bounded window,
    so a hostile source costs a bounded scan) and located to its file and line."""
    if locate is None:
        return []
    places: list[tuple[int, str]] = []
    pos = 0
    for tries, para in enumerate(re.finditer(r"[^\n](?:.|\n(?![ \t]*\n))*", body)):
        if tries >= MAX_TRIES:
            break
        run = _WORD_RUN.search(para.group(0))
        if run is None:
            continue
        words = re.findall(r"[A-Za-z]+", run.group(0))
        found = re.compile(r"\W+".join(words)).search(source, pos, pos + SEARCH_WINDOW)
        if found is None:
            continue
        file, line = locate(found.start())
        places.append((para.start(), f"{file}:{line}"))
        pos = found.end()
        if len(places) >= MAX_PLACES:
            break
    return places


def _item_place(locate: Callable[[int], tuple[str, int]] | None) -> Locate | None:
    if locate is None:
        return None

    def place(pos: int) -> dict[str, Any]:
        file, line = locate(pos)
        return {"file": file, "line": line}

    return place


def _body_source(text: str, region: Region) -> str:
    """The document body without the checklist (a numbered checklist heading still steps the
    section counter, so later appendix numbers stay right)."""
    filler = "\\stepcounter{section}" if region.heading_numbered else ""
    doc = text[: region.start] + filler + text[region.end :]
    begin = doc.find("\\begin{document}")
    if begin >= 0:
        preamble = doc[:begin]
        title = re.search(r"\\title\s*(?:\[[^\]]*\])?\s*\{", preamble)
        keep = ""
        if title:
            keep = preamble[title.start() : group_end(preamble, title.end() - 1)]
        doc = keep + doc[begin + len("\\begin{document}") :]
    end = doc.find("\\end{document}")
    return doc[:end] if end >= 0 else doc
