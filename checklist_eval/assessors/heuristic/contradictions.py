"""Hard evidence against an answer that the other rules read as a question to the author: a claim that
says the opposite of itself, or a No the body plainly refutes. Each is a contradiction of the CLAIM
(the thing the question asks about), read with negation scope, never a phrase matched as written.

* A Yes whose justification says the question's subject is absent ("The paper does not report error
  bars, but ...", "We do not use existing assets; ..."), whatever follows the denial: a Yes cannot
  rest on the absence of what it claims. A denial whose scope is restricted ("no licence for the raw
  data", "error bars for the main table only") names a partial gap and is not one.
* A No whose justification affirms the subject and denies nothing ("The paper does mention the
  compute resources used in Appendix C."): the justification says Yes.
* A No (or NA, see ``heuristic_rules.check_na``) that denies the whole subject while the body plainly
  shows it: both the strong facts of the topic, past the count one stray mention gives.
"""

from __future__ import annotations

import re

from checklist_eval.assessors.evidence.body import BodyFacts
from checklist_eval.assessors.evidence.topics import EXPERIMENTAL
from checklist_eval.assessors.heuristic.negation import CLAUSES, CONTRAST, NEGATION, NO_NP, VERB_DENIAL, narrowing_words
from checklist_eval.assessors.heuristic.rules import Finding, _short, blocking
from checklist_eval.models import Answer, ChecklistItem

# What each question asks the paper to hold, in the guidelines' words and their common synonyms.
_SUBJECTS: dict[str, str] = {
    "errorbars": r"error bars?|confidence intervals?|standard (?:deviations?|errors?)|statistical significance"
                 r"|significance tests?|variances?|uncertainty",
    # Not the devices: "we did not use GPUs" says what the compute was, not that it is missing.
    "compute": r"compute(?: resources)?|computational resources|computing resources|run ?times?|execution times?",
    "theory": r"theor(?:ems?|etical (?:results?|analysis|claims?|guarantees?)|y)|proofs?|lemmas?",
    "code": r"code|data(?:sets?)?|implementation",
    "licenses": r"licen[cs]es?|(?:existing |external |third[- ]party )?assets|terms of use",
    "credits": r"(?:existing |external |third[- ]party )?assets",
    "new_assets": r"new assets|(?:new |novel )(?:datasets?|models?|benchmarks?|code)",
    "human": r"human subjects|(?:human )?participants|crowdsourc\w*|crowd ?workers|user stud(?:y|ies)"
             r"|human (?:evaluation|annotators?|raters?)",
    "irb": r"IRB|institutional review|ethics (?:review|approval|board|committee)|human subjects|participants",
    "limitations": r"limitations",
    "safeguards": r"safeguards",
    "details": r"hyper-?parameters|(?:training|experimental) (?:details|settings?)",
    "reproducibility": r"reproducib\w*|(?:experimental|implementation) details|(?:details|information|instructions)"
                       r" (?:needed |required )?to reproduce",
}
SUBJECTS = {topic: re.compile(rf"\b(?:{rx})\b", re.I) for topic, rx in _SUBJECTS.items()}
_EXPERIMENTS = re.compile(r"\b(?:experiments?|empirical (?:results|evaluation)|experimental results)\b", re.I)
# Questions whose subject is a property of the experiments (their settings, error bars, compute, what
# reproduces them): a paper without experiments has none of it. Code and data are artefacts a paper can
# release without experiments ("no experiments to reproduce, but we link the repository"): denying the
# experiments does not deny them.
_OF_EXPERIMENTS = EXPERIMENTAL - {"code"}
# Words that restrict a denial to a part of its subject: before it ("no FORMAL proofs", "not ALL error
# bars"), or after it ("no licence FOR THE RAW data", "error bars ONLY for Table 1", "BEYOND sketches").
_BEFORE = re.compile(r"\b(?:only|some|all|every|each|most|certain|raw|specific|particular|individual|separate"
                     r"|additional|further|full|complete|formal|explicit|rigorous|other|main|exact|per|detailed"
                     r"|precise|exhaustive|extensive|many|several|large|larger|new)\b", re.I)
_AFTER = re.compile(r"\b(?:only|except|beyond|other than|apart from|besides|for (?:the |our )?(?:raw|some|certain"
                    r"|each|every|all|individual|specific|particular|main|larger?|final|baselines?|remaining|most)"
                    r"|for (?:table|figure|section|appendix)|per )", re.I)
# An exception after a "no ..." phrase restricts it up to the next comma or parenthesis.
_SAME_PHRASE = re.compile(r"[,(]")
_ADVERSATIVE = re.compile(r"\b(?:but|however|although|though|yet|while|whereas|instead)\b", re.I)
_PHRASE_AFTER = re.compile(r"^\W*(?:for|in|on|of|across|over|with)\s+(?P<np>[^,;]+)", re.I)
_THE_WORK = re.compile(r"^(?:(?:our|the|any|all|its|these|this|their)\s+)?(?:experiments?|results?|paper|work|method"
                       r"|approach|models?|submission|study|evaluations?|analysis|proposed \w+|main text)\b", re.I)


def _restricted(after: str) -> bool:
    """Words after the subject that narrow it: a restriction ("only", "except") or a phrase naming a
    part ("for the ablation", "in Table 3") rather than the whole work ("for our experiments")."""
    if _AFTER.search(after):
        return True
    phrase = _PHRASE_AFTER.match(after)
    return bool(phrase and not _THE_WORK.match(phrase.group("np").strip()))


