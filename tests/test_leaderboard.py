"""Leaderboard ranking: S descending, competition ranks for ties, C_G orders within a tie."""

from __future__ import annotations

import json

import pandas as pd

from checklist_eval.cli import main
from checklist_eval.challenge.results.leaderboard import LEADERBOARD_COLUMNS
from checklist_eval.models import Answer
from checklist_eval.challenge.records import Record
from checklist_eval.challenge.results.ledger import write_records


def submission(sid, g_ok, a_ok, t_ok, a_answers, t_answers, model="m1"):
    """Four questions; *_ok are the c_i lists, answers are Yes/No strings."""
    recs = []
    for role, oks, answers in (("G", g_ok, ["Yes"] * 4), ("A", a_ok, a_answers), ("T", t_ok, t_answers)):
        if oks is None:
            continue
        for q, (ok, ans) in enumerate(zip(oks, answers), start=1):
            recs.append(
                Record(
                    submission_id=sid, role=role, question_id=str(q), answer=Answer(ans), correct=bool(ok),
                    assessor="llm", model=model, prompt_version="assess-v1", scored_at=f"2025-01-0{q}T00:00:00Z",
                )
            )
    return recs


def build(tmp_path):
    y, n = "Yes", "No"
    recs = []
    # alpha: C_G 1, C_A 1, C_T 1; a vs t differ on 2 questions, both judged correct -> R = 2/4, S = 0.5
    recs += submission("alpha", [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [y, y, y, y], [y, y, n, n])
    # beta: C_G 3/4, C_A 1, C_T 1, R = 2/4 -> S = 0.375
    recs += submission("beta", [1, 1, 1, 0], [1, 1, 1, 1], [1, 1, 1, 1], [y, y, y, y], [y, y, n, n])
    # gamma: same S as beta (0.375) reached with C_G = 1 and C_T = 3/4 -> ties beta, higher C_G first
    recs += submission("gamma", [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 0], [y, y, y, y], [y, y, n, n])
    # delta: G only -> S = 0, rank 4; epsilon: G only too, ties delta
    recs += submission("delta", [1, 1, 0, 0], None, None, None, None)
    recs += submission("epsilon", [1, 1, 1, 0], None, None, None, None, model="m2")
    path = tmp_path / "records.csv"
    write_records(recs, path, tmp_path / "records.jsonl")
    return path


def test_ranking_and_ties(tmp_path, capsys):
    build(tmp_path)
    out = tmp_path / "lb" / "leaderboard.csv"
    assert main(["leaderboard", str(tmp_path), "--csv", str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["rank"], r["submission_id"]) for r in rows] == [
        (1, "alpha"), (2, "gamma"), (2, "beta"), (4, "epsilon"), (4, "delta"),
    ]
    assert rows[1]["S"] == rows[2]["S"] == 0.375
    assert rows[0]["questions"] == 4 and rows[0]["model"] == "m1" and rows[3]["model"] == "m2"
    assert rows[0]["scored_at"] == "2025-01-04T00:00:00Z"
    df = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(df.columns) == LEADERBOARD_COLUMNS
    assert df["rank"].tolist() == ["1", "2", "2", "4", "4"]
    assert list(rows[0]) == LEADERBOARD_COLUMNS


def test_leaderboard_from_jsonl_and_missing_dir(tmp_path, capsys):
    build(tmp_path)
    assert main(["leaderboard", str(tmp_path / "records.jsonl"), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 5
    assert main(["leaderboard", str(tmp_path / "nowhere"), "--json"]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["leaderboard", str(tmp_path / "empty")]) == 2
    assert "not a batch results folder" in capsys.readouterr().err
