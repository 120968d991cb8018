"""The conditional reader checked against a real TeX engine: generated shapes, compiled, compared.

A shape is a paper's question 1 answered through TeX's machinery: switches declared and set (literal,
in a group, through ``\\let`` or ``\\csname``, by a macro, after the checklist), conditionals (``\\if``
and ``\\ifx`` over characters and macros, ``\\unless``, ``\\ifnum``, a ``\\csname``-built one),
etoolbox and ifthen conditionals, groups, verbatim text holding conditional tokens, and nesting.
Hypothesis draws the shapes. Each is then

- compiled by the system's ``pdflatex`` (many shapes to a document, every name made unique to its
  shape, so one run answers for hundreds: a ``pdflatex`` start costs more than a shape), with the
  answer macros printing a marker, and read back with ``pdftotext``: the answer the PDF shows;
- parsed by the caller's parsing worker as a one-question NeurIPS checklist: the answer the parser reads, and
  whether it warned ``undecided``.

A shape agrees when both read the same answer; a disagreement is allowed only with the warning.
Needs the ``test`` extra (hypothesis) and ``pdflatex``/``pdftotext`` (texlive-latex-base,
texlive-latex-recommended, poppler-utils). ``tests/test_tex_differential.py`` runs it in CI and
``scripts/tex_differential.py`` runs a larger draw for the figures.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from checklist_eval.errors import InputError
from checklist_eval.models import Paper, WarningKind

# How a shape's paper is parsed: the caller's parsing worker (``ParserPool.load_paper``), the door every
# command reads a paper through.
Parse = Callable[[Path], Paper]

PACKAGES = ("\\usepackage{etoolbox}\\usepackage{ifthen}\\usepackage{verbatim}\\usepackage{listings}"
            "\\usepackage{iftex}\\usepackage{amsmath}\n")
# "@" stands for a shape's own prefix (letters), so no two shapes of one document share a name.
DECLARATIONS = ("\\newif\\ifsw@a\\newif\\ifsw@b\\newtoggle{tg@}\\newbool{bo@}\\newboolean{bt@}"
                "\\def\\ma@{x}\\def\\mb@{y}")
ANSWERS = ("\\answerYes{}", "\\answerNo{}", "\\answerNA{}", "", "$p\\iff q$ ")
SWITCHES = ("sw@a", "sw@b")
SETTINGS = (
    "\\{s}true", "\\{s}false", "{{\\{s}true}}", "{{\\{s}false}}", "\\begingroup\\{s}true\\endgroup",
    "\\begingroup\\global\\{s}true\\endgroup", "\\let\\if{s}\\iftrue", "\\let\\if{s}\\iffalse",
    "\\let\\if{s}=\\if{o}", "\\csname {s}true\\endcsname", "\\expandafter\\let\\csname if{s}\\endcsname\\iftrue",
    "\\def\\set@{{\\{s}true}}\\set@", "\\iftrue\\{s}true\\fi", "\\iffalse\\{s}true\\fi", "\\if{o}\\{s}false\\fi",
    "\\toggletrue{{tg@}}", "\\togglefalse{{tg@}}", "\\booltrue{{bo@}}", "\\setbool{{bo@}}{{false}}",
    "\\setboolean{{bt@}}{{true}}", "\\def\\mb@{{x}}", "\\def\\mb@{{y}}",
)
OPENERS = (
    "\\iftrue ", "\\iffalse ", "\\unless\\iftrue ", "\\unless\\iffalse ", "\\ifsw@a ", "\\ifsw@b ",
    "\\unless\\ifsw@a ", "\\csname ifsw@a\\endcsname ", "\\ifbo@ ", "\\ifbt@ ", "\\if aa", "\\if ab", "\\if a b",
    "\\ifx aa", "\\ifx ab", "\\ifx\\ma@\\mb@ ", "\\if\\ma@\\mb@ ", "\\ifx\\ma@\\ma@ ", "\\ifnum 1<2 ", "\\ifnum 3<2 ",
    "\\ifodd 3 ", "\\ifdefined\\ma@ ", "\\ifdefined\\mz@ ", "\\ifx\\ma@\\undefined ", "\\ifx\\mz@\\undefined ",
    "\\ifpdftex ",
)
PACKAGE = ("\\iftoggle{{tg@}}{{{0}}}{{{1}}}", "\\nottoggle{{tg@}}{{{0}}}{{{1}}}", "\\ifbool{{bo@}}{{{0}}}{{{1}}}",
           "\\notbool{{bo@}}{{{0}}}{{{1}}}", "\\ifthenelse{{\\boolean{{bt@}}}}{{{0}}}{{{1}}}")
# Conditional tokens in verbatim text: TeX does not read them where it prints them, but counts them in
# a branch it skips, so inside a conditional only balanced ones are drawn (an unbalanced one there
# would end or swallow the rest of the shared document; at the top it is plain text to TeX).
BALANCED = ("\\iffalse x\\fi", "\\iftrue\\else\\fi")
UNBALANCED = ("\\iffalse", "\\fi", "\\else", "\\iftrue")
VERBATIM = ("\\verb|{0}|", "\\lstinline|{0}|", *(f"\n\\begin{{{{{env}}}}}\n{{0}}\n\\end{{{{{env}}}}}\n"
                                               for env in ("verbatim", "comment", "lstlisting")))


@dataclass(frozen=True)
class Shape:
    setup: str  # in the body before the checklist
    answer: str  # question 1's answer slot
    after: str  # after the checklist

    def named(self, prefix: str) -> Shape:
        return Shape(*(part.replace("@", prefix) for part in (self.setup, self.answer, self.after)))


def _setting() -> st.SearchStrategy[str]:
    return st.builds(lambda form, s: form.format(s=s, o=SWITCHES[1 - SWITCHES.index(s)]),
                     st.sampled_from(SETTINGS), st.sampled_from(SWITCHES))


def _verbatim(balanced: bool) -> st.SearchStrategy[str]:
    return st.builds(lambda form, body: form.format(body), st.sampled_from(VERBATIM),
                     st.sampled_from(BALANCED if balanced else BALANCED + UNBALANCED))


def _answer(depth: int, verbatim_ok: bool, top: bool) -> st.SearchStrategy[str]:
    leaf = st.sampled_from(ANSWERS)
    if depth == 0:
        return leaf
    inner = st.deferred(lambda: _answer(depth - 1, verbatim_ok, False))
    in_args = st.deferred(lambda: _answer(depth - 1, False, False))
    cond = st.builds(lambda o, a, b, e: f"{o}{a}\\else {b}\\fi " if e else f"{o}{a}\\fi ",
                     st.sampled_from(OPENERS), inner, inner, st.booleans())
    package = st.builds(lambda form, a, b: form.format(a, b), st.sampled_from(PACKAGE), in_args, in_args)
    group = st.builds(lambda a, how: f"{{{a}}}" if how else f"\\begingroup {a}\\endgroup ", inner, st.booleans())
    parts = [leaf, cond, cond, package, group]
    if verbatim_ok:
        parts.append(st.builds(lambda v, a, first: v + a if first else a + v, _verbatim(not top), inner,
                               st.booleans()))
    return st.one_of(*parts)


def shapes() -> st.SearchStrategy[Shape]:
    return st.builds(
        lambda before, answer, after: Shape(DECLARATIONS + "".join(before), answer, "".join(after)),
        st.lists(_setting(), max_size=4), _answer(3, True, True), st.lists(_setting(), max_size=2))


def prefix(index: int) -> str:
    """Letters naming shape ``index`` (TeX names are letters): q, then base-26 digits."""
    digits = ""
    while True:
        index, r = divmod(index, 26)
        digits = chr(97 + r) + digits
        if index == 0:
            return "q" + digits


# --- TeX's answer -------------------------------------------------------------------------------------

_TEX_PREAMBLE = ("\\documentclass{article}\n" + PACKAGES
                 + "".join(f"\\newcommand{{\\answer{a}}}[1][]{{\\mbox{{ZZ{a}ZZ}}}}\n" for a in ("Yes", "No", "NA"))
                 + "\\pagestyle{empty}\\raggedright\\hyphenpenalty=10000\n\\begin{document}\n")
_MARK = re.compile(r"ZZ(Yes|No|NA)ZZ")


def tex_document(batch: list[tuple[str, Shape]]) -> str:
    body = "".join(f"\n\\par SHAPE{p}START\\par\n{s.setup}\n\\begin{{enumerate}}\\item[] Answer: {s.answer}\n"
                   f"\\end{{enumerate}}\n{s.after}\n\\par SHAPE{p}END\\par\n" for p, s in batch)
    return _TEX_PREAMBLE + body + "\n\\end{document}\n"


def tex_answers(batch: list[tuple[str, Shape]], folder: Path, timeout: float = 120) -> dict[str, str | None]:
    """The first answer the PDF shows for each shape of a batch ("" when none), and no entry for a
    shape whose end marker the PDF lacks (the document went wrong before it)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "shapes.tex").write_text(tex_document(batch), encoding="utf-8")
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-no-shell-escape", "shapes.tex"], cwd=folder,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout, check=False)
    pdf = folder / "shapes.pdf"
    if not pdf.is_file():
        return {}
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, text=True,
                          timeout=timeout, check=False).stdout
    found: dict[str, str | None] = {}
    for p, _ in batch:
        start, end = text.find(f"SHAPE{p}START"), text.find(f"SHAPE{p}END")
        if start >= 0 and end > start:
            mark = _MARK.search(text, start, end)
            found[p] = mark.group(1) if mark else None
    return found


