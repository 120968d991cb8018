"""The two local engines as a user meets them, held in CI without them: the loopback server's profiles
``llama-cpp-python`` and ``llama.cpp-server`` answer with the status codes, error bodies and logprobs the real
engines gave (``checklist_eval/testing/engines.py``, captured by ``scripts/drill_real_engine.py``), and the CLI
runs as typed (only ``--assessor llm --model --base-url --api-key-env``) through the real ``openai`` client.

Tests marked ``real_engine`` run the drill's runs against the real engines; they skip when the engines'
cached environment (``~/.cache/checklist-eval/engines`` or $CHECKLIST_EVAL_ENGINES) is absent."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.testing import MockServer
from checklist_eval.testing.profiles import PROFILES

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "fixtures" / "papers" / "genuine"
OTHER_PAPER = ROOT / "fixtures" / "submissions" / "team-gamma" / "genuine_sga.tex"
KEY_ENV = "LOCAL_ENGINE_KEY"
N_QUESTIONS = 16


def cli(server: MockServer, *args: str, cache: Path) -> CliRun:
    """``checklist-eval ARGS`` as typed, with the user's default cache file at ``cache``."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env[KEY_ENV] = "local"
    env["CHECKLIST_EVAL_CACHE"] = str(cache)
    endpoint = ["--model", server.model, "--base-url", server.base_url, "--api-key-env", KEY_ENV]
    return run_cli(*args, *endpoint, cwd=ROOT, env=env)


def check(server: MockServer, *extra: str, cache: Path, paper: Path = PAPER):
    done = cli(server, "check", str(paper), "--assessor", "llm", "--json", *extra, cache=cache)
    return done, (json.loads(done.stdout) if done.returncode == 0 else None)


def check_on_llama_server_variant(monkeypatch, cache: Path, **changes):
    """``check`` against the llama.cpp-server profile with ``changes`` to it: (done, result, server stats)."""
    variant = dataclasses.replace(PROFILES["llama.cpp-server"], name="llama.cpp-variant", **changes)
    monkeypatch.setitem(PROFILES, variant.name, variant)
    with MockServer(profile=variant.name) as server:
        done, result = check(server, cache=cache)
        return done, result, server.stats


def on_verdict_side(items: list[dict]) -> bool:
    return all((it["p_correct"] >= 0.5) == it["correct"] for it in items)


def test_llama_cpp_python_known_by_its_models_list_gets_the_schema_and_no_costly_logprobs(tmp_path):
    # Its server takes a schema only inside json_object (json_schema is a 500) and pads a bare json_object's
    # replies (a generic grammar); its logprobs cost about a second per generated token. Known by its
    # /v1/models entries, it is sent the schema that way and asked for no logprobs: one call per question.
    cache = tmp_path / "cache.sqlite"
    with MockServer(profile="openai-chat") as plain:
        _, reference = check(plain, cache=tmp_path / "plain.sqlite")
        compact = plain.stats.completion_tokens
    with MockServer(profile="llama-cpp-python") as server:
        done, result = check(server, cache=cache)
        first = server.stats
        server.reset_stats()
        again, other = check(server, paper=OTHER_PAPER, cache=cache)
        second = server.stats
    assert done.returncode == 0, done.stderr
    items = result["items"]
    assert len(items) == N_QUESTIONS and on_verdict_side(items)
    assert [it["correct"] for it in items] == [it["correct"] for it in reference["items"]]
    assert first.by_status == {200: N_QUESTIONS} and result["usage"]["calls"] == N_QUESTIONS
    # no padding (one raw newline a reply, as its grammar lets in), no logprobs
    assert first.logprob_replies == 0 and first.completion_tokens <= compact + N_QUESTIONS
    assert "logprobs not asked: llama-cpp-python computes them" in done.stderr
    # The next run knows the engine the same way, says so once, and is refused nothing.
    assert again.returncode == 0, again.stderr
    assert set(second.by_status) == {200} and other["usage"]["calls"] == second.chat_requests > 0
    assert second.logprob_replies == 0 and again.stderr.count("logprobs not asked") == 1


