"""Provider profiles for the loopback server: how each OpenAI-compatible provider differs from OpenAI's own
chat models, as its documentation (and, for error bodies, the replies users have posted) says.

    MockServer(profile="openai-reasoning")      checklist-eval mock-server --profile azure

A profile decides, for one chat request: where it may be sent and with which key header (``route``), which
parameter it refuses and with what error body (``refusal``), whether ``response_format`` is honoured or
ignored, whether logprobs come back, how many reasoning tokens the answer costs, and the exact shape of
the reply (``shape``). The verdicts themselves stay the server's (a pure function of the prompt).

Sources, one block per profile below; the reply shapes are pinned by ``fixtures/provider_replies/``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from checklist_eval.testing.engines import (
    LLAMA_CPP_PYTHON_DOCS,
    LLAMA_CPP_PYTHON_LOGPROB_S,
    LLAMA_SERVER_DOCS,
    llama_cpp_python_completions,
    llama_cpp_python_error,
    llama_cpp_python_format_refusal,
    llama_cpp_python_list_refusal,
    llama_cpp_python_model_entry,
    llama_cpp_python_refusal,
    llama_server_props,
    shape_litellm_llama_server,
    shape_llama_cpp_python,
    shape_llama_server,
)

__all__ = ["PROFILES", "Profile", "get_profile"]

# A reply the server should send instead of answering: (status, JSON body).
Rejection = tuple[int, Any]

REASONING_EFFORTS = ("minimal", "low", "medium", "high")
# Reasoning tokens per answer by effort (a fixed share, plus a deterministic 0-63 spread per question), so
# "high" overruns the default 800-token budget and the client has to raise it, as real runs do.
EFFORT_TOKENS = {"minimal": 0, "low": 96, "medium": 320, "high": 1200}
# llama-cpp-python reads max_tokens=0 as "until the context is full" (up to 2048 - prompt tokens at its
# default n_ctx); the loopback server generates this many in its place
LLAMA_CPP_PYTHON_FILL = 64


def _spread(text: str) -> int:
    return hashlib.sha256(text.encode("utf-8")).digest()[0] % 64


def _cut_json(content: Any) -> bool:
    """A reply that starts a JSON object and never finishes it (cut off at max_tokens)."""
    if not isinstance(content, str) or not content.lstrip().startswith("{"):
        return False
    try:
        json.loads(content)
    except ValueError:
        return True
    return False


# --- error bodies, one builder per provider family ---------------------------------------------------


def openai_error(message: str, param: str | None, code: str | None,
                 etype: str = "invalid_request_error") -> dict[str, Any]:
    """OpenAI's (and Azure's) error body: https://platform.openai.com/docs/guides/error-codes"""
    return {"error": {"message": message, "type": etype, "param": param, "code": code}}


def vllm_error(message: str) -> dict[str, Any]:
    """vLLM's ErrorResponse: flat, ``object: "error"``, the HTTP status as ``code``
    (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html)."""
    return {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}


def google_error(message: str) -> list[dict[str, Any]]:
    """Gemini's OpenAI endpoint wraps a google.rpc error in a JSON list, with no ``param`` field; the field
    is named only inside the message (as posted in https://github.com/MinLL/SkyrimNet-GamePlugin/issues/77
    and https://github.com/Alishahryar1/free-claude-code/issues/542)."""
    return [{"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT", "details": [
        {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"description": message}]}]}}]


def _unsupported_parameter(param: str, hint: str = "") -> Rejection:
    return 400, openai_error(f"Unsupported parameter: '{param}' is not supported with this model.{hint}",
                             param, "unsupported_parameter")


def _unsupported_value(param: str, value: Any) -> Rejection:
    return 400, openai_error(f"Unsupported value: '{param}' does not support {value} with this model. "
                             "Only the default (1) value is supported.", param, "unsupported_value")


def reasoning_refusal(req: dict[str, Any]) -> Rejection | None:
    """OpenAI's reasoning models (gpt-5 family, o-series): sampling knobs other than the default, ``max_tokens``
    and logprobs are refused, one 400 at a time, naming the parameter in ``param``
    (https://platform.openai.com/docs/guides/reasoning; the error bodies as in
    https://github.com/gabrii/Cursor-Azure-GPT-5/issues/33 and https://github.com/OpenHands/OpenHands/issues/4131)."""
    for knob in ("temperature", "top_p"):
        if knob in req and req[knob] is not None and float(req[knob]) != 1.0:
            return _unsupported_value(knob, req[knob])
    if "max_tokens" in req:
        return _unsupported_parameter("max_tokens", " Use 'max_completion_tokens' instead.")
    for knob in ("logprobs", "top_logprobs"):
        if req.get(knob):
            return _unsupported_parameter(knob)
    effort = req.get("reasoning_effort")
    if effort is not None and effort not in REASONING_EFFORTS:
        return 400, openai_error(f"Invalid value: '{effort}'. Supported values are: "
                                 f"{', '.join(repr(e) for e in REASONING_EFFORTS)}.", "reasoning_effort",
                                 "invalid_value")
    return None


