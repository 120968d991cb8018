"""The offline assessor: deterministic checks of each checklist answer against the paper, no model.

It separates what the author claims (the answer, the justification and the places it points to) from
what the paper shows (body, headings, captions, appendices; see ``evidence.body``), and applies the rules
of ``rules``: does the justification contradict the answer, do the cited places exist and
discuss the question's topic, does the body show what a Yes claims, does it plainly do what an NA
says does not apply. Each rule yields findings with a severity; the verdict is derived from the
blocking ones only (``models.verdict_of``), so a verdict always agrees with its review.

``p_correct`` is the logistic of a prior for the answer type plus the findings' log-odds shifts, kept
on the side of 0.5 the verdict is on. Without a paper body (a checklist file alone) the evidence
rules cannot run: the answer is "unverifiable", keeps the benefit of the doubt (c_i = 1) with the
reason in the review, and only contradictions visible in the checklist itself are blocking.

Rules are keyed on the question's TOPIC, read from its title (or question text), never on its id, so
they hold for every checklist version (2021 grouped ids "1a".., 2024 "1".."15", 2025/2026 "1".."16").
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import replace

from checklist_eval.assessors.base import HIDDEN_TEXT_NOTE, Assessor
from checklist_eval.assessors.evidence.addressing import addressing_pieces
from checklist_eval.assessors.evidence.body import (
    BodyFacts,
    Layout,
    Pointer,
    addresses_assessor,
    body_facts,
    has_vague_pointer,
    layout_of,
    pointers_in,
    section_texts,
    title_in_paper,
    titled_places,
)
from checklist_eval.assessors.evidence.passages import query_of
from checklist_eval.assessors.evidence.relevance import bm25_scores, relevant_by
from checklist_eval.assessors.evidence.topics import topic_of
from checklist_eval.assessors.heuristic import rules
from checklist_eval.assessors.heuristic.contradictions import no_affirms_subject, no_refuted_by_body, yes_denies_subject
from checklist_eval.assessors.heuristic.rules import Finding, blocking, suggestion, support, unverifiable
from checklist_eval.assessors.heuristic.state import resting_passages
from checklist_eval.models import (
    Answer,
    Assessment,
    ChecklistItem,
    Paper,
    Provenance,
    StructuredOutput,
    WarningKind,
    compose_review,
    verdict_of,
    warnings_of,
)

__all__ = ["HeuristicAssessor", "RULES_VERSION", "findings_for", "pointers_in", "topic_of", "body_facts"]

RULES_VERSION = "heuristic-rules-9"

# Prior probability that an answer of each type is correct before any evidence is seen. A committed
# Yes or NA is usually right; a No is often an admission the guidelines consider unacceptable.
PRIORS = {Answer.YES: 0.62, Answer.NA: 0.65, Answer.NO: 0.40}
P_MIN, P_MAX = 0.02, 0.98
# A body shorter than this is no body (a checklist file alone gives an empty one).
MIN_BODY_CHARS = 1

_BARE = re.compile(r"^\W*(?:yes|no|n/?a|not applicable|todo|none|-+)?\W*$", re.I)


# The 2021 checklist asked for answers only ("justification encouraged"); later versions require one.
_JUSTIFICATION_OPTIONAL = {"neurips-2021"}


def check_justification(item: ChecklistItem, checklist_id: str = "") -> list[Finding]:
    """The justification the guidelines require (since 2024, "even for NA"). Its absence is certain, but
    it says nothing about whether the answer is right, which is what c_i judges: a suggestion that weighs
    heavily on p_correct (less for an NA, which says why by itself, and where the checklist made
    justifications optional), never the verdict."""
    text = (item.justification or "").strip()
    lenient = checklist_id in _JUSTIFICATION_OPTIONAL or item.answer is Answer.NA
    if not text:
        return [_lacking(lenient, -1.6, "No justification (the guidelines require one): say where the paper"
                         " supports the answer, or why not.")]
    if re.search(r"\bTODO\b", text):
        return [_lacking(lenient, -0.9, "The justification still contains TODO: replace it with the actual reason.")]
    if _BARE.match(text):
        return [_lacking(lenient, -1.4, f'The justification only repeats the answer ("{text}"): give the reason.')]
    if addresses_assessor(text):
        return [blocking(-2.5, "The justification addresses the reviewer or assessor instead of the paper.")]
    words = len(text.split())
    # A short NA ("No human subjects.") states the reason well enough; a short Yes or No does not.
    if item.answer is not Answer.NA and words < 5 and not pointers_in(text) and not has_vague_pointer(text):
        return [suggestion(-0.4, f'The justification is very short ("{text}"): explain it or point to a section.')]
    return []


def _lacking(lenient: bool, weight: float, note: str) -> Finding:
    return suggestion(weight / 2 if lenient else weight, note)


def check_claims_alone(item: ChecklistItem, topic: str | None) -> list[Finding]:
    """What the checklist shows without the paper: contradictions, promises, evasions."""
    denial = yes_denies_subject(item, topic)  # hard evidence: the Yes denies its own subject
    found = [
        denial or rules.contradicts_itself(item, topic),
        no_affirms_subject(item, topic),
        rules.restates_question(item),
        rules.promise_instead_of_release(item, topic),
        rules.evasive_na(item, topic),
        rules.na_describes_the_thing(item, topic),
    ]
    if item.answer is Answer.NA and topic == "claims":
        found.append(blocking(-1.6, "NA for the claims question: every paper makes claims; answer Yes and point"
                              " to them."))
    if item.answer is Answer.NA and topic == "ethics":
        found.append(blocking(-1.4, "NA for the Code of Ethics: it applies to every submission; review it and"
                              " answer Yes (or No, explaining the deviation)."))
    if item.answer is Answer.NO:
        found.append(rules.no_never_acceptable(topic))
        found.append(rules.no_reason(item))
        found.append(rules.gap_admitted(topic))
    return [f for f in found if f is not None]


def check_pointers(paper: Paper, item: ChecklistItem, topic: str | None) -> list[Finding]:
    """Cited places must exist and be about the question's topic; a Yes should cite one."""
    text = item.justification or ""
    pointers = pointers_in(text)
    layout = layout_of(paper)
    status = {p: layout.exists(p, paper.body) for p in pointers}  # True / False / None (unverifiable)
    findings = [_missing(p, layout) for p in pointers if status[p] is False]
    findings += [_missing_title(title, paper) for title in titled_places(text) if title_in_paper(paper, title) is False]
    outside = [p.text for p in pointers if status[p] is None]
    if outside:
        findings.append(unverifiable(f"{', '.join(outside)} could not be found in the text we have (it may be"
                                     " in a supplement)."))
    present = [p for p in pointers if status[p]]
    if present:
        findings.append(_about_topic(paper, present, item))
    if item.answer is Answer.YES and not pointers:
        if has_vague_pointer(text):
            findings.append(support(0.15, "justification points to a place in the paper"))
        else:
            findings.append(suggestion(-0.6, "Yes without a pointer: name the section, table or appendix that"
                                       " shows it."))
    return findings


