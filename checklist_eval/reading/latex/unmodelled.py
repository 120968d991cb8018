"""Constructs the source evaluator does not model, found so that what it reads is said to be undecided.

The evaluator follows ``\\renewcommand``/``\\def``/``\\let`` of the answer macros at the top level of
the document and the conditionals ``conditionals`` decides. A paper can change what an answer prints in
many other ways; each below makes every answer the source reads ``undecided`` (a typed warning that
reaches the records' manipulation column), because what TeX prints then depends on TeX's own rules:

- answer macros defined by another definer (``\\RenewDocumentCommand``, ``\\RenewCommandCopy``,
  ``\\expandafter\\def\\csname answerYes\\endcsname``, ``\\@namedef{answerYes}``);
- answer macros redefined inside a group or an environment (TeX forgets it at the group's end);
- an answer macro defined through another answer macro that is redefined later (TeX expands at use);
- ``\\let`` copies of answer macros (the copy of an optional-argument command still calls the original's
  inner macro by name, so a later redefinition shows through it);
- a macro whose body opens or closes a conditional (``\\newcommand{\\hide}{\\iffalse}``);
- ``\\includeonly``, ``\\input`` through a macro, catcode changes, and the comment package's
  environments other than ``\\excludecomment``.

Every scan is one regular-expression pass (bounded repeats) over the text: linear in its length.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from checklist_eval.models import ParseWarning, WarningKind
from checklist_eval.reading.latex.lexer import group_end

Where = Callable[[int], str]

_NAME = r"answer(?:Yes|No|NA|TODO)"
_OTHER_DEFINERS = re.compile(
    r"\\(?P<how>(?:Renew|New|Declare|Provide)DocumentCommand|(?:Renew|New|Declare)CommandCopy)\s*\{?\s*\\" + _NAME
    + r"(?![a-zA-Z@])"
    r"|\\(?P<cs>csname)\s*" + _NAME + r"\s*\\endcsname"
    r"|\\(?P<named>@namedef|@nameuse|@ifdefinable)\s*\{\s*" + _NAME + r"\s*\}")
_DEFINITION = re.compile(
    r"\\(?P<how>let|[gex]?def|(?:re)?newcommand\*?|providecommand\*?|DeclareRobustCommand\*?)\s*\{?\s*"
    r"\\(?P<name>[a-zA-Z@]{1,200})\s*\}?")
_ANSWER_USE = re.compile(r"\\(" + _NAME + r")(?![a-zA-Z@])")
_LET_SOURCE = re.compile(r"\s*=?\s*\\([a-zA-Z@]{1,200})")
_DEF_BODY = re.compile(r"(?:\s*\[[^\]]{0,200}\])*\s*(?:#\d\s*){0,9}\{")
_OPENS = re.compile(r"\\if[a-zA-Z@]{0,60}(?![a-zA-Z@])")
_CLOSES = re.compile(r"\\fi(?![a-zA-Z@])")
# Commands named \if... that are not TeX conditionals (they take braces, nothing to close)
_NOT_CONDITIONALS = {"ifthenelse", "iftoggle", "ifbool", "ifdef", "ifundef", "ifcsdef", "ifcsundef", "ifdefempty",
                     "ifstrequal", "ifblank", "ifnumcomp", "ifdimcomp", "ifboolexpr", "ifpackageloaded",
                     "ifclassloaded", "iffileexists", "ifcsname", "ifdefstring", "ifstrempty", "ifnotempty"}
_SIMPLE = re.compile(
    r"\\(?P<includeonly>includeonly)(?![a-zA-Z@])"
    r"|\\(?P<input>input|include|subfile)\s*\{?\s*\\(?!jobname)[a-zA-Z@]"
    r"|\\(?P<catcode>catcode)\s*(?:`\\?(?P<char>.)|[0-9]{1,3})"
    r"|\\(?P<comment>specialcomment|processcomment|generalcomment|includecomment)(?![a-zA-Z@])")
_GROUP_TOKENS = re.compile(r"\\[{}]|\\(?:begingroup|endgroup)(?![a-zA-Z@])|[{}]|\\(?:begin|end)\s*\{([^{}]{1,80})\}")


def unmodelled(text: str, where: Where | None = None) -> list[ParseWarning]:
    """One ``undecided`` warning for each construct of the module's list found in ``text``, in order."""
    found = sorted(_other_definers(text)) + sorted(_local_definitions(text)) + sorted(_definitions(text))
    found += sorted(_simple(text))
    seen: set[str] = set()
    warnings = []
    for pos, what in sorted(found):
        line = f" at {where(pos)}" if where else ""
        location = f"{what}{line}"
        if location in seen:
            continue
        seen.add(location)
        warnings.append(ParseWarning(
            kind=WarningKind.UNDECIDED, location=location,
            message=f"{what}{line}: a construct the source does not model changes what TeX prints; every "
                    "answer is read as written (undecided), the PDF may show others"))
    return warnings


