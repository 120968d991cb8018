"""The offline assessor's evidence state and the passages it rests on.

An answer is ``contradicted`` when a blocking finding makes it incorrect, ``supported`` when the
body holds a passage showing what the answer claims (the fact a rule found, or a place the
justification cites that ranks among those about the claim), and ``unverified`` otherwise: no body,
a place outside the text we have, or no passage either way (an NA "supported" by the absence of a
thing has no passage to show, so it stays unverified). The passages shown are the one holding the
fact (or the contradiction), then the best ranked against the question and its justification."""

from __future__ import annotations

from checklist_eval.assessors.evidence import layout_of, pointers_in, section_texts
from checklist_eval.assessors.heuristic_rules import Finding
from checklist_eval.assessors.passages import best_passages, passage_holding, passages_in, query_of
from checklist_eval.models import ChecklistItem, Paper, Passage, State, Verdict

MAX_PASSAGES = 3
# A support finding this strong is the body's evidence for the claim (weaker ones are hints: a
# reference list for credits, a pointer without a number).
SUPPORT_WEIGHT = 0.3


def resting_passages(paper: Paper, item: ChecklistItem, findings: list[Finding],
                     verdict: Verdict) -> tuple[list[Passage], State]:
    """(passages, state) of one judged answer."""
    if not paper.body.strip():
        return [], State.CONTRADICTED if verdict == "incorrect" else State.UNVERIFIED
    decisive = [f for f in findings if f.evidence and (f.severity == "blocking" if verdict == "incorrect"
                                                       else f.severity == "support" and f.weight >= SUPPORT_WEIGHT)]
    # Only a quote of the body (a fact's snippet, "…" at its ends) is looked up: a rule's own words
    # ("justification gives a reason") are no passage.
    found = [p for f in decisive if (f.evidence or "").startswith("…")
             for p in [passage_holding(paper, f.evidence or "")] if p is not None]
    if verdict == "correct" and not found and decisive:
        found = cited_passages(paper, item)
    shown = list(dict.fromkeys([*found, *best_passages(paper, item, k=2)]))[:MAX_PASSAGES]
    if verdict == "incorrect":
        return shown, State.CONTRADICTED
    return shown, State.SUPPORTED if verdict == "correct" and found else State.UNVERIFIED


def cited_passages(paper: Paper, item: ChecklistItem) -> list[Passage]:
    """The best passage inside each numbered section the justification cites that exists and holds a
    passage sharing the question's terms (at most two)."""
    texts = section_texts(paper)
    layout = layout_of(paper)
    out: list[Passage] = []
    for p in pointers_in(item.justification or "")[:8]:
        if p.kind in ("section", "appendix") and p.label in texts and layout.exists(p, paper.body):
            out += passages_in(paper, texts[p.label], query_of(item))
        if len(out) >= 2:
            break
    return out
