"""One door for papers: no module outside ``checklist_eval/reading/`` parses a file in its own process.

Every command and program that reads a participant's file goes through the parsing worker
(``reading.isolation``) with its time and memory budget. This test reads the package's source and
refuses any import of the raw readers from elsewhere, so a new entry point cannot bypass the door.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "checklist_eval"

# The modules whose functions read and parse a file in the calling process.
RAW_MODULES = ("checklist_eval.reading.parsing", "checklist_eval.reading.latex", "checklist_eval.reading.pdf")
# Functions that only scan text a worker already parsed, or hold data, and never open a file.
ALLOWED_NAMES = {"find_region", "TECHNIQUES"}
# The package's public ``load_paper``: a library user's own process, for papers they trust (README).
ALLOWED_FILES = {PACKAGE / "__init__.py"}


def _raw_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(RAW_MODULES):
                found += [f"{node.module}.{a.name}" for a in node.names if a.name not in ALLOWED_NAMES]
            elif node.module == "checklist_eval.reading":
                found += [f"reading.{a.name}" for a in node.names if a.name in ("parsing", "latex", "pdf")]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith(RAW_MODULES)]
    return found


def test_no_module_outside_reading_parses_in_its_own_process():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if (PACKAGE / "reading") in path.parents or path in ALLOWED_FILES:
            continue
        found = _raw_imports(path)
        if found:
            offenders[str(path.relative_to(PACKAGE))] = found
    assert not offenders, f"parse through reading.isolation (ParserPool), not directly: {offenders}"


def test_the_check_sees_a_direct_import(tmp_path):
    """The check above can fail: a module importing the parser is found, whichever spelling it uses."""
    for line in ("from checklist_eval.reading.parsing import load_paper",
                 "from checklist_eval.reading.latex import parse_latex, find_region",
                 "import checklist_eval.reading.pdf.parse",
                 "from checklist_eval.reading import parsing"):
        module = tmp_path / "m.py"
        module.write_text(f"def f():\n    {line}\n")
        assert _raw_imports(module), line
    module.write_text("from checklist_eval.reading.latex import find_region\n")
    assert not _raw_imports(module)
