"""The LLM assessor: any OpenAI-compatible chat endpoint (OpenAI, Azure OpenAI v1 base URL, vLLM,
Ollama, LiteLLM) through ``openai.AsyncOpenAI``.

One request per answered checklist item, built from the versioned prompt files in ``prompts/<version>/``
(the messages and the context budget: ``messages.py``).

Every request goes through the assessor's one ``Scheduler`` (concurrency, rpm, tpm) and the one
``RetryPolicy`` (429/5xx/timeouts only). The structured-output strategy starts at ``json_schema`` in
``auto`` mode and steps down (json_object, then text) when the endpoint refuses it (a 400, 422 or 5xx naming
it); the choice is remembered per (endpoint, model), in the response cache for later runs too, and recorded in
``Provenance.strategy``. Any other parameter the endpoint refuses (temperature, max_tokens, logprobs,
reasoning_effort ...) is learned the same way (``endpoint/capabilities.py``) and recorded in ``Provenance.quirks``.

p_correct is the probability of the verdict the model gave, from the verdict token's log-probabilities, or
from the verdict alone when they are absent or unusable: always on the verdict's side
(``confidence.on_verdict_side``).

What it holds as objects: how a paper fits the window (``fitting``), what a request is (``requests``), what
replies cost and the spending cap (``spending``), the identical requests in flight (``in_flight``), and the
endpoint's scheduler, retry policy, pace and cache.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import os
import time
from collections.abc import Sequence
from typing import Any, ClassVar, cast

import httpx2
import openai

from checklist_eval import redact
from checklist_eval.assessors.base import Assessor
from checklist_eval.assessors.config import DEFAULT_TIMEOUT_S, LLMConfig
from checklist_eval.assessors.evidence.passages import offered_passages, rested_on
from checklist_eval.assessors.llm.asking import (
    CapabilityRefusal,
    FirstRequest,
    Outcome,
    Question,
    RequestFailed,
    Sending,
)
from checklist_eval.assessors.llm.confidence import logprob_p_correct, on_verdict_side
from checklist_eval.assessors.llm.engine import EngineQuestion, take_identity
from checklist_eval.assessors.llm.facts import facts_in, ignored_facts, question_for, wants_passages
from checklist_eval.assessors.llm.fitting import ContextFitting
from checklist_eval.assessors.llm.grading import grade_verdict
from checklist_eval.assessors.llm.messages import paper_text
from checklist_eval.assessors.llm.prompts import PromptSet, prompts_root
from checklist_eval.assessors.llm.requests import RequestShape
from checklist_eval.assessors.llm.spending import InFlight, Spending
from checklist_eval.assessors.llm.verdict import InvalidOutput, Verdict, check_findings, parse
from checklist_eval.endpoint.budget import Budget
from checklist_eval.endpoint.cache import Cache, CacheMode, endpoint_identity
from checklist_eval.endpoint.capabilities import MAX_RELEARN, EndpointQuirks, avoiding_flag, is_refusal_status
from checklist_eval.endpoint.context import ContextWindow
from checklist_eval.endpoint.formats import FALLBACK
from checklist_eval.endpoint.pace import Pace, is_local_endpoint
from checklist_eval.endpoint.probe import EngineFacts, is_llama_server_reply
from checklist_eval.endpoint.registry import shared
from checklist_eval.endpoint.replies import Choice, first_choice, spent_reasoning
from checklist_eval.endpoint.retry import (
    BREAKER_FAILURES,
    CircuitBreaker,
    EndpointFault,
    MalformedResponse,
    RetryPolicy,
    check_completion,
    fatal_error,
    is_memory_full,
    is_overload,
)
from checklist_eval.endpoint.scheduler import Scheduler
from checklist_eval.endpoint.transport import openai_client
from checklist_eval.endpoint.watch import nothing_listening, post_watched, prompt_cut
from checklist_eval.errors import AssessorError
from checklist_eval.fsutil import loads_json
from checklist_eval.models import (
    Assessment,
    ChecklistItem,
    Paper,
    ParseWarning,
    Provenance,
    StructuredOutput,
    Usage,
    state_of,
)

__all__ = ["LLMAssessor", "LLMConfig", "PromptSet", "prompts_root"]

log = logging.getLogger(__name__)

NO_KEY_PLACEHOLDER = "no-key-needed"  # local servers (vLLM, Ollama) accept any bearer token

# LLMConfig (its defaults, the context windows, the prompt budget) lives in ``checklist_eval.assessors``
# so that building the command-line parser does not import ``openai``; it is re-exported here.


# --- the assessor ----------------------------------------------------------------------------------


def _open_cache(config: LLMConfig) -> Cache:
    if config.no_cache or config.cache_path is None:
        return Cache("unused", CacheMode.OFF)
    return Cache(config.cache_path, CacheMode.REFRESH if config.refresh else CacheMode.USE)


class LLMAssessor(Assessor):
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
        # one scheduler per engine in the process (endpoint/registry.py): jobs of a server share its slots and rpm
        self.scheduler = shared(("scheduler", self.endpoint, self.model, config.concurrency, config.rpm, config.tpm),
                                lambda: Scheduler(config.concurrency, config.rpm, config.tpm, congestion=is_overload,
                                                  memory_full=self._shared_memory))
        # a local engine left at the default --timeout gets deadlines at its own pace (see endpoint/pace.py)
        self.pace = Pace(config.timeout, config.timeout == DEFAULT_TIMEOUT_S and is_local_endpoint(self.base_url))
        # the window the engine says (``_learn_engine``) and refuses may lower it
        self.fitting = ContextFitting(config, self.prompts, config.window(), self._where)
        self.requests = RequestShape(config, self.prompts, self.fitting, endpoint=self.endpoint, model=self.model,
                                     prompt_version=self.prompt_version)
        self.engine = EngineQuestion(self.base_url, self.model, config.timeout)
        self.retry = RetryPolicy(max_attempts=config.max_attempts, initial=config.backoff_initial,
                                 maximum=config.backoff_max, on_retry_after=self.scheduler.pause,
                                 breaker=CircuitBreaker(lambda: self.scheduler.breaker_threshold(BREAKER_FAILURES)),
                                 stale_failure=self.scheduler.last_failure_stale)
        self.spending = Spending(config, self.model)
        self.retries = 0  # attempts beyond the first, over the run (for the progress display)
        self.in_flight = InFlight()
        self.cache = _open_cache(config)
        self._quirks: dict[tuple[str, str], EndpointQuirks] = {}
        self._first = FirstRequest()  # settled at once when the cache remembers this endpoint (``quirks``)
        self._broken: Exception | None = None  # a refusal that holds for every request
        self._client: openai.AsyncOpenAI | None = self._new_client()  # built now: ~30 ms, not per call
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def _shared_memory(self, exc: BaseException) -> int | None:
        """The engine's shared memory, when ``exc`` says the requests in flight filled it: its window (a
        unified KV cache is one window for all slots), in the units of the scheduler's estimates (characters
        over ``CHARS_PER_TOKEN``; the window holds characters at its own, denser count)."""
        return self.fitting.memory_of_window() if is_memory_full(exc) else None

    def __repr__(self) -> str:  # never shows the key
        return f"LLMAssessor(model={self.model!r}, endpoint={self.endpoint!r})"

    def _read_key(self) -> str:
        key = os.environ.get(self.config.api_key_env, "").strip()
        if key:
            redact.register(key)  # before any request: whatever the endpoint says is redacted
            return key
        if self.base_url is None:
            raise self.error(f"no API key: set the environment variable {self.config.api_key_env} "
                             "(or --base-url for a local server that needs none)")
        return NO_KEY_PLACEHOLDER

    def error(self, message: str, kind: type[AssessorError] = AssessorError, *, attempts: int = 0,
              usage: Usage | None = None) -> AssessorError:
        """An error of this assessor, naming its endpoint (host and path, never the key) and model."""
        return kind(message, endpoint=self.endpoint, model=self.model, attempts=attempts, usage=usage)

    @property
    def _secrets(self) -> tuple[str, ...]:
        return (self._api_key,)

    def _new_client(self) -> openai.AsyncOpenAI:
        return openai_client(api_key=self._api_key, base_url=self.base_url, timeout=self.config.timeout,
                             max_bytes=self.config.max_response_bytes)

    def files_client(self, max_bytes: int, deadline: float) -> openai.AsyncOpenAI:
        """A client for whole files (provider batch input and output): the same bounded transport with
        a cap and a deadline sized for a file, not for one chat reply; the caller caps what it keeps."""
        return openai_client(api_key=self._api_key, base_url=self.base_url, timeout=deadline, max_bytes=max_bytes)

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
            quirks = EndpointQuirks(strategy=start, logprobs=self.config.logprobs != "off")
            # --refresh relearns: what an earlier run learned is neither restored nor trusted
            remembered = self.cache.capabilities(*key) if self.cache.mode == CacheMode.USE else None
            if remembered is not None:
                quirks.restore(remembered, auto=self.config.structured == "auto",
                               logprobs_auto=self.config.logprobs == "auto", where=self._where)
                self._first.settled = True
            self._quirks[key] = quirks
        return self._quirks[key]

    @property
    def _where(self) -> str:
        return f"{self.endpoint} (model {self.model})"

    # -- what is asked: the fitting and the request's shape (objects it holds) ----------------------------

    @property
    def window(self) -> ContextWindow:
        return self.fitting.window

    @property
    def budget(self) -> Budget | None:
        """The ``--max-cost`` cap, which a batch admits each submission against (``challenge.batch``)."""
        return self.spending.budget

    def paper_warnings(self, paper: Paper) -> list[ParseWarning]:
        return self.fitting.paper_warnings(paper)

    def messages_for(self, paper: Paper, item: ChecklistItem, strategy: StructuredOutput) -> list[dict[str, str]]:
        return self.fitting.messages_for(paper, item, strategy)

    def request_body(self, paper: Paper, item: ChecklistItem, sent: EndpointQuirks,
                     feedback: Sequence[dict[str, str]] = ()) -> dict[str, Any]:
        return self.requests.body(paper, item, sent, feedback)

    def _cache_key(self, paper: Paper, question: str, strategy: StructuredOutput) -> str:
        return self.requests.cache_key(paper, question, strategy, self.quirks())

    def _log_reuse(self, paper: Paper, item: ChecklistItem, strategy: StructuredOutput, key: str) -> None:
        """A verdict reused (from the cache, or from an identical request in flight) is logged for this
        paper too, pointing at the reply it came from, so every verdict's evidence can be found."""
        self.cache.log_call(self.requests.call_log(paper, item, strategy, None, "reused", self.quirks()), key=key,
                            endpoint=self.endpoint, model=self.model or "",
                            prompt_version=self.prompt_version or "", strategy=strategy.value)

    # -- what the engine says about itself, asked once before its first request ----------------------

    async def _learn_engine(self) -> None:
        """Ask the engine once per run, before its first request, what it holds and runs at once; a changed
        window changes the prompt, so callers look in the cache again."""
        facts = await self.engine.facts(self._client_for_loop, ask_behind_proxy=not self.quirks().grammar,
                                        refused_key=self._refused_key)
        if facts is not None:
            self._take_engine_facts(facts)

    def _take_engine_facts(self, facts: EngineFacts) -> None:
        self.fitting.take_engine_window(facts)
        if facts.slots:
            self.scheduler.set_slots(facts.slots)
        if facts.shared_memory:
            self.scheduler.memory_tokens = self.fitting.memory_of_window()
        self.requests.engine_grammar = facts.grammar
        if facts.probe_usage is not None:  # the one-token question asked through a proxy is paid for too
            self.usage = self.usage + self._usage_of({"usage": facts.probe_usage}, 1)
        if facts.behind_proxy:
            self.quirks().learn_grammar(self._where)
            self.cache.remember_capabilities(self.endpoint, self.model or "", self.quirks().remembered())
        self.requests.engine_object_schema = facts.object_schema
        if facts.identity and facts.identity != self.quirks().identity:
            take_identity(self.cache, self.endpoint, self.model or "", self.quirks(), facts.identity, self._where)
        if facts.costly_logprobs and self.config.logprobs == "auto":
            self.quirks().forgo_logprobs(facts.costly_logprobs, self._where)
        if facts.context_tokens or facts.slots:
            log.info("%s: a context window of %d tokens (%s); %s", self._where, self.window.tokens, self.window.source,
                     f"{self.scheduler.limit} request(s) in flight ({facts.slots} slots)" if facts.slots
                     else "no slot count given: requests in flight adapt to its answers")

    # -- one request, through the scheduler and the retry policy -----------------------------------

    async def _request(self, paper: Paper, item: ChecklistItem, quirks: EndpointQuirks, est_tokens: int,
                       feedback: Sequence[dict[str, str]] = ()) -> Outcome:
        """One logical request, retried per the policy; ``RequestFailed`` when it fails for good."""
        client = self._client_for_loop()
        sending = Sending(dataclasses.replace(quirks))
        try:
            completion = await self.retry.run(
                functools.partial(self._attempt, client, paper, item, quirks, est_tokens, feedback, sending))
        except Exception as err:
            raise sending.failed(err) from err
        return Outcome(completion, sending.attempts, sending.sent.strategy)

    async def _attempt(self, client: openai.AsyncOpenAI, paper: Paper, item: ChecklistItem, quirks: EndpointQuirks,
                       est_tokens: int, feedback: Sequence[dict[str, str]], sending: Sending) -> Any:
        """One attempt. The strategy and parameters are read once a slot is held, so requests queued
        behind a refused format already use the fallback."""
        async with self.scheduler.slot(est_tokens):
            if self._broken is not None:  # a bad key or model fails every request: send no more
                raise self._broken
            self.retry.breaker.check()  # an endpoint failing every request: queued ones are not sent
            sending.sent = dataclasses.replace(quirks)
            sending.budget = self.window.prompt_char_budget(self.config.max_tokens)
            body = self.request_body(paper, item, sending.sent, feedback)
            sending.chars = sum(len(m["content"]) for m in body["messages"])
            held = await self.spending.reserve(body["messages"])
            # the requests in flight now share the engine with this one, not the ceiling that may never fill
            deadline = self.pace.deadline(int(sending.chars / self.window.chars_per_token), self.config.max_tokens,
                                          self.scheduler.in_flight)
            sending.params = {k: v for k, v in body.items() if k not in ("model", "messages")}
            sending.attempts += 1
            if sending.attempts > 1:
                self.retries += 1
            started = time.monotonic()
            try:
                response = await self._post(client, body, held, deadline)
            except openai.APIStatusError as err:
                param = sending.sent.refusal_of(err, sending.params) if is_refusal_status(err.status_code) else None
                if param is not None:
                    raise CapabilityRefusal(err, param) from err
                raise
            except openai.APIConnectionError as err:
                if (listening := nothing_listening(err, self.base_url)) is None:
                    raise
                raise listening from err
        try:
            completion = loads_json(response.content)
        except (ValueError, RecursionError):
            raise MalformedResponse(f"HTTP {response.status_code} reply body is not JSON") from None
        check_completion(completion)
        if (cut := prompt_cut(completion, sending.chars)) is not None:
            raise cut
        self.pace.observe(completion, time.monotonic() - started, self.scheduler.in_flight + 1)
        if not (self.requests.engine_grammar or quirks.grammar) and is_llama_server_reply(response.headers, completion):
            quirks.learn_grammar(self._where)
            self.cache.remember_capabilities(self.endpoint, self.model or "", quirks.remembered())
        return completion

    async def _post(self, client: openai.AsyncOpenAI, body: dict[str, Any], held: float,
                    deadline: float) -> httpx2.Response:
        """Send ``body``; the spending cap's reservation ``held`` is settled at what the reply cost.
        client.post skips the SDK's per-call TypedDict walk of the body (a few ms of CPU for a paper-sized
        prompt); auth, base URL, timeouts and status errors are the SDK's own."""
        actual = 0.0
        try:
            response = await post_watched(client, body, deadline=deadline, timeout=self.config.timeout,
                                          base_url=self.base_url, watch=self.pace.adaptive)
            actual = self.spending.cost_of_body(response.content)
        finally:
            self.spending.settle(held, actual)
        return response

    def _usage_of(self, completion: Any, attempts: int) -> Usage:
        return self.spending.usage_of(completion, attempts)

    # -- judging ----------------------------------------------------------------------------------

    def _assessment(self, paper: Paper, item: ChecklistItem, verdict: dict[str, Any], strategy: StructuredOutput,
                    usage: Usage, *, cached: bool, latency_s: float = 0.0) -> Assessment:
        """The Assessment for a verdict as stored in the cache (``Verdict`` fields, p_correct final).
        Evidence quotes are checked and findings graded by ``grading.grade_verdict``."""
        correct, p, review, graded = grade_verdict(verdict, paper_text(paper), findings=self.prompts.findings)
        offered = offered_passages(paper, item) if wants_passages(self.prompts) else []
        passages = rested_on(paper, list(verdict.get("evidence", [])), offered)
        return Assessment(
            passages=passages or offered[:1],
            state=state_of(correct, graded.get("verdict"), bool(passages)),
            question_id=item.id, answer=item.answer, correct=correct,
            p_correct=p, review=review, evidence=list(verdict.get("evidence", [])),
            provenance=Provenance(assessor=self.name, model=self.model, prompt_version=self.prompt_version,
                                  strategy=strategy, usage=usage, latency_s=latency_s, cached=cached,
                                  attempts=usage.calls, quirks=list(verdict.get("quirks") or []),
                                  endpoint=self.endpoint, context_share=verdict.get("context_share"),
                                  # as sent (a lesson may have dropped them); older cached rows: as asked
                                  temperature=verdict.get("temperature", self.config.temperature),
                                  seed=verdict.get("seed", self.config.seed)),
            **graded,
        )

    def _from_cache(self, paper: Paper, item: ChecklistItem, quirks: EndpointQuirks) -> Assessment | None:
        if not self.cache.reads:
            return None
        question = question_for(self.prompts, paper, item)
        # The strategy in use first, then the others: a verdict cached before a step-down (or after one that
        # a later run no longer needs) is still the verdict to that question.
        for strategy in (quirks.strategy, *(s for s in FALLBACK if s is not quirks.strategy)):
            key = self._cache_key(paper, question, strategy)
            hit = self.cache.get(key)
            if hit is not None:
                self._log_reuse(paper, item, StructuredOutput(hit.strategy), key)
                return self._assessment(paper, item, hit.verdict, StructuredOutput(hit.strategy), Usage(), cached=True)
        return None

    async def judge(self, paper: Paper, item: ChecklistItem) -> Assessment:
        started = time.perf_counter()
        quirks = self.quirks()
        if quirks.identity:  # an engine that said which model it serves is asked again before the cache answers
            await self._learn_engine()
        hit = self._from_cache(paper, item, quirks)
        if hit is None:
            await self._learn_engine()
            # Look again: the engine's window may have changed the prompt, and a twin that finished while
            # this one waited is in the cache, no longer in flight (it would be paid for twice).
            hit = self._from_cache(paper, item, quirks)
        if hit is not None:
            return hit
        # Two papers can put the very same question (a GT submission's A is T's paper with G's answers):
        # while one such request is in flight, its twins wait for that verdict instead of paying again.
        twin_key = self._cache_key(paper, question_for(self.prompts, paper, item), quirks.strategy)
        twin = await self.in_flight.shared(twin_key)
        if twin is not None:
            self._log_reuse(paper, item, twin[1], self._cache_key(paper, question_for(self.prompts, paper, item),
                                                                  twin[1]))
            return self._assessment(paper, item, twin[0], twin[1], Usage(), cached=True)
        with self.in_flight.asking(twin_key) as mine:
            return await self._judge_fresh(paper, item, quirks, started, mine)

    async def _judge_fresh(self, paper: Paper, item: ChecklistItem, quirks: EndpointQuirks, started: float,
                           shared: asyncio.Future) -> Assessment:
        prompt_tokens = self.fitting.paper_prefix(paper, item=item).tokens
        question = Question(est_tokens=prompt_tokens + 400 + self.config.max_tokens)
        first = await self._first.wait()
        try:
            verdict, p_correct, strategy = await self._ask_until_usable(paper, item, quirks, question)
        except BaseException:
            # Money spent on a question that then failed is still money spent: keep the total right.
            if question.usage.calls:
                self.usage = self.usage + question.usage
            raise
        finally:
            if first:
                self._first.release()
        usage = question.usage
        # The transport already redacted the reply; this second pass guards what is stored and shown.
        # What the endpoint taught the run so far travels with the verdict (and its cached copy).
        # redact_obj maps a dict to a dict; its signature says object because it takes any JSON value.
        sent = self.requests.sent_sampling(quirks)
        stored = cast("dict[str, Any]", redact.redact_obj(verdict.model_dump())) | {
            "p_correct": p_correct, "quirks": list(quirks.learned),
            "temperature": sent.get("temperature"), "seed": sent.get("seed"),
            "context_share": round(self.fitting.paper_prefix(paper, strategy, item).share, 4)}
        shared.set_result((stored, strategy))
        if first and self.cache.writes:  # a clean answer is a fact too: the next run sends every question at once
            self.cache.remember_capabilities(self.endpoint, self.model or "", quirks.remembered() | {
                "answered": round(time.time(), 3)})
        if self.cache.writes:
            key = self._cache_key(paper, question_for(self.prompts, paper, item), strategy)
            self.cache.put(key, endpoint=self.endpoint, model=self.model or "",
                           prompt_version=self.prompt_version or "", strategy=strategy.value, verdict=stored,
                           usage=usage.model_dump(),
                           call=self.requests.call_log(paper, item, strategy, question.reply, "verdict", quirks))
        return self._assessment(paper, item, stored, strategy, usage, cached=False,
                                latency_s=time.perf_counter() - started)

    async def _ask_until_usable(self, paper: Paper, item: ChecklistItem, quirks: EndpointQuirks,
                                question: Question) -> tuple[Verdict, float, StructuredOutput]:
        """Requests until a reply holds a usable verdict: transport faults are the retry policy's, a
        refused parameter or output format is learned and the request sent again, a reasoning model out
        of budget gets a bigger one, unusable output is re-asked (each bounded)."""
        while True:
            outcome = await self._request_or_relearn(paper, item, quirks, question)
            if outcome is None:
                continue
            question.add(self._usage_of(outcome.completion, outcome.attempts))
            question.reply = outcome.completion
            choice = first_choice(outcome.completion)
            if self._may_think_longer(choice, outcome.completion, quirks):
                continue
            try:
                verdict = self._verdict_of(choice, outcome.strategy)
            except InvalidOutput as err:
                # A reply cut off at max_tokens is a loop more often than a long answer; shown its own loop, a
                # small model writes it again (Gemma 3 270M on llama.cpp did, four times in a row), so the
                # re-ask says only that it was cut off.
                self._reask(paper, item, outcome.strategy, "" if choice.cut_off else choice.text, str(err), question)
                continue
            if self._ignores_facts(paper, item, verdict, choice.text, question):
                continue
            p_correct = on_verdict_side(verdict.correct, logprob_p_correct(choice.text, choice.logprobs),
                                        verdict.p_correct)
            return verdict, p_correct, outcome.strategy

    def _ignores_facts(self, paper: Paper, item: ChecklistItem, verdict: Verdict, text: str,
                       question: Question) -> bool:
        """A verdict that leaves an offline fact unaddressed is asked again, once, with the facts it
        ignored named; the second verdict is kept whatever it says."""
        n = facts_in(question_for(self.prompts, paper, item))
        if not n or question.facts_reasked:
            return False
        ignored = ignored_facts(n, verdict.must_fix, verdict.review, verdict.suggestions)
        if not ignored:
            return False
        log.info("question %s: verdict ignores offline fact(s) %s; asking again once", item.id,
                 question.reask_for_facts(ignored, text))
        return True

    async def _request_or_relearn(self, paper: Paper, item: ChecklistItem, quirks: EndpointQuirks,
                                  question: Question) -> Outcome | None:
        """The request's outcome; None when the endpoint refused something it sent and it has been
        learned (send again). Any other failure is raised, its attempts billed to the question."""
        try:
            return await self._request(paper, item, quirks, question.est_tokens, question.feedback)
        except RequestFailed as failed:
            question.add(Usage(calls=failed.attempts))
            err = failed.cause
            if self.fitting.shrunk_after_refusal(failed):
                return None
            if isinstance(err, openai.APIStatusError) and is_refusal_status(err.status_code):
                param = failed.sent.refusal_of(err, failed.params)  # a refusal read back from a batch's answers
                err = CapabilityRefusal(err, param) if param is not None else err
            if isinstance(err, CapabilityRefusal):
                if question.relearned < MAX_RELEARN and not question.confirms(err):
                    question.relearned += 1  # a first 5xx: sent again unchanged, learned only if it repeats
                    return None
                if question.relearned < MAX_RELEARN and self._learn(quirks, err.error, failed):
                    question.relearned += 1
                    return None
                raise self._cannot_avoid(err, question) from None
            if isinstance(err, (openai.APIError, EndpointFault)):
                raise self._fatal(err, question) from None
            raise err from None

    def _learn(self, quirks: EndpointQuirks, err: openai.APIStatusError, failed: RequestFailed) -> bool:
        """Learn what ``err`` refused (True: send again); the lesson is kept in the cache for later runs."""
        before = quirks.remembered()
        learned = quirks.learn_from_refusal(err, auto=self.config.structured == "auto", sent=failed.sent,
                                            sent_params=failed.params, where=self._where,
                                            logprobs_auto=self.config.logprobs == "auto")
        if learned and quirks.remembered() != before:
            self.cache.remember_capabilities(self.endpoint, self.model or "", quirks.remembered())
        return learned

    def _cannot_avoid(self, refusal: CapabilityRefusal, question: Question) -> AssessorError:
        """A refusal of what a flag forces: every request would meet it, so none is sent after this one."""
        self._broken = refusal
        err = refusal.error
        detail = " ".join(str(fatal_error(err, endpoint=self.endpoint, model=self.model,
                                          api_key_env=self.config.api_key_env, secrets=self._secrets)).split())
        return AssessorError(f"{detail}; the endpoint refuses {refusal.param}: run with {avoiding_flag(refusal.param)}",
                             endpoint=self.endpoint, model=self.model, status=err.status_code,
                             attempts=question.usage.calls, usage=question.usage)

    def _may_think_longer(self, choice: Choice, completion: Any, quirks: EndpointQuirks) -> bool:
        """A reasoning model thought through its whole budget and said nothing: ask with a bigger one."""
        return (choice.cut_off and not choice.text.strip() and spent_reasoning(completion) > 0
                and bool(quirks.max_tokens_param)
                and quirks.grow_budget(quirks.budget or self.config.max_tokens, self._where))

    def _verdict_of(self, choice: Choice, strategy: StructuredOutput) -> Verdict:
        if choice.cut_off:
            raise InvalidOutput("reply cut off at max_tokens")
        verdict = parse(strategy, choice.text)
        if self.prompts.findings:
            check_findings(verdict)
        return verdict

    def _reask(self, paper: Paper, item: ChecklistItem, strategy: StructuredOutput, text: str, why: str,
               question: Question) -> None:
        """Log the unusable reply and prepare the re-ask; give up when the re-asks are used up. As
        instructor does, the model sees its reply and the validation error, so a re-ask at temperature 0
        is not the identical request that produced the bad reply."""
        self.cache.log_call(self.requests.call_log(paper, item, strategy, question.reply, f"unusable: {why}",
                                                   self.quirks()),
                            endpoint=self.endpoint, model=self.model or "",
                            prompt_version=self.prompt_version or "", strategy=strategy.value)
        question.invalid += 1
        if question.invalid > self.config.reask:
            raise self.error(f"{self._where} gave no usable verdict for question {item.id} after "
                             f"{question.invalid} replies: {why}", attempts=question.usage.calls, usage=question.usage)
        log.info("question %s: %s; asking again (%d/%d)", item.id, why, question.invalid, self.config.reask)
        question.reask(text, why)

    def _refused_key(self, err: openai.APIStatusError) -> AssessorError:
        """The engine's probe was refused the key: the run stops as at a chat request's 401/403."""
        usage = Usage(calls=0 if self._broken is err else 1)  # one probe, however many questions waited on it
        self.usage = self.usage + usage
        question = Question(est_tokens=0, usage=usage)
        return self._fatal(err, question)

    def _fatal(self, err: BaseException, question: Question) -> AssessorError:
        """The error that ends ``question``, with what it spent; a refusal of the key or model also
        stops every request still to be sent (a 400, e.g. one paper too long, does not)."""
        if isinstance(err, openai.APIStatusError) and err.status_code in (401, 403, 404):
            self._broken = err
        return fatal_error(err, endpoint=self.endpoint, model=self.model, api_key_env=self.config.api_key_env,
                           secrets=self._secrets, attempts=question.usage.calls, usage=question.usage)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except RuntimeError:  # its loop is already closed; nothing left to release
                pass
        self.cache.close()
