"""The engine core (issue 29): one phase library, one slices module, one result assembly, one
run context and executors chosen by ``evaluate``; among the engine's modules no import cycle,
counting every import (those inside functions too; ``TYPE_CHECKING`` blocks aside)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[1] / "src" / "pingce" / "engine"


def _imports(path: Path) -> set[str]:
    """The engine modules ``path`` imports anywhere in it, but under ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pingce.engine."):
            found.add((node.module or "").split(".")[2])
    return found


def _graph() -> dict[str, set[str]]:
    modules = {p.stem for p in ENGINE.glob("*.py") if p.stem != "__init__"}
    return {m: _imports(ENGINE / f"{m}.py") & modules - {m} for m in modules}


def test_no_import_cycle_among_engine_modules_counting_imports_inside_functions() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                pytest.fail("import cycle: " + " -> ".join([*stack[stack.index(dep) :], dep]))
            if dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


def test_evaluate_chooses_the_executor_and_the_executors_do_not_know_each_other() -> None:
    graph = _graph()
    assert {"local", "distributed"} <= graph["evaluate"]
    assert "distributed" not in graph["local"] and "local" not in graph["distributed"]
    assert not {"evaluate", "local", "distributed"} & (graph["merge"] | graph["phases"])
    # both comparisons share the slices module and the assembly, not an executor
    for module in ("compare", "stored_runs"):
        assert {"slices", "assembly", "context"} <= graph[module] | graph["compare"]
        assert not {"local", "distributed", "evaluate"} & graph[module]


def test_one_slices_module_one_unit_split_rule() -> None:
    """``np.unique(np.stack([units, inverse]))`` (the unit-split rule) and the slice seed's
    ``crc32`` are written once, in slices.py."""
    for path in ENGINE.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.stem != "slices":
            assert "np.stack([units, inverse])" not in text, path.name
            assert "crc32" not in text, path.name


def test_no_block_fakes_its_counts() -> None:
    import pingce.engine.merge as merge

    assert not hasattr(merge, "SummedBlock") and not hasattr(merge, "Part")
