"""What TeX prints, where the source alone decides it: TeX's conditionals, read in one pass.

A conditional is decided only where the source settles it: ``\\iftrue``/``\\iffalse``, ``\\if``/``\\ifx``
on two characters (or ``\\ifx`` on one token twice), ``\\ifnum``/``\\ifodd`` on literals, and a switch
(``\\newif``, or ``\\let\\ifx\\iftrue``) whose every setting so far was a literal ``\\xtrue``/``\\xfalse``
(or ``\\let`` to ``\\iftrue``/``\\iffalse``) that TeX reaches before the use, outside any group (braces,
an environment, ``\\begingroup``) and outside any branch that is itself undecided; ``\\unless``
negates. A switch set any other way (in a group, through ``\\csname``, by ``\\let`` to another switch,
by a package's ``\\setboolean``), or set again after a use written inside braces (a macro body is run
later), is undecided from there on; so is any other test (``\\if`` over macros, ``\\ifdefined`` of what
a package defines, ``\\ifcase``, an engine test).

An undecided conditional is read as its first-written branch, and when that conditional holds an
answer a typed ``WarningKind.UNDECIDED`` warning names it and its line: the PDF may show the other.
``\\verb``, ``\\lstinline`` and the verbatim-like environments (verbatim, lstlisting, minted, comment)
never open or close a conditional where TeX reads them; inside a branch TeX skips, TeX only counts
conditional tokens, and so does this reader.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from checklist_eval.models import ParseWarning, WarningKind
from checklist_eval.reading.latex.dead import NOT_CONDITIONALS as _NOT_CONDITIONALS
from checklist_eval.reading.latex.dead import Kept, joined

# One alternation finds, in order, everything the pass acts on. Verbatim-like text first, so that
# nothing inside it is read as a command where TeX reads it as text.
_SCAN = (
    r"(?P<verb>\\verb\*?(?P<vd>[^a-zA-Z\s*])[^\n]*?(?P=vd)"
    r"|\\lstinline\s*(?:\[[^\]\n]*\])?(?:\{[^{}\n]*\}|(?P<ld>[^a-zA-Z\s{\[])[^\n]*?(?P=ld)))"
    r"|\\begin\s*\{(?P<venv>verbatim|Verbatim|lstlisting|minted|comment)(?P<vstar>\*?)\}"
    r"|\\(?P<env>begin|end)\s*\{(?P<envname>[^{}\\]*)\}"
    r"|\\(?P<cs>csname)(?![a-zA-Z@])\s*(?P<csbody>[^\\{}]*?)\s*\\endcsname"
    r"|\\(?P<name>if[a-zA-Z@]*|else|fi|or|let|futurelet|[gex]?def|newif|(?:re)?newcommand|providecommand"
    r"|DeclareRobustCommand|NewDocumentCommand|RenewDocumentCommand|DeclareDocumentCommand|begingroup|endgroup"
    r"|bgroup|egroup|setboolean|setbool|booltrue|boolfalse|newbool|newboolean|providebool{settings})(?![a-zA-Z@])"
    r"|\\[\\{}]"  # an escaped backslash or brace: what follows it is not a command, nor a group
)


def _scan(switches: set[str]) -> re.Pattern[str]:
    """The pass's pattern; a switch's ``\\xtrue``/``\\xfalse`` are found when the document has switches.
    Any command ending in true/false matches (``_set`` keeps the switches'): an alternation of the
    names made the pattern's compile and every search grow with the number of switches (a preamble of
    tens of thousands of them took minutes)."""
    return _SCAN_WITH_SETTINGS if switches else _SCAN_PLAIN


_SCAN_PLAIN = re.compile(_SCAN.replace("{settings}", ""))
_SCAN_WITH_SETTINGS = re.compile(_SCAN.replace("{settings}", "|[a-zA-Z@]+(?:true|false)"))


# Braces are counted between the matches (str.count), not matched one by one: a paper has many.
_GROUPS = {"begingroup": 1, "bgroup": 1, "endgroup": -1, "egroup": -1}
_DEFINERS = re.compile(
    r"^(?:[gex]?def|let|futurelet|(?:re)?newcommand|providecommand|DeclareRobustCommand|NewDocumentCommand"
    r"|RenewDocumentCommand|DeclareDocumentCommand|newif)$")
# Package commands that set or declare a boolean made by \newif (etoolbox's \newbool is one, ifthen's
# \newboolean another): each makes that switch undecided from there on.
_BOOL_SETTERS = {"setboolean", "setbool", "booltrue", "boolfalse", "newbool", "newboolean", "providebool"}
_PRIMITIVE_IFS = {"if", "ifx", "ifcat", "ifnum", "ifdim", "ifodd", "ifvmode", "ifhmode", "ifmmode", "ifinner",
                  "ifvoid", "ifhbox", "ifvbox", "ifeof", "iftrue", "iffalse", "ifcase", "ifdefined", "ifcsname",
                  "iffontchar", "ifincsname", "ifpdfprimitive", "ifpdfabsnum", "ifpdfabsdim"}
# TeX's digits are 0-9 only (Python's \d also matches other scripts' digits, which TeX does not read
# as a number), and a sign may be followed by any blank, which int() does not take.
_NUMBER = r"\s*(-?\s*[0-9]+)"
_IFNUM = re.compile(_NUMBER + r"\s*([<=>])" + _NUMBER + r"(?![0-9\\])")
_IFODD = re.compile(_NUMBER + r"(?![0-9\\])")
_CHAR = re.compile(r"[0-9A-Za-z.,;:!?+\-*/=<>()\[\]|']")
_ANSWER_MARK = re.compile(r"\\answer(?:Yes|No|NA|TODO)(?![a-zA-Z@])|\[\s*(?:Yes|No|NA|N/A|TODO)\s*\]")
_ARG = re.compile(r"\s*\{\s*([a-zA-Z@]+)\s*\}")
_DEFINED_NAME = re.compile(r"\*?\s*(\{)?\s*\\([a-zA-Z@]+)\s*(?(1)\})")
_LET_TARGET = re.compile(r"\s*=?\s*\\(if[a-zA-Z@]*|[a-zA-Z@]+)")
_FIRST_TOKEN = re.compile(r"[ \t]*\n?[ \t]*(\\[a-zA-Z@]+|\\.|[^\s\\{}%])")
_IFX_UNDEFINED = re.compile(r"\s*\\([a-zA-Z@]+)\s*\\(?:@undefined|undefined)(?![a-zA-Z@])")
_NEXT_TOKEN = re.compile(r"(\\[a-zA-Z@]+|\\.|[^\s\\{}%])")
Where = Callable[[int], str]  # "file:line" of a position in the text read


@dataclass
class _Frame:
    value: bool | None  # None: undecided, the first-written branch read
    start: int
    name: str
    live: bool  # TeX reads the branch it is in (its enclosing text is read)
    in_else: bool = False
    first_spans: int = -1  # undecided: how many kept spans the text had when its first branch ended

    @property
    def reads(self) -> bool:
        """Whether the branch the scan is in is read: an undecided conditional's every branch is read
        until its end shows whether it holds an answer (then only the first is kept)."""
        return self.live and (self.value is None or self.value != self.in_else)


@dataclass
class _Switch:
    value: bool = False
    settled: bool = True  # every setting so far was modelled
    settings: list[int] = field(default_factory=list)  # where the file sets it, in order


# A switch set (any command ending in true/false: the switches are told apart by name after the match)
_SETTING = re.compile(r"\\([a-zA-Z@]+)(?:true|false)(?![a-zA-Z@])|\\let\s*\\if([a-zA-Z@]+)")


class _Reader:
    """The state of one pass: the stack of open conditionals, the switches, and the depth of groups."""

    def __init__(self, text: str, where: Where | None):
        self.text = text
        self.where = where
        self.stack: list[_Frame] = []
        self.switches: dict[str, _Switch] = {}
        self.defined: set[str] = set()
        self.declared: set[str] = set()  # switches declared so far (a branch TeX skips counts only these)
        self.macro_ifs: set[str] = set()  # \if... names a \newcommand or \def makes: macros, not conditionals
        self.unsettled = False  # a \csname built from macros may have set any switch
        self.reading = True  # TeX reads the text at the scan's place
        self.undecided_open = 0  # open conditionals the source does not decide
        self.braces = 0
        self.groups = 0  # environments and \begingroup
        self.spans: list[tuple[int, int]] = []
        self.pos = 0  # start of the text not yet kept or dropped
        self.warnings: list[ParseWarning] = []
        self._answers: list[int] | None = None
        self._collect_settings()

    def _collect_settings(self) -> None:
        """Where each switch is set, in the whole text: a use inside braces is undecided when its switch
        is set again later, since a macro body runs when it is used, not where it is written."""
        names = set(re.findall(r"\\newif\s*\\if([a-zA-Z@]+)", self.text))
        names |= set(re.findall(r"\\let\s*\\if([a-zA-Z@]+)", self.text))
        names |= set(re.findall(r"\\(?:newbool|newboolean|providebool)\s*\{\s*([a-zA-Z@]+)", self.text))
        for name in names:
            self.switches[name] = _Switch()
        if not names:
            return
        for m in _SETTING.finditer(self.text):
            name = m.group(1) or m.group(2)
            if name in self.switches:
                self.switches[name].settings.append(m.start())

    # --- reading state

    def _update(self) -> None:
        self.reading = not self.stack or self.stack[-1].reads

    @property
    def global_level(self) -> bool:
        return self.braces == 0 and self.groups == 0 and self.undecided_open == 0

    def keep_until(self, pos: int) -> None:
        if self.reading and pos > self.pos:
            self.spans.append((self.pos, pos))
        self.pos = max(self.pos, pos)

    def _push(self, frame: _Frame) -> None:
        self.stack.append(frame)
        self.undecided_open += frame.value is None and frame.live
        self._update()

    def _pop(self) -> _Frame:
        frame = self.stack.pop()
        self.undecided_open -= frame.value is None and frame.live
        self._update()
        return frame

    # --- the pass

    def run(self) -> tuple[str, Kept]:
        pos = 0
        text = self.text
        scan = _scan(set(self.switches))
        while (m := scan.search(text, pos)) is not None:
            if self.reading and m.start() > pos:
                self.braces += text.count("{", pos, m.start()) - text.count("}", pos, m.start())
            pos = m.end()
            if m.lastgroup is None:
                continue  # an escaped backslash or brace
            if not self.reading:
                pos = self._skipped(m)
            elif m.group("verb") is not None:
                continue
            elif m.group("venv") is not None:
                name = m.group("venv") + re.escape(m.group("vstar"))
                end = re.compile(rf"\\end\s*\{{{name}\}}").search(self.text, pos)
                pos = end.end() if end else pos
            elif m.group("env") is not None:
                if m.group("envname").strip() != "document":
                    self.groups += 1 if m.group("env") == "begin" else -1
            elif m.group("cs") is not None:
                self._csname(m)
            elif m.group("name") is not None:
                pos = self._command(m)
        if self.reading:
            self.braces += text.count("{", pos) - text.count("}", pos)
        self.keep_until(len(self.text))
        for frame in reversed(self.stack):  # never closed: TeX reads on to the end of the document
            self._close(frame, len(self.text))
        text, kept = joined(self.text, self.spans)
        return text, kept

    def _skipped(self, m: re.Match[str]) -> int:
        """In a branch TeX skips it only counts conditional tokens, wherever they stand (even in
        verbatim text, or as the target of a \\let): the scan goes on inside what it matched."""
        name = m.group("name")
        if name is None:
            return m.start() + 1
        if name in ("else", "or", "fi"):
            return self._command(m)
        if not self._is_conditional(name, m.start()):
            return m.end()
        known = name in _PRIMITIVE_IFS or name[2:] in self.declared or name[2:] not in self.switches
        if not known or re.search(r"\\newif\s*$", self.text[max(0, m.start() - 10) : m.start()]):
            return m.end()  # a switch not declared yet is an undefined command to TeX here
        return self._open(name, m.start(), m.end())

    def _is_conditional(self, name: str, start: int) -> bool:
        return name.startswith("if") and name not in self.macro_ifs and not _NOT_CONDITIONALS.match(name)

    def _command(self, m: re.Match[str]) -> int:
        name, end = m.group("name"), m.end()
        if name in _GROUPS:
            self.groups += _GROUPS[name]
        elif name in ("else", "or", "fi"):
            self._branch(name, m.start(), end)
        elif _DEFINERS.match(name):
            return self._definition(name, end)
        elif name == "unless":
            return end
        elif name in _BOOL_SETTERS:
            arg = _ARG.match(self.text, end)
            if arg and self.reading:
                self._unsettle(arg.group(1))
                if name.startswith(("new", "provide")):
                    self.declared.add(arg.group(1))
        elif self._is_conditional(name, m.start()):
            return self._open(name, m.start(), end)
        elif name.endswith(("true", "false")) and self.reading:
            self._set(name, m.start())
        return end

    # --- switches

    def _set(self, name: str, start: int) -> None:
        base = name[:-4] if name.endswith("true") else name[:-5]
        switch = self.switches.get(base)
        if switch is None:
            return
        if self.global_level and switch.settled:
            switch.value = name.endswith("true")
        else:
            switch.settled = False

    def _unsettle(self, name: str) -> None:
        if name in self.switches:
            self.switches[name].settled = False
        else:
            self.switches[name] = _Switch(settled=False)

    def _definition(self, how: str, end: int) -> int:
        """``\\newif\\ifx``, ``\\let\\ifx\\iftrue``, ``\\def\\xtrue{...}``, ``\\newcommand\\foo``: what it
        declares, sets or spoils; the defined name is not read as a use."""
        m = _DEFINED_NAME.match(self.text, end)
        if m is None:
            return end
        target, after = m.group(2), m.end()
        if not self.reading:
            return after
        if how == "newif" and target.startswith("if"):
            switch = self.switches.setdefault(target[2:], _Switch())
            self.declared.add(target[2:])
            if self.global_level:
                switch.value = False
            else:
                switch.settled = False
        elif how == "let" and target.startswith("if"):
            source = _LET_TARGET.match(self.text, after)
            literal = source is not None and source.group(1) in ("iftrue", "iffalse")
            switch = self.switches.setdefault(target[2:], _Switch())
            self.declared.add(target[2:])
            if literal and self.global_level and switch.settled:
                switch.value = source.group(1) == "iftrue"  # type: ignore[union-attr]
            else:
                switch.settled = False
            return source.end() if source else after
        elif target.startswith("if"):
            self.macro_ifs.add(target)
            if target[2:] in self.switches:
                self._unsettle(target[2:])
        elif target.endswith(("true", "false")):
            self._unsettle(target[:-4] if target.endswith("true") else target[:-5])
        if self.global_level:
            self.defined.add(target)
        return after

    def _csname(self, m: re.Match[str]) -> None:
        """``\\csname xtrue\\endcsname`` sets a switch out of sight; ``\\csname ifx\\endcsname`` opens one."""
        if not self.reading:
            return
        body = m.group("csbody").strip()
        if not re.fullmatch(r"[a-zA-Z@]+", body):
            self.unsettled = True  # built from macros: any switch may be the one it names
            return
        before = self.text[max(0, m.start() - 24) : m.start()]
        if body.startswith("if") and not re.search(r"\\(?:let|[gex]?def|expandafter)\s*$", before):
            if body in _PRIMITIVE_IFS or body[2:] in self.switches:
                self.keep_until(m.start())
                self.pos = m.end()
                self._push(_Frame(None, m.start(), f"\\csname {body}\\endcsname", True))
            return
        for suffix in ("true", "false"):
            if body.endswith(suffix):
                self._unsettle(body[: -len(suffix)])
        if body.startswith("if"):
            self._unsettle(body[2:])

    # --- conditionals

    def _open(self, name: str, start: int, end: int) -> int:
        live = self.reading
        window = max(0, start - 12)
        unless = re.search(r"\\unless\s*$", self.text[window:start])
        value, test_end = self._evaluate(name, end, start) if live else (None, end)
        if value is not None and unless:
            value = not value
        if live:
            self.keep_until(window + unless.start() if unless else start)
            self.pos = test_end
        shown = ("\\unless" if unless else "") + "\\" + name
        self._push(_Frame(value, start, shown, live))
        return test_end

    def _branch(self, name: str, start: int, end: int) -> None:
        """``\\else``, ``\\or`` or ``\\fi`` of the innermost conditional; the token itself is never read."""
        if not self.stack:
            return  # a stray \else or \fi: left as written
        frame = self.stack[-1]
        if name == "or" and not frame.name.endswith("ifcase"):
            return
        self.keep_until(start)
        self.pos = max(self.pos, end)
        if name == "fi":
            self._pop()
            self._close(frame, end)
        else:
            if not frame.in_else:
                frame.first_spans = len(self.spans)
            frame.in_else = True
            self._update()

    def _close(self, frame: _Frame, end: int) -> None:
        """An undecided conditional ends: one holding an answer is read as its first branch, with a
        warning; one holding none keeps every branch's text (the body's evidence stays whole)."""
        if not frame.live or frame.value is not None or not self._holds_answer(frame.start, end):
            return
        if frame.first_spans >= 0:
            del self.spans[frame.first_spans :]
        self._warn(frame)

    @property
    def answers(self) -> list[int]:
        """Where the body's answer marks are (found when a conditional is undecided: most papers have none)."""
        if self._answers is None:
            body = max(self.text.find("\\begin{document}"), 0)
            self._answers = [m.start() for m in _ANSWER_MARK.finditer(self.text, body)]
        return self._answers

    def _holds_answer(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self.answers, start)
        return i < len(self.answers) and self.answers[i] < end

    def _warn(self, frame: _Frame) -> None:
        line = f" at {self.where(frame.start)}" if self.where else ""
        test = " ".join(self.text[frame.start : frame.start + 40].split())
        self.warnings.append(ParseWarning(
            kind=WarningKind.UNDECIDED, location=f"{frame.name}{line}",
            message=f"an answer inside {frame.name}{line}, a conditional the source does not decide ({test!r}...): "
                    "read as its first branch, the PDF may show the other"))

    def _evaluate(self, name: str, pos: int, start: int) -> tuple[bool | None, int]:
        """The value of conditional ``\\name`` whose test starts at ``pos`` and where its test ends;
        None when the source does not decide it."""
        if name in ("iftrue", "iffalse"):
            return name == "iftrue", pos
        switch = self.switches.get(name[2:])
        if switch is not None:
            later = bisect.bisect_right(switch.settings, start) < len(switch.settings)
            if not switch.settled or self.unsettled or (self.braces and later):
                return None, pos
            return switch.value, pos
        if name == "ifx":
            m = _IFX_UNDEFINED.match(self.text, pos)
            if m:  # \ifx\cmd\undefined: false for a command the file has defined by now
                return (False, m.end()) if m.group(1) in self.defined else (None, pos)
        if name in ("if", "ifx"):
            return _compare(name, self.text, pos)
        if name == "ifnum":
            m = _IFNUM.match(self.text, pos)
            if m is None:
                return None, pos
            a, op, b = _integer(m.group(1)), m.group(2), _integer(m.group(3))
            return {"<": a < b, "=": a == b, ">": a > b}[op], m.end()
        if name == "ifodd":
            m = _IFODD.match(self.text, pos)
            return (_integer(m.group(1)) % 2 == 1, m.end()) if m else (None, pos)
        if name == "ifdefined":
            m = re.compile(r"\s*\\([a-zA-Z@]+)").match(self.text, pos)
            return (True, m.end()) if m and m.group(1) in self.defined else (None, pos)
        return None, pos


