"""``checklist-eval check`` end to end, and the heuristic's measured accuracy on the anchor sample."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.cli import main

ROOT = Path(__file__).resolve().parents[1]
ITEM_KEYS = {"id", "answer", "correct", "p_correct", "review", "state", "passages", "justification", "location",
             "context_share"}
USAGE_KEYS = {"calls", "prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd"}


def anchor_pdf(shared: Path, name: str = "5_genuine_DPO") -> Path:
    return next((shared / "corpus" / "anchor-sample" / "papers" / name).glob("*.pdf"))


def assert_shape(obj: dict) -> None:
    assert set(obj) == {"source", "checklist", "assessor", "model", "C", "items", "usage", "warnings", "states"}
    # every answer in one evidence state, counted; only a contradicted one is incorrect (unverified keeps c_i = 1)
    assert sum(obj["states"].values()) == len(obj["items"])
    assert all((it["state"] == "contradicted") == (not it["correct"]) for it in obj["items"])
    assert set(obj["checklist"]) == {"id"} and isinstance(obj["checklist"]["id"], str)
    assert obj["assessor"] == "heuristic" and obj["model"] is None
    assert set(obj["usage"]) == USAGE_KEYS and obj["usage"]["calls"] == 0
    assert obj["items"] and all(set(it) == ITEM_KEYS for it in obj["items"])
    assert all(it["answer"] in ("Yes", "No", "NA", "TODO", None) for it in obj["items"])
    n_ok = sum(it["correct"] for it in obj["items"])
    assert obj["C"] == pytest.approx(n_ok / len(obj["items"]))
    assert isinstance(obj["warnings"], list)


def run_check(*args: str) -> CliRun:
    return run_cli("check", *args, cwd=ROOT)


def test_check_json_shape_on_a_real_pdf(shared_dir):
    proc = run_check(str(anchor_pdf(shared_dir)), "--json")
    assert proc.returncode == 0, proc.stderr
    obj = json.loads(proc.stdout)
    assert_shape(obj)
    assert obj["checklist"]["id"] == "neurips-2024" and len(obj["items"]) == 15


def test_check_out_writes_json_and_report(shared_dir, tmp_path, capsys):
    assert main(["check", str(anchor_pdf(shared_dir)), "--out", str(tmp_path / "o")]) == 0
    summary = capsys.readouterr().out
    assert "C = 0." in summary and summary.rstrip().endswith(f"the report: {tmp_path / 'o'}/report.html")
    written = json.loads((tmp_path / "o" / "check.json").read_text())
    assert_shape(written)
    html = next((tmp_path / "o").glob("*.html")).read_text()
    assert "Correctness C" in html and '<a href="check.json">This report as JSON</a>' in html
    assert not [p for p in (tmp_path / "o").iterdir() if p.name.endswith(".tmp")]


def test_dry_run_heuristic_spends_nothing(shared_dir, capsys):
    assert main(["check", str(anchor_pdf(shared_dir)), "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (plan["calls"], plan["prompt_tokens"], plan["cost_usd"]) == (0, 0, 0.0)
    assert plan["items_judged_offline"] > 0


def test_bad_input_exits_2_with_one_line(tmp_path):
    proc = run_check(str(tmp_path / "missing.pdf"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "missing.pdf" in proc.stderr


def test_unknown_checklist_exits_2(shared_dir, capsys):
    assert main(["check", str(anchor_pdf(shared_dir)), "--checklist", "neurips-1999"]) == 2
    assert "neurips-1999" in capsys.readouterr().err


def test_genuine_fixture_scores_higher_than_adversarial(fixtures_dir, capsys):
    g, a = fixtures_dir / "papers" / "genuine", fixtures_dir / "papers" / "adversarial"
    if not (g.exists() and a.exists()):
        pytest.skip("G/A fixture papers not built in this checkout")
    scores = {}
    for name, path in (("G", g), ("A", a)):
        assert main(["check", str(path), "--json"]) == 0
        obj = json.loads(capsys.readouterr().out)
        assert_shape(obj)
        scores[name] = obj["C"]
    assert scores["G"] > scores["A"]


def _eval_module():
    spec = importlib.util.spec_from_file_location("eval_heuristic", ROOT / "scripts" / "eval_heuristic.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_heuristic_on_the_anchor_sample_beats_the_reference_floor(shared_dir):
    ev = _eval_module()
    run = ev.evaluate(shared_dir / "corpus" / "anchor-sample", "neurips-2024")
    figs = {(f.system, f.note): f for f in run.figures}
    ours = figs[("heuristic (ours)", "our PDF parsing")]
    gpt_all = figs[("gpt-4-turbo (reference)", "all its results")]
    gpt_same = figs[("gpt-4-turbo (reference)", "same papers")]
    # Our scoring reproduces the reference's published figures from its own CSVs.
    assert (gpt_all.accuracy, gpt_all.auc) == (pytest.approx(0.567, abs=5e-4), pytest.approx(0.612, abs=5e-4))
    assert ours.items == 330 and not run.parse_failures
    # The floor is the reference GPT-4-turbo on the same 330 answers (0.5545 / 0.6102). Measured with
    # heuristic-rules-6: 0.5697 / 0.6647; the precision-first rules give up the justification-quality
    # verdicts the authors' key rewards (the "strict" readout shows what they would buy).
    assert ours.accuracy >= gpt_same.accuracy and ours.auc >= gpt_same.auc
    strict = figs[("heuristic (ours), strict", "justification-quality suggestions as verdicts (not the product's rule)")]
    assert strict.accuracy > ours.accuracy
    # Both halves of the families are reported; together they are the whole sample.
    halves = [figs[("heuristic (ours)", f"{h} families")] for h in ("development", "held-out")]
    assert sum(f.items for f in halves) == ours.items and sum(f.papers for f in halves) == ours.papers
    # The baseline every assessor must beat is on the table, and the ceiling of re-weighting covers every item.
    everything = figs[("accept everything", "p = the prior of the answer type (Yes / No / NA)")]
    assert everything.accuracy == pytest.approx(everything.positives / everything.items, abs=0.01)
    assert figs[("every signal re-weighted", next(n for s, n in figs if s == "every signal re-weighted"))].items == 330


def test_anchor_families_stay_in_one_half(shared_dir):
    from checklist_eval.adversary.corpus_split import anchor_family, anchor_half

    folders = [d.name for d in (shared_dir / "corpus" / "anchor-sample" / "papers").iterdir() if d.is_dir()]
    by_family: dict[str, set[str]] = {}
    for name in folders:
        by_family.setdefault(anchor_family(name), set()).add(anchor_half(name))
    assert all(len(h) == 1 for h in by_family.values())  # a genuine paper and its adversarial copy together
    assert {h for hs in by_family.values() for h in hs} == {"development", "held-out"}
    assert anchor_family("3_adversarial_paper_AutoML") == anchor_family("10_genuine_AutoML") == "AutoML"


PAPER = "corpus/papers-latex/k-mundinger__ramsey-fw-neurips"  # 16 answers: 2 contradicted, 11 unverified


def run_at_80(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "80", "LINES": "24"}
    return subprocess.run([sys.executable, "-m", "checklist_eval", "check", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env)


def test_check_prints_a_summary_that_fits_80x24_naming_what_to_fix_and_read(shared_dir):
    """The answers to fix and to read, each with file:line, come first and fit one 80x24 screen (with the
    command typed and the prompt after it); the table is not printed without --verbose."""
    doc = json.loads(run_check(str(shared_dir / PAPER), "--json").stdout)
    assert doc["assessor"] == "heuristic"  # the default: the offline reading an author gets first
    assert_shape(doc)
    proc = run_at_80(str(shared_dir / PAPER))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.rstrip("\n").splitlines()
    assert len(lines) <= 22 and max(len(ln) for ln in lines) <= 80, proc.stdout
    assert "\u2502" not in proc.stdout  # no table
    n = doc["states"]
    assert f"{n['contradicted']} contradicted, {n['unverified']} unverified, {n['supported']} supported" in lines[1]
    fix, read = lines.index(f"To fix ({n['contradicted']} contradicted):"), \
        next(i for i, ln in enumerate(lines) if ln.startswith(f"To read yourself ({n['unverified']} unverified"))
    assert fix < read
    for item in doc["items"]:
        if item["state"] == "supported":
            continue
        mark = "\u2717" if item["state"] == "contradicted" else "?"
        row = next((ln for ln in lines if ln.startswith(f"  {mark} {item['id']:>2} ")), None)
        listed_more = any("more: see the report" in ln for ln in lines)
        assert row is not None or (item["state"] == "unverified" and listed_more), item["id"]
        if row is not None:
            assert row.endswith(item["location"]) and (fix < lines.index(row) < read) == (mark == "\u2717")
    assert "\u2713 unverified" not in proc.stdout
    assert lines[-1].startswith("Full report: --out DIR")


def test_check_verbose_prints_the_table_then_the_summary_and_quiet_the_line_alone(shared_dir, tmp_path):
    verbose = run_at_80(str(shared_dir / PAPER), "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    table, summary = verbose.stdout.split("Paper body:", 1)
    assert "\u2502" in table and "? unverified" in table and "\u2713 unverified" not in table
    assert "To fix (2 contradicted):" in summary and "\u2502" not in summary
    quiet = run_at_80(str(shared_dir / PAPER), "--quiet", "--out", str(tmp_path / "o"))
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout.count("\n") == 1
    assert quiet.stdout.startswith("C = 0.875: 2 contradicted (fix 8, 12), 11 unverified (read yourself), 3 supported")
    assert (tmp_path / "o" / "report.html").is_file()  # --quiet writes what --out asks for all the same
