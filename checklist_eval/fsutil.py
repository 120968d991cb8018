"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half of one."""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

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
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


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
