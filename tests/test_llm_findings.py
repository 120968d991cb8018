"""assess-v2 on the loopback server through the real openai client: must_fix / suggestions in the reply,
a verdict that follows them, a re-ask that sends the validation error back, evidence quotes checked."""

from __future__ import annotations


import pytest
from helpers import assess_and_close, mock_llm

from checklist_eval.assessors.llm.assessor import PromptSet
from checklist_eval.models import MUST_FIX_TAG, StructuredOutput
from checklist_eval.testing import FAKE_QUOTE, MockServer, sample_paper

KEY = "sk-test-SECRETKEY-0123456789abcdef"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("CE_TEST_KEY", KEY)


def llm(server: MockServer, **config):
    return mock_llm(server, **{"prompt_version": "assess-v2", **config})


run = assess_and_close


def test_v1_is_kept_and_v2_asks_for_findings():
    v1, v2 = PromptSet.load("assess-v1"), PromptSet.load("assess-v2")
    assert not v1.findings and v2.findings
    assert "claim" in v2.system and "must_fix" in v2.format_json and "Must fix:" in v2.format_text


@pytest.mark.parametrize("structured", ["json_schema", "json_object", "text"])
def test_verdicts_follow_must_fix(structured):
    paper = sample_paper(n_questions=6)
    with MockServer() as server:
        out = run(llm(server, structured=structured), paper)
    answered = [a for a in out if a.answer is not None and a.answer.is_answered]
    assert {a.correct for a in answered} == {True, False}
    for a in answered:
        assert a.verdict in ("correct", "incorrect")
        assert a.correct == (not a.must_fix)
        if not a.correct:
            assert a.review.splitlines()[0].endswith(MUST_FIX_TAG)
        assert a.provenance.strategy is StructuredOutput(structured)


def test_incorrect_without_must_fix_is_reasked_with_the_validation_error():
    paper = sample_paper(n_questions=2)
    item = paper.checklist.items[1]  # "Details in Appendix Z.": the server judges it incorrect
    item.justification = "Details in Appendix Z. [mock:omit-must-fix]"
    with MockServer() as server:
        assessor = llm(server)
        out = run(assessor, paper)
        calls = server.stats.chat_requests
    bad = out[1]
    assert not bad.correct and bad.must_fix and "Appendix Z" in bad.must_fix[0]
    assert bad.provenance.usage.calls == 2 and calls == 3  # one re-ask, for this question only
    # The re-ask carried the bad reply and the error: the server complies only when it sees them.
    msgs = assessor.messages_for(paper, item, StructuredOutput.JSON_SCHEMA)
    assert msgs[-1]["role"] == "user"  # the question itself is unchanged; the feedback was appended


def test_reask_gives_up_after_the_configured_number():
    from checklist_eval.errors import AssessorError

    paper = sample_paper(n_questions=2)
    paper.checklist.items[1].justification = "Details in Appendix Z. [mock:omit-must-fix]"
    with MockServer() as server:
        # reask=0: the first unusable reply is final (no feedback can fix it)
        with pytest.raises(AssessorError, match="must_fix"):
            run(llm(server, reask=0), paper)


def test_a_quote_not_in_the_paper_is_named_and_lowers_p():
    paper = sample_paper(n_questions=1)
    honest = sample_paper(n_questions=1)
    paper.checklist.items[0].justification = "See Section 2 for the method. [mock:fake-quote]"
    with MockServer(supports_logprobs=False) as server:
        faked = run(llm(server), paper)[0]
        clean = run(llm(server), honest)[0]
    assert faked.correct and faked.verdict == "unverifiable"
    assert FAKE_QUOTE in faked.unverifiable[0] and "not found in the paper" in faked.review
    assert 0.5 <= faked.p_correct < clean.p_correct  # less sure of the verdict, never against it
    assert not clean.unverifiable and clean.verdict == "correct"
