"""Crash drill: a batch in a subprocess killed with SIGKILL at random points, resumed each time, compared with
an uninterrupted run.

    python scripts/drill_crash.py                  # 20 triplets, 5 kills, latency 0.1 s, seed 0
    python scripts/drill_crash.py --n 5 --kills 2 --json

What it runs: ``python -m checklist_eval batch ROOT --out RESULTS --assessor llm --model M --base-url URL``
against a loopback MockServer living in this process. The server computes, for every chat request, the
cache key the assessor uses (endpoint identity, model, messages, parameters, strategy, prompt version),
so each request can be classified against the cache as it stood after the previous kill:

* true repeat: its identical prompt had already been answered AND committed to the cache before the
  kill (goal 0; this is money spent twice);
* in-flight repeat: the server had seen the prompt before the kill but the answer never reached the
  cache (the request was in flight when the process died; unavoidable);
* new.

The mapping is checked, not assumed: every row of the final cache must be a key the server computed,
otherwise the drill fails. After each kill the drill also checks that the cache passes SQLite's
integrity check, that every final result file (result.json, summary.json, scores.csv, records.*) parses,
and counts leftover ``*.tmp`` files (an atomic write's temporary, never a final name). Finally scores.csv
and records.csv (without the scored_at timestamp and the cost-ledger columns, which say where a verdict
was paid for) must equal the uninterrupted run's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

SCRIPTS = Path(__file__).resolve().parent
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

from synth import build_submissions  # noqa: E402

from checklist_eval.challenge.records import LEDGER_COLUMNS  # noqa: E402
from checklist_eval.testing import MockServer  # noqa: E402

MODEL = "gpt-4o-mini"
RUN_TIMEOUT_S = 600  # a hang guard for one subprocess, far above any normal run
FINAL_JSON = ("result.json", "summary.json")


class RecordingServer(MockServer):
    """The loopback server, also logging (segment, cache key, status) of every chat request, where the
    segment is the drill's name for the process run the request arrived from."""

    def __init__(self, *args: Any, prompt_version: str, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.prompt_version = prompt_version
        self.segment = "reference"
        self.log: list[tuple[str, str, int]] = []
        self._log_lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def request_key(self, body: bytes) -> str:
        from checklist_eval.assessors.llm.grammar import SCHEMA_DIGEST
        from checklist_eval.endpoint.cache import cache_key, endpoint_identity

        req = json.loads(body)
        fmt = (req.get("response_format") or {}).get("type", "text")
        strategy = fmt if fmt in ("json_schema", "json_object") else "text"
        params = {k: v for k, v in req.items() if k not in ("model", "messages", "response_format")}
        return cache_key(endpoint=endpoint_identity(self.base_url), model=req["model"], messages=req["messages"],
                         params=params, strategy=strategy, prompt_version=self.prompt_version, schema=SCHEMA_DIGEST)

    async def _chat(self, body: bytes):
        # Attributed to the run it ARRIVED in: a request still sleeping in the server when its client
        # is killed is answered later, but belongs to the killed run.
        segment = self.segment
        with self._log_lock:
            self._counts[segment] = self._counts.get(segment, 0) + 1
        reply = await super()._chat(body)
        try:
            key = self.request_key(body)
        except (ValueError, KeyError, TypeError):
            key = "unreadable"
        with self._log_lock:
            self.log.append((segment, key, reply.status))
        return reply

    def count(self, segment: str) -> int:
        with self._log_lock:
            return self._counts.get(segment, 0)

    def settle(self, segment: str, limit_s: float = 60.0) -> None:
        """Wait until every request that arrived in ``segment`` has been answered and logged."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline and self.count(segment) > len(self.requests_of(segment)):
            time.sleep(0.01)

    def requests_of(self, segment: str) -> list[str]:
        with self._log_lock:
            return [k for s, k, _ in self.log if s == segment]


def cache_keys(path: Path) -> tuple[set[str], str]:
    """Committed keys of the cache as a restarted process would see them, and its integrity verdict."""
    if not path.exists():
        return set(), "absent"
    db = sqlite3.connect(path, timeout=30)
    try:
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        try:
            keys = {r[0] for r in db.execute("SELECT key FROM responses")}
        except sqlite3.OperationalError:  # killed before the first migration committed
            keys = set()
    finally:
        db.close()
    return keys, integrity


def check_outputs(out: Path) -> dict[str, Any]:
    """Final-named result files must parse; ``*.tmp`` leftovers are counted."""
    from checklist_eval.challenge.batch import SubmissionResult
    from checklist_eval.tables import read_csv_rows

    bad: list[str] = []
    finished = 0
    for p in sorted(out.rglob("*")):
        if not p.is_file() or p.name.endswith(".tmp"):
            continue
        try:
            if p.name == "result.json":
                SubmissionResult.model_validate_json(p.read_bytes())
                finished += 1
            elif p.name in FINAL_JSON:
                json.loads(p.read_bytes())
            elif p.name == "records.jsonl" or p.name == "failures.jsonl":
                for line in p.read_text("utf-8").splitlines():
                    if line.strip():
                        json.loads(line)
            elif p.suffix == ".csv":
                read_csv_rows(p, [])
            elif p.name == "report.html" and not p.read_text("utf-8").rstrip().endswith("</html>"):
                bad.append(str(p.relative_to(out)))
        except Exception as err:  # noqa: BLE001 - any parse failure is a finding
            bad.append(f"{p.relative_to(out)}: {type(err).__name__}")
    tmp = sorted(str(p.relative_to(out)) for p in out.rglob("*.tmp"))
    return {"finished": finished, "unparseable": bad, "tmp_files": tmp}


def batch_cmd(root: Path, out: Path, base_url: str) -> list[str]:
    return [sys.executable, "-m", "checklist_eval", "batch", str(root), "--out", str(out), "--assessor", "llm",
            "--model", MODEL, "--base-url", base_url, "--quiet", "--json"]


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.pop("CHECKLIST_EVAL_CACHE", None)
    return env


def run_to_end(cmd: list[str]) -> tuple[int, str, str, float]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=child_env(), timeout=RUN_TIMEOUT_S)
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - t0


def run_and_kill(cmd: list[str], server: RecordingServer, segment: str, target: int,
                 jitter: float) -> tuple[bool, float]:
    """Start the batch and SIGKILL it once the server has received ``target`` of its requests, plus
    ``jitter`` s (so kills land in flight, between requests and during result writes alike).
    Returns (killed, seconds it ran); killed is False when the batch finished first."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env())
    t0 = time.perf_counter()
    deadline = t0 + RUN_TIMEOUT_S
    while proc.poll() is None and server.count(segment) < target and time.perf_counter() < deadline:
        time.sleep(0.005)
    try:
        proc.wait(timeout=jitter)
        return False, time.perf_counter() - t0
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        return True, time.perf_counter() - t0


def comparable(out: Path) -> tuple[Any, Any]:
    import pandas as pd

    scores = pd.read_csv(out / "scores.csv", dtype=str, keep_default_na=False)
    # What was paid where legitimately differs (a resumed run reads answers from the cache at no cost);
    # the verdicts, answers and reviews must not.
    volatile = ["scored_at", *LEDGER_COLUMNS]
    records = pd.read_csv(out / "records.csv", dtype=str, keep_default_na=False).drop(columns=volatile)
    return scores, records


def frame_differences(a, b) -> int:
    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        return max(len(a), len(b)) or 1
    return int((a.values != b.values).any(axis=1).sum())


def drill(n: int = 20, kills: int = 5, latency: float = 0.1, seed: int = 0,
          workdir: Path | None = None) -> dict[str, Any]:
    from checklist_eval.assessors.config import DEFAULT_PROMPT_VERSION

    work = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="drill-crash-"))
    rng = random.Random(seed)
    try:
        root = work / "subs"
        build_submissions(root, n)
        ref_out, out = work / "reference", work / "results"
        with RecordingServer(latency=latency, seed=seed, prompt_version=DEFAULT_PROMPT_VERSION) as server:
            code, stdout, stderr, ref_wall = run_to_end(batch_cmd(root, ref_out, server.base_url))
            server.settle("reference")
            if code != 0:
                raise RuntimeError(f"uninterrupted batch failed ({code}): {stderr.strip()[-500:]}")
            ref_requests = len(server.requests_of("reference"))
            cmd = batch_cmd(root, out, server.base_url)
            committed: set[str] = set()  # cache keys committed before the latest kill
            seen: set[str] = set()  # keys the server saw in earlier crash segments
            segments: list[dict[str, Any]] = []
            for i in range(kills + 1):
                name = f"run{i}"
                server.segment = name
                finished_before = check_outputs(out)["finished"] if out.exists() else 0
                if i < kills:
                    # A random point of the work still left: after the k-th of the remaining requests
                    # has reached the server, plus up to two latencies (in flight, or writing results).
                    remaining = max(1, ref_requests - len(committed))
                    target = rng.randint(1, remaining)
                    killed, ran = run_and_kill(cmd, server, name, target, rng.uniform(0.0, 2 * latency))
                    code = None
                else:
                    code, stdout, stderr, ran = run_to_end(cmd)
                    killed = False
                server.settle(name)
                reqs = server.requests_of(name)
                true_rep = sum(1 for k in reqs if k in committed)
                inflight_rep = sum(1 for k in reqs if k not in committed and k in seen)
                within = len(reqs) - len(set(reqs))
                seen |= set(reqs)
                keys, integrity = cache_keys(out / "cache.sqlite")
                committed |= keys
                state = check_outputs(out) if out.exists() else {"finished": 0, "unparseable": [], "tmp_files": []}
                segments.append({
                    "run": name, "killed": killed, "ran_s": round(ran, 2), "exit": code,
                    "finished_before": finished_before, "finished_after": state["finished"],
                    "requests": len(reqs), "true_repeats": true_rep, "inflight_repeats": inflight_rep,
                    "repeats_within_run": within, "cache_rows": len(keys), "cache_integrity": integrity,
                    "unparseable": state["unparseable"], "tmp_files": len(state["tmp_files"]),
                })
            final_state = check_outputs(out)
            final_keys, _ = cache_keys(out / "cache.sqlite")
            every_key = {k for _, k, _ in server.log}
        unmapped = len(final_keys - every_key)
        a_scores, a_records = comparable(ref_out)
        b_scores, b_records = comparable(out)
        final_summary = json.loads(stdout) if code == 0 and stdout.strip() else {}
    finally:
        if workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    crash_requests = sum(s["requests"] for s in segments)
    return {
        "submissions": n,
        "kills_planned": kills,
        "kills_landed": sum(1 for s in segments if s["killed"]),
        "reference_wall_s": round(ref_wall, 2),
        "reference_requests": ref_requests,
        "crash_requests": crash_requests,
        "extra_requests": crash_requests - ref_requests,
        "true_repeats": sum(s["true_repeats"] for s in segments),
        "inflight_repeats": sum(s["inflight_repeats"] for s in segments),
        "unmapped_cache_rows": unmapped,
        "final_exit": code,
        "final_failed": final_summary.get("failed"),
        "score_differences": frame_differences(a_scores, b_scores),
        "record_differences": frame_differences(a_records, b_records),
        "records_compared": len(a_records),
        "unparseable_results": sorted({u for s in segments for u in s["unparseable"]}),
        "integrity_failures": sum(1 for s in segments if s["cache_integrity"] not in ("ok", "absent")),
        "stale_tmp_files": len(final_state["tmp_files"]),
        "stale_tmp_names": final_state["tmp_files"][:10],
        "segments": segments,
    }


