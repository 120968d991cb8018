"""What TeX prints, where the source alone decides it: conditionals and redefined answer macros.

An answer inside ``\\if01 ... \\else ... \\fi`` or a ``\\newif`` switch the file sets is not what a
reader of the PDF sees if it is read as written. Here the conditionals TeX would evaluate from the
source are evaluated (``\\iftrue``/``\\iffalse``, ``\\if``/``\\ifx`` on two characters or one token
twice, ``\\ifnum``/``\\ifodd`` on literals, ``\\newif`` switches set the same way wherever the file sets
them, ``\\ifdefined``/``\\ifcsname``/``\\ifx\\x\\undefined`` of a command the file defines), the
``comment`` package's ``\\excludecomment`` environments are removed, and ``\\answerYes`` and its
siblings are read as what their ``\\let``/``\\renewcommand``/``\\def`` in the file makes them print.

Where the source does not decide (a switch set both ways, a command defined by a package, a macro
redefined to print something else), the text is read as written and a ``WarningKind.UNDECIDED``
warning names the conditional or the macro, so the report and the records say the answer may not
be what the PDF shows. One pass over the conditionals with a stack: linear in the text.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from checklist_eval.models import Answer, ParseWarning, WarningKind, normalize_answer
from checklist_eval.reading.latex.dead import CONDITIONAL as _COND
from checklist_eval.reading.latex.dead import NOT_CONDITIONALS as _NOT_CONDITIONALS

_NEWIF = re.compile(r"\\newif\s*\\if([a-zA-Z@]+)")
_SETTING = re.compile(r"\\([a-zA-Z@]+?)(true|false)(?![a-zA-Z@])")
_DEFINED = re.compile(
    r"\\(?:[gex]?def|let|(?:re)?newcommand\*?|providecommand\*?|DeclareRobustCommand\*?|NewDocumentCommand"
    r"|DeclareMathOperator\*?|newenvironment)\s*\{?\s*\\([a-zA-Z@]+)")
_NUMBER = r"\s*(-?\s*\d+)\s*"
_IFNUM = re.compile(_NUMBER + r"([<=>])" + _NUMBER + r"(?!\d)")
_IFODD = re.compile(_NUMBER + r"(?!\d)")
_TOKEN = re.compile(r"\s*(\\[a-zA-Z@]+|\\.|[^\s\\{}])")
_CSNAME = re.compile(r"\s*([a-zA-Z@]+)\s*\\endcsname")
_ANSWER_MARK = re.compile(r"\\answer(?:Yes|No|NA|TODO)(?![a-zA-Z@])|\[\s*(?:Yes|No|NA|N/A|TODO)\s*\]")
_EXCLUDED = re.compile(r"\\excludecomment\s*\{\s*([a-zA-Z@*]+)\s*\}")


@dataclass
class _Frame:
    value: bool | None  # None: undecided, both branches read
    start: int  # where the conditional begins in the input
    name: str
    in_else: bool = False

    @property
    def dead(self) -> bool:
        return self.value is not None and self.value == self.in_else


class _Document:
    """What the file itself says about its switches and commands, read once."""

    def __init__(self, text: str):
        settings: dict[str, set[bool]] = {name: set() for name in _NEWIF.findall(text)}
        if settings:
            for m in _SETTING.finditer(text):
                if m.group(1) in settings:
                    settings[m.group(1)].add(m.group(2) == "true")
        # A switch set one way wherever the file sets it (or never set: \newif starts it false) is
        # decided; one set both ways depends on the order TeX meets them, which the source alone
        # cannot tell (a definition may set it when used, not where written).
        self.switches = {name: (next(iter(v)) if v else False) for name, v in settings.items() if len(v) <= 1}
        self.undecided_switches = {name for name, v in settings.items() if len(v) > 1}
        self.defined = set(_DEFINED.findall(text)) | {f"if{name}" for name in settings}
        begin = text.find("\\begin{document}")
        self.answers = [m.start() for m in _ANSWER_MARK.finditer(text, max(begin, 0))]


def _token(text: str, pos: int) -> tuple[str | None, int]:
    m = _TOKEN.match(text, pos)
    return (m.group(1), m.end()) if m else (None, pos)


def _evaluate(name: str, text: str, pos: int, doc: _Document) -> tuple[bool | None, int]:
    """The value of conditional ``\\name`` whose test starts at ``pos`` and where its test ends; None
    when the source does not decide it (the test is then left in the text)."""
    if name in ("iftrue", "iffalse"):
        return name == "iftrue", pos
    if name[2:] in doc.switches:
        return doc.switches[name[2:]], pos
    if name in ("if", "ifx"):
        first, after = _token(text, pos)
        second, end = _token(text, after)
        if first is None or second is None:
            return None, pos
        if name == "ifx" and second in ("\\undefined", "\\@undefined") and first.startswith("\\"):
            return (False, end) if first[1:] in doc.defined else (None, pos)
        if first == second:
            return True, end
        chars = not first.startswith("\\") and not second.startswith("\\")
        return (False, end) if chars else (None, pos)
    if name == "ifnum":
        m = _IFNUM.match(text, pos)
        if m is None:
            return None, pos
        a, op, b = int(m.group(1).replace(" ", "")), m.group(2), int(m.group(3).replace(" ", ""))
        return {"<": a < b, "=": a == b, ">": a > b}[op], m.end()
    if name == "ifodd":
        m = _IFODD.match(text, pos)
        return (int(m.group(1).replace(" ", "")) % 2 == 1, m.end()) if m else (None, pos)
    if name == "ifdefined":
        tok, end = _token(text, pos)
        return (True, end) if tok and tok.startswith("\\") and tok[1:] in doc.defined else (None, pos)
    if name == "ifcsname":
        m = _CSNAME.match(text, pos)
        return (True, m.end()) if m and m.group(1) in doc.defined else (None, pos)
    return None, pos


def _is_conditional(text: str, m: re.Match[str]) -> bool:
    name = m.group("open")
    if _NOT_CONDITIONALS.match(name):
        return False
    before = text[max(0, m.start() - 16) : m.start()].rstrip()
    # \newif\iffoo declares, \let\ifbar\iftrue or \def\iffoo names: neither opens a conditional
    return not re.search(r"\\(?:newif|let|[gex]?def|newcommand\*?|renewcommand\*?)\s*\{?$"
                         r"|\\let\s*\\[a-zA-Z@]+\s*=?$", before)


def resolve_conditionals(text: str) -> tuple[str, list[ParseWarning]]:
    """``text`` with every conditional the source decides replaced by its taken branch, and one
    warning per undecided conditional around an answer of the document body."""
    if "\\if" not in text:
        return text, []
    doc = _Document(text)
    out: list[str] = []
    warnings: list[ParseWarning] = []
    stack: list[_Frame] = []
    dead = 0  # frames whose current branch TeX skips
    pos = 0
    for m in _COND.finditer(text):
        if m.start() < pos:
            continue  # inside a test already read (\if\fi\fi)
        if m.group("open"):
            if not _is_conditional(text, m):
                continue
            value, test_end = _evaluate(m.group("open"), text, m.end(), doc)
            if not dead:
                out.append(text[pos : m.start()])
            pos = test_end if value is not None else m.start()
            stack.append(_Frame(value, m.start(), m.group("open")))
            dead += stack[-1].dead
            continue
        if not stack:
            continue  # a stray \else or \fi: left as written
        frame = stack[-1]
        if not dead:
            out.append(text[pos : m.start()])
        pos = m.end() if frame.value is not None else m.start()
        dead -= frame.dead
        if m.group("else"):
            frame.in_else = True
            dead += frame.dead
        else:
            stack.pop()
            if frame.value is None and not dead:
                warnings += _undecided(text, frame, m.end(), doc)
    if not dead:
        out.append(text[pos:])
    return "".join(out), warnings


def _undecided(text: str, frame: _Frame, end: int, doc: _Document) -> list[ParseWarning]:
    i = bisect.bisect_left(doc.answers, frame.start)
    if i == len(doc.answers) or doc.answers[i] >= end:
        return []
    test = " ".join(text[frame.start : frame.start + 40].split())
    why = ("a switch the file sets both ways" if frame.name[2:] in doc.undecided_switches
           else "a test the source alone does not decide")
    return [ParseWarning(kind=WarningKind.UNDECIDED, location=f"\\{frame.name}",
                         message=f"an answer inside \\{frame.name} ({why}: {test!r}...); both branches read "
                                 "as written, the PDF may show only one")]


# --- environments the comment package drops --------------------------------------------------------


def drop_excluded_comments(text: str) -> str:
    """``\\begin{NAME}...\\end{NAME}`` removed for each NAME the file passes to ``\\excludecomment``."""
    names = set(_EXCLUDED.findall(text))
    for name in names:
        begin, end = f"\\begin{{{name}}}", f"\\end{{{name}}}"
        out, pos = [], 0
        while (start := text.find(begin, pos)) >= 0:
            stop = text.find(end, start)
            out.append(text[pos:start])
            pos = len(text) if stop < 0 else stop + len(end)
        out.append(text[pos:])
        text = "".join(out)
    return text


# --- answer macros redefined --------------------------------------------------------------------------

_ANSWER_NAMES = ("Yes", "No", "NA", "TODO")
_ANSWER_DEF = re.compile(
    r"\\(?P<how>let|[gex]?def|(?:re)?newcommand\*?|providecommand\*?|DeclareRobustCommand\*?)\s*\{?\s*"
    r"\\answer(?P<name>Yes|No|NA|TODO)(?![a-zA-Z@])\s*\}?")
_LET_TARGET = re.compile(r"\s*=?\s*\\answer(Yes|No|NA|TODO)(?![a-zA-Z@])")
_PRINTED = re.compile(r"\[\s*(Yes|No|NA|N/A|TODO)\s*\]|\\answer(Yes|No|NA|TODO)(?![a-zA-Z@])")
_DEF_BODY = re.compile(r"(?:\s*\[[^\]]{0,20}\])*\s*(?:#\d\s*)*\{")


@dataclass
class _Printed:
    answer: Answer | None  # None: what it prints cannot be read from the source
    where: int  # the end of the (last) definition


def _body(text: str, pos: int) -> str | None:
    """The replacement text of a definition whose name ends at ``pos``: its first brace group after
    the optional ``[n][default]`` and ``#1`` parameters."""
    from checklist_eval.reading.latex.lexer import group_end

    m = _DEF_BODY.match(text, pos)
    if m is None:
        return None
    close = group_end(text, m.end() - 1)
    return text[m.end() : close - 1] if close > m.end() else None


