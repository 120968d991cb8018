"""From what a parser found in a checklist to a :class:`~checklist_eval.models.Checklist`.

Both parsers (LaTeX and PDF) find answers their own way and then end the same way, here: each finding
is tied to a question of the spec, the first answer to a question is kept and a later one is reported,
a finding tied to no question is reported, and every question of the spec gets an item, in template
order, with no answer where the paper has none (reported in one line). So a paper reads the same
whether it was handed in as LaTeX or as PDF.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from checklist_eval.models import Answer, Checklist, ChecklistItem, ChecklistSpec, ParseWarning, Question, WarningKind

# Findings matched to no question, or repeating one, that get a warning line each; the rest are
# counted in one line (a hostile checklist can hold thousands, and each costs a line to describe).
MAX_FINDING_WARNINGS = 20
# Real justifications are a few sentences; one of megabytes is an attack on the reader (and the prompt).
MAX_JUSTIFICATION_CHARS = 20_000
# Where a finding's position in the text a parser read is in the author's files: the item fields
# it sets ({"file": "checklist.tex", "line": 115} for LaTeX, {"page": 12} for a PDF).
Locate = Callable[[int], dict[str, Any]]


@dataclass
class Finding:
    """One answer as a parser found it."""

    question: str | None  # the id of the spec question it is about; None when it fits none
    answer: Answer | None
    justification: str | None  # as the source writes it (LaTeX source, or PDF text)
    location: str  # where it is, briefly ("checklist question 5", "answer mark 7")
    place: Callable[[], str]  # where it is, in words a reader can find it by; only called for a warning
    note: str | None = None  # how an odd answer was read ("answer slot holds [TODO] [Yes]; read as Yes")
    offset: int | None = None  # where its answer is in the text the parser read


def assemble(
    spec: ChecklistSpec, findings: Iterable[Finding], render: Callable[[str], str] | None = None,
    locate: Locate | None = None,
) -> tuple[Checklist, list[ParseWarning]]:
    """The checklist the findings make, and the warnings about them. ``render`` turns a
    justification as written into the text a reader sees; when given, the written form is kept too
    (``justification_latex``). ``locate`` places each answer in the author's files."""
    kept: dict[str, Finding] = {}
    warnings: list[ParseWarning] = []
    dropped = 0
    for finding in findings:
        if finding.question is None or finding.question in kept:
            dropped += 1
            if dropped <= MAX_FINDING_WARNINGS:
                warnings.append(_dropped_warning(finding, spec))
            continue
        warnings.extend(_cap_justification(finding))
        kept[finding.question] = finding
    if dropped > MAX_FINDING_WARNINGS:
        warnings.append(ParseWarning(kind=WarningKind.UNMATCHED_ANSWER, location=spec.id,
                                     message=f"{dropped - MAX_FINDING_WARNINGS} more answers not matched or repeated"))
    items = []
    for q in spec.questions:
        chosen = kept.get(q.id)
        if chosen is not None and chosen.note:
            warnings.append(ParseWarning(kind=WarningKind.DUPLICATE_ANSWER, location=q.id,
                                         message=f"question {q.id} ({q.title}): {chosen.note}"))
        items.append(_placed(_item(q, chosen, render), chosen, locate))
    warnings.extend(_missing_warning(spec, items))
    return Checklist(id=spec.id, items=items), warnings


def _dropped_warning(finding: Finding, spec: ChecklistSpec) -> ParseWarning:
    if finding.question is None:
        return ParseWarning(kind=WarningKind.UNMATCHED_ANSWER, location=finding.location,
                            message=f"{finding.place()} not matched to a question of {spec.id}; ignored")
    return ParseWarning(kind=WarningKind.DUPLICATE_ANSWER, location=finding.question,
                        message=f"question {finding.question} answered twice ({finding.place()}); "
                                "kept the first answer")


def _cap_justification(finding: Finding) -> list[ParseWarning]:
    just = finding.justification
    if not just or len(just) <= MAX_JUSTIFICATION_CHARS:
        return []
    finding.justification = just[:MAX_JUSTIFICATION_CHARS]
    return [ParseWarning(kind=WarningKind.TRUNCATED, location=finding.question,
                         message=f"justification of question {finding.question} is {len(just)} characters long; "
                                 f"kept the first {MAX_JUSTIFICATION_CHARS}")]


def _item(q: Question, finding: Finding | None, render: Callable[[str], str] | None) -> ChecklistItem:
    if finding is None:
        return ChecklistItem.for_question(q)
    written = finding.justification or None
    if render is None:
        return ChecklistItem.for_question(q, finding.answer, written)
    return ChecklistItem.for_question(q, finding.answer, render(written) if written else None,
                                      justification_latex=written)


def _placed(item: ChecklistItem, finding: Finding | None, locate: Locate | None) -> ChecklistItem:
    if finding is None or finding.offset is None or locate is None:
        return item
    return item.model_copy(update=locate(finding.offset))


def _missing_warning(spec: ChecklistSpec, items: list[ChecklistItem]) -> list[ParseWarning]:
    """One line naming the questions left without an answer; none when nothing was answered at all
    (the parser then reports that no checklist was read, which says more)."""
    missing = [it.id for it in items if it.answer is None]
    if not missing or len(missing) == len(items):
        return []
    return [ParseWarning(kind=WarningKind.MISSING_ANSWER, location=", ".join(missing),
                         message=f"no answer found for question(s) {', '.join(missing)} of {spec.id}")]
