"""Fault drill: the same batch scored twice against the loopback OpenAI-compatible server, once clean and
once with injected faults (429 with Retry-After, 500, timeouts, malformed and truncated JSON), each run
with its own fresh cache. Every score and every verdict must be identical, and nothing may be lost.

    python scripts/drill_faults.py                         # 50 triplets, 20 % faults, latency 0.05 s
    python scripts/drill_faults.py --n 10 --fault-rate 0.4 --json

Submissions are synthetic copies of the fixture G/A/T triplet (one live sentence differs per copy, so no
two prompts or cache keys are equal); the builder is ``build_submissions`` of ``scripts/synth.py``.
Exit status 0 when the faulty run gave identical results with 0 lost verdicts and 0 failed submissions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SCRIPTS = Path(__file__).resolve().parent
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

from synth import build_submissions, expected_calls_per_submission  # noqa: E402

MODEL = "gpt-4o-mini"


def verdict_rows(results: Path) -> dict[tuple[str, str, str], tuple[Any, ...]]:
    """Every verdict of a batch (its results folder's ledger), keyed by (submission, role, question): what
    must not change."""
    from checklist_eval.challenge.results.layout import ResultsLayout
    from checklist_eval.challenge.results.ledger import Ledger

    return {r.key: (r.answer.value if r.answer else None, r.correct, r.p_correct, r.review)
            for r in Ledger(ResultsLayout(results).records_jsonl).records()}


def score_rows(outcome) -> dict[str, dict[str, Any]]:
    return {res.submission_id: res.score.public() for res in outcome.results}


async def _batch(root: Path, out: Path, base_url: str, cache: Path, client_timeout: float, concurrency: int,
                 jobs: int, backoff: float, budgets: dict[str, int]):
    from checklist_eval.assessors import make_assessor
    from checklist_eval.challenge.batch import run_batch

    assessor = make_assessor("llm", model=MODEL, base_url=base_url, cache_path=cache, timeout=client_timeout,
                             concurrency=concurrency, backoff_initial=backoff, **budgets)
    try:
        return await run_batch(root, out, assessor, jobs=jobs)
    finally:
        await assessor.aclose()


def run_once(label: str, root: Path, work: Path, *, n: int, fault_rate: float, latency: float, seed: int,
             client_timeout: float, concurrency: int, jobs: int, backoff: float = 0.5,
             budgets: dict[str, int] | None = None) -> tuple[dict[str, Any], Any]:
    """One batch against a fresh server and a fresh cache; returns (figures, (verdicts, scores))."""
    from checklist_eval.testing import FaultConfig, MockServer

    faults = FaultConfig(rate=fault_rate, retry_after=0.05, timeout_hold=client_timeout * 2)
    out, cache = work / f"results-{label}", work / f"cache-{label}.sqlite"
    with MockServer(latency=latency, faults=faults, seed=seed) as server:
        t0 = time.perf_counter()
        outcome = asyncio.run(_batch(root, out, server.base_url, cache, client_timeout, concurrency, jobs, backoff,
                                        budgets or {}))
        wall = time.perf_counter() - t0
        stats = server.stats
    expected = expected_calls_per_submission() * n
    verdicts = verdict_rows(out)
    fresh = sum(1 for answer, *_ in verdicts.values() if answer in ("Yes", "No", "NA"))
    figures = {
        "run": label,
        "fault_rate": fault_rate,
        "wall_s": round(wall, 2),
        "expected_requests": expected,
        "http_requests": stats.chat_requests,
        "client_calls": outcome.usage.calls,
        "retries": stats.chat_requests - expected,
        "faults_injected": dict(sorted(stats.by_fault.items())),
        "by_status": {str(k): v for k, v in sorted(stats.by_status.items())},
        "failed_submissions": len(outcome.failures),
        "failures": [f.error for f in outcome.failures],
        "verdicts": fresh,
        "lost_verdicts": expected - fresh,
    }
    return figures, (verdicts, score_rows(outcome))


def drill(n: int = 50, fault_rate: float = 0.2, latency: float = 0.05, seed: int = 0,
          client_timeout: float = 1.0, concurrency: int = 64, jobs: int = 8, backoff: float = 0.5,
          max_attempts: int | None = None, reask: int | None = None,
          workdir: Path | None = None) -> dict[str, Any]:
    """Run the clean and the faulty batch; return the figures and the comparison.

    ``max_attempts`` (transport retries per request) and ``reask`` (extra requests after an unusable
    reply) default to the assessor's own defaults, which is what the full drill measures."""
    budgets = {k: v for k, v in (("max_attempts", max_attempts), ("reask", reask)) if v is not None}
    work = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="drill-faults-"))
    try:
        root = work / "subs"
        build_submissions(root, n)
        common = dict(n=n, latency=latency, seed=seed, client_timeout=client_timeout, concurrency=concurrency,
                      jobs=jobs, backoff=backoff, budgets=budgets)
        clean, clean_out = run_once("clean", root, work, fault_rate=0.0, **common)
        faulty, faulty_out = run_once("faults", root, work, fault_rate=fault_rate, **common)
    finally:
        if workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    (a, sa), (b, sb) = clean_out, faulty_out
    verdict_diffs = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    mismatched = [k for k in verdict_diffs if k in a and k in b]  # both runs judged it, differently
    score_diffs = sorted(k for k in set(sa) | set(sb) if sa.get(k) != sb.get(k))
    return {
        "submissions": n,
        "budgets": budgets or "assessor defaults",
        "runs": [clean, faulty],
        "verdicts_compared": len(set(a) | set(b)),
        "verdict_differences": len(verdict_diffs),
        "verdicts_mismatched": len(mismatched),
        "verdicts_missing": len(verdict_diffs) - len(mismatched),
        "score_differences": len(score_diffs),
        "differing": [list(k) for k in verdict_diffs[:10]] + score_diffs[:10],
        "identical": not verdict_diffs and not score_diffs and len(a) > 0,
        "lost": faulty["lost_verdicts"] + clean["lost_verdicts"],
        "failed_submissions": faulty["failed_submissions"] + clean["failed_submissions"],
    }


