"""``RESULTS/results.sqlite``: every run, submission, record, score, failure and appeal of a results
folder, in one SQLite file (WAL, foreign keys on, named migrations as the response cache has them).

Runs: every ``batch`` (and every ``score --out``) opens a run. A submission finished with the same
source and settings in an earlier run is copied into the new one (no request repeated); the earlier
runs stay until ``checklist-eval prune``. A run is ``running`` until its command ends it ``complete``
(or ``stopped`` by --max-cost); a killed one stays ``running`` with a process that is gone, which the
readers call interrupted. Readers show the latest complete run (``snapshot``).

What commits together: a submission's row, its records and its scores (one transaction), so a kill at
any instant leaves the last committed state. ``appeals`` and ``history`` are append-only (triggers
refuse an UPDATE or DELETE); the view ``decided_records`` shows each record as the decisions leave it.
``meta.generation`` counts the committed changes: every export is marked
with it, and ``exports`` holds what each export was when written, so a reader knows an edited one.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from checklist_eval.challenge.records import Record
from checklist_eval.challenge.results.appeals import CONFIRMED, OVERRIDDEN, AppliedOverride, answer_digest, decide
from checklist_eval.challenge.results.layout import DB_NAME
from checklist_eval.challenge.results.leaderboard import Failure
from checklist_eval.challenge.results.outputs import SubmissionResult
from checklist_eval.challenge.results.settings import RunSettings
from checklist_eval.challenge.scoring import SubmissionScore, score_submission
from checklist_eval.errors import InputError
from checklist_eval.fsutil import apply_migrations
from checklist_eval.redact import redact  # what the database keeps, like every file, holds no secret

RUNNING, COMPLETE, STOPPED = "running", "complete", "stopped"


def _m001_results(db: sqlite3.Connection) -> None:
    db.execute("""CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, state TEXT NOT NULL,
        settings_json TEXT, assessor TEXT, model TEXT, prompt_version TEXT, code_version TEXT NOT NULL,
        root TEXT NOT NULL DEFAULT '', expected INTEGER, pid INTEGER, started_at TEXT NOT NULL, finished_at TEXT,
        summary_json TEXT)""")
    db.execute("""CREATE TABLE submissions (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, submission_id TEXT NOT NULL,
        name TEXT NOT NULL, source TEXT NOT NULL, fingerprint TEXT NOT NULL, papers_json TEXT NOT NULL,
        result_json TEXT NOT NULL, position INTEGER NOT NULL, committed_at REAL NOT NULL, generation INTEGER NOT NULL,
        PRIMARY KEY (run_id, submission_id))""")
    db.execute("""CREATE TABLE records (
        run_id INTEGER NOT NULL, submission_id TEXT NOT NULL, role TEXT NOT NULL, question_id TEXT NOT NULL,
        answer TEXT, justification TEXT NOT NULL, answer_digest TEXT NOT NULL, correct INTEGER NOT NULL,
        verdict TEXT NOT NULL, state TEXT, p_correct REAL, evidence TEXT NOT NULL, reader TEXT NOT NULL,
        position INTEGER NOT NULL, record_json TEXT NOT NULL,
        PRIMARY KEY (run_id, submission_id, role, question_id),
        FOREIGN KEY (run_id, submission_id) REFERENCES submissions(run_id, submission_id) ON DELETE CASCADE)""")
    db.execute("""CREATE TABLE scores (
        run_id INTEGER NOT NULL, submission_id TEXT NOT NULL, "case" TEXT, C_G REAL, C_A REAL, C_T REAL,
        R REAL, S REAL, score_json TEXT NOT NULL, PRIMARY KEY (run_id, submission_id),
        FOREIGN KEY (run_id, submission_id) REFERENCES submissions(run_id, submission_id) ON DELETE CASCADE)""")
    db.execute("""CREATE TABLE failures (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, submission_id TEXT NOT NULL,
        source TEXT NOT NULL, error TEXT NOT NULL, PRIMARY KEY (run_id, submission_id))""")
    db.execute("""CREATE TABLE appeals (
        id INTEGER PRIMARY KEY AUTOINCREMENT, submission_id TEXT NOT NULL, role TEXT NOT NULL,
        question_id TEXT NOT NULL, answer_digest TEXT NOT NULL, was_correct INTEGER NOT NULL,
        correct INTEGER NOT NULL, file TEXT NOT NULL, note TEXT NOT NULL, applied_at TEXT NOT NULL,
        run_id INTEGER)""")
    db.execute("""CREATE TABLE history (
        id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, generation INTEGER NOT NULL,
        event TEXT NOT NULL, detail_json TEXT NOT NULL)""")
    for table in ("appeals", "history"):  # append-only: the engine refuses a change, not our discipline
        for op in ("UPDATE", "DELETE"):
            db.execute(f"CREATE TRIGGER {table}_no_{op.lower()} BEFORE {op} ON {table} "
                       f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END")
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('generation', '0')")
    db.execute("""CREATE TABLE exports (name TEXT PRIMARY KEY, sha256 TEXT NOT NULL, size INTEGER NOT NULL,
        run_id INTEGER, generation INTEGER NOT NULL)""")
    db.execute("CREATE INDEX records_answer ON records (submission_id, role, question_id)")
    db.execute("CREATE INDEX submissions_resume ON submissions (submission_id, fingerprint)")


def _m002_decided_records(db: sqlite3.Connection) -> None:
    """``decided_records``: each record as it stands, for whoever reads the database with sqlite3: the
    latest appeal decision on it applied when it was made on this very answer (``appeals.decide``, which
    every command uses; a test holds the two equal), its ``appeal`` saying "overridden by appeal" or
    "confirmed by appeal (changes nothing)", and the assessor's verdict and state beside."""
    db.execute(f"""CREATE VIEW decided_records AS
        WITH latest AS (SELECT a.* FROM appeals a WHERE a.id = (SELECT max(b.id) FROM appeals b
            WHERE b.submission_id = a.submission_id AND b.role = a.role AND b.question_id = a.question_id))
        SELECT r.run_id, r.submission_id, r.role, r.question_id, r.answer,
            coalesce(a.correct, r.correct) AS correct,
            CASE WHEN a.id IS NULL THEN r.state
                 WHEN a.correct = 0 OR r.answer IS NULL OR r.answer NOT IN ('Yes', 'No', 'NA') THEN 'contradicted'
                 WHEN r.state IS NULL OR r.state = 'contradicted' THEN 'unverified' ELSE r.state END AS state,
            CASE WHEN a.id IS NULL THEN '' WHEN a.correct != a.was_correct THEN '{OVERRIDDEN}'
                 ELSE '{CONFIRMED}' END AS appeal,
            a.id AS appeal_id, a.note AS appeal_note, a.file AS appeal_file, a.applied_at AS appealed_at,
            r.correct AS assessed_correct, r.state AS assessed_state, r.verdict AS assessed_verdict
        FROM records r LEFT JOIN latest a ON a.submission_id = r.submission_id AND a.role = r.role
            AND a.question_id = r.question_id AND (a.answer_digest = '' OR a.answer_digest = r.answer_digest)""")


