"""Calibration metrics on probabilities of a target: Brier, the TrojAI log score and its intervals.

**Cross-entropy** (TrojAI log score): predictions are clipped to [1e-12, 1 - 1e-12] first, so one
confident wrong answer costs about 27.63 instead of infinity.
"""

from __future__ import annotations

import math

import numpy as np

from checklist_eval.detection.metrics.trials import _probabilities

EPS = 1e-12
"""Clip for the log score, as on the TrojAI leaderboard."""

Z_VALUES = {90: 1.64, 95: 1.96, 98: 2.33, 99: 2.58}
"""The normal quantiles TrojAI multiplies the standard error by, per confidence level in percent."""


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
