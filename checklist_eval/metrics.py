"""Detection metrics on NIST GenAI and TrojAI conventions, numpy only.

Conventions, everywhere in this module:

* ``y_true`` holds 1 for a *target* (positive: AI-generated text, an untruthful answer, a trojaned
  model) and 0 for a non-target. Booleans are accepted.
* ``y_score`` is a real number per trial; a **higher score means more likely a target**. Scores need not
  be probabilities for the ranking metrics (ROC, AUC, pAUC, TPR@FPR, DET, EER); the calibration metrics
  (Brier, cross-entropy) need probabilities of the target in [0, 1].
* A threshold ``t`` declares every trial with ``score >= t`` a target.

Single-class rule: every ranking metric needs at least one target and one non-target. Given one class
only they raise :class:`SingleClassError` (a ``ValueError``) naming the counts. :func:`summarize`, which
reports many metrics at once, catches it and reports ``nan`` for the ranking metrics instead, so a
per-question table with a question that has no target still prints. Brier and cross-entropy are defined
on one class and are always computed.

Rules that differ between tools, and the choice made here:

* **ROC points**: one point per distinct score, starting at (0, 0) with threshold +inf. Tied scores of
  both classes move FPR and TPR together, which draws a diagonal segment; the area under that segment is
  what counts a tie as one half in the Mann-Whitney statistic.
* **TPR at FPR** (:func:`tpr_at_fpr`): the default ``rule="nist"`` follows NIST's DetectionScorer: when
  the requested FPR equals the FPR of ROC points exactly (a vertical run), the *lowest* TPR of that run
  is returned; otherwise TPR is interpolated linearly between the last point left of the FPR and the
  first point right of it. ``rule="max"`` returns the best TPR actually reachable by a threshold whose
  FPR does not exceed the request (no interpolation).
* **EER** (:func:`eer`): the default ``rule="interpolated"`` is the definition of the NIST GenAI plan
  (section 6.4), the point where FPR = FNR: it walks the ROC polyline and returns the exact crossing.
  ``rule="nearest"`` is the rule of NIST's older scorer lineage: the ROC point where |FPR - FNR| is
  smallest (first one on a tie), reporting (FPR + FNR) / 2 there; :func:`summarize` reports it as
  ``eer_nearest``.
* **Partial AUC** (:func:`partial_auc`): the raw area under the ROC curve from FPR 0 to ``max_fpr``,
  closing the last segment by linear interpolation at ``max_fpr`` (as scikit-learn does); NIST's scorer
  instead drops the segment crossing ``max_fpr`` (``interpolate=False``). :func:`partial_auc_mcclish`
  gives the McClish-standardized value scikit-learn's ``roc_auc_score(max_fpr=...)`` reports
  (0.5 = chance, 1 = perfect on that range).
* **Cross-entropy** (TrojAI log score): predictions are clipped to [1e-12, 1 - 1e-12] first, so one
  confident wrong answer costs about 27.63 instead of infinity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Literal

import numpy as np

EPS = 1e-12
"""Clip for the log score, as on the TrojAI leaderboard."""

Z_VALUES = {90: 1.64, 95: 1.96, 98: 2.33, 99: 2.58}
"""The normal quantiles TrojAI multiplies the standard error by, per confidence level in percent."""


class SingleClassError(ValueError):
    """A ranking metric was asked of trials that are all targets or all non-targets."""


# --------------------------------------------------------------------------------------------------
# input checks


def _labels(y_true: object) -> np.ndarray:
    y = np.asarray(y_true)
    if y.ndim != 1:
        raise ValueError(f"labels must be one-dimensional, got shape {y.shape}")
    if y.dtype == bool:
        return y
    if y.size and not np.isin(y, (0, 1)).all():
        bad = y[~np.isin(y, (0, 1))][:3]
        raise ValueError(f"labels must be 0/1 (1 = target), got {bad.tolist()}")
    return y.astype(bool)


def _scores(y_score: object, n: int, what: str = "scores") -> np.ndarray:
    s = np.asarray(y_score, dtype=np.float64)
    if s.ndim != 1 or s.shape[0] != n:
        raise ValueError(f"{what} must be one-dimensional with {n} entries, got shape {s.shape}")
    if not np.isfinite(s).all():
        raise ValueError(f"{what} must be finite; {int((~np.isfinite(s)).sum())} are not")
    return s


def _pair(y_true: object, y_score: object) -> tuple[np.ndarray, np.ndarray]:
    y = _labels(y_true)
    if y.size == 0:
        raise ValueError("no trials")
    return y, _scores(y_score, y.size)


def _both_classes(y: np.ndarray, what: str) -> tuple[int, int]:
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        raise SingleClassError(
            f"{what} needs both targets and non-targets; got {n_pos} targets and {n_neg} non-targets"
        )
    return n_pos, n_neg


def _probabilities(y_true: object, y_prob: object) -> tuple[np.ndarray, np.ndarray]:
    y, p = _pair(y_true, y_prob)
    if ((p < 0) | (p > 1)).any():
        raise ValueError("probabilities must lie in [0, 1]")
    return y, p


# --------------------------------------------------------------------------------------------------
# ROC


@dataclass(frozen=True)
class Roc:
    """ROC points in increasing FPR order, one per distinct score plus the (0, 0) start.

    ``thresholds[k]`` is the score at or above which trials are declared targets to reach point k
    (``+inf`` for the start). ``tp``/``fp`` are the integer counts behind the rates.
    """

    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    n_pos: int
    n_neg: int

    @property
    def fnr(self) -> np.ndarray:
        return 1.0 - self.tpr


def _grouped_counts(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Targets and non-targets per distinct score, highest score first: (scores, pos, neg)."""
    order = np.argsort(-s, kind="stable")
    s_sorted = s[order]
    y_sorted = y[order]
    # group starts: where the sorted score changes
    starts = np.flatnonzero(np.r_[True, s_sorted[1:] != s_sorted[:-1]])
    pos = np.add.reduceat(y_sorted.astype(np.int64), starts)
    size = np.diff(np.r_[starts, s.size])
    return s_sorted[starts], pos, size - pos


