"""What the paper shows, apart from what its author claims: which kinds of content the body holds
(``body_facts``), the numbered places a reader can see (``layout_of``), the places a justification
points at (``pointers_in``, ``titled_places``) and the text found there (``place_text``)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache

from checklist_eval.models import Paper

# --------------------------------------------------------------------------------------------------
# What the paper body contains (computed once per body)

_BODY_PATTERNS = {
    "theory": r"\b(?:Theorem|Lemma|Proposition|Corollary)\s+\d|\bProof\b[ .:of]",
    "human_strong": r"crowd ?workers?|Mechanical Turk|\bMTurk\b|\bProlific\b|user stud(?:y|ies)"
    r"|human (?:subjects|participants|evaluators|raters|annotators|labell?ers|judges)|informed consent"
    r"|\bIRB\b|interviewees|survey respondents"
    r"|(?:annotators|participants|raters|volunteers) (?:were|are) (?:paid|compensated|recruited)|recruited through",
    "human_weak": r"\bparticipants?\b|\bannotators?\b|\blabell?ers\b|human evaluation|volunteers",
    "url": r"https?://\S+|github\.com\S*|gitlab\.com\S*|huggingface\.co\S*|zenodo\.org\S*|osf\.io\S*"
    r"|anonymous\.4open\S*|codalab\S*",
    # Where the code is, not a claim that it exists ("code is available" alone points nowhere).
    "supplement": r"supplementa(?:ry|l) (?:material|file|code|zip)|in the supplement",
    "stats": r"standard deviations?|standard errors?|\bstd\b|\bs\.e\.m?\b|confidence intervals?|error bars?"
    r"|±|\+/-|p-values?|p\s?[<=]\s?0\.\d|statistically significant|significance test|t-test|wilcoxon"
    r"|bootstrap|percentiles?|quantiles?|interquartile|variance across",
    "hardware": r"\b(?:GPUs?|CPUs?|TPUs?)\b|A100|V100|H100|A6000|\bRTX\b|\bTesla\b|TITAN|GeForce|NVIDIA"
    r"|\bXeon\b|\bEPYC\b|Apple M\d|\d+\s*GB (?:of )?(?:RAM|memory)|compute cluster|\d+\s*(?:CPU )?cores\b",
    "time": r"\b\d+(?:\.\d+)?\s*(?:hours?|hrs?|h\b|minutes?|mins?|seconds?|days?)\b|GPU[- ]hours"
    r"|wall[- ]?clock|running time|run ?time|training time",
    "licence_name": r"\bMIT\b|Apache|CC[- ]?BY|CC0|Creative Commons|\bL?A?GPL|\bBSD\b|\bMPL\b"
    r"|OpenRAIL|public domain|Llama (?:2 )?(?:Community )?License|ODC-?BY|ODbL",
    "licence_word": r"licen[cs]e|terms of (?:use|service)",
    "limitations": r"\blimitations?\b|shortcomings?|fails? (?:when|to)|future work",
    "impacts": r"societal impacts?|broader impacts?|social impacts?|negative impacts?|potential impacts?"
    r"|impact statement|misuse|potential harms?|privacy risks?"
    r"|ethical (?:considerations?|implications?|concerns?)|dual[- ]use",
    "safeguards": r"safeguards?|responsible (?:release|use)|usage guidelines|access (?:restrictions?|control)"
    r"|gated|content filter|safety filter",
    "irb": r"\bIRB\b|institutional\s+review\s+board|ethics\s+(?:committee|board|approval|review)"
    r"|ethical approval|exempt(?:ion)? (?:from|status)",
    # Specific evidence: a generic word ("Theorem", "GPU", "std" once) in an ML paper proves nothing.
    "theorem_numbered": r"\b(?:Theorem|Lemma|Proposition|Corollary)\s+[A-Z]?\d",
    "proof": r"\bProof\b|\bproofs? (?:of|in|are|is)\b",
    # LaTeX keeps math as written: "$0.3 \\pm 0.1$" is a ±, and "SEM" a standard error of the mean.
    "stats_strong": r"±|\+/-|\\pm\b|\bSEM\b|standard deviations?|standard errors?|confidence intervals?|error bars?"
    r"|\bstd\b"
    r"|\bs\.e\.m?\b|p-values?|statistically significant|t-tests?|wilcoxon|\b9[05]\s?% CI"
    r"|\d+(?:st|nd|rd|th) (?:and \d+(?:st|nd|rd|th) )?percentiles?|interquartile|quantile (?:bands?|ranges?)"
    r"|(?:over|across|averaged over) (?:\d+|three|five|ten) (?:random |independent |different )?"
    r"(?:seeds|runs|trials|repetitions)",
    "hardware_specific": r"A100|V100|H100|H200|B200|A6000|\bA10G?\b|\bT4\b|\bMI\d{3}X?\b"
    r"|\bA40\b|\bL40S?\b|\bRTX\b|TITAN|GeForce|NVIDIA|\bXeon\b|\bEPYC\b"
    r"|Apple M\d|TPU ?v\d|\b\d+\s*(?:x\s*)?(?:GPUs?|CPUs?|TPUs?|cores)\b"
    r"|\d+\s*GB (?:of )?(?:GPU |CPU )?(?:RAM|memory|VRAM)"
    r"|(?:GPU|CPU|TPU)[- ]hours|compute cluster|\bcluster\b|\blaptop\b",
    "experiments": r"\bexperiments?\b|\bexperimental\b|\bwe evaluate\b|\bbenchmarks?\b",
    "tables": r"\bTable\s+\d",
    "figures": r"\bFig(?:ure|\.)\s*\d",
    "details": r"hyper-?parameters?|learning rate|batch size|optimizer|\bAdam\b|\bSGD\b|epochs?|train(?:ing)?/"
    r"|data splits?|train(?:ing)?,? (?:validation|test)|random seeds?",
    "assets_used": r"\bdatasets?\b|pre-?trained|checkpoints?|\bbenchmarks?\b",
    "new_assets": r"we (?:release|introduce|present|publish) (?:a |an |the |our )?(?:new |novel )?"
    r"(?:dataset|benchmark|code|model|library|toolkit)|(?:code|data|dataset) (?:is|are|will be) (?:publicly )?"
    r"(?:available|released)",
    "llm": r"\bLLMs?\b|large language models?|\bGPT-?\d|ChatGPT|\bClaude\b|\bLlama\b|\bGemini\b",
    # A printed bibliography, a numbered citation, or a LaTeX \\cite as the body shows it: "[vaswani2017,
    # he:2016]", keys of letters and a year (the parser renders \\cite{keys} so; a .bib alone prints nothing).
    "references": r"\bReferences\b|\bBibliography\b|\[\d+(?:[,–-]\s*\d+)*\]|et al\."
    r"|\[[A-Za-z][\w:./+-]*?(?:19|20)\d\d[\w:./+-]*(?:,\s*[A-Za-z][\w:./+-]*)*\]",
    # The words of a question's guidelines and their common synonyms: weaker than the facts above (no
    # support by themselves), but a body or justification that uses them does not lack the topic, so
    # their absence, not the absence of the strong facts, is what refutes a Yes.
    "stats_terms": r"variabilit\w*|\bsigma\b|σ|histograms?|box ?plots?|violin plots?|\bspread\b|\branges? of\b"
    r"|min(?:imum)?\s*(?:and|/|-)\s*max(?:imum)?|distributions? of (?:the )?(?:results|scores|errors|runs|values)"
    r"|random (?:seeds?|initiali[sz]ations?)|(?:different|multiple|several|independent|repeated) (?:seeds|runs|trials)"
    r"|bootstrap\w*|percentiles?|quantiles?|variances?|significan\w*|uncertaint\w*|\bmedian\b",
    # Devices named in passing ("GPU kernels") are no compute report: only a device put to use counts.
    "compute_terms": r"hardware|compute (?:budget|resources|time|cost)|computational (?:cost|budget|resources)"
    r"|wall[- ]?clock|run ?times?|(?:training|inference) times?|FLOPs|\bRAM\b|workstation|\bcores\b|Intel|\bAMD\b"
    r"|Ryzen|GPU[- ]?(?:memory|hours?)|on (?:a|one|two|four|eight|\d+) (?:single )?(?:GPUs?|CPUs?|TPUs?)\b",
    # A licence question asks for the licence or terms themselves: a credit or a citation is the
    # credits question's matter and does not count here.
    "licence_terms": r"licen[cs]\w*|terms of (?:use|service)|copyright|open[- ]source|publicly (?:available|released)"
    r"|permissive|proprietary|usage rights|redistribut\w*",
    "code_terms": r"github|gitlab|repositor(?:y|ies)|open[- ]source|(?:code|data|datasets?) (?:is|are) (?:publicly )?"
    r"available|supplementary|anonymi[sz]ed|hugging ?face|zenodo",
}
_CASED = {"licence_name", "theorem_numbered", "proof"}
# Whole words only: "gated" is a safeguard, "propagated" is not; "MIT" is a licence, "MITx" is not.
_BODY_RX = {key: re.compile(rf"(?<![A-Za-z])(?:{rx})", 0 if key in _CASED else re.I)
            for key, rx in _BODY_PATTERNS.items()}

# Parts of a body that are no evidence for a claim about the work: the acknowledgements (a funder's
# "(MIT)" is no licence), the bibliography, and prompt templates or code listings (the word "Proof"
# in a prompt proves nothing).
_HEADING = r"^[ \t]*(?:(?:\d+(?:\.\d+)*|[A-Z](?:\.\d+)*)\.?[ \t]+[A-Z][A-Za-z]|Appendi(?:x|ces)\b|References\b)"
_NOT_EVIDENCE = [
    re.compile(rf"(?m)^[ \t]*(?:\d+\.?[ \t]+)?(?i:acknowledge?ments?|funding)\b.*$[\s\S]{{0,4000}}?(?={_HEADING}|\Z)"),
    re.compile(r"(?m)^[ \t]*(?:References|Bibliography)[ \t]*$[\s\S]*?(?=^[ \t]*(?:[A-Z](?:\.\d+)?\.?[ \t]+[A-Z][a-z]"
               r"|Appendi(?:x|ces)\b)|\Z)"),
    re.compile(r"(?m)^[ \t]*(?i:(?:(?:system|user|assistant|judge|evaluation)[ \t]+)?prompt(?:[ \t]+template)?)\b"
               r"[^\n]{0,60}:[ \t]*$[\s\S]*?(?=\n[ \t]*\n|\Z)"),
    re.compile(r"(?m)^[ \t]*(?:def |class |import |from \S+ import |return |for \w+ in |#include|\w+\s*=\s*\w+\().*$"),
]


def evidence_spans(body: str) -> list[tuple[int, int]]:
    """Where the parts that are no evidence for a claim (see ``_NOT_EVIDENCE``) are in ``body``."""
    return sorted(m.span() for rx in _NOT_EVIDENCE for m in rx.finditer(body))


def evidence_text(body: str) -> str:
    """``body`` without the parts that are no evidence for a claim (see ``_NOT_EVIDENCE``)."""
    for rx in _NOT_EVIDENCE:
        body = rx.sub(" ", body)
    return body

# Prompt injection aimed at an automated assessor: a strong sign the answer tries to game the judge.
_INJECTION = re.compile(
    r"ignore (?:all |any |the )?(?:previous|prior|above|preceding) (?:instructions|prompts?)"
    r"|disregard (?:all |the )?(?:previous|prior|above) |you are (?:an? )?(?:AI|LLM|language model|reviewer)"
    r" (?:assistant|reviewer)?.{0,40}(?:must|should) (?:score|rate|accept)|(?:give|assign|award) (?:this|the|a)"
    r" (?:paper|answer|question|item)? ?(?:a )?(?:full |perfect |maximum )?(?:score|rating) of\b"
    r"|score(?:d)? (?:it |this )?(?:as )?(?:1|1\.0|one) regardless|as an ai language model"
    r"|mark (?:all|every|each) (?:of the )?(?:checklist )?(?:answers?|items?|questions?)"
    r" as (?:correct|consistent|valid)"
    r"|note to the (?:reviewing |automated |ai )?(?:assistant|llm|language model|ai reviewer)",
    re.I,
)


def addresses_assessor(text: str) -> str | None:
    """The passage of ``text`` addressed to an automated reviewer (prompt injection), if any, read on
    the normalised text (zero-width characters, soft hyphens and fullwidth letters do not hide it)."""
    from checklist_eval.assessors.evidence.normalise import signal_text

    text = signal_text(text[:MAX_SCAN_CHARS])
    m = _INJECTION.search(text)
    return _snippet(text, m) if m else None


@dataclass(frozen=True)
class BodyFacts:
    hits: dict[str, str]  # key -> first matching snippet, only for keys that matched
    counts: dict[str, int]

    def has(self, key: str) -> bool:
        return key in self.hits

    def quote(self, key: str) -> str:
        return self.hits[key]


def _snippet(text: str, m: re.Match[str], width: int = 40) -> str:
    start, end = max(0, m.start() - width), min(len(text), m.end() + width)
    return "…" + " ".join(text[start:end].split()) + "…"


# The body is scanned up to this many characters. A real paper's text is well under 1 MB (and the LLM
# assessor sees at most its context budget); without a cap a hostile 20 MB single-line .tex kept the
# ~20 body patterns busy for about a minute per paper (scripts/drill_* and tests/test_hostile.py).
MAX_SCAN_CHARS = 2_000_000


# Facts whose usual place is one the other facts skip: an IRB approval is often stated in the
# acknowledgements ("approved by the CMU Institutional Review Board"), references in the bibliography.
_READ_WHOLE = {"irb", "references"}


@lru_cache(maxsize=16)
def body_facts(body: str) -> BodyFacts:
    """Which kinds of content the body contains; cached because every item of a paper asks again."""
    whole = body[:MAX_SCAN_CHARS]
    body = evidence_text(whole)
    hits: dict[str, str] = {}
    counts: dict[str, int] = {}
    for key, rx in _BODY_RX.items():
        text = whole if key in _READ_WHOLE else body
        matches = list(rx.finditer(text))
        if matches:
            hits[key] = _snippet(text, matches[0])
            counts[key] = len(matches)
    inj = addresses_assessor(body)
    if inj:
        hits["injection"] = inj
        counts["injection"] = 1
    return BodyFacts(hits, counts)


def _search(key: str, text: str) -> re.Match[str] | None:
    return _BODY_RX[key].search(text or "")


# --------------------------------------------------------------------------------------------------
# Pointers in a justification ("Section 4.2", "Appendix B", "Table 3", "lines 120-130")

_NUM = r"(?:[A-Z]?\d+(?:\.\d+)*|[A-Z](?:\.\d+)*)(?![\w])"
_LIST = rf"{_NUM}(?:\s*(?:,|and|&|or|-|–|to)\s*{_NUM})*"
_SECTION_REF = re.compile(rf"(?:\bSections?|\bSecs?\.?|§§?)\s*({_LIST})")
_APPENDIX_REF = re.compile(rf"\bAppendi(?:x|ces)\s*(?:[Ss]ections?\s*)?({_LIST})")
_FLOAT_REF = re.compile(r"\b(Tables?|Tab\.|Figures?|Figs?\.)\s*(\d+(?:\s*(?:,|and|&|-|–)\s*\d+)*)", re.I)
_LINE_REF = re.compile(r"\b(?:lines?|l\.|ll\.)\s*\d+", re.I)
_NAMED_REF = re.compile(
    r"\b(?:the |our |a |in )?(?:appendix|supplement(?:ary|al)?(?: material)?|introduction|abstract"
    r"|conclusions?|discussion|limitations?(?: section)?|experiments? section|related work|methods? section"
    r"|broader impacts?(?: section)?|\w+ section)\b",
    re.I,
)


@dataclass(frozen=True)
class Pointer:
    kind: str  # "section" | "appendix" | "table" | "figure"
    label: str  # "4.2", "B", "3"

    @property
    def text(self) -> str:
        return f"{self.kind.capitalize()} {self.label}"


def _expand(listing: str) -> list[str]:
    """'4, 5 and 6.1' -> ['4', '5', '6.1']; '2-4' -> ['2', '3', '4'] for small integer ranges."""
    parts = re.split(r"\s*(?:,|and|&|or)\s*", listing.strip())
    labels: list[str] = []
    for part in parts:
        rng = re.fullmatch(r"(\d+)\s*(?:-|–|to)\s*(\d+)", part)
        if rng and int(rng.group(1)) < int(rng.group(2)) <= int(rng.group(1)) + 20:
            labels += [str(n) for n in range(int(rng.group(1)), int(rng.group(2)) + 1)]
        else:
            labels += [p for p in re.split(r"\s*(?:-|–|to)\s*", part) if p]
    return labels


def pointers_in(text: str) -> list[Pointer]:
    """The numbered places a justification points at, in order, without duplicates."""
    found: list[Pointer] = []
    for m in _SECTION_REF.finditer(text):
        for label in _expand(m.group(1)):
            kind = "appendix" if label[0].isalpha() else "section"
            found.append(Pointer(kind, label))
    for m in _APPENDIX_REF.finditer(text):
        found += [Pointer("appendix", label) for label in _expand(m.group(1))]
    for m in _FLOAT_REF.finditer(text):
        kind = "table" if m.group(1).lower().startswith("tab") else "figure"
        found += [Pointer(kind, label) for label in _expand(m.group(2))]
    return list(dict.fromkeys(found))


def has_vague_pointer(text: str) -> bool:
    """A pointer without a number ("see the appendix", "line 120", "Limitations section")."""
    return bool(_LINE_REF.search(text) or _NAMED_REF.search(text))


@dataclass(frozen=True)
class Layout:
    """The numbered places a reader can see in the paper, from its sections and anchors."""

    sections: frozenset[str]  # "1", "4.2"
    appendices: frozenset[str]  # "A", "B.1"
    tables: frozenset[str]
    figures: frozenset[str]

    def exists(self, p: Pointer, body: str) -> bool | None:
        """True/False when the paper lets us tell, None when it cannot be verified."""
        if p.kind in ("table", "figure"):
            known = self.tables if p.kind == "table" else self.figures
            return p.label in known or p.label in _mentions(body).words_after[p.kind]
        known = self.sections if p.kind == "section" else self.appendices
        if p.label in known:
            return True
        if len(known) < 2:
            return None  # the parser found too few headings to judge a place absent
        if _mentions(body).mentions(p):
            return True
        top = p.label.split(".")[0]
        if top in known:
            return None  # subsection headings are often not recovered, so do not accuse
        return False

    @cached_property
    def _summary(self) -> str:
        def ranges(labels: frozenset[str]) -> str:
            tops = sorted({lab.split(".")[0] for lab in labels}, key=lambda s: (len(s), s))
            if not tops:
                return ""
            return f"{tops[0]}-{tops[-1]}" if len(tops) > 1 else tops[0]

        parts = [ranges(self.sections), ranges(self.appendices)]
        return ", ".join(p for p in parts if p) or "none found"

    def summary(self) -> str:
        """The section and appendix ranges ("1-7, A-C"); said once per missing place cited, so kept."""
        return self._summary


# What a body says about its own places, read in one pass per body: a justification may cite thousands
# of places, and searching the body once per place cost minutes on a 3 MB body.
_LABEL = r"[A-Z]?\d+(?:\.\d+)*|[A-Z](?:\.\d+)*"
# A heading line for a label: "3.1 Method", "A Proofs", or a page number before it ("12 3.1 Method").
_HEADING_LINE = re.compile(rf"(?m)^[ \t]*(?:\d+[ \t]+)?({_LABEL})\.?[ \t]+[A-Z][A-Za-z]")
# The text after a word that refers to a place (captured ahead, so "Section Section 3" is read twice).
_AFTER_WORD = {
    "section": re.compile(r"(?:Sections?|Secs?\.|§)\s*(?=([\w.]*))"),
    "appendix": re.compile(r"(?:Appendix|Section)\s*(?=([\w.]*))"),
    "table": re.compile(r"\bTab(?:le|\.)\s*(?=(\w*))"),
    "figure": re.compile(r"\bFig(?:ure|\.)\s*(?=(\w*))"),
}
_PREFIXES_KEPT = 40  # labels up to this long are looked up in a set; longer ones among the few long runs


def _cut_before_digit(run: str, n: int) -> bool:
    """Does ``run`` go on after its first ``n`` characters as a longer number ("3" in "3.1", "3.12" in
    "3.123")? Then the reference is to that longer place, not to the first ``n`` characters. (Every
    character of a run is [\\w.]; a regex \\d is a decimal digit.)"""
    return len(run) > n + 1 and run[n + 1].isdecimal()


@dataclass(frozen=True)
class Mentions:
    """The labels a body gives a heading line, and what follows each word that refers to a place."""

    headings: frozenset[str]
    refs: dict[str, frozenset[str]]  # kind -> labels referred to, up to _PREFIXES_KEPT characters
    long_runs: dict[str, frozenset[str]]  # kind -> the runs after a reference word longer than that
    words_after: dict[str, frozenset[str]]  # table/figure -> the word right after "Table"/"Figure"

    def mentions(self, p: Pointer) -> bool:
        """A heading line for the label, or the paper's own cross-reference to it: heading detection in
        PDFs misses some headings, and a paper that refers to its own Section 3.1 has one."""
        if p.label in self.headings:
            return True
        if len(p.label) <= _PREFIXES_KEPT:
            return p.label in self.refs[p.kind]
        return any(run.startswith(p.label) and not _cut_before_digit(run, len(p.label))
                   for run in self.long_runs[p.kind])


_LABEL_SHAPE = re.compile(rf"(?:{_LABEL})")


def _referred(runs: set[str]) -> frozenset[str]:
    """Every label a run after a reference word names: each start of the run shaped like a label (the
    only thing a pointer's label can be) and not cut before a digit. A few per run, so the index stays
    small beside the body however the body repeats "Section"."""
    out = set()
    for run in runs:
        for n in range(1, min(len(run), _PREFIXES_KEPT) + 1):
            if not _cut_before_digit(run, n) and _LABEL_SHAPE.fullmatch(run, 0, n):
                out.add(run[:n])
    return frozenset(out)


@lru_cache(maxsize=16)
def _mentions(body: str) -> Mentions:
    runs = {kind: {m.group(1) for m in rx.finditer(body)} for kind, rx in _AFTER_WORD.items()}
    places = ("section", "appendix")
    return Mentions(
        headings=frozenset(m.group(1) for m in _HEADING_LINE.finditer(body)),
        refs={kind: _referred(runs[kind]) for kind in places},
        long_runs={kind: frozenset(r for r in runs[kind] if len(r) > _PREFIXES_KEPT) for kind in places},
        words_after={kind: frozenset(runs[kind]) for kind in ("table", "figure")},
    )


_ANCHOR = re.compile(r"^(Section|Appendix|Table|Figure)\s+([A-Z]?\d+(?:\.\d+)*|[A-Z](?:\.\d+)*)$")


def layout_of(paper: Paper) -> Layout:
    """The paper's numbered places; cached (like ``body_facts``) because every item of a paper asks."""
    return _layout(tuple(s.number for s in paper.sections if s.number), tuple(paper.anchors))


@lru_cache(maxsize=16)
def _layout(numbers: tuple[str, ...], anchors: tuple[str, ...]) -> Layout:
    sections: set[str] = set()
    appendices: set[str] = set()
    tables: set[str] = set()
    figures: set[str] = set()
    for number in numbers:
        (appendices if number[0].isalpha() else sections).add(number)
    for a in anchors:
        m = _ANCHOR.match(a.strip())
        if not m:
            continue
        kind, label = m.groups()
        if kind == "Table":
            tables.add(label)
        elif kind == "Figure":
            figures.add(label)
        elif label[0].isalpha():
            appendices.add(label)
        else:
            sections.add(label)
    return Layout(frozenset(sections), frozenset(appendices), frozenset(tables), frozenset(figures))




# --------------------------------------------------------------------------------------------------
# Places a justification names by their title ("in the section “Discussion and conclusion”")

_PLACE_WORD = r"(?:sections?|subsections?|appendix|appendices|chapter|paragraph|part)"
_OPEN, _CLOSE, _INSIDE = r"[\"“«‘]", r"[\"”»’]", r"([^\"“”«»‘’]{3,80})"
# Only a quote the sentence makes a place of: "the section “X”", "“X” section". A quote alone may be a
# phrase of the paper ("we call it “meta-learning”"), which says nothing about its headings.
_TITLED = re.compile(rf"\b{_PLACE_WORD}\s+(?:of\s+|titled\s+|entitled\s+|called\s+|named\s+)?{_OPEN}{_INSIDE}{_CLOSE}"
                     rf"|{_OPEN}{_INSIDE}{_CLOSE}\s+{_PLACE_WORD}\b", re.I)
MAX_TITLES = 8


def titled_places(text: str) -> list[str]:
    """The titles of the places a justification names in quotes, in order, without duplicates."""
    titles = [(m.group(1) or m.group(2)).strip() for m in _TITLED.finditer(text)]
    return list(dict.fromkeys(t for t in titles if _words(t)))[:MAX_TITLES]


def _words(text: str) -> str:
    """Lower-case words and numbers only: a title matches across case, punctuation, ligatures and line breaks."""
    return " ".join(re.findall(r"[a-z0-9]+", unicodedata.normalize("NFKC", text).lower()))


@lru_cache(maxsize=16)
def _body_words(body: str) -> str:
    return _words(body[:MAX_SCAN_CHARS])


def title_in_paper(paper: Paper, title: str) -> bool | None:
    """Does the paper have a place of that title: the title's words in that order anywhere in the body, or
    all of them in one heading? A word may go on ("Broader Impact" is the heading "Broader Impacts").
    None when the parser found too few headings to call one absent."""
    words = _words(title).split()
    if not words or re.search(r"\b" + r"\w*\s".join(map(re.escape, words)), _body_words(paper.body)):
        return True
    if any(_all_begin(words, _words(s.title or "").split()) for s in paper.sections):
        return True
    return False if len(paper.sections) >= 3 else None


def _all_begin(words: list[str], heading: list[str]) -> bool:
    return all(any(h.startswith(w) for h in heading) for w in words)


# --------------------------------------------------------------------------------------------------
# The text at a place a justification points to

PLACE_CHARS = 12_000  # enough of a section to see what it is about


def place_text(paper: Paper, p: Pointer) -> str | None:
    """The body text at ``p``: a section or appendix from its heading to the next heading, or the
    surroundings of a table's or figure's caption. None when the place cannot be found in the text."""
    body = paper.body
    if p.kind in ("table", "figure"):
        word = "Tab(?:le|\\.)" if p.kind == "table" else "Fig(?:ure|\\.)"
        m = re.search(rf"\b{word}\s*{re.escape(p.label)}\s*[:.]", body) or re.search(
            rf"\b{word}\s*{re.escape(p.label)}\b", body)
        return body[max(0, m.start() - 600) : m.end() + 1200] if m else None
    return section_texts(paper).get(p.label)


def section_texts(paper: Paper) -> dict[str, str]:
    """Every numbered section's text found in the body (label -> text); cached per paper body. At most
    MAX_SECTIONS headings are read, each searched from where the previous one was found, so a hostile
    paper with thousands of headings costs one pass over its body, not one per heading."""
    return _section_texts(paper.body, tuple((s.number, s.title) for s in paper.sections if s.number)[:MAX_SECTIONS])


MAX_SECTIONS = 300


def _heading(number: str, title: str) -> re.Pattern[str]:
    return re.compile(rf"(?m)^\s*{re.escape(number)}\.?\s+{re.escape(' '.join(title.split())[:40])}")


@lru_cache(maxsize=16)
def _section_texts(body: str, numbered: tuple[tuple[str, str], ...]) -> dict[str, str]:
    starts: list[tuple[str, int, int]] = []  # (number, heading start, heading end), in body order
    pos = 0
    for number, title in numbered:
        m = _heading(number, title).search(body, pos)
        if m:
            starts.append((number, m.start(), m.end()))
            pos = m.end()
    out: dict[str, str] = {}
    for i, (number, start, _end) in enumerate(starts):
        # a section runs to the next heading that is not one of its own subsections
        stop = next((s for n, s, _ in starts[i + 1:] if not n.startswith(number + ".")), len(body))
        out.setdefault(number, body[start : min(stop, start + PLACE_CHARS)])
    return out
