"""Guarantees of the HTTP stage that broke once (issue 45), each through the CLI as typed against the
loopback server over real HTTP: a rate limit the server asks to wait out is waited out, ``--timeout`` bounds
every request (the engine probes included), a reply announcing a huge body is one line and exit 2 wherever it
comes, and a base URL carrying credentials is a key for the Codabench bundle."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from helpers import one_error_line, run_measured

from checklist_eval.assessors.config import LLMSettings
from checklist_eval.testing import MockServer
from checklist_eval.testing.misbehave import RATE_WINDOW_S

PAPER = Path(__file__).resolve().parents[1] / "fixtures" / "submissions" / "team-alpha" / "genuine_sga.tex"
KEY_ENV = {"OPENAI_API_KEY": "sk-test-guarantees-0123456789"}
# A hang guard, not a timing claim: a run bounded by --timeout ends far inside it, an unbounded probe
# (the 120 s of the one-token question a proxy is asked) does not.
HANG_GUARD_S = 90


def check(server: MockServer, tmp_path: Path, *flags: str):
    return run_measured(["check", PAPER, "--assessor", "llm", "--model", "gpt-4o-mini", "--base-url",
                         server.base_url, "--out", tmp_path / "out", "--no-cache", *flags],
                        cwd=tmp_path, env_extra=KEY_ENV, hang_guard_s=300)


def test_a_rate_limit_with_retry_after_is_waited_out_not_reported(tmp_path):
    # Before: every 429 counted as a failed attempt, so six one-second waits ended the run inside the
    # server's window ("answered HTTP 429").
    with MockServer(misbehave="rate-window") as server:
        run = check(server, tmp_path)
        stats = server.stats
    assert run.code == 0, run
    assert stats.by_status.get(429, 0) >= 1 and stats.by_status.get(200, 0) >= 1, stats.by_status
    report = json.loads((tmp_path / "out" / "check.json").read_text())
    answered = [i for i in report["items"] if i["answer"] in ("Yes", "No", "NA")]
    assert answered and all(isinstance(i["correct"], bool) for i in answered)
    assert report["usage"]["calls"] >= len(answered) + stats.by_status[429]  # each 429 was a call, then waited
    # The premise that makes this test tell the fix from the bug, held against the product's own default
    # (not a literal): the window outlasts every default attempt waiting its one-second Retry-After.
    assert RATE_WINDOW_S > LLMSettings.default("max_attempts") * 1.0


@pytest.mark.parametrize("profile", ["openai-chat", "litellm-llama.cpp-server"])
def test_timeout_bounds_every_request_to_a_dripping_server(tmp_path, profile):
    # Before: behind a proxy's model list, the one-token question that tells the engine apart took the
    # proxy's 120 s whatever --timeout said.
    with MockServer(misbehave="drip", profile=profile) as server:
        run = check(server, tmp_path, "--timeout", "5", "--max-attempts", "2")
    one_error_line(run, "within the 5 s deadline")
    assert run.wall_s < HANG_GUARD_S, run
    assert not (tmp_path / "out" / "check.json").exists()


@pytest.mark.parametrize("profile", ["openai-chat", "litellm-llama.cpp-server"])
def test_a_reply_announcing_2_gb_is_one_line_and_exit_2(tmp_path, profile):
    # Before, behind a proxy: "internal error: ResponseTooLarge" (exit 1) from the probe's question.
    with MockServer(misbehave="huge-announce", profile=profile) as server:
        run = check(server, tmp_path, "--timeout", "5")
    one_error_line(run, "2147483648 bytes announced", "4 MiB cap")
    assert run.rss_mb < 300, run


SECRET_URLS = ("https://organizer:hunter2-correct-horse@proxy.example.org/v1",
               "https://proxy.example.org/v1?api-key=k3y-in-the-query-string-0123")


@pytest.mark.parametrize("url", SECRET_URLS)
def test_a_base_url_with_credentials_needs_key_is_capped(tmp_path, url):
    out = tmp_path / "bundle.zip"
    run = run_measured(["codabench", "export", "--out", out, "--model", "gpt-4o-mini", "--base-url", url],
                       cwd=tmp_path)
    line = one_error_line(run, "--base-url carries credentials", "--key-is-capped")
    assert "hunter2" not in line and "k3y-in" not in line
    assert not out.exists()
    run = run_measured(["codabench", "export", "--out", out, "--model", "gpt-4o-mini", "--base-url", url,
                        "--key-is-capped", "--spend-cap", "20"], cwd=tmp_path)
    assert run.code == 0, run
    with zipfile.ZipFile(out) as zf:
        assert zf.read("dev_phase/reference_data/endpoint_url").decode().strip() == url


def test_a_key_that_may_chat_but_not_list_models_is_not_stopped(tmp_path):
    # Before: the engine probe's 403 on /v1/models stopped the check as a refused key would.
    with MockServer(misbehave="no-listing") as server:
        run = check(server, tmp_path)
        stats = server.stats
    assert run.code == 0, run
    assert stats.by_status.get(200, 0) >= 1 and "403" not in run.err


def test_a_prompt_the_engine_cut_without_a_word_gives_no_verdict(tmp_path):
    # Ollama cuts a prompt longer than its context (2,048 or 4,096 tokens by default) and answers anyway:
    # before, the model's verdict on a paper it had not seen was kept and reported.
    # Its own API says the window (test_engine_identity.py); here a proxy in front passes only /v1 on.
    with MockServer(profile="ollama", context_tokens=2048) as server:
        server.ollama.hidden = True
        run = check(server, tmp_path)
    one_error_line(run, "cut the prompt", "OLLAMA_CONTEXT_LENGTH", "num_ctx")
    assert not (tmp_path / "out" / "check.json").exists()
