"""The text manipulation signals are read on: one spelling for what a reader sees as the same words.

A passage addressed to the assessor is matched against a few phrasings; an author hiding it from
those patterns (not from the model, which reads through them) spells it with zero-width characters,
soft hyphens, bidi controls, fullwidth or other compatibility letters, or odd spaces. NFKC folds the
compatibility forms, the invisible characters go, and whitespace becomes single spaces.
"""

from __future__ import annotations

import unicodedata

# Invisible when rendered: soft hyphen, zero-width space/joiners, word joiner, BOM, Mongolian vowel
# separator, bidi embeddings, overrides and isolates, invisible operators.
_INVISIBLE = dict.fromkeys(
    [0x00AD, 0x180E, 0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF,
     *range(0x202A, 0x202F), *range(0x2066, 0x206A)],
)


def signal_text(text: str) -> str:
    """``text`` as manipulation signals read it: NFKC, invisible characters removed, whitespace
    runs as one space."""
    folded = unicodedata.normalize("NFKC", text.translate(_INVISIBLE)).translate(_INVISIBLE)
    return " ".join(folded.split())
