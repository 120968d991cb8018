"""The one validated type of every numeric flag: ``type=number("--max-cost", low=0)``.

A value that is not finite or out of range is refused while the command line is read, with one line
naming the flag and exit 2 (``UsageError``, which argparse lets through: it only turns ``ValueError``
and ``TypeError`` into a usage message). Text that is not a number at all stays argparse's usage error.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from checklist_eval.errors import UsageError
from checklist_eval.models import number_problem

__all__ = ["MAX_TIMEOUT_S", "number"]

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
