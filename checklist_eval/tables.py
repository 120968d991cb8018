"""CSV files as rows of pydantic models: a file's columns are its row model's fields, in field order.

Every CSV the tool writes goes through ``csv_text`` and every CSV it reads through ``read_csv_rows``,
both on the standard ``csv`` module. Writing, each cell is neutralised against spreadsheet formulas
(see ``neutralise`` below); reading, every cell stays text ("NA" stays the answer NA, an empty cell stays "")
and neutralised cells read back as they were before.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from checklist_eval.errors import InputError
from checklist_eval.models import Model

# Formula neutralisation for every CSV cell we write (OWASP's rule against CSV injection).
# A text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is something a
# spreadsheet may run as a formula (``=cmd|' /C calc'!A0``); written, it gets a leading ``'``, which
# spreadsheets show as "text follows". Numbers are left alone (``-0.5`` is a number, not a formula),
# so numeric columns stay numeric.
#
# Reading our CSVs back must give the original text, so the rule is reversible: a cell that begins with
# ``'`` and then (after any further quotes) with one of those characters also gets the prefix on write,
# and ``restore`` takes exactly one ``'`` off such cells on read. A cell like ``'tis`` is not touched
# either way.
TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
PREFIX = "'"


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _needs_prefix(text: str) -> bool:
    rest = text.lstrip(PREFIX)
    quoted = len(rest) != len(text)
    return rest.startswith(TRIGGERS) and (quoted or not _is_number(text))


def neutralise(value: Any) -> Any:
    """A cell value safe for a spreadsheet; values that are not text are returned unchanged."""
    if isinstance(value, str) and value and _needs_prefix(value):
        return PREFIX + value
    return value


def restore(text: str) -> str:
    """The original text of a cell ``neutralise`` wrote."""
    if text.startswith(PREFIX) and _needs_prefix(text[1:]):
        return text[1:]
    return text


# A CSV cell as long as the file: a review or justification is long text, and the csv module's
# default cap (128 KiB) would refuse a file the tool wrote itself. Files are bounded by their size.
_FIELD_LIMIT = 2**31 - 1


class Row(Model):
    """One row of a CSV we write. ``csv_cells`` is the row as the file spells it; by default the
    model's JSON dump (an enum as its value, None as an empty cell, a bool as True/False)."""

    @classmethod
    def columns(cls) -> list[str]:
        return list(cls.model_fields)

    def csv_cells(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def csv_text(model: type[Row], rows: Iterable[Row]) -> str:
    """The CSV of ``rows``: a header of ``model``'s columns, then one line per row ("\\n" endings)."""
    return csv_header_text(model) + csv_rows_text(model, rows)


def csv_header_text(model: type[Row]) -> str:
    """The header line of ``model``'s CSV: a file that grows row by row starts with it."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(model.columns())
    return buf.getvalue()


def csv_rows_text(model: type[Row], rows: Iterable[Row]) -> str:
    """The lines of ``rows`` in ``model``'s CSV, without the header."""
    cols = model.columns()
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in rows:
        cells = row.csv_cells()
        writer.writerow([_cell(cells[c]) for c in cols])
    return buf.getvalue()


def _cell(value: Any) -> Any:
    return "" if value is None else neutralise(value)


def read_csv_rows(path: str | Path, required: Sequence[str]) -> list[dict[str, str]]:
    """The rows of a CSV file as dicts of strings, after checking it has the ``required`` columns.

    Anything unreadable (not found, not CSV, not UTF-8, a row longer than the header, a missing
    column) is an InputError naming the file. Empty lines are skipped; a short row's missing cells
    are empty; a column named twice keeps its first cell.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    try:
        header, body = _parse(path)
    except (csv.Error, UnicodeDecodeError, _Ragged) as err:
        raise _unreadable(path, err) from None
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(path, f"missing column(s) {', '.join(missing)}; need {', '.join(required)}")
    as_mapping = row_reader(header)
    return [as_mapping(cells) for cells in body]


def row_reader(header: Sequence[str]) -> Callable[[Sequence[str]], dict[str, str]]:
    """A data row's cells as ``{column: text}``: a short row's missing cells are empty, a column named
    twice keeps its first cell, and what ``neutralise`` prefixed is restored."""
    first = {name: i for i, name in reversed(list(enumerate(header)))}
    return lambda cells: {name: restore(cells[i]) if i < len(cells) else "" for name, i in first.items()}


def csv_header_and_rows(path: str | Path) -> tuple[list[str], Iterator[list[str]]]:
    """The header of a CSV file and an iterator over its data rows' cells, read as they are asked for
    (empty lines skipped): for files too large to hold. Problems of the file are InputErrors naming it,
    raised where they occur, with the messages of ``read_csv_rows``; a row longer than the header is
    left to the caller to refuse (``ragged_row``), so that it can first read on for worse problems."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    cells = _stream_cells(path)
    try:
        header = next(cells)
    except StopIteration:
        raise _unreadable(path, _Ragged("the file holds no header")) from None
    return header, cells


def ragged_row(path: str | Path, n: int, cells: Sequence[str], header: Sequence[str]) -> InputError | None:
    """The error for data row ``n`` (1-based) when it has more cells than the header names, else None."""
    if len(cells) <= len(header):
        return None
    return _unreadable(Path(path), _Ragged(f"data row {n} has {len(cells)} cells, the header names {len(header)}"))


def _unreadable(path: Path, err: Exception) -> InputError:
    return InputError(path, f"not a readable CSV file ({type(err).__name__}: {err})")


def _stream_cells(path: Path) -> Iterator[list[str]]:
    csv.field_size_limit(max(csv.field_size_limit(), _FIELD_LIMIT))
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            yield from (cells for cells in csv.reader(fh, strict=True) if cells)
    except (csv.Error, UnicodeDecodeError) as err:
        raise _unreadable(path, err) from None


class _Ragged(ValueError):
    """A row with more cells than the header names."""


def _parse(path: Path) -> tuple[list[str], list[list[str]]]:
    csv.field_size_limit(max(csv.field_size_limit(), _FIELD_LIMIT))
    with path.open(encoding="utf-8-sig", newline="") as fh:
        rows = [cells for cells in csv.reader(fh, strict=True) if cells]
    if not rows:
        raise _Ragged("the file holds no header")
    header = rows[0]
    for n, cells in enumerate(rows[1:], start=2):
        if len(cells) > len(header):
            raise _Ragged(f"data row {n - 1} has {len(cells)} cells, the header names {len(header)}")
    return header, rows[1:]