def roc_points(y_true: object, y_score: object) -> Roc:
    """ROC curve: one point per distinct score threshold, ties giving diagonal segments. O(n log n)."""
    y, s = _pair(y_true, y_score)
    n_pos, n_neg = _both_classes(y, "a ROC curve")
    values, pos, neg = _grouped_counts(y, s)
    tp = np.r_[0, np.cumsum(pos)]
    fp = np.r_[0, np.cumsum(neg)]
    return Roc(
        fpr=fp / n_neg,
        tpr=tp / n_pos,
        thresholds=np.r_[np.inf, values],
        tp=tp,
        fp=fp,
        n_pos=n_pos,
        n_neg=n_neg,
    )


def _auc_from_counts(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """AUC from per-score-group counts (last axis, highest score first); works on a batch of rows.

    Each non-target beats nothing and loses to every target above it, and ties count one half:
    AUC = sum_g neg_g * (targets above g + pos_g / 2) / (P * N). Kept in integers (times 2) until the
    final division so the result is exact to rounding.
    """
    pos = np.asarray(pos, dtype=np.int64)
    neg = np.asarray(neg, dtype=np.int64)
    above = np.cumsum(pos, axis=-1) - pos
    twice = (neg * (2 * above + pos)).sum(axis=-1)
    n_pos = pos.sum(axis=-1)
    n_neg = neg.sum(axis=-1)
    denom = 2 * n_pos * n_neg
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, twice / np.where(denom > 0, denom, 1), np.nan)


def auc(y_true: object, y_score: object) -> float:
    """Area under the ROC curve, equal to the Mann-Whitney U / (P N) with ties counted one half."""
    y, s = _pair(y_true, y_score)
    _both_classes(y, "AUC")
    _, pos, neg = _grouped_counts(y, s)
    return float(_auc_from_counts(pos, neg))


def partial_auc(
    y_true: object, y_score: object, max_fpr: float = 0.1, *, interpolate: bool = True
) -> float:
    """Raw area under the ROC curve for FPR in [0, max_fpr] (at most ``max_fpr``).

    ``interpolate=True`` closes the area with the ROC value at ``max_fpr`` interpolated along the
    segment that crosses it (scikit-learn's rule). ``interpolate=False`` sums only the trapezoids whose
    right end is at or left of ``max_fpr`` (NIST DetectionScorer's rule), which undercounts between the
    last ROC point and ``max_fpr``.

    Library API: no command calls it (they report the same area through :func:`summarize`); it is
    kept for callers that want one figure with the NIST rule.
    """
    _check_fpr(max_fpr)
    roc = roc_points(y_true, y_score)
    return _partial_area(roc.fpr, roc.tpr, max_fpr, interpolate)


