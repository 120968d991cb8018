"""Token log-probabilities of a text from an OpenAI-compatible *completions* endpoint.

One request per text: ``echo=true``, ``logprobs=k``, ``max_tokens=1`` (vLLM, llama-cpp-python, legacy
OpenAI base models), which returns the prompt's tokens with their log-probabilities and top-k
alternatives, and one generated token, dropped. Not 0: llama-cpp-python's server reads 0 as "until the
context is full" (the real one generated to its 2048-token context for every request), and some servers
refuse it. A server whose echo carries no log-probabilities is asked with vLLM's ``prompt_logprobs=k`` instead (one
``{token_id: {logprob, rank, decoded_token}}`` per prompt token, the prompt token's own entry first,
as vLLM builds it).

The n-gram references of the perplexity-slope method (each token given only its n preceding tokens)
go to the same endpoint as a batch of short prompts, one per token, in requests of at most
:data:`BATCH` prompts. A server that refuses a list of prompts (llama-cpp-python's answers HTTP 500) is
sent one prompt per request from then on.

A text longer than :data:`MAX_WORDS` words is asked for in pieces of that many words, and the pieces'
tokens put back together: a server keeping every prompt token's logits (llama-cpp-python started with
``--logits_all true`` needs about 1 MB per token for a 262k vocabulary) then holds one piece at a time,
and no request outgrows a small context.

Hosted OpenAI cannot do this (its chat models give log-probabilities of generated tokens only, and no
completions model there echoes prompt log-probabilities any more): :func:`refuse_hosted_openai`
says so before any request.
"""

from __future__ import annotations

import asyncio
import math
import os
from dataclasses import dataclass
from urllib.parse import urlparse

import numpy as np

from checklist_eval import redact
from checklist_eval.endpoint.cache import endpoint_identity
from checklist_eval.errors import AssessorError, InputError
from checklist_eval.membership.contamination import TokenText, chunk_words

BATCH = 256
MAX_WORDS = 256  # words per echo request (about 350 tokens): see the module docstring
# A reply's size cap: a paper chunk with top-20 log-probabilities, or 256 n-gram prompts, is well under
# 1 MiB (vLLM's prompt_logprobs format is the largest); past this a reply is refused, never buffered.
MAX_REPLY_BYTES = 16 * 2**20
MAX_TOP = 20
GENERATED_TOKENS = 1  # asked for with every echo and dropped (see above: never 0)
NO_KEY = "no-key-needed"  # local servers accept any bearer token

HOSTED_REFUSAL = (
    "hosted OpenAI (and Azure OpenAI) models cannot return prompt log-probabilities (chat models only "
    "score generated tokens): point --base-url at a completions endpoint that echoes them (vLLM, "
    "llama.cpp), or pass --logprobs FILE"
)


def refuse_hosted_openai(base_url: str | None) -> None:
    host = (urlparse(base_url).hostname or "") if base_url else "api.openai.com"
    if host == "api.openai.com" or host.endswith((".openai.com", ".openai.azure.com")):
        raise InputError(None, HOSTED_REFUSAL)


@dataclass
class PromptView:
    """A prompt's tokens as the endpoint split them, with offsets into the prompt text, their
    log-probabilities (None: no prediction, as for the first) and top-k alternatives."""

    tokens: list[str]
    offsets: list[int]
    logprobs: list[float | None]
    tops: list[dict[str, float] | None] | None


