"""How the parse workers are started: forked from a command that runs no other thread, else from the fork
server, which a command that parses from threads starts early.

Forking is safe only from a process with one thread (another thread may hold a lock the child would
inherit held), and keeps the parse's memory budget only from a small parent (``FORK_MAX_PARENT_BYTES``).
``check``, ``parse``, ``validate`` and ``attack`` start their worker before any other thread exists, at
about 45 MB, and the worker forked from them imports the parser itself: no second interpreter starts.
That import cost the fork server about 0.4 s of CPU a command, for each of the thousand-odd commands
the test suite runs. ``score`` and ``batch`` parse from threads: their workers come from the fork server,
which imports the parser once (``PRELOAD``) and is started once the command's parser is built
(``start_early``), so that import runs beside the command's own; the server itself is forked from the
command while it may be (``_fork_the_fork_server``). This module imports nothing of ours.
"""

from __future__ import annotations

import os
import threading
from typing import Any

# multiprocessing is imported where it is used: most commands never start a worker, and the import cost
# every one of them about 30 ms of CPU.

__all__ = ["PARSING_COMMANDS", "PRELOAD", "context", "start_early", "worker_context"]

# Imported by the fork server once, so a new worker starts with the parser already loaded and the
# time budget measures parsing, not start-up. The PDF library is not among them: each worker loads
# its own copy on its first PDF. Only the fork server imports ``forkserver_quiet``.
PRELOAD = [
    "checklist_eval.reading.forkserver_quiet",  # first: no traceback from a request a killed command cut short
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
    import multiprocessing.util
    import tempfile
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


def _safe_to_fork() -> bool:
    """One thread (no lock held by another), and small enough that a child keeps its memory budget."""
    size = _address_space_bytes()
    return threading.active_count() == 1 and size is not None and size <= FORK_MAX_PARENT_BYTES


def worker_context() -> Any:
    """The context to start one worker with, decided as it starts: fork while that is safe, else the fork
    server's (``context``)."""
    import multiprocessing
    if _safe_to_fork() and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return context()


def context() -> Any:
    import multiprocessing
    # fork after threads exist is unsafe (the batch has an event loop and helper threads): workers
    # come from a fork server, started while the command was still safe to fork (``start_early``).
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    _short_socket_folder()
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def start_early(command: str | None) -> None:
    """Start the fork server now when ``command`` will parse; anything that stops it here is met again,
    and reported, when the first worker starts."""
    if command not in PARSING_COMMANDS:
        return
    import multiprocessing.forkserver

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return
    try:
        context()
        if not _fork_the_fork_server():
            multiprocessing.forkserver.ensure_running()
    except (OSError, ValueError):
        return


# The fork server multiprocessing starts is a new interpreter that imports Python, pydantic and our models
# again (about 0.4 s of CPU for each `score` and `batch`). While this process still runs one thread and is
# small, the server is forked from it instead and runs multiprocessing's own loop (``forkserver.main``); it
# imports only the parser. This leans on the fork server's private fields and its loop's parameters, so it
# is done only where both are exactly those of Pythons 3.10 to 3.13 (3.14 adds an authentication key, for
# one): anywhere else the stock server starts.
_SERVER_FIELDS = {"_forkserver_address", "_forkserver_alive_fd", "_forkserver_pid", "_inherited_fds", "_lock",
                  "_preload_modules"}
_MAIN_PARAMETERS = ["listener_fd", "alive_r", "preload", "main_path", "sys_path"]


def _can_fork_the_fork_server(server: Any) -> bool:
    import multiprocessing.forkserver
    code = multiprocessing.forkserver.main.__code__
    return (_safe_to_fork() and set(vars(server)) == _SERVER_FIELDS and server._forkserver_pid is None
            and list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]) == _MAIN_PARAMETERS)


def _fork_the_fork_server() -> bool:
    """Fork this process into the fork server; False when that cannot be done here (then the stock one
    starts)."""
    import multiprocessing.connection
    import multiprocessing.forkserver
    import multiprocessing.resource_tracker
    import socket
    server: Any = multiprocessing.forkserver._forkserver  # its private fields: checked before use
    with server._lock:
        if not _can_fork_the_fork_server(server):
            return False
        multiprocessing.resource_tracker.ensure_running()  # each worker is handed its descriptor
        with socket.socket(socket.AF_UNIX) as listener:
            address = multiprocessing.connection.arbitrary_address("AF_UNIX")  # type: ignore[attr-defined]
            listener.bind(address)
            os.chmod(address, 0o600)
            listener.listen()
            alive_r, alive_w = os.pipe()  # the server ends when every holder of alive_w has
            try:
                pid = os.fork()
                if pid == 0:
                    _serve(listener.fileno(), alive_r, list(server._preload_modules))
            except BaseException:
                os.close(alive_w)
                raise
            finally:
                os.close(alive_r)
        server._forkserver_address = address
        server._forkserver_alive_fd = alive_w
        server._forkserver_pid = pid
    return True


def _serve(listener_fd: int, alive_r: int, preload: list[str]) -> None:
    """The forked server: it keeps only its standard streams, its socket and its end of the pipe (held
    descriptors would keep a caller's pipe open, and our alive_w would keep it alive forever), and never
    returns into the command's code or runs its exit handlers."""
    import multiprocessing.forkserver
    code = 1
    try:
        keep = {0, 1, 2, listener_fd, alive_r}
        for fd in _open_descriptors():
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        multiprocessing.forkserver.main(listener_fd, alive_r, preload)
    except SystemExit:  # its loop ends so when the last holder of alive_w is gone
        code = 0
    finally:
        os._exit(code)


def _open_descriptors() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, os.sysconf("SC_OPEN_MAX")))
