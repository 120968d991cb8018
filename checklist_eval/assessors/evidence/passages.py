"""The passages of a paper a verdict rests on: the body cut into paragraph-sized pieces, ranked against
a question and its answer by the BM25 of ``relevance``, each with the place an author finds it
(file:line of a LaTeX source, page of a PDF; see ``Paper.places``).

Both assessors use them: the offline one shows the passage holding the fact it found (or the best
ranked ones), the LLM one receives the best ranked and cites one. Parts of the body that are no
evidence for a claim (bibliography, acknowledgements, prompt listings: ``body.evidence_spans``)
are never offered."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from checklist_eval.assessors.evidence.body import MAX_SCAN_CHARS, evidence_spans
from checklist_eval.assessors.evidence.relevance import K1, B, terms
from checklist_eval.models import ChecklistItem, Paper, Passage

PIECE_CHARS = 420  # a passage an author reads at a glance; long paragraphs are cut at sentence ends
QUOTE_CHARS = 300  # what a passage shows of its piece
MAX_PIECES = 4000  # a hostile body of a million one-line paragraphs is ranked on its first pieces only
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")


@dataclass(frozen=True)
class Piece:
    start: int
    text: str


@dataclass(frozen=True)
class _Index:
    pieces: tuple[Piece, ...]
    lengths: tuple[int, ...]
    df: Counter[str]
    average: float
    postings: dict[str, list[tuple[int, int]]]  # term -> (piece number, count in it), pieces in order


def _split(body: str) -> list[Piece]:
    """Paragraphs (blank-line separated) of the body, long ones cut into runs of whole sentences,
    each with its exact offset in the body."""
    out: list[Piece] = []
    for m in re.finditer(r"\S(?:.|\n(?![ \t]*\n))*", body):
        start, end = m.start(), m.end()
        while end - start > PIECE_CHARS:
            window = body[start:start + PIECE_CHARS]
            cut = max((s.start() for s in _SENTENCE_END.finditer(window)), default=0)
            cut = cut or window.rfind(" ") + 1 or PIECE_CHARS
            out.append(Piece(start, window[:cut].rstrip()))
            start += cut
            while start < end and body[start].isspace():
                start += 1
        if start < end:
            out.append(Piece(start, body[start:end]))
        if len(out) >= MAX_PIECES:
            break
    return out


@lru_cache(maxsize=8)
def _index(body: str) -> _Index:
    body = body[:MAX_SCAN_CHARS]
    excluded = evidence_spans(body)
    pieces = tuple(p for p in _split(body) if len(p.text.split()) >= 6 and not _inside(p.start, excluded))
    counts = tuple(Counter(terms(p.text)) for p in pieces)
    lengths = tuple(sum(c.values()) for c in counts)
    df: Counter[str] = Counter()
    postings: dict[str, list[tuple[int, int]]] = {}
    for i, c in enumerate(counts):
        df.update(c.keys())
        for t, tf in c.items():
            postings.setdefault(t, []).append((i, tf))
    return _Index(pieces, lengths, df, (sum(lengths) / len(lengths)) if lengths else 1.0, postings)


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in spans)


def ranked(body: str, query: str) -> list[tuple[float, Piece]]:
    """The pieces sharing a term with ``query``, best first (BM25, non-negative idf)."""
    index = _index(body)
    q = set(terms(query))
    n = len(index.pieces)
    if not n or not q:
        return []
    # Only the pieces holding a query term are touched (a question against a long paper asked every piece
    # for every term: most of the offline assessor's time); the sums add the terms in the same order.
    sums: dict[int, float] = {}
    for t in q:
        found = index.postings.get(t)
        if not found:
            continue
        idf = math.log(1 + (n - index.df[t] + 0.5) / (index.df[t] + 0.5))
        for i, tf in found:
            norm = K1 * (1 - B + B * index.lengths[i] / index.average)
            sums[i] = sums.get(i, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
    scored = [(s, index.pieces[i]) for i, s in sorted(sums.items()) if s > 0]
    return sorted(scored, key=lambda x: -x[0])


def query_of(item: ChecklistItem, extra: str = "") -> str:
    """What a passage about this answer would share words with: the question, its guidelines' first
    lines (their terms name what a paper says), the justification."""
    return " ".join([item.title or "", item.question or "", *item.guidelines[:3], item.justification or "", extra])


def passage(paper: Paper, piece: Piece) -> Passage:
    text = " ".join(piece.text.split())
    quote = text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return Passage(quote=quote, where=paper.place_of(piece.start))


def best_passages(paper: Paper, item: ChecklistItem, k: int = 2, extra: str = "") -> list[Passage]:
    """The ``k`` passages of the body that rank best against the question and the answer's justification."""
    return [passage(paper, p) for _, p in ranked(paper.body, query_of(item, extra))[:k]]


def passage_holding(paper: Paper, snippet: str) -> Passage | None:
    """The passage of the body that holds ``snippet`` (a fact's quoted words, "…" ends allowed), if any."""
    words = re.findall(r"\w+", snippet.replace("…", " "))[1:-1]  # the ends may be cut mid-word
    if len(words) < 2:
        return None
    rx = re.compile(r"\W+".join(map(re.escape, words[:12])))
    m = rx.search(paper.body[:MAX_SCAN_CHARS])
    if not m:
        return None
    pieces = _index(paper.body).pieces
    holding = [p for p in pieces if p.start <= m.start() < p.start + len(p.text) + 1]
    return passage(paper, holding[0]) if holding else None


def passages_in(paper: Paper, text: str, query: str, k: int = 1) -> list[Passage]:
    """The best ranked passages inside ``text``, a stretch of the body (a cited section)."""
    start = paper.body.find(text[:200])
    if start < 0:
        return []
    inside = [p for _, p in ranked(paper.body, query) if start <= p.start < start + len(text)]
    return [passage(paper, p) for p in inside[:k]]


# --------------------------------------------------------------------------------------------------
# The passages offered to a model (assess-v4) and the ones its verdict rests on

OFFERED = 3
_TAG = re.compile(r"\[P(\d+)\]")


def passages_block(offered: list[Passage]) -> str:
    """The question block's passages, tagged [P1], [P2], ... for the model to cite."""
    if not offered:
        return "Passages of the paper ranked most relevant to this question: none found (cite [P0])."
    lines = ["Passages of the paper ranked most relevant to this question (cite the one your verdict rests on"
             " by its tag, or [P0] when none bears on it):"]
    return "\n".join(lines + [f"[P{i}] ({p.where or 'paper'}) {p.quote}" for i, p in enumerate(offered, 1)])


def offered_passages(paper: Paper, item: ChecklistItem) -> list[Passage]:
    return best_passages(paper, item, k=OFFERED)


def rested_on(paper: Paper, evidence: list[str], offered: list[Passage]) -> list[Passage]:
    """The passages a model's verdict rests on: the offered ones its evidence cites by tag, then the
    passages holding its verbatim quotes (at least four words, found in the body)."""
    cited = [offered[int(n) - 1] for e in evidence for n in _TAG.findall(e) if 0 < int(n) <= len(offered)]
    quoted = [passage_holding(paper, f"… {_TAG.sub('', e)} …") for e in evidence[:8]
              if len(_TAG.sub("", e).split()) >= 4]
    return list(dict.fromkeys([*cited, *(p for p in quoted if p is not None)]))[:3]
