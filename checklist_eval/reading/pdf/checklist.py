"""The checklist in a PDF's cleaned text: its region, its question blocks, and their answers
attached to the checklist version's questions.

Two checklist layouts are understood:

* 2024+ ("NeurIPS Paper Checklist"): numbered questions "1. Claims / Question: ... / Answer: [Yes] /
  Justification: ... / Guidelines: ...".
* 2021/22 ("Checklist"): groups "1. For all authors..." with items "(a) question? [Yes] text".

Questions are attached to the checklist version by meaning (:func:`checklists.match_question`),
never by their position, so a reordered or partly deleted checklist still lands on the right ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from checklist_eval.models import (
    Answer,
    Checklist,
    ChecklistSpec,
    ParseWarning,
    normalize_answer,
)
from checklist_eval.reading import checklists
from checklist_eval.reading.checklists.assembly import Locate
from checklist_eval.reading.pdf.cleaning import squash

_NEW_HEADING = re.compile(
    r"^[ \t]*(?:\d{1,2}\.?[ \t]+)?(?:NeurIPS[ \t]+)?Paper[ \t]+Checklist\b.*$", re.I | re.M
)
_OLD_HEADING = re.compile(
    r"^[ \t]*(?:\d{1,2}\.?[ \t]+)?(?:NeurIPS[ \t]+)?Checklist[ \t]*$", re.I | re.M
)
# A numbered question heading ("4. Experimental Result Reproducibility"); confirmed as a question by
# the "Question:" / "Answer:" label that follows it.
_Q_HEADING = re.compile(r"^[ \t]*(\d{1,2})\.[ \t]+(\S.*)$", re.M)
_LABEL = re.compile(r"^[ \t]*(Question|Answer)[ \t]*:", re.M)
# The answer slot: one or more bracketed answers ("[Yes]", "[TODO] [Yes]" when the template's
# default was left beside the real answer) or a bare word ("Yes", "Not applicable").
_ANSWER = re.compile(
    r"^[ \t]*Answer[ \t]*:[ \t]*\n?[ \t]*"
    # a colour name TeX printed as text where \textcolor was undefined (xcolor not loaded): "blue[Yes]"
    r"(?:[a-z]{3,12}(?=\[))?"
    r"((?:\[[^\]\n]{1,20}\][ \t]*)+|[A-Za-z/.]+(?:[ \t]+applicable)?)",
    re.M | re.I,
)
_GUIDELINES = re.compile(r"^[ \t]*Guidelines[ \t]*:", re.M)
_JUSTIFICATION = re.compile(r"^\W*Justification[ \t]*:[ \t]*", re.I)
_QUESTION_LABEL = re.compile(r"^[ \t]*Question[ \t]*:", re.M)
# The region after the last question ends at the first heading of what follows (an appendix).
_AFTER_HEADING = re.compile(
    r"^[ \t]*(?:Appendix|Appendices|Supplementary Material|Technical Appendices|References"
    r"|(?:Appendix[ \t]+)?[A-Z](?:\.\d+)*\.?[ \t]+[A-Z][A-Za-z-]+(?:[ \t]+\S+){0,8})[ \t]*$"
)


@dataclass
class _Block:
    number: str  # as printed ("4", "2b")
    heading: str
    question: str
    answer_raw: str | None
    justification: str
    start: int | None = None  # offset of the question in the text read


@dataclass
class _Region:
    start: int  # offset of the checklist heading (or of its first question)
    end: int  # offset just past the last question's block
    blocks: list[_Block]
    style: str  # "new" or "old"


def find_checklist(text: str) -> _Region | None:
    """The checklist region of a paper's cleaned text, with its question blocks, or None."""
    region = _find_new_style(text)
    if region is None:
        region = _find_old_style(text)
    return region


def _question_starts(text: str, lo: int) -> list[re.Match[str]]:
    """Numbered headings after ``lo`` that a "Question:"/"Answer:" label follows within 4 lines,
    before the next numbered heading; instruction-block prose and guideline bullets have none."""
    heads = [m for m in _Q_HEADING.finditer(text, lo)]
    out = []
    for i, m in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        window = text[m.end(): stop]
        label = _LABEL.search(window)
        if label and window.count("\n", 0, label.start()) <= 4:
            out.append(m)
    return out