def test_llama_cpp_python_not_known_by_its_models_list_learns_the_format_once(tmp_path, monkeypatch):
    # Behind a proxy that lists models its own way, the same server is met by its replies: json_schema's 500
    # is an answer, learned once the unchanged resend met it again (one 500 may be a passing fault: issue 45),
    # and its logprobs are answered, so they are used.
    hidden = dataclasses.replace(PROFILES["llama-cpp-python"], name="llama-cpp-python-hidden",
                                 model_entry=PROFILES["openai-chat"].model_entry)
    monkeypatch.setitem(PROFILES, hidden.name, hidden)
    with MockServer(profile=hidden.name) as server:
        done, result = check(server, cache=tmp_path / "cache.sqlite")
        stats = server.stats
    assert done.returncode == 0, done.stderr
    assert len(result["items"]) == N_QUESTIONS and on_verdict_side(result["items"])
    assert stats.by_status == {500: 2, 200: N_QUESTIONS} and result["usage"]["calls"] == N_QUESTIONS + 2
    assert stats.logprob_replies == N_QUESTIONS
    assert "response_format json_schema refused: using json_object" in done.stderr


def test_llama_cpp_python_at_its_default_2048_token_context_gives_every_question_a_verdict(tmp_path):
    # Its server starts with n_ctx 2048 and refuses a longer prompt with an OpenAI-worded 400 whose
    # "requested" adds the completion's max_tokens (seen on the real server with the fixture paper).
    with MockServer(profile="llama-cpp-python", context_tokens=2048, context_error="llama-cpp-python") as server:
        done, result = check(server, cache=tmp_path / "cache.sqlite")
        stats = server.stats
    assert done.returncode == 0, done.stderr
    items = result["items"]
    assert len(items) == N_QUESTIONS and on_verdict_side(items)
    assert stats.by_status[400] == 1  # the window is learned from its one refusal, then never exceeded
    assert all(it["context_share"] is not None and it["context_share"] < 0.5 for it in items)
    assert result["usage"]["calls"] <= 1.25 * N_QUESTIONS


def test_a_refusal_of_what_a_flag_forces_stops_at_once_naming_the_flag(tmp_path, monkeypatch):
    hidden = dataclasses.replace(PROFILES["llama-cpp-python"], name="llama-cpp-python-hidden",
                                 model_entry=PROFILES["openai-chat"].model_entry)
    monkeypatch.setitem(PROFILES, hidden.name, hidden)
    with MockServer(profile=hidden.name) as server:
        schema, _ = check(server, "--structured", "json_schema", cache=tmp_path / "a.sqlite")
        schema_calls = server.stats.chat_requests
    with MockServer(profile="llama-cpp-python-logits-off") as server:
        logprobs, _ = check(server, "--logprobs", "on", cache=tmp_path / "b.sqlite")
        logprob_calls = server.stats.chat_requests
    for done, flag in ((schema, "--structured auto"), (logprobs, "--logprobs off")):
        assert done.returncode == 2, done.stderr
        last = done.stderr.strip().splitlines()[-1]
        assert "HTTP 500" in last and f"run with {flag}" in last and "Traceback" not in done.stderr
    # One refusal, confirmed by one resend (a single 500 may be a passing fault: issue 45), is enough: not 64
    # identical attempts.
    assert schema_calls == 2 and logprob_calls == 2


def test_logprobs_off_sends_none_and_p_correct_is_on_the_verdicts_side(tmp_path):
    with MockServer(profile="llama-cpp-python-logits-off") as server:
        done, result = check(server, "--logprobs", "off", cache=tmp_path / "cache.sqlite")
        stats = server.stats
    assert done.returncode == 0, done.stderr
    assert stats.by_status == {200: N_QUESTIONS} and stats.logprob_replies == 0
    assert on_verdict_side(result["items"])


def test_llama_server_logprobs_before_the_grammar_never_contradict_the_verdict(tmp_path):
    # llama.cpp's server lists the model's own top tokens at the verdict ("True" first, which a JSON grammar
    # forbids; the value it let through may be missing): p_correct used to land on the other side of 0.5.
    with MockServer(profile="openai-chat") as plain:
        _, reference = check(plain, cache=tmp_path / "a.sqlite")
    with MockServer(profile="llama.cpp-server") as server:
        done, result = check(server, cache=tmp_path / "b.sqlite")
        stats = server.stats
    assert done.returncode == 0, done.stderr
    items = result["items"]
    assert [it["correct"] for it in items] == [it["correct"] for it in reference["items"]]
    assert on_verdict_side(items)
    assert set(stats.by_status) == {200} and result["usage"]["calls"] <= 1.25 * N_QUESTIONS


