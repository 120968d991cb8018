"""The JSON documents ``parse``, ``check``, ``validate`` and ``ingest`` print (and ``check --out``
writes as check.json): each shape is a model here, built from the typed paper, so the keys are the fields.

Warnings are strings in these documents (a warning's message), whatever type the paper keeps them as.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import model_serializer

from checklist_eval.models import (
    Answer,
    Assessment,
    Case,
    Model,
    Paper,
    ParseWarning,
    Passage,
    Role,
    State,
    Usage,
    state_counts,
)


def _messages(warnings: Sequence[object]) -> list[str]:
    return [str(w) for w in warnings]


class OptionalParts(Model):
    """A document whose optional parts appear only when given (``parse --with-body``'s body, an LLM
    plan's note): a field left out of the constructor is left out of the dump, not printed as null."""

    @model_serializer(mode="wrap")
    def _only_given(self, handler: Any) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if k in self.model_fields_set}


# ------------------------------------------------------------------------------------------ parse


class ParsedChecklist(Model):
    id: str
    questions: int


class ParsedItem(Model):
    id: str
    title: str
    question: str
    answer: Answer | None
    justification: str | None
    file: str | None  # LaTeX: the project file holding the answer, with its 1-based line
    line: int | None
    page: int | None  # PDF: the 1-based page of the answer


class ParseDocument(OptionalParts):
    """``parse --json``: the checklist read out of a paper; ``body`` only when asked for. Its shape is
    an interface: organizers' scripts read it."""

    source: str
    checklist: ParsedChecklist
    title: str | None
    items: list[ParsedItem]
    warnings: list[str]
    body_chars: int
    # who read the checklist ("tex", "source", "pdf") and the run's --tex setting
    reader: str | None = None
    tex: str | None = None
    body: str | None = None

    @classmethod
    def of(cls, paper: Paper, with_body: bool = False, tex: str | None = None) -> ParseDocument:
        items = [ParsedItem(id=it.id, title=it.title, question=it.question, answer=it.answer,
                            justification=it.justification, file=it.file, line=it.line, page=it.page)
                 for it in paper.checklist.items]
        body = {"body": paper.body} if with_body else {}
        return cls(source=paper.source, checklist=ParsedChecklist(id=paper.checklist.id, questions=len(items)),
                   title=paper.title, items=items, warnings=_messages(paper.warnings), body_chars=len(paper.body),
                   reader=paper.reader, tex=tex, **body)


# ------------------------------------------------------------------------------------------ check


class CheckedChecklist(Model):
    id: str


class CheckedItem(Model):
    id: str
    answer: Answer | None
    correct: bool
    p_correct: float
    review: str
    state: State  # contradicted / supported / unverified
    passages: list[Passage]  # what the verdict rests on: {quote, where}
    justification: str  # as the author wrote it
    location: str  # where the answer is in the author's files ("checklist.tex:115", "page 12"), or ""
    # share of the paper's body the model was given for this answer (below 1: the paper outgrew the model's
    # context and was cut to the passages most relevant to the question); None for the offline assessor
    context_share: float | None


class CheckUsage(Model):
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost_usd: float  # rounded to 6 places: a display figure (the ledger keeps full precision)

    @classmethod
    def of(cls, usage: Usage) -> CheckUsage:
        return cls(calls=usage.calls, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                   cached_tokens=usage.cached_tokens, cost_usd=round(usage.cost_usd, 6))


