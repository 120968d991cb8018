"""What `check`, `score` and `batch` print in an 80-column terminal, as typed: a summary first that says
what to act on (with file:line), the tables only with --verbose, the one line alone with --quiet.

The 80x24 capture of `check` on a shared paper is made in a real tmux pane and kept in
``test-artifacts/terminal`` (and ``docs/img/check-80x24.txt`` is that capture, committed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("CHECKLIST_EVAL_ARTIFACTS", ROOT / "test-artifacts")) / "terminal"
PAPER = "corpus/papers-latex/k-mundinger__ramsey-fw-neurips"
BOX = "\u2502"  # a table's column rule
UNICODE_TEAM = "Équipe Zoé"


def cli(*args: object) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "80", "LINES": "24", "OPENAI_API_KEY": ""}
    return subprocess.run([sys.executable, "-m", "checklist_eval", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=env)


def lines_of(text: str) -> list[str]:
    return text.rstrip("\n").splitlines()


def test_score_prints_a_participants_summary_in_80_columns(fixtures_dir):
    run = cli("score", fixtures_dir / "submissions" / "team-alpha")
    assert run.returncode == 0, run.stderr
    lines = lines_of(run.stdout)
    assert len(lines) <= 22 and max(map(len, lines)) <= 80, run.stdout
    assert BOX not in run.stdout  # the tables come with --verbose
    assert lines[0] == "Submission team-alpha (GAT): S = 0.0000"
    assert lines[1] == "S = C_G 1.000 \u00d7 C_A 0.812 \u00d7 (1 \u2212 R 1.000) \u00d7 C_T 1.000"
    # S = 0 said by the factor that is 0, and A's caught answers named so, with where they are
    assert "S = 0 because R = 1, so 1 \u2212 R = 0" in " ".join(run.stdout.split())
    caught = lines.index("A: planted answers caught (3 of 3):")
    assert lines[caught + 1].startswith("  \u2717  2 Limitations") and lines[caught + 1].endswith(
        "adversarial_sga.tex:58")
    assert "Must fix" not in run.stdout and "must fix" not in run.stdout
    verbose = cli("score", fixtures_dir / "submissions" / "team-alpha", "--verbose")
    assert "A vs T (per question)" in verbose.stdout and BOX in verbose.stdout
    quiet = cli("score", fixtures_dir / "submissions" / "team-alpha", "--quiet")
    assert quiet.stdout == ("team-alpha (GAT): S = 0.0000 (C_G 1.000, C_A 0.812, C_T 1.000, R 1.000)\n")


def test_s_zero_is_said_by_the_factor_that_is_zero(fixtures_dir, tmp_path):
    """A submission whose every planted answer is caught (team-alpha with A's Limitations answer as honest as
    T's): S = 0 because R = 1, said in those words."""
    sub = tmp_path / "team-alpha"
    shutil.copytree(fixtures_dir / "submissions" / "team-alpha", sub)
    adversarial = sub / "adversarial_sga.tex"
    text = adversarial.read_text("utf-8")
    planted = "the authors?\n    \\item[] Answer: \\answerYes{}"
    assert text.count(planted) == 1
    adversarial.write_text(text.replace(planted, "the authors?\n    \\item[] Answer: \\answerNo{}"), "utf-8")
    run = cli("score", sub)
    assert run.returncode == 0, run.stderr
    lines = lines_of(run.stdout)
    assert len(lines) <= 22 and max(map(len, lines)) <= 80, run.stdout
    assert lines[0] == "Submission team-alpha (GAT): S = 0.0000"
    assert lines[1] == "S = C_G 1.000 \u00d7 C_A 0.875 \u00d7 (1 \u2212 R 1.000) \u00d7 C_T 1.000"
    assert "S = 0 because R = 1, so 1 \u2212 R = 0" in " ".join(run.stdout.split())
    assert "A: planted answers caught (2 of 2):" in lines
    gamma = cli("score", fixtures_dir / "submissions" / "team-gamma")
    assert "S = 0: a submission of G alone" in gamma.stdout


def test_batch_prints_its_counts_best_rows_and_each_failure_in_one_80_column_line(submissions_copy, tmp_path):
    shutil.copytree(submissions_copy / "team-gamma", submissions_copy / UNICODE_TEAM)
    (submissions_copy / "broken").mkdir()
    (submissions_copy / "broken" / "genuine_x.tex").write_text("junk\n")
    out = tmp_path / "results"
    run = cli("batch", submissions_copy, "--out", out)
    assert run.returncode == 4, run.stderr
    lines = lines_of(run.stdout)
    assert max(map(len, lines[:-1])) <= 80 and BOX not in run.stdout, run.stdout
    assert lines[0].startswith("5 submissions: 4 scored, 0 already done, 1 failed (")
    (failed,) = [ln for ln in lines if ln.startswith("failed ")]
    assert failed.startswith("failed broken: ") and "genuine_x.tex: not LaTeX" in failed
    # the team is shown by the name it gave, beside the safe id its folder and URLs use
    assert any(f"{UNICODE_TEAM} (Equipe_Zoe)" in ln for ln in lines) and (out / "submissions" / "Equipe_Zoe").is_dir()
    assert lines[-1] == f"results in {out} (failures in {out}/failures.jsonl)"
    verbose = cli("batch", submissions_copy, "--out", out, "--verbose")
    assert "C_G 1.000" in verbose.stdout


@pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux installed (apt-get install tmux)")
def test_check_summary_fits_one_80x24_tmux_screen(shared_dir, tmp_path):
    """Typed in a real 80x24 terminal: the whole summary, from the counts to the pointer to --out, is on
    the one screen with the command above it, and the capture is kept."""
    session = f"ce-{os.getpid()}"
    tmux = ["tmux", "-S", str(tmp_path / "tmux.sock")]
    paper = os.path.relpath(shared_dir / PAPER, ROOT)  # as an author types it: ../shared/...
    env = {**os.environ, "PS1": "$ ", "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("COLUMNS"), env.pop("LINES")  # the pane's own size decides, as in a real terminal
    subprocess.run([*tmux, "new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-c", str(ROOT),
                    "bash --norc --noprofile"], check=True, env=env)
    screen = ""
    try:
        subprocess.run([*tmux, "send-keys", "-t", session, "PS1='$ '; clear", "Enter"], check=True)
        time.sleep(0.5)
        subprocess.run([*tmux, "send-keys", "-t", session, f"checklist-eval check {paper}", "Enter"], check=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", session], capture_output=True,
                                    text=True, check=True).stdout
            shown = screen.rstrip().splitlines()
            if "Full report:" in screen and shown and shown[-1].strip() == "$":
                break
            time.sleep(0.5)
        # -J joins the rows tmux wrapped: a line printed wider than the pane shows here as one long line
        joined = subprocess.run([*tmux, "capture-pane", "-p", "-J", "-t", session], capture_output=True,
                                text=True, check=True).stdout
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "check-80x24.txt").write_text(screen)
    rows = screen.splitlines()
    typed = f"$ checklist-eval check {paper}"
    printed = [ln for ln in joined.splitlines() if not ln.startswith(typed)]
    assert printed and all(len(ln.rstrip()) <= 80 for ln in printed), joined  # no line of the summary wrapped
    assert "".join(rows[:2]).startswith(typed), rows[:2]  # the command (two rows of 80) is still on the screen
    text = "\n".join(rows)
    for needed in ("C = 0.875 \u00b7 16 answers: 2 contradicted, 11 unverified, 3 supported",
                   "To fix (2 contradicted):", "checklist.tex:141", "To read yourself (11 unverified",
                   "Full report: --out DIR"):
        assert needed in text, (needed, screen)
