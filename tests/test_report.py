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
    # colours follow the participant's interest: an agreement raises R (their loss, red), fooling it is green
    assert text.count('class="bad">yes<') == 1 and text.count('class="ok">no<') == 1


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
    # the cards are in evidence states: the TODO and missing answers contradicted, the other not shown as a pass
    assert text.count('<article class="card contradicted"') == 2 and text.count('<article class="card unverified"') == 1
    assert 'class="chip correct"' not in text
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
    assert summary.index('id="must-fix"') < summary.index('<ul class="mustfix tone-bad">')
    # each must-fix entry links its card, says where the answer is and the worst problem, not the tag
    assert ('<a href="#q-G-1">1. Claims</a> <span class="where">checklist.tex:115</span>: '
            'Section 9 does not exist.</li>') in summary
    assert all(f'href="#q-G-{q}"' in summary and f'id="q-G-{q}"' in text for q in ("1", "2", "3"))
    assert '<dd class="where">checklist.tex:115</dd>' in cards


def _three_states_paper():
    """A paper whose answers are supported, unverified and contradicted, each placed in the author's files."""
    from checklist_eval.models import Passage, State

    items = [ChecklistItem(id=str(i), title=t, question="Q?", answer=Answer.YES, justification="See Section 3.",
                           file="main.tex", line=100 + i) for i, t in enumerate(("Claims", "Limitations", "Theory"), 1)]
    paper = Paper(source="paper.tex", format="latex", title="T", checklist=Checklist(id="neurips-2025", items=items))
    prov = Provenance(assessor="heuristic")
    assessments = [
        Assessment(question_id="1", answer=Answer.YES, correct=True, p_correct=0.9, review="- backed", provenance=prov,
                   state=State.SUPPORTED, passages=[Passage(quote="We claim X and show it.", where="main.tex:40")]),
        Assessment(question_id="2", answer=Answer.YES, correct=True, p_correct=0.6, review="- nothing found",
                   provenance=prov, state=State.UNVERIFIED, unverifiable=["no passage names the limits"],
                   verdict="unverifiable"),
        Assessment(question_id="3", answer=Answer.YES, correct=False, p_correct=0.1, provenance=prov,
                   review="- The paper has no proofs. [must fix]", must_fix=["The paper has no proofs."],
                   verdict="incorrect", state=State.CONTRADICTED,
                   passages=[Passage(quote="We give no proofs here.", where="main.tex:77")]),
    ]
    return paper, assessments


def test_unverified_is_never_shown_as_a_pass_and_the_headline_lists_what_to_fix_and_read(tmp_path):
    paper, assessments = _three_states_paper()
    text = write_paper_report(tmp_path, paper, assessments, assessor="heuristic", model=None, usage=None).read_text()
    check_html(text)
    summary, cards = text.split('<article class="card', 1)
    # the headline counts each state, then names the answer to fix and the one to read, with file:line
    first = summary.index('id="counts"')
    assert "3 answers: 1 contradicted (to fix), 1 unverified (not checked: read it yourself), 1 supported" in summary
    fix, read = summary.index("To fix (1 contradicted)"), summary.index("To read yourself (1 unverified")
    assert first < fix < read < summary.index("Correctness C =")
    assert '<a href="#q-G-3">3. Theory</a> <span class="where">main.tex:103</span>: The paper has no proofs.' in summary
    assert '<a href="#q-G-2">2. Limitations</a> <span class="where">main.tex:102</span></li>' in summary
    assert "Nothing must be fixed" not in text and "Nothing to fix" not in text
    # each card wears its state: the unverified one is neutral, says to read it, and has no green chip
    unverified = text[text.rindex("<article", 0, text.index('id="q-G-2"')):text.index('id="q-G-3"')]
    assert unverified.startswith('<article class="card unverified"')
    assert "not checked: read it yourself" in unverified
    assert "chip correct" not in text and "state-supported" not in unverified
    # what contradicts it is the finding, not a passage; only a supported answer's passages are said to back it
    assert '<dt>Contradicted by</dt><dd class="contra">The paper has no proofs.</dd>' in text
    assert text.count("<dt>Supported by</dt>") == 1 and "<dt>Passages read</dt>" in text


def test_all_clear_only_when_every_answer_is_supported(tmp_path):
    paper, assessments = _three_states_paper()
    for a in assessments:
        a.state, a.correct, a.verdict = assessments[0].state, True, "correct"
        a.passages = assessments[0].passages
    text = write_paper_report(tmp_path, paper, assessments, assessor="heuristic", model=None, usage=None).read_text()
    assert "Nothing to fix or to read: every answer is supported" in text and "To read yourself" not in text


def _gat(a_ok: dict[str, bool], t_answers=("Yes", "No", "Yes")):
    def r(role, q, a, ok):
        return Record(submission_id="s", role=role, question_id=q, question_title=f"Title {q}", answer=Answer(a),
                      correct=ok, review="- wrong [must fix]" if not ok else "- ok", case="GAT",
                      location=f"{role.lower()}.tex:{10 + int(q)}")

    return ([r("G", q, "Yes", True) for q in ("1", "2", "3")]
            + [r("A", q, "Yes", a_ok[q]) for q in ("1", "2", "3")]
            + [r("T", q, t, True) for q, t in zip(("1", "2", "3"), t_answers)])


def test_a_planted_answer_caught_is_named_so_per_role_not_must_fix(tmp_path):
    recs = _gat({"1": True, "2": False, "3": False})  # q2 planted (A Yes, T No) and caught; q3 as in T, judged wrong
    text = write_submission_report(tmp_path / "r.html", score_submission("s", recs), recs).read_text()
    summary = text.split('<article class="card', 1)[0]
    assert "Must fix" not in text and "To fix" not in summary
    caught = summary[summary.index("A: planted answers caught (1 of 1)"):]
    assert '<a href="#q-A-2">2. Title 2</a> <span class="where">a.tex:12</span>' in caught
    assert "A: answers as in T judged wrong (1)" in summary and 'href="#q-A-3"' in summary
    assert 'class="group tone-bad"' in summary  # the caught one is the participant's loss


def test_s_zero_is_explained_by_the_factor_that_is_zero(tmp_path):
    recs = _gat({"1": False, "2": False, "3": False})  # C_A = 0
    score = score_submission("s", recs)
    assert score.S == 0 and score.C_A == 0
    text = write_submission_report(tmp_path / "r.html", score, recs).read_text()
    assert "S = 0 because C_A = 0 (no answer of A was judged correct)" in text
    g_only = [r for r in recs if r.role == "G"]
    g_only = [r.model_copy(update={"case": "G"}) for r in g_only]
    text = write_submission_report(tmp_path / "g.html", score_submission("s", g_only), g_only).read_text()
    assert "S = 0: a submission of G alone has no A and T" in text
    resisted = _gat({"1": True, "2": False, "3": True})  # the assessor agreed with T everywhere: R = 1
    score = score_submission("s", resisted)
    assert score.R == 1
    text = write_submission_report(tmp_path / "r1.html", score, resisted).read_text()
    assert "S = 0 because R = 1, so 1 \u2212 R = 0" in text
