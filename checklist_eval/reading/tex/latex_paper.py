"""A LaTeX paper read the way ``--tex`` says: ``auto`` (TeX's reading when the machine's TeX gives
one, else the source evaluator's), ``always`` (TeX's, or the paper fails with the reason) or ``never``
(the source evaluator's alone).

The source evaluator runs first, within a quarter of the parse budget, under an alarm (a source shape
it cannot read in time, a 4 MB preamble of switches, costs the comparison, not the paper, when TeX reads
it); TeX then compiles within three quarters at most, and its whole reading (compile, PDF, SyncTeX) ends
before the budget does, so a compile that runs long leaves the source's reading, said in one line, never
a parse timeout. A paper TeX reads never fails because the source evaluator did: TeX's reading is used,
and the failure is said in one line. When TeX gives up and the source's first try was cut short, the
source evaluator has the rest of the budget.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from checklist_eval.errors import InputError, NoChecklistError
from checklist_eval.models import ChecklistSpec, Paper
from checklist_eval.reading.tex import compare
from checklist_eval.reading.tex.project import Files, TooLarge
from checklist_eval.reading.tex.read import NoPrintedChecklist, TexReading, TexUnread, read_with_tex

SOURCE_SHARE = 0.25  # of the parse budget, for the source evaluator's first try (it runs first)
TEX_SHARE = 0.75  # of the parse budget at most, for the compile; the PDF reading and SyncTeX get what is left
# Below this, TeX is not tried: no compile finishes in it, and trying would leave the source reader
# too little of a tight --parse-timeout.
MIN_TEX_S = 3.0
_MARGIN_S = 2.0  # kept back for reading replies and sending the paper to the parent


class _OutOfTime(BaseException):  # BaseException: no ``except Exception`` in the evaluator swallows it
    pass


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """Raise _OutOfTime after ``seconds`` (only where signals can be had: a worker's main thread)."""
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def ring(_sig, _frame):
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _SourceCut:
    """The source evaluator's first try was stopped at its share of the budget (it may finish given more)."""


def _source_first(source_paper: Callable[[], Paper], seconds: float) -> Paper | BaseException | _SourceCut:
    """The source evaluator's reading, what it raised, or _SourceCut when it ran out of ``seconds``."""
    try:
        with _alarm(seconds):
            return source_paper()
    except _OutOfTime:
        return _SourceCut()
    except Exception as err:  # InputError, RecursionError, MemoryError among them: each is the paper's outcome
        return err


def _tex_reading(files: Callable[[], Files], root: str, spec: ChecklistSpec | None, label: str, budget_s: float,
                 left_s: float) -> tuple[TexReading | None, str | None, bool, bool]:
    """TeX's reading within ``min(budget_s * TEX_SHARE, left_s)`` for the compile and ``left_s`` in all
    (the PDF read and SyncTeX after it included): (reading, why not, TeX absent, checklist not printed)."""
    compile_s = min(budget_s * TEX_SHARE, left_s)
    try:
        if compile_s < MIN_TEX_S:
            raise TexUnread(f"TeX not run: --parse-timeout {budget_s:g} leaves it less than {MIN_TEX_S:g} s")
        with _alarm(left_s):
            return read_with_tex(files(), root, spec, label, compile_s), None, False, False
    except _OutOfTime:
        return None, f"TeX's reading did not finish within {left_s:.0f} s", False, False
    except TooLarge as err:
        return None, f"TeX not run: the project holds {err}", False, False
    except TexUnread as err:
        return None, str(err), "not found on this machine" in str(err), isinstance(err, NoPrintedChecklist)
    except (OSError, ValueError, RuntimeError) as err:  # TeX's side failing never costs the source's reading
        return None, f"TeX's reading failed ({type(err).__name__}: {' '.join(str(err).split())[:200]})", False, False


def read_latex_paper(label: str, spec: ChecklistSpec | None, mode: str, budget_s: float,
                     files: Callable[[], Files], root: str, source_paper: Callable[[], Paper]) -> Paper:
    """One LaTeX paper under ``mode``. ``files``: the project's files for TeX; ``root``: its main file
    among them; ``source_paper``: the source evaluator's reading (raises as ``parse_latex`` does)."""
    if mode == "never":
        return compare.source_alone(source_paper(), None)
    start = time.monotonic()
    # The source evaluator first, within its share: it is quick (0.4 s at the median of the shared papers)
    # and it is the fallback, so a compile and PDF reading that take the rest of the budget (a 73-page paper
    # on a loaded machine) leave the paper the source's reading instead of a parse timeout.
    source = _source_first(source_paper, budget_s * SOURCE_SHARE)
    left = budget_s - (time.monotonic() - start) - _MARGIN_S
    tex, why, absent, unprinted = _tex_reading(files, root, spec, label, budget_s, left)
    if tex is None:
        if mode == "always":
            raise InputError(label, f"TeX did not read this paper: {why} (--tex always)")
        if isinstance(source, _SourceCut):  # TeX gave up early: the source may have the rest of the budget
            source = source_paper()
        elif isinstance(source, BaseException):
            raise source
        if unprinted:
            return compare.unprinted_checklist(source)
        return compare.source_alone(source, None if absent else f"TeX: {why}")
    if isinstance(source, _SourceCut):
        return compare.tex_alone(tex.paper, f"the source reader did not finish within {budget_s * SOURCE_SHARE:.0f} s",
                                 tex.notes)
    if isinstance(source, NoChecklistError):
        return compare.tex_alone(tex.paper, f"the source reader found no checklist ({source.problem})", tex.notes)
    if isinstance(source, BaseException):
        problem = source.problem if isinstance(source, InputError) else f"{type(source).__name__}: {source}"
        return compare.tex_alone(tex.paper, f"the source reader failed ({' '.join(str(problem).split())[:200]})",
                                 tex.notes)
    return compare.tex_over_source(source, tex.paper, tex.notes)
