"""A results folder as one thing: the one reader every command and the organizer's browser use, and
the writer of what an appeal changes.

Its truth is ``results.sqlite`` (see ``store``): every score is computed from one committed snapshot
of it (the latest complete run, the appeals that apply to its answers), never from the CSV and JSON
files beside it, which are its exports (``exports``). An export changed after it was written (by hand,
a cut copy, a removal) is set aside with one line saying so. A folder written before the database is
imported on its first open (``adopt``); on storage that cannot be written it is read through the old
checks instead (``legacy``), and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from checklist_eval.challenge.records import Record
from checklist_eval.challenge.results.appeals import AppliedOverride, Key, StreamedOverrides, decide
from checklist_eval.challenge.results.layout import ResultsLayout, records_path
from checklist_eval.challenge.results.leaderboard import (
    Failure,
    LeaderboardRow,
    leaderboard_row,
    ranked_with_failures,
    read_failures,
)
from checklist_eval.challenge.results.ledger import NoRecords
from checklist_eval.challenge.results.legacy import LegacyFolder, ledger_scored
from checklist_eval.challenge.results.outputs import SubmissionResult
from checklist_eval.challenge.results.settings import RunSettings
from checklist_eval.challenge.results.snapshot import Snapshot
from checklist_eval.challenge.scoring import ScoringError, SubmissionScore, score_submission
from checklist_eval.errors import InputError
from checklist_eval.redact import note

T = TypeVar("T")


class ResultsFolder:
    """The results folder at ``root`` (``batch --out``, ``score --out``)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.layout = ResultsLayout(self.root)
        self.settings_file = self.layout.db  # where settings() found them
        self.notes: list[str] = []  # said once a read succeeded
        self._legacy: LegacyFolder | None = None

    @classmethod
    def open(cls, root: str | Path) -> ResultsFolder:
        """The folder, its database opened (or a folder from before it imported): InputError when it
        is not a results folder, or its old files disagree."""
        from checklist_eval.challenge.results.adopt import has_legacy_files

        folder = cls(root)
        if not folder.root.is_dir():
            raise InputError(folder.root, "not found" if not folder.root.exists() else "not a folder")
        if not folder.layout.db.is_file():
            if not has_legacy_files(folder.root):
                raise InputError(folder.root, f"no {folder.layout.db.name} or records.csv: not a batch results folder")
            folder._adopt()
        return folder

    def _adopt(self) -> None:
        from checklist_eval.challenge.results.adopt import import_legacy
        from checklist_eval.challenge.results.lock import locked_out

        legacy = LegacyFolder.open(self.root)  # the old checks first: a folder telling two stories is refused
        try:
            with locked_out(self.root):
                if not self.layout.db.is_file():  # another process may have imported it meanwhile
                    note(import_legacy(self.root))
        except InputError as err:
            if self.layout.db.is_file():
                return
            for _checked in legacy.submissions():
                pass
            self._legacy = legacy
            self.notes.append(f"read {self.root} as files written before {self.layout.db.name}, without importing "
                              f"them ({err.problem})")

    def snapshot(self) -> Snapshot:
        return Snapshot(self.layout.db)

    # ---------------------------------------------------------------------------------------- reading

    def settings(self) -> RunSettings | None:
        """The settings the folder's current run asked for (``run_settings.json``, written when a run
        starts: a ``--via batch-api --submit-only`` run has committed nothing yet, and its jobs were made
        with them), else those of its latest committed records; None for a new folder."""
        from checklist_eval.challenge.results.adopt import has_legacy_files
        from checklist_eval.challenge.results.settings import read_settings

        if not self.layout.db.is_file() and not has_legacy_files(self.root):
            self.settings_file = self.layout.settings
            return read_settings(self.root)
        opened = ResultsFolder.open(self.root)
        if opened._legacy is not None:
            self.settings_file = opened._legacy.settings_file
            return opened._legacy.settings()
        asked = read_settings(self.root)
        if asked is not None:
            self.settings_file = self.layout.settings
            return asked
        with opened.snapshot() as snap:
            return snap.settings()

    def _submissions(self, snap: Snapshot, overrides: str | Path | None
                     ) -> Iterator[tuple[list[Record], SubmissionScore]]:
        standing = snap.standing()
        extra = StreamedOverrides(overrides) if overrides else None
        replaced: list[AppliedOverride] = []
        unscorable: ScoringError | None = None
        for assessed in snap.groups():
            records, gone = decide(assessed, standing)
            replaced += gone
            if extra is not None:
                records = extra.apply(records)
            try:
                score = score_submission(records[0].submission_id, records)
            except ScoringError as err:
                unscorable = unscorable or err
                continue
            yield records, score
        if extra is not None:
            extra.check()
        if unscorable is not None:
            raise InputError(self.layout.db, str(unscorable))
        if replaced:
            shown = ", ".join("/".join(d.key) for d in replaced[:3]) + (" and more" if len(replaced) > 3 else "")
            self.notes.append(f"{len(replaced)} appeal decision(s) were decided on an answer since replaced and are "
                              f"not applied ({shown}); see the history in {self.layout.db.name}")

    def _say(self, snap: Snapshot | None, quiet: bool = False) -> None:
        from checklist_eval.challenge.results.exports import edited_exports

        if quiet:
            self.notes.clear()
            return
        lines = list(self.notes)
        if snap is not None:
            lines = snap.notes() + lines
            edited = edited_exports(self.root, snap)
            if edited:
                shown = ", ".join(edited[:4]) + (f" and {len(edited) - 4} more" if len(edited) > 4 else "")
                lines.append(f"{shown} in {self.root} differ from what {self.layout.db.name} last exported (edited, "
                             "cut, removed, or an export cut short): set aside; the scores are read from "
                             f"{self.layout.db.name} (the next command that writes the folder exports them again)")
        for line in dict.fromkeys(lines):
            note(line)
        self.notes.clear()

    def scored(self, summarize: Callable[[SubmissionScore, list[Record]], T],
               overrides: str | Path | None = None, *, quiet: bool = False) -> list[T]:
        """``quiet``: nothing said on stderr (a read before a change, whose own read says it)."""
        if self._legacy is not None:
            out = self._legacy.scored(summarize, overrides)
            self._say(None, quiet)
            return out
        with self.snapshot() as snap:
            out = [summarize(score, records) for records, score in self._submissions(snap, overrides)]
            if not out and not snap.failures():
                raise NoRecords(self.layout.db, f"no records in {snap.require_shown().described()}")
            self._say(snap, quiet)
        return out

    def leaderboard(self, overrides: str | Path | None = None) -> list[LeaderboardRow]:
        if self._legacy is not None:
            rows = self._legacy.leaderboard(overrides)
            self._say(None)
            return rows
        with self.snapshot() as snap:
            rows = ranked_with_failures(
                lambda: [leaderboard_row(score, records) for records, score in self._submissions(snap, overrides)],
                snap.failures())
            self._say(snap)
        return rows

    def decided(self, sid: str) -> tuple[list[Record], dict[Key, AppliedOverride], list[AppliedOverride]]:
        """One submission's records with the appeals that apply to them, those decisions, and those
        made on an answer since replaced (not applied)."""
        if self._legacy is not None:
            return self._legacy.records(sid), self._legacy.decisions(), []
        with self.snapshot() as snap:
            mine = {k: d for k, d in snap.standing().items() if d.submission_id == sid}
            records, replaced = decide(snap.records(sid) if snap.shown else [], mine)
        applied = {k: d for k, d in mine.items() if d not in replaced}
        return records, applied, replaced

    def records(self, sid: str) -> list[Record]:
        return self.decided(sid)[0]

    def decisions(self) -> dict[Key, AppliedOverride]:
        if self._legacy is not None:
            return self._legacy.decisions()
        with self.snapshot() as snap:
            return snap.standing()

    def history(self) -> list[AppliedOverride]:
        if self._legacy is not None:
            return self._legacy.history()
        with self.snapshot() as snap:
            return snap.history()

    def failures(self) -> list[Failure]:
        if self._legacy is not None:
            return self._legacy.failures()
        with self.snapshot() as snap:
            return snap.failures() if snap.shown else []

    def assessed(self) -> Iterator[list[Record]]:
        """Each submission's records as the assessor gave them (what evaluating the assessor reads)."""
        if self._legacy is not None:
            yield from self._legacy.assessed()
            return
        with self.snapshot() as snap:
            yield from snap.groups()

    # ---------------------------------------------------------------------------------------- writing

    def record_appeals(self, overrides: str | Path) -> list[AppliedOverride]:
        """Keep the decisions of an overrides file, each with the answer it was decided on, and export
        the folder again; one transaction (a kill leaves the decisions in or out, never half). Rerunning
        the same file adds no decision. Holds the folder's lock."""
        from checklist_eval.challenge.results.lock import environment_error, locked_out

        try:
            with locked_out(self.root):
                return self._record_appeals(Path(overrides))
        except OSError as err:
            refused = environment_error(err, self.root)
            if refused is None:
                raise
            raise refused from None

    def _record_appeals(self, overrides: Path) -> list[AppliedOverride]:
        from datetime import datetime, timezone

        from checklist_eval.challenge.results.appeals import answer_digest, read_overrides
        from checklist_eval.challenge.results.exports import write_exports
        from checklist_eval.challenge.results.store import ResultsStore

        named = {key[0] for key, _ in StreamedOverrides(overrides).rows}
        with ResultsStore(self.root) as store:
            with Snapshot(store.path) as snap:
                run = snap.require_shown()
                records = [r for sid in sorted(named) for r in snap.records(sid)]
            index = {r.key: i for i, r in enumerate(records)}
            now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            entries = []
            for ov in read_overrides(overrides, index):
                rec = records[index[ov.key]]
                if ov.correct and not rec.is_answered:
                    raise InputError(overrides, f"{'/'.join(ov.key)} is TODO or missing and cannot be correct")
                entries.append(AppliedOverride(submission_id=ov.submission_id, role=ov.role, question_id=ov.question_id,
                                               was_correct=rec.correct, correct=ov.correct, file=overrides.name,
                                               note=ov.note, applied_at=now, decided_on=answer_digest(rec)))
            added, _generation = store.record_appeals(run.id, entries)
            write_exports(store)
        return added


