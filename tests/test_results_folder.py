"""What a results folder guarantees: each test holds one sentence of the README's "The results folder and
its guarantees" list, on a real batch of the fixtures, through the CLI as typed.

The folder's truth is results.sqlite; its CSV and JSON files are exports. The tests of a folder written
before the database (``legacy``: the same files, no database) hold the checks its import runs."""

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


@pytest.fixture
def legacy(work) -> Path:
    """The finished batch as a version before results.sqlite left it: its files, no database."""
    for name in ("results.sqlite", "results.sqlite-wal", "results.sqlite-shm", "exports.json"):
        (work / "results" / name).unlink(missing_ok=True)
    return work


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


def said(capsys, args: list[str]) -> tuple[dict[str, float], str]:
    """(S by submission, stderr) of ``leaderboard``/``rescore`` ... --json that exits 0."""
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    return {r["submission_id"]: r["S"] for r in (data if isinstance(data, list) else data["submissions"])}, err


def rescored(capsys, results: Path) -> dict[str, float]:
    capsys.readouterr()
    assert main(["rescore", str(results), "--json"]) == 0
    return {r["submission_id"]: r["S"] for r in json.loads(capsys.readouterr().out)["submissions"]}


# ---------------------------------------------------------------------------------------- one reader


def test_every_reader_goes_through_the_results_folder():
    """One reader: rescore, leaderboard, serve --results and batch's settings check read a folder
    through ResultsFolder, and nothing outside challenge/results reads its ledgers or appeals itself."""
    readers = ["cli/rescore.py", "cli/leaderboard.py", "cli/serve.py", "web/browse.py", "cli/resume.py",
               "cli/prune.py"]
    readers_of_files = {"Ledger", "read_records", "read_history", "StreamedOverrides", "read_failures",
                         "read_settings", "records_path", "ResultsLayout"}
    for name in readers:
        tree = ast.parse((REPO / "checklist_eval" / name).read_text())
        imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert "checklist_eval.challenge.results.folder" in {n.module for n in imports}, name
        names = {a.name for n in imports for a in n.names}
        assert not names & readers_of_files, (name, names & readers_of_files)


def db_rows(results: Path, sql: str, *args: object) -> list[tuple]:
    import sqlite3

    db = sqlite3.connect(results / "results.sqlite")
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


# ------------------------------------------------------------------------ exports of one database


def test_an_edited_export_is_set_aside_and_the_database_is_read(work, capsys):
    """Every file an organizer reads is an export: an edit, a cut or a removal of one changes no score a
    reader reports, the reader says it was set aside, and the next command that writes exports it again."""
    results = work / "results"
    before = board(capsys, results)
    summary = json.loads((results / "summary.json").read_text())
    generation = int(db_rows(results, "SELECT value FROM meta WHERE key='generation'")[0][0])
    assert (summary["run"], summary["generation"]) == (1, generation)
    scores = (results / "scores.csv").read_text()
    (results / "scores.csv").write_text(scores.replace("team-beta", "team-zeta"))
    (results / "summary.json").write_text((results / "summary.json").read_text()[:200])
    (results / "submissions" / "team-gamma" / "result.json").unlink()
    for command in ("leaderboard", "rescore"):
        got, err = said(capsys, [command, str(results)])
        assert got == before, command
        lines = err.splitlines()
        assert len(lines) == 1 and "set aside" in lines[0], err
        assert all(name in lines[0] for name in ("scores.csv", "summary.json", "team-gamma/result.json"))
    assert main(["batch", str(work / "subs"), "--out", str(results), "--quiet", "--json"]) == 0
    assert (results / "scores.csv").read_text() == scores
    got, err = said(capsys, ["leaderboard", str(results)])
    assert got == before and err == ""


