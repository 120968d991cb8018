"""Dead code: what TeX never reads. ``%`` comments, ``\\iffalse`` blocks, ``comment`` environments
and everything after ``\\endinput`` are removed per file, before any other reading."""

from __future__ import annotations

import re

# One pass finds, in order: things in which % is literal (\url, \href's URL, \verb, verbatim
# environments), escaped percent signs, and comments. A comment also eats the line end and the next
# line's indentation, as TeX does, unless the next line is blank (that blank line is still a \par).
# \verb ends on its line, as in TeX; a verbatim environment's end is looked for separately (below).
_COMMENT_SCAN = re.compile(
    r"(?P<keep>\\(?:url|href)\s*\{[^{}\n]*\}"
    r"|\\verb\*?(?P<d>[^a-zA-Z\s*])[^\n]*?(?P=d)"
    r"|\\\\|\\%)"
    r"|\\begin\{(?P<venv>verbatim|lstlisting|minted)\*?\}"
    r"|%[^\n]*(?:\n[ \t]*(?!\n))?",
)
_VERBATIM_END = {name: re.compile(rf"\\end\{{{name}\*?\}}") for name in ("verbatim", "lstlisting", "minted")}
CONDITIONAL = re.compile(r"\\(?:(?P<open>if[a-zA-Z@]*)|(?P<fi>fi)|(?P<else>else))(?![a-zA-Z@])")
# etoolbox/ifthen macros that look like TeX conditionals but take arguments and have no \fi.
NOT_CONDITIONALS = re.compile(
    r"^if(?:thenelse|toggle|bool|str|blank|def(?!ined)|undef|cs(?!name)|num(?:comp|equal|odd)"
    r"|dim(?:comp|equal)|lang|pdf(?:tex)?$|xetex$|luatex$|empty|strequal|inlist|boolexpr)"
)
_IFFALSE = re.compile(r"\\iffalse(?![a-zA-Z@])")
_COMMENT_ENV = re.compile(r"\\begin\{comment\}.*?(?:\\end\{comment\}|\Z)", re.S)


def strip_comments(text: str) -> str:
    if "%" not in text:
        return text
    out: list[str] = []
    pos = 0
    unclosed: set[str] = set()  # environments with no end after some point: none after any later one
    while (m := _COMMENT_SCAN.search(text, pos)) is not None:
        out.append(text[pos : m.start()])
        pos = m.end()
        if m.group("keep") is not None:
            out.append(m.group("keep"))
        elif m.group("venv") is not None:
            end = None if m.group("venv") in unclosed else _VERBATIM_END[m.group("venv")].search(text, m.end())
            if end is None:  # never closed: an ordinary \begin, and the scan goes on after it
                unclosed.add(m.group("venv"))
                out.append(m.group(0))
            else:
                out.append(text[m.start() : end.end()])
                pos = end.end()
    out.append(text[pos:])
    return "".join(out)


def strip_iffalse(text: str) -> str:
    """Drop ``\\iffalse ... \\fi`` (nested conditionals counted); an ``\\else`` branch stays live."""
    out = []
    pos = 0
    while True:
        m = _IFFALSE.search(text, pos)
        if not m:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos : m.start()])
        depth = 0
        scan = m.end()
        resume = len(text)
        while True:
            c = CONDITIONAL.search(text, scan)
            if not c:
                break
            scan = c.end()
            if c.group("open"):
                name = c.group("open")
                prev = text[max(0, c.start() - 8) : c.start()]
                if NOT_CONDITIONALS.match(name) or prev.endswith("\\newif"):
                    continue
                depth += 1
            elif c.group("fi"):
                if depth == 0:
                    resume = c.end()
                    break
                depth -= 1
            elif depth == 0:  # \else of our \iffalse: what follows up to \fi is live
                end = _matching_fi(text, c.end())
                out.append(text[c.end() : end[0]])
                resume = end[1]
                break
        pos = resume


def _matching_fi(text: str, pos: int) -> tuple[int, int]:
    depth = 0
    for c in CONDITIONAL.finditer(text, pos):
        if c.group("open"):
            if NOT_CONDITIONALS.match(c.group("open")):
                continue
            depth += 1
        elif c.group("fi"):
            if depth == 0:
                return c.start(), c.end()
            depth -= 1
    return len(text), len(text)


def strip_dead(text: str) -> str:
    """The live part of one file: ``%`` comments, ``\\iffalse`` blocks and ``comment`` environments
    removed. Comments go first so that a commented-out ``% \\iffalse`` does not start a dead block."""
    text = strip_comments(text)
    if "\\iffalse" in text:
        text = strip_iffalse(text)
    if "\\begin{comment}" in text:
        text = _COMMENT_ENV.sub("", text)
    return text


_ENDINPUT = re.compile(r"\\endinput(?![a-zA-Z@])")


def live_file(text: str) -> str:
    """One file as TeX reads it: dead code removed, and nothing after an ``\\endinput`` (TeX
    finishes that line and stops reading the file)."""
    live = strip_dead(text)
    end = _ENDINPUT.search(live)
    if end is not None:
        line_end = live.find("\n", end.end())
        live = live[: end.start()] + (live[end.end() : line_end] if line_end >= 0 else live[end.end() :])
    return live
