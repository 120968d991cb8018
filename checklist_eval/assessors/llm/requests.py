"""What one question's request is, built in one place so that every path asks exactly the same: its
parameters as the endpoint takes them (what it refused left out or renamed; llama.cpp's grammar where the
engine is llama.cpp's server), its body (the online path posts it, a batch requests file holds it), the
sampling as sent, its cache key and its call-log entry. An object the LLM assessor holds
(``LLMAssessor.requests``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from checklist_eval.assessors.llm.facts import question_for
from checklist_eval.assessors.llm.grammar import GRAMMAR, SCHEMA_DIGEST, object_with_schema, response_format
from checklist_eval.endpoint.cache import cache_key
from checklist_eval.endpoint.calllog import CallLog
from checklist_eval.endpoint.served import keyed_model
from checklist_eval.models import ChecklistItem, Paper, StructuredOutput

if TYPE_CHECKING:
    from checklist_eval.assessors.config import LLMConfig
    from checklist_eval.assessors.llm.fitting import ContextFitting
    from checklist_eval.assessors.llm.prompts import PromptSet
    from checklist_eval.endpoint.capabilities import EndpointQuirks

__all__ = ["RequestShape"]


class RequestShape:
    def __init__(self, config: LLMConfig, prompts: PromptSet, fitting: ContextFitting, *, endpoint: str,
                 model: str | None, prompt_version: str | None):
        self.config = config
        self.prompts = prompts
        self.fitting = fitting
        self.endpoint = endpoint
        self.model = model
        self.prompt_version = prompt_version
        self.engine_grammar = False  # the engine takes llama.cpp's ``grammar`` (what it said of itself)
        self.engine_object_schema = False  # ... a schema inside json_object (llama-cpp-python's server)

    def params(self, strategy: StructuredOutput, quirks: EndpointQuirks) -> dict[str, Any]:
        """The request parameters, as this endpoint takes them (what it refused left out or renamed)."""
        params: dict[str, Any] = {"temperature": self.config.temperature}
        if self.config.seed is not None:
            params["seed"] = self.config.seed
        if self.config.reasoning_effort is not None:
            params["reasoning_effort"] = self.config.reasoning_effort
        fmt = response_format(strategy)
        grammar = self.engine_grammar or quirks.grammar
        if strategy is StructuredOutput.JSON_SCHEMA and grammar and "grammar" not in quirks.dropped:
            params["grammar"] = GRAMMAR  # the schema's reply without the padding llama.cpp's own grammar allows
        elif strategy is StructuredOutput.JSON_SCHEMA and self.engine_object_schema:
            params["response_format"] = object_with_schema()  # the only way its server takes a schema
        elif fmt is not None:
            params["response_format"] = fmt
        params["logprobs"] = True
        params["top_logprobs"] = 5
        return quirks.apply(params, self.config.max_tokens)

    def body(self, paper: Paper, item: ChecklistItem, sent: EndpointQuirks,
             feedback: Sequence[dict[str, str]] = ()) -> dict[str, Any]:
        """The chat-completion body for one question (plus the re-ask ``feedback``): what the online path
        posts and what a batch requests file holds, built in one place so both ask exactly the same."""
        return {"model": self.model, "messages": self.fitting.messages_for(paper, item, sent.strategy) + list(feedback),
                **self.params(sent.strategy, sent)}

    def sent_sampling(self, quirks: EndpointQuirks) -> dict[str, Any]:
        """The sampling parameters as this endpoint is sent them: one a lesson dropped (temperature, seed) is
        not sent, so it is neither recorded nor keyed as if it were; the completion budget as sent."""
        params: dict[str, Any] = {"temperature": self.config.temperature,
                                  "max_tokens": (quirks.budget or self.config.max_tokens)
                                  if quirks.max_tokens_param is not None else None}
        if self.config.seed is not None:
            params["seed"] = self.config.seed
        if self.config.reasoning_effort is not None:
            params["reasoning_effort"] = self.config.reasoning_effort
        return {k: v for k, v in params.items() if k not in quirks.dropped}

    def cache_key(self, paper: Paper, question: str, strategy: StructuredOutput, quirks: EndpointQuirks) -> str:
        """What changes the answer, and only that: the endpoint, model, prompt (the prefix by its digest),
        the sampling as sent (``sent_sampling``), strategy and prompt version. Transport knobs are left out.
        A paper over the context is keyed by its whole prefix at this budget: the passages a question gets
        follow from it and the question, both in the key."""
        return cache_key(endpoint=self.endpoint, model=keyed_model(self.model or "", quirks.identity),
                         prefix_digest=self.fitting.paper_prefix(paper, strategy).digest, question=question,
                         params=self.sent_sampling(quirks), strategy=strategy.value,
                         prompt_version=self.prompt_version or "", schema=SCHEMA_DIGEST)

    def call_log(self, paper: Paper, item: ChecklistItem, strategy: StructuredOutput, reply: Any, outcome: str,
                 quirks: EndpointQuirks) -> CallLog:
        """The call-log entry of one reply (``checklist-eval logs``): what was asked and what came back."""
        prefix = self.fitting.paper_prefix(paper, strategy, item)
        params = {k: v for k, v in self.params(strategy, quirks).items() if k != "response_format"}
        return CallLog(source=paper.source, question_id=item.id, prefix_digest=prefix.digest,
                       prefix_messages=prefix.messages, question=question_for(self.prompts, paper, item),
                       params=params | {"strategy": strategy.value}, response=reply, outcome=outcome)
