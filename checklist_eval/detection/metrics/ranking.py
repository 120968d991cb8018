"""Ranking metrics from the ROC: the curve, AUC, partial AUC, TPR at FPR and EER.

Rules that differ between tools, and the choice made here:

* **ROC points**: one point per distinct score, starting at (0, 0) with threshold +inf. Tied scores of
  both classes move FPR and TPR together, which draws a diagonal segment; the area under that segment is
  what counts a tie as one half in the Mann-Whitney statistic.
* **TPR at FPR** (:func:`tpr_at_fpr`): the default ``rule="max"`` is the convention: the highest TPR
  a threshold reaches with FPR <= the requested FPR (on a vertical ROC step at exactly that FPR, the
  top of the step; no interpolation). ``rule="nist"`` is the older reading: the *lowest* TPR of a
  vertical run at exactly the FPR, otherwise TPR interpolated linearly between the last point left of
  the FPR and the first point right of it.
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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from checklist_eval.detection.metrics.trials import _both_classes, _pair


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
    y_true: object, y_score: object, fpr: float = 0.1, *, rule: Literal["nist", "max"] = "max"
) -> float:
    """TPR at a given FPR; see the module docstring for the two rules."""
    if not (0.0 <= fpr <= 1.0):
        raise ValueError(f"fpr must be in [0, 1], got {fpr}")
    roc = roc_points(y_true, y_score)
    return tpr_on_roc(roc, fpr, rule)


def tpr_on_roc(roc: Roc, x0: float, rule: str) -> float:
    """TPR at FPR ``x0`` on a ROC already computed (``rule`` as in :func:`tpr_at_fpr`), so a caller
    reporting several FPRs or other figures of the same curve sorts the trials once."""
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


def eer(
    y_true: object, y_score: object, *, rule: Literal["nearest", "interpolated"] = "interpolated"
) -> float:
    """Equal error rate: where FPR = FNR (default ``interpolated``), or at the ``nearest`` ROC point."""
    return eer_on_roc(roc_points(y_true, y_score), rule)


def eer_on_roc(roc: Roc, rule: str) -> float:
    """Equal error rate of a ROC already computed (``rule`` as in :func:`eer`)."""
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


def ranking_metrics(roc: Roc, far_stop: float = 0.1) -> dict[str, float]:
    """The ranking figures of one ROC: AUC, raw and McClish pAUC, TPR@FPR (highest TPR at FPR <= far_stop), EER (the
    FPR = FNR crossing; ``eer_interp`` repeats it under its former name)."""
    _check_fpr(far_stop, "far_stop")
    area = float(_auc_from_counts(np.diff(roc.tp), np.diff(roc.fp)))  # the exact count path of auc()
    raw = _partial_area(roc.fpr, roc.tpr, far_stop, True)
    return {
        "auc": area,
        "pauc": raw,
        "pauc_mcclish": area if far_stop == 1.0 else _mcclish(raw, far_stop),
        "tpr_at_fpr": tpr_on_roc(roc, far_stop, "max"),
        "eer": eer_on_roc(roc, "interpolated"),
        "eer_interp": eer_on_roc(roc, "interpolated"),
    }

