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


def test_failed_submission_reason_names_its_path_relative_to_the_input_root(tmp_path, capsys):
    """Organizers publish the leaderboard: a failure's reason names the upload as it sits in the batch
    root, never where the organizer keeps the root on disk (given absolute, as cron jobs do)."""
    root = tmp_path / "uploads"
    root.mkdir()
    (root / "team9_GAT.zip").write_text("not a zip")
    (root / "team8_GAT").mkdir()
    (root / "team8_GAT" / "main.tex").write_text("\\documentclass{article}\\begin{document}hi\\end{document}")
    results = tmp_path / "results"
    assert main(["batch", str(root.resolve()), "--out", str(results)]) == 4
    capsys.readouterr()
    assert str(root) in (results / "failures.jsonl").read_text()  # the organizer's own file keeps it whole
    csv_path, html_path = tmp_path / "lb.csv", tmp_path / "lb.html"
    assert main(["leaderboard", str(results), "--csv", str(csv_path), "--html", str(html_path)]) == 0
    df = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
    status = dict(zip(df["submission_id"], df["status"]))
    assert status["team9_GAT"].startswith("failed: team9_GAT.zip: unreadable zip archive")
    assert status["team8_GAT"].startswith("failed: team8_GAT: 'main.tex' is not named genuine_*")
    assert "not scored: team9_GAT: failed: team9_GAT.zip: unreadable zip" in " ".join(capsys.readouterr().out.split())
    for published in (csv_path, html_path):
        assert str(tmp_path) not in published.read_text()
