"""The evidence labelled set's shared definitions (``fixtures/evidence-labels/``): which papers and
questions it holds, which half each paper is in, and the stable locator of a paragraph (file, line range,
digest of its words). Read by ``eval_evidence.py`` and ``evidence_pool.py``."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from checklist_eval.adversary.corpus_split import DEVELOPMENT, HELD_OUT, half_of

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "fixtures" / "evidence-labels" / "labels.jsonl"
PAPERS_PER_HALF = 6
# The questions labelled: the ones whose answer a paragraph of the paper shows or not (claims and ethics
# are about the whole paper; code, assets and LLM questions mostly about places outside it).
QUESTION_TOPICS = ("limitations", "theory", "details", "errorbars", "compute", "licenses", "impacts", "human")


def chosen_papers(corpus: Path) -> list[tuple[str, str]]:
    """(half, folder): the first PAPERS_PER_HALF folders of each half of the fixed corpus split
    (``checklist_eval/adversary/corpus_split.tsv``) in sha256(folder name) order."""
    folders = sorted((d.name for d in corpus.iterdir() if d.is_dir()),
                     key=lambda n: hashlib.sha256(n.encode()).hexdigest())
    out = []
    for half in (DEVELOPMENT, HELD_OUT):
        out += [(half, f) for f in folders if half_of(f) == half][:PAPERS_PER_HALF]
    return out


def digest(text: str) -> str:
    """12 hex digits of sha256 over the paragraph's lower-case words: stable across re-wrapping."""
    return hashlib.sha256(" ".join(re.findall(r"\w+", text.lower())).encode()).hexdigest()[:12]


def locator(paper, start: int, text: str) -> dict:
    """Where a paragraph of the body is in the author's files: file, first and last line, digest."""
    first = paper.place_of(start)
    last = paper.place_of(start + max(0, len(text) - 1))
    file, _, line = first.rpartition(":")
    end_file, _, end_line = last.rpartition(":")
    end = int(end_line) if end_file == file and end_line.isdigit() else int(line or 0)
    return {"file": file, "lines": [int(line or 0), max(end, int(line or 0))], "digest": digest(text)}


def read_labels(path: Path = LABELS) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def shown_digests(paper, passages) -> list[str]:
    """The digest of the paragraph piece each shown passage quotes (its place and first words), in order;
    "" for a passage no piece matches."""
    from checklist_eval.assessors.evidence.passages import _index

    pieces = _index(paper.body).pieces
    out = []
    for p in passages:
        head = p.quote.rstrip("…")[:60]
        found = [q for q in pieces if paper.place_of(q.start) == p.where and " ".join(q.text.split()).startswith(head)]
        out.append(digest(found[0].text) if found else "")
    return out