MIGRATIONS: list[tuple[str, Callable[[sqlite3.Connection], None]]] = [
    ("m001_results", _m001_results), ("m002_decided_records", _m002_decided_records)]


def db_path(root: str | Path) -> Path:
    return Path(root) / DB_NAME


def code_version() -> str:
    """The installed checklist-eval's version (what made a run's records)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("checklist-eval")
    except PackageNotFoundError:
        return "unknown"


def connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection to a results database, its header checked and (writable) migrated; InputError
    naming the file when it is not one."""
    from checklist_eval.endpoint.cachefile import open_cache_db

    if read_only and not path.is_file():
        raise InputError(path, "not found")
    db = open_cache_db(path, read_only=read_only)
    db.isolation_level = None  # explicit BEGIN/COMMIT: a transaction is what this module says it is
    try:
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA busy_timeout=30000")
        if not read_only:
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # a committed submission survives a power cut
            apply_migrations(db, MIGRATIONS)
        elif not db.execute("SELECT 1 FROM sqlite_master WHERE name='runs'").fetchone():
            raise InputError(path, "not a checklist-eval results database (no runs table)")
    except sqlite3.DatabaseError as err:
        db.close()
        raise storage_error(path, err) from None
    except BaseException:
        db.close()
        raise
    return db


_SQLITE_STORAGE = {13: "no space left on the device", 8: "read-only file system", 10: "disk I/O error",
                   14: "cannot open the file"}


def _refused_write(folder: Path) -> str | None:
    """Why the system refuses a write of 64 KiB in ``folder`` (file too large, no space), or None."""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder) as fh:
            fh.write(b"\0" * (64 << 10))
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as err:
        return err.strerror or str(err)
    return None


class StorageRefused(InputError):
    """The storage would not take a write of the database (full, read-only, I/O error): every other
    write would fail the same way, so a batch stops on it instead of failing one submission."""


