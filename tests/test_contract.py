"""Every CSV and JSON output is its model's dump: the columns and keys the CLI prints or writes, run as
typed, equal the model's fields and the tables of the outputs page (docs/outputs.md, generated from the models)."""

from __future__ import annotations

import csv
import importlib
import json
import re
import shutil
import sys
from pathlib import Path

from cli_runner import run_cli
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs_hooks"))

import outputs_schema  # noqa: E402


def documented() -> dict[str, list[str]]:
    """The outputs page (generated from OUTPUTS in docs_hooks/outputs_schema.py): model path -> the keys it
    documents, in order, read back from the table the site shows."""
    section = outputs_schema.summary_table()
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].startswith("`") and "." in cells[1]:
            rows[cells[1].strip("`")] = re.findall(r"`([^`]+)`", cells[2])
    return rows


def fields(ref: str) -> list[str]:
    module, name = ref.rsplit(".", 1)
    return list(getattr(importlib.import_module(f"checklist_eval.{module}"), name).model_fields)


def test_outputs_page_documents_every_model_exactly():
    docs = documented()
    assert len(docs) == len(outputs_schema.OUTPUTS) >= 21
    assert "<!-- outputs-schema -->" in (ROOT / "docs" / "outputs.md").read_text(encoding="utf-8")
    for ref, keys in docs.items():
        assert keys == fields(ref), ref


def cli(*args: str, cwd: Path, code: int = 0) -> str:
    proc = run_cli(*args, cwd=cwd)
    assert proc.returncode == code, proc.stderr
    return proc.stdout


def header(path: Path) -> list[str]:
    with path.open(encoding="utf-8", newline="") as fh:
        return next(csv.reader(fh))


