"""The challenge formulas on hand-computed cases, and on the 2024 challenge's own G+T sample."""

from __future__ import annotations

import math

from cli_runner import run_cli
import pytest

from checklist_eval.models import Answer, normalize_answer
from checklist_eval.challenge.records import Record, read_challenge_checklist_csv
from checklist_eval.challenge.scoring import (
    ScoringError,
    agreement_table,
    paper_table,
    score_records,
    score_submission,
)


def rows(role, spec, sid="s1", case=""):
    """spec: list of (question_id, answer text or None, correct 0/1)."""
    return [
        Record(submission_id=sid, role=role, question_id=q, answer=normalize_answer(a), correct=bool(c), case=case)
        for q, a, c in spec
    ]


def test_g_only_defaults():
    g = rows("G", [("1", "Yes", 1), ("2", "No", 1), ("3", "TODO", 1), ("4", None, 0)])
    s = score_submission("s1", g)
    # TODO counts 0 even though its row says correct=1; the missing answer is 0: C_G = 2/4.
    assert (s.case, s.C_G, s.C_A, s.C_T, s.R, s.S) == ("G", 0.5, 0.0, 0.0, 1.0, 0.0)
    assert s.questions == 4


def test_gat_hand_computed():
    g = rows("G", [("1", "Yes", 1), ("2", "Yes", 1), ("3", "No", 0), ("4", "NA", 1), ("5", "Yes", 1)])
    a = rows("A", [("1", "Yes", 1), ("2", "Yes", 1), ("3", "Yes", 1), ("4", "NA", 0), ("5", "TODO", 0)])
    t = rows("T", [("1", "Yes", 1), ("2", "No", 1), ("3", "No", 0), ("4", "NA", 1), ("5", "TODO", 0)])
    s = score_submission("s1", g + a + t)
    # C_G = 4/5, C_A = 3/5, C_T = 3/5.
    # All 5 questions count, T's TODO is T's answer: g = [1, 0, 0, 1, 1] (q5: TODO == TODO);
    # c_A = [1, 1, 1, 0, 0]; agree = [1, 0, 0, 0, 0] so R = 1/5 and S = 4/5 * 3/5 * 4/5 * 3/5 = 144/625.
    assert s.case == "GAT"
    assert s.C_G == 0.8 and s.C_A == 0.6 and s.C_T == 0.6
    assert s.R == 0.2
    assert s.S == 144 / 625
    assert s.warnings == []


def test_alignment_is_by_question_id_not_position():
    g = rows("G", [("1", "Yes", 1), ("2", "Yes", 1)])
    a = rows("A", [("2", "Yes", 1), ("1", "No", 1)])  # shuffled order
    t = rows("T", [("1", "No", 1), ("2", "No", 1)])
    s = score_submission("s1", g + a + t)
    # q1: a=No t=No g=1 c_A=1 agree; q2: a=Yes t=No g=0 c_A=1 disagree -> R = 1/2.
    assert s.R == 0.5
    assert s.S == 1.0 * 1.0 * 0.5 * 1.0


def test_gt_case_is_kept_from_records():
    g = rows("G", [("1", "Yes", 1), ("2", "Yes", 0)], case="GT")
    a = rows("A", [("1", "Yes", 0), ("2", "Yes", 1)], case="GT")  # G's answers on T's paper
    t = rows("T", [("1", "No", 1), ("2", "Yes", 1)], case="GT")
    s = score_submission("s1", g + a + t)
    # q1: g=0, c_A=0 agree; q2: g=1, c_A=1 agree -> R = 1, S = 0.
    assert (s.case, s.C_G, s.C_A, s.C_T, s.R, s.S) == ("GT", 0.5, 0.5, 1.0, 1.0, 0.0)


def _with_sources(recs, sources):
    return [r.model_copy(update={"source": sources[r.role]}) for r in recs]