def _printed_by(body: str | None, current: dict[str, _Printed]) -> Answer | None:
    if body is None:
        return None
    found = set()
    for m in _PRINTED.finditer(body):
        if m.group(1):
            found.add(normalize_answer(m.group(1)))
        else:
            found.add(current[m.group(2)].answer)
    return found.pop() if len(found) == 1 else None


def follow_answer_macros(text: str) -> tuple[str, list[ParseWarning]]:
    """The text with each answer macro used after its last definition replaced by the one it prints
    (``\\let\\answerYes\\answerNo`` makes every later ``\\answerYes`` a No); a warning for each macro
    the file redefines to print something the source does not decide."""
    current = {n: _Printed(Answer(n), -1) for n in _ANSWER_NAMES}
    for m in _ANSWER_DEF.finditer(text):
        name = m.group("name")
        if m.group("how") == "let":
            target = _LET_TARGET.match(text, m.end())
            answer = current[target.group(1)].answer if target else None
        else:
            answer = _printed_by(_body(text, m.end()), current)
        current[name] = _Printed(answer, m.end())
    changed = {n: p for n, p in current.items() if p.answer != Answer(n)}
    if not changed:
        return text, []
    warnings = [ParseWarning(kind=WarningKind.UNDECIDED, location=f"\\answer{n}",
                             message=f"\\answer{n} is redefined in the file to print what the source does not "
                                     "decide; read as written")
                for n, p in changed.items() if p.answer is None]
    start = max(p.where for p in changed.values())
    use = re.compile(r"\\answer(" + "|".join(n for n, p in changed.items() if p.answer is not None)
                     + r")(?![a-zA-Z@])")
    if not any(p.answer is not None for p in changed.values()):
        return text, warnings
    tail = use.sub(lambda u: f"\\answer{current[u.group(1)].answer.value}", text[start:])  # type: ignore[union-attr]
    return text[:start] + tail, warnings


def what_tex_prints(text: str) -> tuple[str, list[ParseWarning]]:
    """The document as TeX would print it where the source decides: excluded comment environments
    dropped, conditionals evaluated, answer macros read as what they print."""
    if "\\excludecomment" in text:
        text = drop_excluded_comments(text)
    text, warnings = resolve_conditionals(text)
    text, more = follow_answer_macros(text)
    return text, warnings + more
