"""NIST GenAI discriminator files: validate and score small files written here."""

from __future__ import annotations

import json
import math

import numpy as np
from cli_runner import run_cli
import pytest
from sklearn.metrics import brier_score_loss, roc_auc_score

from checklist_eval.cli import main
from checklist_eval.detection.nist import read_table, score_files, validate_sysout, SYSOUT_COLUMNS

HEADER = "|".join(SYSOUT_COLUMNS)
N = 40


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, N).astype(bool)
    y[:2] = [True, False]
    s = np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0, 1).round(2)  # ties included
    index = tmp_path / "genai24_index.csv"
    index.write_text("DatasetID|TaskID|FileID\n" + "".join(f"set1|detection|f{i:03d}.txt\n" for i in range(N)))
    ref = tmp_path / "genai24_ref.csv"
    ref.write_text(
        "DatasetID|TaskID|TopicID|FileID|GeneratorID|IsTarget\n"
        + "".join(f"set1|detection|t1|f{i:03d}.txt|G_site|{'Y' if y[i] else 'N'}\n" for i in range(N))
    )
    sysout = tmp_path / "sys_model-01_cutoff-50.csv"
    # spaces around the pipes and a trailing pipe, as in the plan's own examples; shuffled order
    rows = [f"set1 | detection | D-site | v1 | f{i:03d}.txt | {s[i]} |\n" for i in rng.permutation(N)]
    sysout.write_text(" | ".join(SYSOUT_COLUMNS) + " |\n" + "".join(rows))
    return {"index": index, "ref": ref, "sysout": sysout, "y": y, "s": s, "dir": tmp_path}


def _sysout(tmp_path, rows, name="sys_cutoff-50.csv", header=HEADER):
    path = tmp_path / name
    path.write_text(header + "\n" + "".join(r + "\n" for r in rows))
    return path


def _good_rows(n=N):
    return [f"set1|detection|D|v|f{i:03d}.txt|0.5" for i in range(n)]


def test_valid_file(files):
    v = validate_sysout(files["index"], files["sysout"])
    assert v.ok, v.problems
    assert not v.warnings
    assert main(["detection", "validate", "-x", str(files["index"]), "-s", str(files["sysout"])]) == 0


@pytest.mark.parametrize(
    "change,line,fragment",
    [
        (lambda r: r.__setitem__(3, "set1|detection|D|v|f003.txt|abc"), 5, "not a number"),
        (lambda r: r.__setitem__(3, "set1|detection|D|v|f003.txt|inf"), 5, "not finite"),
        (lambda r: r.__setitem__(3, "set1|detection|D|v|f003.txt|NaN"), 5, "not finite"),
        (lambda r: r.__setitem__(3, "set1|detection|D|v|f003.txt|1.01"), 5, "outside [0, 1]"),
        (lambda r: r.__setitem__(3, "set1|detection|D|v|f003.txt|-0.2"), 5, "outside [0, 1]"),
        (lambda r: r.__setitem__(3, "set1|detection|D|v|f003.txt|"), 5, "empty ConfidenceScore"),
        (lambda r: r.__setitem__(3, "set1|detection|D|v|f002.txt|0.1"), 5, "repeats line 4"),
        (lambda r: r.append("set1|detection|D|v|extra.txt|0.1"), N + 2, "not in the index"),
        (lambda r: r.__setitem__(3, "set2|detection|D|v|f003.txt|0.1"), 5, "DatasetID 'set2' differs"),
        (lambda r: r.__setitem__(3, "set1|detection|D|v||0.1"), 5, "empty FileID"),
    ],
)
def test_each_bad_row_is_reported_with_its_line(tmp_path, files, change, line, fragment):
    rows = _good_rows()
    change(rows)
    v = validate_sysout(files["index"], _sysout(tmp_path, rows))
    assert not v.ok
    assert any(p.line == line and fragment in p.message for p in v.problems), v.problems


def test_missing_file_id_is_reported_with_the_index_line(tmp_path, files):
    rows = _good_rows()
    del rows[7]
    v = validate_sysout(files["index"], _sysout(tmp_path, rows))
    assert [p.message for p in v.problems] == ["FileID f007.txt of the index (line 9) has no score"]


def test_bad_file_name_and_missing_cutoff(tmp_path, files):
    v = validate_sysout(files["index"], _sysout(tmp_path, _good_rows(), name="my sys(1).csv"))
    assert any("no spaces or special characters" in p.message for p in v.problems)
    assert any("cutoff" in p.message for p in v.problems)  # the plan asks for the threshold in the name


