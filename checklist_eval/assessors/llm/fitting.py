"""The LLM assessor's fitting of papers to the model's context: what the engine says about itself
before the first request (``engine.probe``: its window, its slots for the scheduler), the prompt of a
question within that window (the whole paper, shared by every question, or the passages most relevant
to the question: ``messages``), and a refusal as too long taken as an answer about the context (the
window and tokenizer density it names are learned and the request rebuilt, never resent as it was).
A mixin of ``LLMAssessor``, which provides ``config``, ``prompts``, ``window``, ``scheduler`` and the
endpoint's identity."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import openai

from checklist_eval.assessors.config import CHARS_PER_TOKEN
from checklist_eval.assessors.llm.facts import question_for
from checklist_eval.assessors.llm.messages import PaperPrefix, prefix_key, prefix_messages, question_query
from checklist_eval.endpoint.context import ContextWindow, context_refusal
from checklist_eval.endpoint.probe import EngineFacts, probe
from checklist_eval.models import ChecklistItem, Paper, ParseWarning, StructuredOutput, Usage

if TYPE_CHECKING:
    from checklist_eval.assessors.config import LLMConfig
    from checklist_eval.assessors.llm.asking import Question, RequestFailed
    from checklist_eval.assessors.llm.prompts import PromptSet
    from checklist_eval.endpoint.cache import Cache
    from checklist_eval.endpoint.capabilities import EndpointQuirks
    from checklist_eval.endpoint.scheduler import Scheduler
    from checklist_eval.errors import AssessorError

log = logging.getLogger("checklist_eval.assessors.llm.assessor")


class ContextFitting:
    if TYPE_CHECKING:  # what the host class (LLMAssessor) provides; declared so the mixin is checked
        config: LLMConfig
        prompts: PromptSet
        window: ContextWindow
        scheduler: Scheduler
        base_url: str | None
        model: str | None
        _prefixes: dict[tuple[Any, ...], PaperPrefix]
        _told_cut: set[str]
        _engine_asked: asyncio.Task[EngineFacts] | None
        _engine_known: bool
        engine_grammar: bool
        engine_object_schema: bool
        endpoint: str
        cache: Cache
        usage: Usage

        def quirks(self) -> EndpointQuirks: ...
        def _usage_of(self, completion: Any, attempts: int) -> Usage: ...

        @property
        def _where(self) -> str: ...
        def _client_for_loop(self) -> openai.AsyncOpenAI: ...
        def _refused_key(self, err: openai.APIStatusError) -> AssessorError: ...

    def paper_prefix(self, paper: Paper, strategy: StructuredOutput = StructuredOutput.JSON_SCHEMA,
                     item: ChecklistItem | None = None) -> PaperPrefix:
        """The messages before ``item``'s question block: the whole paper's, shared by every question,
        when it fits the context; else the passages most relevant to ``item`` (see ``messages``)."""
        budget = self.window.prompt_char_budget(self.config.max_tokens)
        whole = self._prefix((prefix_key(paper, strategy), budget), paper, strategy, budget, None)
        if whole.share >= 1.0 or item is None:
            return whole
        return self._prefix((prefix_key(paper, strategy), budget, question_query(item)), paper, strategy, budget, item)

    def _prefix(self, key: tuple[Any, ...], paper: Paper, strategy: StructuredOutput, budget: int,
                item: ChecklistItem | None) -> PaperPrefix:
        cached = self._prefixes.get(key)
        if cached is not None:
            return cached
        built = prefix_messages(self.prompts, paper, budget, strategy, item)
        tokens = sum(len(m["content"]) for m in built.messages) // CHARS_PER_TOKEN
        prefix = PaperPrefix(built.messages, tokens, built.warning, built.share)
        # Said once the paper's first question really gets part of it: without a question the prefix holds every
        # question's guidelines, and the paper that does not fit beside them may fit a question's own prompt.
        if built.warning and item is not None and paper.source not in self._told_cut:
            self._told_cut.add(paper.source)
            log.warning("%s: %s", paper.source, built.warning.message)
        if len(self._prefixes) > 4096:  # a batch of hundreds of papers: keep memory flat
            self._prefixes.clear()
        self._prefixes[key] = prefix
        return prefix

    def paper_warnings(self, paper: Paper) -> list[ParseWarning]:
        """That the paper did not fit the context, when it did not (and any question was asked): each
        question then got the passages most relevant to it, and the warning says what share of the text."""
        answered = [item for item in paper.checklist.items if item.is_answered]
        warning = self.paper_prefix(paper).warning if answered else None
        if warning is None:
            return []
        shares = sorted(self.paper_prefix(paper, item=item).share for item in answered)
        if shares[0] >= 1.0:  # every question was given the whole paper (with its own guidelines only)
            return []
        told = (f"{warning.message} ({shares[len(shares) // 2]:.0%} of the text on median, {shares[0]:.0%} at "
                f"least; a context window of {self.window.tokens} tokens, from {self.window.source})")
        return [warning.model_copy(update={"message": told})]

    def messages_for(self, paper: Paper, item: ChecklistItem, strategy: StructuredOutput) -> list[dict[str, str]]:
        prefix = self.paper_prefix(paper, strategy, item)
        return [*prefix.messages, {"role": "user", "content": question_for(self.prompts, paper, item)}]

    async def _learn_engine(self) -> None:
        """Ask the engine once per run, before its first request, what it holds and runs at once
        (``engine.probe``); a changed window changes the prompt, so callers look in the cache again.
        Asked only of an endpoint given by URL: a hosted API's windows are the table's."""
        if self._engine_known or self.base_url is None:
            return
        loop = asyncio.get_running_loop()
        if self._engine_asked is None or self._engine_asked.get_loop() is not loop:
            # A local engine left at the default --timeout gets its pace's deadline (the default, before any answer).
            self._engine_asked = loop.create_task(probe(self._client_for_loop(), self.base_url, self.model or "",
                                                        ask_behind_proxy=not self.quirks().grammar,
                                                        timeout=self.config.timeout))
        try:
            facts = await asyncio.shield(self._engine_asked)
        except (openai.AuthenticationError, openai.PermissionDeniedError) as err:
            raise self._refused_key(err) from None
        if not self._engine_known:
            self._engine_known = True
            self._take_engine_facts(facts)

    def _memory_of_window(self) -> int:
        """The window in the units of the scheduler's estimates (characters over ``CHARS_PER_TOKEN``; the
        window holds characters at its own, denser count)."""
        return int(self.window.tokens * self.window.chars_per_token / CHARS_PER_TOKEN)

    def _take_engine_facts(self, facts: EngineFacts) -> None:
        if facts.context_tokens and self.window.source != "--context-tokens":
            self.window = ContextWindow(facts.context_tokens, facts.source)
        elif facts.context_tokens and facts.context_tokens < self.window.tokens:
            self.window = ContextWindow(facts.context_tokens, f"{facts.source}, under --context-tokens")
        if facts.slots:
            self.scheduler.set_slots(facts.slots)
        if facts.shared_memory:
            self.scheduler.memory_tokens = self._memory_of_window()
        self.engine_grammar = facts.grammar
        if facts.probe_usage is not None:  # the one-token question asked through a proxy is paid for too
            self.usage = self.usage + self._usage_of({"usage": facts.probe_usage}, 1)
        if facts.behind_proxy:
            self.quirks().learn_grammar(self._where)
            self.cache.remember_capabilities(self.endpoint, self.model or "", self.quirks().remembered())
        self.engine_object_schema = facts.object_schema
        if facts.identity and facts.identity != self.quirks().identity:
            self._take_identity(facts.identity)
        if facts.costly_logprobs and self.config.logprobs == "auto":
            self.quirks().forgo_logprobs(facts.costly_logprobs, self._where)
        if facts.context_tokens or facts.slots:
            log.info("%s: a context window of %d tokens (%s); %s", self._where, self.window.tokens, self.window.source,
                     f"{self.scheduler.limit} request(s) in flight ({facts.slots} slots)" if facts.slots
                     else "no slot count given: requests in flight adapt to its answers")

    def _take_identity(self, identity: str) -> None:
        """The model the engine says it serves keys the cache from now on (``endpoint.served``); remembered, so
        a later run asks the engine again before answering from the cache. Another model than the one an
        earlier run saw starts afresh: that model's first clean answer is not this one's."""
        quirks = self.quirks()
        saved = self.cache.capabilities(self.endpoint, self.model or "")
        first_seen = not quirks.identity
        if quirks.identity:
            log.warning("%s: the engine now serves %s (it served %s): its verdicts are asked afresh", self._where,
                        identity, quirks.identity)
        quirks.identity = identity
        kept = {"answered": saved["answered"]} if first_seen and isinstance(saved, dict) and "answered" in saved else {}
        self.cache.remember_capabilities(self.endpoint, self.model or "", quirks.remembered() | kept)

    def _shrunk_after_refusal(self, paper: Paper, item: ChecklistItem, failed: RequestFailed,
                              question: Question) -> bool:
        """A request refused as longer than the context is an answer about the context, not a fault: the
        window and tokenizer density it names are learned, and the question is rebuilt within them."""
        err = failed.cause
        if not isinstance(err, openai.APIStatusError):
            return False
        said = context_refusal(err.status_code, err.body, str(getattr(err, "message", "") or err))
        if said is None:
            return False
        if failed.budget > self.window.prompt_char_budget(self.config.max_tokens):
            return True  # built before another refusal taught a smaller budget: build it again
        if not self.window.learn_refusal(failed.chars, *said):
            return False
        log.warning("%s refused %d characters as longer than its context (%s prompt tokens, a window of %s); "
                    "sending what fits %d tokens", self._where, failed.chars, said[0] or "?", said[1] or "?",
                    self.window.tokens)
        return True
