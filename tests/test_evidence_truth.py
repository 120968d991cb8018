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

from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor
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


# -- every finding that states a fact about the paper, checked against the paper's own source -------------

# A finding's words -> what the printed source (the .tex files but the checklist, without comments and
# \iffalse blocks) would hold if the finding were false.
FACT_FINDINGS = {
    "body names no std, standard error or confidence interval":
        r"\\pm|±|\bSEM\b|standard (?:deviation|error)|confidence interval|\bstd\b",
    "no hardware (GPU/CPU/TPU) or run time is mentioned": r"\b(?:GPU|CPU|TPU)s?\b|A100|H100|H200|V100",
    "no hardware (GPU/CPU type, memory) mentioned": r"\b(?:GPU|CPU|TPU)s?\b|A100|H100|H200|V100",
    "no theorem, lemma or proof found": r"\\begin\{(?:theorem|lemma|proposition|corollary|proof)\}",
    "never discusses limitations": r"(?i:limitation)",
    "mentions no IRB": r"\bIRB\b|(?i:institutional review)",
    "names a licence or terms of use": r"(?i:licen[cs]e|terms of use)",
    "name no licence": r"\bMIT\b|Apache|CC[- ]?BY|\bCC0\b|Creative Commons|\bGPL|\bBSD\b",
    "no URL, repository or supplement is mentioned": r"https?://|github\.com|\\url\{",
}


def printed_source(folder: Path, checklist_file: str) -> str:
    """What the paper's LaTeX prints, near enough: every .tex file but the checklist (its own file or its
    section of the main file), without comments, \\iffalse blocks or macro definitions."""
    out = []
    for p in sorted(folder.rglob("*.tex")):
        if str(p.relative_to(folder)) == checklist_file or "checklist" in p.name.lower():
            continue
        text = re.sub(r"(?<!\\)%.*", "", p.read_text("utf-8", errors="replace"))
        text = re.sub(r"\\iffalse\b.*?\\fi\b", "", text, flags=re.S)
        text = re.sub(r"\\section\*?\{[^}]*Checklist\}.*?(?=\\appendix|\\end\{document\}|\Z)", "", text, flags=re.S)
        out.append(re.sub(r"(?m)^\s*\\(?:re)?newcommand.*$", "", text))
    return "\n".join(out)


def _manifest(shared_dir: Path) -> dict[str, str]:
    lines = (shared_dir / "corpus" / "papers-latex" / "MANIFEST.tsv").read_text("utf-8").splitlines()
    head = lines[0].split("\t")
    rows = [dict(zip(head, line.split("\t"), strict=False)) for line in lines[1:] if line.strip()]
    return {r["folder"]: r["checklist_file"] for r in rows}


def _false_facts(text: str, judged) -> list[str]:
    out = []
    for a in judged:
        for note in [*a.must_fix, *a.suggestions]:
            for said, shown_by in FACT_FINDINGS.items():
                m = re.search(shown_by, text) if said in note else None
                if m:
                    out.append(f"q{a.question_id} says '{said}', but the paper has '{m.group(0)}'")
    return out


def test_no_finding_states_a_false_fact_about_a_shared_latex_paper(judged_papers, shared_dir):
    checklists = _manifest(shared_dir)
    false = {folder.name: wrong for folder, _, judged in judged_papers
             for wrong in [_false_facts(printed_source(folder, checklists.get(folder.name, "")), judged)] if wrong}
    assert not false, false


def _printed_sections(source: str) -> int:
    """How many numbered sections the main text prints (\\section before \\appendix, not starred)."""
    main = source.split("\\appendix")[0]
    return len(re.findall(r"\\section\s*\{", main))


def test_a_cited_section_called_missing_is_beyond_the_papers_numbered_sections(judged_papers, shared_dir):
    checklists = _manifest(shared_dir)
    wrong = []
    for folder, paper, judged in judged_papers:
        n = None
        for a in judged:
            for m in re.finditer(r"cites Section (\d+)(?:\.\d+)*, which does not exist", " ".join(a.must_fix)):
                main = next((p for p in folder.rglob("*.tex") if p.name == paper.source.rsplit("/", 1)[-1]), None)
                n = n if n is not None else _printed_sections(printed_source(folder, checklists.get(folder.name, "")))
                if int(m.group(1)) <= n and main is not None:
                    wrong.append(f"{folder.name} q{a.question_id}: Section {m.group(1)} of {n}")
    assert not wrong, wrong


def test_no_finding_states_a_false_fact_about_a_challenge_pdf(shared_dir):
    """The PDFs' text as our own reader extracts it, before the checklist: an IRB approval stated in the
    acknowledgements is an IRB approval."""
    false = {}
    for pdf in sorted((shared_dir / "corpus" / "anchor-sample" / "papers").glob("*/*.pdf")):
        paper = load_paper(pdf)
        text = re.split(r"NeurIPS Paper Checklist", paper.body)[0]
        wrong = _false_facts(text, asyncio.run(HeuristicAssessor().assess_paper(paper)))
        if wrong:
            false[pdf.name] = wrong
    assert not false, false
