"""The LLM assessor's spending, kept apart from its request logic: what a reply costs (``endpoint.prices``),
reserving a request's worst case under ``--max-cost`` before it is sent and settling the reservation at what
the reply cost (``Spending``), and sending an identical request only once while it is in flight
(``InFlight``). Objects the assessor holds (``LLMAssessor.spending``, ``LLMAssessor.in_flight``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from checklist_eval.endpoint.budget import Budget
from checklist_eval.endpoint.prices import PriceTable
from checklist_eval.endpoint.replies import token_usage
from checklist_eval.fsutil import loads_json
from checklist_eval.models import StructuredOutput, Usage

if TYPE_CHECKING:
    from checklist_eval.assessors.config import LLMConfig

__all__ = ["InFlight", "Shared", "Spending"]

# What a request in flight hands its twins: the verdict as stored and the strategy it was given under.
Shared = tuple[dict[str, Any], StructuredOutput]


class Spending:
    """The prices of one model and the run's spending cap (None without ``--max-cost``)."""

    def __init__(self, config: LLMConfig, model: str):
        self.model = model
        self.max_tokens = config.max_tokens
        self.prices = PriceTable.load(config.prices)
        self.budget = Budget(config.max_cost, self.prices, model) if config.max_cost is not None else None

    def usage_of(self, completion: Any, attempts: int) -> Usage:
        """What a completion spent, priced (an unpriced model's calls are counted as such)."""
        usage = token_usage(completion, attempts)
        if self.prices.lookup(self.model) is None:
            return usage.model_copy(update={"unpriced_calls": attempts})
        return usage.model_copy(update={"cost_usd": self.prices.cost(self.model, usage)})

    async def reserve(self, messages: list[dict[str, str]]) -> float:
        """Hold the worst case of a request under the cap before it is sent (waits, or raises BudgetExceeded)."""
        if self.budget is None:
            return 0.0
        chars = sum(len(m["content"]) for m in messages)
        return await self.budget.reserve(self.budget.worst_case(chars, self.max_tokens))

    def cost_of_body(self, content: bytes) -> float:
        """What a reply cost by its own usage figures (0 when it has none), for the budget."""
        if self.budget is None:
            return 0.0
        try:
            completion = loads_json(content)
        except ValueError:
            return 0.0
        return self.usage_of(completion, 1).cost_usd if isinstance(completion, dict) else 0.0

    def settle(self, held: float, actual: float) -> None:
        """Release the reservation ``held`` for what the reply cost (``actual``)."""
        if self.budget is not None:
            self.budget.settle(held, actual)


class InFlight:
    """The requests in flight by cache key: two papers can put the very same question (a GT submission's A is
    T's paper with G's answers), and while one such request is in flight its twins wait for that verdict
    instead of paying again."""

    def __init__(self) -> None:
        self._futures: dict[str, asyncio.Future] = {}

    async def shared(self, key: str) -> Shared | None:
        """What an identical request in flight got (waited for), else None (none in flight, or it failed:
        the caller asks for itself)."""
        twin = self._futures.get(key)
        return await asyncio.shield(twin) if twin is not None else None

    @contextlib.contextmanager
    def asking(self, key: str) -> Iterator[asyncio.Future]:
        """Register the caller as the request in flight for ``key``; its twins get what it sets."""
        mine = asyncio.get_running_loop().create_future()
        self._futures.setdefault(key, mine)
        try:
            yield mine
        finally:
            if not mine.done():
                mine.set_result(None)
            if self._futures.get(key) is mine:
                del self._futures[key]
