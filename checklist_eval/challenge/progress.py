"""The live progress display of ``check``, ``score`` and ``batch``.

On a terminal: one line on stderr that keeps what matters at any width. Its parts, by priority: units
done of the total (questions of one paper or submission, submissions of a batch), the time left, what
the run spent (cost, calls, retries, tokens, questions judged), the time taken, and last the bar: a
narrow terminal loses the bar first, then the least useful counters, never the count or the time left.
It reads the assessor's running counters four times a second.

Not on a terminal (a log file, CI), a batch prints one plain line per finished submission instead
(``[12/50] team-alpha: scored; eta 0:03:12``); one paper's run prints nothing. Quiet or JSON output
turns both off.
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass
from typing import Any

from checklist_eval.assessors.base import Assessor

BAR_MIN, BAR_MAX = 10, 40  # cells of the bar when it is shown


def wanted(assessor: Assessor, *, quiet: bool) -> bool:
    """On for model-calling runs on a terminal, unless asked for quiet (or machine-read) output."""
    return assessor.needs_network and not quiet and sys.stderr.isatty()


def spend_parts(assessor) -> list[str]:
    """What the run has spent so far, most useful first."""
    from checklist_eval.endpoint.prices import format_cost

    u = assessor.usage
    return [format_cost(u), f"calls {u.calls}", f"retries {getattr(assessor, 'retries', 0)}",
            f"tokens {u.prompt_tokens:,}+{u.completion_tokens:,} ({u.cached_tokens:,} cached)",
            f"questions {assessor.questions_done}"]


def clock(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


@dataclass
class LineParts:
    done: int
    total: int | None
    unit: str
    eta: float | None
    elapsed: float
    spend: list[str]


def fit_line(p: LineParts, width: int) -> tuple[list[str], int]:
    """The parts of the progress line that fit ``width`` cells, in display order, and the bar's width
    (0: no bar). Parts are taken by priority (count, time left, spending in its order, time taken),
    each where it still fits; the bar only when every part fits beside it."""
    count = f"{p.done}/{p.total} {p.unit}" if p.total else f"{p.done} {p.unit}"
    ranked = [count, f"eta {clock(p.eta)}", *p.spend, clock(p.elapsed)]
    kept: list[str] = []
    used = -2
    for part in ranked:
        if used + 2 + len(part) > width:
            continue  # a shorter, less useful part may still use the room this one could not
        kept.append(part)
        used += 2 + len(part)
    room = width - used - 2
    bar = min(BAR_MAX, room) if room >= BAR_MIN and len(kept) == len(ranked) and p.total else 0
    return kept, bar


def render_line(p: LineParts, width: int) -> Any:
    """The line as rich Text: the count, the bar (if it fits), then the rest."""
    from rich.text import Text

    parts, bar = fit_line(p, width)
    text = Text(parts[0] if parts else "", style="bold")
    if bar:
        filled = round(bar * p.done / p.total) if p.total else 0
        text.append("  ")
        text.append("━" * filled, style="green")
        text.append("━" * (bar - filled), style="grey35")
    for part in parts[1:]:
        text.append("  " + part)
    return text


class RunProgress:
    """``with RunProgress(assessor, enabled, unit="questions") as p:`` then ``await``-free updates: a
    background ticker refreshes it. With ``unit="questions"`` the total follows the papers started.
    ``plain=True`` (a batch not on a terminal): one line per finished submission instead."""

    def __init__(self, assessor, enabled: bool, *, unit: str = "questions", plain: bool = False):
        self.assessor = assessor
        self.enabled = enabled
        self.unit = unit
        self.plain = plain and not enabled
        self.live: Any = None  # a rich Live once started; rich is imported only when shown
        self.console: Any = None
        self.done: int = 0
        self.total: int | None = None
        self.started = time.monotonic()
        self._first: tuple[float, int] | None = None  # (when, done) at the batch's start: resumed work is not rate
        self._ticker: asyncio.Task | None = None

    def __enter__(self) -> RunProgress:
        if self.enabled:
            from rich.live import Live

            from checklist_eval.redact import terminal_console

            self.console = terminal_console(stderr=True)
            self.live = Live(console=self.console, auto_refresh=False, transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
        if self.live is not None:
            self.refresh()
            self.live.__exit__(*exc)

    def start_ticker(self) -> None:
        """Call inside the running event loop."""
        if self.live is not None:
            self._ticker = asyncio.ensure_future(self._tick())

    def eta(self) -> float | None:
        if self._first is None or self.total is None:
            return None
        since, done0 = self._first
        finished = self.done - done0
        if finished <= 0:
            return None
        return (time.monotonic() - since) / finished * (self.total - self.done)

    def parts(self) -> LineParts:
        if self.unit == "questions":
            self.total = self.assessor.questions_planned or None
            self.done = self.assessor.questions_done
            if self._first is None and self.total:
                self._first = (self.started, 0)
        return LineParts(self.done, self.total, self.unit, self.eta(), time.monotonic() - self.started,
                         spend_parts(self.assessor))

    def refresh(self) -> None:
        if self.live is None:
            return
        self.live.update(render_line(self.parts(), self.console.width), refresh=True)

    def event(self, kind: str, done: int, total: int, submission: str = "") -> None:
        """A batch's hook: ``done`` of ``total`` submissions; ``submission`` the one that just finished."""
        self.done, self.total = done, total
        if kind == "start":
            self._first = (time.monotonic(), done)
        self.refresh()
        if self.plain and kind != "start":
            from checklist_eval.redact import for_terminal  # a folder name may carry escape sequences

            outcome = "scored" if kind == "done" else "not scored (see failures.jsonl)"
            print(f"[{done}/{total}] {for_terminal(submission)}: {outcome}; eta {clock(self.eta())}", file=sys.stderr,
                  flush=True)

    async def _tick(self) -> None:
        while True:
            self.refresh()
            await asyncio.sleep(0.25)
