"""NIST GenAI discriminator files: validate a system output and score it (its ROC/DET plots are drawn by
:mod:`checklist_eval.detection.plots`).

The formats are the pipe-separated files of NIST's 2024 GenAI text-to-text discriminator evaluation:

* index (system input): ``DatasetID|TaskID|FileID``, one trial per row;
* reference (ground truth): ``DatasetID|TaskID|TopicID|FileID|GeneratorID|IsTarget`` with IsTarget
  ``Y`` (AI-generated, a target) or ``N`` (human);
* system output: ``DatasetID|TaskID|DiscriminatorID|ModelVersion|FileID|ConfidenceScore`` with a score
  in [0, 1], higher meaning more likely AI-generated.

Files are read with the csv module, every cell as text (a FileID like ``NA`` stays a FileID). Cells
and header names are stripped of surrounding blanks; a trailing ``|`` closing the last column is
accepted on the header and on any row alike, since the plan's own examples are written ``a | b | c |``.
A column named twice is refused however it is spaced; a row with more or fewer cells than the header is
refused. TaskID is compared with the index without regard to case (the plan writes both "Detection"
and "detection"); DiscriminatorID and ModelVersion may not be empty, and a file carries one of each.
Rows are reported by their line number in the file (the header is line 1). A system output may also
be given as its submission package (``.tgz``, see :mod:`checklist_eval.detection.nist_package`).
"""

from __future__ import annotations

import csv
import io
import math
import re
from array import array
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checklist_eval.errors import InputError
from checklist_eval.summaries import OptionalParts

INDEX_COLUMNS = ("DatasetID", "TaskID", "FileID")
REF_COLUMNS = ("DatasetID", "TaskID", "TopicID", "FileID", "GeneratorID", "IsTarget")
SYSOUT_COLUMNS = ("DatasetID", "TaskID", "DiscriminatorID", "ModelVersion", "FileID", "ConfidenceScore")
_FILENAME_OK = re.compile(r"^[A-Za-z0-9_.-]+$")
_CUTOFF = re.compile(r"cutoff-\d+")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file; ``line`` is the 1-based line number (None: the file as a whole)."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.message}"


@dataclass
class Table:
    """A pipe-separated file read as text: rows of stripped cells keyed by column, with line numbers."""

    path: str
    columns: list[str]
    rows: list[dict[str, str]]
    lines: list[int]


@dataclass
class Validation:
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    omitted: int = 0  # problems found past the MAX_PROBLEMS kept

    @property
    def ok(self) -> bool:
        return not self.problems and not self.omitted

    @property
    def count(self) -> int:
        return len(self.problems) + self.omitted


# -------------------------------------------------------------------------------------------- reading
#
# Files are streamed: a row is checked as it is read and only what the checks and the scores need is
# kept (per index row, its FileID, line, (DatasetID, TaskID) pair code, score and target), so memory grows
# by tens of bytes a trial and never holds the file or its rows. A line is read with a length cap, and
# at most MAX_PROBLEMS problems are kept (the rest are counted).

MAX_LINE_CHARS = 1 << 20
MAX_PROBLEMS = 1000


def _open_text(path: str | Path) -> AbstractContextManager[io.TextIOBase]:
    """The file (or a package's one CSV member) as UTF-8 text, streamed; InputError when unreadable."""
    from checklist_eval.detection.nist_package import is_package, open_member

    if is_package(path):
        return open_member(path)
    return _plain(path)


@contextmanager
def _plain(path: str | Path) -> Iterator[io.TextIOBase]:
    with open(path, "rb") as fh, io.TextIOWrapper(fh, encoding="utf-8-sig", newline="") as text:
        yield text


def _capped_lines(text: io.TextIOBase, path: str) -> Iterator[str]:
    line_no = 0
    while True:
        line = text.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        line_no += 1
        if len(line) > MAX_LINE_CHARS:
            raise InputError(path, f"line {line_no} is longer than {MAX_LINE_CHARS:,} characters")
        yield line


