"""How much text one request may carry: the model's context window, where it was learned, and the
character budget of a prompt.

The window comes, first found first, from ``--context-tokens``, the engine itself (``endpoint.probe``:
llama.cpp's ``/props`` n_ctx per slot, a ``/v1/models`` entry's ``max_model_len`` / ``context_length``),
the model table (``config.CONTEXT_TOKENS``), else ``DEFAULT_CONTEXT_TOKENS``. A request the engine
still refuses as too long (llama.cpp's 400 "exceeds the available context size", OpenAI's
``context_length_exceeded``) teaches the window and the tokenizer's density it names: the request is
rebuilt smaller and sent again, never resent as it was.

Characters are turned into tokens at ``BUDGET_CHARS_PER_TOKEN``, denser than the ``CHARS_PER_TOKEN``
the cost estimates use: LaTeX, numbers and non-English words tokenize denser than English prose, and a
prompt over the window is refused outright, while a cost estimate only has to be close.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["BUDGET_CHARS_PER_TOKEN", "ContextWindow", "TEMPLATE_TOKENS", "context_refusal"]

# Measured with an engine's own chat template and tokenizer (llama.cpp, Gemma 3) on the longest prompt of
# each of the 42 shared papers (scripts/bench_context.py): at 2.8 the densest came within 7 tokens of a
# 128k window (about 2.5 characters a token: LaTeX), so 2.5, with the paper's 10 % margin on top.
BUDGET_CHARS_PER_TOKEN = 2.5
TEMPLATE_TOKENS = 64  # the chat template's role markers and separators around four messages
MIN_CHARS_PER_TOKEN = 1.0  # no tokenizer packs less; a refusal naming fewer is not believed
MAX_SHRINKS = 3  # a question refused as too long is rebuilt smaller at most this often

_LLAMA_CPP = re.compile(r"request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)", re.I)
_OPENAI = re.compile(r"maximum context length is (\d+) tokens.*?(?:resulted in|requested) (\d+) tokens", re.I | re.S)
_WORDS = re.compile(r"exceeds? the available context size|context_length_exceeded|maximum context length|"
                    r"exceed_context_size|context window|too many tokens|prompt is too long", re.I)


def context_refusal(status: int, body: Any, message: str) -> tuple[int | None, int | None] | None:
    """(prompt tokens, context tokens) of a refusal of the request as too long, each None where the
    refusal does not say; None when ``body``/``message`` is not such a refusal. Proxies (LiteLLM) wrap
    the engine's words in their own message, so the text is searched, not only the fields."""
    if status not in (400, 413, 422, 500):
        return None
    inner = body.get("error", body) if isinstance(body, dict) else None
    text = f"{message} {body}"
    if isinstance(inner, dict) and all(type(inner.get(k)) is int for k in ("n_prompt_tokens", "n_ctx")):
        return inner["n_prompt_tokens"], inner["n_ctx"]
    m = _LLAMA_CPP.search(text)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = _OPENAI.search(text)
    if m:
        return int(m.group(2)), int(m.group(1))
    if _WORDS.search(text):
        return None, None
    return None


@dataclass
class ContextWindow:
    """The window of one (endpoint, model) for the run, and how its characters are counted."""

    tokens: int
    source: str  # where ``tokens`` was learned: "--context-tokens", "engine /props", "model table" ...
    chars_per_token: float = BUDGET_CHARS_PER_TOKEN
    shrinks: int = 0  # refusals learned from

    def prompt_char_budget(self, max_tokens: int) -> int:
        """Characters the whole prompt may hold: the window less the reply's budget and the template."""
        return int(self.chars_per_token * max(0, self.tokens - max_tokens - TEMPLATE_TOKENS))

    def learn_refusal(self, sent_chars: int, prompt_tokens: int | None, context_tokens: int | None) -> bool:
        """Shrink after a refusal of ``sent_chars`` characters as too long; False when there is nothing
        left to learn (a refusal repeating after ``MAX_SHRINKS`` rounds is the endpoint's own problem)."""
        if self.shrinks >= MAX_SHRINKS:
            return False
        self.shrinks += 1
        before = (self.tokens, self.chars_per_token)
        if context_tokens and context_tokens < self.tokens:
            self.tokens, self.source = context_tokens, "the endpoint's refusal"
        if prompt_tokens and sent_chars > 0:
            measured = max(MIN_CHARS_PER_TOKEN, sent_chars / prompt_tokens)
            # 10 % under what this prompt measured: the next paper may tokenize denser still.
            self.chars_per_token = min(self.chars_per_token, 0.9 * measured)
        if (self.tokens, self.chars_per_token) == before:  # told nothing new: the same request would fail
            self.chars_per_token *= 0.75
        return True
