"""Small builders shared by several test files (imported as ``helpers``: pytest puts tests/ on the path)."""

from __future__ import annotations

import asyncio
from html.parser import HTMLParser


def pdf_bytes(objects: list[bytes], version: bytes = b"1.4") -> bytes:
    """A PDF file holding ``objects`` as objects 1..n (object 1 the catalog), with a correct xref table:
    hand-written PDFs let a test build exactly the structure it needs (bombs, layers, page counts)."""
    out = bytearray(b"%PDF-" + version + b"\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def assess_and_close(assessor, paper):
    """Every verdict of ``paper``, the assessor's client closed on the same event loop."""
    async def go():
        try:
            return await assessor.assess_paper(paper)
        finally:
            await assessor.aclose()

    return asyncio.run(go())


def one_error_line(run, *words: str) -> str:
    """The CLI's bad-input contract: exit 2 and one line on stderr, naming each of ``words``."""
    assert run.code == 2, run
    lines = [ln for ln in run.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("checklist-eval: error:"), run
    for w in words:
        assert w.lower() in lines[0].lower(), (w, lines[0])
    return lines[0]


def error_bars_paper(justification: str):
    """A two-question sample paper whose first item is a Yes on error bars with ``justification``: the
    item the LLM tests steer with the loopback server's ``[mock:...]`` markers."""
    from checklist_eval.models import Answer
    from checklist_eval.testing import sample_paper

    paper = sample_paper(n_questions=2)
    item = paper.checklist.items[0]
    item.title, item.question = "Experiment statistical significance", "Does the paper report error bars?"
    item.answer, item.justification = Answer.YES, justification.strip()
    return paper


def mock_llm(server, **config):
    """The LLM assessor against a loopback server: key from CE_TEST_KEY, no cache, fast retries."""
    from checklist_eval.assessors import make_assessor

    options = dict(model="gpt-4o-mini", base_url=server.base_url, api_key_env="CE_TEST_KEY", no_cache=True,
                   backoff_initial=0.01, timeout=5.0)
    options.update(config)
    return make_assessor("llm", **options)


# Runs ``python -m checklist_eval ARGS``; at exit writes its own peak RSS and that of its largest child
# (parse workers), in kB, to $CE_PEAK_FILE: VmHWM after exec, since ru_maxrss of the child as seen from
# here would also count the fork of the pytest process.
_RUN_REPORTING_TREE_PEAK = """
import atexit, os, resource, runpy

def report_peak():
    with open("/proc/self/status") as status:
        own = int(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(os.environ["CE_PEAK_FILE"], "w") as out:
        out.write(str(own + children))

atexit.register(report_peak)
runpy.run_module("checklist_eval", run_name="__main__", alter_sys=True)
"""


class MeasuredRun:
    """What a user sees of one CLI run, with its wall time and the peak memory of its process tree
    (its own peak plus its largest child's)."""

    def __init__(self, code: int, out: str, err: str, wall_s: float, rss_mb: float):
        self.code, self.out, self.err, self.wall_s, self.rss_mb = code, out, err, wall_s, rss_mb

    def __repr__(self) -> str:
        return f"MeasuredRun(code={self.code}, {self.wall_s:.1f} s, {self.rss_mb:.0f} MB, err={self.err[-600:]!r})"


def run_measured(args, *, cwd, env_extra=None, hang_guard_s: float = 600) -> MeasuredRun:
    """The CLI as typed, in a subprocess with HOME and TMPDIR under ``cwd``; no traceback, no internal
    error (asserted here: every caller needs that)."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    cwd = Path(cwd)
    (cwd / "home").mkdir(exist_ok=True)
    (cwd / "tmpdir").mkdir(exist_ok=True)
    peak = cwd / ".peak"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHECKLIST_EVAL_"))}
    env.update(HOME=str(cwd / "home"), TMPDIR=str(cwd / "tmpdir"), COLUMNS="200", CE_PEAK_FILE=str(peak),
               CHECKLIST_EVAL_TEX_CACHE=os.environ.get("CHECKLIST_EVAL_TEX_CACHE", ""))
    env.update(env_extra or {})
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _RUN_REPORTING_TREE_PEAK, *map(str, args)], capture_output=True,
                          cwd=cwd, env=env, timeout=hang_guard_s)
    wall = time.monotonic() - started
    rss = int(peak.read_text()) / 1024 if peak.exists() else float("inf")
    peak.unlink(missing_ok=True)
    run = MeasuredRun(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"),
                      wall, rss)
    assert "Traceback" not in run.err and "internal error" not in run.err, run
    return run


class StrictHtml(HTMLParser):
    """Well-formedness as an HTML parser sees it: every element closed in order, ids unique."""

    VOID = {"meta", "link", "br", "hr", "img", "input", "source", "wbr", "col", "area", "base", "embed", "track"}
    OPTIONAL_END = {"p", "li", "dt", "dd", "tr", "td", "th", "option", "thead", "tbody"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.ids: set[str] = set()
        self.problems: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name == "id":
                if value in self.ids:
                    self.problems.append(f"duplicate id {value}")
                self.ids.add(value or "")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        while self.stack and self.stack[-1] != tag and self.stack[-1] in self.OPTIONAL_END:
            self.stack.pop()
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def check_html(text: str) -> StrictHtml:
    parser = StrictHtml()
    parser.feed(text)
    parser.close()
    assert text.startswith("<!DOCTYPE html>")
    assert not parser.problems and not parser.stack, (parser.problems, parser.stack)
    return parser
