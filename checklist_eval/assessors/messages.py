"""The chat messages of one question, built from a ``PromptSet``:

    [system]  rules and the reply format; the paper is untrusted data
    [user]    <paper> ... </paper>            identical for every question of a paper (prefix caching)
    [user]    every question with its guidelines (once per paper, so part of the shared prefix)
    [user]    the question block              the only part that changes per question

Context budget: the prompt may hold ``4 * (context_tokens - max_tokens)`` characters (4 characters per
token, the usual English ratio); the paper gets what the system message, the checklist message and
``QUESTION_BLOCK_CHARS`` for the question block leave, less a 10 % margin for text that tokenizes
denser (LaTeX, numbers). A longer paper is cut there, and the cut is said in a warning. The cut is the
same for every question of a paper, so the shared prefix stays shared.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checklist_eval.assessors.cache import digest_messages
from checklist_eval.models import ChecklistItem, Paper, ParseWarning, StructuredOutput, WarningKind

if TYPE_CHECKING:
    from checklist_eval.assessors.prompts import PromptSet

__all__ = ["PaperPrefix", "QUESTION_BLOCK_CHARS", "checklist_message", "cut_paper", "defuse_fence", "paper_text",
           "prefix_key", "prefix_messages", "question_message"]

QUESTION_BLOCK_CHARS = 2000  # one question block: question text, answer, a long justification

_FENCE_TAG = re.compile(r"<(\s*/?\s*paper\b)", re.IGNORECASE)


def defuse_fence(text: str) -> str:
    """Untrusted text must not be able to close the <paper> fence and speak outside it: any look-alike
    of the fence tag in it loses its '<' (replaced by a visually similar, inert character)."""
    return _FENCE_TAG.sub(lambda m: "\u2039" + m.group(1), text)


def paper_text(paper: Paper) -> str:
    parts = []
    if paper.abstract:
        parts.append(f"Abstract\n{paper.abstract}")
    parts.append(paper.body)
    return defuse_fence("\n\n".join(p for p in parts if p))


def checklist_message(prompts: PromptSet, paper: Paper) -> str:
    """Every question with its guidelines, once per paper: part of the shared prefix, so the
    per-question block stays a few lines (and the guidelines are cached with the paper)."""
    blocks = []
    for item in paper.checklist.items:
        guidelines = "\n".join(f"  - {g}" for g in item.guidelines) or "  - (none)"
        blocks.append(f"{item.id}. {item.title}: {item.question}\n{guidelines}")
    return prompts.user_checklist.format_map({"checklist": "\n\n".join(blocks)})


FACTS_HEAD = "Facts established by the offline checks (address each one, naming its tag):"


def facts_block(facts: Sequence[str]) -> str:
    """The offline checks' hard findings for the question block, tagged [F1], [F2], ..."""
    if not facts:
        return "Facts established by the offline checks: none."
    return "\n".join([FACTS_HEAD, *(f"[F{i}] {fact}" for i, fact in enumerate(facts, 1))])


def question_message(prompts: PromptSet, item: ChecklistItem, facts: Sequence[str] = (), passages: str = "") -> str:
    """The per-question block; a prompt with a {facts} slot (assess-v3 on) gets the offline facts, one
    with a {passages} slot (assess-v4) the ranked passages of the paper to cite."""
    return prompts.user_question.format_map({
        "facts": facts_block(facts),
        "passages": passages,
        "question_id": item.id,
        "question_title": item.title,
        "question": item.question,
        "answer": item.answer.value if item.answer is not None else "(missing)",
        "justification": (item.justification or "").strip() or "(empty)",
    })


def cut_paper(text: str, budget: int) -> tuple[str, bool]:
    if len(text) <= budget:
        return text, False
    cut = text.rfind("\n", 0, budget)
    cut = cut if cut > budget * 0.9 else budget
    return text[:cut] + f"\n[... paper truncated: {cut} of {len(text)} characters shown ...]", True


def prefix_messages(prompts: PromptSet, paper: Paper, prompt_budget: int,
                    strategy: StructuredOutput = StructuredOutput.JSON_SCHEMA,
                    ) -> tuple[list[dict[str, str]], ParseWarning | None]:
    """The system + paper messages shared by every question of ``paper``; a warning when cut.

    The reply-format instructions sit in the system message: they are fixed per endpoint for a run,
    so keeping them out of the question block leaves the per-question part as small as possible."""
    system = f"{prompts.system}\n\n{prompts.format_for(strategy)}"
    checklist = checklist_message(prompts, paper)
    budget = max(2_000, int(0.9 * (prompt_budget - len(system) - len(checklist) - QUESTION_BLOCK_CHARS)))
    full = paper_text(paper)
    text, truncated = cut_paper(full, budget)
    content = prompts.user_paper.format_map({
        "source": Path(paper.source).name, "title": defuse_fence(paper.title or "(untitled)").replace('"', "'"),
        "paper": text,
    })
    warning = None
    if truncated:
        warning = ParseWarning(kind=WarningKind.TRUNCATED, location=paper.source,
                               message=f"paper text ({len(full)} characters) exceeds the model's context budget "
                                       f"({budget} characters); the assessor saw only the first part")
    return [{"role": "system", "content": system}, {"role": "user", "content": content},
            {"role": "user", "content": checklist}], warning



@dataclass
class PaperPrefix:
    messages: list[dict[str, str]]
    tokens: int
    warning: ParseWarning | None = None
    digest: str = ""  # sha256 of the messages, computed once: the cache key's stand-in for them

    def __post_init__(self) -> None:
        self.digest = digest_messages(self.messages)


def prefix_key(paper: Paper, strategy: StructuredOutput) -> tuple[Any, ...]:
    """Everything the shared prefix is built from (the item answers are not in it). Equal keys compare
    the same string objects, so a lookup costs little beyond the strings' cached hashes."""
    items = tuple((it.id, it.title, it.question, tuple(it.guidelines)) for it in paper.checklist.items)
    return (strategy, paper.source, paper.title, paper.abstract, paper.body, paper.checklist.id, items)

