"""A rule catches a lie, not the adversary's sentence for it. The adversary plants fixed phrasings
(``adversary/phrasings.py``); a rule that fires on those more often than on the same lie in other words
measures the sentences. ``scripts/eval_rewordings.py`` plants both over every shared paper and names such a
rule; here the same check runs on three papers of the development half, and the one rule it found in
heuristic-rules-8 (a release promised for later, caught in 61% of the adversary's promises and 14% of the
hand-worded ones) is held on wordings written for this test alone."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

from checklist_eval.adversary.attack import STRATEGIES
from checklist_eval.adversary.corpus_split import DEVELOPMENT, split
from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor
from checklist_eval.adversary.phrasings import Context
from checklist_eval.models import Answer, Checklist, ChecklistItem, Paper
from checklist_eval.reading import checklists
from checklist_eval.reading.parsing import load_paper

ROOT = Path(__file__).resolve().parents[1]
SPEC = checklists.load("neurips-2024")
CODE = "5"
LATER = "the justification only speaks of a later release"


def _script():
    spec = importlib.util.spec_from_file_location("eval_rewordings", ROOT / "scripts" / "eval_rewordings.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def judge_code(justification: str):
    it = ChecklistItem.for_question(SPEC.question(CODE), Answer.YES, justification)
    body = "1 Introduction\n\nWe study calibration.\n\n2 Experiments\n\nWe train on CIFAR-10.\n"
    paper = Paper(source="p.tex", format="latex", body=body, checklist=Checklist(id=SPEC.id, items=[it]))
    return asyncio.run(HeuristicAssessor().assess_item(paper, it))


@pytest.mark.parametrize("promise", [
    # the adversary's own, then other wordings of the same promise
    *STRATEGIES["release_upon_acceptance"].phrasings(None, Context("Q", "9")),  # type: ignore[arg-type]
    "The repository goes public after the reviews.",
    "Code release is planned for the camera-ready deadline.",
    "We expect to open-source the implementation in the coming months.",
    "Data and code: available from the authors on request.",
    "Our toolkit is scheduled for public release next year.",
    "A cleaned-up version of the code is forthcoming.",
    "Once de-anonymised, the GitHub link will be added.",
])
def test_a_release_promised_for_later_is_said_so_in_any_words(promise):
    res = judge_code(promise)
    assert any(LATER in s for s in res.suggestions), (promise, res.review)


@pytest.mark.parametrize("delivered", [
    "We release the code and data with the paper.",
    "All code is available at an anonymous repository.",
    "We provide the scripts that reproduce every experiment.",
    "Our implementation is open source and documented.",
])
def test_a_release_made_now_is_no_promise(delivered):
    assert not any(LATER in s for s in judge_code(delivered).suggestions), delivered


def test_no_rule_fires_on_the_adversarys_sentences_more_than_on_other_words(shared_dir):
    ev = _script()
    corpus = shared_dir / "corpus" / "papers-latex"
    rows = []
    for name in sorted(name for name, half in split().items() if half == DEVELOPMENT)[:3]:
        rows += asyncio.run(ev.judge_paper(load_paper(corpus / name), name, 2))
    for body in ("with body", "without body"):
        plants = [r for r in rows if r["strategy"] and r["body"] == body]
        assert {r["wording"] for r in plants} == {"adversary", "hand"} and len(plants) > 100
        assert ev.knowing(plants, 0.15) == [], body
