"""How well an assessor resists planted answers: figures over attack runs (see checklist_eval.adversary.attack).

A trial is one answered question of an adversarial paper A. It is *planted* when A's answer differs
from the truthful T's (``plants.json`` names the strategy), else honest. With the assessor's verdict
``c`` and the challenge's ground truth ``g = 1(a = t)``:

* detection: share of plants judged incorrect; false flags: share of honest answers judged incorrect;
* R = mean(c == g), beside the two trivial assessors: accept everything (R = share honest) and reject
  everything (R = share planted);
* AUC of ``1 - p_correct`` for planted vs honest (ties count one half), overall and per strategy.

Proportions carry Wilson 95% intervals, AUC a bootstrap interval (``metrics.bootstrap_auc``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checklist_eval.adversary.attack_whitebox import without_body
from checklist_eval.challenge.results.layout import RECORDS_CSV, ResultsLayout
from checklist_eval.detection import metrics
from checklist_eval.errors import InputError, NoChecklistError
from checklist_eval.models import Model

UNLISTED = "(not in plants.json)"


@dataclass(frozen=True)
class Trial:
    run: str
    question_id: str
    strategy: str | None  # None for an honest answer
    correct: bool
    p_correct: float
    unverifiable: bool = False
    half: str | None = None  # the paper's half of the fixed corpus split, None when it is not in it

    @property
    def planted(self) -> bool:
        return self.strategy is not None


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n (sensible at 0 and n, unlike the normal one)."""
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _rate(k: int, n: int) -> dict:
    lo, hi = wilson(k, n)
    return {"k": k, "n": n, "rate": (k / n) if n else math.nan, "ci95": [lo, hi]}


def _auc(trials: list[Trial], n_bootstrap: int, seed: int) -> dict | None:
    y = [int(t.planted) for t in trials]
    if not 0 < sum(y) < len(y):
        return None
    score = [1.0 - t.p_correct for t in trials]
    if n_bootstrap <= 0:
        return {"auc": metrics.auc(y, score), "ci95": None}
    ci = metrics.bootstrap_auc(y, score, n_resamples=n_bootstrap, seed=seed)
    return {"auc": ci.estimate, "ci95": [ci.low, ci.high]}


class Rate(Model):
    """k of n, with the Wilson 95 % interval (NaN when n is 0)."""

    k: int
    n: int
    rate: float
    ci95: list[float]


class AucFigure(Model):
    auc: float
    ci95: list[float] | None  # None without bootstrap


class StrategyFigures(Model):
    detection: Rate
    auc: AucFigure | None  # None when the strategy's trials are all plants or all honest


class Margin(Model):
    """R minus accept-everything, with a 95 % interval from resampling whole papers."""

    value: float
    ci95: list[float] | None


class AttackSummary(Model):
    """``assessor-eval --attack-runs --json`` and its attack_summary.json (see ``summarize``)."""

    runs: int
    items: int
    plants: int
    detection: Rate
    false_flags: Rate
    unverifiable: Rate
    R: float
    R_accept_everything: float
    R_reject_everything: float
    auc: AucFigure | None
    per_strategy: dict[str, StrategyFigures]
    R_minus_accept_everything: Margin | None = None
    honest_set: Rate | None = None  # the authors' own answers (T) judged incorrect
    halves: dict[str, AttackSummary] | None = None  # per half of the fixed corpus split


AttackSummary.model_rebuild()


def _paper(t: Trial) -> str:
    return t.run.split("#")[0]


def margin(trials: list[Trial], n_bootstrap: int, seed: int) -> dict:
    """R - accept-everything = (plants caught - honest answers flagged) / answers, with a 95 % interval
    from resampling papers (a paper's answers are judged together, so they are not independent)."""
    import random

    def value(ts: list[Trial]) -> float:
        return sum((not t.correct) if t.planted else -(not t.correct) for t in ts) / len(ts)

    est = value(trials)
    if n_bootstrap <= 0:
        return {"value": est, "ci95": None}
    by_paper: dict[str, list[Trial]] = {}
    for t in trials:
        by_paper.setdefault(_paper(t), []).append(t)
    groups = list(by_paper.values())
    rng = random.Random(seed)
    draws = sorted(value([t for _ in groups for t in rng.choice(groups)]) for _ in range(n_bootstrap))
    return {"value": est, "ci95": [draws[int(0.025 * (n_bootstrap - 1))], draws[int(0.975 * (n_bootstrap - 1))]]}