def _integer(spelled: str) -> int:
    """A number as _NUMBER matched it: a sign, blanks (spaces, tabs, a newline), digits."""
    return int("".join(spelled.split()))


def _compare(name: str, text: str, pos: int) -> tuple[bool | None, int]:
    """``\\if``/``\\ifx`` of two tokens the source decides: two plain characters, or (``\\ifx``) one
    control sequence twice. Spaces count as TeX reads them: none after a control word, one otherwise."""
    first = _FIRST_TOKEN.match(text, pos)
    if first is None:
        return None, pos
    word = first.group(1).startswith("\\") and len(first.group(1)) > 2
    after = first.end()
    if not word and after < len(text) and text[after] in " \t\n":
        second, end = " ", after + 1
    else:
        m2 = (_FIRST_TOKEN if word else _NEXT_TOKEN).match(text, after)
        if m2 is None:
            return None, pos
        second, end = m2.group(1), m2.end()
    a, b = first.group(1), second
    if name == "ifx" and a == b and a.startswith("\\"):
        return True, end
    chars = [t for t in (a, b) if t == " " or _CHAR.fullmatch(t)]
    if len(chars) == 2:
        return a == b, end
    return None, pos


def resolve_conditionals(text: str, where: Where | None = None) -> tuple[str, Kept, list[ParseWarning]]:
    """``text`` as TeX reads its conditionals (see the module's docstring), the map back to ``text``,
    and one warning per undecided conditional around an answer of the document body."""
    if "\\if" not in text and "\\csname" not in text:
        return text, [(0, 0)], []
    reader = _Reader(text, where)
    out, kept = reader.run()
    return out, kept, reader.warnings
