"""HTTP/1.1 for the loopback server, spoken with h11 (the protocol library under httpx, so under the
``openai`` SDK's own stack): read requests, frame replies, keep connections alive. The one module of
checklist-eval that needs h11, an optional dependency (the ``server`` extra)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from checklist_eval.testing.replies import Reply, Request

try:
    import h11
except ModuleNotFoundError as err:  # the package itself installs without it
    raise ModuleNotFoundError("the loopback server (checklist_eval.testing) needs h11: "
                              "pip install 'checklist-eval[server]'", name="h11") from err

__all__ = ["Handler", "serve_connection"]

Handler = Callable[[Request, bytes], Awaitable[Reply]]


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, handle: Handler) -> None:
    """Answer the requests of one connection with ``handle`` until either side closes it."""
    conn = h11.Connection(h11.SERVER)
    try:
        while True:
            got = await _read_request(conn, reader)
            if got is None:
                break
            request, body = got
            reply = await handle(_request_of(request), body)
            if reply.hang is not None:  # a "timeout" fault: say nothing, then hang up
                await asyncio.sleep(reply.hang)
                break
            if reply.streamed is not None:  # a misbehaving body: sent piece by piece, then hang up
                await _send_streamed(conn, writer, reply)
                break
            headers = [("content-type", "application/json"), ("content-length", str(len(reply.body))),
                       *reply.headers]
            writer.write(conn.send(h11.Response(status_code=reply.status, headers=headers)))
            writer.write(conn.send(h11.Data(data=reply.body)))
            writer.write(conn.send(h11.EndOfMessage()))
            await writer.drain()
            if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                break
            conn.start_next_cycle()
    except (ConnectionError, h11.ProtocolError, asyncio.CancelledError, OSError):
        pass
    finally:
        writer.close()


def _request_of(request: h11.Request) -> Request:
    path, _, query = request.target.decode("latin-1").partition("?")
    return Request(method=request.method.decode("ascii"), path=path.rstrip("/"), query=query,
                   headers={k.decode("latin-1").lower(): v.decode("latin-1") for k, v in request.headers})


async def _send_streamed(conn: h11.Connection, writer: asyncio.StreamWriter, reply: Reply) -> None:
    length = reply.streamed.length
    headers = [("content-type", "application/json"), *reply.streamed.headers,
               *([("content-length", str(length))] if length is not None else [("transfer-encoding", "chunked")])]
    writer.write(conn.send(h11.Response(status_code=reply.status, headers=headers)))
    async for chunk in reply.streamed.chunks():
        writer.write(conn.send(h11.Data(data=chunk)))
        await writer.drain()


async def _read_request(conn: h11.Connection, reader: asyncio.StreamReader) -> tuple[h11.Request, bytes] | None:
    request = None
    body = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = await reader.read(65536)
            conn.receive_data(data)
            if not data and request is None:
                return None
            continue
        if isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            return (request, bytes(body)) if request is not None else None  # h11 sends Request first
        elif isinstance(event, (h11.ConnectionClosed,)) or event is h11.PAUSED:
            return None