_WHOLE = re.compile(r"^\W*(?:(?:the|this|our) (?:current |present |proposed )?(?:paper|work|submission|study|manuscript"
                    r"|research|project)|we|it|this|there|(?:in )?(?:this|our) (?:paper|work)(?: we)?)?\W*$", re.I)
# The whole work's second predicate: "This paper is a position paper, and does not include experiments".
_WHOLE_AND = re.compile(r"^\W*(?:the|this|our) (?:current |present |proposed )?(?:paper|work|submission|study"
                        r"|manuscript|research|project)\s+(?:is|was|presents?|proposes?|studies|focuses|introduces?"
                        r"|describes?|offers?)\b[^;]*?,?\s+and\s*$", re.I)


def _said_of_the_whole(before: str) -> bool:
    """Is a denial starting after ``before`` said of the whole work: its subject is the paper, we, there
    (nothing before the verb but them), or the paper's second predicate after "and"?"""
    return bool(_WHOLE.match(before) or _WHOLE_AND.match(before))


_AFFIRM = re.compile(r"\b(?:the paper|we|our (?:paper|work)|it|this (?:paper|work))\s+(?:does |do |did )?"
                     r"(?:mentions?|mentioned|reports?|reported|provides?|provided|includes?|included|describes?"
                     r"|described|states?|stated|gives?|lists?|listed|discuss(?:es)?|discussed|presents?"
                     r"|presented|specif(?:y|ies|ied))\b", re.I)


def subject_of(topic: str | None) -> re.Pattern[str] | None:
    return SUBJECTS.get(topic or "")


def denies_subject(clause: str, topic: str | None) -> bool:
    """Does the clause, up to its first contrast, deny the question's whole subject? The object of a
    denying verb or the "no ..." noun phrase must name the subject with no word restricting its scope and
    no modifier narrowing it to a kind ("no cluster compute", "no distributed training runs")."""
    subject = subject_of(topic)
    if subject is None:
        return False
    # What follows a "but" is another statement (the denial stands whatever it says); an exception
    # ("no compute was needed beyond a laptop") stays with the denial it restricts.
    head = _ADVERSATIVE.split(clause, maxsplit=1)[0]
    # Said of the whole work ("The paper does not...", "We do not...", "There are no..."): a denial said
    # of a part ("The raw datasets do not have licences") names a partial gap.
    denied = [(m.group("object"), "") for m in VERB_DENIAL.finditer(head) if _said_of_the_whole(head[: m.start()])]
    denied += [(m.group("np"), _SAME_PHRASE.split(head[m.end():])[0]) for m in NO_NP.finditer(head)
               if _said_of_the_whole(head[: m.start()])]
    for obj, rest in denied:
        m = subject.search(obj) or (_EXPERIMENTS.search(obj) if topic in _OF_EXPERIMENTS else None)
        if m is None:
            continue
        # The subject itself, not a kind of it: "no multi-GPU or cluster compute" denies the qualifier.
        before = obj[: m.start()]
        if not _BEFORE.search(before) and not narrowing_words(before) and not _restricted(obj[m.end():] + rest):
            return True
    return False


def yes_denies_subject(item: ChecklistItem, topic: str | None) -> Finding | None:
    """A Yes whose justification says the subject is absent, whatever follows the denial."""
    just = (item.justification or "").strip()
    if item.answer is not Answer.YES or not just:
        return None
    clauses = [c.strip() for c in CLAUSES.findall(just) if c.strip()]
    denial = next((c for c in clauses if denies_subject(c, topic)), None)
    if denial is None:
        return None
    return blocking(-1.8, f'The answer is Yes but its own justification says the opposite: "{_short(denial)}"'
                    " (a Yes cannot rest on the absence of what it claims, whatever follows).")


def no_affirms_subject(item: ChecklistItem, topic: str | None) -> Finding | None:
    """A No whose justification says the paper does the thing, and denies or restricts nothing."""
    just = (item.justification or "").strip()
    subject = subject_of(topic)
    if item.answer is not Answer.NO or not just or subject is None:
        return None
    if NEGATION.search(just) or CONTRAST.search(just) or re.search(r"n't\b|\bnot\b|\bno\b|\black", just, re.I):
        return None
    for clause in CLAUSES.findall(just):
        m = _AFFIRM.search(clause)
        if m and subject.search(clause[m.end():]):
            return blocking(-1.6, "The answer is No, but its justification says the paper provides it:"
                            f' "{_short(clause)}". Answer Yes and point to it, or say what is missing.')
    return None


# topic -> (the facts that together show the subject plainly, what they show)
_PLAIN = {
    "compute": (("hardware_specific", 1), ("time", 1), "the body names the hardware and the run time"),
    "errorbars": (("stats_strong", 3), None, "the body reports variability several times"),
    "theory": (("theorem_numbered", 1), ("proof", 1), "the body states numbered theorems with proofs"),
    "irb": (("irb", 2), None, "the body mentions an ethics review or approval"),
}


def no_refuted_by_body(item: ChecklistItem, topic: str | None, facts: BodyFacts) -> Finding | None:
    """A No denying the whole subject while the body plainly shows it (the passage is the evidence)."""
    if item.answer is not Answer.NO or topic not in _PLAIN:
        return None
    first, second, shows = _PLAIN[topic]
    needed = [c for c in (first, second) if c is not None]
    if not all(facts.counts.get(key, 0) >= least for key, least in needed):
        return None
    clauses = [c.strip() for c in CLAUSES.findall(item.justification or "") if c.strip()]
    if not any(denies_subject(c, topic) for c in clauses) or any(CONTRAST.search(c) for c in clauses):
        return None
    return blocking(-1.6, f"The answer is No, yet {shows}: answer Yes and point to it.", facts.quote(first[0]))
