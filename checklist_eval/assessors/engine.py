"""What a serving engine says about itself before it is sent any work: its context window per request
and how many requests it runs at once.

    facts = await probe(base_url, api_key, model)   # EngineFacts(context_tokens, slots, source)

- ``GET {base_url}/models``: the entry of ``model`` (else the only entry) may carry its window: vLLM's
  ``max_model_len``, OpenRouter's and LM Studio's ``context_length`` / ``max_context_length``. A 401 or
  403 here is the key's refusal and is returned as such (the run stops as a chat request's would).
- ``GET {server root}/props``: llama.cpp's server; ``default_generation_settings.n_ctx`` is the window of
  one slot (the ``-c`` it was started with divided by its parallel slots) and ``total_slots`` how many
  requests it runs at once. A request beyond its slots waits in the engine's queue, where our timeout
  would run out for nothing; the scheduler keeps no more than that in flight (``Scheduler.set_slots``).

Each probe is one small GET bounded in time and size (the project's transport); anything unreadable is
simply no fact. Nothing the engine says raises the window over ``--context-tokens``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from checklist_eval.fsutil import loads_json

__all__ = ["EngineFacts", "probe", "props_url"]

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 10.0
PROBE_MAX_BYTES = 2**20  # /v1/models of a big gateway lists hundreds of models; far below this
_WINDOW_FIELDS = ("max_model_len", "context_length", "max_context_length", "context_window", "n_ctx")
MAX_SANE_TOKENS = 100_000_000  # a window or slot count beyond this is garbage, not a fact


@dataclass(frozen=True)
class EngineFacts:
    context_tokens: int | None = None
    slots: int | None = None
    source: str = ""  # where the window was read ("engine /props", "engine /v1/models")
    refused: int | None = None  # 401/403 to /models: the key is refused


def props_url(base_url: str) -> str:
    """llama.cpp's /props sits at the server root, beside the /v1 of its OpenAI-compatible routes."""
    parts = urlsplit(base_url.rstrip("/"))
    path = parts.path[:-3] if parts.path.endswith("/v1") else parts.path
    return urlunsplit((parts.scheme, parts.netloc, f"{path}/props", "", ""))


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


async def _get_json(client: Any, url: str, headers: dict[str, str]) -> tuple[int, Any]:
    try:
        response = await client.get(url, headers=headers)
    except Exception as err:  # noqa: BLE001 - no answer is no fact; the chat request will say why
        log.debug("probe %s: %s", url.split("?")[0], type(err).__name__)
        return 0, None
    if response.status_code != 200:
        return response.status_code, None
    try:
        return 200, loads_json(response.content)
    except (ValueError, RecursionError):
        return 200, None


async def probe(base_url: str, api_key: str, model: str) -> EngineFacts:
    """The engine's facts (see the module docstring); an empty ``EngineFacts`` when it says nothing."""
    from checklist_eval.assessors.transport import bounded_client, shared_tls_context

    headers = {"Authorization": f"Bearer {api_key}"}
    client = bounded_client(verify=shared_tls_context(), timeout=PROBE_TIMEOUT_S, max_bytes=PROBE_MAX_BYTES)
    try:
        status, listing = await _get_json(client, base_url.rstrip("/") + "/models", headers)
        if status in (401, 403):
            return EngineFacts(refused=status)
        window, source = window_of_models(listing, model), "engine /v1/models"
        _, props = await _get_json(client, props_url(base_url), headers)
    finally:
        await client.aclose()
    n_ctx, slots = facts_of_props(props)
    if n_ctx:  # the window one request really gets, where /models may give the model's trained one
        window, source = n_ctx, "engine /props"
    return EngineFacts(context_tokens=window, slots=slots, source=source if window else "")
