"""Cost before spending, the budget cap, provenance, the call log and the progress display, through
the CLI as typed against the loopback OpenAI-compatible server (real openai client, real HTTP)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.testing import MockServer

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-test-SECRET-4f2a9c"
ANSWERED = 110  # answered questions of fixtures/submissions: 6 papers x 16 + team-gamma's 14


def cli(*args: str, key: str | None = KEY) -> CliRun:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    if key:
        env["OPENAI_API_KEY"] = key
    return run_cli(*args, cwd=ROOT, env=env)


def llm(server: MockServer, model: str = "gpt-4o-mini") -> list[str]:
    return ["--assessor", "llm", "--model", model, "--base-url", server.base_url]


@pytest.fixture()
def subs(submissions_copy):
    return submissions_copy


def test_batch_dry_run_plans_every_paper_and_sends_nothing(subs, tmp_path):
    out = tmp_path / "results"
    with MockServer() as server:
        proc = cli("batch", str(subs), "--out", str(out), "--dry-run", "--json", *llm(server))
        text = cli("batch", str(subs), "--out", str(out), "--dry-run", *llm(server))
        capped = cli("batch", str(subs), "--out", str(out), "--dry-run", *llm(server), "--max-cost", "0.001")
        assert server.stats.requests == 0
        assert "passes --max-cost $0.0010" in " ".join(capped.stdout.split())
        assert not out.exists()
        real = cli("batch", str(subs), "--out", str(out), "--quiet", *llm(server))
        sent = server.stats.chat_requests
    assert proc.returncode == text.returncode == real.returncode == 0
    plan = json.loads(proc.stdout)
    # Identical requests (team-gamma's G is team-beta's G) are planned, and sent, once.
    assert plan["calls"] == sent < ANSWERED and plan["sent"] == 0 and plan["priced"] is True
    assert len(plan["papers"]) == 7 and {p["paper"].split("/")[0] for p in plan["papers"]} == {
        "team-alpha", "team-beta", "team-gamma"}
    for key in ("prompt_tokens", "cached_tokens", "completion_tokens"):
        assert plan[key] == sum(p[key] for p in plan["papers"]) > 0
    assert 0 < plan["cached_tokens"] < plan["prompt_tokens"]
    assert plan["cost_usd"] > 0
    assert plan["cost_usd"] == pytest.approx(sum(p["cost_usd"] for p in plan["papers"]), abs=1e-5)
    assert "team-alpha/G" in text.stdout and "total" in text.stdout and f"${plan['cost_usd']:.4f}" in text.stdout


def test_a_model_without_a_price_says_price_unknown_never_zero(subs):
    with MockServer() as server:
        proc = cli("score", str(subs / "team-alpha"), "--dry-run", *llm(server, "my-local-llama"))
        js = cli("check", str(subs / "team-gamma" / "genuine_sga.tex"), "--dry-run", "--json",
                 *llm(server, "my-local-llama"))
        assert server.stats.requests == 0
    assert proc.returncode == 0 and "price unknown" in proc.stdout and "$0" not in proc.stdout
    assert json.loads(js.stdout)["cost_usd"] is None
    # A real run with an unpriced model reports its cost as unknown too.
    with MockServer() as server:
        run = cli("check", str(subs / "team-gamma" / "genuine_sga.tex"), "--no-cache", *llm(server, "my-local-llama"))
    assert run.returncode == 0 and "price unknown" in run.stdout and "$0.0000" not in run.stdout


GPT_4O_MINI = {"input": 0.15, "cached_input": 0.075, "output": 0.60}  # USD per 1M tokens (prices.json)


def _logged_calls(cache: Path) -> list[tuple[int, str, dict]]:
    """(id, cache key, usage) of every reply received (not the rows of verdicts reused from them)."""
    db = sqlite3.connect(cache)
    try:
        rows = db.execute("SELECT id, key, response_json FROM calls WHERE outcome != 'reused' ORDER BY id").fetchall()
    finally:
        db.close()
    return [(i, k, json.loads(r)["usage"]) for i, k, r in rows]


def _cost(usages: list[dict]) -> float:
    total = 0.0
    for u in usages:
        cached = u.get("prompt_tokens_details", {}).get("cached_tokens", 0)
        total += ((u["prompt_tokens"] - cached) * GPT_4O_MINI["input"] + cached * GPT_4O_MINI["cached_input"]
                  + u["completion_tokens"] * GPT_4O_MINI["output"]) / 1e6
    return total


def test_max_cost_stops_before_the_cap_and_resumes_without_repeating_a_call(subs, tmp_path):
    out = tmp_path / "results"
    cap = 0.02
    with MockServer() as server:
        first = cli("batch", str(subs), "--out", str(out), "--quiet", *llm(server), "--max-cost", str(cap))
        n1 = server.stats.chat_requests
        assert first.returncode == 3, first.stderr
        message = first.stderr.strip().splitlines()[-1]
        assert "--max-cost" in message and "rerun" in message and "Traceback" not in first.stderr
        run1 = _logged_calls(out / "cache.sqlite")
        assert 0 < n1 < ANSWERED and len(run1) == n1  # every reply received is kept
        assert 0 < _cost([u for _, _, u in run1]) <= cap
        # The plan of the resumed run leaves out what the cache already answers.
        left = json.loads(cli("batch", str(subs), "--out", str(out), "--dry-run", "--json", *llm(server)).stdout)
        assert left["already_cached"] == len({k for _, k, _ in run1}) > 0 and left["calls"] > 0
        second = cli("batch", str(subs), "--out", str(out), "--quiet", "--json", *llm(server), "--max-cost", "5")
        assert second.returncode == 0, second.stderr
        n2 = server.stats.chat_requests - n1
    run2 = _logged_calls(out / "cache.sqlite")[len(run1):]
    assert len(run2) == n2 == left["calls"]
    assert not {k for _, k, _ in run1} & {k for _, k, _ in run2}  # nothing answered in run 1 is asked again
    done = json.loads(second.stdout)
    assert done["scored"] + done["resumed"] == 3 and done["failed"] == 0


def test_max_cost_plans_by_submission_so_money_spent_buys_finished_submissions(subs, tmp_path):
    """A cap that covers one submission's estimate, not two: the run starts what fits, finishes every
    submission it started, and sends nothing for the others (exit 3); a higher cap finishes the rest."""
    out = tmp_path / "results"
    with MockServer() as server:
        plan = json.loads(cli("batch", str(subs), "--out", str(tmp_path / "plan"), "--dry-run", "--json",
                              *llm(server)).stdout)
        alpha = sum(p["cost_usd"] for p in plan["papers"] if p["paper"].startswith("team-alpha/"))
        cap = round(alpha * 1.2, 6)  # room for team-alpha's estimate, not for team-beta's as well
        first = cli("batch", str(subs), "--out", str(out), "--quiet", "--json", *llm(server), "--max-cost", str(cap))
        assert first.returncode == 3, first.stderr
        assert "not started" in first.stderr and "Traceback" not in first.stderr
        summary = json.loads((out / "summary.json").read_text())
        finished = [json.loads(p.read_text()) for p in (out / "submissions").glob("*/result.json")]
        assert summary["scored"] == len(finished) >= 1 and summary["failed"] == 0
        calls = _logged_calls(out / "cache.sqlite")
        # every call made belongs to a finished submission: nothing was spent on a half-done one
        assert len(calls) == server.stats.chat_requests == sum(r["usage"]["calls"] for r in finished) > 0
        spent = _cost([u for _, _, u in calls])
        assert spent == pytest.approx(sum(r["usage"]["cost_usd"] for r in finished), rel=1e-9)
        assert spent <= cap
        second = cli("batch", str(subs), "--out", str(out), "--quiet", "--json", *llm(server), "--max-cost", "5")
        assert second.returncode == 0, second.stderr
        done = json.loads(second.stdout)
        assert done["resumed"] == len(finished) and done["scored"] + done["resumed"] == 3
    again = _logged_calls(out / "cache.sqlite")[len(calls):]
    assert not {k for _, k, _ in calls} & {k for _, k, _ in again}  # nothing asked twice


def test_records_carry_provenance_and_logs_show_the_exchange_without_the_key(subs, tmp_path):
    out = tmp_path / "results"
    with MockServer() as server:
        proc = cli("batch", str(subs), "--out", str(out), "--quiet", *llm(server), "--temperature", "0.3",
                   "--seed", "7")
        port = server.port
    assert proc.returncode == 0, proc.stderr
    recs = pd.read_csv(out / "records.csv", dtype=str, keep_default_na=False)
    answered = recs[recs["answer"].isin(["Yes", "No", "NA"])]
    assert list(recs.columns)[-10:] == ["endpoint", "output_strategy", "temperature", "seed", "location",
                                        "state", "passages", "context_share", "reader", "appeal"]
    assert set(answered["context_share"]) == {"1.0"}  # every paper fits gpt-4o-mini's window whole
    assert set(answered["endpoint"]) == {f"127.0.0.1:{port}/v1"}
    assert set(answered["output_strategy"]) == {"json_schema"}
    assert set(answered["temperature"]) == {"0.3"} and set(answered["seed"]) == {"7"}
    assert set(answered["assessor"]) == {"llm"} and set(answered["prompt_version"]) == {"assess-v1"}
    report = (out / "submissions" / "team-alpha" / "report.html").read_text()
    assert "assessor llm" in report and "model gpt-4o-mini" in report and "prompt assess-v1" in report

    shown = cli("logs", "--cache", str(out), "--submission", "team-alpha", "--question", "7")
    assert shown.returncode == 0
    calls = json.loads(cli("logs", "--cache", str(out), "--submission", "team-alpha", "--question", "7",
                           "--json", "--full-prompt").stdout)
    assert sorted(c["role"] for c in calls) == ["A", "G", "T"]
    for c in calls:  # G's question 7 is team-beta's G's too: asked once, its verdict reused
        assert c["params"]["temperature"] == 0.3 and c["params"]["seed"] == 7
        assert c["outcome"] == "verdict" or c["outcome"].startswith("reused: the verdict of call ")
        reply = json.loads(c["response"]["choices"][0]["message"]["content"])
        assert reply["correct"] in (True, False)
        assert "Checklist question 7" in c["question"] and "<paper" in c["prompt_messages"][1]["content"]
        assert reply["review"].splitlines()[0] in shown.stdout
    a_row = answered[(answered["submission_id"] == "team-alpha") & (answered["question_id"] == "7")]
    assert len(a_row) == 3
    assert "## Question asked" in shown.stdout and "## Reply" in shown.stdout and "team-alpha / A" in shown.stdout
    # The key reached the server (it was sent) but no file and no output.
    for path in out.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in shown.stdout and KEY not in proc.stderr


def test_a_structured_output_fallback_is_announced_once_and_recorded(subs, tmp_path):
    with MockServer(supports_json_schema=False) as server:
        proc = cli("score", str(subs / "team-alpha"), "--out", str(tmp_path / "o"), "--no-cache", *llm(server))
    assert proc.returncode == 0, proc.stderr
    announced = [ln for ln in proc.stderr.splitlines() if "json_schema refused" in ln]
    assert len(announced) == 1 and "json_object" in announced[0]
    recs = pd.read_csv(tmp_path / "o" / "records.csv", dtype=str, keep_default_na=False)
    assert set(recs.loc[recs["answer"].isin(["Yes", "No", "NA"]), "output_strategy"]) == {"json_object"}


def _run_on_a_terminal(args: list[str], columns: int = 200) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal; return its exit code and what the terminal saw."""
    import pty
    import select

    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"} | {"OPENAI_API_KEY": KEY,
                                                                             "COLUMNS": str(columns)}
    proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return proc.wait(timeout=60), seen.decode("utf-8", "replace")


