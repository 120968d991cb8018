#!/usr/bin/env python
"""The offline assessor on a justification citing many places the paper does not have (issue 31).

The paper is ``checklist_eval.testing.worstcases.missing_pointers_against_a_long_body``: a body of SIZE
with sections 1-12 and a Yes whose justification cites Sections 100 .. 100+N-1. For each (size, N):

  per-place search  the lookup as it was before issue 31, kept here as the baseline: two regex searches
                    of the whole body for every cited place (time grows with places x body)
  one-pass index    ``Layout.exists`` now: the body read once into the labels it mentions, then one
                    set lookup per place (time grows with places + body)
  judge             the whole heuristic judgement of that item (``HeuristicAssessor.judge``), index built
                    afresh; before issue 31 it ended in an OverflowError from ``math.exp`` at N >= 500

    python scripts/bench_pointers.py [--sizes 1.5,3] [--places 1000,2000] [--no-baseline] [--json]

Linear cost shows as a time ratio close to the size ratio between rows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checklist_eval.assessors.evidence import body as evidence  # noqa: E402
from checklist_eval.assessors.evidence.body import Pointer, layout_of, pointers_in  # noqa: E402
from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor  # noqa: E402
from checklist_eval.reading.latex import parse_latex  # noqa: E402
from checklist_eval.testing.worstcases import missing_pointers_against_a_long_body  # noqa: E402


def searched_before(p: Pointer, body: str) -> bool:
    """The per-place lookup before issue 31 (``evidence._mentioned_in_body``), the baseline."""
    label = re.escape(p.label)
    heading = rf"(?m)^[ \t]*(?:\d+[ \t]+)?{label}\.?[ \t]+[A-Z][A-Za-z]"
    word = r"(?:Sections?|Secs?\.|§)" if p.kind == "section" else r"(?:Appendix|Section)"
    return bool(re.search(heading, body) or re.search(rf"{word}\s*{label}(?![\w.]\d)", body))


def paper_with(size: int, places: int):
    text = missing_pointers_against_a_long_body(size)["paper.tex"].decode()
    cited = ", ".join(f"Section {i}" for i in range(100, 100 + places))
    text = re.sub(r"Justification: See [^\n]*", lambda _m: f"Justification: See {cited}.", text)
    paper = parse_latex(text, source="bench.tex")
    item = next(i for i in paper.checklist.items if i.justification and "Section 100" in i.justification)
    return paper, item


def timed(fn) -> tuple[float, object]:
    t0 = time.process_time()  # CPU: the machine may be shared; wall time would count the others
    out = fn()
    return time.process_time() - t0, out


def row(size_mb: float, places: int, baseline: bool) -> dict:
    paper, item = paper_with(int(size_mb * 1_000_000), places)
    pointers = pointers_in(item.justification or "")
    layout = layout_of(paper)
    out: dict = {"body_mb": round(len(paper.body) / 1e6, 2), "places": len(pointers)}
    if baseline:
        secs, found = timed(lambda: sum(searched_before(p, paper.body) for p in pointers))
        out["per_place_search_s"] = round(secs, 3)
        out["found_before"] = found
    evidence._mentions.cache_clear()
    secs, found = timed(lambda: sum(layout.exists(p, paper.body) is True for p in pointers))
    out["one_pass_index_s"] = round(secs, 3)
    out["found_now"] = found
    evidence._mentions.cache_clear()
    evidence.body_facts.cache_clear()
    secs, verdict = timed(lambda: asyncio.run(HeuristicAssessor().judge(paper, item)))
    out["judge_s"] = round(secs, 3)
    out["verdict"] = f"{verdict.verdict} p={verdict.p_correct}"
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1.5,3", help="body sizes in MB (default 1.5,3)")
    ap.add_argument("--places", default="1000,2000", help="places cited (default 1000,2000)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the per-place search (minutes at 3 MB)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [row(float(s), int(n), not args.no_baseline) for s in args.sizes.split(",") for n in args.places.split(",")]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'body MB':>8} {'places':>7} {'per-place search CPU s':>23} {'one-pass index CPU s':>21} "
          f"{'judge CPU s':>12}  verdict")
    for r in rows:
        before = f"{r['per_place_search_s']:.3f}" if "per_place_search_s" in r else "-"
        print(f"{r['body_mb']:>8} {r['places']:>7} {before:>23} {r['one_pass_index_s']:>21.3f} {r['judge_s']:>12.3f}"
              f"  {r['verdict']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