def storage_error(path: Path, err: sqlite3.Error) -> InputError:
    """One line for a database the storage would not write (full, read-only) or that is not one."""
    code = getattr(err, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _SQLITE_STORAGE:
        why = _SQLITE_STORAGE[code & 0xFF]
        if code & 0xFF == 10:  # SQLite says "I/O error" for what the system named: ask the system
            why = _refused_write(path.parent) or why
        return StorageRefused(path, f"cannot write: {why} ({err})")
    return InputError(path, f"not a checklist-eval results database ({err})")


@contextmanager
def transaction(db: sqlite3.Connection, event: str, detail: dict[str, Any]) -> Iterator[int]:
    """One write transaction that bumps the generation and appends ``event`` to the history; yields
    the new generation. Everything in the block commits together or not at all."""
    db.execute("BEGIN IMMEDIATE")
    try:
        generation = generation_of(db) + 1
        db.execute("UPDATE meta SET value=? WHERE key='generation'", (str(generation),))
        db.execute("INSERT INTO history (at, generation, event, detail_json) VALUES (?, ?, ?, ?)",
                   (time.time(), generation, event, json.dumps(detail, ensure_ascii=False)))
        yield generation
        db.execute("COMMIT")
    except sqlite3.Error as err:
        _rollback(db)
        raise _named(db, err) from None
    except BaseException:
        _rollback(db)
        raise


def source_fingerprint(path: Path) -> str:
    """Hash of every file of a submission (names and bytes): a changed upload is scored again."""
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        h.update(f.relative_to(path).as_posix().encode() if f != path else b".")
        h.update(b"\0")
        with f.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        h.update(b"\0")
    return h.hexdigest()


def generation_of(db: sqlite3.Connection) -> int:
    """The database's generation counter, read as the whole number this module writes: a damaged or
    hostile file's value (text, a sign, a number of 40 digits, no row) is one line naming the file."""
    row = db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
    text = str(row[0]) if row is not None else ""
    if not (text.isascii() and text.isdigit()) or len(text) > 18:  # 18 digits: far past any real count
        path = Path(db.execute("PRAGMA database_list").fetchone()[2] or "results.sqlite")
        raise InputError(path, f"not a checklist-eval results database (its generation reads {text[:20]!r})")
    return int(text)


def _named(db: sqlite3.Connection, err: sqlite3.Error) -> Exception:
    """A write the storage refused, as one line naming the database file; any other error as itself."""
    refused = storage_error(Path(db.execute("PRAGMA database_list").fetchone()[2] or "results.sqlite"), err)
    return refused if isinstance(refused, StorageRefused) else err


def _rollback(db: sqlite3.Connection) -> None:
    """Undo the open transaction, if SQLite has not undone it itself (it does on a full disk): the
    error that stopped it is the one the user reads, not "no transaction is active"."""
    if db.in_transaction:
        db.execute("ROLLBACK")


def paper_digests(path: Path) -> dict[str, str]:
    """sha256 of each top-level entry of a submission (a paper's file or folder; an archive whole)."""
    if not path.is_dir():
        return {path.name: source_fingerprint(path)} if path.is_file() else {}
    return {p.name: source_fingerprint(p) for p in sorted(path.iterdir()) if not p.name.startswith(".")}


class ResultsStore:
    """The writer's side: one connection, held by the command that holds the folder's lock."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.path = db_path(self.root)
        self.db = connect(self.path)
        self._lock = threading.Lock()  # one connection, written from the batch's worker threads

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------------------------------- runs

    def begin_run(self, kind: str, settings: RunSettings | None, ident: dict[str, str | None], root: str,
                  expected: int | None = None) -> int:
        with self._lock, transaction(self.db, "run started", {"kind": kind, "root": root}):
            cur = self.db.execute(
                "INSERT INTO runs (kind, state, settings_json, assessor, model, prompt_version, code_version, root, "
                "expected, pid, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (kind, RUNNING, settings.model_dump_json() if settings else None, ident.get("assessor"),
                 ident.get("model"), ident.get("prompt_version"), code_version(), root, expected, os.getpid(), _now()))
            return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, state: str, failures: Sequence[Failure], summary: dict[str, Any] | None) -> int:
        with self._lock, transaction(self.db, f"run {state}", {"run": run_id, "failures": len(failures)}) as generation:
            self.db.executemany("INSERT OR REPLACE INTO failures VALUES (?, ?, ?, ?)",
                                [(run_id, f.submission_id, f.source, redact(f.error)) for f in failures])
            self.db.execute("UPDATE runs SET state=?, finished_at=?, summary_json=? WHERE id=?",
                            (state, _now(), redact(json.dumps(summary)) if summary is not None else None, run_id))
            return generation

    # -------------------------------------------------------------------------------- submissions

    def commit_submission(self, run_id: int, result: SubmissionResult, *, name: str, papers: dict[str, str],
                          position: int) -> SubmissionScore:
        """The submission, its records and its scores (the standing appeals that apply to these very
        answers applied), in one transaction; returns the score as committed."""
        sid = result.submission_id
        with self._lock, transaction(self.db, "submission committed", {"run": run_id, "submission": sid}) as gen:
            self.db.execute("DELETE FROM submissions WHERE run_id=? AND submission_id=?", (run_id, sid))
            meta = result.model_copy(update={"records": [], "appeals": None})
            self.db.execute("INSERT INTO submissions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (run_id, sid, name, result.source, result.fingerprint, json.dumps(papers),
                             redact(meta.model_dump_json()), position, time.time(), gen))
            self.db.executemany("INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                [_record_row(run_id, i, r) for i, r in enumerate(result.records)])
            return self._write_score(run_id, sid, result.records)

    def _write_score(self, run_id: int, sid: str, records: Sequence[Record]) -> SubmissionScore:
        decided, _replaced = decide(records, standing_appeals(self.db, [sid]))
        score = score_submission(sid, decided)
        public = score.public()
        self.db.execute("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (run_id, sid, public.case, public.C_G, public.C_A, public.C_T, public.R, public.S,
                         score.model_dump_json()))
        return score

    def finished(self, sid: str, fingerprint: str, settings: RunSettings | None,
                 ident: dict[str, str | None]) -> tuple[int, SubmissionResult] | None:
        """(run, result without records) of the latest committed copy of ``sid`` made from this very
        source with these settings and this assessor; None when it must be scored (again)."""
        rows = self.db.execute(
            "SELECT s.run_id, s.result_json, r.settings_json FROM submissions s JOIN runs r ON r.id = s.run_id "
            "WHERE s.submission_id=? AND s.fingerprint=? ORDER BY s.run_id DESC LIMIT 20", (sid, fingerprint))
        for run_id, result_json, settings_json in rows.fetchall():
            result = SubmissionResult.model_validate_json(result_json)
            if any(getattr(result, k) != v for k, v in ident.items()):
                continue
            theirs = RunSettings.model_validate_json(settings_json) if settings_json else None
            if settings is not None and theirs is not None and theirs != settings:
                continue
            return run_id, result
        return None

    def copy_submission(self, from_run: int, to_run: int, sid: str, position: int) -> SubmissionScore:
        """A finished submission of an earlier run, records and scores, into ``to_run`` (one transaction)."""
        detail = {"run": to_run, "from": from_run, "submission": sid}
        with self._lock, transaction(self.db, "submission resumed", detail):
            self.db.execute("DELETE FROM submissions WHERE run_id=? AND submission_id=?", (to_run, sid))
            self.db.execute("INSERT INTO submissions SELECT ?, submission_id, name, source, fingerprint, papers_json, "
                            "result_json, ?, ?, generation FROM submissions WHERE run_id=? AND submission_id=?",
                            (to_run, position, time.time(), from_run, sid))
            self.db.execute("INSERT INTO records SELECT ?, submission_id, role, question_id, answer, justification, "
                            "answer_digest, correct, verdict, state, p_correct, evidence, reader, position, "
                            "record_json FROM records WHERE run_id=? AND submission_id=?", (to_run, from_run, sid))
            records = [Record.model_validate_json(r[0]) for r in self.db.execute(
                "SELECT record_json FROM records WHERE run_id=? AND submission_id=? ORDER BY position", (to_run, sid))]
            return self._write_score(to_run, sid, records)

    # ------------------------------------------------------------------------------------ appeals

    def record_appeals(self, run_id: int, rows: Iterable[AppliedOverride], *, keep_repeats: bool = False
                       ) -> tuple[list[AppliedOverride], int]:
        """Append the decisions that change what stands, and rescore the submissions they name in every
        run that holds them, in one transaction. Returns (the decisions added, the generation)."""
        rows = list(rows)
        sids = sorted({r.submission_id for r in rows})
        detail = {"run": run_id, "submissions": sids[:50]}
        with self._lock, transaction(self.db, "appeals recorded", detail) as generation:
            current = standing_appeals(self.db, sids)
            added = []
            for entry in rows:
                before = current.get(entry.key)
                same = before is not None and (before.correct, before.file, before.decided_on) == (
                    entry.correct, entry.file, entry.decided_on)
                if same and not keep_repeats:
                    continue
                self.db.execute("INSERT INTO appeals (submission_id, role, question_id, answer_digest, was_correct, "
                                "correct, file, note, applied_at, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                (entry.submission_id, entry.role, entry.question_id, entry.decided_on,
                                 int(entry.was_correct), int(entry.correct), entry.file, redact(entry.note),
                                 entry.applied_at, run_id))
                current[entry.key] = entry
                added.append(entry)
            for (run, sid) in self.db.execute(
                    f"SELECT run_id, submission_id FROM submissions WHERE submission_id IN ({_marks(sids)})",
                    sids).fetchall():
                self._write_score(run, sid, submission_records(self.db, run, sid))
            return added, generation

    # -------------------------------------------------------------------------------------- prune

    def prune(self, keep: int) -> list[int]:
        """Remove every run before ``keep`` (and the interrupted ones after it); the appeals and the
        history stay. Returns the runs removed."""
        gone = [r[0] for r in self.db.execute("SELECT id FROM runs WHERE id < ? OR (id > ? AND state != ?)",
                                              (keep, keep, COMPLETE)) if not _alive(self.db, r[0])]
        if gone:
            with transaction(self.db, "pruned", {"runs": gone, "kept": keep}):
                self.db.execute(f"DELETE FROM runs WHERE id IN ({_marks(gone)})", gone)
        self.db.execute("VACUUM")
        return gone

    def record_exports(self, written: dict[str, tuple[str, int]], run_id: int | None, generation: int) -> None:
        """What each export is as written (its sha256 and size): what a reader compares a file with."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany("INSERT OR REPLACE INTO exports VALUES (?, ?, ?, ?, ?)",
                                [(name, sha, size, run_id, generation) for name, (sha, size) in written.items()])
            self.db.execute("COMMIT")
        except sqlite3.Error as err:
            _rollback(self.db)
            raise _named(self.db, err) from None
        except BaseException:
            _rollback(self.db)
            raise


