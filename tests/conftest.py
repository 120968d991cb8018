"""Shared test fixtures. Real material from ``../shared`` is optional: tests that need it skip."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SHARED = Path(os.environ.get("CHECKLIST_EVAL_SHARED", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture()
def submissions_copy(tmp_path: Path) -> Path:
    """The bundled submissions copied to ``tmp_path/subs``, for runs that write beside them."""
    dst = tmp_path / "subs"
    shutil.copytree(FIXTURES / "submissions", dst)
    return dst


@pytest.fixture()
def mock_key(monkeypatch) -> str:
    """The key ``helpers.mock_llm`` reads (CE_TEST_KEY), set for one test."""
    key = "sk-test-SECRETKEY-0123456789abcdef"
    monkeypatch.setenv("CE_TEST_KEY", key)
    return key


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not (SHARED / "README.md").is_file():
        pytest.skip(f"../shared is absent ({SHARED}); real-material tests need it")
    return SHARED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Markers from what a test uses, so no test file has to carry them: ``shared_material`` for
    tests that need ``../shared``, ``drill`` for the fault and crash drills (scripts/drill_*.py)."""
    for item in items:
        if "shared_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared_material)
        if item.path.name == "test_drills.py":
            item.add_marker(pytest.mark.drill)
        # A real engine answers a 16-question check in minutes on 2 cores and CI runs on the machine
        # the engines may be cached on: the suite stays on the loopback server unless asked.
        if item.get_closest_marker("real_engine") and not os.environ.get("CHECKLIST_EVAL_REAL_ENGINES"):
            item.add_marker(pytest.mark.skip(reason="real-engine test: set CHECKLIST_EVAL_REAL_ENGINES=1 to run it"))
