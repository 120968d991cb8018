"""Formula neutralisation for every CSV cell we write (OWASP's rule against CSV injection).

A text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is something a
spreadsheet may run as a formula (``=cmd|' /C calc'!A0``); written, it gets a leading ``'``, which
spreadsheets show as "text follows". Numbers are left alone (``-0.5`` is a number, not a formula),
so numeric columns stay numeric.

Reading our CSVs back must give the original text, so the rule is reversible: a cell that begins with
``'`` and then (after any further quotes) with one of those characters also gets the prefix on write,
and ``restore`` takes exactly one ``'`` off such cells on read. A cell like ``'tis`` is not touched
either way.
"""

from __future__ import annotations

import math
from typing import Any

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
PREFIX = "'"


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _needs_prefix(text: str) -> bool:
    rest = text.lstrip(PREFIX)
    quoted = len(rest) != len(text)
    return rest.startswith(TRIGGERS) and (quoted or not _is_number(text))


def neutralise(value: Any) -> Any:
    """A cell value safe for a spreadsheet; values that are not text are returned unchanged."""
    if isinstance(value, str) and value and _needs_prefix(value):
        return PREFIX + value
    return value


def restore(text: str) -> str:
    """The original text of a cell ``neutralise`` wrote."""
    if text.startswith(PREFIX) and _needs_prefix(text[1:]):
        return text[1:]
    return text
