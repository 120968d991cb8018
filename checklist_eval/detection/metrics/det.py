"""DET curves: error rates on normal-deviate axes, with a numpy-only probit."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from checklist_eval.detection.metrics.ranking import roc_points

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