def _find_new_style(text: str) -> _Region | None:
    headings = list(_NEW_HEADING.finditer(text))
    # A table of contents or the body can mention "Paper Checklist"; the real heading is the last
    # one with questions after it.
    for heading in reversed(headings):
        starts = _question_starts(text, heading.end())
        if starts:
            return _new_region(text, heading.start(), starts)
    starts = _question_starts(text, 0)
    # No heading (deleted or renamed): accept a run of labelled questions on its own.
    if len(starts) >= 3:
        return _new_region(text, starts[0].start(), starts)
    return None


def _new_region(text: str, start: int, starts: list[re.Match[str]]) -> _Region:
    end = _region_end(text, starts[-1].end())
    blocks = []
    for i, m in enumerate(starts):
        stop = starts[i + 1].start() if i + 1 < len(starts) else end
        blocks.append(_new_block(m, text[m.end(): stop]))
    return _Region(start, end, blocks, "new")


def _new_block(head: re.Match[str], rest: str) -> _Block:
    label = _QUESTION_LABEL.search(rest)
    answer = _ANSWER.search(rest)
    title_end = min(x.start() for x in (label, answer) if x) if (label or answer) else len(rest)
    heading = squash(head.group(2) + " " + rest[:title_end])
    question = ""
    if label:
        q_end = answer.start() if answer and answer.start() > label.end() else len(rest)
        guide = _GUIDELINES.search(rest, label.end())
        if guide and guide.start() < q_end:
            q_end = guide.start()
        question = squash(rest[label.end(): q_end])
    justification = ""
    if answer:
        guide = _GUIDELINES.search(rest, answer.end())
        body = rest[answer.end(): guide.start() if guide else len(rest)]
        justification = _JUSTIFICATION.sub("", body.strip(), count=1)
    return _Block(head.group(1), heading, question, answer.group(1) if answer else None,
                  squash(justification), head.start())


_LINE = re.compile(r"^.*$", re.M)


def _heading_after(text: str, pos: int, unfinished: tuple[str, ...], finished: tuple[str, ...]) -> int:
    """The first heading-like line from ``pos`` on that does not itself end like a sentence
    (``unfinished``) and follows a blank line or a finished sentence (``finished``); else the end."""
    prev = ""
    for m in _LINE.finditer(text, pos):
        line = m.group(0)
        if (
            _AFTER_HEADING.match(line)
            and len(line) < 90
            and not line.rstrip().endswith(unfinished)
            and (not prev.strip() or prev.rstrip().endswith(finished))
        ):
            return m.start()
        if line.strip():
            prev = line
    return len(text)


def _region_end(text: str, last_start: int) -> int:
    """Where the last question's block ends: at a following section heading (an appendix after
    the checklist) that comes after a finished sentence, else at the end of the text."""
    guide = _GUIDELINES.search(text, last_start)
    pos = guide.end() if guide else last_start
    return _heading_after(text, pos, (".", ",", ";"), (".", "?", "!", ")", ":"))


# 2021/22: "Checklist" then an instruction block with example bullets, then "1. For all authors..."
_OLD_GROUP = re.compile(r"^[ \t]*(\d)\.[ \t]+(\S.*)$", re.M)
_OLD_ITEM = re.compile(r"^[ \t]*\(([a-h])\)[ \t]*", re.M)
_BRACKET_ANSWER = re.compile(r"\[\s*(Yes|No|N/?A|TODO)\s*\]", re.I)


def _find_old_style(text: str) -> _Region | None:
    for heading in reversed(list(_OLD_HEADING.finditer(text))):
        blocks, end = _old_blocks(text, heading.end())
        if len(blocks) >= 3:
            return _Region(heading.start(), end, blocks, "old")
    return None


