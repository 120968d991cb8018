"""`codabench export`: the bundle as Codabench reads it, and its scoring program run the way a compute
worker runs it (program in /app/program, reference data in input/ref, the upload in input/res, a stock
Python with nothing installed but what the bundle installs)."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from types import SimpleNamespace

from cli_runner import run_cli
import pytest
from helpers import one_error_line

from checklist_eval.redact import find_provider_keys
from checklist_eval.testing import MockServer

yaml = pytest.importorskip("yaml")  # PyYAML is in the test extra: the bundle is written without it

PROVIDER_KEY = "sk-proj-Zq8vN3xK1mP0aB7cD2eF5gH9jL4nR6tW8yU0iO3sA1dG"  # shaped like OpenAI's own project key
CAPPED_KEY = "sk-Lt7Qm2Xr9Vw4Bz6Nc1Kd3F"  # shaped like a LiteLLM virtual key (sk- and 22 characters)
COLUMN_KEYS = ["S", "C_G", "C_A", "C_T", "R"]

# The keys Codabench's v2 unpacker and the serializers it hands them to read (codalab/codabench:
# src/apps/competitions/unpackers/v2.py and base_unpacker.py, api/serializers/leaderboards.py).
TOP_KEYS = {"version", "title", "image", "registration_auto_approve", "docker_image", "enable_detailed_results",
            "show_detailed_results_in_submission_panel", "show_detailed_results_in_leaderboard",
            "auto_run_submissions", "can_participants_make_submissions_public", "make_programs_available",
            "make_input_data_available", "description", "competition_type", "fact_sheet", "reward",
            "contact_email", "forum_enabled", "pages", "tasks", "solutions", "terms", "queue", "phases",
            "leaderboards"}
PAGE_KEYS = {"title", "file"}
TASK_KEYS = {"index", "key", "name", "description", "ingestion_only_during_scoring", "ingestion_program",
             "input_data", "scoring_program", "reference_data"}
PHASE_KEYS = {"index", "name", "description", "start", "end", "max_submissions_per_day", "max_submissions",
              "auto_migrate_to_this_phase", "hide_output", "hide_prediction_output", "hide_score_output",
              "tasks", "execution_time_limit", "public_data", "starting_kit"}
LEADERBOARD_KEYS = {"primary_index", "title", "key", "columns", "hidden", "submission_rule"}
COLUMN_FIELDS = {"computation", "computation_indexes", "title", "key", "sorting", "index", "hidden", "precision"}


def cli(*args, env=None, cwd=None):
    run = run_cli(*map(str, args), cwd=cwd, env={**os.environ, **(env or {})})
    return SimpleNamespace(code=run.returncode, out=run.stdout, err=run.stderr)


def export(tmp_path, *extra, env=None, name="bundle"):
    bundle = tmp_path / f"{name}.zip"
    r = cli("codabench", "export", "--out", bundle, *extra, env=env)
    assert r.code == 0, r.err
    dest = tmp_path / name
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(dest)
    return bundle, dest


def key_file(tmp_path, key, name="key.txt"):
    path = tmp_path / name
    path.write_text(key + "\n")
    return path


def worker_run(program, ref, submission, tmp_path, python=sys.executable, env=None):
    """The compute worker's layout: /app/program, /app/input/{ref,res}, /app/output; cwd /app/program."""
    app = tmp_path / "app"
    shutil.rmtree(app, ignore_errors=True)
    shutil.copytree(program, app / "program")
    shutil.copytree(ref, app / "input" / "ref")
    if submission.is_dir():
        shutil.copytree(submission, app / "input" / "res")
    else:
        (app / "input" / "res").mkdir(parents=True)
        shutil.copy(submission, app / "input" / "res")
    (app / "output").mkdir()
    run_env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OPENAI_", "CHECKLIST_EVAL_")) and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    r = subprocess.run([str(python), str(app / "program" / "score.py"), str(app / "input"), str(app / "output")],
                       capture_output=True, text=True, timeout=900, env={**run_env, **(env or {})},
                       cwd=app / "program")
    return r, app / "output"


def bundle_texts(dest: Path):
    """(where, text) of every file of an unpacked bundle, and of every file inside its wheel."""
    for path in sorted(p for p in dest.rglob("*") if p.is_file()):
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as zf:
                for n in zf.namelist():
                    yield f"{path.name}!{n}", zf.read(n).decode("latin-1")
        else:
            yield str(path.relative_to(dest)), path.read_bytes().decode("latin-1")


