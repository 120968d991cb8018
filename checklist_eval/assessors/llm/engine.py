"""What the engine says about itself (``endpoint.probe``: its window, its slots, the grammar it takes), asked
once per run before its first request and only of an endpoint given by URL (a hosted API's windows are the
table's). An object the LLM assessor holds (``LLMAssessor.engine``); the assessor takes the facts in."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import openai

from checklist_eval.endpoint.cache import Cache
from checklist_eval.endpoint.capabilities import EndpointQuirks
from checklist_eval.endpoint.probe import EngineFacts, probe
from checklist_eval.errors import AssessorError

__all__ = ["EngineQuestion", "take_identity"]

log = logging.getLogger(__name__)


def take_identity(cache: Cache, endpoint: str, model: str, quirks: EndpointQuirks, identity: str, where: str) -> None:
    """The model the engine says it serves keys the cache from now on (``endpoint.served``); remembered, so
    a later run asks the engine again before answering from the cache. Another model than the one an
    earlier run saw starts afresh: that model's first clean answer is not this one's."""
    saved = cache.capabilities(endpoint, model)
    first_seen = not quirks.identity
    if quirks.identity:
        log.warning("%s: the engine now serves %s (it served %s): its verdicts are asked afresh", where,
                    identity, quirks.identity)
    quirks.identity = identity
    kept = {"answered": saved["answered"]} if first_seen and isinstance(saved, dict) and "answered" in saved else {}
    cache.remember_capabilities(endpoint, model, quirks.remembered() | kept)


class EngineQuestion:
    def __init__(self, base_url: str | None, model: str | None, timeout: float):
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self.known = False
        self._asked: asyncio.Task[EngineFacts] | None = None

    async def facts(self, client: Callable[[], openai.AsyncOpenAI], *, ask_behind_proxy: bool,
                    refused_key: Callable[[openai.APIStatusError], AssessorError]) -> EngineFacts | None:
        """The engine's facts, to the first caller that gets them (every question of the run waits on the one
        probe); None to the others, and for an endpoint not given by URL. A refused key ends the run as at a
        chat request's 401/403."""
        if self.known or self.base_url is None:
            return None
        loop = asyncio.get_running_loop()
        if self._asked is None or self._asked.get_loop() is not loop:
            # A local engine left at the default --timeout gets its pace's deadline (the default, before any answer).
            self._asked = loop.create_task(probe(client(), self.base_url, self.model or "",
                                                 ask_behind_proxy=ask_behind_proxy, timeout=self.timeout))
        try:
            facts = await asyncio.shield(self._asked)
        except (openai.AuthenticationError, openai.PermissionDeniedError) as err:
            raise refused_key(err) from None
        if self.known:
            return None
        self.known = True
        return facts
