"""Assessment requests as batch jobs: the OpenAI Batch API (or any server with ``/v1/files`` and
``/v1/batches``), or a requests file for an offline engine (vLLM's ``run_batch``) read back by ``ingest``.

A round: parse every submission and list the requests neither the cache nor a stored answer covers
(``BatchAssessor.collect``); write them as JSONL lines ``{custom_id, method, url, body}`` with
``custom_id`` = the request's cache key, one model per file, a new file before ``max_requests`` lines
or ``max_bytes`` bytes; upload each (purpose ``batch``), create its batch (``completion_window`` 24h),
poll with backoff, download the output and error files into ``batch_answers``; then score through
``BatchAssessor``, which turns the answers into verdicts exactly as the online path does. Questions
whose answer failed or was unusable are sent online (``--retry-via online``) or make the next round
(``--retry-via batch-api``, at most ``MAX_ROUNDS``).

Every step is recorded in the cache's SQLite file before the next starts (``batch_jobs``: local file,
input file id, batch id, status, output/error file ids, downloaded), so a run killed anywhere resumes
where it stopped: a written file is uploaded, an uploaded file gets its batch (an existing batch is
first looked up by its ``metadata.checklist_eval_job``, so a kill between create and record does not
pay twice), a running batch is polled, a finished one downloaded. Requests of unfinished jobs are
never submitted twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from checklist_eval.endpoint.batches import CHAT_URL, answer_state
from checklist_eval.endpoint.cache import Cache
from checklist_eval.endpoint.retry import MalformedResponse, RetryPolicy, fatal_error
from checklist_eval.errors import AssessorError, InputError
from checklist_eval.fsutil import TEMP_SUFFIX, atomic_write_bytes, loads_json
from checklist_eval.models import Model, Paper
from checklist_eval.redact import public_url

if TYPE_CHECKING:
    import openai
    from openai.types import Batch

__all__ = ["BatchFlow", "BatchJudge", "Job", "Limits", "MAX_ROUNDS", "TERMINAL", "read_jobs"]

T = TypeVar("T")

MAX_REQUESTS = 50_000  # OpenAI Batch API: requests per input file
MAX_BYTES = 200 * 1024 * 1024  # and bytes per input file
MAX_ROUNDS = 3
MAX_LINE_BYTES = 16 * 1024 * 1024  # one answer line; longer is a hostile or broken file
FILE_DEADLINE_S = 3600.0  # one upload or download of a whole file (up to 200 MB each way)
ANSWER_BYTES_PER_REQUEST = 256 * 1024  # an answer with top-5 logprobs is tens of kB: a generous bound
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
POLL_INITIAL_S, POLL_FACTOR, POLL_MAX_S = 0.25, 1.5, 60.0
WAIT_LIMIT_S = 25 * 3600  # the provider's 24 h window, plus finalizing

JOB_COLUMNS = ("name", "kind", "created", "updated", "endpoint", "base_url", "api_key_env", "model", "path",
               "requests", "bytes", "input_file_id", "batch_id", "status", "output_file_id", "error_file_id",
               "counts_json", "downloaded")


@dataclass(frozen=True)
class Limits:
    max_requests: int = MAX_REQUESTS
    max_bytes: int = MAX_BYTES


@dataclass
class Job:
    name: str
    kind: str
    created: float
    updated: float
    endpoint: str
    base_url: str | None
    api_key_env: str
    model: str
    path: str
    requests: int
    bytes: int
    input_file_id: str | None
    batch_id: str | None
    status: str
    output_file_id: str | None
    error_file_id: str | None
    counts_json: str | None
    downloaded: int

    @property
    def counts(self) -> dict[str, int]:
        return json.loads(self.counts_json) if self.counts_json else {}

    def public(self) -> JobStatus:
        return JobStatus(job=self.name, kind=self.kind, model=self.model, endpoint=self.endpoint,
                         requests=self.requests, bytes=self.bytes, input_file_id=self.input_file_id,
                         batch_id=self.batch_id, status=self.status, counts=self.counts,
                         downloaded=bool(self.downloaded))


class JobStatus(Model):
    """A job as ``batch-status --json`` lists it (no key, no local paths)."""

    job: str
    kind: str
    model: str
    endpoint: str
    requests: int
    bytes: int
    input_file_id: str | None
    batch_id: str | None
    status: str
    counts: dict[str, Any]  # the provider's request counts, as it sent them
    downloaded: bool


def read_jobs(cache: Any, **where: str) -> list[Job]:
    clause = " AND ".join(f"{k}=?" for k in where) or "1"
    rows = cache.execute(f"SELECT {', '.join(JOB_COLUMNS)} FROM batch_jobs WHERE {clause} ORDER BY created, name",
                         tuple(where.values()))
    return [Job(*row) for row in rows]


def request_line(custom_id: str, body: dict[str, Any]) -> bytes:
    return (json.dumps({"custom_id": custom_id, "method": "POST", "url": CHAT_URL, "body": body},
                       ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


class _SplitWriter:
    """One requests file being written: a hidden temp file (``fsutil``'s naming, so a killed run's
    leftovers are recognised as stale) renamed to ``path`` by ``finish``."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.tmp = path.with_name(f".{path.name}{TEMP_SUFFIX}")
        self.fh = self.tmp.open("wb")
        self.keys: list[str] = []
        self.size = 0

    def fits(self, n: int, limits: Limits) -> bool:
        return len(self.keys) < limits.max_requests and self.size + n <= limits.max_bytes

    def add(self, key: str, line: bytes) -> None:
        self.fh.write(line)
        self.keys.append(key)
        self.size += len(line)

    def finish(self) -> None:
        self.fh.flush()
        os.fsync(self.fh.fileno())
        self.fh.close()
        os.replace(self.tmp, self.path)