def test_llama_server_says_its_slots_and_context_in_props():
    import urllib.request

    with MockServer(profile="llama.cpp-server") as server:
        with urllib.request.urlopen(f"http://{server.host}:{server.port}/props", timeout=10) as reply:
            props = json.loads(reply.read())
    assert props["total_slots"] >= 1 and props["default_generation_settings"]["n_ctx"] > 0


# --- contamination ---------------------------------------------------------------------------------


def test_contamination_on_llama_cpp_python_one_prompt_per_request(tmp_path):
    # With default flags its /v1/completions returns prompt log-probabilities but answers 500 to a list of
    # prompts: the n-gram references go one per request, and the scores are those of a server that takes lists.
    with MockServer(profile="llama-cpp-python") as server:
        done = cli(server, "contamination", str(PAPER), "--json", "--max-chunks", "2", cache=tmp_path / "a.sqlite")
        stats = server.stats
    with MockServer() as lists:
        want = cli(lists, "contamination", str(PAPER), "--json", "--max-chunks", "2", cache=tmp_path / "b.sqlite")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["paper_scores"] == json.loads(want.stdout)["paper_scores"]
    assert stats.by_status.get(500) == 1  # the list refused once, not retried


def test_contamination_on_llama_cpp_python_without_logits_says_why_in_one_line(tmp_path):
    with MockServer(profile="llama-cpp-python-logits-off") as server:
        done = cli(server, "contamination", str(PAPER), cache=tmp_path / "cache.sqlite")
        stats = server.stats
    assert done.returncode == 2
    assert "logits_all=False" in done.stderr.strip().splitlines()[-1] and "Traceback" not in done.stderr
    assert stats.requests <= 3  # refused at once, not retried


# --- the real engines ------------------------------------------------------------------------------


