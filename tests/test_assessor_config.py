"""The assessor's configuration: the CLI's flags fill one pydantic model (``AssessorConfig``), the run
does what that model says (shown through the CLI as typed, against the loopback server), no API key
ever appears in its dump or repr, and nothing outside ``checklist_eval/cli/`` knows argparse."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.assessors import AssessorConfig, LLMConfig, build_assessor
from checklist_eval.assessors.config import DEFAULT_CONCURRENCY, default_cache_path
from checklist_eval.cli import build_parser
from checklist_eval.cli.flags import assessor_config
from checklist_eval.errors import AssessorError
from checklist_eval.testing import MockServer

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "checklist_eval"
KEY = "sk-test-CONFIG-7d1e5b0a93"


def cli(*args: str, env_extra: dict[str, str] | None = None) -> CliRun:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["OPENAI_API_KEY"] = KEY
    env.update(env_extra or {})
    return run_cli(*args, cwd=ROOT, env=env)


def flags_config(*argv: str, cache_path: Path | None = None) -> AssessorConfig:
    """The config a command line gives, parsed by the real ``checklist-eval`` parser."""
    return assessor_config(build_parser().parse_args(list(argv)), cache_path)


@pytest.fixture()
def paper(fixtures_dir) -> str:
    return str(fixtures_dir / "submissions" / "team-alpha" / "genuine_sga.tex")


def test_every_assessor_flag_lands_in_its_setting(tmp_path):
    cfg = flags_config("check", "p.tex", "--assessor", "llm", "--model", "gpt-4o-mini", "--base-url",
                       "http://127.0.0.1:9/v1", "--api-key-env", "MY_KEY", "--concurrency", "5", "--rpm", "90",
                       "--tpm", "9000", "--timeout", "7", "--max-attempts", "2", "--structured", "json_object",
                       "--reasoning-effort", "low", "--prompt-version", "assess-v1", "--cache",
                       str(tmp_path / "c.sqlite"), "--no-cache", "--refresh", "--prices", str(tmp_path / "p.json"),
                       "--temperature", "0.3", "--seed", "11", "--max-cost", "1.5")
    assert cfg.model_dump(exclude={"assessor"}) == LLMConfig.from_options(
        model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key_env="MY_KEY", concurrency=5, rpm=90, tpm=9000,
        timeout=7, max_attempts=2, structured="json_object", reasoning_effort="low", prompt_version="assess-v1",
        cache_path=tmp_path / "c.sqlite", no_cache=True, refresh=True, prices=tmp_path / "p.json",
        temperature=0.3, seed=11, max_cost=1.5).model_dump()
    assert cfg.assessor == "llm"


def test_unset_flags_take_the_models_defaults_and_the_users_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CHECKLIST_EVAL_CACHE", str(tmp_path / "mine.sqlite"))
    cfg = flags_config("score", "sub")
    assert cfg.assessor == "heuristic" and cfg.model is None
    assert cfg.concurrency == DEFAULT_CONCURRENCY and cfg.api_key_env == "OPENAI_API_KEY" and cfg.seed is None
    assert cfg.cache_path == default_cache_path() == tmp_path / "mine.sqlite"
    # A command's own cache (batch: RESULTS/cache.sqlite) stands in for an unset --cache.
    assert flags_config("score", "sub", cache_path=tmp_path / "r.sqlite").cache_path == tmp_path / "r.sqlite"


def test_a_commands_own_seed_is_not_the_sampling_seed():
    cfg = flags_config("attack", "paper", "--out", "o", "--seed", "4", "--assessor", "llm", "--model", "m")
    assert cfg.seed is None  # attack's --seed picks the plants; the endpoint is sent none
    assert flags_config("check", "p.tex", "--seed", "4").seed == 4


def test_settings_are_checked_when_the_assessor_is_built():
    planned = AssessorConfig(assessor="llm", concurrency=0)  # a dry run plans with what it was given
    with pytest.raises(AssessorError, match="--model"):
        build_assessor(planned)
    with pytest.raises(AssessorError, match="--concurrency and --max-attempts must be at least 1"):
        build_assessor(planned.model_copy(update={"model": "m"}))
    assert type(build_assessor(planned.model_copy(update={"assessor": "heuristic"}))).__name__ == "HeuristicAssessor"


def test_a_bad_setting_is_one_line_and_exit_2_before_any_request(paper):
    with MockServer() as server:
        r = cli("check", paper, "--assessor", "llm", "--model", "gpt-4o-mini", "--base-url", server.base_url,
                "--max-attempts", "0", "--no-cache")
        assert server.stats.requests == 0
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == ""
    errors = [line for line in r.stderr.splitlines() if "error" in line]
    assert errors == ["checklist-eval: error: --max-attempts 0: must be at least 1"]


def test_the_dry_run_plans_with_the_settings_typed(paper, tmp_path):
    """The plan's cache lookups are keyed by the settings the flags give: answers a run stored are
    found again with the same flags and not with another temperature, seed, reasoning effort, or with
    --refresh."""
    cache = tmp_path / "c.sqlite"
    with MockServer() as server:
        llm = ["--assessor", "llm", "--model", "gpt-4o-mini", "--base-url", server.base_url, "--cache", str(cache)]
        sampling = ["--temperature", "0.2", "--seed", "7", "--reasoning-effort", "low"]
        run = cli("check", paper, "--quiet", *llm, *sampling)
        assert run.returncode == 0, run.stderr
        sent = server.stats.requests

        def plan(*extra: str) -> dict:
            r = cli("check", paper, "--dry-run", "--json", *llm, *extra)
            assert r.returncode == 0, r.stderr
            return json.loads(r.stdout)

        same = plan(*sampling, "--max-cost", "0.25")
        plans = [plan(*sampling[:2], *sampling[4:]), plan(*sampling[2:]), plan(*sampling, "--refresh")]
        # the endpoint refused reasoning_effort and the run learned to leave it out: what it sent, and keyed,
        # is the request of a run that never asked for it (issue 45: a dropped parameter is keyed as sent)
        unasked = plan(*sampling[:4])
        assert server.stats.requests == sent  # a dry run sends nothing
    answered = same["already_cached"]  # fewer than the requests: refused reasoning_effort, they were resent
    assert 0 < answered <= sent and same["calls"] == 0
    assert same["model"] == "gpt-4o-mini" and same["max_cost"] == 0.25
    assert unasked["already_cached"] == answered and unasked["calls"] == 0
    for other in plans:
        assert other["already_cached"] == 0 and other["calls"] == answered


def test_no_key_or_endpoint_credential_in_the_configs_dump_or_repr(monkeypatch):
    password, token = "pw-CONFIG-SECRET-31", "tok-CONFIG-SECRET-99"
    url = f"http://organizer:{password}@127.0.0.1:9/v1?api-key={token}"
    monkeypatch.setenv("CE_CONFIG_KEY", KEY)
    cfg = flags_config("check", "p.tex", "--assessor", "llm", "--model", "gpt-4o-mini", "--base-url", url,
                       "--api-key-env", "CE_CONFIG_KEY", "--no-cache")
    checked = cfg.llm_config()
    assessor = build_assessor(cfg)
    shown = [repr(cfg), str(cfg), cfg.model_dump_json(), json.dumps(cfg.model_dump(mode="json")), repr(checked),
             str(checked), checked.model_dump_json(), repr(assessor)]
    for text in shown:
        for secret in (KEY, password, token):
            assert secret not in text, text
    assert "CE_CONFIG_KEY" in cfg.model_dump_json() and "127.0.0.1:9/v1" in repr(cfg)
    # Hidden from view only: the assessor still talks to the endpoint it was given.
    assert checked.base_url == url


def test_nothing_outside_the_cli_imports_argparse():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] == "argparse" for n in names):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
