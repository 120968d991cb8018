"""The leaderboard: every submission's scores, ranked by S.

It is built from the assessment records alone (the same ledger ``rescore`` reads), so a leaderboard,
a rescore and a batch always agree, and appeal overrides flow into it the same way.

Ranking: S descending; equal S share a rank (competition ranking 1, 2, 2, 4); within a tie rows are
ordered by C_G descending, then by submission id so the file is deterministic. S values are computed
from exact fractions (see ``scoring``), so equal scores are bit-identical floats and a tie is a tie.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from checklist_eval.csvcells import neutralise_frame
from checklist_eval.errors import InputError
from checklist_eval.layout import ResultsLayout, records_path
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
    # "scored", or "failed: <reason>" for a submission the batch could not score (ranked last, no rank).
    "status",
]
MAX_FAILURE_LINES = 100_000  # a results folder may be hostile: read a bounded number of lines


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
                "status": "scored",
            }
        )
    return rows


def read_failures(folder: Path) -> list[dict[str, str]]:
    """The batch's failed submissions (``failures.jsonl``), or none when the file is absent. Lines that
    are not a JSON object with a submission id are skipped: the list is informative, never fatal."""
    path = ResultsLayout(folder).failures_jsonl
    if not path.is_file():
        return []
    out = []
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh):
                if n >= MAX_FAILURE_LINES:
                    break
                try:
                    item = json.loads(line)
                except ValueError:
                    continue
                if isinstance(item, dict) and str(item.get("submission_id") or "").strip():
                    out.append({"submission_id": str(item["submission_id"]), "error": str(item.get("error") or "")})
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror or err}") from None
    return out


def failure_rows(failures: Sequence[dict[str, str]], scored: set[str]) -> list[dict[str, object]]:
    """Failed submissions as leaderboard rows: no scores, the reason in ``status``."""
    rows: list[dict[str, object]] = []
    for f in failures:
        if f["submission_id"] in scored:
            continue
        reason = " ".join(f["error"].split()) or "unknown error"
        rows.append({"submission_id": f["submission_id"], "status": f"failed: {reason}"})
    return rows


def rank_table(rows: list[dict[str, object]]) -> pd.DataFrame:
    """Rows ranked as the module docstring says; rank is an int column, first."""
    import pandas as pd

    scored = [r for r in rows if r.get("status", "scored") == "scored"]
    failed = sorted((r for r in rows if r.get("status", "scored") != "scored"), key=lambda r: str(r["submission_id"]))
    df = pd.DataFrame([{**r, "status": "scored"} for r in scored], columns=LEADERBOARD_COLUMNS[1:])
    df = df.sort_values(["S", "C_G", "submission_id"], ascending=[False, False, True], kind="mergesort")
    df.insert(0, "rank", df["S"].rank(method="min", ascending=False).astype(int))
    if failed:
        tail = pd.DataFrame(failed, columns=LEADERBOARD_COLUMNS[1:])
        tail.insert(0, "rank", pd.NA)
        ints = {"rank": "Int64", "questions": "Int64"}
        df = pd.concat([df.astype(ints), tail.astype(ints)], ignore_index=True)
    return df.reset_index(drop=True)


def build_leaderboard(results: str | Path, *, overrides: str | Path | None = None) -> pd.DataFrame:
    path = records_path(results)
    records, scores = load_scored(path, overrides)
    rows = leaderboard_rows(records, scores)
    rows += failure_rows(read_failures(path.parent), {str(r["submission_id"]) for r in rows})
    return rank_table(rows)


def leaderboard_csv_text(df: pd.DataFrame) -> str:
    # Full precision floats: rounding is for displays, not for the file others compute from.
    return neutralise_frame(df).to_csv(index=False, float_format=None)


def leaderboard_json(df: pd.DataFrame) -> list[dict[str, object]]:
    import pandas as pd

    out = []
    for row in df.to_dict(orient="records"):
        row = {k: (None if v is pd.NA or (isinstance(v, float) and v != v) else v) for k, v in row.items()}
        out.append({k: (int(v) if k in ("rank", "questions") and v is not None else v) for k, v in row.items()})
    return out
