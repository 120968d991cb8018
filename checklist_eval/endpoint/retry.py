"""The one retry policy of the project (tenacity), and the mapping of fatal API errors to messages.

Retried, and only these: 429, 5xx, 408/409 (the server asks to try again), timeouts (including the
total per-request deadline), connection errors, and 2xx bodies that are not a chat completion (not
JSON, a JSON array, missing choices, non-numeric usage). A reply larger than the size cap is the
endpoint's fault and is not retried (it would be sent again). The wait is the server's
``retry-after-ms`` / ``Retry-After`` (seconds or HTTP date) when it
sends one, else exponential backoff with full jitter. Everything else (400 context too long, 401, 403,
404 unknown model, 422) fails on the first attempt with an ``AssessorError`` whose message never holds
the API key. A 400 that refuses a parameter the request sent is not retried here either: the assessor
learns it (``capabilities.refused_parameter``), stops sending it and sends the request once more; a parameter
can be learned only while it is sent, so that never loops. The SDK's own retries are off (``max_retries=0``) so
the two layers do not multiply. A circuit breaker (``CircuitBreaker``) ends the run's requests once
attempts in a row (at least ``BREAKER_FAILURES``, and as many as the scheduler now lets fly) have failed
the same way.
"""

from __future__ import annotations

import dataclasses
import email.utils
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, TypeVar

import httpx2
import openai
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from checklist_eval import redact
from checklist_eval.errors import AssessorError
from checklist_eval.models import Usage

T = TypeVar("T")

__all__ = ["CircuitBreaker", "EndpointDown", "EndpointFault", "MalformedResponse", "ResponseTooLarge", "RetryPolicy",
           "check_completion", "is_memory_full", "is_overload", "is_retryable",
           "parse_retry_after", "fatal_error", "scrub"]

RETRYABLE_STATUS = frozenset({408, 409, 429})
# Seconds a request may spend in all waiting out 429s that named their wait (a provider's per-minute window
# refills within a minute; ten of them is a limit that is not going to lift for this run).
RATE_LIMIT_PATIENCE_S = 600.0


class EndpointFault(Exception):
    """The endpoint broke the protocol: reported as its fault (one line, exit 2), never a crash of ours."""


class MalformedResponse(EndpointFault):
    """A 2xx reply that is not a chat completion (not JSON, wrong shape): the transport or the server
    garbled it, so it is retried like a 5xx (the model's own unusable output is a different matter,
    re-asked by the assessor)."""


class ResponseTooLarge(EndpointFault):
    """A reply announcing or sending more bytes than the cap: refused unread past the cap, not retried."""


class EndpointDown(EndpointFault):
    """The circuit breaker is open: the endpoint failed the same way on every attempt for a while (see
    ``CircuitBreaker``), so no further request is sent this run (one line, exit 2; a batch lists every submission
    left with this reason instead of trying each)."""


def _count_ok(value: Any) -> bool:
    """A count, however large: one past ``MAX_TOKEN_COUNT`` (1e300) is clamped to it by
    ``replies.token_usage`` rather than refused after the call was paid. Text, negatives and NaN are
    not counts."""
    return value is None or (type(value) in (int, float) and value >= 0)


def check_completion(completion: Any) -> None:
    """Raise MalformedResponse unless ``completion`` has the shape of a chat completion: an object
    with a non-empty ``choices`` list whose first entry has a ``message`` object with text content,
    and, when present, a ``usage`` object of non-negative integer counts."""
    if not isinstance(completion, dict):
        raise MalformedResponse(f"reply is a JSON {type(completion).__name__}, not a chat completion object")
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedResponse("reply has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), (str, type(None))):
        raise MalformedResponse("reply's first choice has no message text")
    if not isinstance(choice.get("logprobs"), (dict, type(None))):
        raise MalformedResponse("reply's logprobs is not an object")
    usage = completion.get("usage")
    if usage is None:
        return
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    if (not isinstance(usage, dict) or not isinstance(details, (dict, type(None)))
            or not all(_count_ok(usage.get(k)) for k in ("prompt_tokens", "completion_tokens"))
            or not _count_ok((details or {}).get("cached_tokens"))):
        raise MalformedResponse("reply's usage is not a set of token counts")


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, MalformedResponse)):
        return not isinstance(exc.__cause__, ResponseTooLarge)
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return False


OVERLOAD_STATUS = frozenset({502, 503, 504})
# llama.cpp's server when the requests in flight fill a KV cache its slots share (its default since the
# unified cache): HTTP 500 to every request being decoded, "Context size has been exceeded." (or the same
# after "decode() failed: "), although each alone fits the window /props gives.
_MEMORY_FULL = re.compile(r"context size has been exceeded|failed to find free space in the kv cache", re.I)


