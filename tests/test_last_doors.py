"""The last doors of issue 31 (item 6), each reproduced as a user meets it, through the CLI as typed:
numeric flags (e), the Codabench bundle's credentials (a), the phase config (b), ``serve``'s Host check
(c) and the terminal sanitiser on printed model and paper text (d). Door f is tests/test_pointer_index.py.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.cli import build_parser, main


def cli(*args: str, **kwargs) -> CliRun:
    return run_cli(*args, **kwargs)


def one_line(proc: CliRun, code: int, *words: str) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code and len(lines) == 1, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and all(w in lines[0] for w in words), lines
    return lines[0]


# ------------------------------------------------------------------------------------- e: number flags


def test_detection_score_ci_nan_is_one_line_exit_2_not_an_internal_error():
    # before: "internal error: ValueError: cannot convert float NaN to integer", exit 1
    one_line(cli("detection", "score", "-r", "ref.csv", "-x", "index.csv", "-s", "sys.csv", "--ci", "nan"), 2,
             "--ci nan", "finite")
    one_line(cli("detection", "score", "-r", "ref.csv", "-x", "index.csv", "-s", "sys.csv", "--ci", "0.95,inf"), 2,
             "--ci 0.95,inf", "finite")


def _numeric_flags(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command words, flag, kind) of every numeric flag of every command, as the parser declares it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _numeric_flags(sub, (*path, name))
        elif action.option_strings and action.type is not None:
            name = getattr(action.type, "__qualname__", "")
            if action.type in (float, int) or name.startswith(("number.", "number_list.")):
                yield path, action.option_strings[-1], action.type


FLAGS = list(_numeric_flags(build_parser()))


def test_every_numeric_flag_is_declared_through_the_validating_type():
    assert len(FLAGS) > 40
    assert not [(p, f) for p, f, kind in FLAGS if kind in (float, int)]


@pytest.mark.parametrize(("path", "flag", "kind"), FLAGS, ids=lambda x: " ".join(x) if isinstance(x, tuple) else
                         x if isinstance(x, str) else "")
def test_every_numeric_flag_refuses_a_value_that_is_not_finite(path, flag, kind, capsys):
    # before: mock-server --latency nan / --fault-rate nan, serve's int flags and --ci reached the command
    value = "9" * 400 if kind.__name__ == "int" else "nan"  # an int flag reads "nan" as argparse does: no int
    try:
        code = main([*path, flag, value])
    except SystemExit as stop:
        code = stop.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "Traceback" not in "\n".join(err) and flag in err[-1], err
    assert err[-1].startswith(("checklist-eval: error:", f"checklist-eval {' '.join(path)}: error:")), err


# ---------------------------------------------------------------------------- a: Codabench credentials

CAPPED = "sk-capped-virtual-key-0123456789abcdef"
PASSWORD = "hunter2-organizer-pass"
TOKEN = "tok-0f1e2d3c4b5a69788796"
SECRET_URL = f"https://orga:{PASSWORD}@proxy.example.org/v1?token={TOKEN}&api-version=2024-06-01"


def _export(tmp_path, *flags: str, key: str = CAPPED) -> tuple[CliRun, Path]:
    (tmp_path / "key.txt").write_text(key + "\n")
    out = tmp_path / "bundle.zip"
    proc = cli("codabench", "export", "--out", out, "--model", "gpt-4o-mini", "--api-key-file", tmp_path / "key.txt",
               "--key-is-capped", "--spend-cap", "20", *flags)
    return proc, out


def _members(bundle: Path) -> dict[str, str]:
    """Every file of the bundle (and of its wheel) by name, as text."""
    texts = {}
    with zipfile.ZipFile(bundle) as zf:
        for name in zf.namelist():
            data = zf.read(name)
            if name.endswith(".whl"):
                with zipfile.ZipFile(io.BytesIO(data)) as wheel:
                    texts.update({f"{name}!{n}": wheel.read(n).decode("latin-1") for n in wheel.namelist()})
            texts[name] = data.decode("latin-1")
    return texts


def test_credentials_in_the_endpoint_url_stay_in_the_organizers_key_files_only(tmp_path):
    # before: config.json and ORGANIZER.md held "https://orga:hunter2-...@proxy.example.org/v1?token=..."
    proc, bundle = _export(tmp_path, "--base-url", SECRET_URL)
    assert proc.returncode == 0, proc.stderr
    members = _members(bundle)
    private = {f"{phase}_phase/reference_data/{f}" for phase in ("dev", "final") for f in ("api_key", "endpoint_url")}
    for secret in (PASSWORD, TOKEN, CAPPED):
        holders = {name for name, text in members.items() if secret in text}
        assert holders and holders <= private, (secret, holders)
    assert members["dev_phase/reference_data/endpoint_url"].strip() == SECRET_URL
    config = json.loads(members["final_phase/reference_data/config.json"])
    assert config["base_url"] == "https://proxy.example.org/v1" and config["base_url_file"] == "endpoint_url"
    assert "`https://proxy.example.org/v1`" in members["ORGANIZER.md"] and "endpoint_url" in members["ORGANIZER.md"]
    with zipfile.ZipFile(bundle) as zf:
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in zf.infolist()}
    assert {modes[name] for name in private} == {0o600}


def test_the_scoring_program_reaches_the_endpoint_by_its_private_url(tmp_path):
    proc, bundle = _export(tmp_path, "--base-url", SECRET_URL, "--phases", "dev")
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(tmp_path / "unpacked")
    ref = tmp_path / "unpacked" / "dev_phase" / "reference_data"
    from checklist_eval.challenge.codabench_worker import _assessor, _read_config

    assessor = _assessor(_read_config(ref), ref)
    try:
        assert assessor.base_url == SECRET_URL
    finally:
        asyncio.run(assessor.aclose())


@pytest.mark.parametrize("flags", [("--title", f"Checklist challenge {CAPPED}"),
                                   ("--title", f"Checklist {PASSWORD}", "--base-url", SECRET_URL),
                                   ("--title", f"Checklist {TOKEN}", "--base-url", SECRET_URL)])
def test_a_secret_passed_into_a_public_file_refuses_the_bundle(tmp_path, flags):
    # before: the key passed in --title was written into competition.yaml and every participant page
    proc, bundle = _export(tmp_path, *flags)
    line = one_line(proc, 2, "competition.yaml", "the bundle is not written")
    assert CAPPED not in line and PASSWORD not in line and TOKEN not in line and not bundle.exists()


def test_credentials_in_the_url_on_the_organizers_own_queue_are_refused(tmp_path):
    proc = cli("codabench", "export", "--out", tmp_path / "b.zip", "--model", "gpt-4o-mini", "--queue", "vhost-1",
               "--base-url", SECRET_URL)
    line = one_line(proc, 2, "--base-url", "--queue")
    assert PASSWORD not in line and TOKEN not in line and not (tmp_path / "b.zip").exists()


# ------------------------------------------------------------------------------- b: phase config values


def _score_with(tmp_path, config: dict | str, fixtures_dir) -> subprocess.CompletedProcess:
    """The scoring program's body as the compute worker runs it, on the sample triplet, with ``config``."""
    app = tmp_path / "app"
    ref = app / "input" / "ref"
    ref.mkdir(parents=True)
    (ref / "config.json").write_text(config if isinstance(config, str) else json.dumps(config))
    shutil.copytree(fixtures_dir / "submissions" / "team-alpha", app / "input" / "res")
    return subprocess.run([sys.executable, "-c", "import sys; from checklist_eval.challenge.codabench_worker import "
                           "worker_main; sys.exit(worker_main(sys.argv[1:]))", str(app / "input"), str(app / "output")],
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize(("config", "words"), [
    ({"phase": "dev", "assessor": "LLM", "model": "gpt-4o-mini"}, ["assessor", "'LLM'", "heuristic, llm"]),
    ({"phase": "dev", "asessor": "llm"}, ["'asessor'", "not a phase setting"]),
    ({"phase": "dev", "assessor": "llm", "model": "m", "credential": "bundel"}, ["credential", "bundle, worker"]),
    ({"phase": "dev", "assessor": "llm", "model": 4}, ["model", "non-empty string"]),
    ({"phase": "dev", "assessor": "llm", "model": "m", "credential": "bundle", "api_key_file": "/etc/hostname"},
     ["api_key_file"]),
    ({"phase": "dev", "parse_timeout_s": "NaN"}, ["parse_timeout_s", "a number"]),
    ({"phase": "dev", "parse_memory_mb": True}, ["parse_memory_mb", "an integer"]),
    ({"phase": "dev", "assessor": "heuristic", "model": "gpt-4o-mini"}, ["model", "not llm"]),
    ('{"phase": "dev", "parse_timeout_s": NaN}', ["parse_timeout_s"]),
])
def test_a_phase_config_value_out_of_its_kind_fails_the_submission_in_one_line(tmp_path, fixtures_dir, config, words):
    # before: "assessor": "LLM" (and any unknown key or value) was scored by the heuristic, exit 0
    proc = _score_with(tmp_path, config, fixtures_dir)
    one_line(proc, 1, "checklist-eval scoring:", "config.json", *words)
    assert not (tmp_path / "app" / "output" / "scores.json").exists()


def test_every_phase_config_the_export_writes_passes_the_check(tmp_path):
    from checklist_eval.challenge.codabench import BundleOptions, phase_config
    from checklist_eval.challenge.codabench_config import check_phase_config

    for options in (BundleOptions(), BundleOptions(model="m", api_key="k", spend_cap_usd=5.0, base_url="https://p/v1"),
                    BundleOptions(model="m", queue="q", endpoint_url="https://u:p@p/v1", base_url="https://p/v1"),
                    BundleOptions(model="m", base_url="http://127.0.0.1:4000/v1")):
        config = phase_config(options, "dev")
        assert check_phase_config(json.loads(json.dumps(config)), tmp_path / "config.json") == config


# ----------------------------------------------------------------------------------- c: serve's Host


def _ask(port: int, host: str) -> tuple[int, str]:
    """GET / over a real connection to the server, the Host header as a rebinding page's browser sends it."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("GET", "/", skip_host=True)
        conn.putheader("Host", host)
        conn.endheaders()
        reply = conn.getresponse()
        return reply.status, reply.read().decode("utf-8", "replace")
    finally:
        conn.close()


@contextlib.contextmanager
def _serving(*flags: str):
    proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", "serve", "--port", "0", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found, (line, proc.stderr.read() if proc.stderr else "")
        yield int(found.group(1))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_answers_only_the_host_names_it_is_bound_to():
    # before: any Host was answered 200 (a DNS-rebinding page read the loopback server as its own site)
    with _serving() as port:
        status, body = _ask(port, f"rebind.attacker.example:{port}")
        assert status == 421 and "--allowed-host" in body and "<form" not in body
        assert _ask(port, "attacker.example")[0] == 421
        assert _ask(port, "")[0] == 421
        for name in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}"):
            status, body = _ask(port, name)
            assert status == 200 and "<form" in body, name


def test_serve_answers_the_names_given_with_allowed_host():
    with _serving("--allowed-host", "checker.example.org", "--allowed-host", "papers.lab") as port:
        assert _ask(port, f"checker.example.org:{port}")[0] == 200 and _ask(port, "papers.lab")[0] == 200
        assert _ask(port, f"localhost:{port}")[0] == 200  # the loopback names stay for a loopback bind
        assert _ask(port, "other.example.org")[0] == 421


# ------------------------------------------------------------------------ d: model and paper text shown

ESCAPES = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202e"


def test_logs_full_prompt_shows_terminal_escapes_inert_even_through_a_pipe(tmp_path, fixtures_dir):
    # before: the paper's ESC/OSC/CSI, the C1 CSI (0x9b) and the bidi override reached stdout raw (text
    # view; the C1 and bidi ones with --json too) whenever stdout was a pipe: `logs | less -R`
    from checklist_eval.testing import MockServer

    subs = tmp_path / "subs"
    shutil.copytree(fixtures_dir / "submissions" / "team-gamma", subs / "team-gamma")
    paper = subs / "team-gamma" / "genuine_sga.tex"
    paper.write_text(paper.read_text().replace("Justification: The abstract claims",
                                               f"Justification: {ESCAPES}The abstract claims", 1))
    with MockServer() as server:
        run = cli("batch", subs, "--out", tmp_path / "out", "--quiet", "--assessor", "llm", "--model", "gpt-4o-mini",
                  "--base-url", server.base_url, env={**os.environ, "OPENAI_API_KEY": "sk-doors-d-0123456789"})
    assert run.returncode == 0, run.stderr
    for view in ((), ("--json",)):
        shown = cli("logs", "--cache", tmp_path / "out", "--full-prompt", "--question", "1", *view)
        assert shown.returncode == 0, shown.stderr
        assert not {"\x1b", "\x07", "\x9b", "\u202e"} & set(shown.stdout), view
        inert = "\\u001b]0;owned\\u0007\\u001b[2J\\u009b31m\\u202eThe abstract claims"
        assert (inert in shown.stdout) if not view else (inert in json.dumps(json.loads(shown.stdout)))
    calls = json.loads(shown.stdout)
    assert any(f"{ESCAPES}The abstract claims" in c["question"] for c in calls)  # the JSON still says what was sent


def test_the_scoring_programs_error_line_shows_a_participants_file_name_inert(tmp_path):
    # before: "checklist-eval scoring: .../genuine_<ESC>[2J<CSI>31m.tex: not LaTeX ..." raw in the worker's log
    app = tmp_path / "app"
    (app / "input" / "ref").mkdir(parents=True)
    (app / "input" / "res").mkdir()
    (app / "input" / "res" / "genuine_\x1b[2J\x9b31m.tex").write_text("x")
    proc = subprocess.run([sys.executable, "-c", "import sys; from checklist_eval.challenge.codabench_worker import "
                           "worker_main; sys.exit(worker_main(sys.argv[1:]))", str(app / "input"), str(app / "output")],
                          capture_output=True, text=True, timeout=300)
    line = one_line(proc, 1, "checklist-eval scoring:", "genuine_\\u001b[2J\\u009b31m.tex")
    assert "\x1b" not in line and "\x9b" not in line


# ---------------------------------------------------------------- entry points found in the review of 1dbfb25


@pytest.mark.parametrize("command", ["serve", "mock-server"])
@pytest.mark.parametrize("port", ["65536", "-1"])
def test_a_port_no_socket_can_have_is_one_line_exit_2(command, port):
    # before: "internal error: OverflowError: bind(): port must be 0-65535", exit 1
    one_line(cli(command, "--port", port), 2, f"--port {port}")


def test_logs_on_a_folder_with_a_hostile_summary_is_one_line_exit_2(tmp_path):
    # before: "internal error: RecursionError": the summary.json of a folder without settings was read
    # whole with json.loads to learn its assessor
    (tmp_path / "summary.json").write_text("[" * 200_000 + "]" * 200_000)
    one_line(cli("logs", "--cache", tmp_path), 2, "no cache file here")


def test_a_hostile_tex_cache_entry_is_a_cache_miss(tmp_path, monkeypatch):
    # before: a meta.json nested 200,000 deep in the TeX cache raised RecursionError out of the parse
    from checklist_eval.reading.tex import compile as tex_compile

    monkeypatch.setenv("CHECKLIST_EVAL_TEX_CACHE", str(tmp_path))
    (tmp_path / "d1").mkdir()
    (tmp_path / "d1" / "meta.json").write_text("[" * 200_000 + "]" * 200_000)
    assert tex_compile.cached("d1") is None


@pytest.mark.parametrize("value", ["x", "-1", "9" * 40])
def test_a_results_database_whose_generation_is_not_a_count_is_one_line_exit_2(tmp_path, fixtures_dir, value):
    # before: "internal error: ValueError: invalid literal for int()", exit 1: the counter of a results
    # folder's database (a file the folder's writer may not be) was read with a bare int()
    import sqlite3

    subs = tmp_path / "subs"
    shutil.copytree(fixtures_dir / "submissions" / "team-gamma", subs / "team-gamma")
    assert cli("batch", subs, "--out", tmp_path / "out").returncode == 0
    with contextlib.closing(sqlite3.connect(tmp_path / "out" / "results.sqlite")) as db:
        db.execute("UPDATE meta SET value=? WHERE key='generation'", (value,))
        db.commit()
    one_line(cli("leaderboard", tmp_path / "out"), 2, "results.sqlite", "generation")


def test_ingest_reads_a_bounded_part_of_a_huge_run_record(tmp_path):
    # The run record sits in a results folder that may be hostile; before, it was read whole (a 1 GB one:
    # 1 GB of memory and more to decode it). A sparse file: the disk holds none of it.
    from checklist_eval.challenge.results.layout import ResultsLayout
    from helpers import run_measured

    results = tmp_path / "results"
    results.mkdir()
    with open(ResultsLayout(results).run_file, "wb") as fh:
        fh.truncate(1 << 30)
    (tmp_path / "responses.jsonl").write_text("")
    run = run_measured(["ingest", results, "--responses", tmp_path / "responses.jsonl"], cwd=tmp_path)
    assert run.code == 2 and "larger than 16 MB" in run.err and len(run.err.strip().splitlines()) == 1, run
    assert run.rss_mb < 300, run


def test_an_attack_runs_hostile_plants_file_leaves_its_half_unknown(tmp_path):
    # before: plants.json nested 200,000 deep raised RecursionError out of assessor-eval --attack-runs
    from checklist_eval.adversary.attack import PLANTS_FILE
    from checklist_eval.adversary.attack_eval import _half_of_run

    (tmp_path / PLANTS_FILE).write_text("[" * 200_000 + "]" * 200_000)
    assert _half_of_run(tmp_path) is None
