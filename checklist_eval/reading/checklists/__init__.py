"""Checklist versions as data, and the two questions every parser asks of them.

Each version is one JSON file next to this module (``neurips-2021.json`` ...), holding a
:class:`~checklist_eval.models.ChecklistSpec`. The question texts are the official ones; the code only
knows how to load them, how to tell which version a checklist is (:func:`detect`) and which question a
heading or question line is about (:func:`match_question`).

Matching is by meaning, never by position: authors reorder, shorten and retitle questions, delete
some, or paste a question with curly quotes. Both functions take plain text or LaTeX source, so the PDF
parser and the LaTeX parser share them.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

from pydantic import ValidationError

from checklist_eval.errors import InputError
from checklist_eval.fsutil import loads_json
from checklist_eval.models import ChecklistSpec

_DATA_DIR = Path(__file__).resolve().parent
DEFAULT_ID = "neurips-2025"


def available() -> list[str]:
    """Ids of the bundled checklist versions, oldest first."""
    return sorted(p.stem for p in _DATA_DIR.glob("*.json"))


@lru_cache(maxsize=None)
def load(id: str) -> ChecklistSpec:  # noqa: A002 - "id" is the public keyword name
    """The bundled checklist version ``id`` (e.g. ``"neurips-2025"``)."""
    path = _DATA_DIR / f"{id}.json"
    if id not in available():
        raise InputError(
            None, f"unknown checklist {id!r}; available: {', '.join(available())}"
        )
    return _parse_spec(path, path.read_text(encoding="utf-8"))


MAX_SPEC_BYTES = 1024 * 1024


def load_file(path: str | Path) -> ChecklistSpec:
    """A user's own question set: a JSON object shaped like the bundled files."""
    from checklist_eval.reading.sources import read_regular

    path = Path(path)
    if not path.exists():
        raise InputError(path, "question-set file not found")
    try:
        # A FIFO or /dev/zero named as the question set is refused unread; a real one is small.
        text = read_regular(path, MAX_SPEC_BYTES, "question-set file").decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(path, f"cannot read question-set file: {err}") from None
    return _parse_spec(path, text)


def _parse_spec(path: Path, text: str) -> ChecklistSpec:
    try:
        data = loads_json(text)
    except json.JSONDecodeError as err:
        raise InputError(path, f"not valid JSON: {err.msg} at line {err.lineno}") from None
    if not isinstance(data, dict):
        raise InputError(path, "a question set must be a JSON object with id, name and questions")
    try:
        spec = ChecklistSpec.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        raise InputError(path, f"invalid question set at {where}: {first['msg']}") from None
    if not spec.questions:
        raise InputError(path, "question set has no questions")
    ids = spec.ids
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise InputError(path, f"question set repeats question ids {', '.join(duplicates)}")
    if any(not q.id.strip() or not (q.title.strip() or q.question.strip()) for q in spec.questions):
        raise InputError(path, "every question needs a non-empty id and a title or question text")
    return spec


# --- matching by meaning ---------------------------------------------------------------------------

# Words that carry no meaning for telling questions apart; the idf weights handle the rest.
_STOPWORDS = frozenset(
    """a an and are as at be by do does for from have if in is it its of on or that the this to was
    were with you your did any all item question answer justification guidelines""".split()
)
_LATEX_MACRO = re.compile(r"\\[a-zA-Z@]+\*?")
_WORD = re.compile(r"[a-z0-9]+")
_FOLD = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\ufb01": "fi",
        "\ufb02": "fl",
        "\ufb00": "ff",
    }
)


@lru_cache(maxsize=8192)
def _stem(word: str) -> str:
    # A crude prefix stem is enough here: it folds "approvals"/"approval", "limitations"/"limitation",
    # "discuss"/"discussed" without a stemming library, and questions differ in content words anyway.
    if word.isdigit():
        return word
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:7]


def tokens(text: str) -> list[str]:
    """Meaningful word stems of ``text`` (LaTeX macro names and stopwords dropped)."""
    text = _LATEX_MACRO.sub(" ", text.translate(_FOLD)).lower()
    text = text.replace("'s", "")
    return [_stem(w) for w in _WORD.findall(text) if w not in _STOPWORDS and len(w) > 1]


class _Index:
    """Per-spec idf-weighted vocabularies of each question's title and question text."""

    def __init__(self, spec: ChecklistSpec):
        self.ids = spec.ids
        self.vocab = [set(tokens(q.title)) | set(tokens(q.question)) for q in spec.questions]
        self.titles = [set(tokens(q.title)) for q in spec.questions]
        n = len(self.vocab)
        df: dict[str, int] = {}
        for vocab in self.vocab:
            for tok in vocab:
                df[tok] = df.get(tok, 0) + 1
        self.idf = {tok: math.log((n + 1) / d) for tok, d in df.items()}
        # A word no question uses is strong evidence the text is about something else.
        self.unknown_weight = math.log(n + 1)
        self.vocab_mass = [sum(self.weight(t) for t in v) or 1.0 for v in self.vocab]
        self.title_mass = [sum(self.weight(t) for t in v) or 1.0 for v in self.titles]

    def weight(self, tok: str) -> float:
        return self.idf.get(tok, self.unknown_weight)


# Keyed by object identity because a ChecklistSpec holds lists and so is not hashable; the spec is
# kept in the value so its id cannot be reused while cached.
_INDEXES: dict[int, tuple[ChecklistSpec, _Index]] = {}