def test_case_is_the_declared_one_never_inferred_from_sources():
    g = rows("G", [("1", "Yes", 1), ("2", "Yes", 0)])
    a = rows("A", [("1", "Yes", 0), ("2", "Yes", 1)])
    t = rows("T", [("1", "No", 1), ("2", "Yes", 1)])
    assert score_submission("s1", g).case == "G"
    # Without a declared case, G/A/T is labelled GAT, whatever the sources say: a GT A naming T's
    # paper is not read back into a case. Answers cannot tell GT from GAT and the scores do not
    # depend on the label.
    from checklist_eval.challenge.submissions import gt_adversarial_source

    gt_sources = _with_sources(g + a + t, {"G": "g.tex", "T": "t.tex", "A": gt_adversarial_source("t.tex", "g.tex")})
    undeclared = score_submission("s1", gt_sources)
    assert undeclared.case == "GAT"
    bare = score_submission("s1", g + a + t)
    assert bare.case == "GAT"
    assert (bare.C_G, bare.C_A, bare.C_T, bare.R, bare.S) == (undeclared.C_G, undeclared.C_A, undeclared.C_T,
                                                               undeclared.R, undeclared.S)
    # The declared case is the case, and must fit the roles.
    assert score_submission("s1", [r.model_copy(update={"case": "GT"}) for r in g + a + t]).case == "GT"
    assert score_submission("s1", [r.model_copy(update={"case": "GAT"}) for r in gt_sources]).case == "GAT"
    with pytest.raises(ScoringError, match="does not match"):
        score_submission("s1", [r.model_copy(update={"case": "G"}) for r in gt_sources])


def test_gt_case_is_written_into_the_records_and_read_back(tmp_path, fixtures_dir):
    """A GT submission scored by this tool carries its case in every record: a rescore says GT."""
    import asyncio

    from checklist_eval.assessors import make_assessor
    from checklist_eval.challenge.batch import score_path
    from checklist_eval.challenge.results.ledger import read_records, write_records

    result = asyncio.run(score_path(fixtures_dir / "submissions" / "team-beta", make_assessor("heuristic")))
    assert {r.case for r in result.records} == {"GT"}
    write_records(result.records, tmp_path / "r.csv", tmp_path / "r.jsonl")
    for name in ("r.csv", "r.jsonl"):
        (s,) = score_records(read_records(tmp_path / name))
        assert s.case == "GT"
        assert s.public() == result.score.public()


def test_all_todo_t_is_scored_by_the_definition():
    """T left everything TODO or missing: its answers are still T's answers, no R = 1 convention."""
    g = rows("G", [("1", "Yes", 1), ("2", "No", 1), ("3", "Yes", 1)])
    a = rows("A", [("1", "Yes", 1), ("2", "No", 0), ("3", "TODO", 0)])
    t = rows("T", [("1", "TODO", 0), ("2", None, 0), ("3", "TODO", 0)])
    s = score_submission("s1", g + a + t)
    # g = [0 (Yes/TODO), 0 (No/missing), 1 (TODO/TODO)]; c_A = [1, 0, 0]; agree = [0, 1, 0]: R = 1/3.
    assert s.R == 1 / 3 and s.S == 0.0 and s.C_T == 0.0
    assert s.warnings == []




def test_crafted_todo_in_t_counts_in_r_through_rescore(fixtures_dir):
    """The issue's crafted case, through ``rescore --json`` as an organizer runs it.

    By hand: C_G = 4/4, C_A = 3/4 (q3 judged wrong), C_T = 3/4 (q4 TODO).
    g = 1(a == t) = [1, 1, 0, 0] (q4: Yes vs TODO); c_A = [1, 1, 0, 1]; agree = [1, 1, 1, 0]:
    R = 3/4 over all 4 questions, S = 1 * 3/4 * (1 - 3/4) * 3/4 = 9/64 = 0.140625.
    Dropping q4 (T's TODO) would give R = 3/3 = 1 and S = 0.
    """
    import json

    path = fixtures_dir / "scoring" / "todo-in-t.csv"
    run = run_cli("rescore", str(path), "--json")
    assert run.returncode == 0, run.stderr
    (s,) = json.loads(run.stdout)["submissions"]
    assert (s["C_G"], s["C_A"], s["C_T"], s["R"]) == (1.0, 0.75, 0.75, 0.75)
    assert s["S"] == 9 / 64
    # The scoring page's example prints exactly this output.
    page = (fixtures_dir.parent / "docs" / "scoring.md").read_text()
    assert run.stdout.strip() in page


