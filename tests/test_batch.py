"""Batch runs: outputs, failure isolation, resume with zero repeated requests, the `score` command."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from checklist_eval.cli import main
from checklist_eval.challenge.results.ledger import read_records


@pytest.fixture()
def root(submissions_copy):
    return submissions_copy


def _add_corrupt(root):
    bad = root / "team-broken"
    bad.mkdir()
    (bad / "genuine_x.tex").write_text("this is not LaTeX and has no checklist\n")
    (root / "team-zip.zip").write_bytes(b"PK\x03\x04 definitely not a zip")


def _read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_heuristic_batch_outputs_and_isolated_failures(root, tmp_path, capsys):
    _add_corrupt(root)
    out = tmp_path / "results"
    assert main(["batch", str(root), "--out", str(out), "--quiet"]) == 4  # ran to its end, 2 failed
    printed = capsys.readouterr().out
    assert "2 failed" in printed
    failures = _read_jsonl(out / "failures.jsonl")
    assert sorted(f["submission_id"] for f in failures) == ["team-broken", "team-zip"]
    assert all("\n" not in f["error"] and f["error"] for f in failures)
    for sid, case in (("team-alpha", "GAT"), ("team-beta", "GT"), ("team-gamma", "G")):
        result = json.loads((out / "submissions" / sid / "result.json").read_text())
        assert result["case"] == case
        html = (out / "submissions" / sid / "report.html").read_text()
        assert html.startswith("<!DOCTYPE html>") and "<script" not in html and "src=" not in html
    scores = pd.read_csv(out / "scores.csv", dtype={"submission_id": str})
    assert scores["submission_id"].tolist() == ["team-alpha", "team-beta", "team-gamma"]
    recs = pd.read_csv(out / "records.csv", dtype=str, keep_default_na=False)
    # 16 questions per paper: 3 + 3 (GT derives A) + 1 papers.
    assert len(recs) == 16 * 7 and set(recs["answer"]) <= {"Yes", "No", "NA", "TODO", ""}
    assert "NA" in set(recs["answer"])
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["scored"], summary["failed"], summary["resumed"]) == (3, 2, 0)
    gamma = scores.set_index("submission_id").loc["team-gamma"]
    assert (gamma["C_A"], gamma["C_T"], gamma["R"], gamma["S"]) == (0.0, 0.0, 1.0, 0.0)
    # rescore of the batch's records gives the batch's scores exactly
    assert main(["rescore", str(out / "records.csv"), "--json"]) == 0
    rescored = json.loads(capsys.readouterr().out)["submissions"]
    assert rescored == summary["scores"]
    # Rerun: nothing finished is redone; the failures are retried (and fail again).
    assert main(["batch", str(root), "--out", str(out), "--json"]) == 4  # the failures fail again
    again = json.loads(capsys.readouterr().out)
    assert (again["scored"], again["resumed"], again["failed"]) == (0, 3, 2)
    assert main(["leaderboard", str(out), "--csv", str(out / "leaderboard.csv"), "--json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert [r["S"] for r in board] == sorted((r["S"] for r in board), reverse=True)
    assert {r["submission_id"]: r["S"] for r in board}["team-gamma"] == 0.0
    assert {r["assessor"] for r in board} == {"heuristic"}


def test_unusable_root_exits_2(tmp_path, capsys):
    assert main(["batch", str(tmp_path / "absent"), "--out", str(tmp_path / "r")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_score_command(root, tmp_path, capsys):
    out = tmp_path / "one"
    assert main(["score", str(root / "team-alpha"), "--out", str(out), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert set(obj) == {"submission_id", "case", "C_G", "C_A", "C_T", "R", "S", "warnings", "usage"}
    assert obj["case"] == "GAT"
    for name in ("result.json", "report.html", "records.csv", "records.jsonl"):
        assert (out / name).is_file()
    assert main(["rescore", str(out / "records.jsonl"), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)["submissions"][0]
    assert again == {k: obj[k] for k in again}


def test_rerun_scores_again_exactly_what_changed(root, tmp_path, capsys):
    """Resume skips a submission only when its files and the assessor identity are unchanged."""
    out = tmp_path / "results"

    def batch():
        assert main(["batch", str(root), "--out", str(out), "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    first = batch()
    assert (first["scored"], first["resumed"]) == (3, 0)
    before = {
        sid: json.loads((out / "submissions" / sid / "result.json").read_text())
        for sid in ("team-alpha", "team-beta", "team-gamma")
    }
    # Unchanged: nothing is scored again.
    unchanged = batch()
    assert (unchanged["scored"], unchanged["resumed"]) == (0, 3)
    # A changed upload (one byte appended to a paper, here inside a project folder) is scored again.
    tex = next((root / "team-beta" / "genuine_sga").rglob("*.tex"))
    tex.write_bytes(tex.read_bytes() + b"%")
    changed = batch()
    assert (changed["scored"], changed["resumed"]) == (1, 2)
    beta = json.loads((out / "submissions" / "team-beta" / "result.json").read_text())
    assert beta["fingerprint"] != before["team-beta"]["fingerprint"]
    # A result scored with another model, or another assessor, is scored again (and only that one): as
    # results.sqlite holds it (result.json is an export; an edit of it is set aside, not believed).
    import sqlite3

    db = sqlite3.connect(out / "results.sqlite")
    for sid, key, value in (("team-alpha", "model", "another-model"), ("team-gamma", "assessor", "llm")):
        for run, text in db.execute("SELECT run_id, result_json FROM submissions WHERE submission_id=?", (sid,)):
            db.execute("UPDATE submissions SET result_json=? WHERE run_id=? AND submission_id=?",
                       (json.dumps({**json.loads(text), key: value}), run, sid))
    db.commit()
    db.close()
    other = batch()
    assert (other["scored"], other["resumed"]) == (2, 1)
    for sid in ("team-alpha", "team-gamma"):
        again = json.loads((out / "submissions" / sid / "result.json").read_text())
        assert (again["assessor"], again["model"]) == (before[sid]["assessor"], before[sid]["model"])
    assert batch()["scored"] == 0


# --- LLM assessor against the loopback server ---------------------------------------------------------


def _requests(server) -> int:
    # every chat request the loopback server received (an engine is also asked what it is, once per run
    # that sends anything: stats.probes)
    return server.stats.chat_requests


def test_resume_after_interrupt_makes_zero_repeated_requests(root, tmp_path, monkeypatch, capsys):
    from checklist_eval.testing import MockServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "results"
    partial = tmp_path / "partial"
    partial.mkdir()
    shutil.copytree(root / "team-alpha", partial / "team-alpha")
    shutil.copytree(root / "team-gamma", partial / "team-gamma")

    def batch(src, server):
        flags = ["--assessor", "llm", "--model", "gpt-4o-mini", "--base-url", server.base_url, "--quiet", "--json"]
        before = _requests(server)
        assert main(["batch", str(src), "--out", str(out), *flags]) == 0
        return json.loads(capsys.readouterr().out), _requests(server) - before

    with MockServer(latency=0.0, seed=0) as server:
        # First run: two submissions.
        first, n = batch(partial, server)
        assert first["scored"] == 2 and n > 0 and first["usage"]["calls"] == n
        # The records are the per-call ledger: they add up to what the server counted.
        ledger = read_records(out / "records.csv")
        assert sum(r.calls for r in ledger) == n and sum(r.cost_usd for r in ledger) > 0
        alpha_first = json.loads((out / "submissions" / "team-alpha" / "result.json").read_text())
        # A killed run can die after its requests were answered but before team-alpha's records were
        # committed: simulate it by removing them from results.sqlite (a result.json removed is only an
        # export gone). The rerun redoes team-alpha from the cache and skips team-gamma: zero requests.
        import sqlite3

        db = sqlite3.connect(out / "results.sqlite")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("DELETE FROM submissions WHERE submission_id='team-alpha'")
        db.commit()
        db.close()
        # A kill in the middle of an atomic write leaves its temp file, never a half result.json.
        (out / "submissions" / "team-alpha" / ".result.json.k1ll3d.tmp").write_text('{"half": ')
        second, n = batch(partial, server)
        assert (second["scored"], second["resumed"], n) == (1, 1, 0)
        assert not list(out.rglob("*.tmp"))
        alpha_again = json.loads((out / "submissions" / "team-alpha" / "result.json").read_text())
        assert alpha_again["score"] == alpha_first["score"]
        # The full root: only team-beta is new; at most its 3 x 16 answers reach the server.
        third, n = batch(root, server)
        assert (third["scored"], third["resumed"], third["failed"]) == (1, 2, 0)
        assert 0 < n <= 48
        # Everything finished: not a single request.
        fourth, n = batch(root, server)
        assert (fourth["resumed"], n, fourth["usage"]["calls"]) == (3, 0, 0)
    summary = json.loads((out / "summary.json").read_text())
    assert [s["submission_id"] for s in summary["scores"]] == ["team-alpha", "team-beta", "team-gamma"]


def test_logs_of_a_heuristic_run_says_there_were_no_model_calls(root, tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["batch", str(root), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["logs", "--cache", str(out)]) == 0
    said = capsys.readouterr().out
    assert "heuristic assessor" in said and "no model calls" in said
    assert main(["logs", "--cache", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_validate_root_checks_each_submission_in_a_table(root, tmp_path, capsys):
    _add_corrupt(root)
    assert main(["validate", str(root), "--json"]) == 4  # some are invalid
    doc = json.loads(capsys.readouterr().out)
    by_id = {e["submission_id"]: e for e in doc["submissions"]}
    assert (doc["valid"], doc["invalid"]) == (3, 2) and set(by_id) == {"team-alpha", "team-beta", "team-gamma",
                                                                         "team-broken", "team-zip"}
    assert [by_id[s]["case"] for s in ("team-alpha", "team-beta", "team-gamma")] == ["GAT", "GT", "G"]
    assert all(by_id[s]["valid"] is False and "\n" not in by_id[s]["problem"] and by_id[s]["problem"]
               for s in ("team-broken", "team-zip"))
    assert main(["validate", str(root)]) == 4
    table = " ".join(capsys.readouterr().out.split())
    assert "3 valid, 2 invalid" in table and "team-broken" in table and "invalid" in table
    assert main(["validate", str(root / "team-alpha"), "--json"]) == 0  # one submission: as before
    assert json.loads(capsys.readouterr().out)["case"] == "GAT"
