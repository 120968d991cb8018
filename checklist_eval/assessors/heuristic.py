"""The offline assessor: deterministic checks of each checklist answer against the paper, no model.

Each check looks at one thing a careful reviewer would look at (is there a justification, does a Yes
point at where the paper shows it, does that place exist, does the body contain what the answer claims
or contradict an NA) and returns a ``Finding``: a shift of the log-odds that the answer is correct, a
review line when it is a problem, and the quote or section it rests on. ``p_correct`` is the logistic
of a prior for the answer type plus the shifts, so more independent evidence moves it further.

Rules are keyed on the question's TOPIC, read from its title (or question text), never on its id, so
they hold for every checklist version (2021 grouped ids "1a".., 2024 "1".."15", 2025/2026 "1".."16").
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from functools import lru_cache

from checklist_eval.assessors.base import HIDDEN_TEXT_NOTE, Assessor
from checklist_eval.models import Answer, Assessment, ChecklistItem, Paper, Provenance, StructuredOutput

RULES_VERSION = "heuristic-rules-1"

# Prior probability that an answer of each type is correct before any evidence is seen. A committed
# Yes or NA is usually right; a No is often an admission the guidelines consider unacceptable.
PRIORS = {Answer.YES: 0.62, Answer.NA: 0.65, Answer.NO: 0.40}
P_MIN, P_MAX = 0.02, 0.98


@dataclass(frozen=True)
class Finding:
    """One check's outcome: ``weight`` shifts the log-odds of correctness (negative = a problem)."""

    weight: float
    note: str
    evidence: str | None = None


# --------------------------------------------------------------------------------------------------
# Question topics

# Titles are matched first (they are short and distinctive); the question text is the fallback, since
# e.g. the reproducibility question mentions "code and data" in passing. Order matters: first match wins.
_TOPICS: list[tuple[str, re.Pattern[str]]] = [
    (topic, re.compile(rx, re.I))
    for topic, rx in [
        ("llm", r"\bLLMs?\b|large language model"),
        ("irb", r"\bIRB\b|institutional review|participant risks|risks incurred by study participants"),
        ("human", r"crowdsourc|human subjects|instructions given to participants|participant compensation"
         r"|hourly wage|consent"),
        ("personal", r"personally identifiable|offensive content"),
        ("theory", r"theor|proofs?\b"),
        ("code", r"open access|code and data|data and code|code, data"),
        ("errorbars", r"error bars?|statistical significance"),
        ("compute", r"compute|computer resources"),
        ("details", r"training details|setting|hyperparameter"),
        ("reproducibility", r"reproduc"),
        ("licenses", r"licen[cs]e"),
        ("credits", r"credit|citing existing assets|cite the creators"),
        ("new_assets", r"new assets|documentation"),
        ("safeguards", r"safeguard"),
        ("ethics", r"code of ethics|ethics review|ethics guidelines"),
        ("impacts", r"societal impact|broader impact|\bimpacts?\b"),
        ("limitations", r"limitation"),
        ("claims", r"claims"),
    ]
]

EXPERIMENTAL = {"reproducibility", "details", "errorbars", "compute", "code"}


def topic_of(item: ChecklistItem) -> str | None:
    """The topic a question is about, from its title, else its question text; None if unknown."""
    for text in (item.title, item.question):
        for topic, rx in _TOPICS:
            if text and rx.search(text):
                return topic
    return None


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
    "irb": r"\bIRB\b|institutional review board|ethics (?:committee|board|approval|review)"
    r"|exempt(?:ion)? (?:from|status)|approved by",
    "experiments": r"\bexperiments?\b|\bexperimental\b|\bwe evaluate\b|\bbenchmarks?\b",
    "tables": r"\bTable\s+\d",
    "details": r"hyper-?parameters?|learning rate|batch size|optimizer|\bAdam\b|\bSGD\b|epochs?|train(?:ing)?/"
    r"|data splits?|train(?:ing)?,? (?:validation|test)|random seeds?",
    "assets_used": r"\bdatasets?\b|pre-?trained|checkpoints?|\bbenchmarks?\b",
    "new_assets": r"we (?:release|introduce|present|publish) (?:a |an |the |our )?(?:new |novel )?"
    r"(?:dataset|benchmark|code|model|library|toolkit)|(?:code|data|dataset) (?:is|are|will be) (?:publicly )?"
    r"(?:available|released)",
    "llm": r"\bLLMs?\b|large language models?|\bGPT-?\d|ChatGPT|\bClaude\b|\bLlama\b|\bGemini\b",
    "references": r"\bReferences\b|\bBibliography\b|\[\d+\]|et al\.",
}
_BODY_RX = {key: re.compile(rx, re.I if key not in {"licence_name"} else 0) for key, rx in _BODY_PATTERNS.items()}

