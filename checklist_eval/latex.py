"""Reading a paper and its checklist out of LaTeX source.

Speed shapes the design: pylatexenc walking a whole paper costs about 3 ms per KB, three times the
budget. So the document-wide work (dead code, sectioning, labels, the body text) is done by regex
scanners here, and pylatexenc only converts the short pieces that need real LaTeX understanding: the
checklist's justifications and titles.

The pipeline for one flattened document (see :func:`parse_latex`):

1. dead code is already gone (:func:`strip_dead`, applied per file by ``sources``);
2. the checklist region is located and cut out of the body;
3. the body is converted to text once, which also numbers sections, floats and theorems and so learns
   what each ``\\label`` displays as;
4. each answer mark in the region is tied to a question by meaning, and its justification is kept raw
   and as readable text with references resolved.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass, field

from checklist_eval import checklists
from checklist_eval.errors import NoChecklistError
from checklist_eval.models import (
    Answer,
    Checklist,
    ChecklistItem,
    ChecklistSpec,
    HiddenRun,
    Paper,
    ParseWarning,
    Section,
    WarningKind,
    normalize_answer,
)

# --- dead code ------------------------------------------------------------------------------------

# One pass finds, in order: things in which % is literal (\url, \href's URL, \verb, verbatim
# environments), escaped percent signs, and comments. A comment also eats the line end and the next
# line's indentation, as TeX does, unless the next line is blank (that blank line is still a \par).
_COMMENT_SCAN = re.compile(
    r"(?P<keep>\\(?:url|href)\s*\{[^{}\n]*\}"
    r"|\\verb\*?(?P<d>[^a-zA-Z\s*]).*?(?P=d)"
    r"|\\begin\{(?P<venv>verbatim|lstlisting|minted)\*?\}.*?\\end\{(?P=venv)\*?\}"
    r"|\\\\|\\%)"
    r"|%[^\n]*(?:\n[ \t]*(?!\n))?",
    re.S,
)
_CONDITIONAL = re.compile(r"\\(?:(?P<open>if[a-zA-Z@]*)|(?P<fi>fi)|(?P<else>else))(?![a-zA-Z@])")
# etoolbox/ifthen macros that look like TeX conditionals but take arguments and have no \fi.
_NOT_CONDITIONALS = re.compile(
    r"^if(?:thenelse|toggle|bool|str|blank|def(?!ined)|undef|cs(?!name)|num(?:comp|equal|odd)"
    r"|dim(?:comp|equal)|lang|pdf(?:tex)?$|xetex$|luatex$|empty|strequal|inlist|boolexpr)"
)
_IFFALSE = re.compile(r"\\iffalse(?![a-zA-Z@])")
_COMMENT_ENV = re.compile(r"\\begin\{comment\}.*?(?:\\end\{comment\}|\Z)", re.S)


def strip_comments(text: str) -> str:
    def repl(m: re.Match) -> str:
        return m.group("keep") if m.group("keep") is not None else ""

    if "%" not in text:
        return text
    return _COMMENT_SCAN.sub(repl, text)


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
            c = _CONDITIONAL.search(text, scan)
            if not c:
                break
            scan = c.end()
            if c.group("open"):
                name = c.group("open")
                prev = text[max(0, c.start() - 8) : c.start()]
                if _NOT_CONDITIONALS.match(name) or prev.endswith("\\newif"):
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
    for c in _CONDITIONAL.finditer(text, pos):
        if c.group("open"):
            if _NOT_CONDITIONALS.match(c.group("open")):
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


# --- small scanning helpers -----------------------------------------------------------------------


def _scan_group_close(text: str, start: int) -> int:
    depth = 0
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


_BRACE_TOKEN = re.compile(r"\\.|[{}]", re.S)
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
    for m in _BRACE_TOKEN.finditer(text):
        tok = m.group(0)
        if tok == "{":
            stack.append(m.start())
        elif tok == "}" and stack:
            table[stack.pop()] = m.end()
    _group_tables.insert(0, (text, table))
    del _group_tables[4:]
    return table


def clear_scan_caches() -> None:
    """Drop the brace tables and landmarks kept for recent texts (a long-lived worker calls this
    between papers so one paper's tables do not outlive it)."""
    _group_tables.clear()
    _Landmarks._cache.clear()


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
    depth = 0
    i = start + 1
    n = min(len(text), start + MAX_OPTIONAL_ARG_CHARS)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "]" and depth <= 0:
            return i + 1
        i += 1
    return n if n == len(text) else start + 1


_ENV_TOKEN = re.compile(r"\\(begin|end)\s*\{([^{}]+)\}")


def env_end(text: str, start: int) -> int:
    """Index just past the ``\\end`` matching the ``\\begin`` at ``start``."""
    depth = 0
    for m in _ENV_TOKEN.finditer(text, start):
        depth += 1 if m.group(1) == "begin" else -1
        if depth == 0:
            return m.end()
    return len(text)


def _skip_space(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in " \t\n":
        i += 1
    return i


_CONTROL_SEQUENCE = re.compile(r"\\(?:[a-zA-Z@]+|.)")
_CUSTOM_REF = re.compile(
    r"(?:sec|s|fig|f|tab|tbl|t|app|apx|appx|appendix|a|eq|e|thm|lem|alg|def|prop|cor|ssec|subsec)ref")
_LABEL_PREFIX = re.compile(r"([a-zA-Z]+)[:_\-]")


def read_args(text: str, i: int, spec: str) -> tuple[list[str | None], int]:
    """Read arguments after a macro: ``spec`` has one letter per argument, ``o`` optional
    ``[...]`` and ``m`` mandatory ``{...}`` (a lone token also counts, as in TeX)."""
    args: list[str | None] = []
    n = len(text)
    for kind in spec:
        j = _skip_space(text, i)
        if kind == "o":
            if j < n and text[j] == "[":
                end = bracket_end(text, j)
                args.append(text[j + 1 : end - 1])
                i = end
            else:
                args.append(None)
        else:
            if j < n and text[j] == "{":
                end = group_end(text, j)
                args.append(text[j + 1 : end - 1])
                i = end
            elif j < n and text[j] == "\\":
                m = _CONTROL_SEQUENCE.match(text, j)
                args.append(m.group(0) if m else "")
                i = m.end() if m else j + 1
            elif j < n:
                args.append(text[j])
                i = j + 1
            else:
                args.append("")
    return args, i


# --- user macros ----------------------------------------------------------------------------------

_NEWCOMMAND = re.compile(
    r"\\(?:re)?newcommand\*?\s*(?:\{\s*(\\[a-zA-Z@]+)\s*\}|(\\[a-zA-Z@]+))\s*(?:\[(\d)\])?\s*(\[[^\]]*\])?\s*\{"
    r"|\\(?:DeclareRobustCommand|providecommand)\*?\s*\{?\s*(\\[a-zA-Z@]+)\s*\}?\s*(?:\[(\d)\])?\s*\{"
    r"|\\def\s*(\\[a-zA-Z@]+)\s*(#1)?\s*\{"
)


@dataclass
class Macros:
    """Macros the document defines that change what a reader sees: zero-argument text macros
    (``\\newcommand{\\ours}{NeuroVeil}``) and one-argument reference wrappers (``\\secref``)."""

    text: dict[str, str] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)  # name -> body with #1


def collect_macros(text: str) -> Macros:
    macros = Macros()
    for m in _NEWCOMMAND.finditer(text):
        name = m.group(1) or m.group(2) or m.group(5) or m.group(7)
        nargs = m.group(3) or m.group(6) or ("1" if m.group(8) else "0")
        body_start = m.end() - 1
        body = text[body_start + 1 : group_end(text, body_start) - 1]
        if name.startswith("\\answer") or name.startswith("\\justification"):
            continue  # answers are read from the macro name, whatever the preamble makes them print
        if nargs == "0" and "#" not in body and len(body) < 200 and "\\def" not in body:
            macros.text[name[1:]] = body
        elif nargs == "1" and re.search(r"\\(?:[cC]ref|ref|autoref)\*?\{#1\}", body):
            macros.refs[name[1:]] = body
    return macros


_MACRO_NAME = re.compile(r"\\([a-zA-Z@]+)(?![a-zA-Z@])(?:\{\})?")


# Expansion stops growing a text past this many times its size (plus a margin for a short text):
# \def\a{\a\a} doubles at every round.
MAX_EXPANSION_GROWTH = 4
EXPANSION_MARGIN_CHARS = 4096


def expand_text_macros(text: str, macros: Macros, depth: int = 3) -> str:
    if not macros.text:
        return text
    limit = MAX_EXPANSION_GROWTH * len(text) + EXPANSION_MARGIN_CHARS
    for _ in range(depth):
        changed = False

        def repl(m: re.Match) -> str:
            nonlocal changed
            body = macros.text.get(m.group(1))
            if body is None:
                return m.group(0)
            changed = True
            return body

        expanded = _MACRO_NAME.sub(repl, text)
        if not changed or len(expanded) > limit:
            break
        text = expanded
    return text


# --- numbering: what each \label displays as -----------------------------------------------------

_SECTION_LEVELS = {"part": 0, "chapter": 0, "section": 1, "subsection": 2, "subsubsection": 3}
_THEOREM_DEFAULTS = {
    "theorem": "Theorem",
    "thm": "Theorem",
    "lemma": "Lemma",
    "lem": "Lemma",
    "proposition": "Proposition",
    "prop": "Proposition",
    "corollary": "Corollary",
    "cor": "Corollary",
    "definition": "Definition",
    "defn": "Definition",
    "assumption": "Assumption",
    "remark": "Remark",
    "example": "Example",
    "conjecture": "Conjecture",
    "claim": "Claim",
}
_NEWTHEOREM = re.compile(
    r"\\(?:newtheorem|declaretheorem)(\*?)\s*\{([^{}]+)\}\s*(?:\[([^\]]*)\])?\s*(?:\{([^{}]*)\})?\s*(?:\[([^\]]*)\])?"
)


@dataclass
class Target:
    """A numbered thing a \\label can point at."""

    kind: str  # "Section", "Appendix", "Figure", "Table", "Theorem", "Equation", "Algorithm", ...
    number: str
    title: str = ""

    @property
    def anchor(self) -> str:
        return f"Equation ({self.number})" if self.kind == "Equation" else f"{self.kind} {self.number}"


@dataclass
class TheoremKind:
    name: str
    counter: str
    within: str | None
    numbered: bool = True


def theorem_kinds(text: str) -> dict[str, TheoremKind]:
    kinds: dict[str, TheoremKind] = {}
    for m in _NEWTHEOREM.finditer(text):
        star, env, shared, display, within = m.groups()
        if display is None:
            display = _THEOREM_DEFAULTS.get(env, env.capitalize())
        counter = env
        if shared and shared in kinds:
            counter = kinds[shared].counter
            within = kinds[shared].within
        elif shared and display is not None and not within:
            # \newtheorem{env}{Name}[within] puts the bracket after the name; the regex read it first.
            within = shared
        kinds[env] = TheoremKind(display.strip(), counter, within, numbered=not star)
    for env, display in _THEOREM_DEFAULTS.items():
        kinds.setdefault(env, TheoremKind(display, env, None))
    kinds.setdefault("proof", TheoremKind("Proof", "proof", None, numbered=False))
    return kinds


def _alph(n: int) -> str:
    s = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        s = chr(65 + r) + s
    return s or "0"


# --- the body converter ---------------------------------------------------------------------------

# Macros whose arguments carry no reading text; value is the argument spec (see read_args).
_DROP = {
    "label": "m", "vspace": "m", "hspace": "m", "vskip": "", "hskip": "", "includegraphics": "om",
    "usepackage": "om", "RequirePackage": "om", "documentclass": "om", "bibliographystyle": "m",
    "setlength": "mm", "addtolength": "mm", "setcounter": "mm", "addtocounter": "mm",
    "definecolor": "mmm", "colorlet": "mm", "newtheorem": "", "declaretheorem": "om", "captionsetup": "om",
    "thispagestyle": "m", "pagestyle": "m", "color": "om", "fontsize": "mm", "newcolumntype": "mom",
    "author": "om", "date": "m", "affiliation": "m", "email": "m", "address": "m", "thanks": "m",
    "pagenumbering": "m", "newlength": "m", "settowidth": "mm", "graphicspath": "m", "hypersetup": "m",
    "crefname": "mmm", "Crefname": "mmm", "bibliography": "m", "nocite": "m", "cline": "m",
    "cmidrule": "om", "addlinespace": "o", "rule": "omm", "raisebox": "mo", "arrayrulecolor": "m",
    "rowcolor": "om", "cellcolor": "om", "setcitestyle": "m", "newenvironment": "", "renewenvironment": "",
    "newcommand": "", "renewcommand": "", "providecommand": "", "DeclareRobustCommand": "", "def": "",
    "DeclareMathOperator": "mm", "newif": "", "input": "m", "include": "m", "resizebox": "mm",
    "scalebox": "om", "stepcounter": "m", "refstepcounter": "m", "linenumbers": "", "pgfplotsset": "m",
    "tikzset": "m", "usetikzlibrary": "m", "setuptodonotes": "m", "floatname": "mm", "ifthenelse": "",
}
_KEEP = {
    "textbf", "textit", "emph", "underline", "texttt", "textsc", "textrm", "textsf", "textup", "textmd",
    "mbox", "text", "uline", "makebox", "fbox", "framebox", "hbox", "textnormal", "mathrm", "mathbf",
    "mathit", "enquote", "textsuperscript", "textsubscript", "centerline", "boldsymbol", "bm", "mathcal",
    "makecell", "multicolumn", "multirow", "shortstack", "parbox", "subfloat", "sout", "xspace",
    "smash", "vphantom", "hphantom", "phantom", "colorbox", "highlight", "hl", "ul", "todo",
}
_SYMBOLS = {
    "%": "%", "&": "&", "_": "_", "#": "#", "$": "$", "{": "{", "}": "}", " ": " ", ",": " ", ";": " ",
    "!": "", ":": " ", "\\": "\n", "/": "", "-": "",
}
_WORD_MACROS = {
    "ldots": "…", "dots": "…", "LaTeX": "LaTeX", "TeX": "TeX", "S": "§", "textbackslash": "\\",
    "textasciitilde": "~", "textendash": "–", "textemdash": "—", "textregistered": "®", "copyright": "©",
    "textdegree": "°", "pm": "±", "times": "×", "etal": "et al.", "eg": "e.g.", "ie": "i.e.", "wrt": "w.r.t.",
    "newline": "\n", "linebreak": "\n", "par": "\n\n", "quad": " ", "qquad": " ", "checkmark": "✓",
    "textquotesingle": "'", "slash": "/", "degree": "°", "euro": "€", "dag": "†", "ddag": "‡",
}
_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
            ".": "\u0307", "c": "\u0327", "v": "\u030c", "u": "\u0306", "H": "\u030b", "k": "\u0328"}