def test_an_export_given_as_a_file_reads_the_database_beside_it(work, capsys):
    """``rescore RESULTS/records.csv`` and ``leaderboard RESULTS/records.csv`` read results.sqlite: a
    hand-edited ledger is set aside (not ranked), and an appeal given that way is kept."""
    results = work / "results"
    before = board(capsys, results)
    ledger = results / "records.csv"
    ledger.write_text(ledger.read_text().replace(",1,", ",0,"))  # every verdict flipped by hand
    for command in ("leaderboard", "rescore"):
        got, err = said(capsys, [command, str(ledger)])
        assert got == before, command
        assert "results.sqlite" in err and "set aside" in err
    (work / "appeal.csv").write_text(APPEAL)
    got, _err = said(capsys, ["rescore", str(ledger), "--overrides", str(work / "appeal.csv")])
    assert got["team-beta"] != before["team-beta"]
    assert board(capsys, results) == got  # kept: the folder shows it
    assert db_rows(results, "SELECT submission_id, role, question_id, correct FROM appeals") == [
        ("team-beta", "G", "1", 0)]


def test_a_lone_ledger_is_read_as_a_ledger_and_says_so(work, capsys):
    lone = work / "lone"
    lone.mkdir()
    shutil.copy(work / "results" / "records.csv", lone / "records.csv")
    got, err = said(capsys, ["rescore", str(lone / "records.csv")])
    assert got == rescored(capsys, work / "results")
    assert "as a ledger" in err and "no results.sqlite" in err


# ------------------------------------------------------------------------------ runs never destroy


