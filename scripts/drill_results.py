"""Results-folder drill: a results folder disturbed the ways storage and people disturb it, then read.

    python scripts/drill_results.py                      # 6 kills of each command, 4 disk sizes, seed 0
    python scripts/drill_results.py --kills 2 --disks 2 --json

What it does, on N synthetic submissions scored by the offline assessor (``scripts/synth.py``):

* kill batch: ``batch`` in a subprocess, SIGKILLed after a random delay (also on a root with failing
  submissions, and as a rerun on a finished folder: the window before its first record);
* kill new settings: a ``batch --assessor llm --new-settings`` rerun (loopback server) of a finished
  folder, SIGKILLed at a random instant, from before its first record to its end;
* kill rescore: ``rescore RESULTS --overrides FILE`` (an appeal) on a finished folder, SIGKILLed likewise;
* kill score --out: ``score SUB --out DIR``, then ``rescore DIR --overrides``, each SIGKILLed;
* kill serve: ``serve --results RESULTS`` taking uploads (POST /check), SIGKILLed mid-upload;
* power cut: ``batch`` SIGSTOPped at a random instant and its folder copied as it is on disk then (what a
  power cut leaves), the copy read and resumed;
* hand edits: an export of a finished, appealed folder edited, cut or removed by hand;
* full disk: ``batch`` into a small tmpfs (random size), then ``rescore --overrides`` with the rest of it filled;
* read-only: the finished, appealed folder on a tmpfs remounted read-only: every reader, ``logs``, and the
  writers (which must refuse).

After each disturbance every reader (``leaderboard --json``, ``rescore --json`` and the in-process
``ResultsFolder``) runs on the folder as it was left. A reader's answer is *identical* when its scores
equal those of an undisturbed run (before or after the appeal, for the appeal's rows), *refused* when
it exits 2 with one line naming a file of the folder, and *misstated* otherwise (other scores, another
exit, more than one line). Then the interrupted command is run again to completion: *lost* counts
runs whose final scores differ from the undisturbed run's, or whose finished submissions were scored
again. Every child's stderr is searched for a Python traceback. Full disk and read-only need root (to
mount a tmpfs); without it those rows are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

from synth import build_submissions  # noqa: E402

from checklist_eval.errors import ChecklistEvalError  # noqa: E402

REPO = SCRIPTS.parent
PAPER = REPO / "fixtures" / "submissions" / "team-alpha" / "genuine_sga.tex"
SCORE_KEYS = ("submission_id", "case", "C_G", "C_A", "C_T", "R", "S")
RUN_TIMEOUT_S = 300


@dataclass
class Row:
    """One line of the drill's table."""

    disturbance: str
    runs: int = 0
    identical: int = 0
    refused: int = 0
    lost: int = 0
    misstated: int = 0
    tracebacks: int = 0
    note: str = ""


