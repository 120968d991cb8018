"""The assessor as a detector of untruthful checklist answers (``checklist-eval assessor-eval``).

Every assessed answer is a trial. Its **score** is ``1 - p_correct``: the assessor's probability that
the answer is wrong, so that higher means "more likely a target" as in :mod:`checklist_eval.detection.metrics`.
Which answers are **targets** (untruthful) comes from one of two sources:

* **A against T** (records of G/A/T submissions, no ground-truth files): the trials are the answers of
  the adversarial paper A on the questions the truth paper T answers for real (Yes/No/NA); an answer
  is a target when A's answer differs from T's (g_i = 0 in the challenge rules).
* **Ground-truth files** (``--ground-truth``): per-question expected scores as in the 2024 challenge's
  YAML (``1: 0``, ``2: 0.5``, ... with 0 = wrong, 0.5 = partly right, 1 = right) or a JSON object of
  the same. An answer is a target when its ground truth is **below the threshold**; the default
  threshold 1 makes both 0 and 0.5 targets, ``--threshold 0.5`` keeps only the 0s. Questions absent
  from a file are not evaluated, as in the challenge.

The 2024 challenge's own outputs (``<results>/<paper>/paper_checklist.csv`` with a 0/0.5/1 ``Score``
per question, rows in checklist order) are read as trials too, with ``Score`` as p_correct and the
ground truth found in ``--ground-truth DIR`` (``DIR/<paper>/*.yaml``, ``DIR/<paper>.yaml``) or else in
the ``ground_truth.json`` beside each CSV.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checklist_eval.errors import InputError
from checklist_eval.fsutil import loads_json
from checklist_eval.models import Role
from checklist_eval.summaries import OptionalParts
from checklist_eval.tables import Row, csv_text

if TYPE_CHECKING:
    import pandas as pd

GT_VALUES = (0.0, 0.5, 1.0)


class Trial(Row):
    """One assessed answer as a detection trial: a line of ``assessor-eval --out``'s trials.csv."""

    system: str
    paper: str
    role: Role
    question_id: str
    answer: str  # as written ("" when missing)
    p_correct: float
    score: float  # 1 - p_correct: higher means more likely a target
    truth: float  # g_i (A against T) or the ground truth's 0 / 0.5 / 1
    target: bool


@dataclass
class Trials:
    """The trials of one system (one assessor run) with notes on what was skipped and why."""

    system: str
    rows: list[Trial]
    notes: list[str] = field(default_factory=list)

    @property
    def frame(self) -> pd.DataFrame:
        """The trials as a table, for the metrics."""
        import pandas as pd

        return pd.DataFrame([t.model_dump() for t in self.rows], columns=Trial.columns())

    def renamed(self, system: str) -> None:
        self.system = system
        self.rows = [t.model_copy(update={"system": system}) for t in self.rows]


def trials_csv_text(systems: list[Trials]) -> str:
    return csv_text(Trial, [t for s in systems for t in s.rows])


class EvaluationReport(OptionalParts):
    """One system's figures: an ``assessor-eval --json`` document (a list of them for several systems)
    and an entry of ``--out``'s summary.json. The figures are the metrics' own dicts; a NaN figure (no
    target, say) is null, so the document is strict JSON."""

    system: str
    far_stop: float
    overall: dict[str, Any]
    notes: list[str]
    by_question: dict[str, dict[str, Any]] | None = None  # with --by-question
    ci_levels: list[int] | None = None
    prevalence_sweep: Any = None  # with --prevalence-sweep


# ------------------------------------------------------------------------------------- ground truth

_YAML_LINE = re.compile(r"^\s*['\"]?([A-Za-z0-9_.-]+)['\"]?\s*:\s*(\S+)\s*$")


