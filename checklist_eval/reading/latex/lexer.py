"""Scanning LaTeX source: brace groups, optional arguments, environments and macro arguments.

Every brace-aware walk goes through :func:`scan_level`: it steps over escaped characters (``\\{`` is
not a group) and counts brace depth, and its caller says which token ends the walk.
"""

from __future__ import annotations

import re

# A token of a brace-aware walk, per what ends it: escapes are always stepped over whole.
_LEVEL_TOKENS = {
    "}": re.compile(r"\\.|[{}]", re.S),  # the close of the group the walk starts in
    "]": re.compile(r"\\.|[{}\]]", re.S),  # a "]" outside any group opened during the walk
    "par": re.compile(r"\\.|[{}]|\n(?=\n)", re.S),  # the group's close, or a paragraph break in it
}


def scan_level(text: str, start: int, until: str, *, end: int | None = None, par_after: int = 0) -> int:
    """Index of the token that ends a walk begun at ``start`` at brace depth 0, or -1.

    ``until`` is ``"}"`` (a "}" that closes the level), ``"]"`` (a "]" at depth 0 or below: a stray
    "}" does not stop an optional argument) or ``"par"`` (a closing "}", or a blank line at depth 0
    more than ``par_after`` characters from ``start``). The walk stops at ``end``.
    """
    depth = 0
    for m in _LEVEL_TOKENS[until].finditer(text, start, len(text) if end is None else end):
        tok = m.group()
        if tok == "{":
            depth += 1
        elif tok == "}":
            if depth == 0 and until != "]":
                return m.start()
            depth -= 1
        elif tok == "]":
            if depth <= 0:
                return m.start()
        elif tok == "\n" and depth == 0 and m.start() - start > par_after:
            return m.start()
    return -1


# Scanning a long text brace by brace for every group in it is quadratic when groups never close
# (one unclosed "{" per answer): long texts get every group's end from one pass, kept for the few
# texts most recently asked about (the same document is asked about many times in a row).
_TABLE_MIN_CHARS = 4096
_group_tables: list[tuple[str, dict[int, int]]] = []


def _group_table(text: str) -> dict[int, int]:
    for cached, cached_table in _group_tables:
        if cached is text:
            return cached_table
    table: dict[int, int] = {}
    stack: list[int] = []
    for m in _LEVEL_TOKENS["}"].finditer(text):
        tok = m.group(0)
        if tok == "{":
            stack.append(m.start())
        elif tok == "}" and stack:
            table[stack.pop()] = m.end()
    _group_tables.insert(0, (text, table))
    del _group_tables[4:]
    return table


def clear_group_tables() -> None:
    _group_tables.clear()


def _scan_group_close(text: str, start: int) -> int:
    close = scan_level(text, start + 1, "}")
    return -1 if close < 0 else close + 1


def group_close(text: str, start: int) -> int:
    """Index just past the brace group opening at ``text[start] == '{'``, or -1 when it never closes."""
    if len(text) < _TABLE_MIN_CHARS:
        return _scan_group_close(text, start)
    end = _group_table(text).get(start)
    if end is None and start > 0 and text[start - 1] == "\\":
        return _scan_group_close(text, start)  # an escaped brace, which the table skips
    return -1 if end is None else end


def group_end(text: str, start: int) -> int:
    """Index just past the brace group opening at ``text[start] == '{'`` (end of text if unbalanced)."""
    end = group_close(text, start)
    return len(text) if end < 0 else end


# An optional argument is short; a "[" with no "]" this close is read as a literal bracket rather
# than scanning the rest of the document for every one of them.
MAX_OPTIONAL_ARG_CHARS = 10_000


def bracket_end(text: str, start: int) -> int:
    """Index just past an optional argument ``[...]`` opening at ``start`` (braces respected); just
    past the "[" when no "]" closes it within ``MAX_OPTIONAL_ARG_CHARS``."""
    limit = min(len(text), start + MAX_OPTIONAL_ARG_CHARS)
    close = scan_level(text, start + 1, "]", end=limit)
    if close >= 0:
        return close + 1
    return limit if limit == len(text) else start + 1


# A declaration outside any group acts to the next paragraph break, once it has covered this many
# characters (a short span before a blank line is layout, not the end of the declaration's reach).
_DECLARATION_MIN_CHARS = 400


def declaration_end(text: str, pos: int, limit: int | None = None) -> int:
    """Where a declaration at ``pos`` (``\\color{white}``, ``\\tiny``) stops acting: the close of the
    group it sits in, or, outside any group, a paragraph break once the span is long enough to matter;
    at most ``limit`` (a caller reading only the start of the span says so, and the scan stops there)."""
    stop = len(text) if limit is None else min(len(text), limit)
    end = scan_level(text, pos, "par", end=stop, par_after=_DECLARATION_MIN_CHARS)
    return stop if end < 0 else end


ENV_TOKEN = re.compile(r"\\(begin|end)\s*\{([^{}]+)\}")


def env_end(text: str, start: int) -> int:
    """Index just past the ``\\end`` matching the ``\\begin`` at ``start``."""
    depth = 0
    for m in ENV_TOKEN.finditer(text, start):
        depth += 1 if m.group(1) == "begin" else -1
        if depth == 0:
            return m.end()
    return len(text)


def skip_space(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in " \t\n":
        i += 1
    return i


_CONTROL_SEQUENCE = re.compile(r"\\(?:[a-zA-Z@]+|.)")


def read_args(text: str, i: int, spec: str) -> tuple[list[str | None], int]:
    """Read arguments after a macro: ``spec`` has one letter per argument, ``o`` optional
    ``[...]`` and ``m`` mandatory ``{...}`` (a lone token also counts, as in TeX)."""
    args: list[str | None] = []
    for kind in spec:
        arg, i = _read_optional(text, i) if kind == "o" else _read_mandatory(text, i)
        args.append(arg)
    return args, i


def _read_optional(text: str, i: int) -> tuple[str | None, int]:
    j = skip_space(text, i)
    if j < len(text) and text[j] == "[":
        end = bracket_end(text, j)
        return text[j + 1 : end - 1], end
    return None, i


def _read_mandatory(text: str, i: int) -> tuple[str, int]:
    j = skip_space(text, i)
    n = len(text)
    if j < n and text[j] == "{":
        end = group_close(text, j)
        if end < 0:
            # Never closed (TeX stops with a runaway argument): an empty argument, and the text after
            # the brace is read in place. Taking the rest of the document as the argument made every
            # such macro read the rest again, one level deeper each time.
            return "", j + 1
        return text[j + 1 : end - 1], end
    if j < n and text[j] == "\\":
        m = _CONTROL_SEQUENCE.match(text, j)
        return (m.group(0), m.end()) if m else ("", j + 1)
    if j < n:
        return text[j], j + 1
    return "", i


def squash(text: str) -> str:
    """Runs of whitespace as one space, ends trimmed."""
    return re.sub(r"\s+", " ", text).strip()