class Drill:
    def __init__(self, work: Path, n: int, seed: int):
        self.work = work
        self.rng = random.Random(seed)
        self.root = work / "subs"
        build_submissions(self.root, n)
        self.overrides = work / "appeal.csv"
        self.env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "CHECKLIST_EVAL_CACHE": str(work / "c"),
                    "OPENAI_API_KEY": ""}
        self.notes: list[str] = []
        self.tracebacks = 0
        base = work / "base"
        started = time.monotonic()
        self._cli("batch", self.root, "--out", base, "--json", check=True)
        self.batch_s = time.monotonic() - started  # kills land within an undisturbed run's time
        first = self._scores_of(base)
        sid = sorted(first)[0]
        self.overrides.write_text(f"submission_id,role,question_id,correct,note\n{sid},G,1,0,drill appeal\n"
                                  f"{sid},A,2,0,drill appeal\n")
        self.before = first
        self.appealed_base = work / "appealed"
        shutil.copytree(base, self.appealed_base)
        started = time.monotonic()
        self._cli("rescore", self.appealed_base, "--overrides", self.overrides, "--json", check=True)
        self.rescore_s = time.monotonic() - started
        self.after = self._scores_of(self.appealed_base)
        assert self.after != self.before, "the drill's appeal changes no score"
        self.base = base
        self.failing_root = work / "subs-failing"
        shutil.copytree(self.root, self.failing_root)
        (self.failing_root / "team-broken").mkdir()
        (self.failing_root / "team-broken" / "genuine_x.tex").write_text("no checklist here\n")
        failing = work / "failing"
        self._cli("batch", self.failing_root, "--out", failing)
        self.failing_before = self._scores_of(failing)

    # ---------------------------------------------------------------------------------------- running

    def _cli(self, *args: object, check: bool = False, timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", "checklist_eval", *map(str, args)], capture_output=True,
                              text=True, env=self.env, cwd=self.work, timeout=timeout)
        self._traceback(done.stderr, args)
        if check and done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stderr[-2000:]}")
        return done

    def _spawn(self, *args: object) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "checklist_eval", *map(str, args)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env, cwd=self.work)

    def _killed(self, proc: subprocess.Popen, delay: float) -> None:
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        _out, err = proc.communicate()
        self._traceback(err, proc.args[3:], killed=True)

    def _traceback(self, stderr: str, args: object = (), killed: bool = False) -> None:
        if "Traceback (most recent call last)" in stderr:
            self.tracebacks += 1
            command = " ".join(map(str, args)) if isinstance(args, (list, tuple)) else str(args)
            self.notes.append(f"{'killed ' if killed else ''}{command[:200]}: {stderr[-1500:]}")

    def _scores_of(self, folder: Path) -> dict[str, tuple]:
        done = self._cli("leaderboard", folder, "--json", check=True)
        return {r["submission_id"]: tuple(r[k] for k in SCORE_KEYS) for r in json.loads(done.stdout)}

    # ---------------------------------------------------------------------------------------- reading

    def read_all(self, folder: Path, row: Row, allowed: list[dict[str, tuple]]) -> None:
        """Every reader on ``folder``, each answer counted in ``row``."""
        for command in ("leaderboard", "rescore"):
            done = self._cli(command, folder, "--json")
            scores = None
            if done.returncode == 0:
                data = json.loads(done.stdout)
                rows = data if command == "leaderboard" else data["submissions"]
                scores = {r["submission_id"]: tuple(r[k] for k in SCORE_KEYS) for r in rows}
            self._count(row, folder, done.returncode, done.stderr, scores, allowed, command)
        self._count_in_process(folder, row, allowed)

    def _count_in_process(self, folder: Path, row: Row, allowed: list[dict[str, tuple]]) -> None:
        import contextlib
        import io

        from checklist_eval.challenge.results.folder import ResultsFolder
        from checklist_eval.challenge.results.leaderboard import leaderboard_row

        try:
            with contextlib.redirect_stderr(io.StringIO()):  # its notes: the CLI readers' rows show them
                rows = ResultsFolder.open(folder).scored(leaderboard_row)
        except ChecklistEvalError as err:
            self._count(row, folder, 2, f"checklist-eval: error: {err}\n", None, allowed, "ResultsFolder")
            return
        scores = {r.submission_id: tuple(getattr(r, k) for k in SCORE_KEYS) for r in rows}
        self._count(row, folder, 0, "", scores, allowed, "ResultsFolder")

    def _count(self, row: Row, folder: Path, code: int, stderr: str, scores: dict | None,
               allowed: list[dict[str, tuple]], who: str) -> None:
        lines = [line for line in stderr.splitlines() if line.startswith("checklist-eval: error:")]
        if code == 0 and scores in allowed:
            row.identical += 1
        elif code == 2 and len(lines) == 1 and str(folder) in lines[0]:
            row.refused += 1
        else:
            row.misstated += 1
            self.notes.append(f"{row.disturbance}: {who} exit {code}: {stderr.strip()[-400:]}")

    def _lost(self, folder: Path, row: Row, want: dict[str, tuple], finished_before: set[str] | None = None,
              resumed: int | None = None) -> None:
        try:
            final = self._scores_of(folder)
        except RuntimeError as err:
            final = {"error": (str(err),)}
        if final != want or (finished_before is not None and resumed is not None and resumed < len(finished_before)):
            row.lost += 1
            self.notes.append(f"{row.disturbance}: lost (final {'same' if final == want else 'different'}, "
                              f"resumed {resumed} of {len(finished_before or ())} finished)")

    # ------------------------------------------------------------------------------------ disturbances

    def kill_batch(self, kills: int) -> Row:
        row = Row("kill batch")
        for i in range(kills):
            out = self.work / f"kb{i}"
            proc = self._spawn("batch", self.root, "--out", out, "--json", "--jobs", "2")
            self._killed(proc, self.rng.uniform(0.3, 1.0) * self.batch_s)
            row.runs += 1
            finished = _finished(out)
            if out.is_dir():
                self.read_all(out, row, [self.before])
            done = self._cli("batch", self.root, "--out", out, "--json")
            resumed = json.loads(done.stdout)["resumed"] if done.returncode == 0 else None
            self._lost(out, row, self.before, finished, resumed)
        return row

    def kill_batch_failing(self, kills: int) -> Row:
        row = Row("kill batch (failures)")
        for i in range(kills):
            out = self.work / f"kf{i}"
            proc = self._spawn("batch", self.failing_root, "--out", out, "--json", "--jobs", "2")
            self._killed(proc, self.rng.uniform(0.2, 1.0) * self.batch_s)
            row.runs += 1
            if out.is_dir():
                self.read_all(out, row, [self.failing_before])
            self._cli("batch", self.failing_root, "--out", out, "--json")
            self._lost(out, row, self.failing_before)
        return row

    def kill_rerun(self, kills: int) -> Row:
        """A rerun of a finished folder killed early: the window before (and just after) its first record."""
        row = Row("kill rerun (early)")
        for i in range(kills):
            out = self.work / f"kq{i}"
            shutil.copytree(self.base, out)
            proc = self._spawn("batch", self.root, "--out", out, "--json")
            self._killed(proc, self.rng.uniform(0.0, 0.5) * self.batch_s)
            row.runs += 1
            self.read_all(out, row, [self.before])
            done = self._cli("batch", self.root, "--out", out, "--json")
            self._lost(out, row, self.before, set(self.before), json.loads(done.stdout)["resumed"]
                       if done.returncode == 0 else None)
        return row

    def kill_new_settings(self, kills: int) -> Row:
        from checklist_eval.testing import MockServer

        row = Row("kill new-settings rerun")
        env = {**self.env, "OPENAI_API_KEY": "sk-drill"}
        with MockServer(latency=0.02, seed=0) as server:
            llm = ("--assessor", "llm", "--model", "gpt-4o-mini", "--base-url", server.base_url, "--new-settings",
                   "--no-cache", "--json")
            want_dir = self.work / "ns-want"
            shutil.copytree(self.base, want_dir)
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "checklist_eval", "batch", str(self.root), "--out",
                                   str(want_dir), *llm], capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT_S)
            took = time.monotonic() - started
            self._traceback(done.stderr, ("batch", "--new-settings"))
            want = self._scores_of(want_dir)
            for i in range(kills):
                out = self.work / f"kn{i}"
                shutil.copytree(self.base, out)
                proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", "batch", str(self.root), "--out",
                                         str(out), *llm], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=env, cwd=self.work)
                self._killed(proc, self.rng.uniform(0.0, 1.0) * took)
                row.runs += 1
                self.read_all(out, row, [self.before, want])  # the old run until the new one completes
                done = subprocess.run([sys.executable, "-m", "checklist_eval", "batch", str(self.root), "--out",
                                       str(out), *llm], capture_output=True, text=True, env=env,
                                      timeout=RUN_TIMEOUT_S)
                self._traceback(done.stderr, ("batch", "--new-settings"))
                self._lost(out, row, want)
        return row

    def kill_score_out(self, kills: int) -> Row:
        row = Row("kill score --out + appeal")
        sub = sorted(p for p in self.root.iterdir() if p.is_dir())[0]
        want_dir = self.work / "so-want"
        self._cli("score", sub, "--out", want_dir, "--json", check=True)
        plain = self._scores_of(want_dir)
        self._cli("rescore", want_dir, "--overrides", self.overrides, "--json", check=True)
        appealed = self._scores_of(want_dir)
        for i in range(kills):
            out = self.work / f"ko{i}"
            proc = self._spawn("score", sub, "--out", out, "--json")
            self._killed(proc, self.rng.uniform(0.2, 1.0) * self.batch_s / 2)
            row.runs += 1
            if (out / "results.sqlite").is_file():
                self.read_all(out, row, [plain])
            self._cli("score", sub, "--out", out, "--json")
            proc = self._spawn("rescore", out, "--overrides", self.overrides, "--json")
            self._killed(proc, self.rng.uniform(0.3, 1.0) * self.rescore_s)
            self.read_all(out, row, [plain, appealed])
            self._cli("rescore", out, "--overrides", self.overrides, "--json")
            self._lost(out, row, appealed)
        return row

    def power_cut(self, kills: int) -> Row:
        """The folder as the disk holds it at a random instant of a batch (process frozen, folder copied)."""
        row = Row("power cut (copy mid-write)")
        for i in range(kills):
            out = self.work / f"pc{i}"
            shutil.copytree(self.base, out) if i % 2 else None  # half of them a rerun of a finished folder
            proc = self._spawn("batch", self.root, "--out", out, "--json", "--jobs", "2")
            row.note = _freeze_after(proc, out, self.rng.randrange(len(self.before)), row.note)
            proc.send_signal(signal.SIGSTOP)
            copy = self.work / f"pc{i}-copy"
            if out.is_dir():
                shutil.copytree(out, copy, ignore=shutil.ignore_patterns(".checklist-eval.lock"))
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            row.runs += 1
            if not copy.is_dir():
                continue
            self.read_all(copy, row, [self.before])
            self._cli("batch", self.root, "--out", copy, "--json")
            self._lost(copy, row, self.before)
        return row

    def hand_edits(self, edits: int) -> Row:
        row = Row("hand edits of exports")
        names = ["records.csv", "records.jsonl", "scores.csv", "summary.json", "failures.jsonl", "overrides.jsonl",
                 "exports.json"]
        for i in range(edits):
            out = self.work / f"he{i}"
            shutil.copytree(self.appealed_base, out)
            subs = sorted((out / "submissions").iterdir())
            path = self.rng.choice([out / n for n in names] + [s / "result.json" for s in subs])
            data = path.read_bytes()
            how = self.rng.choice(["cut", "edit", "remove", "flip"])
            if how == "remove":
                path.unlink()
            elif how == "cut":
                path.write_bytes(data[: self.rng.randrange(max(1, len(data)))])
            elif how == "flip":
                path.write_bytes(data.replace(b"1", b"0", self.rng.randint(1, 50)))
            else:
                at = self.rng.randrange(max(1, len(data)))
                path.write_bytes(data[:at] + b"9" + data[at + 1:])
            row.runs += 1
            self.read_all(out, row, [self.after])
            self._lost(out, row, self.after)
        return row

    def kill_rescore(self, kills: int) -> Row:
        row = Row("kill rescore --overrides")
        for i in range(kills):
            out = self.work / f"kr{i}"
            shutil.copytree(self.base, out)
            proc = self._spawn("rescore", out, "--overrides", self.overrides, "--json")
            self._killed(proc, self.rng.uniform(0.5, 1.0) * self.rescore_s)
            row.runs += 1
            self.read_all(out, row, [self.before, self.after])
            self._cli("rescore", out, "--overrides", self.overrides, "--json")
            self._lost(out, row, self.after)
        return row

    def kill_serve(self, kills: int) -> Row:
        row = Row("kill serve (uploads)")
        for i in range(kills):
            out = self.work / f"ks{i}"
            shutil.copytree(self.appealed_base, out)
            port = _free_port()
            proc = self._spawn("serve", "--results", out, "--port", port)
            _wait_for(port)
            for _ in range(self.rng.randint(1, 3)):
                _upload(port, PAPER)
            _get(port, "/results/")
            self._killed(proc, self.rng.uniform(0.0, 1.0))
            row.runs += 1
            self.read_all(out, row, [self.after])
            self._lost(out, row, self.after)
        return row

    def full_disk(self, sizes: list[int]) -> Row:
        row = Row("full disk")
        for i, kb in enumerate(sizes):
            mount = self._mount(f"fd{i}", f"size={kb}k")
            out = mount / "results"
            self._cli("batch", self.root, "--out", out, "--json")
            row.runs += 1
            if out.is_dir():
                self.read_all(out, row, [self.before])
            moved = self.work / f"fd{i}-moved"
            if out.is_dir():
                shutil.copytree(out, moved)
            done = self._cli("batch", self.root, "--out", moved, "--json")
            self._lost(moved, row, self.before, _finished(out) if out.is_dir() else set(),
                       json.loads(done.stdout)["resumed"] if done.returncode == 0 else None)
            _unmount(mount)
        # an appeal on a full disk: refused, and the folder read as it was
        for i in range(len(sizes)):
            mount = self._mount(f"fa{i}", "size=4m")
            out = mount / "results"
            shutil.copytree(self.base, out)
            _fill(mount, keep=self.rng.randint(0, 64) * 1024)
            done = self._cli("rescore", out, "--overrides", self.overrides, "--json")
            row.runs += 1
            if done.returncode != 0:  # the appeal itself: refused in one line naming the folder
                self._count(row, out, done.returncode, done.stderr, None, [], "rescore --overrides")
            self.read_all(out, row, [self.before, self.after])
            _unmount(mount)
        return row

    def read_only(self) -> Row:
        row = Row("read-only")
        mount = self._mount("ro", "size=8m")
        out = mount / "results"
        shutil.copytree(self.appealed_base, out)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True, capture_output=True)
        row.runs += 1
        self.read_all(out, row, [self.after])
        logs = self._cli("logs", "--cache", out)  # a reader too: it answers (here: no model calls), or refuses
        self._count(row, out, logs.returncode, logs.stderr, {} if logs.returncode == 0 else None, [{}], "logs")
        for writer in (("batch", self.root, "--out", out, "--json"),
                       ("rescore", out, "--overrides", self.overrides, "--json")):
            done = self._cli(*writer)  # must refuse: exit 2, one line naming the folder
            self._count(row, out, done.returncode, done.stderr, None, [], str(writer[0]))
        self.read_all(out, row, [self.after])  # and nothing changed
        _unmount(mount)
        return row

    def _mount(self, name: str, options: str) -> Path:
        where = self.work / name
        where.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], check=True, capture_output=True)
        return where


