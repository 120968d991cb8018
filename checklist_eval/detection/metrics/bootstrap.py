"""Percentile bootstrap intervals: AUC on large data by resampling counts, any metric by a loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from checklist_eval.detection.metrics.ranking import _auc_from_counts, _grouped_counts, ranking_metrics, roc_points
from checklist_eval.detection.metrics.trials import SingleClassError, _both_classes, _pair


@dataclass(frozen=True)
class BootstrapCI:
    """A percentile bootstrap interval. ``n_invalid`` resamples had one class only and were dropped."""

    estimate: float
    low: float
    high: float
    level: float
    samples: np.ndarray = field(repr=False)
    n_invalid: int = 0


def _percentile_ci(estimate: float, samples: np.ndarray, level: float) -> BootstrapCI:
    if not (0.0 < level < 1.0):
        raise ValueError(f"level must be in (0, 1), got {level}")
    valid = samples[~np.isnan(samples)]
    if valid.size == 0:
        lo = hi = float("nan")
    else:
        lo, hi = np.quantile(valid, [(1 - level) / 2, (1 + level) / 2])
    return BootstrapCI(float(estimate), float(lo), float(hi), level, samples,
                       int(samples.size - valid.size))  # fmt: skip


def bootstrap_auc(
    y_true: object,
    y_score: object,
    n_resamples: int = 1000,
    level: float = 0.95,
    seed: int | None = 0,
    *,
    batch: int = 64,
) -> BootstrapCI:
    """Percentile bootstrap CI of AUC, fast enough for 1000 resamples of 10^6 trials.

    A bootstrap resample only changes how many copies of each trial are drawn, and AUC depends only on
    the number of targets and non-targets per distinct score. So the data are sorted once, and each
    resample is a vector of counts per (score group, class) cell:

    * few cells (ties, as with 0/0.5/1 scores): the counts are drawn directly as a multinomial over the
      cells, O(cells) per resample, in batches;
    * many cells: n positions are drawn uniformly and counted with ``bincount`` into the sorted order,
      O(n) per resample with no re-sorting.

    Both are exact bootstrap distributions (not approximations), so the interval differs from an
    index-resampling loop only by the random stream.
    """
    y, s = _pair(y_true, y_score)
    _both_classes(y, "AUC")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    _, pos, neg = _grouped_counts(y, s)
    estimate = float(_auc_from_counts(pos, neg))
    rng = np.random.default_rng(seed)
    n = y.size
    cells = np.stack([pos, neg], axis=1).ravel()  # pos_0, neg_0, pos_1, neg_1, ...
    live = np.flatnonzero(cells)  # empty cells never receive draws
    if live.size * 4 <= n:
        samples = _bootstrap_cells(rng, cells, live, n, n_resamples, batch)
    else:
        samples = _bootstrap_positions(rng, pos, neg, n, n_resamples)
    return _percentile_ci(estimate, samples, level)


def _bootstrap_cells(rng, cells, live, n, n_resamples, batch) -> np.ndarray:
    pvals = cells[live] / n
    out = np.empty(n_resamples)
    full = np.zeros((batch, cells.size), dtype=np.int64)
    for start in range(0, n_resamples, batch):
        b = min(batch, n_resamples - start)
        draws = full[:b]
        draws[:, live] = rng.multinomial(n, pvals, size=b)
        out[start : start + b] = _auc_from_counts(draws[:, 0::2], draws[:, 1::2])
    return out


def _bootstrap_positions(rng, pos, neg, n, n_resamples) -> np.ndarray:
    # trials in descending-score order: each group's targets first, then its non-targets; the order
    # inside a group does not matter because only per-group totals enter the AUC
    sizes = pos + neg
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    is_pos = np.zeros(n, dtype=bool)
    pos_slots = np.repeat(starts, pos) + _ranks_within(pos)
    is_pos[pos_slots] = True
    untied = starts.size == n  # every group is one trial: no per-group sums needed
    out = np.empty(n_resamples)
    for r in range(n_resamples):
        counts = np.bincount(rng.integers(0, n, n), minlength=n)
        c_pos = counts * is_pos
        if untied:
            g_pos, g_neg = c_pos, counts - c_pos
        else:
            g_pos = np.add.reduceat(c_pos, starts)
            g_neg = np.add.reduceat(counts, starts) - g_pos
        out[r] = _auc_from_counts(g_pos, g_neg)
    return out


def _ranks_within(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., c-1 for each c in counts, concatenated."""
    total = int(counts.sum())
    ends = np.cumsum(counts)
    return np.arange(total) - np.repeat(ends - counts, counts)


def bootstrap_ci(
    metric: Callable[[np.ndarray, np.ndarray], float],
    y_true: object,
    y_score: object,
    n_resamples: int = 1000,
    level: float = 0.95,
    seed: int | None = 0,
) -> BootstrapCI:
    """Percentile bootstrap CI of any ``metric(y, score)`` by resampling trials (a plain loop).

    Resamples on which the metric raises :class:`SingleClassError` count as invalid and are dropped.

    Library API: no command calls it; the commands use :func:`bootstrap_auc` and
    :func:`bootstrap_ranking`, which are faster for the figures they cover. It serves metrics those
    two do not cover, such as Brier or TPR@FPR under the ``max`` rule.
    """
    y, s = _pair(y_true, y_score)
    estimate = metric(y, s)
    rng = np.random.default_rng(seed)
    samples = np.empty(n_resamples)
    for r in range(n_resamples):
        idx = rng.integers(0, y.size, y.size)
        try:
            samples[r] = metric(y[idx], s[idx])
        except SingleClassError:
            samples[r] = np.nan
    return _percentile_ci(estimate, samples, level)


def bootstrap_ranking(
    y_true: object,
    y_score: object,
    far_stop: float = 0.1,
    n_resamples: int = 1000,
    level: float = 0.95,
    seed: int | None = 0,
) -> dict[str, BootstrapCI]:
    """Percentile bootstrap CIs of every :func:`ranking_metrics` figure, one ROC per resample.

    Meant for the few hundred trials of an assessor evaluation (a plain loop); for AUC alone on large
    data use :func:`bootstrap_auc`.
    """
    y, s = _pair(y_true, y_score)
    estimate = ranking_metrics(roc_points(y, s), far_stop)
    rng = np.random.default_rng(seed)
    samples = {k: np.full(n_resamples, np.nan) for k in estimate}
    for r in range(n_resamples):
        idx = rng.integers(0, y.size, y.size)
        try:
            values = ranking_metrics(roc_points(y[idx], s[idx]), far_stop)
        except SingleClassError:
            continue
        for k, v in values.items():
            samples[k][r] = v
    return {k: _percentile_ci(estimate[k], samples[k], level) for k in estimate}
