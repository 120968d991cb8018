"""The fixed split of the shared whole papers (``../shared/corpus/papers-latex``) into the half the
offline assessor's rules are developed on and the half held out of every rule change, read from
``corpus_split.tsv`` beside this module (the file says how it was drawn)."""

from __future__ import annotations

import hashlib
import re
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


_ANCHOR_NAME = re.compile(r"^\d+_(?:genuine|adversarial)_(?:paper_)?")


def anchor_family(folder_name: str) -> str:
    """The paper a folder of the challenge's anchor sample is a version of: ``10_genuine_AutoML`` and
    ``3_adversarial_paper_AutoML`` are both ``AutoML``."""
    return _ANCHOR_NAME.sub("", folder_name)


def anchor_half(folder_name: str) -> str:
    """The half of the anchor sample (``../shared/corpus/anchor-sample``) a folder belongs to, drawn by
    sha256 of its family so a genuine paper and its adversarial copy always land together (the evidence
    read from one would otherwise leak into the other)."""
    digest = hashlib.sha256(anchor_family(folder_name).encode()).hexdigest()
    return DEVELOPMENT if int(digest, 16) % 2 == 0 else HELD_OUT
