"""The offline assessor blocks only on hard evidence, and reads what a justification says, not a
keyword: the misreadings of issue 21, pinned on the very sentences real checklists hold."""

from __future__ import annotations

import asyncio
import re

import pytest

from checklist_eval.assessors.evidence.body import body_facts, evidence_text
from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor
from checklist_eval.assessors.heuristic.rules import denied_on_topic
from checklist_eval.assessors.evidence.relevance import bm25_scores, relevant
from checklist_eval.assessors.evidence.topics import TOPIC_WORDS
from checklist_eval.models import Answer, Checklist, ChecklistItem, Paper, Section
from checklist_eval.reading import checklists

SPEC = checklists.load("neurips-2026")
SECTIONS = [Section(number=str(n), title=t) for n, t in
            enumerate(["Introduction", "Method", "Experiments", "Limitations"], 1)]
BODY = ("1 Introduction\n\nWe build a solver library.\n\n2 Method\n\nThe harness runs agents on a workstation with "
        "an NVIDIA RTX 4090 GPU; a run takes 90 minutes. We use Adam with learning rate 1e-3 and batch size 32.\n\n"
        "3 Experiments\n\nTable 1: Results over 10 seeds, mean ± std.\nErrors are propagated through the pipeline; "
        "standard deviations are shown.\n\n4 Limitations\n\nThe method fails on very large instances; future work.\n")


def judge(qid: str, answer: Answer, justification: str, body: str = BODY):
    q = SPEC.question(qid)
    it = ChecklistItem.for_question(q, answer, justification)
    paper = Paper(source="p.tex", format="latex", body=body, sections=SECTIONS if body else [],
                  anchors=[f"Section {n}" for n in range(1, 5)] if body else [],
                  checklist=Checklist(id=SPEC.id, items=[it]))
    return asyncio.run(HeuristicAssessor().assess_item(paper, it))


def qid(topic_words: str) -> str:
    return next(q.id for q in SPEC.questions if re.search(topic_words, q.title, re.I))


COMPUTE, DETAILS, ERRORBARS = qid("compute"), qid("setting|details"), qid("significance")


@pytest.mark.parametrize("body", [BODY, ""])
def test_a_denial_of_something_else_is_not_a_contradiction(body):
    compute = judge(COMPUTE, Answer.YES, "Solvers run on a commodity workstation (Section 2); reproducing the "
                    "artifact does not require specialized compute.", body)
    details = judge(DETAILS, Answer.YES, "Section 2 lists the optimizer and learning rate. No hyperparameter sweep "
                    "was performed; the agent commits to one configuration per run.", body)
    for res in (compute, details):
        assert not any("opposite" in m or "denies" in m for m in res.must_fix), res.review
        assert res.correct


@pytest.mark.parametrize("body", [BODY, ""])
def test_a_yes_that_denies_itself_is_blocking(body):
    res = judge(ERRORBARS, Answer.YES, "We do not report error bars.", body)
    assert not res.correct and "opposite" in res.must_fix[0]
    # beside real support it is a question to the author, not a verdict
    mixed = judge(ERRORBARS, Answer.YES, "We do not report error bars for the ablation; Section 3 gives standard "
                  "deviations over 10 seeds for the main results.", body)
    assert mixed.correct and mixed.suggestions


def test_negation_scope():
    assert not denied_on_topic("No hyperparameter sweep was performed", "details")
    assert not denied_on_topic("reproducing the artifact does not require specialized compute", "compute")
    assert not denied_on_topic("no model training is performed beyond the frozen linear probe", "details")
    # a kind of the thing denied, not the thing: the qualifier is what the negation falls on
    assert not denied_on_topic("No multi-GPU or cluster compute was used", "compute")
    assert not denied_on_topic("we did not use distributed or cloud compute", "compute")
    assert denied_on_topic("No compute was used", "compute")
    assert denied_on_topic("We do not report the standard deviations", "errorbars")
    assert denied_on_topic("No theoretical results", "theory")
    assert denied_on_topic("The paper involves no human subjects", "human")
    assert denied_on_topic("We did not release the code", "code")


def test_an_explained_no_is_correct_and_a_bare_one_is_a_suggestion_never_better():
    explained = judge(ERRORBARS, Answer.NO, "Each configuration was trained once because a run costs three GPU "
                      "days.", body="")
    bare = judge(ERRORBARS, Answer.NO, "We do not report error bars.", body="")
    assert explained.correct and not explained.must_fix
    assert bare.correct and bare.suggestions and bare.p_correct < explained.p_correct


def test_whole_words_and_no_evidence_outside_the_work():
    assert not body_facts("Errors are propagated through the network.").has("safeguards")
    assert body_facts("Model weights are gated behind a licence agreement.").has("safeguards")
    text = ("1 Introduction\n\nWe study graphs.\n\nAcknowledgments\n\nWe thank the MIT Media Lab (MIT) for funding."
            "\n\nReferences\n\n[1] A. Author. Proof of convergence. 2020.\n\nA Prompts\n\nSystem prompt:\n"
            "You are a grader. Write a Proof of the claim.\n\nB More\n\nText.\n")
    facts = body_facts(text)
    assert not facts.has("licence_name") and not facts.has("proof")
    assert "MIT" not in evidence_text(text) and "We study graphs" in evidence_text(text)


def test_a_cited_place_must_be_about_the_claim():
    docs = ["We propose a solver and its architecture.", "Limitations: the method fails on large instances.",
            "Results with standard deviations over ten seeds."]
    scores = bm25_scores("limitations of the method fail", docs)
    assert scores.index(max(scores)) == 1 and min(scores) >= 0
    assert relevant("standard deviations seeds", docs, 2, top=1) and not relevant("standard deviation seeds",
                                                                                  docs, 0, top=1)
    assert bm25_scores("", docs) == [0.0, 0.0, 0.0]
    off = judge(qid("limitations"), Answer.YES, "Limitations are discussed in Section 1.")
    on = judge(qid("limitations"), Answer.YES, "Limitations are discussed in Section 4.")
    assert off.correct and any("does not seem to be about" in s for s in off.suggestions)
    assert on.correct and on.p_correct > off.p_correct


def test_a_cited_place_that_does_not_exist_stays_blocking_however_worded():
    for just in ("Table 17 reports this.", "Details are in Section 9.", "See Sections 3 and 7."):
        res = judge(ERRORBARS, Answer.YES, just)
        assert not res.correct and "does not exist" in res.must_fix[0], just


def test_reviews_use_the_question_words_never_internal_topic_names():
    from checklist_eval.assessors.evidence.body import _BODY_PATTERNS

    ids = {t for t in TOPIC_WORDS} | {"new_assets", "errorbars"} | set(_BODY_PATTERNS)
    internal = re.compile(r"\b(?:" + "|".join(sorted(i for i in ids if "_" in i or i in ("errorbars", "irb", "llm")))
                          + r")\b")
    for q in SPEC.questions:
        for answer in (Answer.YES, Answer.NO, Answer.NA):
            for just in ("See Section 1.", "We do not do this.", "Not applicable."):
                res = judge(q.id, answer, just)
                assert not internal.search(res.review), (q.id, answer, res.review)
                assert not internal.search(" ".join(res.evidence)), (q.id, answer, res.evidence)