class Scan:
    """One streamed pass over a pipe-separated file: ``columns`` once the header is read, ``problems``
    (at most MAX_PROBLEMS kept, ``omitted`` counts the rest), and the rows through ``rows()``."""

    def __init__(self, path: str | Path, required: tuple[str, ...]):
        self.path = str(path)
        self.required = required
        self.columns: list[str] | None = None
        self.problems: list[Problem] = []  # what the checks of the rows found
        self.broken: list[Problem] = []  # what makes the file unreadable as a table (then it alone counts)
        self.omitted = 0

    def problem(self, line: int | None, message: str) -> None:
        self._keep(self.problems, Problem(self.path, line, message))

    def unreadable(self, line: int | None, message: str) -> None:
        self._keep(self.broken, Problem(self.path, line, message))

    def _keep(self, into: list[Problem], prob: Problem) -> None:
        if len(self.problems) + len(self.broken) < MAX_PROBLEMS:
            into.append(prob)
        else:
            self.omitted += 1

    @property
    def readable(self) -> bool:
        """A header with the columns, and every row well formed (else the rows' checks are moot)."""
        return self.columns is not None and not self.broken

    def rows(self) -> Iterator[tuple[int, dict[str, str]]]:
        """(line number, cells by column) of every well-formed data row; problems are recorded."""
        if not Path(self.path).is_file():
            self.unreadable(None, "file not found")
            return
        try:
            with _open_text(self.path) as text:
                reader = csv.reader(_capped_lines(text, self.path), delimiter="|", quoting=csv.QUOTE_NONE)
                try:
                    yield from self._rows(reader)
                except csv.Error as err:
                    self.unreadable(reader.line_num or None, f"malformed row: {err}")
        except UnicodeDecodeError:
            self.unreadable(None, "not UTF-8 text")
        except InputError as err:
            self.unreadable(None, err.problem)
        except OSError as err:
            self.unreadable(None, f"cannot be read ({err.strerror or type(err).__name__})")

    def _rows(self, reader) -> Iterator[tuple[int, dict[str, str]]]:
        header = next(reader, None)
        while header is not None and not "".join(header).strip():
            header = next(reader, None)  # blank lines before the header
        if header is None:
            self.unreadable(None, "empty file")
            return
        columns = _cells(header)
        if columns and columns[-1] == "":
            columns.pop()  # "a | b | c |": the trailing pipe closes the last column
        header_problems = _header_problems(self.path, columns, self.required)
        if header_problems:
            for prob in header_problems:
                self.unreadable(prob.line, prob.message)
            return
        self.columns = columns
        for raw in reader:
            cells = _cells(raw)
            if not any(cells):
                continue  # a blank line
            if len(cells) == len(columns) + 1 and cells[-1] == "":
                cells.pop()  # a row may end in a trailing pipe whether or not the header does
            if len(cells) != len(columns):
                self.unreadable(reader.line_num, f"malformed row: {len(cells)} cells, the header has {len(columns)}")
                continue
            yield reader.line_num, dict(zip(columns, cells, strict=True))


def read_table(path: str | Path, required: tuple[str, ...]) -> tuple[Table | None, list[Problem]]:
    """A whole pipe-separated file in memory (every cell text, nothing inferred), or None with its
    problems: for small files and callers that want the rows; validation and scoring stream instead."""
    scan = Scan(path, required)
    rows, lines = [], []
    for line, row in scan.rows():
        rows.append(row)
        lines.append(line)
    if not scan.readable or scan.columns is None:
        return None, scan.broken
    return Table(scan.path, scan.columns, rows, lines), []


def _cells(row: list[str]) -> list[str]:
    return [c.strip() for c in row]


def _header_problems(path: str, columns: list[str], required: tuple[str, ...]) -> list[Problem]:
    missing = [c for c in required if c not in columns]
    dupes = sorted({c for c in columns if columns.count(c) > 1})
    out = []
    if "" in columns:
        out.append(Problem(path, 1, f"header has an empty column name (column {columns.index('') + 1})"))
    if missing:
        out.append(Problem(path, 1, f"header lacks column(s) {', '.join(missing)}; "
                                    f"expected {'|'.join(required)}"))  # fmt: skip
    if dupes:
        out.append(Problem(path, 1, f"header repeats column(s) {', '.join(dupes)}"))
    return out


# ----------------------------------------------------------------------------------------- validation


