"""The endpoint stage: what the tool knows about an OpenAI-compatible server, below the assessors (which
know checklists). Today it holds what a user sees of that knowledge (``lessons``); the HTTP client layer of
``assessors/`` (transport, retry, scheduler, pace, quirks, engine, cache) moves here in the scheduled
re-layout."""
