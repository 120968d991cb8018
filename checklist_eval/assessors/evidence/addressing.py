"""Which paragraphs of a paper address a checklist question, best first: the passages an answer may show.

A paragraph addresses a question when it uses the words the question's guidelines ask a paper to state
(a limitation of the work, a theorem or proof, a hyperparameter or split, a standard deviation or
interval, the hardware or run time, a licence, an impact on society, the people studied): ``ASKED``. Any
other paragraph is never shown for the question, however well it ranks, so a licences question never
shows the definition of a group. Among the paragraphs that address it, the paper's own signposts rank
first: a paragraph under a heading or paragraph title named for the topic ("Limitations", "Run Time",
"Broader Impact": ``TITLED``), then one inside a section the justification cites, then the BM25 of the
question, its guidelines and the justification (``passages.ranked``). A topic without words of its own
keeps the topic's words of ``topics.TOPIC_WORDS``; a question of no known topic, BM25 alone."""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

from checklist_eval.assessors.evidence.body import MAX_SCAN_CHARS, pointers_in, section_texts
from checklist_eval.assessors.evidence.passages import Piece, _index, ranked
from checklist_eval.assessors.evidence.topics import TOPIC_WORDS, topic_of
from checklist_eval.models import ChecklistItem, Paper

# The words a paragraph answering each question uses, read from the question's guidelines (what "the
# paper should" state) and their common spellings. Case-sensitive words are marked (?-i:...).
# ASCII matching (re.A): word boundaries and case folding of ASCII letters only, about twice as fast over
# a whole body as Unicode matching, and the words are English.
ASKED: dict[str, re.Pattern[str]] = {
    topic: re.compile(rx, re.I | re.A)
    for topic, rx in {
        "limitations": r"\blimitations?\b|\blimited (?:to|by|in)\b|shortcomings?|weakness(?:es)?|future work"
        r"|open (?:question|problem)s?|remains? (?:an )?open|caveats?|does not (?:by itself )?(?:prove|establish"
        r"|cover|capture|handle|generali[sz]e|isolate|scale)|do not (?:claim|establish|cover|test|evaluate)"
        r"|not (?:yet )?(?:explored|evaluated|tested|reproduced)|restricted to|only (?:tested|evaluated|considered)"
        r"|fails? (?:to|when)",
        "theory": r"(?-i:\b(?:Theorem|Lemma|Proposition|Corollary|Proof|Assumption)s?\b)|\bwe prove\b"
        r"|\bproof (?:of|sketch)\b|\bthe proof\b|\bfull set of assumptions\b",
        "details": r"hyper-?param\w*|learning[- ]rates?|\blr\b|batch[- ]sizes?|\bepochs?\b|optimi[sz]er|\bAdam\w*"
        r"|\bSGD\b|weight decay|warm-?up|dropout|\bsplits?\b"
        r"|(?:training|validation|test|held-out) (?:sets?|examples|data)"
        r"|random seeds?|\bseeds?\b|implementation details|experimental (?:setup|settings?)|we set\b"
        r"|(?:is|are) set to"
        r"|train(?:ed|ing)? (?:for|on|with) \d|fine-?tun\w+|configurations?\b|\d+ (?:steps|iterations)",
        "errorbars": r"standard (?:deviations?|errors?)|\bstd\b|\bs\.?e\.?m?\b|confidence intervals?|\bCIs?\b"
        r"|error bars?|±|\\pm\b|bootstrap\w*|p-values?|statistical(?:ly)? significan\w+|significance|t-tests?"
        r"|wilcoxon|interquartile|percentile|variance|(?:over|across|averaged over) (?:\d+|three|five|ten)"
        r" (?:random |independent |different )?(?:seeds|runs|trials)",
        "compute": r"\b(?:GPU|CPU|TPU)s?\b|\bA100|\bH100|\bH200|\bV100|\bA6000|\bRTX\b|NVIDIA|Xeon|\bEPYC|\bRAM\b"
        r"|\d+\s*(?:GB|GiB)\b|GPU[- ]hours?|compute (?:budget|resources|cluster|time)|(?:GPU|HPC|computing) cluster"
        r"|hardware"
        r"|wall[- ]?clock|run ?times?|(?:training|inference|encoding|decoding) times?|\bhours?\b|\bminutes\b"
        r"|\bseconds\b|\bTPU v\d",
        "licenses": r"licen[cs]\w*|terms of (?:use|service)|copyright|(?-i:\bMIT\b)|Apache|\bBSD\b|\bL?GPL\b"
        r"|Creative Commons|\bCC[- ]?BY\w*|\bCC0\b|public domain|data use agreement|usage polic\w+|redistribut\w+",
        "impacts": r"societ\w*|broader impacts?|impact statement|(?:positive|negative|potential) (?:societal )?impacts?"
        r"|misuse|harm(?:s|ful)?\b|malicious|dual[- ]use|ethic\w*|fairness|privacy|surveillance"
        r"|disinformation|responsible (?:use|deployment|release|AI)|safety[- ]relevant|safety concern"
        r"|(?:is|are) (?:not )?intended (?:as|for)|should not be used",
        "human": r"human (?:subjects?|participants?|annotators?|raters?|evaluators?|judges?|labell?ers|study)"
        r"|crowd-?(?:sourc\w*|workers?)|Mechanical Turk|\bMTurk\b|\bProlific\b|user stud(?:y|ies)|\bparticipants?\b"
        r"|\bannotators?\b|informed consent|\bIRB\b|volunteers?|interviewees?|survey respondents|compensat\w+",
    }.items()
}
ASKED["reproducibility"] = ASKED["details"]
ASKED["irb"] = re.compile(r"\bIRB\b|institutional review|ethics (?:committee|board|approval|review)|ethical approval"
                          r"|exempt\w*|informed consent|\bparticipants?\b", re.I | re.A)

