"""A run's memory does not grow with its submissions: ``batch`` writes each submission's records to the
ledger as it finishes (a killed run leaves them there and resumes), and ``rescore`` and the leaderboard
read the ledger one submission at a time. The bound itself is measured by ``scripts/bench_memory.py``,
run here with small sizes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path

import pytest

from checklist_eval.challenge.results.folder import build_leaderboard, scored_submissions
from checklist_eval.challenge.records import Record
from checklist_eval.challenge.results.ledger import Ledger, read_records, write_records
from checklist_eval.challenge.scoring import score_records
from checklist_eval.cli import main
from checklist_eval.errors import InputError
from checklist_eval.models import Answer

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import bench_memory  # noqa: E402
import synth  # noqa: E402

HANG_GUARD_S = 300


def _batch(root: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "checklist_eval", "batch", str(root), "--out", str(out), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _ledger_ids(path: Path) -> list[str]:
    """Submission ids of the whole lines of a JSONL ledger, in file order, one per run of rows."""
    ids: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.endswith("\n"):
            sid = json.loads(line)["submission_id"]
            if not ids or ids[-1] != sid:
                ids.append(sid)
    return ids


def _without_time(path: Path) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k != "scored_at"} for line in path.open(encoding="utf-8")]


def _committed(out: Path) -> list[str]:
    """The submissions whose records results.sqlite holds (each committed whole, with its scores)."""
    import sqlite3

    if not (out / "results.sqlite").is_file():
        return []
    db = sqlite3.connect(out / "results.sqlite", timeout=30)
    try:
        return [r[0] for r in db.execute("SELECT s.submission_id FROM submissions s WHERE (SELECT count(*) FROM "
                                         "records r WHERE r.run_id = s.run_id AND r.submission_id = s.submission_id) "
                                         "> 0 AND EXISTS (SELECT 1 FROM scores c WHERE c.run_id = s.run_id AND "
                                         "c.submission_id = s.submission_id)")]
    except sqlite3.OperationalError:
        return []  # the tables are being created
    finally:
        db.close()


KILLED_RUN_SUBMISSIONS = 12  # killed at its first commit, with two parse workers: 1 to 3 committed by then


def test_batch_ledger_grows_as_submissions_finish_and_a_killed_run_resumes(tmp_path):
    n = KILLED_RUN_SUBMISSIONS
    root, out, ref = tmp_path / "subs", tmp_path / "out", tmp_path / "ref"
    synth.build_submissions(root, n)
    ledger = out / "records.jsonl"
    run = _batch(root, out)
    deadline = time.monotonic() + HANG_GUARD_S
    while run.poll() is None and time.monotonic() < deadline:
        # The database holds finished submissions while the run is still going: nothing waits for the end.
        if _committed(out):
            run.send_signal(signal.SIGKILL)
            break
        time.sleep(0.005)
    run.communicate(timeout=HANG_GUARD_S)
    assert run.returncode == -signal.SIGKILL, "the run ended before its database held any submission"
    finished = _committed(out)
    assert finished and len(finished) < n
    assert len(finished) == len(set(finished))  # each submission committed once, records with its scores

    resumed = _batch(root, out)
    stdout, stderr = resumed.communicate(timeout=HANG_GUARD_S)
    assert resumed.returncode == 0, stderr.decode()
    counts = json.loads(stdout)
    assert counts["resumed"] == len(finished) and counts["scored"] == n - len(finished)

    whole = _batch(root, ref)
    whole.communicate(timeout=HANG_GUARD_S)
    assert whole.returncode == 0
    # The resumed ledger is the uninterrupted run's: every submission, in submission order.
    assert _ledger_ids(ledger) == sorted(p.name for p in root.iterdir())
    assert _without_time(ledger) == _without_time(ref / "records.jsonl")
    for name in ("records.csv", "scores.csv"):
        assert (out / name).read_text().count("\n") == (ref / name).read_text().count("\n")
    assert (out / "scores.csv").read_text() == (ref / "scores.csv").read_text()


def _ledger(n: int) -> list[Record]:
    """``n`` GAT submissions of four questions each, every answer real."""
    out = []
    for i in range(n):
        for role in ("G", "A", "T"):
            for q in range(4):
                out.append(Record(submission_id=f"s{i:03d}", role=role, question_id=str(q), answer=Answer.YES,
                                  correct=(i + q) % 3 != 0, case="GAT", review="r" * 200))
    return out


def _forgetting_summary():
    """A ``summarize`` that fails when the records of a submission summarized before are still alive."""
    earlier: list[weakref.ref] = []

    def summarize(score, recs):
        # Reference counting frees a dropped submission at once (records hold no cycles): no gc.collect(),
        # which costs seconds per call in a test process with a large heap.
        assert {r.submission_id for r in recs} == {score.submission_id} and len(recs) == 12
        assert not [ref for ref in earlier if ref() is not None], "records of a scored submission are kept"
        earlier.extend(weakref.ref(r) for r in recs)
        return score

    return summarize


def test_rescore_and_leaderboard_hold_one_submission_at_a_time(tmp_path):
    records = _ledger(30)
    write_records(records, tmp_path / "records.csv", tmp_path / "records.jsonl")
    for name in ("records.csv", "records.jsonl"):
        scores = scored_submissions(tmp_path / name, None, _forgetting_summary())
        assert scores == score_records(records)
    board = build_leaderboard(tmp_path)
    assert [r.submission_id for r in board if r.rank == 1] and len(board) == 30


def test_a_ledger_sorted_by_another_column_scores_the_same(tmp_path, capsys):
    records = _ledger(5)
    write_records(records, tmp_path / "grouped.csv")
    write_records(sorted(records, key=lambda r: (r.role, r.question_id)), tmp_path / "sorted.csv")
    assert not Ledger(tmp_path / "sorted.csv").rows_together and Ledger(tmp_path / "grouped.csv").rows_together
    printed = []
    for name in ("grouped.csv", "sorted.csv"):
        assert main(["rescore", str(tmp_path / name), "--json"]) == 0
        printed.append(json.loads(capsys.readouterr().out))
    assert printed[0] == printed[1] and len(printed[0]["submissions"]) == 5
    assert scored_submissions(tmp_path / "sorted.csv", None, lambda s, _: s) == score_records(records)
    # A duplicate is found whether the rows come together or not.
    for rows in (records + records[-1:], records[:1] + records[13:] + records[:1]):
        write_records(rows, tmp_path / "dup.csv")
        with pytest.raises(InputError, match="dup.csv: row .*: duplicate row for s"):
            read_records(tmp_path / "dup.csv")


def test_streamed_reading_keeps_the_order_of_problems(tmp_path):
    """The file's own problems come before a row's, a row's before an override's, an override's before
    a submission that cannot be scored: as when the whole file was read first."""
    bad = tmp_path / "r.jsonl"
    bad.write_text('{"submission_id": "s", "role": "X", "question_id": "1", "answer": "Yes", "correct": 1}\nnot json\n')
    with pytest.raises(InputError, match="line 2: not valid JSON"):
        read_records(bad)
    bad.write_bytes(b'not json\n{"a": "\xe9"}\n')
    with pytest.raises(InputError, match="not UTF-8"):
        read_records(bad)
    ragged = tmp_path / "r.csv"
    ragged.write_text("submission_id,role,question_id,answer,correct\ns,X,1,Yes,1\ns,G,2,Yes,1,extra\n")
    with pytest.raises(InputError, match="not a readable CSV"):
        read_records(ragged)
    only_t = tmp_path / "t.csv"
    only_t.write_text("submission_id,role,question_id,answer,correct\ns,T,1,TODO,0\nz,G,1,Yes,1\n")
    ov = tmp_path / "ov.csv"
    ov.write_text("submission_id,role,question_id,correct\ns,T,1,1\nnope,G,1,0\n")
    with pytest.raises(InputError, match=r"ov.csv: row 3: no record for nope/G/1"):
        scored_submissions(only_t, ov, lambda s, _: s)
    ov.write_text("submission_id,role,question_id,correct\nz,G,1,0\ns,T,1,1\n")
    with pytest.raises(InputError, match=r"ov.csv: row 3: s/T/1 is TODO or missing"):
        scored_submissions(only_t, ov, lambda s, _: s)
    ov.write_text("submission_id,role,question_id,correct\nz,G,1,0\n")
    with pytest.raises(InputError, match=r"t.csv: submission s: no G"):
        scored_submissions(only_t, ov, lambda s, _: s)


def test_memory_benchmark_runs_and_stays_flat(tmp_path, capsys):
    """The benchmark at small sizes: the CLI as typed, the whole process tree sampled. What the run holds is
    the peak of the command's own processes (the CLI, fork server, parse workers): 40 more submissions held
    whole would cost about 12 MB (0.29 MB each before records were streamed); streamed, 3.4 MB for 70 more.
    The whole tree's peak is not compared: it also holds the TeX runs of the papers being compiled at the
    sampled instant (about 55 MB each, at most one per worker whatever N), caught together or not by chance
    (206 -> 247 MB from 10 to 80 in CI with the command's own processes flat)."""
    assert bench_memory.main(["-n", "8", "-n", "48", "--rescore", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    small, large = sorted((r for r in rows if r["command"] == "batch"), key=lambda r: r["submissions"])
    assert small["exit_code"] == large["exit_code"] == 0
    assert small["peak_processes"] >= 2  # the CLI and its parse workers are all counted
    assert large["peak_command_mb"] - small["peak_command_mb"] < 8, rows
    # An appeal on the run (rescore RESULTS --overrides) holds only the submissions it names.
    appeals = sorted((r for r in rows if r["command"] == "rescore --overrides"), key=lambda r: r["submissions"])
    assert [r["exit_code"] for r in appeals] == [0, 0]
    assert appeals[1]["peak_command_mb"] - appeals[0]["peak_command_mb"] < 8, rows
