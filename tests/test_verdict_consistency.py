"""No verdict contradicts its review: on the fixtures, the whole real papers and the anchor sample, every
offline verdict is derived from its blocking findings, and the review shows exactly those as must-fix."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cli_runner import run_cli
import pytest

from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor
from checklist_eval.models import MUST_FIX_TAG, SUGGESTIONS_HEADING, UNVERIFIABLE_HEADING, Assessment
from checklist_eval.reading.parsing import load_paper
from checklist_eval.challenge.results.ledger import read_records


def assert_agrees(a: Assessment, where: str) -> None:
    lines = a.review.splitlines()
    tagged = [line for line in lines if line.endswith(MUST_FIX_TAG)]
    if a.answer is None or not a.answer.is_answered:
        assert not a.correct, where  # TODO / missing: incorrect by the rules, nothing to grade
        return
    assert a.verdict in ("correct", "incorrect", "unverifiable"), where
    assert a.correct == (a.verdict != "incorrect") == (not a.must_fix), where
    assert (a.verdict == "unverifiable") == (bool(a.unverifiable) and not a.must_fix), where
    assert [f"- {m}{MUST_FIX_TAG}" for m in a.must_fix] == tagged == lines[: len(tagged)], where
    assert (SUGGESTIONS_HEADING in lines) == bool(a.suggestions), where
    assert (UNVERIFIABLE_HEADING in lines) == bool(a.unverifiable), where
    assert (a.p_correct >= 0.5) == a.correct, where
    if a.correct:
        assert "No problems found" in a.review or a.suggestions or a.unverifiable or "paper contains" in a.review


def assess_all(paths: list[Path], **kw) -> tuple[int, int]:
    """The verdicts checked, and every question of each paper's checklist version (answered or not),
    from one parse of each paper."""
    from checklist_eval.reading import checklists

    n = questions = 0
    for path in paths:
        paper = load_paper(path, **kw)
        questions += len(checklists.load(paper.checklist.id).ids)
        for a in asyncio.run(HeuristicAssessor().assess_paper(paper)):
            assert_agrees(a, f"{path.name} {a.question_id}")
            n += 1
    return n, questions


def test_fixture_papers(fixtures_dir):
    papers = sorted((fixtures_dir / "papers").iterdir())
    papers += sorted(p for sub in (fixtures_dir / "submissions").iterdir() for p in sub.iterdir())
    assert assess_all(papers)[0] > 50


def test_whole_real_papers(shared_dir):
    papers = sorted(p for p in (shared_dir / "corpus" / "papers-latex").iterdir() if p.is_dir())
    assert len(papers) == 42
    # Chieh-Yen__prism keeps its checklist in the branch its arXiv switch skips: read as written, and said.
    prism = load_paper(next(p for p in papers if p.name == "Chieh-Yen__prism"))
    assert any(w.kind.value == "undecided" and "TeX does not take" in w.message for w in prism.warnings)
    assert assess_all(papers) == (682, 682)  # a verdict for every question of each paper's checklist version


def test_anchor_sample(shared_dir):
    pdfs = sorted((shared_dir / "corpus" / "anchor-sample" / "papers").glob("*/*.pdf"))
    assert len(pdfs) == 22
    assert assess_all(pdfs, checklist="neurips-2024")[0] == 330


def test_records_written_by_score_agree(tmp_path, fixtures_dir):
    out = tmp_path / "res"
    res = run_cli("score", str(fixtures_dir / "submissions" / "team-alpha"), "--out", str(out))  # fmt: skip
    assert res.returncode == 0, res.stderr
    records = read_records(out / "records.csv")
    assert records
    for r in records:
        if not r.is_answered:
            continue
        assert r.verdict in ("correct", "incorrect", "unverifiable")
        assert r.correct == (r.verdict != "incorrect") == (MUST_FIX_TAG not in r.review), r.key


@pytest.mark.parametrize("body", ["", "x"])
def test_an_assessment_cannot_contradict_its_findings(body):
    from pydantic import ValidationError

    from checklist_eval.models import Answer, Provenance

    kw = dict(question_id="1", answer=Answer.YES, p_correct=0.5, provenance=Provenance(assessor="t"))
    with pytest.raises(ValidationError):
        Assessment(correct=True, must_fix=["wrong" + body], verdict="incorrect", **kw)
    with pytest.raises(ValidationError):
        Assessment(correct=False, must_fix=[], verdict="incorrect", **kw)
    assert Assessment(correct=True, unverifiable=["no body"], verdict="unverifiable", **kw).correct
