"""The leaderboard: every submission's scores, ranked by S.

It is built from the assessment records alone (the same ledger ``rescore`` reads), so a leaderboard,
a rescore and a batch always agree, and appeal overrides flow into it the same way.

Ranking: S descending; equal S share a rank (competition ranking 1, 2, 2, 4); within a tie rows are
ordered by C_G descending, then by submission id so the file is deterministic. S values are computed
from exact fractions (see ``scoring``), so equal scores are bit-identical floats and a tie is a tie.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import PrivateAttr

from checklist_eval.challenge.records import Record
from checklist_eval.challenge.results.layout import ResultsLayout
from checklist_eval.challenge.results.ledger import NoRecords
from checklist_eval.challenge.scoring import SubmissionScore
from checklist_eval.errors import InputError
from checklist_eval.models import ROLES, Case, Model, state_counts
from checklist_eval.tables import Row, csv_text

T = TypeVar("T")

MAX_FAILURE_LINES = 100_000  # a results folder may be hostile: read a bounded number of lines


class LeaderboardRow(Row):
    """A line of the leaderboard (CSV, ``--json``, HTML). A submission the batch could not score has
    its reason in ``status`` ("failed: <reason>") and no rank, scores or provenance (empty / null)."""

    rank: int | None = None
    submission_id: str
    case: Case | None = None
    C_G: float | None = None
    C_A: float | None = None
    C_T: float | None = None
    R: float | None = None
    S: float | None = None
    questions: int | None = None
    assessor: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    scored_at: str | None = None
    # Roles whose paper is flagged, with the kinds ("A:hidden_text"): see manipulation.py.
    manipulation: str | None = None
    # The questions an appeal decision stands on ("A:7;G:1"), each listed on the appeals page; empty
    # when none was appealed. Before ``status``, which stays the last column.
    appeals: str | None = None
    status: str = "scored"
    # Answers per evidence state, shown by the HTML page and not a column: the CSV's columns are the
    # organizers' (its last stays ``status``) and the JSON list keeps its shape.
    _states: dict[str, int] = PrivateAttr(default_factory=dict)
    # The submission's name as its team gave it (Unicode kept; "" when it is the id): shown beside the id,
    # which the files and URLs use. Not a column either.
    _name: str = PrivateAttr(default="")

    @property
    def name(self) -> str:
        return self._name

    @property
    def scored(self) -> bool:
        return self.status == "scored"

    @property
    def states(self) -> dict[str, int]:
        return dict(self._states)


LEADERBOARD_COLUMNS = LeaderboardRow.columns()


class Failure(Model):
    """A line of ``failures.jsonl``: a submission the batch could not score, and why (one line)."""

    submission_id: str
    source: str = ""
    error: str = ""


def _joined(values: Sequence[str]) -> str:
    """One value per submission normally; several (a mixed rerun) are listed, sorted."""
    return ";".join(sorted({v for v in values if v}))


def _manipulation(recs: Sequence[Record]) -> str:
    from checklist_eval.assessors.evidence.manipulation import kinds

    roles = sorted({r.role for r in recs}, key=ROLES.index)
    return ";".join(f"{role}:{k}" for role in roles for k in kinds(r.manipulation for r in recs if r.role == role))


def leaderboard_row(score: SubmissionScore, recs: Sequence[Record]) -> LeaderboardRow:
    """A scored submission's row; assessor/model/prompt/time and the answers' states come from its records."""
    row = LeaderboardRow(
        **score.public().model_dump(),
        questions=score.questions,
        assessor=_joined([r.assessor for r in recs]),
        model=_joined([r.model for r in recs]),
        prompt_version=_joined([r.prompt_version for r in recs]),
        scored_at=max((r.scored_at for r in recs), default=""),
        manipulation=_manipulation(recs),
        appeals=";".join(f"{r.role}:{r.question_id}" for r in recs if r.appeal),
    )
    row._states = state_counts([r.shown_state for r in recs])
    row._name = _given_name(next((r.source for r in recs if r.source), ""), score.submission_id)
    return row


def _given_name(source: str, sid: str) -> str:
    from checklist_eval.challenge.submissions import given_name

    name = given_name(source, sid) if source else ""
    return name if name != sid else ""


def read_failures(folder: Path) -> list[Failure]:
    """The batch's failed submissions (``failures.jsonl``), or none when the file is absent. A line that
    is not a JSON object with a submission id is refused with its number (a cut file is not a shorter list)."""
    from checklist_eval.challenge.results.ledger import json_objects

    path = ResultsLayout(folder).failures_jsonl
    if not path.is_file():
        return []
    out = []
    for n, item in json_objects(path, max_lines=MAX_FAILURE_LINES):
        if not str(item.get("submission_id") or "").strip():
            raise InputError(path, f"line {n}: no submission_id")
        out.append(Failure(submission_id=str(item["submission_id"]), source=str(item.get("source") or ""),
                           error=str(item.get("error") or "")))
    return out


def failure_rows(failures: Sequence[Failure], scored: set[str]) -> list[LeaderboardRow]:
    """Failed submissions as leaderboard rows: no scores, the reason in ``status``."""
    rows: list[LeaderboardRow] = []
    for f in failures:
        if f.submission_id in scored:
            continue
        reason = " ".join(public_reason(f).split()) or "unknown error"
        row = LeaderboardRow(submission_id=f.submission_id, status=f"failed: {reason}")
        row._name = _given_name(f.source, f.submission_id)
        rows.append(row)
    return rows


def public_reason(failure: Failure) -> str:
    """The failure's reason with paths relative to the batch's input root: organizers publish the
    leaderboard, and where their submissions sit on disk is none of the readers' business. A submission
    is a direct child of the root, so the root is its source's parent (as the batch was given it, and
    resolved when that differs, since a reader may have resolved links)."""
    if not failure.source:
        return failure.error
    root = Path(failure.source).parent
    reason = failure.error
    for form in dict.fromkeys([str(root), str(root.resolve())] if root.is_absolute() else [str(root)]):
        if form not in (".", os.sep):  # a path starts the word: "data/" is no prefix of "metadata/"
            reason = re.sub(rf"(?<![\w./~-]){re.escape(form.rstrip(os.sep) + os.sep)}", "", reason)
    return reason


def rank_rows(rows: Sequence[LeaderboardRow]) -> list[LeaderboardRow]:
    """Rows ranked as the module docstring says; the failed ones last, by id, without a rank."""
    scored = sorted((r for r in rows if r.scored), key=lambda r: (-(r.S or 0.0), -(r.C_G or 0.0), r.submission_id))
    failed = sorted((r for r in rows if not r.scored), key=lambda r: r.submission_id)
    ranked: list[LeaderboardRow] = []
    for i, r in enumerate(scored):  # competition ranking: equal S share the rank of the first of them
        tied = ranked and ranked[-1].S == r.S
        ranked.append(r.model_copy(update={"rank": ranked[-1].rank if tied else i + 1}))
    return ranked + [r.model_copy(update={"rank": None}) for r in failed]


def ranked_with_failures(score: Callable[[], list[LeaderboardRow]],
                         failures: Sequence[Failure]) -> list[LeaderboardRow]:
    """The ranked rows ``score`` gives and, after them, the failed submissions with their reasons. A
    run whose every submission failed holds no records (``NoRecords``): its leaderboard lists the
    failures alone; with no failure either, there is nothing to show and the error stands."""
    try:
        rows = score()
    except NoRecords:
        if not failures:
            raise
        rows = []
    rows += failure_rows(failures, {r.submission_id for r in rows})
    return rank_rows(rows)


def leaderboard_csv_text(rows: Sequence[LeaderboardRow]) -> str:
    # Full precision floats: rounding is for displays, not for the file others compute from.
    return csv_text(LeaderboardRow, rows)
