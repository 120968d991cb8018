"""Assessment records: one row per (submission_id, role, question_id), the ledger scores come from.

Every scoring run writes them (CSV and JSONL) and ``rescore`` reads them back, so scores can be
recomputed, and appeal decisions applied, without any model. Reading CSV keeps the literal answer
``NA``: pandas' default would turn it into a missing value, which is the bug that made the 2024
reference scorer report R = 0.53 instead of 0.73 on its own sample.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_serializer, field_validator

from checklist_eval.errors import InputError
from checklist_eval.fsutil import atomic_write_bytes, atomic_write_text, atomic_writer, loads_json
from checklist_eval.models import CASES, ROLES, Answer, Assessment, Case, Paper, Role, is_answered, normalize_answer
from checklist_eval.redact import redact_bytes
from checklist_eval.tables import (
    Row,
    csv_header_and_rows,
    csv_header_text,
    csv_rows_text,
    csv_text,
    ragged_row,
    read_csv_rows,
    restore,
    row_reader,
)


class Record(Row):
    """One assessed checklist answer of one paper of one submission; its fields, in order, are the
    columns of ``records.csv`` and the keys of ``records.jsonl``. The first five are required on read,
    the rest were added over time at the end and read as empty (or 0) from older files."""

    submission_id: str
    role: Role
    question_id: str
    answer: Answer | None = None
    correct: bool = False
    case: Case | None = None  # empty in the files when unknown (older or hand-written ledgers)
    question_title: str = ""
    checklist_id: str = ""
    p_correct: float | None = Field(default=None, ge=0.0, le=1.0)
    justification: str = ""
    review: str = ""
    assessor: str = ""
    model: str = ""
    prompt_version: str = ""
    source: str = ""
    scored_at: str = ""
    # The cost ledger, one row per call: per paper and per run are sums over these.
    cached: bool = False
    calls: int = Field(default=0, ge=0)
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    cached_tokens: int = Field(default=0, ge=0)
    cost_usd: float = Field(default=0.0, ge=0.0, allow_inf_nan=False)
    # The reasoning part of completion_tokens, and what the endpoint refused and how the request was
    # changed for it ("; "-separated).
    reasoning_tokens: int = Field(default=0, ge=0)
    quirks: str = ""
    # The graded verdict (correct / incorrect / unverifiable); empty for assessors that do not grade.
    verdict: str = ""
    # Signs the paper tries to steer its assessor (hidden text, text addressed to it): see manipulation.py.
    manipulation: str = ""
    # Provenance of the verdict, so a row can be reproduced and an appeal checked against the call log.
    endpoint: str = ""
    output_strategy: str = ""
    temperature: float | None = None
    seed: int | None = None
    # Where the answer is in the author's files ("checklist.tex:115", "page 12"), for the report.
    location: str = ""
    # Share of the paper's text the model was given: below 1 the paper was over its context and this
    # question got the passages most relevant to it; empty for the heuristic assessor.
    context_share: float | None = Field(default=None, ge=0.0, le=1.0)

    @field_validator("case", mode="before")
    @classmethod
    def _empty_case_is_unknown(cls, value: object) -> object:
        return None if value == "" else value

    @field_serializer("case")
    def _unknown_case_is_empty(self, case: Case | None) -> str:
        return case or ""

    @property
    def is_answered(self) -> bool:
        """The author committed to an answer (Yes/No/NA): not TODO, not missing."""
        return is_answered(self.answer)

    @property
    def c(self) -> int:
        """c_i of the rules: 1 only for an answered question (Yes/No/NA) judged correct; TODO/missing
        are 0 whatever the ``correct`` column says (a hand-edited ledger cannot make a TODO count)."""
        return int(bool(self.correct) and self.is_answered)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.submission_id, self.role, self.question_id)

    def csv_cells(self) -> dict[str, Any]:
        """The row as records.csv spells it: 0/1 flags, full-precision floats, empty for missing."""
        d = self.model_dump()
        d["answer"] = self.answer.value if self.answer is not None else ""
        d["correct"] = int(self.correct)
        d["p_correct"] = "" if self.p_correct is None else repr(float(self.p_correct))
        d["cached"] = int(self.cached)
        d["cost_usd"] = repr(float(self.cost_usd))
        return d


COLUMNS = Record.columns()
REQUIRED = COLUMNS[:5]
LEDGER_COUNTS = ("calls", "prompt_tokens", "completion_tokens", "cached_tokens")
LEDGER_COLUMNS = ("cached", *LEDGER_COUNTS, "cost_usd")
# Calls, tokens and dollars beyond this are not a run's figures but a corrupt or hostile file.
MAX_LEDGER_FIGURE = 1e15


def records_from_assessments(
    submission_id: str,
    role: Role,
    paper: Paper,
    assessments: Sequence[Assessment],
    *,
    case: Case,
    scored_at: str,
) -> list[Record]:
    """Rows for one assessed paper, in checklist order, one per question of its checklist version.

    A question the assessor did not return (should not happen) is recorded as incorrect rather than
    dropped, so n stays the size of the checklist version.
    """
    from checklist_eval.assessors.manipulation import paper_flag

    by_id = {a.question_id: a for a in assessments}
    flag = paper_flag(paper)
    rows = []
    for item in paper.checklist.items:
        a = by_id.get(item.id)
        prov = a.provenance if a else None
        rows.append(
            Record(
                submission_id=submission_id,
                role=role,
                question_id=item.id,
                answer=item.answer,
                correct=bool(a.correct) if a else False,
                case=case,
                question_title=item.title,
                checklist_id=paper.checklist.id,
                p_correct=a.p_correct if a else None,
                justification=item.justification or "",
                review=a.review if a else "not assessed",
                assessor=(prov.assessor if prov else "") or "",
                model=(prov.model if prov else "") or "",
                prompt_version=(prov.prompt_version if prov else "") or "",
                source=paper.source,
                scored_at=scored_at,
                cached=bool(prov and prov.cached),
                quirks="; ".join(prov.quirks) if prov else "",
                **(prov.usage.model_dump() if prov else {}),
                verdict=(a.verdict or "") if a else "",
                manipulation=flag,
                **_provenance_columns(prov),
                location=item.location,
            )
        )
    return rows


def _provenance_columns(prov) -> dict[str, object]:
    if prov is None:
        return {}
    strategy = prov.strategy.value if prov.strategy is not None else ""
    return {"endpoint": prov.endpoint or "", "output_strategy": "" if strategy == "none" else strategy,
            "temperature": prov.temperature, "seed": prov.seed, "context_share": prov.context_share}


# ---------------------------------------------------------------------------------------------- write


def _jsonl_object(r: Record) -> dict[str, Any]:
    """A records.jsonl line: the CSV's cells, with the answer and p_correct as JSON null when missing."""
    d = r.csv_cells()
    d["answer"] = r.answer.value if r.answer is not None else None
    d["p_correct"] = r.p_correct
    return d


