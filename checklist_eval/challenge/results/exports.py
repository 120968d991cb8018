"""The files an organizer reads, each an export of one committed state of ``results.sqlite``.

``write_exports`` writes every one of them from one snapshot (the run the readers show, with the
appeals standing on it), each atomically (temp file, fsync, rename, fsync of the folder), and records
what each is (sha256, size, generation) in the database's ``exports`` table. ``exports.json`` marks the
set: the run it shows, the generation, each file's sha256. A reader compares the files with the table
(``edited_exports``) and says which were changed after they were written; it never reads them for a
score. A file not changed since the last export is not written again (a 300-submission folder's
reports are rendered once).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from checklist_eval.challenge.records import records_to_jsonl_text
from checklist_eval.challenge.results.appeals import AppliedOverride, Key, decide
from checklist_eval.challenge.results.layout import (
    APPEALS_HTML,
    LEADERBOARD_HTML,
    SUBMISSIONS_DIR,
    ResultsLayout,
    SubmissionFolder,
)
from checklist_eval.challenge.results.leaderboard import (
    Failure,
    LeaderboardRow,
    failure_rows,
    leaderboard_csv_text,
    leaderboard_row,
    rank_rows,
)
from checklist_eval.challenge.results.outputs import SubmissionResult
from checklist_eval.challenge.results.snapshot import Snapshot
from checklist_eval.challenge.results.store import ResultsStore, sha256_file
from checklist_eval.challenge.scoring import PublicScore, ScoreRow, score_submission
from checklist_eval.fsutil import atomic_writer
from checklist_eval.redact import redact_bytes
from checklist_eval.tables import csv_header_text, csv_rows_text, csv_text

EXPORTS_JSON = "exports.json"


class _Writer:
    """Writes exports under ``root`` and keeps what each is, by its name relative to ``root``."""

    def __init__(self, root: Path, before: dict[str, tuple[str, int, int]]):
        self.root = root
        self.before = before
        self.written: dict[str, tuple[str, int]] = {}

    def name(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def unchanged(self, path: Path, data: bytes) -> bool:
        """The file already is ``data`` as last exported (then it is not written again)."""
        name = self.name(path)
        sha = hashlib.sha256(redact_bytes(data)).hexdigest()
        if name in self.before and self.before[name][0] == sha and sha256_file(path) == (sha, self.before[name][1]):
            self.written[name] = (sha, self.before[name][1])
            return True
        return False

    def whole(self, path: Path, data: bytes) -> None:
        if not self.unchanged(path, data):
            self.pieces(path, lambda write: write(data))

    def pieces(self, path: Path, fill: Callable[[Callable[[bytes], None]], None]) -> None:
        h = hashlib.sha256()
        size = 0
        with atomic_writer(path) as write:
            def counted(data: bytes) -> None:
                nonlocal size
                data = redact_bytes(data)
                h.update(data)
                size += len(data)
                write(data)

            fill(counted)
        self.written[self.name(path)] = (h.hexdigest(), size)


def write_exports(store: ResultsStore) -> None:
    """Every export of the run the readers show (nothing when no run can be shown yet)."""
    root = store.root
    with Snapshot(store.path) as snap:
        if snap.shown is None:
            return
        writer = _Writer(root, snap.exports())
        if snap.shown.kind == "score":
            _score_folder(snap, writer)
        else:
            _batch_folder(snap, writer)
        manifest = {"database": store.path.name, "run": snap.shown.id, "generation": snap.generation,
                    "files": {name: sha for name, (sha, _size) in sorted(writer.written.items())}}
        writer.whole(root / EXPORTS_JSON, (json.dumps(manifest, indent=1) + "\n").encode())
        run_id, generation = snap.shown.id, snap.generation
    store.record_exports(writer.written, run_id, generation)


def _result_of(snap: Snapshot, sid: str) -> tuple[SubmissionResult, list]:
    """A submission's result.json as the readers see it: records as assessed, the appeals that apply
    to its answers, the score with them applied."""
    result = snap.result(sid)
    assert result is not None
    mine = {k: d for k, d in snap.standing().items() if d.submission_id == sid}
    decided, replaced = decide(result.records, mine)
    applied = [d for d in mine.values() if d not in replaced]
    # its records as they stand: an appealed one with the decision's verdict and state, and its ``appeal``
    result = result.model_copy(update={"appeals": applied, "score": score_submission(sid, decided),
                                       "records": decided, "settings": snap.shown.settings if snap.shown else None})
    return result, decided


def _submission_files(snap: Snapshot, writer: _Writer, folder: SubmissionFolder, sid: str
                      ) -> tuple[SubmissionResult, list]:
    from checklist_eval.challenge.report import render_submission_report
    from checklist_eval.challenge.results.appeals import standing

    result, decided = _result_of(snap, sid)
    text = result.model_dump_json(indent=1).encode()
    if not writer.unchanged(folder.result_json, text) or not folder.report_html.is_file():
        html = render_submission_report(result.score, decided, usage=result.usage,
                                        overrides=standing(result.appeals or []))
        writer.whole(folder.report_html, html.encode())
        writer.pieces(folder.result_json, lambda write: write(text))  # last: the file that says it is done
    else:
        sha = sha256_file(folder.report_html)
        if sha is not None:
            writer.written[writer.name(folder.report_html)] = sha
    return result, decided


def _batch_folder(snap: Snapshot, writer: _Writer) -> None:
    layout = ResultsLayout(writer.root)
    rows: list[ScoreRow] = []
    scores: list[PublicScore] = []
    results = []
    board: list[LeaderboardRow] = []
    history = snap.history()
    appealed = {d.key for d in history}
    titles: dict[Key, str] = {}  # the appealed questions' titles, for the appeals page
    for sid in snap.submission_ids():
        result, decided = _submission_files(snap, writer, layout.submission(sid), sid)
        titles.update((r.key, r.question_title) for r in decided if r.key in appealed)
        rows.append(ScoreRow.of(result.score, result.all_warnings))
        scores.append(result.score.public())
        board.append(leaderboard_row(result.score, decided))
        results.append(sid)

    def ledger(jsonl: bool) -> Callable[[Callable[[bytes], None]], None]:
        from checklist_eval.challenge.records import Record

        def fill(write: Callable[[bytes], None]) -> None:
            if not jsonl:
                write(csv_header_text(Record).encode())
            standing = snap.standing()
            for assessed in snap.groups():  # as they stand: the appeals on these very answers applied
                group = decide(assessed, standing)[0]
                write((records_to_jsonl_text(group) if jsonl else csv_rows_text(Record, group)).encode())
        return fill

    writer.pieces(layout.records_csv, ledger(False))
    writer.pieces(layout.records_jsonl, ledger(True))
    writer.whole(layout.scores_csv, csv_text(ScoreRow, rows).encode())
    failures = snap.failures()
    writer.whole(layout.failures_jsonl, "".join(json.dumps(f.model_dump()) + "\n" for f in failures).encode())
    writer.whole(layout.summary_json, _summary(snap, scores, failures).encode())
    ranked = rank_rows(board + failure_rows(failures, set(results)))
    _leaderboards(writer, layout, ranked)
    _appeals_page(history, writer, layout, ranked, titles)
    _history(snap, writer, layout)
    _remove_gone(writer.root / SUBMISSIONS_DIR, set(results))


def _leaderboards(writer: _Writer, layout: ResultsLayout, rows: list[LeaderboardRow]) -> None:
    """The ranking as ``leaderboard RESULTS --csv/--html`` would write it, of the same committed state."""
    from checklist_eval.challenge.leaderboard_page import page_rows, render_leaderboard, report_links

    writer.whole(layout.leaderboard_csv, leaderboard_csv_text(rows).encode())
    links = report_links(writer.root, layout.leaderboard_html, [r.submission_id for r in rows])
    page = render_leaderboard(page_rows(rows), links, appeals_href=APPEALS_HTML)
    writer.whole(layout.leaderboard_html, page.encode())


def _appeals_page(history: list[AppliedOverride], writer: _Writer, layout: ResultsLayout,
                  board: list[LeaderboardRow], titles: dict[Key, str]) -> None:
    """``appeals.html``: every decision, each linking the card of its answer in its submission's report."""
    from checklist_eval.challenge.appeals_page import decision_views, render_appeals
    from checklist_eval.challenge.headline import question_anchor
    from checklist_eval.challenge.leaderboard_page import report_links

    reports = report_links(writer.root, layout.appeals_html, sorted({d.submission_id for d in history}))

    def link(d: AppliedOverride) -> str:
        href = reports.get(d.submission_id, "")
        return f"{href}#{question_anchor(d.role, d.question_id)}" if href else ""

    views = decision_views(history, board, link, titles)
    writer.whole(layout.appeals_html, render_appeals(views, title="Appeal decisions", back=LEADERBOARD_HTML).encode())


