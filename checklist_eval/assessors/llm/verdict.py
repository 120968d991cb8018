"""The verdict a model is asked for (``Verdict``: reasoning before the verdict, must_fix tied to it) and how a
reply is read, one parser per structured-output strategy (instructor-style):

    json_schema  -> strict parse of the schema (``grammar``: the schema and llama.cpp grammar it is sent as)
    json_object  -> tolerant JSON parse (first {...}, aliases)
    text         -> "Verdict: correct" / "Score: 1" / "Confidence: 0.8" lines

``endpoint.formats.FALLBACK`` gives the order ``auto`` walks when an endpoint refuses a format. The probability
reported with a verdict is ``confidence``'s.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable

from pydantic import ConfigDict, Field, ValidationError

from checklist_eval.models import Model, StructuredOutput

__all__ = ["InvalidOutput", "Verdict", "check_findings", "parse"]


class InvalidOutput(ValueError):
    """The model's reply does not hold a usable verdict; the assessor re-asks (bounded)."""


class Verdict(Model):
    """What the model returns. Field order is the generation order: reasoning before the verdict."""

    model_config = ConfigDict(extra="forbid")

    review: str = Field(description="Itemized, actionable feedback; one '- ' point per line.")
    evidence: list[str] = Field(description="Short quotes or section names from the paper.")
    must_fix: list[str] = Field(default_factory=list,
                                description="Problems that make the answer incorrect; empty when it is correct.")
    suggestions: list[str] = Field(default_factory=list, description="Improvements that leave the answer correct.")
    correct: bool = Field(description="True when the author's answer is correct and consistent.")
    p_correct: float = Field(description="Probability from 0 to 1 that the answer is correct.")


# --- parsers ---------------------------------------------------------------------------------------


def _clamp(p: Any, correct: bool) -> float:
    try:
        value = float(p)
    except (TypeError, ValueError):
        return 0.75 if correct else 0.25  # no usable self-report: a mild lean toward the verdict
    if math.isnan(value):
        return 0.75 if correct else 0.25
    if value > 1.0 and value <= 100.0:  # "85" meaning 85 %
        value /= 100.0
    return min(1.0, max(0.0, value))


def _parse_schema(text: str) -> Verdict:
    try:
        verdict = Verdict.model_validate_json(text)
    except ValidationError as err:
        # An endpoint that accepts response_format and ignores it (Anthropic's OpenAI layer) gets JSON the
        # model wrote by the prompt's instructions, often in a ```json fence: read that tolerantly.
        try:
            return _parse_object(text)
        except InvalidOutput:
            raise InvalidOutput(f"reply does not match the verdict schema: {err.error_count()} error(s)") from None
    return verdict.model_copy(update={"p_correct": _clamp(verdict.p_correct, verdict.correct)})


_TRUE_WORDS = {"true", "yes", "correct", "1", "consistent", "valid"}
_FALSE_WORDS = {"false", "no", "incorrect", "0", "inconsistent", "invalid", "wrong"}


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value >= 0.5
    word = str(value).strip().lower().strip(".!\"'")
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    return None


def _first_json_object(text: str) -> dict[str, Any]:
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = json.JSONDecoder(strict=False).raw_decode(text[start:])
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(obj, dict):
            return obj
        start = text.find("{", start + 1)
    raise InvalidOutput("reply holds no JSON object")


def _parse_object(text: str) -> Verdict:
    obj = {str(k).lower(): v for k, v in _first_json_object(text).items()}
    raw = next((obj[k] for k in ("correct", "verdict", "is_correct", "score") if k in obj), None)
    correct = _as_bool(raw) if raw is not None else None
    if correct is None:
        raise InvalidOutput("JSON reply has no usable 'correct' field")
    review = obj.get("review") or obj.get("feedback") or ""
    if isinstance(review, list):
        review = "\n".join(f"- {r}" for r in review)
    evidence = obj.get("evidence") or []
    if isinstance(evidence, str):
        evidence = [evidence]
    p = next((obj[k] for k in ("p_correct", "confidence", "probability") if k in obj), None)
    return Verdict(review=str(review), evidence=[str(e) for e in evidence], correct=correct,
                   p_correct=_clamp(p, correct), must_fix=_strings(obj.get("must_fix")),
                   suggestions=_strings(obj.get("suggestions")))


