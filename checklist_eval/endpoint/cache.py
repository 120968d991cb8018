"""The response cache: one SQLite file (WAL), safe for several processes and threads at once.

Key = sha256 of what changes the answer: endpoint identity (host + path of the base URL, never the
key), model, the prompt (the paper prefix by its sha256, hashed once per paper, plus the question
message), sampling parameters (temperature, max_tokens, seed), structured-output strategy and prompt
version. Transport knobs (timeout, concurrency, attempts), what the endpoint taught the run (logprobs
refused, the max-tokens parameter's name) and anything secret are not in the key; the stored row holds
the parsed verdict and the usage of the call that produced it. Every reply is also kept as received in
the call log (``calls``, see ``calllog``) for ``checklist-eval logs``, and what each (endpoint, model)
refused in ``capabilities`` (``endpoint.capabilities``), so a later run starts from what works.

Schema changes are named migrations applied once each and recorded in ``_migrations`` (the style of
simonw/llm), so an old cache file upgrades in place.

Concurrency: WAL lets readers run beside one writer; ``busy_timeout`` makes a second writer wait
instead of failing; writes are single short ``INSERT ... ON CONFLICT`` statements in autocommit mode.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from checklist_eval import redact
from checklist_eval.endpoint.cachefile import open_cache_db
from checklist_eval.endpoint.calllog import CURRENT_PAPER, CallLog
from checklist_eval.endpoint.identity import endpoint_identity
from checklist_eval.fsutil import apply_migrations

__all__ = ["Cache", "CacheMode", "CachedVerdict", "cache_key", "digest_messages", "endpoint_identity",
           "MIGRATIONS"]

KEY_VERSION = 2  # bump when the key's format or the meaning of a cached row changes (2: prefix digest)


class CacheMode:
    USE = "use"          # read hits, write misses
    REFRESH = "refresh"  # ignore hits, overwrite with fresh answers
    OFF = "off"          # neither read nor write


# The request parameters that change the answer (an unset one is left out, so older keys stay valid).
ANSWER_PARAMS = ("temperature", "max_tokens", "seed", "reasoning_effort")


def digest_messages(messages: list[dict[str, Any]]) -> str:
    """sha256 of the messages every question of a paper shares (computed once per paper)."""
    blob = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def cache_key(*, endpoint: str, model: str, params: dict[str, Any], strategy: str, prompt_version: str,
              messages: list[dict[str, Any]] | None = None, prefix_digest: str | None = None,
              question: str | None = None, schema: str | None = None) -> str:
    """The key of one request. The prompt is given either whole (``messages``, e.g. read back from a
    request body) or as ``prefix_digest`` (of all messages but the last) plus ``question`` (the last
    message's content): both give the same key. Of ``params`` only ``ANSWER_PARAMS`` count, with
    ``max_completion_tokens`` read as ``max_tokens`` (the same budget under another name). A ``json_schema``
    request names the digest of the schema it sends (``schema``): the cache knows no schema of its own."""
    if messages is not None:
        prefix_digest, question = digest_messages(messages[:-1]), str(messages[-1].get("content", ""))
    if prefix_digest is None or question is None:
        raise TypeError("cache_key needs messages, or prefix_digest and question")
    budget = params.get("max_tokens", params.get("max_completion_tokens"))
    answer_params = {k: v for k, v in (params | {"max_tokens": budget}).items()
                     if k in ANSWER_PARAMS and v is not None}
    fields = {"v": KEY_VERSION, "endpoint": endpoint, "model": model, "prefix": prefix_digest, "question": question,
              "params": answer_params, "strategy": strategy, "prompt_version": prompt_version}
    if strategy == "json_schema":  # the schema constrains the answer as much as the prompt does
        if schema is None:
            raise TypeError("cache_key of a json_schema request needs the schema's digest")
        fields["schema"] = schema
    blob = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class CachedVerdict:
    verdict: dict[str, Any]
    usage: dict[str, Any]
    strategy: str
    model: str
    created: float


def _m001_responses(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE IF NOT EXISTS responses (
            key TEXT PRIMARY KEY,
            created REAL NOT NULL,
            endpoint TEXT NOT NULL,
            model TEXT NOT NULL,
            prompt_version TEXT NOT NULL,
            strategy TEXT NOT NULL,
            verdict_json TEXT NOT NULL,
            usage_json TEXT NOT NULL
        )"""
    )


def _m002_model_index(db: sqlite3.Connection) -> None:
    # Lets a user prune one model's or one prompt version's answers without a full scan.
    db.execute("CREATE INDEX IF NOT EXISTS responses_model ON responses (model, prompt_version)")


