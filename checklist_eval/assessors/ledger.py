"""Prices: what a call's tokens cost. The running totals are ``Assessor.usage`` (per assessor) and the
assessment records (per call, per paper); this module only prices.

Prices are USD per 1M tokens from the packaged ``prices.json`` (edit as needed), overridden model by
model by a user file (``--prices FILE``, same shape). Prompt tokens served from the provider's prefix
cache are priced at ``cached_input``. A model that matches no entry has no price: its calls add 0 to
the running totals, with one warning per model, and displays say "price unknown" (never $0).
A cached answer (our SQLite cache) costs nothing new.
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

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        cached = min(max(cached_tokens, 0), prompt_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        return ((prompt_tokens - cached) * self.input + cached * cached_rate
                + completion_tokens * self.output) / 1_000_000


class PriceTable:
    def __init__(self, prices: dict[str, Price]):
        self.prices = dict(prices)
        self._warned: set[str] = set()

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
                out[name] = Price(float(entry["input"]), float(entry["output"]),
                                  float(entry["cached_input"]) if entry.get("cached_input") is not None else None)
            except (KeyError, TypeError, ValueError):
                raise InputError(origin, f"model {name!r} needs numeric 'input' and 'output' prices") from None
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
            log.warning("price unknown for model %r: its cost is not counted in totals (add its price with "
                        "--prices FILE)", model)
        return None

    def cost(self, model: str | None, usage: Usage) -> float:
        price = self.lookup(model)
        if price is None:
            return 0.0
        return price.cost(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)
