#!/usr/bin/env python
"""Prompt tokens per second through checklist-eval against the engine alone, on the same prompts.

Both runs send exactly the requests the LLM assessor builds for the chosen questions (its own
``request_body``, after it has asked the engine its window and slots):

  engine alone   a direct loop: every request posted at once over one HTTP client, so the engine's own
                 queue keeps its slots busy with no client in the way (its best case)
  checklist-eval the assessor's ``assess_paper`` with default flags (cache off): its scheduler, retry
                 policy, transport, reply checks and verdict parsing

Tokens are the engine's own counts (``usage.prompt_tokens`` of each reply; llama.cpp's ``timings`` when
present give the engine's prompt-processing time too). The engine alone runs before and after
checklist-eval so a warm or cold prompt cache does not favour one side. Target: checklist-eval >= 90 % of
the engine alone.

    python scripts/bench_engine.py --base-url http://127.0.0.1:18081/v1 --model gemma3 [--questions 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


@dataclass
class Run:
    label: str
    wall_s: float
    calls: int
    prompt_tokens: int
    completion_tokens: int
    failed: int = 0
    max_in_flight: int = 0

    @property
    def prompt_tps(self) -> float:
        return self.prompt_tokens / self.wall_s if self.wall_s else 0.0


def papers_with_questions(paths: list[Path], questions: int) -> list[Any]:
    """The papers, each keeping only its first ``questions`` answered questions (a short, fixed workload)."""
    from checklist_eval.reading.parsing import load_paper

    out = []
    for path in paths:
        paper = load_paper(path)
        kept = [it for it in paper.checklist.items if it.is_answered][:questions]
        out.append(paper.model_copy(update={"checklist": paper.checklist.model_copy(update={"items": kept})}))
    return out


def assessor(base_url: str, model: str, **config: Any) -> Any:
    from checklist_eval.assessors import make_assessor

    os.environ.setdefault("BENCH_ENGINE_KEY", "no-key-needed")
    return make_assessor("llm", model=model, base_url=base_url, api_key_env="BENCH_ENGINE_KEY", no_cache=True,
                         **config)


async def request_bodies(base_url: str, model: str, papers: list[Any]) -> list[dict[str, Any]]:
    """The assessor's requests for every kept question, once it has asked the engine what it holds."""
    a = assessor(base_url, model)
    try:
        await a._learn_engine()
        return [a.request_body(p, it, a.quirks()) for p in papers for it in p.checklist.items]
    finally:
        await a.aclose()


async def engine_alone(base_url: str, bodies: list[dict[str, Any]], timeout: float = 3600.0) -> Run:
    """Every body posted at once; the engine's queue and slots set the pace."""
    import httpx2

    in_flight = peak = failed = prompt = completion = 0

    async def one(client: httpx2.AsyncClient, body: dict[str, Any]) -> None:
        nonlocal in_flight, peak, failed, prompt, completion
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            r = await client.post(base_url.rstrip("/") + "/chat/completions", json=body)
            usage = r.json().get("usage") or {} if r.status_code == 200 else None
        finally:
            in_flight -= 1
        if usage is None:
            failed += 1
            return
        prompt += int(usage.get("prompt_tokens") or 0)
        completion += int(usage.get("completion_tokens") or 0)

    limits = httpx2.Limits(max_connections=len(bodies) + 1)
    async with httpx2.AsyncClient(timeout=timeout, limits=limits) as client:
        t0 = time.perf_counter()
        await asyncio.gather(*(one(client, b) for b in bodies))
        wall = time.perf_counter() - t0
    return Run("engine alone", wall, len(bodies), prompt, completion, failed, peak)


async def through_checklist_eval(base_url: str, model: str, papers: list[Any], **config: Any) -> Run:
    """The papers assessed together, as a batch does, with default flags but the cache."""
    a = assessor(base_url, model, **config)
    t0 = time.perf_counter()
    try:
        results = await asyncio.gather(*(a.assess_paper(p) for p in papers), return_exceptions=True)
    finally:
        wall = time.perf_counter() - t0
        await a.aclose()
    failed = sum(1 for r in results if isinstance(r, BaseException))
    return Run("checklist-eval", wall, a.usage.calls, a.usage.prompt_tokens, a.usage.completion_tokens, failed,
               a.scheduler.max_in_flight)


def compare(base_url: str, model: str, papers: list[Any]) -> list[Run]:
    """Engine alone, checklist-eval, engine alone again (see the module docstring)."""
    bodies = asyncio.run(request_bodies(base_url, model, papers))
    first = asyncio.run(engine_alone(base_url, bodies))
    ours = asyncio.run(through_checklist_eval(base_url, model, papers))
    second = asyncio.run(engine_alone(base_url, bodies))
    second.label = "engine alone (again)"
    return [first, ours, second]


def print_table(runs: list[Run]) -> None:
    base = max(r.prompt_tps for r in runs if r.label.startswith("engine"))
    print(f"{'run':<22} {'calls':>5} {'failed':>6} {'in flight':>9} {'prompt tok':>10} {'wall s':>7} "
          f"{'prompt tok/s':>12} {'vs engine':>9}")
    for r in runs:
        print(f"{r.label:<22} {r.calls:>5} {r.failed:>6} {r.max_in_flight:>9} {r.prompt_tokens:>10,} {r.wall_s:>7.1f} "
              f"{r.prompt_tps:>12.1f} {r.prompt_tps / base:>9.0%}")
    print("vs engine: against the faster of the two engine-alone runs; target checklist-eval >= 90 %")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--papers", type=Path, nargs="+", default=[ROOT / "fixtures" / "papers" / "genuine"])
    ap.add_argument("--questions", type=int, default=8, help="answered questions kept per paper (default 8)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    runs = compare(args.base_url, args.model, papers_with_questions(args.papers, args.questions))
    if args.json:
        print(json.dumps([asdict(r) | {"prompt_tps": r.prompt_tps} for r in runs], indent=1))
    else:
        print_table(runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
