"""Print, for each (paper, question) of the evidence labelled set, the pool of paragraphs a reader labels:
the passages the offline assessor shows today, the best paragraphs inside the sections the justification
cites, the best ranked against the question and its guidelines alone, and the paragraphs densest in the
topic's words. Each with a stable locator (file, line range, digest of its text). Used to draw up
``fixtures/evidence-labels/labels.jsonl``; the labels themselves are a reader's, not this script's.

    python scripts/evidence_pool.py [--shared ../shared] > pool.txt
    python scripts/evidence_pool.py --build notes.txt   # a reader's notes -> labels.jsonl
    python scripts/evidence_pool.py --add notes-2.txt   # paragraphs read later, added to labels.jsonl

The notes have one line per (paper, question): ``folder question digest...`` naming the pool paragraphs
that address the question (``L:file:line`` names one outside the pool), ``none`` when the paper has
nothing on it, ``skip`` when the reader could not settle it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from evidence_labels import LABELS, QUESTION_TOPICS, chosen_papers, locator, read_labels  # noqa: E402

from checklist_eval.assessors.evidence.body import pointers_in, section_texts  # noqa: E402
from checklist_eval.assessors.evidence.passages import _index, ranked  # noqa: E402
from checklist_eval.assessors.evidence.topics import TOPIC_WORDS, topic_of  # noqa: E402
from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor  # noqa: E402
from checklist_eval.reading.parsing import load_paper  # noqa: E402


def pool(paper, item, shown) -> list:
    pieces = _index(paper.body).pieces
    by_start = {p.start: p for p in pieces}
    out = []
    for a in shown:
        out += [p for p in pieces if paper.place_of(p.start) == a.where and " ".join(p.text.split())[:40]
                in a.quote][:1]
    texts = section_texts(paper)
    q = f"{item.title} {item.question} {' '.join(item.guidelines[:3])}"
    for ptr in pointers_in(item.justification or "")[:4]:
        if ptr.label in texts:
            s = paper.body.find(texts[ptr.label][:200])
            out += [p for _, p in ranked(paper.body, q) if s <= p.start < s + len(texts[ptr.label])][:2]
    out += [p for _, p in ranked(paper.body, q)[:3]]
    rx = TOPIC_WORDS.get(topic_of(item) or "")
    if rx is not None:
        dense = sorted(pieces, key=lambda p: -len(rx.findall(p.text)))
        out += [p for p in dense[:3] if rx.search(p.text)]
    seen, uniq = set(), []
    for p in out:
        if p.start not in seen and p.start in by_start:
            seen.add(p.start)
            uniq.append(p)
    return uniq[:9]


def build(corpus: Path, notes: Path) -> list[dict]:
    """labels.jsonl rows from a reader's notes: every pool paragraph read, marked addressing or not."""
    said: dict[tuple[str, str], list[str]] = {}
    for line in notes.read_text("utf-8").splitlines():
        if line.strip():
            folder, qid, *marks = line.split()
            said[(folder, qid)] = marks
    rows = []
    for half, folder in chosen_papers(corpus):
        paper = load_paper(corpus / folder)
        judged = asyncio.run(HeuristicAssessor().assess_paper(paper))
        pieces = _index(paper.body).pieces
        everywhere = {loc["digest"]: loc for p in pieces for loc in [locator(paper, p.start, p.text)]}
        for item, a in zip(paper.checklist.items, judged, strict=True):
            marks = said.get((folder, item.id))
            if marks is None or item.answer is None:
                continue
            read = {locator(paper, p.start, p.text)["digest"]: locator(paper, p.start, p.text)
                    for p in pool(paper, item, a.passages)}
            yes = []
            for m in marks:
                if m.startswith("L:"):
                    file, line = m[2:].rsplit(":", 1)
                    yes += [loc for loc in everywhere.values()
                            if loc["file"] == file and loc["lines"][0] <= int(line) <= loc["lines"][1]][:1]
                elif m not in ("none", "skip"):
                    yes.append(everywhere[m])  # a paragraph read in another question's pool
            label = "skip" if marks == ["skip"] else "none-in-paper" if marks == ["none"] else "addressed"
            rows.append({"paper": folder, "half": half, "question": item.id, "topic": topic_of(item),
                         "answer": item.answer.value, "label": label, "addresses": yes,
                         "read_not_addressing": [loc for d, loc in read.items() if loc not in yes]})
    return rows


def add(corpus: Path, notes: Path) -> list[dict]:
    """labels.jsonl with the paragraphs of a second reading added: lines ``folder question digest yes|no``
    (paragraphs shown after a ranking change that the first pool did not hold). A "yes" on a question
    labelled none-in-paper makes it addressed: the first reading missed it."""
    rows = read_labels()
    by_pair = {(r["paper"], r["question"]): r for r in rows}
    located: dict[str, dict[str, dict]] = {}
    for line in notes.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        folder, qid, digest_, verdict = line.split()
        if folder not in located:
            paper = load_paper(corpus / folder)
            located[folder] = {loc["digest"]: loc for p in _index(paper.body).pieces
                               for loc in [locator(paper, p.start, p.text)]}
        row, loc = by_pair[(folder, qid)], located[folder][digest_]
        if verdict == "yes":
            row["addresses"].append(loc)
            row["label"] = "addressed" if row["label"] == "none-in-paper" else row["label"]
        else:
            row["read_not_addressing"].append(loc)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--build", type=Path, help="a reader's notes: write labels.jsonl from them")
    ap.add_argument("--add", type=Path, help="a second reading's notes: add them to labels.jsonl")
    args = ap.parse_args()
    corpus = args.shared / "corpus" / "papers-latex"
    if args.build or args.add:
        rows = build(corpus, args.build) if args.build else add(corpus, args.add)
        LABELS.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), "utf-8")
        print(f"{len(rows)} labelled (paper, question) pairs -> {LABELS}")
        return 0
    for half, folder in chosen_papers(corpus):
        paper = load_paper(corpus / folder)
        judged = asyncio.run(HeuristicAssessor().assess_paper(paper))
        for item, a in zip(paper.checklist.items, judged, strict=True):
            if topic_of(item) not in QUESTION_TOPICS or item.answer is None:
                continue
            print(f"\n=== {half} {folder} q{item.id} [{topic_of(item)}] {item.answer.value}: "
                  f"{(item.justification or '')[:300]}")
            for p in pool(paper, item, a.passages):
                loc = locator(paper, p.start, p.text)
                print(f"  - {loc['file']}:{loc['lines'][0]}-{loc['lines'][1]} {loc['digest']} :: "
                      f"{' '.join(p.text.split())[:330]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
