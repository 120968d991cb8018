"""Batch throughput against the loopback OpenAI-compatible server under a requests-per-minute limit.

Builds N synthetic GAT triplets from ``fixtures/submissions/team-alpha`` (one live sentence differs per
submission, so every prompt is distinct), scores them with the LLM assessor (no cache) through one
batch, and prints achieved requests/minute against the limit, wall time, calls and lost calls
(expected calls - verdicts received). Goal: >= 95% of the limit, 0 lost.

Baseline, in the same run: the reference system's behaviour, one request at a time (concurrency 1,
one submission at a time, no client pacing), against the same server and limit, on a few triplets
(``--baseline-n``, default 2). Its answered requests/minute show what the scheduler buys.

Batch-API path, in the same run (``--batch-delay``, 0 skips it): the same N triplets through
``--via batch-api`` against the same server's /v1/files + /v1/batches, each batch finishing
``--batch-delay`` seconds after it is created: wall time, uploaded files and requests per file (split
at ``--batch-max-mb``), and the ledger's cost against the online run's. Batch calls are priced at the
price table's batch rate; when the packaged table has no batch price for the model, the bench says so
and uses OpenAI's published batch price (half the online rate) from an explicit override file.

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

from synth import answered_records, build_submissions, expected_calls_per_submission  # noqa: E402


async def run(args: argparse.Namespace, root: Path, out: Path, base_url: str, rpm: float | None,
              concurrency: int, jobs: int):
    from checklist_eval.assessors import make_assessor
    from checklist_eval.challenge.batch import run_batch

    assessor = make_assessor(
        "llm",
        model="gpt-4o-mini",
        base_url=base_url,
        rpm=rpm,
        concurrency=concurrency,
        no_cache=True,
        cache_path=None,
    )
    try:
        return await run_batch(root, out, assessor, jobs=jobs)
    finally:
        await assessor.aclose()


def measure(args: argparse.Namespace, n: int, client_rpm: float | None, concurrency: int, jobs: int) -> dict:
    """One batch of ``n`` synthetic triplets against a fresh server limited to ``args.rpm`` over
    ``args.window`` seconds; ``client_rpm`` is the assessor's own pacing (None: none)."""
    from checklist_eval.testing import MockServer

    tmp = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    try:
        build_submissions(tmp / "subs", n)
        with MockServer(latency=args.latency, rpm_limit=args.rpm, rpm_window=args.window) as server:
            t0 = time.perf_counter()
            outcome = asyncio.run(run(args, tmp / "subs", tmp / "results", server.base_url, client_rpm,
                                      concurrency, jobs))
            wall = time.perf_counter() - t0
            stats = server.stats
        verdicts = answered_records(tmp / "results")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ok = stats.by_status.get(200, 0)
    expected = expected_calls_per_submission() * n
    span = (stats.arrivals[-1] - stats.arrivals[0]) if len(stats.arrivals) > 1 else 0.0
    sustained = (len(stats.arrivals) - 1) / span * 60 if span else 0.0
    overall = outcome.usage.calls / wall * 60 if wall else 0.0
    answered = ok / wall * 60 if wall else 0.0
    return {
        "submissions": n,
        "failed_submissions": len(outcome.failures),
        "rpm_limit": args.rpm,
        "client_rpm": client_rpm,
        "concurrency": concurrency,
        "window_s": args.window,
        "latency_s": args.latency,
        "wall_s": round(wall, 2),
        "expected_calls": expected,
        "calls": outcome.usage.calls,
        "http_requests": stats.chat_requests,
        "http_200": ok,
        "http_429": stats.by_status.get(429, 0),
        "retries": stats.chat_requests - ok,  # refused attempts that were (or would have been) repeated
        "lost_calls": expected - verdicts,
        "sustained_rpm": round(sustained, 1),  # arrival rate at the server, refused requests included
        "sustained_share_of_limit": round(sustained / args.rpm, 4),
        "overall_rpm": round(overall, 1),  # the assessor's calls (refused attempts included) over the wall time
        "overall_share_of_limit": round(overall / args.rpm, 4),
        "answered_rpm": round(answered, 1),  # answered (200) requests over the wall time
        "answered_share_of_limit": round(answered / args.rpm, 4),
        "max_in_flight": stats.max_in_flight,
        "cost_usd": round(outcome.usage.cost_usd, 6),
    }


BENCH_MODEL = "gpt-4o-mini"


def batch_prices(tmp: Path) -> tuple[Path | None, str]:
    """The packaged table when it prices batch calls for the model, else an explicit override."""
    from checklist_eval.endpoint.prices import PriceTable

    price = PriceTable.load().lookup(BENCH_MODEL)
    if price is not None and price.has_batch:
        return None, "packaged batch prices"
    override = tmp / "prices.json"
    online = {"input": price.input, "output": price.output, "cached_input": price.cached_input} if price else {}
    override.write_text(json.dumps({"models": {BENCH_MODEL: {
        **online, "batch_input": online.get("input", 0) / 2, "batch_output": online.get("output", 0) / 2}}}))
    return override, "no packaged batch price: assumed half the online rate (OpenAI's batch discount)"


