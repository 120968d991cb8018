"""One asyncio scheduler per assessor: every model call passes through it, so a batch over hundreds of
papers shares one concurrency bound and one pair of rate limits.

    async with scheduler.slot(tokens=est):
        ... one HTTP request ...

Rate limits are paced, not bursted (GCRA / "virtual scheduling"): each request reserves the next free
moment on a timeline advancing 60/rpm seconds per request (and tokens*60/tpm per request for tpm),
then sleeps until it. Requests therefore leave evenly spaced, a server's sliding window never sees more
than its limit, and throughput stays within ``PACING_MARGIN`` of the limit. A 429 with Retry-After
pauses the whole scheduler (``pause``), not only the refused request.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager
from typing import AsyncIterator

__all__ = ["Pacer", "Scheduler", "PACING_MARGIN"]

# Aim 3 % under a stated limit: a request sent late (event-loop or network jitter) lets the next one
# arrive early, and the margin absorbs that (1.8 s of slack in a provider's 60 s window), while a run
# still reaches 97 % of the limit.
PACING_MARGIN = 0.97


class Pacer:
    """Spaces out costs so that ``rate_per_s`` is never exceeded on average, smoothly."""

    def __init__(self, rate_per_s: float):
        if rate_per_s <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate_per_s
        self._next = 0.0  # monotonic time of the next free moment

    def reserve(self, cost: float = 1.0) -> float:
        """Reserve ``cost`` units; returns the seconds to sleep before using them."""
        now = time.monotonic()
        start = max(now, self._next)
        self._next = start + cost / self.rate
        return start - now

    def push_back(self, until: float) -> None:
        self._next = max(self._next, until)


class Scheduler:
    def __init__(self, concurrency: int = 8, rpm: float | None = None, tpm: float | None = None):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self.rpm = rpm
        self.tpm = tpm
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._requests = Pacer(rpm * PACING_MARGIN / 60.0) if rpm else None
        self._tokens = Pacer(tpm * PACING_MARGIN / 60.0) if tpm else None
        self._paused_until = 0.0
        self.in_flight = 0
        self.max_in_flight = 0

    def _semaphore(self) -> asyncio.Semaphore:
        # A semaphore belongs to one event loop; a CLI that runs asyncio.run twice gets a fresh one.
        loop = asyncio.get_running_loop()
        if self._sem is None or self._loop is not loop:
            self._sem = asyncio.Semaphore(self.concurrency)
            self._loop = loop
        return self._sem

    def pause(self, seconds: float) -> None:
        """Hold every request that has not started yet for ``seconds`` (a server said Retry-After)."""
        until = time.monotonic() + max(0.0, seconds)
        self._paused_until = max(self._paused_until, until)
        for pacer in (self._requests, self._tokens):
            if pacer is not None:
                pacer.push_back(until)

    async def _wait_turn(self, tokens: int) -> None:
        delay = 0.0
        if self._requests is not None:
            delay = max(delay, self._requests.reserve(1.0))
        if self._tokens is not None:
            delay = max(delay, self._tokens.reserve(float(max(tokens, 1))))
        delay = max(delay, self._paused_until - time.monotonic())
        if delay > 0:
            await asyncio.sleep(delay)

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[None]:
        """Hold one of ``concurrency`` places, after waiting for the rate limits' turn."""
        async with self._semaphore():
            await self._wait_turn(tokens)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                yield
            finally:
                self.in_flight -= 1