def _other_definers(text: str) -> Iterator[tuple[int, str]]:
    for m in _OTHER_DEFINERS.finditer(text):
        yield m.start(), "\\" + (m.group("how") or m.group("named") or "csname") + " of an answer macro"


def _depths(text: str, positions: list[int]) -> dict[int, int]:
    """The group depth (braces, \\begingroup, environments but the document) at each position."""
    wanted = sorted(positions)
    out: dict[int, int] = {}
    depth = 0
    i = 0
    for m in _GROUP_TOKENS.finditer(text):
        while i < len(wanted) and wanted[i] < m.start():
            out[wanted[i]] = depth
            i += 1
        if i == len(wanted):
            break
        token = m.group(0)
        if token in ("{", "\\begingroup") or (token.startswith("\\begin") and m.group(1) != "document"):
            depth += 1
        elif token in ("}", "\\endgroup") or (token.startswith("\\end") and m.group(1) != "document"):
            depth = max(depth - 1, 0)
    for p in wanted[i:]:
        out[p] = depth
    return out


def _local_definitions(text: str) -> Iterator[tuple[int, str]]:
    """Answer macros defined inside a group or an environment: TeX undoes them at its end."""
    hits = [m for m in _DEFINITION.finditer(text) if re.fullmatch(_NAME, m.group("name"))
            and "\\global" not in text[max(0, m.start() - 8): m.start()] and m.group("how") not in ("gdef", "xdef")]
    depths = _depths(text, [m.start() for m in hits])
    for m in hits:
        if depths[m.start()] > 0:
            yield m.start(), f"\\{m.group('name')} redefined inside a group"


def _body(text: str, pos: int) -> str | None:
    m = _DEF_BODY.match(text, pos)
    if m is None:
        return None
    close = group_end(text, m.end() - 1)
    return text[m.end(): close - 1] if close > m.end() else None


def _definitions(text: str) -> Iterator[tuple[int, str]]:
    """Definitions that hide a conditional, copy an answer macro with \\let, or print another answer
    macro that is itself redefined later."""
    last_definition: dict[str, int] = {}
    through: list[tuple[int, str, str]] = []  # (where, defined, the answer macro its body uses)
    for m in _DEFINITION.finditer(text):
        name, how = m.group("name"), m.group("how")
        if how == "let":
            source = _LET_SOURCE.match(text, m.end())
            if source and re.fullmatch(_NAME, source.group(1)) and not re.fullmatch(_NAME, name):
                yield m.start(), f"\\let\\{name} copy of \\{source.group(1)}"
            elif source and source.group(1) in ("iffalse", "iftrue", "fi", "else") and not name.startswith("if"):
                yield m.start(), f"\\let\\{name}\\{source.group(1)}"
            last_definition[name] = m.start()
            continue
        body = _body(text, m.end())
        if body is None:
            continue
        opens = sum(1 for o in _OPENS.finditer(body) if o.group(0)[1:] not in _NOT_CONDITIONALS)
        if opens != len(_CLOSES.findall(body)):
            yield m.start(), f"\\{name}, a macro that opens or closes a conditional"
        if re.fullmatch(_NAME, name):
            through.extend((m.start(), name, u.group(1)) for u in _ANSWER_USE.finditer(body) if u.group(1) != name)
        last_definition[name] = m.start()
    for pos, name, used in through:
        if last_definition.get(used, -1) > pos:
            yield pos, f"\\{name} defined through \\{used}, which is redefined later"


def _simple(text: str) -> Iterator[tuple[int, str]]:
    for m in _SIMPLE.finditer(text):
        if m.group("includeonly"):
            yield m.start(), "\\includeonly (the files it leaves out are read)"
        elif m.group("input"):
            yield m.start(), f"\\{m.group('input')} of a file named by a macro"
        elif m.group("catcode"):
            if m.group("char") != "@":
                yield m.start(), "\\catcode change"
        else:
            yield m.start(), f"\\{m.group('comment')} (comment package)"