@pytest.mark.parametrize("name", ["sys_cutoff-50.txt", "sys_cutoff-50", "sys_cutoff-50.csv.bak"])
def test_system_output_not_named_csv_fails_validate_and_package(tmp_path, files, name):
    """Plan 5.1: the system output is a CSV file; NIST refuses a package whose member is not one."""
    sysout = _sysout(tmp_path, _good_rows(), name=name)
    run = run_cli("detection", "validate", "-x", str(files["index"]), "-s", str(sysout))  # fmt: skip
    assert run.returncode == 2 and "must end in .csv" in run.stdout, run
    pkg = tmp_path / "sub.tgz"
    run = run_cli("detection", "package", "-s", str(sysout), "--out", str(pkg))  # fmt: skip
    assert run.returncode == 2 and "must end in .csv" in run.stdout and not pkg.exists(), run


@pytest.mark.parametrize("col,other,first,second", [
    ("DiscriminatorID", "set1|detection|D2|v|f004.txt|0.5", "D", "D2"),
    ("ModelVersion", "set1|detection|D|v2|f004.txt|0.5", "v", "v2"),
])
def test_one_file_carries_one_system(tmp_path, files, col, other, first, second):
    rows = _good_rows()
    rows[4] = other  # line 6 of the file
    v = validate_sysout(files["index"], _sysout(tmp_path, rows))
    assert [p.message for p in v.problems] == [
        f"2 different {col} values ('{first}' (line 2), '{second}' (line 6)): one file carries one system"
    ]


def test_header_and_malformed_rows(tmp_path, files):
    bad_header = _sysout(tmp_path, _good_rows(), header="DatasetID|TaskID|FileID|Score")
    v = validate_sysout(files["index"], bad_header)
    assert v.problems[0].line == 1 and "DiscriminatorID" in v.problems[0].message
    rows = _good_rows()
    rows[5] = "set1|detection|D|v|f005.txt|0.5|oops|more"
    v = validate_sysout(files["index"], _sysout(tmp_path, rows))
    assert v.problems and v.problems[0].line == 7 and "malformed" in v.problems[0].message
    empty = tmp_path / "empty_cutoff-50.csv"
    empty.write_text("")
    assert "empty file" in validate_sysout(files["index"], empty).problems[0].message


def test_literal_na_file_id_stays_a_file_id(tmp_path):
    index = tmp_path / "idx.csv"
    index.write_text("DatasetID|TaskID|FileID\nset1|detection|NA\nset1|detection|null\n")
    sysout = _sysout(tmp_path, ["set1|detection|D|v|NA|0.2", "set1|detection|D|v|null|0.3"])
    assert validate_sysout(index, sysout).ok
    table, _ = read_table(sysout, SYSOUT_COLUMNS)
    assert [r["FileID"] for r in table.rows] == ["NA", "null"]


def test_invalid_exit_code_is_2(tmp_path, files, capsys):
    rows = _good_rows()
    rows[0] = "set1|detection|D|v|f000.txt|x"
    rc = main(["detection", "validate", "-x", str(files["index"]), "-s", str(_sysout(tmp_path, rows))])
    out = capsys.readouterr().out
    assert rc == 2 and ":2: ConfidenceScore 'x' is not a number" in out


def test_score_matches_sklearn(files):
    res = score_files(files["ref"], files["index"], files["sysout"], far_stop=0.2, n_bootstrap=200)
    y, s = files["y"], files["s"]
    assert res.metrics["auc"] == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert res.metrics["pauc_mcclish"] == pytest.approx(roc_auc_score(y, s, max_fpr=0.2), abs=1e-12)
    assert res.metrics["brier"] == pytest.approx(brier_score_loss(y, s), abs=1e-12)
    assert res.metrics["n_target"] == int(y.sum()) and res.metrics["n"] == N
    assert res.metrics["auc_ci95_low"] < res.metrics["auc"] < res.metrics["auc_ci95_high"]
    assert res.system == {"DiscriminatorID": "D-site", "ModelVersion": "v1"}