def folder_of(given: str | Path) -> Path | None:
    """The results folder a command was given: the folder itself, or the one whose database sits
    beside an export given as a file; None for a lone ledger."""
    given = Path(given)
    if given.is_dir():
        return given
    return given.parent if ResultsLayout(given.parent).db.is_file() else None


def _beside(path: Path) -> ResultsFolder | None:
    """The results folder whose database sits beside an export given as a file, if there is one."""
    folder = path.parent
    if ResultsLayout(folder).db.is_file():
        opened = ResultsFolder.open(folder)
        opened.notes.append(f"{path} is an export of {opened.layout.db}: read the database")
        return opened
    return None


def scored_submissions(path: str | Path, overrides: str | Path | None,
                       summarize: Callable[[SubmissionScore, list[Record]], T], *, quiet: bool = False) -> list[T]:
    """What ``rescore`` reads: a results folder, the database beside an export, or a lone ledger;
    ``quiet``: nothing said on stderr (the read before an appeal: the read after it says it)."""
    path = Path(path)
    if path.is_dir():
        return ResultsFolder.open(path).scored(summarize, overrides, quiet=quiet)
    folder = _beside(path) if path.is_file() else None
    if folder is not None:
        return folder.scored(summarize, overrides, quiet=quiet)
    out = ledger_scored(records_path(path), overrides, summarize)
    if not quiet:
        note(f"read {path} as a ledger: no results.sqlite beside it")
    return out


