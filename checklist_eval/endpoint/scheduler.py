"""One asyncio scheduler per assessor: every model call passes through it, so a batch over hundreds of
papers shares one concurrency bound, adapted to what the engine takes (``Scheduler``), and one pair of
rate limits.

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
import contextvars
import logging
import time
from collections import deque
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import AsyncIterator, Callable

__all__ = ["Pacer", "Scheduler", "PACING_MARGIN", "Ticket"]

log = logging.getLogger(__name__)

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


@dataclass
class Ticket:
    """One request's place: when it was sent and under which limit (``epoch``), for the adaptation.
    ``stale``: it failed after the limit had already fallen below the one it was sent under."""

    sent: float
    epoch: int
    stale: bool = False


# The ticket of the calling task's last request: the retry policy's circuit breaker reads it after an
# attempt failed (the attempt runs in the same task, inside ``slot``), to leave out stale failures.
_last_ticket: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar("last_ticket", default=None)


class Scheduler:
    """At most ``limit`` requests in flight, paced by the rate limits. ``concurrency`` (``--concurrency``)
    is the ceiling; the limit follows what the engine can take:

    - an engine that says how many requests it runs at once (llama.cpp's ``total_slots``, see
      ``endpoint.probe``) gets that many (``set_slots``): nothing waits in its queue, so a request's
      deadline runs while the engine works on it, and every slot stays busy. Its slots are a second
      ceiling, not a promise: on a CPU the slots share the cores, so four 6k-token prompts at once each
      take four times as long as one (measured on llama.cpp's server with 2 cores and a loaded machine:
      every request of the first wave ran past the 120 s deadline, generating 0.2-0.5 tokens/s per slot);
    - additive increase, multiplicative decrease under the ceiling: a request that fails from overload
      (a timeout, 502/503/504, a refused connection: ``congestion``) lowers the limit, once per round,
      to half of what the engine finished while that request waited (Little's law: a queue the engine
      clears in half a deadline), and ``limit`` answers in a row raise it by one, up to the ceiling.
    """

    def __init__(self, concurrency: int = 8, rpm: float | None = None, tpm: float | None = None,
                 congestion: Callable[[BaseException], bool] | None = None,
                 memory_full: Callable[[BaseException], int | None] | None = None):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self.limit = concurrency
        self.slots: int | None = None
        self.rpm = rpm
        self.tpm = tpm
        self._congestion = congestion
        # An engine whose slots share one memory (llama.cpp's unified KV cache): once a failure says it ran
        # out, ``memory_full`` gives its size in tokens and the requests in flight are kept within it.
        self._memory_full = memory_full
        self.memory_tokens: int | None = None
        self._held_tokens = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._requests = Pacer(rpm * PACING_MARGIN / 60.0) if rpm else None
        self._tokens = Pacer(tpm * PACING_MARGIN / 60.0) if tpm else None
        self._paused_until = 0.0
        self._epoch = 0
        self._streak = 0  # answers since the limit last changed
        self._answered: deque[float] = deque(maxlen=4096)  # when recent answers came back
        self.in_flight = 0
        self.max_in_flight = 0
        self.decreases = 0

    def _full(self, tokens: int) -> bool:
        if self.in_flight >= self.limit:
            return True
        room = self.memory_tokens
        return room is not None and self.in_flight > 0 and self._held_tokens + tokens > room

    async def _acquire(self, tokens: int = 0) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a CLI that runs asyncio.run twice: the old loop's waiters are gone
            self._loop, self._waiters, self.in_flight, self._held_tokens = loop, deque(), 0, 0
        while self._full(tokens):
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake()  # pass on the place this cancelled task was given
                raise
        self.in_flight += 1
        self._held_tokens += tokens
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _release(self, tokens: int = 0) -> None:
        self.in_flight -= 1
        self._held_tokens -= tokens
        self._wake()

    def _wake(self) -> None:
        """Wake as many waiters as there are free places (each checks again when it runs; one waiting
        for memory goes back to the end of the line)."""
        free = self.limit - self.in_flight
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1

    def set_slots(self, slots: int) -> None:
        """The engine runs ``slots`` requests at once: keep that many in flight (at most the ceiling)."""
        self.slots = max(1, slots)
        self.limit = min(self.concurrency, self.slots)
        self._wake()

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

    @property
    def ceiling(self) -> int:
        """The most requests ever in flight: ``--concurrency``, and the engine's slots where it says them."""
        return min(self.concurrency, self.slots) if self.slots is not None else self.concurrency

    def _answered_ok(self, ticket: Ticket) -> None:
        self._answered.append(time.monotonic())
        if self.limit >= self.ceiling:
            return
        self._streak += 1
        if self._streak >= self.limit:
            self.limit += 1
            self._streak = 0
            self._wake()

    def _overloaded(self, ticket: Ticket) -> None:
        if ticket.epoch != self._epoch:
            return  # the limit already fell since this request left
        finished = sum(1 for t in self._answered if t >= ticket.sent)
        self.limit = max(1, min(self.limit // 2, finished // 2))
        self._epoch += 1
        self._streak = 0
        self.decreases += 1
        # info, not warning: a run that then fails must still end in one error line (the count of
        # decreases is kept in ``decreases`` for whoever reports the run)
        log.info("the endpoint is overloaded (a request failed after %.0f s); at most %d request(s) in flight "
                    "from now on", time.monotonic() - ticket.sent, self.limit)

    def last_failure_stale(self) -> bool:
        """Whether the calling task's request that just failed was sent under a higher limit than the one
        in force when it failed: a request of the overload the limit already answered, which says nothing
        about whether the engine takes what is sent now."""
        ticket = _last_ticket.get()
        return ticket is not None and ticket.stale

    def breaker_threshold(self, floor: int) -> int:
        """Failures in a row that mean every request sent under the present limit failed (at least ``floor``)."""
        return max(floor, self.limit)

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[Ticket]:
        """Hold one of ``limit`` places, after waiting for the rate limits' turn; what happens inside
        (an answer, an overload) adapts the limit."""
        await self._acquire(tokens)
        try:
            await self._wait_turn(tokens)
            ticket = Ticket(time.monotonic(), self._epoch)
            _last_ticket.set(ticket)
            try:
                yield ticket
            except BaseException as exc:
                ticket.stale = ticket.epoch != self._epoch
                if isinstance(exc, Exception):
                    self._learn_memory(exc)
                if self._congestion is not None and isinstance(exc, Exception) and self._congestion(exc):
                    self._overloaded(ticket)
                raise
            self._answered_ok(ticket)
        finally:
            self._release(tokens)

    def _learn_memory(self, exc: Exception) -> None:
        room = self._memory_full(exc) if self._memory_full is not None else None
        if room and (self.memory_tokens is None or room < self.memory_tokens):
            self.memory_tokens = room
            log.info("the engine's requests in flight share a memory of %d tokens: kept within it from now on", room)
