"""A paper fitted to the model's context window: the prompt of a question within that window (the whole
paper, shared by every question, or the passages most relevant to the question: ``messages``), the window
as the engine states it (``take_engine_window``, from ``endpoint.probe``), and a refusal as too long taken as
an answer about the context (the window and tokenizer density it names are learned and the request rebuilt,
never resent as it was). An object the LLM assessor holds (``LLMAssessor.fitting``); the window it keeps is the
one every request of the assessor is built for."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import openai

from checklist_eval.assessors.config import CHARS_PER_TOKEN
from checklist_eval.assessors.llm.facts import question_for
from checklist_eval.assessors.llm.messages import PaperPrefix, prefix_key, prefix_messages, question_query
from checklist_eval.endpoint.context import ContextWindow, context_refusal
from checklist_eval.models import ChecklistItem, Paper, ParseWarning, StructuredOutput

if TYPE_CHECKING:
    from checklist_eval.assessors.config import LLMConfig
    from checklist_eval.assessors.llm.asking import RequestFailed
    from checklist_eval.assessors.llm.prompts import PromptSet
    from checklist_eval.endpoint.probe import EngineFacts

log = logging.getLogger(__name__)


class ContextFitting:
    def __init__(self, config: LLMConfig, prompts: PromptSet, window: ContextWindow, where: str):
        self.config = config
        self.prompts = prompts
        self.window = window  # what the engine says (``take_engine_window``) and refuses may lower it
        self.where = where  # the endpoint and model, as the log names them
        self._prefixes: dict[tuple[Any, ...], PaperPrefix] = {}
        self._told_cut: set[str] = set()  # papers whose cut to passages was said (once each)

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

    def memory_of_window(self) -> int:
        """The window in the units of the scheduler's estimates (characters over ``CHARS_PER_TOKEN``; the
        window holds characters at its own, denser count)."""
        return int(self.window.tokens * self.window.chars_per_token / CHARS_PER_TOKEN)

    def take_engine_window(self, facts: EngineFacts) -> None:
        """The window the engine states (``endpoint.probe``), over the table's; under ``--context-tokens`` only
        a smaller one (the engine cannot hold more than it has)."""
        if facts.context_tokens and self.window.source != "--context-tokens":
            self.window = ContextWindow(facts.context_tokens, facts.source)
        elif facts.context_tokens and facts.context_tokens < self.window.tokens:
            self.window = ContextWindow(facts.context_tokens, f"{facts.source}, under --context-tokens")

    def shrunk_after_refusal(self, failed: RequestFailed) -> bool:
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
                    "sending what fits %d tokens", self.where, failed.chars, said[0] or "?", said[1] or "?",
                    self.window.tokens)
        return True
