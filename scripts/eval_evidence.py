"""Measure the passages the offline assessor shows against the evidence labelled set
(``fixtures/evidence-labels/labels.jsonl``, how it was made: the README beside it), on the development
half and the held-out half of the fixed corpus split.

For each labelled (paper, question) the paper from ``../shared/corpus/papers-latex`` is assessed with the
heuristic assessor at its defaults, and its shown passages are matched to the labelled paragraphs by
digest (a passage is the paragraph piece it quotes). Reported per half:

- precision@1: of the questions the paper addresses and for which a passage is shown, the share whose
  first passage addresses the question;
- recall@3: of the questions the paper addresses, the mean share of its addressing paragraphs among the
  first three shown, out of min(3, their number) (a question with nothing shown counts 0);
- shown: the share of the questions the paper addresses that show any passage;
- supported without an addressing passage: of the answers said "supported", the share none of whose
  passages addresses the question (a "none-in-paper" question has none by definition);
- shown where the paper has nothing: of the questions the paper has nothing on, the share showing a passage;
- unread first passages: first passages the reader never judged (counted as not addressing).

    python scripts/eval_evidence.py [--shared ../shared] [--half development] [--json]

``--half development`` judges the development papers alone: what a rule change is looked at with (the
held-out half is run only to report, never to choose a rule).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from evidence_labels import read_labels, shown_digests  # noqa: E402
from shared_corpus import corpus_parser, latex_corpus  # noqa: E402

from checklist_eval.adversary.corpus_split import HALVES  # noqa: E402
from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor  # noqa: E402
from checklist_eval.models import State  # noqa: E402
from checklist_eval.reading.parsing import load_paper  # noqa: E402


def judge_all(corpus: Path, rows: list[dict]) -> dict[tuple[str, str], tuple[list[str], State]]:
    """(paper, question) -> (digests of the passages shown, in order; state), for every labelled pair."""
    out = {}
    for folder in dict.fromkeys(r["paper"] for r in rows):
        paper = load_paper(corpus / folder)
        judged = asyncio.run(HeuristicAssessor().assess_paper(paper))
        for a in judged:
            out[(folder, a.question_id)] = (shown_digests(paper, a.passages), a.state)
    return out


def figures(rows: list[dict], judged: dict) -> dict[str, dict]:
    tally: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows:
        if r["label"] == "skip":
            continue
        t = tally[r["half"]]
        shown, state = judged[(r["paper"], r["question"])]
        good = {loc["digest"] for loc in r["addresses"]}
        read = good | {loc["digest"] for loc in r["read_not_addressing"]}
        hits = [d in good for d in shown]
        if state is State.SUPPORTED:
            t["supported"] += 1
            t["supported_without"] += not any(hits)
        if r["label"] == "none-in-paper":
            t["nothing"] += 1
            t["nothing_shown"] += bool(shown)
            continue
        t["addressed"] += 1
        t["unverified"] += state is State.UNVERIFIED
        t["recall3"] += sum(hits[:3]) / min(3, len(good)) if good else 0.0
        if shown:
            t["with_shown"] += 1
            t["p1"] += hits[0]
            t["unread_first"] += shown[0] not in read
    out = {}
    for half in [h for h in HALVES if h in tally]:
        t = tally[half]
        out[half] = {
            "questions_addressed": int(t["addressed"]), "questions_with_nothing": int(t["nothing"]),
            "precision_at_1": _share(t["p1"], t["with_shown"]), "recall_at_3": _share(t["recall3"], t["addressed"]),
            "shown": _share(t["with_shown"], t["addressed"]),
            "unverified_where_addressed": _share(t["unverified"], t["addressed"]),
            "supported": int(t["supported"]),
            "supported_without_addressing_passage": _share(t["supported_without"], t["supported"]),
            "shown_where_nothing": _share(t["nothing_shown"], t["nothing"]),
            "unread_first_passages": int(t["unread_first"]),
        }
    return out


def _share(n: float, d: float) -> float | None:
    return round(n / d, 3) if d else None


def table(figs: dict[str, dict]) -> str:
    keys = list(next(iter(figs.values())))
    lines = [f"{'figure':40} " + " ".join(f"{h:>12}" for h in figs), "-" * 68]
    lines += [f"{k:40} " + " ".join(f"{'-' if figs[h][k] is None else figs[h][k]!s:>12}" for h in figs) for k in keys]
    return "\n".join(lines)


def main() -> int:
    ap = corpus_parser(__doc__)
    ap.add_argument("--half", choices=HALVES, help="only this half's papers (default: both, reported apart)")
    args = ap.parse_args()
    corpus = latex_corpus(args.shared, "eval_evidence")
    if corpus is None:
        return 2
    rows = [r for r in read_labels() if args.half in (None, r["half"])]
    figs = figures(rows, judge_all(corpus, rows))
    print(json.dumps(figs, indent=2) if args.json else table(figs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
