"""The results folder under attack, through the CLI as typed: two runs on one ``--out``, a run killed
while holding it, submission names that make the same safe name, a user's own temp files, formula
text bound for spreadsheets, an unusable ``--out``, a full disk, rich markup in paths, and ledgers
with absurd figures. Each ends in a complete result or one line on stderr with exit 2.
"""

from __future__ import annotations

import csv
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.tables import TRIGGERS
from checklist_eval.challenge.results.lock import LOCK_NAME
from checklist_eval.testing import MockServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "submissions"
FORMULA = "=cmd|' /C calc'!A0"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHECKLIST_EVAL_"))}
    (tmp_path / "home").mkdir(exist_ok=True)
    env.update(HOME=str(tmp_path / "home"), COLUMNS="200", OPENAI_API_KEY="sk-test-integrity",
               CHECKLIST_EVAL_CACHE=str(tmp_path / "home" / "cache.sqlite"))
    return env


def cli(tmp_path: Path, *args: str, preexec=None) -> CliRun | subprocess.CompletedProcess:
    """The command in this process; in a process of its own when ``preexec`` sets a limit on it."""
    if preexec is None:
        proc = run_cli(*args, env=_env(tmp_path), cwd=tmp_path)
    else:
        proc = subprocess.run([sys.executable, "-m", "checklist_eval", *map(str, args)], capture_output=True,
                              text=True, env=_env(tmp_path), cwd=tmp_path, timeout=300, preexec_fn=preexec)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return proc


