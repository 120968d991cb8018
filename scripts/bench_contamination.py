"""Time `contamination`'s endpoint path against the loopback server: n-gram contexts sent in batches
of up to 256 prompts per request (ours) against one request per context (the same-run baseline).

    python scripts/bench_contamination.py [--texts 20] [--words 128] [--latency 0.005] [--json]

Each text gets one echo request for its token log-probabilities, then its n-gram (n = 1) references.
--latency is the server's delay per request, standing in for a network round trip. Exits 1 if the two
ways give different scores (they must not: only the batching differs).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time


def _texts(n: int, words: int) -> list[str]:
    vocab = ("the model of data and paper results we show that our method improves over baselines on several "
             "tasks while training large networks with careful ablations across seeds and datasets").split()
    rnd = random.Random(0)
    return [" ".join(rnd.choice(vocab) for _ in range(words)) for _ in range(n)]


def _run(server, texts: list[str], batch: int) -> dict:
    from checklist_eval.membership import contamination as c
    from checklist_eval.membership import prompt_logprobs as pl

    server.reset_stats()
    client = pl.LogprobClient("bench", server.base_url, batch=batch)
    t0 = time.perf_counter()
    try:
        scored = [client.fetch(str(i), t, ngram=1) for i, t in enumerate(texts)]
    finally:
        client.close()
    seconds = time.perf_counter() - t0
    tokens = sum(t.n_tokens for t in scored)
    return {"requests": server.stats.requests, "seconds": seconds, "tokens": tokens,
            "tokens_per_s": tokens / seconds, "scores": [c.score_text(t) for t in scored]}


def main() -> int:
    from checklist_eval.membership import prompt_logprobs as pl
    from checklist_eval.testing import MockServer

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=20)
    ap.add_argument("--words", type=int, default=128)
    ap.add_argument("--latency", type=float, default=0.005, help="server delay per request, seconds")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    texts = _texts(args.texts, args.words)
    with MockServer(latency=args.latency) as server:
        ours = _run(server, texts, pl.BATCH)
        base = _run(server, texts, 1)
    same = ours.pop("scores") == base.pop("scores")
    if args.json:
        print(json.dumps({"ours": ours, "one_request_per_context": base, "same_scores": same}, indent=2))
    else:
        print(f"{args.texts} texts of {args.words} words, n-gram n=1, server latency {args.latency * 1000:g} ms")
        print(f"{'':<28}{'requests':>10}{'seconds':>10}{'tokens/s':>12}")
        for name, r in (("batched n-gram (ours)", ours), ("one request per context", base)):
            print(f"{name:<28}{r['requests']:>10}{r['seconds']:>10.2f}{r['tokens_per_s']:>12.0f}")
        print(f"speed-up {base['seconds'] / ours['seconds']:.1f}x; identical scores: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