def is_memory_full(exc: BaseException) -> bool:
    """A 500 saying the engine's memory for the requests in flight ran out (see ``_MEMORY_FULL``)."""
    return (isinstance(exc, openai.APIStatusError) and exc.status_code == 500
            and bool(_MEMORY_FULL.search(str(exc.message or ""))))


def is_overload(exc: BaseException) -> bool:
    """A failure that says the endpoint has more than it can take now: a timeout, a refused or dropped
    connection, a 502/503/504 (a gateway's or an engine's "busy"). The scheduler takes fewer in flight."""
    if isinstance(exc, openai.APIConnectionError):
        return not isinstance(exc.__cause__, ResponseTooLarge)
    return isinstance(exc, openai.APIStatusError) and exc.status_code in OVERLOAD_STATUS


def parse_retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, else ``Retry-After`` as seconds or as an
    HTTP date. None when absent or unreadable."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _is_told_to_wait(exc: BaseException | None) -> bool:
    """A 429 that names how long to wait (``Retry-After`` or ``retry-after-ms``)."""
    return (isinstance(exc, openai.APIStatusError) and exc.status_code == 429
            and _retry_after_of(exc) is not None)


def _retry_after_of(exc: BaseException | None) -> float | None:
    response = getattr(exc, "response", None)
    return parse_retry_after(getattr(response, "headers", None)) if response is not None else None


