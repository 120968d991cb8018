"""Where results folders keep their files: the one place their names are written.

A batch results folder (``batch --out RESULTS``)::

    RESULTS/
      .checklist-eval.lock        held by the run writing the folder (see lock.locked_out)
      results.sqlite              every run, record, score, failure and appeal (see store.py): the
                                  one source every reader reads; the files below are its exports
      cache.sqlite                the default cache: verdicts, call log, provider batch jobs
      batch_run.json              the options of a ``--via jsonl|batch-api`` run, for its later steps
      run_settings.json           the settings the records were made with (a resume must match them)
      records.csv, records.jsonl  the assessment records: the ledger every score is computed from
      scores.csv                  one row per scored submission
      summary.json                counts, usage, scores and failures of the last run
      failures.jsonl              the submissions the batch could not score
      submissions/<id>/           one submission's folder (below)

A submission's folder (also what ``score --out DIR`` writes) holds ``report.html`` and ``result.json``,
written last as the completion marker, and with ``score`` its own records. ``check --out DIR`` writes
``check.json`` beside the paper's ``report.html``.

These names are an interface: scripts, the leaderboard and resumed runs find the files by them.
"""

from __future__ import annotations

from pathlib import Path

from checklist_eval.errors import InputError

__all__ = ["CHECK_JSON", "LOCK_NAME", "REPORT_HTML", "ResultsLayout", "SubmissionFolder", "records_path"]

LOCK_NAME = ".checklist-eval.lock"
DB_NAME = "results.sqlite"
OVERRIDES_JSONL = "overrides.jsonl"
CACHE_NAME = "cache.sqlite"
RUN_FILE_NAME = "batch_run.json"
SETTINGS_NAME = "run_settings.json"
RECORDS_CSV = "records.csv"
RECORDS_JSONL = "records.jsonl"
SCORES_CSV = "scores.csv"
SUMMARY_JSON = "summary.json"
FAILURES_JSONL = "failures.jsonl"
LEADERBOARD_CSV = "leaderboard.csv"
LEADERBOARD_HTML = "leaderboard.html"
APPEALS_HTML = "appeals.html"
SUBMISSIONS_DIR = "submissions"
RESULT_JSON = "result.json"
REPORT_HTML = "report.html"
CHECK_JSON = "check.json"


class SubmissionFolder:
    """One submission's outputs: ``RESULTS/submissions/<id>/``, or the folder ``score --out`` names."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.result_json = self.path / RESULT_JSON
        self.report_html = self.path / REPORT_HTML
        self.records_csv = self.path / RECORDS_CSV
        self.records_jsonl = self.path / RECORDS_JSONL


class ResultsLayout:
    """The files of a batch results folder rooted at ``root``."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.lock = self.root / LOCK_NAME
        self.cache = self.root / CACHE_NAME
        self.run_file = self.root / RUN_FILE_NAME
        self.settings = self.root / SETTINGS_NAME
        self.records_csv = self.root / RECORDS_CSV
        self.records_jsonl = self.root / RECORDS_JSONL
        self.scores_csv = self.root / SCORES_CSV
        self.summary_json = self.root / SUMMARY_JSON
        self.failures_jsonl = self.root / FAILURES_JSONL
        self.leaderboard_csv = self.root / LEADERBOARD_CSV
        self.leaderboard_html = self.root / LEADERBOARD_HTML
        self.appeals_html = self.root / APPEALS_HTML
        self.db = self.root / DB_NAME
        self.overrides_jsonl = self.root / OVERRIDES_JSONL

    def records_file(self) -> Path | None:
        """The records file that is there, CSV first; None when neither is."""
        return next((p for p in (self.records_csv, self.records_jsonl) if p.is_file()), None)

    def submission(self, sid: str) -> SubmissionFolder:
        """The folder of submission ``sid``. Ids are read from files that may be hostile, so one that is
        not a single plain path segment is refused (ValueError) rather than followed out of the folder."""
        if sid in ("", ".", "..") or "/" in sid or "\\" in sid or "\0" in sid:
            raise ValueError(f"not a submission id: {sid!r}")
        return SubmissionFolder(self.root / SUBMISSIONS_DIR / sid)


def records_path(results: str | Path) -> Path:
    """The records file of a batch results folder, or the file itself."""
    results = Path(results)
    if results.is_dir():
        found = ResultsLayout(results).records_file()
        if found is None:
            raise InputError(results, f"no {RECORDS_CSV} or {RECORDS_JSONL}: not a batch results folder")
        return found
    if not results.exists():
        raise InputError(results, "not found")
    return results
