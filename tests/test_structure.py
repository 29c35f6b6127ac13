"""The structure of src/pingce, read from every import of every module (imports inside
functions too; only ``if TYPE_CHECKING:`` blocks are left out, since they never run): no import
cycle, and the layers import only downwards."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "pingce"


def _modules() -> dict[str, ast.Module]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = ast.parse(path.read_text(encoding="utf-8"))
    return out


MODULES = _modules()
PACKAGES = {m for m in MODULES if (SRC.parent / m.replace(".", "/") / "__init__.py").exists()}


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if module in PACKAGES else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


class _Imports(ast.NodeVisitor):
    """Every module an import statement of ``module`` names, wherever it stands."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.found: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        if "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.update(alias.name for alias in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        target = _absolute(self.module, node)
        self.found.add(target)
        self.found.update(f"{target}.{alias.name}" for alias in node.names)


def _graph() -> dict[str, set[str]]:
    """Module -> the pingce modules it imports (a package's ``__init__`` counts as the package;
    importing ``a.b.c`` runs ``a`` and ``a.b`` too, unless they contain the importer)."""
    graph: dict[str, set[str]] = {}
    for module, tree in MODULES.items():
        visitor = _Imports(module)
        visitor.visit(tree)
        deps: set[str] = set()
        for target in visitor.found:
            if not target.startswith("pingce"):
                continue
            while target and target not in MODULES:  # `from pkg import name`: the package
                target = target.rpartition(".")[0]
            parts = target.split(".")
            deps.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        deps -= {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        graph[module] = {d for d in deps if d in MODULES and d != module}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph[node]):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_no_import_cycle_counting_imports_inside_functions() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import() -> None:
    """The check can fail: a two-module cycle whose second edge is inside a function."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert _cycles(graph) == [["a", "b"]]
    tree = ast.parse("def f():\n    from . import plan\n")
    visitor = _Imports("pingce.engine.pipeline")
    visitor.visit(tree)
    assert "pingce.engine.plan" in visitor.found
    typed = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import plan\n"
    )
    visitor = _Imports("pingce.engine.pipeline")
    visitor.visit(typed)
    assert "pingce.engine.plan" not in visitor.found


_ABOVE_ENGINE = (
    "pingce.cli",
    "pingce.viewer",
    "pingce.report",
    "pingce.history",
    "pingce.store",
    "pingce.compare_stored",
)
LAYERS: dict[str, tuple[str, ...]] = {
    "pingce.engine": _ABOVE_ENGINE,
    "pingce.runfolder": ("pingce.engine", *_ABOVE_ENGINE),
    "pingce.metrics": ("pingce.engine", "pingce.runfolder", *_ABOVE_ENGINE),
    "pingce.similarity": ("pingce.engine", "pingce.metrics", "pingce.runfolder", *_ABOVE_ENGINE),
    "pingce.predict": ("pingce.engine", "pingce.metrics", "pingce.similarity", *_ABOVE_ENGINE),
    "pingce.remote": (
        "pingce.engine",
        "pingce.metrics",
        "pingce.similarity",
        "pingce.predict",
        "pingce.runfolder",
        *_ABOVE_ENGINE,
    ),
    "pingce.report": (
        "pingce.engine",
        "pingce.metrics",
        "pingce.similarity",
        "pingce.predict",
        "pingce.options",
        "pingce.history",
        "pingce.store",
        "pingce.compare_stored",
        "pingce.viewer",
        "pingce.cli",
    ),
    "pingce.readers": ("pingce.engine", "pingce.metrics", *_ABOVE_ENGINE),
    "pingce.records": ("pingce.engine", "pingce.metrics", *_ABOVE_ENGINE),
    "pingce.stats": ("pingce.engine", *_ABOVE_ENGINE),
    "pingce.viewer": ("pingce.cli",),
}
"""Package or module -> the pingce packages and modules it must never import, however (the
layers of ARCHITECTURE.md: the command line over the viewer over the engine and the reports,
over the metrics, over the similarity backends and the remote layer, over records and
readers)."""


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_layers_import_only_downwards(package: str) -> None:
    assert package in MODULES
    graph = _graph()
    broken = sorted(
        f"{module} imports {dep}"
        for module, deps in graph.items()
        if module == package or module.startswith(package + ".")
        for dep in deps
        if any(dep == banned or dep.startswith(banned + ".") for banned in LAYERS[package])
    )
    assert broken == []


def _api_imports(package: str, modules: dict[str, ast.Module]) -> list[str]:
    """Where a module of ``package`` imports pingce's own API (``from pingce import
    compare_runs``, ``from .. import evaluate``: the engine behind it), anywhere but under
    ``TYPE_CHECKING``; the graph cannot show these, since every module's import runs ``pingce``."""
    found = []
    for module, tree in modules.items():
        if module != package and not module.startswith(package + "."):
            continue
        visitor = _Imports(module)
        visitor.visit(tree)
        for target in sorted(visitor.found):
            top_name = target.count(".") == 1 and target.startswith("pingce.")
            if top_name and target not in MODULES:  # a name of pingce/__init__
                found.append(f"{module} imports {target}")
    return found


def test_the_reports_call_no_api_of_pingce() -> None:
    """report/ renders result types; the viewer above it calls ``pingce.compare_runs`` (before
    issue 29 report/viewer.py did, inside a function)."""
    assert _api_imports("pingce.report", MODULES) == []
    planted = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .. import evaluate\n"
        "def page():\n    from .. import compare_runs\n    from ..results import MetricResult\n"
    )
    found = _api_imports("pingce.report", {**MODULES, "pingce.report.planted": planted})
    assert found == ["pingce.report.planted imports pingce.compare_runs"]


@pytest.mark.parametrize("package", ["pingce", "pingce.similarity"])
def test_every_lazy_export_resolves_and_an_unknown_name_is_an_attribute_error(
    package: str,
) -> None:
    """``pingce`` and ``pingce.similarity`` export through the one ``_lazy.lazy_exports``: each
    name of ``__all__`` reads as its defining module's, and a name not exported is Python's
    ``AttributeError`` for a module."""
    import importlib

    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nope'"):
        module.nope  # noqa: B018
