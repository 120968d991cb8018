"""The live progress display of commands that call a model (``check``, ``score``, ``batch``).

One rich progress bar on stderr: units done of the total (questions for one paper or submission,
submissions for a batch) with the time left, and beside it what the run has spent so far: questions
judged, calls, retries, tokens and cost. It is off when stderr is not a terminal and when the command
is asked for quiet or JSON output; it reads the assessor's running counters four times a second.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from checklist_eval.assessors.base import Assessor


def wanted(assessor: Assessor, *, quiet: bool) -> bool:
    """On for model-calling runs on a terminal, unless asked for quiet (or machine-read) output."""
    return assessor.needs_network and not quiet and sys.stderr.isatty()


def stats_line(assessor) -> str:
    from checklist_eval.assessors.ledger import format_cost

    u = assessor.usage
    cost = format_cost(u)
    return (f"questions {assessor.questions_done}  calls {u.calls}  retries {getattr(assessor, 'retries', 0)}  "
            f"tokens {u.prompt_tokens:,}+{u.completion_tokens:,} ({u.cached_tokens:,} cached)  {cost}")


class RunProgress:
    """``with RunProgress(assessor, enabled, unit="questions") as p:`` then ``await``-free updates: a
    background ticker refreshes it. With ``unit="questions"`` the total follows the papers started."""

    def __init__(self, assessor, enabled: bool, *, unit: str = "questions"):
        self.assessor = assessor
        self.enabled = enabled
        self.unit = unit
        self.bar: Any = None  # a rich Progress once started; rich is imported only when shown
        self.task: Any = None
        self._ticker: asyncio.Task | None = None

    def __enter__(self) -> RunProgress:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            from checklist_eval.redact import terminal_console

            self.bar = Progress(
                TextColumn(self.unit), BarColumn(), MofNCompleteColumn(), TextColumn("eta"),
                TimeRemainingColumn(), TextColumn("{task.fields[stats]}"), TimeElapsedColumn(),
                console=terminal_console(stderr=True), transient=False,
            )
            self.bar.__enter__()
            self.task = self.bar.add_task(self.unit, total=None, stats="")
        return self

    def __exit__(self, *exc) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
        if self.bar is not None:
            self.refresh()
            self.bar.__exit__(*exc)

    def start_ticker(self) -> None:
        """Call inside the running event loop."""
        if self.bar is not None:
            self._ticker = asyncio.ensure_future(self._tick())

    def refresh(self) -> None:
        if self.bar is None:
            return
        fields: dict[str, Any] = {"stats": stats_line(self.assessor)}
        if self.unit == "questions":
            fields.update(total=self.assessor.questions_planned or None, completed=self.assessor.questions_done)
        self.bar.update(self.task, **fields)

    def event(self, kind: str, done: int, total: int) -> None:
        """A batch's hook: ``done`` of ``total`` submissions."""
        if self.bar is not None:
            self.bar.update(self.task, total=total, completed=done)
            self.refresh()

    async def _tick(self) -> None:
        while True:
            self.refresh()
            await asyncio.sleep(0.25)
