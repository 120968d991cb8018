"""A loopback OpenAI-compatible server for tests, drills and benchmarks (asyncio + h11, the HTTP stack
the ``openai`` SDK itself uses; no web framework).

    with MockServer(latency=0.05, faults=FaultConfig(rate=0.2)) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        ...
        server.stats.requests, server.stats.by_status, server.stats.prefix_reuse

``profile`` (``checklist_eval/mock_profiles.py``) makes it answer as one provider does: its refused
parameters and error bodies, URL shape, key header, usage fields and reasoning tokens.

Endpoints: ``GET /v1/models``; ``POST /v1/completions`` (``echo`` + ``logprobs``: prompt
log-probabilities, see :mod:`checklist_eval.mock_completions`); ``POST /v1/chat/completions``
(``response_format`` json_schema /
json_object / none, ``logprobs`` + ``top_logprobs``, ``usage.prompt_tokens_details.cached_tokens``);
``/v1/files`` and ``/v1/batches`` (``checklist_eval.mock_batches``); and for a server in another
process, ``GET /_stats`` and ``POST /_reset``.

What an endpoint does not support is either ignored or refused with a 400, as real ones do:
``supports_json_schema`` / ``supports_json_object`` False refuse that ``response_format``;
``supports_logprobs=False`` silently returns no logprobs (vLLM builds without them), while
``refuse_logprobs=True`` answers a request asking for logprobs with a 400 (OpenAI's reasoning models).

Verdicts are a pure function of the prompt, so a rerun or a faulty run gives the same verdicts. The
question block is the last user message; the paper is everything before it. Rules, in order:

1. answer TODO / missing, or an empty justification            -> incorrect (p 0.05-0.15)
2. the justification points somewhere ("Section 4", "Table 2", "Appendix B", "Fig. 3", "§5"):
   every pointer exists in the paper part                       -> correct   (p 0.85-0.97)
   some pointer does not exist                                   -> incorrect (p 0.05-0.20)
3. otherwise a tie-break on sha256 of the question block up to the justification: u < 0.5 -> correct (p 0.55-0.75),
   else incorrect (p 0.25-0.45)

The verdict token's logprob is log(p) (or log(1-p) for "false"), with both alternatives in
``top_logprobs``. Tokens are a rough word-piece split (about 4-6 characters each). Prompt-prefix reuse
is counted in blocks of 16 tokens, the way vLLM's prefix cache hashes blocks.

Faults are drawn from ``random.Random(f"{seed}:{n}")`` for the n-th chat request, so a drill with
the same seed and order fails the same requests.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import math
import random
import re
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any

import h11

from checklist_eval.mock_profiles import get_profile

__all__ = ["FaultConfig", "MockServer", "ServerStats", "mock_verdict", "tokenize"]

FAULT_KINDS = ("429", "500", "timeout", "malformed", "truncated")
BLOCK = 16


@dataclass(frozen=True)
class FaultConfig:
    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    retry_after: float = 0.05  # seconds announced on a 429 (retry-after-ms, and Retry-After rounded up)
    timeout_hold: float = 5.0  # a "timeout" fault holds the connection this long, then closes it

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds: {sorted(unknown)}")


@dataclass
class ServerStats:
    requests: int = 0  # every HTTP request, any path
    chat_requests: int = 0
    by_status: dict[int, int] = field(default_factory=dict)
    by_fault: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0  # of answered (200) completions, as reported in their usage
    completion_tokens: int = 0
    cached_tokens: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    # share of prompt tokens in a prefix seen in an EARLIER request (what a provider's cache would reuse)
    prefix_reuse: float = 0.0
    # share of prompt tokens in a prefix shared with ANY other request (the prefix a paper's questions share)
    prefix_share: float = 0.0
    arrivals: list[float] = field(default_factory=list)  # monotonic arrival time of each chat request
    auth_headers_seen: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["by_status"] = {str(k): v for k, v in self.by_status.items()}
        d.pop("arrivals")
        return d


_TOKEN = re.compile(r"[ ]?[A-Za-z]{1,10}|[ ]?\d{1,3}|[ ]?[^\sA-Za-z\d]|\s+")


def tokenize(text: str) -> list[str]:
    """Deterministic word-piece split; joining the pieces gives back the text."""
    return _TOKEN.findall(text)


def _unit(text: str) -> float:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") / 2**64


_ANSWER = re.compile(r"(?im)^[^\n]*\banswer\s*:\s*\[?\s*(yes|no|n/?a|todo|\(missing\))")
_JUSTIFICATION = re.compile(r"(?im)^[^\n]*\bjustification\s*:[ \t]*(.*)$")
_POINTER = re.compile(r"(Section|Sec\.|Table|Figure|Fig\.|Appendix|App\.|§)\s*~?\s*([A-Z](?:\.\d+)*|\d+(?:\.\d+)*)",
                      re.I)
_KIND_WORDS = {"sec.": "section", "fig.": "figure", "app.": "appendix", "§": "section"}


def _pointer_exists(kind: str, number: str, paper: str) -> bool:
    kind = _KIND_WORDS.get(kind.lower(), kind.lower())
    num = re.escape(number)
    spellings = {"section": r"(?:section|sec\.|§)", "figure": r"(?:figure|fig\.)", "appendix": r"(?:appendix|app\.)"}
    if re.search(rf"{spellings.get(kind, kind)}\s*~?\s*{num}\b", paper, re.I):
        return True
    if kind in ("section", "appendix"):  # a heading line "4.2 Results" / "B Proofs" / "# 4.2 Results"
        return bool(re.search(rf"(?m)^\s*#*\s*{num}\.?\s+[A-Z]", paper))
    return False


def mock_verdict(messages: list[dict[str, Any]]) -> tuple[bool, float, str, list[str]]:
    """(correct, p_correct, review, evidence) for a chat request; see the module docstring."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users:
        return False, 0.1, "- No question found in the request.", []
    # The question is the last user message that asks one (a re-ask appends the validation error after it).
    asking = [i for i in users if _ANSWER.search(_text(messages[i].get("content")))]
    last = asking[-1] if asking else users[-1]
    question = _text(messages[last].get("content"))
    paper = "\n".join(_text(m.get("content")) for i, m in enumerate(messages) if i < last)
    answer_m = _ANSWER.search(question)
    answer = answer_m.group(1).lower() if answer_m else ""
    just_m = _JUSTIFICATION.search(question)
    justification = just_m.group(1).strip() if just_m else ""
    # Tie-break on the block up to the justification, so the format instructions that follow it
    # (which differ per structured-output strategy) do not change the verdict.
    u = _unit(question[: just_m.end()] if just_m else question)
    if answer in ("", "todo", "(missing)") or justification in ("", "(empty)"):
        return False, 0.05 + 0.1 * u, "- The answer is missing, TODO, or has no justification: justify it.", []
    pointers = _POINTER.findall(justification)
    if pointers:
        missing = [f"{k} {n}" for k, n in pointers if not _pointer_exists(k, n, paper)]
        if missing:
            return (False, 0.05 + 0.15 * u,
                    "\n".join(f"- The justification points to {m}, which the paper does not have." for m in missing),
                    [])
        found = [f"{k} {n}" for k, n in pointers]
        return True, 0.85 + 0.12 * u, f"- Correct: the paper supports the answer at {', '.join(found)}.", found
    if u < 0.5:
        return True, 0.55 + 0.4 * u, "- Plausibly correct; name the section that shows it.", []
    return False, 0.25 + 0.4 * (u - 0.5), "- Not shown in the paper; point to the section that supports it.", []


