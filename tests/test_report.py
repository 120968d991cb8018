"""HTML reports are self-contained and escape everything that came from a paper or a model."""

from __future__ import annotations

from fractions import Fraction

import re

from checklist_eval.models import (
    Answer,
    Assessment,
    Checklist,
    ChecklistItem,
    Paper,
    Provenance,
    Usage,
)
from checklist_eval.challenge.records import Record
from checklist_eval.challenge.report import write_paper_report, write_submission_report
from checklist_eval.challenge.scoring import score_submission
from helpers import check_html

EVIL = '<script>alert("x")</script><img src="http://evil.example/p.png">'


def _paper():
    items = [
        ChecklistItem(id="1", title="Claims", question="Q1?", answer=Answer.YES, justification="See " + EVIL),
        ChecklistItem(id="2", title="Limitations", question="Q2?", answer=Answer.TODO),
        ChecklistItem(id="3", title="Theory", question="Q3?", answer=None),
    ]
    return Paper(
        source="paper.tex", format="latex", title="A <b>bold</b> title",
        checklist=Checklist(id="neurips-2025", items=items), warnings=["hidden text found: " + EVIL],
    )


def _assert_self_contained(text: str) -> None:
    parsed = check_html(text)  # well formed, whatever the paper and the model wrote
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert "<script" not in text.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text, re.I)
    assert "<link" not in text.lower()
    assert "&lt;script&gt;" in text


def test_paper_report(tmp_path):
    prov = Provenance(assessor="heuristic")
    assessments = [
        Assessment(question_id="1", answer=Answer.YES, correct=True, p_correct=0.8, review="fine " + EVIL, provenance=prov),
        Assessment(question_id="2", answer=Answer.TODO, correct=False, p_correct=0.0, review="todo", provenance=prov),
        Assessment(question_id="3", answer=None, correct=False, p_correct=0.0, review="missing", provenance=prov),
    ]
    path = write_paper_report(tmp_path / "out", _paper(), assessments, assessor="heuristic", model=None, usage=Usage(calls=3))
    text = path.read_text()
    assert path == tmp_path / "out" / "report.html"
    _assert_self_contained(text)
    assert "C = 0.333" in text  # 1 of 3 correct
    assert "(missing)" in text and "TODO" in text and "0.80" in text
    assert "A &lt;b&gt;bold&lt;/b&gt; title" in text
    assert "fine &lt;script&gt;" in text and "See &lt;script&gt;" in text  # review and justification
    assert "Model calls: 3" in text
    assert not list((tmp_path / "out").glob(".*tmp"))  # atomic write left no temp file


def test_submission_report(tmp_path):
    def r(role, q, a, ok):
        return Record(submission_id="s", role=role, question_id=q, answer=a, correct=ok, review=EVIL, case="GAT")

    recs = [
        r("G", "1", Answer.YES, True), r("G", "2", Answer.NO, True),
        r("A", "1", Answer.YES, True), r("A", "2", Answer.YES, True),
        r("T", "1", Answer.YES, True), r("T", "2", Answer.NO, True),
    ]
    score = score_submission("s", recs)
    text = write_submission_report(tmp_path / "report.html", score, recs).read_text()
    _assert_self_contained(text)
    assert "Agreement of the assessor on A" in text
    assert '<div class="R"><dt>R</dt><dd>0.5000</dd></div>' in text  # R = 1/2: q2 a=Yes t=No g=0 but c_A=1
    assert text.count('class="bad">no<') == 1


def test_paper_report_verdict_is_c_i(tmp_path):
    """A TODO (or missing) answer an assessor marked correct shows incorrect, as C counts it."""
    from checklist_eval.challenge.report import paper_records
    from checklist_eval.challenge.scoring import correctness

    prov = Provenance(assessor="heuristic")
    assessments = [
        Assessment(question_id="1", answer=Answer.YES, correct=True, p_correct=0.8, review="ok", provenance=prov),
        Assessment(question_id="2", answer=Answer.TODO, correct=True, p_correct=0.9, review="todo", provenance=prov),
        Assessment(question_id="3", answer=None, correct=True, p_correct=0.7, review="missing", provenance=prov),
    ]
    text = write_paper_report(tmp_path, _paper(), assessments, assessor="h", model="m", usage=None).read_text()
    assert "C = 0.333" in text and "1 of 3 answers judged correct" in text
    assert text.count('class="chip correct">correct<') == 1 and text.count('class="chip incorrect">incorrect<') == 2
    assert "See &lt;script&gt;" in text and "0.90" in text  # justifications and p still shown
    assert "hidden text found" in text  # parser warnings still shown
    paper = _paper()
    assert correctness(paper_records(paper, assessments)) == Fraction(1, 3)
    assert correctness(paper_records(paper, assessments[:1])) == Fraction(1, 3)  # unassessed count 0


def test_summary_lists_what_must_be_fixed_first_and_no_spending_without_a_model(tmp_path):
    prov = Provenance(assessor="heuristic")
    assessments = [
        Assessment(question_id="1", answer=Answer.YES, correct=False, p_correct=0.2, provenance=prov,
                   review="- Section 9 does not exist. [must fix]\nSuggestions (the answer stands):\n- cite it",
                   must_fix=["Section 9 does not exist."], suggestions=["cite it"], verdict="incorrect"),
        Assessment(question_id="2", answer=Answer.TODO, correct=False, p_correct=0.0, review="todo", provenance=prov),
        Assessment(question_id="3", answer=None, correct=False, p_correct=0.0, review="missing", provenance=prov),
    ]
    paper = _paper()
    paper.checklist.items[0].file, paper.checklist.items[0].line = "checklist.tex", 115
    text = write_paper_report(tmp_path, paper, assessments, assessor="heuristic", model=None, usage=Usage()).read_text()
    check_html(text)
    assert "Model calls" not in text and "$0" not in text and "model" not in text.lower().split("<body>")[1][:400]
    summary, cards = text.split('<article class="card', 1)
    assert summary.index('id="must-fix"') < summary.index('<ol class="mustfix">')
    # each must-fix entry links its card, says where the answer is and the worst problem, not the tag
    assert ('<a href="#q-G-1">1. Claims</a> <span class="muted where">(checklist.tex:115)</span>: '
            'Section 9 does not exist.</li>') in summary
    assert all(f'href="#q-G-{q}"' in summary and f'id="q-G-{q}"' in text for q in ("1", "2", "3"))
    assert '<dd class="where">checklist.tex:115</dd>' in cards
