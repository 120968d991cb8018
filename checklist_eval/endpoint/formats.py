"""The reply formats a chat request can ask for (``response_format``: a strict JSON schema, any JSON object,
or none) in the order ``auto`` steps down when an endpoint refuses one, and how a refusal of a format reads.
What the schema is (the verdict's) is the assessor's; which formats an endpoint takes is the endpoint's."""

from __future__ import annotations

import re

from checklist_eval.models import StructuredOutput

__all__ = ["FALLBACK", "chain_from", "is_format_unsupported"]

FALLBACK = (StructuredOutput.JSON_SCHEMA, StructuredOutput.JSON_OBJECT, StructuredOutput.TEXT)


def chain_from(strategy: StructuredOutput) -> tuple[StructuredOutput, ...]:
    """The strategies still to try, starting at ``strategy``."""
    return FALLBACK[FALLBACK.index(strategy):]


_UNSUPPORTED = re.compile(r"not\s+supported|unsupported|not\s+available|invalid|unknown|unrecognized|"
                          r"does\s+not\s+support|not\s+allowed|not\s+permitted", re.I)


def is_format_unsupported(message: str) -> bool:
    """A 400 saying the endpoint/model does not take this response_format (OpenAI, vLLM, Ollama and
    LiteLLM all name the parameter in the message)."""
    text = message or ""
    # Gemini names the schema it could not take "response_schema" (of its generation_config).
    # A provider that takes schemas but not every keyword names the keyword ("maxItems is not supported").
    return bool(re.search(r"response_format|response_schema|json_schema|json_object|structured output|maxItems",
                          text, re.I)
                and _UNSUPPORTED.search(text))
