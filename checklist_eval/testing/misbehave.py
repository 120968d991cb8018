"""Misbehaving replies for the loopback server (``MockServer(misbehave=MODE)``): what a hostile or
broken OpenAI-compatible endpoint may send, so tests prove the client stays bounded and leaks nothing.

Every mode answers ``POST .../chat/completions``; the modes that need no model answer (drip, huge,
gzip-bomb, json-array, no-choices, echo-key-error) answer ``POST .../completions`` too. Streamed
modes stop when the client hangs up or after ``STREAM_LIMIT_S`` seconds / ``STREAM_LIMIT_BYTES``
bytes, so the server itself is bounded.

    echo-key-error    400 whose message quotes the Authorization header and a piece of the key
    echo-key-review   a valid verdict whose review and evidence quote the key and pieces of it
    drip              200 announcing 100 kB, then one byte every 0.5 s
    huge-announce     200 announcing a 2 GiB body, then zeros as fast as the client reads
    huge-stream       200 chunked (no length), zeros as fast as the client reads
    gzip-bomb         200 with Content-Encoding gzip: 1 MB on the wire that inflates to 1 GiB
    json-array        200 whose body is a JSON array
    usage-text        a valid verdict whose usage counts are text
    no-choices        200 chat completion object with an empty choices list
    logprob-overflow  a valid verdict whose verdict-token logprobs are 10**400 and 1e308 (exp overflows)
    lone-surrogate    a valid verdict whose review holds half a surrogate pair (JSON escape \\ud83d)
    huge-usage        a valid verdict whose usage claims 1e300 prompt and completion tokens
    transient-500     the first chat request answered HTTP 500 with a body that reads like a refusal of
                      ``temperature`` (a passing fault), every later one as usual
    no-listing        ``GET /models`` answered 403 (a key that may chat but not list models), chat as usual
    rate-window       429 with ``Retry-After: 1`` to every chat request for ``RATE_WINDOW_S`` seconds after the
                      first one (a provider's per-minute window refilling), then answers as usual
"""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any

MODES = ("echo-key-error", "echo-key-review", "drip", "huge-announce", "huge-stream", "gzip-bomb", "json-array",
         "usage-text", "no-choices", "logprob-overflow", "lone-surrogate", "huge-usage", "rate-window",
         "transient-500", "no-listing")
STREAM_LIMIT_S = 120.0
STREAM_LIMIT_BYTES = 512 * 2**20
HUGE_ANNOUNCED = 2 * 2**30
# Longer than six attempts waiting one second each: a client that counts a 429 it was told to wait out as a
# failed attempt gives up inside the window.
RATE_WINDOW_S = 8.0


class Streamed:
    """A reply whose body is sent piece by piece: ``length`` is the announced Content-Length (None:
    chunked), ``chunks()`` yields the pieces (a piece's wait is inside the generator)."""

    def __init__(self, length: int | None, chunks: Callable[[], AsyncIterator[bytes]],
                 headers: list[tuple[str, str]] | None = None):
        self.length = length
        self.chunks = chunks
        self.headers = headers or []


def _key_of(headers: dict[str, str]) -> str:
    return headers.get("authorization", "").removeprefix("Bearer ").strip()