def _missing(p: Pointer, layout: Layout) -> Finding:
    if p.kind in ("section", "appendix"):
        where = f"sections: {layout.summary()}"
    else:
        where = f"no {p.kind} {p.label} in the text"
    return blocking(-1.5, f"Justification cites {p.text}, which does not exist ({where}).", p.text)


def _missing_title(title: str, paper: Paper) -> Finding:
    heads = ", ".join(f'"{" ".join(s.title.split())[:40]}"' for s in paper.sections[:6] if s.title)
    return blocking(-1.5, f'Justification cites the section "{title}", which the paper does not have (its headings'
                    f" include {heads}).", title)


# The first places cited say whether the claim is placed right; reading every one of thousands of
# pointers would rank the sections once per pointer.
MAX_PLACES_READ = 24


def _about_topic(paper: Paper, present: list[Pointer], item: ChecklistItem) -> Finding:
    """Support when a cited place is about what the justification claims: among the sections that
    rank best against the claim (BM25 over the paper's sections). A suggestion when none of them is."""
    cited = ", ".join(p.text for p in present[:4])
    texts = section_texts(paper)
    labels = list(texts)
    ranked = [p for p in present[:MAX_PLACES_READ] if p.kind in ("section", "appendix")]
    if not ranked or len(labels) < 3:
        return support(0.3, cited)
    claim = f"{item.title or ''} {item.question or ''} {item.justification or ''}"
    scores = bm25_scores(claim, [texts[lab] for lab in labels])
    for p in ranked:
        for lab in (p.label, p.label.split(".")[0]):
            if lab in texts and relevant_by(scores, labels.index(lab)):
                return support(0.45, cited)
    asked = item.title or "this question"
    return lacking_support(suggestion(-0.6, f'The cited {cited} does not seem to be about "{asked}": point to'
                                      " where the paper discusses it.", cited))


