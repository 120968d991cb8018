"""Batch throughput against the loopback OpenAI-compatible server under a requests-per-minute limit.

Builds N synthetic GAT triplets from ``fixtures/submissions/team-alpha`` (one live sentence differs per
submission, so every prompt is distinct), scores them with the LLM assessor (no cache) through one
batch, and prints achieved requests/minute against the limit, wall time, calls and lost calls
(expected calls - verdicts received). Goal: >= 95% of the limit, 0 lost.

    python scripts/bench_batch.py                    # 200 triplets, --rpm 6000, latency 0.05 s
    python scripts/bench_batch.py -n 50 --rpm 3000 --json
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

SCRIPTS = Path(__file__).resolve().parent
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

from synth import build_submissions, expected_calls_per_submission  # noqa: E402


async def run(args: argparse.Namespace, root: Path, out: Path, base_url: str):
    from checklist_eval.assessors import make_assessor
    from checklist_eval.batch import run_batch

    assessor = make_assessor(
        "llm",
        model="gpt-4o-mini",
        base_url=base_url,
        rpm=args.rpm,
        concurrency=args.concurrency,
        no_cache=True,
        cache_path=None,
    )
    try:
        return await run_batch(root, out, assessor, jobs=args.jobs)
    finally:
        await assessor.aclose()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--submissions", type=int, default=200, help="GAT triplets (default 200)")
    p.add_argument("--rpm", type=float, default=6000, help="requests/minute limit, client and server")
    p.add_argument("--latency", type=float, default=0.05, help="server latency per request (s)")
    p.add_argument("--window", type=float, default=60.0,
                   help="server sliding window of the limit (s), 60 like providers; shorter is stricter")
    p.add_argument("--concurrency", type=int, default=64, help="assessor's requests in flight")
    p.add_argument("--jobs", type=int, default=8, help="submissions in flight")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)

    from checklist_eval.testing import MockServer

    tmp = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    try:
        build_submissions(tmp / "subs", args.submissions)
        with MockServer(latency=args.latency, rpm_limit=args.rpm, rpm_window=args.window) as server:
            t0 = time.perf_counter()
            outcome = asyncio.run(run(args, tmp / "subs", tmp / "results", server.base_url))
            wall = time.perf_counter() - t0
            stats = server.stats
        ok = stats.by_status.get(200, 0)
        expected = expected_calls_per_submission() * args.submissions
        verdicts = sum(
            1 for res in outcome.results for r in res.records if r.answer is not None and r.answer.is_real
        )
        span = (stats.arrivals[-1] - stats.arrivals[0]) if len(stats.arrivals) > 1 else 0.0
        sustained = (len(stats.arrivals) - 1) / span * 60 if span else 0.0
        overall = outcome.usage.calls / wall * 60 if wall else 0.0
        figures = {
            "submissions": args.submissions,
            "failed_submissions": len(outcome.failures),
            "rpm_limit": args.rpm,
            "latency_s": args.latency,
            "wall_s": round(wall, 2),
            "expected_calls": expected,
            "calls": outcome.usage.calls,
            "http_200": ok,
            "http_429": stats.by_status.get(429, 0),
            "lost_calls": expected - verdicts,
            "sustained_rpm": round(sustained, 1),
            "sustained_share_of_limit": round(sustained / args.rpm, 4),
            "overall_rpm": round(overall, 1),
            "overall_share_of_limit": round(overall / args.rpm, 4),
            "max_in_flight": stats.max_in_flight,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(figures))
    else:
        width = max(map(len, figures))
        for k, v in figures.items():
            print(f"{k:<{width}}  {v}")
    return 0 if figures["lost_calls"] == 0 and figures["failed_submissions"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