def _freeze_after(proc: subprocess.Popen, out: Path, k: int, note: str) -> str:
    """Wait until the run ``proc`` writes has committed ``k`` submissions (0: its run has begun), then
    return, the process still running (the caller freezes it there); ``note`` gains where it was."""
    import sqlite3

    deadline = time.monotonic() + RUN_TIMEOUT_S
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            db = sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True, timeout=1)
            try:
                row = db.execute("SELECT r.id, (SELECT count(*) FROM submissions s WHERE s.run_id = r.id) FROM runs r "
                                 "WHERE r.state = 'running' ORDER BY r.id DESC LIMIT 1").fetchone()
            finally:
                db.close()
        except sqlite3.Error:
            row = None
        if row is not None and row[1] >= k:
            return f"{note} {row[1]}".strip()
        time.sleep(0.01)
    return f"{note} done".strip()


def _finished(out: Path) -> set[str]:
    """The submissions a run committed (in results.sqlite; a folder from before it: by result.json)."""
    import sqlite3

    if (out / "results.sqlite").is_file():
        db = sqlite3.connect(out / "results.sqlite")
        try:
            return {r[0] for r in db.execute("SELECT DISTINCT submission_id FROM submissions")}
        except sqlite3.Error:
            return set()
        finally:
            db.close()
    found = set()
    for result in (out / "submissions").glob("*/result.json") if (out / "submissions").is_dir() else []:
        try:
            json.loads(result.read_bytes())
            found.add(result.parent.name)
        except ValueError:
            pass
    return found


