"""NIST GenAI discriminator files: validate a system output, score it, draw ROC/DET plots.

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

    @property
    def ok(self) -> bool:
        return not self.problems


# -------------------------------------------------------------------------------------------- reading


def read_table(path: str | Path, required: tuple[str, ...]) -> tuple[Table | None, list[Problem]]:
    """Read a pipe-separated file with the csv module (every cell is text, nothing is inferred);
    problems instead of exceptions for anything malformed. A ``.tgz`` submission package is read
    through its one CSV member."""
    p = str(path)
    data, problems = _file_bytes(path)
    if data is None:
        return None, problems
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, [Problem(p, None, "not UTF-8 text")]
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="|", quoting=csv.QUOTE_NONE)
    try:
        header = next(reader, None)
        while header is not None and not "".join(header).strip():
            header = next(reader, None)  # blank lines before the header
        if header is None:
            return None, [Problem(p, None, "empty file")]
        columns = _cells(header)
        if columns and columns[-1] == "":
            columns.pop()  # "a | b | c |": the trailing pipe closes the last column
        problems = _header_problems(p, columns, required)
        if problems:
            return None, problems
        rows, lines, malformed = _data_rows(reader, p, columns)
    except csv.Error as err:
        return None, [Problem(p, reader.line_num or None, f"malformed row: {err}")]
    if malformed:
        return None, malformed
    return Table(p, columns, rows, lines), []


def _file_bytes(path: str | Path) -> tuple[bytes | None, list[Problem]]:
    from checklist_eval.detection.nist_package import is_package, read_package

    p = str(path)
    if not Path(path).is_file():
        return None, [Problem(p, None, "file not found")]
    if is_package(path):
        try:
            return read_package(path)[1], []
        except InputError as err:
            return None, [Problem(p, None, err.problem)]
    return Path(path).read_bytes(), []


def _cells(row: list[str]) -> list[str]:
    return [c.strip() for c in row]


def _data_rows(reader, path: str, columns: list[str]):
    """Rows keyed by column with their line numbers; a row may end in a trailing pipe whether or not
    the header does. Rows whose cell count differs from the header's are problems."""
    rows, lines, malformed = [], [], []
    for raw in reader:
        cells = _cells(raw)
        if not any(cells):
            continue  # a blank line
        if len(cells) == len(columns) + 1 and cells[-1] == "":
            cells.pop()
        if len(cells) != len(columns):
            malformed.append(Problem(path, reader.line_num, f"malformed row: {len(cells)} cells, the header "
                                                             f"has {len(columns)}"))  # fmt: skip
            continue
        rows.append(dict(zip(columns, cells, strict=True)))
        lines.append(reader.line_num)
    return rows, lines, malformed


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


def _index_ids(index: Table, v: Validation) -> dict[str, int]:
    """FileID -> row position in the index, reporting empty and repeated FileIDs of the index."""
    ids: dict[str, int] = {}
    for k, (row, line) in enumerate(zip(index.rows, index.lines, strict=True)):
        fid = row["FileID"]
        if not fid:
            v.problems.append(Problem(index.path, line, "empty FileID in the index"))
        elif fid in ids:
            first = index.lines[ids[fid]]
            v.problems.append(Problem(index.path, line, f"FileID {fid} repeats line {first} of the index"))
        else:
            ids[fid] = k
    return ids


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
    from checklist_eval.detection.nist_package import is_package, read_package

    if is_package(sysout_path) and Path(sysout_path).is_file():
        try:
            return Path(sysout_path) / read_package(sysout_path)[0]
        except InputError:
            pass  # reported when the table is read
    return Path(sysout_path)


def validate_sysout(index_path: str | Path, sysout_path: str | Path) -> Validation:
    """Every check of NIST's validator on a system output against its index."""
    return _read_and_validate(index_path, sysout_path)[0]