def _check_fpr(value: float, name: str = "max_fpr") -> None:
    if not (0.0 < value <= 1.0):
        raise ValueError(f"{name} must be in (0, 1], got {value}")


def _partial_area(fpr: np.ndarray, tpr: np.ndarray, max_fpr: float, interpolate: bool) -> float:
    stop = int(np.searchsorted(fpr, max_fpr, side="right"))
    x, y = fpr[:stop], tpr[:stop]
    if interpolate and stop < fpr.size and x[-1] < max_fpr:
        y_end = np.interp(max_fpr, fpr[stop - 1 : stop + 1], tpr[stop - 1 : stop + 1])
        x, y = np.r_[x, max_fpr], np.r_[y, y_end]
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))


def partial_auc_mcclish(y_true: object, y_score: object, max_fpr: float = 0.1) -> float:
    """McClish-standardized partial AUC, the value of scikit-learn's ``roc_auc_score(max_fpr=...)``.

    Maps the raw area between the chance diagonal's area (max_fpr^2 / 2) and the perfect area
    (max_fpr) onto [0.5, 1]: 0.5 + 0.5 (A - min) / (max - min). ``max_fpr=1`` gives the full AUC.

    Library API: no command calls it; the commands get the same value as ``pauc_mcclish`` from
    :func:`summarize` (both go through ``_mcclish``).
    """
    _check_fpr(max_fpr)
    if max_fpr == 1.0:
        return auc(y_true, y_score)
    return _mcclish(partial_auc(y_true, y_score, max_fpr, interpolate=True), max_fpr)


def _mcclish(raw: float, max_fpr: float) -> float:
    """McClish standardization of a raw partial area over FPR [0, max_fpr] (max_fpr < 1)."""
    lo, hi = 0.5 * max_fpr**2, max_fpr
    return 0.5 * (1.0 + (raw - lo) / (hi - lo))


def tpr_at_fpr(
    y_true: object, y_score: object, fpr: float = 0.1, *, rule: Literal["nist", "max"] = "nist"
) -> float:
    """TPR at a given FPR; see the module docstring for the two rules."""
    if not (0.0 <= fpr <= 1.0):
        raise ValueError(f"fpr must be in [0, 1], got {fpr}")
    roc = roc_points(y_true, y_score)
    return _tpr_at(roc, fpr, rule)


def _tpr_at(roc: Roc, x0: float, rule: str) -> float:
    fprs, tprs = roc.fpr, roc.tpr
    if rule == "max":
        return float(tprs[np.searchsorted(fprs, x0, side="right") - 1])
    if rule != "nist":
        raise ValueError(f"unknown TPR@FPR rule {rule!r}; use 'nist' or 'max'")
    hit = np.flatnonzero(fprs == x0)
    if hit.size:
        return float(tprs[hit].min())  # a vertical run at exactly x0: its lowest TPR
    right = int(np.searchsorted(fprs, x0, side="right"))  # first point with FPR > x0
    left = right - 1  # last point with FPR < x0 (the highest TPR of that FPR)
    x1, x2, y1, y2 = fprs[left], fprs[right], tprs[left], tprs[right]
    return float(y1 + (y2 - y1) * (x0 - x1) / (x2 - x1))


# --------------------------------------------------------------------------------------------------
# DET and EER

# Acklam's rational approximation of the inverse normal CDF (relative error < 1.15e-9), refined below.
_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
      1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)  # fmt: skip
_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
      6.680131188771972e01, -1.328068155288572e01)  # fmt: skip
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
      -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)  # fmt: skip
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
_P_LOW = 0.02425
_ERFC = np.vectorize(math.erfc, otypes=[np.float64])


