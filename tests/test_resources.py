"""Package resources and optional parts: the prompt files ship inside the package and keep the texts
caches were keyed with; h11 is needed by the loopback server alone."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

import checklist_eval
from checklist_eval.assessors.llm.assessor import PromptSet, prompts_root

ROOT = Path(__file__).resolve().parents[1]

# sha256 over (name, bytes) of every file of a version, as released. A cached verdict's key holds the
# prompt text, so an edited version would silently re-buy every cached answer: a new wording is a new
# version folder.
RELEASED = {
    "adversary-v1": "66ec67ba61813ada99e2291103fd101a1bdb4fe73761f26db87c9085328fe36d",
    "assess-v1": "acc4ec0fd245bc5ccaed94bc897d5cad7109203ac0f4f834531d5bb3d14912fb",
    "assess-v2": "d59c7c3b8789ad84fec1f2dd357e5a8371130e7a20ee70cdc693d93289f8b186",
    "assess-v3": "dca8b899fa2a7d86cd9a1ab5b71eceeb3bdc190f05a992360bfce54b60b352d1",
    "assess-v4": "63b31f45f61c50ab6878092832379183aabc61c4ae7748ad52c65e4a39c30eb1",
}


def _digest(folder) -> str:
    h = hashlib.sha256()
    for f in sorted(folder.iterdir(), key=lambda f: f.name):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def test_prompts_are_read_from_the_package() -> None:
    assert Path(str(prompts_root())) == Path(checklist_eval.__file__).resolve().parent / "prompts"
    assert PromptSet.load("assess-v1").system.startswith("You")


def test_the_top_level_prompts_folder_is_the_package_one() -> None:
    top = ROOT / "prompts"
    assert top.is_symlink(), "prompts/ must link to checklist_eval/prompts/, not hold a second copy"
    assert top.resolve() == (ROOT / "checklist_eval" / "prompts").resolve()


@pytest.mark.parametrize("version", sorted(RELEASED))
def test_released_prompt_versions_are_unchanged(version: str) -> None:
    assert _digest(prompts_root().joinpath(version)) == RELEASED[version]


def test_every_prompt_version_is_pinned() -> None:
    assert sorted(p.name for p in prompts_root().iterdir() if p.is_dir()) == sorted(RELEASED)


# h11 is installed here (the test extra pulls in the server extra), so its absence is simulated the way
# Python documents for a module that cannot be imported: a None entry in sys.modules.
WITHOUT_H11 = "import sys; sys.modules['h11'] = None\n"


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_H11 + code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_mock_server_without_h11_names_the_extra_to_install() -> None:
    run = _python("import runpy\nsys.argv = ['checklist-eval', 'mock-server', '--port', '0']\n"
                  "runpy.run_module('checklist_eval', run_name='__main__', alter_sys=True)")
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'checklist-eval[server]'" in lines[0], run.stderr


def test_everything_but_the_loopback_server_imports_without_h11() -> None:
    run = _python(
        "import importlib, pkgutil, checklist_eval\n"
        "for m in pkgutil.walk_packages(checklist_eval.__path__, 'checklist_eval.'):\n"
        "    if m.name.split('.')[1] not in ('testing', '__main__'):\n"
        "        importlib.import_module(m.name)\n"
        "assert 'checklist_eval.testing' not in sys.modules\n"
        "print('ok')")
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
