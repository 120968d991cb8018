#!/usr/bin/env python
"""The Codabench scoring program through a LiteLLM proxy in front of a local engine, as the worker runs it.

    python scripts/drill_proxy_codabench.py --engine http://127.0.0.1:18081/v1 --engine-model gemma3 \
        [--litellm ~/.cache/checklist-eval/litellm/venv] [--port 14000]

1. LiteLLM's proxy (``pip install 'litellm[proxy]'`` in its own venv; no database) starts in front of the
   engine with a global ``max_budget`` and a master key: the capped key the bundle carries.
2. ``checklist-eval codabench export --model --base-url <proxy> --api-key-file --key-is-capped --spend-cap``
   writes the bundle.
3. Its ``scoring_program/score.py`` runs in the worker's layout (``/app/program``, ``/app/input/{ref,res}``,
   ``/app/output``) in a Python of its own (the wheel installs there, as in a stock image), on the bundle's
   ``sample_submission``. It must finish with scores.

The proxy hides the engine's ``/props``: the assessor learns its window from the engine's refusal and
its parallelism from its answers (``Scheduler``), as it would on a real Codabench worker.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path("~/.cache/checklist-eval").expanduser()


@dataclass
class ScoringRun:
    returncode: int
    wall_s: float
    scores: dict[str, float] | None
    stderr: str


def litellm_config(engine: str, engine_model: str, model: str, master_key: str, max_budget: float) -> str:
    """The proxy's config: one model routed to the engine, a global budget, no database."""
    return json.dumps({
        "model_list": [{"model_name": model, "litellm_params": {
            "model": f"openai/{engine_model}", "api_base": engine, "api_key": "no-key-needed",
            # a price, so that the global budget has something to count (a local engine has none)
            "input_cost_per_token": 1e-7, "output_cost_per_token": 1e-7}}],
        "litellm_settings": {"max_budget": max_budget, "budget_duration": "30d", "request_timeout": 600},
        "general_settings": {"master_key": master_key},
    })  # YAML is a superset of JSON


def start_litellm(venv: Path, config_text: str, port: int, workdir: Path, wait_s: float = 180) -> subprocess.Popen:
    config = workdir / "litellm.yaml"
    config.write_text(config_text)
    log = open(workdir / "litellm.log", "w")  # noqa: SIM115 - the process writes it while it runs
    proc = subprocess.Popen([str(venv / "bin" / "litellm"), "--config", str(config), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    import httpx2

    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"litellm exited {proc.returncode}; see {workdir / 'litellm.log'}")
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/health/liveliness", timeout=2).status_code == 200:
                return proc
        except httpx2.HTTPError:
            pass
        time.sleep(1)
    proc.kill()
    raise SystemExit(f"litellm did not answer within {wait_s:g} s; see {workdir / 'litellm.log'}")


def export_bundle(out: Path, model: str, base_url: str, key_file: Path, spend_cap: float) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["PYTHONPATH"] = str(ROOT)
    run = subprocess.run([sys.executable, "-m", "checklist_eval", "codabench", "export", "--out", str(out),
                          "--model", model, "--base-url", base_url, "--api-key-file", str(key_file),
                          "--key-is-capped", "--spend-cap", str(spend_cap), "--phases", "dev"],
                         capture_output=True, text=True, env=env, timeout=600)
    if run.returncode != 0:
        raise SystemExit(f"export failed: {run.stderr.strip()[-500:]}")


def worker_python(venv: Path) -> Path:
    """A Python with nothing of ours installed (the wheel installs itself there on first use)."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    return python


def run_scoring(bundle: Path, python: Path, workdir: Path, timeout_s: float = 3600) -> ScoringRun:
    """score.py on the bundle's sample submission, in the worker's layout."""
    dest = workdir / "bundle"
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(dest)
    app = workdir / "app"
    shutil.copytree(dest / "scoring_program", app / "program")
    shutil.copytree(dest / "dev_phase" / "reference_data", app / "input" / "ref")
    shutil.copytree(dest / "sample_submission", app / "input" / "res")
    (app / "output").mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "CHECKLIST_EVAL_")) and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # A worker's container starts without checklist-eval: an earlier drill's install (same version
    # string, older code) must not stand in for this bundle's wheel. Its dependencies may stay.
    subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "checklist-eval"], capture_output=True,
                   timeout=300)
    t0 = time.perf_counter()
    r = subprocess.run([str(python), str(app / "program" / "score.py"), str(app / "input"), str(app / "output")],
                       capture_output=True, text=True, timeout=timeout_s, env=env, cwd=app / "program")
    wall = time.perf_counter() - t0
    scores_file = app / "output" / "scores.json"
    scores = json.loads(scores_file.read_text()) if scores_file.exists() else None
    return ScoringRun(r.returncode, wall, scores, r.stderr[-2000:])


def drill(engine: str, engine_model: str, litellm_venv: Path, port: int, spend_cap: float = 1.0) -> ScoringRun:
    work = Path(tempfile.mkdtemp(prefix="proxy-codabench-"))
    key = "sk-" + secrets.token_hex(16)
    (work / "key").write_text(key + "\n")
    proxy = start_litellm(litellm_venv, litellm_config(engine, engine_model, "local-gemma", key, spend_cap), port,
                          work)
    try:
        export_bundle(work / "bundle.zip", "local-gemma", f"http://127.0.0.1:{port}/v1", work / "key", spend_cap)
        return run_scoring(work / "bundle.zip", worker_python(CACHE / "worker-venv"), work)
    finally:
        proxy.terminate()
        proxy.wait(timeout=30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", required=True, help="the engine's OpenAI-compatible base URL")
    ap.add_argument("--engine-model", required=True, help="the model name the engine answers to")
    ap.add_argument("--litellm", type=Path, default=CACHE / "litellm" / "venv")
    ap.add_argument("--port", type=int, default=14000)
    args = ap.parse_args()
    run = drill(args.engine, args.engine_model, args.litellm, args.port)
    print(f"score.py exit {run.returncode} in {run.wall_s:.0f} s; scores {json.dumps(run.scores)}")
    if run.returncode != 0:
        print(run.stderr)
    return 0 if run.returncode == 0 and run.scores else 1


if __name__ == "__main__":
    raise SystemExit(main())
