"""The chat messages of one question, built from a ``PromptSet``:

    [system]  rules and the reply format; the paper is untrusted data
    [user]    <paper> ... </paper>            identical for every question of a paper (prefix caching)
    [user]    every question with its guidelines (once per paper, so part of the shared prefix)
    [user]    the question block              the only part that changes per question

Context budget: the prompt may hold the characters ``context.ContextWindow.prompt_char_budget`` allows;
the paper gets what the system message, the checklist message and ``QUESTION_BLOCK_CHARS`` for the
question block leave, less a 10 % margin. A paper that fits is the same for every question, so the
shared prefix stays shared; a longer one gives each question the passages most relevant to it
(``passages.py``), what share of the paper that was travels with the verdict, and a warning says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checklist_eval.assessors.evidence.excerpts import excerpt
from checklist_eval.endpoint.cache import digest_messages
from checklist_eval.models import ChecklistItem, Paper, ParseWarning, StructuredOutput, WarningKind

if TYPE_CHECKING:
    from checklist_eval.assessors.llm.prompts import PromptSet

__all__ = ["PaperPrefix", "Prefix", "QUESTION_BLOCK_CHARS", "checklist_message", "defuse_fence", "paper_text",
           "prefix_key", "prefix_messages", "question_message", "question_query"]

QUESTION_BLOCK_CHARS = 2000  # one question block: question text, answer, a long justification
# The justification shown, at most: the question block is budgeted at QUESTION_BLOCK_CHARS, and a 20,000-character
# justification sent whole put the request over the window the budget was computed for.
JUSTIFICATION_CHARS = 1200

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


def checklist_message(prompts: PromptSet, paper: Paper, items: Sequence[ChecklistItem] | None = None) -> str:
    """Every question with its guidelines, once per paper: part of the shared prefix, so the
    per-question block stays a few lines (and the guidelines are cached with the paper). ``items``:
    only these (a paper over the context shares no prefix, and its passages need the room)."""
    blocks = []
    for item in paper.checklist.items if items is None else items:
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
        "justification": shown_justification(item.justification),
    })


def shown_justification(text: str | None) -> str:
    """The justification as the model is shown it: whole up to ``JUSTIFICATION_CHARS``, else its start and a
    note of what was left out (the reader of the prompt should know it saw part)."""
    text = (text or "").strip()
    if len(text) <= JUSTIFICATION_CHARS:
        return text or "(empty)"
    return f"{text[:JUSTIFICATION_CHARS].rstrip()} [... {len(text) - JUSTIFICATION_CHARS} more characters not shown]"


def question_query(item: ChecklistItem) -> str:
    """What a question's passages are ranked against: the question and the answer's justification."""
    return f"{item.title} {item.question} {item.justification or ''}"


@dataclass(frozen=True)
class Prefix:
    """The messages before the question block, the warning when the paper did not fit whole, and the
    share of the paper's text they give (1.0: all of it)."""

    messages: list[dict[str, str]]
    warning: ParseWarning | None
    share: float = 1.0


def prefix_messages(prompts: PromptSet, paper: Paper, prompt_budget: int,
                    strategy: StructuredOutput = StructuredOutput.JSON_SCHEMA,
                    item: ChecklistItem | None = None) -> Prefix:
    """The system + paper messages; shared by every question of ``paper`` when it fits the budget.

    A paper that does not fit gives each question (``item``) the passages of it most relevant to that
    question (``passages.excerpt``) and only that question's guidelines, and the warning says so;
    without ``item`` the start of the paper stands in (the shares a question would get are its own).
    The reply-format instructions sit in the system message: they are fixed per endpoint for a run, so
    keeping them out of the question block leaves the per-question part as small as possible."""
    system = f"{prompts.system}\n\n{prompts.format_for(strategy)}"
    checklist = checklist_message(prompts, paper)
    budget = max(2_000, int(0.9 * (prompt_budget - len(system) - len(checklist) - QUESTION_BLOCK_CHARS)))
    full = paper_text(paper)
    if len(full) > budget and item is not None:  # the other questions' guidelines make room for passages
        checklist = checklist_message(prompts, paper, [item])
        budget = max(2_000, int(0.9 * (prompt_budget - len(system) - len(checklist) - QUESTION_BLOCK_CHARS)))
    shown = excerpt(full, question_query(item) if item is not None else "", budget)
    content = prompts.user_paper.format_map({
        "source": Path(paper.source).name, "title": defuse_fence(paper.title or "(untitled)").replace('"', "'"),
        "paper": shown.text,
    })
    warning = None
    if shown.share < 1.0:
        warning = ParseWarning(kind=WarningKind.TRUNCATED, location=paper.source,
                               message=f"paper text ({len(full)} characters) exceeds the model's context budget "
                                       f"({budget} characters); each question was given the passages most "
                                       "relevant to it")
    return Prefix([{"role": "system", "content": system}, {"role": "user", "content": content},
                   {"role": "user", "content": checklist}], warning, shown.share)


@dataclass
class PaperPrefix:
    messages: list[dict[str, str]]
    tokens: int
    warning: ParseWarning | None = None
    share: float = 1.0  # of the paper's text given (below 1: the passages relevant to one question)
    digest: str = ""  # sha256 of the messages, computed once: the cache key's stand-in for them

    def __post_init__(self) -> None:
        self.digest = digest_messages(self.messages)


def prefix_key(paper: Paper, strategy: StructuredOutput) -> tuple[Any, ...]:
    """Everything the shared prefix is built from (the item answers are not in it). Equal keys compare
    the same string objects, so a lookup costs little beyond the strings' cached hashes."""
    items = tuple((it.id, it.title, it.question, tuple(it.guidelines)) for it in paper.checklist.items)
    return (strategy, paper.source, paper.title, paper.abstract, paper.body, paper.checklist.id, items)

