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

from pydantic import Field, ValidationError

from checklist_eval.adversary import phrasings
from checklist_eval.adversary.phrasings import Context
from checklist_eval.assessors.evidence.topics import topic_of
from checklist_eval.errors import InputError
from checklist_eval.fsutil import loads_json
from checklist_eval.models import Answer, ChecklistItem, Model, Paper

if TYPE_CHECKING:
    from checklist_eval.reading.isolation import ParseLimits, ParserPool

PLANTS_FILE = "plants.json"
MAX_PLANTS_BYTES = 5_000_000  # a real plants.json is a few KB; a hostile one must not fill memory


@dataclass(frozen=True)
class Strategy:
    """A kind of lie: which honest answers it applies to, the answer it plants, and its phrasings
    (at least six; the attack's seed picks one, and white-box rounds try the others)."""

    name: str
    description: str
    applies: Callable[[ChecklistItem, str | None], bool]
    answer: Answer
    phrasings: Callable[[ChecklistItem, Context], list[str]]

    def plant(self, item: ChecklistItem, ctx: Context, variant: int = 0, *, reworded: int = 0) -> tuple[Answer, str]:
        """The planted answer and justification: phrasing ``variant`` (modulo their number), reworded
        with seed ``reworded`` when it is not 0."""
        options = self.phrasings(item, ctx)
        text = options[variant % len(options)]
        if reworded:
            text = phrasings.reword(text, random.Random(reworded))
        return self.answer, text


def _honest_not_yes(item: ChecklistItem) -> bool:
    return item.answer in (Answer.NO, Answer.NA)


def _topics(*names: str) -> Callable[[ChecklistItem, str | None], bool]:
    return lambda item, topic: _honest_not_yes(item) and topic in names


def _fixed(make: Callable[[Context], list[str]]) -> Callable[[ChecklistItem, Context], list[str]]:
    return lambda item, ctx: make(ctx)


def _honest_variants(item: ChecklistItem, ctx: Context) -> list[str]:
    """The honest justification kept (flip_to_yes), alone or with a pointer or a hedge around it."""
    just = (item.justification_latex or "").strip()
    return [just, f"Yes. {just}", f"{just} See Section {ctx.real_section}.", f"To some extent: {just}",
            f"{just} This is addressed in the paper.", f"See Section {ctx.real_section}. {just}"]


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in [
        Strategy("fabricated_irb",
                 "an honest No/NA on human subjects or IRB becomes Yes with an invented ethics approval",
                 _topics("irb", "human"), Answer.YES, _fixed(phrasings.fabricated_irb)),
        Strategy("fabricated_error_bars", "an honest No/NA on error bars becomes Yes with invented variability",
                 _topics("errorbars"), Answer.YES, _fixed(phrasings.fabricated_error_bars)),
        Strategy("fabricated_compute", "an honest No/NA on compute becomes Yes with invented hardware and run times",
                 _topics("compute"), Answer.YES, _fixed(phrasings.fabricated_compute)),
        Strategy("release_upon_acceptance",
                 "an honest No/NA on code, data or new assets becomes Yes, promising a release later",
                 _topics("code", "new_assets", "reproducibility"), Answer.YES, _fixed(phrasings.release_promise)),
        Strategy("phantom_pointer",
                 "an honest No/NA becomes Yes pointing at an appendix or table the paper does not have",
                 lambda item, topic: _honest_not_yes(item) and topic not in ("claims",), Answer.YES,
                 _fixed(phrasings.phantom_pointer)),
        Strategy("flip_to_yes", "an honest No/NA becomes Yes and keeps its honest justification",
                 lambda item, topic: _honest_not_yes(item) and bool((item.justification or "").strip()),
                 Answer.YES, _honest_variants),
        Strategy("evasive_na", "an honest Yes becomes NA with an evasive or plausible-sounding reason",
                 lambda item, topic: item.answer is Answer.YES and topic not in ("llm",), Answer.NA,
                 _fixed(phrasings.reasoned_na)),
        Strategy("real_pointer", "an honest No/NA becomes Yes citing a section the paper really has",
                 lambda item, topic: _honest_not_yes(item) and topic not in ("claims",), Answer.YES,
                 _fixed(phrasings.real_pointer)),
        Strategy("fabricated_licence", "an honest No/NA on licences or credits becomes Yes, claiming compliance",
                 _topics("licenses", "credits", "new_assets"), Answer.YES, _fixed(phrasings.fabricated_licence)),
        Strategy("fabricated_discussion",
                 "an honest No/NA on impacts, limitations or safeguards becomes Yes, claiming a discussion",
                 _topics("impacts", "limitations", "safeguards"), Answer.YES,
                 _fixed(phrasings.fabricated_discussion)),
        Strategy("untruthful_no", "an honest Yes becomes No with a plausible reason (cost, scope)",
                 lambda item, topic: item.answer is Answer.YES and topic not in ("claims", "limitations", "ethics"),
                 Answer.NO, _fixed(phrasings.untruthful_no)),
    ]
}


