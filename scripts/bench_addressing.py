"""CPU time of choosing the passages an offline verdict shows, on the 42 whole papers of
``../shared/corpus/papers-latex``: the BM25 ranking alone (``passages.best_passages``, what was shown
before) beside the addressing ranking (``addressing.addressing_pieces``: the question's words, the
paper's headings and the cited sections on top of the same BM25), every question of every paper, in
the same run. Parsing is outside the timings; each ranking is timed cold (its caches cleared) and warm.

    python scripts/bench_addressing.py [--shared ../shared] [--json]
"""

from __future__ import annotations

import json
import sys
import time

from shared_corpus import corpus_parser, latex_corpus

from checklist_eval.assessors.evidence import addressing, passages
from checklist_eval.reading.parsing import load_paper


def _time(papers: list, rank) -> float:
    started = time.process_time()
    for paper in papers:
        for item in paper.checklist.items:
            rank(paper, item)
    return time.process_time() - started


def _clear() -> None:
    passages._index.cache_clear()
    addressing._heading_starts.cache_clear()


def main() -> int:
    args = corpus_parser(__doc__).parse_args()
    corpus = latex_corpus(args.shared, "bench_addressing")
    if corpus is None:
        return 2
    papers = [load_paper(d) for d in sorted(corpus.iterdir()) if d.is_dir()]
    questions = sum(len(p.checklist.items) for p in papers)
    ranks = {
        "bm25 only (baseline)": lambda p, i: passages.best_passages(p, i, k=3),
        "addressing": lambda p, i: addressing.addressing_pieces(p, i, passages.query_of(i))[:3],
    }
    rows = {}
    for name, rank in ranks.items():
        _clear()
        cold = _time(papers, rank)
        warm = _time(papers, rank)
        rows[name] = {"cold_s": round(cold, 3), "warm_s": round(warm, 3),
                      "warm_ms_per_question": round(1000 * warm / questions, 3)}
    if args.json:
        print(json.dumps({"papers": len(papers), "questions": questions, "rankings": rows}, indent=2))
        return 0
    print(f"{len(papers)} papers, {questions} questions (CPU seconds)")
    print(f"{'ranking':24} {'cold':>8} {'warm':>8} {'ms/question':>12}")
    for name, r in rows.items():
        print(f"{name:24} {r['cold_s']:>8} {r['warm_s']:>8} {r['warm_ms_per_question']:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
