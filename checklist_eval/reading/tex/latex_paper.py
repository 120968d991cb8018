"""A LaTeX paper read the way ``--tex`` says: ``auto`` (TeX's reading when the machine's TeX gives
one, else the source evaluator's), ``always`` (TeX's, or the paper fails with the reason) or ``never``
(the source evaluator's alone).

TeX runs first, within its share of the parse budget; the source evaluator then runs within what is
left, under an alarm, so a source shape it cannot read in time (a 4 MB preamble of switches) costs the
comparison, not the paper, when TeX has read it. A paper TeX reads never fails because the source
evaluator did: TeX's reading is used, and the failure is said in one line.
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

TEX_SHARE = 0.75  # of the parse budget, for the compile; the source evaluator has the rest
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


def read_latex_paper(label: str, spec: ChecklistSpec | None, mode: str, budget_s: float,
                     files: Callable[[], Files], root: str, source_paper: Callable[[], Paper]) -> Paper:
    """One LaTeX paper under ``mode``. ``files``: the project's files for TeX; ``root``: its main file
    among them; ``source_paper``: the source evaluator's reading (raises as ``parse_latex`` does)."""
    if mode == "never":
        return compare.source_alone(source_paper(), None)
    start = time.monotonic()
    tex: TexReading | None = None
    why: str | None = None
    absent = unprinted = False
    try:
        if budget_s * TEX_SHARE < MIN_TEX_S:
            raise TexUnread(f"TeX not run: --parse-timeout {budget_s:g} leaves it less than {MIN_TEX_S:g} s")
        tex = read_with_tex(files(), root, spec, label, budget_s * TEX_SHARE)
    except TooLarge as err:
        why = f"TeX not run: the project holds {err}"
    except TexUnread as err:
        why = str(err)
        absent = "not found on this machine" in why
        unprinted = isinstance(err, NoPrintedChecklist)
    except (OSError, ValueError, RuntimeError) as err:  # TeX's side failing never costs the source's reading
        why = f"TeX's reading failed ({type(err).__name__}: {' '.join(str(err).split())[:200]})"
    if tex is None:
        if mode == "always":
            raise InputError(label, f"TeX did not read this paper: {why} (--tex always)")
        if unprinted:
            return compare.unprinted_checklist(source_paper())
        return compare.source_alone(source_paper(), None if absent else f"TeX: {why}")
    left = budget_s - (time.monotonic() - start) - _MARGIN_S
    try:
        with _alarm(left):
            source = source_paper()
    except _OutOfTime:
        return compare.tex_alone(tex.paper, f"the source reader did not finish within {max(left, 0):.0f} s",
                                 tex.notes)
    except NoChecklistError as err:
        return compare.tex_alone(tex.paper, f"the source reader found no checklist ({err.problem})", tex.notes)
    except (InputError, RecursionError, MemoryError, Exception) as err:  # noqa: B014  (each named: all land here)
        problem = err.problem if isinstance(err, InputError) else f"{type(err).__name__}: {err}"
        return compare.tex_alone(tex.paper, f"the source reader failed ({' '.join(str(problem).split())[:200]})",
                                 tex.notes)
    return compare.tex_over_source(source, tex.paper, tex.notes)
