"""Generated LaTeX inputs built to make a scanner slow: the shapes that were once quadratic or
unbounded. ``scripts/bench_parse.py`` times them at two sizes (linear growth shows as a constant
ratio) and the hostile-input tests run them through the CLI at the size limits.

Each generator returns ``{relative path: bytes}`` for a project of about ``size`` bytes; a single-file
case has one member named ``paper.tex``.
"""

from __future__ import annotations

from collections.abc import Callable

_PREAMBLE = (
    "\\documentclass{article}\n"
    "\\newcommand{\\answerYes}[1][]{[Yes] #1}\n"
    "\\newcommand{\\answerNo}[1][]{[No] #1}\n"
    "\\newcommand{\\answerNA}[1][]{[NA] #1}\n"
    "\\begin{document}\n\\section{Introduction}\\label{sec:intro}\nWe study things.\n"
)
_HEADING = "\\section*{NeurIPS Paper Checklist}\n"
_ITEM = (
    "\\item {\\bf Claims}\n"
    "\\item[] Question: Do the main claims made in the abstract and introduction accurately reflect the "
    "paper's contributions and scope?\n"
    "\\item[] Answer: \\answerYes{}\n"
    "\\item[] Justification: {JUST}\n"
)


def _checklist(justification: str = "See Section~\\ref{sec:intro}.") -> str:
    return _HEADING + "\\begin{enumerate}\n" + _ITEM.replace("{JUST}", justification) + "\\end{enumerate}\n"


