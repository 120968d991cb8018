"""The loopback server's ``POST /v1/completions``: a deterministic stand-in for a base model that
returns prompt log-probabilities (``echo=true`` with ``logprobs=k``, as vLLM and legacy OpenAI do).

The mock "model" has seen a fixed, pseudo-random half of all texts: a prompt of at least
:data:`SEEN_MIN_WORDS` words is *seen* when a hash of its first words falls below 0.5 (:func:`is_seen`).
Short prompts (the n-gram contexts of the perplexity-slope method) are never seen.

Each token's log-probability starts from a value that depends only on the token and the one before
it (so a 2-token n-gram context reproduces it), plus a little context jitter. Along a seen text the
model grows confident: the log-probability shrinks linearly (by a text-dependent 0-90 % by its end),
so the probability rises with position, which is what the membership scores look for.
``top_logprobs`` lists the actual token and made-up alternatives sharing the rest of the probability
mass, largest first. With ``max_tokens`` >= 1 the mock generates one token (" the") after the prompt;
a model whose name ends in ``-max-tokens-1`` refuses ``max_tokens=0``, as some server versions do,
and one ending in ``-prompt-logprobs-only`` echoes no log-probabilities but answers vLLM's
``prompt_logprobs=k`` (per prompt token ``{token_id: {logprob, rank, decoded_token}}``, the prompt
token first, then the top k).
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from checklist_eval.testing.verdicts import tokenize, unit_interval

SEEN_MIN_WORDS = 12
NO_ZERO_MAX_TOKENS = "-max-tokens-1"  # a model name ending so refuses max_tokens=0, as some servers do
PROMPT_LOGPROBS_ONLY = "-prompt-logprobs-only"  # ... echoes no log-probabilities: vLLM's prompt_logprobs only
MAX_PROMPTS = 1024
MAX_TOP = 20


def is_seen(text: str) -> bool:
    """Whether the mock model "trained on" this text (a pure function of its first words)."""
    words = text.split()
    if len(words) < SEEN_MIN_WORDS:
        return False
    return unit_interval("seen\x00" + " ".join(words[:SEEN_MIN_WORDS])) < 0.5


def prompt_logprobs(text: str) -> tuple[list[str], list[float | None]]:
    """(tokens, log-probabilities) of a prompt; the first token has none, as with a real model."""
    tokens = tokenize(text)
    seen = is_seen(text)
    strength = 0.9 * unit_interval("strength\x00" + text[:200])  # how well the model remembers this text
    n = len(tokens)
    out: list[float | None] = [None] if tokens else []
    rolling = hashlib.sha256()
    if tokens:
        rolling.update(tokens[0].encode("utf-8"))
    for i in range(1, n):
        base = -(0.3 + 5.0 * unit_interval(f"{tokens[i - 1]}\x00{tokens[i]}"))
        jitter = 0.6 * (int.from_bytes(rolling.digest()[:8], "big") / 2**64 - 0.5)
        rolling.update(tokens[i].encode("utf-8"))
        if seen:
            lp = base * (1.0 - strength * i / max(n - 1, 1))
        else:
            lp = base + jitter
        out.append(min(lp, -0.01))
    return tokens, out


def _top(token: str, lp: float, k: int) -> dict[str, float]:
    """The k likeliest next tokens: the actual one and alternatives taking halves of the rest."""
    rest = 1.0 - math.exp(lp)
    cands = {token: lp}
    for j in range(k):
        q = rest * 0.5 ** (j + 1)
        if q <= 0:
            break
        cands.setdefault(f" alt{j}", math.log(q))
    return dict(sorted(cands.items(), key=lambda kv: -kv[1])[:k])


GENERATED = " the"  # the one token the mock generates when asked for any


def _choice(index: int, prompt: str, echo: bool, k: int | None, generate: int) -> dict[str, Any]:
    tokens, lps = prompt_logprobs(prompt)
    if not echo:
        tokens, lps = [], []
    tokens, lps = [*tokens, *[GENERATED] * generate], [*lps, *[-1.0] * generate]
    logprobs = None
    if k is not None:
        offsets, pos = [], 0 if echo else len(prompt)
        for t in tokens:
            offsets.append(pos)
            pos += len(t)
        logprobs = {
            "tokens": tokens, "token_logprobs": lps, "text_offset": offsets,
            "top_logprobs": [None if lp is None else _top(t, lp, k) for t, lp in zip(tokens, lps, strict=True)] if k > 0
            else None,
        }  # fmt: skip
    text = (prompt if echo else "") + GENERATED * generate
    return {"index": index, "text": text, "logprobs": logprobs, "finish_reason": "length"}


def _token_id(token: str) -> str:
    return str(int(unit_interval("id\x00" + token) * 100_000))


def _vllm_prompt_logprobs(prompt: str, k: int) -> list[dict[str, Any] | None]:
    tokens, lps = prompt_logprobs(prompt)
    out: list[dict[str, Any] | None] = []
    for tok, lp in zip(tokens, lps, strict=True):
        if lp is None:
            out.append(None)
            continue
        top = _top(tok, lp, max(k, 1))
        ranked = {t: r for r, t in enumerate(top, start=1)}
        entry = {_token_id(tok): {"logprob": lp, "rank": ranked.get(tok, len(top) + 1), "decoded_token": tok}}
        for t, v in list(top.items())[:k]:
            entry.setdefault(_token_id(t), {"logprob": v, "rank": ranked[t], "decoded_token": t})
        out.append(entry)
    return out


def completions_reply(req: Any, model: str, zero_fills: int = 0) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON body) for a completions request. ``zero_fills``: tokens generated for
    ``max_tokens=0`` (llama-cpp-python's server reads 0 as "until the context is full": the real one
    generated to its 2048-token context for every echo request sent with 0)."""
    if not isinstance(req, dict) or "prompt" not in req:
        return 400, _error("request body is not a completion request")
    prompt = req["prompt"]
    prompts = [prompt] if isinstance(prompt, str) else prompt
    if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
        return 400, _error("prompt must be a string or a list of strings (token ids are not supported here)")
    if len(prompts) > MAX_PROMPTS:
        return 400, _error(f"at most {MAX_PROMPTS} prompts per request")
    k = req.get("logprobs")
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= MAX_TOP):
        return 400, _error(f"logprobs must be an integer in [0, {MAX_TOP}]")
    max_tokens = req.get("max_tokens", 16)
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
        return 400, _error("max_tokens must be a non-negative integer")
    if max_tokens == 0 and str(req.get("model", "")).endswith(NO_ZERO_MAX_TOKENS):
        return 400, _error("max_tokens must be at least 1, got 0.")
    echo = bool(req.get("echo"))
    no_echo_logprobs = str(req.get("model", "")).endswith(PROMPT_LOGPROBS_ONLY)
    generate = zero_fills if max_tokens == 0 else min(max_tokens, 1)
    choices = [_choice(i, p, echo, None if no_echo_logprobs and echo else k, generate)
               for i, p in enumerate(prompts)]  # fmt: skip
    pk = req.get("prompt_logprobs")
    if pk is not None:
        if not isinstance(pk, int) or isinstance(pk, bool) or not 0 <= pk <= MAX_TOP:
            return 400, _error(f"prompt_logprobs must be an integer in [0, {MAX_TOP}]")
        for c, p in zip(choices, prompts, strict=True):
            c["prompt_logprobs"] = _vllm_prompt_logprobs(p, pk)
    n_prompt = sum(len(tokenize(p)) for p in prompts)
    n_out = len(prompts) * generate
    return 200, {
        "id": "cmpl-mock", "object": "text_completion", "created": 0, "model": req.get("model", model),
        "choices": choices,
        "usage": {"prompt_tokens": n_prompt, "completion_tokens": n_out, "total_tokens": n_prompt + n_out},
    }  # fmt: skip


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
