"""The spending cap (``--max-cost USD``): no request is sent that could take the run past it.

A batch plans by submission instead (``admit``): a submission starts only when its estimate (the dry
run's figure) fits in what is left, and once started its requests are never refused, so money spent
always buys finished submissions; the cap can then be passed by the estimates' error only.

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
from contextvars import ContextVar
from dataclasses import dataclass

from checklist_eval.endpoint.prices import Price, PriceTable
from checklist_eval.errors import AssessorError, BudgetExceeded

__all__ = ["ADMITTED", "Allowance", "Budget", "PROMPT_CHARS_PER_TOKEN_WORST"]

# Dense text (LaTeX, numbers, non-English) tokenizes at under 4 characters a token; 3 keeps the
# reservation an over-estimate for nearly any paper.
PROMPT_CHARS_PER_TOKEN_WORST = 3
SETTLE_POLL_S = 0.02  # how often a request waiting for room under the cap looks again


@dataclass(eq=False)
class Allowance:
    """A whole submission admitted under the cap on its estimate: its requests are never refused, so
    the money it spends buys a finished submission. ``spent`` is what its requests cost so far."""

    estimate: float
    spent: float = 0.0

    @property
    def outstanding(self) -> float:
        return max(0.0, self.estimate - self.spent)


# The allowance of the submission whose requests run in this task (set by the batch around one submission).
ADMITTED: ContextVar[Allowance | None] = ContextVar("admitted_submission", default=None)


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
        self._admitted: list[Allowance] = []
        self.not_started = 0  # submissions left out because their estimate passed what was left
        self._lock = threading.Lock()

    def worst_case(self, prompt_chars: int, max_tokens: int) -> float:
        prompt_tokens = -(-prompt_chars // PROMPT_CHARS_PER_TOKEN_WORST)
        return self.price.cost(prompt_tokens, max_tokens)

    def admit(self, estimate: float) -> Allowance:
        """Start a submission expected to cost ``estimate``, or raise ``BudgetExceeded`` (it is not
        started) when that passes what is left: the cap less what was spent and what the submissions
        already started are still expected to spend."""
        with self._lock:
            committed = self.spent + sum(a.outstanding for a in self._admitted)
            if committed + estimate > self.cap:
                self.not_started += 1
                raise BudgetExceeded(lambda: self.plan_message(estimate))
            allowance = Allowance(estimate)
            self._admitted.append(allowance)
            return allowance

    def release(self, allowance: Allowance) -> None:
        """The admitted submission is over (finished or failed); what it spent stays spent."""
        with self._lock:
            if allowance in self._admitted:
                self._admitted.remove(allowance)

    def plan_message(self, estimate: float) -> str:
        """Shown at the end of the run: what was finally spent, and what is left of the cap."""
        return (f"stopped by --max-cost {_usd(self.cap)}: {_usd(self.spent)} spent; {self.not_started} "
                f"submission(s) not started, as their estimate (one was {_usd(estimate)}) passed what was left "
                f"({_usd(max(0.0, self.cap - self.spent))} now). The "
                f"submissions started were finished and are written; rerun the same command with a higher "
                f"--max-cost to score the rest (no call is repeated)")

    async def reserve(self, amount: float) -> float:
        """Hold ``amount`` for one request, or raise ``BudgetExceeded``. When only the requests in flight
        stand in the way, wait for them to settle (their real cost is usually far below what they hold).
        A request of an admitted submission is never refused: the submission was planned to finish."""
        if ADMITTED.get() is not None:
            with self._lock:
                self.reserved += amount
            return amount
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
        allowance = ADMITTED.get()
        with self._lock:
            self.reserved = max(0.0, self.reserved - held)
            self.spent += actual
            if allowance is not None:
                allowance.spent += actual

    def message(self) -> str:
        return (f"stopped by --max-cost {_usd(self.cap)}: {_usd(self.spent)} spent, and the next request "
                f"(up to {_usd(self.refused_amount)}) could pass the cap. Every answer received is cached: "
                f"rerun the same command with a "
                f"higher --max-cost to resume (no call is repeated; use the same --cache / results folder)")