@pytest.mark.parametrize("a_spelling", ["NA", "N/A", "Not Applicable", "[NA]", "n/a", "not applicable"])
@pytest.mark.parametrize("t_spelling", ["NA", "N/A", "Not Applicable"])
def test_na_spellings_are_one_answer(a_spelling, t_spelling):
    g = rows("G", [("1", "Yes", 1)])
    a = rows("A", [("1", a_spelling, 1)])
    t = rows("T", [("1", t_spelling, 1)])
    assert a[0].answer is Answer.NA and t[0].answer is Answer.NA
    s = score_submission("s1", g + a + t)
    # g = 1 (same answer), c_A = 1: agreement, R = 1. Had NA been read as missing, g = 0 and R = 0.
    assert s.R == 1.0


def test_invalid_role_sets_are_refused():
    g = rows("G", [("1", "Yes", 1)])
    t = rows("T", [("1", "Yes", 1)])
    a = rows("A", [("1", "Yes", 1)])
    with pytest.raises(ScoringError, match="not a valid case"):
        score_submission("s1", g + t)
    with pytest.raises(ScoringError, match="no G"):
        score_submission("s1", a + t)


def test_score_records_groups_and_tables():
    recs = rows("G", [("1", "Yes", 1)], sid="x") + rows("G", [("1", "Yes", 0), ("2", "No", 1)], sid="y")
    scores = score_records(recs)
    assert [(s.submission_id, s.C_G) for s in scores] == [("x", 1.0), ("y", 0.5)]
    t = paper_table(recs, "G")
    assert list(t.columns)[:4] == ["question_id", "title", "answer", "c"]
    assert len(t) == 3


def test_reference_pair_sample(shared_dir):
    """The 2024 challenge's own G+T sample (CASE 2 in titles.json), rescored from its CSVs.

    The folder holds genuine_, adversarial_ and truth_adversarial_checklist.csv. adversarial_ is the
    challenge's synthesized A: its Answer and Justification columns are identical to genuine_'s (G's
    checklist) while its Review/Correctness_Score were produced on T's paper - "A = T's paper with
    G's checklist". truth_adversarial_ holds T's honest answers, NA spelled "Not Applicable", while
    A spells it "N/A".

    By hand (15 questions, in file order):
      a   = Y Y NA Y Y Y Y Y Y Y Y Y Y NA NA
      t   = Y N NA Y Y N N N Y N N N N NA NA
      g   = 1 0 1  1 1 0 0 0 1 0 0 0 0 1  1
      c_A = 1 0 1  1 1 0 1 0 0 0 1 1 0 1  1
      agree 1 1 1  1 1 1 0 1 0 1 0 0 1 1  1  -> R = 11/15 = 0.7333
    scores.json says R = 0.53 = 8/15: pandas read A's "N/A" as a missing value, so the three NA
    questions got g = 0 against c_A = 1 and three agreements were lost.
    C_G = 8/15, C_A = 9/15 = 0.6, C_T = 6/15 = 0.4 (these match scores.json up to its rounding).
    """
    ref = shared_dir / "corpus/anchor-sample/pair-submission/reference-output"
    recs = []
    for role, name in (("G", "genuine"), ("A", "adversarial"), ("T", "truth_adversarial")):
        recs += read_challenge_checklist_csv(ref / f"{name}_checklist.csv", submission_id="metaalbum", role=role, case="GT")
    g_ans = [r.answer for r in recs if r.role == "G"]
    a_ans = [r.answer for r in recs if r.role == "A"]
    assert g_ans == a_ans  # A carries G's checklist
    s = score_submission("metaalbum", recs)
    assert s.case == "GT" and s.questions == 15
    assert math.isclose(s.R, 11 / 15, rel_tol=0, abs_tol=1e-15)
    assert round(s.R, 2) == 0.73
    assert (s.C_G, s.C_A, s.C_T) == (8 / 15, 9 / 15, 6 / 15)
    assert math.isclose(s.S, (8 / 15) * (9 / 15) * (4 / 15) * (6 / 15), rel_tol=1e-15)
    agree = agreement_table(recs)
    assert agree["agree"].sum() == 11 and len(agree) == 15
