# ruff: noqa: F811  (the cli fixture is imported from test_hostile_parsing and named by each test)
"""One guarded door per kind of input (issue 22), papers: every command and program that reads a
participant's file parses it in the budgeted worker, and archives are read with a cap on every header
and member. Each case runs as a user runs it (the CLI, or the Codabench scoring program as its compute
worker runs it) and asserts the exit code, one line naming the file, time and whole-tree memory.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

from cli_runner import run_cli
import pytest
from helpers import one_error_line
from test_hostile import GOOD_ANSWERS, GOOD_TEX, write_tar_gz_bomb
from test_hostile_parsing import TIME_LIMIT_S, TREE_RSS_LIMIT_MB, answers, cli  # noqa: F401 (fixture)

from checklist_eval.testing import worstcases
from checklist_eval.testing.proctree import tree_rss_kb

MIB = 1 << 20
PAX_BOMB_MIB = 1400  # a 1.4 GB pax header in a 1.3 MB tar.gz


def pax_bomb(path: Path) -> Path:
    write_tar_gz_bomb(path, "././@PaxHeader", PAX_BOMB_MIB, kind=tarfile.XHDTYPE)
    assert path.stat().st_size < 1.5 * MIB
    return path


def memory_heavy_tar_gz(path: Path) -> Path:
    """A tar.gz of an 8 MB paper whose parse needs more than 80 MB: checklist
    headings by the thousand, each justification salted so the archive does not look like a bomb."""
    rng = random.Random(0)
    unit = worstcases.CASES["10,000+ checklist headings"](1)["paper.tex"].decode()
    unit = unit[unit.index("\\section*"):unit.index("\\end{document}")]
    parts, size = [], 0
    while size < 8 * MIB - 8192:
        parts.append(unit.replace("See Section", f"See {rng.getrandbits(160):x} Section"))
        size += len(parts[-1])
    data = (GOOD_TEX.split("\\begin{document}")[0] + "\\begin{document}\n" + "".join(parts)
            + "\\end{document}\n").encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("main.tex")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    path.write_bytes(buf.getvalue())
    return path


# ------------------------------------------------------------------------------------------ archives


def test_pax_header_bomb_is_refused_before_it_is_read(cli, tmp_path):
    run = cli("parse", str(pax_bomb(tmp_path / "paper.tar.gz")))
    one_error_line(run, "paper.tar.gz", "extended", "header")
    assert run.tree_mb < 300, run  # the header is never held: before, the parse reached 1.4 GB


def test_gnu_long_name_bomb_is_refused(cli, tmp_path):
    path = tmp_path / "paper.tar.gz"
    write_tar_gz_bomb(path, "././@LongLink", 600, kind=tarfile.GNUTYPE_LONGNAME)
    run = cli("parse", str(path))
    one_error_line(run, "paper.tar.gz", "long-name", "header")
    assert run.tree_mb < 300, run


def test_gzip_header_cut_short_is_one_line(cli, tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("main.tex")
        info.size = len(GOOD_TEX.encode())
        tf.addfile(info, io.BytesIO(GOOD_TEX.encode()))
    for cut in (3, 5, 12):
        path = tmp_path / f"cut{cut}.tar.gz"
        path.write_bytes(buf.getvalue()[:cut])
        one_error_line(cli("parse", str(path)), path.name, "truncated")


def test_zip_members_differing_only_in_case_are_refused(cli, tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("main.tex", GOOD_TEX)
        zf.writestr("Main.tex", GOOD_TEX.replace("\\answerYes", "\\answerNo"))
    path = tmp_path / "paper.zip"
    path.write_bytes(buf.getvalue())
    one_error_line(cli("parse", str(path)), "paper.zip", "duplicate", "differ only in case", "Main.tex")
    sub = tmp_path / "team.zip"
    with zipfile.ZipFile(sub, "w") as zf:
        zf.writestr("genuine_p/main.tex", GOOD_TEX)
        zf.writestr("genuine_p/MAIN.TEX", GOOD_TEX)
    one_error_line(cli("validate", str(sub)), "team.zip", "differ only in case")


def test_a_300_character_input_name_skips_that_input_only(cli, tmp_path):
    paper = tmp_path / "paper" / "main.tex"
    paper.parent.mkdir()
    paper.write_text(GOOD_TEX.replace("\\begin{document}", "\\begin{document}\n\\input{" + "a" * 300 + "}\n", 1))
    run = cli("parse", str(paper), "--json")
    assert answers(run) == GOOD_ANSWERS
    assert any("file not found; skipped" in w for w in json.loads(run.out)["warnings"])


# ------------------------------------------------------------------------- every command, one door


def test_attack_parses_in_the_budgeted_worker(cli, tmp_path):
    one_error_line(cli("attack", str(pax_bomb(tmp_path / "paper.tar.gz")), "--out", str(tmp_path / "o")),
                   "paper.tar.gz", "extended")
    run = cli("attack", str(memory_heavy_tar_gz(tmp_path / "heavy.tar.gz")), "--out", str(tmp_path / "o2"),
              "--parse-memory", "80")
    one_error_line(run, "heavy.tar.gz", "more than 80 MB")
    assert not (tmp_path / "o2").exists()


def test_contamination_parses_in_the_budgeted_worker(cli, tmp_path):
    endpoint = ("--model", "m", "--base-url", "http://127.0.0.1:9/v1")  # never reached: the paper fails first
    one_error_line(cli("contamination", str(pax_bomb(tmp_path / "paper.tar.gz")), *endpoint),
                   "paper.tar.gz", "extended")
    run = cli("contamination", str(memory_heavy_tar_gz(tmp_path / "heavy.tar.gz")), *endpoint,
              "--parse-memory", "80")
    one_error_line(run, "heavy.tar.gz", "more than 80 MB")


def test_score_dry_run_parses_in_the_budgeted_worker(cli, tmp_path):
    sub = tmp_path / "team"
    sub.mkdir()
    memory_heavy_tar_gz(sub / "genuine_p.tar.gz")
    run = cli("score", str(sub), "--dry-run", "--parse-memory", "80")
    one_error_line(run, "genuine_p.tar.gz", "more than 80 MB")


def test_codabench_scoring_program_parses_in_the_budgeted_worker(tmp_path):
    """The scoring program, run as the compute worker runs it, on an upload built to exhaust memory:
    one line and exit 1 (Codabench's failure), with the whole process tree far below the pax header."""
    bundle = tmp_path / "bundle.zip"
    assert run_cli("codabench", "export", "--out", str(bundle), text=False).returncode == 0
    app = tmp_path / "app"
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(tmp_path / "bundle")
    program = tmp_path / "bundle" / "scoring_program"
    ref = tmp_path / "bundle" / "dev_phase" / "reference_data"
    (app / "input" / "res").mkdir(parents=True)
    (app / "output").mkdir()
    (app / "input" / "ref").symlink_to(ref)
    pax_bomb(app / "input" / "res" / "genuine_p.tar.gz")
    started, peak = time.perf_counter(), 0
    proc = subprocess.Popen([sys.executable, str(program / "score.py"), str(app / "input"), str(app / "output")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=app)
    while proc.poll() is None:
        peak = max(peak, tree_rss_kb(proc.pid)[0])
        assert time.perf_counter() - started < TIME_LIMIT_S
        time.sleep(0.02)
    out, err = proc.communicate()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert proc.returncode == 1 and len(lines) == 1, err
    assert "genuine_p.tar.gz" in lines[0] and "extended" in lines[0], lines
    assert "Traceback" not in err and "MemoryError" not in err
    assert peak / 1024 < 300, peak


def _session_processes(sid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.getsid(int(name)) == sid:
                    found.append(int(name))
            except OSError:
                continue  # ended while listed
    return found


@pytest.mark.parametrize("command", ["batch", "score"])
def test_a_parsing_command_leaves_no_process_of_its_own_behind(tmp_path, fixtures_dir, command):
    """Its workers come from a fork server forked from the command: once the command has exited and its
    output is read, neither that server nor a worker is still running (nor holds the caller's pipes)."""
    subs = fixtures_dir / "submissions"
    target = subs if command == "batch" else subs / "team-alpha"
    proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", command, str(target), "--out",
                             str(tmp_path / "out")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    _, err = proc.communicate(timeout=60)  # returns only once every holder of its pipes has let go
    assert proc.returncode == 0, err
    deadline = time.monotonic() + 5  # a process that has just ended may wait a moment to be reaped
    while _session_processes(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _session_processes(proc.pid) == []