# ---------------------------------------------------------------------------------------- shared reads


def submission_records(db: sqlite3.Connection, run_id: int, sid: str) -> list[Record]:
    return [Record.model_validate_json(r[0]) for r in db.execute(
        "SELECT record_json FROM records WHERE run_id=? AND submission_id=? ORDER BY position", (run_id, sid))]


def standing_appeals(db: sqlite3.Connection, sids: Sequence[str] | None = None) -> dict[tuple[str, str, str],
                                                                                       AppliedOverride]:
    """The decision that stands per record (the latest), of ``sids`` or of every submission."""
    where = "" if sids is None else f" WHERE submission_id IN ({_marks(sids)})"
    out: dict[tuple[str, str, str], AppliedOverride] = {}
    for entry in appeal_history(db, where, list(sids or [])):
        out[entry.key] = entry
    return out


def appeal_history(db: sqlite3.Connection, where: str = "", params: Sequence[Any] = ()) -> list[AppliedOverride]:
    rows = db.execute("SELECT submission_id, role, question_id, answer_digest, was_correct, correct, file, note, "
                      f"applied_at FROM appeals{where} ORDER BY id", params).fetchall()
    return [AppliedOverride(submission_id=r[0], role=r[1], question_id=r[2], decided_on=r[3], was_correct=bool(r[4]),
                            correct=bool(r[5]), file=r[6], note=r[7], applied_at=r[8]) for r in rows]


