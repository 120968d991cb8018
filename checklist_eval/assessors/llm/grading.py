"""A model's verdict as the run reports it: each evidence quote it gave looked up in the paper
(``evidence.quotes``), a quote not found named as unverifiable and lowering p_correct, and with a findings
prompt the verdict and review built from its ``must_fix`` and ``suggestions``."""

from __future__ import annotations

from typing import Any

from checklist_eval.assessors.evidence.quotes import missing_quotes
from checklist_eval.assessors.llm.confidence import on_verdict_side
from checklist_eval.models import compose_review, verdict_of

__all__ = ["QUOTE_MISSING_FACTOR", "grade_verdict"]

QUOTE_MISSING_FACTOR = 0.7  # p_correct's distance from 0.5 shrinks by this for each evidence quote not in the paper


def grade_verdict(verdict: dict[str, Any], paper_text: str, *, findings: bool) -> tuple[bool, float, str, dict]:
    """(correct, p_correct, review, graded fields) for an LLM verdict as stored in the cache.

    Each evidence quote not found in the paper is named as unverifiable and lowers p_correct. With a
    findings prompt (assess-v2) the verdict and review are built from must_fix / suggestions, so they
    cannot disagree; with assess-v1 the model's review is kept and the missing quotes appended."""
    correct = bool(verdict["correct"])
    missing = missing_quotes(list(verdict.get("evidence", [])), paper_text)
    unverified = [f'Evidence quote not found in the paper: "{q[:120]}"' for q in missing]
    # Each missing quote takes p_correct toward 0.5, never past it: the verdict still holds, less surely.
    p = 0.5 + (min(1.0, max(0.0, float(verdict["p_correct"]))) - 0.5) * QUOTE_MISSING_FACTOR ** len(missing)
    review = verdict.get("review", "")
    graded: dict[str, Any] = {"unverifiable": unverified}
    if findings:
        must_fix, suggestions = list(verdict.get("must_fix", [])), list(verdict.get("suggestions", []))
        summary = [ln.strip().removeprefix("- ") for ln in review.splitlines() if ln.strip()]
        review = compose_review(must_fix, suggestions, unverified, notes=summary if not must_fix else [],
                                empty="No problems found.")
        graded |= {"must_fix": must_fix, "suggestions": suggestions, "verdict": verdict_of(must_fix, unverified)}
        correct = not must_fix
    elif unverified:
        review = "\n".join([review, *(f"- {u}" for u in unverified)]).strip()
    return correct, on_verdict_side(correct, None, p), review, graded  # a row cached before the rule, too
