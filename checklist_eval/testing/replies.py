"""The loopback server's requests and replies as plain values, apart from the HTTP library that carries them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["Reply", "Request", "error_reply", "json_reply"]


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # without the query string and a trailing slash
    query: str
    headers: dict[str, str]  # names lower-cased


class Reply:
    def __init__(self, status: int, body: bytes, headers: list[tuple[str, str]] | None = None,
                 hang: float | None = None, streamed: Any = None, work: float = 0.0):
        self.status = status
        self.body = body
        self.headers = headers or []
        self.hang = hang
        self.streamed = streamed  # a misbehave.Streamed body
        self.work = work  # seconds the engine spends on the reply after the model's answer (a slot held)


def json_reply(status: int, obj: Any, headers: list[tuple[str, str]] | None = None) -> Reply:
    return Reply(status, json.dumps(obj).encode("utf-8"), headers)


def error_reply(status: int, message: str, etype: str, code: str | None = None,
                headers: list[tuple[str, str]] | None = None) -> Reply:
    return json_reply(status, {"error": {"message": message, "type": etype, "param": None, "code": code}}, headers)