def _record_row(run_id: int, position: int, r: Record) -> tuple:
    return (run_id, r.submission_id, r.role, r.question_id, r.answer.value if r.answer is not None else None,
            redact(r.justification), answer_digest(r), int(r.correct), r.verdict, r.state.value if r.state else None,
            r.p_correct, redact(json.dumps([p.model_dump() for p in r.passages], ensure_ascii=False)), r.assessor,
            position, redact(r.model_dump_json()))


def _alive(db: sqlite3.Connection, run_id: int) -> bool:
    row = db.execute("SELECT state, pid FROM runs WHERE id=?", (run_id,)).fetchone()
    return bool(row) and row[0] == RUNNING and pid_alive(row[1])


def pid_alive(pid: int | None) -> bool:
    """Whether the process that started a run still runs (a killed run's pid is gone)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _marks(items: Sequence[Any]) -> str:
    return ",".join("?" * len(items)) or "NULL"


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def sha256_file(path: Path, limit: int = 1 << 31) -> tuple[str, int] | None:
    """(sha256, size) of a file, None when it cannot be read (or is larger than ``limit``)."""
    h = hashlib.sha256()
    size = 0
    try:
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
                size += len(chunk)
                if size > limit:
                    return None
    except OSError:
        return None
    return h.hexdigest(), size