def chat_refusal(req: dict[str, Any]) -> Rejection | None:
    """OpenAI's chat models (gpt-4o, gpt-4.1) take every sampling knob but not ``reasoning_effort``."""
    if req.get("reasoning_effort") is not None:
        return _unsupported_parameter("reasoning_effort")
    return None


def gemini_refusal(req: dict[str, Any]) -> Rejection | None:
    """Fields Gemini's OpenAI endpoint does not know are refused by name ("Unknown name ...: Cannot find
    field"); logprobs are not part of its compatibility surface (https://ai.google.dev/gemini-api/docs/openai)."""
    unknown = [k for k in ("logprobs", "top_logprobs", "seed", "frequency_penalty") if k in req]
    if unknown:
        return 400, google_error("\n".join(f'Invalid JSON payload received. Unknown name "{k}": Cannot find field.'
                                           for k in unknown))
    effort = req.get("reasoning_effort")
    if effort is not None and effort not in ("minimal", "low", "medium", "high", "none"):
        return 400, google_error(f"Invalid reasoning_effort value: {effort}")
    return None


# --- reply shapes ------------------------------------------------------------------------------------


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def shape_openai(body: dict[str, Any], t: dict[str, int]) -> dict[str, Any]:
    """The chat.completion object of https://platform.openai.com/docs/api-reference/chat/object"""
    body["usage"] = _usage(t["prompt"], t["completion"]) | {
        "prompt_tokens_details": {"cached_tokens": t["cached"], "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": t["reasoning"], "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
    body["service_tier"] = "default"
    body["system_fingerprint"] = "fp_mock"
    body["choices"][0]["message"]["annotations"] = []
    return body


def shape_azure(body: dict[str, Any], t: dict[str, int]) -> dict[str, Any]:
    """Azure adds content-filter verdicts per prompt and per choice
    (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/reference#chat-completions)."""
    body = shape_openai(body, t)
    body.pop("service_tier", None)
    filters = {k: {"filtered": False, "severity": "safe"} for k in ("hate", "self_harm", "sexual", "violence")}
    body["prompt_filter_results"] = [{"prompt_index": 0, "content_filter_results": dict(filters)}]
    body["choices"][0]["content_filter_results"] = dict(filters)
    return body


def shape_vllm(body: dict[str, Any], t: dict[str, int]) -> dict[str, Any]:
    """vLLM: ``prompt_tokens_details`` is null unless the server runs with --enable-prompt-tokens-details,
    ``stop_reason`` per choice, ``prompt_logprobs`` at the top
    (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html)."""
    body["usage"] = _usage(t["prompt"], t["completion"]) | {"prompt_tokens_details": None}
    body["choices"][0]["stop_reason"] = None
    body["choices"][0]["message"]["tool_calls"] = []
    body["prompt_logprobs"] = None
    return body


def shape_plain(body: dict[str, Any], t: dict[str, int]) -> dict[str, Any]:
    """Ollama, Gemini's and Anthropic's OpenAI endpoints: prompt, completion and total tokens only
    (https://docs.ollama.com/api/openai-compatibility, https://ai.google.dev/gemini-api/docs/openai,
    https://platform.claude.com/docs/en/api/openai-sdk)."""
    body["usage"] = _usage(t["prompt"], t["completion"])
    if body["choices"][0].get("logprobs") is None:
        body["choices"][0].pop("logprobs", None)
    body["choices"][0]["message"].pop("refusal", None)
    return body


def shape_ollama(body: dict[str, Any], t: dict[str, int]) -> dict[str, Any]:
    body = shape_plain(body, t)
    body["system_fingerprint"] = "fp_ollama"
    return body


# --- the profiles ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """How one provider answers. ``base_path`` is the path of the base URL a user types."""

    name: str
    model: str
    base_path: str
    docs: tuple[str, ...]
    refusal: Callable[[dict[str, Any]], Rejection | None] = chat_refusal
    shape: Callable[[dict[str, Any], dict[str, int]], dict[str, Any]] = shape_openai
    response_formats: frozenset[str] = frozenset({"json_schema", "json_object"})
    ignores_response_format: bool = False  # the field is accepted and ignored (Anthropic)
    grammar_whitespace: bool = False  # JSON replies padded as a grammar lets a small model pad them (llama.cpp)
    # A prompt over the context: refused (None), or cut to its last tokens without an error, as Ollama does
    # (its context is 2,048 or 4,096 tokens unless OLLAMA_CONTEXT_LENGTH or num_ctx says more).
    cut_prompt: Callable[[list[str], int], list[str]] = field(default=lambda prompt, n: prompt)
    # A json_schema array with no maxItems is filled with "1", "2", ... until max_tokens, on half the
    # questions (by a digest of the question), as Gemma 3 270M under llama.cpp's grammar did.
    arrays_run_away: bool = False
    takes_grammar: bool = False  # a GBNF ``grammar`` field constrains the reply (llama.cpp's server)
    # Under a grammar, a string of the reply runs to max_tokens ("1000000...") for one conversation in eight
    # (by its digest), and a conversation that shows the model such a cut reply gets it again: Gemma 3 270M
    # on llama.cpp's server did both (its temperature-0 answers vary with what shares the batch).
    strings_run_away: bool = False
    logprobs: bool = True  # returned when asked for
    reports_cached: bool = True  # prompt-prefix cache hits reported in usage
    reasoning: bool = False  # reasoning tokens spent (and reported) per answer
    default_effort: str = "medium"
    key_header: str = "authorization"  # where the key travels ("api-key" on Azure)
    strict_paths: bool = True  # only base_path/chat/completions (and /models) are served
    error: Callable[[str], Any] = field(default=lambda m: openai_error(m, None, None))
    # What /v1/completions refuses before running the model (None: the request is answered).
    completions_refusal: Callable[[Any], Rejection | None] = field(default=lambda req: None)
    props: Callable[[str], dict[str, Any]] | None = None  # GET /props (llama.cpp's server), given the model
    prompt_logprobs: bool = True  # /v1/completions honours echo (and vLLM's prompt_logprobs)
    zero_max_tokens_fills: int = 0  # tokens /v1/completions generates for max_tokens=0 (llama-cpp-python: all)
    # GET /models: one entry for the model (llama-cpp-python's has its own shape, by which a client knows it)
    model_entry: Callable[[str], dict[str, Any]] = field(default=lambda model: {
        "id": model, "object": "model", "created": 0, "owned_by": "checklist-eval"})
    object_schema: bool = False  # a ``schema`` inside json_object constrains the reply (llama-cpp-python)
    pads_json_object: bool = False  # a bare json_object's generic JSON grammar lets whitespace in (llama-cpp-python)
    logprob_work_s: float = 0.0  # seconds per generated token spent on log-probabilities when asked for
    raw_newlines: bool = False  # a grammar that lets raw control characters into strings (llama-cpp-python's)
    headers: tuple[tuple[str, str], ...] = ()  # sent with every chat reply (llama.cpp's "Server: llama.cpp")

    def route(self, method: str, path: str, query: str, headers: dict[str, str]) -> Rejection | str | None:
        """None when the request is not a chat completion here, a Rejection when it is refused before it is
        read, or the deployment/model name the path selects ("" when the body names the model)."""
        if not path.endswith("/chat/completions") or method != "POST":
            return None
        if self.name == "azure":
            return _azure_route(path, query, headers)
        if self.strict_paths and path != f"{self.base_path}/chat/completions":
            return 404, self.error(f"no route POST {path}")
        return ""

    def runs_away(self, req: dict[str, Any], question: str) -> bool:
        """Whether this reply fills an unbounded schema array until it is cut (``arrays_run_away``)."""
        if not self.arrays_run_away or (req.get("response_format") or {}).get("type") != "json_schema":
            return False
        schema = ((req["response_format"].get("json_schema") or {}).get("schema") or {})
        props = schema.get("properties") if isinstance(schema, dict) else None
        unbounded = isinstance(props, dict) and any(
            isinstance(p, dict) and p.get("type") == "array" and "maxItems" not in p for p in props.values())
        return unbounded and _spread(question) % 2 == 0

    def string_runs_away(self, req: dict[str, Any], messages: list[dict[str, Any]]) -> bool:
        """Whether this grammar-constrained reply runs a string to the budget (``strings_run_away``): under
        llama.cpp's ``grammar``, or under a schema inside json_object whose strings have no ``maxLength``."""
        if not self.strings_run_away or not (req.get("grammar") or self._unbounded_schema_strings(req)):
            return False
        shown_a_loop = any(m.get("role") == "assistant" and _cut_json(m.get("content")) for m in messages)
        return shown_a_loop or _spread(json.dumps(messages, sort_keys=True)) % 8 == 0

    def _unbounded_schema_strings(self, req: dict[str, Any]) -> bool:
        fmt = req.get("response_format")
        schema = fmt.get("schema") if self.object_schema and isinstance(fmt, dict) else None
        props = schema.get("properties") if isinstance(schema, dict) else None
        return isinstance(props, dict) and any(
            isinstance(p, dict) and p.get("type") == "string" and "maxLength" not in p for p in props.values())

    def reasoning_tokens(self, req: dict[str, Any], question: str) -> int:
        if not self.reasoning:
            return 0
        effort = req.get("reasoning_effort") or self.default_effort
        base = EFFORT_TOKENS.get(effort, EFFORT_TOKENS["medium"])
        return base + (_spread(question) if base else 0)


def _azure_route(path: str, query: str, headers: dict[str, str]) -> Rejection | str:
    """Two URL shapes (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/api-version-lifecycle):
    the v1 API ``/openai/v1/chat/completions`` (no api-version; key as ``api-key`` or a bearer token) and the
    deployment API ``/openai/deployments/{deployment}/chat/completions?api-version=...`` (``api-key``)."""
    not_found = (404, {"error": {"code": "404", "message": "Resource not found"}})
    if path == "/openai/v1/chat/completions":
        if not (headers.get("api-key") or headers.get("authorization", "").startswith("Bearer ")):
            return 401, _azure_denied()
        return ""
    parts = path.strip("/").split("/")
    if len(parts) == 5 and parts[:2] == ["openai", "deployments"] and parts[3:] == ["chat", "completions"]:
        if "api-version=" not in query:
            return not_found
        if not headers.get("api-key") and not headers.get("authorization", "").startswith("Bearer "):
            return 401, _azure_denied()
        return parts[2]
    return not_found


def _azure_denied() -> dict[str, Any]:
    return {"error": {"code": "401", "message": "Access denied due to invalid subscription key or wrong API "
                      "endpoint. Make sure to provide a valid key for an active subscription and use a correct "
                      "regional API endpoint for your resource."}}


PROFILES: dict[str, Profile] = {p.name: p for p in (
    # Today's behaviour: every knob taken, logprobs and cached tokens returned.
    # https://platform.openai.com/docs/api-reference/chat/create
    Profile("openai-chat", model="gpt-4o-mini", base_path="/v1", strict_paths=False,
            docs=("https://platform.openai.com/docs/api-reference/chat/create",
                  "https://platform.openai.com/docs/api-reference/chat/object")),
    # gpt-5 family and o-series: temperature/top_p other than 1, max_tokens and logprobs refused;
    # reasoning tokens in usage.completion_tokens_details, counted inside completion_tokens.
    Profile("openai-reasoning", model="gpt-5-mini", base_path="/v1", refusal=reasoning_refusal,
            reasoning=True, logprobs=False,
            docs=("https://platform.openai.com/docs/guides/reasoning",
                  "https://platform.openai.com/docs/api-reference/chat/object")),
    # Azure OpenAI serving a reasoning deployment: the same refusals, Azure's URL shapes and key header,
    # content-filter fields in the reply.
    Profile("azure", model="gpt-5-mini", base_path="/openai/v1", refusal=reasoning_refusal, shape=shape_azure,
            reasoning=True, logprobs=False, key_header="api-key",
            error=lambda m: {"error": {"code": "400", "message": m}},
            docs=("https://learn.microsoft.com/en-us/azure/ai-foundry/openai/api-version-lifecycle",
                  "https://learn.microsoft.com/en-us/azure/ai-foundry/openai/reference")),
    # vLLM: guided decoding for json_schema/json_object, logprobs returned, no cached-token details.
    Profile("vllm", model="meta-llama/Llama-3.1-8B-Instruct", base_path="/v1", shape=shape_vllm,
            refusal=lambda req: None, reports_cached=False, error=vllm_error,
            docs=("https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html",
                  "https://docs.vllm.ai/en/latest/features/structured_outputs.html")),
    # Ollama: a subset of the API; response_format (json_schema/json_object), seed, temperature, top_p,
    # max_tokens and logprobs accepted; usage without details; any key accepted.
    Profile("ollama", model="llama3.1", base_path="/v1", shape=shape_ollama, refusal=lambda req: None,
            reports_cached=False, cut_prompt=lambda prompt, n: prompt[-n:],
            # its /v1/models: "name:tag" ids owned by the namespace (openai/openai.go ToListCompletion)
            model_entry=lambda model: {"id": model if ":" in model else f"{model}:latest", "object": "model",
                                       "created": 1764410000, "owned_by": "library"},
            docs=("https://docs.ollama.com/api/openai-compatibility", "https://docs.ollama.com/api")),
    # Gemini's OpenAI endpoint: json_schema honoured, reasoning_effort maps to thinking, unknown fields
    # (logprobs, seed) refused in a Google error list.
    Profile("gemini-openai", model="gemini-2.5-flash", base_path="/v1beta/openai", shape=shape_plain,
            refusal=gemini_refusal, logprobs=False, reports_cached=False, error=lambda m: google_error(m),
            docs=("https://ai.google.dev/gemini-api/docs/openai",)),
    # Anthropic's OpenAI SDK compatibility: response_format, logprobs, seed and reasoning_effort are
    # accepted and ignored; temperature capped at 1; usage without details.
    Profile("anthropic-openai", model="claude-sonnet-4-5", base_path="/v1", shape=shape_plain,
            refusal=lambda req: None, ignores_response_format=True, logprobs=False, reports_cached=False,
            error=lambda m: {"type": "error", "error": {"type": "invalid_request_error", "message": m}},
            docs=("https://platform.claude.com/docs/en/api/openai-sdk",)),
    # Local engines, as captured from the real ones by scripts/drill_real_engine.py (see testing/engines.py).
    # llama-cpp-python's server with default flags (0.3.36 keeps all logits): json_schema answered with HTTP 500,
    # a schema taken inside json_object, logprobs and prompt logprobs returned at a cost per generated token
    # (scaled down: the real one spent about 1.2 s a token), a list of prompts a 500.
    Profile("llama-cpp-python", model="gemma-3-270m-q4_k_m.gguf", base_path="/v1", shape=shape_llama_cpp_python,
            refusal=llama_cpp_python_format_refusal, completions_refusal=llama_cpp_python_list_refusal,
            response_formats=frozenset({"json_object"}), reports_cached=False, error=llama_cpp_python_error,
            zero_max_tokens_fills=LLAMA_CPP_PYTHON_FILL, model_entry=llama_cpp_python_model_entry,
            object_schema=True, pads_json_object=True, logprob_work_s=LLAMA_CPP_PYTHON_LOGPROB_S,
            strings_run_away=True, raw_newlines=True, docs=LLAMA_CPP_PYTHON_DOCS),
    # ... started with --logits_all false: logprobs and prompt logprobs answered with HTTP 500.
    Profile("llama-cpp-python-logits-off", model="gemma-3-270m-q4_k_m.gguf", base_path="/v1",
            shape=shape_llama_cpp_python, refusal=llama_cpp_python_refusal,
            completions_refusal=llama_cpp_python_completions, response_formats=frozenset({"json_object"}),
            reports_cached=False, error=llama_cpp_python_error, zero_max_tokens_fills=LLAMA_CPP_PYTHON_FILL,
            model_entry=llama_cpp_python_model_entry, object_schema=True, pads_json_object=True,
            strings_run_away=True, raw_newlines=True, docs=LLAMA_CPP_PYTHON_DOCS),
    # llama.cpp's llama-server with default flags: json_schema by grammar, logprobs from before the grammar.
    Profile("llama.cpp-server", model="gemma-3-270m-q4_k_m.gguf", base_path="/v1", shape=shape_llama_server,
            refusal=lambda req: None, props=llama_server_props, prompt_logprobs=False, grammar_whitespace=True,
            arrays_run_away=True, takes_grammar=True, strings_run_away=True, headers=(("server", "llama.cpp"),),
            docs=LLAMA_SERVER_DOCS),
)}
# llama.cpp's server behind LiteLLM's proxy (1.108.7, no database), as captured: no /props (404), its own
# /v1/models entry, the engine's headers forwarded as ``llm_provider-*``, the reply's ``timings`` and a
# ``grammar`` field passed through untouched (the reply came back unpadded).
PROFILES["litellm-llama.cpp-server"] = replace(
    PROFILES["llama.cpp-server"], name="litellm-llama.cpp-server", props=None, shape=shape_litellm_llama_server,
    headers=(("llm_provider-server", "llama.cpp"), ("x-litellm-version", "1.108.7")),
    model_entry=lambda model: {"id": model, "object": "model", "created": 1677610602, "owned_by": "openai"},
    docs=(*LLAMA_SERVER_DOCS, "https://docs.litellm.ai/docs/proxy/response_headers"))


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of: {', '.join(PROFILES)}") from None
