"""Negation scope in an author's justification: does a clause deny the thing a question asks about, or
state something on its topic? The heuristic's self-contradiction rules (``heuristic_rules``) and its
body-against-answer checks (``contradictions``) both read justifications this way.
"""

from __future__ import annotations

import re

from checklist_eval.assessors.evidence import _search, pointers_in
from checklist_eval.assessors.topics import EXPERIMENTAL, TOPIC_WORDS

# A denial whose scope is what the question asks about. Verbs that deny the paper holds or did something
# ("does not report compute", "we did not release the code"); "require", "need" and the like deny a
# property of the thing, not its presence ("does not require specialized compute" is no denial).
_VERB_DENIAL = re.compile(
    r"\b(?:(?:does|do|did|is|are|was|were|has|have) not|doesn't|don't|didn't|never|cannot|can't)\s+(?:be\s+)?"
    r"(?:include|contain|involve|report|provide|release|present|discuss|describe|state|apply|give|share|conduct"
    r"|perform|run|have|make|offer|publish|list|specify|disclose|cover|address|obtain|use|collect|recruit)\w*"
    r"\s+(?P<object>[^,.;:]{0,80})",
    re.I,
)
# "no NP": the noun phrase up to its verb or the clause's end; its head (last word) is what is denied,
# so "No hyperparameter sweep was performed" denies a sweep, not the hyperparameters.
_NO_NP = re.compile(
    r"(?:^|\b(?:there (?:is|are|was|were)|includes?|contains?|involves?|has|have|reports?|provides?|uses?|makes?"
    r"|presents?|with)\s+)no\s+(?P<np>(?:[\w-]+\s+){0,3}?[\w-]+?)(?=\s+(?:is|are|was|were|has|have|had|can|could"
    r"|will|would|of|in|for|to|on|from|that|which|beyond|other|besides|except)\b|\s*$|\s*[,;:()])",
    re.I,
)
_CONTRAST = re.compile(r"\b(?:but|however|although|though|yet|except|beyond|other than|besides|apart from|instead"
                       r"|only|while|whereas)\b", re.I)
_CLAUSES = re.compile(r"[^.;:!?\n]+")
_PARTS = re.compile(r",|\b(?:but|however|although|though|yet|while|whereas|and)\b", re.I)


# Heads that take their topic from a modifier ("no theoretical results", "no error bars").
_GENERIC_HEADS = frozenset(
    "results result details information resources analysis analyses guarantees statements bars intervals"
    " discussion section description subjects participants study studies experiments assets documentation"
    " approval statistics proofs proof claims code data models release research".split()
)
_BARE_DENIAL = re.compile(r"^\W*(?:no|none|not applicable|n/?a|not relevant)\W*$", re.I)


def _denial_words(topic: str | None) -> re.Pattern[str] | None:
    """What a denial must name to deny the question's topic: its words, and for an experimental question
    the experiments themselves ("the paper does not include experiments" denies every detail of them)."""
    words = TOPIC_WORDS.get(topic or "")
    if words is None or topic not in EXPERIMENTAL:
        return words
    return re.compile(rf"{words.pattern}|\bexperiment", re.I)


# "IRB approval is not applicable": the subject of the clause is what is denied.
_NOT_APPLICABLE = re.compile(r"^(?P<subject>[^,]{0,80}?)\b(?:is|are)\s+not\s+(?:applicable|relevant)\b", re.I)


def denied_on_topic(clause: str, topic: str | None) -> bool:
    """Does this clause deny the thing the question is about? Read with negation scope: the object of
    a denying verb, the head of a "no ..." noun phrase, or the subject of "... is not applicable" must be
    on topic, and a contrast after it ("no training beyond the linear probe") takes the denial back."""
    words = _denial_words(topic)
    if words is None:
        return False
    clause = clause.strip()
    if _BARE_DENIAL.match(clause):
        return True
    applicable = _NOT_APPLICABLE.match(clause)
    if applicable and words.search(applicable.group("subject")):
        return True
    for m in _VERB_DENIAL.finditer(clause):
        obj = _CONTRAST.split(m.group("object"))[0]
        if words.search(obj):
            return True
    for m in _NO_NP.finditer(clause):
        np = m.group("np").split()
        rest = clause[m.end():]
        if _CONTRAST.search(rest[:60]):
            continue
        if words.search(" ".join(np)) and (np[-1].lower() in _GENERIC_HEADS or words.search(np[-1])):
            return True
    return False


def _supports(clause: str, topic: str | None) -> bool:
    """A clause that states something on topic without denying it, or gives a URL. A pointer alone ("See
    Section 3.", "This is addressed in the paper.") says nothing that could stand against a denial."""
    words = TOPIC_WORDS.get(topic or "")
    if _search("url", clause) or (pointers_in(clause) and not _only_a_pointer(clause)):
        return True
    negated = _VERB_DENIAL.search(clause) or _NEGATION.search(clause)
    return bool(words and words.search(clause) and not negated)


_NEGATION = re.compile(r"(?:^|\s)no\s|\bnot\b|\bnone\b|\bnor\b|\bwithout\b|\brather than\b|\binstead of\b", re.I)


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


_FUNCTION_WORDS = frozenset(
    "the a an and or of in to for with is are was were be been being by on at as it its this that these those"
    " our we us they them their there here paper papers work research study submission all any each every"
    " have has had do does did not yes also such which from into than then so very indeed".split()
)
