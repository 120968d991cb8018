"""Write a synthetic WikiMIA-style member / non-member set for the loopback server's mock model.

Each line is {"input": text, "label": 1|0}; the label is whether the mock model "has seen" the text
(checklist_eval.testing.completions.is_seen), so `contamination-eval` against `checklist-eval mock-server`
measures how well each score recovers a known membership.

    python scripts/synth_membership.py --n 200 --out members.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from checklist_eval.fsutil import atomic_write_text
from checklist_eval.testing.completions import is_seen

WORDS = ("the model of data and paper results we show that our method improves over baselines on several "
         "tasks while training large networks with careful ablations across seeds and datasets").split()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200, help="texts (default 200)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    lines = []
    for i in range(args.n):
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(32, 128)))
        lines.append(json.dumps({"id": f"t{i}", "input": text, "label": int(is_seen(text))}))
    atomic_write_text(args.out, "\n".join(lines) + "\n")
    members = sum(json.loads(x)["label"] for x in lines)
    print(f"wrote {args.out}: {args.n} texts, {members} members")


if __name__ == "__main__":
    main()