# Headings and paragraph titles a paper gives the place that answers each question.
TITLED: dict[str, re.Pattern[str]] = {
    topic: re.compile(rx, re.I)
    for topic, rx in {
        "limitations": r"limitation|scope|caveat|threats? to validity|discussion",
        "theory": r"theor|proof|assumption|analysis",
        "details": r"implementation|setup|set-up|setting|hyper|training details|configuration|parameter"
        r"|experimental details|evaluation protocol",
        "errorbars": r"statistic|significance|variance|robustness|error bar|confidence|seeds",
        "compute": r"compute|computational|hardware|run ?time|resources|cost|efficiency",
        "licenses": r"licen[cs]|assets|terms",
        "impacts": r"impact|societ|ethic|broader|intended use|misuse",
        "human": r"human|participant|annotat|user stud|crowd",
    }.items()
}
TITLED["reproducibility"] = TITLED["details"]

_OTHERS_WORK = re.compile(r"\b(?:prior|previous(?:ly proposed)?|existing|earlier|other|related|standard|their)"
                          r" (?:methods?|works?|approach(?:es)?|studies|models|pipelines)\b", re.I)
_OWN_WORK = re.compile(r"\b(?:our|this|the present|the proposed) (?:work|method|approach|study|paper|analysis|results?"
                       r"|framework|benchmark|model)\b|\bwe (?:do not|did not|only|cannot|assume)\b", re.I)
_POINTER_ONLY = re.compile(r"\b(?:are|is) (?:summari[sz]ed|given|provided|described|listed|detailed|reported"
                           r"|organi[sz]ed) in\b|\b(?:see|in) (?:the )?(?:Appendix|Section|Table|supplement)", re.I)
POINTER_WORDS = 25
_PARAGRAPH_TITLE = re.compile(r"^\s*([A-Z][^.:!?\n]{2,60})[.:]\s")
# What the signposts add to a paragraph's BM25 score (a BM25 score of a paragraph is rarely above 15):
# a heading named for the topic outranks a paragraph that merely shares the question's words.
TITLED_BONUS, CITED_BONUS, PER_WORD = 8.0, 5.0, 1.0
MAX_WORDS_COUNTED = 4
# A paragraph outside the places named for the topic addresses it when it uses at least this many of
# its words; a paragraph title must be followed by this many words to be a paragraph.
MIN_WORDS = 2
MIN_WORDS_AFTER_TITLE = 6


def asked_words(item: ChecklistItem) -> re.Pattern[str] | None:
    """The words a paragraph addressing ``item`` uses, or None for a question of no known topic."""
    return asked_words_of(topic_of(item) or "")


def asked_words_of(topic: str) -> re.Pattern[str] | None:
    return ASKED.get(topic) or TOPIC_WORDS.get(topic)


def addresses(item: ChecklistItem, text: str) -> bool:
    """Does ``text`` (a paragraph) use the words a paragraph answering ``item`` uses?"""
    words = asked_words(item)
    return words is None or bool(words.search(text))


