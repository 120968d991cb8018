"""The LLM assessor: any OpenAI-compatible chat endpoint (OpenAI, Azure OpenAI v1 base URL, vLLM,
Ollama, LiteLLM) through ``openai.AsyncOpenAI``.

One request per answered checklist item, built from the versioned prompt files in ``prompts/<version>/``:

    [system]  rules; the paper is untrusted data
    [user]    <paper> ... </paper>            identical for every question of a paper (prefix caching)
    [user]    the question block + format     the only part that changes per question

Every request goes through the assessor's one ``Scheduler`` (concurrency, rpm, tpm) and the one
``RetryPolicy`` (429/5xx/timeouts only). The structured-output strategy starts at ``json_schema`` in
``auto`` mode and steps down (json_object, then text) when the endpoint refuses it with a 400; the
choice is remembered per (endpoint, model) for the run and recorded in ``Provenance.strategy``. Any other
parameter the endpoint refuses (temperature, max_tokens, logprobs, reasoning_effort ...) is learned the same
way (``quirks.py``) and recorded in ``Provenance.quirks``.

Context budget: the prompt may hold ``4 * (context_tokens - max_tokens)`` characters (4 characters per
token, the usual English ratio); the paper gets what the system message, the checklist message and
``QUESTION_BLOCK_CHARS`` for the question block leave, less a 10 % margin for text that tokenizes
denser (LaTeX, numbers). A longer paper is cut there and gets a warning. The cut is the same for every question
of a paper, so
the shared prefix stays shared.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.resources
import json
import logging
import os
import re
import ssl
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

import httpx2
import openai

import checklist_eval
from checklist_eval import redact
from checklist_eval.assessors import CHARS_PER_TOKEN, LLMConfig
from checklist_eval.assessors.base import Assessor
from checklist_eval.assessors.budget import Budget
from checklist_eval.assessors.cache import Cache, CacheMode, cache_key, digest_messages, endpoint_identity
from checklist_eval.assessors.ledger import PriceTable
from checklist_eval.assessors.quirks import EndpointQuirks, refused_parameter
from checklist_eval.assessors.quotes import grade_verdict
from checklist_eval.assessors.retry import EndpointFault, MalformedResponse, RetryPolicy, check_completion, fatal_error
from checklist_eval.assessors.scheduler import Scheduler
from checklist_eval.assessors.spending import SpendingAndEvidence
from checklist_eval.assessors.structured import (
    InvalidOutput,
    Verdict,
    chain_from,
    check_findings,
    is_format_unsupported,
    logprob_p_correct,
    parse,
    response_format,
)
from checklist_eval.assessors.transport import bounded_client
from checklist_eval.errors import AssessorError, InputError
from checklist_eval.models import (
    Assessment,
    ChecklistItem,
    Paper,
    ParseWarning,
    Provenance,
    StructuredOutput,
    Usage,
    WarningKind,
)

if TYPE_CHECKING:
    from importlib.abc import Traversable  # importlib.resources.abc from 3.11 on

__all__ = ["LLMAssessor", "LLMConfig", "PromptSet", "estimate_run", "prompts_root"]

log = logging.getLogger(__name__)

QUESTION_BLOCK_CHARS = 2000  # one question block: question text, answer, a long justification
TYPICAL_COMPLETION_TOKENS = 250  # a verdict with a 3-5 point review, for estimates
PREFIX_CACHE_MIN_TOKENS = 1024  # OpenAI caches prompt prefixes from this length on
NO_KEY_PLACEHOLDER = "no-key-needed"  # local servers (vLLM, Ollama) accept any bearer token
MAX_ECHO_CHARS = 4000  # how much of an unusable reply is sent back with the validation error
REASK_PREFIX = "Your previous reply could not be used:"

# LLMConfig (its defaults, the context windows, the prompt budget) lives in ``checklist_eval.assessors``
# so that building the command-line parser does not import ``openai``; it is re-exported here.


# --- prompts ---------------------------------------------------------------------------------------


def prompts_root() -> Traversable:
    """The package's ``prompts/`` folder, found as package data wherever the package is installed."""
    root = importlib.resources.files(checklist_eval).joinpath("prompts")
    if not root.is_dir():
        raise InputError(str(root), "prompt folder not found (broken install?)")
    return root


