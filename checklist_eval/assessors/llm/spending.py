"""The LLM assessor's spending cap and call log, kept apart from its request logic: reserving a
request's worst case under ``--max-cost`` before it is sent, and writing what was asked and answered
to the cache's call log (``checklist-eval logs``), and sending an identical request only once while it
is in flight. A mixin of ``LLMAssessor``, which provides
``budget``, ``config``, ``cache``, ``prompts``, ``endpoint`` and the message builders."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from checklist_eval.assessors.llm.facts import question_for
from checklist_eval.endpoint.calllog import CallLog
from checklist_eval.fsutil import loads_json
from checklist_eval.models import Assessment, ChecklistItem, Paper, StructuredOutput, Usage

if TYPE_CHECKING:
    from checklist_eval.assessors.config import LLMConfig
    from checklist_eval.assessors.llm.messages import PaperPrefix
    from checklist_eval.assessors.llm.prompts import PromptSet
    from checklist_eval.endpoint.budget import Budget
    from checklist_eval.endpoint.cache import Cache
    from checklist_eval.endpoint.capabilities import EndpointQuirks


class SpendingAndEvidence:
    if TYPE_CHECKING:  # what the host class (LLMAssessor) provides; declared so the mixin is checked
        budget: Budget | None
        config: LLMConfig
        cache: Cache
        prompts: PromptSet
        endpoint: str
        model: str | None
        prompt_version: str | None
        _in_flight: dict[str, asyncio.Future]

        def quirks(self) -> EndpointQuirks: ...
        def paper_prefix(self, paper: Paper, strategy: StructuredOutput = ...,
                         item: ChecklistItem | None = None) -> PaperPrefix: ...
        def _params(self, strategy: StructuredOutput, quirks: EndpointQuirks) -> dict[str, Any]: ...
        def _cache_key(self, paper: Paper, question: str, strategy: StructuredOutput) -> str: ...
        def _usage_of(self, completion: Any, attempts: int) -> Usage: ...
        def _assessment(self, paper: Paper, item: ChecklistItem, verdict: dict[str, Any],
                        strategy: StructuredOutput, usage: Usage, *, cached: bool,
                        latency_s: float = 0.0) -> Assessment: ...

    async def _reserve(self, messages: list[dict[str, str]]) -> float:
        if self.budget is None:
            return 0.0
        chars = sum(len(m["content"]) for m in messages)
        return await self.budget.reserve(self.budget.worst_case(chars, self.config.max_tokens))

    def _cost_of_body(self, content: bytes) -> float:
        """What a reply cost by its own usage figures (0 when it has none), for the budget."""
        if self.budget is None:
            return 0.0
        try:
            completion = loads_json(content)
        except ValueError:
            return 0.0
        return self._usage_of(completion, 1).cost_usd if isinstance(completion, dict) else 0.0

    def _call_log(self, paper: Paper, item: ChecklistItem, strategy: StructuredOutput, reply: Any,
                  outcome: str) -> CallLog:
        prefix = self.paper_prefix(paper, strategy, item)
        quirks = self.quirks()
        params = {k: v for k, v in self._params(strategy, quirks).items() if k != "response_format"}
        return CallLog(source=paper.source, question_id=item.id, prefix_digest=prefix.digest,
                       prefix_messages=prefix.messages, question=question_for(self.prompts, paper, item),
                       params=params | {"strategy": strategy.value}, response=reply, outcome=outcome)

    def _log_reuse(self, paper: Paper, item: ChecklistItem, strategy: StructuredOutput, key: str) -> None:
        """A verdict reused (from the cache, or from an identical request in flight) is logged for this
        paper too, pointing at the reply it came from, so every verdict's evidence can be found."""
        self.cache.log_call(self._call_log(paper, item, strategy, None, "reused"), key=key,
                            endpoint=self.endpoint, model=self.model or "",
                            prompt_version=self.prompt_version or "", strategy=strategy.value)

    async def _twin_verdict(self, paper: Paper, item: ChecklistItem, key: str) -> Assessment | None:
        """The verdict of an identical request already in flight (waited for), else None."""
        twin = self._in_flight.get(key)
        shared = await asyncio.shield(twin) if twin is not None else None
        if shared is None:  # none in flight, or it failed: this one asks for itself
            return None
        self._log_reuse(paper, item, shared[1],
                        self._cache_key(paper, question_for(self.prompts, paper, item), shared[1]))
        return self._assessment(paper, item, shared[0], shared[1], Usage(), cached=True)

    @contextlib.contextmanager
    def _in_flight_as(self, key: str):
        """Register this request as the one in flight for ``key``; its twins get what it sets."""
        mine = asyncio.get_running_loop().create_future()
        self._in_flight.setdefault(key, mine)
        try:
            yield mine
        finally:
            if not mine.done():
                mine.set_result(None)
            if self._in_flight.get(key) is mine:
                del self._in_flight[key]