async def iter_capped_lines(chunks: Any, what: str, max_total: int):
    """Lines of a streamed body, each at most MAX_LINE_BYTES and all at most ``max_total`` bytes. Only
    the new chunk is searched for line ends, so a long line costs linear time."""
    pending: list[bytes] = []
    pending_len = total = 0
    async for chunk in chunks:
        total += len(chunk)
        if total > max_total:
            raise AssessorError(f"{what}: more than {max_total} bytes; refusing the rest")
        parts = chunk.split(b"\n")
        if len(parts) > 1:
            yield b"".join([*pending, parts[0]])
            for line in parts[1:-1]:
                yield line
            pending, pending_len = [parts[-1]], len(parts[-1])
        else:
            pending.append(chunk)
            pending_len += len(chunk)
        if pending_len > MAX_LINE_BYTES:
            raise AssessorError(f"{what}: a line longer than {MAX_LINE_BYTES} bytes")
    if pending_len:
        yield b"".join(pending)


def _rewound(fh: Any) -> Any:
    fh.seek(0)
    return fh


async def _file_chunks(fh: Any, size: int = 1 << 20):
    while chunk := fh.read(size):
        yield chunk


async def _slices(lines: Any, size: int = 500):
    part: list[bytes] = []
    async for line in lines:
        part.append(line)
        if len(part) >= size:
            yield part
            part = []
    if part:
        yield part


class _KeyName(Protocol):
    @property
    def api_key_env(self) -> str: ...


class BatchJudge(Protocol):
    """What the batch machinery needs of the assessor it works for (``assessors.llm.batch_replay.BatchAssessor``,
    given by the caller): the endpoint and the store, its clients and retry policy, the requests a paper still
    needs and the ones that came back unusable. Said here so this module depends on the endpoint stage only."""

    @property
    def endpoint(self) -> str: ...
    @property
    def model(self) -> str | None: ...
    @property
    def base_url(self) -> str: ...
    @property
    def config(self) -> _KeyName: ...
    @property
    def cache(self) -> Cache: ...
    @property
    def retry(self) -> RetryPolicy: ...
    @property
    def pending(self) -> dict[str, dict[str, Any]]: ...
    @property
    def retry_via(self) -> str: ...
    @property
    def _secrets(self) -> tuple[str, ...]: ...

    def error(self, message: str) -> AssessorError: ...
    def collect(self, paper: Paper) -> list[tuple[str, dict[str, Any]]]: ...
    def files_client(self, max_bytes: int, deadline: float) -> openai.AsyncOpenAI: ...
    def _client_for_loop(self) -> openai.AsyncOpenAI: ...