def scrub(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with the given secrets (and their long pieces: see ``checklist_eval.redact``) and
    anything shaped like an API key replaced by ``***``."""
    for secret in secrets:
        redact.register(secret)
    return redact.redact_keylike(text)


def _api_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    return str(getattr(exc, "message", "") or exc)


_HINTS = {
    400: "bad request (context too long, unsupported parameter or model)",
    401: "authentication failed: check the key in the environment variable {env}",
    403: "permission denied: the key in {env} may not access this model or endpoint",
    404: "not found: check --model and --base-url",
    422: "request not processable",
}


def fatal_error(exc: BaseException, *, endpoint: str, model: str | None, api_key_env: str,
                secrets: tuple[str, ...] = (), attempts: int = 0, usage: Usage | None = None) -> AssessorError:
    """A one-line, key-free AssessorError for an error retrying cannot fix, carrying the endpoint, model,
    HTTP status (when there was one), the ``attempts`` made and their ``usage``."""
    text = scrub(_fatal_text(exc, endpoint=endpoint, model=model or "?", api_key_env=api_key_env), secrets)
    status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
    return AssessorError(text, endpoint=endpoint, model=model, status=status, attempts=attempts, usage=usage)


def _fatal_text(exc: BaseException, *, endpoint: str, model: str, api_key_env: str) -> str:
    if isinstance(exc, openai.APIStatusError):
        hint = _HINTS.get(exc.status_code, "request failed").format(env=api_key_env)
        detail = " ".join(_api_message(exc).split())[:300]
        text = f"{endpoint} (model {model}) answered HTTP {exc.status_code}: {hint}: {detail}"
    elif isinstance(exc, ResponseTooLarge) or isinstance(exc.__cause__, ResponseTooLarge):
        text = f"{endpoint} (model {model}): {exc.__cause__ if isinstance(exc.__cause__, ResponseTooLarge) else exc}"
    elif is_retryable(exc):
        timeout = exc.__cause__ if isinstance(exc.__cause__, httpx2.TimeoutException) else None
        cause = f" ({timeout})" if timeout is not None and str(timeout) else ""
        text = f"{endpoint} (model {model}) still failing after the last attempt: {type(exc).__name__}: {exc}{cause}"
    else:
        text = f"{endpoint} (model {model}): {type(exc).__name__}: {exc}"
    return text


BREAKER_FAILURES = 5  # attempts in a row failed the same way (at least this, else the requests in flight)


def _failure_kind(exc: BaseException) -> tuple[str, ...] | None:
    """How a request failed, when it is the endpoint's doing (timeouts, connection errors, 5xx, replies
    that are not a completion or too large); None for a refusal of the request itself (a 400 is
    learned, a 401 already stops the run), a request to wait (429) or anything of ours."""
    cause = exc.__cause__
    if isinstance(exc, openai.APIStatusError):  # 429/408/409 ask us to wait, which the scheduler does
        return ("HTTP", str(exc.status_code)) if exc.status_code >= 500 else None
    if isinstance(exc, (EndpointFault, openai.APITimeoutError, openai.APIConnectionError)):
        return (type(exc).__name__, type(cause).__name__ if cause is not None else "")
    return None


class CircuitBreaker:
    """Counts attempts that failed the same way in a row (any success resets it); at its threshold it opens
    and every later attempt fails at once with ``EndpointDown``, naming what kept failing. Without it,
    an endpoint that drips every reply holds a run for (questions / concurrency) x attempts x timeout.
    The threshold is ``limit``: a number, or a callable the LLM assessor points at its scheduler, so it
    follows the requests allowed in flight now (at least ``BREAKER_FAILURES``): every request in flight
    has then failed, so a short outage that the retries would ride out does not open it, and once the
    adaptive limit has fallen to one request a dead endpoint is given up on after a few attempts, not
    after as many as the ceiling. A failure ``failed(exc, stale=True)`` (sent under a limit that has
    since fallen) neither counts nor resets: it belongs to the overload the limit already answered."""

    def __init__(self, limit: int | Callable[[], int] = BREAKER_FAILURES):
        self.limit = limit
        self._kind: tuple[str, ...] | None = None
        self._count = 0
        self._last = ""
        self._opened_at = 0  # the count that opened it (an answer still in flight may reset the count after)
        self.open = False

    @property
    def threshold(self) -> int:
        return self.limit() if callable(self.limit) else self.limit

    def check(self) -> None:
        if self.open:
            hint = (" (each request waits at most --timeout seconds: an engine on a busy CPU may need more)"
                    if self._kind is not None and self._kind[0] == "APITimeoutError" else "")
            raise EndpointDown(f"stopped: {self._opened_at} attempts in a row failed the same way; the last: "
                               f"{self._last}{hint}")

    def succeeded(self) -> None:
        self._kind, self._count = None, 0

    def failed(self, exc: BaseException, stale: bool = False) -> None:
        kind = _failure_kind(exc)
        if kind is None or stale or isinstance(exc, EndpointDown):
            return
        self._count = self._count + 1 if kind == self._kind else 1
        self._kind = kind
        cause = exc.__cause__
        detail = f" ({cause})" if cause is not None and str(cause) and str(cause) not in str(exc) else ""
        self._last = " ".join(f"{type(exc).__name__}: {exc}{detail}".split())[:300]
        if self._count >= self.threshold and not self.open:
            self.open, self._opened_at = True, self._count


@dataclass
class RetryPolicy:
    """Bounded attempts, exponential backoff with full jitter, ``Retry-After`` honoured (capped).

    ``on_retry_after(seconds)`` lets the caller's scheduler pause everyone on a 429, not just the
    request that was refused.
    """

    max_attempts: int = 6
    initial: float = 0.5
    maximum: float = 60.0
    on_retry_after: Callable[[float], None] | None = None
    rng: random.Random | None = None
    breaker: CircuitBreaker = field(default_factory=CircuitBreaker)
    # whether the attempt that just failed is a stale one (see ``CircuitBreaker``); the LLM assessor's
    # scheduler knows, other callers send one request at a time and have none
    stale_failure: Callable[[], bool] | None = None
    rate_limit_patience: float = RATE_LIMIT_PATIENCE_S
    _told_waits: int = 0

    def _stop(self, state: RetryCallState) -> bool:
        """Attempts that failed count against ``max_attempts``; a rate limit the server asked us to wait out
        (429 with a wait it named) does not: that is the server's pace, not a failure, and a per-minute
        window refills only after its minute. Those waits are bounded by ``rate_limit_patience`` seconds
        in all, after which the 429 is reported as it came."""
        exc = state.outcome.exception() if state.outcome is not None else None
        if _is_told_to_wait(exc):
            self._told_waits += 1
            return state.seconds_since_start is not None and state.seconds_since_start >= self.rate_limit_patience
        return state.attempt_number - self._told_waits >= max(1, self.max_attempts)

    def wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        told = _retry_after_of(exc)
        rng = self.rng or random
        if told is not None:
            told = min(told, self.maximum)
            if self.on_retry_after is not None:
                self.on_retry_after(told)
            return told + rng.uniform(0.0, 0.1 * told)  # small jitter so waiters do not stampede
        ceiling = min(self.maximum, self.initial * (2 ** (state.attempt_number - 1)))
        return rng.uniform(0.0, ceiling)

    async def run(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt`` until it succeeds, a non-retryable error is raised, or attempts run out (the
        last error is re-raised); none at all once the breaker is open (``EndpointDown``)."""
        policy = dataclasses.replace(self)  # its own count of the waits it was told (one logical request)
        retrying = AsyncRetrying(
            stop=policy._stop,
            wait=self.wait,
            retry=retry_if_exception(is_retryable),
            reraise=True,
        )

        async def guarded() -> T:
            self.breaker.check()  # before every attempt: a retry waiting out its backoff stops too
            try:
                result: T = await attempt()
            except Exception as exc:
                self.breaker.failed(exc, stale=self.stale_failure is not None and self.stale_failure())
                raise
            self.breaker.succeeded()
            return result

        return await retrying(guarded)
