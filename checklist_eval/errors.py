"""Errors a user can act on. The CLI prints ``str(err)`` as one line and exits 2; no traceback.

Everything the library raises on purpose derives from ``ChecklistEvalError``, so a caller embedding the
library catches one class; anything else escaping is a bug of ours.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checklist_eval.models import Usage


class ChecklistEvalError(Exception):
    """The root of every error the library raises on purpose."""


class InputError(ChecklistEvalError):
    """Bad input: the message names the file and the problem, on one line."""

    def __init__(self, path: str | Path | None, problem: str):
        self.path = str(path) if path is not None else None
        self.problem = " ".join(str(problem).split())
        super().__init__(f"{self.path}: {self.problem}" if self.path else self.problem)


class ArchiveError(InputError):
    """An archive that cannot be read as it claims to be (corrupt, truncated, unsupported)."""


class UnsafeArchiveError(ArchiveError):
    """An archive that tries to escape its folder, hides links, or inflates past the limits."""


class NoChecklistError(InputError):
    """The document parsed, but no live checklist was found in it."""


class UsageError(ChecklistEvalError):
    """Flags or settings that contradict each other or name nothing usable; the message says which."""


class ScoringError(ChecklistEvalError, ValueError):
    """Records that cannot be scored (no G, A without T...); callers add the file name."""


class AssessorError(ChecklistEvalError):
    """An assessor call that cannot succeed by retrying (bad key, context too long, bad model).

    What a caller needs to act on or account for travels as attributes, never parsed out of the text:
    ``endpoint`` is host[:port]/path (never a key), ``status`` the HTTP status when there was one,
    ``attempts`` the calls made, ``usage`` what they cost (failed attempts included)."""

    def __init__(self, message: str, *, endpoint: str | None = None, model: str | None = None,
                 status: int | None = None, attempts: int = 0, usage: Usage | None = None):
        super().__init__(message)
        self.endpoint = endpoint
        self.model = model
        self.status = status
        self.attempts = attempts
        self.usage = usage


EXIT_BUDGET = 3  # the exit code of a run stopped by --max-cost (2 is bad input, 1 an internal error)
EXIT_SOME_FAILED = 4  # a batch that ran to its end but could not score some submissions (failures.jsonl)


class BudgetExceeded(ChecklistEvalError):
    """The next model call would take the run's spending past ``--max-cost``. Everything answered so far
    is in the cache, so the same command with a higher cap resumes without repeating a call.

    ``describe`` is called when the error is shown, so the message states what was finally spent once
    the requests already in flight have finished, not what was spent when the first one was refused."""

    def __init__(self, describe: Callable[[], str]):
        super().__init__()
        self.describe = describe

    def __str__(self) -> str:
        return self.describe()
