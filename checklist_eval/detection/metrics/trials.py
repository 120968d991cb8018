"""Input checks shared by every metric: labels, scores, probabilities and the single-class rule."""

from __future__ import annotations

import numpy as np


class SingleClassError(ValueError):
    """A ranking metric was asked of trials that are all targets or all non-targets."""



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
