"""p_correct from the verdict token's log-probabilities as engines list them (issue 45): a token that merges
the punctuation before the value (``":true``, as Gemma's tokenizer does on llama.cpp's server) is the verdict,
and with one side listed the other is bounded by the least likely listed alternative, not by all the mass the
whitespace tokens held."""

from __future__ import annotations

import math

import pytest

from checklist_eval.assessors.llm.confidence import logprob_p_correct

REPLY = '{"review":"- fine","evidence":[],"must_fix":[],"suggestions":[],"correct":true,"p_correct":0.9}'


def tokens(verdict_token: str, alternatives: dict[str, float]) -> list[dict]:
    """The reply cut into three tokens around ``verdict_token``, its alternatives with these probabilities."""
    text = REPLY if "true" in verdict_token else REPLY.replace('"correct":true', '"correct":false')
    at = text.index(verdict_token)
    chosen = alternatives.get(verdict_token, 0.5)
    return [{"token": text[:at], "logprob": 0.0},
            {"token": verdict_token, "logprob": math.log(chosen),
             "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in alternatives.items()]},
            {"token": text[at + len(verdict_token):], "logprob": 0.0}]


def reply_of(verdict_token: str) -> str:
    return REPLY if "true" in verdict_token else REPLY.replace('"correct":true', '"correct":false')


def test_a_merged_token_is_the_verdict():
    content = tokens('":true', {'":true': 0.7, '":false': 0.2, " ": 0.1})
    assert logprob_p_correct(reply_of('":true'), content) == pytest.approx(0.7 / 0.9)


@pytest.mark.parametrize("verdict", ["true", "false"])
def test_one_side_listed_bounds_the_other_by_the_least_listed_alternative(verdict):
    # Whitespace holds 0.35 of the mass: taken as the other side before, it put p at 0.6 (true) / 0.4 (false).
    content = tokens(verdict, {verdict: 0.6, " ": 0.3, "\n": 0.05})
    p = logprob_p_correct(reply_of(verdict), content)
    want = 0.6 / (0.6 + 0.05)
    assert p == pytest.approx(want if verdict == "true" else 1 - want)


def test_with_no_alternative_listed_the_rest_of_the_mass_is_the_bound():
    content = tokens("true", {"true": 0.8})
    assert logprob_p_correct(REPLY, content) == pytest.approx(0.8)
