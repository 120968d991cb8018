"""A local engine's silent failures (issue 45): a refused connection to a local address is one line naming
it at the first attempt, and an engine that accepts a request but answers nothing, not even a health check,
ends the request after ``--timeout`` instead of its pace deadline. Real sockets on loopback."""

from __future__ import annotations

import asyncio
import socket
import threading
from pathlib import Path

import pytest
from helpers import one_error_line, run_measured

from checklist_eval.endpoint.transport import openai_client
from checklist_eval.endpoint.watch import EngineHung, post_watched

PAPER = Path(__file__).resolve().parents[1] / "fixtures" / "submissions" / "team-alpha" / "genuine_sga.tex"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_local_connection_is_one_line_naming_the_address(tmp_path):
    port = free_port()  # closed again: nothing listens there
    run = run_measured(["check", PAPER, "--assessor", "llm", "--model", "gemma", "--base-url",
                        f"http://127.0.0.1:{port}/v1", "--out", tmp_path / "out", "--no-cache"], cwd=tmp_path,
                       hang_guard_s=120)
    one_error_line(run, f"nothing is listening at 127.0.0.1:{port}")
    assert "attempts in a row" not in run.err  # not retried until a breaker opened: told at the first refusal


class Silent:
    """A server that accepts connections and reads what is sent, and never answers (a stopped engine)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.held.append(conn)

    def close(self) -> None:
        self.stop.set()
        for conn in self.held:
            conn.close()
        self.sock.close()


def test_a_hung_local_engine_ends_the_request_after_timeout_not_its_pace_deadline():
    server = Silent()

    async def ask():
        client = openai_client(api_key="none", base_url=server.base_url, timeout=1.0, max_bytes=2**20)
        try:
            await post_watched(client, {"model": "m", "messages": []}, deadline=3600.0, timeout=1.0,
                               base_url=server.base_url, watch=True)
        finally:
            await client.close()

    try:
        with pytest.raises(EngineHung, match="not even its health check"):
            asyncio.run(asyncio.wait_for(ask(), 60))  # a hang guard: the pace deadline would be an hour
    finally:
        server.close()
