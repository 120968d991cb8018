#!/usr/bin/env python
"""TeX as the reader (issue 42): what a compile costs, how many papers compile, and what it adds to a batch.

Table 1, per paper of a corpus of LaTeX projects (default ../shared/corpus/papers-latex, source only: no
styles, no figures; ``--corpus DIR`` for whole projects fetched from their repositories, one folder each,
with ``--manifest`` naming each main file): the compile and reading wall time cold (an empty compile
cache) and cached (the same files again), through the parse worker as every command reads, with
``--tex auto``; who read the checklist (TeX, or the source with TeX's one-line reason); and whether the
answers agree (the number of ``source_differs`` findings). The baseline row is the source evaluator
alone (``--tex never``) on the same papers.

Table 2: the bundled fixtures' batch (``checklist-eval batch fixtures/submissions``), with TeX cold,
with TeX cached, and with ``--tex never``: what TeX adds to a batch.

    python scripts/bench_tex.py [--corpus DIR] [--manifest TSV] [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checklist_eval.errors import InputError  # noqa: E402
from checklist_eval.models import WarningKind  # noqa: E402
from checklist_eval.reading.isolation import ParseLimits, ParserPool  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpus" / "papers-latex"


def main_files(corpus: Path, manifest: Path | None) -> list[tuple[str, Path]]:
    rows = list(csv.DictReader(manifest.open(encoding="utf-8"), delimiter="\t")) if manifest else []
    if rows:
        return [(r["folder"], corpus / r["folder"] / r["main_file"]) for r in rows
                if (corpus / r["folder"] / r["main_file"]).is_file()]
    return [(p.name, p) for p in sorted(corpus.iterdir()) if p.is_dir()]


def read_once(pool: ParserPool, path: Path) -> dict:
    start = time.perf_counter()
    try:
        paper = pool.load_paper(path)
    except InputError as err:
        return {"s": time.perf_counter() - start, "reader": "failed", "why": err.problem, "differs": None,
                "answers": None, "places": {}}
    seconds = time.perf_counter() - start
    why = next((str(w) for w in paper.warnings if w.kind is WarningKind.TEX), "")
    differs = sum(1 for w in paper.warnings if w.kind is WarningKind.SOURCE_DIFFERS)
    return {"s": seconds, "reader": paper.reader, "why": why, "differs": differs,
            "answers": sum(1 for it in paper.checklist.items if it.answer is not None),
            "places": {it.id: it.location for it in paper.checklist.items if it.answer is not None}}


def corpus_table(papers: list[tuple[str, Path]], timeout: float) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-tex-cache-") as cache:
        os.environ["CHECKLIST_EVAL_TEX_CACHE"] = cache
        with ParserPool(1, ParseLimits(timeout_s=timeout, tex="never")) as never, \
                ParserPool(1, ParseLimits(timeout_s=timeout, tex="auto")) as auto:
            for name, path in papers:
                source = read_once(never, path)
                cold = read_once(auto, path)
                cached = read_once(auto, path)
                # answers placed elsewhere by SyncTeX than by the source reader (same answer, other line)
                moved = sum(1 for q, where in cold["places"].items() if source["places"].get(q, where) != where)
                rows.append({"paper": name, "source_s": source["s"], "cold_s": cold["s"], "cached_s": cached["s"],
                             "reader": cold["reader"], "why": cold["why"], "differs": cold["differs"],
                             "answers": cold["answers"], "moved": moved})
                print(f"  {name[:46]:46} source {source['s']:6.2f} s  cold {cold['s']:6.2f} s  cached "
                      f"{cached['s']:5.2f} s  {cold['reader']:6} {cold['differs']!s:>3} differ {moved:>2} moved  "
                      f"{cold['why'][:70]}", flush=True)
    return rows


def batch_seconds(extra: list[str], cache: str) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-tex-batch-") as out:
        env = dict(os.environ, CHECKLIST_EVAL_TEX_CACHE=cache)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "checklist_eval", "batch", str(ROOT / "fixtures" / "submissions"),
                        "--out", str(Path(out) / "results"), "--quiet", *extra], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        return time.perf_counter() - start


def batch_table() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-tex-cache-") as cache:
        return {"never": batch_seconds(["--tex", "never"], cache), "tex_cold": batch_seconds([], cache),
                "tex_cached": batch_seconds([], cache)}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=SHARED)
    ap.add_argument("--manifest", type=Path, default=None)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    manifest = args.manifest or (args.corpus / "MANIFEST.tsv" if (args.corpus / "MANIFEST.tsv").is_file() else None)
    papers = main_files(args.corpus, manifest) if args.corpus.is_dir() else []
    papers = papers[: args.limit] if args.limit else papers
    print(f"corpus: {args.corpus} ({len(papers)} papers)" if papers else f"corpus: {args.corpus} absent: skipped")
    rows = corpus_table(papers, args.timeout) if papers else []
    batch = batch_table()
    if args.json:
        print(json.dumps({"papers": rows, "batch": batch}, indent=1))
        return 0
    if rows:
        by_tex = [r for r in rows if r["reader"] == "tex"]
        print(f"\n{'':34} {'median s':>9} {'max s':>7}")
        for label, key, subset in (("source evaluator (baseline)", "source_s", rows), ("TeX, cold", "cold_s", rows),
                                   ("TeX, cached", "cached_s", rows), ("TeX, cold, papers TeX read", "cold_s", by_tex)):
            if subset:
                values = [r[key] for r in subset]
                print(f"{label:34} {statistics.median(values):9.2f} {max(values):7.2f}")
        agree = [r for r in by_tex if r["differs"] == 0]
        answers = sum(r["answers"] or 0 for r in by_tex)
        moved = sum(r["moved"] for r in by_tex)
        print(f"\nread by TeX: {len(by_tex)} of {len(rows)} papers; answers and justifications agree with the source "
              f"on {len(agree)} of them; {answers - moved} of {answers} answers at the source reader's file:line")
        for r in rows:
            if r["reader"] != "tex":
                print(f"  not by TeX: {r['paper']}: {r['why'] or r['reader']}")
    print(f"\nfixtures batch (3 submissions, 6 papers): --tex never {batch['never']:.1f} s; TeX cold "
          f"{batch['tex_cold']:.1f} s; TeX cached {batch['tex_cached']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
