"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def _read_umask() -> int:
    mask = os.umask(0)  # the only portable way to read it is to set it, so: once, at import, before
    os.umask(mask)  # any writer thread exists (setting it later would race with threads creating files)
    return mask


_UMASK = _read_umask()


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        # mkstemp creates 0600; the finished file gets the permissions a plain open() would give it.
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def remove_stale_temps(folder: str | Path) -> int:
    """Delete the temp files a killed writer left in ``folder`` (never under a final name, so nothing
    is lost). Only for a folder no other process is writing into. Returns how many were removed."""
    removed = 0
    for stale in Path(folder).rglob(f".*{TEMP_SUFFIX}"):
        if stale.is_file():
            stale.unlink(missing_ok=True)
            removed += 1
    return removed
