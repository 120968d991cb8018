"""The results folder (``--out``): checked usable before any work, and held by one run at a time.

Lock: ``RESULTS/.checklist-eval.lock``, taken with ``fcntl.flock`` (exclusive, non-blocking) for the
whole run. A second run on the same folder refuses at once with one line (exit 2). The kernel drops
the lock when the holding process dies, however it dies, so a killed run never leaves the folder
blocked; the file itself stays (empty but for the holder's pid) and is harmless.

Write failures of the environment (disk full, file too large, read-only file system, permission
denied) are the user's to fix, not bugs: ``environment_error`` turns them into one-line InputErrors.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from checklist_eval.challenge.results.layout import LOCK_NAME, ResultsLayout
from checklist_eval.errors import InputError

# Storage that cannot take more: whatever was being written, everything else would fail the same way.
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
# Failures that mean "this place cannot be written" (at the top of a command: exit 2, one line).
ENVIRONMENT_ERRNOS = STORAGE_ERRNOS | {errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EISDIR, errno.EEXIST,
                                       errno.ENAMETOOLONG}
_SQLITE_FULL, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_CANTOPEN = 13, 8, 10, 14


def prepare_out(out: str | Path) -> Path:
    """``out`` as a folder that exists and can be written, else an InputError naming it."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(out, "--out is an existing file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(out, f"cannot create the results folder: {err.strerror or err}") from None
    return out


def check_out(out: str | Path) -> Path:
    """Refuse now an ``out`` that cannot become a results folder, without creating it (the folder may
    sit inside the very submission being scored, which must not change before it is read)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(out, "--out is an existing file, not a folder")
    parent = out
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(out, f"cannot create the results folder: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(out, f"cannot create the results folder: {parent} is not writable "
                              "(read-only or no permission)")
    return out


def refuse_out_inside(out: str | Path, given: str | Path, what: str) -> None:
    """``--out`` inside the input (a batch's ROOT, the submission scored) is refused: its files would sit
    among the papers, and the next run would read them as part of the input."""
    out_at, given_at = Path(out).resolve(), Path(given).resolve()
    if Path(given).is_dir() and (out_at == given_at or given_at in out_at.parents):
        raise InputError(out, f"--out is inside {what} {given}: results would sit among the papers it reads; "
                              "choose a folder outside it")


def refuse_batch_folder(out: str | Path) -> None:
    """``score --out`` into a batch's results folder is refused: the folder is the batch's."""
    import sqlite3

    layout = ResultsLayout(out)
    batch = (Path(out) / "submissions").is_dir() and layout.records_file() is not None
    if layout.db.is_file():
        try:
            db = sqlite3.connect(f"file:{layout.db.resolve()}?mode=ro", uri=True)
            try:
                batch = bool(db.execute("SELECT 1 FROM runs WHERE kind='batch' LIMIT 1").fetchone())
            finally:
                db.close()
        except sqlite3.Error:
            batch = True  # not a database we can read: not a place for score's files either
    if batch:
        raise InputError(out, "--out is a batch's results folder; score writes a folder of its own: choose another")


@contextmanager
def locked_out(out: str | Path) -> Iterator[Path]:
    """Hold the results folder's lock for the block; refuse (InputError) when another run holds it."""
    import fcntl

    out = prepare_out(out)
    lock = ResultsLayout(out).lock
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as err:
        raise InputError(out, f"results folder cannot be written: {err.strerror or err}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(out, f"another checklist-eval run is writing to this results folder (it holds "
                                  f"{LOCK_NAME}); wait for it to finish or choose another --out") from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError as err:
            refused = environment_error(err, out)
            if refused is None:  # not the environment refusing: a bug, raised as itself (not `raise None`)
                raise
            raise refused from None
        yield out
    finally:
        os.close(fd)  # releases the lock


def environment_error(err: BaseException, where: str | Path | None = None, *,
                      storage_only: bool = False) -> InputError | None:
    """A one-line InputError for a write the environment refused (full disk, read-only, ...), or None
    when ``err`` is not such a failure (then it is a bug and stays one). ``storage_only``: only a
    storage that takes no more (full, too large, read-only), not a refusal one file may get."""
    if isinstance(err, OSError) and err.errno in (STORAGE_ERRNOS if storage_only else ENVIRONMENT_ERRNOS):
        path = err.filename if err.filename else where
        return InputError(path, f"cannot write: {err.strerror or os.strerror(err.errno)}")
    code = getattr(err, "sqlite_errorcode", None)
    if isinstance(err, sqlite3.Error) and code is not None and code & 0xFF in (
            _SQLITE_FULL, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_CANTOPEN):
        words = {_SQLITE_FULL: "no space left on the device", _SQLITE_READONLY: "read-only"}.get(code & 0xFF, "")
        return InputError(where, f"cannot write the database: {words + ': ' if words else ''}{err}")
    return None
