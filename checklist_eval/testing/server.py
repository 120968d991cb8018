"""The loopback OpenAI-compatible server (asyncio, HTTP by ``transport``; no web framework).

Faults are drawn from ``random.Random(f"{seed}:{n}")`` for the n-th chat request, so a drill with
the same seed and order fails the same requests. Prompt-prefix reuse is counted in blocks of 16 tokens,
the way vLLM's prefix cache hashes blocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import math
import random
import threading
import time
from collections import deque
from collections.abc import Iterator
from typing import Any, cast

from checklist_eval.testing import misbehave as misbehaviour
from checklist_eval.testing.batches import BatchService
from checklist_eval.testing.completions import completions_reply
from checklist_eval.testing.ollama import OllamaApi
from checklist_eval.testing.profiles import get_profile
from checklist_eval.testing.replies import Reply, Request, error_reply, json_reply
from checklist_eval.testing.slots import CONTEXT_ERRORS, SlotQueue, context_exceeded, props_reply
from checklist_eval.testing.stats import FaultConfig, ServerStats
from checklist_eval.testing.transport import serve_connection
from checklist_eval.testing.verdicts import (
    FAKE_QUOTE,
    counting_array,
    grammar_padded,
    mock_findings,
    mock_rewrite,
    mock_verdict,
    render_reply,
    running_string,
    text_of,
    tokenize,
    verdict_logprobs,
)

__all__ = ["MockServer"]

BLOCK = 16
KV_FULL = "Context size has been exceeded."  # llama.cpp's server, its slots' shared cache full (HTTP 500)


class MockServer:
    def __init__(self, latency: float = 0.0, faults: FaultConfig | None = None, seed: int = 0,
                 rpm_limit: float | None = None, supports_json_schema: bool = True,
                 supports_json_object: bool = True, supports_logprobs: bool = True,
                 refuse_logprobs: bool = False, context_tokens: int = 128_000, require_api_key: str | None = None,
                 rpm_window: float = 60.0, host: str = "127.0.0.1", port: int = 0,
                 model: str = "mock-model", profile: str = "openai-chat", misbehave: str | None = None,
                 slots: int | None = None, props: bool = False, context_error: str = "openai",
                 slots_share_cores: bool = False, kv_shared: bool = False):
        if misbehave is not None and misbehave not in misbehaviour.MODES:
            raise ValueError(f"unknown misbehaviour {misbehave!r}; one of {', '.join(misbehaviour.MODES)}")
        self.misbehave, self._misbehave_state = misbehave, cast("dict[str, float]", {})  # see testing.misbehave
        if context_error not in CONTEXT_ERRORS:
            raise ValueError(f"unknown context error wording {context_error!r}; one of {', '.join(CONTEXT_ERRORS)}")
        # llama.cpp's slots, /props and context overflow (see checklist_eval.testing.slots)
        self.slot_queue = SlotQueue(slots, slots_share_cores) if slots else None
        self.props = props
        # The slots' prompts share one cache of ``context_tokens`` (llama.cpp's unified KV cache, its default):
        # a request that would overfill it is answered 500 "Context size has been exceeded."
        self.kv_shared = kv_shared
        self._kv_held = 0
        self.context_error = context_error
        self.latency = latency
        self.faults = faults or FaultConfig()
        self.seed = seed
        self.rpm_limit = rpm_limit
        self.rpm_window = rpm_window
        self.supports_json_schema = supports_json_schema
        self.supports_json_object = supports_json_object
        self.supports_logprobs = supports_logprobs
        self.refuse_logprobs = refuse_logprobs
        self.context_tokens = context_tokens
        self.require_api_key = require_api_key
        self.host = host
        self.port = port
        self.profile = get_profile(profile)  # a provider's quirks (checklist_eval/testing/profiles.py)
        self.model = self.profile.model if model == "mock-model" and profile != "openai-chat" else model
        self._lock = threading.Lock()
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.reset_stats()
        self.batches = BatchService(self)  # /v1/files and /v1/batches (see checklist_eval.testing.batches)
        self.ollama = OllamaApi(self)  # Ollama's /api routes, for its profile (see checklist_eval.testing.ollama)

    # -- lifecycle ----------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}{self.profile.base_path}"

    async def start(self) -> MockServer:
        self._server = await asyncio.start_server(self._serve_connection, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def serve_forever(self) -> None:
        """Serve until cancelled (starting first unless ``start`` already ran), then stop."""
        if self._server is None:
            await self.start()
        try:
            await asyncio.Event().wait()
        finally:
            await self.stop()

    def __enter__(self) -> MockServer:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.start())
            except BaseException as err:  # port in use: surface it in the caller's thread
                failure.append(err)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.stop())
            loop.close()

        self._thread = threading.Thread(target=run, name="mock-openai-server", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        self._thread, self._loop = None, None

    # -- statistics ---------------------------------------------------------------------------------

    def reset_stats(self) -> None:
        with self._lock:
            self._stats = ServerStats()
            self._block_counts: dict[int, int] = {}
            self._chains: list[tuple[int, list[int]]] = []  # (prompt tokens, block chain) per request
            self._reused_tokens = 0
            self._chat_counter = 0
            self._window: deque[float] = deque()
            if self.slot_queue is not None:
                self.slot_queue.max_waiting = self.slot_queue.max_busy = 0

    @property
    def stats(self) -> ServerStats:
        """A consistent snapshot, with the prefix shares computed."""
        with self._lock:
            snap = copy.deepcopy(self._stats)
            total, shared = sum(n for n, _ in self._chains), 0
            for n, chain in self._chains:
                k = 0
                while k < len(chain) and self._block_counts.get(chain[k], 0) >= 2:
                    k += 1
                shared += min(n, k * BLOCK)
            snap.prefix_share = shared / total if total else 0.0
            snap.prefix_reuse = self._reused_tokens / total if total else 0.0
            if self.slot_queue is not None:
                snap.max_queued, snap.max_busy_slots = self.slot_queue.max_waiting, self.slot_queue.max_busy
        return snap

    def answer_batch_line(self, body: bytes) -> Reply:
        """One line of a Batch API job, answered as the n-th chat request."""
        with self._lock:
            self._chat_counter += 1
            n = self._chat_counter
            self._stats.chat_requests += 1
        return self._chat_reply(n, body)

    def _probed(self) -> None:
        with self._lock:
            self._stats.probes += 1

    def _count(self, status: int, fault: str | None = None) -> None:
        with self._lock:
            self._stats.by_status[status] = self._stats.by_status.get(status, 0) + 1
            if fault:
                self._stats.by_fault[fault] = self._stats.by_fault.get(fault, 0) + 1

    def _record_prompt(self, tokens: list[str]) -> int:
        """Register the prompt's blocks; returns the tokens already cached by earlier requests."""
        chain: list[int] = []
        h = 0
        for i in range(0, len(tokens) - len(tokens) % BLOCK, BLOCK):
            h = hash((h, tuple(tokens[i:i + BLOCK])))
            chain.append(h)
        with self._lock:
            k = 0
            while k < len(chain) and self._block_counts.get(chain[k], 0) >= 1:
                k += 1
            for c in chain:
                self._block_counts[c] = self._block_counts.get(c, 0) + 1
            self._chains.append((len(tokens), chain))
            cached = k * BLOCK
            self._reused_tokens += cached
        return cached

    # -- HTTP ---------------------------------------------------------------------------------------

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await serve_connection(reader, writer, self._dispatch)
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def _dispatch(self, request: Request, body: bytes) -> Reply:
        with self._lock:
            self._stats.requests += 1
        method, path, query, headers = request.method, request.path, request.query, request.headers
        if path == "/_stats" and method == "GET":
            return json_reply(200, self.stats.to_dict())
        if path == "/_reset" and method == "POST":
            self.reset_stats()
            return json_reply(200, {"ok": True})
        if self.require_api_key is not None:
            given = headers.get("authorization", "")
            with self._lock:
                self._stats.auth_headers_seen += 1
            if given != f"Bearer {self.require_api_key}":
                self._count(401)
                # Echo the key the way some providers do, so tests prove the client scrubs it.
                return error_reply(401, f"Incorrect API key provided: {given.removeprefix('Bearer ')}.",
                              "invalid_request_error", "invalid_api_key")
        if path.startswith("/api/") or (method == "GET" and (path == "/props" or path.endswith("/models"))):
            return self.ollama.handle(method, path, body) if path.startswith("/api/") else self._probe_reply(path)
        routed = self.profile.route(method, path, query, headers)
        if isinstance(routed, tuple):  # the provider refuses the URL or the key header
            self._count(routed[0])
            return json_reply(*routed)
        if path.endswith("/chat/completions") and method == "POST":
            if self.misbehave is not None:
                return await self._misbehaving_chat(headers, body)
            # Subclasses override _chat(body); only Azure's deployment URL passes the deployment along.
            return await (self._chat(body, deployment=routed) if routed else self._chat(body))
        batch_reply = self.batches.handle(method, path, headers, body)
        if batch_reply is not None:
            return batch_reply
        if path.endswith("/completions") and method == "POST":
            early = self._early_misbehaviour(headers)  # a hostile server is hostile on every route
            if early is not None:
                return early
            if self.latency > 0:
                await asyncio.sleep(self.latency)
            return self._completions(body)
        self._count(404)
        return error_reply(404, f"no route {method} {path}", "invalid_request_error")

    def _probe_reply(self, path: str) -> Reply:
        """What a client asking about the engine gets: ``/props`` (llama.cpp's; other servers have no
        such route) and the model list (refused to a key that may only chat: misbehave ``no-listing``)."""
        self._probed()
        if path.endswith("/models") and self.misbehave == "no-listing":
            return error_reply(403, "You are not allowed to list models with this key.", "permission_error")
        if path.endswith("/models"):
            return json_reply(200, {"object": "list", "data": [self.profile.model_entry(self.model)]})
        if self.props:  # the slots and window this server was started with
            return props_reply(self.model, self.context_tokens, self.slot_queue.slots if self.slot_queue else None)
        if self.profile.props is not None:  # the figures captured from the real engine
            return json_reply(200, self.profile.props(self.model))
        return error_reply(404, "File Not Found", "not_found_error")

    def _completions(self, body: bytes) -> Reply:
        """Legacy completions with prompt log-probabilities (see checklist_eval.testing.completions)."""
        try:
            req = json.loads(body)
        except ValueError:
            req = None
        if isinstance(req, dict) and not self.profile.prompt_logprobs:  # the prompt is never scored
            req = {k: v for k, v in req.items() if k not in ("echo", "prompt_logprobs")}
        refused = self.profile.completions_refusal(req)
        status, obj = refused if refused is not None else completions_reply(req, self.model,
                                                                            self.profile.zero_max_tokens_fills)
        self._count(status)
        return json_reply(status, obj)

    # -- chat completions ---------------------------------------------------------------------------

    def _fault_for(self, n: int) -> str | None:
        if self.faults.rate <= 0 or not self.faults.kinds:
            return None
        rnd = random.Random(f"{self.seed}:{n}")
        if rnd.random() >= self.faults.rate:
            return None
        return self.faults.kinds[rnd.randrange(len(self.faults.kinds))]

    def _rate_limited(self) -> float | None:
        """Seconds until the sliding window has room, or None when the request is admitted."""
        if not self.rpm_limit:
            return None
        now = time.monotonic()
        allowed = max(1, int(self.rpm_limit * self.rpm_window / 60.0))
        with self._lock:
            while self._window and self._window[0] <= now - self.rpm_window:
                self._window.popleft()
            if len(self._window) >= allowed:
                return self._window[0] + self.rpm_window - now
            self._window.append(now)
        return None

    async def _chat(self, body: bytes, deployment: str | None = None) -> Reply:
        with self._lock:
            self._chat_counter += 1
            n = self._chat_counter
            self._stats.chat_requests += 1
            self._stats.arrivals.append(time.monotonic())
            self._stats.in_flight += 1
            self._stats.max_in_flight = max(self._stats.max_in_flight, self._stats.in_flight)
        try:
            if self.slot_queue is not None:
                async with self.slot_queue:  # a refused request frees its slot at once, as llama.cpp's does
                    with self._kv_room(body) as room:
                        if not room:
                            self._count(500)
                            return error_reply(500, KV_FULL, "server_error")
                        reply = self._chat_reply(n, body, deployment)
                        if reply.status == 200 and self.latency + reply.work > 0:
                            await self.slot_queue.work(self.latency + reply.work)
                        return reply
            reply = self._chat_reply(n, body, deployment)
            if self.latency + reply.work > 0:
                await asyncio.sleep(self.latency + reply.work)
            return reply
        finally:
            with self._lock:
                self._stats.in_flight -= 1

    @contextlib.contextmanager
    def _kv_room(self, body: bytes) -> Iterator[bool]:
        """Whether a shared cache (``kv_shared``) has room for this request's prompt, held while it works."""
        need = 0
        if self.kv_shared:
            try:
                need = len(self._prompt_tokens(json.loads(body)["messages"]))
            except (ValueError, KeyError, TypeError, AttributeError):
                need = 0
        with self._lock:
            room = self._kv_held == 0 or self._kv_held + need <= self.context_tokens
            if room:
                self._kv_held += need
        try:
            yield room
        finally:
            if room:
                with self._lock:
                    self._kv_held -= need

    def _refused_parameter(self, req: dict[str, Any], fmt: str) -> Reply | None:
        """The 400 a real provider gives for a reply format or parameter this model does not take."""
        if fmt == "json_schema" and not self.supports_json_schema:
            self._count(400)
            return error_reply(400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported "
                          "with this model.", "invalid_request_error")
        if fmt == "json_object" and not self.supports_json_object:
            self._count(400)
            return error_reply(400, "Invalid parameter: 'response_format' of type 'json_object' is not supported "
                          "with this model.", "invalid_request_error")
        if req.get("logprobs") and self.refuse_logprobs:
            self._count(400)
            return error_reply(400, "Unsupported parameter: 'logprobs' is not supported with this model.",
                          "invalid_request_error", "unsupported_parameter")
        rejection = self.profile.refusal(req)
        if rejection is not None:
            self._count(rejection[0])
            return json_reply(*rejection)
        return None

    def _injected_failure(self, fault: str | None) -> Reply | None:
        """The reply of an injected fault that replaces the answer (429, 500, hang, broken JSON)."""
        if fault == "429":
            self._count(429, fault)
            return self._too_many(self.faults.retry_after, "Rate limit reached (injected)")
        if fault == "500":
            self._count(500, fault)
            return error_reply(500, "The server had an error while processing your request (injected).", "server_error")
        if fault == "timeout":
            self._count(0, fault)  # no status: the connection is held, then closed
            return Reply(0, b"", hang=self.faults.timeout_hold)
        if fault == "malformed":
            self._count(200, fault)
            return Reply(200, b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"ind')
        return None

    def _chat_reply(self, n: int, body: bytes, deployment: str | None = None) -> Reply:
        try:
            req = json.loads(body)
            messages = req["messages"]
        except (ValueError, KeyError, TypeError):
            self._count(400)
            return error_reply(400, "request body is not a chat completion request", "invalid_request_error")
        fmt = (req.get("response_format") or {}).get("type", "text")
        if (self.profile.takes_grammar or self.props) and req.get("grammar") and fmt != "json_schema":
            fmt = "grammar"  # given both, the real llama-server answered by the schema (HTTP 200)
        if fmt == "json_object" and self.profile.object_schema and "schema" in req["response_format"]:
            fmt = "json_schema"  # its grammar is built from that schema (llama-cpp-python)
        prompt = self.profile.cut_prompt(self._prompt_tokens(messages), self.context_tokens)  # Ollama cuts
        refused = self._refusal(req, fmt, prompt)
        if refused is not None:
            return refused
        fault = self._fault_for(n)  # drawn only for a request the endpoint accepted, as before
        injected = self._injected_failure(fault)
        if injected is not None:
            return injected
        text, correct, p = self._answer(messages, fmt)
        finish = "stop"
        question = text_of(messages[-1].get("content")) if messages else ""
        cap = int(req.get("max_tokens") or req.get("max_completion_tokens") or 800)
        if self.profile.runs_away(req, question):
            text, finish = counting_array(question[:60], cap), "length"
        elif self.profile.string_runs_away(req, messages):
            text, finish = running_string(cap), "length"
        if fault == "truncated":
            self._count(200, fault)
            text = text[: max(1, len(text) // 2)]
            finish = "length"
        else:
            self._count(200)
        out_tokens = tokenize(text)
        cached = self._record_prompt(prompt)
        if not self.profile.reports_cached:
            cached = 0
        reasoning = self.profile.reasoning_tokens(req, question)
        budget = req.get("max_completion_tokens") or req.get("max_tokens")
        if reasoning and isinstance(budget, int) and reasoning + len(out_tokens) > budget:
            # Reasoning spent the budget: no visible answer, as OpenAI documents for reasoning models.
            reasoning, text, out_tokens, finish = int(budget), "", [], "length"
        with self._lock:
            self._stats.prompt_tokens += len(prompt)
            self._stats.completion_tokens += len(out_tokens) + reasoning
            self._stats.cached_tokens += cached
        want_logprobs = bool(req.get("logprobs")) and self.supports_logprobs and self.profile.logprobs
        if want_logprobs:
            with self._lock:
                self._stats.logprob_replies += 1
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": text, "refusal": None},
            "finish_reason": finish,
            "logprobs": verdict_logprobs(out_tokens, text, correct, p, int(req.get("top_logprobs") or 0))
            if want_logprobs else None,
        }
        model = self.model if deployment else req.get("model", self.model)
        reply = self._completion(n, model, choice, len(prompt), len(out_tokens), cached, reasoning)
        reply.work = self.profile.logprob_work_s * len(out_tokens) if want_logprobs else 0.0
        return reply

    def _answer(self, messages: list[dict], fmt: str) -> tuple[str, bool, float]:
        """The mock model's reply text, and the verdict and probability it carries."""
        rewrite = mock_rewrite(messages)
        correct, p, review, evidence = mock_verdict(messages) if rewrite is None else (True, 0.5, "", [])
        if self.profile.ignores_response_format:  # the model follows the prompt's format instructions
            fmt = "fenced_json" if fmt in ("json_schema", "json_object") else fmt
        shape = "json_schema" if fmt == "grammar" else fmt  # the grammar the client sent is the schema's, compact
        text = rewrite if rewrite is not None else render_reply(shape, correct, p, review, evidence,
                                                                mock_findings(messages, correct, review))
        if "[mock:fake-quote]" in text_of(messages[-1].get("content")):  # evidence the paper does not hold
            text = text.replace('"evidence": [', f'"evidence": ["{FAKE_QUOTE}", ', 1)
        if (self.profile.grammar_whitespace and fmt in ("json_schema", "json_object")) or \
                (self.profile.pads_json_object and fmt == "json_object"):
            text = grammar_padded(text)
        if self.profile.raw_newlines and fmt == "json_schema":  # raw newlines inside strings, as its grammar allows
            text = text.replace("\\n", "\n").replace('"review": "', '"review": "\n', 1)
        return text, correct, p

    @staticmethod
    def _prompt_tokens(messages: list[dict]) -> list[str]:
        prompt = []
        for m in messages:
            prompt.append(f"<|{m.get('role', 'user')}|>")
            prompt.extend(tokenize(text_of(m.get("content"))))
        return prompt

    def _refusal(self, req: dict, fmt: str, prompt: list[str]) -> Reply | None:
        """What a real endpoint answers before running the model: rate limit, refused parameter, overflow."""
        wait = self._rate_limited()
        if wait is not None:
            self._count(429, "rpm")
            return self._too_many(wait, "Rate limit reached for requests per minute")
        refused = self._refused_parameter(req, fmt)
        if refused is not None:
            return refused
        if len(prompt) > self.context_tokens:
            self._count(400)
            asked = req.get("max_tokens") or req.get("max_completion_tokens")
            return context_exceeded(self.context_error, len(prompt), self.context_tokens,
                                    asked if type(asked) is int else 0)
        return None

    def _completion(self, n: int, model: str, choice: dict, prompt: int, completion: int, cached: int,
                    reasoning: int) -> Reply:
        reply = {"id": f"chatcmpl-mock-{n}", "object": "chat.completion", "created": int(time.time()),
                 "model": model, "choices": [choice],
                 "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                           "total_tokens": prompt + completion,
                           "prompt_tokens_details": {"cached_tokens": cached}}}
        reply = self.profile.shape(reply, {"prompt": prompt, "completion": completion + reasoning,
                                           "cached": cached, "reasoning": reasoning})
        return json_reply(200, reply, list(self.profile.headers))

    def _early_misbehaviour(self, headers: dict[str, str]) -> Reply | None:
        """The misbehaving mode's reply that needs no model answer (a drip, a huge or garbled body)."""
        if self.misbehave is None:
            return None
        early = misbehaviour.early_reply(self.misbehave, headers, self._misbehave_state)
        if isinstance(early, misbehaviour.Streamed):
            self._count(200, self.misbehave)
            return Reply(200, b"", streamed=early)
        if early is not None:
            self._count(early[0], self.misbehave)
            return json_reply(*early[:2], headers=early[2] if len(early) > 2 else None)
        return None

    async def _misbehaving_chat(self, headers: dict[str, str], body: bytes) -> Reply:
        mode = self.misbehave
        assert mode is not None  # only called when the server was started with a misbehaviour
        early = self._early_misbehaviour(headers)
        if early is not None:
            return early
        reply = await self._chat(body)
        if reply.status != 200:
            return reply
        return json_reply(200, misbehaviour.spoil(mode, headers, json.loads(reply.body)))

    def _too_many(self, wait: float, message: str) -> Reply:
        headers = [("retry-after", str(max(1, math.ceil(wait)))), ("retry-after-ms", str(int(wait * 1000)))]
        return error_reply(429, message, "requests", "rate_limit_exceeded", headers=headers)