_FLOATS = {"figure": "Figure", "table": "Table", "algorithm": "Algorithm", "wrapfigure": "Figure",
           "wraptable": "Table", "listing": "Listing"}
_SUBFLOATS = {"subfigure", "subtable", "minipage"}
_MATH_ENVS = {"equation", "align", "gather", "multline", "eqnarray", "flalign", "alignat", "displaymath",
              "math"}
_VERBATIM_ENVS = {"verbatim", "lstlisting", "minted", "Verbatim"}
_SKIP_ENVS = {"tikzpicture", "pgfpicture", "comment", "thebibliography_", "axis"}
_TOKEN = re.compile(
    r"\\(?P<name>[a-zA-Z@]+\*?|.)|(?P<brace>[{}])|(?P<math>\$\$?)|(?P<tilde>~)|(?P<amp>&)"
    r"|(?P<quote>``|'')|(?P<par>\n[ \t]*\n\s*)"
)
_CITE = re.compile(r"^(?:[cC]ite[a-zA-Z]*|[pP]arencite|[tT]extcite|footcite|autocite)$")
_REF_MACROS = {"ref", "cref", "Cref", "autoref", "Autoref", "eqref", "cpageref", "pageref", "nameref",
               "vref", "Vref", "crefrange", "Crefrange", "subref", "labelcref"}


