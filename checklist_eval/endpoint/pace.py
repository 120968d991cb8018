"""How long one request may take before it counts as lost.

``--timeout`` (120 s by default) is meant for an endpoint that stopped answering, and a hosted API answers
any prompt well within it. An engine on the user's own CPU does not: on llama.cpp's server with Gemma 3
270M on 2 cores (llama-cpp-python's for the quiet figures), prompt processing ran at about 240 tokens/s on
a quiet machine and 41-67 on a busy one, generation at 21-26 and 0.2-2.3 tokens/s. A 25k-token prompt (a
long paper cut to a 32k window) then needs about 100 s quiet and ten minutes busy: the fixed deadline
cancelled every attempt of work the engine was doing (five in a row, and the run stopped) although the
engine was healthy.

So for a *local* engine (a loopback or private address) left at the default ``--timeout`` (any other
value is kept exactly), each request's deadline follows what its prompt needs at the engine's pace:

- before any answer, a slow CPU's pace is assumed (``PROMPT_FLOOR`` and ``GENERATION_FLOOR`` tokens/s),
  times the requests in flight at the engine now (a CPU's slots share its cores; the concurrency ceiling,
  which may never fill, multiplied a hung engine's first deadline to an hour);
- after answers, the engine's own pace: llama.cpp's ``timings`` (prompt and generation apart), else the
  reply's wall time over its tokens, per request in flight when it was measured (slots sharing the cores
  and an engine that serves one request at a time both make each take that many times longer); the slowest
  of the recent answers, times ``SAFETY``, times the requests in flight now.

Never below ``--timeout``, never above ``MAX_DEADLINE_S``.
"""

from __future__ import annotations

import ipaddress
from collections import deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Pace", "is_local_endpoint"]

PROMPT_FLOOR = 40.0  # tokens/s: prompt processing of a small model on a busy 2-core machine (measured 41-54)
GENERATION_FLOOR = 2.0  # tokens/s: its generation there (measured 1.5-2.3 with one request; 0.2-0.5 per slot
# with four: the requests in flight multiply the deadline)
SAFETY = 3.0
MAX_DEADLINE_S = 3600.0
RECENT = 8  # answers whose pace is remembered: the slowest of them is the one planned for


def is_local_endpoint(base_url: str | None) -> bool:
    """An engine on this machine or the local network: a loopback or private address, or ``localhost``."""
    host = (urlsplit(base_url or "").hostname or "").strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def _number(value: Any) -> float | None:
    return float(value) if type(value) in (int, float) and 0 < value < 1e9 else None


@dataclass
class Pace:
    """Seconds per prompt token and per generated token, learned from answers (see the module docstring)."""

    timeout: float  # --timeout: the floor of every deadline
    adaptive: bool  # a local engine left at the default --timeout
    _seen: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=RECENT))

    def observe(self, completion: Any, latency_s: float, in_flight: int = 1) -> None:
        """Learn from one answer, given while ``in_flight`` requests were out: llama.cpp's ``timings`` when
        it sends them, else wall time over tokens."""
        if not self.adaptive or not isinstance(completion, dict):
            return
        share = max(1, in_flight)
        timings = completion.get("timings")
        if isinstance(timings, dict):
            per_prompt = self._per_token(timings.get("prompt_ms"), timings.get("prompt_n"))
            per_gen = self._per_token(timings.get("predicted_ms"), timings.get("predicted_n"))
            if per_prompt is not None and per_gen is not None:
                self._seen.append((per_prompt / share, per_gen / share))
                return
        raw = completion.get("usage")
        usage: dict[str, Any] = raw if isinstance(raw, dict) else {}
        tokens = (_number(usage.get("prompt_tokens")) or 0.0) + (_number(usage.get("completion_tokens")) or 0.0)
        if tokens > 0 and latency_s > 0:
            per_token = latency_s / tokens / share  # generation is the dearer part: under-rated, hence SAFETY
            self._seen.append((per_token, per_token))

    @staticmethod
    def _per_token(ms: Any, n: Any) -> float | None:
        ms_, n_ = _number(ms), _number(n)
        return ms_ / 1000.0 / n_ if ms_ is not None and n_ is not None else None

    def deadline(self, prompt_tokens: int, max_tokens: int, sharing: int) -> float:
        """Seconds the next request (``prompt_tokens`` estimated, up to ``max_tokens`` out) may take while
        ``sharing`` requests (those in flight now, itself included) share the engine with it. A hung engine is
        caught long before by ``watch.post_watched``."""
        if not self.adaptive:
            return self.timeout
        if self._seen:
            per_prompt = max(p for p, _ in self._seen)
            per_gen = max(g for _, g in self._seen)
            need = SAFETY * (prompt_tokens * per_prompt + max_tokens * per_gen)
        else:
            need = prompt_tokens / PROMPT_FLOOR + max_tokens / GENERATION_FLOOR
        need *= max(1, sharing)
        return min(MAX_DEADLINE_S, max(self.timeout, need))