# --- the parser's answer ------------------------------------------------------------------------------

_PAPER = ("\\documentclass{{article}}\n" + PACKAGES.replace("{", "{{").replace("}", "}}")
          + "\\begin{{document}}\n{setup}\n\\section*{{NeurIPS Paper Checklist}}\n\\begin{{enumerate}}\n"
          "\\item {{\\bf Claims}}\n\\item[] Question: Do the main claims made in the abstract and introduction "
          "accurately reflect the paper's contributions and scope?\n\\item[] Answer: {answer}\n"
          "\\item[] Justification: The abstract lists them.\n\\end{{enumerate}}\n{after}\n\\end{{document}}\n")


def paper_text(shape: Shape) -> str:
    return _PAPER.format(setup=shape.setup, answer=shape.answer, after=shape.after)


def parser_answer(shape: Shape, folder: Path, parse: Parse) -> tuple[str | None, bool]:
    """Question 1's answer as the parser reads the shape's paper, and whether it warned undecided."""
    path = folder / "paper.tex"
    path.write_text(paper_text(shape), encoding="utf-8")
    try:
        paper = parse(path)
    except InputError:
        return None, False
    item = paper.checklist.item("1")
    warned = any(w.kind is WarningKind.UNDECIDED for w in paper.warnings)
    return (item.answer.value if item.answer else None), warned