class BatchFlow:
    """One run's batch machinery over ``assessor`` (whose cache file holds the jobs and answers)."""

    def __init__(self, assessor: BatchJudge, *, limits: Limits | None = None,
                 say: Callable[[str], None] | None = None, files_dir: Path | None = None):
        self.assessor = assessor
        self.cache = assessor.cache
        self.limits = limits or Limits()
        self.say = say or (lambda text: None)
        self.files_dir = files_dir or self.cache.path.parent / "batch-files"
        self.uploaded_files = 0
        self._asked_cache: dict[str | None, set[str]] = {}
        self.timings: dict[str, float] = {}
        self._fresh: set[str] = set()  # jobs whose file this process uploaded

    # -- jobs ---------------------------------------------------------------------------------------

    def jobs(self, kind: str = "batch-api") -> list[Job]:
        return read_jobs(self.cache, kind=kind, endpoint=self.assessor.endpoint, model=self.assessor.model or "")

    def _update(self, job: Job, **fields: Any) -> None:
        fields["updated"] = time.time()
        for k, v in fields.items():
            setattr(job, k, v)
        sets = ", ".join(f"{k}=?" for k in fields)
        self.cache.execute(f"UPDATE batch_jobs SET {sets} WHERE name=?", (*fields.values(), job.name))

    def _add_job(self, kind: str, path: Path, keys: list[str], nbytes: int) -> Job:
        a = self.assessor
        now = time.time()
        job = Job(name=f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}", kind=kind, created=now,
                  updated=now, endpoint=a.endpoint, base_url=public_url(a.base_url), api_key_env=a.config.api_key_env,
                  model=a.model or "", path=str(path), requests=len(keys), bytes=nbytes, input_file_id=None,
                  batch_id=None, status="written", output_file_id=None, error_file_id=None, counts_json=None,
                  downloaded=0)
        self.cache.execute(f"INSERT INTO batch_jobs ({', '.join(JOB_COLUMNS)}) VALUES "
                           f"({', '.join('?' * len(JOB_COLUMNS))})", tuple(getattr(job, c) for c in JOB_COLUMNS))
        self.cache.execute("INSERT OR IGNORE INTO batch_requests (custom_id, job) VALUES (?, ?)",
                           [(k, job.name) for k in keys], many=True)
        return job

    def in_flight(self) -> set[str]:
        """Requests of batch jobs not yet downloaded: never submitted a second time."""
        rows = self.cache.execute(
            "SELECT r.custom_id FROM batch_requests r JOIN batch_jobs j ON j.name = r.job "
            "WHERE j.kind='batch-api' AND j.downloaded=0 AND j.endpoint=? AND j.model=?",
            (self.assessor.endpoint, self.assessor.model or ""))
        return {r[0] for r in rows}

    # -- collecting and writing requests -------------------------------------------------------------

    async def collect(self, paths: list[Path], jobs: int = 4, loader: Any = None) -> dict[str, dict[str, Any]]:
        """Every request the submissions under ``paths`` still need, keyed by custom_id (duplicates
        collapse), parsed with ``loader`` (a ParserPool; in this process when None). A submission that
        does not parse is skipped: scoring reports it."""
        from checklist_eval.challenge.batch import _parse_submission

        sem = asyncio.Semaphore(max(1, jobs))
        found: dict[str, dict[str, Any]] = {}

        async def one(path: Path) -> None:
            async with sem:
                try:
                    loaded = await asyncio.to_thread(_parse_submission, path, None, loader)
                except Exception:  # noqa: BLE001 - reported by the scoring pass, one line per submission
                    return
                for paper in loaded.papers.values():
                    found.update(self.assessor.collect(paper))

        await asyncio.gather(*(one(p) for p in paths))
        busy = self.in_flight()
        return {k: v for k, v in found.items() if k not in busy}

    def write_batch_files(self, requests: dict[str, dict[str, Any]]) -> list[Job]:
        """Request files within the provider's limits, each written line by line to a temp file and
        renamed when complete (memory: one line), then recorded as a job."""
        jobs: list[Job] = []
        writer: _SplitWriter | None = None
        for key, body in requests.items():  # collection order: a paper's questions stay together
            line = request_line(key, body)
            if len(line) > self.limits.max_bytes:
                raise self.assessor.error(f"one request is {len(line)} bytes, over the batch file limit of "
                                          f"{self.limits.max_bytes} bytes")
            if writer is not None and not writer.fits(len(line), self.limits):
                jobs.append(self._close(writer))
                writer = None
            if writer is None:
                writer = _SplitWriter(self.files_dir / f"requests-{uuid.uuid4().hex[:12]}.jsonl")
            writer.add(key, line)
        if writer is not None:
            jobs.append(self._close(writer))
        return jobs

    def _close(self, writer: _SplitWriter) -> Job:
        writer.finish()
        return self._add_job("batch-api", writer.path, writer.keys, writer.size)

    def write_requests_file(self, requests: dict[str, dict[str, Any]], path: Path) -> Job:
        """One requests file for an offline engine (no provider limits apply)."""
        data = b"".join(request_line(k, body) for k, body in requests.items())
        atomic_write_bytes(path, data)
        return self._add_job("jsonl", path.resolve(), list(requests), len(data))

    # -- the provider -------------------------------------------------------------------------------

    async def _call(self, what: str, fn: Callable[[], Awaitable[T]], shape: tuple[str, ...] = ()) -> T:
        """``fn()`` under the retry policy; a reply without the string fields ``shape`` names is the
        provider's garbage (retried as a garbled reply, then one line), never an AttributeError later."""
        a = self.assessor
        attempts = 0

        async def attempt() -> T:  # tenacity awaits only coroutine functions, not lambdas
            nonlocal attempts
            attempts += 1
            return _shaped(what, await fn(), shape)

        try:
            return await a.retry.run(attempt)
        except Exception as err:
            fatal = fatal_error(err, endpoint=a.endpoint, model=a.model, api_key_env=a.config.api_key_env,
                                secrets=a._secrets, attempts=attempts)
            raise AssessorError(f"batch {what}: {fatal}", endpoint=fatal.endpoint, model=fatal.model,
                                status=fatal.status, attempts=attempts) from None

    async def submit(self) -> None:
        """Upload and create every job of this endpoint and model that lacks a file or a batch."""
        client = self.assessor._client_for_loop()
        async with self.assessor.files_client(max_bytes=1 << 20, deadline=FILE_DEADLINE_S) as files:
            for job in self.jobs():
                # The lambdas below (B023) are awaited, retries included, before the loop moves on.
                if job.input_file_id is None:
                    with open(job.path, "rb") as fh:  # streamed by the SDK, rewound for each attempt
                        f = await self._call("upload", lambda: files.files.create(
                            file=(Path(job.path).name, _rewound(fh), "application/jsonl"),  # noqa: B023
                            purpose="batch"), shape=("id",))
                    self.uploaded_files += 1
                    self._fresh.add(job.name)
                    self._update(job, input_file_id=f.id, status="uploaded")
                    self.say(f"uploaded {job.requests} requests ({job.bytes} bytes) as {f.id}")
                if job.batch_id is None:
                    file_id = job.input_file_id
                    assert file_id is not None  # uploaded just above if it was not before
                    # A file uploaded by this process has no batch yet; one uploaded by a killed run may.
                    adopted = None if job.name in self._fresh else await self._adopt(job)
                    batch = adopted
                    if batch is None:
                        batch = await self._call("create", lambda: client.batches.create(
                            input_file_id=file_id, endpoint=CHAT_URL, completion_window="24h",  # noqa: B023
                            metadata={"checklist_eval_job": job.name}), shape=BATCH_SHAPE)  # noqa: B023
                    # A provider may report the batch finished in its create reply: its files count.
                    self._update(job, batch_id=batch.id, **_batch_state(batch))
                    self.say(f"batch {batch.id} created ({job.requests} requests)")

    async def _adopt(self, job: Job) -> Batch | None:
        """The batch a killed run created for ``job`` but did not record, if the provider lists it."""
        client = self.assessor._client_for_loop()
        try:
            page = await client.batches.list(limit=100)
            for batch in page.data:
                if ((batch.metadata or {}).get("checklist_eval_job") == job.name
                        and batch.input_file_id == job.input_file_id):
                    return _shaped("list", batch, BATCH_SHAPE)
        except Exception:  # noqa: BLE001 - listing is an optimisation (garbage included); creating is still correct
            return None
        return None

    async def refresh(self, job: Job) -> None:
        """One status read; a finished job is downloaded."""
        client = self.assessor._client_for_loop()
        batch_id = job.batch_id
        if batch_id and job.status not in TERMINAL:
            b = await self._call("status", lambda: client.batches.retrieve(batch_id), shape=BATCH_SHAPE)
            self._update(job, **_batch_state(b))
        if job.status in TERMINAL and not job.downloaded:
            await self.download(job)

    async def wait(self) -> None:
        """Poll every unfinished job with backoff until all are finished and downloaded."""
        delay, started, last = POLL_INITIAL_S, time.monotonic(), ""
        while True:
            pending = [j for j in self.jobs() if not j.downloaded and j.batch_id]
            if not pending:
                return
            for job in pending:
                await self.refresh(job)
            line = "; ".join(f"{j.batch_id}: {j.status} {j.counts.get('completed', 0)}/{j.requests}"
                             for j in pending)
            if line != last:
                self.say(line)
                last = line
            if all(j.downloaded for j in pending):
                continue
            if time.monotonic() - started > WAIT_LIMIT_S:
                raise self.assessor.error("batch jobs still unfinished after 25 h; see `checklist-eval batch-status`")
            await asyncio.sleep(delay)
            delay = min(POLL_MAX_S, delay * POLL_FACTOR)

    async def download(self, job: Job) -> None:
        """The output and error files into ``batch_answers``, streamed in slices (an output file with
        logprobs can be gigabytes): memory stays at one slice of lines."""
        counts = {"ok": 0, "error": 0}
        cap = ANSWER_BYTES_PER_REQUEST * job.requests + (64 << 20)
        async with self.assessor.files_client(max_bytes=cap, deadline=FILE_DEADLINE_S) as client:
            for file_id in (job.output_file_id, job.error_file_id):
                if not file_id:
                    continue

                async def fetch(fid: str = file_id) -> dict[str, int]:
                    got: dict[str, int] = {}
                    async with client.files.with_streaming_response.content(fid) as resp:
                        lines = iter_capped_lines(resp.iter_bytes(), f"batch file {fid}", cap)
                        async for part in _slices(lines):
                            for state, n in self.store_answers(job.name, part).items():
                                got[state] = got.get(state, 0) + n
                    return got

                for state, n in (await self._call("download", fetch)).items():
                    counts[state] = counts.get(state, 0) + n
        self._update(job, downloaded=1)
        self.say(f"batch {job.batch_id} {job.status}: {counts['ok']} answers, {counts['error']} failed")

    def _asked(self, job_name: str | None) -> set[str]:
        if job_name not in self._asked_cache:
            rows = self.cache.execute("SELECT custom_id FROM batch_requests" + (" WHERE job=?" if job_name else ""),
                                      (job_name,) if job_name else ())
            self._asked_cache = {job_name: {r[0] for r in rows}}
        return self._asked_cache[job_name]

    def store_answers(self, job_name: str | None, lines: list[bytes]) -> dict[str, int]:
        """Answer lines into ``batch_answers``; only custom_ids this cache asked for are kept (of
        ``job_name``'s requests, or of any job when None). A usable answer is never replaced by a
        failed one."""
        asked = self._asked(job_name)
        counts = {"ok": 0, "error": 0, "unknown": 0, "unreadable": 0}
        out = []
        now = time.time()
        for raw in lines:
            if not raw.strip():
                continue
            try:
                line = loads_json(raw)
                cid = line["custom_id"]
            except (ValueError, KeyError, TypeError):
                counts["unreadable"] += 1
                continue
            if not isinstance(cid, str) or cid not in asked:
                counts["unknown"] += 1
                continue
            state, status, body, error = answer_state(line)
            counts[state] += 1
            out.append((cid, job_name or "ingest", now, state, status,
                        json.dumps(body) if body is not None else None, error))
        self.cache.execute(
            """INSERT INTO batch_answers (custom_id, job, created, state, status_code, body_json, error)
               VALUES (?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT(custom_id) DO UPDATE SET job=excluded.job, created=excluded.created,
                   state=excluded.state, status_code=excluded.status_code, body_json=excluded.body_json,
                   error=excluded.error
               WHERE batch_answers.state != 'ok' OR excluded.state = 'ok'""", out, many=True)
        return counts

    async def read_responses(self, path: Path) -> dict[str, int]:
        """A results JSONL (OpenAI batch output format, as vLLM's run_batch writes it) into the answers,
        streamed in slices."""
        asked = self.cache.execute("SELECT COUNT(*) FROM batch_requests")[0][0]
        cap = ANSWER_BYTES_PER_REQUEST * asked + (64 << 20)
        counts = {"ok": 0, "error": 0, "unknown": 0, "unreadable": 0}
        try:
            if not path.is_file():
                raise InputError(path, "responses file not found (or not a regular file)")
            with path.open("rb") as fh:
                lines = iter_capped_lines(_file_chunks(fh), str(path), cap)
                async for part in _slices(lines):
                    for state, n in self.store_answers(None, part).items():
                        counts[state] += n
        except OSError as err:
            raise InputError(path, f"cannot read responses file ({err.strerror})") from None
        except AssessorError as err:
            raise InputError(path, str(err).removeprefix(f"{path}: ")) from None
        if counts["ok"] + counts["error"] == 0:
            raise InputError(path, "no line answers a request of this run (wrong file, or not the OpenAI "
                                   "batch output format {custom_id, response: {status_code, body}})")
        return counts


