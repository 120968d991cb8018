"""Structured output: one request shape and one parser per strategy (instructor-style).

    json_schema  -> response_format {"type": "json_schema", strict schema of ``Verdict``}; strict parse
    json_object  -> response_format {"type": "json_object"}; tolerant JSON parse (first {...}, aliases)
    text         -> no response_format; "Verdict: correct" / "Score: 1" / "Confidence: 0.8" lines

``endpoint.formats.FALLBACK`` gives the order ``auto`` walks when an endpoint refuses a format. p_correct is
the probability of the verdict the model gave, from the verdict token's logprobs when the endpoint returns usable ones
(``logprob_p_correct``), else the model's self-reported ``p_correct`` where it agrees with the verdict, else
the verdict alone; always on the verdict's side of 0.5 (``on_verdict_side``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
from typing import Any, Callable

from pydantic import ConfigDict, Field, ValidationError

from checklist_eval.models import Model, StructuredOutput

__all__ = [
    "GRAMMAR",
    "InvalidOutput",
    "LIST_LIMIT",
    "SCHEMA_DIGEST",
    "Verdict",
    "check_findings",
    "logprob_p_correct",
    "object_with_schema",
    "on_verdict_side",
    "parse",
    "response_format",
]


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


# Items a list of the verdict may hold. A grammar-constrained small model can fill an unbounded array
# until max_tokens (Gemma 3 270M on llama.cpp's server wrote "1", "2", "3", ... into "evidence", and the
# re-ask at temperature 0 wrote the same), so the schema bounds every array: llama.cpp's grammar closes the
# array at the bound, and OpenAI's strict mode takes maxItems among the keywords it supports.
LIST_LIMIT = 5

# Longest strings the grammar-bound schema (llama-cpp-python) and the grammar (llama.cpp) let through. Gemma 3
# 270M ran strings on there until the 800-token budget cut the reply (a review copying the prompt again and
# again, a suggestion of "1000000..."), 7 of 35 replies on the fixture triplet; a bound closes the string and
# the reply goes on.
REVIEW_CHARS = 600
ITEM_CHARS = 200


def _strict_schema() -> dict[str, Any]:
    # OpenAI strict mode: every property required, no extra properties; of the bounds only maxItems.
    schema = Verdict.model_json_schema()
    schema["additionalProperties"] = False
    schema["required"] = list(schema["properties"])
    for prop in schema["properties"].values():
        prop.pop("title", None)
        if prop.get("type") == "array":
            prop["maxItems"] = LIST_LIMIT
    schema.pop("title", None)
    return schema


_SCHEMA = _strict_schema()


def _compact_grammar(schema: dict[str, Any]) -> str:
    """The verdict schema as a GBNF grammar for llama.cpp's ``grammar`` field, with no room for whitespace
    beyond one space after a colon or comma. The grammar llama.cpp builds from a JSON schema lets a newline
    and up to 20 tabs or spaces stand before every key, colon and value, and Gemma 3 270M filled them: three
    quarters of its 540-odd tokens per verdict were that padding, at 3 to 6 tokens per second a slot.

    Strings are bounded as the schema path bounds them (``REVIEW_CHARS``, ``ITEM_CHARS``: a small model ran a
    string on to max_tokens), and ``must_fix`` is tied to the verdict: an empty list with ``true``, a listed
    problem with ``false`` (``check_findings`` would re-ask any other reply)."""
    kinds = {"string": "str", "boolean": "bool", "number": "prob"}

    def member(name: str, prop: dict[str, Any], verdict: bool | None) -> str:
        kind = "strs" if prop.get("type") == "array" else kinds[prop["type"]]
        if verdict is not None and name == "must_fix":
            kind = '"[]"' if verdict else "some"
        elif verdict is not None and name == "correct":
            kind = '"true"' if verdict else '"false"'
        return f'"\\"{name}\\":" sp {kind}'

    props = schema["properties"]
    sides: tuple[bool | None, ...] = (True, False) if {"must_fix", "correct"} <= props.keys() else (None,)
    root = " | ".join(' "," sp '.join(member(n, p, side) for n, p in props.items()) for side in sides)
    return "\n".join([
        f'root ::= "{{" ({root}) "}}"',
        'sp ::= " "?',
        f'str ::= "\\"" chr{{0,{REVIEW_CHARS}}} "\\""',
        f'item ::= "\\"" chr{{0,{ITEM_CHARS}}} "\\""',
        'chr ::= [^"\\\\\\x7F\\x00-\\x1F] | [\\\\] (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})',
        f'strs ::= "[" (item ("," sp item){{0,{LIST_LIMIT - 1}}})? "]"',
        f'some ::= "[" item ("," sp item){{0,{LIST_LIMIT - 1}}} "]"',
        'bool ::= "true" | "false"',
        'prob ::= "0" ("." [0-9]{1,4})? | "1" (".0")?',
    ]) + "\n"


# Sent as llama.cpp's ``grammar`` in place of response_format where the engine said it is llama.cpp's server
# (``EngineFacts.grammar``): the same reply, without the padding a small model writes into the schema's.
GRAMMAR = _compact_grammar(_SCHEMA)
# Part of the cache key of a json_schema request: the schema is what the model is constrained by, so an
# answer given under another schema is another answer.
SCHEMA_DIGEST = hashlib.sha256(json.dumps(_SCHEMA, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def response_format(strategy: StructuredOutput) -> dict[str, Any] | None:
    if strategy is StructuredOutput.JSON_SCHEMA:
        return {"type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": _SCHEMA}}
    if strategy is StructuredOutput.JSON_OBJECT:
        return {"type": "json_object"}
    return None




def _bounded_strings(schema: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(schema)
    for prop in out["properties"].values():
        if prop.get("type") == "string":
            prop["maxLength"] = REVIEW_CHARS
        elif prop.get("type") == "array" and prop.get("items", {}).get("type") == "string":
            prop["items"]["maxLength"] = ITEM_CHARS
    return out


_BOUNDED_SCHEMA = _bounded_strings(_SCHEMA)


def object_with_schema() -> dict[str, Any]:
    """The schema inside a json_object ``response_format``: how llama-cpp-python's server takes one (its request
    model refuses the json_schema type, HTTP 500). It builds its grammar from this schema with at most one
    space between tokens, and honours ``maxLength``; from a bare json_object it uses a generic JSON grammar
    whose whitespace is unbounded."""
    return {"type": "json_object", "schema": _BOUNDED_SCHEMA}


# --- parsers ---------------------------------------------------------------------------------------


VERDICT_ONLY = 0.75  # p_correct of a "correct" verdict with no usable probability (0.25 for "incorrect")


def on_verdict_side(correct: bool, from_logprobs: float | None, stated: float) -> float:
    """p_correct for a verdict: the probability the logprobs give it when that agrees with the verdict, else the
    model's stated confidence when that does, else the verdict alone. A probability against the verdict the
    model gave is not the probability of that verdict (a grammar or a sampler chose the token, or the model
    contradicts itself), so it is never reported with it: a "correct" verdict gets p >= 0.5, an "incorrect"
    one p < 0.5."""
    for p in (from_logprobs, stated):
        if p is not None and math.isfinite(p) and 0.0 <= p <= 1.0 and (p >= 0.5) == correct:
            return p
    return VERDICT_ONLY if correct else 1.0 - VERDICT_ONLY


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


# --- confidence from logprobs ----------------------------------------------------------------------

_JSON_VERDICT = re.compile(r'"correct"\s*:\s*(true|false)')
_TEXT_VERDICT = re.compile(r"verdict\s*:\s*\**\s*(correct|incorrect)", re.I)
# The spellings the verdict's value can take in each format: a token counts for a side only as (a piece of)
# one of them. "True" or "yes" among the alternatives is not a verdict a JSON reply could give (a grammar
# forbids it), so it says nothing about which verdict the model gave.
_JSON_SIDES = {True: "true", False: "false"}
_TEXT_SIDES = {True: "correct", False: "incorrect"}


def _polarity(token: str, sides: dict[bool, str], fold: bool) -> bool | None:
    # A tokenizer may merge the punctuation before the value into its token (``":true``, ``: false``).
    word = token.strip().lstrip('":,*').strip().rstrip('",}*')
    word = word.lower() if fold else word
    found = [side for side, spelling in sides.items() if word and spelling.startswith(word)]
    return found[0] if len(found) == 1 else None


def logprob_p_correct(text: str, content: list[Any] | None) -> float | None:
    """P(answer correct) from the logprobs of the verdict token, or None when they are not there.

    ``content`` is the OpenAI ``choices[0].logprobs.content`` list (objects or dicts with ``token``,
    ``logprob``, ``top_logprobs``). The token covering the verdict value ("true"/"false" in JSON,
    "correct"/"incorrect" after "Verdict:") is found by character offset; p = exp(lp) normalized over
    the true/false alternatives among its top_logprobs and the chosen token itself (llama.cpp's server lists
    the model's own top tokens, before a grammar or sampler chose, so the chosen one may be missing). When
    only one side appears, the other is bounded by the least likely listed alternative (it was not listed);
    with no other alternative listed, by the rest of the probability mass.
    """
    if not content or not isinstance(content, list):
        return None
    json_m = _JSON_VERDICT.search(text)
    m = json_m or _TEXT_VERDICT.search(text)
    if not m:
        return None
    sides, fold = (_JSON_SIDES, False) if json_m else (_TEXT_SIDES, True)
    target = m.start(1)
    offset = 0
    for entry in content:
        token = _get(entry, "token") or ""
        if offset + len(token) > target:
            return _normalize(entry, sides, fold)
        offset += len(token)
    return None


def _get(entry: Any, key: str) -> Any:
    return entry.get(key) if isinstance(entry, dict) else getattr(entry, key, None)


def _logprob(value: Any) -> float | None:
    """A log-probability, or None for anything that is not one (text, NaN, infinite, above 0: exp
    of a huge value would overflow); the caller then falls back to the model's stated confidence."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        lp = float(value)
    except OverflowError:  # an integer beyond float range
        return None
    return lp if math.isfinite(lp) and lp <= 1e-6 else None


def _normalize(entry: Any, sides: dict[bool, str], fold: bool) -> float | None:
    mass = {True: 0.0, False: 0.0}
    alternatives = _get(entry, "top_logprobs")
    if not isinstance(alternatives, list):
        alternatives = []
    seen: set[str] = set()
    for alt in [entry, *alternatives]:
        token = str(_get(alt, "token") or "")
        side = _polarity(token, sides, fold)
        lp = _logprob(_get(alt, "logprob"))
        if side is not None and lp is not None and token not in seen:  # the chosen token is listed once
            seen.add(token)
            mass[side] += math.exp(lp)
    if mass[True] == 0.0 and mass[False] == 0.0:
        return None
    if mass[True] > 0.0 and mass[False] > 0.0:
        return mass[True] / (mass[True] + mass[False])
    # One side listed: the other is not among the top alternatives, so it is at most as likely as the least
    # likely of them. Taking all the unlisted mass as the other side pulled p toward 0.5 where whitespace and
    # punctuation tokens held the rest.
    listed = [math.exp(lp) for alt in alternatives if (lp := _logprob(_get(alt, "logprob"))) is not None]
    seen_side = True if mass[True] > 0.0 else False
    other = min(listed) if listed and len(listed) > 1 else 1.0 - mass[seen_side]
    other = max(0.0, min(other, 1.0 - mass[seen_side]))
    share = mass[seen_side] / (mass[seen_side] + other) if mass[seen_side] + other > 0 else 1.0
    return share if seen_side else 1.0 - share