class Index:
    """The index, compactly: FileID -> row position, and per position its line and (DatasetID, TaskID)."""

    def __init__(self, path: str):
        self.path = path
        self.position: dict[str, int] = {}
        self.lines = array("q")
        self.pair = array("i")
        self.pairs: dict[tuple[str, str], int] = {}
        self.pair_names: list[tuple[str, str]] = []

    def add(self, fid: str, line: int, dataset: str, task: str) -> None:
        key = (dataset, task.casefold())
        code = self.pairs.get(key)
        if code is None:
            code = self.pairs[key] = len(self.pair_names)
            self.pair_names.append((dataset, task))
        self.position[fid] = len(self.lines)
        self.lines.append(line)
        self.pair.append(code)

    def __len__(self) -> int:
        return len(self.lines)


def _read_index(index_path: str | Path, v: Validation) -> Index | None:
    scan = Scan(index_path, INDEX_COLUMNS)
    index = Index(scan.path)
    for line, row in scan.rows():
        fid = row["FileID"]
        if not fid:
            scan.problem(line, "empty FileID in the index")
        elif fid in index.position:
            scan.problem(line, f"FileID {fid} repeats line {index.lines[index.position[fid]]} of the index")
        else:
            index.add(fid, line, row["DatasetID"], row["TaskID"])
    _merge(v, scan)
    return index if scan.readable else None


def _merge(v: Validation, scan: Scan) -> None:
    """The scan's problems into ``v``: what makes it unreadable alone, when there is such a thing."""
    for prob in scan.broken or scan.problems:
        _add(v, prob)
    v.omitted += scan.omitted


def _add(v: Validation, prob: Problem) -> None:
    if len(v.problems) < MAX_PROBLEMS:
        v.problems.append(prob)
    else:
        v.omitted += 1


def _score_problem(text: str) -> str | None:
    if not text:
        return "empty ConfidenceScore"
    try:
        value = float(text)
    except ValueError:
        return f"ConfidenceScore {text!r} is not a number"
    if not math.isfinite(value):
        return f"ConfidenceScore {text!r} is not finite"
    if not 0.0 <= value <= 1.0:
        return f"ConfidenceScore {text} is outside [0, 1]"
    return None


def _filename_checks(path: Path, v: Validation) -> None:
    """The plan's naming rules (section 5.1): a .csv, only letters, digits and _ - ., the cutoff stated."""
    for message in filename_problems(path.name):
        v.problems.append(Problem(str(path), None, message))


def filename_problems(name: str) -> list[str]:
    """What breaks section 5.1's naming of a system output file (also checked on a package's CSV, which
    NIST reads by that name after unpacking)."""
    out = []
    if not name.lower().endswith(".csv"):
        out.append(f"file name {name!r} must end in .csv (the plan's system output is a CSV file)")
    if not _FILENAME_OK.match(name):
        out.append(f"file name {name!r} may only use letters, digits and _ - . (no spaces or special characters)")
    if not _CUTOFF.search(name):
        out.append(f"file name {name!r} must state the decision threshold, e.g. 'cutoff-50' for 0.5 (plan 5.1)")
    return out


def _output_name(sysout_path: str | Path) -> Path:
    """The system output's file name: the CSV inside a package, else the file itself."""
    from checklist_eval.detection.nist_package import is_package, member_name

    if is_package(sysout_path) and Path(sysout_path).is_file():
        try:
            return Path(sysout_path) / member_name(sysout_path)
        except InputError:
            pass  # reported when the table is read
    return Path(sysout_path)


def check_sysout_alone(sysout_path: str | Path) -> Validation:
    """The checks a system output passes without its index: name, header, rows (for ``package``)."""
    v = Validation()
    _filename_checks(_output_name(sysout_path), v)
    scan = Scan(sysout_path, SYSOUT_COLUMNS)
    for _ in scan.rows():
        pass
    _merge(v, scan)
    return v


def validate_sysout(index_path: str | Path, sysout_path: str | Path) -> Validation:
    """Every check of NIST's validator on a system output against its index."""
    return _read_and_validate(index_path, sysout_path)[0]


@dataclass
class Trials:
    """The system output's scores on the index's trials, in the order of the system output."""

    index: Index
    order: array  # index positions, in system-output order
    scores: array  # float per index position
    system: dict[str, str] = field(default_factory=dict)


