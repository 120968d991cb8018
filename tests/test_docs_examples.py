"""Every shell example of the README and of docs/ runs here as a user types it, and the output it shows is
checked (the convention is in CONTRIBUTING.md, "Examples in the documentation").

A ```python block runs in its own interpreter and must exit 0. A ```console block is a shell session: a line starting with ``$ `` is a command (a trailing backslash continues
it), the lines after it are its output. Shown output is compared with what the command printed (stderr, then
stdout): a line ``...`` stands for any lines, ``...`` inside a line for any text; a command shows no output to
mean "not checked". Every command must exit 0 (show a failure with ``|| echo "exit $?"``). Each file's blocks run
in order in one temporary folder holding a copy of ``fixtures/`` (``../shared`` beside it when it exists), with
``$HOME`` in that folder and the loopback server (``checklist_eval.testing.MockServer``) answering at
``127.0.0.1:8765`` and at ``$OPENAI_BASE_URL``. ``checklist-eval`` commands without shell syntax run in this
process (``checklist_eval.cli.main``); the others run in ``bash`` with the interpreter's ``bin`` first on PATH.
A block that reads ``../shared`` is left out where it is absent (the page's other blocks still run).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from checklist_eval.cli import main
from checklist_eval.testing import MockServer

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CHECKLIST_EVAL_SHARED", ROOT.parent / "shared"))
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ENGINE = "127.0.0.1:8765"  # where the examples' local engine answers; the tests' loopback server takes its place
SHELL_LANGS = {"bash", "sh", "shell", "zsh", "console", "shell-session"}
SHELL_SYNTAX = re.compile(r"[|<>;&`$*?(){}]|^\w+=")
FENCE = re.compile(r"^(`{3,})\s*([\w-]*)")


@dataclass
class Step:
    command: str
    line: int
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    lang: str
    line: int
    body: list[str]
    after_marker: bool  # the README's main-job / test-command blocks, which .ci/run runs itself

    def steps(self) -> list[Step]:
        steps: list[Step] = []
        continuing = False
        for offset, text in enumerate(self.body, self.line + 1):
            if continuing:
                steps[-1].command = steps[-1].command[:-1].rstrip() + " " + text.strip()
            elif text.startswith("$ "):
                steps.append(Step(text[2:].strip(), offset))
            elif steps:
                steps[-1].expected.append(text.rstrip())
            elif text.strip():
                raise AssertionError(f"line {offset}: a console block starts with a `$ ` command")
            continuing = bool(steps) and steps[-1].command.endswith("\\")
        return steps


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, with the line of their opening fence."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, start = opening.group(1), i
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == fence), len(lines))
        previous = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        found.append(Block(opening.group(2).lower(), start + 1, lines[start + 1:end],
                           previous in ("<!-- main-job -->", "<!-- test-command -->")))
        i = end + 1
    return found


def console_pages() -> list[Path]:
    return [p for p in PAGES if any(b.lang in ("console", "python") for b in blocks(p))]


def expected_pattern(lines: list[str]) -> re.Pattern[str]:
    parts = []
    for text in lines:
        if text.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in text.split("...")) + r"[ \t]*\n")
    return re.compile("".join(parts))


NOT_OURS = ("Matplotlib is building the font cache",)  # printed by a library once per machine


def normalised(text: str) -> str:
    lines = [line.rstrip() for line in text.strip("\n").splitlines() if not line.startswith(NOT_OURS)]
    return "".join(line + "\n" for line in lines)


class Session:
    """One file's examples: a temporary folder, the loopback server, the environment a user has."""

    def __init__(self, folder: Path, server: MockServer, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
        self.folder, self.server, self.capsys = folder, server, capsys
        self.endpoint = f"{server.host}:{server.port}"
        self.env: dict[str, str] = {k: v for k, v in os.environ.items()
                                    if not k.startswith(("OPENAI_", "CHECKLIST_EVAL_", "PYTEST_"))}
        self.env.update(HOME=str(folder / "home"), COLUMNS="120", OPENAI_BASE_URL=server.base_url,
                        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                        # matplotlib's font cache is a cache, not a user's state: kept where it is warm
                        MPLCONFIGDIR=os.environ.get("MPLCONFIGDIR") or str(Path.home() / ".cache" / "matplotlib"))
        self.monkeypatch = monkeypatch

    def run(self, step: Step) -> tuple[int, str]:
        command = step.command.replace(ENGINE, self.endpoint)
        if command.startswith("export ") and not re.search(r"[;&|]", command):
            name, _, value = command[len("export "):].partition("=")
            self.env[name.strip()] = shlex.split(value)[0] if value else ""
            return 0, ""
        redirect = re.fullmatch(r"(.*?)\s+>\s+([\w./-]+)", command)
        plain = redirect.group(1) if redirect else command
        if plain.startswith("checklist-eval ") and not SHELL_SYNTAX.search(plain):
            return self.in_process(shlex.split(plain)[1:], redirect.group(2) if redirect else None)
        proc = subprocess.run(["bash", "-c", command], cwd=self.folder / "work", env=self.env, capture_output=True,
                              text=True, timeout=600)
        return proc.returncode, proc.stderr + proc.stdout

    def run_python(self, source: str) -> tuple[int, str]:
        """A Python example, as a user runs it: its own interpreter, in the page's folder."""
        proc = subprocess.run([sys.executable, "-"], input=source, cwd=self.folder / "work", env=self.env,
                              capture_output=True, text=True, timeout=600)
        return proc.returncode, proc.stderr + proc.stdout

    def in_process(self, argv: list[str], out_file: str | None) -> tuple[int, str]:
        mp = self.monkeypatch
        for name in [k for k in os.environ if k.startswith(("OPENAI_", "CHECKLIST_EVAL_"))]:
            mp.delenv(name)
        for name, value in self.env.items():
            mp.setenv(name, value)
        mp.chdir(self.folder / "work")
        self.capsys.readouterr()
        try:
            code = main(argv)
        except SystemExit as done:  # argparse's own exits: --version, --help
            code = done.code if isinstance(done.code, int) else 0
        captured = self.capsys.readouterr()
        if out_file is not None:
            (self.folder / "work" / out_file).write_text(captured.out, encoding="utf-8")
            return code, captured.err
        return code, captured.err + captured.out


@pytest.fixture()
def engine():
    """One loopback server per page (it starts in a thread in milliseconds): a module-scoped one would keep
    every page on one xdist worker (tests/conftest.py groups the files that build a shared fixture)."""
    with MockServer() as server:
        yield server


@pytest.mark.parametrize("page", console_pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_example_runs_and_prints_what_it_shows(page: Path, engine, tmp_path, monkeypatch, capsys):
    examples = [b for b in blocks(page) if b.lang in ("console", "python")]
    shared = (SHARED / "README.md").is_file()
    if shared:
        (tmp_path / "shared").symlink_to(SHARED)
    runnable = [b for b in examples if shared or "../shared" not in "\n".join(b.body)]
    if not runnable:
        pytest.skip(f"{page.name}'s examples read ../shared, absent here ({SHARED})")
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "home").mkdir()
    shutil.copytree(ROOT / "fixtures", work / "fixtures")
    (work / "scripts").symlink_to(ROOT / "scripts")
    session = Session(tmp_path, engine, monkeypatch, capsys)
    where = page.relative_to(ROOT).as_posix()
    for block in runnable:
        if block.lang == "python":
            code, printed = session.run_python("\n".join(block.body))
            assert code == 0, f"{where}:{block.line}: the Python example exited {code}:\n{printed[-3000:]}"
            continue
        for step in block.steps():
            code, printed = session.run(step)
            assert code == 0, f"{where}:{step.line}: `{step.command}` exited {code}:\n{printed[-3000:]}"
            if step.expected:
                expected = [*step.expected]
                while expected and not expected[-1].strip():
                    expected.pop()
                shown = normalised(printed.replace(session.endpoint, ENGINE))
                assert expected_pattern(expected).fullmatch(shown), (
                    f"{where}:{step.line}: `{step.command}` printed\n{shown}\nwhere the page shows\n"
                    + "\n".join(expected))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_shell_examples_are_console_sessions(page: Path):
    """A shell example the tests would not run is not written as one: besides the README's two marker blocks
    (which CI runs), every shell block is a ``console`` session with ``$ `` prompts."""
    for block in blocks(page):
        if block.lang in SHELL_LANGS and not block.after_marker:
            assert block.lang == "console", f"{page.name}:{block.line}: a `{block.lang}` block; write a console session"
            assert block.steps(), f"{page.name}:{block.line}: a console block without a `$ ` command"