def test_competition_yaml_holds_only_codabench_keys_and_points_at_real_files(tmp_path):
    bundle, dest = export(tmp_path, "--title", "Checklist 2026", "--max-submissions-per-day", "2")
    comp = yaml.safe_load((dest / "competition.yaml").read_text())
    assert set(comp) <= TOP_KEYS, set(comp) - TOP_KEYS
    assert comp["version"] == 2 and comp["title"] == "Checklist 2026" and comp["enable_detailed_results"] is True
    assert comp["docker_image"].startswith("python:3.") and comp["docker_image"].endswith("-slim")
    assert (dest / comp["image"]).read_bytes().startswith(b"\x89PNG")
    for page in comp["pages"]:
        assert set(page) <= PAGE_KEYS and (dest / page["file"]).read_text().strip()
    assert (dest / comp["terms"]).is_file()
    tasks = {t["index"]: t for t in comp["tasks"]}
    assert all(set(t) <= TASK_KEYS for t in tasks.values())
    assert [p["name"] for p in comp["phases"]] == ["Development", "Final"]
    for phase in comp["phases"]:
        assert set(phase) <= PHASE_KEYS, set(phase) - PHASE_KEYS
        assert phase["max_submissions_per_day"] == 2 and phase["start"]
        kit = dest / phase["starting_kit"]  # a folder: Codabench zips it for download
        assert sorted(p.name for p in kit.iterdir()) == ["adversarial_sga.tex", "genuine_sga.tex",
                                                           "truth_adversarial_sga.tex"]
        for t in phase["tasks"]:
            assert (dest / tasks[t]["scoring_program"] / "metadata.yaml").is_file()
            assert (dest / tasks[t]["reference_data"] / "config.json").is_file()
    meta = yaml.safe_load((dest / "scoring_program" / "metadata.yaml").read_text())
    assert meta == {"command": "python3 /app/program/score.py /app/input /app/output"}
    (board,) = comp["leaderboards"]
    assert set(board) <= LEADERBOARD_KEYS and board["primary_index"] == 0
    columns = sorted(board["columns"], key=lambda c: c["index"])
    assert all(set(c) <= COLUMN_FIELDS for c in columns)
    assert [c["key"] for c in columns] == COLUMN_KEYS  # primary_index 0 ranks: S
    assert len({c["index"] for c in columns}) == len(columns)
    assert all(c["sorting"] in ("asc", "desc") and c["title"] for c in columns)
    assert "queue" not in comp


def test_sample_submission_is_the_fixture_triplet(tmp_path, fixtures_dir):
    _, dest = export(tmp_path)
    for path in (fixtures_dir / "submissions" / "team-alpha").iterdir():
        assert (dest / "sample_submission" / path.name).read_bytes() == path.read_bytes()


def test_pages_are_for_participants(tmp_path):
    from checklist_eval.challenge.codabench_pages import assessor_figures, measured_summary
    from checklist_eval.challenge.scoring import rules_markdown

    _, dest = export(tmp_path)
    comp = yaml.safe_load((dest / "competition.yaml").read_text())
    pages = {p["title"]: (dest / p["file"]).read_text() for p in comp["pages"]}
    assert list(pages) == ["Overview", "Submission format", "Evaluation", "Known issues of the assessor", "Terms"]
    assert rules_markdown() in pages["Overview"]  # the scorer's own text (tests/test_rules_text.py evaluates it)
    assert "starting kit" in pages["Submission format"] and "genuine_sga.tex" in pages["Submission format"]
    assert "unverifiable" in pages["Evaluation"] and "without any language model" in pages["Evaluation"]
    flagged = assessor_figures()["heuristic"]["honest_flagged"]
    # the measuring script's figures with the trivial baseline beside them, in the documentation's words
    assert measured_summary() in pages["Known issues of the assessor"]
    accept = assessor_figures()["heuristic"]["accept_everything_accuracy"]["accuracy"]
    assert f"accepting every answer agrees on {100 * accept:.1f}%" in measured_summary()
    docs = Path(__file__).resolve().parents[1] / "docs" / "offline-rules.md"
    assert measured_summary() in docs.read_text(encoding="utf-8")
    assert f"{100 * flagged['rate']:.1f}%" in pages["Known issues of the assessor"]
    assert f"{flagged['k']} of {flagged['n']}" in pages["Known issues of the assessor"]
    for title, text in pages.items():  # written for authors: no commands, flags or module names
        for developer_word in ("checklist-eval", "checklist_eval", "pip ", "python", ".venv", "$ "):
            assert developer_word not in text, (title, developer_word)
        assert not re.search(r"--[a-z]", text), title  # no command-line flags


