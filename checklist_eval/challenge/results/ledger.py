"""Ledgers, ``records.csv`` and ``records.jsonl``: read one row at a time (``Ledger``: a lone ledger, or
the exports of a folder from before results.sqlite), written whole (``write_records``). What a row is,
and how a cell is parsed, is ``challenge.records``'s."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from checklist_eval.challenge.records import (
    REQUIRED,
    Record,
    group_by_submission,
    record_from_mapping,
    records_to_csv_text,
    records_to_jsonl_text,
)
from checklist_eval.errors import InputError
from checklist_eval.fsutil import atomic_write_text, loads_json
from checklist_eval.tables import csv_header_and_rows, ragged_row, restore, row_reader


def write_records(records: Sequence[Record], csv_path: str | Path, jsonl_path: str | Path | None = None) -> None:
    """Write the ledger as CSV (and JSONL when asked), each atomically."""
    atomic_write_text(csv_path, records_to_csv_text(records))
    if jsonl_path is not None:
        atomic_write_text(jsonl_path, records_to_jsonl_text(records))


def _jsonl_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) of a JSONL file, read as asked for."""
    try:
        with path.open(encoding="utf-8") as fh:
            yield from enumerate(fh, start=1)
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text") from None
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror or err}") from None


def json_objects(path: Path, *, max_lines: int) -> Iterator[tuple[int, dict]]:
    """(line number, object) of each non-blank line of a JSONL file, the first ``max_lines`` lines
    only (a hostile file is read this far); a line that is not a JSON object is refused by number."""
    for n, line in _jsonl_lines(path):
        if n > max_lines:
            return
        if line.strip():
            yield n, _json_object(path, n, line)


def _json_object(path: Path, n: int, line: str) -> dict:
    try:
        obj = loads_json(line)
    except json.JSONDecodeError as err:
        raise InputError(path, f"line {n}: not valid JSON ({err.msg})") from None
    except RecursionError:
        raise InputError(path, f"line {n}: JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise InputError(path, f"line {n}: expected a JSON object")
    return obj


def _parsed_line(path: Path, n: int, line: str) -> dict:
    obj = _json_object(path, n, line)
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
            if first is None and len(cells) < len(header):  # a row cut short: its missing cells are not empty ones
                first = InputError(self.path, f"row {n + 1} has {len(cells)} cells, the header names {len(header)}: "
                                              "cut short")
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
            rec = record_from_mapping(row, where, self.path)
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


def read_records(path: str | Path) -> list[Record]:
    """Read a records CSV or JSONL file (by extension), validating every row.

    Raises InputError naming the file and the row for anything unusable, including a duplicated
    (submission_id, role, question_id). ``Ledger`` reads one without holding it.
    """
    return list(Ledger(path).records())


class NoRecords(InputError):
    """A records file without a single row (a batch in which every submission failed writes one)."""