def _poly(coeffs: tuple[float, ...], x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    for c in coeffs:
        out = out * x + c
    return out


def probit(p: object) -> np.ndarray:
    """Inverse standard-normal CDF, numpy only: Acklam's approximation plus one Halley step.

    The Halley step uses the exact CDF (via ``math.erfc``) and brings the result to full double
    precision. ``probit(0) = -inf``, ``probit(1) = +inf``, NaN outside [0, 1].
    """
    p = np.asarray(p, dtype=np.float64)
    scalar = p.ndim == 0
    p = np.atleast_1d(p)
    x = np.full(p.shape, np.nan)
    x[p == 0] = -np.inf
    x[p == 1] = np.inf
    inner = (p > 0) & (p < 1)
    q = p[inner]
    # work on the lower half: 1 - q is exact for q > 0.5, and Phi(z) - r keeps full relative
    # precision only while Phi(z) is small; the upper half follows by symmetry
    upper = q > 0.5
    r = np.where(upper, 1.0 - q, q)
    z = np.empty_like(r)
    low = r < _P_LOW
    mid = ~low
    d = r[mid] - 0.5
    dd = d * d
    z[mid] = _poly(_A, dd) * d / (_poly(_B, dd) * dd + 1.0)
    t = np.sqrt(-2.0 * np.log(r[low]))
    z[low] = _poly(_C, t) / (_poly(_D, t) * t + 1.0)
    if z.size:
        # Halley refinement: e = Phi(z) - r, with Phi from erfc
        e = 0.5 * _ERFC(-z / math.sqrt(2.0)) - r
        u = e * math.sqrt(2.0 * math.pi) * np.exp(z * z / 2.0)
        z = z - u / (1.0 + z * u / 2.0)
    z = np.where(upper, -z, z)
    x[inner] = z
    return x[0] if scalar else x


@dataclass(frozen=True)
class Det:
    """DET points: error rates and their normal deviates (probit; +-inf at rates 0 and 1)."""

    fpr: np.ndarray
    fnr: np.ndarray
    thresholds: np.ndarray

    @property
    def x(self) -> np.ndarray:
        return probit(self.fpr)

    @property
    def y(self) -> np.ndarray:
        return probit(self.fnr)


def det_points(y_true: object, y_score: object) -> Det:
    """DET curve (FNR against FPR, drawn on normal-deviate axes) at every ROC point."""
    roc = roc_points(y_true, y_score)
    return Det(fpr=roc.fpr, fnr=roc.fnr, thresholds=roc.thresholds)


def eer(
    y_true: object, y_score: object, *, rule: Literal["nearest", "interpolated"] = "interpolated"
) -> float:
    """Equal error rate: where FPR = FNR (default ``interpolated``), or at the ``nearest`` ROC point."""
    return _eer(roc_points(y_true, y_score), rule)


def _eer(roc: Roc, rule: str) -> float:
    fpr, fnr = roc.fpr, roc.fnr
    # FNR - FPR scaled by P N, in integers: exact ties stay ties ("first one" is then well defined)
    d_int = (roc.n_pos - roc.tp) * roc.n_neg - roc.fp * roc.n_pos
    if rule == "nearest":
        k = int(np.argmin(np.abs(d_int)))
        return float((fpr[k] + fnr[k]) / 2.0)
    if rule != "interpolated":
        raise ValueError(f"unknown EER rule {rule!r}; use 'nearest' or 'interpolated'")
    # d = FNR - FPR falls from +1 at (0, 0) to -1 at (1, 1) without ever rising
    d = fnr - fpr
    k = int(np.argmax(d_int <= 0))
    if d_int[k] == 0:
        return float(fpr[k])
    t = d[k - 1] / (d[k - 1] - d[k])
    return float(fpr[k - 1] + t * (fpr[k] - fpr[k - 1]))


# --------------------------------------------------------------------------------------------------
# calibration: Brier and log score


def brier(y_true: object, y_prob: object) -> float:
    """Mean squared difference between the target probability and the outcome (NIST, 6.5)."""
    y, p = _probabilities(y_true, y_prob)
    return float(np.mean((p - y) ** 2))


def cross_entropy_elementwise(y_true: object, y_prob: object, eps: float = EPS) -> np.ndarray:
    """Per-trial log score -[y log p + (1 - y) log(1 - p)] with p clipped to [eps, 1 - eps]."""
    y, p = _probabilities(y_true, y_prob)
    p = np.clip(p, eps, 1.0 - eps)
    return -np.where(y, np.log(p), np.log1p(-p))


def cross_entropy(y_true: object, y_prob: object, eps: float = EPS) -> float:
    """TrojAI log score: the mean clipped cross-entropy."""
    return float(np.mean(cross_entropy_elementwise(y_true, y_prob, eps)))


def ci_half_widths(values: object, levels: tuple[int, ...] = (90, 95, 98, 99)) -> dict[int, float]:
    """TrojAI confidence half-widths of a mean: z * std(ddof=0) / sqrt(n) per level (90/95/98/99)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        raise ValueError("no values")
    unknown = [lv for lv in levels if lv not in Z_VALUES]
    if unknown:
        raise ValueError(f"confidence levels must be among {sorted(Z_VALUES)}, got {unknown}")
    se = float(np.std(v) / math.sqrt(v.size))
    return {lv: Z_VALUES[lv] * se for lv in levels}


# --------------------------------------------------------------------------------------------------
# bootstrap


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

    Library API (issue 5): no command calls it; the commands use :func:`bootstrap_auc` and
    :func:`bootstrap_ranking`. It serves metrics those two do not cover, such as Brier or TPR@FPR
    under the ``max`` rule.
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


def ranking_metrics(roc: Roc, far_stop: float = 0.1) -> dict[str, float]:
    """The ranking figures of one ROC: AUC, raw and McClish pAUC, TPR@FPR (NIST rule), EER (the
    FPR = FNR crossing; ``eer_interp`` repeats it under its former name)."""
    _check_fpr(far_stop, "far_stop")
    area = float(_auc_from_counts(np.diff(roc.tp), np.diff(roc.fp)))  # the exact count path of auc()
    raw = _partial_area(roc.fpr, roc.tpr, far_stop, True)
    return {
        "auc": area,
        "pauc": raw,
        "pauc_mcclish": area if far_stop == 1.0 else _mcclish(raw, far_stop),
        "tpr_at_fpr": _tpr_at(roc, far_stop, "nist"),
        "eer": _eer(roc, "interpolated"),
        "eer_interp": _eer(roc, "interpolated"),
    }


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


# --------------------------------------------------------------------------------------------------
# prevalence sweep (TrojAI "trojan percentage" analysis)


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
    rates: object = range(1, 100),
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
    (:mod:`checklist_eval.trojai`).
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
    cols = list(zip(*rows)) if rows else [()] * 7
    return Sweep(*(np.asarray(c) for c in cols))


def _subset_metrics(y: np.ndarray, p: np.ndarray, rate: float) -> tuple:
    p = np.where(np.isnan(p), rate, p)
    n_t = int(y.sum())
    a = auc(y, p) if 0 < n_t < y.size else float("nan")
    return y.size, n_t, cross_entropy(y, p), brier(y, p), a


# --------------------------------------------------------------------------------------------------
# everything at once


def summarize(
    y_true: object,
    y_score: object,
    y_prob: object | None = None,
    *,
    far_stop: float = 0.1,
) -> dict[str, float | int]:
    """Every scalar metric of one system, with NaN for ranking metrics on single-class input.

    ``y_prob`` (probability of a target) feeds Brier and cross-entropy; when omitted the scores are
    used if they all lie in [0, 1], otherwise those two are NaN.
    """
    y, s = _pair(y_true, y_score)
    n_pos = int(y.sum())
    out: dict[str, float | int] = {"n": int(y.size), "n_target": n_pos, "n_nontarget": y.size - n_pos}
    nan = float("nan")
    try:
        roc = roc_points(y, s)
        out.update(ranking_metrics(roc, far_stop))
        out["eer_nearest"] = _eer(roc, "nearest")
    except SingleClassError:
        out.update(auc=nan, pauc=nan, pauc_mcclish=nan, tpr_at_fpr=nan, eer=nan, eer_interp=nan, eer_nearest=nan)
    p = s if y_prob is None else _scores(y_prob, y.size, "probabilities")
    if ((p >= 0) & (p <= 1)).all():
        out.update(brier=brier(y, p), cross_entropy=cross_entropy(y, p))
    else:
        out.update(brier=nan, cross_entropy=nan)
    return out