class CheckResult(Model):
    """``check --json`` and check.json: a verdict per answer and the correctness C."""

    source: str
    checklist: CheckedChecklist
    assessor: str
    model: str | None
    C: float  # the challenge's own rule (c_i over the checklist's questions), at full precision
    items: list[CheckedItem]
    usage: CheckUsage
    warnings: list[ParseWarning]  # {kind, message, location}: scripts decide on the kind (e.g. no_body)
    states: dict[str, int]  # answers per evidence state; unverified ones count as correct in C

    @classmethod
    def of(cls, paper: Paper, assessments: Sequence[Assessment], *, assessor: str, model: str | None,
           correctness: float, usage: Usage) -> CheckResult:
        asked = {it.id: it for it in paper.checklist.items}
        items = [CheckedItem(id=a.question_id, answer=a.answer, correct=a.correct, p_correct=a.p_correct,
                             review=a.review, state=a.state or State.UNVERIFIED, passages=a.passages,
                             justification=(asked[a.question_id].justification or "") if a.question_id in asked
                             else "", location=asked[a.question_id].location if a.question_id in asked else "",
                             context_share=a.provenance.context_share)
                 for a in assessments]
        return cls(source=paper.source, checklist=CheckedChecklist(id=paper.checklist.id), assessor=assessor,
                   model=model, C=correctness, items=items, usage=CheckUsage.of(usage),
                   warnings=list(paper.warnings), states=state_counts([i.state for i in items]))


# --------------------------------------------------------------------------------------- validate


class PaperSummary(Model):
    source: str
    format: Literal["latex", "pdf"]
    checklist: str
    questions: int
    answers: dict[str, int]  # answer (or "missing") -> how many questions have it
    warnings: list[str]
    body_chars: int
    reader: str | None = None  # who read the checklist: "tex", "source" or "pdf"

    @classmethod
    def of(cls, paper: Paper) -> PaperSummary:
        counts: dict[str, int] = {}
        for item in paper.checklist.items:
            key = item.answer.value if item.answer is not None else "missing"
            counts[key] = counts.get(key, 0) + 1
        return cls(source=paper.source, format=paper.format, checklist=paper.checklist.id,
                   questions=len(paper.checklist.items), answers=counts, warnings=_messages(paper.warnings),
                   body_chars=len(paper.body), reader=paper.reader)


class ValidationSummary(Model):
    """``validate --json``: a valid submission's case and, per role, what was read from its paper."""

    submission_id: str
    case: Case
    papers: dict[Role, PaperSummary]
    warnings: list[str]

    @classmethod
    def of(cls, submission_id: str, case: Case, papers: dict[Role, Paper], warnings: Sequence[object]
           ) -> ValidationSummary:
        return cls(submission_id=submission_id, case=case,
                   papers={role: PaperSummary.of(p) for role, p in papers.items()}, warnings=_messages(warnings))


class RootEntry(Model):
    """One submission of ``validate ROOT``: valid with its case, or the one-line reason it is not."""

    submission_id: str
    source: str
    valid: bool
    case: Case | None
    warnings: int
    problem: str | None


class RootValidation(Model):
    """``validate ROOT --json``: every submission under a batch root, each checked on its own."""

    root: str
    valid: int
    invalid: int
    submissions: list[RootEntry]


# ----------------------------------------------------------------------------------------- ingest


class IngestSummary(OptionalParts):
    """What ``ingest --json`` prints. ``resumed`` is there for a batch run only (a ``score`` run has
    nothing to resume); ``usage`` is null when the submission is not finished yet."""

    answers: dict[str, int]  # ok / error / unknown / unreadable lines of the results file
    scored: int
    resumed: int | None = None
    failed: int  # could not be scored (they are in failures.jsonl with their reason)
    waiting: int = 0  # wait for answers still to come (the follow-up requests)
    usage: Usage | None
    followup_requests: int
    followup_file: str | None
    results: str


# ------------------------------------------------------------------------------------------- logs


class LoggedCall(OptionalParts):
    """A model call from the cache's call log, as ``logs --json`` lists it (``prompt_messages`` with
    ``--full-prompt``)."""

    id: int
    created: float  # unix time
    submission_id: str
    role: str  # "" outside a submission (``check``)
    source: str
    question_id: str
    endpoint: str
    model: str
    prompt_version: str
    strategy: str
    params: Any  # the request's sampling parameters, as logged
    prefix_digest: str
    question: str
    response: Any  # the reply as received (null when it was not kept)
    outcome: str
    prompt_messages: list[dict[str, Any]] | None = None
