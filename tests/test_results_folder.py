"""What a results folder guarantees: each test holds one sentence of the README's "What a results folder
guarantees" list (Limits and guarantees), on a real batch of the fixtures, through the CLI as typed."""

from __future__ import annotations

import ast
import csv
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from checklist_eval.cli import main

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures" / "submissions"
APPEAL = "submission_id,role,question_id,correct,note\nteam-beta,G,1,0,appeal upheld\n"


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("finished")
    shutil.copytree(FIXTURES, tmp / "subs")
    assert main(["batch", str(tmp / "subs"), "--out", str(tmp / "results"), "--quiet", "--json"]) == 0
    return tmp


@pytest.fixture
def work(finished, tmp_path) -> Path:
    """A copy of the finished batch (ROOT ``subs``, folder ``results``) the test may change."""
    shutil.copytree(finished, tmp_path, dirs_exist_ok=True)
    return tmp_path


def refused(capsys, args: list[str], *words: str) -> str:
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("checklist-eval: error:"), err
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def board(capsys, results: Path) -> dict[str, float]:
    capsys.readouterr()
    assert main(["leaderboard", str(results), "--json"]) == 0
    return {r["submission_id"]: r["S"] for r in json.loads(capsys.readouterr().out)}


def rescored(capsys, results: Path) -> dict[str, float]:
    capsys.readouterr()
    assert main(["rescore", str(results), "--json"]) == 0
    return {r["submission_id"]: r["S"] for r in json.loads(capsys.readouterr().out)["submissions"]}


# ---------------------------------------------------------------------------------------- one reader


def test_every_reader_goes_through_the_results_folder():
    """One reader: rescore, leaderboard, serve --results and batch's settings check read a folder
    through ResultsFolder, and nothing outside challenge/results reads its ledgers or appeals itself."""
    readers = ["cli/rescore.py", "cli/leaderboard.py", "cli/serve.py", "web/browse.py", "cli/resume.py"]
    readers_of_files = {"Ledger", "read_records", "read_history", "StreamedOverrides", "read_failures",
                         "read_settings", "records_path", "ResultsLayout"}
    for name in readers:
        tree = ast.parse((REPO / "checklist_eval" / name).read_text())
        imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert "checklist_eval.challenge.results.folder" in {n.module for n in imports}, name
        names = {a.name for n in imports for a in n.names}
        assert not names & readers_of_files, (name, names & readers_of_files)


# ------------------------------------------------------------------------------------------ settings