@dataclass
class Converted:
    text: str
    title: str | None
    abstract: str | None
    sections: list[Section]
    targets: dict[str, Target]
    anchors: list[str]


# Characters all user-macro expansions of one document may add to its reading text.
MAX_EXPANSION_CHARS = 4 * 1024 * 1024
_SUBCOUNTER = {"chapter": "section", "section": "subsection", "subsection": "subsubsection"}


class _Converter:
    """One left-to-right pass over live LaTeX producing reading text and numbering.

    References are written as placeholders and filled in at the end, because a reference can come
    before its label (an introduction pointing at Appendix B).
    """

    def __init__(self, macros: Macros, theorems: dict[str, TheoremKind]):
        self.macros = macros
        self.theorems = theorems
        self.counters: dict[str, int] = {}
        self.in_appendix = False
        self.sections: list[Section] = []
        self.targets: dict[str, Target] = {}
        self.anchors: list[str] = []
        self.last_target: Target | None = None
        self.refs: list[tuple[str, list[str]]] = []  # (macro, labels) per placeholder
        self.title: str | None = None
        self.abstract: str | None = None
        self.float_stack: list[str] = []
        self.sub_counter = 0
        self.depth = 0
        self.expanding: set[str] = set()
        self.expanded: dict[str, str] = {}  # reading text of macros whose expansion has no side effect
        self.expansion_budget = MAX_EXPANSION_CHARS

    # counters
    def _step(self, name: str) -> int:
        self.counters[name] = self.counters.get(name, 0) + 1
        self._reset_below(name)
        return self.counters[name]

    def _reset_below(self, name: str) -> None:
        """A new section restarts its subsections (and theirs, down the chain) and the theorem
        counters numbered within it."""
        for kind in self.theorems.values():
            if kind.within == name:
                self.counters[kind.counter] = 0
        child = _SUBCOUNTER.get(name)
        if child:
            self.counters[child] = 0
            self._reset_below(child)

    def _section_number(self, level: int) -> str:
        sec = self.counters.get("section", 0)
        head = _alph(sec) if self.in_appendix else str(sec)
        parts = [head]
        if level >= 2:
            parts.append(str(self.counters.get("subsection", 0)))
        if level >= 3:
            parts.append(str(self.counters.get("subsubsection", 0)))
        return ".".join(parts)

    def _add_target(self, target: Target) -> None:
        self.last_target = target
        anchor = target.anchor
        if anchor not in self.anchors:
            self.anchors.append(anchor)

    def _expand(self, name: str) -> str:
        """A user text macro's reading text. A macro met again inside its own expansion (directly or
        through others) reads as nothing, and all expansions of a document together stay under a
        budget, so \\def\\a{\\a\\a} or a chain of doubling macros cannot grow without bound."""
        if name in self.expanding or self.expansion_budget <= 0:
            return ""
        body = self.macros.text[name]
        self.expansion_budget -= len(body)
        if name in self.expanded:
            return self.expanded[name]
        state = self._numbering_state()
        self.expanding.add(name)
        try:
            text = self.convert(body)
        finally:
            self.expanding.discard(name)
        if not self.expanding and self._numbering_state() == state:
            self.expanded[name] = text  # it numbered or referenced nothing: the same text every time
        return text

    def _numbering_state(self) -> tuple:
        return (len(self.refs), len(self.sections), len(self.targets), self.last_target, self.title,
                self.in_appendix, tuple(self.counters.items()))

    # main loop
    def convert(self, text: str) -> str:
        self.depth += 1
        if self.depth > 40:  # pathological nesting; give the raw text rather than recurse forever
            self.depth -= 1
            return text
        out: list[str] = []
        pos = 0
        n = len(text)
        while pos < n:
            m = _TOKEN.search(text, pos)
            if not m:
                out.append(text[pos:])
                break
            out.append(text[pos : m.start()])
            pos = m.end()
            if m.group("name") is not None:
                pos = self._macro(m.group("name"), text, pos, out)
            elif m.group("brace"):
                continue  # groups only scope formatting; their text is read in place
            elif m.group("math"):
                delim = m.group("math")
                end = text.find(delim, pos)
                while end > 0 and text[end - 1] == "\\":
                    end = text.find(delim, end + 1)
                end = n if end < 0 else end
                out.append(delim + text[pos:end] + delim)
                pos = min(n, end + len(delim))
            elif m.group("tilde"):
                out.append(" ")
            elif m.group("amp"):
                out.append(" | ")
            elif m.group("quote"):
                out.append("\u201c" if m.group("quote") == "``" else "\u201d")
            else:
                out.append("\n\n")
        self.depth -= 1
        return "".join(out)

    # A dispatch over macro families; it becomes a table in the latex/ package split (not in this change).
    def _macro(self, name: str, text: str, pos: int, out: list[str]) -> int:  # noqa: C901
        if len(name) == 1 and not name.isalpha():
            if name in _ACCENTS and pos < len(text):
                args, pos = read_args(text, pos, "m")
                base = (args[0] or "").lstrip("\\") or " "
                out.append(unicodedata.normalize("NFC", base[0] + _ACCENTS[name]) + base[1:])
                return pos
            if name == "[":  # display math \[ ... \]
                end = text.find("\\]", pos)
                end = len(text) if end < 0 else end
                out.append("\\[" + text[pos:end] + "\\]")
                return min(len(text), end + 2)
            if name == "(":
                end = text.find("\\)", pos)
                end = len(text) if end < 0 else end
                out.append("$" + text[pos:end] + "$")
                return min(len(text), end + 2)
            out.append(_SYMBOLS.get(name, ""))
            return pos
        star = name.endswith("*")
        base = name.rstrip("*")
        if base in self.macros.text:
            out.append(self._expand(base))
            return pos
        if base in ("begin", "end"):
            return self._environment(base, text, pos, out)
        if base in _SECTION_LEVELS or base in ("paragraph", "subparagraph"):
            return self._heading(base, star, text, pos, out)
        if base == "appendix":
            self.in_appendix = True
            self.counters["section"] = 0
            self._reset_below("section")
            return pos
        if base == "stepcounter":
            args, pos = read_args(text, pos, "m")
            if args[0] in _SECTION_LEVELS:
                self._step(args[0])
            return pos
        if base == "caption" or base == "captionof":
            spec = "mom" if base == "captionof" else "om"
            args, pos = read_args(text, pos, spec)
            kind = _FLOATS.get(args[0] or "", "Figure") if base == "captionof" else None
            out.append(self._caption(kind, args[-1] or ""))
            return pos
        if base == "label":
            args, pos = read_args(text, pos, "m")
            if self.last_target is not None:
                self.targets.setdefault((args[0] or "").strip(), self.last_target)
            return pos
        if base == "title":
            args, pos = read_args(text, pos, "om")
            self.title = _squash(self.convert(args[1] or ""))
            return pos
        if base == "maketitle":
            if self.title:
                out.append(self.title + "\n\n")
            return pos
        if base in _REF_MACROS or base in self.macros.refs or _is_custom_ref(base):
            return self._ref(base, text, pos, out)
        if _CITE.match(base):
            args, pos = read_args(text, pos, "oom")
            keys = ", ".join(k.strip() for k in (args[-1] or "").split(","))
            out.append(f"[{keys}]")
            return pos
        if base == "url":
            args, pos = read_args(text, pos, "m")
            out.append(args[0] or "")
            return pos
        if base == "href":
            args, pos = read_args(text, pos, "mm")
            link = self.convert(args[1] or "")
            out.append(link if link.strip() == (args[0] or "").strip() else f"{link} ({args[0]})")
            return pos
        if base in ("footnote", "footnotetext"):
            args, pos = read_args(text, pos, "om")
            out.append(f" (footnote: {_squash(self.convert(args[-1] or ''))})")
            return pos
        if base in ("item", "bibitem"):
            args, pos = read_args(text, pos, "o" if base == "item" else "om")
            if base == "bibitem":
                out.append(f"\n[{(args[1] or '').strip()}] ")
            else:
                label = self.convert(args[0]) if args[0] else "-"
                out.append(f"\n{label} ".lstrip(" ") if label else "\n")
            return pos
        if base in ("textcolor",):
            args, pos = read_args(text, pos, "omm")
            out.append(self.convert(args[2] or ""))
            return pos
        if base in ("hline", "toprule", "midrule", "bottomrule", "centering", "noindent", "small",
                    "footnotesize", "scriptsize", "tiny", "large", "Large", "LARGE", "huge", "normalsize",
                    "selectfont", "bfseries", "itshape", "ttfamily", "rmfamily", "sffamily", "scshape",
                    "normalfont", "newpage", "clearpage", "cleardoublepage", "pagebreak", "medskip",
                    "smallskip", "bigskip", "vfill", "hfill", "indent", "raggedright", "raggedleft",
                    "protect", "relax", "makeatletter", "makeatother", "tableofcontents", "listoffigures",
                    "printbibliography", "frenchspacing", "sloppy", "fussy", "onecolumn", "twocolumn",
                    "nonumber", "notag", "displaystyle", "em", "bf", "it", "tt", "sc", "rm", "sf", "bottomline"):
            return pos
        if base in _WORD_MACROS:
            out.append(_WORD_MACROS[base])
            if pos < len(text) and text.startswith("{}", pos):
                pos += 2
            return pos
        if base in _DROP:
            return self._drop(base, text, pos)
        if base in _KEEP:
            if base in ("multicolumn", "multirow"):
                args, pos = read_args(text, pos, "mom" if base == "multirow" else "mmm")
                out.append(self.convert(args[-1] or ""))
                return pos
            if base in ("parbox", "makebox", "framebox"):
                args, pos = read_args(text, pos, "oomm" if base == "parbox" else "oom")
                out.append(self.convert(args[-1] or ""))
                return pos
            return pos  # the following group is read in place
        return pos  # unknown macro (answer marks included): drop the name, keep any following group's text

    def _drop(self, base: str, text: str, pos: int) -> int:
        spec = _DROP[base]
        if base in ("newcommand", "renewcommand", "providecommand", "DeclareRobustCommand"):
            args, pos = read_args(text, pos, "moo")
            j = _skip_space(text, pos)
            return group_end(text, j) if j < len(text) and text[j] == "{" else pos
        if base == "def":
            j = text.find("{", pos)
            return group_end(text, j) if j >= 0 else len(text)
        if base in ("newenvironment", "renewenvironment"):
            args, pos = read_args(text, pos, "moomm")
            return pos
        if base == "newtheorem":
            m = _NEWTHEOREM.match(text, pos - len("\\newtheorem"))
            return m.end() if m else pos
        if base == "DeclareMathOperator" and text.startswith("*", pos):
            pos += 1  # the starred form; its two arguments follow as for the plain one
        args, pos = read_args(text, pos, spec)
        return pos

    def _heading(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "om")
        title = _squash(self.convert(args[1] or ""))
        if base in ("paragraph", "subparagraph"):
            out.append(f"\n\n{title.rstrip('.')}. ")
            return pos
        level = _SECTION_LEVELS[base]
        number = None
        if not star and level > 0:
            self._step(base)
            number = self._section_number(level)
            kind = "Appendix" if self.in_appendix else "Section"
            self._add_target(Target(kind, number, title))
        elif star:
            self.last_target = None
        self.sections.append(Section(number=number, title=title, level=max(level, 1)))
        heading = f"{number} {title}" if number else title
        out.append(f"\n\n{heading}\n\n")
        return pos

    def _caption(self, kind: str | None, body: str) -> str:
        env = self.float_stack[-1] if self.float_stack else ""
        caption = _squash(self.convert(body))
        if env in _SUBFLOATS and len(self.float_stack) > 1:
            self.sub_counter += 1
            parent = self.float_stack[-2]
            parent_kind = _FLOATS.get(parent.rstrip("*"), "Figure")
            parent_no = self.counters.get(parent_kind, 0) + 1
            target = Target(parent_kind, f"{parent_no}{chr(96 + self.sub_counter)}")
            self.last_target = target
            return f"\n({chr(96 + self.sub_counter)}) {caption}\n"
        kind = kind or _FLOATS.get(env.rstrip("*"), "Figure")
        number = str(self._step(kind))
        self._add_target(Target(kind, number))
        return f"\n{kind} {number}: {caption}\n"

    def _environment(self, which: str, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "m")
        env = (args[0] or "").strip()
        base = env.rstrip("*")
        if which == "end":
            self._end_environment(base)
            out.append("\n")
            return pos
        if base in _VERBATIM_ENVS:
            end = text.find(f"\\end{{{env}}}", pos)
            end = len(text) if end < 0 else end
            out.append("\n" + text[pos:end] + "\n")
            return min(len(text), end + len(f"\\end{{{env}}}"))
        if base in _MATH_ENVS:
            return self._math_environment(env, base, text, pos, out)
        if base in _SKIP_ENVS:
            end_tok = f"\\end{{{env}}}"
            end = text.find(end_tok, pos)
            return len(text) if end < 0 else end + len(end_tok)
        if base in _FLOATS or base in _SUBFLOATS:
            if base in _FLOATS or base in ("subfigure", "subtable"):
                self.float_stack.append(env)
            pos = _skip_opt_and_args(text, pos, base)
            out.append("\n")
            return pos
        if base in ("tabular", "tabularx", "tabular*", "longtable", "array", "tabulary"):
            spec = "om" if base in ("tabular", "longtable", "array") else "mom"
            _, pos = read_args(text, pos, spec)
            out.append("\n")
            return pos
        if base == "abstract":
            end = env_end(text, pos - len("\\begin{abstract}"))
            body_end = text.rfind("\\end{abstract}", pos, end)
            body = text[pos : body_end if body_end >= 0 else end]
            self.abstract = _squash(self.convert(body))
            out.append(f"\n\nAbstract\n\n{self.abstract}\n\n")
            return end
        if base in self.theorems:
            return self._theorem(env, base, text, pos, out)
        if base == "thebibliography":
            _, pos = read_args(text, pos, "m")
            out.append("\n\nReferences\n")
            return pos
        if base in ("itemize", "enumerate", "description"):
            _, pos = read_args(text, pos, "o")
        out.append("\n")
        return pos

    def _end_environment(self, base: str) -> None:
        if base in _FLOATS or base in _SUBFLOATS:
            if self.float_stack:
                self.float_stack.pop()
            if base in _FLOATS:
                self.sub_counter = 0
        if base in self.theorems or base == "abstract":
            self.last_target = None if base == "abstract" else self.last_target

    def _math_environment(self, env: str, base: str, text: str, pos: int, out: list[str]) -> int:
        end_tok = f"\\end{{{env}}}"
        end = text.find(end_tok, pos)
        end = len(text) if end < 0 else end
        body = text[pos:end]
        if not env.endswith("*") and base not in ("displaymath", "math"):
            self._number_equations(base, body)
        body = re.sub(r"\\label\{[^{}]*\}|\\nonumber|\\notag", "", body)
        out.append(f"\n\\begin{{{env}}}{body}\\end{{{env}}}\n")
        return min(len(text), end + len(end_tok))

    def _theorem(self, env: str, base: str, text: str, pos: int, out: list[str]) -> int:
        kind = self.theorems[base]
        opt, pos = read_args(text, pos, "o")
        name = f" ({_squash(self.convert(opt[0]))})" if opt[0] else ""
        if kind.numbered and not env.endswith("*"):
            n = self._step(kind.counter)
            number = f"{self._within_number(kind.within)}{n}"
            self._add_target(Target(kind.name, number))
            out.append(f"\n\n{kind.name} {number}{name}. ")
        else:
            out.append(f"\n\n{kind.name}{name}. ")
        return pos

    def _within_number(self, within: str | None) -> str:
        if not within:
            return ""
        if within == "section":
            return self._section_number(1) + "."
        if within == "subsection":
            return self._section_number(2) + "."
        return ""

    def _number_equations(self, base: str, body: str) -> None:
        multiline = base in ("align", "gather", "eqnarray", "flalign", "alignat")
        rows = re.split(r"\\\\(?:\[[^\]]*\])?", body) if multiline else [body]
        for row in rows:
            if not row.strip() or re.search(r"\\(?:nonumber|notag)\b", row):
                continue
            n = self._step("equation")
            target = Target("Equation", str(n))
            self.last_target = target
            label = re.search(r"\\label\{([^{}]*)\}", row)
            if label:
                self.targets.setdefault(label.group(1).strip(), target)

    def _ref(self, base: str, text: str, pos: int, out: list[str]) -> int:
        if base in ("crefrange", "Crefrange"):
            args, pos = read_args(text, pos, "mm")
            self.refs.append(("crefrange", [args[0] or "", args[1] or ""]))
        else:
            args, pos = read_args(text, pos, "m")
            labels = [x.strip() for x in (args[0] or "").split(",") if x.strip()]
            self.refs.append((base, labels))
        out.append(f"\x00{len(self.refs) - 1}\x00")
        return pos