def _index(spec: ChecklistSpec) -> _Index:
    hit = _INDEXES.get(id(spec))
    if hit is None or hit[0] is not spec:
        if len(_INDEXES) > 64:
            _INDEXES.clear()
        hit = _INDEXES[id(spec)] = (spec, _Index(spec))
    return hit[1]


def match_scores(spec: ChecklistSpec, text: str) -> dict[str, float]:
    """How well ``text`` fits each question, in [0, 1]: an F-measure of the share of the text the
    question explains and the share of the question (or of its title) the text covers."""
    index = _index(spec)
    toks = set(tokens(text))
    if not toks:
        return {qid: 0.0 for qid in index.ids}
    text_mass = sum(index.weight(t) for t in toks)
    scores = {}
    for qid, vocab, title, vmass, tmass in zip(
        index.ids, index.vocab, index.titles, index.vocab_mass, index.title_mass, strict=True
    ):
        shared = toks & vocab
        if not shared:
            scores[qid] = 0.0
            continue
        mass = sum(index.weight(t) for t in shared)
        precision = mass / text_mass
        title_cov = sum(index.weight(t) for t in toks & title) / tmass
        recall = max(mass / vmass, title_cov)
        scores[qid] = 2 * precision * recall / (precision + recall)
    return scores


def match_question(spec: ChecklistSpec, text: str, *, min_score: float = 0.2) -> str | None:
    """The id of the question ``text`` (a heading, a question line, or both) is about, or None.

    None when nothing fits well enough or two questions fit about equally well: a wrong match would
    attach an answer to the wrong question, which is worse than reporting it missing.
    """
    return best_match(match_scores(spec, text), min_score=min_score)


def best_match(scores: dict[str, float], *, min_score: float = 0.2) -> str | None:
    """The winning id of :func:`match_scores` output, or None when weak or ambiguous."""
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    if not ranked or ranked[0][1] < min_score:
        return None
    if len(ranked) > 1 and ranked[1][1] > 0.9 * ranked[0][1]:
        return None
    return ranked[0][0]


# --- which version is this? -----------------------------------------------------------------------

# Phrases that only one version's official text contains, compared after _normalize_for_detect, so
# they work on LaTeX source and on text extracted from a PDF alike.
_OLD_STYLE_PHRASES = (
    "did you describe the limitations of your work",
    "did you discuss any potential negative societal impacts",
    "have you read the ethics review guidelines",
    "did you state the full set of assumptions of all theoretical results",
    "did you include complete proofs of all theoretical results",
    "did you include the code, data, and instructions needed to reproduce",
    "did you report error bars",
    "did you include the total amount of compute",
    "did you mention the license of the assets",
    "did you include any new assets",
    "did you discuss whether and how consent was obtained",
    "did you include the estimated hourly wage",
)
_NEW_STYLE_PHRASES = (
    "does the paper discuss the limitations of the work performed by the authors",
    "does the paper fully disclose all the information needed to reproduce",
    "does the paper provide open access to the data and code",
    "does the paper report error bars suitably and correctly defined",
    "does the paper provide sufficient information on the computer resources",
    "does the research conducted in the paper conform",
    "does the paper describe safeguards",
    "are new assets introduced in the paper well documented",
    "does the paper describe potential risks incurred by study participants",
    "open access to data and code",
    "experiment statistical significance",
    "experiments compute resources",
)
_LLM_PHRASES = ("declaration of llm usage", "describe the usage of llms")
_MARKERS_2026 = (
    "scientific rigor,",
    "type of optimizer)",
    "pre-trained language models",
    "llm policy in the neurips handbook",
    "the answer [n/a] means",
    "the answer \\answerna{} means",
    "neurips_2026",
    "neurips 2026",
)
_MARKERS_2025 = (
    "scientific rigorousness",
    "type of optimizer, etc.)",
    "pretrained language models",
    "conferences/2025/llm",
    "neurips_2025",
    "neurips 2025",
)


def _normalize_for_detect(text: str) -> str:
    text = text.translate(_FOLD).lower()
    text = text.replace("``", '"').replace("''", '"').replace("~", " ")
    return re.sub(r"\s+", " ", text)


def _count(text: str, phrases: tuple[str, ...]) -> int:
    return sum(1 for p in phrases if p in text)


def detect(text: str) -> str:
    """The checklist version ``text`` is written against (LaTeX source or PDF text).

    Decided from the questions present: the grouped "Did you ..." questions mean the 2021/22 form;
    otherwise the LLM-usage question separates 16-question versions from 2024's 15, and wording that
    changed between 2025 and 2026 separates those two. Falls back to the newest version matching the
    style and, when nothing is recognisable, to ``neurips-2025``.
    """
    norm = _normalize_for_detect(text)
    old = _count(norm, _OLD_STYLE_PHRASES)
    new = _count(norm, _NEW_STYLE_PHRASES)
    if old > new and old >= 2:
        return "neurips-2021"
    markers_2026 = _count(norm, _MARKERS_2026)
    markers_2025 = _count(norm, _MARKERS_2025)
    has_llm = _count(norm, _LLM_PHRASES) > 0
    if markers_2026 > markers_2025:
        return "neurips-2026"
    if has_llm:
        return "neurips-2025"
    if new >= 2:
        return "neurips-2024"
    return DEFAULT_ID
