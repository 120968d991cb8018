"""Parsing in worker processes, so one hostile paper cannot take the run down with it.

Each paper is parsed by a worker process under a wall-clock budget and an address-space limit. A
paper that crashes its worker (PDFium can abort with SIGTRAP or SIGSEGV), hangs, or runs out of
memory fails alone with one line; the worker is killed and replaced. Workers are started by a fork
server (never forked from a parent that already runs threads) and parse one paper at a time, so the
native PDF library is never entered from two threads and never loaded in the parent at all.

This is the one door a participant's file comes in by: every command and program that reads one
(``parse``, ``check``, ``validate``, ``score``, ``batch``, the Codabench scoring program, ``attack``,
``contamination``) parses through a :class:`ParserPool` (or :func:`isolated_load_paper`), never
through ``reading.parsing`` or the LaTeX/PDF readers in its own process; ``tests/test_door.py``
holds every module outside ``reading/`` to that.

Results come back as pydantic dumps (``Paper.model_dump``) over a pipe. A program that starts a pool
follows multiprocessing's rule for non-fork start methods: its main script is guarded by
``if __name__ == "__main__":`` (the fork server imports it).
"""

from __future__ import annotations

import gc
import os
import queue
import resource
import signal
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from checklist_eval.errors import InputError, NoChecklistError
from checklist_eval.models import Paper
from checklist_eval.reading.forkserver import worker_context
from checklist_eval.reading.tex import DEFAULT_TEX

DEFAULT_PARSE_TIMEOUT_S = 120.0
DEFAULT_PARSE_MEMORY_MB = 2048


@dataclass(frozen=True)
class ParseLimits:
    timeout_s: float = DEFAULT_PARSE_TIMEOUT_S
    memory_mb: int = DEFAULT_PARSE_MEMORY_MB  # 0: no limit
    tex: str = DEFAULT_TEX  # --tex: who reads a LaTeX paper (reading.tex.TEX_MODES)


# ------------------------------------------------------------------------------------------- worker


def _limit_memory(memory_mb: int) -> None:
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _paper_task(task: dict) -> dict:
    from checklist_eval.reading.parsing import load_paper

    paper = load_paper(task["path"], checklist=task.get("checklist"), spec_file=task.get("spec_file"),
                       root=task.get("root"), tex=task.get("tex", "never"), budget_s=task.get("budget_s", 120.0))
    return {"paper": paper.model_dump(mode="json")}


def _entry_task(task: dict) -> dict:
    from checklist_eval.reading.parsing import load_entry

    paper = load_entry(task["label"], task["name"], task["is_dir"], task["members"], tex=task.get("tex", "never"),
                       budget_s=task.get("budget_s", 120.0))
    return {"paper": paper.model_dump(mode="json")}


def _latex_task(task: dict) -> dict:
    """A LaTeX paper's flattened live source and the paper parsed from it (what ``attack`` edits)."""
    from checklist_eval.reading.latex import load_latex, parse_latex
    from checklist_eval.reading.parsing import resolve_spec

    source = load_latex(task["path"])
    paper = parse_latex(source.text, source.source, spec=resolve_spec(task.get("checklist")), warnings=source.warnings)
    paper.reader = "source"  # attack edits the source: the source evaluator reads what it plants
    return {"paper": paper.model_dump(mode="json"), "text": source.text}


def _text_task(task: dict) -> dict:
    """LaTeX text already read by the caller (a paper it derived from a participant's file)."""
    from checklist_eval.reading.latex import parse_latex
    from checklist_eval.reading.parsing import resolve_spec

    paper = parse_latex(task["text"], task["label"], spec=resolve_spec(task.get("checklist")))
    paper.reader = "source"  # text with no project around it: nothing for TeX to compile
    return {"paper": paper.model_dump(mode="json")}


def _reading_text_task(task: dict) -> dict:
    from checklist_eval.reading.parsing import reading_text

    return {"text": reading_text(task["path"])}


_TASKS = {"path": _paper_task, "entry": _entry_task, "latex": _latex_task, "text": _text_task,
          "reading_text": _reading_text_task}