def test_scoring_program_in_the_worker_layout_matches_the_cli(tmp_path, fixtures_dir):
    _, dest = export(tmp_path)
    for team, case in (("team-alpha", "GAT"), ("team-beta", "GT"), ("team-gamma", "G")):
        r, output = worker_run(dest / "scoring_program", dest / "dev_phase" / "reference_data",
                               fixtures_dir / "submissions" / team, tmp_path)
        assert r.returncode == 0, r.stderr
        scores = json.loads((output / "scores.json").read_text())
        assert list(scores) == COLUMN_KEYS and all(isinstance(v, float) for v in scores.values())
        html = (output / "detailed_results.html").read_text()
        assert html.startswith("<!DOCTYPE html>") and "<script" not in html
        title = "Sketched Gradient Averaging for Small Federated Clients"
        assert f"<title>{title}</title>" in html and f"<h1>{title}</h1>" in html
        assert "Submission res" not in html
        cli_scores = json.loads(cli("score", fixtures_dir / "submissions" / team, "--json").out)
        assert cli_scores["case"] == case
        assert {k: cli_scores[k] for k in scores} == scores


@pytest.fixture(scope="session")
def fresh_python(tmp_path_factory):
    """A new virtual environment with nothing installed: a stock python image as the worker runs it."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import checklist_eval"], capture_output=True, cwd=venv)
    assert probe.returncode != 0  # the repository is not on its path
    return python


def test_bundle_scores_in_a_fresh_venv_with_the_heuristic_and_a_capped_key(tmp_path, fixtures_dir, fresh_python):
    """The bundle alone, unpacked elsewhere: its score.py installs its wheel into a Python that has
    nothing, then scores the sample GAT triplet; then an LLM phase through the capped key it carries,
    the loopback server standing in for the LiteLLM proxy (it refuses any other key)."""
    _, dest = export(tmp_path / "h", name="heuristic")
    sample = dest / "sample_submission"
    r, output = worker_run(dest / "scoring_program", dest / "dev_phase" / "reference_data", sample, tmp_path,
                           python=fresh_python)
    assert r.returncode == 0, r.stderr
    heuristic = json.loads((output / "scores.json").read_text())
    assert list(heuristic) == COLUMN_KEYS and heuristic["C_G"] > 0
    print("fresh venv, heuristic:", r.stdout.strip())
    with MockServer(require_api_key=CAPPED_KEY) as server:
        _, dest = export(tmp_path / "l", "--model", "mock-model", "--base-url", server.base_url, "--api-key-file",
                         key_file(tmp_path, CAPPED_KEY), "--key-is-capped", "--spend-cap", "25", "--phases", "final",
                         name="llm", env={"OPENAI_API_KEY": PROVIDER_KEY})
        r, output = worker_run(dest / "scoring_program", dest / "final_phase" / "reference_data", sample,
                               tmp_path, python=fresh_python)
        assert r.returncode == 0, r.stderr
        stats = server.stats
    llm = json.loads((output / "scores.json").read_text())
    assert list(llm) == COLUMN_KEYS
    # every question of G, A and T went to the model, each time with the capped key
    assert stats.chat_requests >= 3 * 15 and set(stats.by_status) == {200}
    print("fresh venv, llm via capped key:", r.stdout.strip())
    assert CAPPED_KEY not in r.stdout + r.stderr + (output / "detailed_results.html").read_text()


def test_a_provider_key_is_refused_and_never_shipped(tmp_path):
    out = tmp_path / "b.zip"
    for key in (PROVIDER_KEY, "sk-ant-api03-" + "x" * 40, "AIza" + "B" * 35, CAPPED_KEY):
        r = cli("codabench", "export", "--out", out, "--model", "gpt-4o-mini", "--api-key-file",
                key_file(tmp_path, key), "--spend-cap", "50")
        one_error_line(SimpleNamespace(code=r.code, err=r.err), "key.txt", "--key-is-capped")
        assert key not in r.err and not out.exists()
    # a capped key declared as such ships, and nothing else shaped like a provider key does
    _, dest = export(tmp_path, "--model", "gpt-4o-mini", "--base-url", "https://proxy.example.org/v1",
                     "--api-key-file", key_file(tmp_path, CAPPED_KEY), "--key-is-capped", "--spend-cap", "50",
                     env={"OPENAI_API_KEY": PROVIDER_KEY, "CHECKLIST_EVAL_KEY": PROVIDER_KEY})
    holders = []
    for where, text in bundle_texts(dest):
        assert PROVIDER_KEY not in text, where
        assert [k for k in find_provider_keys(text) if k != CAPPED_KEY] == [], where
        if CAPPED_KEY in text:
            holders.append(where)
    assert holders == ["dev_phase/reference_data/api_key", "final_phase/reference_data/api_key"]
    config = json.loads((dest / "final_phase" / "reference_data" / "config.json").read_text())
    assert config == {"phase": "final", "assessor": "llm", "model": "gpt-4o-mini",
                      "base_url": "https://proxy.example.org/v1", "credential": "bundle", "api_key_file": "api_key",
                      "spend_cap_usd": 50.0}
    assert "50 USD" in (dest / "ORGANIZER.md").read_text() and "50 USD" in (dest / "pages/evaluation.md").read_text()


def test_the_bundle_check_finds_a_planted_key(tmp_path):
    from checklist_eval.challenge.codabench import BundleOptions, assert_no_provider_key, bundle_members
    from checklist_eval.errors import InputError

    members = bundle_members(BundleOptions())
    assert_no_provider_key(members, None)
    planted = dict(members, **{"pages/overview.md": members["pages/overview.md"] + PROVIDER_KEY.encode()})
    with pytest.raises(InputError, match="pages/overview.md"):
        assert_no_provider_key(planted, None)


def test_own_queue_reads_the_key_on_the_worker_host(tmp_path, fixtures_dir):
    with MockServer(require_api_key=CAPPED_KEY) as server:
        _, dest = export(tmp_path, "--model", "mock-model", "--base-url", server.base_url, "--queue",
                         "a1b2c3d4-queue-vhost", "--phases", "dev")
        comp = yaml.safe_load((dest / "competition.yaml").read_text())
        assert comp["queue"] == "a1b2c3d4-queue-vhost"
        ref = dest / "dev_phase" / "reference_data"
        config = json.loads((ref / "config.json").read_text())
        assert config["credential"] == "worker" and config["api_key_file"] == "/app/data/checklist-eval/api_key"
        assert not (ref / "api_key").exists()
        assert "HOST_DIRECTORY/data/checklist-eval/api_key" in (dest / "ORGANIZER.md").read_text()
        submission = fixtures_dir / "submissions" / "team-gamma"
        # no key on the host: one line saying where it must be
        r, output = worker_run(dest / "scoring_program", ref, submission, tmp_path)
        assert r.returncode == 1 and not (output / "scores.json").exists()
        assert len(r.stderr.strip().splitlines()) == 1 and "/app/data/checklist-eval/api_key" in r.stderr
        # the host's file, where the worker mounts HOST_DIRECTORY/data (here a folder of the test)
        mounted = key_file(tmp_path, CAPPED_KEY, "host_key")
        config["api_key_file"] = str(mounted)
        (ref / "config.json").write_text(json.dumps(config))
        r, output = worker_run(dest / "scoring_program", ref, submission, tmp_path)
        assert r.returncode == 0, r.stderr
        assert list(json.loads((output / "scores.json").read_text())) == COLUMN_KEYS


def _gzip_bomb(path: Path, unpacked: int) -> Path:
    """A .tar.gz of one ``main.tex`` of ``unpacked`` zero bytes, about 1000 times smaller: gzip members
    (one per MiB, all alike) are concatenated, which gzip readers accept as one stream."""
    mib = 2**20
    header = tarfile.TarInfo("main.tex")
    header.size = unpacked
    chunk = gzip.compress(bytes(mib), compresslevel=9, mtime=0)
    with path.open("wb") as fh:
        fh.write(gzip.compress(header.tobuf(tarfile.USTAR_FORMAT), mtime=0))
        for _ in range(unpacked // mib):
            fh.write(chunk)
    return path


def test_an_archive_bomb_fails_its_submission_in_one_line(tmp_path):
    _, dest = export(tmp_path)
    res = tmp_path / "bomb"
    res.mkdir()
    bomb = _gzip_bomb(res / "genuine_bomb.tar.gz", 2146 * 2**20)  # 2.25 GB unpacked
    assert bomb.stat().st_size < 3 * 10**6
    r, output = worker_run(dest / "scoring_program", dest / "dev_phase" / "reference_data", res, tmp_path)
    assert r.returncode == 1 and not (output / "scores.json").exists()
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("checklist-eval scoring: ") and "genuine_bomb.tar.gz" in lines[0]
    assert "MemoryError" not in r.stderr and "Traceback" not in r.stderr


def test_bad_export_flags_exit_2(tmp_path):
    out = tmp_path / "b.zip"
    cases = [
        (("--phases", "dev,holdout"), ("--phases",)),
        (("--max-submissions-per-day", "0"), ("--max-submissions-per-day",)),
        (("--model", "gpt-4o-mini"), ("--api-key-file", "--queue")),  # a public worker has no key
        (("--model", "m", "--api-key-file", key_file(tmp_path, "lk-capped-0123456789")), ("--spend-cap",)),
        (("--api-key-file", key_file(tmp_path, "lk-capped-0123456789")), ("--model",)),
        (("--model", "m", "--queue", "q", "--worker-key-path", "/etc/key"), ("/app/data",)),
        (("--model", "m", "--api-key-file", tmp_path / "missing.txt", "--spend-cap", "5"), ("missing.txt",)),
    ]
    for flags, words in cases:
        r = cli("codabench", "export", "--out", out, *flags)
        one_error_line(SimpleNamespace(code=r.code, err=r.err), *words)
        assert not out.exists()