# Prompt injection aimed at an automated assessor: a strong sign the answer tries to game the judge.
_INJECTION = re.compile(
    r"ignore (?:all |any |the )?(?:previous|prior|above|preceding) (?:instructions|prompts?)"
    r"|disregard (?:all |the )?(?:previous|prior|above) |you are (?:an? )?(?:AI|LLM|language model|reviewer)"
    r" (?:assistant|reviewer)?.{0,40}(?:must|should) (?:score|rate|accept)|(?:give|assign|award) (?:this|the|a)"
    r" (?:paper|answer|question|item)? ?(?:a )?(?:full |perfect |maximum )?(?:score|rating) of\b"
    r"|score(?:d)? (?:it |this )?(?:as )?(?:1|1\.0|one) regardless|as an ai language model"
    r"|mark (?:all|every|each) (?:of the )?(?:checklist )?(?:answers?|items?|questions?) as (?:correct|consistent|valid)"
    r"|note to the (?:reviewing |automated |ai )?(?:assistant|llm|language model|ai reviewer)",
    re.I,
)


def addresses_assessor(text: str) -> str | None:
    """The passage of ``text`` addressed to an automated reviewer (prompt injection), if any."""
    text = text[:MAX_SCAN_CHARS]
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


@lru_cache(maxsize=16)
def body_facts(body: str) -> BodyFacts:
    """Which kinds of content the body contains; cached because every item of a paper asks again."""
    body = body[:MAX_SCAN_CHARS]
    hits: dict[str, str] = {}
    counts: dict[str, int] = {}
    for key, rx in _BODY_RX.items():
        matches = list(rx.finditer(body))
        if matches:
            hits[key] = _snippet(body, matches[0])
            counts[key] = len(matches)
    inj = _INJECTION.search(body)
    if inj:
        hits["injection"] = _snippet(body, inj)
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
            if p.label in known:
                return True
            word = "Tab(?:le|\\.)" if p.kind == "table" else "Fig(?:ure|\\.)"
            return bool(re.search(rf"\b{word}\s*{re.escape(p.label)}\b", body))
        known = self.sections if p.kind == "section" else self.appendices
        if len(known) < 2:
            return None  # the parser found too few headings to judge
        if p.label in known or _mentioned_in_body(p, body):
            return True
        top = p.label.split(".")[0]
        if top in known:
            return None  # subsection headings are often not recovered, so do not accuse
        return False

    def summary(self) -> str:
        def ranges(labels: frozenset[str]) -> str:
            tops = sorted({lab.split(".")[0] for lab in labels}, key=lambda s: (len(s), s))
            if not tops:
                return ""
            return f"{tops[0]}-{tops[-1]}" if len(tops) > 1 else tops[0]

        parts = [ranges(self.sections), ranges(self.appendices)]
        return ", ".join(p for p in parts if p) or "none found"


def _mentioned_in_body(p: Pointer, body: str) -> bool:
    """A heading line for the label, or the paper's own cross-reference to it: heading detection in
    PDFs misses some headings, and a paper that refers to its own Section 3.1 has one."""
    label = re.escape(p.label)
    heading = rf"(?m)^[ \t]*(?:\d+[ \t]+)?{label}\.?[ \t]+[A-Z][A-Za-z]"
    word = r"(?:Sections?|Secs?\.|§)" if p.kind == "section" else r"(?:Appendix|Section)"
    return bool(re.search(heading, body) or re.search(rf"{word}\s*{label}(?![\w.]\d)", body))


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
# The checks

