"""The OpenAI Batch format as an endpoint speaks it (the Batch API, and vLLM's ``run_batch`` writing the same
lines): the URL each request line names and the state of one line of an output or error file. The jobs
themselves are recorded in the store (``cache``'s ``batch_jobs``, ``batch_requests``, ``batch_answers``)."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["CHAT_URL", "answer_state"]

CHAT_URL: Final = "/v1/chat/completions"  # Final: typed as the literal the SDK expects


def answer_state(line: dict[str, Any]) -> tuple[str, int | None, dict[str, Any] | None, str | None]:
    """(state, status_code, body, error) of one line of a batch output or error file (the OpenAI Batch
    format, which vLLM's run_batch also writes): ``ok`` for a 200 with a JSON body, else ``error``."""
    response = line.get("response") if isinstance(line.get("response"), dict) else None
    error = line.get("error")
    status = response.get("status_code") if response else None
    body = response.get("body") if response else None
    if isinstance(status, int) and status == 200 and isinstance(body, dict) and not error:
        return "ok", status, body, None
    message = None
    if isinstance(error, dict):
        message = f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip()
    elif isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = str(body["error"].get("message") or "error")
    return "error", status if isinstance(status, int) else None, body if isinstance(body, dict) else None, (
        (message or f"HTTP {status}")[:500])
