"""The in-process runner (tests/cli_runner.py) gives what the installed command gives: the same exit code,
stdout and stderr as ``python -m checklist_eval`` in a process of its own, and it leaves this process as
it found it (environment, working directory, streams, temp folder, redaction registry)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from cli_runner import run_cli

from checklist_eval import redact

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "fixtures" / "submissions" / "team-alpha" / "genuine_sga.tex"


def in_a_process(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "checklist_eval", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("args", [
    ["--version"],  # argparse's SystemExit(0)
    ["check", "--no-such-flag", str(PAPER)],  # argparse's usage error: SystemExit(2), usage on stderr
    ["check", str(ROOT / "no-such-paper.tex")],  # our own one-line error, exit 2
    ["validate", str(ROOT / "fixtures" / "submissions" / "team-alpha")],
    ["check", str(PAPER), "--json"],  # a parse worker from the fork server
])
def test_a_run_in_this_process_prints_what_a_process_prints(args):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHECKLIST_EVAL_"))}
    env["COLUMNS"] = "120"
    here = run_cli(*args, env=env, cwd=ROOT)
    code, out, err = in_a_process(*args, env=env)
    assert (here.returncode, here.stdout, here.stderr) == (code, out, err)
    if args[-1] == "--json":
        assert json.loads(here.stdout)["items"]


def test_a_run_leaves_this_process_as_it_found_it(tmp_path, monkeypatch):
    monkeypatch.setenv("CE_RUNNER_PROBE", "kept")
    redact.register("sk-runner-probe-0123456789")
    before = (dict(os.environ), os.getcwd(), sys.stdout, sys.stderr, sys.stdin, tempfile.tempdir,
              set(redact._secrets))
    (tmp_path / "tmpdir").mkdir()
    run = run_cli("check", str(PAPER), "--assessor", "llm", "--model", "gpt-4o-mini", "--base-url",
                  "http://127.0.0.1:9/v1", "--dry-run", cwd=tmp_path,
                  env_extra={"OPENAI_API_KEY": "sk-other-user-key-99999999", "TMPDIR": str(tmp_path / "tmpdir"),
                             "CE_RUNNER_PROBE": "changed"})
    assert run.returncode == 0, run
    after = (dict(os.environ), os.getcwd(), sys.stdout, sys.stderr, sys.stdin, tempfile.tempdir,
             set(redact._secrets))
    assert after == before
    # the run registered only its own user's key, as a new process does: this process's key stays unmasked
    assert redact.redact("sk-runner-probe-0123456789") == "***"
    assert redact.redact("sk-other-user-key-99999999") == "sk-other-user-key-99999999"


def test_a_run_sees_only_the_environment_it_is_given(tmp_path):
    # The key comes from the run's environment only: without it the LLM check stops on the missing key.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHECKLIST_EVAL_"))}
    args = ["check", str(PAPER), "--assessor", "llm", "--model", "gpt-4o-mini", "--no-cache"]
    missing = run_cli(*args, env=env, cwd=tmp_path)
    code, _, err = in_a_process(*args, env=env, cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (code, err) and code == 2 and "OPENAI_API_KEY" in err
