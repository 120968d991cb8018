"""What an (endpoint, model) refuses, learned from its replies, so that every provider works with default flags.

A refusal (HTTP 400, 422 or 5xx) that names a request parameter we sent (OpenAI's ``param`` field; else the
message, quoted or not, next to words such as "unsupported", "unknown name" or "input should be") is an
answer about the endpoint, not a fault: never counted by the circuit breaker, it is learned and the request
sent again at once. A lesson is earned: a 4xx naming the parameter teaches it at once, a 5xx only when the
resend (unchanged) meets the same refusal again, since one 5xx may be a passing fault (``Question.confirms``).
Each lesson keeps its evidence (status, an excerpt of the body, when) for ``checklist-eval endpoints``:

    response_format       -> the structured-output strategy steps down (json_schema, json_object, text)
    max_tokens            -> renamed max_completion_tokens (the same budget, so not in the cache key)
    logprobs/top_logprobs -> dropped together; p_correct from the verdict alone (``assessors.llm.confidence``)
    anything else we sent -> dropped (temperature, top_p, seed, reasoning_effort ...): the provider's default

llama-cpp-python's server, for one, answers HTTP 500 to ``response_format`` of type json_schema ("Input
should be 'text' or 'json_object'") and to ``logprobs`` when its model was loaded without all logits.

Each lesson is learned once per (endpoint, model), announced once as one warning line, recorded in the
provenance of every verdict after it, and kept in the response cache (``remembered``/``restore``) so the
next run starts from what works. A parameter can only be learned while it is still being sent, so the
resend loop ends after at most one round per parameter. A refusal of what a flag forces (``--structured
json_schema``, ``--logprobs on``) cannot be learned: it stops the run at once, naming the flag that avoids it
(``avoiding_flag``).
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from checklist_eval.endpoint.formats import chain_from, is_format_unsupported
from checklist_eval.models import StructuredOutput

__all__ = ["EndpointQuirks", "avoiding_flag", "evidence_of", "is_refusal_status", "refused_parameter"]

log = logging.getLogger(__name__)

LOGPROB_PARAMS = frozenset({"logprobs", "top_logprobs"})
NEVER_DROPPED = frozenset({"model", "messages"})  # without these there is no request to make
# Words that make a 400 mentioning a parameter a refusal of that parameter (not, say, "too long").
_REFUSAL = re.compile(r"unsupported|not\s+supported|does\s+not\s+support|unknown\s+(?:name|parameter|field)|"
                      r"unrecognized|not\s+allowed|not\s+permitted|extra\s+(?:inputs|fields)|cannot\s+find\s+field|"
                      r"only\s+the\s+default|invalid\s+(?:parameter|value)|is\s+not\s+available|"
                      r"input\s+should\s+be|must\s+be\s+one\s+of|failed\s+to\s+parse", re.I)
_REFUSAL_CODES = frozenset({"unsupported_parameter", "unsupported_value", "invalid_value", "unknown_parameter"})
BUDGET_GROWTH = 4  # a reasoning model that spent the whole budget thinking gets 4x more, up to the cap
BUDGET_CAP = 32_000
MAX_RELEARN = 12  # learn-and-resend rounds per question: each parameter once, plus the format chain
LOGPROBS_LESSON = "logprobs refused: p_correct from the verdict alone"
GRAMMAR_LESSON = ("llama.cpp's server known by its reply (its /props not seen): its grammar sent in place of "
                  "response_format json_schema")


def is_refusal_status(status: int) -> bool:
    """The statuses a refusal of a parameter comes with: 400 and 422 (OpenAI, vLLM, Ollama), and 5xx from
    servers that raise on what they cannot do (llama-cpp-python answers 500)."""
    return status in (400, 422) or status >= 500


def avoiding_flag(param: str) -> str:
    """The flag that stops the run from sending ``param`` when only a flag forces it."""
    return "--logprobs off" if param in LOGPROB_PARAMS else "--structured auto"


EXCERPT_CHARS = 300  # of the refusal's body, kept with its lesson


def evidence_of(err: Any, **more: Any) -> dict[str, Any]:
    """What a lesson rests on: the refusal's HTTP status and an excerpt of what the endpoint said (the transport
    already redacted it), and when."""
    body = getattr(err, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    said = inner.get("message") if isinstance(inner, dict) and isinstance(inner.get("message"), str) else None
    text = said or _error_fields(err)[2]  # the endpoint's own message where it gives one, else all it said
    return {"status": getattr(err, "status_code", None), "said": " ".join(text.split())[:EXCERPT_CHARS],
            "when": round(time.time(), 3), **more}


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
    grammar: bool = False  # takes llama.cpp's ``grammar`` field: its server, known by a reply behind a proxy
    evidence: tuple[dict[str, Any], ...] = ()  # per lesson: {"lesson", "status", "said", "when"} (``endpoints``)
    identity: str = ""  # the model the engine said it serves (``endpoint.served``): part of the cache key

    def _note(self, lesson: str, where: str, evidence: dict[str, Any] | None = None) -> None:
        self.learned = (*self.learned, lesson)
        self.evidence = (*self.evidence, {"lesson": lesson, **(evidence or {"when": round(time.time(), 3)})})
        log.warning("%s: %s", where, lesson)

    def learn_parameter(self, param: str, value: Any, where: str, evidence: dict[str, Any] | None = None) -> None:
        """Stop sending (or rename) ``param``, refused by the endpoint; announce it once."""
        if param in LOGPROB_PARAMS:
            if self.logprobs:
                self.logprobs = False
                self._note(LOGPROBS_LESSON, where, evidence)
        elif param == "max_tokens":
            if self.max_tokens_param == "max_tokens":
                self.max_tokens_param = "max_completion_tokens"
                self._note("max_tokens refused: sent as max_completion_tokens", where, evidence)
        elif param == "max_completion_tokens":
            if self.max_tokens_param == "max_completion_tokens":
                self.max_tokens_param = None
                self._note("max_completion_tokens refused: no completion budget sent", where, evidence)
        elif param not in self.dropped:
            self.dropped = self.dropped | {param}
            shown = f"{param}={value!r}" if value is not None else param
            self._note(f"{shown} refused: sent without it (the provider's default applies)", where, evidence)

    def forgo_logprobs(self, why: str, where: str) -> None:
        """Ask for no log-probabilities (``--logprobs auto``) where the engine says they cost too much."""
        if self.logprobs:
            self.logprobs = False
            self._note(f"logprobs not asked: {why}; p_correct from the verdict alone", where,
                       {"said": "the engine's own API (/v1/models)", "when": round(time.time(), 3)})

    def learn_grammar(self, where: str) -> None:
        """llama.cpp's server answered (behind a proxy that hides its /props): its compact grammar is sent in
        place of json_schema, whose grammar lets a small model pad every key with whitespace."""
        if not self.grammar:
            self.grammar = True
            self._note(GRAMMAR_LESSON, where, {"said": "a reply's Server header or timings",
                                               "when": round(time.time(), 3)})

    def learn_strategy(self, refused: StructuredOutput, fallback: StructuredOutput, where: str,
                       evidence: dict[str, Any] | None = None) -> None:
        if self.strategy is refused:
            self.strategy = fallback
            self._note(f"response_format {refused.value} refused: using {fallback.value}", where, evidence)

    def refusal_of(self, err: Any, sent_params: dict[str, Any]) -> str | None:
        """The parameter a request sent with these quirks and ``sent_params`` that the refusal ``err`` names:
        "response_format" for a refused output format, else a name from ``sent_params``; None for none."""
        _, _, text = _error_fields(err)
        if "response_format" in sent_params and self.strategy is not StructuredOutput.TEXT \
                and is_format_unsupported(text):
            return "response_format"
        return refused_parameter(err, sent_params)

    def learn_from_refusal(self, err: Any, *, auto: bool, sent: EndpointQuirks, sent_params: dict[str, Any],
                           where: str, logprobs_auto: bool = True) -> bool:
        """After a refusal ``err``: True if the request should be sent again without what the endpoint refused.

        ``sent`` and ``sent_params`` are what THIS request sent. With several requests in flight, the first
        refusal changes these quirks; the others, refused for the same parameter, find it already learned and
        are simply sent again with the current setting. A parameter that was not sent cannot be learned, so an
        endpoint that keeps refusing makes the question fail instead of looping; nor can what a flag forces
        (``auto``: the output format is ours to choose; ``logprobs_auto``: so are log-probabilities)."""
        param = sent.refusal_of(err, sent_params)
        if param is None:
            return False
        if param == "response_format":
            if not auto:
                return False
            self.learn_strategy(sent.strategy, chain_from(sent.strategy)[1], where, evidence_of(err))
            return True
        if param in LOGPROB_PARAMS and not logprobs_auto:
            return False
        self.learn_parameter(param, sent_params.get(param), where, evidence_of(err))
        return True

    # -- kept in the response cache between runs ---------------------------------------------------

    def remembered(self) -> dict[str, Any]:
        """What the next run against this (endpoint, model) should start from (JSON)."""
        return {"strategy": self.strategy.value, "logprobs": self.logprobs, "max_tokens_param": self.max_tokens_param,
                "dropped": sorted(self.dropped), "learned": list(self.learned), "grammar": self.grammar,
                "evidence": list(self.evidence)} | ({"identity": self.identity} if self.identity else {})

    def restore(self, saved: Any, *, auto: bool, logprobs_auto: bool, where: str) -> None:
        """Start from what an earlier run learned (``saved``: ``remembered()`` read back from the cache file,
        so checked field by field): a lesson about what a flag forces is left out, the flag decides."""
        if not isinstance(saved, dict):
            return
        lessons = [str(line) for line in saved.get("learned") or [] if isinstance(line, str)]
        if auto and saved.get("strategy") in {s.value for s in chain_from(self.strategy)}:
            self.strategy = StructuredOutput(saved["strategy"])
        if logprobs_auto and saved.get("logprobs") is False:
            self.logprobs = False
        if saved.get("max_tokens_param") in ("max_completion_tokens", None) and "max_tokens_param" in saved:
            self.max_tokens_param = saved["max_tokens_param"]
        self.grammar = saved.get("grammar") is True
        self.identity = saved["identity"][:1000] if isinstance(saved.get("identity"), str) else ""
        dropped = saved.get("dropped")
        if isinstance(dropped, list):
            self.dropped = frozenset(p for p in dropped if isinstance(p, str) and p not in NEVER_DROPPED)
        kept = [ln for ln in lessons if (auto or not ln.startswith("response_format"))
                and (logprobs_auto or not ln.startswith("logprobs"))]
        self.learned = tuple(kept)
        said = saved.get("evidence")
        self.evidence = tuple(e for e in said if isinstance(e, dict) and e.get("lesson") in kept) \
            if isinstance(said, list) else ()
        if kept:
            log.warning("%s: starting from what an earlier run learned: %s", where, "; ".join(kept))

    def grow_budget(self, current: int, where: str) -> bool:
        """After a reply cut off while reasoning: a bigger budget, once per size. False at the cap."""
        bigger = min(BUDGET_CAP, current * BUDGET_GROWTH)
        if bigger <= current:
            return False
        if self.budget is None or self.budget < bigger:
            self.budget = bigger
            self._note(f"reasoning used the whole completion budget of {current}: raised to {bigger}", where,
                       {"said": "a reply cut off while reasoning, with no text", "when": round(time.time(), 3)})
        return True

    def apply(self, params: dict[str, Any], max_tokens: int) -> dict[str, Any]:
        """``params`` as this endpoint takes them (``max_tokens`` under its learned name, dropped ones out)."""
        out = {k: v for k, v in params.items() if k not in self.dropped and k not in LOGPROB_PARAMS}
        if self.max_tokens_param is not None:
            out[self.max_tokens_param] = self.budget or max_tokens
        if self.logprobs:
            out.update({k: params[k] for k in LOGPROB_PARAMS if k in params})
        return out
