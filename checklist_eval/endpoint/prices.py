"""Prices: what a call's tokens cost. The running totals are ``Assessor.usage`` (per assessor) and the
assessment records (per call, per paper); this module only prices.

Prices are dated data: USD per 1M tokens from the packaged ``prices.json``, each model with the date and
the page it was taken from, overridden model by model by a user file (``--prices FILE``, same shape).
Prompt tokens served from the provider's prefix cache are priced at ``cached_input``; reasoning tokens are
part of ``completion_tokens`` and priced at ``output`` with them; ``batch_input``/``batch_output`` are the
Batch API's prices; a model without them has its batch calls priced at the standard rates, with one
warning per model ("batch price unknown"): an upper bound, never an assumed discount. A model that matches no
entry has an unknown price: its calls are counted in
``Usage.unpriced_calls`` and shown as "price unknown", never as $0, with one warning per model. A cached
answer (our SQLite cache) costs nothing new.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from checklist_eval.errors import InputError
from checklist_eval.fsutil import loads_json
from checklist_eval.models import Usage, number_problem

__all__ = ["Price", "PriceTable", "format_cost"]

log = logging.getLogger(__name__)


# How reasoning effort scales the profile's reasoning tokens (which are at the default, medium, effort).
REASONING_EFFORT_FACTOR = {"minimal": 0.1, "low": 0.5, "medium": 1.0, "high": 2.0}


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached_input: float | None = None
    batch_input: float | None = None
    batch_output: float | None = None
    as_of: str = ""
    source: str = ""
    reasoning_tokens: int = 0  # a reasoning model's typical hidden tokens per verdict (an estimate, for dry runs)

    def reasoning_estimate(self, effort: str | None) -> int:
        """Reasoning tokens one call is expected to spend at ``effort`` (None: the model's default, medium)."""
        return round(self.reasoning_tokens * REASONING_EFFORT_FACTOR.get(effort or "medium", 1.0))

    @property
    def has_batch(self) -> bool:
        return self.batch_input is not None and self.batch_output is not None

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, *,
             batch: bool = False) -> float:
        """USD for one call. ``batch`` prices it at the Batch API's rates (the standard ones where the
        table has none); prefix-cached prompt tokens are priced at ``cached_input`` either way."""
        cached = min(max(cached_tokens, 0), prompt_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        input_rate, output_rate = self.input, self.output
        if batch:
            input_rate = self.batch_input if self.batch_input is not None else self.input
            output_rate = self.batch_output if self.batch_output is not None else self.output
            cached_rate = min(cached_rate, input_rate)
        return ((prompt_tokens - cached) * input_rate + cached * cached_rate
                + completion_tokens * output_rate) / 1_000_000


def format_cost(usage: Usage) -> str:
    """"$0.0123", or "price unknown" when no answered call had a known price (never a misleading $0)."""
    if usage.unpriced_calls and usage.cost_usd <= 0:
        return "price unknown"
    if usage.unpriced_calls:
        return f"${usage.cost_usd:.4f} + {usage.unpriced_calls} call(s) of unknown price"
    return f"${usage.cost_usd:.4f}"


_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)")


# USD per 1M tokens: the dearest listed model costs a few hundred; beyond this a price is a typo.
MAX_PRICE = 1e6
PRICE_FIELDS = ("input", "output", "cached_input", "batch_input", "batch_output")


class _BadPrice(ValueError):
    pass


def _price(entry: dict[str, Any], key: str) -> float | None:
    """A priced field, finite and in [0, MAX_PRICE]: a NaN price would make the budget check loop
    forever, a negative one would switch the cap off."""
    value = entry.get(key)
    if value is None:
        if key in ("input", "output"):
            raise KeyError(key)
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _BadPrice(f"{key!r} must be a number, got {str(value)[:40]!r}")
    try:
        number = float(value)
    except (ValueError, OverflowError):
        raise _BadPrice(f"{key!r} must be a number, got {str(value)[:40]!r}") from None
    problem = number_problem(number, low=0.0, high=MAX_PRICE)
    if problem is not None:
        raise _BadPrice(f"{key!r} {problem} (USD per 1M tokens), got {str(value)[:40]!r}")
    return number


class PriceTable:
    def __init__(self, prices: dict[str, Price]):
        self.prices = dict(prices)
        self._warned: set[str] = set()
        self._warned_batch: set[str] = set()

    @staticmethod
    def _parse(data: Any, origin: str) -> dict[str, Price]:
        models = data.get("models", data) if isinstance(data, dict) else None
        if not isinstance(models, dict):
            raise InputError(origin, "price table must be a JSON object of models")
        out: dict[str, Price] = {}
        for name, entry in models.items():
            if name.startswith("_"):
                continue
            try:
                fields = {key: _price(entry, key) for key in PRICE_FIELDS}
                out[name] = Price(**fields, as_of=str(entry.get("as_of", "")),  # type: ignore[arg-type]
                                  source=str(entry.get("source", "")),
                                  reasoning_tokens=int(entry.get("reasoning_tokens") or 0))
            except _BadPrice as err:
                raise InputError(origin, f"model {name[:80]!r}: {err}") from None
            except (KeyError, TypeError, ValueError, AttributeError):
                raise InputError(origin, f"model {name[:80]!r} needs numeric 'input' and 'output' prices") from None
        return out

    @classmethod
    def load(cls, override: str | Path | None = None) -> PriceTable:
        packaged = resources.files("checklist_eval.endpoint").joinpath("prices.json").read_text("utf-8")
        prices = cls._parse(json.loads(packaged), "prices.json")
        if override is not None:
            path = Path(override)
            try:
                data = loads_json(path.read_text("utf-8"))
            except FileNotFoundError:
                raise InputError(path, "price table not found") from None
            except json.JSONDecodeError as err:
                raise InputError(path, f"not valid JSON ({err.msg} at line {err.lineno})") from None
            prices.update(cls._parse(data, str(path)))
        return cls(prices)

    def lookup(self, model: str | None) -> Price | None:
        if not model:
            return None
        if model in self.prices:
            return self.prices[model]
        # A dated snapshot of a listed model: "gpt-4o-mini-2024-07-18" -> gpt-4o-mini (not gpt-4o), and
        # "claude-sonnet-4-5-20250929" -> claude-sonnet-4-5. Only a date may follow the listed name: a
        # bare prefix would price "gpt-5.4" or "o3-pro" as "gpt-5" or "o3", which cost several times less.
        matches = [name for name in self.prices if _SNAPSHOT.fullmatch(model[len(name):]) and model.startswith(name)]
        if matches:
            return self.prices[max(matches, key=len)]
        if model not in self._warned:
            self._warned.add(model)
            log.warning("no price for model %r: its cost is shown as unknown (add it with --prices FILE)", model)
        return None

    def cost(self, model: str | None, usage: Usage) -> float:
        price = self.lookup(model)
        if price is None:
            return 0.0
        return price.cost(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)

    def batch_cost(self, model: str | None, usage: Usage) -> float:
        """What ``usage`` costs when a provider batch job served it (see the module docstring)."""
        price = self.lookup(model)
        if price is None:
            return 0.0
        if not price.has_batch and (model or "") not in self._warned_batch:
            self._warned_batch.add(model or "")
            log.warning("batch price unknown for model %r: batch calls priced at the online rate "
                        "(add batch_input/batch_output with --prices FILE)", model)
        return price.cost(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, batch=True)