def served_leaderboard(results: Path, env: dict[str, str]) -> str:
    """The organizer's leaderboard page as ``serve --results`` answers it."""
    import socket
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    serve = subprocess.Popen([sys.executable, "-m", "checklist_eval", "serve", "--results", str(results), "--port",
                              str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/results/", timeout=30) as reply:
                    return reply.read().decode()
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        serve.kill()
        serve.wait()


def test_a_rerun_killed_before_its_first_record_leaves_the_last_complete_run_shown(work, capsys):
    """A rerun in progress (and then killed before it committed anything) changes nothing a reader
    shows: the leaderboard and rescore show the last complete run and say another is in progress."""
    import os
    import signal
    import sys
    import time

    from checklist_eval.testing import MockServer

    results = work / "results"
    before = board(capsys, results)
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "NO_COLOR": "1"}
    with MockServer(latency=30.0) as server:  # every answer takes long: the run stays before its first record
        rerun = subprocess.Popen([sys.executable, "-m", "checklist_eval", "batch", str(work / "subs"), "--out",
                                  str(results), "--assessor", "llm", "--model", "m", "--base-url", server.base_url,
                                  "--no-cache", "--new-settings", "--quiet", "--json"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            deadline = time.monotonic() + 60
            while not db_rows(results, "SELECT id FROM runs WHERE id = 2") and time.monotonic() < deadline:
                time.sleep(0.1)
            assert db_rows(results, "SELECT state FROM runs WHERE id = 2") == [("running",)]
            for command in ("leaderboard", "rescore"):
                got, err = said(capsys, [command, str(results)])
                assert got == before, command
                assert "run 2 (in progress: 0 of 3 submissions committed)" in err and "showing run 1" in err
            page = served_leaderboard(results, env)
            assert "run 2 (in progress: 0 of 3 submissions committed)" in page and "showing run 1" in page
            assert all(f"/results/s/{sid}" in page for sid in before)
        finally:
            rerun.send_signal(signal.SIGKILL)
            rerun.wait()
    got, err = said(capsys, ["leaderboard", str(results)])
    assert got == before and "run 2 (interrupted after 0 of 3 submissions)" in err
    assert (results / "scores.csv").read_text().count("team-") == 3


def test_new_settings_open_a_new_run_and_earlier_runs_stay_until_prune(work, capsys, monkeypatch):
    from checklist_eval.testing import MockServer

    results = work / "results"
    heuristic = board(capsys, results)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-results-folder")
    llm = ["--assessor", "llm", "--model", "gpt-4o-mini", "--no-cache", "--quiet", "--json", "--new-settings"]
    with MockServer() as server:
        capsys.readouterr()
        code = main(["batch", str(work / "subs"), "--out", str(results), *llm, "--base-url", server.base_url])
    err = capsys.readouterr().err
    assert code == 0 and "open a new run" in err, err
    assert db_rows(results, "SELECT id, state FROM runs") == [(1, "complete"), (2, "complete")]
    models = db_rows(results, "SELECT DISTINCT run_id, json_extract(record_json, '$.assessor') FROM records")
    assert sorted(models) == [(1, "heuristic"), (2, "llm")]  # the earlier run is still queryable
    assert {r["assessor"] for r in csv.DictReader((results / "records.csv").open())} == {"llm"}
    assert board(capsys, results).keys() == heuristic.keys()
    capsys.readouterr()
    assert main(["prune", str(results), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"kept": 2, "removed": [1]}
    assert db_rows(results, "SELECT DISTINCT run_id FROM records") == [(2,)]


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


def test_an_appeal_on_an_answer_since_replaced_is_kept_in_the_history_and_not_applied(work, capsys):
    results = work / "results"
    before = board(capsys, results)
    (work / "appeal.csv").write_text(APPEAL)
    assert main(["rescore", str(results), "--overrides", str(work / "appeal.csv"), "--json"]) == 0
    appealed = board(capsys, results)
    assert appealed["team-beta"] != before["team-beta"]
    paper = work / "subs" / "team-beta" / "genuine_sga" / "checklist.tex"
    text = paper.read_text()
    first = text.index("\\item[] Answer: \\answerYes{}")
    paper.write_text(text[:first] + "\\item[] Answer: \\answerNo{}" + text[first + len("\\item[] Answer: \\answerYes{}"):])
    assert main(["batch", str(work / "subs"), "--out", str(results), "--quiet", "--json"]) == 0  # the re-upload
    got, err = said(capsys, ["leaderboard", str(results)])
    assert "decided on an answer since replaced" in err and "team-beta/G/1" in err
    assert got["team-beta"] != appealed["team-beta"]
    result = json.loads((results / "submissions" / "team-beta" / "result.json").read_text())
    assert result["appeals"] == []  # not applied to the new answer ...
    assert db_rows(results, "SELECT count(*) FROM appeals") == [(1,)]  # ... and kept in the history
    rows = {(r["submission_id"], r["role"], r["question_id"]): r for r in csv.DictReader((results / "records.csv").open())}
    assert rows[("team-beta", "G", "1")]["answer"] == "No"


def test_an_appeal_on_a_score_out_folder_is_kept_and_read_again(work, capsys):
    out = work / "scored"
    capsys.readouterr()
    assert main(["score", str(work / "subs" / "team-beta"), "--out", str(out), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)["S"]
    (work / "appeal.csv").write_text(APPEAL)
    got, _err = said(capsys, ["rescore", str(out), "--overrides", str(work / "appeal.csv")])
    assert got["team-beta"] != first
    assert rescored(capsys, out) == got and board(capsys, out) == got
    result = json.loads((out / "result.json").read_text())
    assert result["score"]["S"] == got["team-beta"] and len(result["appeals"]) == 1


def test_an_appeal_after_a_submission_folder_was_removed_keeps_every_team(work, capsys):
    results = work / "results"
    shutil.rmtree(results / "submissions" / "team-gamma")
    (work / "appeal.csv").write_text(APPEAL)
    assert main(["rescore", str(results), "--overrides", str(work / "appeal.csv"), "--json"]) == 0
    listed = [r["submission_id"] for r in csv.DictReader((results / "scores.csv").open())]
    assert listed == ["team-alpha", "team-beta", "team-gamma"]
    assert (results / "submissions" / "team-gamma" / "result.json").is_file()


def test_an_overrides_file_with_a_50_mb_note_is_refused_in_bounded_memory(work):
    from helpers import run_measured

    big = work / "big.csv"
    with big.open("w") as fh:
        fh.write("submission_id,role,question_id,correct,note\nteam-beta,G,1,0,")
        fh.write("x" * (50 << 20))
        fh.write("\n")
    # the command's own peak (and its children's), not this worker's largest child ever (a browser, say)
    done = run_measured(["rescore", work / "results", "--overrides", big], cwd=work)
    assert done.code == 2 and "big.csv" in done.err and "MB" in done.err, done.err
    assert done.rss_mb < 400, done  # well under 400 MB


# --------------------------------------------------------------------------------- folders by kind


def test_out_inside_the_input_is_refused_in_one_line(work, capsys):
    subs = work / "subs"
    refused(capsys, ["batch", str(subs), "--out", str(subs / "team-beta"), "--quiet"], "inside ROOT")
    refused(capsys, ["batch", str(subs), "--out", str(subs / "results"), "--quiet"], "inside ROOT")
    refused(capsys, ["score", str(subs / "team-beta"), "--out", str(subs / "team-beta" / "out")],
            "inside the submission")
    assert sorted(p.name for p in (subs / "team-beta").iterdir()) == ["genuine_sga", "truth_adversarial_sga"]


def test_score_out_into_a_batch_folder_is_refused(work, capsys):
    results = work / "results"
    ledger = (results / "records.csv").read_bytes()
    refused(capsys, ["score", str(work / "subs" / "team-beta"), "--out", str(results)], "batch's results folder")
    assert (results / "records.csv").read_bytes() == ledger


def test_a_stray_run_settings_file_does_not_hide_a_submission(work, capsys):
    shutil.copy(work / "results" / "run_settings.json", work / "subs" / "team-beta" / "run_settings.json")
    capsys.readouterr()
    assert main(["batch", str(work / "subs"), "--out", str(work / "again"), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["submissions"] == 3 and "skipped" not in err
    assert "team-beta" in board(capsys, work / "again")


def test_a_results_folder_inside_the_root_is_skipped_with_a_note(work, capsys):
    inside = work / "subs" / "results"
    shutil.copytree(work / "results", inside)
    capsys.readouterr()
    assert main(["batch", str(work / "subs"), "--out", str(work / "elsewhere"), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["submissions"] == 3
    assert f"skipped {inside}: a results folder, not a submission" in err


# ------------------------------------------------------------------------ folders from before the database


def test_old_folder_is_imported_on_first_open_with_one_line(legacy, finished, capsys):
    results = legacy / "results"
    got, err = said(capsys, ["leaderboard", str(results)])
    assert got == board(capsys, finished / "results")
    assert err.count("\n") == 1 and "imported" in err and "results.sqlite" in err
    assert (results / "results.sqlite").is_file()
    got, err = said(capsys, ["leaderboard", str(results)])
    assert err == ""


def test_old_folder_whose_settings_disagree_is_refused_naming_them(legacy, capsys):
    results = legacy / "results"
    (results / "run_settings.json").write_text(json.dumps({"assessor": "llm", "model": "m"}))
    line = refused(capsys, ["leaderboard", str(results)], "run_settings.json", "result.json")
    assert "heuristic" in line and "llm" in line and not (results / "results.sqlite").exists()
    (results / "run_settings.json").unlink()  # recovered from each result.json
    llm = ["--assessor", "llm", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    capsys.readouterr()
    assert main(["batch", str(legacy / "subs"), "--out", str(results), "--quiet", *llm]) == 2
    err = capsys.readouterr().err
    assert "imported" in err and "--assessor llm (recorded heuristic)" in err and "--new-settings" in err
    assert not (results / "cache.sqlite").exists()  # refused before any request or cache


def test_old_folder_a_cut_row_is_read_from_the_other_ledger_and_refused_when_neither_has_it(legacy, finished,
                                                                                           capsys):
    results = legacy / "results"
    before = board(capsys, finished / "results")
    twin = legacy / "twin"
    shutil.copytree(results, twin)
    data = (results / "records.csv").read_bytes()
    row_start = data.index(b"\nteam-beta,") + 1
    (results / "records.csv").write_bytes(data[: row_start + 20])  # cut in the middle of a row
    got, err = said(capsys, ["leaderboard", str(results)])
    assert got == before
    assert "cut short" in err and "read records.jsonl instead" in err and len(err.splitlines()) == 1
    (twin / "records.csv").write_bytes(data[: row_start + 20])
    jsonl = (twin / "records.jsonl").read_text().splitlines()
    (twin / "records.jsonl").write_text("\n".join(jsonl[:50] + [jsonl[50][:40]] + jsonl[51:]) + "\n")
    refused(capsys, ["rescore", str(twin)], "records.csv", "row ", "cut short")


def test_old_folder_files_telling_two_stories_are_refused_naming_them(legacy, capsys):
    results = legacy / "results"
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
    assert not (results / "results.sqlite").exists()


def test_old_folder_with_a_hand_edited_summary_is_refused_naming_it(legacy, capsys):
    results, summary = legacy / "results", legacy / "results" / "summary.json"
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


def test_old_folder_of_a_batch_that_did_not_finish_is_imported_as_one_and_finished_by_a_rerun(legacy, finished,
                                                                                              capsys):
    results = legacy / "results"
    before = board(capsys, finished / "results")
    (results / "scores.csv").unlink()  # as a killed or full-disk run left it: the ledger without its end
    capsys.readouterr()  # imported as the interrupted run it is (one line says so), and nothing half shown:
    assert main(["leaderboard", str(results)]) == 2
    imported, error = capsys.readouterr().err.splitlines()
    assert "imported" in imported and "did not finish" in imported and "no complete run" in error
    for command in ("leaderboard", "rescore"):
        refused(capsys, [command, str(results)], "no complete run", "interrupted after 3 of", "rerun batch")
    capsys.readouterr()
    assert main(["batch", str(legacy / "subs"), "--out", str(results), "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["resumed"] == 3  # nothing scored again
    got, err = said(capsys, ["leaderboard", str(results)])
    assert got == before and err == ""


@pytest.mark.parametrize("name", ["failures.jsonl", "overrides.jsonl"])
def test_old_folder_with_an_unreadable_jsonl_line_is_refused_with_its_number(work, capsys, name):
    results = work / "results"
    (work / "appeal.csv").write_text(APPEAL)
    assert main(["rescore", str(results), "--overrides", str(work / "appeal.csv"), "--json"]) == 0
    for db in ("results.sqlite", "results.sqlite-wal", "results.sqlite-shm", "exports.json"):
        (results / db).unlink(missing_ok=True)  # as a version before the database left it
    good = json.dumps({"submission_id": "team-x", "source": "x", "error": "bad"}) if name == "failures.jsonl" else \
        (results / name).read_text().splitlines()[0]
    (results / name).write_text(f"{good}\n{good[: len(good) // 2]}\n")
    refused(capsys, ["leaderboard", str(results)], name, "line 2")


# ---------------------------------------------------------------------------------------------- storage


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


def test_the_leaderboards_are_exports_of_the_committed_state_and_follow_an_appeal(work, capsys):
    """``leaderboard.csv`` and ``leaderboard.html`` in the folder are exports like the ledger: what
    ``leaderboard RESULTS --csv/--html`` writes, marked in exports.json, written again after an appeal."""
    results = work / "results"
    capsys.readouterr()
    assert main(["leaderboard", str(results), "--csv", str(work / "board.csv"), "--html", str(work / "board.html")]) == 0
    assert (results / "leaderboard.csv").read_text() == (work / "board.csv").read_text()
    assert "team-beta" in (results / "leaderboard.html").read_text()
    assert {"leaderboard.csv", "leaderboard.html"} <= set(json.loads((results / "exports.json").read_text())["files"])
    (work / "appeal.csv").write_text(APPEAL)
    assert main(["rescore", str(results), "--overrides", str(work / "appeal.csv"), "--json"]) == 0
    rows = {r["submission_id"]: r for r in csv.DictReader((results / "leaderboard.csv").open())}
    assert float(rows["team-beta"]["S"]) == board(capsys, results)["team-beta"]
    assert float(rows["team-beta"]["C_G"]) < 1.0  # the appeal made G's question 1 wrong: the export follows
