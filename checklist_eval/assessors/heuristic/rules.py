"""The offline assessor's rules, each a check of what the author claims against what the paper shows.

A rule returns ``Finding``s with a severity:

* ``blocking``: the answer is incorrect as it stands (a contradiction, a place that does not exist,
  a claim the body plainly refutes);
* ``suggestion``: the answer stands, here is how to improve it;
* ``unverifiable``: the claim could not be checked against the text we have (no body, a place
  outside it); no weight, so ``p_correct`` stays near the prior;
* ``support``: evidence found for the answer (no review line);
* ``note``: a paper-level remark (hidden text, injection) that says nothing about this answer.

The author's claim is the answer, the justification and its pointers. The paper's evidence is its
body, headings, captions and appendices. A justification is never evidence for itself: a Yes for
IRB approval needs the approval in the body, not the word "IRB" in the justification. Only facts a
reader can check elsewhere (a URL, a licence name of a third-party asset) count from the
justification. Generic words ("Theorem", "GPU", "std" once) are not evidence for a specific claim.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from checklist_eval.assessors.evidence.body import BodyFacts, _search, _snippet, has_vague_pointer, pointers_in
from checklist_eval.assessors.evidence.topics import EXPERIMENTAL, TOPIC_WORDS
from checklist_eval.assessors.heuristic.negation import (
    BARE_DENIAL,
    CLAUSES,
    CONTRAST,
    NEGATION,
    PARTS,
    VERB_DENIAL,
    denied_on_topic,
)
from checklist_eval.models import Answer, ChecklistItem

Severity = Literal["blocking", "suggestion", "unverifiable", "support", "note"]


@dataclass(frozen=True)
class Finding:
    """One check's outcome: ``weight`` shifts the log-odds of correctness (negative = a problem)."""

    severity: Severity
    weight: float
    note: str = ""
    evidence: str | None = None
    # The finding says the paper's support for the claim is missing (a cited place not about it, a fact
    # the body lacks): the answer is never "supported" beside it.
    missing: bool = False


def blocking(weight: float, note: str, evidence: str | None = None) -> Finding:
    return Finding("blocking", weight, note, evidence)


def suggestion(weight: float, note: str, evidence: str | None = None) -> Finding:
    return Finding("suggestion", weight, note, evidence)


def unverifiable(note: str) -> Finding:
    return Finding("unverifiable", 0.0, note)


def support(weight: float, evidence: str | None) -> Finding:
    return Finding("support", weight, "", evidence)


def _fact(facts: BodyFacts, key: str) -> str | None:
    return facts.quote(key) if facts.has(key) else None


# --------------------------------------------------------------------------------------------------
# The justification against itself (no body needed)

# Why something is not done. A contrast ("but", "however") or a restriction ("we only discussed X")
# names the gap again without saying why, so they are no reason. A No saying the work does not involve,
# introduce or pose the thing at all says why: the question does not apply (NA would be the better answer).
_REASON = re.compile(
    r"\b(?:because|since|due to|as (?:the|it|we|this|our|there)|given that|owing to|in order to|so as to"
    r"|(?:which|that|this) is why|hence|therefore"
    r"|(?:does|do|did|is|are) not (?:involve|introduce|pose|apply|concern)"
    r"|not (?:applicable|needed|necessary|feasible|possible|relevant|required|significant)|negligible|minimal"
    r"|too (?:expensive|costly|large)|limited (?:compute|computational|resources|budget|time|access)"
    r"|beyond|out of (?:the )?scope|scope|proprietary|confidential|privacy|sensitive|permissions?"
    r"|upon (?:acceptance|publication)|will be (?:released|made)|future work"
    r"|no (?:human|new|theoretical|experiments?))\b",
    re.I,
)
_ADMISSION = re.compile(
    r"\b(?:does not|do not|did not|is not|are not|was not|were not|not (?:reported|released|provided|included"
    r"|given|described|discussed|available)|no (?:error bars?|url|code|details?|information)|single run|omit)",
    re.I,
)
# A clause that says the paper lacks something ("we do not report", "no theoretical results are
# included", "the paper involves no human subjects", "not applicable").
_DENIAL = re.compile(
    r"\b(?:does|do|did|is|are|was|were) not (?:include|contain|involve|have|report|provide|use|release|present"
    r"|make|discuss|describe|conduct|perform|state|apply|propose|introduce|run|require|pose|study|train)"
    r"|\b(?:doesn't|don't|didn't)\b|\bnot (?:included|provided|reported|applicable|released|available|discussed"
    r"|conducted|performed|relevant|involved|used|given|described|considered)\b|\bnone\b"
    r"|\b(?:involves?|has|have|contains?|includes?|uses?|requires?|makes?|poses?|presents?|releases?|reports?"
    r"|provides?|introduces?|conducts?) no\b|\bthere (?:are|is|were|was) no\b|^\W*no\b|\bN/?A\b",
    re.I,
)
_CLAUSE = re.compile(r"[^.;:!?\n]+")
_OPENING_DENIAL = re.compile(
    r"^\W*(?:no\b|none\b|not applicable|n/?a\b|(?:this|the|our) (?:paper|work|submission|study|research)"
    r" (?:does not|doesn't|has no|involves no|contains no|includes no|makes no|is not)|we do not|there (?:are|is) no)",
    re.I,
)
# Topics whose question asks whether the paper contains something: a Yes that opens by denying it
# contradicts itself. (Ethics, claims and LLM-use justifications often open with "No ..." honestly.)
_CONTAINMENT = EXPERIMENTAL | {"theory", "human", "irb", "licenses", "credits", "new_assets", "safeguards",
                                "limitations"}
