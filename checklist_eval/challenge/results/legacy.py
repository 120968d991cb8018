"""A results folder written before ``results.sqlite``, read through the checks that were its only
guard: what ``folder.ResultsFolder`` runs once, to import such a folder into its database (and to
read one on storage it cannot write). Nothing else reads these files as the truth any more.

What opening one checks (each refusal is one InputError naming the file):

* the settings: ``run_settings.json`` and the ``settings`` of each ``result.json`` agree; when the
  first is missing they are recovered from the second, and two that disagree are refused, both named;
* the ledger holds whole rows: ``records.csv`` is read first; a row it cannot give (cut, ragged,
  unreadable) sends the reader to ``records.jsonl``, which holds the same records; when neither can
  give it, the first one's problem is raised with its row;
* the ledger is the one the other files describe: its submissions are those of ``scores.csv`` and of
  ``summary.json``'s ``scores``, in order, and each submission's scores (with the appeals standing on
  it) are those both list and those its ``result.json`` records, with the same appeals. A folder whose
  files tell two stories is refused rather than shown with one of them: an interrupted run or an edit,
  made good by rerunning ``batch`` (or ``rescore --overrides``) on it.

The appeals (``overrides.jsonl``) are part of the folder's state: every score read through the folder
has them applied. ``ledger_scored`` reads a lone ledger (a records file with no database beside it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from checklist_eval.challenge.records import Record
from checklist_eval.challenge.results.appeals import (
    AppliedOverride,
    Key,
    StreamedOverrides,
    history_path,
    read_history,
    standing,
    with_decisions,
)
from checklist_eval.challenge.results.layout import SUBMISSIONS_DIR, ResultsLayout
from checklist_eval.challenge.results.leaderboard import (
    Failure,
    LeaderboardRow,
    leaderboard_row,
    ranked_with_failures,
    read_failures,
)
from checklist_eval.challenge.results.ledger import Ledger, NoRecords
from checklist_eval.challenge.results.outputs import SubmissionResult
from checklist_eval.challenge.results.settings import RunSettings, read_settings
from checklist_eval.challenge.scoring import ScoringError, SubmissionScore, score_submission
from checklist_eval.errors import InputError
from checklist_eval.fsutil import read_json_file
from checklist_eval.redact import note
from checklist_eval.tables import read_csv_rows

T = TypeVar("T")
SCORE_FIELDS = ("case", "C_G", "C_A", "C_T", "R", "S")


class LegacyFolder:
    """A results folder without a database, read through its files' invariants."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.layout = ResultsLayout(self.root)
        self._finished: dict[str, dict[str, Any]] | None = None
        self.settings_file = self.layout.settings  # where settings() found them
        self.notes: list[str] = []  # what a reader recovered from, said once the read succeeded
        self.unfinished = False  # read a run that did not finish (no scores.csv / summary.json) as it is

    @classmethod
    def open(cls, root: str | Path) -> LegacyFolder:
        """The folder, refused (InputError) when it is not a batch results folder or its settings disagree."""
        folder = cls(root)
        if not folder.root.is_dir():
            raise InputError(folder.root, "not found" if not folder.root.exists() else "not a folder")
        if folder.layout.records_file() is None and not folder.layout.failures_jsonl.is_file():
            raise InputError(folder.root, "no records.csv or records.jsonl: not a batch results folder")
        folder.settings()
        return folder

    # ------------------------------------------------------------------------------------ settings

    def finished(self) -> dict[str, dict[str, Any]]:
        """``result.json`` of each submission folder, as JSON (the ones that do not parse are left out:
        a run redoes them, and the ledger is checked without them)."""
        if self._finished is None:
            self._finished = {}
            base = self.root / SUBMISSIONS_DIR
            for result in sorted(base.glob("*/result.json")) if base.is_dir() else []:
                data = read_json_file(result)
                if isinstance(data, dict):  # what the checks need; the records stay on disk (flat memory)
                    self._finished[result.parent.name] = {k: data.get(k) for k in ("settings", "score", "appeals")}
        return self._finished

    def settings(self) -> RunSettings | None:
        """The settings the folder's records were made with: ``run_settings.json``, else recovered from
        the ``result.json`` files; refused when two of them disagree."""
        recorded = read_settings(self.root)
        seen: tuple[str, RunSettings] | None = None
        for sid, data in self.finished().items():
            if not isinstance(data.get("settings"), dict):
                continue  # a folder scored before settings were kept
            try:
                theirs = RunSettings.model_validate(data["settings"])
            except ValueError:
                raise InputError(self._result(sid), "settings: not run settings") from None
            if recorded is not None and theirs != recorded:
                raise InputError(self.layout.settings, f"says the records were made with {_brief(recorded)}, "
                                                       f"{self._result(sid)} with {_brief(theirs)}: restore one")
            if seen is not None and theirs != seen[1]:
                raise InputError(self._result(sid), f"records made with {_brief(theirs)}, "
                                                    f"{self._result(seen[0])} with {_brief(seen[1])}")
            seen = seen or (sid, theirs)
        if recorded is None and seen is not None:
            self.settings_file = self._result(seen[0])
            return seen[1]
        return recorded

    def _result(self, sid: str) -> Path:
        return self.layout.submission(sid).result_json

    # -------------------------------------------------------------------------------------- reading

    def history(self) -> list[AppliedOverride]:
        return read_history(self.root)

    def decisions(self) -> dict[Key, AppliedOverride]:
        return standing(self.history())

    def failures(self) -> list[Failure]:
        return read_failures(self.root)

    def _ledger_groups(self) -> Iterator[list[Record]]:
        """Each submission's records, as assessed: from records.csv, or from records.jsonl when the CSV
        cannot give them all (then the CSV's problem is raised when the JSONL cannot either)."""
        first = self.layout.records_file()
        if first is None:
            raise NoRecords(self.root, "no records.csv or records.jsonl: not a batch results folder")
        other = self.layout.records_jsonl
        try:
            _read_through(first)
        except InputError as err:
            if first == other or not other.is_file():
                raise
            try:
                _read_through(other)
            except InputError:
                raise err from None
            self.notes.append(f"{err}; read {other.name} instead, which holds the same records")
            first = other
        yield from Ledger(first).submissions()

    def submissions(self, overrides: str | Path | None = None) -> Iterator[tuple[list[Record], SubmissionScore]]:
        """(records, score) of each submission, in ledger order, the standing appeals applied, then
        those of ``overrides`` (a file not kept: ``leaderboard --overrides``). Checked against the
        folder's other files as the module says."""
        decisions = self.decisions()
        extra = StreamedOverrides(overrides) if overrides else None
        listed = self._scored_rows()
        order = None if listed is None else [row["submission_id"] for row in listed]
        by_id = {row["submission_id"]: row for row in listed or []}
        summarized = self._summary_scores()
        seen: list[str] = []
        unscorable: ScoringError | None = None
        for assessed in self._ledger_groups():
            sid = assessed[0].submission_id
            seen.append(sid)
            records = with_decisions(assessed, decisions)
            try:
                score = score_submission(sid, records)
            except ScoringError as err:
                unscorable = unscorable or err
                continue
            self._check_finished(sid, score, decisions)
            if sid in by_id:
                self._check_listed(sid, score, by_id[sid])
            if summarized is not None and sid in summarized:
                self._check_recorded(self.layout.summary_json, sid, summarized[sid], score)
            if extra is not None:
                records = extra.apply(records)
                score = score_submission(sid, records)
            yield records, score
        if extra is not None:
            extra.check()
        if unscorable is not None:
            raise InputError(self.layout.records_file() or self.root, str(unscorable))
        if order is not None and order != seen:
            raise InputError(self.layout.scores_csv, f"lists {_few(order)} but {self._ledger_name()} holds "
                                                     f"{_few(seen)}: an interrupted run or an edit; rerun batch")
        if summarized is not None and list(summarized) != seen:
            raise InputError(self.layout.summary_json, f"scores {_few(list(summarized))} but "
                                                       f"{self._ledger_name()} holds {_few(seen)}: an interrupted run "
                                                       "or an edit; rerun batch")

    def assessed(self) -> Iterator[list[Record]]:
        """Each submission's records as the assessor gave them (no appeal applied: what evaluating the
        assessor reads), once the folder passed every check ``submissions`` makes."""
        for _checked in self.submissions():
            pass
        yield from self._ledger_groups()

    def scored(self, summarize: Callable[[SubmissionScore, list[Record]], T],
               overrides: str | Path | None = None) -> list[T]:
        out = [summarize(score, records) for records, score in self.submissions(overrides)]
        for line in dict.fromkeys(self.notes):
            note(line)
        return out

    def leaderboard(self, overrides: str | Path | None = None) -> list[LeaderboardRow]:
        return ranked_with_failures(lambda: self.scored(leaderboard_row, overrides), self.failures())

    def records(self, sid: str) -> list[Record]:
        """One submission's records, the standing appeals applied ([] when it has none)."""
        for records, _score in self.submissions():
            if records[0].submission_id == sid:
                return records
        return []

    def _ledger_name(self) -> str:
        found = self.layout.records_file()
        return found.name if found else "the ledger"

    def _check_listed(self, sid: str, score: SubmissionScore, row: dict[str, str]) -> None:
        """scores.csv shows the scores the ledger and the appeals give (a stale one is not published)."""
        computed = score.public().model_dump()
        for k in SCORE_FIELDS:
            if k not in row:
                continue
            try:
                same = row[k] == (computed[k] or "") if k == "case" else float(row[k]) == computed[k]
            except ValueError:
                same = False
            if not same:
                raise InputError(self.layout.scores_csv, f"says {k} {row[k][:40]} for {sid}, {self._ledger_name()} "
                                                         f"with {history_path(self.root).name} give {computed[k]}: "
                                                         "rerun batch (or the rescore --overrides that was cut short)")

    def _scored_rows(self) -> list[dict[str, str]] | None:
        """The rows of ``scores.csv``, in order (None for a folder a batch did not write)."""
        if not self.layout.scores_csv.is_file():
            if not self.unfinished and (self.layout.settings.is_file() or (self.root / SUBMISSIONS_DIR).is_dir()):
                # every batch writes scores.csv when it ends: its ledger is one a run left unfinished
                raise InputError(self.layout.scores_csv, "missing: the run writing this folder did not finish "
                                                         "(interrupted, or still running); rerun batch to finish it")
            return None
        return read_csv_rows(self.layout.scores_csv, ["submission_id", "S"])

    def _summary_scores(self) -> dict[str, dict[str, Any]] | None:
        """summary.json's ``scores`` by submission, in order (None for a folder a batch did not write)."""
        path = self.layout.summary_json
        if not path.is_file():
            if self.layout.scores_csv.is_file() and not self.unfinished:  # written right after scores.csv
                raise InputError(path, "missing: the run writing this folder did not finish (interrupted, or still "
                                       "running); rerun batch to finish it")
            return None
        data = read_json_file(path)
        listed = data.get("scores") if isinstance(data, dict) else None
        if not isinstance(listed, list) or not all(isinstance(s, dict) for s in listed):
            raise InputError(path, "not a batch summary (no list of scores): an edit or a cut file; rerun batch")
        by_id = {str(s.get("submission_id")): s for s in listed}
        if len(by_id) != len(listed):
            raise InputError(path, "lists a submission twice: an edit; rerun batch")
        return by_id

    def _check_finished(self, sid: str, score: SubmissionScore, decisions: dict[Key, AppliedOverride]) -> None:
        data = self.finished().get(sid)
        if data is None or data.get("appeals") is None:
            return  # not finished in this folder, or written before result.json kept its appeals
        mine = sorted(_decision_key(d) for d in decisions.values() if d.submission_id == sid)
        where = self._result(sid)
        if not isinstance(data["appeals"], list):
            raise InputError(where, "appeals: not a list of decisions")
        theirs = sorted(_decision_key(d) for d in data["appeals"] if isinstance(d, dict))
        if mine != theirs:
            raise InputError(where, f"holds {len(theirs)} appeal decision(s) for {sid}, {history_path(self.root).name} "
                                    f"{len(mine)}: an interrupted or edited appeal; rerun rescore --overrides")
        self._check_recorded(where, sid, data["score"] if isinstance(data.get("score"), dict) else {}, score)

    def _check_recorded(self, where: Path, sid: str, recorded: dict[str, Any], score: SubmissionScore) -> None:
        """A file's copy of a submission's scores (result.json's, summary.json's) is what the ledger gives."""
        computed = score.public().model_dump()
        differ = [k for k in SCORE_FIELDS if recorded.get(k) != computed[k]]
        if differ:
            k = differ[0]
            raise InputError(where, f"says {k} {str(recorded.get(k))[:40]} for {sid}, its rows in "
                                    f"{self._ledger_name()} give {computed[k]}: the files were changed after the "
                                    "run; restore them or rerun batch")

    def result(self, sid: str) -> SubmissionResult | None:
        from checklist_eval.challenge.results.outputs import read_result

        return read_result(self._result(sid))


