"""The offline assessor's hard evidence, handed to the LLM assessor as facts to address (assess-v3 on):
a cited place the paper does not have, a justification that says the opposite of its answer, an
artefact claimed and given nowhere. They are the heuristic's blocking findings, computed without a
model, so they cost nothing and are the same on every run."""

from __future__ import annotations

import re
from collections.abc import Sequence

from checklist_eval.assessors.llm.messages import question_message
from checklist_eval.assessors.llm.prompts import PromptSet
from checklist_eval.models import ChecklistItem, Paper

MAX_FACTS = 4


def offline_facts(paper: Paper, item: ChecklistItem) -> list[str]:
    """The heuristic's blocking findings for ``item`` (worst first, at most MAX_FACTS)."""
    from checklist_eval.assessors.heuristic.assessor import findings_for

    if item.answer is None:
        return []
    found = sorted((f for f in findings_for(paper, item) if f.severity == "blocking" and f.note),
                   key=lambda f: f.weight)
    return list(dict.fromkeys(f.note for f in found))[:MAX_FACTS]


def wants_facts(prompts: PromptSet) -> bool:
    return "{facts}" in prompts.user_question


def question_for(prompts: PromptSet, paper: Paper, item: ChecklistItem) -> str:
    """The question block as the prompt version asks it: with the offline facts and the ranked
    passages when it has a slot for them."""
    from checklist_eval.assessors.evidence.passages import offered_passages, passages_block

    passages = passages_block(offered_passages(paper, item)) if wants_passages(prompts) else ""
    return question_message(prompts, item, offline_facts(paper, item) if wants_facts(prompts) else (), passages)


def wants_passages(prompts: PromptSet) -> bool:
    return "{passages}" in prompts.user_question


_TAG = re.compile(r"\[F(\d+)\]")


def facts_in(question: str) -> int:
    """How many facts the question block lists."""
    return len(set(_TAG.findall(question)))


def ignored_facts(n_facts: int, must_fix: Sequence[str], review: str, suggestions: Sequence[str]) -> list[int]:
    """The facts (1-based) a verdict leaves unaddressed: with an empty must_fix, every fact whose tag
    the review and suggestions do not name. A verdict with a must_fix has taken the facts' side."""
    if not n_facts or must_fix:
        return []
    said = set(_TAG.findall(" ".join([review, *suggestions])))
    return [i for i in range(1, n_facts + 1) if str(i) not in said]
