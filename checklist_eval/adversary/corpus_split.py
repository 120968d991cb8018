"""The fixed split of the shared whole papers (``../shared/corpus/papers-latex``) into the half the
offline assessor's rules are developed on and the half held out of every rule change, read from
``corpus_split.tsv`` beside this module (the file says how it was drawn)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

DEVELOPMENT = "development"
HELD_OUT = "held-out"
HALVES = (DEVELOPMENT, HELD_OUT)


@lru_cache(maxsize=1)
def split() -> dict[str, str]:
    """Folder name -> half, as committed."""
    text = resources.files("checklist_eval.adversary").joinpath("corpus_split.tsv").read_text("utf-8")
    out = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            half, folder = line.split("\t")
            out[folder.strip()] = half.strip()
    return out


def half_of(folder_name: str) -> str:
    """The half a paper folder belongs to; a paper not in the split was never used for rules: held out."""
    return split().get(folder_name, HELD_OUT)
