"""A paper too long for the context, cut to the passages most relevant to one question.

The text is split into passages of whole paragraphs (at most ``PASSAGE_CHARS`` each; a longer paragraph
is split at its lines), ranked by BM25 against the question block (``relevance.Bm25``), and taken best
first while they fit the budget; passages no term of the question reaches follow in reading order, so
the budget is always used. The chosen passages are given in reading order, each gap marked with how much
was left out, so the model knows the text it sees is partial.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from checklist_eval.assessors.evidence.relevance import Bm25

__all__ = ["PASSAGE_CHARS", "Excerpt", "excerpt"]

PASSAGE_CHARS = 1500  # about a paragraph or two: small enough to rank, big enough to read
MAX_PASSAGES = 4000  # bounds the ranking of a hostile, enormous body (the rest reads as one passage)
_PARAGRAPH = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class Excerpt:
    text: str
    share: float  # characters of the paper given / characters of the paper


def _pieces(paragraph: str) -> list[str]:
    """``paragraph`` in pieces of at most PASSAGE_CHARS, cut at line ends where it has them."""
    out: list[str] = []
    while len(paragraph) > PASSAGE_CHARS:
        cut = paragraph.rfind("\n", 0, PASSAGE_CHARS)
        cut = cut if cut > PASSAGE_CHARS // 2 else PASSAGE_CHARS
        out.append(paragraph[:cut])
        paragraph = paragraph[cut:]
    return [*out, paragraph]


@lru_cache(maxsize=8)
def passages(text: str) -> tuple[tuple[str, ...], Bm25]:
    """The paper's passages (joined they give the text back, blank lines aside) and their index."""
    out: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        for piece in _pieces(paragraph):
            if out and len(out[-1]) + len(piece) + 2 <= PASSAGE_CHARS:
                out[-1] = f"{out[-1]}\n\n{piece}"
            else:
                out.append(piece)
    if len(out) > MAX_PASSAGES:
        out = [*out[: MAX_PASSAGES - 1], "\n\n".join(out[MAX_PASSAGES - 1:])]
    return tuple(out), Bm25(out)


def _gap(chars: int) -> str:
    return f"[... {chars} characters of the paper not shown ...]"


def excerpt(text: str, query: str, budget: int) -> Excerpt:
    """At most ``budget`` characters of ``text``: the passages most relevant to ``query`` (all of it
    when it fits)."""
    if len(text) <= budget:
        return Excerpt(text, 1.0)
    parts, index = passages(text)
    scores = index.scores(query)
    order = sorted(range(len(parts)), key=lambda i: (-scores[i], i))
    chosen: set[int] = set()
    used = 0
    for i in order:
        cost = len(parts[i]) + len(_gap(len(text))) + 4  # the passage, its gap marker, separators
        if used + cost <= budget:
            chosen.add(i)
            used += cost
    shown: list[str] = []
    skipped = 0
    for i, part in enumerate(parts):
        if i in chosen:
            if skipped:
                shown.append(_gap(skipped))
                skipped = 0
            shown.append(part)
        else:
            skipped += len(part) + 2
    if skipped:
        shown.append(_gap(skipped))
    given = sum(len(parts[i]) for i in chosen)
    return Excerpt("\n\n".join(shown), given / max(1, len(text)))