def test_score_cli_table_json_and_plots(files, capsys):
    pytest.importorskip("matplotlib")
    out = files["dir"] / "out"
    args = ["detection", "score", "-r", str(files["ref"]), "-x", str(files["index"]), "-s", str(files["sysout"])]
    assert main(args + ["--out", str(out), "--plot", "roc", "--plot", "det", "--bootstrap", "100"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0] == "Metric|Value"
    table = dict(line.split("|") for line in lines[1:])
    assert float(table["AUC"]) == pytest.approx(roc_auc_score(files["y"], files["s"]), abs=1e-6)
    assert {"pAUC@FPR=0.1", "TPR@FPR=0.1", "EER", "EER_interpolated", "Brier", "CrossEntropy"} <= set(table)
    assert (out / "scores.txt").read_text() == text
    for png in ("roc.png", "det.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(args + ["--json", "--bootstrap", "0"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["metrics"]["auc"] == pytest.approx(roc_auc_score(files["y"], files["s"]), abs=1e-12)


def test_score_refuses_invalid_input_with_exit_2(tmp_path, files, capsys):
    rows = _good_rows()
    del rows[0]
    rc = main(["detection", "score", "-r", str(files["ref"]), "-x", str(files["index"]),
               "-s", str(_sysout(tmp_path, rows))])  # fmt: skip
    assert rc == 2 and "f000.txt" in capsys.readouterr().err
    bad_ref = tmp_path / "ref_bad.csv"
    bad_ref.write_text(files["ref"].read_text().replace("|Y\n", "|yes\n", 1))
    rc = main(["detection", "score", "-r", str(bad_ref), "-x", str(files["index"]), "-s", str(files["sysout"])])
    assert rc == 2 and "IsTarget must be Y or N" in capsys.readouterr().err


def test_single_class_reference_scores_with_nan_ranking_metrics(tmp_path, files):
    ref = tmp_path / "ref_all_n.csv"
    ref.write_text(files["ref"].read_text().replace("|Y\n", "|N\n"))
    res = score_files(ref, files["index"], files["sysout"])
    assert math.isnan(res.metrics["auc"]) and "auc_ci95_low" not in res.metrics
    assert res.metrics["brier"] == pytest.approx(float(np.mean(files["s"] ** 2)))


def _highest_tpr_at_fpr(y, s, target):
    """By brute force over every threshold: the highest TPR among thresholds with FPR <= target."""
    y, s = np.asarray(y, bool), np.asarray(s, float)
    best = 0.0
    for t in np.unique(s):
        fpr, tpr = (s[~y] >= t).mean(), (s[y] >= t).mean()
        if fpr <= target:
            best = max(best, tpr)
    return best


@pytest.mark.parametrize("far_stop", ["0.1", "0.25", "1"])
def test_tpr_at_fpr_is_the_highest_tpr_at_fpr_at_most_the_target(files, far_stop):
    """Through the scorer's own flags (-t detection, --plotType) as the plan's appendix types them."""
    out = files["dir"] / f"out{far_stop}"
    run = run_cli("detection", "score", "-t", "detection", "-r", str(files["ref"]), "-x", str(files["index"]), "-s", str(files["sysout"]), "--far-stop", far_stop, "--bootstrap", "0", "--json", "--out", str(out), "--plotType", "[det, roc]")  # fmt: skip
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)["metrics"]["tpr_at_fpr"]
    assert got == pytest.approx(_highest_tpr_at_fpr(files["y"], files["s"], float(far_stop)), abs=1e-12)
    if far_stop == "1":
        assert got == 1.0
    assert (out / "det.png").stat().st_size > 0 and (out / "roc.png").stat().st_size > 0


def test_scorer_flags_refuse_other_tasks_and_plot_types(files):
    from helpers import one_error_line

    base = ["detection", "score", "-r", str(files["ref"]),
            "-x", str(files["index"]), "-s", str(files["sysout"]), "--bootstrap", "0"]
    for extra, words in ((["-t", "generation"], ("--task", "generation")),
                         (["--plotType", "pr", "--out", str(files["dir"])], ("--plotType", "pr"))):
        one_error_line(run_cli(*base, *extra), *words)


def test_log_score_interval_is_never_below_zero(tmp_path):
    """Three confident right answers, one confident wrong: mean 27.63/4, half-width 1.96 sd / 2 > mean."""
    index = tmp_path / "genai24_index.csv"
    index.write_text("DatasetID|TaskID|FileID\n" + "".join(f"set1|detection|f{i}.txt\n" for i in range(4)))
    ref = tmp_path / "genai24_ref.csv"
    ref.write_text("DatasetID|TaskID|TopicID|FileID|GeneratorID|IsTarget\n"
                   + "".join(f"set1|detection|t|f{i}.txt|G|{t}\n" for i, t in enumerate("YYNN")))
    sysout = _sysout(tmp_path, [f"set1|detection|D|v|f{i}.txt|{p}" for i, p in enumerate([1, 1, 0, 1])])
    run = run_cli("detection", "score", "-r", str(ref), "-x", str(index), "-s", str(sysout), "--bootstrap", "0", "--json")  # fmt: skip
    assert run.returncode == 0, run.stderr
    metrics = json.loads(run.stdout)["metrics"]
    ce = np.array([0, 0, 0, -math.log(1e-12)])  # clipped at 1e-12, TrojAI's epsilon
    mean, half = ce.mean(), 1.96 * ce.std() / math.sqrt(4)
    assert mean - half < 0  # the unclipped interval would go below 0
    assert metrics["cross_entropy_ci95"] == pytest.approx(half, rel=1e-6)
    assert metrics["cross_entropy_ci95_low"] == 0.0
    assert metrics["cross_entropy_ci95_high"] == pytest.approx(mean + half, rel=1e-6)
