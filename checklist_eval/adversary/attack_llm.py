"""LLM rounds of the adversary: rewrite the planted justifications the assessor caught, against its
own reviews (the 2024 organizers' AdversarialLLM experiment), for a bounded number of rounds.

Each round assesses the adversarial paper with the given assessor; for every plant judged incorrect
the model is shown the question, the kept answer, the current justification and the review, and asked
for a more persuasive justification. The new text replaces the old one in the LaTeX, A is parsed again,
and plants.json records every round. The answers never change, so the plants stay where they were.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from checklist_eval.adversary.attack import PLANTS_FILE, AttackResult, Plant
from checklist_eval.errors import InputError
from checklist_eval.models import Paper

if TYPE_CHECKING:
    from checklist_eval.reading.isolation import ParseLimits, ParserPool

MAX_ROUNDS = 5
REWRITE_MAX_TOKENS = 300
MAX_JUSTIFICATION_CHARS = 600
_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "%": r"\%", "&": r"\&", "#": r"\#", "_": r"\_", "$": r"\$",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _prompts() -> tuple[str, str]:
    from checklist_eval.assessors.llm.prompts import prompts_root

    folder = prompts_root().joinpath("adversary-v1")
    try:
        return (folder.joinpath("system.txt").read_text("utf-8").strip(),
                folder.joinpath("user.txt").read_text("utf-8").strip())
    except OSError as err:
        raise InputError(str(folder), f"adversary prompt missing: {err}") from None


def _clean(reply: str) -> str:
    """One paragraph of plain text, bounded: a hostile or chatty reply cannot break the LaTeX."""
    text = " ".join((reply or "").split()).strip("\"'` ")
    text = re.sub(r"\\[A-Za-z]+\*?", "", text)  # no LaTeX commands, whatever the model sent
    return text[:MAX_JUSTIFICATION_CHARS]


async def rewrite_rounds(result: AttackResult, out: str | Path, assessor, rounds: int,
                         limits: ParseLimits | None = None) -> AttackResult:
    """Run up to ``rounds`` rounds (at most MAX_ROUNDS); stop early when no plant is caught. The paper
    is parsed in a worker under ``limits``, every round."""
    from checklist_eval.reading.isolation import ParserPool

    with ParserPool(1, limits) as reader:
        return await _rounds(reader, result, Path(out), assessor, rounds)


async def _rounds(reader: ParserPool, result: AttackResult, out: Path, assessor, rounds: int) -> AttackResult:
    from checklist_eval.fsutil import atomic_write_text

    system, user = _prompts()
    a_path = out / result.files["A"]
    history: list[dict] = []
    for round_no in range(1, min(rounds, MAX_ROUNDS) + 1):
        paper = reader.load_paper(a_path, checklist=result.checklist)
        verdicts = {a.question_id: a for a in await assessor.assess_paper(paper)}
        caught = [p for p in result.plants if not verdicts[p.question_id].correct]
        history.append({"round": round_no, "caught": [p.question_id for p in caught]})
        if not caught:
            break
        replies = await _ask_rewrites(assessor, system, user, paper, verdicts, caught)
        text = _apply_rewrites(a_path.read_text("utf-8"), caught, replies, result)
        _write_checked(reader, a_path, text, result)
    result.llm_rounds = history
    atomic_write_text(out / PLANTS_FILE, result.to_json())
    return result


async def _ask_rewrites(assessor, system: str, user: str, paper: Paper, verdicts: dict,
                        caught: list[Plant]) -> list[str]:
    """One model reply per caught plant, in order: its question, kept answer, justification and review."""
    import asyncio

    items = {it.id: it for it in paper.checklist.items}
    return await asyncio.gather(*(
        _rewrite(assessor, system, user.format_map({
            "question": items[p.question_id].question, "answer": p.planted_answer,
            "justification": items[p.question_id].justification or "", "review": verdicts[p.question_id].review,
        })) for p in caught))


def _apply_rewrites(text: str, caught: list[Plant], replies: list[str], result: AttackResult) -> str:
    """``text`` with each caught plant's justification replaced by its cleaned, escaped reply (an empty
    reply or a plant that cannot be located keeps its text); the plants record the new justification."""
    edits = []
    for plant, reply in zip(caught, replies, strict=True):
        new = latex_escape(_clean(reply))
        at = _position(text, plant, result)
        if new and at is not None:
            edits.append((at, plant, new))
    for at, plant, new in sorted(edits, key=lambda e: e[0], reverse=True):
        text = text[:at] + new + text[at + len(plant.planted_justification):]
        plant.planted_justification = new
        plant.strategy = plant.strategy if plant.strategy.endswith("+llm") else f"{plant.strategy}+llm"
    return text


def _position(text: str, plant, result: AttackResult) -> int | None:
    """Where ``plant``'s justification is in A: plants sharing one text appear in question order, so
    the k-th of them is the k-th occurrence. None when the counts disagree (left as it was)."""
    same = [p for p in result.plants if p.planted_justification == plant.planted_justification]
    hits = [m.start() for m in re.finditer(re.escape(plant.planted_justification), text)]
    if len(hits) != len(same):
        return None
    return hits[same.index(plant)]


def _write_checked(reader: ParserPool, a_path: Path, text: str, result: AttackResult) -> None:
    """Write A only if every plant still reads back with its planted answer."""
    from checklist_eval.fsutil import atomic_write_text

    paper = reader.parse_text(text, str(a_path), result.checklist)
    got = {it.id: it.answer.value if it.answer else None for it in paper.checklist.items}
    if all(got[p.question_id] == p.planted_answer for p in result.plants):
        atomic_write_text(a_path, text)


async def _rewrite(assessor, system: str, prompt: str) -> str:
    # The assessor's own client: same endpoint, key handling, TLS and timeouts as the judge.
    client = assessor._client_for_loop()
    quirks = assessor.quirks()
    reply = await client.chat.completions.create(
        model=assessor.model, messages=[{"role": "system", "content": system}, {"role": "user", "content": prompt}],
        temperature=0.7, **{quirks.max_tokens_param: REWRITE_MAX_TOKENS})
    return (reply.choices[0].message.content or "") if reply.choices else ""
