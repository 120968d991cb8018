"""p_correct: the probability of the verdict the model gave, from the verdict token's log-probabilities when
the endpoint returns usable ones (``logprob_p_correct``), else the model's self-reported ``p_correct`` where it
agrees with the verdict, else the verdict alone; always on the verdict's side of 0.5 (``on_verdict_side``)."""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["VERDICT_ONLY", "logprob_p_correct", "on_verdict_side"]

VERDICT_ONLY = 0.75  # p_correct of a "correct" verdict with no usable probability (0.25 for "incorrect")


def on_verdict_side(correct: bool, from_logprobs: float | None, stated: float) -> float:
    """p_correct for a verdict: the probability the logprobs give it when that agrees with the verdict, else the
    model's stated confidence when that does, else the verdict alone. A probability against the verdict the
    model gave is not the probability of that verdict (a grammar or a sampler chose the token, or the model
    contradicts itself), so it is never reported with it: a "correct" verdict gets p >= 0.5, an "incorrect"
    one p < 0.5."""
    for p in (from_logprobs, stated):
        if p is not None and math.isfinite(p) and 0.0 <= p <= 1.0 and (p >= 0.5) == correct:
            return p
    return VERDICT_ONLY if correct else 1.0 - VERDICT_ONLY


_JSON_VERDICT = re.compile(r'"correct"\s*:\s*(true|false)')
_TEXT_VERDICT = re.compile(r"verdict\s*:\s*\**\s*(correct|incorrect)", re.I)
# The spellings the verdict's value can take in each format: a token counts for a side only as (a piece of)
# one of them. "True" or "yes" among the alternatives is not a verdict a JSON reply could give (a grammar
# forbids it), so it says nothing about which verdict the model gave.
_JSON_SIDES = {True: "true", False: "false"}
_TEXT_SIDES = {True: "correct", False: "incorrect"}


def _polarity(token: str, sides: dict[bool, str], fold: bool) -> bool | None:
    # A tokenizer may merge the punctuation before the value into its token (``":true``, ``: false``).
    word = token.strip().lstrip('":,*').strip().rstrip('",}*')
    word = word.lower() if fold else word
    found = [side for side, spelling in sides.items() if word and spelling.startswith(word)]
    return found[0] if len(found) == 1 else None


def logprob_p_correct(text: str, content: list[Any] | None) -> float | None:
    """P(answer correct) from the logprobs of the verdict token, or None when they are not there.

    ``content`` is the OpenAI ``choices[0].logprobs.content`` list (objects or dicts with ``token``,
    ``logprob``, ``top_logprobs``). The token covering the verdict value ("true"/"false" in JSON,
    "correct"/"incorrect" after "Verdict:") is found by character offset; p = exp(lp) normalized over
    the true/false alternatives among its top_logprobs and the chosen token itself (llama.cpp's server lists
    the model's own top tokens, before a grammar or sampler chose, so the chosen one may be missing). When
    only one side appears, the other is bounded by the least likely listed alternative (it was not listed);
    with no other alternative listed, by the rest of the probability mass.
    """
    if not content or not isinstance(content, list):
        return None
    json_m = _JSON_VERDICT.search(text)
    m = json_m or _TEXT_VERDICT.search(text)
    if not m:
        return None
    sides, fold = (_JSON_SIDES, False) if json_m else (_TEXT_SIDES, True)
    target = m.start(1)
    offset = 0
    for entry in content:
        token = _get(entry, "token") or ""
        if offset + len(token) > target:
            return _normalize(entry, sides, fold)
        offset += len(token)
    return None


def _get(entry: Any, key: str) -> Any:
    return entry.get(key) if isinstance(entry, dict) else getattr(entry, key, None)


def _logprob(value: Any) -> float | None:
    """A log-probability, or None for anything that is not one (text, NaN, infinite, above 0: exp
    of a huge value would overflow); the caller then falls back to the model's stated confidence."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        lp = float(value)
    except OverflowError:  # an integer beyond float range
        return None
    return lp if math.isfinite(lp) and lp <= 1e-6 else None


def _normalize(entry: Any, sides: dict[bool, str], fold: bool) -> float | None:
    mass = {True: 0.0, False: 0.0}
    alternatives = _get(entry, "top_logprobs")
    if not isinstance(alternatives, list):
        alternatives = []
    seen: set[str] = set()
    for alt in [entry, *alternatives]:
        token = str(_get(alt, "token") or "")
        side = _polarity(token, sides, fold)
        lp = _logprob(_get(alt, "logprob"))
        if side is not None and lp is not None and token not in seen:  # the chosen token is listed once
            seen.add(token)
            mass[side] += math.exp(lp)
    if mass[True] == 0.0 and mass[False] == 0.0:
        return None
    if mass[True] > 0.0 and mass[False] > 0.0:
        return mass[True] / (mass[True] + mass[False])
    # One side listed: the other is not among the top alternatives, so it is at most as likely as the least
    # likely of them. Taking all the unlisted mass as the other side pulled p toward 0.5 where whitespace and
    # punctuation tokens held the rest.
    listed = [math.exp(lp) for alt in alternatives if (lp := _logprob(_get(alt, "logprob"))) is not None]
    seen_side = True if mass[True] > 0.0 else False
    other = min(listed) if listed and len(listed) > 1 else 1.0 - mass[seen_side]
    other = max(0.0, min(other, 1.0 - mass[seen_side]))
    share = mass[seen_side] / (mass[seen_side] + other) if mass[seen_side] + other > 0 else 1.0
    return share if seen_side else 1.0 - share
