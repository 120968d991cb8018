"""Peak memory of a heuristic ``batch`` (and, with ``--rescore``, of an appeal on its results) as the number
of submissions grows.

Builds N GAT triplets from ``fixtures/submissions/team-alpha`` (``synth.build_submissions``: one numbered
sentence differs per copy), runs the CLI as a user types it, ``python -m checklist_eval batch ROOT --out
RESULTS`` with default flags (heuristic assessor, parse workers, progress off because stderr is not a
terminal), and samples ``/proc`` every ``--interval`` seconds for the resident memory of the whole process
tree (the CLI and every parse worker, summed at each sample). Prints one row per N: peak tree RSS, wall
time and time per submission (wall, and CPU of the whole tree, which a loaded machine disturbs less).

Baseline, in the same run (``--baseline DIR``): the same sizes against another checkout of the package,
e.g. main before records were streamed::

    git worktree add /tmp/h20-base main
    python scripts/bench_memory.py -n 400 -n 1600 --baseline /tmp/h20-base
    git worktree remove /tmp/h20-base

A baseline row is marked ``base``; its code is imported from DIR (``PYTHONPATH``), with this checkout's
interpreter and dependencies.

    python scripts/bench_memory.py                 # N = 400, 1600, 6400
    python scripts/bench_memory.py -n 20 --json    # what the test suite runs
    python scripts/bench_memory.py --rescore       # also an appeal on each run (rescore --overrides)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

from synth import build_submissions  # noqa: E402

from checklist_eval.testing.proctree import tree_rss_kb  # noqa: E402

DEFAULT_SIZES = (400, 1600, 6400)


@dataclass
class Row:
    code: str
    command: str
    submissions: int
    peak_tree_mb: float
    peak_processes: int
    wall_s: float
    ms_per_submission: float
    cpu_ms_per_submission: float
    exit_code: int


def run_cli(args: list[str], cwd: Path, code: Path | None, interval: float) -> tuple[int, int, int, float, float]:
    """Run ``checklist-eval ARGS``; (exit code, peak tree kB, processes at that peak, wall seconds, CPU
    seconds of the tree: user + system of every process the CLI waited for, the measure a loaded machine
    disturbs least)."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [sys.executable, "-m", "checklist_eval", *args]
    peak, procs = 0, 0
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # Started outside any checkout: ``-m`` puts the working folder first on sys.path, ahead of
    # PYTHONPATH, so run from the repository root the baseline would import this checkout's code.
    with subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          cwd=cwd) as child:
        while child.poll() is None:
            kb, n = tree_rss_kb(child.pid)
            if kb > peak:
                peak, procs = kb, n
            time.sleep(interval)
        stderr = child.stderr.read().decode(errors="replace") if child.stderr else ""
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if child.returncode != 0:
        print(f"{args[0]} exited {child.returncode}: {stderr.strip()[-500:]}", file=sys.stderr)
    return child.returncode, peak, procs, wall, cpu


def measure(n: int, code: Path | None, label: str, interval: float, keep: Path | None,
            rescore: bool = False) -> list[Row]:
    """The batch of N submissions, then (``rescore``) an appeal on one record of its results."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    results = tmp / "results"
    try:
        build_submissions(tmp / "subs", n)
        rows = [row(label, "batch", n, run_cli(["batch", str(tmp / "subs"), "--out", str(results)], tmp, code,
                                                interval))]
        if rescore and rows[0].exit_code == 0:
            appeal = one_appeal(results, tmp / "appeal.csv")
            rows.append(row(label, "rescore --overrides", n, run_cli(
                ["rescore", str(results), "--overrides", str(appeal), "--json"], tmp, code, interval)))
        if keep is not None:
            shutil.copytree(results, keep / f"{label}-{n}", dirs_exist_ok=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def row(label: str, command: str, n: int, measured: tuple[int, int, int, float, float]) -> Row:
    rc, peak_kb, procs, wall, cpu = measured
    return Row(code=label, command=command, submissions=n, peak_tree_mb=round(peak_kb / 1024, 1),
               peak_processes=procs, wall_s=round(wall, 2), ms_per_submission=round(wall / n * 1000, 1),
               cpu_ms_per_submission=round(cpu / n * 1000, 1), exit_code=rc)


def one_appeal(results: Path, path: Path) -> Path:
    """An overrides file reversing the verdict of the ledger's first record (what an appeal looks like)."""
    with (results / "records.jsonl").open(encoding="utf-8") as ledger:
        first = json.loads(ledger.readline())
    path.write_text("submission_id,role,question_id,correct\n"
                    f"{first['submission_id']},{first['role']},{first['question_id']},{int(not first['correct'])}\n",
                    encoding="utf-8")
    return path


def print_table(rows: list[Row]) -> None:
    print(f"{'code':<6} {'command':<20} {'N':>6} {'peak tree MB':>13} {'procs':>6} {'wall s':>8} {'ms/sub':>8} "
          f"{'cpu ms/sub':>11} {'exit':>5}")
    for r in sorted(rows, key=lambda r: (r.command, r.code, r.submissions)):
        print(f"{r.code:<6} {r.command:<20} {r.submissions:>6} {r.peak_tree_mb:>13.1f} {r.peak_processes:>6} "
              f"{r.wall_s:>8.2f} {r.ms_per_submission:>8.1f} {r.cpu_ms_per_submission:>11.1f} {r.exit_code:>5}")
    for label, command in dict.fromkeys((r.code, r.command) for r in rows):
        mine = sorted((r for r in rows if (r.code, r.command) == (label, command)), key=lambda r: r.submissions)
        if len(mine) > 1:
            lo, hi = mine[0], mine[-1]
            slope = (hi.peak_tree_mb - lo.peak_tree_mb) / (hi.submissions - lo.submissions)
            print(f"{label} {command}: {slope * 1000:+.1f} kB per submission from N={lo.submissions} to"
                  f" N={hi.submissions}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, action="append", dest="sizes", metavar="N",
                    help=f"number of submissions (repeatable; default {', '.join(map(str, DEFAULT_SIZES))})")
    ap.add_argument("--baseline", type=Path, metavar="DIR",
                    help="also run every size against the package checked out in DIR (a baseline)")
    ap.add_argument("--interval", type=float, default=0.02, metavar="S", help="sampling period (default 0.02 s)")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="copy each results folder to DIR/<code>-<N>")
    ap.add_argument("--rescore", action="store_true",
                    help="after each batch, also measure an appeal: rescore RESULTS --overrides (one record)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    sizes = sorted(args.sizes or DEFAULT_SIZES)
    runs: list[tuple[Path | None, str]] = [(None, "this")]
    if args.baseline is not None:
        if not (args.baseline / "checklist_eval" / "__init__.py").is_file():
            ap.error(f"--baseline {args.baseline}: no checklist_eval package there")
        runs.insert(0, (args.baseline.resolve(), "base"))
    # Interleaved (each size: baseline, then this code), so a machine's changing load hits both alike.
    rows = [r for n in sizes for code, label in runs for r in measure(n, code, label, args.interval, args.keep,
                                                                     args.rescore)]
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
    else:
        print_table(rows)
    return 0 if all(r.exit_code == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