def addressing_pieces(paper: Paper, item: ChecklistItem, query: str, *, pointers: bool = True) -> list[Piece]:
    """The paragraphs of the body that address ``item``, best first (see the module's note). Without
    ``pointers`` the places the justification cites neither admit nor rank a paragraph: what the body
    says on its own, for a rule that weighs the claim against the paper (a claim never lowers the bar of
    its own evidence)."""
    words = asked_words(item)
    scored = ranked(paper.body, query)
    if words is None:
        return [p for _, p in scored]
    topic = topic_of(item) or ""
    bm25 = {p.start: s for s, p in scored}
    titled = _titled_spans(paper, topic)
    cited = _cited_spans(paper, item) if pointers else ()
    out = []
    for p, hits in zip(_index(paper.body).pieces, _hits(paper.body, topic), strict=True):
        title = _PARAGRAPH_TITLE.match(p.text)
        if not hits or (title and len(p.text[title.end():].split()) < MIN_WORDS_AFTER_TITLE):
            continue  # a heading alone says where the answer is, not what it is
        named = bool(title and topic in TITLED and TITLED[topic].search(title.group(1)))
        signposted = named or _inside(p.start, titled)
        in_cited = _inside(p.start, cited)
        if _POINTER_ONLY.search(p.text) and len(p.text.split()) < POINTER_WORDS:
            continue  # "the hyperparameters are summarized in the main text" says where, not what
        if hits < MIN_WORDS and not (signposted or in_cited):
            continue  # one word of the topic in passing ("privacy", "hours") is not a paragraph about it
        if topic == "limitations" and _OTHERS_WORK.search(p.text) and not _OWN_WORK.search(p.text):
            continue  # the question asks for the limitations of the authors' own work
        score = bm25.get(p.start, 0.0) + PER_WORD * min(hits, MAX_WORDS_COUNTED)
        score += TITLED_BONUS * signposted + CITED_BONUS * in_cited
        out.append((score, p.start, p))
    return [p for _, _, p in sorted(out, key=lambda x: (-x[0], x[1]))]


@lru_cache(maxsize=128)
def _hits(body: str, topic: str) -> tuple[int, ...]:
    """How many distinct words of the topic each paragraph of the body uses, in one pass over the body
    (every question of a paper asks more than once, and the word patterns are the costly part)."""
    words = asked_words_of(topic)
    pieces = _index(body).pieces
    starts = [p.start for p in pieces]
    seen: list[set[str]] = [set() for _ in pieces]
    if words is None or not pieces:
        return tuple(0 for _ in pieces)
    for m in words.finditer(body, 0, pieces[-1].start + len(pieces[-1].text)):
        i = bisect.bisect_right(starts, m.start()) - 1
        if i >= 0 and m.end() <= starts[i] + len(pieces[i].text):
            seen[i].add(_word(m.group(0)))
    return tuple(len(s) for s in seen)


def _word(match: str) -> str:
    """One spelling for a word of the topic however often and in whichever number it recurs: "seeds" twice
    and "seed" once are one word in passing, not three."""
    return " ".join(match.lower().split()).rstrip("s")


def _inside(pos: int, spans: tuple[tuple[int, int], ...]) -> bool:
    return any(a <= pos < b for a, b in spans)


def _titled_spans(paper: Paper, topic: str) -> tuple[tuple[int, int], ...]:
    """Where the sections whose heading is named for ``topic`` are in the body: from the heading to the
    next heading of any section."""
    rx = TITLED.get(topic)
    if rx is None:
        return ()
    # headings searched in the scanned part of the body only, at most MAX_HEADINGS of them: a hostile paper
    # with thousands of headings costs MAX_HEADINGS passes over MAX_SCAN_CHARS, not one per heading
    titles = tuple(s.title for s in paper.sections if s.title)[:MAX_HEADINGS]
    starts = _heading_starts(paper.body[:MAX_SCAN_CHARS], titles)
    ends = sorted(pos for pos, _ in starts) + [len(paper.body)]
    return tuple((pos, next(e for e in ends if e > pos)) for pos, title in starts if rx.search(title))


MAX_HEADINGS = 100
_NUMBER = r"(?:[A-Z]?\d+(?:\.\d+)*\.?[ \t]+|[A-Z]\.?[ \t]+)"


@lru_cache(maxsize=16)
def _heading_starts(body: str, titles: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
    """Where each heading of ``titles`` stands alone on a line of ``body`` (its first such line)."""
    out = []
    for title in titles:
        words = r"\s+".join(map(re.escape, title.split()[:8]))
        m = re.search(rf"(?m)^[ \t]*{_NUMBER}?{words}[ \t]*$", body) if words else None
        if m:
            out.append((m.start(), title))
    return tuple(out)


def _cited_spans(paper: Paper, item: ChecklistItem) -> tuple[tuple[int, int], ...]:
    """Where the numbered sections the justification cites are in the body."""
    texts = section_texts(paper)
    spans = []
    for p in pointers_in(item.justification or "")[:8]:
        text = texts.get(p.label) if p.kind in ("section", "appendix") else None
        start = paper.body.find(text[:200]) if text else -1
        if text and start >= 0:
            spans.append((start, start + len(text)))
    return tuple(spans)
