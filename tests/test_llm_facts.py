"""The LLM assessor gets the offline assessor's hard evidence (assess-v3): the heuristic's blocking
findings go into the question block as tagged facts, and a verdict that ignores one is asked again
once. Against the loopback server through the real openai client."""

from __future__ import annotations

import pytest
from helpers import assess_and_close, error_bars_paper, mock_llm

from checklist_eval.assessors.llm.facts import ignored_facts, offline_facts
from checklist_eval.testing import MockServer

pytestmark = pytest.mark.usefixtures("mock_key")


def contradicting_paper(marker: str = ""):
    """A Yes on error bars whose own justification denies them: a blocking offline finding."""
    return error_bars_paper(f"We do not report error bars for any experiment. {marker}")


def test_blocking_findings_become_tagged_facts_in_the_question_block():
    paper = contradicting_paper()
    facts = offline_facts(paper, paper.checklist.items[0])
    assert facts and "opposite" in facts[0]
    with MockServer() as server:
        v3, v2 = mock_llm(server, prompt_version="assess-v3"), mock_llm(server, prompt_version="assess-v2")
        block = v3.messages_for(paper, paper.checklist.items[0], v3.quirks().strategy)[-1]["content"]
        assert f"[F1] {facts[0]}" in block
        assert "[F1]" not in v2.messages_for(paper, paper.checklist.items[0], v2.quirks().strategy)[-1]["content"]
        # a question without blocking findings says so, and has no tag to address
        other = v3.messages_for(paper, paper.checklist.items[1], v3.quirks().strategy)[-1]["content"]
        assert "offline checks: none" in other and "[F1]" not in other


def test_a_verdict_that_ignores_a_fact_is_asked_again_once():
    paper = contradicting_paper("[mock:ignore-facts]")
    with MockServer() as server:
        out = assess_and_close(mock_llm(server, prompt_version="assess-v3"), paper)
    first = out[0]
    assert first.provenance.usage.calls == 2  # the ignoring verdict, then the re-ask
    assert not first.correct and first.must_fix and first.must_fix[0].startswith("[F1]")
    assert out[1].provenance.usage.calls == 1  # no facts, no re-ask


def test_an_obedient_verdict_is_not_reasked_and_v2_never_is():
    with MockServer() as server:
        out = assess_and_close(mock_llm(server, prompt_version="assess-v3"), contradicting_paper())
        assert out[0].provenance.usage.calls == 1 and not out[0].correct and "[F1]" in out[0].must_fix[0]
        old = assess_and_close(mock_llm(server, prompt_version="assess-v2"), contradicting_paper("[mock:ignore-facts]"))
        assert old[0].provenance.usage.calls == 1


def test_what_counts_as_addressing_a_fact():
    assert ignored_facts(2, [], "- fine", []) == [1, 2]
    assert ignored_facts(2, [], "- [F2] is about another question", ["[F1] not relevant: see Table 1"]) == []
    assert ignored_facts(2, ["[F1] the justification denies the answer"], "", []) == []
    assert ignored_facts(0, [], "", []) == []
