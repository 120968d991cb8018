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

import httpx2

from checklist_eval import redact
from checklist_eval.assessors.retry import ResponseTooLarge

_DROPPED_HEADERS = {b"content-encoding", b"content-length", b"transfer-encoding"}


class BoundedTransport(httpx2.AsyncBaseTransport):
    """Wraps a transport; see the module docstring."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, *, deadline: float, max_bytes: int):
        self.inner = inner
        self.deadline = deadline
        self.max_bytes = max_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:  # wait_for rather than asyncio.timeout: Python 3.10 is supported
            status, headers, body, extensions = await asyncio.wait_for(self._exchange(request), self.deadline)
        except asyncio.TimeoutError:
            raise httpx2.ReadTimeout(f"no complete reply within the {self.deadline:g} s deadline",
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
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > self.max_bytes:
                    raise ResponseTooLarge(f"reply larger than the {self._cap()} cap; refused")
        finally:
            await response.aclose()
        headers = [(k, redact.redact_bytes(v)) for k, v in response.headers.raw if k.lower() not in _DROPPED_HEADERS]
        extensions = {k: v for k, v in response.extensions.items() if k != "network_stream"}
        return response.status_code, headers, bytes(body), extensions

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
