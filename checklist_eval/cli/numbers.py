"""The one validated type of every numeric flag: ``type=number("--max-cost", low=0)``, or
``type=number_list("--ci", ...)`` for a comma list of numbers. ``guard_numeric_flags`` gives every flag
still declared with a bare ``type=float`` or ``type=int`` the same check (finite), so no command can
forget it.

A value that is not finite or out of range is refused while the command line is read, with one line
naming the flag and exit 2 (``UsageError``, which argparse lets through: it only turns ``ValueError``
and ``TypeError`` into a usage message). Text that is not a number at all stays argparse's usage error.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from checklist_eval.errors import UsageError
from checklist_eval.models import number_problem

__all__ = ["CI_LEVELS", "MAX_TIMEOUT_S", "PORT", "guard_numeric_flags", "number", "number_list"]

MAX_INT_FLAG = 2**63 - 1  # what an endpoint or a seed field (int64) can hold
MAX_TIMEOUT_S = 7 * 86400  # a week: any longer deadline is a typo


def number(flag: str, *, kind: type = float, low: float | None = None, high: float | None = None,
           low_open: bool = False) -> Callable[[str], float | int]:
    """An argparse ``type`` reading ``flag``'s value as ``kind`` (int or float) within [low, high]
    (``low_open``: above low)."""
    top = high if high is not None else (MAX_INT_FLAG if kind is int else None)

    def convert(text: str) -> float | int:
        value = kind(text)  # ValueError: argparse's "invalid float value" usage error
        try:
            as_float = float(value)
        except OverflowError:  # an int of hundreds of digits
            as_float = math.inf
        problem = number_problem(as_float, low=low, high=top, low_open=low_open)
        if problem is not None:
            raise UsageError(f"{flag} {text[:40]}: {problem}")
        return value

    convert.__name__ = kind.__name__  # argparse names the type in its "invalid ... value" message
    return convert


def number_list(flag: str, *, low: float | None = None, high: float | None = None, low_open: bool = False,
                suffix: str = "") -> Callable[[str], str]:
    """An argparse ``type`` for a comma list of numbers (``--ci 0.90,95%``): each item, without an optional
    ``suffix``, finite and within [low, high]; the text is returned as given for the command to read."""
    def convert(text: str) -> str:
        for item in (x.strip().removesuffix(suffix).strip() for x in text.split(",")):
            try:
                value = float(item) if item else None
            except ValueError:
                raise UsageError(f"{flag} {text[:40]}: {item[:40]!r} is not a number") from None
            problem = None if value is None else number_problem(value, low=low, high=high, low_open=low_open)
            if problem is not None:
                raise UsageError(f"{flag} {text[:40]}: {problem}")
        return text

    convert.__name__ = "list of numbers"
    return convert


def guard_numeric_flags(parser: argparse.ArgumentParser) -> None:
    """Every flag of ``parser`` and its subcommands declared with a bare ``type=float`` or ``type=int``
    takes the ``number`` check instead (finite; an int within what int64 holds)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                guard_numeric_flags(sub)
        elif action.type in (float, int) and action.option_strings:
            action.type = number(action.option_strings[-1], kind=action.type)


# ``--ci 0.95``, ``--ci 95``, ``--ci 90%,0.99``: interval levels (which ones exist is the command's to say).
CI_LEVELS = number_list("--ci", low=0, low_open=True, high=100, suffix="%")

# ``--port``: a TCP port, 0 for one the system picks (above 65535 the socket refuses with OverflowError).
PORT = number("--port", kind=int, low=0, high=65535)
