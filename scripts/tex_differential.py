"""The conditional reader against a real TeX engine, on a large draw: N shapes from a seed (Hypothesis),
compiled by pdflatex in B parallel documents and read back with pdftotext, each compared with the
parser's answer (see checklist_eval/testing/tex_differential.py). Prints the counts and the first
silent disagreements; exits 1 when there is one.

    python scripts/tex_differential.py [--shapes 5000] [--seed 1] [--batches 4]
"""

from __future__ import annotations

import argparse
import sys
import time

from checklist_eval.reading.isolation import ParseLimits, ParserPool
from checklist_eval.testing import tex_differential


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batches", type=int, default=4)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    drawn = tex_differential.draw(args.shapes, args.seed)
    with ParserPool(1, ParseLimits(timeout_s=30, tex="never")) as pool:
        outcome = tex_differential.compare(drawn, pool.load_paper, args.batches)
    print(f"seed {args.seed}: {len(drawn)} shapes ({len(set(drawn))} distinct), {time.perf_counter() - start:.0f} s")
    print(outcome.table())
    for shape, tex, read in outcome.silent[:10]:
        print(f"{shape!r}\n  TeX prints {tex}, parser reads {read}")
    return 1 if outcome.silent or outcome.counts["lost"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
