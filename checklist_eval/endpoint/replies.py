"""Reading a chat completion the transport has already checked for shape (``retry.check_completion``):
its first choice and its token counts. Counts an endpoint left out, set to null or filled with junk
read as 0 and counts past ``MAX_TOKEN_COUNT`` as that, so a sloppy or hostile server cannot break
the ledger."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from checklist_eval.fsutil import whole_unicode
from checklist_eval.models import Usage, clamp_count

__all__ = ["Choice", "first_choice", "spent_reasoning", "token_usage"]


@dataclass(frozen=True)
class Choice:
    """What the assessor reads of a reply's first choice."""

    text: str
    finish_reason: Any
    logprobs: Any  # the ``logprobs.content`` list, when the endpoint sent one

    @property
    def cut_off(self) -> bool:
        return self.finish_reason == "length"


def first_choice(completion: Any) -> Choice:
    choices = completion.get("choices") if isinstance(completion, dict) else None
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    # The verdict inside may be JSON again: half a surrogate pair escaped there is made whole too.
    text = whole_unicode((choice.get("message") or {}).get("content") or "")
    return Choice(text=text, finish_reason=choice.get("finish_reason"),
                  logprobs=(choice.get("logprobs") or {}).get("content"))


def _count(obj: Any, key: str) -> int:
    """A token count from a usage object that may be missing, null or hold junk (0 then), clamped to
    what a ledger holds (a batch answer claiming 1e300 tokens is not refused by the transport)."""
    return clamp_count(obj.get(key) if isinstance(obj, dict) else None)


def spent_reasoning(completion: Any) -> int:
    u = completion.get("usage") if isinstance(completion, dict) else None
    return _count(u.get("completion_tokens_details") if isinstance(u, dict) else None, "reasoning_tokens")


def token_usage(completion: Any, attempts: int) -> Usage:
    """The reply's token counts, unpriced; ``attempts`` requests were sent to get it."""
    u = completion.get("usage") if isinstance(completion, dict) else None
    u = u if isinstance(u, dict) else {}
    return Usage(
        calls=attempts,
        prompt_tokens=_count(u, "prompt_tokens"),
        completion_tokens=_count(u, "completion_tokens"),
        cached_tokens=_count(u.get("prompt_tokens_details"), "cached_tokens"),
        # Part of completion_tokens (OpenAI's definition), so priced at the output rate with them.
        reasoning_tokens=_count(u.get("completion_tokens_details"), "reasoning_tokens"),
    )