# A release that is not there yet, by what it means rather than by set phrases: a future or intended act of
# making it public ("we are going to open our code base", "shall be made accessible"), a condition of a later
# event ("once the paper is accepted", "after the conference decision"), or access on request. (The
# adversary's own promises are in adversary/phrasings.py; scripts/eval_rewordings.py checks this rule
# catches other wordings of the same promise as often.)
_LATER = (r"acceptance|accepted|publication|published|reviews?(?: process| period)?|decision|conference"
          r"|camera[- ]ready|final version|anonymity period|de-?anonymi[sz]\w*")
_PROMISE = re.compile(
    r"\b(?:will|shall|(?:is|are|am) going to|(?:plan|intend|commit|promise|aim|expect|hope)s? to)\b[^.;]{0,60}?"
    r"\b(?:release|publish|share|post|open[- ]?sourc|upload|appear|provid|add"
    r"|make\b[^.;]{0,30}\b(?:public|available|accessible)|put\b[^.;]{0,20}\bonline"
    r"|be (?:made )?(?:public|available|accessible|online))"
    rf"|\b(?:upon|after|once|following|at|when|with) (?:the )?(?:paper(?:'s)? (?:is )?)?(?:{_LATER})\b"
    r"|camera[- ]ready|\b(?:scheduled|planned|slated) (?:for|to)\b|forthcoming"
    r"|not (?:yet )?(?:online|public|released)|(?:up)?on (?:reasonable )?request",
    re.I,
)
_DELIVERED = re.compile(r"https?://|github\.com|supplement|anonymous\.4open|zenodo|attached|included (?:in|with)", re.I)
_EVASIVE_WORDS = frozenset(
    "this that the a an our is are not applicable to question questions item paper papers work works study does"
    " do apply applies relevant n/a na here it in of for".split()
)


def _supports(clause: str, topic: str | None) -> bool:
    """A clause that states something on topic without denying it, or gives a URL. A pointer alone ("See
    Section 3.", "This is addressed in the paper.") says nothing that could stand against a denial."""
    words = TOPIC_WORDS.get(topic or "")
    if _search("url", clause) or (pointers_in(clause) and not _only_a_pointer(clause)):
        return True
    negated = VERB_DENIAL.search(clause) or NEGATION.search(clause)
    return bool(words and words.search(clause) and not negated)




_POINTING_WORDS = frozenset(
    "see refer please details detail more section sections sec appendix appendices table tables figure figures"
    " fig addressed discussed described given provided found shown reported covered main supplementary"
    " material".split()
)


def _only_a_pointer(clause: str) -> bool:
    """A pointer with nothing said beside it ("See Section 3.", "Details in Appendix B.")."""
    said = [w for w in re.findall(r"[A-Za-z]{3,}", clause)
            if w.lower() not in _FUNCTION_WORDS and w.lower() not in _POINTING_WORDS]
    return len(said) < 2


