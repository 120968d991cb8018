"""The package is a house by stage: reading -> endpoint -> assessors -> challenge, with detection, membership,
adversary, testing and cli beside them. Imports only go down, and no module imports itself back
through a circle. Inside ``assessors/`` the judges stand on what the paper shows: ``evidence/`` below
``heuristic/`` below ``llm/``. Read with ``ast`` (TYPE_CHECKING imports count too: a circle drawn for the type
checker is still a circle a reader has to untangle). No module is over ``MAX_LINES`` lines."""

from __future__ import annotations

import ast
from pathlib import Path

import checklist_eval

PACKAGE = Path(checklist_eval.__file__).resolve().parent
SHARED = "shared"
ROOT = "root"

# What each stage may import besides itself. The shared types at the top are below every stage.
ALLOWED: dict[str, set[str]] = {
    SHARED: set(),
    "reading": {SHARED},
    # what an OpenAI-compatible server is and said, below anything that knows checklists (issue 45)
    "endpoint": {SHARED},
    "assessors": {SHARED, "reading", "endpoint"},
    "challenge": {SHARED, "reading", "assessors", "endpoint"},
    "detection": {SHARED},
    # a model's memory of a paper is asked through the endpoint stage, never through a judge (issue 45)
    "membership": {SHARED, "reading", "detection", "endpoint"},
    "adversary": {SHARED, "reading", "assessors", "challenge", "detection", "endpoint"},
    "testing": {SHARED},
    "web": {SHARED, "reading", "assessors", "challenge", "endpoint"},
    "cli": {SHARED, "reading", "assessors", "challenge", "detection", "membership", "adversary", "testing", "web",
            "endpoint", ROOT},
    ROOT: {SHARED, "reading"},
}
MAX_TOP_LEVEL_MODULES = 8
MAX_LINES = 600

# Layers inside ``assessors/``, and what each may import of the others. ``evidence`` reads the paper and knows
# no judge; the offline judge stands on it; the model judge stands on both (the heuristic's findings are its
# facts to address). ``core`` is the interface and the settings (``base``, ``config``), below the judges; the
# package itself (``__init__``: the factory) builds either judge.
ASSESSOR_LAYERS: dict[str, set[str]] = {
    "evidence": set(),
    "core": set(),
    "heuristic": {"evidence", "core"},
    "llm": {"evidence", "heuristic", "core"},
    "factory": {"core", "heuristic", "llm"},
}
# Modules outside the assessors that use the HTTP client layer: they reach it through ``endpoint/`` only.
CLIENT_USERS = ("checklist_eval.membership", "checklist_eval.challenge.batch_api")


def _module_name(path: Path) -> str:
    parts = ("checklist_eval",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("checklist_eval"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("checklist_eval"):
            base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    return {m for m in found if m in modules}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, modules) - {name} for name, path in modules.items()}


def stage_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return ROOT
    if parts[1] == "__main__":  # ``python -m checklist_eval`` is the command line
        return "cli"
    if len(parts) == 2 and not (PACKAGE / parts[1]).is_dir():
        return SHARED
    return parts[1]


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state and (found := visit(dep)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_circle():
    cycle = _cycle(_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_imports_only_go_down_between_stages():
    wrong = sorted(
        f"{module} ({stage_of(module)}) imports {dep} ({stage_of(dep)})"
        for module, deps in _graph().items()
        for dep in deps
        if stage_of(dep) != stage_of(module) and stage_of(dep) not in ALLOWED[stage_of(module)]
    )
    assert wrong == []


def assessor_layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["checklist_eval", "assessors"]:
        return None
    if len(parts) == 2:
        return "factory"
    return parts[2] if parts[2] in ASSESSOR_LAYERS else "core"


def test_assessor_layers_only_import_down():
    wrong = sorted(
        f"{module} ({assessor_layer(module)}) imports {dep} ({assessor_layer(dep)})"
        for module, deps in _graph().items() if assessor_layer(module)
        for dep in deps
        if assessor_layer(dep) and assessor_layer(dep) != assessor_layer(module)
        and assessor_layer(dep) not in ASSESSOR_LAYERS[assessor_layer(module) or ""]
    )
    assert wrong == []


def test_the_endpoint_stage_knows_no_checklist_and_its_users_need_no_judge():
    graph = _graph()
    above = {"assessors", "challenge", "membership", "adversary", "web", "cli", "testing"}
    assert not [f"{m} imports {d}" for m, deps in graph.items() if stage_of(m) == "endpoint"
                for d in deps if stage_of(d) in above]
    users = [m for m in graph if m.startswith(CLIENT_USERS)]
    assert users, "no client user found: the check below would pass vacuously"
    assert not [f"{m} imports {d}" for m in users for d in graph[m] if stage_of(d) == "assessors"]
    # and they do use the endpoint stage
    assert any(stage_of(d) == "endpoint" for m in users for d in graph[m])


def test_no_module_is_over_the_line_limit():
    long = sorted(f"{p.relative_to(PACKAGE)}: {n}" for p in PACKAGE.rglob("*.py")
                  if (n := len(p.read_text("utf-8").splitlines())) > MAX_LINES)
    assert long == []


def test_every_stage_is_known_and_the_top_level_is_small():
    stages = {stage_of(m) for m in _graph()}
    assert stages <= set(ALLOWED), stages - set(ALLOWED)
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_the_checker_sees_a_circle_and_an_upward_import():
    # The checks above would pass vacuously if the reader found no edges.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    real = _graph()
    assert "checklist_eval.reading.isolation" in real["checklist_eval.challenge.submissions"]
    assert "checklist_eval.challenge" not in ALLOWED["reading"]
    assert stage_of("checklist_eval.reading.latex.render") == "reading"
    assert stage_of("checklist_eval.models") == SHARED
    assert assessor_layer("checklist_eval.assessors.llm.assessor") == "llm"
    assert assessor_layer("checklist_eval.assessors.base") == "core"
    assert "checklist_eval.endpoint.transport" in real["checklist_eval.assessors.llm.assessor"]
    assert "checklist_eval.assessors.evidence.passages" in real["checklist_eval.assessors.heuristic.state"]
