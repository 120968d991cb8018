"""Where a script finds the 42 whole LaTeX papers of the shared material
(``../shared/corpus/papers-latex``, beside the checkout by default): the flags that name it and the
one line a script says when it is not there. Used by the scripts that read that corpus."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def corpus_parser(doc: str | None) -> argparse.ArgumentParser:
    """A script's parser (its description the first paragraph of ``doc``) with ``--shared`` (the shared
    folder) and ``--json`` (figures as JSON instead of a table)."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--json", action="store_true")
    return ap


def latex_corpus(shared: Path, script: str) -> Path | None:
    """The corpus of whole LaTeX papers under ``shared``; None, after one line on stderr naming the
    folder, when it is not there."""
    corpus = shared / "corpus" / "papers-latex"
    if not corpus.is_dir():
        print(f"{script}: {corpus} not found (pass --shared)", file=sys.stderr)
        return None
    return corpus
