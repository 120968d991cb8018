#!/usr/bin/env python
"""The organizer's browser (``serve --results``) on a large results folder, idle and while a batch
writes to it, with the code before results.sqlite (``--baseline-src``) on the same folder's files as
the baseline, in the same run.

    python scripts/bench_browse.py --n 300 --baseline-src /path/to/older/checkout

What it does: N synthetic submissions (``scripts/synth.py``) scored by the offline assessor into a
results folder; ``serve --results`` on it; then GET a submission's page and the leaderboard (each
repeated), and the upload page ``/`` (what an author's upload and a progress poll wait on: the event
loop), first idle, then while a ``batch`` rescoring every submission (each paper changed by a byte)
writes into the folder. The baseline serves a copy of the folder's files without the database (what
the code before it read) with the older checkout, idle. Prints one row per (code, state, page): the
median and the max seconds; ``--json`` prints them as one object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
ROOT = SCRIPTS.parent
sys.path.insert(0, str(SCRIPTS))

from synth import build_submissions  # noqa: E402


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(base: str, path: str) -> float:
    t0 = time.perf_counter()
    with urllib.request.urlopen(base + path, timeout=600) as reply:
        reply.read()
    return time.perf_counter() - t0


def _serve(src: Path, results: Path, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    port = _port()
    proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", "serve", "--results", str(results), "--port",
                             str(port)], env={**env, "PYTHONPATH": str(src)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            _get(base, "/")
            return proc, base
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("serve did not start")


def _measure(base: str, sid: str, rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"submission page": [], "leaderboard": [], "upload page": []}
    for _ in range(rounds):
        out["submission page"].append(_get(base, f"/results/s/{sid}"))
        out["leaderboard"].append(_get(base, "/results/"))
        out["upload page"].append(_get(base, "/"))
    return out


def _concurrent_upload_page(base: str, sid: str) -> float:
    """The upload page's time while a submission page is being built (does it wait behind it?)."""
    import threading

    slow = threading.Thread(target=_get, args=(base, f"/results/s/{sid}"))
    slow.start()
    time.sleep(0.01)
    took = _get(base, "/")
    slow.join()
    return took


def bench(n: int, rounds: int, baseline_src: Path | None, work: Path) -> list[dict]:
    env = {**os.environ, "NO_COLOR": "1", "CHECKLIST_EVAL_CACHE": str(work / "cache.sqlite")}
    subs, results = work / "subs", work / "results"
    build_submissions(subs, n)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "checklist_eval", "batch", str(subs), "--out", str(results), "--quiet",
                    "--json"], env={**env, "PYTHONPATH": str(ROOT)}, check=True, capture_output=True)
    batch_s = time.perf_counter() - t0
    sid = sorted(p.name for p in subs.iterdir())[n // 2]
    rows: list[dict] = []

    def add(code: str, state: str, figures: dict[str, list[float]]) -> None:
        for page, times in figures.items():
            rows.append({"code": code, "state": state, "page": page, "n": len(times),
                         "median_s": statistics.median(times), "max_s": max(times)})

    proc, base = _serve(ROOT, results, env)
    try:
        _get(base, "/results/")  # the first page opens the folder
        add("this branch", "idle", _measure(base, sid, rounds))
        for sub in subs.iterdir():  # every submission changed: the rerun rescores (and commits) all of them
            tex = next(sub.glob("genuine_*.tex"))
            tex.write_text(tex.read_text() + "%\n")
        writer = subprocess.Popen([sys.executable, "-m", "checklist_eval", "batch", str(subs), "--out", str(results),
                                   "--quiet", "--json"], env={**env, "PYTHONPATH": str(ROOT)},
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        during: dict[str, list[float]] = {"submission page": [], "leaderboard": [], "upload page": [],
                                          "upload page beside a submission page": []}
        while writer.poll() is None:
            for page, times in _measure(base, sid, 1).items():
                during[page] += times
            during["upload page beside a submission page"].append(_concurrent_upload_page(base, sid))
        add("this branch", f"batch writing ({batch_s:.0f} s run)", during)
    finally:
        proc.kill()
        proc.wait()
    if baseline_src is not None:
        legacy = work / "legacy"
        shutil.copytree(results, legacy, ignore=shutil.ignore_patterns("results.sqlite*", "exports.json"))
        proc, base = _serve(baseline_src, legacy, env)
        try:
            _get(base, "/results/")
            figures = _measure(base, sid, max(2, rounds // 3))
            figures["upload page beside a submission page"] = [_concurrent_upload_page(base, sid)
                                                               for _ in range(max(2, rounds // 3))]
            add("baseline (files)", "idle", figures)
        finally:
            proc.kill()
            proc.wait()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--baseline-src", type=Path, default=None, help="an older checkout to serve the files with")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-browse-") as tmp:
        rows = bench(args.n, args.rounds, args.baseline_src, Path(tmp))
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'code':<18}{'state':<28}{'page':<40}{'n':>4}{'median s':>10}{'max s':>9}")
    for r in rows:
        print(f"{r['code']:<18}{r['state']:<28}{r['page']:<40}{r['n']:>4}{r['median_s']:>10.3f}{r['max_s']:>9.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
