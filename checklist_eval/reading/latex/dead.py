"""Dead code: what TeX never reads. ``%`` comments, ``\\iffalse`` blocks, ``comment`` environments
and everything after ``\\endinput`` are removed per file, before any other reading."""

from __future__ import annotations

import bisect
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
# etoolbox/ifthen macros that look like TeX conditionals but take arguments and have no \fi, and
# amsmath's \iff (a relation). The engine tests (\ifpdf, \ifxetex, \ifluatex) are conditionals.
NOT_CONDITIONALS = re.compile(
    r"^if(?:thenelse|toggle|bool|str|blank|def(?!ined)|undef|cs(?!name)|num(?:comp|equal|odd|greater|less)"
    r"|dim(?:comp|equal|greater|less)|lang|empty|strequal|inlist|boolexpr|boolexpe|f$)"
)
# An \iffalse TeX reads as a conditional; \verb, \lstinline and verbatim-like environments are text
# to TeX where it reads them, so one inside them opens nothing (found first, and stepped over).
_IFFALSE = re.compile(
    r"(?P<unless>\\unless\s*|\\let\s*\\[a-zA-Z@]+\s*=?\s*|\\endcsname\s*=?\s*)?\\iffalse(?![a-zA-Z@])"
    r"|\\verb\*?([^a-zA-Z\s*])[^\n]*?\2"
    r"|\\lstinline\s*(?:\[[^\]\n]*\])?(?:\{[^{}\n]*\}|([^a-zA-Z\s{\[])[^\n]*?\3)"
    r"|\\begin\s*\{(?P<venv>verbatim|Verbatim|lstlisting|minted|comment)\*?\}")
_COMMENT_ENV = re.compile(r"\\begin\{comment\}.*?(?:\\end\{comment\}|\Z)", re.S)


def strip_comments(text: str) -> str:
    return _comment_cuts(text)[0]


def _comment_cuts(text: str) -> tuple[str, Kept]:
    """The text without its comments, and the map back (only removals: every kept character is the
    file's own, which is what lets a place in the live text be shown as a line of the file)."""
    if "%" not in text:
        return text, [(0, 0)]
    spans: list[tuple[int, int]] = []
    pos = 0
    unclosed: set[str] = set()  # environments with no end after some point: none after any later one
    while (m := _COMMENT_SCAN.search(text, pos)) is not None:
        spans.append((pos, m.start()))
        pos = m.end()
        if m.group("keep") is not None:
            spans.append(m.span("keep"))
        elif m.group("venv") is not None:
            end = None if m.group("venv") in unclosed else _VERBATIM_END[m.group("venv")].search(text, m.end())
            if end is None:  # never closed: an ordinary \begin, and the scan goes on after it
                unclosed.add(m.group("venv"))
                spans.append(m.span())
            else:
                spans.append((m.start(), end.end()))
                pos = end.end()
    spans.append((pos, len(text)))
    return joined(text, spans)


def strip_iffalse(text: str) -> str:
    """Drop ``\\iffalse ... \\fi`` (nested conditionals counted); an ``\\else`` branch stays live."""
    return _iffalse_cuts(text)[0]


def _iffalse_cuts(text: str) -> tuple[str, Kept]:
    out: list[tuple[int, int]] = []  # the live spans
    pos = 0
    while True:
        m = _IFFALSE.search(text, pos)
        while m and (m.group("unless") is not None or not m.group(0).endswith("iffalse")):
            # \unless\iffalse is TeX's \iftrue (left to ``conditionals``); verbatim text is stepped over
            venv = m.group("venv")
            closing = re.compile(rf"\\end\s*\{{{venv}\*?\}}").search(text, m.end()) if venv else None
            m = _IFFALSE.search(text, closing.end() if closing else m.end())
        if not m:
            out.append((pos, len(text)))
            return joined(text, out)
        out.append((pos, m.start()))
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
                out.append((c.end(), end[0]))
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
    return _dead_cuts(text)[0]


def _dead_cuts(text: str) -> tuple[str, list[Kept]]:
    text, kept = _comment_cuts(text)
    stages = [kept]
    if "\\iffalse" in text:
        text, kept = _iffalse_cuts(text)
        stages.append(kept)
    if "\\begin{comment}" in text:
        text, kept = _without(text, [m.span() for m in _COMMENT_ENV.finditer(text)])
        stages.append(kept)
    return text, stages


_ENDINPUT = re.compile(r"\\endinput(?![a-zA-Z@])")


def live_file(text: str) -> str:
    """One file as TeX reads it: dead code removed, and nothing after an ``\\endinput`` (TeX
    finishes that line and stops reading the file)."""
    return live_file_mapped(text).text


class LiveText:
    """A file's live text and where each of its characters stands in the file as written, so a
    place found in the live text can be shown as the line an author sees in their editor."""

    def __init__(self, text: str, stages: list[Kept]):
        self.text = text
        self._stages = stages  # innermost (comments) first

    def original_offset(self, pos: int) -> int:
        for kept in reversed(self._stages):
            pos = input_offset(kept, pos)
        return pos


def live_file_mapped(text: str) -> LiveText:
    live, stages = _dead_cuts(text)
    end = _ENDINPUT.search(live)
    if end is not None:
        line_end = live.find("\n", end.end())
        live, kept = joined(live, [(0, end.start()), (end.end(), line_end if line_end >= 0 else len(live))])
        stages.append(kept)
    return LiveText(live, stages)


# A stage's map: (start in its output, start in its input) of each piece it kept, in order.
Kept = list[tuple[int, int]]
_BIG = 1 << 62


def input_offset(kept: Kept, pos: int) -> int:
    """Where the character at ``pos`` of a stage's output stood in its input."""
    i = bisect.bisect_right(kept, (pos, _BIG)) - 1
    out_start, in_start = kept[max(i, 0)]
    return in_start + (pos - out_start)


def joined(text: str, spans: list[tuple[int, int]]) -> tuple[str, Kept]:
    """The text of ``spans`` (in order, not overlapping) put together, and the map back to ``text``."""
    kept: Kept = []
    parts = []
    out = 0
    for start, end in spans:
        if end > start:
            kept.append((out, start))
            parts.append(text[start:end])
            out += end - start
    return "".join(parts), kept or [(0, 0)]


def _without(text: str, removed: list[tuple[int, int]]) -> tuple[str, Kept]:
    spans = []
    pos = 0
    for start, end in removed:
        spans.append((pos, start))
        pos = end
    spans.append((pos, len(text)))
    return joined(text, spans)
