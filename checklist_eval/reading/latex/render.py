"""The body converter: one left-to-right pass over live LaTeX that produces the reading text and
numbers sections, floats, theorems and equations on the way.

Speed shapes it: pylatexenc walking a whole paper costs about 3 ms per KB, three times the budget, so
the body is read by this regex-driven scanner and pylatexenc only sees short pieces (see ``readable``).
Each macro is read by a small handler found in a table by the macro's name.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from checklist_eval.models import Section
from checklist_eval.reading.latex.lexer import env_end, group_end, read_args, skip_space, squash
from checklist_eval.reading.latex.macros import Macros, expand_ref_wrappers
from checklist_eval.reading.latex.numbering import (
    NEWTHEOREM,
    REF_MACROS,
    SECTION_LEVELS,
    Target,
    TheoremKind,
    alph,
    is_custom_ref,
    render_ref,
)
from checklist_eval.reading.latex.vocabulary import (
    ACCENTS,
    CITE,
    DROP,
    FLOATS,
    KEEP,
    MATH_ENVS,
    NO_OP,
    SKIP_ENVS,
    SUBFLOATS,
    SYMBOLS,
    TOKEN,
    VERBATIM_ENVS,
    WORD_MACROS,
)


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


class Converter:
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
        self._anchor_set: set[str] = set()  # membership in O(1): thousands of headings share anchors
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
        head = alph(sec) if self.in_appendix else str(sec)
        parts = [head]
        if level >= 2:
            parts.append(str(self.counters.get("subsection", 0)))
        if level >= 3:
            parts.append(str(self.counters.get("subsubsection", 0)))
        return ".".join(parts)

    def _add_target(self, target: Target) -> None:
        self.last_target = target
        anchor = target.anchor
        if anchor not in self._anchor_set:
            self._anchor_set.add(anchor)
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
            m = TOKEN.search(text, pos)
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

    def _macro(self, name: str, text: str, pos: int, out: list[str]) -> int:
        """Read one macro: its handler takes its arguments from ``text`` at ``pos``, writes what it
        shows to ``out`` and returns where reading goes on. The document's own text macros come first
        (an author may redefine anything), then LaTeX's, in the precedence of the tables below."""
        if len(name) == 1 and not name.isalpha():
            return self._symbol(name, text, pos, out)
        star = name.endswith("*")
        base = name.rstrip("*")
        if base in self.macros.text:
            out.append(self._expand(base))
            return pos
        if base in self.macros.headings:
            return self._heading(self.macros.headings[base], star, text, pos, out)
        handler = _STRUCTURE_HANDLERS.get(base)
        if handler is None:
            handler = self._reference_handler(base) or _TEXT_HANDLERS.get(base)
        if handler is None:
            return pos  # unknown macro (answer marks included): drop the name, keep any following group's text
        return handler(self, base, star, text, pos, out)

    def _reference_handler(self, base: str) -> Handler | None:
        if base in REF_MACROS or base in self.macros.refs or is_custom_ref(base):
            return Converter._ref
        if CITE.match(base):
            return Converter._cite
        return None

    # --- macro handlers: (base name, starred?, text, position after the name, output) -> new position

    def _symbol(self, name: str, text: str, pos: int, out: list[str]) -> int:
        if name in ACCENTS and pos < len(text):
            args, pos = read_args(text, pos, "m")
            base = (args[0] or "").lstrip("\\") or " "
            out.append(unicodedata.normalize("NFC", base[0] + ACCENTS[name]) + base[1:])
            return pos
        if name in ("[", "("):  # display math \[ ... \] and inline math \( ... \)
            close = "\\]" if name == "[" else "\\)"
            end = text.find(close, pos)
            end = len(text) if end < 0 else end
            out.append("\\[" + text[pos:end] + "\\]" if name == "[" else "$" + text[pos:end] + "$")
            return min(len(text), end + 2)
        out.append(SYMBOLS.get(name, ""))
        return pos

    def _appendix(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        self.in_appendix = True
        self.counters["section"] = 0
        self._reset_below("section")
        return pos

    def _stepcounter(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "m")
        if args[0] in SECTION_LEVELS:
            self._step(args[0])
        return pos

    def _caption_macro(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        spec = "mom" if base == "captionof" else "om"
        args, pos = read_args(text, pos, spec)
        kind = FLOATS.get(args[0] or "", "Figure") if base == "captionof" else None
        out.append(self._caption(kind, args[-1] or ""))
        return pos

    def _label(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "m")
        if self.last_target is not None:
            self.targets.setdefault((args[0] or "").strip(), self.last_target)
        return pos

    def _title(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "om")
        self.title = squash(self.convert(args[1] or ""))
        return pos

    def _maketitle(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        if self.title:
            out.append(self.title + "\n\n")
        return pos

    def _cite(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "oom")
        keys = ", ".join(k.strip() for k in (args[-1] or "").split(","))
        out.append(f"[{keys}]")
        return pos

    def _url(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "m")
        out.append(args[0] or "")
        return pos

    def _href(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "mm")
        link = self.convert(args[1] or "")
        out.append(link if link.strip() == (args[0] or "").strip() else f"{link} ({args[0]})")
        return pos

    def _footnote(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "om")
        out.append(f" (footnote: {squash(self.convert(args[-1] or ''))})")
        return pos

    def _item(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "o")
        label = self.convert(args[0]) if args[0] else "-"
        out.append(f"\n{label} ".lstrip(" ") if label else "\n")
        return pos

    def _bibitem(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "om")
        out.append(f"\n[{(args[1] or '').strip()}] ")
        return pos

    def _textcolor(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "omm")
        out.append(self.convert(args[2] or ""))
        return pos

    def _no_op(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        return pos

    def _word(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        out.append(WORD_MACROS[base])
        if pos < len(text) and text.startswith("{}", pos):
            pos += 2
        return pos

    def _last_argument(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        """Boxes and table cells: only the last argument is text."""
        args, pos = read_args(text, pos, _LAST_ARGUMENT_SPECS[base])
        out.append(self.convert(args[-1] or ""))
        return pos

    def _drop(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        """A macro whose arguments carry no reading text: skip them."""
        if base in ("newcommand", "renewcommand", "providecommand", "DeclareRobustCommand"):
            args, pos = read_args(text, pos, "moo")
            j = skip_space(text, pos)
            return group_end(text, j) if j < len(text) and text[j] == "{" else pos
        if base == "def":
            j = text.find("{", pos)
            return group_end(text, j) if j >= 0 else len(text)
        if base in ("newenvironment", "renewenvironment"):
            args, pos = read_args(text, pos, "moomm")
            return pos
        if base == "newtheorem":
            m = NEWTHEOREM.match(text, pos - len("\\newtheorem"))
            return m.end() if m else pos
        if base == "DeclareMathOperator" and text.startswith("*", pos):
            pos += 1  # the starred form; its two arguments follow as for the plain one
        args, pos = read_args(text, pos, DROP[base])
        return pos

    def _heading(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        args, pos = read_args(text, pos, "om")
        title = squash(self.convert(args[1] or ""))
        if base in ("paragraph", "subparagraph"):
            out.append(f"\n\n{title.rstrip('.')}. ")
            return pos
        level = SECTION_LEVELS[base]
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
        caption = squash(self.convert(body))
        if env in SUBFLOATS and len(self.float_stack) > 1:
            self.sub_counter += 1
            parent = self.float_stack[-2]
            parent_kind = FLOATS.get(parent.rstrip("*"), "Figure")
            parent_no = self.counters.get(parent_kind, 0) + 1
            target = Target(parent_kind, f"{parent_no}{chr(96 + self.sub_counter)}")
            self.last_target = target
            return f"\n({chr(96 + self.sub_counter)}) {caption}\n"
        kind = kind or FLOATS.get(env.rstrip("*"), "Figure")
        number = str(self._step(kind))
        self._add_target(Target(kind, number))
        return f"\n{kind} {number}: {caption}\n"

    def _environment(self, which: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        """``\\begin{env}`` or ``\\end{env}``: an environment is read by the handler its name finds
        in the tables below (the document's theorem-like environments between the two)."""
        args, pos = read_args(text, pos, "m")
        env = (args[0] or "").strip()
        base = env.rstrip("*")
        if which == "end":
            self._end_environment(base)
            out.append("\n")
            return pos
        handler = _ENVIRONMENTS.get(base)
        if handler is None and base in self.theorems:
            handler = Converter._theorem
        if handler is None:
            handler = _LIST_ENVIRONMENTS.get(base, Converter._plain_environment)
        return handler(self, env, base, text, pos, out)

    # --- environment handlers: (name as written, name without star, text, position after the
    # \begin{...}, output) -> new position

    def _verbatim(self, env: str, base: str, text: str, pos: int, out: list[str]) -> int:
        end = text.find(f"\\end{{{env}}}", pos)
        end = len(text) if end < 0 else end
        out.append("\n" + text[pos:end] + "\n")
        return min(len(text), end + len(f"\\end{{{env}}}"))

    def _skipped(self, env: str, base: str, text: str, pos: int, out: list[str]) -> int:
        end_tok = f"\\end{{{env}}}"
        end = text.find(end_tok, pos)
        return len(text) if end < 0 else end + len(end_tok)

    def _float(self, env: str, base: str, text: str, pos: int, out: list[str]) -> int:
        if base in FLOATS or base in ("subfigure", "subtable"):
            self.float_stack.append(env)
        pos = _skip_opt_and_args(text, pos, base)
        out.append("\n")
        return pos

    def _tabular(self, env: str, base: str, text: str, pos: int, out: list[str]) -> int:
        spec = "om" if base in ("tabular", "longtable", "array") else "mom"
        _, pos = read_args(text, pos, spec)
        out.append("\n")
        return pos

    def _abstract(self, env: str, base: str, text: str, pos: int, out: list[str]) -> int:
        end = env_end(text, pos - len("\\begin{abstract}"))
        body_end = text.rfind("\\end{abstract}", pos, end)
        body = text[pos : body_end if body_end >= 0 else end]
        self.abstract = squash(self.convert(body))
        out.append(f"\n\nAbstract\n\n{self.abstract}\n\n")
        return end

    def _bibliography(self, env: str, base: str, text: str, pos: int, out: list[str]) -> int:
        _, pos = read_args(text, pos, "m")
        out.append("\n\nReferences\n")
        return pos

    def _list(self, env: str, base: str, text: str, pos: int, out: list[str]) -> int:
        _, pos = read_args(text, pos, "o")
        out.append("\n")
        return pos

    def _plain_environment(self, env: str, base: str, text: str, pos: int, out: list[str]) -> int:
        out.append("\n")
        return pos

    def _end_environment(self, base: str) -> None:
        if base in FLOATS or base in SUBFLOATS:
            if self.float_stack:
                self.float_stack.pop()
            if base in FLOATS:
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
        name = f" ({squash(self.convert(opt[0]))})" if opt[0] else ""
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

    def _ref(self, base: str, star: bool, text: str, pos: int, out: list[str]) -> int:
        if base in ("crefrange", "Crefrange"):
            args, pos = read_args(text, pos, "mm")
            self.refs.append(("crefrange", [args[0] or "", args[1] or ""]))
        else:
            args, pos = read_args(text, pos, "m")
            labels = [x.strip() for x in (args[0] or "").split(",") if x.strip()]
            self.refs.append((base, labels))
        out.append(f"\x00{len(self.refs) - 1}\x00")
        return pos



Handler = Callable[[Converter, str, bool, str, int, list[str]], int]
_LAST_ARGUMENT_SPECS = {"multicolumn": "mmm", "multirow": "mom", "parbox": "oomm", "makebox": "oom",
                        "framebox": "oom"}


def _table(*groups: tuple[Iterable[str], Handler]) -> dict[str, Handler]:
    """Macro names to handlers; a name in several groups keeps the first group's handler."""
    table: dict[str, Handler] = {}
    for names, handler in groups:
        for name in names:
            table.setdefault(name, handler)
    return table


# Read before the document's reference wrappers and citations; the text handlers after them.
_STRUCTURE_HANDLERS = _table(
    (("begin", "end"), Converter._environment),
    ((*SECTION_LEVELS, "paragraph", "subparagraph"), Converter._heading),
    (("appendix",), Converter._appendix),
    (("stepcounter",), Converter._stepcounter),
    (("caption", "captionof"), Converter._caption_macro),
    (("label",), Converter._label),
    (("title",), Converter._title),
    (("maketitle",), Converter._maketitle),
)
_TEXT_HANDLERS = _table(
    (("url",), Converter._url),
    (("href",), Converter._href),
    (("footnote", "footnotetext"), Converter._footnote),
    (("item",), Converter._item),
    (("bibitem",), Converter._bibitem),
    (("textcolor",), Converter._textcolor),
    (NO_OP, Converter._no_op),
    (WORD_MACROS, Converter._word),
    (DROP, Converter._drop),
    (_LAST_ARGUMENT_SPECS, Converter._last_argument),
    (KEEP, Converter._no_op),  # the following group is read in place
)


EnvironmentHandler = Callable[[Converter, str, str, str, int, list[str]], int]
# Read before the document's theorem-like environments; the list environments after them.
_ENVIRONMENTS: dict[str, EnvironmentHandler] = {
    **dict.fromkeys(("abstract",), Converter._abstract),
    **dict.fromkeys(("tabular", "tabularx", "tabular*", "longtable", "array", "tabulary"), Converter._tabular),
    **dict.fromkeys((*FLOATS, *SUBFLOATS), Converter._float),
    **dict.fromkeys(SKIP_ENVS, Converter._skipped),
    **dict.fromkeys(MATH_ENVS, Converter._math_environment),
    **dict.fromkeys(VERBATIM_ENVS, Converter._verbatim),
}
_LIST_ENVIRONMENTS: dict[str, EnvironmentHandler] = {
    **dict.fromkeys(("itemize", "enumerate", "description"), Converter._list),
    "thebibliography": Converter._bibliography,
}


def _skip_opt_and_args(text: str, pos: int, base: str) -> int:
    spec = {"subfigure": "om", "subtable": "om", "minipage": "oom", "wrapfigure": "oomo", "wraptable": "oomo"}
    _, pos = read_args(text, pos, spec.get(base, "o"))
    return pos





PLACEHOLDER = re.compile("\x00(\\d+)\x00")


def convert_body(latex: str, macros: Macros, theorems: dict[str, TheoremKind]) -> Converted:
    conv = Converter(macros, theorems)
    raw = conv.convert(expand_ref_wrappers(latex, macros))
    text = PLACEHOLDER.sub(lambda m: render_ref(*conv.refs[int(m.group(1))], conv.targets), raw)
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return Converted(text, conv.title, conv.abstract, conv.sections, conv.targets, conv.anchors)

