"""How an endpoint is named wherever the tool keeps something about it (the cache's keys, its lessons)."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["DEFAULT_BASE_URL", "endpoint_identity"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def endpoint_identity(base_url: str | None) -> str:
    """``host[:port]/path`` of the endpoint: the same server is the same cache regardless of scheme
    spelling, trailing slash, query string or credentials in the URL (never kept)."""
    given = base_url or DEFAULT_BASE_URL
    url = urlsplit(given if "//" in given else f"//{given}")
    host = (url.hostname or "").lower()
    port = f":{url.port}" if url.port else ""
    return f"{host}{port}{url.path.rstrip('/')}"
