"""The SQLite response cache: reruns make no calls, keys ignore transport knobs and secrets, several
threads and processes can write one file at once."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
import threading

import pytest

from checklist_eval.assessors import make_assessor
from checklist_eval.endpoint.cache import (
    MIGRATIONS,
    Cache,
    CacheMode,
    cache_key,
    digest_messages,
    endpoint_identity,
)
from checklist_eval.testing import MockServer, sample_paper

KEY = "sk-cache-SECRETKEY-abcdef0123456789"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("CE_TEST_KEY", KEY)


def assess(server, paper, cache_path, **config):
    options = dict(model="gpt-4o-mini", base_url=server.base_url, api_key_env="CE_TEST_KEY",
                   cache_path=cache_path, backoff_initial=0.01)
    options.update(config)
    a = make_assessor("llm", **options)

    async def go():
        try:
            return await a.assess_paper(paper)
        finally:
            await a.aclose()

    return asyncio.run(go()), a


def test_rerun_makes_zero_calls_and_costs_nothing(tmp_path):
    db = tmp_path / "cache.sqlite"
    paper = sample_paper(n_questions=6)
    with MockServer() as server:
        first, a1 = assess(server, paper, db)
        calls = server.stats.chat_requests
        # Transport knobs are not part of the key: a different concurrency/timeout still hits.
        second, a2 = assess(server, paper, db, concurrency=2, timeout=30.0, max_attempts=3)
        assert server.stats.chat_requests == calls == 6
    assert [(x.correct, x.p_correct, x.review) for x in first] == [(x.correct, x.p_correct, x.review) for x in second]
    assert all(x.provenance.cached for x in second) and not any(x.provenance.cached for x in first)
    assert a1.usage.calls == 6 and a1.usage.cost_usd > 0
    assert a2.usage.calls == 0 and a2.usage.cost_usd == 0.0
    assert all(x.provenance.usage.calls == 0 for x in second)


def test_rerun_after_format_fallback_also_hits(tmp_path):
    db = tmp_path / "cache.sqlite"
    paper = sample_paper(n_questions=4)
    with MockServer(supports_json_schema=False) as server:
        assess(server, paper, db)
        before = server.stats.requests
        again, _ = assess(server, paper, db)
        assert server.stats.requests == before
    assert all(x.provenance.cached for x in again)


def test_rerun_against_an_endpoint_that_refuses_logprobs_hits(tmp_path):
    # What the first run learned (no logprobs) is not in the key: the second run, which starts by
    # asking for logprobs again, finds every answer in the cache and sends nothing.
    db = tmp_path / "cache.sqlite"
    paper = sample_paper(n_questions=4)
    with MockServer(refuse_logprobs=True) as server:
        first, _ = assess(server, paper, db)
        assert server.stats.by_status.get(400, 0) >= 1 and server.stats.by_status[200] == 4
        before = server.stats.requests
        again, a2 = assess(server, paper, db)
        assert server.stats.requests == before  # 0 requests
    assert all(x.provenance.cached for x in again) and a2.usage.calls == 0
    assert [(x.correct, x.p_correct) for x in again] == [(x.correct, x.p_correct) for x in first]


def test_refresh_and_no_cache(tmp_path):
    db = tmp_path / "cache.sqlite"
    paper = sample_paper(n_questions=3)
    with MockServer() as server:
        assess(server, paper, db)
        out, _ = assess(server, paper, db, refresh=True)
        assert server.stats.chat_requests == 6 and not any(x.provenance.cached for x in out)
        assess(server, paper, tmp_path / "never.sqlite", no_cache=True)
        assert server.stats.chat_requests == 9
    assert not (tmp_path / "never.sqlite").exists()


def test_key_depends_on_what_changes_the_answer_only(tmp_path, monkeypatch):
    db = tmp_path / "cache.sqlite"
    paper = sample_paper(n_questions=2)
    monkeypatch.setenv("CE_OTHER_KEY", "sk-other-0000000000000000")
    with MockServer() as server:
        assess(server, paper, db)
        assess(server, paper, db, model="gpt-4o")  # another model: new calls
        assert server.stats.chat_requests == 4
        # Transport knobs and the key differ, the answer does not: hits.
        out, _ = assess(server, paper, db, timeout=7.5, concurrency=1, max_attempts=2, backoff_initial=0.2,
                        api_key_env="CE_OTHER_KEY")
        assert server.stats.chat_requests == 4 and all(x.provenance.cached for x in out)
        assess(server, paper, db, temperature=0.5)  # sampling changes the answer: new calls
        assert server.stats.chat_requests == 6
        assess(server, paper, db, max_tokens=400)  # so does the reply budget
        assert server.stats.chat_requests == 8
        assess(server, paper, db, seed=1)  # and a seed
        assert server.stats.chat_requests == 10
        changed = sample_paper(n_questions=2)
        changed.title = "Another title"  # the prompt changes: new calls
        assess(server, changed, db)
        assert server.stats.chat_requests == 12
    base = dict(model="m", prefix_digest="0" * 64, question="x", params={}, strategy="json_schema",
                prompt_version="v1", schema="s1")
    assert endpoint_identity("http://user:pw@Host:8000/v1/?a=1") == endpoint_identity("https://host:8000/v1")
    assert cache_key(endpoint="a/v1", **base) != cache_key(endpoint="b/v1", **base)
    assert cache_key(endpoint="a/v1", **base) != cache_key(endpoint="a/v1", **(base | {"prefix_digest": "1" * 64}))
    assert cache_key(endpoint="a/v1", **base) != cache_key(endpoint="a/v1", **(base | {"question": "y"}))
    assert cache_key(endpoint="a/v1", **base) != cache_key(endpoint="a/v1", **(base | {"schema": "s2"}))
    # A request body read back (as the crash drill's server does) gives the assessor's key: the whole
    # messages equal the prefix digest plus the question, and learned parameters do not count.
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "paper"}, {"role": "user", "content": "q"}]
    common = dict(endpoint="a/v1", model="m", strategy="text", prompt_version="v1")
    assert cache_key(messages=msgs, params={"temperature": 0.0, "max_completion_tokens": 9, "logprobs": True,
                                            "top_logprobs": 5}, **common) == \
        cache_key(prefix_digest=digest_messages(msgs[:2]), question="q", params={"temperature": 0.0, "max_tokens": 9},
                  **common)


def test_secrets_never_reach_the_cache_file(tmp_path, monkeypatch):
    db = tmp_path / "cache.sqlite"
    with MockServer() as server:
        assess(server, sample_paper(n_questions=3), db)
        # The same work under another key is the same answer: it must hit, proving the key is not keyed.
        monkeypatch.setenv("CE_TEST_KEY", "sk-another-key-0000000000")
        out, _ = assess(server, sample_paper(n_questions=3), db)
        assert all(x.provenance.cached for x in out)
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("cache.sqlite"))
    assert b"SECRETKEY" not in blob and b"sk-another" not in blob and len(blob) > 0


def test_migrations_are_named_and_applied_once(tmp_path):
    db = tmp_path / "c.sqlite"
    Cache(db).close()
    c = Cache(db)
    assert c.applied_migrations() == [name for name, _ in MIGRATIONS]
    rows = sqlite3.connect(db).execute("SELECT COUNT(*) FROM _migrations").fetchone()[0]
    assert rows == len(MIGRATIONS)
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    c.close()
    off = Cache(tmp_path / "off.sqlite", CacheMode.OFF)
    off.put("k", endpoint="e", model="m", prompt_version="v", strategy="text", verdict={}, usage={})
    assert off.get("k") is None and not (tmp_path / "off.sqlite").exists()


def _write_many(path: str, worker: int, n: int) -> None:
    cache = Cache(path)
    for i in range(n):
        key = f"shared-{i}" if i % 2 else f"w{worker}-{i}"  # half the keys collide across writers
        cache.put(key, endpoint="e", model="m", prompt_version="v", strategy="json_schema",
                  verdict={"correct": True, "p_correct": 0.9, "review": f"{worker}", "evidence": []},
                  usage={"calls": 1})
        assert cache.get(key) is not None
    cache.close()


def test_concurrent_writers_threads_and_processes(tmp_path):
    db = tmp_path / "shared.sqlite"
    Cache(db).close()
    shared = Cache(db)  # one instance used by several threads, plus one instance per thread
    errors: list[BaseException] = []

    def thread_job(w: int) -> None:
        try:
            _write_many(str(db), w, 40)
            for i in range(20):
                shared.put(f"t{w}-s{i}", endpoint="e", model="m", prompt_version="v", strategy="text",
                           verdict={"correct": False}, usage={})
        except BaseException as err:  # surfaced below
            errors.append(err)

    threads = [threading.Thread(target=thread_job, args=(w,)) for w in range(6)]
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_many, args=(str(db), 100 + w, 40)) for w in range(3)]
    for t in threads:
        t.start()
    for p in procs:
        p.start()
    for t in threads:
        t.join()
    for p in procs:
        p.join(timeout=60)
    assert not errors and all(p.exitcode == 0 for p in procs)
    writers = 6 + 3
    assert shared.count() == writers * 20 + 20 + 6 * 20  # own keys + 20 shared keys + thread extras
    shared.close()