def records_to_csv_text(records: Iterable[Record]) -> str:
    return csv_text(Record, records)


def records_to_jsonl_text(records: Iterable[Record]) -> str:
    return "".join(json.dumps(_jsonl_object(r), ensure_ascii=False) + "\n" for r in records)


def write_records(records: Sequence[Record], csv_path: str | Path, jsonl_path: str | Path | None = None) -> None:
    """Write the ledger as CSV (and JSONL when asked), each atomically."""
    atomic_write_text(csv_path, records_to_csv_text(records))
    if jsonl_path is not None:
        atomic_write_text(jsonl_path, records_to_jsonl_text(records))


class GrowingLedger:
    """``records.csv`` and ``records.jsonl`` of a batch, appended one submission at a time as each
    finishes: the run holds no submission's records once they are written, and a killed run leaves
    every finished submission in the ledger. ``finish`` rewrites both files, atomically, with the
    submissions in a given order (the batch's, not the order they finished in) by copying their bytes.

    One writer at a time (the batch holds the results folder's lock); ``append`` may be called from
    several threads."""

    def __init__(self, csv_path: str | Path, jsonl_path: str | Path):
        self.paths = (Path(csv_path), Path(jsonl_path))
        self._heads = (csv_header_text(Record).encode("utf-8"), b"")
        self._ends = [len(head) for head in self._heads]
        self._spans: dict[str, list[tuple[int, int]]] = {}  # id -> (offset, size) in each file
        self._fds: list[int] = []
        self._lock = threading.Lock()

    def __enter__(self) -> GrowingLedger:
        self._ends = [len(head) for head in self._heads]
        self._spans.clear()
        for path, head in zip(self.paths, self._heads, strict=True):
            atomic_write_bytes(path, head)  # our own regular file, whatever was there (a link is replaced)
            self._fds.append(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW))
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def _close(self) -> None:
        while self._fds:
            os.close(self._fds.pop())

    def append(self, submission_id: str, records: Sequence[Record]) -> None:
        """Add one submission's records to the end of both files (redacted, as every output is)."""
        blocks = (csv_rows_text(Record, records), records_to_jsonl_text(records))
        with self._lock:
            spans = []
            for i, (fd, text) in enumerate(zip(self._fds, blocks, strict=True)):
                data = redact_bytes(text.encode("utf-8"))
                _write_all(fd, data)
                spans.append((self._ends[i], len(data)))
                self._ends[i] += len(data)
            self._spans[submission_id] = spans

    def finish(self, order: Iterable[str]) -> None:
        """Rewrite both files with the records of the submissions ``order`` names, in that order."""
        order = list(order)
        self._close()
        for i, (path, head) in enumerate(zip(self.paths, self._heads, strict=True)):
            with path.open("rb") as grown, atomic_writer(path) as write:
                write(head)
                for sid in order:
                    offset, size = self._spans[sid][i]
                    grown.seek(offset)
                    write(grown.read(size))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# ----------------------------------------------------------------------------------------------- read


