"""The HTTP transport under the SDK's client: every reply bounded in time and size, and redacted,
before any of it reaches the SDK or us.

- A total deadline per request (connect, send, headers and the whole body): a server dripping one
  byte a second is cut off at the deadline, not only when one read stalls. The cut is an
  ``httpx2.ReadTimeout``, so the SDK reports it as a timeout and the retry policy treats it as one.
- A cap on the reply's size, decoded bytes counted while they stream in: a ``Content-Length`` above
  the cap is refused before reading, a body growing past it is dropped there (the connection is
  closed, the rest is never read). ``ResponseTooLarge`` is the endpoint's fault and is not retried.
- The body and the header values go through ``checklist_eval.redact`` here, at the one place
  endpoint data enters the process: an endpoint echoing the key back cannot put it in an error
  message, a review, the cache or a report.

The body is read whole here (it is small: the cap), and handed on decoded, with the
``Content-Encoding`` dropped, so the client never inflates it again.
"""

from __future__ import annotations

import asyncio
import ssl
import zlib
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import httpx2

from checklist_eval import redact
from checklist_eval.endpoint.retry import MalformedResponse, ResponseTooLarge

if TYPE_CHECKING:
    import openai

_DROPPED_HEADERS = {b"content-encoding", b"content-length", b"transfer-encoding"}


class BoundedTransport(httpx2.AsyncBaseTransport):
    """Wraps a transport; see the module docstring."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, *, deadline: float, max_bytes: int):
        self.inner = inner
        self.deadline = deadline
        self.max_bytes = max_bytes

    def _deadline_of(self, request: httpx2.Request) -> float:
        """The request's own timeout where its sender set one (the LLM assessor does, per request: see
        ``endpoint/pace.py``), else the client's."""
        timeout = request.extensions.get("timeout")
        read: Any = timeout.get("read") if isinstance(timeout, dict) else None
        return float(read) if isinstance(read, (int, float)) and read > 0 else self.deadline

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "gzip, deflate"  # the encodings _capped_body can bound
        deadline = self._deadline_of(request)
        try:  # wait_for rather than asyncio.timeout: Python 3.10 is supported
            status, headers, body, extensions = await asyncio.wait_for(self._exchange(request), deadline)
        except asyncio.TimeoutError:
            raise httpx2.ReadTimeout(f"no complete reply within the {deadline:g} s deadline",
                                     request=request) from None
        return httpx2.Response(status, headers=headers, content=redact.redact_bytes(body),
                               extensions=extensions, request=request)

    async def _exchange(self, request: httpx2.Request) -> tuple[int, list[tuple[bytes, bytes]], bytes, dict]:
        response = await self.inner.handle_async_request(request)
        try:
            announced = response.headers.get("content-length", "")
            if announced.strip().isdigit() and int(announced) > self.max_bytes:
                raise ResponseTooLarge(f"reply of {int(announced)} bytes announced, over the "
                                       f"{self._cap()} cap; refused unread")
            body = await self._capped_body(response)
        finally:
            await response.aclose()
        headers = [(k, redact.redact_bytes(v)) for k, v in response.headers.raw if k.lower() not in _DROPPED_HEADERS]
        extensions = {k: v for k, v in response.extensions.items() if k != "network_stream"}
        return response.status_code, headers, bytes(body), extensions

    async def _capped_body(self, response: httpx2.Response) -> bytes:
        """The decoded body, refused once it passes the cap. Inflating here, ``max_length`` at a time,
        bounds a compression bomb too (one 64 kB chunk of gzip can hold 64 MB)."""
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding in ("", "identity"):
            inflater = None
        elif encoding in ("gzip", "x-gzip", "deflate"):
            inflater = zlib.decompressobj(zlib.MAX_WBITS | (16 if "gzip" in encoding else 0))
        else:
            raise MalformedResponse(f"reply in an encoding we did not ask for ({encoding[:40]!r})")
        body = bytearray()
        async for data in response.aiter_raw():
            while data:
                if inflater is None:
                    piece, data = data, b""
                else:
                    try:
                        piece = inflater.decompress(data, self.max_bytes + 1 - len(body))
                    except zlib.error:
                        raise MalformedResponse(f"reply body is not valid {encoding}") from None
                    data = inflater.unconsumed_tail
                body += piece
                if len(body) > self.max_bytes:
                    raise ResponseTooLarge(f"reply larger than the {self._cap()} cap; refused")
                if not piece:
                    break
        return bytes(body)

    def _cap(self) -> str:
        return f"{self.max_bytes / 2**20:g} MiB"

    async def aclose(self) -> None:
        await self.inner.aclose()


def bounded_client(*, verify, timeout: float, max_bytes: int) -> httpx2.AsyncClient:
    """The SDK's default async client (its limits and redirects), over a bounded transport."""
    import openai
    from openai._constants import DEFAULT_CONNECTION_LIMITS

    inner = httpx2.AsyncHTTPTransport(verify=verify, limits=DEFAULT_CONNECTION_LIMITS)
    return openai.DefaultAsyncHttpx2Client(timeout=timeout, transport=BoundedTransport(
        inner, deadline=timeout, max_bytes=max_bytes))


@lru_cache(maxsize=1)
def shared_tls_context() -> ssl.SSLContext:
    """One verifying TLS context for every client of the process. Building one loads the CA bundle,
    about 40 ms of CPU: per client that was a third of a triplet's client-side CPU. A context is safe
    to share between connections and event loops."""
    return httpx2.create_ssl_context()


def openai_client(*, api_key: str, base_url: str | None, timeout: float, max_bytes: int) -> openai.AsyncOpenAI:
    """The SDK's client over the bounded transport, with the SDK's own retries off (the retry policy is
    ours, and two layers would multiply)."""
    import openai

    http = bounded_client(verify=shared_tls_context(), timeout=timeout, max_bytes=max_bytes)
    return openai.AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0, http_client=http)