def measure_batch_api(args: argparse.Namespace, n: int) -> dict:
    """``n`` triplets through provider batch jobs on the loopback server (no rpm limit applies there)."""
    from checklist_eval.assessors import LLMConfig
    from checklist_eval.assessors.llm.batch_replay import BatchAssessor
    from checklist_eval.challenge.batch import run_batch
    from checklist_eval.challenge.batch_api import BatchFlow, Limits, run_rounds
    from checklist_eval.challenge.submissions import find_submissions
    from checklist_eval.testing import MockServer

    tmp = Path(tempfile.mkdtemp(prefix="bench-batch-api-"))
    try:
        root, out = tmp / "subs", tmp / "results"
        build_submissions(root, n)
        prices, price_note = batch_prices(tmp)
        with MockServer(latency=args.latency) as server:
            server.batches.delay = args.batch_delay
            assessor = BatchAssessor(LLMConfig.from_options(
                model=BENCH_MODEL, base_url=server.base_url, cache_path=out / "cache.sqlite", prices=prices))
            flow = BatchFlow(assessor, limits=Limits(max_bytes=int(args.batch_max_mb * 1024 * 1024)))

            async def go():
                try:
                    return await run_rounds(flow, find_submissions(root),
                                            lambda: run_batch(root, out, assessor, jobs=args.jobs), jobs=args.jobs)
                finally:
                    await assessor.aclose()

            t0 = time.perf_counter()
            outcome = asyncio.run(go())
            wall = time.perf_counter() - t0
            batches = list(server.batches.batches.values())
            sizes = [len(server.batches.files[b.input_file_id].data) for b in batches]
        verdicts = answered_records(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    requests = sum(len(b.lines) for b in batches)
    return {
        "submissions": n,
        "batch_delay_s": args.batch_delay,
        "wall_s": round(wall, 2),
        "files": len(batches),
        "requests": requests,
        "requests_per_file": round(requests / len(batches), 1) if batches else 0,
        "mb_per_file": round(sum(sizes) / len(sizes) / 2**20, 1) if sizes else 0,
        "calls": outcome.usage.calls,
        "retried_online": assessor.retried_online,
        "lost_calls": expected_calls_per_submission() * n - verdicts,
        "failed_submissions": len(outcome.failures),
        "cost_usd": round(outcome.usage.cost_usd, 6),
        "prices": price_note,
        "stages_s": {k: round(v, 2) for k, v in flow.timings.items()},
    }


BATCH_ROW = "{:<26} {:>5} {:>6} {:>6} {:>9} {:>8} {:>8} {:>10} {:>5}"


def print_paths(online: dict, batch: dict) -> None:
    print()
    print(BATCH_ROW.format("path", "n", "calls", "files", "req/file", "MB/file", "wall_s", "cost_usd", "lost"))
    print(BATCH_ROW.format("online (paced)", online["submissions"], online["calls"], "-", "-", "-",
                           online["wall_s"], f"{online['cost_usd']:.4f}", online["lost_calls"]))
    print(BATCH_ROW.format(f"batch-api (delay {batch['batch_delay_s']:g} s)", batch["submissions"], batch["calls"],
                           batch["files"], batch["requests_per_file"], batch["mb_per_file"], batch["wall_s"],
                           f"{batch['cost_usd']:.4f}", batch["lost_calls"]))
    share = batch["cost_usd"] / online["cost_usd"] if online["cost_usd"] else 0.0
    print(f"batch-api cost = {share:.1%} of online ({batch['prices']})")
    print("batch-api stages (s): " + ", ".join(f"{k.removesuffix('_s')} {v}" for k, v in batch["stages_s"].items()))


ROW = "{:<26} {:>5} {:>6} {:>8} {:>7} {:>12} {:>8} {:>8} {:>6} {:>5}"


def print_rows(rows: list[tuple[str, dict]]) -> None:
    print(ROW.format("run", "n", "calls", "window_s", "wall_s", "answered_rpm", "share", "429s", "retry", "lost"))
    for label, f in rows:
        print(ROW.format(label, f["submissions"], f["calls"], f["window_s"], f["wall_s"], f["answered_rpm"],
                         f"{f['answered_share_of_limit']:.1%}", f["http_429"], f["retries"], f["lost_calls"]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--submissions", type=int, default=200, help="GAT triplets (default 200)")
    p.add_argument("--rpm", type=float, default=6000, help="requests/minute limit, client and server")
    p.add_argument("--latency", type=float, default=0.05, help="server latency per request (s)")
    p.add_argument("--window", type=float, default=60.0,
                   help="server sliding window of the limit (s), 60 like providers; shorter is stricter")
    p.add_argument("--concurrency", type=int, default=64, help="assessor's requests in flight")
    p.add_argument("--jobs", type=int, default=8, help="submissions in flight")
    p.add_argument("--baseline-n", type=int, default=2,
                   help="triplets of the one-request-at-a-time baseline run (default 2; 0 skips it)")
    p.add_argument("--batch-delay", type=float, default=5.0,
                   help="seconds each loopback batch takes to complete (default 5; 0 skips the batch-API run)")
    p.add_argument("--batch-max-mb", type=float, default=200.0, help="MB per uploaded requests file (default 200)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)

    figures = measure(args, args.submissions, args.rpm, args.concurrency, args.jobs)
    if args.baseline_n > 0:
        figures["baseline"] = measure(args, args.baseline_n, None, 1, 1)
    if args.batch_delay > 0:
        figures["batch_api"] = measure_batch_api(args, args.submissions)
    if args.json:
        print(json.dumps(figures))
    else:
        rows = [("paced (--rpm, client)", figures)]
        if "baseline" in figures:
            rows.append(("baseline: one request at a time", figures["baseline"]))
        print_rows(rows)
        print(f"goal: paced share >= 95% of {args.rpm:g} rpm and 0 lost; sustained (server arrivals) "
              f"{figures['sustained_share_of_limit']:.1%}, max in flight {figures['max_in_flight']}")
        if "batch_api" in figures:
            print_paths(figures, figures["batch_api"])
    lost = figures["lost_calls"] + figures.get("batch_api", {}).get("lost_calls", 0)
    failed = figures["failed_submissions"] + figures.get("batch_api", {}).get("failed_submissions", 0)
    return 0 if lost == 0 and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
