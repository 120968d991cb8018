"""What an assessor reports besides its verdicts: a failed call as an ``AssessorError`` whose facts are
attributes (endpoint, model, HTTP status, attempts, usage; never the key), what it has to say about a
paper returned to the caller (the paper stays as parsed), and the hidden-text note decided by the
warning's kind. LLM calls go through the real ``openai`` client over real HTTP to the loopback server."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

from cli_runner import run_cli
import pytest
from helpers import assess_and_close, mock_llm

from checklist_eval.assessors.base import HIDDEN_TEXT_NOTE
from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor
from checklist_eval.errors import AssessorError
from checklist_eval.models import ParseWarning, WarningKind
from checklist_eval.testing import FaultConfig, MockServer, sample_paper

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-test-TYPEDERR-0123456789abcdef"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("CE_TEST_KEY", KEY)


def llm(server: MockServer, **config):
    return mock_llm(server, **{"concurrency": 1, **config})


def endpoint_of(server: MockServer) -> str:
    return server.base_url.split("://", 1)[1].rstrip("/")


def test_a_refused_key_names_endpoint_model_status_and_attempts_and_never_the_key():
    with MockServer(require_api_key="sk-the-right-one-xyz") as server:
        a = llm(server)
        with pytest.raises(AssessorError) as info:
            assess_and_close(a, sample_paper(n_questions=4))
        sent = server.stats.requests  # refused before it counts as a chat request
    err = info.value
    assert (err.endpoint, err.model, err.status) == (endpoint_of(server), "gpt-4o-mini", 401)
    # One request told us the key is refused; none was sent after it, and that one is in the ledger.
    assert err.attempts == 1 == sent and err.usage is not None and err.usage.calls == 1
    assert a.usage.calls == sent
    facts = [str(err), repr(err), str(err.endpoint), str(err.model), json.dumps(err.usage.model_dump())]
    assert not any(KEY in fact or "TYPEDERR" in fact for fact in facts)


def test_a_call_failing_on_every_attempt_carries_the_attempts_and_the_ledger_counts_them():
    with MockServer(faults=FaultConfig(rate=1.0, kinds=("500",))) as server:
        a = llm(server, max_attempts=3)
        with pytest.raises(AssessorError) as info:
            assess_and_close(a, sample_paper(n_questions=1))
        sent = server.stats.chat_requests
    err = info.value
    assert err.status == 500 and err.attempts == 3 == sent
    assert err.usage is not None and err.usage.calls == 3 == a.usage.calls


def test_unusable_replies_fail_with_what_they_cost():
    with MockServer(faults=FaultConfig(rate=1.0, kinds=("truncated",))) as server:
        a = llm(server, reask=1)
        with pytest.raises(AssessorError, match="no usable verdict") as info:
            assess_and_close(a, sample_paper(n_questions=1))
        stats = server.stats
    err = info.value
    assert err.status is None and err.endpoint == endpoint_of(server) and err.model == "gpt-4o-mini"
    assert err.attempts == 2 == stats.chat_requests
    assert err.usage is not None and err.usage.completion_tokens == stats.completion_tokens > 0
    assert err.usage == a.usage


def test_the_llm_assessor_leaves_the_paper_as_parsed():
    paper = sample_paper(n_questions=3, body_chars=60_000)
    parsed = paper.model_dump()
    with MockServer(context_tokens=4000) as server:
        a = llm(server, context_tokens=4000, max_tokens=500, concurrency=3)
        assess_and_close(a, paper)
    assert paper.model_dump() == parsed
    # What it has to say about the paper is returned, typed, for the caller to show.
    [cut] = a.paper_warnings(paper)
    assert cut.kind is WarningKind.TRUNCATED and cut.location == paper.source and "context budget" in str(cut)


def test_check_still_reports_a_paper_cut_to_the_context_budget(tmp_path, fixtures_dir):
    paper = tmp_path / "paper"
    shutil.copytree(fixtures_dir / "papers" / "genuine", paper)
    intro = paper / "sections" / "intro.tex"
    filler = "We measure calibration of checklist assessment on held-out papers with error bars. "
    intro.write_text(intro.read_text() + "\n\n" + filler * 500 + "\n")  # ~42k characters: over gpt-4's 8k tokens
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["OPENAI_API_KEY"] = KEY
    with MockServer() as server:
        proc = run_cli("check", str(paper), "--json", "--quiet", "--assessor", "llm", "--model", "gpt-4", "--base-url", server.base_url, "--no-cache", cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    warnings = json.loads(proc.stdout)["warnings"]
    assert len([w for w in warnings if "exceeds the model's context budget" in w["message"]]) == 1


def _hidden_note(warnings: list[ParseWarning]) -> bool:
    paper = sample_paper(n_questions=1)
    paper.warnings = warnings
    [verdict] = asyncio.run(HeuristicAssessor().assess_paper(paper))
    return HIDDEN_TEXT_NOTE in verdict.review


def test_the_heuristic_notes_hidden_text_by_the_warnings_kind_not_its_words():
    typed = ParseWarning(kind=WarningKind.HIDDEN_TEXT, message="invisible run on page 2", location="page 2")
    worded = ParseWarning(kind=WarningKind.INPUT_SKIPPED, message="sections/hidden.tex: file not found; skipped")
    assert _hidden_note([typed])  # no "hidden" in its words, and no hidden_text runs: the kind decides
    assert not _hidden_note([worded])
    assert not _hidden_note([])