def _summary(snap: Snapshot, scores: list[PublicScore], failures: list[Failure]) -> str:
    run = snap.shown
    assert run is not None
    summary = dict(run.summary or {})
    summary["scores"] = [s.model_dump(mode="json") for s in scores]
    summary["failures"] = [f.model_dump() for f in failures]
    summary["run"] = run.id
    summary["generation"] = snap.generation
    return json.dumps(summary, indent=1)


def _history(snap: Snapshot, writer: _Writer, layout: ResultsLayout) -> None:
    history = snap.history()
    if history:
        writer.whole(layout.overrides_jsonl, ("\n".join(e.model_dump_json() for e in history) + "\n").encode())


def _score_folder(snap: Snapshot, writer: _Writer) -> None:
    """``score --out DIR``: the one submission's files at the top of the folder."""
    folder = SubmissionFolder(writer.root)
    sids = snap.submission_ids()
    for sid in sids[-1:]:
        from checklist_eval.challenge.records import Record

        result, _ = _submission_files(snap, writer, folder, sid)
        writer.whole(folder.records_csv, (csv_header_text(Record) + csv_rows_text(Record, result.records)).encode())
        writer.whole(folder.records_jsonl, records_to_jsonl_text(result.records).encode())
    _history(snap, writer, ResultsLayout(writer.root))


def _remove_gone(base: Path, keep: set[str]) -> None:
    """The folders of submissions the shown run does not hold (a rerun without them): their files
    would say a submission is scored that the database does not show."""
    import shutil

    if not base.is_dir():
        return
    for child in base.iterdir():
        if child.is_dir() and not child.is_symlink() and child.name not in keep:
            shutil.rmtree(child, ignore_errors=True)


def edited_exports(root: Path, snap: Snapshot) -> list[str]:
    """The exports that are not what the database last wrote (edited, cut or removed), by name."""
    out = []
    for name, (sha, size, _generation) in sorted(snap.exports().items()):
        if sha256_file(root / name) != (sha, size):
            out.append(name)
    return out
