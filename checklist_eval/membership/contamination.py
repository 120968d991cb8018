"""Has a language model seen a text? Membership scores from token log-probabilities.

Each method turns the log-probabilities a model gave the tokens of a text (natural log, one per
token, as a completions endpoint with ``echo`` returns them) into one number. Every score is oriented
the same way: **higher means "more likely seen"** (a member of the training data).

* ``slope``: least-squares slope of the token probability exp(logprob) against position 0..n-1
  (the perplexity-slope document's LinearRegression coefficient). A model that recognises a text grows
  more confident as it reads on.
* ``slope_ngram``: the same slope on p(token | whole prefix) - p(token | n preceding tokens), which
  discounts tokens that are easy from local context alone (document section 2.1). Needs the n-gram
  log-probabilities (``ngram_logprobs``); a token without one counts as not adjusted (difference 0).
* ``slope_mean``: the slope divided by |mean| of the same probabilities (n-gram adjusted when the
  n-gram log-probabilities are there, raw otherwise). The absolute value keeps the sign of the slope
  when the adjusted mean is negative.
* ``slope_z``: the slope divided by the standard deviation (ddof 0) of the same probabilities.
* ``min_k``: mean of the lowest int(k n) (at least one) token log-probabilities (Min-K%, k = 0.2 by default): a seen
  text has few surprising tokens.
* ``min_k_pp``: Min-K%++: per token (log p - mu) / sigma, with mu and sigma the mean and standard
  deviation of log p(z) for z drawn from the model's next-token distribution, then the mean of the
  lowest int(k n) (at least one). Exact when the input gives ``vocab_mu``/``vocab_sigma`` per token; otherwise
  **approximated from the top-k log-probabilities**: the distribution is cut to the top-k tokens plus
  the actual one, renormalised, and mu/sigma are taken over that (see :func:`topk_moments`).

A score that cannot be computed (fewer than 2 tokens for a slope, a zero divisor, no top-k
log-probabilities for Min-K%++, no n-gram log-probabilities for ``slope_ngram``) is ``None``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from checklist_eval.errors import InputError
from checklist_eval.fsutil import loads_json
from checklist_eval.membership.methods import METHODS
from checklist_eval.membership.slope import Slope, fit_slope
from checklist_eval.models import Model
from checklist_eval.summaries import OptionalParts

if TYPE_CHECKING:
    from checklist_eval.reading.isolation import ParseLimits


MEANINGS = {
    "slope": "rise of token probability per token (least-squares slope); > 0: the model grows more "
             "confident as it reads",
    "slope_ngram": "the same slope after subtracting each token's probability given only its n "
                   "preceding tokens (discounts locally easy tokens)",
    "slope_mean": "slope / |mean probability| (n-gram adjusted when available): the rise relative to "
                  "the typical probability",
    "slope_z": "slope / standard deviation of the probabilities (n-gram adjusted when available)",
    "min_k": "mean log-probability of the k% least likely tokens (Min-K%); seen texts have fewer "
             "surprising tokens",
    "min_k_pp": "Min-K%++: mean of the k% lowest (log p - mu) / sigma, mu and sigma over the "
                "next-token distribution",
}  # fmt: skip

TOPK_NOTE = (
    "min_k_pp is approximated from the top-k log-probabilities: mu and sigma of log p are taken over "
    "the top-k tokens plus the actual one, their probabilities renormalised to sum to 1 (the exact value "
    "needs the whole vocabulary)"
)

MAX_FILE_BYTES = 1 << 30
MAX_LINE_BYTES = 64 << 20
MAX_TOKENS = 1_000_000
_POSITIVE_SLACK = 1e-6  # APIs round: a logprob of +1e-9 is a probability of 1


@dataclass
class TokenText:
    """One text's scored tokens: those with a log-probability (the first token of an echoed prompt has
    none and is dropped). Optional per-token fields are aligned with ``logprobs``."""

    id: str
    tokens: list[str]
    logprobs: np.ndarray
    top_logprobs: list[dict[str, float] | None] | None = None
    ngram_logprobs: np.ndarray | None = None  # NaN where the n-gram context gave no value
    vocab_mu: np.ndarray | None = None
    vocab_sigma: np.ndarray | None = None
    label: int | None = None

    @property
    def n_tokens(self) -> int:
        return int(self.logprobs.size)


def parse_methods(text: str | None) -> list[str]:
    """``--methods a,b`` to a list in the given order; every name must be one of :data:`METHODS`."""
    if not text:
        return list(METHODS)
    names = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in METHODS]
    if unknown or not names:
        raise InputError(None, f"--methods: unknown method(s) {', '.join(unknown) or '(none)'}; "
                               f"choose from {','.join(METHODS)}")  # fmt: skip
    return list(dict.fromkeys(names))


# ------------------------------------------------------------------------------------------- methods


def _finite_or_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _fit(values: np.ndarray | None) -> Slope | None:
    """The perplexity-slope fit of ``values``; None where there is no line (no values, or fewer than 2)."""
    return fit_slope(values) if values is not None and values.size >= 2 else None


def min_k(logprobs: np.ndarray, k: float = 0.2) -> float | None:
    """Mean of the lowest int(k n) log-probabilities, at least one.

    int, not ceil: both published implementations (Min-K% and Min-K%++) truncate k n."""
    if logprobs.size == 0:
        return None
    m = max(1, int(k * logprobs.size))
    return float(np.sort(logprobs)[:m].mean())


def topk_moments(actual_token: str, actual_lp: float, top: dict[str, float]) -> tuple[float, float]:
    """(mu, sigma) of log p(z) under the next-token distribution cut to the top-k tokens plus the
    actual one, renormalised. The log-probabilities themselves are the model's (not renormalised):
    only the weights are, so mu is a weighted mean of the true log p of the likeliest tokens."""
    support = dict(top)
    support.setdefault(actual_token, actual_lp)
    lps = np.array(list(support.values()), dtype=np.float64)
    w = np.exp(lps - lps.max())
    w /= w.sum()
    mu = float(np.dot(w, lps))
    var = float(np.dot(w, (lps - mu) ** 2))
    return mu, math.sqrt(max(var, 0.0))


def min_k_pp_tokens(text: TokenText) -> np.ndarray | None:
    """Per-token (log p - mu) / sigma; NaN where sigma is 0 (a one-token support says nothing)."""
    lp = text.logprobs
    if text.vocab_mu is not None and text.vocab_sigma is not None:
        mu, sigma = text.vocab_mu, text.vocab_sigma
    elif text.top_logprobs is not None:
        pairs = [topk_moments(tok, float(v), top) if top else (math.nan, math.nan)
                 for tok, v, top in zip(text.tokens, lp, text.top_logprobs, strict=False)]  # fmt: skip
        mu = np.array([a for a, _ in pairs])
        sigma = np.array([b for _, b in pairs])
    else:
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (lp - mu) / sigma
    return np.where(sigma > 0, z, np.nan)


def adjusted_probabilities(text: TokenText) -> np.ndarray | None:
    """p(token | prefix) - p(token | n preceding tokens); 0 where the n-gram value is missing."""
    if text.ngram_logprobs is None:
        return None
    p = np.exp(text.logprobs)
    ref = np.where(np.isnan(text.ngram_logprobs), text.logprobs, text.ngram_logprobs)
    return p - np.exp(ref)


class TextScores(Model):
    """One text's (or paper chunk's) score per method; None where the method has no value for it."""

    id: str
    n_tokens: int
    scores: dict[str, float | int | None]


class ContaminationReport(OptionalParts):
    """``contamination --json``: the scores per text; for a paper also how it was cut and asked, and
    its token-weighted scores (from ``--logprobs`` only ``texts``)."""

    paper: str | None = None
    model: str | None = None
    chunk_words: int | None = None
    k: float | None = None
    ngram: int | None = None
    texts: list[TextScores]
    paper_scores: dict[str, float | int | None] | None = None
    n_tokens: int | None = None
    meanings: dict[str, str] | None = None
    notes: list[str] | None = None


def score_text(text: TokenText, methods: list[str] | tuple[str, ...] = METHODS, k: float = 0.2
               ) -> dict[str, float | None]:
    """One score per method, in the order asked; see the module docstring."""
    adjusted = adjusted_probabilities(text)
    raw, ngram = _fit(np.exp(text.logprobs)), _fit(adjusted)
    basis = ngram if adjusted is not None else raw  # the normalized slopes use the adjusted line when there is one
    out: dict[str, float | None] = {}
    for m in methods:
        if m == "slope":
            out[m] = raw.slope if raw is not None else None
        elif m == "slope_ngram":
            out[m] = ngram.slope if ngram is not None else None
        elif m == "slope_mean":
            out[m] = basis.mean_normalized if basis is not None else None
        elif m == "slope_z":
            out[m] = basis.z_normalized if basis is not None else None
        elif m == "min_k":
            out[m] = min_k(text.logprobs, k)
        elif m == "min_k_pp":
            z = min_k_pp_tokens(text)
            z = z[~np.isnan(z)] if z is not None else None
            out[m] = min_k(z, k) if z is not None else None
        else:
            raise ValueError(f"unknown method {m!r}")
    return {m: (_finite_or_none(v) if v is not None else None) for m, v in out.items()}


def weighted_scores(scored: list[tuple[int, dict[str, float | None]]], methods) -> dict[str, float | None]:
    """A paper's score per method: the token-weighted mean of its chunks' scores (chunks restart the
    model's context, so a slope over the whole paper would mix unrelated runs)."""
    out: dict[str, float | None] = {}
    for m in methods:
        pairs = [(n, v) for n, s in scored if (v := s.get(m)) is not None]
        total = sum(n for n, _ in pairs)
        out[m] = sum(n * v for n, v in pairs) / total if total else None
    return out


def check_k(k: float) -> float:
    if not 0.0 < k <= 1.0:
        raise InputError(None, f"--k must be in (0, 1], got {k}")
    return k


def uses_topk_approximation(texts: list[TokenText], methods) -> bool:
    return "min_k_pp" in methods and any(t.vocab_mu is None and t.top_logprobs is not None for t in texts)


# --------------------------------------------------------------------------------------- JSONL input


def _bad(where: tuple, problem: str) -> InputError:
    path, line = where
    return InputError(path, f"{line}: {problem}")


def _number_list(value, name: str, n: int | None, where, allow_null: bool = True) -> list:
    if not isinstance(value, list):
        raise _bad(where, f"{name} must be a list")
    if n is not None and len(value) != n:
        raise _bad(where, f"{name} has {len(value)} entries for {n} tokens")
    out = []
    for v in value:
        if v is None and allow_null:
            out.append(math.nan)
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            out.append(float(v))
        else:
            raise _bad(where, f"{name} must hold finite numbers, got {str(v)[:40]!r}")
    return out


def _top_entry(entry, where) -> dict[str, float] | None:
    """One token's alternatives: {token: logprob} or [{"token": t, "logprob": lp}, ...]."""
    if entry is None:
        return None
    if isinstance(entry, dict):
        items = list(entry.items())
    elif isinstance(entry, list):
        try:
            items = [(e["token"], e["logprob"]) for e in entry]
        except (TypeError, KeyError):
            raise _bad(where, "top_logprobs entries must be {token: logprob} or "
                                     "[{\"token\": ..., \"logprob\": ...}]") from None  # fmt: skip
    else:
        raise _bad(where, "top_logprobs entries must be objects or lists")
    out = {}
    for tok, lp in items:
        if not isinstance(lp, (int, float)) or isinstance(lp, bool) or not math.isfinite(lp) or lp > _POSITIVE_SLACK:
            raise _bad(where, f"top_logprobs: {str(lp)[:40]!r} is not a log-probability")
        out[str(tok)] = min(float(lp), 0.0)
    return out


def text_from_object(obj: dict, where: tuple, default_id: str) -> TokenText:
    """A :class:`TokenText` from one JSONL object (``id``, ``tokens``, ``logprobs``, optional
    ``top_logprobs``, ``ngram_logprobs``, ``vocab_mu``, ``vocab_sigma``, ``label``)."""
    tokens = obj.get("tokens")
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        raise _bad(where, "tokens must be a list of strings")
    if len(tokens) > MAX_TOKENS:
        raise _bad(where, f"more than {MAX_TOKENS} tokens")
    n = len(tokens)
    lp = np.array(_number_list(obj.get("logprobs"), "logprobs", n, where))
    if (lp > _POSITIVE_SLACK).any():
        raise _bad(where, "logprobs must be natural-log probabilities (<= 0)")
    keep = ~np.isnan(lp)  # the first token of an echoed prompt has no log-probability
    idx = np.flatnonzero(keep)
    text = TokenText(id=str(obj.get("id", default_id)), tokens=[tokens[i] for i in idx],
                     logprobs=np.minimum(lp[keep], 0.0), label=_label(obj.get("label"), where))  # fmt: skip
    if obj.get("top_logprobs") is not None:
        tops = obj["top_logprobs"]
        if not isinstance(tops, list) or len(tops) != n:
            raise _bad(where, f"top_logprobs must be a list with one entry per token ({n})")
        text.top_logprobs = [_top_entry(tops[i], where) for i in idx]
    for name in ("ngram_logprobs", "vocab_mu", "vocab_sigma"):
        if obj.get(name) is not None:
            values = np.array(_number_list(obj[name], name, n, where))[keep]
            setattr(text, name, values)
    if (text.vocab_mu is None) != (text.vocab_sigma is None):
        raise _bad(where, "vocab_mu and vocab_sigma come together")
    return text


def _label(value, where) -> int | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value in (0, 1):
        return int(value)
    raise _bad(where, f"label must be 0 or 1, got {str(value)[:20]!r}")


def iter_jsonl(path: str | Path):
    """(line number, object) for each non-blank line; bounded in file and line size."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise InputError(path, f"larger than {MAX_FILE_BYTES >> 20} MiB")
    with path.open("rb") as fh:
        for n, raw in enumerate(iter(lambda: fh.readline(MAX_LINE_BYTES + 1), b""), start=1):
            if len(raw) > MAX_LINE_BYTES:
                raise InputError(path, f"line {n}: longer than {MAX_LINE_BYTES >> 20} MiB")
            if not raw.strip():
                continue
            try:
                obj = loads_json(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise InputError(path, f"line {n}: not UTF-8") from None
            except json.JSONDecodeError as err:
                raise InputError(path, f"line {n}: not JSON ({err.msg})") from None
            if not isinstance(obj, dict):
                raise InputError(path, f"line {n}: expected a JSON object")
            yield n, obj


def read_logprob_jsonl(path: str | Path) -> list[TokenText]:
    """Every text of a logprob JSONL file; one clear error for the first bad line."""
    texts = [text_from_object(obj, (path, f"line {n}"), f"line-{n}") for n, obj in iter_jsonl(path)]
    if not texts:
        raise InputError(path, "no texts")
    return texts


def chunk_words(text: str, n_words: int) -> list[str]:
    """Consecutive chunks of ``n_words`` whitespace-separated words (the last may be shorter)."""
    words = text.split()
    return [" ".join(words[i:i + n_words]) for i in range(0, len(words), n_words)]


def paper_text(path: str | Path, limits: ParseLimits | None = None) -> str:
    """Title, abstract and body of a paper as a reader sees them, read in a parsing worker under
    ``limits`` (the door every participant's file comes in by)."""
    from checklist_eval.reading.isolation import ParserPool

    with ParserPool(1, limits) as pool:
        return pool.reading_text(path)