def read_ground_truth(path: str | Path) -> dict[str, float]:
    """One paper's expected scores per question id, from the challenge's YAML or a JSON object.

    The YAML is the flat ``question: score`` mapping the challenge distributes (comments allowed);
    anything else in it is reported with its line number rather than guessed at.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(path, f"cannot read ground truth ({type(err).__name__})") from None
    if path.suffix.lower() == ".json":
        try:
            raw = loads_json(text)
        except json.JSONDecodeError as err:
            raise InputError(path, f"not valid JSON ({err.msg})") from None
        if not isinstance(raw, dict):
            raise InputError(path, "ground truth must be a JSON object of question: score")
        items: list[tuple[str, Any, int | None]] = [(str(k), v, None) for k, v in raw.items()]
    else:
        items = []
        for n, line in enumerate(text.splitlines(), start=1):
            body = line.split("#", 1)[0]
            if not body.strip():
                continue
            m = _YAML_LINE.match(body)
            if not m:
                raise InputError(path, f"line {n}: expected 'question: score', got {line.strip()!r}")
            items.append((m.group(1), m.group(2), n))
    return {q: _gt_value(v, path, n, q) for q, v, n in items}


def _gt_value(value: object, path: Path, line: int | None, qid: str) -> float:
    where = f"line {line}: " if line else ""
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(path, f"{where}question {qid}: score must be 0, 0.5 or 1, got {value!r}") from None
    if x not in GT_VALUES:
        raise InputError(path, f"{where}question {qid}: score must be 0, 0.5 or 1, got {value!r}")
    return x


def _gt_files(paths: list[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.suffix.lower() in (".yaml", ".yml", ".json") and f.is_file())
        elif p.is_file():
            out.append(p)
        else:
            raise InputError(p, "ground truth not found")
    return out


def ground_truth_index(paths: list[str | Path]) -> dict[str, Path]:
    """Ground-truth files by the names a paper can be matched with: the file's stem, and the name of
    its folder when the folder holds only that one file (the challenge's ``papers/<paper>/<x>.yaml``)."""
    files = _gt_files(paths)
    index: dict[str, Path] = {}
    by_dir: dict[Path, list[Path]] = {}
    for f in files:
        index.setdefault(f.stem, f)
        by_dir.setdefault(f.parent, []).append(f)
    for folder, members in by_dir.items():
        if len(members) == 1:
            index.setdefault(folder.name, members[0])
    return index


def binarize(truth: float, threshold: float = 1.0) -> bool:
    """Target when the expected score is below the threshold (default 1: 0 and 0.5 are targets)."""
    return truth < threshold


# ------------------------------------------------------------------------------------ loading trials


def load_record_trials(
    path: str | Path, ground_truth: list[str | Path] | None = None, threshold: float = 1.0
) -> Trials:
    """Trials from an assessment-records file (or a batch results folder holding ``records.csv``)."""
    from checklist_eval.challenge.results.folder import ResultsFolder
    from checklist_eval.challenge.results.layout import records_path
    from checklist_eval.challenge.results.ledger import read_records

    src = records_path(path)
    if Path(path).is_dir():  # a results folder: read through its checks, the verdicts as the assessor gave them
        records = [r for group in ResultsFolder.open(path).assessed() for r in group]
    else:
        records = read_records(src)
    system = _system_name(records, src)
    if ground_truth:
        return _records_vs_ground_truth(records, system, ground_truth, threshold)
    return _records_a_vs_t(records, system)


def _system_name(records, src: Path) -> str:
    names = sorted({f"{r.assessor}:{r.model}".strip(":") for r in records if r.assessor or r.model})
    return names[0] if len(names) == 1 else src.parent.name if src.name.startswith("records") else src.stem


def _p_of(rec) -> tuple[float, bool]:
    """p_correct, or the 0/1 verdict when the record has no probability (flagged as such)."""
    if rec.p_correct is not None:
        return float(rec.p_correct), False
    return float(rec.c), True


def _trial(system, rec, p, truth, target) -> Trial:
    return Trial(
        system=system, paper=rec.submission_id, role=rec.role, question_id=rec.question_id,
        answer=rec.answer.value if rec.answer is not None else "", p_correct=p, score=1.0 - p,
        truth=truth, target=bool(target),
    )  # fmt: skip


def _records_a_vs_t(records, system: str) -> Trials:
    t_by_key = {(r.submission_id, r.question_id): r for r in records if r.role == "T"}
    rows, no_t, no_p = [], 0, 0
    for a in (r for r in records if r.role == "A"):
        t = t_by_key.get((a.submission_id, a.question_id))
        if t is None or t.answer is None or not t.answer.is_answered:
            no_t += 1  # not counted by the rules either
            continue
        p, missing = _p_of(a)
        no_p += missing
        g = int(a.answer is not None and a.answer == t.answer)
        rows.append(_trial(system, a, p, float(g), g == 0))
    notes = []
    if not rows:
        raise InputError(None, "no A answers with a real T answer to compare: the records need GAT "
                               "submissions, or pass --ground-truth")  # fmt: skip
    if no_t:
        notes.append(f"{no_t} A answer(s) skipped: T has no real answer for that question")
    if no_p:
        notes.append(f"{no_p} answer(s) have no p_correct: their 0/1 verdict is used instead")
    return Trials(system, rows, notes)


def _records_vs_ground_truth(records, system, ground_truth, threshold) -> Trials:
    index = ground_truth_index(ground_truth)
    cache: dict[Path, dict[str, float]] = {}
    rows, unmatched, no_q, no_p = [], set(), 0, 0
    for rec in records:
        f = _match_gt(rec, index)
        if f is None:
            unmatched.add(f"{rec.submission_id}/{rec.role}")
            continue
        if f not in cache:
            cache[f] = read_ground_truth(f)
        gt = cache[f]
        if rec.question_id not in gt:
            no_q += 1
            continue
        p, missing = _p_of(rec)
        no_p += missing
        truth = gt[rec.question_id]
        rows.append(_trial(system, rec, p, truth, binarize(truth, threshold)))
    if not rows:
        raise InputError(None, "no record matched a ground-truth file (matched by the paper file's "
                               "name, or <submission_id>_<role>)")  # fmt: skip
    notes = []
    if unmatched:
        notes.append(f"no ground truth for {len(unmatched)} paper(s): {', '.join(sorted(unmatched)[:5])}")
    if no_q:
        notes.append(f"{no_q} answer(s) skipped: their question is not in the ground truth")
    if no_p:
        notes.append(f"{no_p} answer(s) have no p_correct: their 0/1 verdict is used instead")
    return Trials(system, rows, notes)


def _match_gt(rec, index: dict[str, Path]) -> Path | None:
    names = []
    if rec.source:
        src = Path(rec.source)
        names += [src.stem, src.parent.name]
    names += [f"{rec.submission_id}_{rec.role}", f"{rec.submission_id}-{rec.role}"]
    for name in names:
        if name and name in index:
            return index[name]
    return None


def load_reference_trials(
    results_dir: str | Path, ground_truth: list[str | Path] | None = None, threshold: float = 1.0
) -> Trials:
    """Trials from the 2024 challenge's outputs: ``<results_dir>/<paper>/paper_checklist.csv``."""
    from checklist_eval.tables import read_csv_rows

    root = Path(results_dir)
    csvs = sorted(root.glob("*/paper_checklist.csv"))
    if not csvs:
        raise InputError(root, "no <paper>/paper_checklist.csv below this folder")
    index = ground_truth_index(ground_truth) if ground_truth else {}
    rows: list[Trial] = []
    notes: list[str] = []
    fallback = []
    for csv_path in csvs:
        paper = csv_path.parent.name
        gt_path = index.get(paper)
        if gt_path is None:
            beside = csv_path.parent / "ground_truth.json"
            if not beside.is_file():
                notes.append(f"{paper}: no ground truth, skipped")
                continue
            gt_path = beside
            if ground_truth:
                fallback.append(paper)
        gt = read_ground_truth(gt_path)
        table = read_csv_rows(csv_path, ["Score"])
        rows += _reference_rows(table, csv_path, root.name, paper, gt, threshold)
    if fallback:
        notes.append(f"ground truth from ground_truth.json beside the CSV for: {', '.join(fallback)}")
    if not rows:
        raise InputError(root, "no paper with ground truth")
    return Trials(root.name, rows, notes)


def _reference_rows(table: list[dict], csv_path: Path, system: str, paper: str, gt: dict,
                    threshold: float) -> list[Trial]:
    out = []
    for i, row in enumerate(table):
        qid = str(i + 1)  # rows are in checklist order; the titles vary between files
        if qid not in gt:
            continue
        try:
            p = float(row["Score"])
        except ValueError:
            raise InputError(csv_path, f"row {i + 2}: Score must be a number, got {row['Score']!r}") from None
        if not 0.0 <= p <= 1.0:
            raise InputError(csv_path, f"row {i + 2}: Score must be in [0, 1], got {row['Score']!r}")
        truth = gt[qid]
        out.append(Trial(
            system=system, paper=paper, role=_role_of(paper), question_id=qid,
            answer=row.get("Answer", ""), p_correct=p, score=1.0 - p, truth=truth,
            target=binarize(truth, threshold),
        ))  # fmt: skip
    return out


def _role_of(paper: str) -> Role:
    return "A" if "adversarial" in paper.lower() else "G"


# ------------------------------------------------------------------------------------------- metrics


def evaluate(
    trials: Trials,
    *,
    far_stop: float = 0.1,
    by_question: bool = False,
    n_bootstrap: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict:
    """Overall figures with CIs (bootstrap for ranking metrics, TrojAI half-widths for Brier and the
    log score) and, when asked, the same per question (AUC CI only, to keep it quick)."""
    import numpy as np

    df = trials.frame
    y = df["target"].to_numpy(dtype=bool)
    s = df["score"].to_numpy(dtype=np.float64)
    result = {
        "system": trials.system,
        "far_stop": far_stop,
        "overall": _figures(y, s, far_stop, n_bootstrap, level, seed, full=True),
        "notes": list(trials.notes),
    }
    if by_question:
        result["by_question"] = {
            str(q): _figures(g["target"].to_numpy(dtype=bool), g["score"].to_numpy(dtype=np.float64),
                             far_stop, n_bootstrap, level, seed, full=False)  # fmt: skip
            for q, g in sorted(df.groupby("question_id"), key=lambda kv: _qkey(kv[0]))
        }
    return result


def _qkey(qid: object) -> tuple:
    """Question ids sort as numbers first ("2" before "10"), then as text ("1a")."""
    text = str(qid)
    m = re.match(r"(\d+)(.*)$", text)
    return (0, int(m.group(1)), m.group(2)) if m else (1, 0, text)


def _figures(y, s, far_stop, n_bootstrap, level, seed, *, full: bool) -> dict:
    from checklist_eval.detection import metrics

    fig: dict = dict(metrics.summarize(y, s, far_stop=far_stop))
    pct = int(round(level * 100))
    ce = metrics.cross_entropy_elementwise(y, s)
    half = metrics.ci_half_widths(ce)
    fig["cross_entropy_ci"] = {str(k): v for k, v in half.items()}
    sq = (s - y) ** 2
    fig["brier_ci"] = {str(k): v for k, v in metrics.ci_half_widths(sq).items()}
    fig["ci_level"] = pct
    if n_bootstrap <= 0 or math.isnan(fig["auc"]):
        return fig
    if full:
        cis = metrics.bootstrap_ranking(y, s, far_stop, n_bootstrap, level, seed)
    else:
        cis = {"auc": metrics.bootstrap_auc(y, s, n_bootstrap, level, seed)}
    fig["bootstrap"] = {k: [c.low, c.high] for k, c in cis.items()}
    return fig


# -------------------------------------------------------------------------------------------- output


def _num(x: float) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _ci(fig: dict, key: str) -> str:
    b = fig.get("bootstrap", {}).get(key)
    return f" [{_num(b[0])}, {_num(b[1])}]" if b else ""


def overall_lines(result: dict) -> list[str]:
    """Readable summary of one system: each figure with its 95 % interval."""
    f = result["overall"]
    fs = f"{result['far_stop']:g}"
    lv = str(f["ci_level"]) if str(f["ci_level"]) in f["brier_ci"] else "95"
    return [
        f"{result['system']}: {f['n']} answers, {f['n_target']} targets, {f['n_nontarget']} non-targets",
        f"  AUC            {_num(f['auc'])}{_ci(f, 'auc')}",
        f"  pAUC@FPR={fs:<5} {_num(f['pauc'])}{_ci(f, 'pauc')}  (McClish {_num(f['pauc_mcclish'])}"
        f"{_ci(f, 'pauc_mcclish')})",
        f"  TPR@FPR={fs:<6} {_num(f['tpr_at_fpr'])}{_ci(f, 'tpr_at_fpr')}",
        f"  EER            {_num(f['eer'])}{_ci(f, 'eer')}  (FPR = FNR; nearest ROC point {_num(f['eer_nearest'])})",
        f"  Brier          {_num(f['brier'])}{_halves(f['brier_ci'], result, lv)}",
        f"  Cross-entropy  {_num(f['cross_entropy'])}{_halves(f['cross_entropy_ci'], result, lv)}",
    ]


def _halves(halves: dict, result: dict, default: str) -> str:
    """' ± h' at the default level, or ' ± h (90%), ± h (99%)' at the levels asked for
    (``ci_levels``, TrojAI's z values)."""
    levels = [str(x) for x in result.get("ci_levels", [])]
    if not levels or levels == [default]:
        return f" ± {_num(halves[default])}"
    return " " + ", ".join(f"± {_num(halves[lv])} ({lv}%)" for lv in levels)


def question_table(result: dict) -> str:
    """Pipe-separated per-question table."""
    head = "question|n|targets|AUC|AUC_low|AUC_high|TPR@FPR|EER|Brier|CrossEntropy"
    lines = [head]
    for q, f in result.get("by_question", {}).items():
        b = f.get("bootstrap", {}).get("auc", [float("nan")] * 2)
        vals = [f["auc"], b[0], b[1], f["tpr_at_fpr"], f["eer"], f["brier"], f["cross_entropy"]]
        lines.append("|".join([q, str(f["n"]), str(f["n_target"])] + [_num(v) for v in vals]))
    return "\n".join(lines) + "\n"


def jsonable(obj):
    """NaN to null, recursively, so the result is strict JSON."""
    if isinstance(obj, float):
        return None if math.isnan(obj) else obj
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    return obj
