"""One scheduler per engine per process (issue 45): two jobs of one process against the same engine (what
``serve`` does for two uploads) share its slots and its rate limit, through the real ``openai`` client over
real HTTP to the loopback server."""

from __future__ import annotations

import asyncio

import pytest
from helpers import mock_llm

from checklist_eval.testing import MockServer, sample_paper


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("CE_TEST_KEY", "sk-test-shared-0123456789")


async def two_jobs(server: MockServer, **config) -> list:
    jobs = [mock_llm(server, **config) for _ in range(2)]
    try:
        return await asyncio.gather(*(job.assess_paper(sample_paper(n_questions=6)) for job in jobs))
    finally:
        for job in jobs:
            await job.aclose()


def test_two_jobs_keep_a_two_slot_engine_within_its_slots():
    # Before: each job had its own scheduler set to the engine's 2 slots, so 4 requests were in flight and
    # 2 waited in the engine's queue, where their deadline ran for nothing.
    with MockServer(slots=2, props=True, latency=0.05) as server:
        results = asyncio.run(two_jobs(server))
        stats = server.stats
    assert [len(r) for r in results] == [6, 6]
    assert stats.max_in_flight <= 2 and stats.max_queued == 0, stats


def test_two_jobs_share_one_rate_limit():
    # --rpm 120 paces one request every 0.5 s for the engine; two jobs with their own pacers sent two at once.
    with MockServer() as server:
        asyncio.run(two_jobs(server, rpm=120))
        arrivals = sorted(server.stats.arrivals)
    # One pacer spaces the 12 requests over 11 steps; two would have sent them in pairs over 5. (Delay only
    # lengthens the span, so this holds on a busy machine too.)
    assert len(arrivals) >= 12 and arrivals[-1] - arrivals[0] >= 0.9 * (len(arrivals) - 1) * 0.5, arrivals
