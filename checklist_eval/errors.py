"""Errors a user can act on. The CLI prints ``str(err)`` as one line and exits 2; no traceback."""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """Bad input: the message names the file and the problem, on one line."""

    def __init__(self, path: str | Path | None, problem: str):
        self.path = str(path) if path is not None else None
        self.problem = " ".join(str(problem).split())
        super().__init__(f"{self.path}: {self.problem}" if self.path else self.problem)


class UnsafeArchiveError(InputError):
    """An archive that tries to escape its folder, hides links, or inflates past the limits."""


class NoChecklistError(InputError):
    """The document parsed, but no live checklist was found in it."""


class AssessorError(Exception):
    """An assessor call that cannot succeed by retrying (bad key, context too long, bad model)."""


EXIT_BUDGET = 3  # the exit code of a run stopped by --max-cost (2 is bad input, 1 an internal error)


class BudgetExceeded(Exception):
    """The next model call would take the run's spending past ``--max-cost``. Everything answered so far
    is in the cache, so the same command with a higher cap resumes without repeating a call.

    ``describe`` is called when the error is shown, so the message states what was finally spent once
    the requests already in flight have finished, not what was spent when the first one was refused."""

    def __init__(self, describe):
        super().__init__()
        self.describe = describe

    def __str__(self) -> str:
        return self.describe()