def _strings(value: Any) -> list[str]:
    """A list of non-empty strings from a list or a single string ("none" and "-" are nothing)."""
    items = value if isinstance(value, list) else [value] if value else []
    out = [str(v).strip().removeprefix("- ").strip() for v in items if v is not None]
    return [v for v in out if v and v.lower().strip(".") not in ("none", "-", "n/a")]


_VERDICT_LINE = re.compile(r"^\W*(?:verdict|correct|answer\s+is)\s*[:=]\s*\**\s*([A-Za-z01]+)", re.I | re.M)
_SCORE_LINE = re.compile(r"^\W*score\s*[:=]\s*\**\s*(-?[\d.]+)", re.I | re.M)
_CONF_LINE = re.compile(r"^\W*(?:confidence|p_correct|probability)\s*[:=]\s*\**\s*([\d.]+)\s*(%?)", re.I | re.M)
_REVIEW_BLOCK = re.compile(r"^\W*review\s*:\s*(.*?)(?=^\W*(?:evidence|verdict|score|confidence|must fix|suggestions)"
                           r"\s*[:=]|\Z)",
                           re.I | re.M | re.S)
_EVIDENCE_LINE = re.compile(r"^\W*evidence\s*:\s*(.+)$", re.I | re.M)


def _parse_text(text: str) -> Verdict:
    correct: bool | None = None
    # The last "Verdict:"-like line that holds a yes/no word; review bullets such as
    # "- Correct: the paper ..." are skipped because "the" is neither.
    for m in _VERDICT_LINE.finditer(text):
        correct = _as_bool(m.group(1)) if _as_bool(m.group(1)) is not None else correct
    if correct is None and (score := _SCORE_LINE.search(text)):
        try:  # the reference system's "Score: 1 / 0.5 / 0"
            correct = float(score.group(1)) >= 0.5
        except ValueError:
            correct = None
    if correct is None:
        raise InvalidOutput("reply has no 'Verdict:' or 'Score:' line")
    p: Any = None
    if c := _CONF_LINE.search(text):
        p = float(c.group(1)) / (100.0 if c.group(2) else 1.0) if c.group(1).replace(".", "", 1).isdigit() else None
    review_m = _REVIEW_BLOCK.search(text)
    review = review_m.group(1).strip() if review_m else text.strip()
    ev_m = _EVIDENCE_LINE.search(text)
    evidence = [e.strip() for e in ev_m.group(1).split(";") if e.strip()] if ev_m else []
    return Verdict(review=review, evidence=evidence, correct=correct, p_correct=_clamp(p, correct),
                   must_fix=_bullets_after(text, "must fix"), suggestions=_bullets_after(text, "suggestions"))


def _bullets_after(text: str, heading: str) -> list[str]:
    """The "- " lines under a "Must fix:" / "Suggestions:" heading of a text reply."""
    m = re.search(rf"(?im)^\W*{heading}\s*:\s*(.*?)(?=^\W*(?:review|must fix|suggestions|evidence|verdict|confidence)"
                  r"\s*:|\Z)", text, re.S)
    if not m:
        return []
    return _strings([line for line in m.group(1).splitlines() if line.strip()])


def check_findings(verdict: Verdict) -> None:
    """The verdict must follow from the findings: incorrect exactly when must_fix is not empty. The
    message goes back to the model when it is re-asked."""
    if not verdict.correct and not verdict.must_fix:
        raise InvalidOutput("'correct' is false but 'must_fix' is empty: list the problems that make the answer"
                            " incorrect in 'must_fix', or set 'correct' to true and put remarks in 'suggestions'")
    if verdict.correct and verdict.must_fix:
        raise InvalidOutput("'correct' is true but 'must_fix' lists problems: move remarks that leave the answer"
                            " correct to 'suggestions', or set 'correct' to false")


PARSERS: dict[StructuredOutput, Callable[[str], Verdict]] = {
    StructuredOutput.JSON_SCHEMA: _parse_schema,
    StructuredOutput.JSON_OBJECT: _parse_object,
    StructuredOutput.TEXT: _parse_text,
}


def parse(strategy: StructuredOutput, text: str | None) -> Verdict:
    """The verdict in ``text`` under ``strategy``; raises InvalidOutput when there is none."""
    if not text or not text.strip():
        raise InvalidOutput("empty reply")
    return PARSERS[strategy](text)