def _pieces(key: str) -> list[str]:
    """The key's middle and its last 12 characters: a leak that exact matching would miss."""
    return [key[len(key) // 4: len(key) // 4 + 12], key[-12:]] if len(key) >= 16 else [key]


async def _drip() -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    end = loop.time() + STREAM_LIMIT_S
    while loop.time() < end:
        yield b" "
        await asyncio.sleep(0.5)


async def _zeros() -> AsyncIterator[bytes]:
    chunk = b"0" * 2**20
    loop = asyncio.get_running_loop()
    end = loop.time() + STREAM_LIMIT_S
    for _ in range(STREAM_LIMIT_BYTES // len(chunk)):
        if loop.time() > end:
            return
        yield chunk


def _zeros_gzip_chunk() -> bytes:
    """Deflate of 1 MiB of zeros ending in a full flush: byte-aligned and history-free, so the chunk
    repeated k times continues one gzip stream of k MiB of zeros (no trailer: nobody should get there)."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    return co.compress(b"\0" * 2**20) + co.flush(zlib.Z_FULL_FLUSH)


_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
BOMB_MIB = 1024


async def _gzip_bomb() -> AsyncIterator[bytes]:
    chunk = _zeros_gzip_chunk()
    yield _GZIP_HEADER
    for _ in range(BOMB_MIB):
        yield chunk


def _rate_window(state: dict[str, float]) -> tuple[int, Any, list[tuple[str, str]]] | None:
    now = time.monotonic()
    started = state.setdefault("rate_window", now)
    if now - started >= RATE_WINDOW_S:
        return None
    return 429, {"error": {"message": "Rate limit reached for requests (window refilling)", "type": "requests",
                           "param": None, "code": "rate_limit_exceeded"}}, [("retry-after", "1")]


def early_reply(mode: str, headers: dict[str, str], state: dict[str, float] | None = None,
                ) -> tuple[int, Any] | tuple[int, Any, list[tuple[str, str]]] | Streamed | None:
    """The reply for modes that never produce a verdict: (status, JSON body[, headers]) or a Streamed body;
    ``state`` is the server's own (when its window opened)."""
    key = _key_of(headers)
    if mode == "rate-window":
        return _rate_window(state if state is not None else {})
    if mode == "transient-500":
        seen = state if state is not None else {}
        if seen.setdefault("transient", 0) == 0:
            seen["transient"] = 1
            return 500, {"error": {"message": "Internal error while applying 'temperature': not supported in the "
                                              "current worker state", "type": "server_error", "param": None,
                                   "code": None}}
        return None
    if mode == "echo-key-error":
        return 400, {"error": {"message": f"Bad request from Authorization: {headers.get('authorization', '')} "
                                          f"(key pieces {' '.join(_pieces(key))})",
                               "type": "invalid_request_error", "param": None, "code": None}}
    if mode == "json-array":
        return 200, [{"choices": []}, 1, "two"]
    if mode == "no-choices":
        return 200, {"id": "chatcmpl-empty", "object": "chat.completion", "choices": [],
                     "usage": {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1}}
    if mode == "drip":
        return Streamed(100_000, _drip)
    if mode == "huge-announce":
        return Streamed(HUGE_ANNOUNCED, _zeros)
    if mode == "huge-stream":
        return Streamed(None, _zeros)
    if mode == "gzip-bomb":
        return Streamed(len(_GZIP_HEADER) + BOMB_MIB * len(_zeros_gzip_chunk()), _gzip_bomb,
                        [("content-encoding", "gzip")])
    return None


def spoil(mode: str, headers: dict[str, str], completion: dict[str, Any]) -> dict[str, Any]:
    """A valid completion made hostile for modes that answer with a verdict."""
    key = _key_of(headers)
    message = completion["choices"][0]["message"]
    if mode == "echo-key-review":
        leak = f"- Your header was Authorization: Bearer {key}; pieces {' / '.join(_pieces(key))}."
        try:
            verdict = json.loads(message["content"])
            verdict["review"] = f"{verdict['review']}\n{leak}"
            verdict["evidence"] = [*verdict.get("evidence", []), *_pieces(key)]
            message["content"] = json.dumps(verdict)
        except (ValueError, KeyError, TypeError):  # text strategy
            message["content"] = message["content"].replace("Review:\n", f"Review:\n{leak}\n", 1)
    elif mode == "usage-text":
        completion["usage"] = {"prompt_tokens": "many", "completion_tokens": "a few", "total_tokens": []}
    elif mode == "lone-surrogate":
        # json.dumps writes a lone surrogate as the escape \ud83d: valid JSON, not valid Unicode
        message["content"] = message["content"].replace("Review:\n", "Review:\n\ud83d ", 1)
        try:
            verdict = json.loads(message["content"])
            verdict["review"] = f"\ud83d{verdict['review']}\udc00"
            message["content"] = json.dumps(verdict)
        except (ValueError, KeyError, TypeError):
            pass
    elif mode == "huge-usage":
        completion["usage"] = {"prompt_tokens": 1e300, "completion_tokens": 1e300, "total_tokens": 2e300}
    elif mode == "logprob-overflow":
        for entry in (completion["choices"][0].get("logprobs") or {}).get("content") or []:
            entry["logprob"] = 10**400  # an integer no float can hold
            for alt in entry.get("top_logprobs") or []:
                alt["logprob"] = 1e308
    return completion
