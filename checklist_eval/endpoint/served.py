"""What an engine says it serves, read from its own API: which model is loaded (part of the response cache's
key, so another model behind the same port never gets the first one's verdicts) and, for Ollama, the context
window a request really gets. Pure functions over the engines' replies; the requests are the probe's
(``assessors/engine.py``).

**The model's identity.** A single-model server answers whatever name it is sent: llama.cpp's server
restarted with another file keeps its port and answers the old ``--model`` name too. What it says it loaded
is the identity:

- llama.cpp's server: ``/props`` ``model_path`` (the file it was started with);
- llama-cpp-python's server: its one ``/v1/models`` id (the model path, or ``--model_alias``).

Other servers (OpenAI, vLLM, Ollama, a proxy) route by the requested name and refuse one they do not serve:
the name is the identity and the key is left as it was. When the identity is the requested name (or that
file's name), the key is also left as it was, so a cache written before the identity was read is still found.

**Ollama's window.** Its OpenAI-compatible routes take no ``num_ctx`` and cut a longer prompt to the
context without an error; that context is ``num_ctx`` from ``OLLAMA_CONTEXT_LENGTH``, the Modelfile or a
default that depends on the GPU's memory (4,096 tokens on a CPU, 32k from 24 GiB, 256k from 48 GiB, in
Ollama's ``server/routes.go``), capped by the model's trained context. Its own API says which:

- ``GET /api/ps``: each loaded model's ``context_length`` (the ``num_ctx`` its runner was started with, per
  request: ``-c`` is that times the parallel slots, ``llm/llama_server.go``): the window, as a fact;
- ``POST /api/show``: ``parameters`` (the Modelfile's, one ``name value`` a line, ``num_ctx`` among them) and
  ``model_info`` (GGUF metadata, ``<architecture>.context_length`` the trained context).

A model not loaded yet is loaded by ``POST /api/generate`` with no prompt (Ollama's documented way), then
``/api/ps`` says its window.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["OLLAMA_LOADED", "OLLAMA_MODELFILE", "is_ollama_ps", "keyed_model", "ollama_loaded_window",
           "ollama_modelfile_window", "stated_identity"]

MAX_SANE_TOKENS = 100_000_000  # a window beyond this is garbage, not a fact
OLLAMA_LOADED = "engine /api/ps (Ollama's loaded model)"
OLLAMA_MODELFILE = "engine /api/show (the Modelfile's num_ctx)"
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)(?:\.0*)?\s*$", re.MULTILINE)


def _count(value: Any) -> int | None:
    return value if type(value) is int and 0 < value < MAX_SANE_TOKENS else None


def _entries(listing: Any) -> list[dict[str, Any]]:
    data = listing.get("data") if isinstance(listing, dict) else None
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def stated_identity(listing: Any, props: Any, model: str, *, single_model_server: bool = False) -> str:
    """The model the engine says it serves ("" when it routes by the requested name or says nothing):
    llama.cpp's ``/props`` model path, else the one id of a single-model server's ``/v1/models``."""
    path = props.get("model_path") if isinstance(props, dict) else None
    if isinstance(path, str) and path.strip():
        return path.strip()[:1000]
    ids = [e.get("id") for e in _entries(listing) if isinstance(e.get("id"), str)]
    return str(ids[0])[:1000] if single_model_server and len(ids) == 1 else ""


def keyed_model(model: str, identity: str) -> str:
    """The model as the response cache keys it: the requested name, and the engine's own when it differs
    (a model file named as requested is the same model)."""
    if not identity or identity == model or re.split(r"[\\/]", identity)[-1] == model:
        return model
    return f"{model} @ {identity}"


def is_ollama_ps(ps: Any) -> bool:
    """``/api/ps`` in Ollama's shape: ``{"models": [...]}`` (an empty list when nothing is loaded)."""
    return isinstance(ps, dict) and isinstance(ps.get("models"), list)


def _same_ollama_model(name: Any, model: str) -> bool:
    """Ollama names a model ``name:tag``, ``latest`` when no tag is given."""
    if not isinstance(name, str):
        return False
    return name == model or name == f"{model}:latest" or name.removesuffix(":latest") == model


def ollama_loaded_window(ps: Any, model: str) -> int | None:
    """The window of ``model`` as loaded (``/api/ps``), else None (not loaded, or not said)."""
    if not is_ollama_ps(ps):
        return None
    for entry in ps["models"]:
        if isinstance(entry, dict) and (_same_ollama_model(entry.get("name"), model)
                                        or _same_ollama_model(entry.get("model"), model)):
            return _count(entry.get("context_length"))
    return None


def ollama_modelfile_window(show: Any) -> int | None:
    """The Modelfile's ``num_ctx`` of an ``/api/show`` reply, capped by the trained context in its
    ``model_info``; None when the Modelfile sets none (the server's default then applies, unseen)."""
    if not isinstance(show, dict) or not isinstance(show.get("parameters"), str):
        return None
    found = _NUM_CTX.search(show["parameters"])
    num_ctx = _count(int(found.group(1))) if found and len(found.group(1)) < 10 else None
    if num_ctx is None:
        return None
    trained = _trained_context(show.get("model_info"))
    return min(num_ctx, trained) if trained else num_ctx


def _trained_context(info: Any) -> int | None:
    """``<architecture>.context_length`` of the GGUF metadata Ollama shows."""
    if not isinstance(info, Mapping):
        return None
    arch = info.get("general.architecture")
    if isinstance(arch, str):
        return _count(info.get(f"{arch}.context_length"))
    return None
