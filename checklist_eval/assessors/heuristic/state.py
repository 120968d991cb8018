"""The offline assessor's evidence state and the passages it rests on.

An answer is ``contradicted`` when a blocking finding makes it incorrect, ``supported`` when the
body holds a passage that addresses the question and shows what the answer claims (the fact a rule
found, or a place the justification cites), and ``unverified`` otherwise: no body, a place outside the
text we have, no passage either way (an NA "supported" by the absence of a thing has no passage to
show, so it stays unverified), or a finding that says the support is missing ("the cited section does
not seem to be about it", "the body names no licence"): "supported" never stands beside it.

Only passages that address the question are shown (``addressing``), in every state: the one holding the
fact (or the contradiction), then the best of the paper's paragraphs on the question. A question the
paper has nothing on shows none, even when a finding quotes the body against the answer."""

from __future__ import annotations

from checklist_eval.assessors.evidence.addressing import addressing_pieces
from checklist_eval.assessors.evidence.passages import passage, passage_holding, query_of
from checklist_eval.assessors.heuristic.rules import Finding
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
    on_question = [passage(paper, p) for p in addressing_pieces(paper, item, query_of(item))]
    # A fact quoted from a paragraph that is not about the question is no support, and no contradiction to
    # show either ("NA for error bars while the paper reports experiments" quoting a related-work sentence
    # that names a benchmark): the finding's note says what was found, and only passages on the question
    # are shown, whatever the state.
    found = [p for p in found if p in on_question]
    best = on_question[:MAX_PASSAGES]
    if verdict == "correct" and not found and decisive:
        # the fact a rule found, shown by the paper's own place for it or its best paragraph on the question
        found = cited_passages(paper, item) or best[:1]
    if verdict == "incorrect":  # what contradicts the answer; else the paper's own paragraphs on the question
        return list(dict.fromkeys(found or best))[:MAX_PASSAGES], State.CONTRADICTED
    # The paper's best paragraph on the question first, then the one holding the fact found.
    shown = list(dict.fromkeys([*best[:1], *found, *best[1:]]))[:MAX_PASSAGES]
    missing = any(f.missing for f in findings)
    return shown, State.SUPPORTED if verdict == "correct" and found and not missing else State.UNVERIFIED


def cited_passages(paper: Paper, item: ChecklistItem) -> list[Passage]:
    """The best passages that address the question inside the numbered sections the justification cites
    (at most two)."""
    from checklist_eval.assessors.evidence.addressing import _cited_spans

    spans = _cited_spans(paper, item)
    inside = [p for p in addressing_pieces(paper, item, query_of(item)) if any(a <= p.start < b for a, b in spans)]
    return [passage(paper, p) for p in inside[:2]]
