"""The loopback OpenAI-compatible server, driven by the real ``openai`` client."""

from __future__ import annotations

import json
import subprocess
import sys
import httpx2
import openai
import pytest

from checklist_eval.testing import FaultConfig, MockServer, mock_verdict, tokenize


def client(server: MockServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-x", max_retries=0, timeout=5.0)


def ask(answer: str, justification: str, paper: str = "1 Introduction\n2 Method\nTable 1: results") -> list[dict]:
    return [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": f"<paper>\n{paper}\n</paper>"},
        {"role": "user", "content": f"Question: q\nAuthor's answer: {answer}\nAuthor's justification: {justification}\n"},
    ]


def test_verdict_rules():
    assert mock_verdict(ask("TODO", "x"))[0] is False
    assert mock_verdict(ask("Yes", "(empty)"))[0] is False
    assert mock_verdict(ask("Yes", "See Section 2 and Table 1."))[0] is True
    correct, p, review, _ = mock_verdict(ask("Yes", "See Appendix C."))
    assert correct is False and p < 0.25 and "Appendix C" in review
    assert mock_verdict(ask("No", "no reason")) == mock_verdict(ask("No", "no reason"))
    assert "".join(tokenize("Hello, wörld  1234!")) == "Hello, wörld  1234!"


def test_models_chat_logprobs_and_prefix_stats():
    paper = "1 Introduction\n" + "A long shared paper body sentence. " * 200
    with MockServer() as server:
        c = client(server)
        assert [m.id for m in c.models.list().data] == ["mock-model"]
        first = None
        for j in range(4):
            r = c.chat.completions.create(
                model="m", messages=ask("Yes", f"Section 1, point {j}.", paper),
                response_format={"type": "json_schema", "json_schema": {"name": "v", "schema": {}}},
                logprobs=True, top_logprobs=2)
            first = first or r
            body = json.loads(r.choices[0].message.content)
            assert body["correct"] is True
            tokens = r.choices[0].logprobs.content
            assert "".join(t.token for t in tokens) == r.choices[0].message.content
            verdict = [t for t in tokens if t.token.strip() == "true"]
            assert len(verdict) == 1 and {a.token.strip() for a in verdict[0].top_logprobs} == {"true", "false"}
        assert first.usage.prompt_tokens_details.cached_tokens == 0
        assert r.usage.prompt_tokens_details.cached_tokens > 0.9 * r.usage.prompt_tokens
        stats = server.stats
        assert stats.chat_requests == 4 and stats.by_status == {200: 4} and stats.probes == 1  # the /models
        assert stats.prefix_share > 0.95 and 0.7 < stats.prefix_reuse < stats.prefix_share
        server.reset_stats()
        assert server.stats.requests == 0
        plain = c.chat.completions.create(model="m", messages=ask("Yes", "Section 1."))
        assert plain.choices[0].message.content.splitlines()[-2] == "Verdict: correct"
        assert plain.choices[0].logprobs is None


def _statuses(seed: int, n: int) -> list[int | str]:
    faults = FaultConfig(rate=0.5, kinds=("429", "500", "malformed", "truncated"), retry_after=0.01)
    out: list[int | str] = []
    with MockServer(faults=faults, seed=seed) as server:
        c = client(server)
        for _ in range(n):
            try:
                r = c.chat.completions.create(model="m", messages=ask("Yes", "Section 1."))
                out.append(r.choices[0].finish_reason)
            except openai.APIStatusError as err:
                out.append(err.status_code)
                if err.status_code == 429:
                    assert err.response.headers["retry-after-ms"] == "10"
            except ValueError:
                out.append("malformed")
        assert sum(server.stats.by_fault.values()) == sum(1 for s in out if s != "stop")
    return out


def test_faults_are_reproducible_from_the_seed():
    a, b = _statuses(0, 12), _statuses(0, 12)
    assert a == b
    # Exactly the faults the seed draws for requests 1..12, each seen by the client as its kind.
    probe = MockServer(faults=FaultConfig(rate=0.5, kinds=("429", "500", "malformed", "truncated")), seed=0)
    seen_as = {"429": 429, "500": 500, "malformed": "malformed", "truncated": "length", None: "stop"}
    assert a == [seen_as[probe._fault_for(n)] for n in range(1, 13)]
    assert {429, 500, "malformed", "length", "stop"} <= set(a)  # seed 0 meets every kind in 12 requests


def test_timeout_fault_and_rpm_limit_and_api_key():
    # held a minute: the client's deadline ends the request, however late a busy machine runs its timer
    with MockServer(faults=FaultConfig(rate=1.0, kinds=("timeout",), timeout_hold=60.0)) as server:
        c = openai.OpenAI(base_url=server.base_url, api_key="sk-x", max_retries=0, timeout=0.2)
        with pytest.raises(openai.APITimeoutError):
            c.chat.completions.create(model="m", messages=ask("Yes", "x"))
    with MockServer(rpm_limit=1) as server:  # one request per minute
        c = client(server)
        c.chat.completions.create(model="m", messages=ask("Yes", "x"))
        with pytest.raises(openai.RateLimitError) as info:
            c.chat.completions.create(model="m", messages=ask("Yes", "x"))
        assert float(info.value.response.headers["retry-after"]) > 50
    with MockServer(require_api_key="sk-good") as server:
        with pytest.raises(openai.AuthenticationError):
            client(server).models.list()
        ok = openai.OpenAI(base_url=server.base_url, api_key="sk-good", max_retries=0)
        assert ok.models.list().data


def test_cli_mock_server_prints_base_url_and_serves():
    proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", "mock-server", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("http://127.0.0.1:") and line.endswith("/v1")
        c = openai.OpenAI(base_url=line, api_key="sk-x", max_retries=0, timeout=5.0)
        r = c.chat.completions.create(model="m", messages=ask("Yes", "Section 2."))
        assert r.usage.prompt_tokens > 0
        stats = httpx2.get(line.removesuffix("/v1") + "/_stats", timeout=5).json()
        assert stats["chat_requests"] == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)
