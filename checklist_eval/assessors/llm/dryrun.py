"""What an LLM run would spend, without sending anything (``--dry-run``; see
``checklist_eval.assessors.estimate``): the exact messages the assessor would build, counted at
``CHARS_PER_TOKEN`` characters a token."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from checklist_eval.assessors.config import CHARS_PER_TOKEN, LLMConfig
from checklist_eval.assessors.llm.facts import question_for
from checklist_eval.assessors.llm.messages import prefix_messages
from checklist_eval.assessors.llm.prompts import PromptSet
from checklist_eval.endpoint.cache import digest_messages
from checklist_eval.endpoint.formats import chain_from
from checklist_eval.endpoint.prices import PriceTable
from checklist_eval.models import ChecklistItem, Paper, StructuredOutput, Usage

__all__ = ["estimate_run"]

TYPICAL_COMPLETION_TOKENS = 250  # a verdict with a 3-5 point review, for estimates
PREFIX_CACHE_MIN_TOKENS = 1024  # OpenAI caches prompt prefixes from this length on


@dataclass
class _Planner:
    """The requests of a run, paper by paper: unanswered items are skipped, a request identical to one
    already planned (same prefix, same question) is sent once, and one the cache answers is not sent."""

    prompts: PromptSet
    prompt_budget: int
    completion_tokens: int  # per call
    in_cache: Callable[[str, str, str], bool] | None  # (strategy, prefix digest, question) -> answered?
    asked: set[tuple[str, str]] = field(default_factory=set)
    calls: int = 0
    skipped: int = 0
    answered_before: int = 0
    prompt_chars: int = 0

    def plan_paper(self, paper: Paper) -> dict[str, Any]:
        whole = prefix_messages(self.prompts, paper, self.prompt_budget)
        questions = self._questions_to_send(paper, digest_messages(whole.messages))
        prefixes = [whole if whole.share >= 1.0 else prefix_messages(self.prompts, paper, self.prompt_budget, item=item)
                    for item, _ in questions]
        n = len(questions)
        paper_chars = sum(_chars(p.messages) + len(q) for p, (_, q) in zip(prefixes, questions, strict=True))
        self.calls += n
        self.prompt_chars += paper_chars
        prefix_tokens = _chars(whole.messages) // CHARS_PER_TOKEN
        shares = sorted(p.share for p in prefixes) or [whole.share]
        return {
            "source": paper.source, "calls": n, "truncated": whole.warning is not None,
            # of the paper's text each question is given: a paper over the context gives the passages
            # most relevant to the question (median and least over its questions)
            "body_share": round(shares[len(shares) // 2], 4), "body_share_min": round(shares[0], 4),
            "prompt_tokens": paper_chars // CHARS_PER_TOKEN,
            # Providers cache a shared prefix of at least PREFIX_CACHE_MIN_TOKENS after its first use.
            "cached_tokens": (prefix_tokens * max(0, n - 1)
                              if prefix_tokens >= PREFIX_CACHE_MIN_TOKENS and whole.share >= 1.0 else 0),
            "completion_tokens": n * self.completion_tokens,
        }

    def _questions_to_send(self, paper: Paper, digest: str) -> list[tuple[ChecklistItem, str]]:
        out = []
        digests: dict[StructuredOutput, str] = {}
        for item in paper.checklist.items:
            if not item.is_answered:
                self.skipped += 1
                continue
            question = question_for(self.prompts, paper, item)
            if (digest, question) in self.asked:
                continue
            self.asked.add((digest, question))
            if self._cached(paper, question, digests):
                self.answered_before += 1
                continue
            out.append((item, question))
        return out

    def _cached(self, paper: Paper, question: str, digests: dict[StructuredOutput, str]) -> bool:
        if self.in_cache is None:
            return False
        if not digests:  # the prefix of every strategy a cached answer may have been asked in
            digests.update({s: digest_messages(prefix_messages(self.prompts, paper, self.prompt_budget, s).messages)
                            for s in chain_from(StructuredOutput.JSON_SCHEMA)})
        return any(self.in_cache(s.value, d, question) for s, d in digests.items())


def _chars(messages: list[dict[str, str]]) -> int:
    return sum(len(m["content"]) for m in messages)


def estimate_run(papers: list[Paper], options: dict[str, Any]) -> dict[str, Any]:
    """Calls and tokens an LLM run would spend (see ``checklist_eval.assessors.estimate``)."""
    model = options.get("model")
    prices = PriceTable.load(options.get("prices"))
    cfg = LLMConfig(model=model or "unknown", **{k: options[k] for k in ("prompt_version", "max_tokens",
                                                                       "context_tokens") if options.get(k)})
    price = prices.lookup(model) if model else None
    reasoning = price.reasoning_estimate(options.get("reasoning_effort")) if price else 0
    planner = _Planner(PromptSet.load(cfg.prompt_version), cfg.prompt_char_budget,
                       min(TYPICAL_COMPLETION_TOKENS, cfg.max_tokens) + reasoning, options.get("in_cache"))
    per_paper = [planner.plan_paper(paper) | {"reasoning_tokens": 0} for paper in papers]
    for per in per_paper:  # reasoning tokens are part of the completion tokens, as providers count them
        per["reasoning_tokens"] = per["calls"] * reasoning
    prompt_tokens = planner.prompt_chars // CHARS_PER_TOKEN
    completion_tokens = planner.calls * planner.completion_tokens
    cost = prices.cost(model, Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)) if model else 0.0
    return {
        "model": model,
        "calls": planner.calls,
        "skipped_unanswered": planner.skipped,
        "already_cached": planner.answered_before,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "reasoning_tokens": planner.calls * reasoning,
        "reasoning_per_call": reasoning,
        "cost_usd": round(cost, 6),
        "priced": bool(model) and prices.lookup(model) is not None,
        "papers": per_paper,
        "context_tokens": cfg.context_window,
        "note": "tokens ~ characters/4; cost assumes no provider prefix-cache discount (an upper estimate)",
    }