_ADMISSION = re.compile(
    r"\b(?:does not|do not|did not|is not|are not|was not|were not|not (?:reported|released|provided|included"
    r"|given|described|discussed|available)|no (?:error bars?|url|code|details?|information)|single run|omit)",
    re.I,
)
_REASON = re.compile(
    r"\b(?:because|since|due to|as (?:the|it|we|this|our|there)|given that|owing to|instead|however|but"
    r"|not (?:applicable|needed|necessary|feasible|possible|relevant|required)|too (?:expensive|costly|large)"
    r"|beyond|out of (?:the )?scope|scope|proprietary|confidential|privacy|upon (?:acceptance|publication)"
    r"|will be (?:released|made)|future work|limited|only|no (?:human|new|theoretical|experiments?))\b",
    re.I,
)
_DENIAL = re.compile(
    r"\b(?:does|do|did) not (?:report|provide|include|discuss|mention|describe|state|release|give)\b"
    r"|\bnot (?:reported|provided|included|discussed|available|mentioned|described)\b|\bno (?:error bars|"
    r"proofs?|code|license|limitations)\b",
    re.I,
)
_BARE = re.compile(r"^\W*(?:yes|no|n/?a|not applicable|todo|none|-+)?\W*$", re.I)


def check_justification(item: ChecklistItem) -> list[Finding]:
    text = (item.justification or "").strip()
    if not text:
        return [Finding(-1.6, "No justification: say where the paper supports the answer, or why not.")]
    if re.search(r"\bTODO\b", text):
        return [Finding(-0.9, "The justification still contains TODO: replace it with the actual reason.")]
    if _BARE.match(text):
        return [Finding(-1.4, f'The justification only repeats the answer ("{text}"): give the reason.')]
    if _INJECTION.search(text):
        return [Finding(-2.5, "The justification addresses the reviewer or assessor instead of the paper.")]
    words = len(text.split())
    # A short NA ("No human subjects.") states the reason well enough; a short Yes or No does not.
    if item.answer is not Answer.NA and words < 5 and not pointers_in(text) and not has_vague_pointer(text):
        return [Finding(-0.4, f'The justification is very short ("{text}"): explain it or point to a section.')]
    return []


def check_pointers(paper: Paper, item: ChecklistItem, layout: Layout) -> list[Finding]:
    """A Yes should point where the paper shows it, and the place must exist."""
    text = item.justification or ""
    pointers = pointers_in(text)
    findings: list[Finding] = []
    status = {p: layout.exists(p, paper.body) for p in pointers}  # True / False / None (unverifiable)
    missing = [p for p in pointers if status[p] is False]
    for p in missing:
        if p.kind in ("section", "appendix"):
            where = f"sections: {layout.summary()}"
        else:
            where = f"no {p.kind} {p.label} in the text"
        findings.append(Finding(-1.5, f"Justification cites {p.text}, which does not exist ({where}).", p.text))
    present = [p for p in pointers if status[p]]
    if item.answer is Answer.YES and not missing:
        if present:
            findings.append(Finding(0.45, "", ", ".join(p.text for p in present[:4])))
        elif pointers or has_vague_pointer(text):
            findings.append(Finding(0.15, "", "justification points to a place in the paper"))
        else:
            findings.append(Finding(-0.6, "Yes without a pointer: name the section, table or appendix that shows it."))
    return findings


def _fact(facts: BodyFacts, key: str, weight: float, note: str = "") -> Finding:
    return Finding(weight, note, facts.quote(key) if facts.has(key) else None)


def check_na(topic: str | None, facts: BodyFacts) -> list[Finding]:
    """NA claims the question does not apply; the body can contradict that."""
    if topic == "claims":
        return [Finding(-1.6, "NA for the claims question: every paper makes claims; answer Yes and point to them.")]
    if topic == "limitations":
        if facts.has("limitations"):
            return [_fact(facts, "limitations", -1.0, "NA for limitations, yet the paper discusses them: answer Yes.")]
        return [Finding(-0.7, "NA for limitations: almost every work has some; discuss them and answer Yes.")]
    if topic == "theory":
        if facts.has("theory"):
            return [_fact(facts, "theory", -1.4, "NA for theory while the paper states theorems/lemmas/proofs.")]
        return [Finding(0.6, "", "no theorem, lemma or proof in the body")]
    if topic in ("human", "irb"):
        if facts.counts.get("human_strong", 0) >= 2:  # one stray mention is often a citation
            return [_fact(facts, "human_strong", -1.0, "NA for human subjects while the body mentions them.")]
        if facts.counts.get("human_weak", 0) >= 3:
            return [_fact(facts, "human_weak", -0.4, "NA for human subjects, but the body mentions participants"
                          " or annotators: check whether they are research subjects.")]
        return [Finding(0.6, "", "no participants, crowdworkers or user study in the body")]
    if topic in EXPERIMENTAL:
        if facts.counts.get("experiments", 0) >= 3 or facts.has("tables"):
            return [_fact(facts, "experiments", -1.0, "NA for an experimental question while the paper reports"
                          " experiments.")]
        return [Finding(0.5, "", "no experiments found in the body")]
    if topic == "new_assets" and facts.has("new_assets"):
        return [_fact(facts, "new_assets", -0.6, "NA for new assets while the paper releases code or data.")]
    if topic in ("licenses", "credits") and facts.counts.get("assets_used", 0) >= 3:
        return [_fact(facts, "assets_used", -0.4, "NA for existing assets while the paper uses datasets or"
                      " pretrained models: credit them and state their licences.")]
    if topic == "llm" and facts.counts.get("llm", 0) >= 5:
        return [_fact(facts, "llm", -0.5, "NA for LLM usage while the paper mentions LLMs throughout.")]
    if topic == "impacts":
        return [Finding(-0.2, "NA for societal impact: say why the work has none (e.g. foundational research).")]
    return [Finding(0.3, "", "nothing in the body contradicts NA")]


