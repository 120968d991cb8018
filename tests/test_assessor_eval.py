"""assessor-eval: the assessor as a detector, on records written here and on the 2024 reference outputs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score

from checklist_eval.adversary import evaluation as ev
from checklist_eval.cli import main
from checklist_eval.errors import InputError

# (submission, question): answers of A and T and the assessor's p_correct on A
A_T_P = {
    ("s1", "1"): ("Yes", "Yes", 0.9),
    ("s1", "2"): ("Yes", "No", 0.3),  # target, caught
    ("s1", "3"): ("NA", "NA", 0.8),
    ("s1", "4"): ("Yes", "No", 0.7),  # target, missed
    ("s2", "1"): ("No", "No", 0.6),
    ("s2", "2"): ("Yes", "NA", 0.2),  # target, caught
    ("s2", "3"): ("Yes", "Yes", 0.4),
    ("s2", "4"): ("Yes", "TODO", 0.5),  # T has no real answer: not a trial
}


def _records_csv(path):
    rows = ["submission_id,role,question_id,answer,correct,p_correct,assessor,model,source"]
    for (sid, q), (a, t, p) in A_T_P.items():
        rows.append(f"{sid},G,{q},Yes,1,0.95,heuristic,,papers/{sid}_genuine.pdf")
        rows.append(f"{sid},A,{q},{a},{int(p >= 0.5)},{p},heuristic,,papers/{sid}_adversarial.pdf")
        rows.append(f"{sid},T,{q},{t},1,0.9,heuristic,,papers/{sid}_truth.pdf")
    path.write_text("\n".join(rows) + "\n")
    return path


def _expected():
    keep = [(a, t, p) for a, t, p in A_T_P.values() if t != "TODO"]
    y = np.array([a != t for a, t, _ in keep])
    score = np.array([1 - p for _, _, p in keep])
    return y, score


def test_a_versus_t_targets_and_metrics(tmp_path):
    trials = ev.load_record_trials(_records_csv(tmp_path / "records.csv"))
    assert trials.system == "heuristic"
    assert len(trials.frame) == 7 and set(trials.frame["role"]) == {"A"}
    assert any("T has no real answer" in n for n in trials.notes)
    y, score = _expected()
    np.testing.assert_array_equal(trials.frame["target"].to_numpy(), y)
    res = ev.evaluate(trials, n_bootstrap=200)
    o = res["overall"]
    assert o["auc"] == pytest.approx(roc_auc_score(y, score), abs=1e-12)
    assert o["brier"] == pytest.approx(brier_score_loss(y, score), abs=1e-12)
    assert o["cross_entropy"] == pytest.approx(log_loss(y, score), abs=1e-12)
    assert o["n_target"] == 3 and o["bootstrap"]["auc"][0] <= o["auc"] <= o["bootstrap"]["auc"][1]
    se = np.std(-(y * np.log(score) + (1 - y) * np.log(1 - score))) / np.sqrt(7)
    assert o["cross_entropy_ci"]["95"] == pytest.approx(1.96 * se)


def test_results_folder_and_cli(tmp_path, capsys):
    _records_csv(tmp_path / "records.csv")
    out = tmp_path / "out"
    assert main(["assessor-eval", str(tmp_path), "--by-question", "--bootstrap", "50", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "7 answers, 3 targets" in text and "question|n|targets|AUC" in text
    summary = json.loads((out / "summary.json").read_text())
    y, score = _expected()
    assert summary[0]["overall"]["auc"] == pytest.approx(roc_auc_score(y, score))
    assert set(summary[0]["by_question"]) == {"1", "2", "3", "4"}
    assert summary[0]["by_question"]["1"]["auc"] is None  # question 1 has no target: NaN -> null
    assert len(pd.read_csv(out / "trials.csv")) == 7
    assert main(["assessor-eval", str(tmp_path / "records.csv"), "--json", "--bootstrap", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["overall"]["n"] == 7


def test_ground_truth_files_and_threshold(tmp_path):
    records = _records_csv(tmp_path / "records.csv")
    gt = tmp_path / "gt"
    gt.mkdir()
    # matched by the paper file's name; comments and blank lines as in the challenge's YAML
    (gt / "s1_adversarial.yaml").write_text("# expected scores\n1:  1\n2:  0\n\n3: 0.5\n4: 1\n")
    (gt / "s2_genuine.json").write_text(json.dumps({"1": 1, "2": 0.5, "3": 0}))
    trials = ev.load_record_trials(records, [gt])
    f = trials.frame.sort_values(["paper", "role", "question_id"])
    assert list(zip(f["paper"], f["role"], f["question_id"], f["target"])) == [
        ("s1", "A", "1", False), ("s1", "A", "2", True), ("s1", "A", "3", True), ("s1", "A", "4", False),
        ("s2", "G", "1", False), ("s2", "G", "2", True), ("s2", "G", "3", True),
    ]  # fmt: skip
    strict = ev.load_record_trials(records, [gt], threshold=0.5).frame
    assert int(strict["target"].sum()) == 2  # only the 0s
    assert any("no ground truth" in n for n in trials.notes)


def test_bad_ground_truth_is_reported_with_its_line(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("1: 1\n2: 0.7\n")
    with pytest.raises(InputError, match="line 2: question 2: score must be 0, 0.5 or 1"):
        ev.read_ground_truth(bad)
    bad.write_text("1: 1\n- nested\n")
    with pytest.raises(InputError, match="line 2"):
        ev.read_ground_truth(bad)


def test_records_without_a_and_t_need_ground_truth(tmp_path):
    path = tmp_path / "g_only.csv"
    path.write_text("submission_id,role,question_id,answer,correct,p_correct\ns,G,1,Yes,1,0.9\n")
    with pytest.raises(InputError, match="--ground-truth"):
        ev.load_record_trials(path)
    assert main(["assessor-eval", str(path)]) == 2


def _reference_expected(results_dir):
    ys, ss = [], []
    for csv in sorted(results_dir.glob("*/paper_checklist.csv")):
        gt = json.loads((csv.parent / "ground_truth.json").read_text())
        df = pd.read_csv(csv, keep_default_na=False)
        for i, score in enumerate(df["Score"]):
            if str(i + 1) in gt:
                ys.append(float(gt[str(i + 1)]) < 1)
                ss.append(1 - float(score))
    return np.array(ys), np.array(ss)


@pytest.mark.parametrize("system", ["results_gpt", "results_gemini"])
def test_reference_results_against_the_authors_ground_truth(shared_dir, system):
    sample = shared_dir / "corpus" / "anchor-sample"
    results = sample / "reference-results" / system
    trials = ev.load_reference_trials(results, [sample / "papers"])
    y, s = _reference_expected(results)
    assert len(trials.frame) == len(y) == 360
    np.testing.assert_array_equal(np.sort(trials.frame["score"]), np.sort(s))
    res = ev.evaluate(trials, n_bootstrap=0)
    assert res["overall"]["auc"] == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert res["overall"]["brier"] == pytest.approx(brier_score_loss(y, s), abs=1e-12)
    assert 0.5 < res["overall"]["auc"] < 0.75  # a weak but better-than-chance detector
    # two papers have no YAML in papers/: their ground_truth.json is used, and said so
    assert any("HHD_Ethiopic" in n for n in trials.notes)
