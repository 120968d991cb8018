"""Appeal decisions kept with the results: which verdicts ``rescore RESULTS --overrides FILE`` changed,
from what to what, by which file and when (``RESULTS/overrides.jsonl``, one decision a line, oldest
first), so the leaderboard, each submission's report and the organizer's browser show the same scores
and say which override stands behind each changed verdict.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, ValidationError

from checklist_eval.challenge.records import Record, read_overrides
from checklist_eval.errors import InputError
from checklist_eval.fsutil import atomic_write_text, loads_json
from checklist_eval.models import Usage

OVERRIDES_JSONL = "overrides.jsonl"
MAX_HISTORY_LINES = 100_000  # a hostile or runaway file is read this far, no further

Key = tuple[str, str, str]


class AppliedOverride(BaseModel):
    """One appeal decision as applied: the verdict the assessor gave and the one that stands."""

    submission_id: str
    role: str
    question_id: str
    was_correct: bool
    correct: bool
    file: str  # the overrides file, by its name
    note: str = ""
    applied_at: str = ""

    @property
    def key(self) -> Key:
        return (self.submission_id, self.role, self.question_id)

    def describe(self) -> str:
        def word(c: bool) -> str:
            return "correct" if c else "incorrect"

        note = f" ({self.note})" if self.note else ""
        when = f" on {self.applied_at}" if self.applied_at else ""
        return f"{word(self.was_correct)} \u2192 {word(self.correct)} by {self.file}{when}{note}"


def history_path(results: str | Path) -> Path:
    return Path(results) / OVERRIDES_JSONL


def read_history(results: str | Path) -> list[AppliedOverride]:
    """Every recorded decision, oldest first; none when the folder has no history. A line that is
    not a decision is skipped: the history explains scores, it never stops them being shown."""
    path = history_path(results)
    if not path.is_file():
        return []
    out = []
    with path.open(encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh):
            if n >= MAX_HISTORY_LINES:
                break
            try:
                out.append(AppliedOverride.model_validate(loads_json(line)))
            except (ValueError, ValidationError):
                continue
    return out


def standing(history: Iterable[AppliedOverride]) -> dict[Key, AppliedOverride]:
    """The decision that stands per record: the latest."""
    return {entry.key: entry for entry in history}


def with_decisions(records: Sequence[Record], decisions: dict[Key, AppliedOverride]) -> list[Record]:
    """The records with the standing decisions applied (a TODO or missing answer stays incorrect:
    ``Record.c`` sees to that whatever ``correct`` says)."""
    return [r.with_correct(decisions[r.key].correct) if r.key in decisions else r
            for r in records]


def record_decisions(results: str | Path, records: Sequence[Record], overrides: str | Path) -> list[AppliedOverride]:
    """Apply an overrides file to a results folder's history: each row that changes what stands is
    appended (rerunning the same file adds nothing). Returns the entries added."""
    history = read_history(results)
    current = standing(history)
    index = {r.key: i for i, r in enumerate(records)}
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    added = []
    for ov in read_overrides(overrides, index):
        rec = records[index[ov.key]]
        if ov.correct and not rec.is_answered:
            raise InputError(Path(overrides), f"{'/'.join(ov.key)} is TODO or missing and cannot be correct")
        before = current.get(ov.key)
        if before is not None and before.correct == ov.correct and before.file == Path(overrides).name:
            continue
        entry = AppliedOverride(submission_id=ov.submission_id, role=ov.role, question_id=ov.question_id,
                                was_correct=rec.correct, correct=ov.correct, file=Path(overrides).name,
                                note=ov.note, applied_at=now)
        added.append(entry)
        current[ov.key] = entry
    if added:
        lines = [e.model_dump_json() for e in history + added]
        atomic_write_text(history_path(results), "\n".join(lines) + "\n")
    return added


def redraw_reports(results: str | Path, records: Sequence[Record], decisions: dict[Key, AppliedOverride],
                   submission_ids: Iterable[str]) -> list[Path]:
    """Write again the reports of the named submissions from ``records`` (decisions applied), each
    saying which decision changed which verdict: a report never shows scores the leaderboard does not."""
    from checklist_eval.challenge.layout import ResultsLayout
    from checklist_eval.challenge.report import write_submission_report
    from checklist_eval.challenge.scoring import group_by_submission, score_submission

    layout = ResultsLayout(results)
    groups = group_by_submission(records)
    written = []
    for sid in sorted(set(submission_ids) & set(groups)):
        try:
            folder = layout.submission(sid)
        except ValueError:
            continue
        usage = _recorded_usage(folder.result_json)
        score = score_submission(sid, groups[sid])
        written.append(write_submission_report(folder.report_html, score, groups[sid], usage=usage,
                                               overrides=decisions))
    return written


def _recorded_usage(result_json: Path) -> Usage | None:
    """What the submission's run spent, from its result.json (None when it cannot be read)."""
    try:
        return Usage.model_validate(json.loads(result_json.read_bytes())["usage"])
    except (OSError, ValueError, KeyError, TypeError, ValidationError):
        return None
