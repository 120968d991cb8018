"""How the parse workers are started: forked from a command that runs no other thread, else from the fork
server, which a command that parses from threads starts early.

Forking is safe only from a process with one thread (another thread may hold a lock the child would
inherit held), and keeps the parse's memory budget only from a small parent (``FORK_MAX_PARENT_BYTES``).
``check``, ``parse``, ``validate`` and ``attack`` start their worker before any other thread exists, at
about 45 MB, and the worker forked from them imports the parser itself: no second interpreter starts.
That import cost the fork server about 0.4 s of CPU a command, for each of the thousand-odd commands
the test suite runs. ``score`` and ``batch`` parse from threads: their workers come from the fork server,
which imports the parser once (``PRELOAD``) and is started as the command begins (``start_early``), so
that import runs beside the command's own. This module imports nothing of ours.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import multiprocessing.util
import os
import tempfile
import threading
from typing import Any

__all__ = ["PARSING_COMMANDS", "PRELOAD", "context", "start_early", "worker_context"]

# Imported by the fork server once, so a new worker starts with the parser already loaded and the
# time budget measures parsing, not start-up. The PDF library is not among them: each worker loads
# its own copy on its first PDF.
PRELOAD = [
    "checklist_eval.reading.parsing",
    "checklist_eval.reading.sources",
    "checklist_eval.reading.latex",
    "checklist_eval.models",
]
# The commands whose workers come from the fork server (``worker_context``), so it is started early: score
# and batch parse from threads; contamination is past FORK_MAX_PARENT_BYTES when it parses.
PARSING_COMMANDS = frozenset({"score", "batch", "contamination"})

# An AF_UNIX socket path holds at most 107 bytes, and the fork server's socket lives in the temp folder.
_SOCKET_DIR_MAX_BYTES = 64


def _short_socket_folder() -> None:
    """Under a deep TMPDIR the fork server could not bind its socket ("AF_UNIX path too long"):
    multiprocessing's own temp folder (made once per process, removed at exit) then goes to /tmp."""
    if len(os.fsencode(tempfile.gettempdir())) <= _SOCKET_DIR_MAX_BYTES or not os.path.isdir("/tmp"):
        return
    saved = tempfile.tempdir
    tempfile.tempdir = "/tmp"
    try:
        multiprocessing.util.get_temp_dir()
    finally:
        tempfile.tempdir = saved


# A worker's memory limit (--parse-memory) caps its whole address space, the parent's copy included: a
# worker is forked only from a parent no bigger than a fork server's worker (about 40 MB), so the parse gets
# the same room either way. `contamination` is 184 MB by then (its HTTP client loaded), and a forked worker
# with an 80 MB limit failed before it read the paper.
FORK_MAX_PARENT_BYTES = 64 * 1024 * 1024


def _address_space_bytes() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def worker_context() -> Any:
    """The context to start one worker with, decided as it starts: fork while this process runs a single
    thread and is small, else the fork server's (``context``)."""
    size = _address_space_bytes()
    if (threading.active_count() == 1 and size is not None and size <= FORK_MAX_PARENT_BYTES
            and "fork" in multiprocessing.get_all_start_methods()):
        return multiprocessing.get_context("fork")
    return context()


def context() -> Any:
    # fork after threads exist is unsafe (the batch has an event loop and helper threads): workers
    # come from a fork server started from a clean interpreter.
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    _short_socket_folder()
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def start_early(command: str | None) -> None:
    """Start the fork server now when ``command`` will parse; anything that stops it here is met again,
    and reported, when the first worker starts."""
    if command not in PARSING_COMMANDS or "forkserver" not in multiprocessing.get_all_start_methods():
        return
    try:
        context()
        multiprocessing.forkserver.ensure_running()
    except (OSError, ValueError):
        return