def _skip_opt_and_args(text: str, pos: int, base: str) -> int:
    spec = {"subfigure": "om", "subtable": "om", "minipage": "oom", "wrapfigure": "oomo", "wraptable": "oomo"}
    _, pos = read_args(text, pos, spec.get(base, "o"))
    return pos


def _is_custom_ref(name: str) -> bool:
    return bool(_CUSTOM_REF.fullmatch(name))


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# --- references to text ---------------------------------------------------------------------------

_PREFIX_KINDS = {
    "sec": "Section", "s": "Section", "ssec": "Section", "subsec": "Section", "chap": "Chapter",
    "fig": "Figure", "f": "Figure", "tab": "Table", "tbl": "Table", "t": "Table",
    "app": "Appendix", "apx": "Appendix", "appx": "Appendix", "appendix": "Appendix", "a": "Appendix",
    "eq": "Equation", "e": "Equation", "thm": "Theorem", "lem": "Lemma", "alg": "Algorithm",
    "def": "Definition", "prop": "Proposition", "cor": "Corollary", "ass": "Assumption",
}


def _kind_from_label(label: str) -> str | None:
    m = _LABEL_PREFIX.match(label)
    return _PREFIX_KINDS.get(m.group(1).lower()) if m else None


def _plural(kind: str) -> str:
    return kind + ("es" if kind.endswith("x") else "s")


