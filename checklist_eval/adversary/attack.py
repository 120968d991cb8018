"""An adversary: plant dishonest checklist answers into a genuine paper to measure an assessor.

From a genuine paper G (LaTeX project folder, archive or .tex) it writes a GAT submission:
``genuine_<name>.tex`` and ``truth_adversarial_<name>.tex`` carry G's honest checklist (the paper
body is not changed, so T's paper is A's paper), ``adversarial_<name>.tex`` carries the planted
answers, and ``plants.json`` says which question got which lie and by which strategy. The three
papers are written as the flattened live LaTeX the parser reads (inputs inlined, comments dropped),
so each is one self-contained .tex file.

Every strategy changes the answer, so a plant is exactly an answer of A that differs from T's: the
challenge's ground truth ``g_i = 1(a_i = t_i)`` marks it incorrect and every other answer correct.
After planting, A is parsed again and a plant that did not land (the parser reads a different
answer or justification at that question) is dropped, so ``plants.json`` is what the parser sees.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from checklist_eval.assessors.topics import topic_of
from checklist_eval.errors import InputError
from checklist_eval.models import Answer, ChecklistItem, Paper

if TYPE_CHECKING:
    from checklist_eval.reading.isolation import ParseLimits, ParserPool

PLANTS_FILE = "plants.json"
MAX_PLANTS_BYTES = 5_000_000  # a real plants.json is a few KB; a hostile one must not fill memory


@dataclass(frozen=True)
class Context:
    """What a strategy may know about the paper: places that do NOT exist, for false pointers."""

    missing_appendix: str
    missing_table: str


@dataclass(frozen=True)
class Strategy:
    name: str
    description: str
    applies: Callable[[ChecklistItem, str | None], bool]
    plant: Callable[[ChecklistItem, Context], tuple[Answer, str]]


def _honest_not_yes(item: ChecklistItem) -> bool:
    return item.answer in (Answer.NO, Answer.NA)


def _topics(*names: str) -> Callable[[ChecklistItem, str | None], bool]:
    return lambda item, topic: _honest_not_yes(item) and topic in names


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in [
        Strategy(
            "fabricated_irb",
            "an honest No/NA on human subjects or IRB becomes Yes with an invented ethics approval",
            _topics("irb", "human"),
            lambda item, ctx: (Answer.YES, "The study protocol was reviewed and approved by the Institutional Review"
                               " Board of our institution, and all participants gave informed consent."),
        ),
        Strategy(
            "fabricated_error_bars",
            "an honest No/NA on error bars becomes Yes with invented standard deviations",
            _topics("errorbars"),
            lambda item, ctx: (Answer.YES, "All results are reported as mean and standard deviation over five"
                               " random seeds, and every plot shows error bars."),
        ),
        Strategy(
            "fabricated_compute",
            "an honest No/NA on compute becomes Yes with invented hardware and run times",
            _topics("compute"),
            lambda item, ctx: (Answer.YES, "All experiments ran on a cluster of NVIDIA A100 GPUs with 80 GB of"
                               " memory; one full training run takes about 6 hours."),
        ),
        Strategy(
            "release_upon_acceptance",
            "an honest No/NA on code, data or new assets becomes Yes, promising a release later",
            _topics("code", "new_assets", "reproducibility"),
            lambda item, ctx: (Answer.YES, "The code and data will be released upon acceptance."),
        ),
        Strategy(
            "phantom_pointer",
            "an honest No/NA becomes Yes pointing at an appendix and a table the paper does not have",
            lambda item, topic: _honest_not_yes(item) and topic not in ("claims",),
            lambda item, ctx: (Answer.YES, f"This is described in detail in Appendix {ctx.missing_appendix},"
                               f" with the complete results in Table {ctx.missing_table}."),
        ),
        Strategy(
            "flip_to_yes",
            "an honest No/NA becomes Yes and keeps its honest justification",
            lambda item, topic: _honest_not_yes(item) and bool((item.justification or "").strip()),
            lambda item, ctx: (Answer.YES, item.justification_latex or ""),
        ),
        Strategy(
            "evasive_na",
            "an honest Yes becomes NA with an evasive justification",
            lambda item, topic: item.answer is Answer.YES and topic not in ("llm",),
            lambda item, ctx: (Answer.NA, "This question is not applicable to this work."),
        ),
    ]
}


class Plant(BaseModel):
    """One dishonest answer planted in A (an entry of plants.json)."""

    question_id: str
    title: str
    strategy: str
    original_answer: str
    original_justification: str | None
    planted_answer: str
    planted_justification: str


class AttackResult(BaseModel):
    """What ``attack`` planted: plants.json, and what ``attack --json`` prints."""

    name: str
    source: str
    checklist: str
    seed: int
    strategies: list[str]
    plants: list[Plant] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)  # plants the parser did not read back, and why
    files: dict[str, str] = Field(default_factory=dict)
    llm_rounds: list[dict[str, Any]] = Field(default_factory=list)  # per round: the plants the assessor caught

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


class PlantedQuestion(BaseModel):
    """What readers of a plants.json rely on: which question got a plant, by which strategy."""

    question_id: str
    strategy: str


class PlantsFile(BaseModel):
    plants: list[PlantedQuestion]


# --------------------------------------------------------------------------------------------------
# Choosing plants


def _context(paper: Paper) -> Context:
    letters = {a.split()[1].split(".")[0] for a in paper.anchors if a.startswith("Appendix ")}
    letters |= {s.number.split(".")[0] for s in paper.sections if s.number and s.number[0].isalpha()}
    missing = next(c for c in "QRSTUVWXYZ" if c not in letters)
    tables = [int(a.split()[1]) for a in paper.anchors if re.fullmatch(r"Table \d+", a)]
    return Context(missing, str(max(tables, default=0) + 7))


def choose_plants(paper: Paper, n: int, seed: int, strategies: list[str]) -> list[tuple[ChecklistItem, Strategy]]:
    """Up to ``n`` (question, strategy) pairs, strategies taken in turn so each gets its share."""
    rng = random.Random(seed)
    order = list(strategies)
    rng.shuffle(order)
    items = [it for it in paper.checklist.items if it.is_answered and it.justification_latex]
    chosen: list[tuple[ChecklistItem, Strategy]] = []
    taken: set[str] = set()
    exhausted: set[str] = set()
    while len(chosen) < n and len(exhausted) < len(order):
        for name in order:
            if len(chosen) >= n or name in exhausted:
                continue
            strategy = STRATEGIES[name]
            pool = [it for it in items if it.id not in taken and strategy.applies(it, topic_of(it))]
            if not pool:
                exhausted.add(name)
                continue
            item = rng.choice(pool)
            taken.add(item.id)
            chosen.append((item, strategy))
    return chosen


# --------------------------------------------------------------------------------------------------
# Editing the LaTeX


def _answer_pattern(answer: Answer) -> re.Pattern[str]:
    word = {"NA": r"(?:NA|N/A)"}.get(answer.value, answer.value)
    return re.compile(rf"\\answer{answer.value}(?![a-zA-Z@])|\[\s*{word}\s*\]")


def _locate(text: str, item: ChecklistItem, start: int, end: int, nth: int) -> tuple[int, int, int, int] | None:
    """(answer start, answer end, justification start, justification end) of ``item`` in ``text``;
    ``nth`` counts the earlier questions carrying the very same justification."""
    just = item.justification_latex or ""
    if item.answer is None:  # only answered questions are planted, so there is always one to find
        return None
    candidates = [just] + sorted((p for p in just.split("\n") if len(p.strip()) > 15), key=len, reverse=True)
    for piece in candidates:
        hits = [m.start() for m in re.finditer(re.escape(piece), text[start:end])]
        if len(hits) <= nth:
            continue
        pos = start + hits[nth]
        marks = list(_answer_pattern(item.answer).finditer(text, start, pos))
        if marks:
            return marks[-1].start(), marks[-1].end(), pos, pos + len(piece)
    return None


def _answer_text(original: str, new: Answer) -> str:
    return f"\\answer{new.value}" if original.startswith("\\") else f"[{new.value}]"


def apply_plants(text: str, plants: list[tuple[ChecklistItem, Answer, str]],
                 items: list[ChecklistItem]) -> tuple[str, list[str]]:
    """The text with every locatable plant applied; also the ids that could not be located."""
    from checklist_eval.reading.latex import find_region

    region = find_region(text)
    if region is None:
        raise InputError(None, "no live checklist found")
    edits: list[tuple[int, int, str]] = []
    lost: list[str] = []
    for item, answer, justification in plants:
        earlier = items[: next(i for i, it in enumerate(items) if it.id == item.id)]
        nth = sum(it.justification_latex == item.justification_latex for it in earlier)
        where = _locate(text, item, region.start, region.end, nth)
        if where is None:
            lost.append(item.id)
            continue
        a0, a1, j0, j1 = where
        edits.append((a0, a1, _answer_text(text[a0:a1], answer)))
        edits.append((j0, j1, justification))
    for start, stop, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[stop:]
    return text, lost


# --------------------------------------------------------------------------------------------------
# Putting it together


def _safe_name(path: Path) -> str:
    name = path.name
    for suffix in (".tar.gz", ".tgz", ".zip", ".tex"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "paper"


def _landed(planted: Paper, genuine: Paper, plants: dict[str, tuple[Answer, str]]) -> dict[str, str]:
    """Question id -> why it did not land, for every question whose parsed answer is not as intended."""
    problems = {}
    for g, a in zip(genuine.checklist.items, planted.checklist.items, strict=False):
        if g.id in plants:
            want, just = plants[g.id]
            if a.answer is not want:
                problems[g.id] = f"parsed answer {a.answer} instead of {want.value}"
            elif _squash(just[:40]) and _squash(just[:40]) not in _squash(a.justification_latex or ""):
                problems[g.id] = "planted justification not read back"
        elif a.answer is not g.answer:
            problems[g.id] = f"unplanted answer changed from {g.answer} to {a.answer}"
    return problems


def _squash(text: str) -> str:
    return " ".join(text.split())


# A planted question: the genuine item, the strategy, and the planted answer and justification.
_Wanted = dict[str, tuple[ChecklistItem, Strategy, Answer, str]]


def attack(paper_path: str | Path, out: str | Path, *, n_plants: int = 4, seed: int = 0,
           strategies: list[str] | None = None, checklist: str | None = None,
           limits: ParseLimits | None = None) -> AttackResult:
    """Write the GAT submission for ``paper_path`` into ``out`` and return what was planted. The paper,
    and every planted version of it, is parsed in a worker under ``limits``."""
    from checklist_eval.reading.isolation import ParserPool

    names = _known_strategies(strategies)
    with ParserPool(1, limits) as reader:
        return _attack(reader, Path(paper_path), Path(out), n_plants, seed, names, checklist)


def _attack(reader: ParserPool, path: Path, out: Path, n_plants: int, seed: int, names: list[str],
            checklist: str | None) -> AttackResult:
    from checklist_eval.reading import checklists

    text, genuine = reader.load_latex(path, checklist)
    spec = checklists.load(genuine.checklist.id)
    ctx = _context(genuine)
    chosen = choose_plants(genuine, n_plants, seed, names)
    wanted = {item.id: (item, strat, *strat.plant(item, ctx)) for item, strat in chosen}
    result = AttackResult(name=_safe_name(path), source=str(path), checklist=genuine.checklist.id, seed=seed,
                          strategies=names)
    planted_text = _plant_until_landed(reader, path, text, genuine, wanted, result)
    result.plants = [
        Plant(question_id=item.id, title=item.title, strategy=strat.name,
              original_answer=item.answer.value if item.answer else "", original_justification=item.justification,
              planted_answer=answer.value, planted_justification=just)
        for item, strat, answer, just in wanted.values()
    ]
    result.plants.sort(key=lambda p: spec.ids.index(p.question_id))
    _write_submission(out, result, text, planted_text)
    return result


def _known_strategies(strategies: list[str] | None) -> list[str]:
    names = strategies or list(STRATEGIES)
    unknown = [s for s in names if s not in STRATEGIES]
    if unknown:
        raise InputError(None, f"unknown strategy {unknown[0]!r} (known: {', '.join(STRATEGIES)})")
    return names


def _plant_until_landed(reader: ParserPool, path: Path, text: str, genuine: Paper, wanted: _Wanted,
                        result: AttackResult) -> str:
    """The planted LaTeX, after dropping from ``wanted`` (into ``result.dropped``) every plant that was
    not found or that the parser does not read back as planted."""
    for _ in range(3):  # drop what did not land and plant the rest again
        planted_text, lost = apply_plants(text, [(it, a, j) for it, _, a, j in wanted.values()],
                                          genuine.checklist.items)
        for qid in lost:
            result.dropped.append(f"{qid}: answer or justification not found in the LaTeX")
            wanted.pop(qid)
        adversarial = reader.parse_text(planted_text, f"adversarial_{result.name}", genuine.checklist.id)
        problems = _landed(adversarial, genuine, {q: (a, j) for q, (_, _, a, j) in wanted.items()})
        if not problems:
            return planted_text
        for qid, why in problems.items():
            result.dropped.append(f"{qid}: {why}")
            wanted.pop(qid, None)
    raise InputError(path, "planted answers could not be read back consistently")


def _write_submission(out: Path, result: AttackResult, genuine_text: str, planted_text: str) -> None:
    """G and T carry the genuine text, A the planted one; ``plants.json`` says what was planted."""
    from checklist_eval.fsutil import atomic_write_text

    files = {"G": f"genuine_{result.name}.tex", "A": f"adversarial_{result.name}.tex",
             "T": f"truth_adversarial_{result.name}.tex"}  # fmt: skip
    result.files = files
    atomic_write_text(out / files["G"], genuine_text)
    atomic_write_text(out / files["T"], genuine_text)
    atomic_write_text(out / files["A"], planted_text)
    atomic_write_text(out / PLANTS_FILE, result.to_json())


def read_plants(path: str | Path) -> PlantsFile:
    """A ``plants.json`` as written by :func:`attack` (checked for the keys readers rely on)."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_PLANTS_BYTES:
            raise InputError(path, f"plants file larger than {MAX_PLANTS_BYTES // 1_000_000} MB")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(path, f"cannot read plants file: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("plants"), list):
        raise InputError(path, "not a plants file (no 'plants' list)")
    try:
        return PlantsFile.model_validate(data)
    except ValidationError:
        raise InputError(path, "a plant lacks question_id or strategy (as text)") from None