def lacking_support(f: Finding) -> Finding:
    """``f`` marked as saying the paper's support for the claim is missing."""
    return replace(f, missing=True)


# Topics whose Yes claims a discussion. Its words vary ("shortcomings", "we caution", a section
# titled "Discussion"), so the body lacking our words is no proof when the answer names a place that exists.
_DISCUSSIONS = {"limitations", "impacts", "safeguards"}
# What to say of a discussion the body holds in other words than the topic's own.
_UNNAMED = {
    "limitations": "Limitations claimed: the paper states some in passing (what it does not prove, cover or test)"
                   " but never calls them limitations; give them a titled paragraph (\"Limitations\").",
    "impacts": "Societal impacts claimed: the paper touches on them only in passing; give them a titled paragraph"
               " (\"Broader impacts\") naming the positive and negative ones.",
}


def check_body(paper: Paper, item: ChecklistItem, topic: str | None, facts: BodyFacts) -> list[Finding]:
    """Does the body show what the answer claims (Yes) or plainly do what it says does not apply (NA)?"""
    if item.answer is Answer.YES:  # a Yes whose fact the body lacks is a Yes without support
        found = [lacking_support(f) if f.severity == "suggestion" else f for f in rules.check_yes(topic, facts, item)]
        refuted = any(f.severity == "blocking" for f in found)
        if refuted and topic in _UNNAMED and addressing_pieces(paper, item, query_of(item), pointers=False):
            # the paper states them in other words ("it does not by itself prove ..."): "never discusses" is
            # false. Read without the justification's pointers: citing a section must not make one word of
            # the topic in it ("limited by their bandwidth") count as the discussion the Yes claims.
            return [lacking_support(rules.suggestion(f.weight / 2, _UNNAMED[topic])) if f.severity == "blocking" else f
                    for f in found]
        if refuted and topic in _DISCUSSIONS and names_a_place_about_it(paper, item):  # ranks sections: last
            return [lacking_support(rules.suggestion(f.weight, f.note, f.evidence)) if f.severity == "blocking" else f
                    for f in found]
        return found
    if item.answer is Answer.NA:
        return rules.check_na(topic, facts)
    found = rules.check_no(topic, facts, item.justification or "")
    hard = no_refuted_by_body(item, topic, facts)  # hard evidence replaces the question put on its fact
    return [f for f in found if hard is None or f.evidence != hard.evidence] + ([hard] if hard else [])


# A title in quotes. Apostrophes are not quotes ("the method's limitations in the paper's conclusion").
_QUOTED = re.compile(r"[\"“«‘]([^\"“”«»‘’]{4,80})[\"”»’]")


def names_a_place_about_it(paper: Paper, item: ChecklistItem) -> bool:
    """Does the justification name a place the paper has that may hold the discussion: a section quoted
    by its title ("Discussion and conclusion") found in the body, or a cited place that exists and that
    BM25 ranks among those about the claim? (Any real section number would do otherwise, and the paper
    lacking the topic's words everywhere is then the better evidence.)"""
    text = item.justification or ""
    layout = layout_of(paper)
    present = [p for p in pointers_in(text)[:MAX_PLACES_READ] if layout.exists(p, paper.body)]
    if present and _about_topic(paper, present, item).severity == "support":
        return True
    return any(title_in_paper(paper, q) for q in _QUOTED.findall(text)[:8])