def check_yes(topic: str | None, facts: BodyFacts, item: ChecklistItem) -> list[Finding]:
    """A Yes claims the paper contains something; look for it in the body and justification."""
    just = item.justification or ""
    out: list[Finding] = []
    if _DENIAL.search(just):
        out.append(Finding(-0.9, "The answer is Yes but the justification says the paper does not do it."))

    def need(key: str, good: float, bad: float, missing_note: str, also_just: bool = True) -> None:
        m = _search(key, just) if also_just else None
        if m:
            out.append(Finding(good, "", _snippet(just, m, 20)))
        elif facts.has(key):
            out.append(_fact(facts, key, good))
        else:
            out.append(Finding(bad, missing_note))

    if topic == "theory":
        need("theory", 0.4, -0.8, "Yes for theory, but no theorem, lemma or proof found in the body (NA?).", False)
    elif topic == "code":
        url = _search("url", just)
        if url or facts.has("url"):
            out.append(Finding(0.4, "", url.group(0) if url else facts.quote("url")))
        else:
            need("supplement", 0.2, -1.0, "Code/data claimed available, but no URL, repository or supplement is"
                 " mentioned: give the link.")
    elif topic == "errorbars":
        # Body only: a justification saying "error bars are reported" is the claim, not the evidence.
        need("stats", 0.5, -1.0, "Error bars/significance claimed, but the body has no std, standard error,"
             " confidence interval, error bar or ±.", False)
    elif topic == "compute":
        # Body only, as for error bars: the justification saying "we report the GPU" is the claim itself.
        hw = facts.has("hardware")
        tm = facts.has("time")
        if hw and tm:
            out.append(_fact(facts, "hardware", 0.5))
        elif hw or tm:
            lacking = "execution time" if hw else "hardware (GPU/CPU type, memory)"
            out.append(Finding(-0.3, f"Compute resources are incomplete: no {lacking} mentioned."))
        else:
            out.append(Finding(-1.2, "Compute claimed, but no hardware (GPU/CPU/TPU) or run time is mentioned."))
    elif topic == "licenses":
        need("licence_name", 0.5, -0.9, "Licence claims name no licence (MIT, Apache-2.0, CC-BY, GPL, BSD...):"
             " name each asset's licence.")
    elif topic == "credits":
        need("references", 0.2, -0.6, "Credits claimed, but the paper has no references.", False)
    elif topic == "human":
        need("human_strong", 0.3, -0.6, "Yes for human subjects, but the body mentions no participants or"
             " crowdworkers (NA?).", False)
    elif topic == "irb":
        need("irb", 0.5, -1.0, "IRB claimed, but the body mentions no IRB, ethics board or exemption.")
    elif topic == "limitations":
        need("limitations", 0.4, -0.7, "Limitations claimed, but the body never discusses limitations.", False)
    elif topic == "impacts":
        need("impacts", 0.4, -1.0, "Societal impacts claimed, but the body has no impact, misuse or harm"
             " discussion.", False)
    elif topic == "safeguards":
        need("safeguards", 0.3, -0.8, "Safeguards claimed, but the body describes none.", False)
    elif topic == "new_assets":
        if facts.has("url") or _search("url", just):
            out.append(Finding(0.3, "", facts.hits.get("url", "URL in justification")))
        else:
            out.append(Finding(-0.6, "New assets claimed, but no URL or release location is given."))
    elif topic == "llm":
        need("llm", 0.3, -0.6, "LLM usage declared, but the body never mentions an LLM.", False)
    elif topic in ("details", "reproducibility"):
        need("details", 0.3, -0.6, "No hyperparameters, optimizer, data splits or seeds found in the body.", False)
    return out


