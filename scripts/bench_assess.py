#!/usr/bin/env python
"""Wall time, prefix reuse and client CPU of the LLM assessor on one G/A/T triplet.

The loopback server runs in a SUBPROCESS (``checklist-eval mock-server``) at a fixed latency, so the
CPU measured here (``time.process_time`` of this process) is the client's alone: prompt building,
the openai SDK, parsing, scheduling. The triplet is assessed twice, cache disabled:

  sequential  concurrency 1 - the reference system's one-request-at-a-time behaviour
  concurrent  the default concurrency, the three papers in flight together

    python scripts/bench_assess.py [--latency 0.2] [--fixtures fixtures/papers] [--json]
    python scripts/bench_assess.py --baseline /path/to/other/checkout   # the same bench on that code first

Goals: concurrent <= 2 latencies per triplet (the three papers overlap instead of queueing; 1.2 is the aim),
prefix_share >= 0.9 (the shared prompt prefix is what providers cache and bill less for),
cpu_ms_per_call < 2 and within 1.2x of a bare SDK request measured in the same run (the client is never
the bottleneck beside a model's latency).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRIPLET = ("genuine", "adversarial", "truth_adversarial")


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "checklist_eval", "mock-server", "--port", "0", "--latency", str(latency)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    line = proc.stdout.readline().strip()
    if not line.startswith("http://"):
        proc.kill()
        raise SystemExit(f"mock server did not start: {line or proc.stderr.read()}")
    return proc, line


def server_call(base_url: str, method: str, path: str) -> dict:
    import httpx2

    root = base_url.removesuffix("/v1")
    return httpx2.request(method, root + path, timeout=10).json()


async def assess_triplet(papers, concurrency: int, base_url: str) -> tuple[float, float, int]:
    from checklist_eval.assessors import make_assessor

    assessor = make_assessor("llm", model="gpt-4o-mini", base_url=base_url, api_key_env="BENCH_NO_KEY",
                             no_cache=True, concurrency=concurrency)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    results = await asyncio.gather(*(assessor.assess_paper(p) for p in papers))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    await assessor.aclose()
    return wall, cpu, sum(1 for r in results for a in r if not a.provenance.cached and a.provenance.usage.calls)


async def sdk_floor(papers, base_url: str, n: int = 20) -> float:
    """CPU ms of one bare ``AsyncOpenAI.post`` of the same request, sequential: the HTTP stack's own
    cost on this machine, to read ``cpu_ms_per_call`` against."""
    import httpx2
    import openai

    from checklist_eval.assessors import make_assessor
    from checklist_eval.models import StructuredOutput

    a = make_assessor("llm", model="gpt-4o-mini", base_url=base_url, api_key_env="BENCH_NO_KEY", no_cache=True)
    body = {"model": "gpt-4o-mini",
            "messages": a.messages_for(papers[0], papers[0].checklist.items[0], StructuredOutput.JSON_SCHEMA),
            **a.requests.params(StructuredOutput.JSON_SCHEMA, a.quirks())}
    client = openai.AsyncOpenAI(base_url=base_url, api_key="no-key-needed", max_retries=0)
    await client.post("/chat/completions", cast_to=httpx2.Response, body=body)
    cpu0 = time.process_time()
    for _ in range(n):
        json.loads((await client.post("/chat/completions", cast_to=httpx2.Response, body=body)).content)
    cpu = time.process_time() - cpu0
    await client.close()
    await a.aclose()
    return 1000 * cpu / n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--fixtures", type=Path, default=ROOT / "fixtures" / "papers")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                    help="run the same bench on the checklist-eval code in DIR first (another checkout)")
    args = ap.parse_args(argv)
    baseline = run_baseline(args.baseline, args.latency, args.fixtures) if args.baseline else None

    from checklist_eval.assessors import DEFAULT_CONCURRENCY
    from checklist_eval.reading.parsing import load_paper

    papers = [load_paper(args.fixtures / name) for name in TRIPLET]
    os.environ.pop("BENCH_NO_KEY", None)  # loopback needs no key; none is read or sent
    proc, base_url = start_server(args.latency)
    try:
        # Warm-up outside the measurement: imports, prompt files, the first connection.
        asyncio.run(assess_triplet(papers[:1], DEFAULT_CONCURRENCY, base_url))
        rows = {}
        for label, conc in (("sequential", 1), ("concurrent", DEFAULT_CONCURRENCY)):
            server_call(base_url, "POST", "/_reset")
            wall, cpu, calls = asyncio.run(assess_triplet(papers, conc, base_url))
            stats = server_call(base_url, "GET", "/_stats")
            rows[label] = {"concurrency": conc, "wall_s": wall, "cpu_s": cpu, "calls": calls,
                           "server_requests": stats["chat_requests"], "prefix_share": stats["prefix_share"],
                           "prefix_reuse": stats["prefix_reuse"], "max_in_flight": stats["max_in_flight"]}
        floor_ms = asyncio.run(sdk_floor(papers, base_url))
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    seq, con = rows["sequential"], rows["concurrent"]
    total_calls = seq["calls"] + con["calls"]
    out = {
        "latency_s": args.latency,
        "papers": [p.source for p in papers],
        "calls": con["calls"],
        "sequential_s": round(seq["wall_s"], 3),
        "concurrent_s": round(con["wall_s"], 3),
        "speedup": round(seq["wall_s"] / con["wall_s"], 2),
        "concurrent_latencies": round(con["wall_s"] / args.latency, 2),
        "prefix_share": round(con["prefix_share"], 4),
        "prefix_reuse": round(con["prefix_reuse"], 4),
        "cpu_ms_per_call": round(1000 * (seq["cpu_s"] + con["cpu_s"]) / total_calls, 3),
        "cpu_ms_per_call_concurrent": round(1000 * con["cpu_s"] / con["calls"], 3),
        "sdk_floor_cpu_ms_per_call": round(floor_ms, 3),
        "max_in_flight": con["max_in_flight"],
        "goals": {
            "concurrent_le_2_latencies": con["wall_s"] <= 2 * args.latency,
            "prefix_share_ge_0.9": con["prefix_share"] >= 0.9,
            "cpu_ms_per_call_lt_2": 1000 * (seq["cpu_s"] + con["cpu_s"]) / total_calls < 2,
            "cpu_within_1.2x_sdk": 1000 * con["cpu_s"] / con["calls"] <= 1.2 * floor_ms,
        },
    }
    if baseline is not None:
        out["baseline"] = baseline
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"LLM assessor on one G/A/T triplet, loopback latency {args.latency:g} s, no cache")
    for col in ("run", "concurrency", "calls", "wall s", "latencies", "CPU ms/call", "max in flight",
                "prefix share"):
        table.add_column(col, justify="right")
    for label, r in rows.items():
        table.add_row(label, str(r["concurrency"]), str(r["calls"]), f"{r['wall_s']:.2f}",
                      f"{r['wall_s'] / args.latency:.1f}", f"{1000 * r['cpu_s'] / r['calls']:.2f}",
                      str(r["max_in_flight"]), f"{r['prefix_share']:.3f}")
    console = Console()
    console.print(table)
    if baseline is not None:
        compare = Table(title=f"the same run on {args.baseline} (before) and on this code (after)")
        for col in ("code", "concurrent s", "latencies", "CPU ms/call concurrent", "bare SDK CPU ms", "ratio"):
            compare.add_column(col, justify="right")
        for label, r in (("before", baseline), ("after", out)):
            compare.add_row(label, f"{r['concurrent_s']:.2f}", f"{r['concurrent_latencies']:.1f}",
                            f"{r['cpu_ms_per_call_concurrent']:.2f}", f"{r['sdk_floor_cpu_ms_per_call']:.2f}",
                            f"{r['cpu_ms_per_call_concurrent'] / r['sdk_floor_cpu_ms_per_call']:.2f}x")
        console.print(compare)
    console.print(f"bare SDK request on this machine: {floor_ms:.2f} CPU ms (the floor under CPU ms/call)")
    console.print(f"speedup {out['speedup']}x; goals: " + ", ".join(
        f"{k} {'OK' if v else 'MISSED'}" for k, v in out["goals"].items()))
    return 0


def run_baseline(checkout: Path, latency: float, fixtures: Path) -> dict:
    """This bench, run on the code in ``checkout`` (its package first on the path), as JSON."""
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
    proc = subprocess.run([sys.executable, __file__, "--json", "--latency", str(latency), "--fixtures", str(fixtures)],
                          capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"the baseline bench failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


if __name__ == "__main__":
    sys.exit(main())
