"""Hostile OpenAI-compatible endpoints (the loopback server's misbehaving modes) against the CLI as
typed: ``check``, ``score`` and ``batch`` with ``--assessor llm --base-url ...`` and the key in the
environment. For each: the exit code, one line on stderr naming the endpoint's fault (exit 2) or a
normal result, the run ending well within the server's own limits (a hang guard, not a timing
claim), the child's peak RSS under a bound, and the key, and every 10-character piece of it, in no
file under the test folder (output, cache, home) and not on stdout or stderr.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import one_error_line
from test_hostile import RUN_REPORTING_PEAK

from checklist_eval.testing import misbehave
from checklist_eval.testing import MockServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "submissions"
TIMEOUT_S = 2  # --timeout of every run: the total deadline per request
ATTEMPTS = 2  # --max-attempts
CONCURRENCY = 8
# A dripping server would hold each request misbehave.STREAM_LIMIT_S (120 s); bounded runs end far sooner.
HANG_BOUND_S = 60
# Replies in flight are capped at 4 MiB each: CONCURRENCY x 4 MiB plus the interpreter, well under
# what a huge body buffered whole would take (misbehave.STREAM_LIMIT_BYTES = 512 MiB per request).
RSS_BOUND_MB = 300


class Run:
    def __init__(self, code: int, out: str, err: str, wall_s: float, rss_mb: float):
        self.code, self.out, self.err, self.wall_s, self.rss_mb = code, out, err, wall_s, rss_mb

    def __repr__(self) -> str:
        return f"Run(code={self.code}, {self.wall_s:.1f} s, {self.rss_mb:.0f} MB, err={self.err[-500:]!r})"


def key_pieces(key: str, size: int = 10) -> list[str]:
    return [key] + [key[i:i + size] for i in range(len(key) - size + 1)]


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in root.rglob("*")}


def files_holding(root: Path, needles: list[str]) -> list[str]:
    raw = [n.encode() for n in needles]
    hits = []
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            data = p.read_bytes()
            hits += [f"{p.relative_to(root)}: {n.decode()}" for n in raw if n in data]
    return hits


@pytest.fixture()
def hostile(tmp_path):
    """(run, key): run(mode, command, *args) runs the CLI against a server misbehaving in ``mode``."""
    key = f"sk-test-SECRET-{secrets.token_urlsafe(24)}"
    home, tmpdir = tmp_path / "home", tmp_path / "tmpdir"
    home.mkdir()
    tmpdir.mkdir()
    papers = tmp_path / "inputs" / "root"
    papers.mkdir(parents=True)
    shutil.copytree(FIXTURES / "team-alpha", papers / "team-alpha")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHECKLIST_EVAL_"))}
    env.update(OPENAI_API_KEY=key, HOME=str(home), TMPDIR=str(tmpdir), COLUMNS="200",
               CHECKLIST_EVAL_CACHE=str(tmp_path / "cache" / "cache.sqlite"), CE_PEAK_FILE=str(tmp_path / ".peak"),
               CHECKLIST_EVAL_TEX_CACHE=os.environ.get("CHECKLIST_EVAL_TEX_CACHE", ""))

    def run(mode: str, command: str, *args: str) -> Run:
        with MockServer(misbehave=mode) as server:
            llm = ["--assessor", "llm", "--model", "gpt-4o-mini", "--base-url", server.base_url,
                   "--timeout", str(TIMEOUT_S), "--max-attempts", str(ATTEMPTS), "--concurrency", str(CONCURRENCY)]
            target = {"check": papers / "team-alpha" / "genuine_sga.tex", "score": papers / "team-alpha",
                      "batch": papers}[command]
            before = snapshot(tmp_path / "inputs")
            started = time.monotonic()
            proc = subprocess.run([sys.executable, "-c", RUN_REPORTING_PEAK, command, str(target), *args, *llm],
                                  capture_output=True, env=env, cwd=tmp_path, timeout=300)
            wall = time.monotonic() - started
        peak = tmp_path / ".peak"
        rss = int(peak.read_text()) / 1024 if peak.exists() else float("inf")
        peak.unlink(missing_ok=True)
        result = Run(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"),
                     wall, rss)
        assert "Traceback" not in result.err and "internal error" not in result.err, result
        assert result.wall_s < HANG_BOUND_S, result
        assert result.rss_mb < RSS_BOUND_MB, result
        for piece in key_pieces(key):
            assert piece not in result.out and piece not in result.err, (piece, result)
        assert files_holding(tmp_path, key_pieces(key)) == [], result
        assert snapshot(tmp_path / "inputs") == before, "the submissions changed"
        assert not any(tmpdir.iterdir()), f"left in TMPDIR: {list(tmpdir.iterdir())[:5]}"
        return result

    return run


# Modes the run cannot survive: the one line says what the endpoint did.
FATAL = {
    "echo-key-error": ["HTTP 400", "Authorization: Bearer ***"],
    "drip": ["APITimeoutError", f"within the {TIMEOUT_S} s deadline"],
    "huge-announce": ["2147483648 bytes announced", "4 MiB cap"],
    "huge-stream": ["larger than the 4 MiB cap"],
    "gzip-bomb": ["larger than the 4 MiB cap"],
    "json-array": ["MalformedResponse", "JSON list"],
    "usage-text": ["MalformedResponse", "usage"],
    "no-choices": ["MalformedResponse", "no choices"],
}


def test_every_mode_is_covered():
    # lone-surrogate and huge-usage (runs that finish) are in test_hostile_doors.py, rate-window and
    # transient-500 in test_endpoint_guarantees.py and test_endpoint_lessons.py
    assert set(FATAL) | {"echo-key-review", "logprob-overflow", "lone-surrogate", "huge-usage",
                         "rate-window", "transient-500",
                         "no-listing"} == set(misbehave.MODES)


def test_the_mock_server_command_offers_every_batch_fault():
    from checklist_eval.cli.mock_server import BATCH_FAULTS
    from checklist_eval.testing.batches import FAULTS

    assert BATCH_FAULTS == FAULTS


@pytest.mark.parametrize("mode", sorted(FATAL))
def test_check_reports_the_endpoint_fault_in_one_line(hostile, tmp_path, mode):
    run = hostile(mode, "check", "--out", str(tmp_path / "out"))
    one_error_line(run, *FATAL[mode])
    assert not (tmp_path / "out" / "check.json").exists()


def test_key_echoed_into_reviews_is_redacted_everywhere(hostile, tmp_path):
    run = hostile("echo-key-review", "check", "--out", str(tmp_path / "out"), "--json")
    assert run.code == 0, run
    result = json.loads(run.out)
    reviews = [it["review"] for it in result["items"] if "Authorization" in it.get("review", "")]
    assert reviews and all("Bearer ***" in r for r in reviews)
    assert (tmp_path / "out" / "check.json").is_file()
    assert (tmp_path / "cache" / "cache.sqlite").stat().st_size > 0
    # A rerun reads the verdicts back from the cache: still redacted (checked by the fixture).
    again = hostile("echo-key-review", "check", "--out", str(tmp_path / "out2"), "--json")
    assert again.code == 0 and json.loads(again.out)["items"] == result["items"]


def test_overflowing_logprobs_fall_back_to_stated_confidence(hostile):
    run = hostile("logprob-overflow", "check", "--json")
    assert run.code == 0, run
    items = json.loads(run.out)["items"]
    assert items and all(0.0 <= it["p_correct"] <= 1.0 for it in items)


@pytest.mark.parametrize("mode", ["echo-key-error", "echo-key-review", "huge-stream", "json-array"])
def test_score_and_batch(hostile, tmp_path, mode):
    score = hostile(mode, "score", "--out", str(tmp_path / "score"))
    batch = hostile(mode, "batch", "--out", str(tmp_path / "batch"), "--json")
    assert batch.code == (4 if mode in FATAL else 0), batch  # 4: the batch ran, a submission failed
    failures = [json.loads(ln) for ln in (tmp_path / "batch" / "failures.jsonl").read_text().splitlines()]
    if mode in FATAL:
        one_error_line(score, *FATAL[mode])
        assert [f["submission_id"] for f in failures] == ["team-alpha"]
        assert "\n" not in failures[0]["error"] and FATAL[mode][0].lower() in failures[0]["error"].lower()
    else:
        assert score.code == 0, score
        assert failures == [] and (tmp_path / "batch" / "records.csv").is_file()
        assert "Bearer ***" in (tmp_path / "batch" / "records.csv").read_text()
        assert "Bearer ***" in (tmp_path / "score" / "report.html").read_text()


def test_redaction_rule_on_pieces():
    """The rule the README states: the key and every piece of 8+ characters go, shorter pieces stay."""
    import subprocess as sp

    key = "sk-proj-Q7vX2mKp9LwZ4rTn8YcB"
    code = (
        "from checklist_eval import redact\n"
        f"redact.register({key!r})\n"
        f"text = 'a {key} b {key[5:13]} c {key[-9:]} d {key[10:17]} e Bearer{key}'\n"
        "print(redact.redact(text))\n"
    )
    out = sp.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == f"a *** b *** c *** d {key[10:17]} e Bearer***"