def _read_and_validate(index_path: str | Path, sysout_path: str | Path,
                       ) -> tuple[Validation, Table | None, Table | None, dict[str, int]]:
    """(validation, index table, system-output table, index FileID -> row): the tables are read once,
    for the checks and for the scoring that follows them."""
    v = Validation()
    _filename_checks(_output_name(sysout_path), v)
    index, probs = read_table(index_path, INDEX_COLUMNS)
    v.problems += probs
    sysout, probs = read_table(sysout_path, SYSOUT_COLUMNS)
    v.problems += probs
    if index is None or sysout is None:
        return v, index, sysout, {}
    ids = _index_ids(index, v)
    seen: dict[str, int] = {}
    for row, line in zip(sysout.rows, sysout.lines, strict=True):
        _check_sysout_row(row, line, sysout.path, ids, index, seen, v)
    _one_system_problems(sysout, v)
    for fid, k in ids.items():
        if fid not in seen:
            v.problems.append(Problem(sysout.path, None, f"FileID {fid} of the index (line "
                                                          f"{index.lines[k]}) has no score"))  # fmt: skip
    if not sysout.rows:
        v.problems.append(Problem(sysout.path, None, "no rows"))
    return v, index, sysout, ids


def _one_system_problems(sysout: Table, v: Validation) -> None:
    """One file is one system: a single DiscriminatorID and a single ModelVersion (plan 5.1)."""
    for col in ("DiscriminatorID", "ModelVersion"):
        first: dict[str, int] = {}
        for row, line in zip(sysout.rows, sysout.lines, strict=True):
            if row[col] and row[col] not in first:
                first[row[col]] = line
        if len(first) > 1:
            shown = ", ".join(f"{value!r} (line {line})" for value, line in list(first.items())[:3])
            v.problems.append(Problem(sysout.path, None, f"{len(first)} different {col} values ({shown}"
                                                          f"{', ...' if len(first) > 3 else ''}): one file "
                                                          "carries one system"))  # fmt: skip


def _check_sysout_row(row, line, path, ids, index, seen, v: Validation) -> None:
    fid = row["FileID"]
    problem = _score_problem(row["ConfidenceScore"])
    if problem:
        v.problems.append(Problem(path, line, problem))
    for col in ("DiscriminatorID", "ModelVersion"):
        if not row[col]:
            v.problems.append(Problem(path, line, f"empty {col}"))
    if not fid:
        v.problems.append(Problem(path, line, "empty FileID"))
        return
    if fid in seen:
        v.problems.append(Problem(path, line, f"FileID {fid} repeats line {seen[fid]}"))
        return
    seen[fid] = line
    if fid not in ids:
        v.problems.append(Problem(path, line, f"FileID {fid} is not in the index"))
        return
    expected = index.rows[ids[fid]]
    for col in ("DatasetID", "TaskID"):
        same = row[col].casefold() == expected[col].casefold() if col == "TaskID" else row[col] == expected[col]
        if not same:
            v.problems.append(Problem(path, line, f"{col} {row[col]!r} differs from the index's "
                                                  f"{expected[col]!r} for {fid}"))  # fmt: skip


def _reference_targets(ref_path: str | Path, ids: dict[str, int], v: Validation) -> dict[str, bool]:
    ref, probs = read_table(ref_path, REF_COLUMNS)
    v.problems += probs
    if ref is None:
        return {}
    targets: dict[str, bool] = {}
    for row, line in zip(ref.rows, ref.lines, strict=True):
        flag = row["IsTarget"].upper()
        if flag not in ("Y", "N"):
            v.problems.append(Problem(ref.path, line, f"IsTarget must be Y or N, got {row['IsTarget']!r}"))
            continue
        if row["FileID"] in targets:
            v.problems.append(Problem(ref.path, line, f"FileID {row['FileID']} repeats in the reference"))
            continue
        targets[row["FileID"]] = flag == "Y"
    for fid in ids:
        if fid not in targets:
            v.problems.append(Problem(ref.path, None, f"FileID {fid} of the index has no reference"))
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
    v, _, sysout, ids = _read_and_validate(index_path, sysout_path)
    targets = _reference_targets(ref_path, ids, v)
    if not v.ok:
        more = f" (and {len(v.problems) - 1} more problem(s))" if len(v.problems) > 1 else ""
        first = v.problems[0]
        raise InputError(first.path, f"{'line ' + str(first.line) + ': ' if first.line else ''}"
                                     f"{first.message}{more}")  # fmt: skip
    assert sysout is not None  # an unreadable system output is a validation problem, raised above
    rows = [r for r in sysout.rows if r["FileID"] in ids]
    y = np.array([targets[r["FileID"]] for r in rows])
    s = np.array([float(r["ConfidenceScore"]) for r in rows])
    m = metrics.summarize(y, s, far_stop=far_stop)
    m.update(_auc_ci(y, s, n_bootstrap, level, seed))
    system = {col: rows[0][col] for col in ("DiscriminatorID", "ModelVersion")}  # one system: validated
    return ScoreResult(system, m, y, s, far_stop, v.warnings)


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


