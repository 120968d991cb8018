"""A results folder written before ``results.sqlite``, imported into one on its first open.

The folder's files are read through every check they always had (``legacy.LegacyFolder``): when they
tell two stories the import is refused with the one line naming the files, and nothing is written.
Otherwise they become run 1 of a new database (its records, scores, failures and appeal decisions, each
decision tied to the answer it was made on), built beside the folder under a temp name and renamed into
place whole: a kill during the import leaves the folder as it was. The files stay where they are,
recorded as the exports of that run, so a later edit of one is seen as an edit.
"""

from __future__ import annotations

import os
from pathlib import Path

from checklist_eval.challenge.results.appeals import answer_digest
from checklist_eval.challenge.results.layout import RESULT_JSON, SUBMISSIONS_DIR, ResultsLayout
from checklist_eval.challenge.results.legacy import LegacyFolder
from checklist_eval.challenge.results.outputs import SubmissionResult
from checklist_eval.challenge.results.store import COMPLETE, ResultsStore, generation_of, sha256_file
from checklist_eval.errors import InputError
from checklist_eval.fsutil import TEMP_SUFFIX, fsync_dir, read_json_file

EXPORTED = ("records.csv", "records.jsonl", "scores.csv", "summary.json", "failures.jsonl", "overrides.jsonl",
            "result.json", "report.html")


def has_legacy_files(root: Path) -> bool:
    layout = ResultsLayout(root)
    return layout.records_file() is not None or layout.failures_jsonl.is_file() or (root / RESULT_JSON).is_file()


def import_legacy(root: Path) -> str:
    """Import the folder (the caller holds its lock); returns the line that says so."""
    legacy = LegacyFolder.open(root)
    state = COMPLETE
    try:
        groups = [(records, score) for records, score in legacy.submissions()]  # every check, before any write
    except InputError as err:
        if "did not finish" not in err.problem:
            raise
        legacy.unfinished, state = True, "interrupted"  # a run killed before its end: imported as one
        groups = [(records, score) for records, score in legacy.submissions()]
    failures = legacy.failures()
    history = legacy.history()
    settings = legacy.settings()
    kind = "batch" if (root / SUBMISSIONS_DIR).is_dir() or legacy.layout.scores_csv.is_file() else "score"
    layout = ResultsLayout(root)
    tmp = root / f".{layout.db.name}.import{TEMP_SUFFIX}"
    for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
        leftover.unlink(missing_ok=True)
    store = _Importing(tmp, root)
    try:
        first = groups[0][0][0] if groups else None
        ident = {"assessor": first.assessor if first else None, "model": first.model if first else None,
                 "prompt_version": first.prompt_version if first else None}
        run = store.begin_run(kind, settings, ident, root=str(root), expected=len(groups) + len(failures))
        answers = {}
        for position, (assessed, score) in enumerate(_assessed(legacy, groups)):
            sid = assessed[0].submission_id
            result = _result(legacy, root, kind, sid, assessed, score)
            store.commit_submission(run, result, name=Path(result.source).name or sid, papers={}, position=position)
            answers.update({r.key: answer_digest(r) for r in assessed})
        store.finish_run(run, state, failures, _summary(legacy) if state == COMPLETE else None)
        if history:
            from checklist_eval.challenge.results.appeals import AppliedOverride

            store.record_appeals(run, [AppliedOverride.model_validate(
                {**e.model_dump(), "decided_on": answers.get(e.key, "")}) for e in history], keep_repeats=True)
        store.record_exports(_files(root, kind, [g[0][0].submission_id for g in groups]), run, _generation(store))
        store.db.execute("PRAGMA journal_mode=DELETE")  # one file to rename: the WAL is folded in
        store.close()
        os.replace(tmp, layout.db)
        fsync_dir(root)
    finally:
        store.close()
        tmp.unlink(missing_ok=True)
    said = "".join(f"; {line}" for line in dict.fromkeys(legacy.notes))
    return (f"imported {root} into {layout.db.name} (written before the database): run 1"
            f"{' (did not finish)' if state != COMPLETE else ''}, {len(groups)} submission(s), {len(failures)} "
            f"failure(s), {len(history)} appeal decision(s){said}")


class _Importing(ResultsStore):
    """A store at a temp path (the folder gets its database only once the import is whole)."""

    def __init__(self, path: Path, root: Path):
        import threading

        from checklist_eval.challenge.results.store import connect

        self.root = root
        self.path = path
        self.db = connect(path)
        self._lock = threading.Lock()
        self._closed = False

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.db.close()


def _assessed(legacy: LegacyFolder, groups: list) -> list:
    """Each submission's records as assessed (the ledger's rows, an appeal shown on them undone), with
    its checked score."""
    from checklist_eval.challenge.results.appeals import as_assessed, standing

    decisions = standing(legacy.history())
    scores = {records[0].submission_id: score for records, score in groups}
    return [(as_assessed(rows, decisions), scores[rows[0].submission_id]) for rows in legacy._ledger_groups()]


def _result(legacy: LegacyFolder, root: Path, kind: str, sid: str, assessed: list, score) -> SubmissionResult:
    found = legacy.result(sid) if kind == "batch" else _read(root / RESULT_JSON)
    if found is not None and found.submission_id == sid:
        return found.model_copy(update={"records": assessed, "appeals": None})
    first = assessed[0]
    return SubmissionResult(submission_id=sid, source=first.source, fingerprint="", case=score.case,
                            assessor=first.assessor, model=first.model or None,
                            prompt_version=first.prompt_version or None, scored_at=first.scored_at or "", score=score,
                            records=assessed)


def _read(path: Path) -> SubmissionResult | None:
    from checklist_eval.challenge.results.outputs import read_result

    return read_result(path)


def _summary(legacy: LegacyFolder) -> dict | None:
    data = read_json_file(legacy.layout.summary_json)
    return data if isinstance(data, dict) else None


def _files(root: Path, kind: str, sids: list[str]) -> dict[str, tuple[str, int]]:
    names = [n for n in EXPORTED if (root / n).is_file()]
    if kind == "batch":
        names += [f"{SUBMISSIONS_DIR}/{sid}/{n}" for sid in sids for n in (RESULT_JSON, "report.html")]
    out = {}
    for name in names:
        found = sha256_file(root / name)
        if found is not None:
            out[name] = found
    return out


def _generation(store: ResultsStore) -> int:
    return generation_of(store.db)
