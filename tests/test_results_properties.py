"""Properties of a results folder's readers: the CSV and JSON files of a finished, appealed folder are
exports of its results.sqlite, so a random truncation, duplication, edit or removal of any one of them
never changes a score a reader reports: every reader gives the untouched folder's scores, exit 0.

The folder is built once (a batch of the fixtures plus a submission that fails, then an appeal); each
example damages one file in place and puts its bytes back. Most examples read through the in-process
``ResultsFolder`` (what leaderboard, rescore and serve --results call); a few go through the CLI as typed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from cli_runner import CliRun, run_cli
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checklist_eval.challenge.results.folder import ResultsFolder
from checklist_eval.challenge.results.leaderboard import leaderboard_row
from checklist_eval.cli import main
from checklist_eval.errors import InputError

REPO = Path(__file__).resolve().parent.parent
SCORES = ("submission_id", "case", "C_G", "C_A", "C_T", "R", "S")
FILES = ["records.csv", "records.jsonl", "run_settings.json", "overrides.jsonl", "failures.jsonl", "scores.csv",
         "summary.json", "exports.json", "submissions/team-alpha/result.json", "submissions/team-beta/result.json",
         "submissions/team-beta/report.html"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("props")
    root = tmp / "subs"
    shutil.copytree(REPO / "fixtures" / "submissions", root)
    (root / "team-broken").mkdir()
    (root / "team-broken" / "genuine_x.tex").write_text("no checklist here\n")
    out = tmp / "results"
    assert main(["batch", str(root), "--out", str(out), "--quiet", "--json"]) == 4  # one failed
    appeal = tmp / "appeal.csv"
    appeal.write_text("submission_id,role,question_id,correct\nteam-alpha,G,1,0\nteam-beta,A,2,0\n")
    assert main(["rescore", str(out), "--overrides", str(appeal), "--json"]) == 0
    for name in FILES:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    return out


def scores(folder: Path) -> dict[str, tuple]:
    rows = ResultsFolder.open(folder).scored(leaderboard_row)
    return {r.submission_id: tuple(getattr(r, k) for k in SCORES) for r in rows}


@pytest.fixture(scope="module")
def untouched(folder) -> dict[str, tuple]:
    return scores(folder)


@st.composite
def damage(draw) -> tuple[str, str, int, int, bytes]:
    """(file, kind, position, other position, bytes) of one change to one file."""
    name = draw(st.sampled_from(FILES))
    kind = draw(st.sampled_from(["truncate", "duplicate line", "drop line", "edit", "edit digit", "remove"]))
    return name, kind, draw(st.integers(0, 10**9)), draw(st.integers(0, 10**9)), draw(st.binary(min_size=1, max_size=3))


def damaged(data: bytes, kind: str, at: int, other: int, new: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    if kind == "truncate":
        return data[:at % len(data)]
    if kind == "duplicate line":
        i = at % len(lines)
        return b"".join(lines[:i + 1] + [lines[i]] + lines[i + 1:])
    if kind == "drop line":
        i = at % len(lines)
        return b"".join(lines[:i] + lines[i + 1:])
    if kind == "edit digit":  # the edits that keep a file well-formed: one figure or flag changed
        digits = [i for i, b in enumerate(data) if 48 <= b <= 57]
        if digits:
            i = digits[at % len(digits)]
            return data[:i] + bytes([48 + (data[i] - 48 + 1 + other % 9) % 10]) + data[i + 1:]
    i = at % len(data)
    return data[:i] + new + data[i + 1 + other % 3:]


def check_one(folder: Path, untouched: dict, change: tuple, read) -> None:
    name, kind, at, other, new = change
    path = folder / name
    original = path.read_bytes()
    try:
        if kind == "remove":
            path.unlink()
        else:
            path.write_bytes(damaged(original, kind, at, other, new))
        code, answer = read(folder)
    finally:
        path.write_bytes(original)
    assert (code, answer) == (0, untouched), change


def read_in_process(folder: Path) -> tuple[int, object]:
    try:
        return 0, scores(folder)
    except InputError as err:
        return 2, str(err)


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(change=damage())
def test_one_damaged_export_never_changes_a_score(folder, untouched, change):
    check_one(folder, untouched, change, read_in_process)


def _cli(*args: object) -> CliRun:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return run_cli(*map(str, args), env=env)


def read_by_cli(folder: Path) -> tuple[int, object]:
    """leaderboard --json and rescore --json, which must agree: the same scores, or the same refusal."""
    answers = []
    for command in ("leaderboard", "rescore"):
        done = _cli(command, folder, "--json")
        if done.returncode != 0:
            lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
            assert len(lines) == 1 and lines[0].startswith("checklist-eval: error:"), done.stderr
            answers.append((done.returncode, lines[0]))
            continue
        data = json.loads(done.stdout)
        rows = data if command == "leaderboard" else data["submissions"]
        answers.append((0, {r["submission_id"]: tuple(r[k] for k in SCORES) for r in rows}))
    assert answers[0][0] == answers[1][0], answers
    return answers[0]


@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(change=damage())
def test_the_commands_as_typed_agree_with_the_folder(folder, untouched, change):
    check_one(folder, untouched, change, read_by_cli)