# --------------------------------------------------------------------------------------------- plots


def require_plotting() -> None:
    """Fail on a missing matplotlib before a command does any work or writes any file."""
    _pyplot()


def _pyplot():
    try:
        import matplotlib
    except ModuleNotFoundError:
        raise InputError(None, "plots need matplotlib: pip install 'checklist-eval[plot]'") from None
    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    return plt


def plot_roc(curves: dict[str, tuple], path: str | Path, *, far_stop: float = 0.1, title: str = "ROC") -> Path:
    """ROC curves, one per label: ``curves[label] = (y, score)``. Shades the pAUC of the first curve
    up to ``far_stop`` and marks its TPR there."""
    import numpy as np

    from checklist_eval.detection import metrics

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5), dpi=120)
    ax.plot([0, 1], [0, 1], ls=":", color="grey", lw=1, label="chance")
    for k, (label, (y, s)) in enumerate(curves.items()):
        roc = metrics.roc_points(y, s)
        a = metrics.auc(y, s)
        line = ax.plot(roc.fpr, roc.tpr, lw=1.8, label=f"{label} (AUC {a:.3f})")[0]
        if k == 0:
            keep = roc.fpr <= far_stop
            xs = np.r_[roc.fpr[keep], far_stop]
            tpr_stop = metrics.tpr_on_roc(roc, far_stop, "max")
            ys = np.r_[roc.tpr[keep], np.interp(far_stop, roc.fpr, roc.tpr)]
            ax.fill_between(xs, 0, ys, color=line.get_color(), alpha=0.2, label=f"pAUC to FPR {far_stop:g}")
            ax.plot([far_stop], [tpr_stop], "o", color=line.get_color())
    ax.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="False positive rate", ylabel="True positive rate", title=title)
    ax.legend(loc="lower right", fontsize=8)
    return _save(fig, plt, path)


_DET_TICKS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 0.98, 0.99)


def plot_det(curves: dict[str, tuple], path: str | Path, *, title: str = "DET") -> Path:
    """DET curves on normal-deviate axes; rates of exactly 0 or 1 (infinite deviates) are left out."""
    import numpy as np

    from checklist_eval.detection import metrics

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5), dpi=120)
    for label, (y, s) in curves.items():
        det = metrics.det_points(y, s)
        x, yy = det.x, det.y
        ok = np.isfinite(x) & np.isfinite(yy)
        e = metrics.eer(y, s)
        line = ax.plot(x[ok], yy[ok], lw=1.8, label=f"{label} (EER {e:.3f})")[0]
        if 0 < e < 1:
            ax.plot([metrics.probit(e)], [metrics.probit(e)], "o", color=line.get_color())
    ticks = metrics.probit(np.array(_DET_TICKS))
    labels = [f"{100 * t:g}" for t in _DET_TICKS]
    lim = (ticks[0], ticks[-1])
    ax.plot(lim, lim, ls=":", color="grey", lw=1)
    ax.set_xticks(ticks, labels, fontsize=7)
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.set(xlim=lim, ylim=lim, xlabel="False positive rate (%)", ylabel="False negative rate (%)", title=title)
    ax.legend(loc="upper right", fontsize=8)
    return _save(fig, plt, path)


def _save(fig, plt, path: str | Path) -> Path:
    import io

    from checklist_eval.fsutil import atomic_write_bytes

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue())