def _m003_batch_jobs(db: sqlite3.Connection) -> None:
    # Provider batch jobs and their answers (checklist_eval.challenge.batch_api): every id a run needs to resume
    # after a kill, beside the verdicts those answers become.
    db.execute(
        """CREATE TABLE IF NOT EXISTS batch_jobs (
            name TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            created REAL NOT NULL,
            updated REAL NOT NULL,
            endpoint TEXT NOT NULL,
            base_url TEXT,
            api_key_env TEXT NOT NULL,
            model TEXT NOT NULL,
            path TEXT NOT NULL,
            requests INTEGER NOT NULL,
            bytes INTEGER NOT NULL,
            input_file_id TEXT,
            batch_id TEXT,
            status TEXT NOT NULL,
            output_file_id TEXT,
            error_file_id TEXT,
            counts_json TEXT,
            downloaded INTEGER NOT NULL DEFAULT 0
        )"""
    )
    db.execute("CREATE TABLE IF NOT EXISTS batch_requests (custom_id TEXT NOT NULL, job TEXT NOT NULL, "
               "PRIMARY KEY (custom_id, job))")
    db.execute(
        """CREATE TABLE IF NOT EXISTS batch_answers (
            custom_id TEXT PRIMARY KEY,
            job TEXT NOT NULL,
            created REAL NOT NULL,
            state TEXT NOT NULL,
            status_code INTEGER,
            body_json TEXT,
            error TEXT
        )"""
    )
