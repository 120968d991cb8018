"""``/v1/files`` and ``/v1/batches`` for the loopback server (``checklist_eval.testing.MockServer``), so
the batch path is tested over real HTTP with the real ``openai`` client.

    server.batches.delay = 1.0          # seconds from create to completion (deterministic)
    server.batches.failure_rate = 0.1   # share of lines answered 500 (drawn from batch id + custom_id)
    server.batches.expire = 1           # the first N batches run out of time (True: all of them):
                                        # half their lines done, the rest expired
    server.batches.fault = "garbage"    # a misbehaving provider, one of FAULTS:
        complete-at-create   the batch is run when created: the create reply says completed, with files
        garbage              every /v1/batches reply is a JSON array, not a batch object
        huge-usage           every answer's usage claims 1e300 prompt and completion tokens

Endpoints: ``POST /v1/files`` (multipart, purpose ``batch``), ``GET /v1/files/{id}``,
``GET /v1/files/{id}/content``; ``POST /v1/batches``, ``GET /v1/batches``, ``GET /v1/batches/{id}``,
``POST /v1/batches/{id}/cancel``. A batch moves on when it is retrieved (or cancelled): the first
retrieve after ``delay`` runs its lines, in the server's thread, as a provider's workers would. The input file
is checked the way the provider documents it (JSON
lines, unique ``custom_id``, ``POST`` to the batch's endpoint, one model per file, at most
``max_requests`` lines and ``max_file_bytes`` bytes); a bad file makes a ``failed`` batch with
``errors``. Each line is answered by the server's own chat reply generator, so a batch verdict equals
the online verdict for the same body. Output lines have the provider's shape:
``{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}``.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from email.message import Message
from typing import Any, Protocol

from checklist_eval.testing.replies import Reply, json_reply

__all__ = ["BatchService", "FAULTS"]

FAULTS = ("complete-at-create", "garbage", "huge-usage")

MAX_REQUESTS = 50_000
MAX_FILE_BYTES = 200 * 1024 * 1024
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass
class _File:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def public(self) -> dict[str, Any]:
        return {"id": self.id, "object": "file", "bytes": len(self.data), "created_at": self.created_at,
                "filename": self.filename, "purpose": self.purpose, "status": "processed"}


@dataclass
class _Batch:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, Any] | None
    created: float
    lines: list[dict[str, Any]] = field(default_factory=list)
    status: str = "in_progress"
    errors: list[dict[str, Any]] | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0
    ended: float | None = None
    seq: int = 0


def _multipart_fields(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]] | None:
    """name -> (filename, bytes) of a multipart/form-data body. Split on the boundary with bytes.find
    (the email parser takes minutes on a 200 MB upload); each part's headers go to the email module."""
    header = Message()
    header["content-type"] = content_type
    boundary = header.get_param("boundary")
    if header.get_content_type() != "multipart/form-data" or not isinstance(boundary, str):
        return None
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in body.split(b"--" + boundary.encode("latin-1"))[1:]:
        if part.startswith(b"--"):  # the closing delimiter
            break
        head, sep, data = part.partition(b"\r\n\r\n")
        if not sep:
            continue
        disposition = Message()
        for line in head.decode("latin-1").strip().split("\r\n"):
            name, _, value = line.partition(":")
            disposition[name.strip()] = value.strip()
        field = disposition.get_param("name", header="content-disposition")
        if isinstance(field, str):
            filename = disposition.get_param("filename", header="content-disposition")
            fields[field] = (filename if isinstance(filename, str) else None, data.removesuffix(b"\r\n"))
    return fields


class BatchHost(Protocol):
    """What the batch service needs of the server it runs in: its seed, its status counter and its
    chat endpoint (a batch line is answered as the same request sent online would be)."""

    seed: int

    def _count(self, status: int, fault: str | None = None) -> None: ...

    def answer_batch_line(self, body: bytes) -> Reply: ...


