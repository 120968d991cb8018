"""Shared test fixtures. Real material from ``../shared`` is optional: tests that need it skip."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SHARED = Path(os.environ.get("CHECKLIST_EVAL_SHARED", ROOT.parent / "shared"))
# TeX's compile cache, one for the suite (every process it starts inherits it, and the harnesses that
# clear CHECKLIST_EVAL_* put it back): each distinct paper is compiled once, not once per test. Entries
# are named by the digest of what was compiled, so one left by an earlier run is as good as a new one.
TEX_CACHE = os.environ.setdefault(
    "CHECKLIST_EVAL_TEX_CACHE", os.path.join(tempfile.gettempdir(), f"checklist-eval-tests-tex-{os.getuid()}"))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """The package's bytecode written once, before the workers start: the suite starts about a thousand
    interpreters that import it, and where PYTHONDONTWRITEBYTECODE is set (these machines set it) each
    of them compiled every module it imported again, about 0.3 s a run."""
    if hasattr(session.config, "workerinput"):  # an xdist worker: the controller compiled already
        return
    import compileall

    compileall.compile_dir(str(ROOT / "checklist_eval"), quiet=1)


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


@pytest.fixture(autouse=True)
def _secrets_of_this_test_only():
    """The redaction registry as it was before the test. A CLI run is its own process and registers
    only its user's key; a test that builds an assessor in this process registers its key here, and the
    next test on the same worker must not have that key masked out of its outputs."""
    from checklist_eval import redact

    saved = (set(redact._secrets), set(redact._pieces), redact._runs)
    yield
    with redact._lock:
        redact._secrets, redact._pieces, redact._runs = saved


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not (SHARED / "README.md").is_file():
        pytest.skip(f"../shared is absent ({SHARED}); real-material tests need it")
    return SHARED


def _builds_a_shared_fixture(item: pytest.Item) -> bool:
    """Does the test use a module- or session-scoped fixture its own file defines (a batch run, parsed
    PDFs, a built wheel)? Such a file's tests run on one xdist worker, so the fixture is built once."""
    here = item.nodeid.split("::")[0]
    infos = getattr(item, "_fixtureinfo", None)
    return infos is not None and any(
        d.scope in ("module", "session") and d.baseid == here for defs in infos.name2fixturedefs.values() for d in defs
    )


# Files whose tests take tens of seconds of CPU each (TeX compiles of many synthetic submissions, drills,
# large NIST files), slowest first: they are handed out first (``_slowest_first``), so that the run does
# not end waiting on one of them started last on one worker while the other worker has nothing left.
# Their order is speed only: no test's verdict depends on it.
SLOW_FILES = ("test_flat_memory.py", "test_drills.py", "test_manipulation_spellings.py", "test_nist_files.py",
              "test_real_pdf_batch.py", "test_verdict_consistency.py", "test_endpoint_guarantees.py",
              "test_hostile_parsing.py")


def _slowest_first(items: list[pytest.Item]) -> None:
    """The slow files first, then the files kept on one worker (largest first), then the rest, each
    file's tests in their own order; xdist keeps this order (--no-loadscope-reorder in pyproject.toml)."""
    groups: dict[str, int] = {}
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark is not None:
            groups[item.path.name] = groups.get(item.path.name, 0) + 1

    def rank(pair: tuple[int, pytest.Item]) -> tuple[int, int, int]:
        index, item = pair
        name = item.path.name
        if name in SLOW_FILES:
            return (0, SLOW_FILES.index(name), index)
        if name in groups:
            return (1, -groups[name], index)
        return (2, 0, index)

    items[:] = [item for _, item in sorted(enumerate(items), key=rank)]


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks (--dist loadgroup)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Markers from what a test uses, so no test file has to carry them: ``shared_material`` for
    tests that need ``../shared``, ``drill`` for the fault and crash drills (scripts/drill_*.py), and
    ``xdist_group`` for the tests of a file that builds a shared fixture."""
    for item in items:
        if _builds_a_shared_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
        if "shared_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared_material)
        if item.path.name == "test_drills.py":
            item.add_marker(pytest.mark.drill)
        # A real engine answers a 16-question check in minutes on 2 cores and CI runs on the machine
        # the engines may be cached on: the suite stays on the loopback server unless asked.
        if item.get_closest_marker("real_engine") and not os.environ.get("CHECKLIST_EVAL_REAL_ENGINES"):
            item.add_marker(pytest.mark.skip(reason="real-engine test: set CHECKLIST_EVAL_REAL_ENGINES=1 to run it"))
    _slowest_first(items)
