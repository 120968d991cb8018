"""The LLM assessor fed by batch answers instead of live requests.

``BatchAssessor`` is an ``LLMAssessor`` whose transport is the answers a provider batch job (or an
offline engine such as vLLM's ``run_batch``) returned, looked up by ``custom_id`` = the request's cache
key. Everything after the transport is the online path's own code: the same request body, the same
reply parsing and validation, logprob confidence, cache entry and records, so a verdict is the same
whichever path produced it. Only the ledger differs: batch-served calls are priced at the batch rate.

A question whose batch answer is missing, failed or unusable goes to ``retry_via``: ``online`` sends it
through the ordinary path at once; ``batch-api`` / ``jsonl`` record it in ``pending`` (for a follow-up
batch or requests file) and fail that paper's assessment with ``PendingAnswer``.

``collect`` lists the requests a paper still needs (cache misses without a usable stored answer)
without sending anything: what a requests file holds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

import httpx2
import openai

from checklist_eval.assessors.config import LLMConfig
from checklist_eval.assessors.llm.asking import Outcome, RequestFailed
from checklist_eval.assessors.llm.assessor import NO_KEY_PLACEHOLDER, LLMAssessor
from checklist_eval.assessors.llm.facts import question_for
from checklist_eval.endpoint.cache import endpoint_identity
from checklist_eval.endpoint.capabilities import EndpointQuirks
from checklist_eval.errors import AssessorError
from checklist_eval.models import Assessment, ChecklistItem, Paper, Usage

__all__ = ["BatchAssessor", "PendingAnswer", "RETRY_VIA"]

RETRY_VIA = ("online", "batch-api", "jsonl")


_ASKED: ContextVar[set[str] | None] = ContextVar("batch_asked", default=None)


class PendingAnswer(AssessorError):
    """A question waits for a follow-up batch: its answer was missing, failed or unusable."""


PENDING_TEXT = "no usable batch answer yet"  # in a waiting submission's one-line error (failures.jsonl)


def is_waiting(error: str) -> bool:
    """A submission's recorded error says it waits for batch answers: not finished, not failed."""
    return PENDING_TEXT in error


class _BatchCompletion(dict):
    """A completion a batch job returned (priced at the batch rate)."""


