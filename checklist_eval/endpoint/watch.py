"""A local engine's two silent failures, told apart from slowness at once:

- **Nothing listening.** A refused connection to a loopback or private address is not a passing fault: no
  engine was started there, or it died. Retrying it with backoff only delays the one line that says so
  (``nothing_listening``), so it is reported at the first attempt.
- **Hung.** A local engine left at the default ``--timeout`` gets deadlines at its own pace
  (``pace.Pace``), which for a long prompt on a busy CPU can be many minutes. A hung engine would hold the
  run that long. So while a request runs past ``--timeout``, the engine is asked whether it is alive
  (llama.cpp's and Ollama's ``/health``, else the model list, which every OpenAI-compatible server has): an
  engine working on the prompt answers at once from its HTTP thread; one that answers nothing within
  ``--timeout`` is hung, and the request ends there (``EngineHung``): the run is held at most about twice
  ``--timeout``, not the hour of a pace deadline.
"""

from __future__ import annotations

import asyncio
import errno
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2
import openai

from checklist_eval.endpoint.pace import is_local_endpoint
from checklist_eval.endpoint.retry import EndpointFault

__all__ = ["EngineHung", "NothingListening", "PromptCut", "nothing_listening", "post_watched", "prompt_cut"]

# No tokenizer packs more characters than this into a token over a whole prompt (English prose is about 4,
# LaTeX 2.5): an engine reporting fewer prompt tokens than the characters sent allow read only part of it.
MAX_CHARS_PER_TOKEN = 8.0
MIN_CUT_CHARS = 8_000  # below this a short prompt's count says too little


class EngineHung(EndpointFault):
    """A local engine that answered neither the request nor a health check within ``--timeout``."""


class PromptCut(EndpointFault):
    """An engine that answered a prompt it had cut to its context without saying so (Ollama does)."""


def prompt_cut(completion: Any, sent_chars: int) -> PromptCut | None:
    """The fault when the reply's ``prompt_tokens`` is far below what ``sent_chars`` characters make: the engine
    read part of the prompt, and a verdict on a paper it did not see is no verdict."""
    usage = completion.get("usage") if isinstance(completion, dict) else None
    read = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    if type(read) is not int or read <= 0 or sent_chars < MIN_CUT_CHARS or read * MAX_CHARS_PER_TOKEN >= sent_chars:
        return None
    return PromptCut(f"the engine read {read} prompt tokens of a {sent_chars}-character prompt: it cut the prompt "
                     "to its context window without an error, so no verdict is kept. Give it a larger context "
                     "(Ollama: OLLAMA_CONTEXT_LENGTH=32768 in the environment of `ollama serve`, or num_ctx in a "
                     "Modelfile), or pass --context-tokens with the window it has")


class NothingListening(EndpointFault):
    """A refused connection to a local address: no engine is serving there."""


def _refused(exc: BaseException | None) -> bool:
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, ConnectionRefusedError) or (isinstance(exc, OSError) and exc.errno == errno.ECONNREFUSED):
            return True
        if "connection refused" in str(exc).lower() or "connect call failed" in str(exc).lower():
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def nothing_listening(exc: BaseException, base_url: str | None) -> NothingListening | None:
    """The one-line fault for a refused connection to a local engine, else None."""
    if not isinstance(exc, openai.APIConnectionError) or not is_local_endpoint(base_url) or not _refused(exc):
        return None
    parts = urlsplit(base_url or "")
    where = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
    return NothingListening(f"nothing is listening at {where}: start the engine there, or give --base-url "
                            "where it serves")


def _health_urls(base_url: str) -> list[str]:
    parts = urlsplit(base_url.rstrip("/"))
    root = parts.path[:-3] if parts.path.endswith("/v1") else parts.path
    return [urlunsplit((parts.scheme, parts.netloc, f"{root}/health", "", "")), "/models"]


async def _alive(client: openai.AsyncOpenAI, base_url: str, timeout: float) -> bool:
    """Whether the engine answers anything (any HTTP status) to a health check within ``timeout``."""
    for url in _health_urls(base_url):
        try:
            await client.get(url, cast_to=httpx2.Response, options={"timeout": timeout})
            return True
        except openai.APIStatusError:
            return True  # an answer, whatever it says: the process is serving
        except (openai.APIError, EndpointFault):
            continue
    return False


async def post_watched(client: openai.AsyncOpenAI, body: dict[str, Any], *, deadline: float, timeout: float,
                       base_url: str | None, watch: bool) -> httpx2.Response:
    """``client.post`` of ``body`` within ``deadline``; with ``watch`` (a local engine at its own pace), past
    each ``timeout`` the engine must answer a health check, else ``EngineHung``."""
    post = client.post("/chat/completions", cast_to=httpx2.Response, body=body, options={"timeout": deadline})
    if not watch or deadline <= timeout or base_url is None:
        return await post
    task = asyncio.ensure_future(post)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=timeout)
            if done:
                return task.result()
            if not await _alive(client, base_url, timeout):
                raise EngineHung(f"the engine answered nothing within {timeout:g} s, not even its health check: "
                                 "it is hung or stopped (restart it)")
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