def render_ref(macro: str, labels: list[str], targets: dict[str, Target]) -> str:
    """What a reader sees for a reference: ``\\ref`` gives the bare number, ``\\cref`` and friends
    the kind too ("Section 4.2", "Tables 1 and 2"). A label not in the source keeps its name, so an
    assessor can still see where the author pointed."""
    if macro == "crefrange" and len(labels) == 2:
        a, b = (targets.get(x) for x in labels)
        if a and b:
            return f"{_plural(a.kind)} {a.number} to {b.number}"
    if macro in ("eqref",):
        t = targets.get(labels[0]) if labels else None
        return f"({t.number})" if t else f"({labels[0] if labels else '?'})"
    if macro in ("pageref", "cpageref"):
        return "page ?"
    if macro == "nameref":
        t = targets.get(labels[0]) if labels else None
        return t.title if t and t.title else (labels[0] if labels else "?")
    custom_kind = None
    if macro not in _REF_MACROS:
        custom_kind = _PREFIX_KINDS.get(macro[:-3]) if macro.endswith("ref") else None
        macro = "cref"
    if macro in ("ref", "subref", "vref", "Vref"):
        return ", ".join(targets[x].number if x in targets else f"[{x}]" for x in labels)
    # \cref-style: group consecutive labels of one kind
    parts: list[tuple[str, list[str]]] = []
    for label in labels:
        t = targets.get(label)
        kind = t.kind if t else (custom_kind or _kind_from_label(label) or "")
        shown = (f"({t.number})" if t.kind == "Equation" else t.number) if t else f"[{label}]"
        if parts and parts[-1][0] == kind:
            parts[-1][1].append(shown)
        else:
            parts.append((kind, [shown]))
    rendered = []
    for kind, numbers in parts:
        joined = numbers[0] if len(numbers) == 1 else ", ".join(numbers[:-1]) + " and " + numbers[-1]
        name = kind if len(numbers) == 1 else _plural(kind)
        rendered.append(f"{name} {joined}".strip())
    return ", ".join(rendered)


_PLACEHOLDER = re.compile("\x00(\\d+)\x00")


def convert_body(latex: str, macros: Macros, theorems: dict[str, TheoremKind]) -> Converted:
    conv = _Converter(macros, theorems)
    raw = conv.convert(_expand_ref_wrappers(latex, macros))
    text = _PLACEHOLDER.sub(lambda m: render_ref(*conv.refs[int(m.group(1))], conv.targets), raw)
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return Converted(text, conv.title, conv.abstract, conv.sections, conv.targets, conv.anchors)


def _expand_ref_wrappers(text: str, macros: Macros) -> str:
    """``\\secref{x}`` defined as ``Section~\\ref{#1}`` becomes that body, so it renders as the
    author's definition prints it."""
    if not macros.refs:
        return text
    pattern = re.compile(r"\\(" + "|".join(map(re.escape, macros.refs)) + r")(?![a-zA-Z@])\s*\{([^{}]*)\}")
    return pattern.sub(lambda m: macros.refs[m.group(1)].replace("#1", m.group(2)), text)


# --- hidden text ----------------------------------------------------------------------------------

_WHITE_NAMES = frozenset({"white", "White", "WHITE", "white!100", "bg", "background"})
_DEFINE_COLOR = re.compile(r"\\(?:definecolor|providecolor)\s*\{([^{}]+)\}\s*\{([^{}]+)\}\s*\{([^{}]+)\}")
_COLORLET = re.compile(r"\\colorlet\s*\{([^{}]+)\}\s*\{([^{}]+)\}")
_WHITE_SPECS = {"rgb": ["1"] * 3, "RGB": ["255"] * 3, "HTML": ["FFFFFF"], "gray": ["1"], "cmyk": ["0"] * 4,
                "named": ["white"]}


def _is_white(model: str, spec: str) -> bool:
    parts = [p.strip() for p in spec.split(",")]
    want = _WHITE_SPECS.get(model.strip())
    if want is None or len(parts) != len(want):
        return False
    try:
        return all(float(p) == float(w) for p, w in zip(parts, want, strict=True))
    except ValueError:
        return [p.upper() for p in parts] == [w.upper() for w in want]


def white_color_names(latex: str) -> set[str]:
    """Colour names that render white in this document: the standard ones plus any the author
    defined as white (``\\definecolor{bg}{rgb}{1,1,1}``, ``\\colorlet{x}{white}``), so renaming
    white does not hide text from the check."""
    names = set(_WHITE_NAMES)
    for name, model, spec in _DEFINE_COLOR.findall(latex):
        if _is_white(model, spec):
            names.add(name.strip())
    for name, base in _COLORLET.findall(latex):
        if base.strip() in names:
            names.add(name.strip())
    return names


def _color_patterns(latex: str) -> list[tuple[str, re.Pattern[str]]]:
    white = "(?:" + "|".join(map(re.escape, sorted(white_color_names(latex), key=len, reverse=True))) + ")"
    return [
        ("white text", re.compile(r"\\textcolor\s*\{\s*" + white + r"\s*\}\s*\{")),
        ("white text", re.compile(r"\\color\s*\{\s*" + white + r"\s*\}")),
    ]


_HIDDEN_PATTERNS = [
    ("white text", re.compile(r"\\textcolor\s*\[\s*(?:rgb|RGB|gray)\s*\]\s*"
                              r"\{\s*(?:1\s*,\s*1\s*,\s*1|255\s*,\s*255\s*,\s*255|1)\s*\}\s*\{")),
    ("phantom text", re.compile(r"\\phantom\s*\{")),
    ("microscopic font", re.compile(r"\\fontsize\s*\{\s*(?:0?\.\d+|[01](?:\.\d*)?)\s*(?:pt)?\s*\}"
                                    r"\s*\{[^{}]*\}\s*\\selectfont")),
    ("scaled-away text", re.compile(r"\\scalebox\s*\{\s*0?\.0\d*\s*\}\s*\{")),
    ("scaled-away text", re.compile(r"\\resizebox\s*\{\s*0?\.0\d*\\[a-z]+\s*\}\s*\{[^{}]*\}\s*\{")),
]


