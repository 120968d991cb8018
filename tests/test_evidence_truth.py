"""What the offline assessor says about a real paper is true of it, over all 42 whole papers of
``../shared/corpus/papers-latex`` (and the challenge PDFs for the bibliography):

- "supported" never stands beside a review that says the support could not be found;
- a finding that a paper has no references appears only on a paper with no ``\\cite``, no ``.bib`` or
  ``.bbl`` file and no printed bibliography."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from checklist_eval.assessors.heuristic import HeuristicAssessor
from checklist_eval.models import State
from checklist_eval.reading.parsing import load_paper

# What a review says when the paper's support for the answer was looked for and not found.
SUPPORT_MISSING = re.compile(
    r"does not seem to be about|could not be found|that we could find|but the body (?:names|has|never|mentions)"
    r"|found in the body|name no licence|no URL or release location|has no references", re.I)
NO_REFERENCES = "the paper has no references"
_CITE = re.compile(r"\\(?:[a-zA-Z]*cite[a-zA-Z]*|bibitem)\*?\s*(?:\[[^\]]*\]\s*){0,2}\{")


@pytest.fixture(scope="module")
def judged_papers(shared_dir):
    corpus = shared_dir / "corpus" / "papers-latex"
    folders = sorted(d for d in corpus.iterdir() if d.is_dir())
    assert len(folders) == 42
    out = []
    for folder in folders:
        paper = load_paper(folder)
        out.append((folder, paper, asyncio.run(HeuristicAssessor().assess_paper(paper))))
    return out


def test_supported_never_stands_beside_a_review_saying_the_support_is_missing(judged_papers):
    both = [f"{folder.name} q{a.question_id}: {m.group(0)}" for folder, _, judged in judged_papers for a in judged
            if a.state is State.SUPPORTED for m in [SUPPORT_MISSING.search(a.review)] if m]
    assert not both, both
    # the rule still leaves answers supported: it is no blanket "unverified"
    assert sum(a.state is State.SUPPORTED for _, _, judged in judged_papers for a in judged) >= 42


def _cites(folder: Path) -> bool:
    """Does the paper's source cite anything: a \\cite or \\bibitem in a .tex file, or a .bib/.bbl file?"""
    if any(folder.rglob("*.bib")) or any(folder.rglob("*.bbl")):
        return True
    return any(_CITE.search(p.read_text("utf-8", errors="replace")) for p in folder.rglob("*.tex"))


def test_no_references_is_said_only_of_a_paper_that_cites_nothing(judged_papers):
    said = {folder.name: folder for folder, _, judged in judged_papers for a in judged if NO_REFERENCES in a.review}
    false = [name for name, folder in said.items() if _cites(folder)]
    assert not false, f"'no references' said of papers that cite: {false}"


def test_no_references_is_not_said_of_a_challenge_pdf_with_a_printed_bibliography(shared_dir):
    papers = sorted((shared_dir / "corpus" / "anchor-sample" / "papers").glob("*/*.pdf"))[:6]
    assert papers
    for pdf in papers:
        paper = load_paper(pdf)
        printed = re.search(r"(?m)^\s*(?:References|Bibliography)\s*$", paper.body)
        judged = asyncio.run(HeuristicAssessor().assess_paper(paper))
        if printed:
            assert not [a.question_id for a in judged if NO_REFERENCES in a.review], pdf.name
