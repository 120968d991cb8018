"""The command line as a user meets it: usage on a bad flag, unusable --out, inputs that cannot be
judged (no body, several papers), validate's warnings, records file or results folder, assessor-eval
on different trial sets, help without markup. Every test calls the CLI as typed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
from cli_runner import CliRun, run_cli
import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ["parse", "check", "validate", "score", "batch", "rescore", "leaderboard", "detection",
            "assessor-eval", "mock-server", "logs"]


def cli(*args: str, cwd: Path = ROOT) -> CliRun:
    return run_cli(*args, cwd=cwd)


def one_line_error(proc: CliRun, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in lines[0]


@pytest.fixture()
def subs(submissions_copy):
    return submissions_copy


@pytest.fixture()
def results(subs, tmp_path):
    out = tmp_path / "results"
    assert cli("batch", str(subs), "--out", str(out), "--quiet").returncode == 0
    return out


@pytest.mark.parametrize("command,args", [("check", ["x"]), ("score", ["x"]), ("batch", ["x", "--out", "y"]),
                                          ("leaderboard", ["x"]), ("rescore", ["x"]), ("validate", ["x"]),
                                          ("logs", [])])
def test_a_bad_flag_prints_that_subcommands_usage(command, args):
    proc = cli(command, *args, "--no-such-flag")
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"usage: checklist-eval {command} ")
    assert "unrecognized arguments: --no-such-flag" in proc.stderr


@pytest.mark.parametrize("command,target", [("check", "team-alpha/genuine_sga.tex"), ("score", "team-alpha"),
                                            ("batch", ".")])
def test_out_on_an_existing_file_exits_2_with_one_line(subs, tmp_path, command, target):
    existing = tmp_path / "taken.txt"
    existing.write_text("keep me")
    proc = cli(command, str(subs / target), "--out", str(existing))
    one_line_error(proc, "taken.txt", "--out")
    assert existing.read_text() == "keep me"


def test_checklist_only_tex_warns_in_one_visible_line(fixtures_dir):
    checklist = fixtures_dir / "submissions" / "team-beta" / "genuine_sga" / "checklist.tex"
    proc = cli("check", str(checklist), "--json")
    assert proc.returncode == 0
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "no paper body (0 characters)" in warnings[0] and "checklist.tex" in warnings[0]
    doc = json.loads(proc.stdout)  # stdout stays one JSON document, which carries the warning by its kind
    (no_body,) = [w for w in doc["warnings"] if w["kind"] == "no_body"]
    assert "no paper body (0 characters)" in no_body["message"] and no_body["location"].endswith("checklist.tex")
    parsed = json.loads(cli("parse", str(checklist), "--json").stdout)
    assert parsed["body_chars"] == 0
    # The whole paper (its folder) has a body: no warning, and the size is reported.
    proc = cli("check", str(checklist.parent), "--verbose")  # the body's size is a detail: --verbose
    assert proc.returncode == 0 and "warning" not in proc.stderr
    whole = json.loads(cli("check", str(checklist.parent), "--json").stdout)
    assert not [w for w in whole["warnings"] if w["kind"] in ("no_body", "thin_body")]
    body = json.loads(cli("parse", str(checklist.parent), "--json").stdout)["body_chars"]
    assert body > 1000 and f"Paper body: {body} characters" in proc.stdout


def test_a_folder_of_several_papers_is_refused_unless_a_root_is_named(subs):
    proc = cli("check", str(subs / "team-alpha"))
    one_line_error(proc, "3 papers", "adversarial_sga.tex", "genuine_sga.tex", "truth_adversarial_sga.tex",
                   "--root")
    proc = cli("parse", str(subs), "--json")
    one_line_error(proc, "6 papers", "team-beta/genuine_sga/main.tex", "--root")
    chosen = cli("parse", str(subs / "team-alpha"), "--root", "genuine_sga.tex", "--json")
    assert chosen.returncode == 0
    direct = cli("parse", str(subs / "team-alpha" / "genuine_sga.tex"), "--json")
    assert json.loads(chosen.stdout)["items"] == json.loads(direct.stdout)["items"]
    one_line_error(cli("check", str(subs / "team-alpha"), "--root", "nope.tex"), "--root nope.tex")
    # main.tex beside the checklist it \inputs is one paper, not two.
    assert cli("check", str(subs / "team-beta" / "genuine_sga")).returncode == 0


def test_validate_prints_every_warning_in_full(subs):
    paper = subs / "team-gamma" / "genuine_sga.tex"
    text = paper.read_text("utf-8").replace("\\section", "% Caf\u00e9\n\\section", 1)
    paper.write_bytes(text.encode("latin-1"))
    proc = cli("validate", str(subs / "team-gamma"))
    assert proc.returncode == 0
    full = json.loads(cli("validate", str(subs / "team-gamma"), "--json").stdout)["papers"]["G"]["warnings"]
    assert full and any("latin-1" in w for w in full)
    for w in full:  # each on one line, unbroken
        assert any(line.endswith(w) for line in proc.stdout.splitlines()), w


def test_validate_refuses_a_paper_without_body_naming_the_file(subs, fixtures_dir):
    sub = subs / "team-checklist-only"
    sub.mkdir()
    shutil.copy(fixtures_dir / "submissions" / "team-beta" / "genuine_sga" / "checklist.tex",
                sub / "genuine_paper.tex")
    one_line_error(cli("validate", str(sub)), "genuine_paper.tex", "no body")
    assert cli("validate", str(subs / "team-gamma")).returncode == 0


def test_rescore_and_leaderboard_take_a_records_file_or_a_results_folder(results):
    for command in ("rescore", "leaderboard"):
        from_folder = cli(command, str(results), "--json")
        from_file = cli(command, str(results / "records.csv"), "--json")
        assert from_folder.returncode == from_file.returncode == 0
        assert json.loads(from_folder.stdout) == json.loads(from_file.stdout)


def test_leaderboard_csv_lists_failed_submissions_with_a_status(subs, tmp_path):
    bad = subs / "team-broken"
    bad.mkdir()
    (bad / "genuine_x.tex").write_text("no latex here\n")
    out = tmp_path / "r"
    assert cli("batch", str(subs), "--out", str(out), "--quiet").returncode == 4  # ran, one failed
    proc = cli("leaderboard", str(out), "--csv", str(tmp_path / "lb.csv"))
    assert proc.returncode == 0 and "not scored: team-broken" in " ".join(proc.stdout.split())
    df = pd.read_csv(tmp_path / "lb.csv", dtype=str, keep_default_na=False)
    assert list(df.columns)[-1] == "status"
    status = dict(zip(df["submission_id"], df["status"]))
    assert status["team-alpha"] == "scored" and status["team-broken"].startswith("failed: ")
    assert "not LaTeX" in status["team-broken"]
    assert df["submission_id"].tolist()[-1] == "team-broken" and df["rank"].tolist()[-1] == ""


def test_old_records_files_without_the_new_columns_still_read(results, tmp_path):
    df = pd.read_csv(results / "records.csv", dtype=str, keep_default_na=False)
    old = df.drop(columns=["endpoint", "output_strategy", "temperature", "seed"])
    old.to_csv(tmp_path / "old.csv", index=False)
    new = cli("rescore", str(results), "--json")
    assert json.loads(cli("rescore", str(tmp_path / "old.csv"), "--json").stdout) == json.loads(new.stdout)


def test_assessor_eval_compares_systems_on_their_common_trials(results, tmp_path):
    df = pd.read_csv(results / "records.csv", dtype=str, keep_default_na=False)
    df[df["submission_id"] == "team-alpha"].to_csv(tmp_path / "alpha-only.csv", index=False)
    proc = cli("assessor-eval", str(results / "records.csv"), str(tmp_path / "alpha-only.csv"),
               "--bootstrap", "0", "--json")
    assert proc.returncode == 0
    warning = [ln for ln in proc.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warning) == 1 and "different trials" in warning[0] and "share" in warning[0]
    both = json.loads(proc.stdout)
    assert both[0]["overall"]["n"] == both[1]["overall"]["n"]
    alone = json.loads(cli("assessor-eval", str(tmp_path / "alpha-only.csv"), "--bootstrap", "0", "--json").stdout)
    full = json.loads(cli("assessor-eval", str(results / "records.csv"), "--bootstrap", "0", "--json").stdout)
    assert both[0]["overall"]["n"] == alone["overall"]["n"] < full["overall"]["n"]
    assert "different trials" in both[0]["notes"][0]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_texts_render_without_raw_markup(command):
    proc = cli(command, "--help")
    assert proc.returncode == 0
    for markup in ("``", "`", "[/", "[bold", "%(", "**"):
        assert markup not in proc.stdout, (command, markup)


def test_every_command_is_listed_and_each_usage_names_its_command():
    """A command loads only its own parser; the list, and a word that is no command, still show them all."""
    from checklist_eval.cli import COMMANDS as ALL

    listed = cli("--help")
    assert listed.returncode == 0 and all(name in listed.stdout for name in ALL)
    wrong = cli("chek", "paper.tex")
    assert wrong.returncode == 2 and all(f"'{name}'" in wrong.stderr for name in ALL)
    for name in ALL:
        assert cli(name, "--help").stdout.startswith(f"usage: checklist-eval {name} "), name


def test_logs_on_a_missing_or_foreign_cache_exits_2_with_one_line(tmp_path):
    one_line_error(cli("logs", "--cache", str(tmp_path / "nothing.sqlite")), "nothing.sqlite", "no cache file")
    (tmp_path / "junk.sqlite").write_bytes(b"not a database at all" * 100)
    one_line_error(cli("logs", "--cache", str(tmp_path / "junk.sqlite")), "junk.sqlite")


def test_check_out_prints_where_the_report_is(tmp_path, fixtures_dir):
    out = tmp_path / "out"
    proc = cli("check", str(fixtures_dir / "papers" / "genuine"), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last == f"Wrote {out}/check.json; the report: {out}/report.html"
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