def _m004_call_log(db: sqlite3.Connection) -> None:
    # Every reply as received, for ``checklist-eval logs`` (see ``calllog``); the paper-sized shared
    # prompt is stored once per digest, not once per question.
    db.execute(
        """CREATE TABLE IF NOT EXISTS calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created REAL NOT NULL,
            key TEXT,
            submission_id TEXT NOT NULL DEFAULT '',
            role TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT '',
            question_id TEXT NOT NULL DEFAULT '',
            endpoint TEXT NOT NULL,
            model TEXT NOT NULL,
            prompt_version TEXT NOT NULL,
            strategy TEXT NOT NULL,
            params_json TEXT NOT NULL,
            prefix_digest TEXT NOT NULL,
            question TEXT NOT NULL,
            response_json TEXT NOT NULL,
            outcome TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX IF NOT EXISTS calls_submission ON calls (submission_id, question_id)")
    db.execute("CREATE INDEX IF NOT EXISTS calls_key ON calls (key)")
    db.execute("CREATE TABLE IF NOT EXISTS prompts (digest TEXT PRIMARY KEY, messages_json TEXT NOT NULL)")


def _m005_capabilities(db: sqlite3.Connection) -> None:
    # What each (endpoint, model) was found to refuse (``capabilities.EndpointQuirks.remembered``): the next run
    # starts from what works instead of meeting every refusal again.
    db.execute("CREATE TABLE IF NOT EXISTS capabilities (endpoint TEXT NOT NULL, model TEXT NOT NULL, "
               "updated REAL NOT NULL, quirks_json TEXT NOT NULL, PRIMARY KEY (endpoint, model))")


MIGRATIONS: list[tuple[str, Callable[[sqlite3.Connection], None]]] = [
    ("m001_responses", _m001_responses),
    ("m002_model_index", _m002_model_index),
    ("m003_batch_jobs", _m003_batch_jobs),
    ("m004_call_log", _m004_call_log),
    ("m005_capabilities", _m005_capabilities),
]


class Cache:
    """``get``/``put`` of parsed verdicts. One connection per instance, guarded for threads."""

    def __init__(self, path: str | Path, mode: str = CacheMode.USE, busy_timeout_s: float = 30.0):
        self.path = Path(path).expanduser()
        self.mode = mode
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._busy_ms = int(busy_timeout_s * 1000)
        if mode != CacheMode.OFF:
            self._open()

    def _open(self) -> None:
        db = open_cache_db(self.path, busy_s=self._busy_ms / 1000)
        db.execute(f"PRAGMA busy_timeout={self._busy_ms}")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable at checkpoints, fast commits
        apply_migrations(db, MIGRATIONS)
        self._db = db

    @property
    def reads(self) -> bool:
        return self.mode == CacheMode.USE

    @property
    def writes(self) -> bool:
        return self.mode in (CacheMode.USE, CacheMode.REFRESH)

    def applied_migrations(self) -> list[str]:
        if self._db is None:
            return []
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT name FROM _migrations ORDER BY name")]

    def get(self, key: str) -> CachedVerdict | None:
        if not self.reads or self._db is None:
            return None
        with self._lock:
            row = self._db.execute(
                "SELECT verdict_json, usage_json, strategy, model, created FROM responses WHERE key=?", (key,)
            ).fetchone()
        if row is None:
            return None
        return CachedVerdict(json.loads(row[0]), json.loads(row[1]), row[2], row[3], row[4])

    def put(self, key: str, *, endpoint: str, model: str, prompt_version: str, strategy: str,
            verdict: dict[str, Any], usage: dict[str, Any], call: CallLog | None = None) -> None:
        """Store a verdict, and the reply it came from when ``call`` is given."""
        self._write(key, endpoint=endpoint, model=model, prompt_version=prompt_version, strategy=strategy,
                    verdict=verdict, usage=usage, call=call)

    def log_call(self, call: CallLog, *, endpoint: str, model: str, prompt_version: str, strategy: str,
                 key: str | None = None) -> None:
        """Store a reply that gave no verdict (it is evidence too), or, with ``key``, a verdict reused
        from the reply stored under that key."""
        self._write(key, endpoint=endpoint, model=model, prompt_version=prompt_version, strategy=strategy,
                    call=call)

    def _write(self, key: str | None, *, endpoint: str, model: str, prompt_version: str, strategy: str,
               verdict: dict[str, Any] | None = None, usage: dict[str, Any] | None = None,
               call: CallLog | None = None) -> None:
        """The one place anything reaches the file: data from the endpoint passes here and only here."""
        if not self.writes or self._db is None:
            return
        with self._lock:
            if call is not None:
                self._insert_call(key, call, endpoint, model, prompt_version, strategy)
            if key is None or verdict is None:
                return
            self._db.execute(
                """INSERT INTO responses (key, created, endpoint, model, prompt_version, strategy,
                                          verdict_json, usage_json)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT(key) DO UPDATE SET created=excluded.created,
                       verdict_json=excluded.verdict_json, usage_json=excluded.usage_json,
                       strategy=excluded.strategy""",
                (key, time.time(), endpoint, model, prompt_version, strategy,
                 redact.redact(json.dumps(verdict, ensure_ascii=False)), json.dumps(usage)),
            )

    def execute(self, sql: str, params: tuple[Any, ...] | list[tuple[Any, ...]] = (), *,
                many: bool = False) -> list[tuple[Any, ...]]:
        """One statement (or ``executemany`` in one transaction) on the cache's connection, for the
        tables other modules own (the batch-job tables); the fetched rows."""
        if self._db is None:
            raise RuntimeError("the cache is off")
        with self._lock:
            if not many:
                return self._db.execute(sql, params).fetchall()
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(sql, params)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            return []
    def _insert_call(self, key: str | None, call: CallLog, endpoint: str, model: str, prompt_version: str,
                     strategy: str) -> None:
        assert self._db is not None
        submission_id, role = CURRENT_PAPER.get()
        self._db.execute("INSERT OR IGNORE INTO prompts (digest, messages_json) VALUES (?, ?)",
                         (call.prefix_digest, json.dumps(call.prefix_messages, ensure_ascii=False)))
        self._db.execute(
            """INSERT INTO calls (created, key, submission_id, role, source, question_id, endpoint, model,
                                  prompt_version, strategy, params_json, prefix_digest, question,
                                  response_json, outcome)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (time.time(), key, submission_id, role, call.source, call.question_id, endpoint, model,
             prompt_version, strategy, json.dumps(call.params, ensure_ascii=False), call.prefix_digest,
             call.question, call.response_text(), call.outcome),
        )

    def capabilities(self, endpoint: str, model: str) -> Any:
        """What an earlier run learned about (endpoint, model), as it stored it (None: nothing). Read in
        refresh mode too: it is about the endpoint, not an answer."""
        if self._db is None:
            return None
        with self._lock:
            row = self._db.execute("SELECT quirks_json FROM capabilities WHERE endpoint=? AND model=?",
                                   (endpoint, model)).fetchone()
        try:
            return json.loads(row[0]) if row else None
        except ValueError:  # a damaged row is forgotten, not fatal: the endpoint teaches it again
            return None

    def remember_capabilities(self, endpoint: str, model: str, quirks: dict[str, Any]) -> None:
        if not self.writes or self._db is None:
            return
        with self._lock:
            self._db.execute("INSERT INTO capabilities (endpoint, model, updated, quirks_json) VALUES (?, ?, ?, ?) "
                             "ON CONFLICT(endpoint, model) DO UPDATE SET updated=excluded.updated, "
                             "quirks_json=excluded.quirks_json",
                             (endpoint, model, time.time(), redact.redact(json.dumps(quirks, ensure_ascii=False))))

    def count(self) -> int:
        if self._db is None:
            return 0
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
