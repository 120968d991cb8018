"""Synthetic submissions for the benchmark and drill scripts, built from the checkout's fixtures.

Each copy of the G/A/T template gets one numbered live sentence in its introduction, so every prompt and
every cache key differs between copies while the checklists (and so the expected calls) stay the same.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "fixtures" / "submissions" / "team-alpha"


def build_submissions(dest: Path, n: int) -> None:
    """N copies of the GAT triplet; a numbered sentence in the introduction makes each one distinct."""
    texts = {f.name: f.read_text(encoding="utf-8") for f in TEMPLATE.iterdir() if f.suffix == ".tex"}
    for i in range(n):
        sub = dest / f"bench-{i:04d}"
        sub.mkdir(parents=True)
        for name, text in texts.items():
            varied = re.sub(
                r"(\\section\{Introduction\}\\label\{sec:intro\}\n)",
                lambda m: m.group(1) + f"This benchmark copy is number {i}.\n",  # noqa: B023 - re.sub calls it now
                text,
                count=1,
            )
            (sub / name).write_text(varied, encoding="utf-8")


def expected_calls_per_submission() -> int:
    """One request per real (Yes/No/NA) answer of the template triplet; TODO/missing never reach a model."""
    from checklist_eval.challenge.submissions import load_submission

    loaded = load_submission(TEMPLATE)
    return sum(
        1 for paper in loaded.papers.values() for it in paper.checklist.items
        if it.answer is not None and it.answer.is_answered
    )


def answered_records(results: Path) -> int:
    """Records of a batch results folder whose answer is real (Yes/No/NA): one verdict each. Read from its
    ledger, one row at a time (a batch keeps no records in memory)."""
    from checklist_eval.challenge.results.layout import ResultsLayout
    from checklist_eval.challenge.results.ledger import Ledger

    ledger = ResultsLayout(results).records_jsonl
    if not ledger.is_file():
        return 0
    return sum(1 for r in Ledger(ledger).records() if r.answer is not None and r.answer.is_answered)