def findings_for(paper: Paper, item: ChecklistItem) -> list[Finding]:
    topic = topic_of(item)
    findings = check_justification(item, paper.checklist.id) + check_claims_alone(item, topic)
    if len(paper.body.strip()) < MIN_BODY_CHARS:
        findings.append(unverifiable("The paper body is not available: the answer could not be checked against"
                                     " the paper (only the checklist itself was checked)."))
        return findings + paper_level_findings(paper, body_facts(paper.body))
    facts = body_facts(paper.body)
    findings += check_pointers(paper, item, topic)
    findings += check_body(paper, item, topic, facts)
    return findings + paper_level_findings(paper, facts)


def paper_level_findings(paper: Paper, facts: BodyFacts) -> list[Finding]:
    """Signs of an attempt to steer the judge. They say nothing about one answer's truth, so they carry
    no weight in its verdict (an honest answer in a manipulated paper stays correct); they are repeated
    at the end of every item's review so an author cannot miss them."""
    out = []
    if facts.has("injection"):
        out.append(Finding("note", 0.0, "The paper contains text addressed to an automated reviewer: remove it.",
                           facts.quote("injection")))
    if paper.hidden_text or warnings_of(paper, WarningKind.HIDDEN_TEXT):
        out.append(Finding("note", 0.0, HIDDEN_TEXT_NOTE))
    return out


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


# The clip in log-odds: a justification citing thousands of missing places sums to a log-odds whose
# logistic overflows ``math.exp``; clipped first, the logistic never sees more than about +-3.9.
Z_MIN, Z_MAX = _logit(P_MIN), _logit(P_MAX)


def combine(answer: Answer, findings: list[Finding]) -> float:
    """Prior for the answer type plus the findings' log-odds shifts, clipped to [P_MIN, P_MAX]."""
    z = _logit(PRIORS[answer]) + sum(f.weight for f in findings)
    z = min(Z_MAX, max(Z_MIN, z))
    return min(P_MAX, max(P_MIN, 1 / (1 + math.exp(-z))))


def on_verdict_side(p: float, correct: bool) -> float:
    """Move p to the verdict's side of 0.5 without reordering answers within a side: an answer
    judged correct on weak evidence lands just above 0.5, one judged incorrect despite support just
    below (so p_correct never says the opposite of the verdict)."""
    if correct and p < 0.5:
        return 0.5 + 0.05 * p
    if not correct and p >= 0.5:
        return 0.45 + 0.05 * (p - 0.5)
    return p


class HeuristicAssessor(Assessor):
    """Deterministic offline judge: rule checks, no model, no network."""

    name = "heuristic"
    needs_network = False
    model = None
    prompt_version = RULES_VERSION

    async def judge(self, paper: Paper, item: ChecklistItem) -> Assessment:
        started = time.perf_counter()
        assert item.answer is not None  # TODO/missing never reach judge()
        findings = findings_for(paper, item)
        must_fix = _notes(findings, "blocking")
        unverified = _notes(findings, "unverifiable")
        verdict = verdict_of(must_fix, unverified)
        correct = verdict != "incorrect"
        p = on_verdict_side(combine(item.answer, findings), correct)
        evidence = [f.evidence for f in findings if f.evidence and f.weight > 0]
        evidence += [f.evidence for f in _by_weight(findings, "blocking", "suggestion") if f.evidence]
        passages, state = resting_passages(paper, item, findings, verdict)
        return Assessment(
            question_id=item.id,
            answer=item.answer,
            correct=correct,
            p_correct=round(p, 4),
            review=compose_review(must_fix, _notes(findings, "suggestion"), unverified, _notes(findings, "note"),
                                  empty="No problems found by the offline checks."),
            evidence=list(dict.fromkeys(evidence))[:6],
            provenance=Provenance(
                assessor=self.name,
                model=None,
                prompt_version=RULES_VERSION,
                strategy=StructuredOutput.NONE,
                latency_s=time.perf_counter() - started,
            ),
            must_fix=must_fix,
            suggestions=_notes(findings, "suggestion"),
            unverifiable=unverified,
            verdict=verdict,
            passages=passages,
            state=state,
        )


def _by_weight(findings: list[Finding], *severities: str) -> list[Finding]:
    """Findings of the given severities, worst first (stable, so rule order breaks ties)."""
    return sorted((f for f in findings if f.severity in severities and f.note), key=lambda f: f.weight)


def _notes(findings: list[Finding], severity: str) -> list[str]:
    return list(dict.fromkeys(f.note for f in _by_weight(findings, severity)))
