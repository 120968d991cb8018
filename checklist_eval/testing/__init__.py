"""A loopback OpenAI-compatible server for tests, drills and benchmarks (asyncio + h11, the HTTP stack
the ``openai`` SDK itself uses; no web framework). h11 comes with the ``server`` extra
(``pip install 'checklist-eval[server]'``; the ``test`` extra includes it).

    with MockServer(latency=0.05, faults=FaultConfig(rate=0.2)) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        ...
        server.stats.requests, server.stats.by_status, server.stats.prefix_reuse

``profile`` (``profiles``) makes it answer as one provider does: its refused parameters and error bodies,
URL shape, key header, usage fields and reasoning tokens.

Endpoints: ``GET /v1/models``; ``POST /v1/completions`` (``echo`` + ``logprobs``: prompt
log-probabilities, see ``completions``); ``POST /v1/chat/completions`` (``response_format`` json_schema /
json_object / none, ``logprobs`` + ``top_logprobs``, ``usage.prompt_tokens_details.cached_tokens``);
``/v1/files`` and ``/v1/batches`` (``batches``); and for a server in another process, ``GET /_stats`` and
``POST /_reset``. ``misbehave`` makes every chat reply a hostile endpoint's.

What an endpoint does not support is either ignored or refused with a 400, as real ones do:
``supports_json_schema`` / ``supports_json_object`` False refuse that ``response_format``;
``supports_logprobs=False`` silently returns no logprobs (vLLM builds without them), while
``refuse_logprobs=True`` answers a request asking for logprobs with a 400 (OpenAI's reasoning models).

Verdicts are a pure function of the prompt (rules in ``verdicts``), so a rerun or a faulty run gives the
same verdicts.

Modules: ``server`` (the server), ``stats`` (its faults and statistics), ``transport`` (HTTP/1.1 over h11),
``replies``, ``verdicts``, ``profiles``, ``completions``, ``batches``, ``misbehave``.
"""

from checklist_eval.testing.server import MockServer
from checklist_eval.testing.stats import FAULT_KINDS, FaultConfig, ServerStats
from checklist_eval.testing.verdicts import (
    FAKE_QUOTE,
    mock_findings,
    mock_rewrite,
    mock_verdict,
    sample_paper,
    tokenize,
)

__all__ = ["FAKE_QUOTE", "FAULT_KINDS", "FaultConfig", "MockServer", "ServerStats", "mock_findings", "mock_rewrite",
           "mock_verdict", "sample_paper", "tokenize"]
