#!/usr/bin/env python
"""What one paper costs on each provider profile of the loopback server, with default flags.

For every profile (``checklist-eval mock-server --profile NAME``, run in a subprocess) the genuine fixture
paper is checked twice with the profile's model, cache off:

  first verdict  concurrency 1: requests sent until the first verdict (each refusal costs one 400)
  whole paper    default concurrency: calls (refused ones included), tokens, reasoning tokens, cost

    python scripts/provider_profiles.py [--paper fixtures/papers/genuine] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checklist_eval.assessors import make_assessor  # noqa: E402
from checklist_eval.endpoint.prices import format_cost  # noqa: E402
from checklist_eval.reading.parsing import load_paper  # noqa: E402
from checklist_eval.testing.profiles import PROFILES  # noqa: E402


def start_server(profile: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", "mock-server", "--port", "0",
                             "--profile", profile], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith("http://"):
        proc.kill()
        raise SystemExit(f"mock server did not start: {line or proc.stderr.read()}")
    return proc, line


async def assess(base_url: str, model: str, paper, concurrency: int | None, first_only: bool):
    assessor = make_assessor("llm", model=model, base_url=base_url, api_key_env="CE_PROFILES_KEY",
                             no_cache=True, concurrency=concurrency)
    try:
        if first_only:
            item = next(it for it in paper.checklist.items if it.is_answered)
            verdict = await assessor.judge(paper, item)
            return assessor, [verdict]
        return assessor, await assessor.assess_paper(paper)
    finally:
        await assessor.aclose()


def measure(name: str, paper) -> dict:
    profile = PROFILES[name]
    runs = []
    for concurrency, first_only in ((1, True), (None, False)):  # a fresh server each: no shared prefix cache
        proc, base_url = start_server(name)
        try:
            runs.append(asyncio.run(assess(base_url, profile.model, paper, concurrency, first_only)))
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    (_, verdicts), (whole, out) = runs
    u = whole.usage
    return {"profile": name, "model": profile.model,
            "requests_to_first_verdict": verdicts[0].provenance.usage.calls,
            "quirks": verdicts[0].provenance.quirks, "verdicts": len(out), "calls": u.calls,
            "prompt_tokens": u.prompt_tokens, "cached_tokens": u.cached_tokens,
            "completion_tokens": u.completion_tokens, "reasoning_tokens": u.reasoning_tokens,
            "cost_usd": round(u.cost_usd, 6), "cost": format_cost(u)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paper", default=str(ROOT / "fixtures" / "papers" / "genuine"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("CE_PROFILES_KEY", "sk-local-profiles-table")
    paper = load_paper(args.paper)
    rows = [measure(name, paper) for name in PROFILES]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'profile':18} {'model':34} {'to 1st':>6} {'calls':>5} {'prompt':>7} {'cached':>7} {'compl':>6} "
          f"{'reason':>6}  cost / quirks learned")
    for r in rows:
        quirks = "; ".join(q.split(":")[0] for q in r["quirks"]) or "none"
        print(f"{r['profile']:18} {r['model']:34} {r['requests_to_first_verdict']:>6} {r['calls']:>5} "
              f"{r['prompt_tokens']:>7} {r['cached_tokens']:>7} {r['completion_tokens']:>6} "
              f"{r['reasoning_tokens']:>6}  {r['cost']} / {quirks}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