_PHANTOM_PROSE_WORDS = 4


def find_hidden_text(latex: str, macros: Macros) -> list[ParseWarning]:
    """Warnings for text present in the source but invisible in the PDF (a prompt-injection trick)."""
    return [hidden_warning(run) for run in find_hidden_runs(latex, macros)]


def hidden_warning(run: HiddenRun) -> ParseWarning:
    quote = run.text if len(run.text) <= 80 else run.text[:77] + "..."
    return ParseWarning(kind=WarningKind.HIDDEN_TEXT, location=run.technique,
                        message=f'hidden text ({run.technique}, invisible when compiled): "{quote}"')


def find_hidden_runs(latex: str, macros: Macros) -> list[HiddenRun]:
    """Text present in the source but invisible in the PDF, one run per hiding command."""
    runs = []
    for what, pattern in _color_patterns(latex) + _HIDDEN_PATTERNS:
        for m in pattern.finditer(latex):
            start = m.end() - 1 if latex[m.end() - 1] == "{" else m.end()
            if latex[start : start + 1] == "{":
                snippet = latex[start + 1 : group_end(latex, start) - 1]
            else:
                # \color{white} / \selectfont act until the enclosing group closes
                close = _enclosing_group_end(latex, m.start())
                snippet = latex[m.end() : close]
            conv = _Converter(macros, {})
            shown = _squash(_PLACEHOLDER.sub("", conv.convert(snippet)))
            if not shown or (what == "phantom text" and len(shown.split()) < _PHANTOM_PROSE_WORDS):
                continue  # \phantom{00.0} aligns table columns: ordinary typesetting, not hidden prose
            runs.append(HiddenRun(technique=what, text=shown[:200]))
    return runs


def _enclosing_group_end(text: str, pos: int) -> int:
    """Where a declaration at ``pos`` (``\\color{white}``, ``\\tiny``) stops acting: the close of the
    group it sits in, or, outside any group, a paragraph break once the span is long enough to matter."""
    depth = 0
    i = pos
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                return i
            depth -= 1
        elif text.startswith("\n\n", i) and depth == 0 and i - pos > 400:
            return i
        i += 1
    return n


# --- the checklist region -------------------------------------------------------------------------

_CHECKLIST_HEADING = re.compile(
    r"\\(?:section|chapter|subsection|paragraph)\*?\s*(?:\[[^\]]*\])?\s*\{[^{}]*?[Cc]hecklist[^{}]*\}"
)
_NEXT_HEADING = re.compile(
    r"\\(?:section|chapter|appendix|bibliography|printbibliography|end\{document\})(?![a-zA-Z@])")
_ANSWER_MACRO = re.compile(r"\\answer(Yes|No|NA|TODO)(?![a-zA-Z@])")
_ANSWER_BRACKET = re.compile(r"\[\s*(Yes|No|NA|N/A|TODO)\s*\]")
_GUIDELINES = re.compile(r"Guidelines\s*:?\s*\}?\s*(?=\\begin\s*\{(?:itemize|enumerate)\})")
_ITEM = re.compile(r"\\item(?![a-zA-Z@])")
_LIST_END = re.compile(r"\\end\s*\{(?:enumerate|itemize|description)\}")
# Sentences of the official instruction blocks that contain answer macros without being answers.
_INSTRUCTION_PHRASES = (
    "you should answer",
    "means either that the question is not applicable",
    "is generally preferable to",
    "change the default",
    "did you include the license to the code and datasets",
    "justification right after your answer",
    "grounds for rejection",
    "proper justification is given",
    "replace by",
    "for each question",
)
_LABEL = re.compile(
    r"^\s*(?:\\(?:textbf|emph|textit|bf|it|underline)\s*)?\{?\s*(?:Justification|Answer|Question)\s*:?\s*\}?\s*:?",
    re.I,
)


@dataclass
class Region:
    start: int
    end: int
    heading_numbered: bool = False


def find_region(text: str) -> Region | None:
    """The live checklist: from its heading to the next top-level heading; without a heading (a
    fragment), the lists that hold the answer marks."""
    for m in _CHECKLIST_HEADING.finditer(text):
        nxt = _NEXT_HEADING.search(text, m.end())
        end = nxt.start() if nxt else len(text)
        if _ANSWER_MACRO.search(text, m.end(), end) or _ANSWER_BRACKET.search(text, m.end(), end):
            numbered = "*" not in text[m.start() : m.start() + 12] and text.startswith("\\section", m.start())
            return Region(m.start(), end, numbered)
    # Answer macros in the preamble are definitions (\newcommand{\answerYes}...), not answers.
    body_start = text.find("\\begin{document}")
    marks = [m.start() for m in _ANSWER_MACRO.finditer(text, max(body_start, 0))]
    if not marks:
        return None
    start = _enclosing_list_start(text, marks[0])
    last = marks[-1]
    end_m = None
    depth = 0
    for tok in _ENV_TOKEN.finditer(text, start):
        if tok.group(2) not in ("enumerate", "itemize", "description"):
            continue
        depth += 1 if tok.group(1) == "begin" else -1
        if depth == 0 and tok.end() > last:
            end_m = tok.end()
            break
    return Region(start, end_m or len(text))


def _enclosing_list_start(text: str, pos: int) -> int:
    """Start of the outermost list environment around ``pos`` (or ``pos``'s paragraph)."""
    stack: list[int] = []
    outer = None
    for tok in _ENV_TOKEN.finditer(text, 0, pos):
        if tok.group(2) not in ("enumerate", "itemize", "description"):
            continue
        if tok.group(1) == "begin":
            stack.append(tok.start())
        elif stack:
            stack.pop()
    if stack:
        outer = stack[0]
    return outer if outer is not None else max(0, text.rfind("\n\n", 0, pos))


def _remove_guidelines(region: str) -> str:
    """Guideline bullets restate the template (and in 2026 contain answer macros); never answers."""
    out = []
    pos = 0
    for m in _GUIDELINES.finditer(region):
        if m.start() < pos:
            continue
        out.append(region[pos : m.start()])
        pos = env_end(region, m.end())
    out.append(region[pos:])
    return "".join(out)


@dataclass
class Mark:
    answer: Answer
    start: int
    end: int  # after the macro and its optional [..] argument
    arg: str | None  # the [..] or {..} text right after the macro


def _bracket_mark(m: re.Match[str]) -> Mark:
    """A plain ``[Yes]``; _ANSWER_BRACKET matches only spellings normalize_answer knows."""
    answer = normalize_answer(m.group(1))
    assert answer is not None, m.group(1)
    return Mark(answer, m.start(), m.end(), None)


def _answer_marks(region: str) -> list[Mark]:
    marks = []
    found = list(_ANSWER_MACRO.finditer(region))
    for index, m in enumerate(found):
        end = m.end()
        arg_parts = []
        j = end
        if j < len(region) and region[j] == "[":
            k = bracket_end(region, j)
            arg_parts.append(region[j + 1 : k - 1])
            j = k
        k = _skip_space_inline(region, j)
        if k < len(region) and region[k] == "{":
            e = group_close(region, k)
            if e < 0:  # never closed: it runs to the paragraph's end or the next answer, not the document's
                stops = [_next_at(_Landmarks.of(region).pars, k), len(region)]
                stops += [found[index + 1].start()] if index + 1 < len(found) else []
                e = min(x for x in stops if x >= 0) + 1
            arg_parts.append(region[k + 1 : e - 1])
            j = min(e, len(region))
        arg = " ".join(p for p in arg_parts if p.strip()) or None
        marks.append(Mark(Answer(m.group(1)), m.start(), j, arg))
    if not marks:
        for m in _ANSWER_BRACKET.finditer(region):
            marks.append(_bracket_mark(m))
    else:
        # plain [Yes] after an "Answer:" label counts even when other answers use macros
        for m in _ANSWER_BRACKET.finditer(region):
            if re.search(r"Answer\s*:?\s*\}?\s*:?\s*$", region[max(0, m.start() - 30) : m.start()]):
                marks.append(_bracket_mark(m))
        marks.sort(key=lambda mk: mk.start)
    return marks