def jsonl_keys(path: Path) -> list[list[str]]:
    return [list(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def batch(tmp_path_factory, fixtures_dir=ROOT / "fixtures"):
    """A heuristic batch of the fixture submissions plus one that cannot be parsed."""
    tmp = tmp_path_factory.mktemp("contract")
    subs = tmp / "subs"
    shutil.copytree(fixtures_dir / "submissions", subs)
    (subs / "team-broken").mkdir()
    (subs / "team-broken" / "genuine_x.tex").write_text("no checklist here\n")
    out = tmp / "results"
    # exit 4: the batch ran to its end, one submission failed
    printed = json.loads(cli("batch", str(subs), "--out", str(out), "--quiet", "--json", cwd=tmp, code=4))
    return tmp, subs, out, printed


def test_batch_outputs_are_their_models(batch):
    tmp, _, out, printed = batch
    docs = documented()
    assert list(printed) == fields("challenge.batch.BatchCounts") == docs["challenge.batch.BatchCounts"]
    assert header(out / "records.csv") == fields("challenge.records.Record") == docs["challenge.records.Record"]
    assert {tuple(k) for k in jsonl_keys(out / "records.jsonl")} == {tuple(fields("challenge.records.Record"))}
    assert header(out / "scores.csv") == fields("challenge.scoring.ScoreRow") == docs["challenge.scoring.ScoreRow"]
    failures = jsonl_keys(out / "failures.jsonl")
    assert failures and all(k == fields("challenge.results.leaderboard.Failure") == docs["challenge.results.leaderboard.Failure"] for k in failures)
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary) == fields("challenge.batch.BatchSummary") == docs["challenge.batch.BatchSummary"]
    assert all(list(s) == fields("challenge.scoring.PublicScore") for s in summary["scores"]) and summary["scores"]
    assert all(list(f) == fields("challenge.results.leaderboard.Failure") for f in summary["failures"]) and summary["failures"]
    settings = json.loads((out / "run_settings.json").read_text())
    assert list(settings) == fields("challenge.results.settings.RunSettings") == docs["challenge.results.settings.RunSettings"]


def test_rescore_and_leaderboard_outputs_are_their_models(batch):
    tmp, _, out, _ = batch
    docs = documented()
    rescored = json.loads(cli("rescore", str(out), "--json", cwd=tmp))
    assert list(rescored) == fields("challenge.scoring.RescoreReport") == docs["challenge.scoring.RescoreReport"]
    assert all(list(s) == docs["challenge.scoring.PublicScore"] for s in rescored["submissions"]) and rescored["submissions"]
    board = json.loads(cli("leaderboard", str(out), "--csv", str(tmp / "lb.csv"), "--json", cwd=tmp))
    assert board and all(list(r) == fields("challenge.results.leaderboard.LeaderboardRow") == docs["challenge.results.leaderboard.LeaderboardRow"] for r in board)
    assert header(tmp / "lb.csv") == docs["challenge.results.leaderboard.LeaderboardRow"]
    with (tmp / "lb.csv").open(newline="") as fh:
        failed = [r for r in csv.DictReader(fh) if r["status"] != "scored"]
    assert [r["submission_id"] for r in failed] == ["team-broken"] and failed[0]["rank"] == ""


def test_score_validate_parse_check_outputs_are_their_models(batch, tmp_path):
    tmp, subs, _, _ = batch
    docs = documented()
    team = subs / "team-alpha"
    scored = json.loads(cli("score", str(team), "--json", cwd=tmp))
    assert list(scored) == fields("challenge.scoring.ScoreReport") == docs["challenge.scoring.ScoreReport"]
    assert list(scored["usage"]) == fields("models.Usage")
    valid = json.loads(cli("validate", str(team), "--json", cwd=tmp))
    assert list(valid) == fields("summaries.ValidationSummary") == docs["summaries.ValidationSummary"]
    assert all(list(p) == fields("summaries.PaperSummary") for p in valid["papers"].values())
    paper = team / "genuine_sga.tex"
    parsed = json.loads(cli("parse", str(paper), "--json", cwd=tmp))
    assert list(parsed) == docs["summaries.ParseDocument"][:-1]  # body only with --with-body
    with_body = json.loads(cli("parse", str(paper), "--json", "--with-body", cwd=tmp))
    assert list(with_body) == fields("summaries.ParseDocument") == docs["summaries.ParseDocument"]
    assert all(list(it) == fields("summaries.ParsedItem") == docs["summaries.ParsedItem"] for it in parsed["items"])
    assert all(it["file"] == "genuine_sga.tex" and it["line"] > 0 and it["page"] is None
               for it in parsed["items"] if it["answer"])
    checked = json.loads(cli("check", str(paper), "--json", "--out", str(tmp_path / "c"), cwd=tmp))
    assert list(checked) == fields("summaries.CheckResult") == docs["summaries.CheckResult"]
    assert list(checked["usage"]) == fields("summaries.CheckUsage")
    assert all(list(it) == fields("summaries.CheckedItem") for it in checked["items"])
    assert json.loads((tmp_path / "c" / "check.json").read_text()) == checked


def test_assessor_eval_trials_csv_and_report_are_their_models(batch, tmp_path):
    tmp, _, out, _ = batch
    docs = documented()
    report = json.loads(cli("assessor-eval", str(out), "--bootstrap", "0", "--json", "--out", str(tmp_path / "ae"),
                            cwd=tmp))
    assert header(tmp_path / "ae" / "trials.csv") == fields("adversary.evaluation.Trial") == docs["adversary.evaluation.Trial"]
    optional = {"by_question", "prevalence_sweep"}  # only when asked for
    assert list(report) == [k for k in docs["adversary.evaluation.EvaluationReport"] if k not in optional]
    assert json.loads((tmp_path / "ae" / "summary.json").read_text()) == [report]


def test_dry_run_plans_are_their_model(batch):
    tmp, subs, _, _ = batch
    docs = documented()
    llm_only = {"note", "reasoning_tokens", "max_cost", "already_cached"}
    plan = json.loads(cli("batch", str(subs), "--out", str(tmp / "plan"), "--dry-run", "--json", cwd=tmp))
    assert list(plan) == [k for k in docs["challenge.costplan.CostPlan"] if k not in llm_only]
    assert [f["submission_id"] for f in plan["failures"]] == ["team-broken"]
    assert all(list(f) == docs["challenge.results.leaderboard.Failure"] for f in plan["failures"])
    llm_paper = ("truncated", "body_share", "body_share_min", "reasoning_tokens")
    assert all(list(p) == [k for k in docs["challenge.costplan.PlannedPaper"] if k not in llm_paper]
               for p in plan["papers"])
    llm = json.loads(cli("score", str(subs / "team-beta"), "--dry-run", "--json", "--assessor", "llm",
                         "--model", "gpt-4o-mini", cwd=tmp))
    assert list(llm) == [k for k in docs["challenge.costplan.CostPlan"] if k not in ("items_judged_offline", "failures")]
    assert all(list(p) == [k for k in docs["challenge.costplan.PlannedPaper"] if k != "items_judged_offline"]
               for p in llm["papers"])