def _parse_bool(value: object, where: str, path: Path, column: str = "correct") -> bool:
    text = str(value).strip().lower()
    if text in ("1", "1.0", "true", "yes"):
        return True
    if text in ("0", "0.0", "false", "no"):
        return False
    raise InputError(path, f"{where}: {column} must be 0 or 1, got {value!r}")


def _parse_number(value: object, where: str, path: Path, column: str, kind: type) -> int | float:
    """An optional non-negative ledger figure; empty (older records files) reads as 0."""
    if value is None or str(value).strip() == "":
        return kind(0)
    try:
        as_float = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise InputError(path, f"{where}: {column} must be a number, got {value!r}") from None
    if not math.isfinite(as_float) or abs(as_float) > MAX_LEDGER_FIGURE:
        raise InputError(path, f"{where}: {column} is not a plausible figure (above {MAX_LEDGER_FIGURE:.0e}), "
                               f"got {str(value)[:40]!r}")
    number = kind(as_float) if kind is int else as_float
    if number < 0:
        raise InputError(path, f"{where}: {column} must not be negative, got {value!r}")
    return number


def _parse_optional(value: object, where: str, path: Path, column: str, kind: type) -> int | float | None:
    """An optional number: empty (or absent, in records written before the column existed) is None."""
    if value is None or (isinstance(value, float) and value != value) or str(value).strip() == "":
        return None
    return _parse_number(value, where, path, column, kind)


def _parse_answer(value: object, where: str, path: Path) -> Answer | None:
    if value is None or str(value).strip() == "":
        return None
    answer = normalize_answer(value)
    if answer is None:
        raise InputError(path, f"{where}: answer must be Yes, No, NA, TODO or empty, got {value!r}")
    return answer


def _parse_p(value: object, where: str, path: Path) -> float | None:
    if value is None or str(value).strip() == "":
        return None
    try:
        p = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise InputError(path, f"{where}: p_correct must be a number in [0, 1], got {value!r}") from None
    if not 0.0 <= p <= 1.0:
        raise InputError(path, f"{where}: p_correct must be in [0, 1], got {value!r}")
    return p


