"""TrojAI's prevalence sweep: metrics on subsets built at target rates of 1-99 %."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from checklist_eval.detection.metrics.calibration import brier, cross_entropy
from checklist_eval.detection.metrics.ranking import auc
from checklist_eval.detection.metrics.trials import _labels


@dataclass(frozen=True)
class Sweep:
    """One row per (rate, repetition): the subset's size, target count and metrics."""

    rate: np.ndarray
    rep: np.ndarray
    n: np.ndarray
    n_target: np.ndarray
    cross_entropy: np.ndarray
    brier: np.ndarray
    auc: np.ndarray


def _sweep_counts(n_pos: int, n_neg: int, pct: int) -> tuple[int, int]:
    """Targets and non-targets the TrojAI greedy build ends with at a target rate of ``pct`` percent.

    The build adds a target while the subset's target share is below the rate, otherwise a
    non-target, and stops as soon as the class it needs is exhausted. Runs of non-targets are added in
    one step; integer arithmetic keeps the rate comparisons exact.
    """
    a = b = 0
    while True:
        if a + b == 0 or 100 * a < pct * (a + b):
            if a == n_pos:
                return a, b
            a += 1
            continue
        # non-targets needed before the share drops below pct again: smallest j with 100a < pct(a+b+j)
        j = (100 * a - pct * (a + b)) // pct + 1
        if n_neg - b < j:
            return a, n_neg
        b += j


def prevalence_sweep(
    y_true: object,
    y_prob: object,
    rates: Iterable[int] = range(1, 100),
    reps: int = 10,
    seed: int | None = 0,
) -> Sweep:
    """Metrics on subsets built at target rates of 1-99 % (TrojAI), ``reps`` random subsets per rate.

    For each rate (integer percent) the subset composition follows TrojAI's greedy build (see
    :func:`_sweep_counts`); which targets and non-targets enter is drawn at random, with a fresh
    shuffle per repetition. Missing predictions (NaN) are replaced by the rate, as TrojAI does.
    TrojAI's own script sweeps 1-98 %; the default here includes 99 %. AUC is NaN on a subset with
    one class.

    ``--prevalence-sweep`` of ``assessor-eval`` and ``detection score`` reports it per rate
    (:mod:`checklist_eval.detection.trojai`).
    """
    y = _labels(y_true)
    p = np.asarray(y_prob, dtype=np.float64)
    if p.shape != y.shape:
        raise ValueError(f"predictions must have shape {y.shape}, got {p.shape}")
    pos_idx, neg_idx = np.flatnonzero(y), np.flatnonzero(~y)
    rng = np.random.default_rng(seed)
    rows: list[tuple] = []
    for pct in (int(r) for r in rates):
        if not 1 <= pct <= 99:
            raise ValueError(f"rates are integer percents in 1..99, got {pct}")
        k_pos, k_neg = _sweep_counts(pos_idx.size, neg_idx.size, pct)
        for rep in range(reps):
            idx = np.r_[rng.permutation(pos_idx)[:k_pos], rng.permutation(neg_idx)[:k_neg]]
            rows.append((pct / 100.0, rep, *_subset_metrics(y[idx], p[idx], pct / 100.0)))
    cols = list(zip(*rows, strict=True)) if rows else [()] * 7
    return Sweep(*(np.asarray(c) for c in cols))


def _subset_metrics(y: np.ndarray, p: np.ndarray, rate: float) -> tuple:
    p = np.where(np.isnan(p), rate, p)
    n_t = int(y.sum())
    a = auc(y, p) if 0 < n_t < y.size else float("nan")
    return y.size, n_t, cross_entropy(y, p), brier(y, p), a