def _fill(mount: Path, keep: int) -> None:
    """Fill the file system but ``keep`` bytes."""
    stat = os.statvfs(mount)
    free = stat.f_bavail * stat.f_frsize
    with open(mount / "filler", "wb") as fh:
        try:
            fh.write(b"\0" * max(0, free - keep))
        except OSError:
            pass


def _unmount(mount: Path) -> None:
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            _get(port, "/")
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("serve did not start")


def _get(port: int, path: str) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as reply:
        return reply.read()


def _upload(port: int, paper: Path) -> None:
    boundary = "drillboundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"assessor\"\r\n\r\nheuristic\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{paper.name}\"\r\n"
            "Content-Type: application/x-tex\r\n\r\n").encode()
    body += paper.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/check", data=body, method="POST",
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        urllib.request.urlopen(request, timeout=30).read()
    except OSError:
        pass  # the drill kills the server; an answer is not what it measures


def drill(*, n: int = 8, kills: int = 6, disks: int = 4, seed: int = 0, workdir: Path | None = None) -> dict:
    work = Path(workdir or tempfile.mkdtemp(prefix="drill-results-"))
    work.mkdir(parents=True, exist_ok=True)
    d = Drill(work, n, seed)
    rows = [d.kill_batch(kills), d.kill_batch_failing(kills), d.kill_rerun(kills), d.kill_new_settings(kills),
            d.kill_rescore(kills), d.kill_score_out(max(1, kills // 2)), d.kill_serve(max(1, kills // 2)),
            d.power_cut(kills), d.hand_edits(kills * 2)]
    if os.geteuid() == 0:
        rows += [d.full_disk([d.rng.choice([48, 96, 160, 240, 320, 480]) for _ in range(disks)]), d.read_only()]
    else:
        d.notes.append("not root: the full-disk and read-only rows are skipped (they mount a tmpfs)")
    return {"rows": [asdict(r) for r in rows], "tracebacks": d.tracebacks, "notes": d.notes}


def passed(result: dict) -> bool:
    return result["tracebacks"] == 0 and all(r["lost"] == 0 and r["misstated"] == 0 for r in result["rows"])


def print_table(result: dict) -> None:
    head = ("disturbance", "runs", "identical", "refused", "lost", "misstated")
    print(f"{head[0]:<26}" + "".join(f"{h:>10}" for h in head[1:]))
    for r in result["rows"]:
        print(f"{r['disturbance']:<26}" + "".join(f"{r[h]:>10}" for h in head[1:]))
    for r in result["rows"]:
        if r.get("note"):
            print(f"{r['disturbance']}: copied with these numbers of submissions committed: {r['note']}")
    print(f"tracebacks in any child's stderr: {result['tracebacks']}")
    for note in result["notes"][:20]:
        print("note:", note)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=8, help="submissions (default 8)")
    parser.add_argument("--kills", type=int, default=6, help="kills of batch and of rescore each (default 6)")
    parser.add_argument("--disks", type=int, default=4, help="full-disk runs (default 4)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    result = drill(n=args.n, kills=args.kills, disks=args.disks, seed=args.seed, workdir=args.workdir)
    print(json.dumps(result, indent=1)) if args.json else print_table(result)
    return 0 if passed(result) else 1


if __name__ == "__main__":
    raise SystemExit(main())