def passed(result: dict[str, Any]) -> bool:
    return (result["true_repeats"] == 0 and result["unmapped_cache_rows"] == 0 and result["final_exit"] == 0
            and result["score_differences"] == 0 and result["record_differences"] == 0
            and not result["unparseable_results"] and result["integrity_failures"] == 0
            and result["final_failed"] == 0)


def print_table(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(140, Console().width))
    table = Table(title=f"Crash drill: {result['submissions']} G/A/T submissions, SIGKILL and resume")
    for col in ("run", "killed after s", "done before", "done after", "requests", "true repeats",
                "in-flight repeats", "cache rows", "cache integrity", "bad result files", ".tmp left"):
        table.add_column(col, justify="left" if col in ("run", "cache integrity") else "right")
    for s in result["segments"]:
        table.add_row(s["run"], f"{s['ran_s']:.2f}" if s["killed"] else f"(ran {s['ran_s']:.2f}, exit {s['exit']})",
                      str(s["finished_before"]), str(s["finished_after"]), str(s["requests"]),
                      str(s["true_repeats"]), str(s["inflight_repeats"]), str(s["cache_rows"]),
                      s["cache_integrity"], str(len(s["unparseable"])), str(s["tmp_files"]))
    console.print(table)
    ok = "[green]PASS[/green]" if passed(result) else "[red]FAIL[/red]"
    console.print(
        f"{ok}: uninterrupted run {result['reference_requests']} requests in {result['reference_wall_s']:.2f} s; "
        f"killed runs {result['crash_requests']} requests ({result['kills_landed']} kills landed): "
        f"{result['true_repeats']} true repeats, {result['inflight_repeats']} in-flight repeats; "
        f"{result['score_differences']} score rows and {result['record_differences']} of "
        f"{result['records_compared']} records differ; {result['unmapped_cache_rows']} cache rows unmapped; "
        f"{result['stale_tmp_files']} stale .tmp files left {result['stale_tmp_names'] or ''}", highlight=False)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=20, help="G/A/T submissions (default 20)")
    p.add_argument("--kills", type=int, default=5, help="SIGKILLs before the final resume (default 5)")
    p.add_argument("--latency", type=float, default=0.1, help="server latency per request in s (default 0.1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the kill points (default 0)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)
    result = drill(n=args.n, kills=args.kills, latency=args.latency, seed=args.seed)
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result)
    return 0 if passed(result) else 1


if __name__ == "__main__":
    sys.exit(main())