class Plant(Model):
    """One dishonest answer planted in A (an entry of plants.json)."""

    question_id: str
    title: str
    strategy: str
    original_answer: str
    original_justification: str | None
    planted_answer: str
    planted_justification: str
    variant: int = 0  # which of the strategy's phrasings (modulo their number)


class AttackResult(Model):
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
    rounds: list[dict[str, Any]] = Field(default_factory=list)  # white-box rounds (attack --against heuristic)

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


class PlantedQuestion(Model):
    """What readers of a plants.json rely on: which question got a plant, by which strategy."""

    question_id: str
    strategy: str


class PlantsFile(Model):
    plants: list[PlantedQuestion]


# --------------------------------------------------------------------------------------------------
# Choosing plants


def _context(paper: Paper) -> Context:
    letters = {a.split()[1].split(".")[0] for a in paper.anchors if a.startswith("Appendix ")}
    letters |= {s.number.split(".")[0] for s in paper.sections if s.number and s.number[0].isalpha()}
    missing = next(c for c in "QRSTUVWXYZ" if c not in letters)
    tables = [int(a.split()[1]) for a in paper.anchors if re.fullmatch(r"Table \d+", a)]
    tops = sorted({s.number for s in paper.sections if s.number and s.number.isdigit()}, key=int)
    real = tops[len(tops) // 2] if tops else "2"  # a body section the paper has, whatever it is about
    apps = sorted(letters)
    return Context(missing, str(max(tables, default=0) + 7), real, apps[0] if apps else None)


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


def variant_for(seed: int, question_id: str) -> int:
    """The phrasing a plant starts from: fixed by the seed and the question, different across seeds."""
    return random.Random(f"{seed}:{question_id}").randrange(1_000_000)


def attack(paper_path: str | Path, out: str | Path, *, n_plants: int = 4, seed: int = 0,
           strategies: list[str] | None = None, checklist: str | None = None, reword: bool = False,
           limits: ParseLimits | None = None) -> AttackResult:
    """Write the GAT submission for ``paper_path`` into ``out`` and return what was planted. The paper,
    and every planted version of it, is parsed in a worker under ``limits``; ``reword`` rewrites each
    planted phrasing too."""
    from checklist_eval.reading.isolation import ParserPool

    names = _known_strategies(strategies)
    with ParserPool(1, limits) as reader:
        return _attack(reader, Path(paper_path), Path(out), n_plants, seed, names, checklist, reword)


def _attack(reader: ParserPool, path: Path, out: Path, n_plants: int, seed: int, names: list[str],
            checklist: str | None, reword: bool = False) -> AttackResult:
    from checklist_eval.reading import checklists

    text, genuine = reader.load_latex(path, checklist)
    spec = checklists.load(genuine.checklist.id)
    ctx = _context(genuine)
    chosen = choose_plants(genuine, n_plants, seed, names)
    variants = {item.id: variant_for(seed, item.id) for item, _ in chosen}
    wanted = {item.id: (item, strat, *strat.plant(item, ctx, variants[item.id],
                                                  reworded=variants[item.id] + 1 if reword else 0))
              for item, strat in chosen}
    result = AttackResult(name=_safe_name(path), source=str(path), checklist=genuine.checklist.id, seed=seed,
                          strategies=names)
    planted_text = _plant_until_landed(reader, path, text, genuine, wanted, result)
    result.plants = [
        Plant(question_id=item.id, title=item.title, strategy=strat.name,
              original_answer=item.answer.value if item.answer else "", original_justification=item.justification,
              planted_answer=answer.value, planted_justification=just, variant=variants[item.id])
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
        data = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(path, f"cannot read plants file: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("plants"), list):
        raise InputError(path, "not a plants file (no 'plants' list)")
    try:
        return PlantsFile.model_validate(data)
    except ValidationError:
        raise InputError(path, "a plant lacks question_id or strategy (as text)") from None