def mock_rewrite(messages: list[dict[str, Any]]) -> str | None:
    """The adversary's rewrite request (prompts/adversary-v1): the justification plus a pointer to a
    section most papers have, which is what fools the mock's own verdict rule. None for other requests."""
    if not messages or "You rewrite the justification" not in _text(messages[0].get("content")):
        return None
    m = re.search(r"(?m)^Current justification:[ \t]*(.*)$", _text(messages[-1].get("content")))
    return f"{m.group(1).strip() if m else ''} The details are given in Section 2.".strip()


FAKE_QUOTE = "All experiments were repeated on 64 TPU pods for three weeks"


def mock_findings(messages: list[dict[str, Any]], correct: bool, review: str) -> tuple[list[str], list[str]] | None:
    """must_fix / suggestions when the request's format asks for them (assess-v2), else None. A question
    whose justification holds "[mock:omit-must-fix]" first gets an incorrect verdict with an empty
    must_fix; only a re-ask that sends the validation error back gets a usable one."""
    prompt = "\n".join(_text(m.get("content")) for m in messages)
    if "must_fix" not in prompt and "Must fix:" not in prompt:
        return None
    questions = [_text(m.get("content")) for m in messages if m.get("role") == "user"
                 and _ANSWER.search(_text(m.get("content")))]
    points = [ln.strip().removeprefix("- ") for ln in review.splitlines() if ln.strip()]
    told = any(m.get("role") == "user" and "must_fix" in _text(m.get("content")) and "could not be used"
               in _text(m.get("content")) for m in messages)
    if questions and "[mock:omit-must-fix]" in questions[-1] and not told:
        return [], points
    return (points, []) if not correct else ([], points)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class _Reply:
    def __init__(self, status: int, body: bytes, headers: list[tuple[str, str]] | None = None,
                 hang: float | None = None, streamed: Any = None):
        self.status = status
        self.body = body
        self.headers = headers or []
        self.hang = hang
        self.streamed = streamed  # a misbehave.Streamed body


