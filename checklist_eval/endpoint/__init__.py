"""The endpoint stage: sending a request to an OpenAI-compatible server and getting a checked reply within
limits, below the assessors (which know checklists; nothing here does). The HTTP client (``transport``), the
one retry policy and circuit breaker (``retry``), the scheduler and rate limits (``scheduler``), deadlines
(``pace``, ``watch``), what an engine says about itself (``probe``), what an (endpoint, model) refuses
(``capabilities``) and the reply formats it steps down through (``formats``), the context window
(``context``), reading a completion (``replies``), the OpenAI Batch line format (``batches``), the SQLite store
(``cache`` with its migrations, ``calllog``, opened through ``cachefile``), costs (``prices``, ``budget``),
and what the store remembers shown to a user (``lessons``, named by ``identity``; shared per process by
``registry``)."""