def _run_task(task: dict) -> dict:
    try:
        return _TASKS[task["kind"]](task)
    except NoChecklistError as err:
        return {"error": "no_checklist", "path": err.path, "problem": err.problem}
    except InputError as err:
        return {"error": "input", "path": err.path, "problem": err.problem}
    except MemoryError:
        return {"error": "memory"}
    except RecursionError:
        return {"error": "input", "path": task.get("label") or task.get("path"),
                "problem": "nested too deeply to parse"}
    finally:
        from checklist_eval.reading.latex import clear_scan_caches

        clear_scan_caches()


WORKER_START_TIMEOUT_S = 120.0


def _worker_main(conn: Connection, memory_mb: int, parents_end: Connection | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when a worker ends
    if parents_end is not None:  # forked: our copy of the parent's end would keep recv() from ever seeing EOF
        parents_end.close()
    import checklist_eval.reading.parsing  # noqa: F401  (loaded already: by the forked parent or the preload)

    _limit_memory(memory_mb)
    if not _send(conn, "ready"):
        return
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply = _run_task(task)
        except Exception as err:  # a bug of ours: reported for this paper, the worker lives on
            reply = {"error": "internal", "problem": f"{type(err).__name__}: {' '.join(str(err).split())}"}
        try:
            sent = _send(conn, reply)
        except MemoryError:
            sent = _say_out_of_memory(conn, reply)
        if not sent:
            return


MEMORY_EXIT_CODE = 3  # a worker with no memory left even to say so exits with this, quietly


def _say_out_of_memory(conn: Connection, reply: object) -> bool:
    """Tell the parent this paper needed more memory than the limit. The reply that could not be pickled
    holds the memory: it is dropped first. Should even the short message not fit, the worker exits with
    ``MEMORY_EXIT_CODE``, which the parent reads as the same answer (a traceback would bury it)."""
    del reply
    gc.collect()
    try:
        return _send(conn, {"error": "memory"})
    except MemoryError:
        os._exit(MEMORY_EXIT_CODE)


def _send(conn: Connection, message: object) -> bool:
    """Send to the parent; False when it is gone (it stopped the run: a full disk, an interrupt), which
    ends the worker quietly: the parent has said why, and a worker's traceback would only bury that."""
    try:
        conn.send(message)
    except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
        return False
    return True


# ------------------------------------------------------------------------------------------- parent


class _Worker:
    def __init__(self, memory_mb: int):
        ctx = worker_context()
        self.conn, child = ctx.Pipe()
        forked = ctx.get_start_method() == "fork"  # then the child holds a copy of every descriptor
        self.process = ctx.Process(target=_worker_main, args=(child, memory_mb, self.conn if forked else None),
                                   daemon=True, name="checklist-eval-parser")
        self.process.start()
        child.close()
        try:
            ready = self.conn.poll(WORKER_START_TIMEOUT_S) and self.conn.recv() == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            self.kill()
            raise InputError(None, f"a parsing worker did not start ({_signal_name(self.process.exitcode)})")

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()


def _over_memory(memory_mb: int) -> str:
    return f"parsing needed more than {memory_mb} MB (--parse-memory); stopped"


def _signal_name(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


class ParserPool:
    """Up to ``workers`` warm parser processes; ``parse`` may be called from many threads at once."""

    def __init__(self, workers: int | None = None, limits: ParseLimits | None = None):
        self.size = max(1, workers or os.cpu_count() or 1)
        self.limits = limits or ParseLimits()
        # Each slot is a warm worker or None (start one when taken): a retired worker's slot goes
        # back as None, so a thread waiting for a worker is woken either way.
        self._slots: queue.Queue[_Worker | None] = queue.Queue()
        for _ in range(self.size):
            self._slots.put(None)
        self._lock = threading.Lock()
        self._all: set[_Worker] = set()
        self._closed = False

    def __enter__(self) -> ParserPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _take(self) -> _Worker:
        worker = self._slots.get()
        with self._lock:
            if self._closed:
                self._slots.put(worker)
                raise RuntimeError("parser pool is closed")
            if worker is not None and not worker.process.is_alive():
                # died while idle (the system's OOM killer, an operator): not this paper's doing
                worker.kill()
                self._all.discard(worker)
                worker = None
            if worker is None:
                try:
                    worker = _Worker(self.limits.memory_mb)
                except BaseException:
                    self._slots.put(None)
                    raise
                self._all.add(worker)
        return worker

    def _retire(self, worker: _Worker) -> None:
        """Kill a worker whose state cannot be trusted; its slot is refilled on the next request."""
        worker.kill()
        with self._lock:
            self._all.discard(worker)
        self._slots.put(None)

    def _give_back(self, worker: _Worker) -> None:
        self._slots.put(worker)

    def run(self, task: dict, label: str) -> Paper:
        return _paper_from(self._ask(task, label), label)

    def _ask(self, task: dict, label: str) -> dict:
        """The worker's reply to ``task``; InputError (one line naming ``label``) for a paper that
        failed, crashed its worker, or went over the time or memory budget."""
        task = {**task, "tex": self.limits.tex, "budget_s": self.limits.timeout_s}
        worker = self._take()
        try:
            worker.conn.send(task)
            if not worker.conn.poll(self.limits.timeout_s):
                self._retire(worker)
                raise InputError(label, f"parsing took longer than {self.limits.timeout_s:g} s "
                                        "(--parse-timeout); stopped")
            reply = worker.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            worker.process.join(5)
            code = worker.process.exitcode
            self._retire(worker)
            if code == MEMORY_EXIT_CODE:
                raise InputError(label, _over_memory(self.limits.memory_mb)) from None
            raise InputError(label, f"the parser crashed on this file ({_signal_name(code)}; its memory "
                                    f"limit was {self.limits.memory_mb} MB, --parse-memory)") from None
        except InputError:
            raise
        except BaseException:
            self._retire(worker)
            raise
        if reply.get("error") == "memory":
            self._retire(worker)  # a worker that hit its limit may hold half-built state
            raise InputError(label, _over_memory(self.limits.memory_mb))
        self._give_back(worker)
        if "error" in reply:
            _paper_from(reply, label)  # raises
        return reply

    def load_paper(self, path: str | Path, checklist: str | None = None,
                   spec_file: str | Path | None = None, root: str | None = None) -> Paper:
        task = {"kind": "path", "path": str(path), "checklist": checklist,
                "spec_file": str(spec_file) if spec_file else None, "root": root}
        return self.run(task, str(path))

    def load_entry(self, label: str, name: str, is_dir: bool, members: dict[str, bytes]) -> Paper:
        task = {"kind": "entry", "label": label, "name": name, "is_dir": is_dir, "members": members}
        return self.run(task, label)

    def load_latex(self, path: str | Path, checklist: str | None = None) -> tuple[str, Paper]:
        """A LaTeX paper's flattened live source and the paper parsed from it."""
        reply = self._ask({"kind": "latex", "path": str(path), "checklist": checklist}, str(path))
        return reply["text"], Paper.model_validate(reply["paper"])

    def parse_text(self, text: str, label: str, checklist: str | None = None) -> Paper:
        """LaTeX text derived from a participant's file (``attack``'s planted paper), parsed here too."""
        return self.run({"kind": "text", "text": text, "label": label, "checklist": checklist}, label)

    def reading_text(self, path: str | Path) -> str:
        """Title, abstract and body as a reader sees them (``reading.parsing.reading_text``)."""
        return self._ask({"kind": "reading_text", "path": str(path)}, str(path))["text"]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers = list(self._all)
            self._all.clear()
        for worker in workers:
            try:
                worker.conn.close()  # the worker's recv() ends: it exits on its own
            except OSError:
                pass
        for worker in workers:
            worker.process.join(2)
            if worker.process.is_alive():
                worker.kill()


def _paper_from(reply: dict, label: str) -> Paper:
    if "paper" in reply:
        return Paper.model_validate(reply["paper"])
    if reply["error"] == "no_checklist":
        raise NoChecklistError(reply.get("path"), reply["problem"])
    if reply["error"] == "input":
        raise InputError(reply.get("path") or label, reply["problem"])
    raise InputError(label, f"the parser failed on this file: {reply['problem']}")


def isolated_load_paper(path: str | Path, checklist: str | None = None, spec_file: str | Path | None = None,
                        limits: ParseLimits | None = None, root: str | None = None) -> Paper:
    """``load_paper`` in a worker process under ``limits``: what single-paper commands use."""
    with ParserPool(1, limits) as pool:
        return pool.load_paper(path, checklist, spec_file, root)