def contradicts_itself(item: ChecklistItem, topic: str | None) -> Finding | None:
    """A Yes whose own justification denies the thing the question asks about. Blocking only when
    nothing else in it supports the Yes (a pointer, a URL, an on-topic statement); a denial beside
    support ("No training is performed; evaluation details are in Section 4") is a question to the author."""
    just = (item.justification or "").strip()
    if item.answer is not Answer.YES or not just or topic not in _CONTAINMENT:
        return None
    if BARE_DENIAL.match(just):  # "NA" alone in the field often means "no justification" (told elsewhere)
        return None
    clauses = [c.strip() for c in CLAUSES.findall(just) if c.strip()]
    denials = [c for c in clauses if denied_on_topic(c, topic)]
    if not denials:
        return None
    # A denial with a contrast in it names a partial gap ("no licence for the raw data, while the
    # packages' licences are listed in the appendix"); another sentence may state what the paper has.
    partial = any(CONTRAST.search(c) for c in denials)
    if partial or any(_supports(c, topic) for c in clauses if c not in denials):
        return suggestion(-0.9, f'The answer is Yes, but its justification also says "{_short(denials[0])}":'
                          " make clear what the paper does provide.")
    return blocking(-1.8, f'The answer is Yes but its own justification says the opposite: "{_short(denials[0])}".')


_FUNCTION_WORDS = frozenset(
    "the a an and or of in to for with is are was were be been being by on at as it its this that these those"
    " our we us they them their there here paper papers work research study submission all any each every"
    " have has had do does did not yes also such which from into than then so very indeed".split()
)


def restates_question(item: ChecklistItem) -> Finding | None:
    """A Yes whose justification only repeats the question's own words ("We comply with the NeurIPS Code
    of Ethics", "Creators of assets used in the paper are cited") points nowhere and states no fact a
    reader could check: the answer is asserted, not substantiated."""
    just = item.justification or ""
    if item.answer is not Answer.YES or pointers_in(just) or has_vague_pointer(just) or _search("url", just):
        return None
    asked = {w.lower()[:5] for w in re.findall(r"[A-Za-z]+", f"{item.title or ''} {item.question or ''}")}
    said = [w for w in re.findall(r"[A-Za-z]+", just) if len(w) > 2 and w.lower() not in _FUNCTION_WORDS]
    beyond = [w for w in said if w.lower()[:5] not in asked]
    if said and len(beyond) <= 1:
        return suggestion(-0.8, f'The justification only restates the question ("{_short(just)}"): say where'
                          " the paper shows it or what it does.")
    return None


def promise_instead_of_release(item: ChecklistItem, topic: str | None) -> Finding | None:
    """A Yes for access to code or data that only promises a release later is a No today."""
    just = item.justification or ""
    if item.answer is Answer.YES and topic in ("code", "new_assets") and _PROMISE.search(just) \
            and not _DELIVERED.search(just):
        return suggestion(-1.0, "Yes for released code/data, but the justification only speaks of a later release:"
                          " provide it with the submission (URL or supplement), or answer No.")
    return None


def evasive_na(item: ChecklistItem, topic: str | None) -> Finding | None:
    """An NA that does not say why the question does not apply (only "not applicable to this work")."""
    if item.answer is not Answer.NA:
        return None
    words = {w.lower() for w in re.findall(r"[A-Za-z/]+", item.justification or "")}
    if words and words <= _EVASIVE_WORDS:
        return suggestion(-0.8, "NA without saying why the question does not apply to this paper: name what the"
                          " paper does not contain (e.g. no experiments, no human subjects).")
    return None


_DESCRIBES = {
    "compute": ("hardware_specific", "time"),
    "errorbars": ("stats_strong",),
    "irb": ("irb",),
    "theory": ("theorem_numbered",),
}


def na_describes_the_thing(item: ChecklistItem, topic: str | None) -> Finding | None:
    """NA while the justification itself describes what the question asks for."""
    just = item.justification or ""
    keys = _DESCRIBES.get(topic or "")
    if item.answer is not Answer.NA or not keys or _DENIAL.search(just) or _ADMISSION.search(just):
        return None
    if all(_search(k, just) for k in keys):
        return blocking(-1.2, f'NA, yet the justification describes it ("{_short(just)}"): answer Yes and point'
                        " to where the paper shows it.")
    return None