@dataclass(frozen=True)
class PromptSet:
    version: str
    system: str
    user_paper: str
    user_checklist: str
    user_question: str
    format_json: str
    format_text: str

    @staticmethod
    @lru_cache(maxsize=8)
    def load(version: str) -> PromptSet:
        folder = prompts_root().joinpath(version)
        if not folder.is_dir():
            raise InputError(str(folder), f"no prompt version {version!r}")
        parts = {}
        for name in ("system", "user_paper", "user_checklist", "user_question", "format_json", "format_text"):
            path = folder.joinpath(f"{name}.txt")
            if not path.is_file():
                raise InputError(str(path), "prompt file missing")
            parts[name] = path.read_text("utf-8").strip("\n")
        return PromptSet(version=version, **parts)

    def format_for(self, strategy: StructuredOutput) -> str:
        return self.format_text if strategy is StructuredOutput.TEXT else self.format_json

    @property
    def findings(self) -> bool:
        """The prompt asks for must_fix / suggestions (assess-v2 on), so the verdict must follow them."""
        return "must_fix" in self.format_json


@lru_cache(maxsize=1)
def shared_tls_context() -> ssl.SSLContext:
    """One verifying TLS context for every client of the process. Building one loads the CA bundle,
    about 40 ms of CPU: per client that was a third of a triplet's client-side CPU. A context is safe
    to share between connections and event loops."""
    return httpx2.create_ssl_context()


_FENCE_TAG = re.compile(r"<(\s*/?\s*paper\b)", re.IGNORECASE)


def defuse_fence(text: str) -> str:
    """Untrusted text must not be able to close the <paper> fence and speak outside it: any look-alike
    of the fence tag in it loses its '<' (replaced by a visually similar, inert character)."""
    return _FENCE_TAG.sub(lambda m: "\u2039" + m.group(1), text)


def paper_text(paper: Paper) -> str:
    parts = []
    if paper.abstract:
        parts.append(f"Abstract\n{paper.abstract}")
    parts.append(paper.body)
    return defuse_fence("\n\n".join(p for p in parts if p))


def checklist_message(prompts: PromptSet, paper: Paper) -> str:
    """Every question with its guidelines, once per paper: part of the shared prefix, so the
    per-question block stays a few lines (and the guidelines are cached with the paper)."""
    blocks = []
    for item in paper.checklist.items:
        guidelines = "\n".join(f"  - {g}" for g in item.guidelines) or "  - (none)"
        blocks.append(f"{item.id}. {item.title}: {item.question}\n{guidelines}")
    return prompts.user_checklist.format_map({"checklist": "\n\n".join(blocks)})


def question_message(prompts: PromptSet, item: ChecklistItem) -> str:
    return prompts.user_question.format_map({
        "question_id": item.id,
        "question_title": item.title,
        "question": item.question,
        "answer": item.answer.value if item.answer is not None else "(missing)",
        "justification": (item.justification or "").strip() or "(empty)",
    })


def cut_paper(text: str, budget: int) -> tuple[str, bool]:
    if len(text) <= budget:
        return text, False
    cut = text.rfind("\n", 0, budget)
    cut = cut if cut > budget * 0.9 else budget
    return text[:cut] + f"\n[... paper truncated: {cut} of {len(text)} characters shown ...]", True


def prefix_messages(prompts: PromptSet, paper: Paper, prompt_budget: int,
                    strategy: StructuredOutput = StructuredOutput.JSON_SCHEMA,
                    ) -> tuple[list[dict[str, str]], str | None]:
    """The system + paper messages shared by every question of ``paper``; a warning when cut.

    The reply-format instructions sit in the system message: they are fixed per endpoint for a run,
    so keeping them out of the question block leaves the per-question part as small as possible."""
    system = f"{prompts.system}\n\n{prompts.format_for(strategy)}"
    checklist = checklist_message(prompts, paper)
    budget = max(2_000, int(0.9 * (prompt_budget - len(system) - len(checklist) - QUESTION_BLOCK_CHARS)))
    full = paper_text(paper)
    text, truncated = cut_paper(full, budget)
    content = prompts.user_paper.format_map({
        "source": Path(paper.source).name, "title": defuse_fence(paper.title or "(untitled)").replace('"', "'"),
        "paper": text,
    })
    warning = None
    if truncated:
        warning = (f"paper text ({len(full)} characters) exceeds the model's context budget "
                   f"({budget} characters); the assessor saw only the first part")
    return [{"role": "system", "content": system}, {"role": "user", "content": content},
            {"role": "user", "content": checklist}], warning


