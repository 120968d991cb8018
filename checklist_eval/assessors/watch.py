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

from checklist_eval.assessors.pace import is_local_endpoint
from checklist_eval.assessors.retry import EndpointFault

__all__ = ["EngineHung", "NothingListening", "nothing_listening", "post_watched"]


class EngineHung(EndpointFault):
    """A local engine that answered neither the request nor a health check within ``--timeout``."""


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