def _skip_space_inline(text: str, i: int) -> int:
    # A justification group may sit on the next line, but not after a blank line.
    j = i
    while j < len(text) and text[j] in " \t":
        j += 1
    if j < len(text) and text[j] == "\n":
        j += 1
        while j < len(text) and text[j] in " \t":
            j += 1
    return j


class _Landmarks:
    """Where items, list ends, environments and paragraph breaks start in a region, found once: every
    answer asks for the nearest ones, and scanning the region again per answer is quadratic when
    they are far or missing."""

    _cache: list[tuple[str, _Landmarks]] = []

    def __init__(self, region: str):
        self.items = [m.start() for m in _ITEM.finditer(region)]
        self.list_ends = [m.start() for m in _LIST_END.finditer(region)]
        self.begins = [m.start() for m in re.finditer(r"\\begin\{", region)]
        self.pars = [m.start() for m in re.finditer(r"\n(?=\n)", region)]

    @classmethod
    def of(cls, region: str) -> _Landmarks:
        for cached, marks in cls._cache:
            if cached is region:
                return marks
        marks = cls(region)
        cls._cache.insert(0, (region, marks))
        del cls._cache[2:]
        return marks


def _next_at(starts: list[int], pos: int) -> int:
    """The first start at or after ``pos``, or -1."""
    i = bisect.bisect_left(starts, pos)
    return starts[i] if i < len(starts) else -1


def _last_before(starts: list[int], pos: int) -> int:
    """The last start before ``pos``, or -1."""
    i = bisect.bisect_left(starts, pos)
    return starts[i - 1] if i > 0 else -1


def _unit_bounds(region: str, pos: int) -> tuple[int, int]:
    """The \\item (or paragraph) around ``pos``."""
    marks = _Landmarks.of(region)
    prev_item = max(0, _last_before(marks.items, pos))
    # a paragraph break "\n\n" ending before pos (rfind semantics: it may end at pos + 1)
    prev_par = _last_before(marks.pars, pos - 1)
    start = max(prev_item, prev_par if prev_par >= 0 else 0)
    ends = [x for x in (_next_at(marks.items, pos), _next_at(marks.pars, pos)) if x >= 0]
    return start, min(ends) if ends else len(region)


def _is_instruction(region: str, mark: Mark) -> bool:
    start, end = _unit_bounds(region, mark.start)
    unit = " ".join(region[start:end].lower().split())
    return any(p in unit for p in _INSTRUCTION_PHRASES)


def _tail(region: str, pos: int) -> tuple[str, int]:
    """Text after an answer up to the next \\item or the end of the list."""
    marks = _Landmarks.of(region)
    ends = [x for x in (_next_at(marks.items, pos), _next_at(marks.list_ends, pos), _next_at(marks.begins, pos))
            if x >= 0]
    end = min(ends) if ends else len(region)
    return region[pos:end], end


def _strip_label(text: str) -> str:
    text = text.strip()
    text = re.sub(r"^(?:\\\\|[\s.,;:])+", "", text)
    text = _LABEL.sub("", text, count=1)
    text = re.sub(r"\\justificationTODO\s*(?:\{\})?", "", text)
    return re.sub(r"(?:\\\\|\s)+$", "", text).strip()


def _is_trivial(text: str) -> bool:
    return not re.sub(r"[\s.,;:\\{}~]+", "", text)


_EMPTY_ITEM_LABEL = re.compile(r"\s*\[\s*\]\s*")
_UNIT_WORD = re.compile(r"(?:\\(?:textbf|emph|textit)\s*)?\{?\s*(\w+)\s*:?")


def _justification_after(region: str, mark: Mark) -> tuple[str | None, int]:
    """Raw LaTeX justification for ``mark`` and the index where the next question's text begins."""
    pieces = [mark.arg] if mark.arg and not _is_trivial(mark.arg) else []
    tail, end = _tail(region, mark.end)
    tail_text = _strip_label(tail)
    if not _is_trivial(tail_text):
        pieces.append(tail_text)
    nxt = _ITEM.match(region, end)
    if nxt:
        m = _EMPTY_ITEM_LABEL.match(region, nxt.end())
        if m:
            body_start = m.end()
            label = _UNIT_WORD.match(region, body_start)
            word = (label.group(1).lower() if label else "")
            if word not in ("question", "answer", "guidelines"):
                unit_text, unit_end = _tail(region, body_start)
                cleaned = _strip_label(unit_text)
                if not _is_trivial(cleaned):
                    pieces.append(cleaned)
                end = unit_end
    joined = "\n".join(p.strip() for p in pieces if p and p.strip())
    return (joined or None), end


# --- putting it together --------------------------------------------------------------------------


def _match_text(segment: str) -> list[str]:
    """Candidate texts naming the question of a segment: its last item, last two, last three,
    so a live instruction block or a group heading in front does not drown the question."""
    units = [u for u in _ITEM.split(segment)]
    cleaned = []
    for u in units:
        u = re.sub(r"^\s*\[[^\]]*\]", "", u)
        u = re.sub(r"\b(?:Question|Answer|Justification)\s*:", " ", u)
        u = _ANSWER_MACRO.sub(" ", u)
        u = re.sub(r"\\(?:begin|end)\s*\{[^{}]*\}", " ", u)
        if u.strip():
            cleaned.append(u)
    return [" ".join(cleaned[-k:]) for k in range(1, min(3, len(cleaned)) + 1)]


def _best_match(spec: ChecklistSpec, segment: str) -> str | None:
    best: tuple[float, str] | None = None
    for candidate in _match_text(segment):
        scores = checklists.match_scores(spec, candidate)
        qid = checklists.best_match(scores)
        if qid is None:
            continue
        score = scores[qid]
        if best is None or score > best[0]:
            best = (score, qid)
    return best[1] if best else None


_L2T = None


def _latex2text():
    """pylatexenc's converter, built once, taught the macros checklists use."""
    global _L2T
    if _L2T is None:
        from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

        db = get_default_latex_context_db()
        db.add_context_category(
            "checklist-eval",
            prepend=True,
            macros=[
                MacroTextSpec("answerYes", simplify_repl="[Yes]"),
                MacroTextSpec("answerNo", simplify_repl="[No]"),
                MacroTextSpec("answerNA", simplify_repl="[N/A]"),
                MacroTextSpec("answerTODO", simplify_repl="[TODO]"),
                MacroTextSpec("justificationTODO", simplify_repl=""),
                MacroTextSpec("footnote", simplify_repl=" (%(1)s)"),
                MacroTextSpec("textcolor", simplify_repl="%(3)s"),
                MacroTextSpec("xspace", simplify_repl=""),
                MacroTextSpec("label", simplify_repl=""),
                MacroTextSpec("slash", simplify_repl="/"),
            ],
        )
        from pylatexenc.latexwalker import get_default_latex_context_db as walker_db

        _L2T = (LatexNodes2Text(latex_context=db, math_mode="text", strict_latex_spaces=False), walker_db())
    return _L2T


_FORMATTING = re.compile(r"\\(?:textbf|textit|emph|texttt|textsc|textrm|textsf|underline|mbox|text)\s*\{([^{}\\$]*)\}")
_NEEDS_LATEX = re.compile(r"[\\{}$%&^_#]")


def _simple_markup(text: str) -> str:
    """Unwrap plain formatting macros and ties with regexes; pylatexenc only sees what is left."""
    text = text.replace("~", " ")
    for _ in range(3):
        new = _FORMATTING.sub(r"\1", text)
        if new == text:
            break
        text = new
    return text


def _pylatexenc_text(text: str) -> str:
    l2t, walker_db = _latex2text()
    try:
        from pylatexenc.latexwalker import LatexWalker

        nodes, _, _ = LatexWalker(text, latex_context=walker_db, tolerant_parsing=True).get_latex_nodes()
        return l2t.nodelist_to_text(nodes)
    except Exception:  # pylatexenc gives up on some malformed input; the raw text is still readable
        return text