def _engines(engine: str = "all"):
    """The drill and its cached engines; a llama-server of one's own may be named by $CHECKLIST_EVAL_LLAMA_SERVER
    (the drill's --llama-server), and then only it and the model are needed for llama.cpp-server."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import drill_real_engine

    own = os.environ.get("CHECKLIST_EVAL_LLAMA_SERVER") or None
    env = drill_real_engine.EngineEnv(drill_real_engine.default_engines_dir(), own)
    ready = env.model.exists() and ((own is not None and engine == "llama.cpp-server")
                                    or (env.python.exists() and env.installed()))
    if not ready:
        pytest.skip(f"no engines in {env.root} (scripts/drill_real_engine.py installs them)")
    return drill_real_engine, env


# Flags this machine's llama-server needs beside its defaults ($CHECKLIST_EVAL_LLAMA_SERVER_ARGS): a build with
# GGML_NATIVE on a CPU that lists AMX but faults on its tile instructions needs --no-repack.
def _machine_flags() -> tuple[str, ...]:
    return tuple(os.environ.get("CHECKLIST_EVAL_LLAMA_SERVER_ARGS", "").split())


@pytest.mark.real_engine
@pytest.mark.parametrize("engine", ["llama.cpp-server", "llama-cpp-python"])
def test_check_on_the_real_engine_with_default_flags(engine, tmp_path):
    drill, env = _engines(engine)
    flags = _machine_flags() if engine == "llama.cpp-server" else ()
    rows = drill.drill_engine(drill.ENGINES[engine], env, ["check"], ROOT, tmp_path, lambda msg: None, extra=flags)
    row = rows[0]
    assert row.exit == 0, row.note
    assert row.verdicts == row.asked == N_QUESTIONS and row.wrong_side == 0
    assert row.calls <= 1.25 * row.fresh


@pytest.mark.real_engine
def test_the_fixture_paper_goes_whole_to_a_real_llama_server_of_two_slots_of_8k(tmp_path):
    # llama-server -c 16384 -np 2: 8,192 tokens a slot, kv_unified false. Once sent 2,000 characters of the
    # 9,491-character paper; the whole of it fits each slot.
    drill, env = _engines("llama.cpp-server")
    rows = drill.drill_engine(drill.ENGINES["llama.cpp-server"], env, ["check"], ROOT, tmp_path, lambda msg: None,
                              extra=(*_machine_flags(), "-c", "16384", "-np", "2"))
    row = rows[0]
    assert row.exit == 0, row.note
    assert row.verdicts == row.asked == N_QUESTIONS and row.extra["body_share_min"] == 1.0


def test_the_drill_on_the_loopback_engine_reports_what_the_run_did(tmp_path):
    # scripts/drill_real_engine.py's own plumbing, against the loopback server answering as llama-cpp-python.
    sys.path.insert(0, str(ROOT / "scripts"))
    import drill_real_engine as drill

    engine = drill.LOOPBACK["loopback:llama-cpp-python"]
    rows = drill.drill_engine(engine, drill.EngineEnv(tmp_path), ["check"], ROOT, tmp_path, lambda msg: None)
    (row,) = rows
    assert (row.exit, row.verdicts, row.asked, row.fresh, row.wrong_side) == (0, N_QUESTIONS, N_QUESTIONS,
                                                                              N_QUESTIONS, 0)
    assert row.calls == N_QUESTIONS and row.learned == [
        "logprobs not asked: llama-cpp-python computes them over the whole vocabulary for every token (about ten "
        "times the reply's time); p_correct from the verdict alone"]
    assert "check" in drill.table(rows) and row.real_prompt_tokens and row.real_prompt_tokens > 0


def test_contamination_on_llama_server_says_in_one_line_that_it_scores_no_prompt(tmp_path):
    with MockServer(profile="llama.cpp-server") as server:
        done = cli(server, "contamination", str(PAPER), cache=tmp_path / "cache.sqlite")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no prompt log-probabilities" in done.stderr.strip().splitlines()[-1]


def test_a_schema_grammar_never_lets_a_list_run_to_max_tokens(tmp_path, monkeypatch):
    # Gemma 3 270M under llama.cpp's grammar from our schema filled an unbounded "evidence" array with "1",
    # "2", "3", ... until max_tokens on most questions of the A and T papers, and its re-ask did the same:
    # 55 calls for 20 verdicts. Engines that apply a schema by llama.cpp's grammar without saying so in a
    # /props (LM Studio, Ollama) get the schema; its maxItems lets the grammar close every list.
    done, result, stats = check_on_llama_server_variant(monkeypatch, tmp_path / "c.sqlite", props=None, headers=(),
                                                        shape=PROFILES["openai-chat"].shape)
    assert done.returncode == 0, done.stderr
    assert len(result["items"]) == N_QUESTIONS
    assert result["usage"]["calls"] == N_QUESTIONS and stats.by_status == {200: N_QUESTIONS}
    assert "known by its reply" not in done.stderr  # nothing in its replies says llama.cpp


def _proxy_variant(monkeypatch, name: str, **changes) -> str:
    variant = dataclasses.replace(PROFILES["litellm-llama.cpp-server"], name=name, strings_run_away=False, **changes)
    monkeypatch.setitem(PROFILES, name, variant)
    return name


def test_llama_server_behind_a_proxy_is_known_before_the_first_verdict_and_sent_its_grammar(tmp_path, monkeypatch):
    # Behind LiteLLM's proxy /props is a 404 and /v1/models is the proxy's, so the client sent json_schema and
    # llama.cpp's padded schema grammar: 0.4-0.6 tokens/s on 2 busy cores, the first verdict past the proxy's
    # 600 s timeout. The proxy lists the model owned_by "openai", forwards the engine's "Server: llama.cpp"
    # as llm_provider-server and passes a grammar through: one question of one token learns the engine.
    with MockServer(profile="openai-chat") as plain:
        check(plain, cache=tmp_path / "a.sqlite")
        plain_tokens = plain.stats.completion_tokens
    with MockServer(profile=_proxy_variant(monkeypatch, "proxy")) as server:
        done, result = check(server, cache=tmp_path / "c.sqlite")
        stats = server.stats
        again = cli(server, "check", str(OTHER_PAPER), "--assessor", "llm", "--json", cache=tmp_path / "c.sqlite")
        asked_again = server.stats.chat_requests - stats.chat_requests
    assert done.returncode == 0, done.stderr
    assert len(result["items"]) == N_QUESTIONS and stats.by_status == {200: N_QUESTIONS + 1}  # the question
    assert done.stderr.count("llama.cpp's server known by its reply") == 1
    assert stats.completion_tokens <= plain_tokens * 1.1  # not one verdict padded
    assert again.returncode == 0, again.stderr
    assert "starting from what an earlier run learned: llama.cpp's server known by its reply" in again.stderr
    assert asked_again == json.loads(again.stdout)["usage"]["calls"]  # known from the cache: no question asked


def test_llama_server_behind_an_unknown_proxy_is_known_by_its_first_reply(tmp_path, monkeypatch):
    # A proxy whose models list says nothing of a backend: the engine's forwarded header on the first reply
    # teaches the run; the replies before it came back were padded, every one after was not.
    with MockServer(profile="openai-chat") as plain:
        check(plain, cache=tmp_path / "a.sqlite")
        plain_tokens = plain.stats.completion_tokens
    silent = _proxy_variant(monkeypatch, "proxy-hiding-all", headers=(), shape=PROFILES["openai-chat"].shape,
                            model_entry=PROFILES["openai-chat"].model_entry)
    with MockServer(profile=silent) as server:
        check(server, cache=tmp_path / "b.sqlite")
        padded_tokens = server.stats.completion_tokens
    unknown = _proxy_variant(monkeypatch, "proxy-unknown", model_entry=PROFILES["openai-chat"].model_entry)
    with MockServer(profile=unknown) as server:
        done, result = check(server, cache=tmp_path / "c.sqlite")
        stats = server.stats
    assert done.returncode == 0, done.stderr
    assert len(result["items"]) == N_QUESTIONS and stats.by_status == {200: N_QUESTIONS}
    assert done.stderr.count("llama.cpp's server known by its reply") == 1
    assert plain_tokens < stats.completion_tokens < plain_tokens + (padded_tokens - plain_tokens) / 2


def test_llama_server_is_sent_a_compact_grammar_and_its_replies_carry_no_padding(tmp_path, monkeypatch):
    # llama.cpp's grammar from a JSON schema lets a newline and up to 20 tabs stand before every key, colon
    # and value; Gemma 3 270M filled them (539 to 583 tokens per verdict, at 3-6 tokens/s a slot).
    # Where /props says the engine is llama.cpp's server, the client sends its own compact grammar instead.
    with MockServer(profile="openai-chat") as plain:
        _, reference = check(plain, cache=tmp_path / "a.sqlite")
        plain_tokens = plain.stats.completion_tokens
    done, result, stats = check_on_llama_server_variant(monkeypatch, tmp_path / "b.sqlite", strings_run_away=False)
    assert done.returncode == 0, done.stderr
    assert [it["correct"] for it in result["items"]] == [it["correct"] for it in reference["items"]]
    assert stats.by_status == {200: N_QUESTIONS}
    assert stats.completion_tokens <= plain_tokens * 1.1  # padded, the same verdicts took 27% more here


def test_a_reply_cut_off_in_a_loop_is_not_shown_back_to_the_model(tmp_path):
    # Under a grammar Gemma 3 270M sometimes ran a string to max_tokens ("1000000..."); re-asked with its cut
    # reply echoed, it wrote the same loop four times and the check stopped. Re-asked with only the reason,
    # the real server answered in 89 tokens.
    with MockServer(profile="llama.cpp-server") as server:
        done, result = check(server, cache=tmp_path / "d.sqlite")
        stats = server.stats
    assert done.returncode == 0, done.stderr
    assert len(result["items"]) == N_QUESTIONS and set(stats.by_status) == {200}
    cut = result["usage"]["calls"] - N_QUESTIONS
    assert 0 < cut and result["usage"]["calls"] <= 1.25 * N_QUESTIONS  # the profile does run some away


def _per_request_prompt_tokens(tmp_path: Path) -> int:
    with MockServer() as plain:
        check(plain, cache=tmp_path / "plain.sqlite")
        return plain.stats.prompt_tokens // N_QUESTIONS


def test_slots_sharing_one_cache_are_never_sent_more_than_it_holds(tmp_path):
    # llama.cpp's server by default gives its 4 slots one KV cache (kv_unified): /props says n_ctx 32768 for
    # each, and four 24k-token prompts of a shared paper at once filled it; every request being decoded was
    # answered 500 "Context size has been exceeded." Known by its /props, it is sent no more than the cache
    # holds from the first request: a failed wave cost the real drill 4 calls and 16 minutes.
    per_request = _per_request_prompt_tokens(tmp_path)
    with MockServer(profile="llama.cpp-server", slots=4, props=True, kv_shared=True, latency=0.2,
                    context_tokens=int(1.5 * per_request)) as server:
        done, result = check(server, cache=tmp_path / "b.sqlite")
        stats = server.stats
    assert done.returncode == 0, done.stderr
    assert len(result["items"]) == N_QUESTIONS
    assert stats.by_status == {200: stats.chat_requests}  # not one request refused for the cache
