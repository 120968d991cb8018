"""The document's own macros: ``\\newcommand``/``\\def`` text macros and reference wrappers, and
their expansion (bounded: a macro can define itself twice over)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from checklist_eval.reading.latex.lexer import group_end
from checklist_eval.reading.latex.numbering import SECTION_LEVELS

_NEWCOMMAND = re.compile(
    r"\\(?:re)?newcommand\*?\s*(?:\{\s*(\\[a-zA-Z@]+)\s*\}|(\\[a-zA-Z@]+))\s*(?:\[(\d)\])?\s*(\[[^\]]*\])?\s*\{"
    r"|\\(?:DeclareRobustCommand|providecommand)\*?\s*\{?\s*(\\[a-zA-Z@]+)\s*\}?\s*(?:\[(\d)\])?\s*\{"
    r"|\\def\s*(\\[a-zA-Z@]+)\s*(#1)?\s*\{"
)


# The sectioning commands the renderer reads as headings. A document's (re)definition of one restyles the
# heading (``\\@startsection``'s spacing and font), never makes it something else: expanding the new body
# would print its arguments ("paragraph4-1em") where the title belongs.
HEADINGS = (*SECTION_LEVELS, "paragraph", "subparagraph")
# ``\\@startsection{name}{level}...``: a heading command of the level its counter names (or its number says).
_STARTSECTION = re.compile(r"^\s*\\@startsection\s*\{\s*([a-zA-Z]+)\s*\}\s*\{\s*(\d)\s*\}")
_HEADING_AT_LEVEL = {"1": "section", "2": "subsection", "3": "subsubsection", "4": "paragraph", "5": "subparagraph"}


def heading_alias(body: str) -> str | None:
    """The sectioning command a macro defined by ``\\@startsection`` stands for, if its body is one."""
    m = _STARTSECTION.match(body)
    if m is None:
        return None
    return m.group(1) if m.group(1) in HEADINGS else _HEADING_AT_LEVEL.get(m.group(2), "paragraph")


@dataclass
class Macros:
    """Macros the document defines that change what a reader sees: zero-argument text macros
    (``\\newcommand{\\ours}{NeuroVeil}``), one-argument reference wrappers (``\\secref``) and heading
    commands of the document's own (``\\newcommand{\\clause}{\\@startsection{subsection}...}``)."""

    text: dict[str, str] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)  # name -> body with #1
    headings: dict[str, str] = field(default_factory=dict)  # name -> the sectioning command it stands for


def collect_macros(text: str) -> Macros:
    macros = Macros()
    for m in _NEWCOMMAND.finditer(text):
        name = m.group(1) or m.group(2) or m.group(5) or m.group(7)
        nargs = m.group(3) or m.group(6) or ("1" if m.group(8) else "0")
        body_start = m.end() - 1
        body = text[body_start + 1 : group_end(text, body_start) - 1]
        if name.startswith("\\answer") or name.startswith("\\justification"):
            continue  # answers are read from the macro name, whatever the preamble makes them print
        if name[1:] in HEADINGS:
            continue  # restyled, still the heading the renderer reads
        if (alias := heading_alias(body)) is not None:
            macros.headings[name[1:]] = alias  # a heading command of the document's own name
            continue
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


def expand_ref_wrappers(text: str, macros: Macros) -> str:
    """``\\secref{x}`` defined as ``Section~\\ref{#1}`` becomes that body, so it renders as the
    author's definition prints it."""
    if not macros.refs:
        return text
    pattern = re.compile(r"\\(" + "|".join(map(re.escape, macros.refs)) + r")(?![a-zA-Z@])\s*\{([^{}]*)\}")
    return pattern.sub(lambda m: macros.refs[m.group(1)].replace("#1", m.group(2)), text)