# --- per-endpoint adaptation -----------------------------------------------------------------------


MAX_RELEARN = 12  # learn-and-resend rounds per question: each parameter once, plus the format chain


def _adapt(quirks: EndpointQuirks, err: openai.BadRequestError, auto: bool, sent: EndpointQuirks,
           sent_params: dict[str, Any], where: str) -> bool:
    """After a 400: True if the request should be sent again without what the endpoint refused.

    ``sent`` and ``sent_params`` are what THIS request sent. With several requests in flight, the first 400
    changes ``quirks``; the others, refused for the same parameter, find it already learned and are simply
    sent again with the current setting. A parameter that was not sent cannot be learned, so an endpoint
    that keeps refusing makes the question fail instead of looping."""
    message = str(err.message if hasattr(err, "message") else err)
    if auto and is_format_unsupported(message) and sent.strategy is not StructuredOutput.TEXT:
        quirks.learn_strategy(sent.strategy, chain_from(sent.strategy)[1], where)
        return True
    param = refused_parameter(err, sent_params)
    if param is None:
        return False
    if param == "response_format":
        if not auto or sent.strategy is StructuredOutput.TEXT:
            return False
        quirks.learn_strategy(sent.strategy, chain_from(sent.strategy)[1], where)
        return True
    quirks.learn_parameter(param, sent_params.get(param), where)
    return True


def _count(obj: Any, key: str) -> int:
    """A token count from a usage object that may be missing, null or hold junk: 0 then."""
    value = obj.get(key) if isinstance(obj, dict) else None
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def spent_reasoning(completion: Any) -> int:
    u = completion.get("usage") if isinstance(completion, dict) else None
    return _count(u.get("completion_tokens_details") if isinstance(u, dict) else None, "reasoning_tokens")


# --- the assessor ----------------------------------------------------------------------------------


@dataclass
class _Outcome:
    completion: Any
    attempts: int
    strategy: StructuredOutput


@dataclass
class _Spent:
    """Usage of one question summed over all its requests, readable even when the question fails."""

    usage: Usage = field(default_factory=Usage)
    reply: Any = None  # the last reply received, for the call log

    def add(self, usage: Usage) -> None:
        self.usage = self.usage + usage


@dataclass
class _PaperPrefix:
    messages: list[dict[str, str]]
    tokens: int
    warning: str | None = None
    digest: str = ""  # sha256 of the messages, computed once: the cache key's stand-in for them

    def __post_init__(self) -> None:
        self.digest = digest_messages(self.messages)


def _prefix_key(paper: Paper, strategy: StructuredOutput) -> tuple[Any, ...]:
    """Everything the shared prefix is built from (the item answers are not in it). Equal keys compare
    the same string objects, so a lookup costs little beyond the strings' cached hashes."""
    items = tuple((it.id, it.title, it.question, tuple(it.guidelines)) for it in paper.checklist.items)
    return (strategy, paper.source, paper.title, paper.abstract, paper.body, paper.checklist.id, items)


