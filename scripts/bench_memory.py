"""Peak memory of a heuristic ``batch`` (and, with ``--rescore``, of an appeal on its results) as the number
of submissions grows.

Builds N GAT triplets from ``fixtures/submissions/team-alpha`` (``synth.build_submissions``: one numbered
sentence differs per copy), runs the CLI as a user types it, ``python -m checklist_eval batch ROOT --out
RESULTS`` with default flags (heuristic assessor, parse workers, progress off because stderr is not a
terminal), and samples ``/proc`` every ``--interval`` seconds for the resident memory of the whole process
tree (the CLI, the fork server and every parse worker, and the TeX runs they start; summed at each sample).
Prints one row per N: peak tree RSS; the peak of the command's own interpreters alone (``peak_command_mb``:
what the run holds, without TeX), and the most TeX (or other engine) processes seen at once; wall time and
time per submission (wall, and CPU of the whole tree, which a loaded machine disturbs less).

What grows with N shows in ``peak_command_mb``. The whole tree's peak also holds the TeX runs alive at
the sampled instant, one per paper being compiled (at most one per parse worker, whatever N): about 55 MB
each, so a longer run, sampled more often, is likelier to catch two at their peak at once (206 -> 247 MB
from N = 10 to 80 in CI, with ``peak_command_mb`` flat).

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

from checklist_eval.testing.proctree import PAGE_KB, descendants  # noqa: E402

DEFAULT_SIZES = (400, 1600, 6400)


@dataclass
class Row:
    code: str
    command: str
    submissions: int
    peak_tree_mb: float
    peak_processes: int
    peak_command_mb: float
    peak_engines: int
    wall_s: float
    ms_per_submission: float
    cpu_ms_per_submission: float
    exit_code: int


@dataclass
class Peaks:
    """The largest of each figure over the samples of one run's process tree (each at its own sample)."""

    tree_kb: int = 0
    processes: int = 0  # at the tree's peak
    command_kb: int = 0
    engines: int = 0

    def sample(self, root: int, interpreter: str) -> None:
        """One look at the tree below ``root``: the command's own processes (running ``interpreter`` for a
        second or more: the CLI, the fork server, parse workers, multiprocessing's resource tracker) apart
        from the rest (TeX and any other engine a worker starts for one paper, also in the instant between
        the worker's fork and the engine's exec, when it still runs the interpreter and shows the
        worker's memory again)."""
        own = other = engines = 0
        pids = descendants(root)
        now = _uptime_s()
        for pid in pids:
            kb = _rss_kb(pid)
            if not kb:
                continue  # ended between listing and reading
            if pid == root or (_exe(pid) == interpreter and now - _started_s(pid) >= OWN_MIN_AGE_S):
                own += kb
            else:
                other += kb
                engines += 1
        if own + other > self.tree_kb:
            self.tree_kb, self.processes = own + other, len(pids)
        self.command_kb = max(self.command_kb, own)
        self.engines = max(self.engines, engines)


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * PAGE_KB
    except (OSError, IndexError, ValueError):
        return 0


OWN_MIN_AGE_S = 1.0
_TICKS = os.sysconf("SC_CLK_TCK")


def _uptime_s() -> float:
    with open("/proc/uptime") as fh:
        return float(fh.read().split()[0])


def _started_s(pid: int) -> float:
    """When ``pid`` started, in seconds since boot (inf when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[19]) / _TICKS
    except (OSError, IndexError, ValueError):
        return float("inf")


def _exe(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def run_cli(args: list[str], cwd: Path, code: Path | None, interval: float) -> tuple[int, Peaks, float, float]:
    """Run ``checklist-eval ARGS``; (exit code, the tree's peaks, wall seconds, CPU seconds of the tree:
    user + system of every process the CLI waited for, the measure a loaded machine disturbs least)."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [sys.executable, "-m", "checklist_eval", *args]
    peaks = Peaks()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # Started outside any checkout: ``-m`` puts the working folder first on sys.path, ahead of
    # PYTHONPATH, so run from the repository root the baseline would import this checkout's code.
    with subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          cwd=cwd) as child:
        interpreter = ""
        while child.poll() is None:
            interpreter = interpreter or _exe(child.pid)
            peaks.sample(child.pid, interpreter)
            time.sleep(interval)
        stderr = child.stderr.read().decode(errors="replace") if child.stderr else ""
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if child.returncode != 0:
        print(f"{args[0]} exited {child.returncode}: {stderr.strip()[-500:]}", file=sys.stderr)
    return child.returncode, peaks, wall, cpu


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


def row(label: str, command: str, n: int, measured: tuple[int, Peaks, float, float]) -> Row:
    rc, peaks, wall, cpu = measured
    return Row(code=label, command=command, submissions=n, peak_tree_mb=round(peaks.tree_kb / 1024, 1),
               peak_processes=peaks.processes, peak_command_mb=round(peaks.command_kb / 1024, 1),
               peak_engines=peaks.engines, wall_s=round(wall, 2), ms_per_submission=round(wall / n * 1000, 1),
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
    print(f"{'code':<6} {'command':<20} {'N':>6} {'peak tree MB':>13} {'procs':>6} {'command MB':>11} {'TeX':>4} "
          f"{'wall s':>8} {'ms/sub':>8} {'cpu ms/sub':>11} {'exit':>5}")
    for r in sorted(rows, key=lambda r: (r.command, r.code, r.submissions)):
        print(f"{r.code:<6} {r.command:<20} {r.submissions:>6} {r.peak_tree_mb:>13.1f} {r.peak_processes:>6} "
              f"{r.peak_command_mb:>11.1f} {r.peak_engines:>4} {r.wall_s:>8.2f} {r.ms_per_submission:>8.1f} "
              f"{r.cpu_ms_per_submission:>11.1f} {r.exit_code:>5}")
    for label, command in dict.fromkeys((r.code, r.command) for r in rows):
        mine = sorted((r for r in rows if (r.code, r.command) == (label, command)), key=lambda r: r.submissions)
        if len(mine) > 1:
            lo, hi = mine[0], mine[-1]
            slope = (hi.peak_command_mb - lo.peak_command_mb) / (hi.submissions - lo.submissions)
            print(f"{label} {command}: {slope * 1000:+.1f} kB per submission (command MB) from N={lo.submissions}"
                  f" to N={hi.submissions}")


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
