"""`codabench export`: the bundle as Codabench reads it, and its scoring program run the way a compute
worker runs it (program in /app/program, reference data in input/ref, the upload in input/res)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

yaml = pytest.importorskip("yaml")  # PyYAML is in the test extra: the bundle is written without it

SECRET = "sk-live-DO-NOT-SHIP-0123456789abcdef"


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "checklist_eval", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def export(tmp_path, *extra, env=None):
    bundle = tmp_path / "bundle.zip"
    r = cli("codabench", "export", "--out", bundle, *extra, env=env)
    assert r.returncode == 0, r.stderr
    dest = tmp_path / "bundle"
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(dest)
    return bundle, dest


def worker_run(program, ref, submission, tmp_path, env=None):
    """The compute worker's layout: /app/program, /app/input/{ref,res}, /app/output."""
    app = tmp_path / "app"
    shutil.rmtree(app, ignore_errors=True)
    shutil.copytree(program, app / "program")
    shutil.copytree(ref, app / "input" / "ref")
    shutil.copytree(submission, app / "input" / "res")
    (app / "output").mkdir()
    run_env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    r = subprocess.run([sys.executable, str(app / "program" / "score.py"), str(app / "input"), str(app / "output")],
                       capture_output=True, text=True, timeout=120, env={**run_env, **(env or {})}, cwd=app)
    return r, app / "output"


def test_bundle_structure_and_scoring_program_offline(tmp_path, fixtures_dir):
    bundle, dest = export(tmp_path, "--title", "Checklist 2026", "--max-submissions-per-day", "2")
    comp = yaml.safe_load((dest / "competition.yaml").read_text())
    assert comp["version"] == 2 and comp["title"] == "Checklist 2026"
    assert comp["enable_detailed_results"] is True
    for key in ("image", "terms", "docker_image"):
        assert comp[key]
    assert (dest / comp["image"]).read_bytes().startswith(b"\x89PNG")
    assert all((dest / p["file"]).is_file() for p in comp["pages"]) and (dest / comp["terms"]).is_file()
    evaluation = next(p for p in comp["pages"] if p["title"] == "Evaluation")
    assert "S = C_G x C_A x (1 - R) x C_T" in (dest / evaluation["file"]).read_text()  # the README's rule
    tasks = {t["index"]: t for t in comp["tasks"]}
    assert [p["name"] for p in comp["phases"]] == ["Development", "Final"]
    for phase in comp["phases"]:
        assert phase["max_submissions_per_day"] == 2 and phase["start"]
        for t in phase["tasks"]:
            assert (dest / tasks[t]["scoring_program"] / "metadata.yaml").is_file()
            assert (dest / tasks[t]["reference_data"] / "config.json").is_file()
    meta = yaml.safe_load((dest / "scoring_program" / "metadata.yaml").read_text())
    assert meta["command"].startswith("python3 /app/program/score.py")
    (board,) = comp["leaderboards"]
    columns = sorted(board["columns"], key=lambda c: c["index"])
    assert [c["key"] for c in columns] == ["S", "C_G", "C_A", "C_T", "R"]  # index 0 ranks: S
    assert len({c["index"] for c in columns}) == len(columns)
    assert all(c["sorting"] in ("asc", "desc") and c["title"] for c in columns)
    # the scoring program, on each fixture, in the worker's layout, offline
    for team, case in (("team-alpha", "GAT"), ("team-beta", "GT"), ("team-gamma", "G")):
        r, output = worker_run(dest / "scoring_program", dest / tasks[0]["reference_data"],
                               fixtures_dir / "submissions" / team, tmp_path)
        assert r.returncode == 0, r.stderr
        scores = json.loads((output / "scores.json").read_text())
        assert set(scores) == {c["key"] for c in columns}
        assert all(isinstance(v, float) for v in scores.values())
        html = (output / "detailed_results.html").read_text()
        assert html.startswith("<!DOCTYPE html>") and "<script" not in html
        # the same numbers the CLI gives for that submission
        cli_scores = json.loads(cli("score", fixtures_dir / "submissions" / team, "--json").stdout)
        assert cli_scores["case"] == case
        assert {k: cli_scores[k] for k in scores} == scores


def test_no_secret_in_bundle_and_llm_phase_needs_the_workers_key(tmp_path, fixtures_dir):
    bundle, dest = export(tmp_path, "--model", "gpt-4o-mini", "--phases", "final",
                          env={"OPENAI_API_KEY": SECRET, "CHECKLIST_EVAL_KEY": SECRET})
    raw = bundle.read_bytes()
    assert SECRET.encode() not in raw
    for path in dest.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text("utf-8", "replace"), path
    comp = yaml.safe_load((dest / "competition.yaml").read_text())
    assert [p["name"] for p in comp["phases"]] == ["Final"]
    config = json.loads((dest / "final_phase" / "reference_data" / "config.json").read_text())
    assert config == {"phase": "final", "assessor": "llm", "model": "gpt-4o-mini", "base_url": None,
                      "api_key_env": "OPENAI_API_KEY"}
    r, output = worker_run(dest / "scoring_program", dest / "final_phase" / "reference_data",
                           fixtures_dir / "submissions" / "team-gamma", tmp_path)
    assert r.returncode == 1 and not (output / "scores.json").exists()
    assert len(r.stderr.strip().splitlines()) == 1 and "OPENAI_API_KEY" in r.stderr


def test_bad_export_flags_exit_2(tmp_path):
    r = cli("codabench", "export", "--out", tmp_path / "b.zip", "--phases", "dev,holdout")
    assert r.returncode == 2 and "--phases" in r.stderr
    r = cli("codabench", "export", "--out", tmp_path / "b.zip", "--max-submissions-per-day", "0")
    assert r.returncode == 2
    assert not (tmp_path / "b.zip").exists()