def test_progress_shows_on_a_terminal_and_not_in_a_pipe(subs):
    with MockServer(latency=0.05) as server:
        code, seen = _run_on_a_terminal(["check", str(subs / "team-gamma" / "genuine_sga.tex"), "--no-cache",
                                         *llm(server)])
        piped = cli("check", str(subs / "team-gamma" / "genuine_sga.tex"), "--no-cache", *llm(server))
    assert code == 0
    for field in ("questions 14", "calls 14", "retries 0", "tokens", "$0.0"):
        assert field in seen, (field, seen[-500:])
    assert "14/14" in seen
    assert piped.returncode == 0 and "retries" not in piped.stderr


def test_heuristic_batch_shows_progress_on_a_terminal(subs, tmp_path):
    code, seen = _run_on_a_terminal(["batch", str(subs), "--out", str(tmp_path / "r")])
    assert code == 0, seen
    assert "submissions" in seen and "3/3" in seen, seen


def test_batch_progress_counts_submissions_on_a_terminal(subs, tmp_path):
    with MockServer() as server:
        code, seen = _run_on_a_terminal(["batch", str(subs), "--out", str(tmp_path / "r"), *llm(server)])
    assert code == 0
    assert "submissions" in seen and "3/3" in seen and "calls " in seen and "questions " in seen