def print_table(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Fault drill: {result['submissions']} G/A/T submissions, loopback server")
    for col in ("run", "fault rate", "HTTP requests", "client calls", "retries", "faults injected",
                "failed subs", "lost verdicts", "wall s"):
        table.add_column(col, justify="left" if col in ("run", "faults injected") else "right")
    for r in result["runs"]:
        injected = " ".join(f"{k}:{v}" for k, v in r["faults_injected"].items()) or "-"
        table.add_row(r["run"], f"{r['fault_rate']:.0%}", str(r["http_requests"]), str(r["client_calls"]),
                      str(r["retries"]), injected, str(r["failed_submissions"]), str(r["lost_verdicts"]),
                      f"{r['wall_s']:.2f}")
    console = Console(width=max(140, Console().width))
    console.print(table)
    same = "[green]identical[/green]" if result["identical"] else "[red]DIFFERENT[/red]"
    console.print(f"{result['verdicts_compared']} verdicts and {result['submissions']} score rows compared: {same} "
                  f"({result['verdict_differences']} verdict differences: "
                  f"{result['verdicts_mismatched']} judged differently, "
                  f"{result['verdicts_missing']} missing from one run; "
                  f"{result['score_differences']} score differences); "
                  f"lost {result['lost']}, failed submissions {result['failed_submissions']}")
    for r in result["runs"]:
        for err in r["failures"]:
            console.print(f"  {r['run']}: {err}", markup=False, highlight=False)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=50, help="G/A/T submissions (default 50)")
    p.add_argument("--fault-rate", type=float, default=0.2, help="share of requests given a fault (default 0.2)")
    p.add_argument("--latency", type=float, default=0.05, help="server latency per request in s (default 0.05)")
    p.add_argument("--seed", type=int, default=0, help="fault seed (default 0)")
    p.add_argument("--timeout", type=float, default=1.0,
                   help="client per-request timeout in s; a 'timeout' fault holds twice this (default 1.0)")
    p.add_argument("--concurrency", type=int, default=64, help="requests in flight (default 64)")
    p.add_argument("--jobs", type=int, default=8, help="submissions in flight (default 8)")
    p.add_argument("--backoff", type=float, default=0.5, help="initial retry backoff in s (default 0.5)")
    p.add_argument("--max-attempts", type=int, default=None,
                   help="transport attempts per request (default: the assessor's)")
    p.add_argument("--reask", type=int, default=None,
                   help="extra requests after an unusable reply (default: the assessor's)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)
    result = drill(n=args.n, fault_rate=args.fault_rate, latency=args.latency, seed=args.seed,
                   client_timeout=args.timeout, concurrency=args.concurrency, jobs=args.jobs, backoff=args.backoff,
                   max_attempts=args.max_attempts, reask=args.reask)
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result)
    return 0 if result["identical"] and result["lost"] == 0 and result["failed_submissions"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
