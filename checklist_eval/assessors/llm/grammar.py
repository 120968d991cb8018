"""What a verdict reply is bound by when it is asked for: the strict JSON schema of ``Verdict`` (OpenAI's
strict mode, every list bounded), the same schema with its strings bounded inside a json_object
``response_format`` (llama-cpp-python's server), and a compact GBNF grammar for llama.cpp's ``grammar`` field;
with the schema's digest, which keys a json_schema request's cached answer."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from checklist_eval.assessors.llm.verdict import Verdict
from checklist_eval.models import StructuredOutput

__all__ = ["GRAMMAR", "ITEM_CHARS", "LIST_LIMIT", "REVIEW_CHARS", "SCHEMA_DIGEST", "object_with_schema",
           "response_format"]

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
