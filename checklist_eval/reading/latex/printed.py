"""The document as TeX prints it where the source decides: the ``comment`` package's excluded
environments dropped, TeX's conditionals read (``conditionals``), package conditionals (etoolbox's
``\\iftoggle``/``\\ifbool``, ifthen's ``\\ifthenelse``) read as their first branch with a warning, and
``\\answerYes`` and its siblings read as what their ``\\let``/``\\renewcommand``/``\\def`` in the file
makes them print. Each step keeps the map back to the text as written, so a place found in what is
printed is shown as the line of the file that holds it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from checklist_eval.models import Answer, ParseWarning, WarningKind, normalize_answer
from checklist_eval.reading.latex.conditionals import Where, resolve_conditionals
from checklist_eval.reading.latex.dead import Kept, input_offset, joined
from checklist_eval.reading.latex.lexer import group_end

_EXCLUDED = re.compile(r"\\excludecomment\s*\{\s*([a-zA-Z@*]+)\s*\}")
_ANSWER_MARK = re.compile(r"\\answer(?:Yes|No|NA|TODO)(?![a-zA-Z@])|\[\s*(?:Yes|No|NA|N/A|TODO)\s*\]")
# Verbatim-like text, where a package conditional's name is text, not a command.
_OPAQUE = re.compile(r"\\verb\*?([^a-zA-Z\s*])[^\n]*?\1"
                     r"|\\begin\s*\{(verbatim|Verbatim|lstlisting|minted|comment)\*?\}.*?\\end\s*\{\2\*?\}", re.S)


@dataclass
class Printed:
    """What TeX prints of a text, and where each of its characters is in the text as written."""

    text: str
    stages: list[Kept]
    warnings: list[ParseWarning]

    def written_offset(self, pos: int) -> int:
        for kept in reversed(self.stages):
            pos = input_offset(kept, pos)
        return pos


def what_tex_prints(text: str, where: Where | None = None) -> Printed:
    """The document as TeX prints it where the source decides (see the module's docstring);
    ``where`` names the file and line of a position in ``text``, for the warnings."""
    stages: list[Kept] = []
    if "\\excludecomment" in text:
        text, kept = drop_excluded_comments(text)
        stages.append(kept)
    first = Printed(text, list(stages), [])
    text, kept, warnings = resolve_conditionals(text, where and (lambda p: where(first.written_offset(p))))
    stages.append(kept)
    mapped = Printed(text, list(stages), [])
    text, kept, more = first_branches(text, where and (lambda p: where(mapped.written_offset(p))))
    stages.append(kept)
    branches = Printed(text, list(stages), [])
    text, kept, redefined = follow_answer_macros(text, where and (lambda p: where(branches.written_offset(p))))
    stages.append(kept)
    return Printed(text, stages, warnings + more + redefined)


# --- environments the comment package drops --------------------------------------------------------


def drop_excluded_comments(text: str) -> tuple[str, Kept]:
    """``\\begin{NAME}...\\end{NAME}`` removed for each NAME the file passes to ``\\excludecomment``."""
    removed = []
    for name in set(_EXCLUDED.findall(text)):
        begin, end = f"\\begin{{{name}}}", f"\\end{{{name}}}"
        pos = 0
        while (start := text.find(begin, pos)) >= 0:
            stop = text.find(end, start)
            pos = len(text) if stop < 0 else stop + len(end)
            removed.append((start, pos))
    spans, pos = [], 0
    for start, stop in sorted(removed):
        if start >= pos:
            spans.append((pos, start))
            pos = stop
    spans.append((pos, len(text)))
    return joined(text, spans)


# --- package conditionals: macros with a true and a false branch ------------------------------------

# name: how many arguments come before the two branches
_PACKAGE_CONDITIONALS = {
    "iftoggle": 1, "nottoggle": 1, "ifbool": 1, "notbool": 1, "ifthenelse": 1, "ifboolexpr": 1, "ifboolexpe": 1,
    "ifdef": 1, "ifundef": 1, "ifcsdef": 1, "ifcsundef": 1, "ifdefmacro": 1, "ifcsmacro": 1, "ifdefempty": 1,
    "ifcsempty": 1, "ifdefvoid": 1, "ifcsvoid": 1, "ifblank": 1, "ifstrempty": 1, "ifnumodd": 1,
    "ifstrequal": 2, "ifdefstring": 2, "ifcsstring": 2, "ifdefequal": 2, "ifcsequal": 2, "ifnumequal": 2,
    "ifnumgreater": 2, "ifnumless": 2, "ifdimequal": 2, "ifdimgreater": 2, "ifdimless": 2,
    "ifnumcomp": 3, "ifdimcomp": 3,
}
_PACKAGE = re.compile(r"\\(" + "|".join(sorted(_PACKAGE_CONDITIONALS, key=len, reverse=True)) + r")(?![a-zA-Z@])")
_ARG_TOKEN = re.compile(r"\s*(?:\{|\\[a-zA-Z@]+|\\.|[^\s{}])")


def _argument(text: str, pos: int) -> tuple[int, int, int] | None:
    """A macro argument at ``pos``: (start, inner start, end); a brace group or one token, as in TeX."""
    m = _ARG_TOKEN.match(text, pos)
    if m is None:
        return None
    if text[m.end() - 1] == "{" and not m.group(0).endswith("\\{"):
        return m.end() - 1, m.end(), group_end(text, m.end() - 1)
    return m.end() - len(m.group(0).lstrip()), m.end() - len(m.group(0).lstrip()), m.end()


def first_branches(text: str, where: Where | None = None) -> tuple[str, Kept, list[ParseWarning]]:
    """Each package conditional holding an answer read as its first branch, with an undecided warning:
    what it tests (a toggle, a boolean, a string) is set by commands this reader does not follow. One
    holding no answer is left as written."""
    if not _PACKAGE.search(text):
        return text, [(0, 0)], []
    opaque = [m.span() for m in _OPAQUE.finditer(text)]
    answers = [m.start() for m in _ANSWER_MARK.finditer(text, max(text.find("\\begin{document}"), 0))]
    cuts: list[tuple[int, int]] = []
    warnings = []
    dropped: list[tuple[int, int]] = []  # second branches: what they hold is never read
    for m in _PACKAGE.finditer(text):
        dropped = [d for d in dropped if d[1] > m.start()]
        if any(a <= m.start() < b for a, b in dropped + opaque):
            continue
        args, pos = [], m.end()
        for _ in range(_PACKAGE_CONDITIONALS[m.group(1)] + 2):
            arg = _argument(text, pos)
            if arg is None:
                break
            args.append(arg)
            pos = arg[2]
        if len(args) < _PACKAGE_CONDITIONALS[m.group(1)] + 2:
            continue
        (_, first_in, first_end), (_, _, second_end) = args[-2], args[-1]
        if not any(m.start() <= a < second_end for a in answers):
            continue  # no answer inside: both branches' text stays, as written (the body's evidence whole)
        braced = args[-2][0] < first_in
        first_inner_end = first_end - 1 if braced and text[first_end - 1] == "}" else first_end
        cuts += [(m.start(), first_in), (first_inner_end, second_end)]
        dropped.append((first_inner_end, second_end))
        line = f" at {where(m.start())}" if where else ""
        warnings.append(ParseWarning(
            kind=WarningKind.UNDECIDED, location=f"\\{m.group(1)}{line}",
            message=f"an answer inside \\{m.group(1)}{line}, a package conditional this reader does not "
                    "evaluate: read as its first branch, the PDF may show the other"))
    return (*_cut(text, cuts), warnings)


def _cut(text: str, cuts: list[tuple[int, int]]) -> tuple[str, Kept]:
    """``text`` without the cut spans; a cut inside one already made is part of it."""
    spans, pos = [], 0
    for start, end in sorted(cuts):
        if start < pos:
            pos = max(pos, end)
            continue
        spans.append((pos, start))
        pos = end
    spans.append((pos, len(text)))
    return joined(text, spans)


# --- answer macros redefined --------------------------------------------------------------------------

_ANSWER_NAMES = ("Yes", "No", "NA", "TODO")
_ANSWER_DEF = re.compile(
    r"\\(?P<how>let|[gex]?def|(?:re)?newcommand\*?|providecommand\*?|DeclareRobustCommand\*?)\s*\{?\s*"
    r"\\answer(?P<name>Yes|No|NA|TODO)(?![a-zA-Z@])\s*\}?")
_LET_TARGET = re.compile(r"\s*=?\s*\\answer(Yes|No|NA|TODO)(?![a-zA-Z@])")
_PRINTED = re.compile(r"\[\s*(Yes|No|NA|N/A|TODO)\s*\]|\\answer(Yes|No|NA|TODO)(?![a-zA-Z@])")
_DEF_BODY = re.compile(r"(?:\s*\[[^\]]{0,20}\])*\s*(?:#\d\s*)*\{")


@dataclass
class _Meaning:
    answer: Answer | None  # None: what it prints cannot be read from the source
    where: int  # the end of the (last) definition
    start: int = -1  # where the (last) definition begins


def _body(text: str, pos: int) -> str | None:
    """The replacement text of a definition whose name ends at ``pos``: its first brace group after
    the optional ``[n][default]`` and ``#1`` parameters."""
    m = _DEF_BODY.match(text, pos)
    if m is None:
        return None
    close = group_end(text, m.end() - 1)
    return text[m.end() : close - 1] if close > m.end() else None


def _printed_by(body: str | None, current: dict[str, _Meaning]) -> Answer | None:
    if body is None:
        return None
    found = set()
    for m in _PRINTED.finditer(body):
        if m.group(1):
            found.add(normalize_answer(m.group(1)))
        else:
            found.add(current[m.group(2)].answer)
    return found.pop() if len(found) == 1 else None


def follow_answer_macros(text: str, where: Where | None = None) -> tuple[str, Kept, list[ParseWarning]]:
    """The text with each answer macro used after its last definition replaced by the one it prints
    (``\\let\\answerYes\\answerNo`` makes every later ``\\answerYes`` a No), the map back (a replaced
    macro maps to where it was written), and a warning for each macro the file redefines to print
    something the source does not decide."""
    current = {n: _Meaning(Answer(n), -1) for n in _ANSWER_NAMES}
    for m in _ANSWER_DEF.finditer(text):
        name = m.group("name")
        if m.group("how") == "let":
            target = _LET_TARGET.match(text, m.end())
            answer = current[target.group(1)].answer if target else None
        else:
            answer = _printed_by(_body(text, m.end()), current)
        current[name] = _Meaning(answer, m.end(), m.start())
    changed = {n: p for n, p in current.items() if p.answer != Answer(n)}
    warnings = []
    for n, p in changed.items():
        if p.answer is None:
            line = f" at {where(p.start)}" if where else ""
            warnings.append(ParseWarning(kind=WarningKind.UNDECIDED, location=f"\\answer{n}{line}",
                                         message=f"\\answer{n} is redefined{line} to print what the source does not "
                                                 "decide; read as written"))
    known = {n: p.answer for n, p in changed.items() if p.answer is not None}
    if not known:
        return text, [(0, 0)], warnings
    start = max(p.where for p in changed.values())
    use = re.compile(r"\\answer(" + "|".join(known) + r")(?![a-zA-Z@])")
    return (*_replaced(text, start, use, lambda name: f"\\answer{known[name].value}"), warnings)


def _replaced(text: str, start: int, use: re.Pattern[str], new: Callable[[str], str]) -> tuple[str, Kept]:
    """``text`` with each match of ``use`` after ``start`` replaced; each replacement maps back to the
    macro it replaces."""
    parts, kept, out, pos = [], [], 0, 0
    for m in use.finditer(text, start):
        for piece, origin in ((text[pos : m.start()], pos), (new(m.group(1)), m.start())):
            kept.append((out, origin))
            parts.append(piece)
            out += len(piece)
        pos = m.end()
    kept.append((out, pos))
    parts.append(text[pos:])
    return "".join(parts), kept


def faithful_answer_definitions(text: str) -> bool:
    """Whether every mention of an answer macro in ``text`` (a style file) is a definition that prints
    that macro's own answer, as the venues' styles define them (``\\answerNA`` printing "[N/A]")."""
    mentions = len(re.findall(r"\\answer(?:Yes|No|NA|TODO)(?![a-zA-Z@])|answer(?:Yes|No|NA|TODO)(?![a-zA-Z@])", text))
    own = {n: _Meaning(Answer(n), -1) for n in _ANSWER_NAMES}
    definitions = 0
    for m in _ANSWER_DEF.finditer(text):
        if m.group("how") == "let" or _printed_by(_body(text, m.end()), own) != Answer(m.group("name")):
            return False
        definitions += 1
    return definitions == mentions
