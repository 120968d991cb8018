"""What an engine's own API says, over real HTTP to the loopback server (issue 45 item 5): Ollama's window
from ``/api/ps`` (after loading the model as Ollama's API does) or the Modelfile's ``num_ctx`` in
``/api/show``, in the reply shapes of Ollama's source (``checklist_eval/testing/ollama.py``); and the model
the engine says it serves (llama.cpp's ``/props`` model path, a single-model server's ``/v1/models`` id) as
part of the response cache's key, so another model behind the same port never gets the first one's verdicts."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cli_runner import run_cli
import pytest
from helpers import assess_and_close

from checklist_eval.assessors import make_assessor
from checklist_eval.endpoint.served import (OLLAMA_LOADED, keyed_model, ollama_modelfile_window,
                                            stated_identity)
from checklist_eval.testing import MockServer, sample_paper

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "fixtures" / "papers" / "genuine"
KEY_ENV = "CE_IDENTITY_KEY"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "local")


def llm(server: MockServer, **config):
    options = dict(model="llama3.1", base_url=server.base_url, api_key_env=KEY_ENV, no_cache=True,
                   backoff_initial=0.01) | config
    return make_assessor("llm", **options)


# --- Ollama: the window its API states -----------------------------------------------------------


def test_ollamas_window_is_read_from_its_api_and_a_long_paper_is_fitted_not_cut():
    # Before: an unknown model was assumed to hold 128k tokens, the whole paper was sent, Ollama cut it to
    # its 4,096-token default without a word, and the run stopped on the cut (no verdict at all).
    paper = sample_paper(n_questions=4, body_chars=60_000)
    with MockServer(profile="ollama", context_tokens=4096) as server:
        a = llm(server)
        out = assess_and_close(a, paper)
        stats, loads = server.stats, server.ollama.loads
    assert (a.window.tokens, a.window.source) == (4096, OLLAMA_LOADED)
    assert loads == 1  # not loaded before the run: loaded through its API, then /api/ps said its window
    assert len(out) == 4 and stats.by_status == {200: 4}
    assert all(x.provenance.context_share is not None and x.provenance.context_share < 0.5 for x in out)


def test_ollama_already_loaded_is_not_loaded_again_and_a_paper_that_fits_goes_whole():
    paper = sample_paper(n_questions=3, body_chars=6_000)
    with MockServer(profile="ollama", context_tokens=32_768) as server:
        server.ollama.loaded = True
        a = llm(server)
        out = assess_and_close(a, paper)
        loads = server.ollama.loads
    assert loads == 0 and a.window.tokens == 32_768
    assert [x.provenance.context_share for x in out] == [1.0] * 3


def test_the_modelfiles_num_ctx_is_read_from_api_show_in_ollamas_format():
    with MockServer(profile="ollama", context_tokens=4096) as server:
        server.ollama.modelfile_num_ctx = 8192
        import urllib.request
        request = urllib.request.Request(f"http://127.0.0.1:{server.port}/api/show", method="POST",
                                          data=json.dumps({"model": "llama3.1"}).encode())
        with urllib.request.urlopen(request, timeout=30) as reply:
            show = json.loads(reply.read())
    assert "num_ctx                        8192" in show["parameters"]  # Go's "%-30s %#v"
    assert ollama_modelfile_window(show) == 8192
    assert ollama_modelfile_window(show | {"parameters": "num_ctx 262144"}) == 131_072  # the trained context caps it
    assert ollama_modelfile_window(show | {"parameters": 'stop "<|eot_id|>"'}) is None  # the default: unseen


def test_a_server_without_ollamas_api_is_not_taken_for_one():
    paper = sample_paper(n_questions=2, body_chars=3_000)
    with MockServer(profile="vllm") as server:
        a = llm(server, model=server.model)
        assess_and_close(a, paper)
        stats = server.stats
    assert a.window.source != OLLAMA_LOADED and stats.by_status == {200: 2}  # its 404s are probes, not chat


# --- the model the engine says it serves ----------------------------------------------------------


def check(port: int, model_file: str, cache: Path, asked_as: str = "gemma-a.gguf"):
    """``check`` of the fixture paper against llama.cpp's server (the profile) started on ``port`` with
    ``model_file``, the user typing ``--model asked_as`` (llama.cpp's server answers any name)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["CHECKLIST_EVAL_CACHE"] = str(cache)
    with MockServer(profile="llama.cpp-server", model=model_file, port=port) as server:
        done = run_cli("check", str(PAPER), "--assessor", "llm", "--json", "--model", asked_as, "--base-url",
                       server.base_url, "--api-key-env", KEY_ENV, cwd=ROOT, env=env)
        return done, server.stats


def test_another_model_behind_the_same_port_does_not_get_the_first_ones_verdicts(tmp_path):
    # Before: the key named the endpoint and the --model typed; llama.cpp's server restarted with another
    # file on the same port was served every verdict of the first model from the cache.
    cache = tmp_path / "cache.sqlite"
    with MockServer() as probe_port:
        port = probe_port.port
    first, stats = check(port, "gemma-a.gguf", cache)
    assert first.returncode == 0, first.stderr
    asked = stats.chat_requests
    assert asked > 0
    other, stats = check(port, "/models/qwen-b.gguf", cache)
    assert other.returncode == 0, other.stderr
    assert stats.chat_requests >= asked  # asked afresh of the other model
    assert "now serves /models/qwen-b.gguf" in other.stderr
    again, stats = check(port, "gemma-a.gguf", cache)  # the first model back: its verdicts are found
    assert again.returncode == 0, again.stderr
    assert stats.chat_requests == 0 and stats.probes >= 1
    assert json.loads(again.stdout)["items"] == json.loads(first.stdout)["items"]


def test_the_identity_rules():
    props = {"model_path": "/root/models/gemma-3-270m-q4_k_m.gguf"}
    assert stated_identity(None, props, "gemma-3-270m-q4_k_m.gguf") == props["model_path"]
    assert keyed_model("gemma-3-270m-q4_k_m.gguf", props["model_path"]) == "gemma-3-270m-q4_k_m.gguf"  # same file
    assert keyed_model("gemma", props["model_path"]) == f"gemma @ {props['model_path']}"
    one = {"data": [{"id": "/models/gemma.gguf", "owned_by": "me", "permissions": []}]}
    assert stated_identity(one, None, "gemma", single_model_server=True) == "/models/gemma.gguf"  # llama-cpp-python
    assert stated_identity(one, None, "gemma") == ""  # a server that routes by the name: the name is the model
    many = {"data": [{"id": "gpt-4o"}, {"id": "gpt-4o-mini"}]}
    assert stated_identity(many, None, "gpt-4o-mini") == "" and keyed_model("gpt-4o-mini", "") == "gpt-4o-mini"
