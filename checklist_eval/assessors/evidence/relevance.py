"""Which of a paper's sections are about a claim: Okapi BM25 over the numbered sections.

Small and self-contained (a few lines of arithmetic): the idf used is the non-negative
``log(1 + (N - n + 0.5) / (n + 0.5))``, so a term found in most sections weighs little but never
counts against a section, and a corpus of one or two sections still ranks."""

from __future__ import annotations

import math
import re
from collections import Counter

K1, B = 1.5, 0.75
_STOP = frozenset(
    "the a an and or of in to for with is are was were be been by on at as it its this that these those our we us"
    " they their there here paper section sections appendix table figure see also all any each such which from"
    " into than then so not no yes can may use used using provide provided details detail discussed describe"
    " described results work".split()
)


def terms(text: str) -> list[str]:
    """Lower-case word stems (first 6 letters) without stop words: "licences" and "licence" agree."""
    return [w[:6] for w in re.findall(r"[a-z][a-z0-9-]+", text.lower()) if w not in _STOP and len(w) > 2]


class Bm25:
    """BM25 over a fixed list of documents, their term counts computed once for any number of queries."""

    def __init__(self, documents: list[str]):
        self.docs = [Counter(terms(d)) for d in documents]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = (sum(self.lengths) / len(self.docs)) if self.docs else 1.0

    def scores(self, query: str) -> list[float]:
        """The BM25 score of every document for ``query`` (0 for an empty query or corpus)."""
        docs, q = self.docs, set(terms(query))
        if not docs or not q:
            return [0.0] * len(docs)
        n, avg = len(docs), self.avg or 1.0
        idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t in q for df in [sum(t in d for d in docs)]}
        scores = []
        for d, length in zip(docs, self.lengths, strict=True):
            s = 0.0
            for t in q:
                f = d.get(t, 0)
                if f:
                    s += idf[t] * f * (K1 + 1) / (f + K1 * (1 - B + B * length / avg))
            scores.append(s)
        return scores


def bm25_scores(query: str, documents: list[str]) -> list[float]:
    """The BM25 score of every document for ``query`` (0 for an empty query or corpus)."""
    return Bm25(documents).scores(query)


def relevant(query: str, documents: list[str], index: int, top: int = 3, share: float = 0.5) -> bool:
    """Is document ``index`` among the ones about ``query``: sharing a term with it, and in the best
    ``top`` or scoring at least ``share`` of the best? A query no document matches says nothing
    against any of them."""
    return relevant_by(bm25_scores(query, documents), index, top, share)


def relevant_by(scores: list[float], index: int, top: int = 3, share: float = 0.5) -> bool:
    """``relevant`` on scores already computed (one ranking serves every pointer of a justification)."""
    best = max(scores, default=0.0)
    if best <= 0:
        return True
    if scores[index] <= 0:
        return False  # shares no term with the claim
    rank = sorted(range(len(scores)), key=lambda i: -scores[i]).index(index)
    return rank < top or scores[index] >= share * best
