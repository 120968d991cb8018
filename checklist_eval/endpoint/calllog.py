"""The call log: what every model call was asked and what it answered, kept in the cache file.

Each reply the endpoint sent (usable or not) is one row of ``calls``; the shared part of the prompt
(system + paper + checklist, identical for every question of a paper) is stored once in ``prompts``
under its digest. ``checklist-eval logs`` reads them back, so an appeal about one verdict can be
decided from the exact request and reply. Writing is ``Cache``'s job (one write path); this module
names what a row holds and reads rows back.

Which submission a call belongs to is carried by a context variable set by the scorer around each
paper, so the assessor interface does not change and concurrent submissions never mix.
"""

from __future__ import annotations

import contextvars
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checklist_eval.endpoint.cachefile import open_cache_db
from checklist_eval.errors import InputError

__all__ = ["CallLog", "CURRENT_PAPER", "MAX_RESPONSE_CHARS", "read_calls", "prompt_messages", "reply_content"]

# (submission_id, role) of the paper being assessed; ("", "") outside a submission (``check``).
CURRENT_PAPER: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar(
    "checklist_eval_current_paper", default=("", ""))

MAX_RESPONSE_CHARS = 256 * 1024  # a hostile endpoint cannot grow the cache without bound


@dataclass
class CallLog:
    """One reply of the endpoint, as stored."""

    source: str
    question_id: str
    prefix_digest: str
    prefix_messages: list[dict[str, str]]
    question: str
    params: dict[str, Any]
    response: Any
    outcome: str  # "verdict", "unusable: <why>", or "reused" (the verdict of the reply stored under the key)

    def response_text(self) -> str:
        text = json.dumps(self.response, ensure_ascii=False)
        if len(text) > MAX_RESPONSE_CHARS:
            text = json.dumps({"truncated": True, "head": text[:MAX_RESPONSE_CHARS]})
        return text


def _connect(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise InputError(path, "no cache file here (give --cache FILE or a batch results folder)")
    db = open_cache_db(path, read_only=True, busy_s=10)
    try:
        db.execute("SELECT 1 FROM calls LIMIT 1")
    except sqlite3.DatabaseError as err:
        raise InputError(path, f"not a checklist-eval cache with a call log ({err})") from None
    return db


def read_calls(path: str | Path, *, submission: str | None = None, question: str | None = None,
               limit: int = 50) -> list[dict[str, Any]]:
    """The newest ``limit`` calls, oldest first, optionally of one submission and/or question."""
    where, args = [], []
    if submission is not None:
        where.append("submission_id = ?")
        args.append(submission)
    if question is not None:
        where.append("question_id = ?")
        args.append(question)
    sql = ("SELECT id, created, submission_id, role, source, question_id, endpoint, model, prompt_version, "
           "strategy, params_json, prefix_digest, question, response_json, outcome FROM calls"
           + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id DESC LIMIT ?")
    db = _connect(Path(path))
    try:
        rows = [list(r) for r in db.execute(sql, (*args, max(1, limit))).fetchall()]
        for row in rows:
            if row[14] == "reused":
                row[13], row[14] = _original_reply(db, row[0])
    finally:
        db.close()
    keys = ("id", "created", "submission_id", "role", "source", "question_id", "endpoint", "model",
            "prompt_version", "strategy", "params", "prefix_digest", "question", "response", "outcome")
    out = []
    for row in reversed(rows):
        d = dict(zip(keys, row, strict=False))
        d["params"] = json.loads(d["params"])
        d["response"] = json.loads(d["response"])
        out.append(d)
    return out


def _original_reply(db: sqlite3.Connection, call_id: int) -> tuple[str, str]:
    """(reply, outcome) for a reused verdict: the reply it was taken from, named by its call id."""
    found = db.execute(
        "SELECT o.id, o.response_json FROM calls r JOIN calls o ON o.key = r.key AND o.outcome = 'verdict' "
        "WHERE r.id = ? ORDER BY o.id DESC LIMIT 1", (call_id,)).fetchone()
    if found is None:
        return "null", "reused (the original reply is not in this cache)"
    return found[1], f"reused: the verdict of call {found[0]}"


def prompt_messages(path: str | Path, digest: str) -> list[dict[str, str]]:
    db = _connect(Path(path))
    try:
        row = db.execute("SELECT messages_json FROM prompts WHERE digest = ?", (digest,)).fetchone()
    finally:
        db.close()
    return json.loads(row[0]) if row else []


def reply_content(response: Any) -> str:
    """The assistant message of a chat completion, or the reply as JSON when it has none."""
    try:
        content = response["choices"][0]["message"]["content"]
        if isinstance(content, str):
            return content
    except (KeyError, IndexError, TypeError):
        pass
    return json.dumps(response, ensure_ascii=False, indent=1)
