"""One assembly step for both formats: a question answered twice keeps its first answer, a question
with no answer is named once, and a LaTeX paper and a PDF paper holding the same checklist read the
same (answers, and the kinds of warning about them)."""

from __future__ import annotations

from pathlib import Path

from test_pdf import SPEC_2024, _question_lines, _write_pdf

from checklist_eval.reading import checklists
from checklist_eval.reading.checklists.assembly import MAX_FINDING_WARNINGS, Finding, assemble
from checklist_eval.reading.latex import parse_latex
from checklist_eval.models import Answer, Paper, WarningKind
from checklist_eval.reading.pdf import parse_pdf

SPEC = checklists.load(SPEC_2024)
# Question 1 (Claims) answered twice, Yes then No; question 11 (Safeguards) deleted.
ANSWERS = [(q.id, "Yes") for q in SPEC.questions if q.id != "11"] + [("1", "No")]


def _finding(qid: str | None, answer: Answer | None, just: str | None = "See Section 2.") -> Finding:
    return Finding(qid, answer, just, location=f"at {qid}", place=lambda: f"the mark for {qid}")


def test_first_answer_kept_later_and_unmatched_reported_missing_named_once():
    findings = [_finding("1", Answer.YES), _finding("1", Answer.NO), _finding(None, Answer.NA),
                _finding("2", None)]
    checklist, warnings = assemble(SPEC, findings)
    assert checklist.answers["1"] is Answer.YES
    assert [it.id for it in checklist.items] == SPEC.ids  # every question, in template order
    kinds = [w.kind for w in warnings]
    assert kinds.count(WarningKind.DUPLICATE_ANSWER) == 1 and kinds.count(WarningKind.UNMATCHED_ANSWER) == 1
    missing = [w for w in warnings if w.kind is WarningKind.MISSING_ANSWER]
    assert len(missing) == 1 and missing[0].location is not None
    assert set(missing[0].location.split(", ")) == set(SPEC.ids) - {"1"}  # "2" was found without an answer
    duplicate = next(w for w in warnings if w.kind is WarningKind.DUPLICATE_ANSWER)
    assert duplicate.location == "1" and "the mark for 1" in duplicate.message


def test_hostile_numbers_of_findings_cost_a_bounded_number_of_lines():
    findings = [_finding("1", Answer.YES)] + [_finding(None, Answer.YES) for _ in range(5000)]
    _, warnings = assemble(SPEC, findings)
    unmatched = [w for w in warnings if w.kind is WarningKind.UNMATCHED_ANSWER]
    assert len(unmatched) == MAX_FINDING_WARNINGS + 1 and "4980 more" in unmatched[-1].message


def test_overlong_justification_is_cut_with_a_warning():
    checklist, warnings = assemble(SPEC, [_finding("1", Answer.YES, "x" * 50_000)])
    assert len(checklist.item("1").justification or "") == 20_000
    assert any(w.kind is WarningKind.TRUNCATED and w.location == "1" for w in warnings)


def _latex_paper(tmp_path: Path) -> Paper:
    q = {x.id: x for x in SPEC.questions}
    items = "\n".join(
        f"\\item {{\\bf {q[qid].title}}}\n\\item[] Question: {q[qid].question}\n"
        f"\\item[] Answer: \\answer{answer}{{}}\n\\item[] Justification: Answered in Section 2.\n"
        for qid, answer in ANSWERS)
    text = ("\\documentclass{article}\\begin{document}\\section{Intro}Text.\n"
            "\\section*{NeurIPS Paper Checklist}\n\\begin{enumerate}\n" + items + "\\end{enumerate}\n\\end{document}\n")
    return parse_latex(text, str(tmp_path / "paper.tex"), spec=SPEC)


def _pdf_paper(tmp_path: Path) -> Paper:
    q = {x.id: x for x in SPEC.questions}
    lines = ["A Made-Up Study", "Abstract", "We study checklists.", "1 Introduction", "Text.",
             "NeurIPS Paper Checklist"]
    for n, (qid, answer) in enumerate(ANSWERS, start=1):
        lines += _question_lines(n, q[qid].title, q[qid].question, f"[{answer}]", "Answered in Section 2.")
    pages = [lines[i: i + 45] for i in range(0, len(lines), 45)]
    return parse_pdf(_write_pdf(tmp_path / "paper.pdf", pages), SPEC)


def _answer_kinds(paper: Paper) -> list[tuple[WarningKind, str | None]]:
    wanted = (WarningKind.DUPLICATE_ANSWER, WarningKind.MISSING_ANSWER, WarningKind.UNMATCHED_ANSWER)
    return sorted((w.kind, w.location) for w in paper.warnings if w.kind in wanted)


def test_latex_and_pdf_treat_duplicated_and_missing_answers_alike(tmp_path):
    latex, pdf = _latex_paper(tmp_path), _pdf_paper(tmp_path)
    assert latex.checklist.answers == pdf.checklist.answers
    assert latex.checklist.answers["1"] is Answer.YES and latex.checklist.answers["11"] is None
    assert _answer_kinds(latex) == _answer_kinds(pdf) == [
        (WarningKind.DUPLICATE_ANSWER, "1"), (WarningKind.MISSING_ANSWER, "11")]
