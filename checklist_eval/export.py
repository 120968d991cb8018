"""The leaderboard: every submission's scores, ranked by S.

It is built from the assessment records alone (the same ledger ``rescore`` reads), so a leaderboard,
a rescore and a batch always agree, and appeal overrides flow into it the same way.

Ranking: S descending; equal S share a rank (competition ranking 1, 2, 2, 4); within a tie rows are
ordered by C_G descending, then by submission id so the file is deterministic. S values are computed
from exact fractions (see ``scoring``), so equal scores are bit-identical floats and a tie is a tie.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from checklist_eval.errors import InputError
from checklist_eval.records import Record, apply_overrides, read_records
from checklist_eval.scoring import ScoringError, SubmissionScore, group_by_submission, score_records

if TYPE_CHECKING:
    import pandas as pd

LEADERBOARD_COLUMNS = [
    "rank",
    "submission_id",
    "case",
    "C_G",
    "C_A",
    "C_T",
    "R",
    "S",
    "questions",
    "assessor",
    "model",
    "prompt_version",
    "scored_at",
    "manipulation",  # roles whose paper is flagged, with the kinds ("A:hidden_text"): see manipulation.py
]


def records_path(results: str | Path) -> Path:
    """The records file of a batch results folder, or the file itself."""
    results = Path(results)
    if results.is_dir():
        for name in ("records.csv", "records.jsonl"):
            if (results / name).is_file():
                return results / name
        raise InputError(results, "no records.csv or records.jsonl: not a batch results folder")
    if not results.exists():
        raise InputError(results, "not found")
    return results


def load_scored(
    path: str | Path, overrides: str | Path | None = None
) -> tuple[list[Record], list[SubmissionScore]]:
    """(records, scores) of a records file with the overrides (appeal decisions) applied first.

    The one way ``rescore`` and the leaderboard read a ledger: InputError names the file for an
    unreadable row and for records that cannot be scored.
    """
    records = read_records(path)
    if overrides:
        records, _ = apply_overrides(records, overrides)
    try:
        return records, score_records(records)
    except ScoringError as err:
        raise InputError(path, str(err)) from None


def _joined(values: Sequence[str]) -> str:
    """One value per submission normally; several (a mixed rerun) are listed, sorted."""
    return ";".join(sorted({v for v in values if v}))


def _manipulation(recs: Sequence[Record]) -> str:
    from checklist_eval.manipulation import kinds

    roles = sorted({r.role for r in recs}, key="GAT".index)
    return ";".join(f"{role}:{k}" for role in roles for k in kinds(r.manipulation for r in recs if r.role == role))


def leaderboard_rows(records: Sequence[Record], scores: Sequence[SubmissionScore]) -> list[dict[str, object]]:
    """One row per scored submission; assessor/model/prompt/time come from its records."""
    by_sid = group_by_submission(records)
    rows = []
    for score in scores:
        sid = score.submission_id
        recs = by_sid[sid]
        rows.append(
            {
                "submission_id": sid,
                "case": score.case,
                "C_G": score.C_G,
                "C_A": score.C_A,
                "C_T": score.C_T,
                "R": score.R,
                "S": score.S,
                "questions": score.questions,
                "assessor": _joined([r.assessor for r in recs]),
                "model": _joined([r.model for r in recs]),
                "prompt_version": _joined([r.prompt_version for r in recs]),
                "scored_at": max((r.scored_at for r in recs), default=""),
                "manipulation": _manipulation(recs),
            }
        )
    return rows


def rank_table(rows: list[dict[str, object]]) -> pd.DataFrame:
    """Rows ranked as the module docstring says; rank is an int column, first."""
    import pandas as pd

    df = pd.DataFrame(rows, columns=LEADERBOARD_COLUMNS[1:])
    df = df.sort_values(["S", "C_G", "submission_id"], ascending=[False, False, True], kind="mergesort")
    df.insert(0, "rank", df["S"].rank(method="min", ascending=False).astype(int))
    return df.reset_index(drop=True)


def build_leaderboard(results: str | Path, *, overrides: str | Path | None = None) -> pd.DataFrame:
    records, scores = load_scored(records_path(results), overrides)
    return rank_table(leaderboard_rows(records, scores))


def leaderboard_csv_text(df: pd.DataFrame) -> str:
    # Full precision floats: rounding is for displays, not for the file others compute from.
    return df.to_csv(index=False, float_format=None)


def leaderboard_json(df: pd.DataFrame) -> list[dict[str, object]]:
    out = []
    for row in df.to_dict(orient="records"):
        out.append({k: (int(v) if k in ("rank", "questions") else v) for k, v in row.items()})
    return out