class BatchAssessor(LLMAssessor):
    def __init__(self, config: LLMConfig, retry_via: str = "online", *, key_when_sending: bool = False):
        """``key_when_sending``: a run that writes its requests to a file (``--via jsonl``) sends nothing,
        so a missing API key is said when (if ever) a request is to be sent, not before the file is written."""
        if retry_via not in RETRY_VIA:
            raise AssessorError(f"unknown --retry-via {retry_via!r}", model=config.model,
                                endpoint=endpoint_identity(config.resolved_base_url))
        self._key_when_sending = key_when_sending
        self._missing_key: AssessorError | None = None
        super().__init__(config)
        if not self.cache.writes:
            raise self.error("batch answers are kept beside the response cache: drop --no-cache")
        self.retry_via = retry_via
        self.pending: dict[str, dict[str, Any]] = {}  # cache key -> request body, for the next round
        self.served = 0  # answers taken from batch results this run
        self.retried_online = 0

    def _read_key(self) -> str:
        try:
            return super()._read_key()
        except AssessorError as err:
            if not self._key_when_sending:
                raise
            self._missing_key = err  # raised by the first request that would need it
            return NO_KEY_PLACEHOLDER

    def _client_for_loop(self) -> openai.AsyncOpenAI:
        if self._missing_key is not None:
            raise self._missing_key
        return super()._client_for_loop()

    def files_client(self, max_bytes: int, deadline: float) -> openai.AsyncOpenAI:
        if self._missing_key is not None:
            raise self._missing_key
        return super().files_client(max_bytes, deadline)

    # -- stored answers -----------------------------------------------------------------------------

    def _stored(self, key: str) -> tuple[str, int | None, dict[str, Any] | None, str | None] | None:
        rows = self.cache.execute("SELECT state, status_code, body_json, error FROM batch_answers "
                                  "WHERE custom_id=?", (key,))
        if not rows:
            return None
        state, status, body, error = rows[0]
        return state, status, json.loads(body) if body else None, error

    def _mark_spent(self, key: str, why: str) -> None:
        self.cache.execute("UPDATE batch_answers SET state='spent', error=? WHERE custom_id=? AND state='ok'",
                           (why[:500], key))

    # -- collection (no request is sent) -------------------------------------------------------------

    def collect(self, paper: Paper) -> list[tuple[str, dict[str, Any]]]:
        """(custom_id, body) of every question of ``paper`` that neither the cache nor a usable stored
        answer covers."""
        quirks = self.quirks()
        out = []
        for item in paper.checklist.items:
            if not item.is_answered or self._from_cache(paper, item, quirks) is not None:
                continue
            sent = dataclasses.replace(quirks)
            key = self._cache_key(paper, question_for(self.prompts, paper, item), sent.strategy)
            stored = self._stored(key)
            if stored is not None and stored[0] == "ok":
                continue
            out.append((key, self.request_body(paper, item, sent)))
        return out

    # -- the transport ------------------------------------------------------------------------------

    async def _request(self, paper: Paper, item: ChecklistItem, quirks: EndpointQuirks, est_tokens: int,
                       feedback: Sequence[dict[str, str]] = ()) -> Outcome:
        sent = dataclasses.replace(quirks)
        key = self._cache_key(paper, question_for(self.prompts, paper, item), sent.strategy)
        stored = self._answer_for(key)
        if stored is not None:
            state, status, body, error = stored
            if state == "ok":
                self.served += 1
                return Outcome(_BatchCompletion(body or {}), 1, sent.strategy)
            if status == 400:
                raise self._refusal(paper, item, sent, body, error)
        if self.retry_via == "online":
            self.retried_online += 1
            return await super()._request(paper, item, quirks, est_tokens, feedback)
        # A follow-up asks what the online path would ask now: with the re-ask feedback, if any.
        self.pending[key] = self.request_body(paper, item, sent, feedback)
        raise self.error(f"question {item.id}: {PENDING_TEXT} (missing, failed or unusable); "
                         f"it goes into a follow-up {self.retry_via} round", PendingAnswer)

    def _answer_for(self, key: str) -> tuple[str, int | None, dict[str, Any] | None, str | None] | None:
        """The stored answer for this question's body, unless this question was served it already (its
        reply was unusable, so it is marked spent: a later round must ask again)."""
        asked = _ASKED.get()
        reask = asked is not None and key in asked
        if asked is not None:
            asked.add(key)
        if reask:
            self._mark_spent(key, "unusable reply")
            return None
        return self._stored(key)

    def _refusal(self, paper: Paper, item: ChecklistItem, sent: EndpointQuirks, body: dict[str, Any] | None,
                 error: str | None) -> RequestFailed:
        """A stored 400 as the online path sees one: a refused parameter is learned (format fallback, no
        logprobs) for batch answers too."""
        url = f"{self.base_url or 'https://api.openai.com/v1'}/chat/completions"
        refused = openai.BadRequestError(error or "bad request", body=body, response=httpx2.Response(
            400, request=httpx2.Request("POST", url)))
        params = {k: v for k, v in self.request_body(paper, item, sent).items() if k not in ("model", "messages")}
        return RequestFailed(refused, attempts=1, sent=sent, params=params)

    def _usage_of(self, completion: dict[str, Any], attempts: int) -> Usage:
        usage = super()._usage_of(completion, attempts)
        if isinstance(completion, _BatchCompletion):
            usage = usage.model_copy(update={"cost_usd": self.spending.prices.batch_cost(self.model, usage)})
        return usage

    async def judge(self, paper: Paper, item: ChecklistItem) -> Assessment:
        token = _ASKED.set(set())  # the bodies this question has been served, to tell a re-ask
        try:
            return await super().judge(paper, item)
        finally:
            _ASKED.reset(token)

    async def assess_paper(self, paper: Paper) -> list[Assessment]:
        """Every item is settled (served, retried or recorded as pending) before the paper fails, so one
        round collects every question a follow-up round needs."""
        results = await asyncio.gather(*(self.assess_item(paper, it) for it in paper.checklist.items),
                                       return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r
        return list(results)  # type: ignore[arg-type]