def _read_and_validate(index_path: str | Path, sysout_path: str | Path) -> tuple[Validation, Trials | None]:
    """(validation, the trials read): each file streamed once, for the checks and the scoring after."""
    v = Validation()
    _filename_checks(_output_name(sysout_path), v)
    index = _read_index(index_path, v)
    scan = Scan(sysout_path, SYSOUT_COLUMNS)
    if index is None:
        for _ in scan.rows():  # still report the system output's own problems
            pass
        _merge(v, scan)
        return v, None
    check = _SysoutCheck(index, scan)
    for line, row in scan.rows():
        check.row(line, row)
    _merge(v, scan)
    if not scan.readable:
        return v, None
    check.finish(v)
    return v, Trials(index, check.order, check.scores, check.system())


class _SysoutCheck:
    """The checks of one system output's rows against the index, streamed."""

    def __init__(self, index: Index, scan: Scan):
        self.index, self.scan = index, scan
        self.seen = array("q", bytes(8 * len(index)))  # line of the row scoring each index position (0: none)
        self.scores = array("d", bytes(8 * len(index)))
        self.order = array("q")
        self.values: dict[str, dict[str, int]] = {"DiscriminatorID": {}, "ModelVersion": {}}
        self.rows = 0

    def row(self, line: int, row: dict[str, str]) -> None:
        self.rows += 1
        problem = _score_problem(row["ConfidenceScore"])
        if problem:
            self.scan.problem(line, problem)
        for col, first in self.values.items():
            if not row[col]:
                self.scan.problem(line, f"empty {col}")
            elif row[col] not in first and len(first) < 4:  # a few kept: enough to name the clash
                first[row[col]] = line
        fid = row["FileID"]
        if not fid:
            self.scan.problem(line, "empty FileID")
            return
        k = self.index.position.get(fid)
        if k is None:
            self.scan.problem(line, f"FileID {fid} is not in the index")
            return
        if self.seen[k]:
            self.scan.problem(line, f"FileID {fid} repeats line {self.seen[k]}")
            return
        self.seen[k] = line
        self.order.append(k)
        self.scores[k] = float(row["ConfidenceScore"]) if problem is None else math.nan
        dataset, task = self.index.pair_names[self.index.pair[k]]
        if row["DatasetID"] != dataset:
            self.scan.problem(line, f"DatasetID {row['DatasetID']!r} differs from the index's {dataset!r} for {fid}")
        if row["TaskID"].casefold() != task.casefold():
            self.scan.problem(line, f"TaskID {row['TaskID']!r} differs from the index's {task!r} for {fid}")

    def finish(self, v: Validation) -> None:
        for col, first in self.values.items():
            if len(first) > 1:  # one file is one system (plan 5.1)
                shown = ", ".join(f"{value!r} (line {line})" for value, line in list(first.items())[:3])
                more = ", ..." if len(first) > 3 else ""
                _add(v, Problem(self.scan.path, None, f"{len(first)}{'+' if len(first) > 3 else ''} different "
                                                      f"{col} values ({shown}{more}): one file carries one system"))
        for fid, k in self.index.position.items():
            if not self.seen[k]:
                _add(v, Problem(self.scan.path, None, f"FileID {fid} of the index (line {self.index.lines[k]}) "
                                                      "has no score"))  # fmt: skip
        if not self.rows:
            _add(v, Problem(self.scan.path, None, "no rows"))

    def system(self) -> dict[str, str]:
        return {col: next(iter(first), "") for col, first in self.values.items()}


def _reference_targets(ref_path: str | Path, index: Index, v: Validation) -> bytearray:
    """Per index position: 2 a target (Y), 1 a non-target (N), 0 no reference."""
    scan = Scan(ref_path, REF_COLUMNS)
    targets = bytearray(len(index))
    for line, row in scan.rows():
        flag = row["IsTarget"].upper()
        if flag not in ("Y", "N"):
            scan.problem(line, f"IsTarget must be Y or N, got {row['IsTarget']!r}")
            continue
        k = index.position.get(row["FileID"])
        if k is None:
            continue  # a reference row for a trial this index does not hold
        if targets[k]:
            scan.problem(line, f"FileID {row['FileID']} repeats in the reference")
            continue
        targets[k] = 2 if flag == "Y" else 1
    _merge(v, scan)
    if scan.readable:
        for fid, k in index.position.items():
            if not targets[k]:
                _add(v, Problem(scan.path, None, f"FileID {fid} of the index has no reference"))
    return targets


# ------------------------------------------------------------------------------------------- scoring


