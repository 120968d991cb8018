"""LaTeX shapes found, not listed: a Hypothesis search for the input the parser is slowest on per KB.

``worstcases`` lists the shapes once found quadratic; this module searches for the next one. A shape
is a short unit of LaTeX built from the pieces parsers trip on (groups opened and never closed,
environments, headings, comments, answer marks, pointers, conditionals, verbatim), repeated to a size
either in the body before a checklist or inside a justification. Each shape is parsed by the
caller's ``parse`` (the tests and the benchmark pass a parsing worker's ``load_paper``: the same door
as every command, so a hang stops at the budget) and Hypothesis' ``target`` steers the search toward
the most milliseconds per KB.

The tests run a brief search (``tests/test_shapes.py``); ``scripts/bench_parse.py --shapes N`` runs a
long one and times the slowest shape found at 2 MB and 8 MB. Needs the ``test`` extra (hypothesis).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings, target
from hypothesis import strategies as st

from checklist_eval.errors import InputError

Parse = Callable[[Path], object]

PIECES = (
    "{", "}", "{{", "}}", "[", "]", "\\\\", "\\{", "%", "% comment\n", "\n", "\n\n", " words of text ",
    "\\begin{enumerate}", "\\end{enumerate}", "\\begin{itemize}", "\\item ", "\\item[] ", "\\end{itemize}",
    "\\begin{verbatim}", "\\end{verbatim}", "\\verb|", "\\begin{comment}", "\\begin{figure}", "\\caption{",
    "\\section{Intro}", "\\section*{NeurIPS Paper Checklist}", "\\subsection{Checklist}", "\\paragraph{",
    "\\label{sec:a}", "Section~\\ref{sec:a}", "\\ref{", "\\cref{sec:a,sec:b}", "\\cite{", "\\url{", "\\href{u}{",
    "\\answerYes{", "\\answerYes{}", "\\answerNo{}", "\\answerNA", "[Yes]", "[No]", "Answer: ",
    "Question: Do the claims hold?", "Justification: ", "Guidelines: ", "\\iffalse", "\\if01", "\\ifnum 1=0 ",
    "\\else", "\\fi", "\\newif\\ifx", "\\input{", "\\newcommand{\\m}{\\m\\m}", "\\m", "\\textcolor{white}{",
    "\\phantom{", "$", "$$", "\\(", "\\[", "\\documentclass[", "\\begin{document}", "\\appendix",
)
WHERE = ("body", "justification")

_PREAMBLE = (
    "\\documentclass{article}\n\\newcommand{\\answerYes}[1][]{[Yes] #1}\n\\newcommand{\\answerNo}[1][]{[No] #1}\n"
    "\\newcommand{\\answerNA}[1][]{[NA] #1}\n\\begin{document}\n\\section{Introduction}\\label{sec:intro}\nText.\n"
)
_CHECKLIST = (
    "\\section*{NeurIPS Paper Checklist}\n\\begin{enumerate}\n\\item {\\bf Claims}\n"
    "\\item[] Question: Do the main claims made in the abstract and introduction accurately reflect the paper's "
    "contributions and scope?\n\\item[] Answer: \\answerYes{}\n\\item[] Justification: {JUST}\n\\end{enumerate}\n"
)


@dataclass(frozen=True)
class Shape:
    unit: str
    where: str  # "body" or "justification"

    def document(self, size: int) -> str:
        """The shape repeated to about ``size`` characters, around one checklist question."""
        units = self.unit * max(1, size // max(1, len(self.unit)))
        if self.where == "body":
            return _PREAMBLE + units + "\n" + _CHECKLIST.replace("{JUST}", "See Section~\\ref{sec:intro}.") \
                + "\\end{document}\n"
        return _PREAMBLE + _CHECKLIST.replace("{JUST}", units) + "\\end{document}\n"


shapes = st.builds(Shape, st.lists(st.sampled_from(PIECES), min_size=1, max_size=10).map("".join),
                   st.sampled_from(WHERE))


def ms_per_kb(parse: Parse, shape: Shape, size: int, folder: Path) -> float:
    """Milliseconds per KB to ``parse`` ``shape`` at ``size`` (a paper the parser refuses counts:
    finding that out is the work; one over the time budget counts as the budget)."""
    text = shape.document(size)
    path = folder / "shape.tex"
    path.write_text(text, "utf-8")
    started = time.perf_counter()
    try:
        parse(path)
    except InputError:
        pass
    return (time.perf_counter() - started) * 1000 / (len(text.encode()) / 1024)


@dataclass(frozen=True)
class Found:
    ms_per_kb: float
    shape: Shape


def search(parse: Parse, examples: int, size: int, *, seed: int = 0) -> list[Found]:
    """Every shape Hypothesis tried in ``examples`` examples at ``size``, slowest per KB first."""
    found: list[Found] = []
    with tempfile.TemporaryDirectory() as tmp:

        @settings(max_examples=examples, database=None, deadline=None, derandomize=False,
                  phases=[Phase.generate, Phase.target], suppress_health_check=list(HealthCheck))
        @given(shape=shapes)
        def one(shape: Shape) -> None:
            cost = ms_per_kb(parse, shape, size, Path(tmp))
            target(cost, label="ms per KB")
            found.append(Found(cost, shape))

        from hypothesis import seed as hypothesis_seed

        hypothesis_seed(seed)(one)()
    return sorted(found, key=lambda f: f.ms_per_kb, reverse=True)
