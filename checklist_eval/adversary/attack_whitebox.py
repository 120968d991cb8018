"""White-box rounds of the adversary against the offline assessor (``attack --against heuristic``).

The heuristic's rules are open, so a participant can run them on their own lies before submitting.
Each round assesses A with the heuristic assessor (optionally without the paper body, as a checklist
file alone would be judged); every plant it caught is rewritten with the strategy's next phrasing (and,
with ``reword`` or once the phrasings are used up, a rewording of it), keeping the planted answer. A is
planted again from G's text, parsed back, and plants.json records what each round caught. The rounds
stop when the assessor accepts every plant or they run out.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from checklist_eval.adversary.attack import (
    PLANTS_FILE,
    STRATEGIES,
    AttackResult,
    Plant,
    _context,
    _landed,
    apply_plants,
)
from checklist_eval.errors import InputError
from checklist_eval.models import Answer, ChecklistItem, Paper

MAX_ROUNDS = 20


def whitebox_rounds(result: AttackResult, out: str | Path, assessor, rounds: int, *, strip_body: bool = False,
                    reword: bool = False) -> AttackResult:
    """Rewrite the caught plants for up to ``rounds`` rounds (at most MAX_ROUNDS); plants.json records
    every round as {"round", "against", "caught"}. Every parse runs in a parser worker, as in ``attack``."""
    from checklist_eval.fsutil import atomic_write_text
    from checklist_eval.reading.isolation import ParserPool

    out = Path(out)
    g_text = (out / result.files["G"]).read_text("utf-8")
    history: list[dict] = []
    with ParserPool(1) as reader:
        genuine = reader.parse_text(g_text, str(out / result.files["G"]), result.checklist)
        items = {it.id: it for it in genuine.checklist.items}
        for round_no in range(1, min(rounds, MAX_ROUNDS) + 1):
            paper = reader.parse_text((out / result.files["A"]).read_text("utf-8"), result.files["A"],
                                      result.checklist)
            if strip_body:
                paper = without_body(paper)
            verdicts = {a.question_id: a for a in asyncio.run(assessor.assess_paper(paper))}
            caught = [p for p in result.plants if not verdicts[p.question_id].correct]
            history.append({"round": round_no, "against": assessor.name, "caught": [p.question_id for p in caught]})
            if not caught:
                break
            text = _rewrite(reader, out, result, g_text, genuine, items, caught, round_no, reword)
            atomic_write_text(out / result.files["A"], text)
    result.rounds = history
    atomic_write_text(out / PLANTS_FILE, result.to_json())
    return result


def without_body(paper: Paper) -> Paper:
    """The paper as a checklist file alone would give it: no body, headings or anchors."""
    return paper.model_copy(update={"body": "", "sections": [], "anchors": []})


def _next_text(plant: Plant, item: ChecklistItem, genuine: Paper, round_no: int, reword: bool) -> str:
    strategy = STRATEGIES[plant.strategy.removesuffix("+llm")]
    ctx = _context(genuine)
    plant.variant += 1
    used_up = round_no >= len(strategy.phrasings(item, ctx))
    seed = plant.variant * 101 + round_no if (reword or used_up) else 0
    return strategy.plant(item, ctx, plant.variant, reworded=seed)[1]


def _rewrite(reader, out: Path, result: AttackResult, g_text: str, genuine: Paper, items: dict[str, ChecklistItem],
             caught: list[Plant], round_no: int, reword: bool) -> str:
    """A's text with every caught plant's next text planted into G's text; a rewrite that does not
    read back keeps the plant's previous text."""
    before = {p.question_id: p.planted_justification for p in result.plants}
    for p in caught:
        p.planted_justification = _next_text(p, items[p.question_id], genuine, round_no, reword)
    for _ in range(2):
        text, lost = apply_plants(g_text, [(items[p.question_id], Answer(p.planted_answer), p.planted_justification)
                                           for p in result.plants], genuine.checklist.items)
        planted = reader.parse_text(text, f"adversarial_{result.name}", result.checklist)
        problems = set(lost) | set(_landed(planted, genuine, {
            p.question_id: (Answer(p.planted_answer), p.planted_justification) for p in result.plants}))
        if not problems:
            return text
        for p in result.plants:
            if p.question_id in problems:
                p.planted_justification = before[p.question_id]
    raise InputError(out / result.files["A"], "white-box rewrite could not be read back consistently")