@dataclass
class ScoreResult:
    system: dict[str, str]
    metrics: dict[str, float | int]
    y: object  # numpy arrays, kept for plots
    score: object
    far_stop: float
    warnings: list[Problem] = field(default_factory=list)


def _fmt(value: float | int) -> str:
    if isinstance(value, int):
        return str(value)
    return "nan" if math.isnan(value) else f"{value:.6f}"


class DetectionReport(OptionalParts):
    """``detection score --json`` and its scores.json: the system's ids, the metrics (a NaN figure is
    null: strict JSON) and, when asked, the prevalence sweep."""

    system: dict[str, Any]
    far_stop: float
    metrics: dict[str, Any]
    prevalence_sweep: Any = None


def score_files(
    ref_path: str | Path,
    index_path: str | Path,
    sysout_path: str | Path,
    *,
    far_stop: float = 0.1,
    n_bootstrap: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> ScoreResult:
    """Validate, then score a system output on the index's trials. Invalid input raises InputError
    carrying the first problem and the count of the others."""
    import numpy as np

    from checklist_eval.detection import metrics

    if not 0.0 < far_stop <= 1.0:
        raise InputError(None, f"--far-stop must be in (0, 1], got {far_stop}")
    v, trials = _read_and_validate(index_path, sysout_path)
    targets = _reference_targets(ref_path, trials.index, v) if trials is not None else bytearray()
    if not v.ok:
        more = f" (and {v.count - 1} more problem(s))" if v.count > 1 else ""
        first = v.problems[0]
        raise InputError(first.path, f"{'line ' + str(first.line) + ': ' if first.line else ''}"
                                     f"{first.message}{more}")  # fmt: skip
    assert trials is not None  # an unreadable system output is a validation problem, raised above
    order = np.frombuffer(trials.order, dtype=np.int64)
    y = np.frombuffer(targets, dtype=np.uint8)[order] == 2
    s = np.frombuffer(trials.scores, dtype=np.float64)[order]
    m = metrics.summarize(y, s, far_stop=far_stop)
    m.update(_auc_ci(y, s, n_bootstrap, level, seed))
    return ScoreResult(trials.system, m, y, s, far_stop, v.warnings)


def _auc_ci(y, s, n_bootstrap: int, level: float, seed: int) -> dict[str, float]:
    from checklist_eval.detection import metrics

    pct = int(round(level * 100))
    if n_bootstrap <= 0 or y.all() or not y.any():
        return {}
    ci = metrics.bootstrap_auc(y, s, n_bootstrap, level, seed)
    return {f"auc_ci{pct}_low": ci.low, f"auc_ci{pct}_high": ci.high}


def metric_label(key: str, far_stop: float) -> str:
    """Report names, NIST-style, for the keys of :func:`checklist_eval.detection.metrics.summarize`."""
    f = f"{far_stop:g}"
    names = {
        "n": "NumTrials", "n_target": "NumTarget", "n_nontarget": "NumNonTarget", "auc": "AUC",
        "pauc": f"pAUC@FPR={f}", "pauc_mcclish": f"pAUC_McClish@FPR={f}",
        "tpr_at_fpr": f"TPR@FPR={f}", "eer": "EER", "eer_interp": "EER_interpolated",
        "eer_nearest": "EER_nearest_point",
        "brier": "Brier", "cross_entropy": "CrossEntropy",
    }  # fmt: skip
    if key in names:
        return names[key]
    m = re.match(r"auc_ci(\d+)_(low|high)$", key)
    if m:
        return f"AUC_CI{m.group(1)}_{m.group(2)}"
    m = re.match(r"cross_entropy_ci(\d+)(?:_(low|high))?$", key)
    if m:  # the half-width under TrojAI's name (CrossEntropy95CI), the bounds like AUC's
        return f"CrossEntropy_CI{m.group(1)}_{m.group(2)}" if m.group(2) else f"CrossEntropy{m.group(1)}CI"
    return key


def report_table(result: ScoreResult) -> str:
    """The pipe-separated report: one ``Metric|Value`` row per figure."""
    lines = ["Metric|Value"]
    for key, value in result.system.items():
        lines.append(f"{key}|{value}")
    for key, figure in result.metrics.items():
        lines.append(f"{metric_label(key, result.far_stop)}|{_fmt(figure)}")
    return "\n".join(lines) + "\n"