class LLMAssessor(SpendingAndEvidence, Assessor):
    name: ClassVar[str] = "llm"
    needs_network: ClassVar[bool] = True

    def __init__(self, config: LLMConfig):
        super().__init__()
        self.config = config
        self.model = config.model
        self.prompt_version = config.prompt_version
        self.prompts = PromptSet.load(config.prompt_version)
        self.base_url = config.resolved_base_url
        self.endpoint = endpoint_identity(self.base_url)
        self._api_key = self._read_key()
        self.scheduler = Scheduler(config.concurrency, config.rpm, config.tpm)
        self.retry = RetryPolicy(max_attempts=config.max_attempts, initial=config.backoff_initial,
                                 maximum=config.backoff_max, on_retry_after=self.scheduler.pause)
        self.prices = PriceTable.load(config.prices)
        self.budget = Budget(config.max_cost, self.prices, self.model) if config.max_cost is not None else None
        self.retries = 0  # attempts beyond the first, over the run (for the progress display)
        self._in_flight: dict[str, asyncio.Future] = {}  # cache key -> verdict of the request in flight
        mode = CacheMode.OFF if config.no_cache or config.cache_path is None else (
            CacheMode.REFRESH if config.refresh else CacheMode.USE)
        self.cache = (Cache(config.cache_path, mode) if mode != CacheMode.OFF and config.cache_path is not None
                      else Cache("unused", CacheMode.OFF))
        self.warnings: list[str] = []
        self._quirks: dict[tuple[str, str], EndpointQuirks] = {}
        self._prefixes: dict[tuple[Any, ...], _PaperPrefix] = {}
        self._broken: AssessorError | None = None
        self._client: openai.AsyncOpenAI | None = self._new_client()  # built now: ~30 ms, not per call
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:  # never shows the key
        return f"LLMAssessor(model={self.model!r}, endpoint={self.endpoint!r})"

    def _read_key(self) -> str:
        key = os.environ.get(self.config.api_key_env, "").strip()
        if key:
            redact.register(key)  # before any request: whatever the endpoint says is redacted
            return key
        if self.base_url is None:
            raise AssessorError(
                f"no API key: set the environment variable {self.config.api_key_env} "
                "(or --base-url for a local server that needs none)")
        return NO_KEY_PLACEHOLDER

    @property
    def _secrets(self) -> tuple[str, ...]:
        return (self._api_key,)

    def _new_client(self) -> openai.AsyncOpenAI:
        http = bounded_client(verify=shared_tls_context(), timeout=self.config.timeout,
                              max_bytes=self.config.max_response_bytes)
        return openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url,
                                  timeout=self.config.timeout, max_retries=0, http_client=http)

    def files_client(self, max_bytes: int, deadline: float) -> openai.AsyncOpenAI:
        """A client for whole files (provider batch input and output): the same bounded transport with
        a cap and a deadline sized for a file, not for one chat reply; the caller caps what it keeps."""
        http = bounded_client(verify=shared_tls_context(), timeout=deadline, max_bytes=max_bytes)
        return openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url,
                                  timeout=deadline, max_retries=0, http_client=http)

    def _client_for_loop(self) -> openai.AsyncOpenAI:
        # An httpx connection pool belongs to one event loop; a second asyncio.run gets a new client.
        loop = asyncio.get_running_loop()
        if self._client is None or (self._client_loop is not None and self._client_loop is not loop):
            self._client = self._new_client()
        self._client_loop = loop
        return self._client

    def quirks(self) -> EndpointQuirks:
        key = (self.endpoint, self.model or "")
        if key not in self._quirks:
            start = (StructuredOutput.JSON_SCHEMA if self.config.structured == "auto"
                     else StructuredOutput(self.config.structured))
            self._quirks[key] = EndpointQuirks(strategy=start, logprobs=self.config.logprobs)
        return self._quirks[key]

    @property
    def _where(self) -> str:
        return f"{self.endpoint} (model {self.model})"

    # -- messages ---------------------------------------------------------------------------------

    def paper_prefix(self, paper: Paper, strategy: StructuredOutput = StructuredOutput.JSON_SCHEMA) -> _PaperPrefix:
        key = _prefix_key(paper, strategy)
        cached = self._prefixes.get(key)
        if cached is not None:
            return cached
        messages, warning = prefix_messages(self.prompts, paper, self.config.prompt_char_budget, strategy)
        tokens = sum(len(m["content"]) for m in messages) // CHARS_PER_TOKEN
        prefix = _PaperPrefix(messages, tokens, warning)
        if warning and all(str(w) != warning for w in paper.warnings):
            log.warning("%s: %s", paper.source, warning)
            self.warnings.append(f"{paper.source}: {warning}")
            paper.warnings.append(ParseWarning(kind=WarningKind.TRUNCATED, message=warning))
        if len(self._prefixes) > 256:  # a batch of hundreds of papers: keep memory flat
            self._prefixes.clear()
        self._prefixes[key] = prefix
        return prefix

    def messages_for(self, paper: Paper, item: ChecklistItem, strategy: StructuredOutput) -> list[dict[str, str]]:
        prefix = self.paper_prefix(paper, strategy)
        return [*prefix.messages, {"role": "user", "content": question_message(self.prompts, item)}]

    def _params(self, strategy: StructuredOutput, quirks: EndpointQuirks) -> dict[str, Any]:
        """The request parameters, as this endpoint takes them (what it refused left out or renamed)."""
        params: dict[str, Any] = {"temperature": self.config.temperature}
        if self.config.seed is not None:
            params["seed"] = self.config.seed
        if self.config.reasoning_effort is not None:
            params["reasoning_effort"] = self.config.reasoning_effort
        fmt = response_format(strategy)
        if fmt is not None:
            params["response_format"] = fmt
        params["logprobs"] = True
        params["top_logprobs"] = 5
        return quirks.apply(params, self.config.max_tokens)

    def request_body(self, paper: Paper, item: ChecklistItem, sent: EndpointQuirks,
                     feedback: Sequence[dict[str, str]] = ()) -> dict[str, Any]:
        """The chat-completion body for one question (plus the re-ask ``feedback``): what the online path
        posts and what a batch requests file holds, built in one place so both ask exactly the same."""
        return {"model": self.model, "messages": self.messages_for(paper, item, sent.strategy) + list(feedback),
                **self._params(sent.strategy, sent)}

    def _cache_key(self, paper: Paper, question: str, strategy: StructuredOutput) -> str:
        """What changes the answer, and only that: the endpoint, model, prompt (the prefix by its digest),
        the sampling asked for (temperature, budget, seed, reasoning effort), strategy and prompt version.

        What the endpoint taught us is left out: a refusal is a property of (endpoint, model), both in the
        key, so the same asked-for parameters always become the same sent ones there; keying on what was
        learned would make a rerun miss until it had relearned. Transport knobs are left out too."""
        params: dict[str, Any] = {"temperature": self.config.temperature, "max_tokens": self.config.max_tokens}
        if self.config.seed is not None:
            params["seed"] = self.config.seed
        if self.config.reasoning_effort is not None:
            params["reasoning_effort"] = self.config.reasoning_effort
        return cache_key(endpoint=self.endpoint, model=self.model or "",
                         prefix_digest=self.paper_prefix(paper, strategy).digest, question=question,
                         params=params, strategy=strategy.value, prompt_version=self.prompt_version or "")

    # -- one request, through the scheduler and the retry policy -----------------------------------

    async def _request(self, paper: Paper, item: ChecklistItem, quirks: EndpointQuirks, est_tokens: int,
                       feedback: Sequence[dict[str, str]] = ()) -> _Outcome:
        """One logical request, retried per the policy. The strategy and parameters are read once a
        slot is held, so requests queued behind a refused format already use the fallback."""
        client = self._client_for_loop()
        attempts = 0
        sent = dataclasses.replace(quirks)  # what the last attempt sent, for _adapt
        sent_params: dict[str, Any] = {}

        async def attempt() -> Any:
            nonlocal attempts, sent, sent_params
            async with self.scheduler.slot(est_tokens):
                if self._broken is not None:  # a bad key or model fails every request: send no more
                    raise self._broken
                sent = dataclasses.replace(quirks)
                body = self.request_body(paper, item, sent, feedback)
                held = await self._reserve(body["messages"])
                sent_params = {k: v for k, v in body.items() if k not in ("model", "messages")}
                attempts += 1
                if attempts > 1:
                    self.retries += 1
                # client.post skips the SDK's per-call TypedDict walk of the body (a few ms of CPU for
                # a paper-sized prompt); auth, base URL, timeouts and status errors are the SDK's own.
                actual = 0.0
                try:
                    response = await client.post("/chat/completions", cast_to=httpx2.Response, body=body)
                    actual = self._cost_of_body(response.content)
                finally:
                    if self.budget is not None:
                        self.budget.settle(held, actual)
            try:
                completion = json.loads(response.content)
            except (ValueError, RecursionError):
                raise MalformedResponse(f"HTTP {response.status_code} reply body is not JSON") from None
            check_completion(completion)
            return completion

        try:
            completion = await self.retry.run(attempt)
        except Exception as err:
            err.checklist_attempts = attempts  # type: ignore[attr-defined]
            err.checklist_sent = sent  # type: ignore[attr-defined]
            err.checklist_params = sent_params  # type: ignore[attr-defined]
            raise
        return _Outcome(completion, attempts, sent.strategy)

    def _usage_of(self, completion: Any, attempts: int) -> Usage:
        u = completion.get("usage") if isinstance(completion, dict) else None
        u = u if isinstance(u, dict) else {}
        usage = Usage(
            calls=attempts,
            prompt_tokens=_count(u, "prompt_tokens"),
            completion_tokens=_count(u, "completion_tokens"),
            cached_tokens=_count(u.get("prompt_tokens_details"), "cached_tokens"),
            # Part of completion_tokens (OpenAI's definition), so priced at the output rate with them.
            reasoning_tokens=_count(u.get("completion_tokens_details"), "reasoning_tokens"),
        )
        if self.prices.lookup(self.model) is None:
            return usage.model_copy(update={"unpriced_calls": attempts})
        return usage.model_copy(update={"cost_usd": self.prices.cost(self.model, usage)})

    # -- judging ----------------------------------------------------------------------------------

    def _assessment(self, paper: Paper, item: ChecklistItem, verdict: dict[str, Any], strategy: StructuredOutput,
                    usage: Usage, *, cached: bool, latency_s: float = 0.0) -> Assessment:
        """The Assessment for a verdict as stored in the cache (``Verdict`` fields, p_correct final).
        Evidence quotes are checked and findings graded by ``quotes.grade_verdict``."""
        correct, p, review, graded = grade_verdict(verdict, paper_text(paper), findings=self.prompts.findings)
        return Assessment(
            question_id=item.id, answer=item.answer, correct=correct,
            p_correct=p, review=review, evidence=list(verdict.get("evidence", [])),
            provenance=Provenance(assessor=self.name, model=self.model, prompt_version=self.prompt_version,
                                  strategy=strategy, usage=usage, latency_s=latency_s, cached=cached,
                                  attempts=usage.calls, quirks=list(verdict.get("quirks") or []),
                                  endpoint=self.endpoint, temperature=self.config.temperature,
                                  seed=self.config.seed),
            **graded,
        )

    def _from_cache(self, paper: Paper, item: ChecklistItem, quirks: EndpointQuirks) -> Assessment | None:
        if not self.cache.reads:
            return None
        question = question_message(self.prompts, item)
        # Try every strategy still open to this endpoint, so a rerun after a fallback also hits.
        for strategy in chain_from(quirks.strategy):
            key = self._cache_key(paper, question, strategy)
            hit = self.cache.get(key)
            if hit is not None:
                self._log_reuse(paper, item, StructuredOutput(hit.strategy), key)
                return self._assessment(paper, item, hit.verdict, StructuredOutput(hit.strategy), Usage(), cached=True)
        return None

    async def judge(self, paper: Paper, item: ChecklistItem) -> Assessment:
        started = time.perf_counter()
        quirks = self.quirks()
        hit = self._from_cache(paper, item, quirks)
        if hit is not None:
            return hit
        # Two papers can put the very same question (a GT submission's A is T's paper with G's answers):
        # while one such request is in flight, its twins wait for that verdict instead of paying again.
        twin_key = self._cache_key(paper, question_message(self.prompts, item), quirks.strategy)
        reused = await self._twin_verdict(paper, item, twin_key)
        if reused is not None:
            return reused
        with self._in_flight_as(twin_key) as mine:
            return await self._judge_fresh(paper, item, quirks, started, mine)

    async def _judge_fresh(self, paper: Paper, item: ChecklistItem, quirks: EndpointQuirks, started: float,
                           shared: asyncio.Future) -> Assessment:
        spent = _Spent()
        try:
            verdict, p_correct, strategy = await self._ask_until_usable(paper, item, quirks, spent)
        except BaseException:
            # Money spent on a question that then failed is still money spent: keep the total right.
            if spent.usage.calls:
                self.usage = self.usage + spent.usage
            raise
        usage = spent.usage
        # The transport already redacted the reply; this second pass guards what is stored and shown.
        # What the endpoint taught the run so far travels with the verdict (and its cached copy).
        # redact_obj maps a dict to a dict; its signature says object because it takes any JSON value.
        stored = cast("dict[str, Any]", redact.redact_obj(verdict.model_dump())) | {
            "p_correct": p_correct, "quirks": list(quirks.learned)}
        shared.set_result((stored, strategy))
        if self.cache.writes:
            key = self._cache_key(paper, question_message(self.prompts, item), strategy)
            self.cache.put(key, endpoint=self.endpoint, model=self.model or "",
                           prompt_version=self.prompt_version or "", strategy=strategy.value, verdict=stored,
                           usage=usage.model_dump(), call=self._call_log(paper, item, strategy, spent.reply, "verdict"))
        return self._assessment(paper, item, stored, strategy, usage, cached=False,
                                latency_s=time.perf_counter() - started)

    async def _ask_until_usable(self, paper: Paper, item: ChecklistItem, quirks: EndpointQuirks,
                                spent: _Spent) -> tuple[Verdict, float, StructuredOutput]:
        """Requests until a reply holds a usable verdict: transport faults are the retry policy's, a
        refused output format steps down the strategy chain, unusable output is re-asked (bounded)."""
        invalid = relearned = 0
        est_tokens = self.paper_prefix(paper).tokens + 400 + self.config.max_tokens
        feedback: list[dict[str, str]] = []  # the last unusable reply and why, sent back on a re-ask
        while True:
            try:
                outcome = await self._request(paper, item, quirks, est_tokens, feedback)
            except AssessorError:
                raise
            except Exception as err:
                spent.add(Usage(calls=getattr(err, "checklist_attempts", 1)))
                if (isinstance(err, openai.BadRequestError) and relearned < MAX_RELEARN
                        and _adapt(quirks, err, self.config.structured == "auto",
                                   err.checklist_sent, err.checklist_params, self._where)):  # type: ignore[attr-defined]
                    relearned += 1
                    continue
                if isinstance(err, (openai.APIError, EndpointFault)):
                    raise self._fatal(err) from None
                raise
            completion, strategy = outcome.completion, outcome.strategy
            spent.add(self._usage_of(completion, outcome.attempts))
            spent.reply = completion
            choices = completion.get("choices") if isinstance(completion, dict) else None
            choice = choices[0] if choices and isinstance(choices[0], dict) else {}
            text = (choice.get("message") or {}).get("content") or ""
            try:
                if choice.get("finish_reason") == "length":
                    if not text.strip() and spent_reasoning(completion) and quirks.max_tokens_param and \
                            quirks.grow_budget(quirks.budget or self.config.max_tokens, self._where):
                        continue  # a reasoning model thought through its whole budget: ask with a bigger one
                    raise InvalidOutput("reply cut off at max_tokens")
                verdict = parse(strategy, text)
                if self.prompts.findings:
                    check_findings(verdict)
            except InvalidOutput as err:
                self.cache.log_call(self._call_log(paper, item, strategy, completion, f"unusable: {err}"),
                                    endpoint=self.endpoint, model=self.model or "",
                                    prompt_version=self.prompt_version or "", strategy=strategy.value)
                invalid = self._count_invalid(invalid, item, str(err))
                # As instructor does: the model sees its reply and the validation error, so a re-ask at
                # temperature 0 is not the identical request that produced the bad reply.
                feedback = [{"role": "assistant", "content": text[:MAX_ECHO_CHARS]},
                            {"role": "user", "content": f"{REASK_PREFIX} {err}. Reply again in the required format."}]
                continue
            p_logprob = logprob_p_correct(text, (choice.get("logprobs") or {}).get("content"))
            p_correct = verdict.p_correct if p_logprob is None else p_logprob
            return verdict, p_correct, strategy

    def _count_invalid(self, invalid: int, item: ChecklistItem, why: str) -> int:
        invalid += 1
        if invalid > self.config.reask:
            raise AssessorError(f"{self.endpoint} (model {self.model}) gave no usable verdict for question "
                                f"{item.id} after {invalid} replies: {why}")
        log.info("question %s: %s; asking again (%d/%d)", item.id, why, invalid, self.config.reask)
        return invalid

    def _fatal(self, err: BaseException) -> AssessorError:
        fatal = fatal_error(err, endpoint=self.endpoint, model=self.model or "?",
                            api_key_env=self.config.api_key_env, secrets=self._secrets)
        if isinstance(err, openai.APIStatusError) and err.status_code in (401, 403, 404):
            self._broken = fatal  # endpoint-wide; a 400 (e.g. one paper too long) is not
        return fatal

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except RuntimeError:  # its loop is already closed; nothing left to release
                pass
        self.cache.close()


