"""What a serving engine says about itself before it is sent any work: its context window per request
and how many requests it runs at once.

    facts = await probe(client, base_url, model)   # EngineFacts(context_tokens, slots, source)

- ``GET {base_url}/models``: the entry of ``model`` (else the only entry) may carry its window: vLLM's
  ``max_model_len``, OpenRouter's and LM Studio's ``context_length`` / ``max_context_length``. A 401
  here is the key's refusal: it is raised, and the run stops as a chat request's would; a 403 is a key
  that may chat but not list models (an answer about listing): no fact.
- ``GET {server root}/props``: llama.cpp's server; ``default_generation_settings.n_ctx`` is the window of
  one slot (the ``-c`` it was started with divided by its parallel slots) and ``total_slots`` how many
  requests it runs at once. A request beyond its slots waits in the engine's queue, where our timeout
  would run out for nothing; the scheduler keeps no more than that in flight (``Scheduler.set_slots``).
  Its slots share that one window by default (a unified KV cache), so the prompts in flight are kept
  within it from the first request (``Scheduler.memory_tokens``): four 24k-token prompts of a shared paper,
  sent at once to its 4 slots, filled it, and each was answered 500 "Context size has been exceeded."

- The /v1/models entries of llama-cpp-python's server (``owned_by`` "me", an empty ``permissions`` list, in
  0.3.36's ``server/app.py``): it takes the verdict's schema inside a json_object ``response_format``
  (``assessors.llm.grammar.object_with_schema``), and its log-probabilities are costly. Its server keeps every token's
  logits by default (``logits_all`` True) and computes each generated token's log-probabilities over the
  whole 262k vocabulary of Gemma 3 in Python: a 93-token verdict took 127 s with them and 13 s without, on
  2 cores. Under ``--logprobs auto`` they are not asked for there (p_correct from the verdict alone).

- Ollama's own API (``/api/ps``, ``/api/show``; ``endpoint.served``), asked of a server that is neither of the
  above: the window its loaded model really has (its OpenAI routes cut a longer prompt without a word).
- The model the engine says it serves (``/props`` model path, llama-cpp-python's one model id) is part of the
  cache's key (``EngineFacts.identity``, ``endpoint.served.keyed_model``).

- Behind a proxy (LiteLLM's) neither is seen: llama.cpp's server is then known by a reply
  (``is_llama_server_reply``). A proxy known by its /v1/models (``is_proxy_listing``) is asked one question
  of one token first, so that even the first verdict is asked under the compact grammar: under the padded
  schema grammar Gemma 3 270M wrote its first verdict at 0.6 tokens/s on 2 busy cores, past the proxy's
  600 s timeout. Elsewhere the first reply of the run teaches it.

Both go through the assessor's own client (its bounded transport, the key only to its own host); any
other failure or unreadable reply is simply no fact.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2
import openai

from checklist_eval.endpoint.retry import EndpointFault
from checklist_eval.endpoint.served import (
    OLLAMA_LOADED,
    OLLAMA_MODELFILE,
    is_ollama_ps,
    ollama_loaded_window,
    ollama_modelfile_window,
    stated_identity,
)
from checklist_eval.fsutil import loads_json

__all__ = ["EngineFacts", "facts_of_props", "is_llama_cpp_python", "is_llama_server", "is_llama_server_reply",
           "is_proxy_listing", "probe", "props_url",
           "window_of_models"]

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 10.0
PROXY_PROBE_TIMEOUT_S = 120.0  # a one-token answer, perhaps queued behind another run's work on a CPU
_WINDOW_FIELDS = ("max_model_len", "context_length", "max_context_length", "context_window", "n_ctx")
MAX_SANE_TOKENS = 100_000_000  # a window or slot count beyond this is garbage, not a fact


@dataclass(frozen=True)
class EngineFacts:
    context_tokens: int | None = None
    slots: int | None = None
    source: str = ""  # where the window was read ("engine /props", "engine /v1/models")
    grammar: bool = False  # takes a GBNF ``grammar`` field: llama.cpp's server, known by its /props
    object_schema: bool = False  # takes a schema inside json_object: llama-cpp-python, known by /v1/models
    costly_logprobs: str = ""  # why log-probabilities cost more than they are worth here ("" when they do not)
    # llama.cpp's server behind a proxy, known by the reply to a one-token question (``ask_behind_proxy``);
    # that reply's ``usage`` is in ``probe_usage``, for the ledger.
    behind_proxy: bool = False
    probe_usage: Any = None
    # The slots share one memory of ``context_tokens``: llama.cpp's server gives its slots one KV cache by
    # default (its log: ``n_ctx_slot = 32768, kv_unified = 'true'``; /props gives that n_ctx, no flag).
    shared_memory: bool = False
    identity: str = ""  # the model the engine says it serves (``endpoint.served.stated_identity``)


def props_url(base_url: str, route: str = "/props") -> str:
    """llama.cpp's /props (and Ollama's /api routes) sit at the server root, beside the /v1 of its
    OpenAI-compatible routes."""
    parts = urlsplit(base_url.rstrip("/"))
    path = parts.path[:-3] if parts.path.endswith("/v1") else parts.path
    return urlunsplit((parts.scheme, parts.netloc, f"{path}{route}", "", ""))


def _count(value: Any) -> int | None:
    return value if type(value) is int and 0 < value < MAX_SANE_TOKENS else None


def window_of_models(listing: Any, model: str) -> int | None:
    """The window a /v1/models listing gives ``model`` (or its only entry), else None."""
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    mine = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in mine[:1]:
        for key in _WINDOW_FIELDS:
            found = _count(entry.get(key))
            if found:
                return found
    return None


def facts_of_props(props: Any) -> tuple[int | None, int | None]:
    """(window per slot, slots) from llama.cpp's /props."""
    if not isinstance(props, dict):
        return None, None
    settings = props.get("default_generation_settings")
    n_ctx = _count(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return n_ctx, _count(props.get("total_slots"))


def is_llama_server(props: Any) -> bool:
    """/props in llama.cpp's server's own shape (its generation settings and slot count)."""
    return (isinstance(props, dict) and isinstance(props.get("default_generation_settings"), dict)
            and _count(props.get("total_slots")) is not None)


def is_llama_cpp_python(listing: Any) -> bool:
    """/v1/models in llama-cpp-python's server's own shape: every entry ``owned_by`` "me" with a
    ``permissions`` list (no other server we know answers so)."""
    data = listing.get("data") if isinstance(listing, dict) else None
    return (isinstance(data, list) and bool(data) and all(
        isinstance(e, dict) and e.get("owned_by") == "me" and isinstance(e.get("permissions"), list) for e in data))


def is_llama_server_reply(headers: Mapping[str, str], completion: Any) -> bool:
    """A chat reply from llama.cpp's server, even behind a proxy that hides its /props: its ``Server:
    llama.cpp`` header (LiteLLM's proxy forwards it as ``llm_provider-server``), else its ``timings``
    (prompt and predicted token counts and times), which LiteLLM passes through in the body."""
    for name in ("server", "llm_provider-server"):
        if headers.get(name, "").strip().lower().startswith("llama.cpp"):
            return True
    timings = completion.get("timings") if isinstance(completion, dict) else None
    return isinstance(timings, dict) and {"prompt_n", "predicted_n", "predicted_ms"} <= timings.keys()


def is_proxy_listing(listing: Any, model: str, base_url: str) -> bool:
    """/v1/models of a proxy routing to an OpenAI-compatible backend (LiteLLM's lists such a model ``owned_by``
    "openai"), served from a host that is not OpenAI's own: the engine behind it is not named."""
    data = listing.get("data") if isinstance(listing, dict) else None
    entries = [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []
    mine = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    host = (urlsplit(base_url).hostname or "").lower()
    return bool(mine) and mine[0].get("owned_by") == "openai" and not host.endswith("openai.com")


PROXY_QUESTION = "Reply with the single word OK."


async def _ask_behind_proxy(client: openai.AsyncOpenAI, model: str, timeout: float) -> tuple[bool, Any]:
    """(llama.cpp's server answered, the reply's usage) for one question of one token through the proxy."""
    body = {"model": model, "messages": [{"role": "user", "content": PROXY_QUESTION}], "max_tokens": 1}
    try:
        response = await client.post("/chat/completions", cast_to=httpx2.Response, body=body,
                                     options={"timeout": timeout})
        completion = loads_json(response.content)
    except (openai.AuthenticationError, openai.PermissionDeniedError):
        raise
    except (openai.APIError, EndpointFault, ValueError, RecursionError) as err:  # no answer is no fact
        log.debug("probe behind a proxy: %s", type(err).__name__)
        return False, None
    usage = completion.get("usage") if isinstance(completion, dict) else None
    return is_llama_server_reply(response.headers, completion), usage


LLAMA_CPP_PYTHON_LOGPROBS = ("llama-cpp-python computes them over the whole vocabulary for every token "
                             "(about ten times the reply's time)")


async def _get_json(client: openai.AsyncOpenAI, url: str, timeout: float, body: Any = None) -> Any:
    """The JSON an engine's route answers (a POST when ``body`` is given), else None."""
    try:
        if body is None:
            response = await client.get(url, cast_to=httpx2.Response, options={"timeout": timeout})
        else:
            response = await client.post(url, cast_to=httpx2.Response, body=body, options={"timeout": timeout})
        return loads_json(response.content)
    except openai.AuthenticationError:  # the key itself is refused: every chat request would be too
        raise
    except openai.PermissionDeniedError:  # a key that may chat but not list models: an answer about listing
        log.info("probe %s: the key may not read it (HTTP 403); no fact", url.split("?")[0])
        return None
    # A reply too large or garbled is the endpoint's fault, but about a question it need not answer: no fact.
    except (openai.APIError, EndpointFault, ValueError, RecursionError) as err:
        log.debug("probe %s: %s", url.split("?")[0], type(err).__name__)
        return None


async def probe(client: openai.AsyncOpenAI, base_url: str, model: str, ask_behind_proxy: bool = True,
                timeout: float = PROXY_PROBE_TIMEOUT_S) -> EngineFacts:
    """The engine's facts (see the module docstring); an empty ``EngineFacts`` when it says nothing.
    ``ask_behind_proxy``: a proxy is asked one question of one token to learn the engine behind it.
    ``timeout``: the most any of its requests may take (``--timeout``: a probe is a request like another)."""
    listing = await _get_json(client, "/models", min(PROBE_TIMEOUT_S, timeout))
    window, source = window_of_models(listing, model), "engine /v1/models"
    props = await _get_json(client, props_url(base_url), min(PROBE_TIMEOUT_S, timeout))
    n_ctx, slots = facts_of_props(props)
    if n_ctx:  # the window one request really gets, where /models may give the model's trained one
        window, source = n_ctx, "engine /props"
    python_server, llama_server = is_llama_cpp_python(listing), is_llama_server(props)
    behind, usage = False, None
    if ask_behind_proxy and not (python_server or llama_server) and is_proxy_listing(listing, model, base_url):
        behind, usage = await _ask_behind_proxy(client, model, timeout)
    elif not (python_server or llama_server or behind):
        ollama = await _ollama_window(client, base_url, model, timeout)
        window, source = ollama or (window, source)
    return EngineFacts(context_tokens=window, slots=slots, source=source if window else "",
                       grammar=llama_server, shared_memory=llama_server and bool(n_ctx), object_schema=python_server,
                       costly_logprobs=LLAMA_CPP_PYTHON_LOGPROBS if python_server else "", behind_proxy=behind,
                       probe_usage=usage, identity=stated_identity(listing, props, model,
                                                                   single_model_server=python_server))


async def _ollama_window(client: openai.AsyncOpenAI, base_url: str, model: str,
                         timeout: float) -> tuple[int, str] | None:
    """(window, source) as Ollama's own API says it (``endpoint.served``); None from any other server. A model
    not loaded yet is loaded (Ollama's /api/generate with no prompt), so /api/ps can say the window it got."""
    ps = await _get_json(client, props_url(base_url, "/api/ps"), min(PROBE_TIMEOUT_S, timeout))
    if not is_ollama_ps(ps):
        return None
    loaded = ollama_loaded_window(ps, model)
    if loaded is None and await _get_json(client, props_url(base_url, "/api/generate"), timeout, {"model": model}):
        loaded = ollama_loaded_window(await _get_json(client, props_url(base_url, "/api/ps"),
                                                      min(PROBE_TIMEOUT_S, timeout)), model)
    if loaded is not None:
        return loaded, OLLAMA_LOADED
    show = await _get_json(client, props_url(base_url, "/api/show"), min(PROBE_TIMEOUT_S, timeout), {"model": model})
    modelfile = ollama_modelfile_window(show)
    return (modelfile, OLLAMA_MODELFILE) if modelfile else None
