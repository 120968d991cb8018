"""A local engine as llama.cpp's server is one (a context per slot, a few slots, /props, its own words for a
prompt over the context), played by the loopback server, driven through the real ``openai`` client."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx2
import openai
from cli_runner import run_cli
import pytest
from helpers import assess_and_close

from checklist_eval.assessors import make_assessor
from checklist_eval.assessors.llm.assessor import LLMAssessor
from checklist_eval.endpoint.retry import CircuitBreaker, EndpointDown
from checklist_eval.testing import MockServer, sample_paper

KEY = "sk-test-SECRETKEY-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[1]
BIG = "Jason-Wang313__stereology"  # the longest paper of the shared corpus: ~217k characters of LaTeX


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("CE_TEST_KEY", KEY)


def llm(server: MockServer, **config) -> LLMAssessor:
    options = dict(model="gemma-3-270m", base_url=server.base_url, api_key_env="CE_TEST_KEY", no_cache=True,
                   backoff_initial=0.01)
    options.update(config)
    return make_assessor("llm", **options)


# The client deadline of the slot tests: what runs past it is a reply the server holds back, never a
# request a busy machine slowed (the admitted ones take a tenth of it or less).
SLOT_DEADLINE_S = 3.0


def llama_cpp(**kw) -> MockServer:
    """llama-server -c 2*ctx --parallel 2, as it answers (its default flags but the context)."""
    return MockServer(props=True, context_error="llama.cpp", **{"slots": 2, "context_tokens": 4096, **kw})


def test_a_paper_over_the_context_sends_no_request_the_engine_must_refuse():
    paper = sample_paper(n_questions=6, body_chars=80_000)
    with llama_cpp() as server:
        a = llm(server)
        out = assess_and_close(a, paper)
        stats = server.stats
    assert len(out) == 6 and stats.by_status == {200: 6}  # not one 400: the window was known before sending
    assert stats.probes == 2  # /v1/models and /props, once for the run
    assert a.window.tokens == 4096 and a.window.source == "engine /props"
    shares = [x.provenance.context_share for x in out]
    assert all(s is not None and 0.02 < s < 0.3 for s in shares)
    [warning] = a.paper_warnings(paper)
    assert "passages most relevant" in warning.message and "4096 tokens, from engine /props" in warning.message


def test_llama_cpp_400_for_a_prompt_over_the_context_is_a_context_answer():
    # No /props: the engine's window is learned from its refusal, in llama.cpp's exact words.
    paper = sample_paper(n_questions=4, body_chars=60_000)
    with MockServer(context_tokens=4096, context_error="llama.cpp") as server:
        a = llm(server, concurrency=1)
        out = assess_and_close(a, paper)
        stats = server.stats
    assert len(out) == 4
    assert stats.by_status == {400: 1, 200: 4}  # refused once, never resent as it was
    assert a.window.tokens == 4096 and a.window.source == "the endpoint's refusal"
    assert all(x.provenance.context_share is not None and x.provenance.context_share < 0.3 for x in out)


def test_in_flight_never_exceeds_the_engines_slots_and_keeps_them_busy():
    paper = sample_paper(n_questions=16)
    with llama_cpp(latency=0.1, context_tokens=64_000) as server:
        a = llm(server)  # the default --concurrency (64)
        assess_and_close(a, paper)
        stats = server.stats
    assert stats.max_in_flight == 2 and stats.max_queued == 0  # nothing waited in the engine's queue
    assert stats.max_busy_slots == 2
    assert a.scheduler.limit == 2 and a.scheduler.slots == 2


def test_a_batch_finishes_without_timeouts_against_a_slow_two_slot_engine():
    # 24 questions of 0.4 s each on 2 slots: 4.8 s of work. Queued 64 deep behind the engine's slots, most
    # requests would wait in its queue (max_queued, counted by the server); held to its 2 slots, none waits
    # at all. The deadline is far above a request's 0.4 s, so no retry comes from a machine busy elsewhere.
    paper = sample_paper(n_questions=24)
    with llama_cpp(latency=0.4, context_tokens=64_000) as server:
        a = llm(server, timeout=30.0)
        out = assess_and_close(a, paper)
        stats = server.stats
    assert len(out) == 24 and stats.by_status == {200: 24} and stats.chat_requests == 24
    assert a.retries == 0 and stats.max_queued == 0


def test_an_engine_that_does_not_say_its_slots_is_given_fewer_requests_after_it_overloads():
    # The same engine behind a proxy that hides /props: the first wave queues in the engine and times out;
    # the limit falls to what the engine finished meanwhile, and the run finishes. The server decides
    # which requests time out: a queued one is never answered (queue_stalls), an admitted one answers in
    # 0.3 s, a tenth of the deadline.
    paper = sample_paper(n_questions=16)
    with MockServer(slots=2, latency=0.3, context_tokens=64_000) as server:
        server.slot_queue.queue_stalls = True
        a = llm(server, timeout=SLOT_DEADLINE_S, max_attempts=6)
        out = assess_and_close(a, paper)
        stats = server.stats
    assert len(out) == 16
    assert stats.max_queued > 2  # the first wave did queue in the engine
    assert a.scheduler.decreases >= 1 and a.scheduler.limit < 16
    assert stats.by_status[200] >= 16


def test_dry_run_says_what_share_of_the_paper_each_question_is_given(shared_dir, tmp_path):
    paper = shared_dir / "corpus" / "papers-latex" / BIG
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    base = ["check", str(paper), "--dry-run", "--assessor", "llm", "--model", "gemma-3-270m", "--context-tokens", "8192"]
    js = run_cli(*base, "--json", cwd=ROOT, env=env)
    text = run_cli(*base, cwd=ROOT, env=env)
    assert js.returncode == 0 and text.returncode == 0, js.stderr
    [planned] = json.loads(js.stdout)["papers"]
    assert planned["truncated"] is True and 0 < planned["body_share_min"] <= planned["body_share"] < 0.2
    assert "text sent" in text.stdout and "passages most" in " ".join(text.stdout.split())


def test_check_of_a_real_paper_over_the_context_on_a_llama_cpp_engine(shared_dir, tmp_path):
    paper = shared_dir / "corpus" / "papers-latex" / BIG
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["OPENAI_API_KEY"] = KEY
    with llama_cpp(context_tokens=8192) as server:
        proc = run_cli("check", str(paper), "--json", "--quiet", "--assessor", "llm", "--model", "gemma-3-270m", "--base-url", server.base_url, "--no-cache", cwd=ROOT, env=env)
        stats = server.stats
    assert proc.returncode == 0, proc.stderr
    assert 400 not in stats.by_status and stats.max_in_flight <= 2
    result = json.loads(proc.stdout)
    said = [w["message"] for w in result["warnings"] if "passages most relevant" in w["message"]]
    assert len(said) == 1 and "of the text on median" in said[0]


def test_the_engines_refusal_is_read_through_a_proxys_wrapping():
    # LiteLLM's proxy passes llama.cpp's 400 on inside its own message, without the engine's fields.
    from checklist_eval.endpoint.context import context_refusal

    said = ("litellm.BadRequestError: OpenAIException - request (9120 tokens) exceeds the available context size "
            "(8192 tokens), try increasing it. Received Model Group=local-gemma")
    assert context_refusal(400, {"error": {"message": said, "type": None, "param": None, "code": "400"}}, said) == (
        9120, 8192)
    refused = "Unsupported parameter: 'logprobs' is not supported with this model."
    assert context_refusal(400, {"error": {"message": refused}}, refused) is None


def test_a_dead_engine_is_given_up_on_after_a_few_attempts_under_the_fallen_limit():
    # Every reply drips past the deadline. Once the limit has fallen to one request in flight, the breaker
    # follows it: a few timeouts in a row end the run, not as many as the ceiling of 64.
    paper = sample_paper(n_questions=16)
    with MockServer(misbehave="drip") as server:
        a = llm(server, timeout=0.5, max_attempts=6)
        with pytest.raises(Exception, match="attempts in a row failed the same way.*may need more"):
            assess_and_close(a, paper)
        stats = server.stats
    assert a.scheduler.limit == 1
    assert stats.chat_requests <= 8, stats.chat_requests


def test_timeouts_of_requests_sent_before_the_limit_fell_do_not_stop_the_run():
    # 24 questions sent 12 at a time to an engine with 2 slots that hides them: the first wave queues and
    # times out together, after the limit already fell. Those are the overload the limit answered; the
    # run goes on at the lower limit and every question gets its verdict.
    paper = sample_paper(n_questions=24)
    with MockServer(slots=2, latency=0.3, context_tokens=64_000) as server:
        server.slot_queue.queue_stalls = True  # queued: never answered; admitted: 0.3 s, a tenth of the deadline
        a = llm(server, timeout=SLOT_DEADLINE_S, max_attempts=6, concurrency=12)
        out = assess_and_close(a, paper)
        stats = server.stats
    assert len(out) == 24
    assert stats.by_status.get(200, 0) >= 24 and a.scheduler.decreases >= 1


def test_slots_on_shared_cores_are_given_fewer_requests_when_they_run_past_the_deadline():
    # llama.cpp's server on a CPU says 4 slots, but they share the cores: with more than 2 busy, none
    # progresses (the server holds their replies past the deadline, then drops them), while one or two at
    # a time take 0.2 s each, a fifteenth of the deadline. The limit falls below the slots and the run
    # finishes; without that every wave timed out together until the attempts ran out.
    paper = sample_paper(n_questions=12)
    with llama_cpp(slots=4, latency=0.2, context_tokens=64_000, slots_share_cores=True) as server:
        server.slot_queue.stall_above, server.slot_queue.abandon_after = 2, SLOT_DEADLINE_S
        a = llm(server, timeout=SLOT_DEADLINE_S, max_attempts=4)
        out = assess_and_close(a, paper)
    assert len(out) == 12
    assert a.scheduler.slots == 4 and a.scheduler.decreases >= 1 and a.scheduler.limit < 4


def test_the_breaker_names_the_failures_that_opened_it_after_a_late_answer():
    # An answer still in flight when the breaker opened reset its count, and the run's one error line read
    # "stopped: 0 attempts in a row failed the same way" (seen with a shared cache's 500s).
    breaker = CircuitBreaker(3)
    failure = openai.InternalServerError("Context size has been exceeded.", response=httpx2.Response(
        500, request=httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")), body=None)
    for _ in range(3):
        breaker.failed(failure)
    breaker.succeeded()
    with pytest.raises(EndpointDown, match="stopped: 3 attempts in a row failed the same way"):
        breaker.check()


def test_slots_sharing_one_cache_unseen_are_kept_within_it_after_it_first_fills():
    # Behind a proxy llama.cpp's /props is not seen: the first 500 "Context size has been exceeded." says the
    # requests in flight share one memory, and from then on they are kept within the window.
    paper = sample_paper(n_questions=8, body_chars=3_000)
    with MockServer(slots=4, props=False, kv_shared=True, latency=0.2, context_tokens=3_000) as server:
        a = llm(server, concurrency=4, context_tokens=3_000, max_attempts=6)
        out = assess_and_close(a, paper)
        stats = server.stats
    assert len(out) == 8 and all(o.correct is not None for o in out)
    assert 1 <= stats.by_status.get(500, 0) <= 3  # the first wave only
    assert a.scheduler.memory_tokens is not None


@pytest.mark.parametrize("unified", [False, True], ids=["own-cache-per-slot", "unified-cache"])
@pytest.mark.parametrize("window", [8192, 16384, 32768])
def test_the_fixture_paper_that_fits_the_window_is_sent_whole(window, unified):
    # llama-server -c 2*window -np 2 (its /props: n_ctx per slot, 2 slots), the 9,491-character fixture paper:
    # it fits every window here, so every question gets the whole of it. A real llama-server with -c 16384
    # -np 2 was once sent 2,000 characters of it ("exceeds the model's context budget (2000 characters)").
    from checklist_eval.reading.parsing import load_paper

    paper = load_paper(ROOT / "fixtures" / "papers" / "genuine")
    with llama_cpp(context_tokens=window, kv_shared=unified) as server:
        a = llm(server)
        out = assess_and_close(a, paper)
        stats = server.stats
    assert a.window.tokens == window and stats.by_status == {200: len(out)}
    assert [x.provenance.context_share for x in out] == [1.0] * len(out)
    assert a.paper_warnings(paper) == []
