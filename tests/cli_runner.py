"""``checklist-eval ARGS`` run in this process: the console script's entry point (``checklist_eval.cli.main``)
called with argv, its exit code and what it wrote to stdout and stderr returned.

A new interpreter per command costs about a second of CPU (Python, pydantic, pandas, openai imported
again), and the suite runs well over a thousand commands. In-process, the run is isolated the way a
process would be: its own environment, working directory, standard streams, temp folder, signal
handlers, logging and warnings output, and an empty redaction registry (a process registers only its
own user's key). What stays shared is what is the same in every process: imported modules and caches
keyed by file content. Tests whose subject is the process itself (signals, kills, memory and time
limits, the fork server, the installed console script, peak RSS) still start one.

Parse workers come from multiprocessing's fork server (this process runs threads and is past the size
``reading.forkserver`` forks from), started once per test process from its own environment and temp
folder, so a run's TMPDIR is left as the run left it.
"""

from __future__ import annotations

import _thread
import asyncio
import io
import logging
import os
import signal
import sys
import tempfile
import threading
import warnings
from collections.abc import Mapping

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE, signal.SIGCHLD)


class CliRun:
    """One run: exit code and streams, under both spellings the tests use (``returncode/stdout/stderr``
    as ``subprocess.run`` returns them, ``code/out/err``)."""

    def __init__(self, args: list[str], code: int, out, err):
        self.args, self.returncode, self.stdout, self.stderr = args, code, out, err

    code = property(lambda self: self.returncode)
    out = property(lambda self: self.stdout)
    err = property(lambda self: self.stderr)

    def __repr__(self) -> str:
        return f"CliRun(args={self.args!r}, code={self.returncode}, out={self.stdout[-600:]!r}, err={self.stderr[-1500:]!r})"


_process_ready = False


def _prepare_process() -> None:
    """Once per test process, from its own environment: multiprocessing's temp folder (made once per
    process; else inside the first run's TMPDIR, which that run's test expects empty) and the fork
    server its parse workers come from (else started with the first run's environment and streams)."""
    global _process_ready
    if _process_ready:
        return
    import multiprocessing.forkserver
    import multiprocessing.util

    from checklist_eval.reading import forkserver

    multiprocessing.util.get_temp_dir()
    if "forkserver" in multiprocessing.get_all_start_methods():
        forkserver.context()
        multiprocessing.forkserver.ensure_running()
    _process_ready = True


class _StderrAtEmit(logging.Handler):
    """Python's last-resort handler (a process without logging configured prints WARNING and above to
    the stderr of the moment); pytest's own handlers on the root logger would otherwise take its place."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:  # as logging does: a failing handler never stops the program
            self.handleError(record)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _detach_event_loops():
    """This thread's running and current event loops, set aside: a test driving a browser through
    Playwright's sync API has its loop running here, and a new process has none (``asyncio.run`` refuses
    to start beside one)."""
    local = getattr(asyncio.get_event_loop_policy(), "_local", None)
    saved = asyncio._get_running_loop(), local, getattr(local, "_loop", None)
    asyncio._set_running_loop(None)
    return saved


def _attach_event_loops(saved) -> None:
    running, local, current = saved
    asyncio._set_running_loop(running)
    if local is not None:
        local._loop = current


def _decode(data: bytes, text: bool):
    return data.decode("utf-8", "replace") if text else data


def run_cli(*argv, env: Mapping[str, str] | None = None, env_extra: Mapping[str, str] | None = None,
            cwd: str | os.PathLike | None = None, text: bool = True, timeout: float = 600) -> CliRun:
    """``checklist-eval *argv`` in this process. ``env``: the whole environment (default: this process's),
    ``env_extra`` set on top of it; ``cwd``: the working directory (default: this one). ``timeout`` is a
    hang guard only: past it the run is interrupted (exit 130, as a user's Ctrl-C), never a verdict on speed."""
    from checklist_eval import redact
    from checklist_eval.cli import main

    _prepare_process()
    args = [os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in argv]
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_handlers = {s: signal.getsignal(s) for s in _SIGNALS}
    saved_tempdir = tempfile.tempdir
    saved_loops = _detach_event_loops()
    with redact._lock:
        saved_secrets = redact._secrets, redact._pieces, redact._runs
        redact._secrets, redact._pieces, redact._runs = set(), set(), None
    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    # As a child process's pipes: UTF-8, stdout strict, stderr with backslash escapes.
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", errors="strict", newline="\n", write_through=True)
    err = io.TextIOWrapper(err_bytes, encoding="utf-8", errors="backslashreplace", newline="\n", write_through=True)
    root = logging.getLogger()
    handler = _StderrAtEmit(logging.WARNING)
    guard = threading.Timer(timeout, _thread.interrupt_main)
    guard.daemon = True
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os.environ.update(env_extra or {})
        if cwd is not None:
            os.chdir(cwd)
        tempfile.tempdir = None  # read again from this run's TMPDIR, as a new process would
        sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
        sys.stdout, sys.stderr = out, err
        root.addHandler(handler)
        guard.start()
        with warnings.catch_warnings():
            warnings.resetwarnings()  # Python's default filters, as a process without -W starts with
            for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
                warnings.simplefilter("ignore", category)
            warnings.showwarning = _show_warning
            try:
                code = main(args)
            except SystemExit as stop:  # argparse's --help, --version and usage errors
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
                if stop.code is not None and not isinstance(stop.code, int):
                    print(stop.code, file=sys.stderr)
            except KeyboardInterrupt:  # the hang guard fired outside main's own handler
                code = 130
        out.flush()
        err.flush()
    finally:
        guard.cancel()
        root.removeHandler(handler)
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        tempfile.tempdir = saved_tempdir
        _attach_event_loops(saved_loops)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for sig, old in saved_handlers.items():
            if old is not None:
                signal.signal(sig, old)
        with redact._lock:
            redact._secrets, redact._pieces, redact._runs = saved_secrets
    return CliRun(args, int(code), _decode(out_bytes.getvalue(), text), _decode(err_bytes.getvalue(), text))


def cli_env_without(*prefixes: str, **extra: str) -> dict[str, str]:
    """This process's environment without the variables starting with any of ``prefixes``, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)} if prefixes else dict(os.environ)
    env.update(extra)
    return env


__all__ = ["CliRun", "cli_env_without", "run_cli"]
