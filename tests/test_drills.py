"""Reduced reliability drills (the full ones are ``scripts/drill_faults.py``, ``scripts/drill_crash.py`` and
``scripts/drill_results.py``):
injected faults change no verdict and lose nothing; SIGKILLed batches resume to identical results with no
request repeated whose answer was already committed to the cache."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import drill_crash  # noqa: E402
import drill_faults  # noqa: E402
import synth  # noqa: E402

N = 2
"""Synthetic submissions per drill."""
DEADLINE_S = 20.0
"""The fault drill's client deadline: only a reply the server holds back reaches it."""


def _items_per_submission() -> int:
    """Checklist items of the template triplet: one record (and one verdict) each, answered or not."""
    from checklist_eval.challenge.submissions import load_submission

    return sum(len(paper.checklist.items) for paper in load_submission(synth.TEMPLATE).papers.values())


@pytest.fixture(autouse=True)
def _no_ambient_endpoint(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_fault_drill_identical_and_nothing_lost(tmp_path):
    # What trips the client's deadline is the server: an injected "timeout" fault holds its reply past it
    # (twice the deadline), so the deadline is set far above any healthy loopback request even on a
    # machine busy with other work (at 2 s, the clean run retried 56 times on a loaded 2-core machine):
    # only the injected faults trip it and the clean run needs no retry.
    # 30 % faults so that 2 submissions (2 x 48 requests) meet every fault kind. Budgets are raised so that
    # exhausting them is negligible here (0.18**10 and 0.12**7 per request): this test is about every
    # fault kind being retried or re-asked into the same verdict. What the DEFAULT budgets lose at a
    # 20 % fault rate is what the full script measures.
    per_submission = synth.expected_calls_per_submission()
    assert per_submission > 0
    result = drill_faults.drill(n=N, fault_rate=0.3, latency=0.002, seed=3, client_timeout=DEADLINE_S, backoff=0.02,
                                max_attempts=10, reask=6, workdir=tmp_path)
    clean, faulty = result["runs"]
    assert sum(clean["faults_injected"].values()) == 0 and clean["retries"] == 0
    # Every synthetic copy is distinct: no verdict of the clean run came from another copy's cache row.
    assert clean["http_requests"] == clean["expected_requests"] == N * per_submission
    assert set(faulty["faults_injected"]) == {"429", "500", "timeout", "malformed", "truncated"}
    assert faulty["retries"] > 0 and faulty["http_requests"] > clean["http_requests"]
    assert result["verdicts_compared"] == N * _items_per_submission()
    assert result["identical"], result["differing"]
    assert result["lost"] == 0 and result["failed_submissions"] == 0, [r["failures"] for r in result["runs"]]


def test_crash_drill_no_true_repeats_and_identical_results(tmp_path):
    result = drill_crash.drill(n=N, kills=2, latency=0.02, seed=1, workdir=tmp_path)
    assert result["kills_landed"] >= 1
    # Every cache row maps to a request the server saw: the repeat count below is measured, not assumed.
    assert result["unmapped_cache_rows"] == 0
    assert result["true_repeats"] == 0, result["segments"]
    assert result["crash_requests"] >= result["reference_requests"]
    assert result["final_exit"] == 0 and result["final_failed"] == 0
    assert result["records_compared"] == N * _items_per_submission()
    assert result["score_differences"] == 0 and result["record_differences"] == 0
    assert result["unparseable_results"] == [] and result["integrity_failures"] == 0
    assert drill_crash.passed(result)


def test_results_drill_loses_and_misstates_nothing(tmp_path):
    """A killed batch (also with failing submissions, and a rerun before its first record), a killed
    new-settings rerun, a killed appeal, a killed score --out, a killed server, a folder copied mid-write,
    hand-edited exports, a full disk and read-only storage: every reader gives the undisturbed scores or
    refuses in one line naming the folder; no child prints a traceback."""
    import drill_results

    result = drill_results.drill(n=N, kills=1, disks=1, seed=2, workdir=tmp_path)
    rows = {r["disturbance"]: r for r in result["rows"]}
    assert rows["kill batch"]["runs"] == rows["kill rescore --overrides"]["runs"] == 1
    assert rows["power cut (copy mid-write)"]["runs"] == rows["kill new-settings rerun"]["runs"] == 1
    assert sum(r["identical"] for r in result["rows"]) > 0
    assert drill_results.passed(result), result
