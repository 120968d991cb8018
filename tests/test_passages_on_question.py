"""The passages the offline assessor shows address their question in every state, and the author's claim never
lowers the bar of the evidence judged against it (issue 44, items 1-2; heuristic-rules-9):

- one word of the topic repeated ("seeds ... seed ... seeds") is a word in passing, not a paragraph on the question;
- a contradicted answer shows only passages on its question (a related-work sentence naming a benchmark is no
  passage for an error-bars question), and a question the paper has nothing on shows none in any state;
- a Yes on limitations that cites a section whose only "limitation" is a problem described in passing ("clients
  are limited by their upload bandwidth") is not taken for the discussion it claims."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor
from checklist_eval.models import Answer, Checklist, ChecklistItem, Paper, State
from checklist_eval.reading import checklists
from checklist_eval.reading.parsing import load_paper

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "fixtures" / "evidence-labels" / "labels.jsonl"
SPEC = checklists.load("neurips-2024")
DETAILS, ERROR_BARS, LIMITATIONS = "6", "7", "2"


def judge(qid: str, answer: Answer, justification: str, body: str):
    it = ChecklistItem.for_question(SPEC.question(qid), answer, justification)
    paper = Paper(source="p.tex", format="latex", body=body, checklist=Checklist(id=SPEC.id, items=[it]),
                  places=[(0, "p.tex:1")])
    return asyncio.run(HeuristicAssessor().assess_item(paper, it))


def test_a_topic_word_repeated_is_not_a_paragraph_on_the_question():
    intro = "1 Introduction\n\nWe study calibration of image classifiers.\n\n"
    seeds = "2 Results\n\nTable 2: Accuracy of the three models; seeds 1, 2 and 3 give one seed per run, and the seeds are fixed.\n"
    res = judge(DETAILS, Answer.YES, "Section 2 gives the setup.", intro + seeds)
    assert res.passages == [], [p.quote for p in res.passages]
    setup = "3 Training\n\nWe train every model with a learning rate of 0.1 and a batch size of 64.\n"
    res = judge(DETAILS, Answer.YES, "Section 3 gives the setup.", intro + seeds + setup)
    assert [p.quote for p in res.passages] == [setup.split("\n\n")[1].strip()]


def _labels() -> list[dict]:
    return [json.loads(line) for line in LABELS.read_text("utf-8").splitlines() if line.strip()]


def test_a_contradicted_answer_shows_no_passage_off_its_question(shared_dir):
    """GiggleLiu's NA on error bars is contradicted (the paper runs a case study), and the reader found
    nothing on error bars in the paper: the related-work sentence that named a benchmark is not shown."""
    folder = "GiggleLiu__ProblemReductionPaper"
    label = next(r for r in _labels() if r["paper"] == folder and r["question"] == ERROR_BARS)
    assert label["label"] == "none-in-paper" and label["half"] == "development"
    paper = load_paper(shared_dir / "corpus" / "papers-latex" / folder)
    res = next(a for a in asyncio.run(HeuristicAssessor().assess_paper(paper)) if a.question_id == ERROR_BARS)
    assert res.state is State.CONTRADICTED and res.must_fix
    assert res.passages == [], [p.quote for p in res.passages]


def test_no_passage_is_shown_where_a_development_paper_has_nothing_on_the_question(shared_dir):
    """Every (paper, question) of the labelled set's development half that the reader found nothing on shows
    no passage, whatever its state (the held-out half is measured by scripts/eval_evidence.py, not held here:
    no rule is written from it)."""
    nothing = [r for r in _labels() if r["half"] == "development" and r["label"] == "none-in-paper"]
    assert len(nothing) >= 20
    shown = []
    for folder in dict.fromkeys(r["paper"] for r in nothing):
        paper = load_paper(shared_dir / "corpus" / "papers-latex" / folder)
        judged = {a.question_id: a for a in asyncio.run(HeuristicAssessor().assess_paper(paper))}
        shown += [f"{folder} q{r['question']} ({judged[r['question']].state.value}): {p.where}"
                  for r in nothing if r["paper"] == folder for p in judged[r["question"]].passages]
    assert not shown, shown


def test_citing_a_section_does_not_make_a_word_in_passing_the_discussion_a_yes_claims(fixtures_dir):
    """team-alpha's A answers Yes on limitations, citing its introduction, whose only such word is a problem
    described ("limited by their upload bandwidth"); its truthful copy answers No. The Yes is caught, the No stands."""
    alpha = fixtures_dir / "submissions" / "team-alpha"
    for name, caught in (("adversarial_sga.tex", True), ("truth_adversarial_sga.tex", False)):
        paper = load_paper(alpha / name)
        res = next(a for a in asyncio.run(HeuristicAssessor().assess_paper(paper)) if a.question_id == LIMITATIONS)
        assert (not res.correct) is caught, (name, res.review)
    assert any("never discusses limitations" in m for m in
               next(a for a in asyncio.run(HeuristicAssessor().assess_paper(load_paper(alpha / "adversarial_sga.tex")))
                    if a.question_id == LIMITATIONS).must_fix)
