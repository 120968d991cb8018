"""One committed state of ``results.sqlite``, as every reader sees it.

A ``Snapshot`` holds a read transaction open (WAL: a writer goes on beside it, and nothing it commits
meanwhile is seen), so every figure a command or a page shows comes from one generation. The run it
shows is the latest complete one; when none is complete yet, the latest one --max-cost stopped (what
the organizer capped it to), with a note saying so. A run in progress, or one killed, is never shown,
only named (how many of its submissions are committed); with nothing else to show a reader refuses.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checklist_eval.challenge.records import Record
from checklist_eval.challenge.results.appeals import AppliedOverride, Key
from checklist_eval.challenge.results.leaderboard import Failure
from checklist_eval.challenge.results.outputs import SubmissionResult
from checklist_eval.challenge.results.settings import RunSettings
from checklist_eval.challenge.results.store import (
    COMPLETE,
    RUNNING,
    STOPPED,
    appeal_history,
    connect,
    generation_of,
    pid_alive,
    standing_appeals,
    submission_records,
)
from checklist_eval.errors import InputError


@dataclass
class Run:
    id: int
    kind: str
    state: str
    settings: RunSettings | None
    started_at: str
    finished_at: str | None
    summary: dict[str, Any] | None
    expected: int | None
    committed: int
    alive: bool

    @property
    def in_progress(self) -> bool:
        return self.state == RUNNING and self.alive

    def described(self) -> str:
        if self.state == COMPLETE:
            return f"run {self.id} (complete {self.finished_at})"
        of = f" of {self.expected}" if self.expected is not None else ""
        if self.in_progress:
            return f"run {self.id} (in progress: {self.committed}{of} submissions committed)"
        why = "stopped by --max-cost" if self.state == "stopped" else "interrupted"
        return f"run {self.id} ({why} after {self.committed}{of} submissions)"


class Snapshot:
    """A read transaction on a results database; use as a context manager (it ends the transaction)."""

    def __init__(self, path: Path, db: sqlite3.Connection | None = None):
        self.path = path
        # Read-write where the folder can be written: a killed writer's WAL is recovered by the first
        # connection that can write; read-only (or immutable) where nothing can write it anyway.
        self.db = db if db is not None else connect(path, read_only=not os.access(path.parent, os.W_OK))
        self._own = db is None
        self.db.execute("BEGIN")  # deferred: the snapshot is taken at the first read, just below
        try:
            self.generation = generation_of(self.db)
            self.runs = self._runs()
        except BaseException:
            self.close()
            raise
        self.shown = self._shown()
        self._standing: dict[Key, AppliedOverride] | None = None

    def close(self) -> None:
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error:
            pass
        if self._own:
            self.db.close()

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _runs(self) -> list[Run]:
        counts = dict(self.db.execute("SELECT run_id, count(*) FROM submissions GROUP BY run_id").fetchall())
        out = []
        for rid, kind, state, settings, started, finished, summary, expected, pid in self.db.execute(
                "SELECT id, kind, state, settings_json, started_at, finished_at, summary_json, expected, pid "
                "FROM runs ORDER BY id"):
            out.append(Run(rid, kind, state, RunSettings.model_validate_json(settings) if settings else None, started,
                           finished, json.loads(summary) if summary else None, expected, counts.get(rid, 0),
                           state == RUNNING and pid_alive(pid)))
        return out

    def _shown(self) -> Run | None:
        for state in (COMPLETE, STOPPED):
            ended = [r for r in self.runs if r.state == state]
            if ended:
                return ended[-1]
        return None

    # ------------------------------------------------------------------------------------- what it says

    def notes(self) -> list[str]:
        """What a reader says beside the scores: which run they are from, when another exists after it."""
        later = [r for r in self.runs if self.shown is None or r.id > self.shown.id]
        out = []
        if self.shown is not None and self.shown.state != COMPLETE:
            out.append(f"no run of {self.path.parent} is complete yet: showing {self.shown.described()}")
        for run in later:
            if run.in_progress:
                out.append(f"{run.described()} in {self.path.parent}; showing "
                           f"{self.shown.described() if self.shown else 'nothing until it completes'}")
            elif self.shown is not None and run.state != COMPLETE:
                out.append(f"{run.described()}: showing {self.shown.described()}; rerun batch to finish it")
        return out

    def require_shown(self) -> Run:
        if self.shown is None:
            detail = "; ".join(r.described() for r in self.runs[-3:]) or "no run yet"
            raise InputError(self.path.parent, f"no complete run to show yet ({detail}): rerun batch to finish it")
        return self.shown

    # ------------------------------------------------------------------------------------------ reading

    def standing(self) -> dict[Key, AppliedOverride]:
        if self._standing is None:
            self._standing = standing_appeals(self.db)
        return self._standing

    def history(self) -> list[AppliedOverride]:
        return appeal_history(self.db)

    def submission_ids(self) -> list[str]:
        run = self.require_shown()
        return [r[0] for r in self.db.execute("SELECT submission_id FROM submissions WHERE run_id=? ORDER BY position",
                                              (run.id,))]

    def groups(self) -> Iterator[list[Record]]:
        """Each submission's records as assessed, in the run's order, one submission at a time."""
        run = self.require_shown()
        group: list[Record] = []
        rows = self.db.execute("SELECT r.record_json FROM records r JOIN submissions s ON s.run_id = r.run_id AND "
                               "s.submission_id = r.submission_id WHERE r.run_id=? ORDER BY s.position, r.position",
                               (run.id,))
        for (text,) in rows:
            rec = Record.model_validate_json(text)
            if group and rec.submission_id != group[0].submission_id:
                yield group
                group = []
            group.append(rec)
        if group:
            yield group

    def records(self, sid: str) -> list[Record]:
        return submission_records(self.db, self.require_shown().id, sid)

    def result(self, sid: str) -> SubmissionResult | None:
        """The submission's result as committed (records as assessed, no appeal applied)."""
        run = self.require_shown()
        row = self.db.execute("SELECT result_json, generation FROM submissions WHERE run_id=? AND submission_id=?",
                              (run.id, sid)).fetchone()
        if row is None:
            return None
        return SubmissionResult.model_validate_json(row[0]).model_copy(
            update={"records": self.records(sid), "run": run.id, "generation": row[1]})

    def failures(self) -> list[Failure]:
        run = self.require_shown()
        return [Failure(submission_id=r[0], source=r[1], error=r[2]) for r in self.db.execute(
            "SELECT submission_id, source, error FROM failures WHERE run_id=? ORDER BY submission_id", (run.id,))]

    def exports(self) -> dict[str, tuple[str, int, int]]:
        """name -> (sha256, size, generation) of each export as last written."""
        return {r[0]: (r[1], r[2], r[3]) for r in self.db.execute("SELECT name, sha256, size, generation FROM exports")}

    def settings(self) -> RunSettings | None:
        """The settings of the latest run that committed a submission (what a rerun must match)."""
        for run in reversed(self.runs):
            if run.committed and run.settings is not None:
                return run.settings
        return None

    def cache_key(self) -> tuple[int | None, int]:
        """What decides every figure shown: the run shown and the appeals (a page cache keys on it)."""
        last = self.db.execute("SELECT coalesce(max(id), 0) FROM appeals").fetchone()[0]
        return (self.shown.id if self.shown else None, int(last))
