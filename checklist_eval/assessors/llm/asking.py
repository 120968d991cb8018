"""One question's way through the endpoint: what a request sent and spent, how it failed, and the gate that
sends the first request of a run alone while the endpoint's capabilities are still unknown."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import openai

from checklist_eval.endpoint.capabilities import EndpointQuirks
from checklist_eval.models import StructuredOutput, Usage

__all__ = ["CapabilityRefusal", "FirstRequest", "Outcome", "Question", "RequestFailed", "Sending"]

MAX_ECHO_CHARS = 4000  # how much of an unusable reply is sent back with the validation error
REASK_PREFIX = "Your previous reply could not be used:"


@dataclass
class Outcome:
    completion: Any
    attempts: int
    strategy: StructuredOutput


class CapabilityRefusal(Exception):
    """The endpoint refused a parameter this attempt sent (``param``; the reply is ``error``): an answer about
    what the endpoint can do, so neither retried nor counted by the circuit breaker, but learned."""

    def __init__(self, error: openai.APIStatusError, param: str):
        super().__init__(str(error))
        self.error = error
        self.param = param


class RequestFailed(Exception):
    """A request that failed for good (the error is ``cause``), with what it sent: the assessor bills its
    attempts, learns from a refused parameter and sends it again, or reports the cause."""

    def __init__(self, cause: BaseException, *, attempts: int, sent: EndpointQuirks, params: dict[str, Any],
                 budget: int = 0, chars: int = 0):
        super().__init__(str(cause))
        self.cause = cause
        self.attempts = attempts
        self.budget = budget  # the prompt's character budget it was built for
        self.chars = chars  # the characters of its messages
        self.sent = sent  # the quirks the last attempt was sent with
        self.params = params  # its parameters (model and messages left out)


@dataclass
class Sending:
    """One logical request so far: the attempts sent and what the last of them asked with."""

    sent: EndpointQuirks
    params: dict[str, Any] = field(default_factory=dict)
    attempts: int = 0
    budget: int = 0
    chars: int = 0

    def failed(self, cause: BaseException) -> RequestFailed:
        return RequestFailed(cause, attempts=self.attempts, sent=self.sent, params=self.params, budget=self.budget,
                             chars=self.chars)


@dataclass
class Question:
    """One question's way to a usable verdict: what it spent (readable even when it fails), the last
    reply (for the call log), the re-asks and relearned parameters used, and what a re-ask sends back."""

    est_tokens: int
    usage: Usage = field(default_factory=Usage)
    reply: Any = None
    invalid: int = 0
    relearned: int = 0
    facts_reasked: bool = False  # a verdict that ignored an offline fact is asked again once
    feedback: list[dict[str, str]] = field(default_factory=list)  # the last unusable reply and why
    suspect: tuple[str, int] | None = None  # a parameter one 5xx refused, and that status: resent to see

    def add(self, usage: Usage) -> None:
        self.usage = self.usage + usage

    def reask(self, text: str, why: str) -> None:
        """What a re-ask sends back: as instructor does, the model sees its reply and the validation error, so a
        re-ask at temperature 0 is not the identical request that produced the bad reply."""
        echo = [{"role": "assistant", "content": text[:MAX_ECHO_CHARS]}] if text else []
        ask = f"{REASK_PREFIX} {why}. Reply again in the required format."
        self.feedback = [*echo, {"role": "user", "content": ask}]

    def reask_for_facts(self, ignored: list[int], text: str) -> str:
        """The one re-ask of a verdict that left the offline facts ``ignored`` unaddressed; their tags."""
        self.facts_reasked = True
        tags = ", ".join(f"[F{i}]" for i in ignored)
        self.feedback = [{"role": "assistant", "content": text[:MAX_ECHO_CHARS]},
                         {"role": "user", "content": f"Your verdict does not address the offline fact(s) {tags}"
                          " listed with the question. Address each: put it in must_fix if it makes the answer"
                          " incorrect, or name its tag in the review and say why it does not. Reply again in"
                          " the required format."}]
        return tags

    def confirms(self, refusal: CapabilityRefusal) -> bool:
        """Whether ``refusal`` is an earned lesson: a 4xx naming the parameter, or a 5xx naming it that the
        unchanged resend met again. A first 5xx is held as a suspicion (the caller sends the request again):
        one HTTP 500 whose body mentions a parameter is as often a passing fault as a refusal."""
        status = refusal.error.status_code
        if status < 500 or self.suspect == (refusal.param, status):
            return True
        self.suspect = (refusal.param, status)
        return False


class FirstRequest:
    """While nothing is known of what the endpoint accepts (nothing remembered in the cache, nothing learned
    yet), the first question goes alone and the others wait for its answer: every refusal it meets (a format,
    logprobs, a parameter) is then learned once, instead of once by every request in flight. After that
    question (answered or failed) every question goes at once."""

    def __init__(self, settled: bool = False):
        self.settled = settled
        self._done: asyncio.Future | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def wait(self) -> bool:
        """True when the caller is the first question (it must call ``release`` when done)."""
        if self.settled:
            return False
        loop = asyncio.get_running_loop()
        if self._done is None or self._loop is not loop:  # a new event loop (a second asyncio.run) starts afresh
            self._done, self._loop = loop.create_future(), loop
            return True
        await asyncio.shield(self._done)
        return False

    def release(self) -> None:
        self.settled = True
        if self._done is not None and not self._done.done():
            self._done.set_result(None)
