"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half of one. And
the one JSON reader for what comes from outside (``loads_json``): nesting bounded before parsing."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from checklist_eval.redact import redact_bytes

# Recognisably ours (``remove_stale_temps`` deletes nothing else) and still ``*.tmp`` for tools.
TEMP_SUFFIX = ".checklist-eval.tmp"


def _read_umask() -> int:
    mask = os.umask(0)  # the only portable way to read it is to set it, so: once, at import, before
    os.umask(mask)  # any writer thread exists (setting it later would race with threads creating files)
    return mask


_UMASK = _read_umask()


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, with any registered secret redacted (the second line
    of defence behind the redaction of endpoint replies; see ``checklist_eval.redact``)."""
    with atomic_writer(path) as write:
        write(data)
    return Path(path)


@contextmanager
def atomic_writer(path: str | Path) -> Iterator[Callable[[bytes], None]]:
    """``atomic_write_bytes`` for a file written in pieces (one too large to hold): yields a function
    that writes one piece, redacted. The file appears at ``path`` whole when the block ends, and not
    at all when it raises. Redaction is per piece, so pieces must be whole lines (a secret sits on one)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        # mkstemp creates 0600; the finished file gets the permissions a plain open() would give it.
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as fh:

            def write(data: bytes) -> None:
                fh.write(redact_bytes(data))

            yield write
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)  # the rename itself survives a power cut
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def fsync_dir(folder: str | Path) -> None:
    """Make a rename in ``folder`` durable (where the platform lets a folder be opened: not Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a folder; the rename is as durable as they allow
    finally:
        os.close(fd)


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


# Files of a results folder that versions before TEMP_SUFFIX wrote through ``.<name>.<token>.tmp``.
_OLDER_OUTPUTS = ("result.json", "report.html", "records.csv", "records.jsonl", "scores.csv", "summary.json",
                  "failures.jsonl", "check.json")
_OLDER_TEMP = re.compile(rf"\.(?:{'|'.join(map(re.escape, _OLDER_OUTPUTS))})\.[A-Za-z0-9_]+\.tmp")


def is_own_temp(name: str) -> bool:
    """A temp file name this tool makes: ``.<final name>.<random>.checklist-eval.tmp`` (or the
    ``.<output>.<random>.tmp`` of older versions). A user's own ``.notes.tmp`` is not one."""
    return (name.startswith(".") and name.endswith(TEMP_SUFFIX)) or bool(_OLDER_TEMP.fullmatch(name))


def remove_stale_temps(folder: str | Path) -> int:
    """Delete the temp files a killed writer of ours left in ``folder`` (never under a final name, so
    nothing is lost); any other file, and anything behind a link, is left alone. Only for a folder no
    other process is writing into (hold its lock). Returns how many were removed."""
    removed = 0
    for dirpath, _dirnames, filenames in os.walk(folder):  # does not follow links to folders
        for name in filenames:
            stale = Path(dirpath, name)
            if is_own_temp(name) and stat.S_ISREG(stale.lstat().st_mode):
                stale.unlink(missing_ok=True)
                removed += 1
    return removed


# Deeper than any file or reply of ours (records, prices, question sets, batch answers nest under 10);
# Python's decoder would raise RecursionError near 1,000 levels, after a quadratic-ish walk.
MAX_JSON_DEPTH = 64
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _too_deep(text: str, limit: int) -> int | None:
    """The offset where ``text`` nests past ``limit`` levels (strings skipped), or None."""
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        if match.end() - match.start() != 1:
            continue  # a string: brackets inside it do not nest
        depth += 1 if text[match.start()] in "[{" else -1
        if depth > limit:
            return match.start()
    return None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE_ESCAPES = re.compile(r"(\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})"  # a whole pair
                                r"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def whole_unicode(text: str) -> str:
    """``text`` with every lone surrogate (half a pair: valid in JSON, not in UTF-8, so it fails the
    first write) as U+FFFD, raw or as a JSON escape; a whole pair stays."""
    if "\\u" in text:
        text = _SURROGATE_ESCAPES.sub(lambda m: m.group(1) or "\\ufffd", text)
    return _LONE_SURROGATE.sub("\ufffd", text)


def _whole_strings(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_whole_strings(v) for v in value]
    if isinstance(value, dict):
        return {_whole_strings(k): _whole_strings(v) for k, v in value.items()}
    return value


def loads_json(text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` for input from outside: a document nested deeper than ``max_depth`` levels is a
    ``json.JSONDecodeError`` (what callers already catch), never a RecursionError; half a surrogate
    pair in a string reads as U+FFFD."""
    opens = text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    if opens > max_depth:  # else it cannot nest deeper: no scan
        doc = text if isinstance(text, str) else text.decode("utf-8", "replace")
        at = _too_deep(doc, max_depth)
        if at is not None:
            raise json.JSONDecodeError(f"nested deeper than {max_depth} levels", doc[: at + 1], at)
    value = json.loads(text)
    probe = text if isinstance(text, str) else text.decode("ascii", "replace")
    return _whole_strings(value) if _SURROGATE_ESCAPE.search(probe) else value


MAX_JSON_FILE_BYTES = 256 << 20  # a JSON file this tool wrote (a result, a summary) is far smaller


def read_json_file(path: str | Path, max_bytes: int = MAX_JSON_FILE_BYTES) -> Any:
    """The JSON document in ``path`` read through ``loads_json`` (bounded depth), at most ``max_bytes``
    read; None when it cannot be read, is larger, or is not JSON. For files of a folder that may be
    hostile (a results folder, a cache), where a bad file is one that is not there."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:
            return None
        return loads_json(data)
    except (OSError, ValueError):
        return None


Migration = tuple[str, Callable[[sqlite3.Connection], None]]


def apply_migrations(db: sqlite3.Connection, migrations: Sequence[Migration]) -> None:
    """Apply the named migrations a SQLite file has not had yet, each in its own write transaction (BEGIN
    IMMEDIATE takes the write lock, so two processes never apply the same one). A file that has them all is
    not written to: a reader opening it takes no write lock."""
    try:
        done = {r[0] for r in db.execute("SELECT name FROM _migrations")}
    except sqlite3.OperationalError:
        done = set()
    if all(name in done for name, _fn in migrations):
        return
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied REAL NOT NULL)")
    for name, fn in migrations:
        if db.execute("SELECT 1 FROM _migrations WHERE name=?", (name,)).fetchone():
            continue
        db.execute("BEGIN IMMEDIATE")
        try:
            if not db.execute("SELECT 1 FROM _migrations WHERE name=?", (name,)).fetchone():
                fn(db)
                db.execute("INSERT INTO _migrations (name, applied) VALUES (?, ?)", (name, time.time()))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite undoes it itself on a full disk: that error is the one to read
                db.execute("ROLLBACK")
            raise