class BatchService:
    def __init__(self, server: BatchHost):
        self.server = server
        self.delay = 0.0
        self.failure_rate = 0.0
        self.expire: bool | int = False
        self.fault: str | None = None  # one of FAULTS
        self.max_requests = MAX_REQUESTS
        self.max_file_bytes = MAX_FILE_BYTES
        self.files: dict[str, _File] = {}
        self.batches: dict[str, _Batch] = {}
        self.uploads = 0
        self._lock = threading.RLock()  # _finish stores files while holding it
        self._n = 0

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            self._n += 1
            return f"{prefix}-mock{self._n:06d}"

    # -- dispatch -----------------------------------------------------------------------------------

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Reply | None:
        """The reply for a files/batches route, or None when ``path`` is not one of them."""
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["v1"]:
            parts = parts[1:]
        if not parts or parts[0] not in ("files", "batches"):
            return None
        if parts[0] == "batches" and self.fault == "garbage":
            return self._reply(200, ["not", {"a": "batch"}, 3])
        if parts[0] == "files":
            if method == "POST" and len(parts) == 1:
                return self._upload(headers.get("content-type", ""), body)
            if method == "GET" and len(parts) in (2, 3):
                return self._file(parts[1], content=len(parts) == 3 and parts[2] == "content")
        else:
            if method == "POST" and len(parts) == 1:
                return self._create(body)
            if method == "GET" and len(parts) == 1:
                return self._list()
            if method == "GET" and len(parts) == 2:
                return self._retrieve(parts[1])
            if method == "POST" and len(parts) == 3 and parts[2] == "cancel":
                return self._cancel(parts[1])
        return self._error(404, f"no route {method} {path}")

    def _reply(self, status: int, obj: Any) -> Reply:
        self.server._count(status)
        return json_reply(status, obj)

    def _error(self, status: int, message: str) -> Reply:
        return self._reply(status, {"error": {"message": message, "type": "invalid_request_error",
                                              "param": None, "code": None}})

    # -- files --------------------------------------------------------------------------------------

    def _upload(self, content_type: str, body: bytes) -> Reply:
        if len(body) > self.max_file_bytes + 65536:
            return self._error(413, f"file exceeds {self.max_file_bytes} bytes")
        fields = _multipart_fields(content_type, body)
        if fields is None:
            return self._error(400, "expected multipart/form-data")
        if "file" not in fields:
            return self._error(400, "missing 'file'")
        purpose = fields.get("purpose", (None, b""))[1].decode("utf-8", "replace")
        if purpose != "batch":
            return self._error(400, f"purpose {purpose!r} is not supported here (use 'batch')")
        filename, data = fields["file"]
        if len(data) > self.max_file_bytes:
            return self._error(400, f"file exceeds {self.max_file_bytes} bytes")
        f = _File(self._new_id("file"), filename or "upload.jsonl", purpose, data, int(time.time()))
        with self._lock:
            self.files[f.id] = f
            self.uploads += 1
        return self._reply(200, f.public())

    def _file(self, file_id: str, *, content: bool) -> Reply:
        f = self.files.get(file_id)
        if f is None:
            return self._error(404, f"no file {file_id}")
        if not content:
            return self._reply(200, f.public())
        self.server._count(200)
        return Reply(200, f.data)

    def _store_file(self, lines: list[dict[str, Any]], purpose: str) -> str | None:
        if not lines:
            return None
        data = "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")
        f = _File(self._new_id("file"), f"{purpose}.jsonl", purpose, data, int(time.time()))
        with self._lock:
            self.files[f.id] = f
        return f.id

    # -- batches ------------------------------------------------------------------------------------

    def _create(self, body: bytes) -> Reply:
        try:
            req = json.loads(body)
            input_file_id, endpoint = req["input_file_id"], req["endpoint"]
        except (ValueError, KeyError, TypeError):
            return self._error(400, "input_file_id and endpoint are required")
        if req.get("completion_window") != "24h":
            return self._error(400, "completion_window must be '24h'")
        f = self.files.get(input_file_id)
        if f is None:
            return self._error(404, f"no file {input_file_id}")
        batch = _Batch(self._new_id("batch"), input_file_id, endpoint, "24h", req.get("metadata"), time.time(),
                       seq=len(self.batches) + 1)
        batch.lines, errors = self._validate(f.data, endpoint)
        if errors:
            batch.status, batch.errors, batch.ended = "failed", errors, time.time()
        with self._lock:
            self.batches[batch.id] = batch
            if self.fault == "complete-at-create" and not errors:
                self._finish(batch, "completed", answered=len(batch.lines))
        return self._reply(200, self._public(batch))

    def _validate(self, data: bytes, endpoint: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        lines: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        seen: set[str] = set()
        models: set[str] = set()
        for n, raw in enumerate(data.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
                cid, url, body = line["custom_id"], line["url"], line["body"]
            except (ValueError, KeyError, TypeError):
                errors.append({"code": "invalid_json_line", "message": "not a request line", "line": n})
                continue
            if cid in seen:
                errors.append({"code": "duplicate_custom_id", "message": f"duplicate custom_id {cid}", "line": n})
            if line.get("method") != "POST" or url != endpoint:
                errors.append({"code": "invalid_url", "message": f"url must be {endpoint}", "line": n})
            seen.add(cid)
            models.add(str(body.get("model")))
            lines.append(line)
        if len(models) > 1:
            errors.append({"code": "mixed_models", "message": "one model per batch file", "line": None})
        if len(lines) > self.max_requests:
            errors.append({"code": "too_many_requests", "message": f"at most {self.max_requests} requests",
                           "line": None})
        if not lines and not errors:
            errors.append({"code": "empty_file", "message": "the input file holds no requests", "line": None})
        return lines, errors

    def _list(self) -> Reply:
        with self._lock:  # the recorded state: only retrieving a batch moves it on (and runs its lines)
            batches = sorted(self.batches.values(), key=lambda b: b.created, reverse=True)
        data = [self._public(b) for b in batches]
        return self._reply(200, {"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
                                 "last_id": data[-1]["id"] if data else None, "has_more": False})

    def _retrieve(self, batch_id: str) -> Reply:
        batch = self.batches.get(batch_id)
        if batch is None:
            return self._error(404, f"no batch {batch_id}")
        self._advance(batch)
        return self._reply(200, self._public(batch))

    def _cancel(self, batch_id: str) -> Reply:
        batch = self.batches.get(batch_id)
        if batch is None:
            return self._error(404, f"no batch {batch_id}")
        self._advance(batch)
        if batch.status not in TERMINAL:
            batch.status = "cancelling"
        return self._reply(200, self._public(batch))

    def _advance(self, batch: _Batch) -> None:
        """Move a batch on by the clock: done ``delay`` seconds after creation (deterministic)."""
        with self._lock:
            if batch.status in TERMINAL:
                return
            if batch.status == "cancelling":
                self._finish(batch, "cancelled", answered=0)
            elif time.time() - batch.created >= self.delay:
                if self.expire is True or (self.expire and batch.seq <= int(self.expire)):
                    self._finish(batch, "expired", answered=len(batch.lines) // 2)
                else:
                    self._finish(batch, "completed", answered=len(batch.lines))

    def _finish(self, batch: _Batch, status: str, answered: int) -> None:
        out: list[dict[str, Any]] = []
        err: list[dict[str, Any]] = []
        for k, line in enumerate(batch.lines):
            rid = f"batch_req_{batch.id}_{k}"
            if k >= answered:
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                err.append({"id": rid, "custom_id": line["custom_id"], "response": None,
                            "error": {"code": code, "message": "not executed before the batch ended"}})
                continue
            status_code, body = self._answer(batch.id, line)
            entry = {"id": rid, "custom_id": line["custom_id"], "error": None,
                     "response": {"status_code": status_code, "request_id": f"req_{rid}", "body": body}}
            (out if status_code == 200 else err).append(entry)
        batch.completed, batch.failed = len(out), len(err)
        batch.output_file_id = self._store_file(out, "batch_output")
        batch.error_file_id = self._store_file(err, "batch_error")
        batch.status, batch.ended = status, time.time()

    def _answer(self, batch_id: str, line: dict[str, Any]) -> tuple[int, Any]:
        cid = str(line["custom_id"])
        if self.failure_rate > 0:
            draw = f"{self.server.seed}:{batch_id}:{cid}".encode()
            u = int.from_bytes(hashlib.sha256(draw).digest()[:8], "big") / 2**64
            if u < self.failure_rate:
                self.server._count(500, "batch")
                return 500, {"error": {"message": "The server had an error processing this request (injected).",
                                       "type": "server_error", "param": None, "code": None}}
        reply = self.server.answer_batch_line(json.dumps(line["body"]).encode("utf-8"))
        try:
            body = json.loads(reply.body)
            if self.fault == "huge-usage" and isinstance(body, dict):
                body["usage"] = {"prompt_tokens": 1e300, "completion_tokens": 1e300, "total_tokens": 2e300}
            return (reply.status or 500), body
        except ValueError:  # an injected transport fault: the provider reports it as a server error
            return 500, {"error": {"message": "upstream reply was not JSON", "type": "server_error",
                                   "param": None, "code": None}}

    def _public(self, b: _Batch) -> dict[str, Any]:
        total = len(b.lines)
        done = b.status in TERMINAL
        if not done and self.delay > 0:  # a plausible running count for progress displays
            share = min(1.0, (time.time() - b.created) / self.delay)
            completed = int(total * share * 0.9)
        else:
            completed = b.completed
        ended = int(b.ended) if b.ended else None
        return {
            "id": b.id, "object": "batch", "endpoint": b.endpoint, "input_file_id": b.input_file_id,
            "completion_window": b.completion_window, "status": b.status,
            "errors": {"object": "list", "data": b.errors} if b.errors else None,
            "output_file_id": b.output_file_id, "error_file_id": b.error_file_id,
            "created_at": int(b.created), "in_progress_at": int(b.created), "expires_at": int(b.created) + 86400,
            "finalizing_at": ended if b.status == "completed" else None,
            "completed_at": ended if b.status == "completed" else None,
            "failed_at": ended if b.status == "failed" else None,
            "expired_at": ended if b.status == "expired" else None,
            "cancelling_at": None, "cancelled_at": ended if b.status == "cancelled" else None,
            "request_counts": {"total": total, "completed": completed, "failed": b.failed if done else 0},
            "metadata": b.metadata,
        }