def ledger_scored(
    path: str | Path, overrides: str | Path | None, summarize: Callable[[SubmissionScore, list[Record]], T],
    *, recorded_appeals: bool = True,
) -> list[T]:
    """``summarize(score, records)`` of every submission of a records file given as a file, in order of first
    appearance, with the appeal decisions applied first: those recorded beside it (``overrides.jsonl``,
    unless ``recorded_appeals`` is False), then the ``overrides`` file. The file is read one submission
    at a time: only the summaries are kept.

    The one way ``rescore`` and the leaderboard read a ledger: InputError names the file for an
    unreadable row, then for a bad override, then for records that cannot be scored.
    """
    from checklist_eval.challenge.results.appeals import read_history, standing, with_decisions

    decisions = standing(read_history(Path(path).parent)) if recorded_appeals else None
    ledger = Ledger(path)
    appeals = StreamedOverrides(overrides) if overrides else None
    out: list[T] = []
    unscorable: ScoringError | None = None  # raised once every row was read: row problems come first
    for records in ledger.submissions():
        if decisions:
            records = with_decisions(records, decisions)
        if appeals is not None:
            records = appeals.apply(records)
        if unscorable is None:
            try:
                out.append(summarize(score_submission(records[0].submission_id, records), records))
            except ScoringError as err:
                unscorable = err
    if appeals is not None:
        appeals.check()
    if unscorable is not None:
        raise InputError(path, str(unscorable)) from None
    return out



def _read_through(path: Path) -> None:
    """Read the whole ledger once, so its first problem is raised before any of it is used."""
    for _record in Ledger(path).records():
        pass


def _decision_key(d: AppliedOverride | dict[str, Any]) -> tuple[str, str, str, bool]:
    if isinstance(d, dict):
        return (str(d.get("submission_id")), str(d.get("role")), str(d.get("question_id")), bool(d.get("correct")))
    return (d.submission_id, d.role, d.question_id, d.correct)


def _brief(s: RunSettings) -> str:
    parts = [s.assessor] + [f"{k} {v}" for k, v in s.model_dump().items() if k != "assessor" and v is not None]
    return ", ".join(parts)


def _few(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    return f"{len(ids)} submission(s) ({shown})" if ids else "no submission"