def summarize(trials: Iterable[Trial], *, n_bootstrap: int = 1000, seed: int = 0,
              honest_set: list[tuple[str | None, bool]] | None = None, by_half: bool = True) -> dict:
    """Figures over all trials; ``honest_set`` is (half, flagged) per answer as its authors wrote it.
    With ``by_half`` and trials from the corpus split, the same figures for each half."""
    trials = list(trials)
    if not trials:
        raise InputError(None, "no trials: the attack runs hold no assessed adversarial answers")
    plants = [t for t in trials if t.planted]
    honest = [t for t in trials if not t.planted]
    n = len(trials)
    out: dict[str, Any] = {
        "runs": len({t.run for t in trials}),
        "items": n,
        "plants": len(plants),
        "detection": _rate(sum(not t.correct for t in plants), len(plants)),
        "false_flags": _rate(sum(not t.correct for t in honest), len(honest)),
        "unverifiable": _rate(sum(t.unverifiable for t in trials), n),
        "R": sum(t.correct != t.planted for t in trials) / n,
        "R_accept_everything": len(honest) / n,
        "R_reject_everything": len(plants) / n,
        "auc": _auc(trials, n_bootstrap, seed),
        "per_strategy": {},
        "R_minus_accept_everything": margin(trials, n_bootstrap, seed),
        "honest_set": _rate(sum(f for _, f in honest_set), len(honest_set)) if honest_set else None,
        "halves": None,
    }
    for name in sorted({t.strategy for t in plants if t.strategy is not None}):  # plants all have one
        mine = [t for t in plants if t.strategy == name]
        out["per_strategy"][name] = {
            "detection": _rate(sum(not t.correct for t in mine), len(mine)),
            "auc": _auc(mine + honest, n_bootstrap, seed),
        }
    halves = sorted({t.half for t in trials if t.half})
    if by_half and halves:
        out["halves"] = {
            h: summarize([t for t in trials if t.half == h], n_bootstrap=n_bootstrap, seed=seed, by_half=False,
                         honest_set=[x for x in honest_set or [] if x[0] == h])
            for h in halves if any(t.half == h for t in trials)
        }
    return out


# --------------------------------------------------------------------------------------------------
# Reading attack runs scored by `checklist-eval score RUN --out ...`


def run_folders(root: str | Path) -> list[Path]:
    """``root`` itself when it holds plants.json, else its subfolders that do (sorted)."""
    from checklist_eval.adversary.attack import PLANTS_FILE

    root = Path(root)
    if not root.is_dir():
        raise InputError(root, "attack runs folder not found")
    if (root / PLANTS_FILE).is_file():
        return [root]
    runs = sorted(p for p in root.iterdir() if p.is_dir() and (p / PLANTS_FILE).is_file())
    if not runs:
        raise InputError(root, "holds no plants.json (nor do its subfolders): not an attack run")
    return runs


def results_of_run(run: Path) -> Path:
    """Where a run's scores are kept: ``RUN-results`` beside it (``score`` refuses a results folder inside the
    submission it scores, which must not change before it is read); a run scored before that rule kept them
    in the run itself or one of its subfolders."""
    return run.parent / f"{run.name}-results"


def _records_file(run: Path) -> Path:
    for folder in [results_of_run(run), run, *sorted(p for p in run.iterdir() if p.is_dir())]:
        found = ResultsLayout(folder).records_file() if folder.is_dir() else None
        if found is not None:
            return found
    raise InputError(run, f"no {RECORDS_CSV}: score the run first "
                          f"(checklist-eval score {run} --out {results_of_run(run)})")


def _half_of_run(run: Path) -> str | None:
    """The corpus-split half of the paper a run attacked (from plants.json's source), None if unknown."""
    from checklist_eval.adversary.attack import PLANTS_FILE
    from checklist_eval.adversary.corpus_split import split
    from checklist_eval.fsutil import read_json_file

    plants = read_json_file(run / PLANTS_FILE)  # capped: an attack run's folder may be hostile
    source = plants.get("source") if isinstance(plants, dict) else None
    return split().get(Path(source).name) if isinstance(source, str) else None


def honest_set_of_run(run: Path) -> list[tuple[str | None, bool]]:
    """(half, flagged) for every answered question of T, the paper's checklist as its authors wrote it."""
    from checklist_eval.challenge.results.ledger import read_records

    half = _half_of_run(run)
    return [(half, not bool(r.c)) for r in read_records(_records_file(run))
            if r.role == "T" and r.answer is not None and r.answer.is_answered]