def test_settings_are_recovered_from_result_json_and_disagreement_is_refused(work, capsys):
    results = work / "results"
    (results / "run_settings.json").unlink()
    llm = ["--assessor", "llm", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    refused(capsys, ["batch", str(work / "subs"), "--out", str(results), "--quiet", *llm],
            "result.json", "--assessor llm (recorded heuristic)", "--new-settings")
    assert not (results / "cache.sqlite").exists()  # refused before any request or cache
    assert len((results / "records.csv").read_text().splitlines()) > 40  # the finished records are there
    (results / "run_settings.json").write_text(json.dumps({"assessor": "llm", "model": "m"}))
    line = refused(capsys, ["leaderboard", str(results)], "run_settings.json", "result.json")
    assert "heuristic" in line and "llm" in line


# ------------------------------------------------------------------------------------------ whole rows


def test_a_cut_row_is_read_from_the_other_ledger_and_refused_when_neither_has_it(work, capsys):
    results = work / "results"
    before = board(capsys, results)
    data = (results / "records.csv").read_bytes()
    row_start = data.index(b"\nteam-beta,") + 1
    (results / "records.csv").write_bytes(data[: row_start + 20])  # cut in the middle of a row
    capsys.readouterr()
    assert main(["leaderboard", str(results), "--json"]) == 0
    out, err = capsys.readouterr()
    assert {r["submission_id"]: r["S"] for r in json.loads(out)} == before
    assert "cut short" in err and "read records.jsonl instead" in err and len(err.splitlines()) == 1
    jsonl = (results / "records.jsonl").read_text().splitlines()
    (results / "records.jsonl").write_text("\n".join(jsonl[:50] + [jsonl[50][:40]] + jsonl[51:]) + "\n")
    refused(capsys, ["rescore", str(results)], "records.csv", "row ", "cut short")


# ------------------------------------------------------------------------------------------- one story


def test_files_telling_two_stories_are_refused_naming_them(work, capsys):
    results = work / "results"
    gone = ("team-gamma", "G", "1")  # one row dropped from both ledgers: they agree, result.json does not
    with (results / "records.csv").open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, [r for r in reader if (r["submission_id"], r["role"], r["question_id"]) != gone]
    with (results / "records.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    lines = [ln for ln in (results / "records.jsonl").read_text().splitlines()
             if tuple(str(json.loads(ln)[k]) for k in ("submission_id", "role", "question_id")) != gone]
    (results / "records.jsonl").write_text("\n".join(lines) + "\n")
    refused(capsys, ["leaderboard", str(results)], "team-gamma", "result.json", "records.csv")
    (results / "scores.csv").write_text((results / "scores.csv").read_text().replace("team-beta", "team-zeta"))
    shutil.rmtree(results / "submissions" / "team-gamma")
    refused(capsys, ["rescore", str(results)], "scores.csv", "records.csv")


def test_a_hand_edited_summary_is_refused_naming_it_and_a_rerun_mends_it(work, capsys):
    """summary.json's scores are a copy of the ledger's too: an edit that misstates one, or drops one,
    is refused like a stale scores.csv, not published beside the ledger's own figures."""
    results, summary = work / "results", work / "results" / "summary.json"
    before = board(capsys, results)
    original = json.loads(summary.read_text())
    edited = json.loads(summary.read_text())
    beta = next(s for s in edited["scores"] if s["submission_id"] == "team-beta")
    beta["S"] = 0.99
    summary.write_text(json.dumps(edited, indent=1))
    for command in ("leaderboard", "rescore"):
        refused(capsys, [command, str(results)], "summary.json", "says S 0.99 for team-beta", "records.csv")
    edited["scores"] = [s for s in original["scores"] if s["submission_id"] != "team-beta"]
    summary.write_text(json.dumps(edited, indent=1))
    refused(capsys, ["leaderboard", str(results)], "summary.json", "but records.csv holds")
    summary.write_text(json.dumps({**original, "scores": "all fine"}))
    refused(capsys, ["leaderboard", str(results)], "summary.json", "not a batch summary")
    summary.unlink()  # as a run killed between scores.csv and summary.json leaves it
    refused(capsys, ["leaderboard", str(results)], "summary.json", "did not finish")
    assert main(["batch", str(work / "subs"), "--out", str(results), "--quiet", "--json"]) == 0
    assert board(capsys, results) == before
    assert json.loads(summary.read_text())["scores"] == original["scores"]


def test_a_batch_that_did_not_finish_is_refused_until_a_rerun_finishes_it(work, capsys):
    results = work / "results"
    before = board(capsys, results)
    (results / "scores.csv").unlink()  # as a killed or full-disk run leaves it: the ledger without its end
    for command in ("leaderboard", "rescore"):
        refused(capsys, [command, str(results)], "scores.csv", "did not finish")
    assert main(["batch", str(work / "subs"), "--out", str(results), "--quiet", "--json"]) == 0
    assert board(capsys, results) == before


# --------------------------------------------------------------------------------------------- appeals


def test_appeals_reach_every_output_and_a_rerun_keeps_them(work, capsys):
    results = work / "results"
    before = board(capsys, results)
    (work / "appeal.csv").write_text(APPEAL)
    assert main(["rescore", str(results), "--overrides", str(work / "appeal.csv"), "--json"]) == 0
    after = board(capsys, results)
    assert after["team-beta"] != before["team-beta"]

    def written() -> dict[str, object]:
        scores = {r["submission_id"]: float(r["S"]) for r in csv.DictReader((results / "scores.csv").open())}
        summary = {s["submission_id"]: s["S"] for s in json.loads((results / "summary.json").read_text())["scores"]}
        result = json.loads((results / "submissions" / "team-beta" / "result.json").read_text())
        report = (results / "submissions" / "team-beta" / "report.html").read_text()
        return {"scores": scores, "summary": summary, "result": result["score"]["S"],
                "appeals": len(result["appeals"]), "report": "appeal.csv" in report}

    want = {"scores": after, "summary": after, "result": after["team-beta"], "appeals": 1, "report": True}
    assert written() == want
    assert rescored(capsys, results) == after
    assert main(["batch", str(work / "subs"), "--out", str(results), "--quiet", "--json"]) == 0
    assert written() == want and board(capsys, results) == after


def test_an_interrupted_appeal_is_refused_then_finished_by_rerunning_it(work, capsys):
    results = work / "results"
    (work / "appeal.csv").write_text(APPEAL)
    result_json = results / "submissions" / "team-beta" / "result.json"
    untouched = result_json.read_bytes()
    assert main(["rescore", str(results), "--overrides", str(work / "appeal.csv"), "--json"]) == 0
    after = board(capsys, results)
    result_json.write_bytes(untouched)  # killed after overrides.jsonl, before the result.json
    refused(capsys, ["leaderboard", str(results)], "result.json", "overrides.jsonl")
    assert main(["rescore", str(results), "--overrides", str(work / "appeal.csv"), "--json"]) == 0
    assert board(capsys, results) == after


# -------------------------------------------------------------------------------------- new settings


def test_new_settings_move_the_replaced_records_aside_until_the_new_ones_are_complete(work, capsys, monkeypatch):
    from checklist_eval.testing import MockServer

    results = work / "results"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-results-folder")
    records = (results / "records.csv").read_bytes()
    llm = ["--assessor", "llm", "--model", "gpt-4o-mini", "--no-cache", "--quiet", "--json", "--new-settings"]
    with MockServer(require_api_key="another key") as server:  # a run that cannot finish: every request refused
        port = server.port
        capsys.readouterr()
        code = main(["batch", str(work / "subs"), "--out", str(results), *llm, "--base-url", server.base_url])
    err = capsys.readouterr().err
    (aside,) = results.glob("replaced-*")
    assert code in (2, 4) and f"kept in {aside}" in err, err
    assert (aside / "records.csv").read_bytes() == records and (aside / "submissions" / "team-beta").is_dir()
    with MockServer(port=port) as server:
        capsys.readouterr()
        code = main(["batch", str(work / "subs"), "--out", str(results), *llm, "--base-url", server.base_url])
    err = capsys.readouterr().err
    assert code == 0 and not aside.exists() and f"removed {aside}" in err, err


# ---------------------------------------------------------------------------------- root, lines, storage


def test_a_results_folder_inside_the_root_is_skipped_with_a_note(work, capsys):
    inside = work / "subs" / "results"
    shutil.copytree(work / "results", inside)
    capsys.readouterr()
    assert main(["batch", str(work / "subs"), "--out", str(inside), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["submissions"] == 3
    assert f"skipped {inside}: a results folder, not a submission" in err
    assert "results" not in board(capsys, inside)


@pytest.mark.parametrize("name", ["failures.jsonl", "overrides.jsonl"])
def test_an_unreadable_jsonl_line_is_refused_with_its_number(work, capsys, name):
    results = work / "results"
    (work / "appeal.csv").write_text(APPEAL)
    assert main(["rescore", str(results), "--overrides", str(work / "appeal.csv"), "--json"]) == 0
    good = json.dumps({"submission_id": "team-x", "source": "x", "error": "bad"}) if name == "failures.jsonl" else \
        (results / name).read_text().splitlines()[0]
    (results / name).write_text(f"{good}\n{good[: len(good) // 2]}\n")
    refused(capsys, ["leaderboard", str(results)], name, "line 2")


def test_read_only_storage_is_read_and_writers_refuse(work, capsys):
    import os

    if os.geteuid() != 0:
        pytest.skip("needs root to mount a read-only file system")
    mount = work / "ro"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs")
    try:
        shutil.copytree(work / "results", mount / "results")
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        results = mount / "results"
        assert board(capsys, results) == rescored(capsys, results) == board(capsys, work / "results")
        capsys.readouterr()
        assert main(["logs", "--cache", str(results)]) == 0
        (work / "appeal.csv").write_text(APPEAL)
        refused(capsys, ["rescore", str(results), "--overrides", str(work / "appeal.csv")], "Read-only")
        refused(capsys, ["batch", str(work / "subs"), "--out", str(results), "--quiet"], str(results))
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