def _terminal_lines(seen: str) -> list[str]:
    """What stays on screen, line by line: escape sequences dropped, each redraw a line of its own."""
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen)
    return [ln for ln in re.split(r"[\r\n]+", plain) if ln.strip()]


def test_batch_progress_keeps_the_count_and_the_time_left_on_80_columns(subs, tmp_path):
    with MockServer(latency=0.05) as server:
        code, seen = _run_on_a_terminal(["batch", str(subs), "--out", str(tmp_path / "r"), *llm(server)], columns=80)
    assert code == 0, seen
    progress = [ln for ln in _terminal_lines(seen) if " submissions" in ln and "eta " in ln]
    assert progress, seen[-800:]
    assert all(len(ln.rstrip()) <= 80 for ln in progress), [ln for ln in progress if len(ln.rstrip()) > 80]
    last = progress[-1]
    assert last.startswith("3/3 submissions") and "eta 0:00:00" in last and "$0.0" in last, last
    assert "━" not in last  # the bar is the first thing a narrow terminal loses


def test_progress_line_drops_the_bar_first_then_the_least_useful_counters():
    from rich.console import Console

    from checklist_eval.challenge.progress import LineParts, render_line

    parts = LineParts(done=12, total=50, unit="submissions", eta=192.0, elapsed=61.0,
                      spend=["$1.2345", "calls 540", "retries 3", "tokens 1,234,567+45,678 (900,000 cached)",
                             "questions 540"])
    shown = {}
    for width in (40, 80, 200):
        console = Console(width=width, record=True, color_system=None)
        console.print(render_line(parts, console.width))
        shown[width] = console.export_text().rstrip("\n")
    assert shown[200].startswith("12/50 submissions  ━") and "eta 0:03:12" in shown[200]
    assert "questions 540" in shown[200] and "0:01:01" in shown[200]
    # the token counts do not fit in 80: the shorter counters after them still do
    assert shown[80] == "12/50 submissions  eta 0:03:12  $1.2345  calls 540  retries 3  questions 540"
    assert shown[40] == "12/50 submissions  eta 0:03:12  $1.2345"


def test_batch_not_on_a_terminal_prints_one_plain_line_per_submission(subs, tmp_path):
    proc = cli("batch", str(subs), "--out", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("[")]
    assert {ln.split("] ")[1].split(":")[0] for ln in lines} == {"team-alpha", "team-beta", "team-gamma"}
    assert [ln.split("]")[0] for ln in lines] == ["[1/3", "[2/3", "[3/3"]
    assert all(re.search(r": scored; eta \d:\d\d:\d\d$", ln) for ln in lines) and "\x1b" not in proc.stderr
