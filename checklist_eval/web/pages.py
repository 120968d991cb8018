"""What every page of the server is sent with: the template, and headers that keep a report to its
author (not cached, no referrer, no script, no framing)."""

from __future__ import annotations

from typing import Any

from starlette.responses import HTMLResponse

from checklist_eval.challenge.report import render

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def page(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(render(template, **context), status_code=status, headers=SECURITY_HEADERS)