def _json(status: int, obj: Any, headers: list[tuple[str, str]] | None = None) -> _Reply:
    return _Reply(status, json.dumps(obj).encode("utf-8"), headers)


def _error(status: int, message: str, etype: str, code: str | None = None,
           headers: list[tuple[str, str]] | None = None) -> _Reply:
    return _json(status, {"error": {"message": message, "type": etype, "param": None, "code": code}}, headers)


class MockServer:
    def __init__(self, latency: float = 0.0, faults: FaultConfig | None = None, seed: int = 0,
                 rpm_limit: float | None = None, supports_json_schema: bool = True,
                 supports_json_object: bool = True, supports_logprobs: bool = True,
                 refuse_logprobs: bool = False, context_tokens: int = 128_000, require_api_key: str | None = None,
                 rpm_window: float = 60.0, host: str = "127.0.0.1", port: int = 0,
                 model: str = "mock-model", profile: str = "openai-chat", misbehave: str | None = None):
        from checklist_eval import misbehave as _misbehave

        if misbehave is not None and misbehave not in _misbehave.MODES:
            raise ValueError(f"unknown misbehaviour {misbehave!r}; one of {', '.join(_misbehave.MODES)}")
        self.misbehave = misbehave  # see checklist_eval.misbehave
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
        self.profile = get_profile(profile)  # a provider's quirks (checklist_eval/mock_profiles.py)
        self.model = self.profile.model if model == "mock-model" and profile != "openai-chat" else model
        self._lock = threading.Lock()
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.reset_stats()
        from checklist_eval.mock_batches import BatchService

        self.batches = BatchService(self)  # /v1/files and /v1/batches (see checklist_eval.mock_batches)

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
        self._thread = None
        self._loop = None

    # -- statistics ---------------------------------------------------------------------------------

    def reset_stats(self) -> None:
        with self._lock:
            self._stats = ServerStats()
            self._block_counts: dict[int, int] = {}
            self._chains: list[tuple[int, list[int]]] = []  # (prompt tokens, block chain) per request
            self._reused_tokens = 0
            self._chat_counter = 0
            self._window: deque[float] = deque()

    @property
    def stats(self) -> ServerStats:
        """A consistent snapshot, with the prefix shares computed."""
        with self._lock:
            snap = copy.deepcopy(self._stats)
            total = sum(n for n, _ in self._chains)
            shared = 0
            for n, chain in self._chains:
                k = 0
                while k < len(chain) and self._block_counts.get(chain[k], 0) >= 2:
                    k += 1
                shared += min(n, k * BLOCK)
            snap.prefix_share = shared / total if total else 0.0
            snap.prefix_reuse = self._reused_tokens / total if total else 0.0
        return snap

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
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                got = await self._read_request(conn, reader)
                if got is None:
                    break
                request, body = got
                reply = await self._dispatch(request, body)
                if reply.hang is not None:  # a "timeout" fault: say nothing, then hang up
                    await asyncio.sleep(reply.hang)
                    break
                if reply.streamed is not None:  # a misbehaving body: sent piece by piece, then hang up
                    await self._send_streamed(conn, writer, reply)
                    break
                headers = [("content-type", "application/json"), ("content-length", str(len(reply.body))),
                           *reply.headers]
                writer.write(conn.send(h11.Response(status_code=reply.status, headers=headers)))
                writer.write(conn.send(h11.Data(data=reply.body)))
                writer.write(conn.send(h11.EndOfMessage()))
                await writer.drain()
                if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                    break
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, asyncio.CancelledError, OSError):
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()

    @staticmethod
    async def _send_streamed(conn: h11.Connection, writer: asyncio.StreamWriter, reply: _Reply) -> None:
        length = reply.streamed.length
        headers = [("content-type", "application/json"), *reply.streamed.headers,
                   *([("content-length", str(length))] if length is not None else [("transfer-encoding", "chunked")])]
        writer.write(conn.send(h11.Response(status_code=reply.status, headers=headers)))
        async for chunk in reply.streamed.chunks():
            writer.write(conn.send(h11.Data(data=chunk)))
            await writer.drain()

    @staticmethod
    async def _read_request(conn: h11.Connection, reader: asyncio.StreamReader) -> tuple[h11.Request, bytes] | None:
        request = None
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await reader.read(65536)
                conn.receive_data(data)
                if not data and request is None:
                    return None
                continue
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return (request, bytes(body)) if request is not None else None  # h11 sends Request first
            elif isinstance(event, (h11.ConnectionClosed,)) or event is h11.PAUSED:
                return None

    async def _dispatch(self, request: h11.Request, body: bytes) -> _Reply:
        with self._lock:
            self._stats.requests += 1
        path, _, query = request.target.decode("latin-1").partition("?")
        path = path.rstrip("/")
        method = request.method.decode("ascii")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in request.headers}
        if path == "/_stats" and method == "GET":
            return _json(200, self.stats.to_dict())
        if path == "/_reset" and method == "POST":
            self.reset_stats()
            return _json(200, {"ok": True})
        if self.require_api_key is not None:
            given = headers.get("authorization", "")
            with self._lock:
                self._stats.auth_headers_seen += 1
            if given != f"Bearer {self.require_api_key}":
                self._count(401)
                # Echo the key the way some providers do, so tests prove the client scrubs it.
                return _error(401, f"Incorrect API key provided: {given.removeprefix('Bearer ')}.",
                              "invalid_request_error", "invalid_api_key")
        if path.endswith("/models") and method == "GET":
            self._count(200)
            return _json(200, {"object": "list", "data": [
                {"id": self.model, "object": "model", "created": 0, "owned_by": "checklist-eval"}]})
        routed = self.profile.route(method, path, query, headers)
        if isinstance(routed, tuple):  # the provider refuses the URL or the key header
            self._count(routed[0])
            return _json(*routed)
        if path.endswith("/chat/completions") and method == "POST":
            if self.misbehave is not None:
                return await self._misbehaving_chat(headers, body)
            # Subclasses override _chat(body); only Azure's deployment URL passes the deployment along.
            return await (self._chat(body, deployment=routed) if routed else self._chat(body))
        batch_reply = self.batches.handle(method, path, headers, body)
        if batch_reply is not None:
            return batch_reply
        if path.endswith("/completions") and method == "POST":
            if self.latency > 0:
                await asyncio.sleep(self.latency)
            return self._completions(body)
        self._count(404)
        return _error(404, f"no route {method} {path}", "invalid_request_error")

    def _completions(self, body: bytes) -> _Reply:
        """Legacy completions with prompt log-probabilities (see checklist_eval.mock_completions)."""
        from checklist_eval.mock_completions import completions_reply

        try:
            req = json.loads(body)
        except ValueError:
            req = None
        status, obj = completions_reply(req, self.model)
        self._count(status)
        return _json(status, obj)

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

    async def _chat(self, body: bytes, deployment: str | None = None) -> _Reply:
        with self._lock:
            self._chat_counter += 1
            n = self._chat_counter
            self._stats.chat_requests += 1
            self._stats.arrivals.append(time.monotonic())
            self._stats.in_flight += 1
            self._stats.max_in_flight = max(self._stats.max_in_flight, self._stats.in_flight)
        try:
            if self.latency > 0:
                await asyncio.sleep(self.latency)
            return self._chat_reply(n, body, deployment)
        finally:
            with self._lock:
                self._stats.in_flight -= 1

    def _refused_parameter(self, req: dict[str, Any], fmt: str) -> _Reply | None:
        """The 400 a real provider gives for a reply format or parameter this model does not take."""
        if fmt == "json_schema" and not self.supports_json_schema:
            self._count(400)
            return _error(400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported "
                          "with this model.", "invalid_request_error")
        if fmt == "json_object" and not self.supports_json_object:
            self._count(400)
            return _error(400, "Invalid parameter: 'response_format' of type 'json_object' is not supported "
                          "with this model.", "invalid_request_error")
        if req.get("logprobs") and self.refuse_logprobs:
            self._count(400)
            return _error(400, "Unsupported parameter: 'logprobs' is not supported with this model.",
                          "invalid_request_error", "unsupported_parameter")
        rejection = self.profile.refusal(req)
        if rejection is not None:
            self._count(rejection[0])
            return _json(*rejection)
        return None

    def _injected_failure(self, fault: str | None) -> _Reply | None:
        """The reply of an injected fault that replaces the answer (429, 500, hang, broken JSON)."""
        if fault == "429":
            self._count(429, fault)
            return self._too_many(self.faults.retry_after, "Rate limit reached (injected)")
        if fault == "500":
            self._count(500, fault)
            return _error(500, "The server had an error while processing your request (injected).", "server_error")
        if fault == "timeout":
            self._count(0, fault)  # no status: the connection is held, then closed
            return _Reply(0, b"", hang=self.faults.timeout_hold)
        if fault == "malformed":
            self._count(200, fault)
            return _Reply(200, b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"ind')
        return None

    def _chat_reply(self, n: int, body: bytes, deployment: str | None = None) -> _Reply:
        try:
            req = json.loads(body)
            messages = req["messages"]
        except (ValueError, KeyError, TypeError):
            self._count(400)
            return _error(400, "request body is not a chat completion request", "invalid_request_error")
        wait = self._rate_limited()
        if wait is not None:
            self._count(429, "rpm")
            return self._too_many(wait, "Rate limit reached for requests per minute")
        fmt = (req.get("response_format") or {}).get("type", "text")
        refused = self._refused_parameter(req, fmt)
        if refused is not None:
            return refused
        prompt = []
        for m in messages:
            prompt.append(f"<|{m.get('role', 'user')}|>")
            prompt.extend(tokenize(_text(m.get("content"))))
        if len(prompt) > self.context_tokens:
            self._count(400)
            return _error(400, f"This model's maximum context length is {self.context_tokens} tokens. However, "
                          f"your messages resulted in {len(prompt)} tokens.", "invalid_request_error",
                          "context_length_exceeded")
        fault = self._fault_for(n)
        injected = self._injected_failure(fault)
        if injected is not None:
            return injected
        rewrite = mock_rewrite(messages)
        correct, p, review, evidence = mock_verdict(messages) if rewrite is None else (True, 0.5, "", [])
        if self.profile.ignores_response_format:  # the model follows the prompt's format instructions
            fmt = "fenced_json" if fmt in ("json_schema", "json_object") else fmt
        text = rewrite if rewrite is not None else self._render(fmt, correct, p, review, evidence,
                                                                mock_findings(messages, correct, review))
        if "[mock:fake-quote]" in _text(messages[-1].get("content")):  # evidence the paper does not hold
            text = text.replace('"evidence": [', f'"evidence": ["{FAKE_QUOTE}", ', 1)
        finish = "stop"
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
        reasoning = self.profile.reasoning_tokens(req, _text(messages[-1].get("content")) if messages else "")
        budget = req.get("max_completion_tokens") or req.get("max_tokens")
        if reasoning and isinstance(budget, int) and reasoning + len(out_tokens) > budget:
            # Reasoning spent the budget: no visible answer, as OpenAI documents for reasoning models.
            reasoning, text, out_tokens, finish = int(budget), "", [], "length"
        with self._lock:
            self._stats.prompt_tokens += len(prompt)
            self._stats.completion_tokens += len(out_tokens) + reasoning
            self._stats.cached_tokens += cached
        want_logprobs = bool(req.get("logprobs")) and self.supports_logprobs and self.profile.logprobs
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": text, "refusal": None},
            "finish_reason": finish,
            "logprobs": self._logprobs(out_tokens, text, correct, p, int(req.get("top_logprobs") or 0))
            if want_logprobs else None,
        }
        reply = {"id": f"chatcmpl-mock-{n}", "object": "chat.completion", "created": int(time.time()),
                 "model": self.model if deployment else req.get("model", self.model), "choices": [choice],
                 "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(out_tokens),
                           "total_tokens": len(prompt) + len(out_tokens),
                           "prompt_tokens_details": {"cached_tokens": cached}}}
        reply = self.profile.shape(reply, {"prompt": len(prompt), "completion": len(out_tokens) + reasoning,
                                           "cached": cached, "reasoning": reasoning})
        return _json(200, reply)

    async def _misbehaving_chat(self, headers: dict[str, str], body: bytes) -> _Reply:
        from checklist_eval import misbehave

        mode = self.misbehave
        assert mode is not None  # only called when the server was started with a misbehaviour
        early = misbehave.early_reply(mode, headers)
        if isinstance(early, misbehave.Streamed):
            self._count(200, mode)
            return _Reply(200, b"", streamed=early)
        if early is not None:
            self._count(early[0], mode)
            return _json(*early)
        reply = await self._chat(body)
        if reply.status != 200:
            return reply
        return _json(200, misbehave.spoil(mode, headers, json.loads(reply.body)))

    def _too_many(self, wait: float, message: str) -> _Reply:
        headers = [("retry-after", str(max(1, math.ceil(wait)))), ("retry-after-ms", str(int(wait * 1000)))]
        return _error(429, message, "requests", "rate_limit_exceeded", headers=headers)

    @staticmethod
    def _render(fmt: str, correct: bool, p: float, review: str, evidence: list[str],
                findings: tuple[list[str], list[str]] | None = None) -> str:
        if fmt in ("json_schema", "json_object", "fenced_json"):
            extra = {"must_fix": findings[0], "suggestions": findings[1]} if findings else {}
            obj = json.dumps({"review": review, "evidence": evidence, **extra, "correct": correct,
                              "p_correct": round(p, 3)})
            return f"```json\n{obj}\n```" if fmt == "fenced_json" else obj
        if findings:
            review += "".join(f"\n{head}:\n" + ("\n".join(f"- {x}" for x in items) or "- none")
                              for head, items in (("Must fix", findings[0]), ("Suggestions", findings[1])))
        return (f"Review:\n{review}\nEvidence: {'; '.join(evidence) or '-'}\n"
                f"Verdict: {'correct' if correct else 'incorrect'}\nConfidence: {p:.2f}")

    @staticmethod
    def _logprobs(tokens: list[str], text: str, correct: bool, p: float, top: int) -> dict[str, Any]:
        m = re.search(r'"correct"\s*:\s*(true|false)|Verdict:\s*(correct|incorrect)', text)
        target = m.start(1) if m and m.group(1) else (m.start(2) if m else -1)
        json_mode = bool(m and m.group(1))
        yes, no = ("true", "false") if json_mode else ("correct", "incorrect")
        content = []
        offset = 0
        for tok in tokens:
            start, offset = offset, offset + len(tok)
            if start <= target < offset:
                lead = tok[: len(tok) - len(tok.lstrip())]
                alts = [(lead + yes, math.log(max(p, 1e-9))), (lead + no, math.log(max(1 - p, 1e-9)))]
                alts.sort(key=lambda a: -a[1])
                lp = alts[0][1] if alts[0][0].strip() == tok.strip() else alts[1][1]
            else:
                alts = [(tok, -0.001)]
                lp = -0.001
            content.append({"token": tok, "logprob": lp, "bytes": list(tok.encode("utf-8")),
                            "top_logprobs": [{"token": t, "logprob": alt, "bytes": list(t.encode("utf-8"))}
                                             for t, alt in alts[: max(top, 0)]]})
        return {"content": content, "refusal": None}


