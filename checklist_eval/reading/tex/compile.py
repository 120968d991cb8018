"""Compiling a project's copy with the machine's TeX, bounded, and keeping the result by digest.

Each pass runs the engine in the parse worker's temporary folder with no shell escape, with kpathsea's
``openout_any``/``openin_any`` set to paranoid (no file written or read by an absolute path or outside
the folder, except TeX's own tree found through its search paths), with the user's ``TEXINPUTS`` and
friends removed (nothing of theirs is read), in nonstop mode with stdin closed (an error never waits
for a reply), in a process group of its own killed whole at the wall-time budget, under the worker's
address-space limit and a CPU-time limit, and killed with the worker if the worker dies.

graphicx's ``draft`` option is passed before the document starts: a figure is a box of its size, so a
project whose figures are missing (the shared papers carry none) or huge still prints its text; and
microtype's font expansion (pdfTeX stops on it where the fonts are bitmaps) and TikZ's externalisation
(it needs shell escape) are turned off.

A finished compile is kept under the cache folder, named by the digest of the project's files, the
root, the engine and its version: ``CACHE_DIR/<digest>/{paper.pdf, paper.synctex.gz, meta.json}``.
A rerun, or another paper of the same bytes, reads it back instead of compiling again.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from checklist_eval.fsutil import read_json_file
from checklist_eval.reading.tex.engine import LogFindings

CACHE_FORMAT = "8"  # bump when what a cache entry holds, or how a compile is run, changes
JOB = "paper"  # the job name: paper.pdf, paper.log, paper.synctex.gz
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.+-]+$")
# Before the document: figures as boxes of their size (graphicx's draft: a missing figure is no error),
# and no font expansion (microtype's expansion stops pdfTeX where the T1 fonts are bitmaps, without
# cm-super). Neither changes a word TeX prints.
# TikZ's externalisation is turned off: it compiles each picture by a shell escape, which is refused.
_PRELUDE = ("\\PassOptionsToPackage{draft}{graphicx}\\PassOptionsToPackage{expansion=false}{microtype}"
            "\\AtBeginDocument{\\csname tikzexternaldisable\\endcsname}")
# Variables through which a user's environment would make TeX read files of theirs
_USER_PATHS = ("TEXINPUTS", "BIBINPUTS", "BSTINPUTS", "TEXFONTS", "TFMFONTS", "TEXMFHOME", "TEXMFOUTPUT",
               "TEXMFCNF", "TEXFORMATS", "TEXPOOL", "ENCFONTS", "TEXPSHEADERS", "LUAINPUTS", "OPENTYPEFONTS",
               "TTFONTS", "T1FONTS", "AFMFONTS", "VFFONTS", "TEXCONFIG")


@dataclass
class Compiled:
    """A compile's outcome: the PDF and SyncTeX file (None when TeX printed nothing) and the log's findings."""

    folder: Path  # where paper.pdf and paper.synctex.gz are
    workdir: str  # the folder TeX ran in (SyncTeX names inputs by it)
    engine: str
    passes: int
    seconds: float
    findings: LogFindings
    cached: bool = False
    timed_out: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def pdf(self) -> Path | None:
        path = self.folder / f"{JOB}.pdf"
        return path if path.is_file() and path.stat().st_size > 0 else None

    @property
    def synctex(self) -> Path | None:
        path = self.folder / f"{JOB}.synctex.gz"
        return path if path.is_file() else None


def cache_dir() -> Path:
    """``$CHECKLIST_EVAL_TEX_CACHE``, else ``~/.cache/checklist-eval/tex`` (beside the response cache)."""
    env = os.environ.get("CHECKLIST_EVAL_TEX_CACHE")
    return Path(env).expanduser() if env else Path("~/.cache/checklist-eval/tex").expanduser()


def cached(digest: str) -> Compiled | None:
    folder = cache_dir() / digest
    meta = read_json_file(folder / "meta.json", max_bytes=1 << 20)  # the cache is a folder others may write
    try:
        findings = LogFindings(tuple(meta["missing"]), tuple(meta["fonts"]), meta["fatal"], meta["rerun"])
        return Compiled(folder, meta["workdir"], meta["engine"], meta["passes"], meta["seconds"], findings,
                        cached=True)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def keep(digest: str, compiled: Compiled) -> None:
    """Store a finished compile under its digest (temp folder, then rename: a reader never sees half of
    one); an unwritable cache only costs the next run a compile."""
    if compiled.timed_out:
        return
    target = cache_dir() / digest
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{digest[:16]}-", dir=target.parent))
        for name in (f"{JOB}.pdf", f"{JOB}.synctex.gz"):
            if (compiled.folder / name).is_file():
                shutil.copyfile(compiled.folder / name, staging / name)
        f = compiled.findings
        meta = {"workdir": compiled.workdir, "engine": compiled.engine, "passes": compiled.passes,
                "seconds": round(compiled.seconds, 3), "missing": list(f.missing), "fonts": list(f.fonts),
                "fatal": f.fatal, "rerun": f.rerun}
        (staging / "meta.json").write_text(json.dumps(meta), "utf-8")
        try:
            os.rename(staging, target)
        except OSError:  # another worker stored the same compile first
            shutil.rmtree(staging, ignore_errors=True)
    except OSError:
        return


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _USER_PATHS}
    env.update(openout_any="p", openin_any="p", shell_escape="f", max_print_line="10000", error_line="254",
               half_error_line="238", LC_ALL="C.UTF-8",
               # No font is made during a compile: METAFONT run for each size of each font with no Type 1 file
               # (every T1 font where cm-super is not installed) took the TeX budget of every paper and held
               # whole batches past their time, and a project's own .mf would be a program run here. A font
               # with no Type 1 file stops the pass at once, naming it (engine.missing_font_line); no format
               # is built either.
               MKTEXPK="0", MKTEXTFM="0", MKTEXMF="0", MKTEXFMT="0",
               # what TeX writes for itself (LuaTeX's font names) goes beside the compile cache, never into
               # the user's home
               TEXMFVAR=str(cache_dir() / "texmf-var"))
    return env


def _die_with_parent_and_cap_cpu(cpu_s: int):
    # libc is looked up here, before the fork: the child runs only the two calls below before exec.
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        prctl = None

    def setup() -> None:
        if prctl is not None:
            prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: the worker killed at its budget takes TeX along
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))

    return setup


def run_pass(engine: str, workdir: Path, root: str, deadline: float, prelude: str = "") -> bool:
    """One pass of ``engine`` over ``root`` in ``workdir``, after ``prelude`` (TeX code of ours, before
    the document's first line); False when it ran out of time (killed)."""
    folder, name = os.path.split(root)
    cwd = workdir / folder
    first = f"{_PRELUDE}{prelude}\\input{{{name}}}" if _SAFE_NAME.match(name) else name
    command = [shutil.which(engine) or engine, "-interaction=nonstopmode", "-no-shell-escape", "-synctex=1",
               f"-jobname={JOB}", first]
    remaining = deadline - time.monotonic()
    if remaining <= 1:
        return False
    proc = subprocess.Popen(command, cwd=cwd, env=_environment(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=_die_with_parent_and_cap_cpu(int(remaining) + 1))
    try:
        proc.wait(timeout=remaining)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return False
    except BaseException:  # the reading's own alarm: TeX goes with it, never left running
        _kill_group(proc)
        raise
    return True


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def log_text(workdir: Path, root: str) -> str:
    log = workdir / os.path.dirname(root) / f"{JOB}.log"
    try:
        with log.open("rb") as fh:
            return fh.read(8 * 2**20).decode("utf-8", "replace")
    except OSError:
        return ""


def output_folder(workdir: Path, root: str) -> Path:
    return workdir / os.path.dirname(root)
