"""The LLM assessor's verdicts rest on passages of the paper (assess-v4): the question block lists the
passages that rank best against the question (tagged [P1]..), the verdict cites one, and the assessment
carries the cited passage with its place and the state it gives. Against the loopback server through
the real openai client."""

from __future__ import annotations

import pytest
from helpers import assess_and_close, error_bars_paper, mock_llm

from checklist_eval.assessors.evidence.passages import offered_passages
from checklist_eval.models import Paper, State
from checklist_eval.testing import MockServer

pytestmark = pytest.mark.usefixtures("mock_key")


def paper_with_places(marker: str = "") -> Paper:
    """A sample paper whose body has places (as a parsed PDF has pages) and one answer the mock judges
    correct from its pointer (Section 2 exists)."""
    paper = error_bars_paper(f"Error bars are reported, see Section 2. {marker}")
    paper.places = [(0, "page 1"), (len(paper.body) // 2, "page 2")]
    return paper


def test_v4_lists_the_ranked_passages_with_their_place_and_v3_does_not():
    paper = paper_with_places()
    item = paper.checklist.items[0]
    offered = offered_passages(paper, item)
    assert offered and offered[0].where in ("page 1", "page 2") and "error bars" in offered[0].quote
    with MockServer() as server:
        v4, v3 = mock_llm(server, prompt_version="assess-v4"), mock_llm(server, prompt_version="assess-v3")
        block = v4.messages_for(paper, item, v4.quirks().strategy)[-1]["content"]
        assert f"[P1] ({offered[0].where}) {offered[0].quote}" in block
        assert "[P1]" not in v3.messages_for(paper, item, v3.quirks().strategy)[-1]["content"]
        v4_system = v4.messages_for(paper, item, v4.quirks().strategy)[0]["content"]
        assert "[P0]" in v4_system  # the reply format asks for the tag


def test_a_verdict_citing_a_passage_is_supported_and_carries_it():
    paper = paper_with_places()
    with MockServer() as server:
        out = assess_and_close(mock_llm(server, prompt_version="assess-v4"), paper)
    first = out[0]
    assert first.correct and first.state is State.SUPPORTED
    assert first.passages[0] == offered_passages(paper, paper.checklist.items[0])[0]
    assert first.passages[0].where.startswith("page ")


def test_a_correct_verdict_citing_no_passage_is_unverified():
    paper = paper_with_places("[mock:cite-none]")
    with MockServer() as server:
        out = assess_and_close(mock_llm(server, prompt_version="assess-v4"), paper)
    first = out[0]
    assert first.correct and first.state is State.UNVERIFIED  # c_i unchanged: still correct
    assert first.passages  # the best ranked passage is still shown, for the author to check


def test_an_incorrect_verdict_is_contradicted():
    paper = paper_with_places()
    paper.checklist.items[0].justification = "Error bars are in Appendix Z."  # the mock: Appendix Z is absent
    with MockServer() as server:
        out = assess_and_close(mock_llm(server, prompt_version="assess-v4"), paper)
    assert not out[0].correct and out[0].state is State.CONTRADICTED