def trials_of_run(run: Path) -> list[Trial]:
    """A's answered questions with their verdicts; plants from plants.json, checked against A vs T."""
    from checklist_eval.adversary.attack import PLANTS_FILE, read_plants
    from checklist_eval.challenge.results.ledger import read_records

    plants = {p.question_id: p.strategy for p in read_plants(run / PLANTS_FILE).plants}
    half = _half_of_run(run)
    records = read_records(_records_file(run))
    truth = {r.question_id: r.answer for r in records if r.role == "T"}
    trials = []
    for r in records:
        if r.role != "A" or r.answer is None or not r.answer.is_answered or truth.get(r.question_id) is None:
            continue
        differs = r.answer != truth[r.question_id]
        strategy = plants.get(r.question_id, UNLISTED) if differs else None
        p = r.p_correct if r.p_correct is not None else float(r.c)
        trials.append(Trial(run.name, r.question_id, strategy, bool(r.c), float(p),
                            getattr(r, "verdict", "") == "unverifiable", half))  # fmt: skip
    return trials


def text_lines(summary: dict) -> list[str]:
    """The summary as aligned lines for a terminal."""

    def pct(rate: dict) -> str:
        lo, hi = rate["ci95"]
        return f"{rate['rate']:.1%} ({rate['k']}/{rate['n']}, 95% CI {lo:.1%}-{hi:.1%})" if rate["n"] else "n/a"

    def auc(a: dict | None) -> str:
        if a is None:
            return "n/a (one class only)"
        ci = f" (95% CI {a['ci95'][0]:.3f}-{a['ci95'][1]:.3f})" if a["ci95"] else ""
        return f"{a['auc']:.3f}{ci}"

    s = summary
    m = s.get("R_minus_accept_everything")
    ci = f" (95% CI {m['ci95'][0]:+.3f} to {m['ci95'][1]:+.3f})" if m and m["ci95"] else ""
    lines = [
        f"attack runs: {s['runs']}, adversarial answers: {s['items']}, plants: {s['plants']}",
        f"R: {s['R']:.3f}   accept everything: {s['R_accept_everything']:.3f}   "
        f"reject everything: {s['R_reject_everything']:.3f}",
        f"plants detected: {pct(s['detection'])}",
        f"R - accept everything: {m['value']:+.3f}{ci}" if m else "",
        f"honest answers flagged: {pct(s['false_flags'])}",
        f"authors' own answers (T) flagged: {pct(s['honest_set'])}" if s.get("honest_set") else "",
        f"unverifiable verdicts: {pct(s['unverifiable'])}",
        f"AUC (1 - p_correct, planted vs honest): {auc(s['auc'])}",
        "per strategy:",
    ]
    for name, st in s["per_strategy"].items():
        lines.append(f"  {name:<26} detected {pct(st['detection'])}; AUC {auc(st['auc'])}")
    for half, sub in (s.get("halves") or {}).items():
        lines.append(f"{half} half of the corpus split:")
        lines += [f"  {line}" for line in text_lines(sub) if not line.startswith(("per strategy", "  "))]
    return [line for line in lines if line]


# --------------------------------------------------------------------------------------------------
# A benchmark in one process: attack each paper, assess A, summarize (scripts/eval_heuristic.py)




def benchmark_trials(papers: Iterable[Path], assessor, *, seeds: Iterable[int] = (0, 1, 2), n_plants: int = 4,
                     strip_body: bool = False, rounds: int = 0, reword: bool = False) -> list[Trial]:
    """Attack every paper with every seed, assess the adversarial paper, one trial per answered question.
    With ``rounds``, a white-box adversary first rewrites the plants the assessor caught (judging as the
    benchmark does, with or without the body)."""
    import asyncio
    import tempfile

    from checklist_eval.adversary.attack import attack
    from checklist_eval.adversary.corpus_split import half_of
    from checklist_eval.reading.isolation import isolated_load_paper

    trials: list[Trial] = []
    for paper_dir in papers:
        for seed in seeds:
            with tempfile.TemporaryDirectory(prefix="attack-") as tmp:
                try:
                    result = attack(paper_dir, tmp, n_plants=n_plants, seed=seed, reword=reword)
                except NoChecklistError:  # no checklist a reader sees: nothing to plant, nothing to judge
                    break
                if rounds:
                    from checklist_eval.adversary.attack_whitebox import whitebox_rounds

                    result = whitebox_rounds(result, tmp, assessor, rounds, strip_body=strip_body, reword=reword)
                paper = isolated_load_paper(Path(tmp) / result.files["A"], checklist=result.checklist)
            if strip_body:
                paper = without_body(paper)
            plants = {p.question_id: p.strategy for p in result.plants}
            for a in asyncio.run(assessor.assess_paper(paper)):
                if a.answer is None or not a.answer.is_answered:
                    continue
                trials.append(Trial(f"{result.name}#{seed}", a.question_id, plants.get(a.question_id), a.correct,
                                    a.p_correct, getattr(a, "verdict", "") == "unverifiable",
                                    half_of(Path(paper_dir).name)))  # fmt: skip
    return trials
