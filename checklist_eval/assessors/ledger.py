"""Prices: what a call's tokens cost. The running totals are ``Assessor.usage`` (per assessor) and the
assessment records (per call, per paper); this module only prices.

Prices are USD per 1M tokens from the packaged ``prices.json`` (edit as needed), overridden model by
model by a user file (``--prices FILE``, same shape). Prompt tokens served from the provider's prefix
cache are priced at ``cached_input``. A model that matches no entry costs 0, with one warning per model.
A cached answer (our SQLite cache) costs nothing new.

Calls served by a provider batch job are priced at ``batch_input`` / ``batch_output`` (cached prompt tokens
at the lower of ``cached_input`` and ``batch_input``). A model without batch prices is priced at its online
rate, with one warning per model ("batch price unknown"): an upper bound, never an invented discount.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from checklist_eval.errors import InputError
from checklist_eval.models import Usage

__all__ = ["Price", "PriceTable"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached_input: float | None = None
    batch_input: float | None = None
    batch_output: float | None = None

    @property
    def has_batch(self) -> bool:
        return self.batch_input is not None and self.batch_output is not None

    def batch_cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        """The batch-rate cost; the online cost when the batch prices are not known."""
        if not self.has_batch:
            return self.cost(prompt_tokens, completion_tokens, cached_tokens)
        cached = min(max(cached_tokens, 0), prompt_tokens)
        cached_rate = self.batch_input if self.cached_input is None else min(self.cached_input, self.batch_input)
        return ((prompt_tokens - cached) * self.batch_input + cached * cached_rate
                + completion_tokens * self.batch_output) / 1_000_000

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        cached = min(max(cached_tokens, 0), prompt_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        return ((prompt_tokens - cached) * self.input + cached * cached_rate
                + completion_tokens * self.output) / 1_000_000


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
                optional = {k: float(entry[k]) for k in ("cached_input", "batch_input", "batch_output")
                            if entry.get(k) is not None}
                out[name] = Price(float(entry["input"]), float(entry["output"]), **optional)
            except (KeyError, TypeError, ValueError):
                raise InputError(origin, f"model {name!r} needs numeric 'input' and 'output' prices "
                                         "(and numeric optional ones)") from None
        return out

    @classmethod
    def load(cls, override: str | Path | None = None) -> PriceTable:
        packaged = resources.files("checklist_eval.assessors").joinpath("prices.json").read_text("utf-8")
        prices = cls._parse(json.loads(packaged), "prices.json")
        if override is not None:
            path = Path(override)
            try:
                data = json.loads(path.read_text("utf-8"))
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
        # Longest listed prefix: "gpt-4o-mini-2024-07-18" -> gpt-4o-mini, not gpt-4o.
        matches = [name for name in self.prices if model.startswith(name)]
        if matches:
            return self.prices[max(matches, key=len)]
        if model not in self._warned:
            self._warned.add(model)
            log.warning("no price for model %r: its cost counts as 0 (add it with --prices FILE)", model)
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
        if not price.has_batch and model not in self._warned_batch:
            self._warned_batch.add(model or "")
            log.warning("batch price unknown for model %r: batch calls priced at the online rate "
                        "(add batch_input/batch_output with --prices FILE)", model)
        return price.batch_cost(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)