def _record_from_mapping(row: dict, where: str, path: Path) -> Record:
    role = str(row.get("role", "")).strip().upper()
    if role not in ROLES:
        raise InputError(path, f"{where}: role must be G, A or T, got {row.get('role')!r}")
    sid = str(row.get("submission_id") or "").strip()
    qid = str(row.get("question_id") or "").strip()
    if not sid or not qid:
        raise InputError(path, f"{where}: submission_id and question_id must not be empty")
    case = str(row.get("case") or "").strip().upper()
    if case and case not in CASES:
        raise InputError(path, f"{where}: case must be G, GT or GAT, got {row.get('case')!r}")
    text = {k: ("" if row.get(k) is None else str(row.get(k))) for k in COLUMNS}
    return Record(
        submission_id=sid,
        role=role,
        question_id=qid,
        answer=_parse_answer(row.get("answer"), where, path),
        correct=_parse_bool(row.get("correct"), where, path),
        case=case,
        p_correct=_parse_p(row.get("p_correct"), where, path),
        cached=_parse_bool(row.get("cached") or 0, where, path, column="cached"),
        cost_usd=_parse_number(row.get("cost_usd"), where, path, "cost_usd", float),
        reasoning_tokens=_parse_number(row.get("reasoning_tokens"), where, path, "reasoning_tokens", int),
        temperature=_parse_optional(row.get("temperature"), where, path, "temperature", float),
        seed=_parse_optional(row.get("seed"), where, path, "seed", int),
        **{k: _parse_number(row.get(k), where, path, k, int) for k in LEDGER_COUNTS},
        **{
            k: text[k]
            for k in (
                "question_title", "checklist_id", "justification", "review", "assessor", "model",
                "prompt_version", "source", "scored_at", "quirks", "verdict", "manipulation", "endpoint",
                "output_strategy", "location",
            )
        },
    )


def _jsonl_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) of a JSONL file, read as asked for."""
    try:
        with path.open(encoding="utf-8") as fh:
            yield from enumerate(fh, start=1)
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text") from None


def _parsed_line(path: Path, n: int, line: str) -> dict:
    try:
        obj = loads_json(line)
    except json.JSONDecodeError as err:
        raise InputError(path, f"line {n}: not valid JSON ({err.msg})") from None
    except RecursionError:
        raise InputError(path, f"line {n}: JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise InputError(path, f"line {n}: expected a JSON object")
    missing = [c for c in REQUIRED if c not in obj]
    if missing:
        raise InputError(path, f"line {n}: missing field(s) {', '.join(missing)}")
    return obj


def _sid(value: object) -> str:
    """A submission id as a record reads it."""
    return str(value or "").strip()


class _Runs:
    """Whether each submission's rows come together (one run of rows per id), seen one id at a time."""

    def __init__(self) -> None:
        self.closed: set[str] = set()
        self.current: str | None = None
        self.together = True

    def see(self, sid: str) -> None:
        if sid == self.current:
            return
        if sid in self.closed:
            self.together = False
        if self.current is not None:
            self.closed.add(self.current)
        self.current = sid


class Ledger:
    """A records file (CSV or JSONL, by extension) read one row at a time, never held whole.

    Opening reads it once for its shape: that it is readable text in its format, with the required
    columns, how many rows it has and whether each submission's rows come together (as every file
    this tool writes has them). So problems are raised in the order ``read_records`` always raised
    them: the file's own first, then the first bad row, a duplicate (submission_id, role,
    question_id), and "no records". A file whose submissions' rows are interleaved (a spreadsheet
    sorted by another column) is grouped in memory.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(self.path, "records file not found")
        self.is_jsonl = self.path.suffix.lower() in (".jsonl", ".ndjson")
        runs = _Runs()
        rows = self._survey_jsonl(runs) if self.is_jsonl else self._survey_csv(runs)
        if rows == 0:
            raise NoRecords(self.path, "no records")
        self.rows_together = runs.together

    def _survey_jsonl(self, runs: _Runs) -> int:
        first: InputError | None = None  # raised after the whole file decoded: "not UTF-8" comes first
        rows = 0
        for n, line in _jsonl_lines(self.path):
            if first is not None or not line.strip():
                continue
            try:
                runs.see(_sid(_parsed_line(self.path, n, line).get("submission_id")))
                rows += 1
            except InputError as err:
                first = err
        if first is not None:
            raise first
        return rows

    def _survey_csv(self, runs: _Runs) -> int:
        header, body = csv_header_and_rows(self.path)
        first: InputError | None = None  # a long row is raised after the whole file parsed
        column = header.index("submission_id") if "submission_id" in header else None
        rows = 0
        for n, cells in enumerate(body, start=1):
            first = first or ragged_row(self.path, n, cells, header)
            if column is not None:
                runs.see(_sid(restore(cells[column]) if column < len(cells) else ""))
            rows += 1
        if first is not None:
            raise first
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise InputError(self.path, f"missing column(s) {', '.join(missing)}; need {', '.join(REQUIRED)}")
        return rows

    def _mappings(self) -> Iterator[tuple[str, dict]]:
        """(where, row) in file order; a JSONL row is counted among the non-blank lines, a CSV row
        counts the header as row 1."""
        if self.is_jsonl:
            lines = ((n, line) for n, line in _jsonl_lines(self.path) if line.strip())
            for i, (n, line) in enumerate(lines):
                yield f"line {i + 1}", _parsed_line(self.path, n, line)
        else:
            header, body = csv_header_and_rows(self.path)
            as_mapping = row_reader(header)
            for i, cells in enumerate(body):
                yield f"row {i + 2}", as_mapping(cells)

    def records(self) -> Iterator[Record]:
        """Every row as a validated Record, in file order."""
        seen: set[tuple[str, str, str]] = set()  # keys of the current submission when rows come together
        current = None
        for where, row in self._mappings():
            rec = _record_from_mapping(row, where, self.path)
            if self.rows_together and rec.submission_id != current:
                seen.clear()
                current = rec.submission_id
            if rec.key in seen:
                raise InputError(self.path, f"{where}: duplicate row for {'/'.join(rec.key)}")
            seen.add(rec.key)
            yield rec

    def submissions(self) -> Iterator[list[Record]]:
        """Each submission's records, one submission at a time, in order of first appearance."""
        if not self.rows_together:
            yield from group_by_submission(self.records()).values()
            return
        group: list[Record] = []
        for rec in self.records():
            if group and rec.submission_id != group[0].submission_id:
                yield group
                group = []
            group.append(rec)
        yield group