# --- the comparison -----------------------------------------------------------------------------------


@dataclass
class Outcome:
    counts: Counter[str] = field(default_factory=Counter)
    silent: list[tuple[Shape, str | None, str | None]] = field(default_factory=list)

    def table(self) -> str:
        rows = [("shapes", self.counts["shapes"]), ("same answer, decided", self.counts["agree"]),
                ("same answer, warned undecided", self.counts["agree_warned"]),
                ("other answer, warned undecided", self.counts["differ_warned"]),
                ("other answer in silence", self.counts["silent"]),
                ("not printed by TeX (document broken)", self.counts["lost"])]
        return "\n".join(f"{name:40} {count:>7}" for name, count in rows)


def compare(drawn: list[Shape], parse: Parse, batches: int = 2, workdir: Path | None = None) -> Outcome:
    """Every shape compiled (``batches`` documents, compiled in parallel) and parsed; the counts."""
    named = [(prefix(i), s.named(prefix(i))) for i, s in enumerate(drawn)]
    size = -(-len(named) // max(batches, 1))
    chunks = [named[i : i + size] for i in range(0, len(named), size)]
    root = Path(workdir or tempfile.mkdtemp(prefix="tex-differential-"))
    try:
        with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
            printed: dict[str, str | None] = {}
            for part in pool.map(lambda ic: tex_answers(ic[1], root / f"batch{ic[0]}"), enumerate(chunks)):
                printed.update(part)
        outcome = Outcome()
        for p, shape in named:
            outcome.counts["shapes"] += 1
            if p not in printed:
                outcome.counts["lost"] += 1
                continue
            read, warned = parser_answer(shape, root, parse)
            same = read == printed[p]
            outcome.counts[("agree" if same else "differ") + ("_warned" if warned else "")] += 1
            if not same and not warned:
                outcome.counts["silent"] += 1
                outcome.silent.append((shape, printed[p], read))
        return outcome
    finally:
        if workdir is None:
            shutil.rmtree(root, ignore_errors=True)


def draw(count: int, seed: int) -> list[Shape]:
    """``count`` shapes drawn by Hypothesis from ``seed``: the same shapes on every machine."""
    drawn: list[Shape] = []

    @hypothesis_seed(seed)
    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(shapes())
    def collect(shape: Shape) -> None:
        drawn.append(shape)

    collect()
    return drawn


