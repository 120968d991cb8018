"""The documentation site builds with ``mkdocs build --strict`` (a broken link, an unknown anchor or a page left
out of the nav fails), its outputs page is generated from the models, and every test a page names as holding a
guarantee exists."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
NAMED_TEST = re.compile(r"tests/(test_\w+\.py)(?:::(\w+))?")

sys.path.insert(0, str(ROOT / "docs_hooks"))

import outputs_schema  # noqa: E402


@cache
def defined_tests(file: str) -> frozenset[str]:
    """The test functions a test file defines, at its top level or in a class, read with ``ast``."""
    tree = ast.parse((ROOT / "tests" / file).read_text(encoding="utf-8"))
    return frozenset(node.name for node in ast.walk(tree)
                     if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"))


def named_tests(page: Path) -> list[tuple[int, str, str | None]]:
    found = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        found += [(number, m.group(1), m.group(2)) for m in NAMED_TEST.finditer(line)]
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_test_a_page_names_exists(page: Path):
    for number, file, test in named_tests(page):
        where = f"{page.relative_to(ROOT)}:{number}"
        assert (ROOT / "tests" / file).is_file(), f"{where} names tests/{file}, which does not exist"
        if test is not None:
            assert test in defined_tests(file), f"{where} names tests/{file}::{test}, which that file does not define"


def test_the_guarantee_pages_name_their_tests():
    """The pages that state guarantees name the tests that hold them, test by test."""
    for name, at_least in {"results.md": 15, "security.md": 30, "local-engines.md": 10, "models.md": 10}.items():
        named = [t for _, _, t in named_tests(ROOT / "docs" / name) if t]
        assert len(named) >= at_least, (name, len(named))


def test_the_outputs_page_is_generated_from_the_models():
    text = outputs_schema.on_page_markdown((ROOT / "docs" / "outputs.md").read_text(encoding="utf-8"), page=None)
    assert outputs_schema.MARKER not in text
    for _, ref in outputs_schema.OUTPUTS:
        keys = ", ".join(f"`{name}`" for name in outputs_schema.fields_of(ref))
        assert f"`{ref}` | {keys} |" in text, ref
        assert f"### `{ref}`" in text, ref


def test_the_site_builds_strictly(tmp_path):
    """``mkdocs build --strict``, as CI needs it: every warning (a link to a missing page or anchor, a page not
    in the nav) is an error."""
    site = tmp_path / "site"
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    outputs = (site / "outputs" / "index.html").read_text(encoding="utf-8")
    assert "challenge.records.Record" in outputs and "submission_id" in outputs
    assert (site / "results" / "index.html").is_file() and (site / "local-engines" / "index.html").is_file()


def test_the_command_reference_lists_every_command():
    from checklist_eval.cli import COMMANDS

    listed = set(re.findall(r"^\| `([a-z-]+)", (ROOT / "docs" / "commands.md").read_text(encoding="utf-8"), re.M))
    assert listed == set(COMMANDS), set(COMMANDS) ^ listed
