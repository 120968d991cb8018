"""What a justification denies, read with negation scope: the object of a denying verb, the head of a
"no ..." noun phrase, and the words that narrow what is denied. Shared by the rules that read a Yes
against its own justification (``rules``) and the hard contradictions (``contradictions``).

A denial is of the thing the question asks about only when the denied noun is that thing itself, not a
kind of it: "no compute was used" denies compute, "no multi-GPU or cluster compute was used" denies a
kind of compute (the negation falls on the qualifier, and the compute it qualifies is presupposed).
"""

from __future__ import annotations

import re

from checklist_eval.assessors.evidence.topics import EXPERIMENTAL, TOPIC_WORDS

# A denial whose scope is what the question asks about. Verbs that deny the paper holds or did something
# ("does not report compute", "we did not release the code"); "require", "need" and the like deny a
# property of the thing, not its presence ("does not require specialized compute" is no denial).
VERB_DENIAL = re.compile(
    r"\b(?:(?:does|do|did|is|are|was|were|has|have) not|doesn't|don't|didn't|never|cannot|can't)\s+(?:be\s+)?"
    r"(?:include|contain|involve|report|provide|release|present|discuss|describe|state|apply|give|share|conduct"
    r"|perform|run|have|make|offer|publish|list|specify|disclose|cover|address|obtain|use|collect|recruit)\w*"
    r"\s+(?P<object>[^,.;:]{0,80})",
    re.I,
)
# "no NP": the noun phrase up to its verb or the clause's end; its head (last word) is what is denied,
# so "No hyperparameter sweep was performed" denies a sweep, not the hyperparameters.
NO_NP = re.compile(
    r"(?:^|\b(?:there (?:is|are|was|were)|includes?|contains?|involves?|has|have|reports?|provides?|uses?|makes?"
    r"|presents?|with)\s+)no\s+(?P<np>(?:[\w-]+\s+){0,3}?[\w-]+?)(?=\s+(?:is|are|was|were|has|have|had|can|could"
    r"|will|would|of|in|for|to|on|from|that|which|beyond|other|besides|except)\b|\s*$|\s*[,;:()])",
    re.I,
)
CONTRAST = re.compile(r"\b(?:but|however|although|though|yet|except|beyond|other than|besides|apart from|instead"
                      r"|only|while|whereas)\b", re.I)
CLAUSES = re.compile(r"[^.;:!?\n]+")
PARTS = re.compile(r",|\b(?:but|however|although|though|yet|while|whereas|and)\b", re.I)
NEGATION = re.compile(r"(?:^|\s)no\s|\bnot\b|\bnone\b|\bnor\b|\bwithout\b|\brather than\b|\binstead of\b", re.I)


# Heads that take their topic from a modifier ("no theoretical results", "no error bars").
GENERIC_HEADS = frozenset(
    "results result details information resources analysis analyses guarantees statements bars intervals"
    " discussion section description subjects participants study studies experiments assets documentation"
    " approval statistics proofs proof claims code data models release research".split()
)
BARE_DENIAL = re.compile(r"^\W*(?:no|none|not applicable|n/?a|not relevant)\W*$", re.I)

# Where the words standing before a noun in its own phrase begin: after a preposition, a coordinator
# ("multi-GPU or CLUSTER compute": each conjunct has its own modifiers) or punctuation.
_PHRASE_BREAK = re.compile(r"\b(?:of|for|with|in|on|to|from|by|about|across|over|under|at|as|than|via|per|and|or"
                           r"|nor)\b|[,;:()/]", re.I)
# Where a denied object's first noun phrase ends: a preposition, a relative pronoun, a verb or punctuation.
_PHRASE_END = re.compile(r"\s+(?:of|for|with|in|on|to|from|by|about|across|over|under|at|as|than|via|per|that"
                         r"|which|who|where|when|because|since|during|using|is|are|was|were|has|have|had|can"
                         r"|could|will|would|beyond|other|besides|except)\b|[,;:()]", re.I)
# Words before a noun that take the whole of it rather than a kind of it.
_WHOLE_OF = frozenset("the a an any our its their this these that those such either whatever how much what which"
                      .split())


def narrowing_words(before: str) -> list[str]:
    """The words of a noun's own phrase that stand before it and narrow it to a kind ("cluster" in "cluster
    compute", "multi-" in "multi-GPU"): those after the last preposition, coordinator or punctuation of
    ``before``, less the determiners that take the whole ("any", "the", "our")."""
    last = _PHRASE_BREAK.split(before)[-1]
    return [w for w in re.findall(r"[\w-]+", last) if w.lower() not in _WHOLE_OF]


def head_narrowed(phrase: str, words: re.Pattern[str]) -> bool:
    """Is the head (last word) of this noun phrase on topic in its own right and narrowed by a word before
    it? Then a denial of the phrase denies a kind of the thing ("no multi-GPU or cluster compute"), not the
    thing. A generic head ("results", "bars") takes its topic from its modifiers and is never narrowed here."""
    head = re.search(r"[\w-]+$", phrase.rstrip())
    if head is None or head.group().lower() in GENERIC_HEADS:
        return False
    on_head = next((m for m in words.finditer(phrase) if m.start() < head.end() and m.end() > head.start()), None)
    return bool(on_head and narrowing_words(phrase[: on_head.start()]))


def first_phrase(obj: str) -> str:
    """The first noun phrase of a denying verb's object ("the code" of "the code used for training")."""
    return _PHRASE_END.split(obj, maxsplit=1)[0]


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
    on topic and not narrowed to a kind of it, and a contrast after it ("no training beyond the linear
    probe") takes the denial back."""
    words = _denial_words(topic)
    if words is None:
        return False
    clause = clause.strip()
    if BARE_DENIAL.match(clause):
        return True
    applicable = _NOT_APPLICABLE.match(clause)
    if applicable and words.search(applicable.group("subject")):
        return True
    for m in VERB_DENIAL.finditer(clause):
        obj = CONTRAST.split(m.group("object"))[0]
        if words.search(obj) and not head_narrowed(first_phrase(obj), words):
            return True
    for m in NO_NP.finditer(clause):
        np = m.group("np").split()
        rest = clause[m.end():]
        if CONTRAST.search(rest[:60]):
            continue
        on_topic = np[-1].lower() in GENERIC_HEADS or words.search(np[-1])
        if words.search(" ".join(np)) and on_topic and not head_narrowed(m.group("np"), words):
            return True
    return False
