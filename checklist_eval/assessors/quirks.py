"""What an (endpoint, model) refuses, learned from its 400s, so that every provider works with default flags.

A 400 that names a request parameter we sent (OpenAI's ``param`` field; else the message, quoted or not,
next to words such as "unsupported" or "unknown name") is a learn-and-resend, not a failure:

    response_format       -> the structured-output strategy steps down (json_schema, json_object, text)
    max_tokens            -> renamed max_completion_tokens (the same budget, so not in the cache key)
    logprobs/top_logprobs -> dropped together; the confidence is the model's self-report
    anything else we sent -> dropped (temperature, top_p, seed, reasoning_effort ...): the provider's default

Each lesson is learned once per (endpoint, model), announced once as one warning line, and recorded in the
provenance of every verdict after it. A parameter can only be learned while it is still being sent, so the
resend loop ends after at most one round per parameter.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from checklist_eval.assessors.structured import chain_from, is_format_unsupported
from checklist_eval.models import StructuredOutput

__all__ = ["EndpointQuirks", "refused_parameter"]

log = logging.getLogger("checklist_eval.assessors.llm")

LOGPROB_PARAMS = frozenset({"logprobs", "top_logprobs"})
NEVER_DROPPED = frozenset({"model", "messages"})  # without these there is no request to make
# Words that make a 400 mentioning a parameter a refusal of that parameter (not, say, "too long").
_REFUSAL = re.compile(r"unsupported|not\s+supported|does\s+not\s+support|unknown\s+(?:name|parameter|field)|"
                      r"unrecognized|not\s+allowed|not\s+permitted|extra\s+(?:inputs|fields)|cannot\s+find\s+field|"
                      r"only\s+the\s+default|invalid\s+(?:parameter|value)|is\s+not\s+available", re.I)
_REFUSAL_CODES = frozenset({"unsupported_parameter", "unsupported_value", "invalid_value", "unknown_parameter"})
BUDGET_GROWTH = 4  # a reasoning model that spent the whole budget thinking gets 4x more, up to the cap
BUDGET_CAP = 32_000
MAX_RELEARN = 12  # learn-and-resend rounds per question: each parameter once, plus the format chain


def _error_fields(err: Any) -> tuple[str | None, str | None, str]:
    """(param, code, all the text of the error) for an ``openai.APIStatusError``, whatever its body shape
    (OpenAI's ``{"error": {...}}``, vLLM's flat object, Google's list)."""
    body = getattr(err, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    param = inner.get("param") if isinstance(inner, dict) else None
    code = inner.get("code") if isinstance(inner, dict) else None
    try:
        blob = json.dumps(body, ensure_ascii=False) if body is not None else ""
    except (TypeError, ValueError):
        blob = str(body)
    text = f"{getattr(err, 'message', '') or err} {blob}"
    return (param if isinstance(param, str) else None), (code if isinstance(code, str) else None), text


def refused_parameter(err: Any, sent: Iterable[str]) -> str | None:
    """The parameter of ``sent`` that the 400 ``err`` refuses, or None when it refuses none of them."""
    sent = [p for p in sent if p not in NEVER_DROPPED]
    param, code, text = _error_fields(err)
    if param in sent and (code in _REFUSAL_CODES or _REFUSAL.search(text)):
        return param
    if not _REFUSAL.search(text) and code not in _REFUSAL_CODES:
        return None
    named = [p for p in sent if re.search(rf"(?<![\w.]){re.escape(p)}(?![\w])", text)]
    if not named:
        return None
    # Prefer a quoted name ('temperature', "logprobs"); among equals, the first one the text mentions.
    quoted = [p for p in named if re.search(rf"""['"`]{re.escape(p)}['"`]""", text)]
    pool = quoted or named
    return min(pool, key=lambda p: text.find(p))


@dataclass
class EndpointQuirks:
    """What this (endpoint, model) accepts, learned from its 400s during the run. Copied per request with
    ``dataclasses.replace`` (so the collections are immutable and replaced, never changed in place)."""

    strategy: StructuredOutput
    logprobs: bool = True
    max_tokens_param: str | None = "max_tokens"
    dropped: frozenset[str] = frozenset()
    learned: tuple[str, ...] = ()  # one line per lesson, in the order learned (the verdicts' provenance)
    budget: int | None = None  # a raised completion budget, after a reasoning model ran out of it

    def _note(self, lesson: str, where: str) -> None:
        self.learned = (*self.learned, lesson)
        log.warning("%s: %s", where, lesson)

    def learn_parameter(self, param: str, value: Any, where: str) -> None:
        """Stop sending (or rename) ``param``, refused by the endpoint; announce it once."""
        if param in LOGPROB_PARAMS:
            if self.logprobs:
                self.logprobs = False
                self._note("logprobs refused: confidence is the model's self-report", where)
        elif param == "max_tokens":
            if self.max_tokens_param == "max_tokens":
                self.max_tokens_param = "max_completion_tokens"
                self._note("max_tokens refused: sent as max_completion_tokens", where)
        elif param == "max_completion_tokens":
            if self.max_tokens_param == "max_completion_tokens":
                self.max_tokens_param = None
                self._note("max_completion_tokens refused: no completion budget sent", where)
        elif param not in self.dropped:
            self.dropped = self.dropped | {param}
            shown = f"{param}={value!r}" if value is not None else param
            self._note(f"{shown} refused: sent without it (the provider's default applies)", where)

    def learn_strategy(self, refused: StructuredOutput, fallback: StructuredOutput, where: str) -> None:
        if self.strategy is refused:
            self.strategy = fallback
            self._note(f"response_format {refused.value} refused: using {fallback.value}", where)

    def learn_from_refusal(self, err: Any, *, auto: bool, sent: EndpointQuirks, sent_params: dict[str, Any],
                           where: str) -> bool:
        """After a 400 ``err``: True if the request should be sent again without what the endpoint refused.

        ``sent`` and ``sent_params`` are what THIS request sent. With several requests in flight, the first 400
        changes these quirks; the others, refused for the same parameter, find it already learned and are simply
        sent again with the current setting. A parameter that was not sent cannot be learned, so an endpoint
        that keeps refusing makes the question fail instead of looping."""
        message = str(err.message if hasattr(err, "message") else err)
        if auto and is_format_unsupported(message) and sent.strategy is not StructuredOutput.TEXT:
            self.learn_strategy(sent.strategy, chain_from(sent.strategy)[1], where)
            return True
        param = refused_parameter(err, sent_params)
        if param is None:
            return False
        if param == "response_format":
            if not auto or sent.strategy is StructuredOutput.TEXT:
                return False
            self.learn_strategy(sent.strategy, chain_from(sent.strategy)[1], where)
            return True
        self.learn_parameter(param, sent_params.get(param), where)
        return True

    def grow_budget(self, current: int, where: str) -> bool:
        """After a reply cut off while reasoning: a bigger budget, once per size. False at the cap."""
        bigger = min(BUDGET_CAP, current * BUDGET_GROWTH)
        if bigger <= current:
            return False
        if self.budget is None or self.budget < bigger:
            self.budget = bigger
            self._note(f"reasoning used the whole completion budget of {current}: raised to {bigger}", where)
        return True

    def apply(self, params: dict[str, Any], max_tokens: int) -> dict[str, Any]:
        """``params`` as this endpoint takes them (``max_tokens`` under its learned name, dropped ones out)."""
        out = {k: v for k, v in params.items() if k not in self.dropped and k not in LOGPROB_PARAMS}
        if self.max_tokens_param is not None:
            out[self.max_tokens_param] = self.budget or max_tokens
        if self.logprobs:
            out.update({k: params[k] for k in LOGPROB_PARAMS if k in params})
        return out