def _repeat_to(unit: str, size: int) -> str:
    return unit * max(1, size // max(1, len(unit)))


def _one(text: str) -> dict[str, bytes]:
    return {"paper.tex": text.encode()}


def self_macro(size: int) -> dict[str, bytes]:
    """Macros that expand to themselves twice, used all over the body and the checklist."""
    defs = "\\def\\a{\\a\\a}\n\\newcommand{\\b}{\\b\\b}\\newcommand{\\c}[1]{\\c{#1}\\c{#1}}\n"
    body = _repeat_to("\\a \\b \\c{x} words ", size)
    return _one(_PREAMBLE.replace("\\begin{document}", defs + "\\begin{document}") + body + "\n"
                + _checklist("\\a\\b\\c{y} Section~\\ref{sec:intro}.") + "\\end{document}\n")


def unclosed_brace(size: int) -> dict[str, bytes]:
    """An answer whose argument brace never closes, followed by many more answers."""
    rest = _repeat_to("\\item[] Answer: \\answerYes{ text {more\n", size)
    return _one(_PREAMBLE + _HEADING + "\\begin{enumerate}\n\\item[] Answer: \\answerYes{unclosed\n" + rest)


def unclosed_verbatim(size: int) -> dict[str, bytes]:
    """A verbatim environment that never ends, with many \\verb and percent signs after it."""
    rest = _repeat_to("\\begin{verbatim} % \\verb|x \\url{a%b ", size)
    return _one(_PREAMBLE + "\\begin{verbatim}\n" + rest + "\n" + _checklist() + "\\end{document}\n")


def many_headings(size: int) -> dict[str, bytes]:
    """Checklist headings by the thousand, each with one answered item."""
    unit = _checklist()
    return _one(_PREAMBLE + _repeat_to(unit, size) + "\\end{document}\n")


def headings_without_answers(size: int) -> dict[str, bytes]:
    """Checklist headings and questions, never an answer."""
    unit = _HEADING + "\\begin{enumerate}\\item {\\bf Claims} \\item[] Question: Do the claims hold?\n"
    return _one(_PREAMBLE + _repeat_to(unit, size) + "\\end{document}\n")


def docclass_bracket(size: int) -> dict[str, bytes]:
    """A folder project whose files open \\documentclass[ and never close the bracket."""
    unit = "\\documentclass[ option, \\begin{document} x \\section{A} "
    files = {f"part{i}.tex": _repeat_to(unit, size // 4).encode() for i in range(4)}
    files["main.tex"] = (_PREAMBLE + _checklist() + "\\end{document}\n").replace(
        "\\documentclass{article}", "\\documentclass[" + _repeat_to("a,", size // 8) + "{article}").encode()
    return files


def pointer_justification(size: int) -> dict[str, bytes]:
    """One justification that is nothing but references, citations and links."""
    unit = "Section~\\ref{sec:intro}, \\cref{sec:a,sec:b} \\cite{x,y} \\url{http://a} \\href{u}{t} "
    return _one(_PREAMBLE + _checklist(_repeat_to(unit, size)) + "\\end{document}\n")


def deep_braces(size: int) -> dict[str, bytes]:
    """Nested groups opened and never closed, inside the checklist."""
    return _one(_PREAMBLE + _checklist("{" * (size // 2) + "x") + "\\end{document}\n")


CASES: dict[str, Callable[[int], dict[str, bytes]]] = {
    "self-referencing macros": self_macro,
    "unclosed brace in an answer": unclosed_brace,
    "unclosed verbatim": unclosed_verbatim,
    "10,000+ checklist headings": many_headings,
    "headings without answers": headings_without_answers,
    "\\documentclass[ never closed (folder)": docclass_bracket,
    "justification full of pointers": pointer_justification,
    "deeply nested braces": deep_braces,
}


def write_case(folder, name: str, size: int):
    """Write case ``name`` under ``folder``; returns the path to parse (the .tex file or the folder)."""
    from pathlib import Path

    folder = Path(folder)
    files = CASES[name](size)
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return folder / "paper.tex" if list(files) == ["paper.tex"] else folder


# --- shapes found quadratic after the first round (issue 22); ``size`` as for the others ---------


def checklist_subsections(size: int) -> dict[str, bytes]:
    """``\\subsection{Checklist}`` headings by the ten thousand (30,000 in 700 KB), then the checklist."""
    return _one(_PREAMBLE + _repeat_to("\\subsection{Checklist}\n", size) + _checklist() + "\\end{document}\n")


def comment_and_unclosed_verbatims(size: int) -> dict[str, bytes]:
    """A ``%`` comment, then ``\\begin{verbatim}`` by the ten thousand, none closed (16,000 in 270 KB)."""
    return _one(_PREAMBLE + "% a comment\n" + _repeat_to("\\begin{verbatim}\n", size) + _checklist()
                + "\\end{document}\n")


def unclosed_answer_macros(size: int) -> dict[str, bytes]:
    """``\\answerYes{`` by the ten thousand, none closed (12,000 in 132 KB), inside the checklist."""
    return _one(_PREAMBLE + _HEADING + "\\begin{enumerate}\n\\item[] Answer: " + _repeat_to("\\answerYes{", size))


def pointers_against_a_long_body(size: int) -> dict[str, bytes]:
    """A justification of 2,000 pointers against a body of ``size`` (3 MB: the case that ran past 25 s)."""
    labels = "".join(f"\\subsection{{S{i}}}\\label{{sec:s{i}}}\n" + "Words about the method. " * 8 + "\n"
                     for i in range(2000))
    body = _repeat_to(labels, size)
    pointers = " ".join(f"Section~\\ref{{sec:s{i}}}" for i in range(2000))
    return _one(_PREAMBLE + body + _checklist(pointers) + "\\end{document}\n")


def missing_pointers_against_a_long_body(size: int) -> dict[str, bytes]:
    """A justification citing 2,000 sections the paper does not have (100-2099; it has 1-12) against a
    body of ``size`` (3 MB: 52 s, then an overflow in p_correct, before issue 31). Kept out of ``CASES``:
    its cost is the assessor's, not the parser's."""
    part = "Words about the method and its results. " * 80 + "\n\n"
    body = "".join(f"\\section{{Part {i}}}\n" + _repeat_to(part, size // 12) for i in range(1, 13))
    pointers = ", ".join(f"Section {i}" for i in range(100, 2100))
    return _one(_PREAMBLE.replace("\\section{Introduction}\\label{sec:intro}\nWe study things.\n", "") + body
                + _checklist(f"See {pointers}.") + "\\end{document}\n")


CASES.update({
    "30,000 \\subsection{Checklist} headings": checklist_subsections,
    "% comment + unclosed \\begin{verbatim}s": comment_and_unclosed_verbatims,
    "unclosed \\answerYes{ by the thousand": unclosed_answer_macros,
    "2,000 pointers against a long body": pointers_against_a_long_body,
})
