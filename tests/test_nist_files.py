"""NIST GenAI files as the evaluation plan writes them (its own example lines), the .tgz submission
package of section 5.2.2, and EER as the FPR = FNR crossing of section 6.4."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.detection.nist import validate_sysout

# The plan's example lines, verbatim (sections 3.2/4 for the index, 5.1 for the system output).
PLAN_INDEX_HEADER = "DatasetID | TaskID | FileID |"
PLAN_INDEX_ROW = "GenAI24-PL-set1 | detection | file_0001.txt |"
PLAN_SYSOUT_HEADER = "DatasetID | TaskID | DiscriminatorID | ModelVersion | FileID | ConfidenceScore"
PLAN_SYSOUT_ROW = "GenAI24-PL-set1 | detection | D-NIST-site | MySys_GPT4.0 | file_0001.txt | 0.7"
# Section 3's reference example, its columns joined by the stated delimiter "|".
PLAN_REF_HEADER = "DatasetID|TaskID|TopicID|FileID|GeneratorID|IsTarget"
PLAN_REF_ROW = "GenAI24-PL-set1|detection|topic_0000|file_0001.txt|G_NIST_site|Y"


def cli(*args: str) -> CliRun:
    return run_cli(*args)


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n")
    return path


def _index(tmp_path, n=1):
    rows = [PLAN_INDEX_ROW.replace("file_0001", f"file_{i:04d}") for i in range(1, n + 1)]
    return _write(tmp_path / "genai24_T2T-D_detection_index.csv", [PLAN_INDEX_HEADER, *rows])


def _sysout(tmp_path, header=PLAN_SYSOUT_HEADER, rows=(PLAN_SYSOUT_ROW,), name="genai24_t2t_d_sys_model-01_cutoff-50.csv"):
    return _write(tmp_path / name, [header, *rows])


def test_the_plans_own_example_files_are_valid(tmp_path):
    v = validate_sysout(_index(tmp_path), _sysout(tmp_path))
    assert v.ok, v.problems


@pytest.mark.parametrize("header,row", [
    (PLAN_SYSOUT_HEADER, PLAN_SYSOUT_ROW + " |"),  # rows close with a pipe, the header does not
    (PLAN_SYSOUT_HEADER + " |", PLAN_SYSOUT_ROW),  # the header does, the rows do not
    (PLAN_SYSOUT_HEADER.replace(" ", "") + "|", PLAN_SYSOUT_ROW.replace(" ", "") + "|"),
])  # fmt: skip
def test_trailing_pipes_are_accepted_on_header_and_rows_alike(tmp_path, header, row):
    v = validate_sysout(_index(tmp_path), _sysout(tmp_path, header, [row]))
    assert v.ok, [str(p) for p in v.problems]


@pytest.mark.parametrize("header", [
    PLAN_SYSOUT_HEADER + "|ConfidenceScore",
    PLAN_SYSOUT_HEADER + " | ConfidenceScore ",
    "DatasetID|TaskID|DiscriminatorID|ModelVersion|FileID|FileID|ConfidenceScore",
])  # fmt: skip
def test_a_repeated_column_is_refused_whatever_its_spacing(tmp_path, header):
    n = header.count("|") + 1
    row = "|".join(["GenAI24-PL-set1", "detection", "D-NIST-site", "v", "file_0001.txt", "0.7", "0.7"][:n])
    v = validate_sysout(_index(tmp_path), _sysout(tmp_path, header, [row]))
    assert not v.ok and v.problems[0].line == 1 and "repeats column" in v.problems[0].message


def test_task_id_is_compared_without_regard_to_case(tmp_path):
    row = PLAN_SYSOUT_ROW.replace("| detection |", "| Detection |")  # the plan spells it both ways
    assert validate_sysout(_index(tmp_path), _sysout(tmp_path, rows=[row])).ok
    other = PLAN_SYSOUT_ROW.replace("| detection |", "| summarization |")
    v = validate_sysout(_index(tmp_path), _sysout(tmp_path, rows=[other]))
    assert [p.line for p in v.problems] == [2] and "TaskID 'summarization' differs" in v.problems[0].message


@pytest.mark.parametrize("column,row", [
    ("DiscriminatorID", PLAN_SYSOUT_ROW.replace("D-NIST-site", "")),
    ("ModelVersion", PLAN_SYSOUT_ROW.replace("MySys_GPT4.0", " ")),
])  # fmt: skip
def test_empty_discriminator_or_model_version_is_refused(tmp_path, column, row):
    v = validate_sysout(_index(tmp_path), _sysout(tmp_path, rows=[row]))
    assert [(p.line, p.message) for p in v.problems] == [(2, f"empty {column}")]


def test_a_row_with_a_shifted_cell_count_is_one_clear_problem_not_a_misread(tmp_path):
    row = "GenAI24-PL-set1 | detection | D-NIST-site | file_0001.txt | 0.7"  # ModelVersion forgotten
    v = validate_sysout(_index(tmp_path), _sysout(tmp_path, rows=[row]))
    assert [(p.line, p.message) for p in v.problems] == [(2, "malformed row: 5 cells, the header has 6")]


# ------------------------------------------------------------------------------------------ package


def test_package_is_built_as_tar_zcvf_would_and_validated_and_scored(tmp_path):
    index = _index(tmp_path, 6)
    rows = [PLAN_SYSOUT_ROW.replace("file_0001", f"file_{i:04d}").replace("0.7", f"0.{i}") for i in range(1, 7)]
    sysout = _sysout(tmp_path, rows=rows)
    ref = _write(tmp_path / "ref.csv", [PLAN_REF_HEADER] + [
        PLAN_REF_ROW.replace("file_0001", f"file_{i:04d}").replace("|Y", "|Y" if i > 3 else "|N")
        for i in range(1, 7)])  # fmt: skip
    pkg = tmp_path / "submission.tgz"
    out = cli("detection", "package", "-s", str(sysout), "-x", str(index), "--out", str(pkg))
    assert out.returncode == 0, out.stdout + out.stderr
    with tarfile.open(pkg, "r:gz") as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == [sysout.name] and members[0].isreg()
        assert tar.extractfile(members[0]).read() == sysout.read_bytes()
    ok = cli("detection", "validate", "-x", str(index), "-s", str(pkg))
    assert ok.returncode == 0 and "valid" in ok.stdout
    scored = cli("detection", "score", "-r", str(ref), "-x", str(index), "-s", str(pkg), "--json", "--bootstrap", "0")
    assert scored.returncode == 0 and json.loads(scored.stdout)["metrics"]["auc"] == 1.0


def test_bad_packages_and_invalid_outputs_are_refused(tmp_path):
    index = _index(tmp_path)
    sysout = _sysout(tmp_path)
    two = tmp_path / "two.tgz"
    with tarfile.open(two, "w:gz") as tar:
        tar.add(sysout, arcname="a.csv")
        tar.add(sysout, arcname="b.csv")
    out = cli("detection", "validate", "-x", str(index), "-s", str(two))
    assert out.returncode == 2 and "exactly one system output .csv" in out.stdout
    link = tmp_path / "link.tgz"
    with tarfile.open(link, "w:gz") as tar:
        info = tarfile.TarInfo("x.csv")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(info)
    assert "link or special file" in cli("detection", "validate", "-x", str(index), "-s", str(link)).stdout
    bad = _sysout(tmp_path, rows=[PLAN_SYSOUT_ROW.replace("0.7", "1.7")], name="bad_cutoff-50.csv")
    refused = cli("detection", "package", "-s", str(bad), "-x", str(index), "--out", str(tmp_path / "b.tgz"))
    assert refused.returncode == 2 and "outside [0, 1]" in refused.stdout and not (tmp_path / "b.tgz").exists()


# ---------------------------------------------------------------------------------------------- EER


def test_headline_eer_is_the_fpr_fnr_crossing(tmp_path):
    # the audit's 5-trial case: ROC (0,0) (0,.5) (1/3,.5) (2/3,.5) (1,.5) (1,1); FPR = FNR at 0.5
    y, s = [1, 0, 0, 0, 1], [0.9, 0.8, 0.7, 0.6, 0.5]
    index = _index(tmp_path, 5)
    sysout = _sysout(tmp_path, rows=[PLAN_SYSOUT_ROW.replace("file_0001", f"file_{i + 1:04d}").replace("0.7", str(v))
                                     for i, v in enumerate(s)])  # fmt: skip
    ref = _write(tmp_path / "ref.csv", [PLAN_REF_HEADER] + [
        PLAN_REF_ROW.replace("file_0001", f"file_{i + 1:04d}").replace("|Y", "|Y" if t else "|N")
        for i, t in enumerate(y)])  # fmt: skip
    out = cli("detection", "score", "-r", str(ref), "-x", str(index), "-s", str(sysout), "--json", "--bootstrap", "0")
    m = json.loads(out.stdout)["metrics"]
    assert m["eer"] == pytest.approx(0.5) and m["eer_interp"] == pytest.approx(0.5)
    assert m["eer_nearest"] == pytest.approx(5 / 12)
    table = cli("detection", "score", "-r", str(ref), "-x", str(index), "-s", str(sysout), "--bootstrap", "0").stdout
    rows = dict(line.split("|") for line in table.splitlines()[1:] if line.count("|") == 1)
    assert float(rows["EER"]) == pytest.approx(0.5) and float(rows["EER_nearest_point"]) == pytest.approx(5 / 12)
    assert np.isclose(float(rows["CrossEntropy"]), m["cross_entropy"])


SIZES = (50_000, 200_000)
MEMORY_BOUND_MB = 200  # the scoring process's own peak at 200k trials: 86 MB measured (53 MB at 50k); every
# row read into memory took 1.5 GB for a million trials, about 300 MB more at 200k
GROWTH_BOUND_MB = 80  # from 50k to 200k trials: 33 MB measured (the arrays and the id index); rows as Python
# objects would take about 1 KB each, 150 MB more


def _score_in_own_process(tmp_path: Path, n: int) -> tuple[dict, int]:
    """(metrics, peak RSS in MB) of ``detection score`` over ``n`` rows in each of the three files, the
    system output in its .tgz package, scored through the CLI entry point in its own process."""
    import random

    rng = random.Random(5)
    tmp_path = tmp_path / str(n)
    tmp_path.mkdir()
    index, ref, sysout = tmp_path / "index.csv", tmp_path / "ref.csv", tmp_path / "big_cutoff-50.csv"
    with index.open("w") as fi, ref.open("w") as fr, sysout.open("w") as fs:
        fi.write("DatasetID|TaskID|FileID\n")
        fr.write("DatasetID|TaskID|TopicID|FileID|GeneratorID|IsTarget\n")
        fs.write("DatasetID|TaskID|DiscriminatorID|ModelVersion|FileID|ConfidenceScore\n")
        for i in range(n):
            target = i % 3 == 0
            fi.write(f"GenAI24-PL-set1|detection|file_{i:07d}.txt\n")
            fr.write(f"GenAI24-PL-set1|detection|topic_{i % 50}|file_{i:07d}.txt|G_site|{'Y' if target else 'N'}\n")
            fs.write(f"GenAI24-PL-set1|detection|D-site|v1|file_{i:07d}.txt|"
                     f"{min(1.0, rng.random() * 0.8 + 0.2 * target):.4f}\n")
    package = tmp_path / "big.tgz"
    run = cli("detection", "package", "-s", str(sysout), "--out", str(package))
    assert run.returncode == 0, run.stdout + run.stderr
    # VmHWM: the peak of this interpreter's own memory since exec. ru_maxrss of RUSAGE_SELF would also
    # count the pytest worker it was started from (subprocess forks, or vforks sharing its memory, before
    # exec): 766 MB at both sizes in CI, the worker's size, not the command's.
    peak = (
        "import sys\n"
        "from checklist_eval.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "status = open('/proc/self/status').read().split('VmHWM:')[1]\n"
        "print(int(status.split()[0]) // 1024, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run([sys.executable, "-c", peak, "detection", "score", "-r", str(ref), "-x", str(index),
                           "-s", str(package), "--bootstrap", "0", "--json"],
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)["metrics"], int(proc.stderr.strip().splitlines()[-1])


def test_trials_are_read_streamed_with_memory_flat_in_rows(tmp_path):
    """Four times the trials, about the same peak memory: the rows are streamed, never held as Python rows."""
    peaks = {}
    for n in SIZES:
        metrics, peaks[n] = _score_in_own_process(tmp_path, n)
        assert (metrics["n"], metrics["n_target"]) == (n, (n + 2) // 3)
    small, large = SIZES
    assert peaks[large] - peaks[small] < GROWTH_BOUND_MB, peaks
    assert peaks[large] < MEMORY_BOUND_MB, peaks