def group_by_submission(records: Iterable[Record]) -> dict[str, list[Record]]:
    """Records per submission id, in order of first appearance."""
    groups: dict[str, list[Record]] = {}
    for r in records:
        groups.setdefault(r.submission_id, []).append(r)
    return groups


def read_records(path: str | Path) -> list[Record]:
    """Read a records CSV or JSONL file (by extension), validating every row.

    Raises InputError naming the file and the row for anything unusable, including a duplicated
    (submission_id, role, question_id). ``Ledger`` reads one without holding it.
    """
    return list(Ledger(path).records())


class NoRecords(InputError):
    """A records file without a single row (a batch in which every submission failed writes one)."""


# ------------------------------------------------------------------------------------------ overrides

OVERRIDES_HELP = (
    "Overrides (appeal decisions): a CSV with header submission_id,role,question_id,correct and "
    "optionally note. Each row sets the verdict of one existing record: role is G, A or T, correct is "
    "0 or 1. A row naming no existing record, or trying to make a TODO/missing answer correct, is an "
    "error. Rows are applied before any score is computed."
)


class Override(BaseModel):
    """One row of an overrides file: the verdict an appeal decided for one existing record."""

    submission_id: str
    role: str  # checked by matching a record, so a bad role reads "no record for ..."
    question_id: str
    correct: bool
    note: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.submission_id, self.role, self.question_id)


OVERRIDE_REQUIRED = [name for name, f in Override.model_fields.items() if f.is_required()]


def apply_overrides(records: Sequence[Record], path: str | Path) -> tuple[list[Record], int]:
    """Return (records with the overrides applied, number of overridden rows)."""
    appeals = StreamedOverrides(path)
    out = appeals.apply(records)
    appeals.check()
    return out, len(appeals.answered)


def _refuse_conflict(path: Path, key: tuple[str, str, str], where: str, correct: str,
                     first_rows: dict[tuple[str, str, str], tuple[str, bool]]) -> None:
    """Two rows overriding one record with different verdicts: which one the appeal decided is not for
    the tool to guess (it applied the last one silently), so both rows are named."""
    value = _parse_bool(correct, where, path)
    if key in first_rows and first_rows[key][1] != value:
        raise InputError(path, f"{first_rows[key][0]} and {where} override {'/'.join(key)} with different "
                               "verdicts (correct 0 and 1): keep one")
    first_rows.setdefault(key, (where, value))