def sample_paper(n_questions: int = 6, body_chars: int = 4000, source: str = "sample.tex",
                 answers: list[str] | None = None) -> Any:
    """A small Paper built directly from the models, for tests and drills without the parser.

    The body has numbered sections 1-3 and a Table 1; justifications point at "Section 2" (exists),
    "Appendix Z" (does not), or nowhere, so the mock server's rules give a mix of verdicts.
    """
    from checklist_eval.models import Checklist, ChecklistItem, Paper, normalize_answer

    filler = "We study calibrated assessment of checklists and report results with error bars. "
    sections = ["1 Introduction", "2 Method", "3 Experiments", "Table 1: Main results."]
    body_parts: list[str] = []
    i = 0
    while sum(len(p) for p in body_parts) < body_chars:
        body_parts.append(f"{sections[i % len(sections)]}\n{filler * 4}")
        i += 1
    pointers = ["See Section 2 for the method.", "Details in Appendix Z.", "We discuss it in the paper.",
                "Reported in Table 1.", "Not applicable to this work.", "Yes, throughout."]
    answers = answers or ["Yes", "Yes", "No", "Yes", "NA", "Yes"]
    items = [
        ChecklistItem(id=f"q{k + 1}", title=f"Question {k + 1}", question=f"Does the paper satisfy item {k + 1}?",
                      guidelines=["Answer Yes only with evidence in the paper."],
                      answer=normalize_answer(answers[k % len(answers)]), justification=pointers[k % len(pointers)])
        for k in range(n_questions)
    ]
    return Paper(source=source, format="latex", title="A sample paper", abstract="We assess checklists.",
                 body="\n\n".join(body_parts), checklist=Checklist(id="neurips-2024", items=items))
