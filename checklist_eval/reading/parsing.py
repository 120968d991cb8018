"""The parser itself, in the process that calls it: ``load_paper(path)``.

Commands never call it directly: a participant's file is read through
:mod:`checklist_eval.reading.isolation` (a worker process with a time and memory budget), which calls
these functions in the worker. The package's ``checklist_eval.load_paper`` is this function, for a
library user parsing papers they trust in their own process.

PDFs go to ``checklist_eval.reading.pdf`` (imported only when needed: it pulls in pypdfium2), everything else
(a .tex file, a folder, an archive) to the LaTeX reader.
"""

from __future__ import annotations

from pathlib import Path

from checklist_eval.errors import InputError
from checklist_eval.models import ChecklistSpec, Paper, ParseWarning
from checklist_eval.reading import checklists


def resolve_spec(checklist: str | None = None, spec_file: str | Path | None = None) -> ChecklistSpec | None:
    """The question set the user forced (``--questions FILE`` wins over ``--checklist ID``), or None
    to auto-detect."""
    if spec_file:
        return checklists.load_file(spec_file)
    if checklist:
        return checklists.load(checklist)
    return None


def load_paper(path: str | Path, checklist: str | None = None, spec_file: str | Path | None = None,
               root: str | None = None, tex: str = "never", budget_s: float = 120.0) -> Paper:
    """Parse a paper (LaTeX file/folder/archive or PDF) into a :class:`Paper`.

    Raises ``InputError`` for unreadable or unsafe input and ``NoChecklistError`` when the document
    holds no live checklist. ``root`` names the main .tex file of a LaTeX project. ``tex``: whether
    the machine's TeX reads a LaTeX paper (``auto``, ``always``, ``never``: see
    ``reading.tex.latex_paper``; commands pass ``--tex``, in-process library calls default to never),
    within ``budget_s`` seconds.
    """
    from checklist_eval.reading.sources import input_kind

    path = Path(path)
    spec = resolve_spec(checklist, spec_file)
    if input_kind(path) == "pdf":
        if root:
            raise InputError(path, "--root names the main .tex file of a LaTeX project; this is a PDF")
        from checklist_eval.reading.pdf import parse_pdf

        paper = parse_pdf(path, spec).model_copy(update={"reader": "pdf"})
    else:
        from checklist_eval.reading.latex import load_latex, parse_latex
        from checklist_eval.reading.tex import project
        from checklist_eval.reading.tex.latex_paper import read_latex_paper

        source = load_latex(path, root)
        paper = read_latex_paper(
            source.source, spec, tex, budget_s, lambda: project.from_path(path), source.root,
            lambda: parse_latex(source.text, source.source, spec=spec, warnings=source.warnings,
                                locate=source.locate))
    paper.warnings = merge_identical(paper.warnings)
    return paper


def merge_identical(warnings: list[ParseWarning]) -> list[ParseWarning]:
    """One line per distinct warning, in first-seen order, with a count when it repeats (a paper with
    hundreds of identical warnings shows one line, not hundreds)."""
    counts: dict[ParseWarning, int] = {}
    for w in warnings:
        counts[w] = counts.get(w, 0) + 1
    return [w.repeated(n) for w, n in counts.items()]


def load_entry(label: str, name: str, is_dir: bool, members: dict[str, bytes], tex: str = "never",
               budget_s: float = 120.0) -> Paper:
    """Parse a paper held in memory (a member, or a folder of members, of a submission archive);
    ``label`` names it in messages and in ``Paper.source``. Nothing is written to disk but TeX's copy
    of a LaTeX paper (``tex``, as in :func:`load_paper`), in a temporary folder."""
    if not is_dir and (name.lower().endswith(".pdf") or members[name].startswith(b"%PDF-")):
        from checklist_eval.reading.pdf import parse_pdf

        paper = parse_pdf(Path(label), None, data=members[name]).model_copy(update={"source": label, "reader": "pdf"})
    else:
        from checklist_eval.reading.latex import latex_from_members, parse_latex
        from checklist_eval.reading.tex import project
        from checklist_eval.reading.tex.latex_paper import read_latex_paper

        source = latex_from_members(label, name, is_dir, members)
        paper = read_latex_paper(label, None, tex, budget_s, lambda: project.from_members(name, is_dir, members),
                                 source.root,
                                 lambda: parse_latex(source.text, label, warnings=source.warnings,
                                                     locate=source.locate))
    paper.warnings = merge_identical(paper.warnings)
    return paper


def reading_text(path: str | Path) -> str:
    """Title, abstract and body of a paper as a reader sees them. A LaTeX paper without a checklist
    is still a paper here: its body is converted without looking for one."""
    from checklist_eval.errors import NoChecklistError
    from checklist_eval.reading.sources import input_kind

    try:
        paper = load_paper(path)
        parts = (paper.title, paper.abstract, paper.body)
    except NoChecklistError:
        if input_kind(Path(path)) == "pdf":
            raise
        from checklist_eval.reading.latex import collect_macros, convert_body, load_latex, theorem_kinds

        text = load_latex(Path(path)).text
        begin = text.find("\\begin{document}")
        preamble, body = (text[:begin], text[begin + len("\\begin{document}"):]) if begin >= 0 else (text, text)
        body = body.split("\\end{document}", 1)[0]
        conv = convert_body(body, collect_macros(preamble), theorem_kinds(text))
        parts = (conv.title, conv.abstract, conv.text)
    return "\n\n".join(x for x in parts if x)


# Every worker returns Papers. Their validator is built here, on import, because the fork server's
# preload and a parent about to fork both import this module: each worker then inherits it instead of
# building its own (the models build on first use, see ``checklist_eval.models.Model``).
Paper.model_rebuild(force=True)