_URL_ANY = re.compile(r"\\href\s*\{([^{}]*)\}\s*\{((?:[^{}]|\{[^{}]*\})*)\}|\\url\s*\{([^{}]*)\}")
_REF_ANY = re.compile(r"\\([a-zA-Z]+)\*?(?![a-zA-Z@])\s*\{([^{}]*)\}(?:\s*\{([^{}]*)\})?")
_CITE_ANY = re.compile(
    r"\\(?:[cC]ite[a-zA-Z]*|[pP]arencite|[tT]extcite|autocite)\*?\s*(?:\[[^\]]*\]\s*){0,2}\{([^{}]*)\}")


def readable(latex: str, macros: Macros, targets: dict[str, Target]) -> str:
    """A justification or title as a reader sees it: references resolved, macros rendered."""
    text = _expand_ref_wrappers(latex, macros)

    def ref(m: re.Match) -> str:
        name = m.group(1)
        if name in _REF_MACROS or name in macros.refs or _is_custom_ref(name):
            if name in ("crefrange", "Crefrange"):
                return render_ref("crefrange", [m.group(2).strip(), (m.group(3) or "").strip()], targets)
            labels = [x.strip() for x in m.group(2).split(",") if x.strip()]
            shown = render_ref(name, labels, targets)
            return shown + (f" {{{m.group(3)}}}" if m.group(3) is not None else "")
        return m.group(0)

    text = _REF_ANY.sub(ref, text)
    text = _CITE_ANY.sub(lambda m: "[" + ", ".join(k.strip() for k in m.group(1).split(",")) + "]", text)
    text = expand_text_macros(text, macros)
    # URLs hold characters LaTeX treats specially (% _ #); they are set aside and put back verbatim.
    urls: list[str] = []

    def keep_url(m: re.Match) -> str:
        url, label = m.group(1) or m.group(3), m.group(2)
        if label is not None:
            label = _squash(_pylatexenc_text(label))
        shown = url if not label or label == url.strip() else f"{label} ({url})"
        urls.append(shown)
        return f"\x01{len(urls) - 1}\x01"

    text = _URL_ANY.sub(keep_url, text)
    text = _simple_markup(text)
    if _NEEDS_LATEX.search(text):
        out = _pylatexenc_text(text)
    else:  # plain prose after the substitutions: walking it with pylatexenc would change nothing
        out = text
    out = re.sub("\x01(\\d+)\x01", lambda m: urls[int(m.group(1))], out)
    return _squash(out.replace("\u00a0", " "))


# Answers past the questions' count that get a warning line each; the rest are counted in one line.
MAX_MARK_WARNINGS = 20
# Real justifications are a few sentences; one of megabytes is an attack on the reader (and the prompt).
MAX_JUSTIFICATION_CHARS = 20_000


def extract_checklist(
    text: str, region: Region, spec: ChecklistSpec, macros: Macros, targets: dict[str, Target]
) -> tuple[Checklist, list[ParseWarning], int]:
    """Every question of ``spec`` with the answer and justification found in the region; also the
    warnings and the number of answer marks read."""
    raw = _remove_guidelines(text[region.start : region.end])
    marks = [m for m in _answer_marks(raw) if not _is_instruction(raw, m)]
    found: dict[str, tuple[Answer, str | None]] = {}
    warnings: list[ParseWarning] = []
    seg_start = 0
    unused = 0
    for mark in marks:
        if mark.start < seg_start:
            continue  # an answer mark inside the previous justification
        segment = raw[seg_start : mark.start]
        justification, seg_start = _justification_after(raw, mark)
        qid = _best_match(spec, segment)
        if qid is None or qid in found:
            unused += 1
            if unused > MAX_MARK_WARNINGS:
                continue  # a hostile checklist can hold thousands: each costs a conversion and a line
            if qid is None:
                shown = _squash(readable(segment[-160:], macros, targets))[-80:]
                warnings.append(ParseWarning(
                    kind=WarningKind.UNMATCHED_ANSWER,
                    message=f"answer [{mark.answer.value}] not matched to a question of {spec.id} "
                            f"(after: \"{shown}\")"))
            else:
                warnings.append(ParseWarning(kind=WarningKind.DUPLICATE_ANSWER, location=qid,
                                             message=f"question {qid} answered twice; kept the first answer"))
            continue
        if justification and len(justification) > MAX_JUSTIFICATION_CHARS:
            warnings.append(ParseWarning(
                kind=WarningKind.TRUNCATED, location=qid,
                message=f"justification of question {qid} is {len(justification)} characters long; "
                        f"kept the first {MAX_JUSTIFICATION_CHARS}"))
            justification = justification[:MAX_JUSTIFICATION_CHARS]
        found[qid] = (mark.answer, justification)
    if unused > MAX_MARK_WARNINGS:
        warnings.append(ParseWarning(kind=WarningKind.UNMATCHED_ANSWER,
                                     message=f"{unused - MAX_MARK_WARNINGS} more answers not matched or repeated"))
    items = []
    for q in spec.questions:
        answer, just = found.get(q.id, (None, None))
        items.append(
            ChecklistItem.for_question(
                q, answer, readable(just, macros, targets) if just else None, justification_latex=just
            )
        )
    missing = [q.id for q in spec.questions if q.id not in found]
    if found and missing:
        warnings.append(ParseWarning(kind=WarningKind.MISSING_ANSWER, location=", ".join(missing),
                                     message=f"no answer found for question(s) {', '.join(missing)} of {spec.id}"))
    return Checklist(id=spec.id, items=items), warnings, len(found)


def _skipped_inputs_note(warnings: list[ParseWarning]) -> str:
    """The checklist often lives in its own file: when an \\input was skipped, say so in the error."""
    skipped = [w for w in warnings if w.kind is WarningKind.INPUT_SKIPPED]
    return f"; note: {skipped[0]}" + (f" (+{len(skipped) - 1} more)" if len(skipped) > 1 else "") if skipped else ""


def parse_latex(
    text: str,
    source: str,
    *,
    spec: ChecklistSpec | None = None,
    warnings: list[ParseWarning] | None = None,
) -> Paper:
    """A :class:`Paper` from flattened live LaTeX (see ``sources.load_latex``)."""
    warnings = list(warnings or [])
    region = find_region(text)
    if region is None:
        raise NoChecklistError(source, "no live checklist found (no \\answerYes/\\answerNo/\\answerNA/\\answerTODO "
                                       "or [Yes]/[No]/[NA] marks outside comments)"
                               + _skipped_inputs_note(warnings))
    region_text = text[region.start : region.end]
    if spec is None:
        spec = checklists.load(checklists.detect(region_text))
    macros = collect_macros(text[: region.start] if "\\begin{document}" in text else text)
    body_src = _body_source(text, region)
    theorems = theorem_kinds(text)
    converted = convert_body(body_src, macros, theorems)
    result, check_warnings, answered = extract_checklist(text, region, spec, macros, converted.targets)
    if answered == 0:
        raise NoChecklistError(source, f"a checklist section is present but no answer could be matched to a "
                                       f"{spec.id} question")
    warnings.extend(check_warnings)
    hidden = find_hidden_runs(text, macros)
    warnings.extend(hidden_warning(run) for run in hidden)
    return Paper(
        source=source,
        format="latex",
        title=converted.title,
        abstract=converted.abstract,
        body=converted.text,
        sections=converted.sections,
        anchors=converted.anchors,
        checklist=result,
        warnings=warnings,
        hidden_text=hidden,
    )


def _body_source(text: str, region: Region) -> str:
    """The document body without the checklist (a numbered checklist heading still steps the
    section counter, so later appendix numbers stay right)."""
    filler = "\\stepcounter{section}" if region.heading_numbered else ""
    doc = text[: region.start] + filler + text[region.end :]
    begin = doc.find("\\begin{document}")
    if begin >= 0:
        preamble = doc[:begin]
        title = re.search(r"\\title\s*(?:\[[^\]]*\])?\s*\{", preamble)
        keep = ""
        if title:
            keep = preamble[title.start() : group_end(preamble, title.end() - 1)]
        doc = keep + doc[begin + len("\\begin{document}") :]
    end = doc.find("\\end{document}")
    return doc[:end] if end >= 0 else doc
