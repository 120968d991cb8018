"""Every provider profile, as a user meets it: ``checklist-eval check`` with default flags, the real ``openai``
client over real HTTP to the loopback server answering as that provider's documentation says.

Also here: the contract test holding the loopback server's replies and error bodies to the shapes of the
providers' published examples (``fixtures/provider_replies/``), and the price table's dating."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import openai
from cli_runner import CliRun, run_cli
import pytest
from helpers import assess_and_close

from checklist_eval.assessors import make_assessor
from checklist_eval.endpoint.prices import PriceTable
from checklist_eval.errors import AssessorError
from checklist_eval.testing.profiles import PROFILES, Profile, openai_error
from checklist_eval.reading.parsing import load_paper
from checklist_eval.challenge.records import records_from_assessments
from checklist_eval.testing import MockServer, sample_paper

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "fixtures" / "papers" / "genuine"
REPLIES = ROOT / "fixtures" / "provider_replies"
KEY = "sk-test-PROVIDERKEY-0123456789"

# What a user sets for each provider: the key's environment variable (None: a local server needs none).
KEY_ENV = {"openai-chat": "OPENAI_API_KEY", "openai-reasoning": "OPENAI_API_KEY",
           "azure": "AZURE_OPENAI_API_KEY", "vllm": None, "ollama": None,
           "gemini-openai": "GEMINI_API_KEY", "anthropic-openai": "ANTHROPIC_API_KEY",
           "llama-cpp-python": None, "llama-cpp-python-logits-off": None, "llama.cpp-server": None,
           "litellm-llama.cpp-server": "LITELLM_API_KEY"}
# What each profile's endpoint refuses of the default request, in the order it says so.
LESSONS = {
    "openai-chat": [],
    "openai-reasoning": ["temperature=0.0 refused", "max_tokens refused", "logprobs refused"],
    "azure": ["temperature=0.0 refused", "max_tokens refused", "logprobs refused"],
    "vllm": [],
    "ollama": [],
    "gemini-openai": ["logprobs refused"],
    "anthropic-openai": [],
    # Known by its /v1/models: sent the schema inside json_object, asked for no logprobs (costly there).
    "llama-cpp-python": [],
    "llama-cpp-python-logits-off": [],
    "llama.cpp-server": [],
    "litellm-llama.cpp-server": [],
}
# What a run learned of the engine before asking it anything (no refusal: what it says of itself).
FROM_THE_ENGINE = {"llama-cpp-python": ["logprobs not asked"], "llama-cpp-python-logits-off": ["logprobs not asked"],
                   # behind the proxy, known by its first reply (its forwarded Server header)
                   "litellm-llama.cpp-server": ["llama.cpp's server known by its reply (its /props not seen)"]}


def refusals(stats) -> int:
    """Requests the endpoint refused (a 400, or the 500 llama-cpp-python answers with)."""
    # a 404 is the engine probe's /props on a provider that has none (Azure's, Gemini's), not a refusal
    return sum(n for status, n in stats.by_status.items() if status not in (200, 404))
N_QUESTIONS = 16


def cli_check(server: MockServer, profile: Profile, *extra: str, json_out: bool = True,
              ) -> CliRun:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "OPENAI_BASE_URL"}
    env["COLUMNS"] = "250"
    args = ["--assessor", "llm", "--model", profile.model, "--base-url", server.base_url, "--no-cache"]
    if KEY_ENV[profile.name]:
        env[KEY_ENV[profile.name]] = KEY
        if KEY_ENV[profile.name] != "OPENAI_API_KEY":
            args += ["--api-key-env", KEY_ENV[profile.name]]
    return run_cli("check", str(PAPER), *args, *extra, *(["--json"] if json_out else []), cwd=ROOT, env=env)


def server_for(name: str, **kw) -> MockServer:
    # A provider that needs a key gets one it checks, so the test also proves the key arrives.
    return MockServer(profile=name, require_api_key=KEY if KEY_ENV[name] else None, **kw)


@pytest.fixture(scope="module")
def reference_verdicts() -> list[bool]:
    with server_for("openai-chat") as server:
        done = cli_check(server, PROFILES["openai-chat"])
    assert done.returncode == 0, done.stderr
    return [it["correct"] for it in json.loads(done.stdout)["items"]]


@pytest.mark.parametrize("name", list(PROFILES))
def test_check_with_default_flags_on_every_profile(name, reference_verdicts):
    profile = PROFILES[name]
    with server_for(name) as server:
        done = cli_check(server, profile)
        stats = server.stats
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    items = result["items"]
    # A verdict for every question, the same ones whatever the provider (they are a function of the prompt).
    assert len(items) == N_QUESTIONS and all(isinstance(it["correct"], bool) for it in items)
    assert [it["correct"] for it in items] == reference_verdicts
    assert all(0.0 <= it["p_correct"] <= 1.0 for it in items)
    # Each refused parameter announced once, on stderr, in the order the endpoint refused them.
    announced = [line for line in done.stderr.splitlines() if " refused" in line]
    assert [re.sub(r":.*", "", line.split("): ", 1)[1]) for line in announced] == [
        lesson.split(":")[0] for lesson in LESSONS[name]], done.stderr
    assert all(f"(model {profile.model})" in line for line in announced)
    assert KEY not in done.stderr + done.stdout
    # The ledger: every request sent, and the tokens the server reported for the answered ones.
    usage = result["usage"]
    # a profile that reproduces a small model's loops (a reply cut off at max_tokens) is asked again
    loops = max(0, stats.chat_requests - N_QUESTIONS - refusals(stats)) if profile.strings_run_away else 0
    assert usage["calls"] == stats.chat_requests == N_QUESTIONS + refusals(stats) + loops
    assert loops <= 0.25 * N_QUESTIONS
    assert refusals(stats) == len(LESSONS[name])  # each lesson once: the first question goes alone
    assert usage["prompt_tokens"] == stats.prompt_tokens
    assert usage["completion_tokens"] == stats.completion_tokens
    assert usage["cached_tokens"] == (stats.cached_tokens if profile.reports_cached else 0)
    price = PriceTable.load().lookup(profile.model)
    if price is None:
        assert usage["cost_usd"] == 0.0
    else:
        want = price.cost(usage["prompt_tokens"], usage["completion_tokens"], usage["cached_tokens"])
        assert usage["cost_usd"] == pytest.approx(want, abs=1e-6) and usage["cost_usd"] > 0


run = assess_and_close


def llm(server: MockServer, profile: Profile, **config):
    return make_assessor("llm", model=profile.model, base_url=server.base_url, api_key_env="CE_PROVIDER_KEY",
                         no_cache=True, backoff_initial=0.01, timeout=10.0, **config)


@pytest.mark.parametrize("name", list(PROFILES))
def test_quirks_and_reasoning_tokens_in_provenance_and_records(name, monkeypatch):
    monkeypatch.setenv("CE_PROVIDER_KEY", KEY)
    profile = PROFILES[name]
    paper = load_paper(str(PAPER))
    with server_for(name) as server:
        assessor = llm(server, profile, concurrency=1)  # one at a time: each lesson costs exactly one 400
        out = run(assessor, paper)
        stats = server.stats
    assert len(out) == N_QUESTIONS
    lessons = LESSONS[name]
    assert refusals(stats) == len(lessons)  # requests before the first verdict: lessons + 1
    for a in out:  # every verdict carries what the endpoint taught the run
        assert [q.split(":")[0] for q in a.provenance.quirks] == [
            les.split(":")[0] for les in FROM_THE_ENGINE.get(name, []) + lessons]
    rows = records_from_assessments("team", "G", paper, out, case="G", scored_at="now")
    assert {r.quirks for r in rows} == {"; ".join(out[0].provenance.quirks)}
    total = assessor.usage
    assert total.reasoning_tokens == sum(r.reasoning_tokens for r in rows)
    if profile.reasoning:
        assert total.reasoning_tokens > 0 and total.reasoning_tokens < total.completion_tokens
        assert total.completion_tokens == stats.completion_tokens
    else:
        assert total.reasoning_tokens == 0
    priced = PriceTable.load().lookup(profile.model) is not None
    assert (total.unpriced_calls == 0) is priced


def test_reasoning_effort_high_outgrows_the_default_budget(monkeypatch):
    # At "high" effort the model thinks past 800 tokens and answers nothing (finish_reason "length"): the
    # client raises the budget once for the endpoint and every question gets its verdict.
    monkeypatch.setenv("CE_PROVIDER_KEY", KEY)
    profile = PROFILES["openai-reasoning"]
    paper = load_paper(str(PAPER))
    with server_for("openai-reasoning") as server:
        assessor = llm(server, profile, concurrency=1, reasoning_effort="high")
        out = run(assessor, paper)
    assert len(out) == N_QUESTIONS
    assert any("raised to 3200" in q for q in out[-1].provenance.quirks)
    assert assessor.usage.reasoning_tokens > 1000 * N_QUESTIONS


def test_reasoning_effort_refused_by_a_chat_model_is_dropped_and_announced():
    profile = PROFILES["openai-chat"]
    with server_for("openai-chat") as server:
        done = cli_check(server, profile, "--reasoning-effort", "low")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("reasoning_effort='low' refused") == 1


def test_a_refusal_of_something_not_sent_fails_fast_without_looping(monkeypatch):
    # An endpoint that keeps refusing a parameter the client does not send: nothing to learn, so the
    # question fails on its first 400 instead of being sent again and again.
    monkeypatch.setenv("CE_PROVIDER_KEY", KEY)
    stubborn = Profile("stubborn", model="gpt-4o-mini", base_path="/v1", docs=(),
                       refusal=lambda req: (400, openai_error("Unsupported parameter: 'stream_options' is not "
                                                              "supported with this model.", "stream_options",
                                                              "unsupported_parameter")))
    monkeypatch.setitem(PROFILES, "stubborn", stubborn)
    with MockServer(profile="stubborn") as server:
        with pytest.raises(AssessorError, match="stream_options"):
            run(llm(server, stubborn, concurrency=1), sample_paper(n_questions=1))
        assert server.stats.chat_requests == 1


def test_unknown_price_is_shown_as_unknown_never_zero():
    profile = PROFILES["ollama"]
    with server_for("ollama") as server:
        done = cli_check(server, profile, json_out=False)
    assert done.returncode == 0, done.stderr
    usage_line = next(line for line in done.stdout.splitlines() if line.startswith("Usage:"))
    assert "price unknown" in usage_line and "$" not in usage_line
    assert "no price for model 'llama3.1'" in done.stderr


def test_reasoning_tokens_and_cost_in_the_text_summary():
    profile = PROFILES["openai-reasoning"]
    with server_for("openai-reasoning") as server:
        done = cli_check(server, profile, json_out=False)
    assert done.returncode == 0, done.stderr
    usage_line = next(line for line in done.stdout.splitlines() if line.startswith("Usage:"))
    assert re.search(r"\d+ of them reasoning\), \$\d+\.\d{4}$", usage_line), usage_line


# --- Azure: what a user types ------------------------------------------------------------------------


def test_azure_v1_base_url_is_what_users_type(monkeypatch):
    # Documented in the README: --base-url https://RESOURCE.openai.azure.com/openai/v1/ --model DEPLOYMENT
    # --api-key-env AZURE_OPENAI_API_KEY. The legacy deployment URL is refused with Azure's 404.
    profile = PROFILES["azure"]
    with server_for("azure") as server:
        done = cli_check(server, profile)
        assert done.returncode == 0, done.stderr
        legacy = f"http://127.0.0.1:{server.port}/openai/deployments/{profile.model}"
        env = dict(os.environ, AZURE_OPENAI_API_KEY=KEY)
        bad = run_cli("check", str(PAPER), "--assessor", "llm", "--model", profile.model, "--base-url", legacy, "--api-key-env", "AZURE_OPENAI_API_KEY", "--no-cache", cwd=ROOT, env=env)
    assert bad.returncode == 2 and "HTTP 404" in bad.stderr and "Traceback" not in bad.stderr


def test_azure_deployment_url_takes_api_key_header_and_api_version():
    # The SDK's AzureOpenAI client: /openai/deployments/{deployment}/chat/completions?api-version=..., key in
    # the api-key header. Without api-version Azure answers 404.
    with MockServer(profile="azure") as server:
        endpoint = f"http://127.0.0.1:{server.port}"
        client = openai.AzureOpenAI(api_key=KEY, azure_endpoint=endpoint, api_version="2024-10-21")
        raw = client.chat.completions.with_raw_response.create(
            model="my-deployment", messages=[{"role": "user", "content": "Answer: [Yes]\nJustification: ok"}],
            max_completion_tokens=2000)
        assert raw.http_request.headers["api-key"] == KEY
        assert raw.parse().usage.completion_tokens_details.reasoning_tokens > 0
        plain = openai.OpenAI(api_key=KEY, base_url=f"{endpoint}/openai/deployments/my-deployment")
        with pytest.raises(openai.NotFoundError):
            plain.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])


# --- contract: the loopback server's replies have the providers' published shapes --------------------


def same_shape(ours, theirs, where="reply") -> list[str]:
    """Differences in keys and value types between two JSON values (lists: their first elements)."""
    if isinstance(theirs, dict):
        if not isinstance(ours, dict):
            return [f"{where}: {type(ours).__name__} instead of an object"]
        problems = [f"{where}: keys {sorted(set(ours) ^ set(theirs))} differ"] if set(ours) != set(theirs) else []
        return problems + [p for k in set(ours) & set(theirs) for p in same_shape(ours[k], theirs[k], f"{where}.{k}")]
    if isinstance(theirs, list):
        if not isinstance(ours, list):
            return [f"{where}: {type(ours).__name__} instead of a list"]
        return same_shape(ours[0], theirs[0], f"{where}[0]") if ours and theirs else []
    kind = lambda v: "number" if isinstance(v, (int, float)) and not isinstance(v, bool) else type(v).__name__  # noqa: E731
    return [] if kind(ours) == kind(theirs) else [f"{where}: {kind(ours)} instead of {kind(theirs)}"]


def accepted_request(profile: Profile) -> dict:
    body = {"model": profile.model,
            "messages": [{"role": "user", "content": "Answer: [Yes]\nJustification: See Section 1."}]}
    if profile.refusal.__name__ == "reasoning_refusal":
        return body | {"max_completion_tokens": 4000}
    return body | {"temperature": 0.0, "max_tokens": 800}


def refused_requests(profile: Profile) -> list[dict]:
    base = accepted_request(profile)
    if profile.name in ("openai-reasoning", "azure"):
        return [base | {"temperature": 0.0}, {k: v for k, v in base.items() if k != "max_completion_tokens"}
                | {"max_tokens": 800}, base | {"logprobs": True}]
    if profile.name == "gemini-openai":
        return [base | {"logprobs": True}]
    json_schema = {"type": "json_schema", "json_schema": {"name": "v", "schema": {"type": "object"}}}
    if profile.name == "llama-cpp-python":
        return [base | {"response_format": json_schema}]
    if profile.name == "llama-cpp-python-logits-off":
        return [base | {"response_format": json_schema}, base | {"logprobs": True}]
    return []


@pytest.mark.parametrize("name", list(PROFILES))
def test_replies_match_the_providers_published_shapes(name):
    profile = PROFILES[name]
    recorded = json.loads((REPLIES / f"{name}.json").read_text("utf-8"))
    assert recorded["_sources"] and all(u.startswith("https://") for u in recorded["_sources"])
    assert recorded["_profile"] == name and set(profile.docs) & set(recorded["_sources"])  # cited in both
    with MockServer(profile=name) as server:
        client = openai.OpenAI(api_key=KEY, base_url=server.base_url, max_retries=0)
        raw = client.chat.completions.with_raw_response.create(**accepted_request(profile))
        reply = json.loads(raw.text)
        assert same_shape(reply, recorded["reply"]) == []
        parsed = raw.parse()  # and the SDK reads it
        assert parsed.choices[0].message.content and parsed.usage.total_tokens > 0
        errors = []
        for body in refused_requests(profile):
            with pytest.raises(openai.APIStatusError) as info:
                client.chat.completions.create(**body)
            assert info.value.status_code == recorded.get("error_status", 400)
            errors.append(info.value.response.json())
    assert len(errors) == len(recorded["errors"])
    for ours, theirs in zip(errors, recorded["errors"]):
        assert same_shape(ours, theirs, "error") == []
        if isinstance(theirs, dict):  # OpenAI's shape: the refused parameter and code match, not just types
            assert (ours["error"]["param"], ours["error"]["code"]) == (theirs["error"]["param"],
                                                                       theirs["error"]["code"])


# --- prices ------------------------------------------------------------------------------------------


def test_every_price_is_dated_sourced_and_batch_is_cheaper():
    data = json.loads((ROOT / "checklist_eval" / "endpoint" / "prices.json").read_text("utf-8"))["models"]
    table = PriceTable.load()
    for name in ("gpt-5", "gpt-5-mini", "gpt-5-nano", "o3", "o4-mini", "o1", "gpt-4o", "gpt-4.1",
                 "gemini-2.5-flash", "claude-sonnet-4-5"):
        assert name in data
    for name, entry in data.items():
        assert date.fromisoformat(entry["as_of"]) <= date(2026, 12, 31), name
        assert entry["source"].startswith("https://"), name
        price = table.lookup(name)
        assert price.batch_input is not None and price.batch_output is not None, name
        assert price.batch_input < price.input and price.batch_output < price.output, name
        if price.cached_input is not None:
            assert price.cached_input <= price.input, name
        assert price.cost(1_000_000, 1_000_000, batch=True) < price.cost(1_000_000, 1_000_000)
    assert table.lookup("claude-sonnet-4-5-20250929") is table.lookup("claude-sonnet-4-5")
    assert table.lookup("gpt-5.4") is None and table.lookup("o3-pro") is None  # not priced as gpt-5 / o3
    assert math.isclose(table.lookup("gpt-5-mini").cost(1000, 1000, 500), (500 * 0.25 + 500 * 0.025 + 1000 * 2) / 1e6)


def test_mock_server_command_serves_a_profile():
    # checklist-eval mock-server --profile azure: prints the base URL a user would type, answers there.
    proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", "mock-server", "--port", "0", "--profile",
                             "azure"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/openai/v1")
        client = openai.OpenAI(api_key=KEY, base_url=base_url, max_retries=0, timeout=10)
        with pytest.raises(openai.BadRequestError, match="temperature"):
            client.chat.completions.create(model="gpt-5-mini", temperature=0,
                                           messages=[{"role": "user", "content": "hi"}])
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    from checklist_eval.cli.mock_server import PROFILE_NAMES

    assert PROFILE_NAMES == tuple(PROFILES)  # the flag's choices are the profiles
    bad = run_cli("mock-server", "--profile", "nope", cwd=ROOT)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def _refusing(param: str, body) -> Profile:
    """A profile refusing ``param`` (whenever sent) with ``body``: the other shapes a 400 comes in."""
    return Profile(f"refuses-{param}", model="gpt-4o-mini", base_path="/v1", docs=(),
                   refusal=lambda req: (400, body) if param in req else None)


@pytest.mark.parametrize("param,body", [
    # vLLM's flat body holding pydantic's error list: the parameter only inside the message
    ("logprobs", {"object": "error", "type": "BadRequestError", "param": None, "code": 400,
                  "message": "[{'type': 'extra_forbidden', 'loc': ('body', 'logprobs'), "
                             "'msg': 'Extra inputs are not permitted'}]"}),
    # a bare sentence, unquoted, no param field
    ("temperature", {"error": {"message": "temperature is not supported with this model", "type": "invalid_request",
                               "param": None, "code": None}}),
    # Anthropic's native error shape
    ("top_logprobs", {"type": "error", "error": {"type": "invalid_request_error",
                                                 "message": "top_logprobs: Extra inputs are not permitted"}}),
])
def test_refusals_named_only_in_the_message_are_learned(param, body, monkeypatch):
    monkeypatch.setenv("CE_PROVIDER_KEY", KEY)
    profile = _refusing(param, body)
    monkeypatch.setitem(PROFILES, profile.name, profile)
    with MockServer(profile=profile.name) as server:
        assessor = llm(server, profile, concurrency=1)
        out = run(assessor, sample_paper(n_questions=3))
        assert server.stats.by_status == {400: 1, 200: 3}
    learned = out[-1].provenance.quirks
    assert len(learned) == 1 and learned[0].startswith(("logprobs" if "logprobs" in param else param))


def test_rerun_from_the_cache_sends_nothing_and_keeps_the_quirks(tmp_path, monkeypatch):
    monkeypatch.setenv("CE_PROVIDER_KEY", KEY)
    profile = PROFILES["openai-reasoning"]
    paper = load_paper(str(PAPER))
    db = tmp_path / "cache.sqlite"
    with server_for("openai-reasoning") as server:
        first = run(make_assessor("llm", model=profile.model, base_url=server.base_url, api_key_env="CE_PROVIDER_KEY",
                                  cache_path=db, concurrency=1), paper)
        before = server.stats.requests
        again = run(make_assessor("llm", model=profile.model, base_url=server.base_url,
                                  api_key_env="CE_PROVIDER_KEY", cache_path=db), paper)
        assert server.stats.requests == before
    assert all(a.provenance.cached for a in again)
    assert [a.correct for a in again] == [a.correct for a in first]
    assert [a.provenance.quirks for a in again] == [a.provenance.quirks for a in first]


def test_score_and_batch_take_reasoning_effort_and_never_show_zero_for_an_unknown_price(tmp_path):
    for command in ("check", "score", "batch"):
        shown = run_cli(command, "--help", cwd=ROOT, env=dict(os.environ, COLUMNS="200"))
        assert "--reasoning-effort {minimal,low,medium,high}" in shown.stdout
    with server_for("ollama") as server:
        done = run_cli("score", str(ROOT / "fixtures" / "submissions" / "team-alpha"), "--assessor", "llm", "--model", "llama3.1", "--base-url", server.base_url, "--no-cache", "--out", str(tmp_path / "out"), cwd=ROOT, env=dict(os.environ, COLUMNS="200"))
    assert done.returncode == 0, done.stderr
    assert "cost price unknown" in done.stdout and "$0.0000" not in done.stdout
    assert "price unknown" in (tmp_path / "out" / "report.html").read_text("utf-8")


def _refuses_list_bounds(req) -> tuple[int, dict] | None:
    schema = json.dumps((req.get("response_format") or {}).get("json_schema") or {})
    if "maxItems" not in schema:
        return None
    # the words strict-mode schema checks use for a keyword they do not take
    return 400, openai_error("Invalid schema for response_format 'verdict': In context=('properties', 'evidence'), "
                             "'maxItems' is not permitted.", "response_format", None)


def test_a_provider_refusing_the_schemas_list_bound_falls_back_to_json_object(monkeypatch):
    # The schema bounds its lists (maxItems) so that a grammar cannot fill one until max_tokens; a provider
    # whose schema subset lacks the keyword refuses once, and the run goes on in json_object.
    monkeypatch.setenv("CE_PROVIDER_KEY", KEY)
    profile = Profile("refuses-maxitems", model="gpt-4o-mini", base_path="/v1", docs=(),
                      refusal=_refuses_list_bounds)
    monkeypatch.setitem(PROFILES, profile.name, profile)
    with MockServer(profile=profile.name) as server:
        out = run(llm(server, profile, concurrency=1), sample_paper(n_questions=3))
        assert server.stats.by_status == {400: 1, 200: 3}
    assert {a.provenance.strategy for a in out} == {"json_object"}


def test_a_llama_server_refusing_the_grammar_is_sent_the_schema(monkeypatch):
    # The compact grammar goes where /props says llama.cpp's server; a build that cannot parse it says so in
    # a 400 naming the grammar, and the run goes on with response_format's schema, learned once.
    monkeypatch.setenv("CE_PROVIDER_KEY", KEY)
    profile = Profile("refuses-grammar", model="gpt-4o-mini", base_path="/v1", docs=(),
                      refusal=lambda req: (400, openai_error("Failed to parse grammar", None, None))
                      if "grammar" in req else None)
    monkeypatch.setitem(PROFILES, profile.name, profile)
    with MockServer(profile=profile.name, props=True) as server:
        out = run(llm(server, profile, concurrency=1), sample_paper(n_questions=3))
        assert server.stats.by_status == {400: 1, 200: 3}
    assert {a.provenance.strategy for a in out} == {"json_schema"}
    assert any(q.startswith("grammar") for q in out[-1].provenance.quirks)