# --- dry-run estimate ------------------------------------------------------------------------------


def estimate_run(papers: list[Paper], options: dict[str, Any]) -> dict[str, Any]:
    """Calls and tokens an LLM run would spend (see ``checklist_eval.assessors.estimate``)."""
    model = options.get("model")
    prices = PriceTable.load(options.get("prices"))
    cfg = LLMConfig(model=model or "unknown", **{k: options[k] for k in ("prompt_version", "max_tokens",
                                                                       "context_tokens") if options.get(k)})
    prompts = PromptSet.load(cfg.prompt_version)
    calls = skipped = prompt_chars = 0
    per_paper = []
    asked: set[tuple[str, str]] = set()  # identical requests (prefix, question) are sent once per run
    in_cache = options.get("in_cache")  # (strategy, prefix digest, question) -> already answered?
    answered_before = 0
    for paper in papers:
        prefix, warning = prefix_messages(prompts, paper, cfg.prompt_char_budget)
        prefix_chars = sum(len(m["content"]) for m in prefix)
        digest = digest_messages(prefix)
        digests = None
        n = paper_chars = 0
        for item in paper.checklist.items:
            if not item.is_answered:
                skipped += 1
                continue
            question = question_message(prompts, item)
            if (digest, question) in asked:
                continue
            asked.add((digest, question))
            if in_cache is not None:
                if digests is None:  # the prefix of every strategy a cached answer may have been asked in
                    digests = {s: digest_messages(prefix_messages(prompts, paper, cfg.prompt_char_budget, s)[0])
                               for s in chain_from(StructuredOutput.JSON_SCHEMA)}
                if any(in_cache(s.value, d, question) for s, d in digests.items()):
                    answered_before += 1
                    continue
            n += 1
            paper_chars += prefix_chars + len(question)
        calls += n
        prompt_chars += paper_chars
        prefix_tokens = prefix_chars // CHARS_PER_TOKEN
        per_paper.append({
            "source": paper.source, "calls": n, "truncated": warning is not None,
            "prompt_tokens": paper_chars // CHARS_PER_TOKEN,
            # Providers cache a shared prefix of at least PREFIX_CACHE_MIN_TOKENS after its first use.
            "cached_tokens": prefix_tokens * max(0, n - 1) if prefix_tokens >= PREFIX_CACHE_MIN_TOKENS else 0,
            "completion_tokens": n * min(TYPICAL_COMPLETION_TOKENS, cfg.max_tokens),
        })
    prompt_tokens = prompt_chars // CHARS_PER_TOKEN
    completion_tokens = calls * min(TYPICAL_COMPLETION_TOKENS, cfg.max_tokens)
    cost = prices.cost(model, Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)) if model else 0.0
    return {
        "model": model,
        "calls": calls,
        "skipped_unanswered": skipped,
        "already_cached": answered_before,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "cost_usd": round(cost, 6),
        "priced": bool(model) and prices.lookup(model) is not None,
        "papers": per_paper,
        "note": "tokens ~ characters/4; cost assumes no provider prefix-cache discount (an upper estimate)",
    }
