"""Are the quotes a model returns as evidence really in the paper? Matching ignores case, punctuation,
whitespace and line-break hyphenation ("identi-\\nfiable"), and an elided quote ("A ... B") matches
when each of its parts does, in order."""

from __future__ import annotations

import re
from functools import lru_cache

MIN_QUOTE_WORDS = 4  # shorter items are section names or single terms, not quotes to check
_ELLIPSIS = re.compile(r"\.\.\.+|…|\[\.\.\.\]")
_POINTER = re.compile(r"^(?:Section|Sec\.|Appendix|Table|Figure|Fig\.|§)\s*[A-Z]?\d*(?:\.\d+)*\b", re.I)


def normalize(text: str) -> str:
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)  # hyphenation at a line break
    text = re.sub(r"[^\w]+", " ", text.lower())
    return f" {' '.join(text.split())} "


@lru_cache(maxsize=8)
def _normalized_paper(text: str) -> str:
    return normalize(text)


def quote_found(quote: str, paper_text: str) -> bool:
    haystack = _normalized_paper(paper_text)
    pos = 0
    for part in _ELLIPSIS.split(quote):
        needle = normalize(part).strip()
        if not needle:
            continue
        at = haystack.find(f" {needle} ", pos)
        if at < 0:
            # a quote cut mid-word at either end still counts when its inner words are there
            at = haystack.find(needle, pos)
            if at < 0:
                return False
        pos = at + len(needle)
    return True


def missing_quotes(evidence: list[str], paper_text: str) -> list[str]:
    """The evidence items that are quotes (not section names, long enough) and are not in the paper."""
    out = []
    for item in evidence:
        quote = item.strip().strip("\"'“”‘’`")
        if len(quote.split()) < MIN_QUOTE_WORDS or _POINTER.match(quote):
            continue
        if not quote_found(quote, paper_text):
            out.append(quote)
    return out
