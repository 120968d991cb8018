"""The one door to a cache file: every SQLite file the tool keeps (the response cache with its call
log and batch tables) is opened here, and a path that is not one is refused in one line naming it.

``--cache`` may name anything: a folder, a FIFO (opening it would block or fail deep inside SQLite), a
device, a text file. The kind is checked before SQLite touches the path, and SQLite's header check
(``PRAGMA schema_version`` reads page 1) runs at once, so "file is not a database" surfaces here as an
``InputError`` instead of at the first query of a run that has already paid for calls.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from checklist_eval.errors import InputError

__all__ = ["open_cache_db"]


def _refuse_non_file(path: Path) -> None:
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return  # a new cache: SQLite creates it
    except OSError as err:
        raise InputError(path, f"cannot open the cache: {err.strerror or err}") from None
    if stat.S_ISDIR(mode):
        raise InputError(path, "the cache is a folder, not a file: give --cache FILE (an SQLite file)")
    if not stat.S_ISREG(mode):
        raise InputError(path, "the cache is not a regular file (a FIFO, socket or device): give --cache FILE")


def open_cache_db(path: Path, *, read_only: bool = False, busy_s: float = 30.0) -> sqlite3.Connection:
    """A connection to the SQLite file at ``path`` (created when absent unless ``read_only``), its
    header checked. ``InputError`` naming the path when it is not a database or cannot be opened."""
    _refuse_non_file(path)
    try:
        if read_only:
            db = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, timeout=busy_s)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=busy_s, isolation_level=None, check_same_thread=False)
    except (sqlite3.Error, OSError) as err:
        raise InputError(path, f"cannot open the cache ({err})") from None
    try:
        db.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as err:
        db.close()
        if read_only and not os.access(path.parent, os.W_OK):
            return _open_immutable(path, busy_s)
        raise InputError(path, f"not an SQLite database, so not a checklist-eval cache ({err})") from None
    return db


def _open_immutable(path: Path, busy_s: float) -> sqlite3.Connection:
    """A WAL cache on storage that cannot be written (read-only mount, no permission): SQLite cannot
    make the shared-memory file a reader needs, so the file is read as immutable, which is what it is
    there (nothing can write it). Writes still waiting in the ``-wal`` file would be missed that way,
    so such a file is refused rather than shown without them."""
    wal = path.with_name(path.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        raise InputError(path, f"cannot be read on storage that cannot be written: its last writes are still in "
                               f"{wal.name}; copy the folder to writable storage to read it")
    try:
        db = sqlite3.connect(f"file:{path.resolve()}?mode=ro&immutable=1", uri=True, timeout=busy_s)
        db.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as err:
        raise InputError(path, f"not an SQLite database, so not a checklist-eval cache ({err})") from None
    return db
