"""Are the quotes a model returns as evidence really in the paper? Matching ignores case, punctuation,
whitespace and line-break hyphenation ("identi-\\nfiable"), and an elided quote ("A ... B") matches
when each of its parts does, in order."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from checklist_eval.assessors.llm.verdict import on_verdict_side
from checklist_eval.models import compose_review, verdict_of

MIN_QUOTE_WORDS = 4  # shorter items are section names or single terms, not quotes to check
_ELLIPSIS = re.compile(r"\.\.\.+|…|\[\.\.\.\]")
_POINTER = re.compile(r"^(?:Section|Sec\.|Appendix|Table|Figure|Fig\.|§)\s*[A-Z]?\d*(?:\.\d+)*\b", re.I)


def normalize(text: str) -> str:
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)  # hyphenation at a line break
    text = re.sub(r"[^\w]+", " ", text.lower())
    return f" {' '.join(text.split())} "


@lru_cache(maxsize=8)
def _normalized_paper(text: str) -> str:
    return normalize(text)


def quote_found(quote: str, paper_text: str) -> bool:
    haystack = _normalized_paper(paper_text)
    pos = 0
    for part in _ELLIPSIS.split(quote):
        needle = normalize(part).strip()
        if not needle:
            continue
        at = haystack.find(f" {needle} ", pos)
        if at < 0:
            # a quote cut mid-word at either end still counts when its inner words are there
            at = haystack.find(needle, pos)
            if at < 0:
                return False
        pos = at + len(needle)
    return True


def missing_quotes(evidence: list[str], paper_text: str) -> list[str]:
    """The evidence items that are quotes (not section names, long enough) and are not in the paper."""
    out = []
    for item in evidence:
        quote = item.strip().strip("\"'“”‘’`")
        if len(quote.split()) < MIN_QUOTE_WORDS or _POINTER.match(quote):
            continue
        if not quote_found(quote, paper_text):
            out.append(quote)
    return out


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