async def run_rounds(flow: BatchFlow, paths: list[Path], replay: Callable[[], Awaitable[T]], *,
                     submit_only: bool = False, jobs: int = 4, loader: Any = None,
                     submit_new: bool = True) -> T | None:
    """Collect, submit, wait, score; again for what came back unusable (``--retry-via batch-api``).
    ``submit_new`` False: only the jobs already recorded are finished and used (an online run resuming
    a batch-api folder). ``flow.timings`` gets the seconds spent in each stage."""
    assessor = flow.assessor
    clock = _Stopwatch(flow.timings)
    with clock("collect_s"):
        requests = await flow.collect(paths, jobs, loader) if submit_new else {}
    result: T | None = None
    for round_no in range(1, MAX_ROUNDS + 1):
        with clock("submit_s"):
            if requests:
                written = flow.write_batch_files(requests)
                flow.say(f"round {round_no}: {len(requests)} requests in {len(written)} file(s)")
            await flow.submit()
        if submit_only:
            return None
        with clock("wait_s"):
            await flow.wait()
        assessor.pending.clear()
        with clock("score_s"):
            result = await replay()
        if not assessor.pending or assessor.retry_via != "batch-api":
            return result
        busy = flow.in_flight()
        requests = {k: v for k, v in assessor.pending.items() if k not in busy}
        if round_no < MAX_ROUNDS:
            flow.say(f"{len(requests)} requests failed or came back unusable: follow-up batch")
    return result


BATCH_SHAPE = ("id", "status")


def _shaped(what: str, reply: T, fields: tuple[str, ...]) -> T:
    for name in fields:
        value = getattr(reply, name, None)
        if not isinstance(value, str) or not value:
            raise MalformedResponse(f"the {what} reply is not a file or batch object (no {name!r} text)")
    return reply


def _file_id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _batch_state(b: Batch) -> dict[str, Any]:
    """What a batch object says of its progress, as ``batch_jobs`` keeps it (ids that are not text, or
    counts that are not an object, are taken as absent)."""
    given: Any = getattr(b, "request_counts", None)
    counts = given.model_dump() if hasattr(given, "model_dump") else given if isinstance(given, dict) else {}
    return {"status": b.status, "output_file_id": _file_id(getattr(b, "output_file_id", None)),
            "error_file_id": _file_id(getattr(b, "error_file_id", None)), "counts_json": json.dumps(counts)}


class _Stopwatch:
    def __init__(self, into: dict[str, float]):
        self.into = into

    @contextlib.contextmanager
    def __call__(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.into[name] = self.into.get(name, 0.0) + time.perf_counter() - t0