def check_no(topic: str | None, facts: BodyFacts, item: ChecklistItem) -> list[Finding]:
    """A No must say why, is unacceptable for some questions, and may be contradicted by the body."""
    just = item.justification or ""
    out: list[Finding] = []
    if _REASON.search(just):
        out.append(Finding(0.3, "", "justification gives a reason"))
    elif _ADMISSION.search(just):
        # An honest admission ("the paper does not report ...") is a valid No; a reason would be better.
        out.append(Finding(-0.2, "The No admits the gap; say why it is not done (cost, privacy, scope...)."))
    else:
        out.append(Finding(-0.8, "A No needs a reason (cost, privacy, scope...): explain why it is not done."))
    if topic in ("claims", "limitations"):
        out.append(Finding(-1.5, f"No for {topic} is not acceptable for a NeurIPS paper: address it and answer Yes."))
    elif topic == "ethics":
        out.append(Finding(-1.0, "No for the Code of Ethics: explain the deviation or fix it."))
    elif topic == "theory" and facts.has("theory"):
        out.append(_fact(facts, "theory", -1.0, "No for theory while the paper has theorems: give complete proofs."))
    contradictions = {
        "compute": ("hardware", "the paper does mention hardware"),
        "errorbars": ("stats", "the paper does report variability/significance"),
        "code": ("url", "the paper gives a URL"),
        "limitations": ("limitations", "the paper does discuss limitations"),
        "irb": ("irb", "the paper does mention an ethics review or exemption"),
    }
    if topic in contradictions:
        key, what = contradictions[topic]
        if facts.has(key):
            out.append(_fact(facts, key, -0.5, f"No, yet {what}: answer Yes and point to it."))
        else:
            # The body indeed lacks what the question asks for: the No is consistent with the paper.
            out.append(Finding(0.8, "", f"the body has no {key} mention, consistent with No"))
    return out


# --------------------------------------------------------------------------------------------------
# The assessor


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def combine(answer: Answer, findings: list[Finding]) -> float:
    """Prior for the answer type plus the findings' log-odds shifts, clipped to [P_MIN, P_MAX]."""
    z = _logit(PRIORS[answer]) + sum(f.weight for f in findings)
    return min(P_MAX, max(P_MIN, 1 / (1 + math.exp(-z))))


def findings_for(paper: Paper, item: ChecklistItem) -> list[Finding]:
    facts = body_facts(paper.body)
    topic = topic_of(item)
    findings = check_justification(item)
    findings += check_pointers(paper, item, layout_of(paper))
    if item.answer is Answer.NA:
        findings += check_na(topic, facts)
    elif item.answer is Answer.YES:
        findings += check_yes(topic, facts, item)
    elif item.answer is Answer.NO:
        findings += check_no(topic, facts, item)
    return findings + paper_level_findings(paper, facts)


def paper_level_findings(paper: Paper, facts: BodyFacts) -> list[Finding]:
    """Signs of an attempt to steer the judge. They say nothing about one answer's truth, so they carry
    no weight in its verdict (an honest answer in a manipulated paper stays correct); they are repeated
    at the end of every item's review so an author cannot miss them."""
    out = []
    if facts.has("injection"):
        out.append(_fact(facts, "injection", 0.0, "The paper contains text addressed to an automated"
                         " reviewer: remove it."))
    if paper.hidden_text or any("hidden" in w.lower() for w in paper.warnings):
        out.append(Finding(0.0, HIDDEN_TEXT_NOTE))
    return out


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
        p = combine(item.answer, findings)
        # Stable sort: the item's own problems, worst first, then the paper-level notes (weight 0).
        problems = sorted((f for f in findings if f.weight <= 0 and f.note), key=lambda f: f.weight)
        review = "\n".join(f"- {f.note}" for f in problems) or "- No problems found by the offline checks."
        evidence = [f.evidence for f in findings if f.evidence and f.weight > 0]
        evidence += [f.evidence for f in problems if f.evidence]
        return Assessment(
            question_id=item.id,
            answer=item.answer,
            correct=p >= 0.5,
            p_correct=round(p, 4),
            review=review,
            evidence=list(dict.fromkeys(evidence))[:6],
            provenance=Provenance(
                assessor=self.name,
                model=None,
                prompt_version=RULES_VERSION,
                strategy=StructuredOutput.NONE,
                latency_s=time.perf_counter() - started,
            ),
        )