def error_line(proc: CliRun | subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("checklist-eval: error:"), proc.stderr
    for w in words:
        assert w.lower() in lines[0].lower(), (w, lines[0])
    return lines[0]


def make_root(tmp_path: Path, names: list[str], justification: str | None = None) -> Path:
    root = tmp_path / "root"
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copytree(FIXTURES / "team-alpha", root / name)
        if justification is not None:
            tex = root / name / "genuine_sga.tex"
            text = tex.read_text("utf-8")
            marker = "Justification: The abstract claims"
            tex.write_text(text.replace(marker, f"Justification: {justification} The abstract claims", 1), "utf-8")
    return root


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# ------------------------------------------------------------------------------------------- the lock


def test_second_concurrent_batch_refuses_and_the_first_completes(tmp_path):
    root = make_root(tmp_path, ["team-a", "team-b", "team-c"])
    out = tmp_path / "out"
    with MockServer(latency=0.3) as server:
        llm = ["--assessor", "llm", "--model", "m", "--base-url", server.base_url, "--concurrency", "2", "--no-cache"]
        first = subprocess.Popen([sys.executable, "-m", "checklist_eval", "batch", str(root), "--out", str(out),
                                  "--json", *llm], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=_env(tmp_path), cwd=tmp_path)
        try:
            lock = out / LOCK_NAME
            deadline = time.monotonic() + 60
            while not (lock.is_file() and lock.read_text().strip()) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert lock.read_text().strip() == str(first.pid)
            second = cli(tmp_path, "batch", root, "--out", out, "--json", *llm)
            first_out, first_err = first.communicate(timeout=240)
        finally:
            first.kill()
            first.wait()
    error_line(second, str(out), "another checklist-eval run")
    assert first.returncode == 0, first_err
    assert json.loads(first_out)["scored"] == 3
    assert {r["submission_id"] for r in read_csv(out / "records.csv")} == {"team-a", "team-b", "team-c"}


def test_lock_of_a_killed_run_does_not_block(tmp_path):
    root = make_root(tmp_path, ["team-a", "team-b"])
    out = tmp_path / "out"
    with MockServer(latency=5.0) as server:  # slow enough to be killed mid-run, holding the lock
        killed = subprocess.Popen([sys.executable, "-m", "checklist_eval", "batch", str(root), "--out", str(out),
                                   "--json", "--assessor", "llm", "--model", "m", "--base-url", server.base_url,
                                   "--no-cache"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env=_env(tmp_path), cwd=tmp_path)
        deadline = time.monotonic() + 60
        while not ((out / LOCK_NAME).is_file() and (out / LOCK_NAME).read_text().strip()) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        killed.send_signal(signal.SIGKILL)
        killed.wait()
    assert (out / LOCK_NAME).is_file()  # left behind, and harmless
    # the killed run recorded its (LLM) settings: a heuristic rerun says so explicitly
    rerun = cli(tmp_path, "batch", root, "--out", out, "--json", "--new-settings")
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["scored"] == 2


# ----------------------------------------------------------------------------------------------- ids


def test_colliding_names_get_distinct_result_folders(tmp_path):
    names = ["team a", "team_a", "Team_A", "team  a", "-team"]
    root = make_root(tmp_path, names)
    shutil.make_archive(str(root / "team_a"), "zip", root / "team_a")  # team_a.zip too
    out = tmp_path / "out"
    proc = cli(tmp_path, "batch", root, "--out", out, "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    ids = [s["submission_id"] for s in summary["scores"]]
    assert summary["failed"] == 0 and len(ids) == 6 and len({i.casefold() for i in ids}) == 6, ids
    assert "team_a" not in ids or ids.count("team_a") == 1
    assert "-team" in ids  # a name that collides with nothing keeps its plain id
    folders = sorted(p.name for p in (out / "submissions").iterdir())
    assert sorted(folders) == sorted(ids)
    board = cli(tmp_path, "leaderboard", out, "--json", "--csv", tmp_path / "board.csv")
    assert board.returncode == 0, board.stderr
    assert sorted(r["submission_id"] for r in json.loads(board.stdout)) == sorted(ids)
    # A rerun finds every result under the same id: nothing is scored again.
    again = cli(tmp_path, "batch", root, "--out", out, "--json")
    assert json.loads(again.stdout)["resumed"] == 6


# ------------------------------------------------------------------------------------------ temp files


def test_only_our_own_temp_files_are_cleaned(tmp_path):
    root = make_root(tmp_path, ["team-a"])
    out = tmp_path / "out"
    (out / "submissions" / "team-a").mkdir(parents=True)
    mine = [out / ".notes.tmp", out / "submissions" / "team-a" / ".draft.txt.tmp", out / "keep.tmp"]
    for p in mine:
        p.write_text("the user's own")
    ours = [out / ".scores.csv.a1b2c3d4.checklist-eval.tmp", out / "submissions" / "team-a" / ".result.json.x1.tmp"]
    for p in ours:
        p.write_text("{half")
    proc = cli(tmp_path, "batch", root, "--out", out, "--json")
    assert proc.returncode == 0, proc.stderr
    assert all(p.read_text() == "the user's own" for p in mine)
    assert not any(p.exists() for p in ours)


# ---------------------------------------------------------------------------------------- CSV formulas


def test_formula_cells_are_neutralised_and_read_back_intact(tmp_path):
    root = make_root(tmp_path, ["-team", "@team", "team"], justification=FORMULA)
    out = tmp_path / "out"
    proc = cli(tmp_path, "batch", root, "--out", out, "--json")
    assert proc.returncode == 0, proc.stderr
    board = cli(tmp_path, "leaderboard", out, "--csv", tmp_path / "board.csv")
    assert board.returncode == 0, board.stderr
    csvs = [out / "records.csv", out / "scores.csv", tmp_path / "board.csv"]
    for path in csvs:
        rows = read_csv(path)
        assert rows, path
        for row in rows:
            for column, cell in row.items():
                if cell.startswith(TRIGGERS):
                    float(cell)  # only a number may begin like a formula
    records = read_csv(out / "records.csv")
    assert any(r["justification"].startswith("'" + FORMULA) for r in records)
    # The JSONL ledger holds the text as written; reading the CSV back gives the same text.
    jsonl = [json.loads(ln) for ln in (out / "records.jsonl").read_text().splitlines()]
    assert "'-team" in {r["submission_id"] for r in records}
    assert any(r["justification"].startswith(FORMULA) for r in jsonl)
    rescored_csv = json.loads(cli(tmp_path, "rescore", out / "records.csv", "--json").stdout)["submissions"]
    rescored_jsonl = json.loads(cli(tmp_path, "rescore", out / "records.jsonl", "--json").stdout)["submissions"]
    assert rescored_csv == rescored_jsonl
    assert sorted(s["submission_id"] for s in rescored_csv) == sorted({r["submission_id"] for r in jsonl})
    assert "-team" in {r["submission_id"] for r in jsonl}


# ---------------------------------------------------------------------------------------- unusable out


@pytest.mark.parametrize("command", ["batch", "score", "check"])
def test_out_that_is_a_file(tmp_path, command):
    root = make_root(tmp_path, ["team-a"])
    target = {"batch": root, "score": root / "team-a", "check": root / "team-a" / "genuine_sga.tex"}[command]
    existing = tmp_path / "results.txt"
    existing.write_text("not a folder")
    error_line(cli(tmp_path, command, target, "--out", existing), str(existing), "not a folder")
    assert existing.read_text() == "not a folder"


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture()
def small_mount(tmp_path):
    """mount(options) -> a tmpfs folder (root only: permissions do not stop root, a read-only or full
    file system does); unmounted at the end."""
    mounted = []

    def mount(options: str) -> Path:
        where = tmp_path / f"mnt{len(mounted)}"
        where.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
        mounted.append(where)
        return where

    if not _as_root():
        pytest.skip("needs root to mount a small file system")
    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_read_only_out(tmp_path, small_mount):
    root = make_root(tmp_path, ["team-a"])
    read_only = small_mount("ro,size=1m")
    for command, target in (("batch", root), ("score", root / "team-a")):
        error_line(cli(tmp_path, command, target, "--out", read_only / "results"), "read-only")
    error_line(cli(tmp_path, "batch", root, "--out", read_only), str(read_only), "read-only")


def test_full_disk(tmp_path, small_mount):
    root = make_root(tmp_path, ["team-a", "team-b"])
    tiny = small_mount("size=48k")
    line = error_line(cli(tmp_path, "batch", root, "--out", tiny / "results"), "no space left")
    assert str(tiny) in line


def _file_size_limit() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (2_000, 2_000))  # a report is larger: EFBIG, like a full disk
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


@pytest.mark.parametrize("command", ["batch", "score", "check"])
def test_write_refused_by_a_size_limit(tmp_path, command):
    root = make_root(tmp_path, ["team-a"])
    target = {"batch": root, "score": root / "team-a", "check": root / "team-a" / "genuine_sga.tex"}[command]
    error_line(cli(tmp_path, command, target, "--out", tmp_path / "out", preexec=_file_size_limit), "too large")
    assert not [p for p in (tmp_path / "out").rglob("*.tmp")]


# --------------------------------------------------------------------------------------- rich markup


def test_markup_characters_in_paths_print_literally(tmp_path):
    names = ["team[bold]x", "[red]team", "team[/x]"[:5] + "]"]
    base = tmp_path / "team["
    base.mkdir()
    root = make_root(base / "x]", names)  # the root path itself holds "team[/x]"
    out = base / "x]" / "out[/b]"
    batch = cli(tmp_path, "batch", root, "--out", out)
    assert batch.returncode == 0, batch.stderr
    assert "team[/x]" in batch.stdout and "out[/b]" in batch.stdout
    for args in (("score", root / "[red]team", "--out", out / "one"), ("validate", root / "[red]team"),
                 ("check", root / "team[bold]x" / "genuine_sga.tex", "--out", out / "c[/i]"),
                 ("leaderboard", out), ("rescore", out / "records.csv")):
        proc = cli(tmp_path, *args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "[/" not in proc.stdout or "[/x]" in proc.stdout or "[/b]" in proc.stdout or "[/i]" in proc.stdout


# -------------------------------------------------------------------------------------- absurd ledgers


@pytest.fixture(scope="module")
def one_batch(tmp_path_factory) -> Path:
    """The results folder of one batch, shared by the ledger edits below (each edits its own copy)."""
    tmp = tmp_path_factory.mktemp("one-batch")
    out = tmp / "out"
    assert cli(tmp, "batch", make_root(tmp, ["team-a"]), "--out", out, "--json").returncode == 0
    return out


@pytest.mark.parametrize("column,value", [("calls", "1e400"), ("prompt_tokens", "1e300"), ("cost_usd", "nan"),
                                          ("cost_usd", "inf"), ("p_correct", "1e400")])
def test_absurd_ledger_figures(tmp_path, one_batch, column, value):
    out = one_batch
    rows = read_csv(out / "records.csv")
    rows[0][column] = value
    bad = tmp_path / "bad.csv"
    with open(bad, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    jsonl = tmp_path / "bad.jsonl"
    lines = (out / "records.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first[column] = float(value)
    jsonl.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")  # json writes Infinity / NaN / 1e400
    for path in (bad, jsonl):
        for command in ("rescore", "leaderboard"):
            error_line(cli(tmp_path, command, path), str(path), column)


def test_cell_rule_round_trips():
    from checklist_eval.tables import neutralise, restore

    cells = [FORMULA, "-3", "-0.5e3", "+1", "-x", "@SUM(A1)", "\tx", "\rx", "'=x", "''=x", "'tis", "plain", "",
             "-", "-inf", "'-3", "'"]
    for cell in cells:
        written = neutralise(cell)
        assert restore(written) == cell, cell
        assert not written.startswith(TRIGGERS) or float(written) == float(cell)


def test_hostile_result_file_in_out_is_set_aside_and_exported_again(tmp_path):
    """result.json is an export of results.sqlite: a hostile one is not read (no submission is redone for
    it, no figure of it reaches the summary) and the next run writes it again from the database."""
    root = make_root(tmp_path, ["team-a", "team-b"])
    out = tmp_path / "out"
    assert cli(tmp_path, "batch", root, "--out", out, "--json").returncode == 0
    result = out / "submissions" / "team-a" / "result.json"
    text = result.read_text()
    assert '"cost_usd": 0.0' in text
    result.write_text(text.replace('"cost_usd": 0.0', '"cost_usd": Infinity').replace('"calls": 0', '"calls": 1e400'))
    again = cli(tmp_path, "batch", root, "--out", out, "--json")
    assert again.returncode == 0, again.stderr
    counts = json.loads(again.stdout)
    assert (counts["scored"], counts["resumed"]) == (0, 2)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["usage_total"]["cost_usd"] == 0.0
    rewritten = json.loads(result.read_text())
    assert rewritten.pop("run") == 2 and rewritten == {k: v for k, v in json.loads(text).items() if k != "run"}