def build_leaderboard(results: str | Path, *, overrides: str | Path | None = None) -> list[LeaderboardRow]:
    """The ranked rows of a results folder, of the database beside an export, or of a lone ledger
    (with the failures beside it)."""
    results = Path(results)
    if results.is_dir():
        return ResultsFolder.open(results).leaderboard(overrides)
    folder = _beside(results) if results.is_file() else None
    if folder is not None:
        return folder.leaderboard(overrides)
    path = records_path(results)
    rows = ranked_with_failures(lambda: ledger_scored(path, overrides, leaderboard_row), read_failures(path.parent))
    note(f"read {path} as a ledger: no results.sqlite beside it")
    return rows


def write_score_folder(out: str | Path, result: SubmissionResult, source: Path) -> Path:
    """What ``score --out DIR`` writes: a run of ``DIR/results.sqlite`` holding the one submission, then
    its exports (result.json, report.html, records.csv, records.jsonl). Holds the folder's lock."""
    from checklist_eval.challenge.results.exports import write_exports
    from checklist_eval.challenge.results.lock import locked_out, refuse_batch_folder
    from checklist_eval.challenge.results.store import COMPLETE, ResultsStore, paper_digests

    refuse_batch_folder(out)
    with locked_out(out) as folder, ResultsStore(folder) as store:
        ident = {"assessor": result.assessor, "model": result.model, "prompt_version": result.prompt_version}
        run = store.begin_run("score", result.settings, ident, str(source), expected=1)
        store.commit_submission(run, result, name=source.name, papers=paper_digests(source), position=0)
        store.finish_run(run, COMPLETE, [], None)
        write_exports(store)
    return Path(out) / "result.json"


def prune(root: str | Path) -> tuple[int, list[int]]:
    """(the run kept, the runs removed): ``checklist-eval prune``. Holds the folder's lock."""
    from checklist_eval.challenge.results.exports import write_exports
    from checklist_eval.challenge.results.lock import locked_out
    from checklist_eval.challenge.results.store import ResultsStore

    folder = ResultsFolder.open(root)
    if folder._legacy is not None:
        raise InputError(folder.root, "cannot be written, so it cannot be pruned")
    with locked_out(folder.root), ResultsStore(folder.root) as store:
        with Snapshot(store.path) as snap:
            kept = snap.require_shown().id
        removed = store.prune(kept)
        write_exports(store)
    return kept, removed