class LogprobClient:
    """Synchronous to its caller (the work is a handful of large requests, in order), over the project's
    one HTTP client (``assessors.transport``: total deadline per request, size cap, redaction) and
    retry policy with its circuit breaker, run on a private event loop."""

    def __init__(self, model: str, base_url: str | None, *, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 120.0, top_k: int = 5, batch: int = BATCH, max_attempts: int = 3):
        from checklist_eval.endpoint.retry import RetryPolicy
        from checklist_eval.endpoint.transport import openai_client

        refuse_hosted_openai(base_url)
        if not 0 <= top_k <= MAX_TOP:
            raise InputError(None, f"--top-k must be in [0, {MAX_TOP}], got {top_k}")
        self.model = model
        self.base_url = base_url
        self.top_k = top_k
        self.api_key_env = api_key_env
        self.batch = max(1, batch)  # n-gram prompts per request
        self._vllm_prompt_logprobs = False
        self._key = os.environ.get(api_key_env, "").strip() or NO_KEY
        redact.register(self._key)
        self._loop = asyncio.new_event_loop()
        self._retry = RetryPolicy(max_attempts=max_attempts)
        self._client = openai_client(api_key=self._key, base_url=base_url, timeout=timeout,
                                     max_bytes=MAX_REPLY_BYTES)

    def close(self) -> None:
        try:
            self._loop.run_until_complete(self._client.close())
        finally:
            self._loop.close()

    def _request(self, prompt, k: int):
        import openai

        from checklist_eval.endpoint.capabilities import is_refusal_status, refused_parameter
        from checklist_eval.endpoint.retry import MalformedResponse

        async def attempt():
            try:
                return await ask()
            except openai.APIStatusError as err:  # a refusal is an answer about the server: not retried
                if not is_refusal_status(err.status_code):
                    raise
                if isinstance(prompt, list):
                    raise ListPromptRefused(str(err)) from err
                if refused_parameter(err, ("logprobs", "echo", "prompt_logprobs", "max_tokens")):
                    raise ParameterRefused(err) from err
                raise

        async def ask():
            if self._vllm_prompt_logprobs:
                reply = await self._client.completions.create(
                    model=self.model, prompt=prompt, max_tokens=GENERATED_TOKENS, extra_body={"prompt_logprobs": k})
            else:
                reply = await self._client.completions.create(model=self.model, prompt=prompt, echo=True,
                                                              logprobs=k, max_tokens=GENERATED_TOKENS)  # fmt: skip
            if not isinstance(getattr(reply, "choices", None), list):  # retried, as a garbled chat reply is
                raise MalformedResponse(f"reply is a JSON {type(reply).__name__}, not a completions object")
            return reply

        return self._loop.run_until_complete(self._retry.run(attempt))

    def _create(self, prompt, k: int):
        import openai

        from checklist_eval.endpoint.retry import EndpointFault, fatal_error

        try:
            try:
                return self._request(prompt, k)
            except ParameterRefused as refused:
                raise refused.error from None
        except (openai.APIError, EndpointFault) as err:
            raise fatal_error(err, endpoint=endpoint_identity(self.base_url), model=self.model,
                              api_key_env=self.api_key_env, secrets=(self._key,)) from None

    def _views(self, prompts: list[str], k: int) -> list[PromptView | None]:
        if len(prompts) > 1:
            try:
                return self._listed_views(prompts, k)
            except ListPromptRefused:
                self.batch = 1  # this server takes one prompt per request: so it is sent from now on
            return [view for p in prompts for view in self._listed_views([p], k)]
        return self._listed_views(prompts, k)

    def _listed_views(self, prompts: list[str], k: int) -> list[PromptView | None]:
        choices = sorted(self._create(prompts if len(prompts) > 1 else prompts[0], k).choices or [],
                         key=lambda c: c.index)  # fmt: skip
        # Matched by index, not by position: a reply missing a choice must not shift the others onto
        # the wrong prompt; a prompt without its choice has no view.
        by_index = {c.index: c for c in choices}
        return [self._view(by_index[i], text) if i in by_index else None for i, text in enumerate(prompts)]

    def _view(self, choice, text: str) -> PromptView | None:
        if self._vllm_prompt_logprobs:
            return _vllm_view((choice.model_extra or {}).get("prompt_logprobs"), text)
        return _echo_view(choice.logprobs, GENERATED_TOKENS)

    def fetch(self, text_id: str, text: str, ngram: int = 0) -> TokenText:
        """The text's tokens with log-probabilities and top-k alternatives (the first token, which has
        no prediction, dropped); with ``ngram`` > 0 also each token's log-probability given only its
        ``ngram`` preceding tokens. A text past :data:`MAX_WORDS` words is asked for in pieces."""
        pieces = chunk_words(text, MAX_WORDS) if len(text.split()) > MAX_WORDS else [text]
        return joined(text_id, [self._fetch_piece(text_id, piece, ngram) for piece in pieces])

    def _fetch_piece(self, text_id: str, text: str, ngram: int) -> TokenText:
        views = self._views([text], self.top_k)
        if (not views or views[0] is None) and not self._vllm_prompt_logprobs:
            self._vllm_prompt_logprobs = True  # the echo carried none: ask the vLLM way
            views = self._views([text], self.top_k)
        view = views[0] if views else None
        if view is None:
            raise AssessorError(f"{self.base_url}: the completions endpoint returned no prompt log-probabilities "
                                "(neither with echo=true and logprobs, nor vLLM's prompt_logprobs); score a "
                                "--logprobs FILE instead", endpoint=endpoint_identity(self.base_url),
                                model=self.model)  # fmt: skip
        keep = [i for i, v in enumerate(view.logprobs) if v is not None]
        out = TokenText(id=text_id, tokens=[view.tokens[i] for i in keep],
                        logprobs=np.minimum(np.array([view.logprobs[i] for i in keep], dtype=float), 0.0))  # fmt: skip
        if self.top_k > 0 and view.tops:
            out.top_logprobs = [view.tops[i] for i in keep]
        if ngram > 0:
            in_text = [text[o:o + len(t)] == t for o, t in zip(view.offsets, view.tokens, strict=False)]
            out.ngram_logprobs = self._ngram(view.tokens, keep, ngram, in_text)
        return out

    def _ngram(self, tokens: list[str], keep: list[int], n: int, in_text: list[bool]) -> np.ndarray:
        """log p(token | its n preceding tokens), NaN where the endpoint's tokenizer merges the token
        with its context (no separate value exists). Tokens that are not text of the prompt (a BOS
        marker some servers echo) are left out of the contexts."""
        prompts, bounds = [], []
        for i in keep:
            context = "".join(tokens[j] for j in range(max(0, i - n), i) if in_text[j])
            prompts.append(context + tokens[i])
            bounds.append(len(context))
        out = np.full(len(prompts), np.nan)
        for b in range(0, len(prompts), self.batch):
            views = self._views(prompts[b:b + self.batch], 0)
            for j, view in enumerate(views[:len(prompts) - b]):
                out[b + j] = _target_logprob(view, bounds[b + j])
        return out


