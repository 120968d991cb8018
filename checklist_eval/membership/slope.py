"""Perplexity slope: does a language model grow more confident as it reads a text it was trained on?

Given the probability the model gave each token of a text in turn (for example from an
OpenAI-compatible endpoint's ``logprobs`` over the paper's text), fit a least-squares line of
probability against token position. A rising line (positive slope) means the model predicts the text
better the further it reads, which is what a memorized text is expected to show.

Two normalizations make slopes comparable between texts whose tokens are easier or harder overall:

* **mean**: slope / |mean probability| (the rise relative to the typical probability). The absolute
  value matters after n-gram normalization, whose mean can be negative: dividing by a negative mean
  would turn a rising text into a falling one;
* **z-score**: slope / standard deviation of the probabilities (ddof=0), i.e. the slope of the line
  fitted to the z-scored probabilities.

Easy tokens (punctuation, common words) can be discounted first with an **n-gram reference**: pass
the probability of each token given only its n preceding tokens as ``reference`` and the slope is
fitted to ``p(token | whole prefix) - p(token | n preceding tokens)``.

The slopes are scores for a detector (higher = more likely a member of the training data) and can be
evaluated with :mod:`checklist_eval.detection.metrics` against known members and non-members.

``checklist-eval contamination`` and ``contamination-eval`` (:mod:`checklist_eval.membership.contamination`)
get the token log-probabilities from a completions endpoint or a JSONL file and score them with this.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Slope:
    """Least-squares line through (position, probability) and its normalized slopes.

    A normalized slope is NaN when its divisor is zero (all probabilities equal, or a mean of zero,
    which an n-gram-adjusted sequence can have).
    """

    slope: float
    intercept: float
    mean: float
    std: float
    mean_normalized: float
    z_normalized: float
    n_tokens: int


def probabilities_from_logprobs(logprobs: object) -> np.ndarray:
    """Natural-log token probabilities (as APIs return them) to probabilities."""
    lp = np.asarray(logprobs, dtype=np.float64)
    if lp.ndim != 1:
        raise ValueError(f"logprobs must be one-dimensional, got shape {lp.shape}")
    if np.isnan(lp).any() or (lp > 0).any():
        raise ValueError("logprobs must be numbers <= 0")
    return np.exp(lp)


def least_squares_line(values: object) -> tuple[float, float]:
    """(slope, intercept) of the ordinary least-squares line of values against positions 0..n-1."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size < 2:
        raise ValueError("a slope needs a one-dimensional sequence of at least 2 values")
    if not np.isfinite(v).all():
        raise ValueError("values must be finite")
    x = np.arange(v.size, dtype=np.float64)
    xc = x - x.mean()  # centred positions: the normal equations reduce to one division
    slope = float(np.dot(xc, v - v.mean()) / np.dot(xc, xc))
    return slope, float(v.mean() - slope * x.mean())


def _ratio(a: float, b: float) -> float:
    return a / b if b != 0 else float("nan")


def perplexity_slope(probabilities: object, *, reference: object | None = None) -> Slope:
    """Slope of token probability against position, with mean and z-score normalizations.

    ``reference`` (same length): each token's probability given only its n preceding tokens; it is
    subtracted first (n-gram normalization).
    """
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim == 1 and ((p < 0) | (p > 1)).any():
        raise ValueError("probabilities must lie in [0, 1]")
    if reference is not None:
        r = np.asarray(reference, dtype=np.float64)
        if r.shape != p.shape:
            raise ValueError(f"reference must have shape {p.shape}, got {r.shape}")
        if ((r < 0) | (r > 1)).any():
            raise ValueError("reference probabilities must lie in [0, 1]")
        p = p - r
    return fit_slope(p)


def fit_slope(values: object) -> Slope:
    """The least-squares line of ``values`` against position and its normalized slopes, on values
    already adjusted as wanted (no [0, 1] check: an n-gram-adjusted sequence may be negative)."""
    v = np.asarray(values, dtype=np.float64)
    slope, intercept = least_squares_line(v)
    mean, std = float(v.mean()), float(v.std())
    return Slope(slope, intercept, mean, std, _ratio(slope, abs(mean)), _ratio(slope, std), int(v.size))
