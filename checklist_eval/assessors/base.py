"""The assessor interface: one verdict per checklist answer, each judged independently of the others.

Assessors declare what they are as class attributes (``name``, ``needs_network``) and implement
``assess_item``. ``assess_paper`` fans a paper's items out concurrently; any bound on concurrency,
rate or tokens is the assessor's own (the LLM assessor owns the one scheduler every caller shares).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import ClassVar

from checklist_eval.models import Answer, Assessment, ChecklistItem, Paper, ParseWarning, Provenance, Usage

UNANSWERED_REVIEW = {
    None: "- No answer found for this question: fill in [Yes], [No] or [NA] with a justification.",
    Answer.TODO: "- The answer is still [TODO]: replace it with [Yes], [No] or [NA] and justify it.",
}


async def gather_all(*aws):
    """``asyncio.gather`` that lets every awaitable finish, then raises the first error, if any."""
    results = await asyncio.gather(*aws, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return list(results)
async def gather_or_cancel(awaitables: list) -> list:
    """Like ``asyncio.gather``, but the first failure cancels the rest and waits for them: no request
    goes on in the background after its paper failed, and no orphaned task reports its own error
    (a traceback on stderr) after the command has printed its one line."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


# Said at the end of every judged answer's review when the paper carries hidden text, whatever the
# assessor: a model never sees the text a PDF hid (it is cut before assessment), so it cannot say it.
HIDDEN_TEXT_NOTE = "The paper contains hidden text (see warnings): remove it."


def with_paper_notes(paper: Paper, assessment: Assessment) -> Assessment:
    """The assessment with the paper-level notes every review carries (no weight in the verdict)."""
    if not paper.hidden_text or HIDDEN_TEXT_NOTE in assessment.review:
        return assessment
    review = assessment.review.rstrip()
    return assessment.model_copy(update={"review": f"{review}\n- {HIDDEN_TEXT_NOTE}".lstrip()})


def with_assessor_warnings(paper: Paper, assessor: Assessor) -> Paper:
    """A copy of ``paper`` whose warnings end with what ``assessor`` said about it (``paper`` unchanged)."""
    extra = assessor.paper_warnings(paper)
    return paper.model_copy(update={"warnings": [*paper.warnings, *extra]}) if extra else paper


class Assessor(ABC):
    """Judges whether each checklist answer is correct and consistent with the paper."""

    name: ClassVar[str]
    needs_network: ClassVar[bool] = False

    model: str | None = None
    prompt_version: str | None = None

    def __init__(self) -> None:
        self.usage = Usage()  # running total over everything this assessor did, for progress/ledger
        self.questions_planned = 0  # answered questions of the papers started so far (progress display)
        self.questions_done = 0

    @abstractmethod
    async def judge(self, paper: Paper, item: ChecklistItem) -> Assessment:
        """Judge one real answer (Yes/No/NA). Never called for TODO or missing answers."""

    async def assess_item(self, paper: Paper, item: ChecklistItem) -> Assessment:
        if not item.is_answered:
            return self.unanswered(item)
        assessment = await self.judge(paper, item)
        self.usage = self.usage + assessment.provenance.usage
        self.questions_done += 1
        return with_paper_notes(paper, assessment)

    async def assess_paper(self, paper: Paper) -> list[Assessment]:
        """All items of the paper's checklist, in template order. When one item fails, the others still
        run to the end before the error is raised, so no request is abandoned mid-flight (its answer is
        cached, and a rerun does not pay for it again)."""
        self.questions_planned += sum(1 for it in paper.checklist.items if it.is_answered)
        return await gather_all(*(self.assess_item(paper, it) for it in paper.checklist.items))

    def paper_warnings(self, paper: Paper) -> list[ParseWarning]:
        """What this assessor has to say about the paper as a whole (the LLM assessor: that it saw only
        the first part), for the caller to show beside the parser's warnings: a paper is never changed
        after parsing."""
        return []

    def unanswered(self, item: ChecklistItem) -> Assessment:
        """TODO or missing answers are incorrect by the challenge rules; no model is asked."""
        return Assessment(
            question_id=item.id,
            answer=item.answer,
            correct=False,
            p_correct=0.0,
            review=UNANSWERED_REVIEW[item.answer],
            provenance=Provenance(assessor=self.name, model=self.model, prompt_version=self.prompt_version),
        )

    async def aclose(self) -> None:  # noqa: B027 - a no-op default, not abstract: only network assessors hold anything
        """Release connections and flush caches; safe to call twice."""