def read_overrides(path: str | Path, index: dict[tuple[str, str, str], int]) -> list[Override]:
    """The overrides of ``path``, each naming a record of ``index`` (else an InputError); two rows for
    one record must agree."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "overrides file not found")
    first_rows: dict[tuple[str, str, str], tuple[str, bool]] = {}
    out = []
    for i, row in enumerate(read_csv_rows(path, OVERRIDE_REQUIRED)):
        where = f"row {i + 2}"
        key = (row["submission_id"].strip(), row["role"].strip().upper(), row["question_id"].strip())
        if key not in index:
            raise InputError(path, f"{where}: no record for {'/'.join(key)}")
        _refuse_conflict(path, key, where, row["correct"], first_rows)
        out.append(Override(submission_id=key[0], role=key[1], question_id=key[2],
                            correct=_parse_bool(row["correct"], where, path), note=row.get("note", "")))
    return out


class StreamedOverrides:
    """The overrides of ``path`` applied to a ledger read one submission at a time (``apply``).

    Their problems are raised by ``check``, once the whole ledger was read, in the order
    ``apply_overrides`` raises them: the file's, then the first row naming no record or with a bad
    ``correct``, then the first row making a TODO or missing answer correct."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.error: InputError | None = None
        self.rows: list[tuple[tuple[str, str, str], str]] = []  # (key, correct as written), in file order
        try:
            if not self.path.is_file():
                raise InputError(self.path, "overrides file not found")
            table = read_csv_rows(self.path, OVERRIDE_REQUIRED)
        except InputError as err:
            self.error = err
            table = []
        for row in table:
            key = (row["submission_id"].strip(), row["role"].strip().upper(), row["question_id"].strip())
            self.rows.append((key, row["correct"]))
        self.verdicts = {key: _as_bool(correct) for key, correct in self.rows}  # the last row of a key wins
        self.answered: dict[tuple[str, str, str], bool] = {}  # the keys found, and whether answered

    def apply(self, records: Sequence[Record]) -> list[Record]:
        out = []
        for rec in records:
            if rec.key in self.verdicts:
                self.answered[rec.key] = rec.is_answered
                correct = self.verdicts[rec.key]
                rec = rec if correct is None else rec.model_copy(update={"correct": correct})
            out.append(rec)
        return out

    def check(self) -> None:
        if self.error is not None:
            raise self.error
        first_rows: dict[tuple[str, str, str], tuple[str, bool]] = {}
        for i, (key, correct) in enumerate(self.rows):
            if key not in self.answered:
                raise InputError(self.path, f"row {i + 2}: no record for {'/'.join(key)}")
            _refuse_conflict(self.path, key, f"row {i + 2}", correct, first_rows)
        for i, (key, correct) in enumerate(self.rows):
            if _as_bool(correct) and not self.answered[key]:
                raise InputError(self.path, f"row {i + 2}: {'/'.join(key)} is TODO or missing and cannot be correct")


def _as_bool(value: str) -> bool | None:
    try:
        return _parse_bool(value, "", Path())
    except InputError:
        return None


# ------------------------------------------------------------------------- 2024 reference challenge CSV


def read_challenge_checklist_csv(path: str | Path, *, submission_id: str, role: Role, case: Case) -> list[Record]:
    """Read one per-paper CSV of the 2024 challenge's scorer (columns Question_Title, Answer,
    Justification, Review, Correctness_Score) as records.

    Those files carry no question id, so the question title is the id: it is the same string across
    the G/A/T files of a submission, which keeps G/A/T aligned by question rather than by row
    position. Only scores 0 and 1 are accepted (c_i is binary in the rules).
    """
    path = Path(path)
    out = []
    for i, row in enumerate(read_csv_rows(path, ["Question_Title", "Answer", "Correctness_Score"])):
        where = f"row {i + 2}"
        score = row["Correctness_Score"].strip()
        if score not in ("0", "1", "0.0", "1.0"):
            raise InputError(path, f"{where}: Correctness_Score must be 0 or 1, got {score!r}")
        out.append(
            Record(
                submission_id=submission_id,
                role=role,
                question_id=row["Question_Title"].strip(),
                question_title=row["Question_Title"].strip(),
                answer=_parse_answer(row["Answer"], where, path),
                correct=score.startswith("1"),
                case=case,
                justification=row.get("Justification", ""),
                review=row.get("Review", ""),
                source=str(path),
            )
        )
    return out
