"""Lessons about an endpoint are earned, kept with their evidence, shown and forgotten (issue 45), through the
CLI as typed against the loopback server over real HTTP, with a real SQLite cache."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run_measured

from checklist_eval.testing import MockServer

PAPER = Path(__file__).resolve().parents[1] / "fixtures" / "submissions" / "team-alpha" / "genuine_sga.tex"
KEY_ENV = {"OPENAI_API_KEY": "sk-test-lessons-0123456789"}


def cli(tmp_path: Path, *args):
    return run_measured(list(args), cwd=tmp_path, env_extra=KEY_ENV, hang_guard_s=300)


def check(server: MockServer, tmp_path: Path, cache: Path):
    return cli(tmp_path, "check", PAPER, "--assessor", "llm", "--model", server.model, "--base-url", server.base_url,
               "--out", tmp_path / "out", "--cache", cache)


def endpoints(tmp_path: Path, cache: Path) -> list[dict]:
    run = cli(tmp_path, "endpoints", "--cache", cache, "--json")
    assert run.code == 0, run
    return json.loads(run.out)


def test_a_single_500_naming_a_parameter_teaches_nothing(tmp_path):
    # Before: one HTTP 500 mentioning 'temperature' was learned, stored and restored by every later run:
    # temperature never sent again while the records said 0.
    cache = tmp_path / "cache.sqlite"
    with MockServer(misbehave="transient-500") as server:
        first = check(server, tmp_path, cache)
        assert first.code == 0, first
        assert server.stats.by_status.get(500) == 1
        known = endpoints(tmp_path, cache)
        assert [(k["model"], k["lessons"]) for k in known] == [(server.model, [])]
        assert known[0]["answered"] is not None and known[0]["cached_verdicts"] > 0  # the clean answer is kept
        server.reset_stats()
        again = check(server, tmp_path, cache)
        assert again.code == 0, again
        assert server.stats.chat_requests == 0  # every verdict found under the key it was stored with
    assert "temperature" not in first.err


def test_a_refusal_is_shown_with_its_evidence_and_forgotten(tmp_path):
    cache = tmp_path / "cache.sqlite"
    with MockServer(profile="openai-reasoning") as server:
        run = check(server, tmp_path, cache)
        assert run.code == 0, run
        refused = {k: v for k, v in server.stats.by_status.items() if k >= 400}
    [known] = endpoints(tmp_path, cache)
    assert known["endpoint"].startswith("127.0.0.1:") and known["model"] == server.model
    lessons = known["lessons"]
    assert len(lessons) == sum(refused.values()) >= 1, (lessons, refused)  # one lesson per refusal, no more
    for lesson in lessons:
        assert lesson["status"] == 400 and lesson["said"] and lesson["when"] > 0, lesson
    assert any("temperature" in lesson["lesson"] for lesson in lessons)
    shown = cli(tmp_path, "endpoints", "--cache", cache)
    assert "temperature" in shown.out and "HTTP 400" in shown.out, shown
    forgot = cli(tmp_path, "endpoints", "forget", server.base_url, "--cache", cache)
    assert forgot.code == 0 and "forgot 1 " in forgot.out, forgot
    [after] = endpoints(tmp_path, cache)
    assert after["lessons"] == [] and after["cached_verdicts"] == known["cached_verdicts"]  # answers stay