def _short(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


# --------------------------------------------------------------------------------------------------
# Yes: the paper must show what the answer claims


def check_yes(topic: str | None, facts: BodyFacts, item: ChecklistItem) -> list[Finding]:
    rule = _YES_RULES.get(topic or "")
    return rule(facts, item.justification or "") if rule is not None else []


# Each rule: the findings for a Yes on its topic, from the body's facts and the justification.

def _yes_theory(facts: BodyFacts, just: str) -> list[Finding]:
    if facts.has("theorem_numbered") or facts.has("proof"):
        return [support(0.4, _fact(facts, "theorem_numbered") or _fact(facts, "proof"))]
    return [blocking(-1.2, "Yes for theory, but no theorem, lemma or proof found in the body (NA?).")]


def _yes_code(facts: BodyFacts, just: str) -> list[Finding]:
    url = _search("url", just)
    if url or facts.has("url"):
        return [support(0.4, url.group(0) if url else facts.quote("url"))]
    if facts.has("supplement") or _search("supplement", just):
        return [support(0.2, _fact(facts, "supplement") or "supplement named in the justification")]
    if facts.has("code_terms") or _search("code_terms", just):
        return [suggestion(-0.7, "Code/data claimed available, but no URL is given: give the link (anonymized for"
                           " review).", _fact(facts, "code_terms"))]
    return [blocking(-1.0, "Code/data claimed available, but no URL, repository or supplement is mentioned:"
                     " give the link.")]


def _yes_errorbars(facts: BodyFacts, just: str) -> list[Finding]:
    n = facts.counts.get("stats_strong", 0)
    if n >= 2:
        return [support(0.5, facts.quote("stats_strong"))]
    if n == 0 and (facts.has("stats_terms") or _search("stats_terms", just)):
        return [suggestion(-0.8, "Error bars claimed, but the body names no std, standard error or confidence"
                           " interval: say what the bars show and over how many runs.", _fact(facts, "stats_terms"))]
    if n == 1:  # one stray "std" or "confidence interval" is not a report of error bars
        return [suggestion(-0.6, "Error bars claimed, but the body mentions variability only once: say what"
                           " the bars show (std, standard error, CI) and over how many runs.",
                           facts.quote("stats_strong"))]
    if _IN_A_FIGURE.search(just):  # bars drawn in a plot leave no word in the text we read
        return [suggestion(-0.8, "Error bars claimed in a figure, but the text never says what they show: name"
                           " the measure (std, standard error, CI) and the number of runs in the caption.")]
    return [blocking(-1.2, "Error bars/significance claimed, but the body has no std, standard error,"
                     " confidence interval, error bar or ±.")]


_IN_A_FIGURE = re.compile(r"\bFig(?:ure|s?\.)|\bplot(?:s|ted)?\b", re.I)


def _yes_compute(facts: BodyFacts, just: str) -> list[Finding]:
    hw, tm = facts.has("hardware_specific"), facts.has("time")
    if hw and tm:
        return [support(0.5, facts.quote("hardware_specific"))]
    if hw or tm:
        # a device named in passing ("GPU kernels") is no hardware report, but is no absence of one either
        lacking = ("execution time" if hw else "specific hardware (GPU/CPU model, memory)" if facts.has("hardware")
                   else "hardware (GPU/CPU type, memory)")
        return [suggestion(-0.6, f"Compute resources are incomplete: no {lacking} mentioned.")]
    if facts.has("compute_terms"):
        return [suggestion(-0.8, "Compute claimed, but the body names no specific hardware (GPU/CPU model, memory)"
                           " or run time: give them.", facts.quote("compute_terms"))]
    if facts.has("hardware"):  # "on GPUs": a device named, but not which, how many or for how long
        return [blocking(-1.2, "Compute claimed, but the body names no specific hardware (GPU/CPU model, count,"
                         " memory) and no run time.", facts.quote("hardware"))]
    return [blocking(-1.2, "Compute claimed, but no hardware (GPU/CPU/TPU) or run time is mentioned.")]


def _yes_licenses(facts: BodyFacts, just: str) -> list[Finding]:
    if facts.has("licence_name"):
        return [support(0.5, facts.quote("licence_name"))]
    m = _search("licence_name", just)
    if m:  # a third-party asset's licence is a checkable fact, usually stated only here
        return [support(0.2, _snippet(just, m, 20))]
    if not any(facts.has(k) or _search(k, just) for k in ("licence_word", "licence_terms")):
        return [blocking(-1.0, "Licences claimed as stated, but neither the paper nor the justification names a"
                         " licence or terms of use: name each asset's licence.")]
    return [suggestion(-0.7, "Licence claims name no licence (MIT, Apache-2.0, CC-BY, GPL, BSD...): name"
                       " each asset's licence.")]


def _yes_credits(facts: BodyFacts, just: str) -> list[Finding]:
    if facts.has("references"):
        return [support(0.2, None)]
    return [suggestion(-0.6, "Credits claimed, but the paper has no references.")]


def _shown_by(key: str, weight: float, otherwise: Finding) -> Callable[[BodyFacts, str], list[Finding]]:
    """The rule of a topic whose Yes the body supports by one kind of fact: quote it, else ``otherwise``."""
    def rule(facts: BodyFacts, just: str) -> list[Finding]:
        return [support(weight, facts.quote(key))] if facts.has(key) else [otherwise]
    return rule


def _yes_new_assets(facts: BodyFacts, just: str) -> list[Finding]:
    if facts.has("url") or _search("url", just) or facts.has("supplement"):
        return [support(0.3, facts.hits.get("url", "release location given"))]
    return [suggestion(-0.6, "New assets claimed, but no URL or release location is given.")]


def _yes_details(facts: BodyFacts, just: str) -> list[Finding]:
    if facts.has("details"):
        return [support(0.3, facts.quote("details"))]
    if not _has_experiments(facts):
        return [blocking(-1.0, "Yes for an experimental question, but the paper reports no experiments (NA?).")]
    return [suggestion(-0.6, "No hyperparameters, optimizer, data splits or seeds found in the body.")]


_YES_RULES: dict[str, Callable[[BodyFacts, str], list[Finding]]] = {
    "theory": _yes_theory, "code": _yes_code, "errorbars": _yes_errorbars, "compute": _yes_compute,
    "licenses": _yes_licenses, "credits": _yes_credits, "new_assets": _yes_new_assets, "details": _yes_details,
    "reproducibility": _yes_details,
    "human": _shown_by("human_strong", 0.3, blocking(
        -1.2, "Yes for human subjects, but the body mentions no participants, crowdworkers or user study (NA?).")),
    "irb": _shown_by("irb", 0.5, blocking(
        -1.3, "IRB approval claimed, but the body mentions no IRB, ethics board or exemption.")),
    "limitations": _shown_by("limitations", 0.4, blocking(
        -1.0, "Limitations claimed, but the body never discusses limitations.")),
    # Impact discussions hide in introductions and conclusions under many phrasings: weak evidence.
    "impacts": _shown_by("impacts", 0.4, suggestion(
        -0.8, "Societal impacts claimed, but the body has no impact, misuse or harm discussion that we could"
        " find: point to it.")),
    "safeguards": _shown_by("safeguards", 0.3, blocking(-0.9, "Safeguards claimed, but the body describes none.")),
    "llm": _shown_by("llm", 0.3, suggestion(-0.6, "LLM usage declared, but the body never mentions an LLM.")),
}


def _has_experiments(facts: BodyFacts) -> bool:
    """Experiments reported with results in a numbered table, not merely mentioned (a position paper
    talks about experiments and shows figures without running any)."""
    return facts.counts.get("experiments", 0) >= 3 and facts.has("tables")


# --------------------------------------------------------------------------------------------------
# NA: the question must really not apply


def check_na(topic: str | None, facts: BodyFacts) -> list[Finding]:
    rule = _NA_RULES.get(topic or "") or (_na_experimental if topic in EXPERIMENTAL else None)
    found = rule(facts) if rule is not None else None
    if found is not None:
        return found
    shown = body_shows(topic, facts)
    if shown:
        return [suggestion(-0.5, "NA, yet the paper seems to contain what the question asks about: check that it"
                           " does not apply.", shown)]
    return [support(0.3, "nothing in the body contradicts NA")]


def body_shows(topic: str | None, facts: BodyFacts) -> str | None:
    """The body's evidence for what a Yes on this topic would claim (as the Yes rules read it), if any:
    a soft signal against an NA or a No, never a verdict on its own."""
    rule = _YES_RULES.get(topic or "")
    if rule is None:
        return None
    found = [f for f in rule(facts, "") if f.severity == "support" and f.weight >= 0.3]
    return (found[0].evidence or "evidence in the body") if found else None


# Each rule: the findings for an NA on its topic, or None when the body says nothing against it.

def _na_limitations(facts: BodyFacts) -> list[Finding]:
    if facts.counts.get("limitations", 0) >= 2:
        return [blocking(-1.0, "NA for limitations, yet the paper discusses them: answer Yes.",
                         facts.quote("limitations"))]
    return [suggestion(-0.7, "NA for limitations: almost every work has some; discuss them and answer Yes.")]


def _na_theory(facts: BodyFacts) -> list[Finding]:
    if facts.has("theorem_numbered") and facts.has("proof"):
        return [blocking(-1.4, "NA for theory while the paper states theorems/lemmas/proofs.",
                         facts.quote("theorem_numbered"))]
    if facts.has("theorem_numbered"):
        return [suggestion(-0.5, "NA for theory, but the body states a numbered theorem or lemma: check.",
                           facts.quote("theorem_numbered"))]
    return [support(0.6, "no theorem, lemma or proof in the body")]


def _na_human(facts: BodyFacts) -> list[Finding]:
    if facts.counts.get("human_strong", 0) >= 3:  # a paper about reviewing cites surveys, participants...
        return [blocking(-1.0, "NA for human subjects while the body mentions them.", facts.quote("human_strong"))]
    if facts.counts.get("human_weak", 0) >= 3:
        return [suggestion(-0.8, "NA for human subjects, but the body mentions participants or annotators:"
                           " check whether they are research subjects.", facts.quote("human_weak"))]
    return [support(0.6, "no participants, crowdworkers or user study in the body")]


def _na_experimental(facts: BodyFacts) -> list[Finding]:
    if _has_experiments(facts):
        return [blocking(-1.2, "NA for an experimental question while the paper reports experiments.",
                         facts.quote("experiments"))]
    return [support(0.5, "no experiments found in the body")]


def _na_new_assets(facts: BodyFacts) -> list[Finding] | None:
    if facts.has("new_assets"):
        return [suggestion(-0.6, "NA for new assets while the paper releases code or data.", facts.quote("new_assets"))]
    return None


def _na_existing_assets(facts: BodyFacts) -> list[Finding] | None:
    n = facts.counts.get("assets_used", 0)
    if n >= 6:
        return [blocking(-1.0, "NA for existing assets while the paper uses datasets or pretrained models:"
                         " credit them and state their licences.", facts.quote("assets_used"))]
    if n >= 3:
        return [suggestion(-0.4, "NA for existing assets, but the paper mentions datasets or pretrained models:"
                           " check whether it uses any.", facts.quote("assets_used"))]
    return None


def _na_llm(facts: BodyFacts) -> list[Finding] | None:
    if facts.counts.get("llm", 0) >= 5:
        return [suggestion(-0.5, "NA for LLM usage while the paper mentions LLMs throughout.", facts.quote("llm"))]
    return None


def _na_impacts(facts: BodyFacts) -> list[Finding]:
    if facts.counts.get("impacts", 0) >= 2:
        return [blocking(-1.0, "NA for societal impact while the paper discusses its impacts: answer Yes and"
                         " point to the discussion.", facts.quote("impacts"))]
    return [suggestion(-0.2, "NA for societal impact: say why the work has none (e.g. foundational research).")]


_NA_RULES: dict[str, Callable[[BodyFacts], list[Finding] | None]] = {
    "limitations": _na_limitations, "theory": _na_theory, "human": _na_human, "irb": _na_human,
    "new_assets": _na_new_assets, "licenses": _na_existing_assets, "credits": _na_existing_assets,
    "llm": _na_llm, "impacts": _na_impacts,
}


# --------------------------------------------------------------------------------------------------
# No: a reason, and not refuted by the body


def no_reason(item: ChecklistItem) -> Finding:
    just = item.justification or ""
    if _REASON.search(just):
        return support(0.3, "justification gives a reason")
    if _ADMISSION.search(just):
        return suggestion(-0.2, "The No admits the gap; say why it is not done (cost, privacy, scope...).")
    # The guidelines ask every No to say why. A bare No is not wrong on that account, but it is never
    # as good as an explained one: a suggestion that lowers p_correct below any explained No.
    return suggestion(-0.8, "A No needs a reason (cost, privacy, scope...): explain why it is not done.")


_NO_CONTRADICTIONS = {
    "compute": ("hardware_specific", "the paper does mention hardware", 1, "no hardware"),
    "errorbars": ("stats_strong", "the paper does report variability/significance", 2, "no variability measure"),
    "irb": ("irb", "the paper does mention an ethics review or exemption", 1, "no ethics review"),
}


def gap_admitted(topic: str | None) -> Finding | None:
    """An honest No stands, yet it names something the paper lacks: worth adding."""
    if topic in ("claims", "limitations", "ethics", "llm", None):
        return None  # blocking elsewhere, or nothing the paper should add
    return suggestion(-0.5, "The No is an honest answer, but it names a gap in the paper: providing what the"
                      " question asks for would let you answer Yes.")


def check_no(topic: str | None, facts: BodyFacts, just: str = "") -> list[Finding]:
    """A No is an answer the author may always give with a reason. What the body seems to show against
    it is found by keywords, and an honest No often admits a partial gap ("the GPU class is given, but
    not the wall time"), so it is put to the author as a question, never a verdict: stronger when the
    No denies the whole thing than when it names the part the paper does provide."""
    out: list[Finding] = []
    shown = body_shows(topic, facts) if topic not in _NO_CONTRADICTIONS else None
    if shown:
        out.append(suggestion(-0.9, "No, yet the paper seems to show what the question asks about: if it does,"
                              " answer Yes and point to it; else say what is missing.", shown))
    if topic == "theory" and facts.has("theorem_numbered"):
        out.append(suggestion(-0.6, "No for theory while the paper has theorems: give complete proofs.",
                              facts.quote("theorem_numbered")))
    if topic == "code" and facts.has("url"):
        out.append(suggestion(-0.4, "No, yet the paper gives a URL: if it holds the code, answer Yes.",
                              facts.quote("url")))
    if topic in _NO_CONTRADICTIONS:
        key, what, least, absent = _NO_CONTRADICTIONS[topic]
        if facts.counts.get(key, 0) < least:
            out.append(support(0.8, f"the body mentions {absent}, consistent with No"))
        else:
            weight = -0.6 if _admits_part(just, topic) else -1.4
            out.append(suggestion(weight, f"No, yet {what}: if it is enough, answer Yes and point to it; else say"
                                  " what is missing.", facts.quote(key)))
    return out


# A No that says what the paper does provide before what it lacks ("the GPU class is given, but not the
# wall time") is a partial gap honestly admitted; the body's evidence of the part is no contradiction.
_QUALIFIED = re.compile(r"\b(?:but|however|although|though|while|whereas|except|only|partial(?:ly)?|fully"
                        r"|complete(?:ly)?|every|all|some|several|most|not yet|approximate)\b", re.I)


def _admits_part(just: str, topic: str | None) -> bool:
    if _QUALIFIED.search(just):
        return True
    parts = [p.strip() for c in CLAUSES.findall(just) for p in PARTS.split(c) if p and p.strip()]
    return any(_supports(p, topic) for p in parts if not denied_on_topic(p, topic))


_ASKED = {"claims": "the claims question", "limitations": "the limitations question"}


def no_never_acceptable(topic: str | None) -> Finding | None:
    """Answers a NeurIPS paper should not leave as they are. An honest No is still a correct answer
    (the truthful copy of a challenge triplet admits its flaws this way), so these are suggestions that
    lower p_correct, not verdicts."""
    if topic in _ASKED:
        return suggestion(-1.2, f"No for {_ASKED[topic]}: a NeurIPS paper is expected to address it; fix the"
                          " paper and answer Yes.")
    if topic == "ethics":
        return suggestion(-1.0, "No for the Code of Ethics: explain the deviation or fix it.")
    return None
