"""The API key never lands anywhere: not in the cache (incl. its -wal), records, reports, results, summaries
or logs, not on stdout or stderr; and a rejected key (401, echoed back by the server the way some providers
do) is not repeated in the error message either. Runs the real CLI in subprocesses against a loopback
MockServer that requires the key."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.testing import MockServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import synth  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "submissions"


def _env(tmp_path: Path, key: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHECKLIST_EVAL_"))}
    for d in ("home", "tmpdir", "cache"):
        (tmp_path / d).mkdir(exist_ok=True)
    env.update(OPENAI_API_KEY=key, HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path / "tmpdir"),
               CHECKLIST_EVAL_CACHE=str(tmp_path / "cache" / "cache.sqlite"), COLUMNS="200")
    return env


def _cli(env: dict[str, str], cwd: Path, *args: str) -> CliRun:
    return run_cli(*args, cwd=cwd, env=env, text=False)


def _files_holding(root: Path, needles: list[bytes]) -> list[str]:
    hits = []
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            data = p.read_bytes()
            hits += [f"{p.relative_to(root)}" for n in needles if n in data]
    return hits


def _needles(*keys: str) -> list[bytes]:
    """Each key, and its random tail alone (a key cut or re-quoted still leaks that)."""
    out = []
    for k in keys:
        out += [k.encode(), k[-16:].encode()]
    return out


@pytest.fixture()
def workspace(tmp_path):
    papers = tmp_path / "inputs"
    (papers / "root").mkdir(parents=True)
    shutil.copytree(FIXTURES / "team-alpha", papers / "root" / "team-alpha")
    return papers


def _llm(server: MockServer) -> list[str]:
    return ["--assessor", "llm", "--model", "gpt-4o-mini", "--base-url", server.base_url]


def test_scanner_finds_a_planted_key(tmp_path):
    key = f"sk-test-SECRET-{secrets.token_hex(16)}"
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "db-wal").write_bytes(b"\0\1" + key[-16:].encode() + b"\0")
    assert _files_holding(tmp_path, _needles(key)) == [str(Path("a", "b", "db-wal"))]


def test_key_appears_nowhere(tmp_path, workspace):
    key = f"sk-test-SECRET-{secrets.token_hex(16)}"
    env = _env(tmp_path, key)
    runs = []
    with MockServer(require_api_key=key) as server:
        llm = _llm(server)
        team = workspace / "root" / "team-alpha"
        runs.append(_cli(env, tmp_path, "check", str(team / "genuine_sga.tex"), "--out", str(tmp_path / "check"),
                         *llm))
        runs.append(_cli(env, tmp_path, "check", str(team / "genuine_sga.tex"), "--json", *llm))  # cache hits
        runs.append(_cli(env, tmp_path, "score", str(team), "--out", str(tmp_path / "score"), *llm))
        runs.append(_cli(env, tmp_path, "score", str(team), "--json", *llm))
        runs.append(_cli(env, tmp_path, "batch", str(workspace / "root"), "--out", str(tmp_path / "batch"), *llm))
        runs.append(_cli(env, tmp_path, "check", str(team / "genuine_sga.tex"), "--dry-run", *llm))
        stats = server.stats
    for r in runs:
        assert r.returncode == 0, r.stderr.decode()[-500:]
    # Not vacuous: the key was sent, accepted, and real verdicts were cached and written: at least one
    # accepted request per real answer of the triplet (the workspace holds a copy of synth's template).
    expected = synth.expected_calls_per_submission()
    assert expected > 0 and synth.TEMPLATE == FIXTURES / "team-alpha"
    assert stats.auth_headers_seen > 0 and stats.by_status.get(200, 0) >= expected and 401 not in stats.by_status
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    names = {p.name for p in written}
    assert {"check.json", "result.json", "records.csv", "records.jsonl", "scores.csv", "summary.json",
            "report.html", "cache.sqlite"} <= names, names
    assert (tmp_path / "cache" / "cache.sqlite").stat().st_size > 0
    assert _files_holding(tmp_path, _needles(key)) == []
    for r in runs:
        for needle in _needles(key):
            assert needle not in r.stdout and needle not in r.stderr


def test_wrong_key_is_not_echoed(tmp_path, workspace):
    right = f"sk-test-SECRET-{secrets.token_hex(16)}"
    wrong = f"WRONGKEY{secrets.token_hex(16)}"  # not shaped like sk-...: only exact scrubbing catches it
    env = _env(tmp_path, wrong)
    with MockServer(require_api_key=right) as server:
        llm = _llm(server)
        team = workspace / "root" / "team-alpha"
        check = _cli(env, tmp_path, "check", str(team / "genuine_sga.tex"), *llm)
        score = _cli(env, tmp_path, "score", str(team), "--out", str(tmp_path / "score"), *llm)
        batch = _cli(env, tmp_path, "batch", str(workspace / "root"), "--out", str(tmp_path / "batch"), "--json",
                     *llm)
        stats = server.stats
    # The server did answer 401 and echoed the wrong key in its error body.
    assert stats.by_status.get(401, 0) >= 1 and stats.by_status.get(200, 0) == 0
    for run in (check, score):
        err = run.stderr.decode()
        assert run.returncode == 2, err
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and "401" in lines[0] and "OPENAI_API_KEY" in lines[0], err
    assert batch.returncode == 4  # ran to its end, the submission failed
    failures = [json.loads(line) for line in (tmp_path / "batch" / "failures.jsonl").read_text().splitlines()]
    assert [f["submission_id"] for f in failures] == ["team-alpha"] and "401" in failures[0]["error"]
    for run in (check, score, batch):
        for needle in _needles(right, wrong):
            assert needle not in run.stdout and needle not in run.stderr
    assert _files_holding(tmp_path, _needles(right, wrong)) == []


def test_a_short_placeholder_key_is_masked_as_a_word_and_never_inside_words():
    # Local engines take any key: "local" or "k" set as the key must not garble "checklist" or "locally".
    import sys

    code = ("from checklist_eval import redact; redact.register('local'); redact.register('k'); "
            "print(redact.redact('local key k; the local engine checks the checklist locally'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "*** key ***; the *** engine checks the checklist locally"


def test_the_digits_of_a_key_never_mask_the_numbers_of_an_output():
    # A key such as "sk-other-0000000000000000" once turned a ledger's cost 0.00041115000000000005 into
    # "0.00041115***5": the key is still masked whole and by its lettered pieces, never a number by its digits.
    import sys

    code = ("from checklist_eval import redact; redact.register('sk-other-0000000000000000'); "
            "print(redact.redact('cost 0.00041115000000000005 tokens 100000000; key sk-other-0000000000000000; "
            "piece other-00000'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "cost 0.00041115000000000005 tokens 100000000; key ***; piece ***"
