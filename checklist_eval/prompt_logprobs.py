"""Token log-probabilities of a text from an OpenAI-compatible *completions* endpoint.

One request per text: ``echo=true``, ``logprobs=k``, ``max_tokens=0`` (vLLM, legacy OpenAI base
models), which returns the prompt's tokens with their log-probabilities and top-k alternatives. A
server that refuses ``max_tokens=0`` is asked again with 1, and the generated token is dropped. The n-gram references of the perplexity-slope method (each token given only its n
preceding tokens) go to the same endpoint as a batch of short prompts, one per token, in requests of at
most :data:`BATCH` prompts.

Hosted OpenAI cannot do this (its chat models give log-probabilities of generated tokens only, and no
completions model there echoes prompt log-probabilities any more): :func:`refuse_hosted_openai`
says so before any request.
"""

from __future__ import annotations

import math
import os
from urllib.parse import urlparse

import numpy as np

from checklist_eval.contamination import TokenText
from checklist_eval.errors import AssessorError, InputError

BATCH = 256
MAX_TOP = 20
NO_KEY = "no-key-needed"  # local servers accept any bearer token

HOSTED_REFUSAL = (
    "hosted OpenAI (and Azure OpenAI) models cannot return prompt log-probabilities (chat models only score generated "
    "tokens): point --base-url at a completions endpoint that echoes them (vLLM, llama.cpp), or pass "
    "--logprobs FILE"
)


def refuse_hosted_openai(base_url: str | None) -> None:
    host = (urlparse(base_url).hostname or "") if base_url else "api.openai.com"
    if host == "api.openai.com" or host.endswith((".openai.com", ".openai.azure.com")):
        raise InputError(None, HOSTED_REFUSAL)


class LogprobClient:
    """Synchronous: the work is a handful of large requests, in order."""

    def __init__(self, model: str, base_url: str | None, *, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 120.0, top_k: int = 5):
        import openai

        refuse_hosted_openai(base_url)
        if not 0 <= top_k <= MAX_TOP:
            raise InputError(None, f"--top-k must be in [0, {MAX_TOP}], got {top_k}")
        self.model = model
        self.base_url = base_url
        self.top_k = top_k
        self.api_key_env = api_key_env
        self._max_tokens = 0
        self._key = os.environ.get(api_key_env, "").strip() or NO_KEY
        http = openai.DefaultHttpx2Client(timeout=timeout)
        self._client = openai.OpenAI(api_key=self._key, base_url=base_url, timeout=timeout, max_retries=2,
                                     http_client=http)  # fmt: skip

    def close(self) -> None:
        self._client.close()

    def _create(self, prompt, logprobs: int):
        import openai

        from checklist_eval.assessors.retry import fatal_error

        try:
            try:
                return self._client.completions.create(model=self.model, prompt=prompt, echo=True,
                                                       logprobs=logprobs, max_tokens=self._max_tokens)  # fmt: skip
            except openai.BadRequestError as err:
                # some server versions refuse max_tokens=0: one generated token, trimmed off below
                if self._max_tokens or "max_tokens" not in str(err):
                    raise
                self._max_tokens = 1
                return self._client.completions.create(model=self.model, prompt=prompt, echo=True,
                                                       logprobs=logprobs, max_tokens=1)  # fmt: skip
        except openai.APIError as err:
            raise fatal_error(err, endpoint=str(self.base_url), model=self.model, api_key_env=self.api_key_env,
                              secrets=(self._key,)) from None  # fmt: skip

    def fetch(self, text_id: str, text: str, ngram: int = 0) -> TokenText:
        """The text's tokens with log-probabilities and top-k alternatives (the first token, which has
        no prediction, dropped); with ``ngram`` > 0 also each token's log-probability given only its
        ``ngram`` preceding tokens."""
        lp = _echo_logprobs(self._create(text, self.top_k), self.base_url)
        tokens = list(lp.tokens)
        offsets = _offsets(lp)
        values = [math.nan if v is None else float(v) for v in lp.token_logprobs]
        n_prompt = len(tokens) - self._max_tokens  # the generated token, if any, comes last
        keep = [i for i, v in enumerate(values[:n_prompt]) if not math.isnan(v)]
        out = TokenText(id=text_id, tokens=[tokens[i] for i in keep],
                        logprobs=np.minimum(np.array([values[i] for i in keep]), 0.0))  # fmt: skip
        if self.top_k > 0 and lp.top_logprobs:
            out.top_logprobs = [_top_dict(lp.top_logprobs[i]) for i in keep]
        if ngram > 0:
            in_text = [text[o:o + len(t)] == t for o, t in zip(offsets, tokens)]
            out.ngram_logprobs = self._ngram(tokens, keep, ngram, in_text)
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
        for b in range(0, len(prompts), BATCH):
            reply = self._create(prompts[b:b + BATCH], 0)
            for j, choice in enumerate(sorted(reply.choices or [], key=lambda c: c.index)[:len(prompts) - b]):
                out[b + j] = _target_logprob(choice.logprobs, bounds[b + j], self._max_tokens)
        return out


def _echo_logprobs(reply, base_url):
    choices = sorted(reply.choices or [], key=lambda c: c.index)
    lp = choices[0].logprobs if choices else None
    if lp is None or not lp.tokens or not lp.token_logprobs:
        raise AssessorError(f"{base_url}: the completions endpoint returned no prompt log-probabilities "
                            "(it needs echo=true with logprobs); score a --logprobs FILE instead")  # fmt: skip
    return lp


def _offsets(lp) -> list[int]:
    if lp.text_offset and len(lp.text_offset) == len(lp.tokens):
        return list(lp.text_offset)
    out, pos = [], 0
    for t in lp.tokens:
        out.append(pos)
        pos += len(t)
    return out


def _top_dict(entry) -> dict[str, float] | None:
    if not entry:
        return None
    return {str(k): min(float(v), 0.0) for k, v in dict(entry).items() if v is not None and math.isfinite(v)}


def _target_logprob(lp, boundary: int, generated: int = 0) -> float:
    """Sum of the log-probabilities of the echoed prompt tokens from ``boundary`` on (the target's
    pieces), leaving out the last ``generated`` tokens; NaN when a token straddles the boundary or the
    value is missing."""
    if lp is None or not lp.tokens or len(lp.tokens) <= generated:
        return math.nan
    offsets = _offsets(lp)
    n_prompt = len(lp.tokens) - generated
    total, found = 0.0, False
    for off, tok, v in zip(offsets[:n_prompt], lp.tokens[:n_prompt], lp.token_logprobs[:n_prompt]):
        if off < boundary < off + len(tok):
            return math.nan
        if off >= boundary:
            if v is None:
                return math.nan
            total += float(v)
            found = True
    return min(total, 0.0) if found else math.nan