class ParameterRefused(Exception):
    """The server refused a parameter of the request (``error``): reported at once, not retried."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


class ListPromptRefused(Exception):
    """The server refused a request holding several prompts (not retried: sent one per request instead)."""


def joined(text_id: str, parts: list[TokenText]) -> TokenText:
    """One text's scored tokens from those of its pieces, in order."""
    if len(parts) == 1:
        return parts[0]
    out = TokenText(id=text_id, tokens=[t for p in parts for t in p.tokens],
                    logprobs=np.concatenate([p.logprobs for p in parts]))
    if all(p.top_logprobs is not None for p in parts):
        out.top_logprobs = [t for p in parts for t in (p.top_logprobs or [])]
    if all(p.ngram_logprobs is not None for p in parts):
        out.ngram_logprobs = np.concatenate([p.ngram_logprobs for p in parts if p.ngram_logprobs is not None])
    return out


def _echo_view(lp, generated: int) -> PromptView | None:
    """The prompt part of an echoed ``logprobs`` (legacy completions format), without the last
    ``generated`` tokens."""
    if lp is None or not lp.tokens or not lp.token_logprobs:
        return None
    n = len(lp.tokens) - generated
    if n <= 0:
        return None
    given = lp.text_offset and len(lp.text_offset) == len(lp.tokens)
    offsets = list(lp.text_offset) if given else _cumulative(lp.tokens)
    values = [None if v is None or not math.isfinite(v) else float(v) for v in lp.token_logprobs[:n]]
    tops = [_top_dict(t) for t in lp.top_logprobs[:n]] if lp.top_logprobs else None
    return PromptView(list(lp.tokens[:n]), offsets[:n], values, tops)


def _vllm_view(entries, text: str) -> PromptView | None:
    """vLLM's ``prompt_logprobs``: per prompt token None (the first) or ``{token_id: {"logprob",
    "rank", "decoded_token"}}`` whose first entry is the prompt token itself. The first token's text,
    which vLLM does not report, is what the others leave of the prompt."""
    if not isinstance(entries, list) or not entries:
        return None
    tokens: list[str | None] = []
    values: list[float | None] = []
    tops: list[dict[str, float] | None] = []
    for entry in entries:
        if not isinstance(entry, dict) or not entry:
            tokens.append(None)
            values.append(None)
            tops.append(None)
            continue
        items = [v for v in entry.values() if isinstance(v, dict)]
        first = items[0] if items else {}
        tokens.append(str(first.get("decoded_token") or ""))
        lp = first.get("logprob")
        values.append(float(lp) if isinstance(lp, (int, float)) and math.isfinite(lp) else None)
        tops.append({str(v.get("decoded_token") or ""): min(float(v["logprob"]), 0.0) for v in items
                     if isinstance(v.get("logprob"), (int, float)) and math.isfinite(v["logprob"])})  # fmt: skip
    rest = "".join(t or "" for t in tokens[1:])
    if tokens[0] is None:
        tokens[0] = text[: len(text) - len(rest)] if text.endswith(rest) else ""
    return PromptView([t or "" for t in tokens], _cumulative(tokens), values, tops)


def _cumulative(tokens) -> list[int]:
    out, pos = [], 0
    for t in tokens:
        out.append(pos)
        pos += len(t or "")
    return out


def _top_dict(entry) -> dict[str, float] | None:
    if not entry:
        return None
    return {str(k): min(float(v), 0.0) for k, v in dict(entry).items() if v is not None and math.isfinite(v)}


def _target_logprob(view: PromptView | None, boundary: int) -> float:
    """Sum of the log-probabilities of the prompt tokens from ``boundary`` on (the target's pieces);
    NaN when a token straddles the boundary or a value is missing."""
    if view is None:
        return math.nan
    total, found = 0.0, False
    for off, tok, v in zip(view.offsets, view.tokens, view.logprobs, strict=False):
        if off < boundary < off + len(tok):
            return math.nan
        if off >= boundary:
            if v is None:
                return math.nan
            total += v
            found = True
    return min(total, 0.0) if found else math.nan
