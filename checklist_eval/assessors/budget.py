"""The spending cap (``--max-cost USD``): no request is sent that could take the run past it.

Before a request is sent its worst-case cost is reserved: the prompt at the full input price (no
provider prefix-cache discount) and the whole ``max_tokens`` budget at the output price. When the
money already spent plus this reservation would pass the cap, the request is refused with
``BudgetExceeded`` and every later one too (the cap is sticky, so a run stops instead of trickling on);
when only the reservations of requests in flight stand in the way, it waits for them to settle. Requests
already in flight finish and are cached, so rerunning with a higher
cap resumes without repeating a call.
"""

from __future__ import annotations

import asyncio
import threading

from checklist_eval.assessors.ledger import Price, PriceTable
from checklist_eval.errors import AssessorError, BudgetExceeded

__all__ = ["Budget", "PROMPT_CHARS_PER_TOKEN_WORST"]

# Dense text (LaTeX, numbers, non-English) tokenizes at under 4 characters a token; 3 keeps the
# reservation an over-estimate for nearly any paper.
PROMPT_CHARS_PER_TOKEN_WORST = 3
SETTLE_POLL_S = 0.02  # how often a request waiting for room under the cap looks again


def _usd(x: float) -> str:
    return f"${x:.4f}"


class Budget:
    def __init__(self, cap_usd: float, prices: PriceTable, model: str):
        if cap_usd < 0:
            raise AssessorError(f"--max-cost must not be negative, got {cap_usd}", model=model)
        price = prices.lookup(model)
        if price is None:
            raise AssessorError(f"--max-cost: price unknown for model {model!r}, so spending cannot be "
                                "capped; add its price with --prices FILE", model=model)
        self.cap = cap_usd
        self.price: Price = price
        self.spent = 0.0
        self.reserved = 0.0
        self.refused = False
        self.refused_amount = 0.0
        self._lock = threading.Lock()

    def worst_case(self, prompt_chars: int, max_tokens: int) -> float:
        prompt_tokens = -(-prompt_chars // PROMPT_CHARS_PER_TOKEN_WORST)
        return self.price.cost(prompt_tokens, max_tokens)

    async def reserve(self, amount: float) -> float:
        """Hold ``amount`` for one request, or raise ``BudgetExceeded``. When only the requests in flight
        stand in the way, wait for them to settle (their real cost is usually far below what they hold)."""
        while True:
            with self._lock:
                if self.refused or self.spent + amount > self.cap:
                    if not self.refused:
                        self.refused_amount = amount
                    self.refused = True
                    raise BudgetExceeded(self.message)
                if self.spent + self.reserved + amount <= self.cap:
                    self.reserved += amount
                    return amount
            await asyncio.sleep(SETTLE_POLL_S)

    def settle(self, held: float, actual: float) -> None:
        """The request that held ``held`` is over and cost ``actual``."""
        with self._lock:
            self.reserved = max(0.0, self.reserved - held)
            self.spent += actual

    def message(self) -> str:
        return (f"stopped by --max-cost {_usd(self.cap)}: {_usd(self.spent)} spent, and the next request "
                f"(up to {_usd(self.refused_amount)}) could pass the cap. Every answer received is cached: "
                f"rerun the same command with a "
                f"higher --max-cost to resume (no call is repeated; use the same --cache / results folder)")
