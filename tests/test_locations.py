"""Where each answer is in the author's files: the line of its answer mark in the LaTeX file as
written (comments, dead blocks and \\input files counted as the editor shows them), the page of its
question in a PDF."""

from __future__ import annotations

from pathlib import Path

import pytest

from checklist_eval.reading.parsing import load_paper

CHECKLIST = r"""%% the checklist, in its own file
\section*{NeurIPS Paper Checklist}
\begin{enumerate}
\item {\bf Claims}
    \item[] Question: Do the main claims made in the abstract and introduction accurately reflect the paper's contributions and scope?
    % an old answer, commented out: \answerNo{}
    \item[] Answer: \answerYes{} % Replace by \answerYes{}, \answerNo{}, or \answerNA{}.
    \item[] Justification: Section 1 lists the contributions.
\iffalse
\item {\bf Limitations}
    \item[] Answer: \answerNo{}
\fi
\begin{comment}
ignored
\end{comment}
\item {\bf Limitations}
    \item[] Question: Does the paper discuss the limitations of the work performed by the authors?
    \item[] Answer: \answerNA{}
    \item[] Justification: Section 5 discusses them.
\end{enumerate}
"""

MAIN = r"""\documentclass{article}
%% a comment that TeX joins
\title{Located}
\begin{document}
\maketitle
\section{Introduction}
We study things.%
 More text.
\input{sections/checklist}
\end{document}
"""


def _lines_of(text: str, needle: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if needle in line and "%" not in line.split(needle)[0]]


def test_latex_answers_point_at_their_file_and_line(tmp_path):
    (tmp_path / "sections").mkdir()
    (tmp_path / "sections" / "checklist.tex").write_text(CHECKLIST)
    (tmp_path / "main.tex").write_text(MAIN)
    paper = load_paper(tmp_path)
    claims, limitations = paper.checklist.item("1"), paper.checklist.item("2")
    assert (claims.file, claims.line, claims.page) == ("sections/checklist.tex", _lines_of(CHECKLIST, r"\answerYes{} %")[0], None)
    assert (limitations.file, limitations.line) == ("sections/checklist.tex", _lines_of(CHECKLIST, r"\answerNA{}")[0])
    assert claims.location == f"sections/checklist.tex:{claims.line}"
    assert all(it.file is None and it.line is None for it in paper.checklist.items if it.answer is None)


@pytest.mark.shared_material
def test_pdf_answers_point_at_the_page_of_their_question(shared_dir):
    import pypdfium2 as pdfium

    path = shared_dir / "corpus/anchor-sample/papers/1_adversarial_MetaAlbum/adversarial_MetaAlbum.pdf"
    paper = load_paper(path)
    doc = pdfium.PdfDocument(str(path))
    pages = [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
    answered = [it for it in paper.checklist.items if it.answer is not None]
    assert len(answered) >= 10
    for it in answered:
        assert it.page is not None and it.file is None and it.location == f"page {it.page}"
        # the question's heading is on that page (the answer may follow on the next one)
        assert it.title.split()[0] in pages[it.page - 1], (it.id, it.title, it.page)
    assert [it.page for it in answered] == sorted(it.page for it in answered)
    assert answered[0].page == 48  # "NeurIPS Paper Checklist 1. Claims" opens page 48


def test_fixture_paper_lines(fixtures_dir: Path):
    paper = load_paper(fixtures_dir / "papers" / "genuine")
    text = (fixtures_dir / "papers" / "genuine" / "checklist.tex").read_text().splitlines()
    for it in paper.checklist.items:
        assert it.file == "checklist.tex" and f"\\answer{it.answer.value}" in text[it.line - 1]


def test_records_carry_the_location_and_read_it_back(tmp_path, fixtures_dir):
    from checklist_eval.challenge.records import records_from_assessments
    from checklist_eval.challenge.results.ledger import read_records, write_records
    from checklist_eval.models import Assessment, Provenance

    paper = load_paper(fixtures_dir / "papers" / "genuine")
    assessments = [Assessment(question_id=it.id, answer=it.answer, correct=True, p_correct=0.9,
                              provenance=Provenance(assessor="heuristic")) for it in paper.checklist.items]
    records = records_from_assessments("s", "G", paper, assessments, case="G", scored_at="")
    write_records(records, tmp_path / "records.csv", tmp_path / "records.jsonl")
    for name in ("records.csv", "records.jsonl"):
        back = read_records(tmp_path / name)
        assert [r.location for r in back] == [it.location for it in paper.checklist.items]
        assert back[0].location == f"checklist.tex:{paper.checklist.items[0].line}"


def _location_check():
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "scripts" / "check_locations.py"
    spec = importlib.util.spec_from_file_location("check_locations", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_answer_of_the_shared_papers_and_fixtures_points_at_its_answer_macro(shared_dir):
    """Issue 32: all 42 shared papers and every LaTeX fixture paper; each answered item's file:line
    holds the answer macro of the answer read (sub-questions of the 2021 form included). Three papers
    whose conditionals removed text before the checklist had every answer's line wrong."""
    check = _location_check()
    papers = check.default_papers()
    assert len([p for p in papers if shared_dir in p.parents]) == 42
    answered = 0
    for paper in papers:
        count, wrong = check.located(paper)
        assert wrong == [], (paper.name, wrong[:3])
        answered += count
    assert answered >= 800


def test_a_conditional_before_the_checklist_leaves_the_lines_right(tmp_path):
    """A switch's untaken branch (and a package conditional) above the checklist removes text before
    it: the lines are still those of the file as written."""
    (tmp_path / "sections").mkdir()
    (tmp_path / "sections" / "checklist.tex").write_text(CHECKLIST)
    main = MAIN.replace("\\begin{document}", "\\usepackage{etoolbox}\\newif\\ifarxiv\n\\begin{document}\n"
                        "\\ifarxiv\nan arXiv abstract\n\nover lines\n\\else\nthe submission's\n\\fi\n"
                        "\\ifbool{x}{one\n\ntwo}{three\n\nfour}\n")
    (tmp_path / "main.tex").write_text(main)
    paper = load_paper(tmp_path)
    claims, limitations = paper.checklist.item("1"), paper.checklist.item("2")
    assert (claims.file, claims.line) == ("sections/checklist.tex", _lines_of(CHECKLIST, r"\answerYes{} %")[0])
    assert (limitations.file, limitations.line) == ("sections/checklist.tex", _lines_of(CHECKLIST, r"\answerNA{}")[0])
    # the checklist in the main file itself, below the removed branches
    inline = main.replace("\\input{sections/checklist}", CHECKLIST)
    (tmp_path / "main.tex").write_text(inline)
    (tmp_path / "sections" / "checklist.tex").unlink()
    paper = load_paper(tmp_path)
    assert paper.checklist.item("1").line == _lines_of(inline, r"\answerYes{} %")[0]
    assert paper.checklist.item("2").line == _lines_of(inline, r"\answerNA{}")[0]