def _old_blocks(text: str, lo: int) -> tuple[list[_Block], int]:
    groups = _counting_groups(text, lo)
    if not groups:
        return [], lo
    region_end = _old_region_end(text, groups[-1].end())
    blocks: list[_Block] = []
    for gi, g in enumerate(groups):
        g_end = groups[gi + 1].start() if gi + 1 < len(groups) else region_end
        blocks += _group_blocks(text, g, g_end)
    return blocks, region_end


def _counting_groups(text: str, lo: int) -> list[re.Match[str]]:
    """The group headings after ``lo``, from the first "1." on while their numbers count up."""
    groups = [m for m in _OLD_GROUP.finditer(text, lo)]
    # Items live between their group heading and the next; the first group must be "1." so that the
    # instruction block's example answers (bullets before it) are never read as answers.
    first = next((i for i, g in enumerate(groups) if g.group(1) == "1"), None)
    if first is None:
        return []
    seen: list[re.Match[str]] = []
    for g in groups[first:]:  # the group numbers count up 1, 2, 3...; anything else ends the checklist
        if int(g.group(1)) != len(seen) + 1:
            break
        seen.append(g)
    return seen


def _group_blocks(text: str, group: re.Match[str], g_end: int) -> list[_Block]:
    """The items "(a)", "(b)"... of one group, each up to the next item or the group's end."""
    items = list(_OLD_ITEM.finditer(text, group.end(), g_end))
    blocks = []
    for ii, it in enumerate(items):
        i_end = items[ii + 1].start() if ii + 1 < len(items) else g_end
        blocks.append(_old_block(group.group(1) + it.group(1), text[it.end(): i_end]))
        blocks[-1].start = it.start()
    return blocks


def _old_block(number: str, body: str) -> _Block:
    m = _BRACKET_ANSWER.search(body)
    if not m:
        return _Block(number, "", squash(body), None, "")
    return _Block(number, "", squash(body[: m.start()]), m.group(0), squash(body[m.end():]))


def _old_region_end(text: str, pos: int) -> int:
    # The old checklist's last item (5c) is short; the first heading-like line after it ends it.
    return _heading_after(text, pos, (".", ","), (".", "?", "!", ")", "]"))


# --- answers into the spec ------------------------------------------------------------------------


def _answer_of(raw: str | None) -> tuple[Answer | None, str | None]:
    """The answer in an answer slot, and a warning when the slot holds more than one.

    "[TODO] [Yes]" means the author added an answer but did not delete the template's placeholder:
    the committed answer wins. Two different real answers are ambiguous, so the first one is kept.
    """
    if raw is None:
        return None, None
    parts = re.findall(r"\[([^\]]*)\]", raw) or [raw]
    answers = [a for a in (normalize_answer(p) for p in parts) if a is not None]
    if not answers:
        return None, None
    answered = [a for a in answers if a.is_answered]
    chosen = answered[0] if answered else answers[0]
    warning = None
    if len(answers) > 1:
        shown = " ".join(f"[{a.value}]" for a in answers)
        warning = f"answer slot holds {shown}; read as {chosen.value}"
    return chosen, warning


def build_checklist(region: _Region, spec: ChecklistSpec, locate: Locate | None = None
                    ) -> tuple[Checklist, list[ParseWarning]]:
    """Attach each block to the spec question it is about (by meaning); every spec question gets
    an item, in template order, with answer None where the paper has none. ``locate``: the page of
    a position in the text."""
    from checklist_eval.reading.checklists.assembly import Finding, assemble

    def finding(block: _Block) -> Finding:
        answer, note = _answer_of(block.answer_raw)
        shown = block.heading or block.question[:60]
        return Finding(_match_block(spec, block), answer, block.justification or None,
                       location=f"checklist question {block.number}",
                       place=lambda: f"checklist question {block.number} ({shown!r})", note=note,
                       offset=block.start)

    return assemble(spec, (finding(block) for block in region.blocks), locate=locate)


def _match_block(spec: ChecklistSpec, block: _Block) -> str | None:
    # Heading and question together carry the most meaning; either alone rescues a block whose
    # other half is garbled or deleted.
    for text in (f"{block.heading} {block.question}", block.question, block.heading):
        if text.strip():
            qid = checklists.match_question(spec, text)
            if qid is not None:
                return qid
    return None

