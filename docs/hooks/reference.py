"""The reference pages, generated at build time from the code (never written by hand).

MkDocs runs this file as a hook (``hooks:`` in mkdocs.yml): :func:`on_files` adds one page
per entry of :data:`PAGES` under ``reference/``, each made by a function that reads the code
(the click group, the option table, the metric registry, the pydantic models ...), so a new
option or metric appears on the site without editing a page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def cli_page() -> str:
    return (
        "# Command line\n\n"
        "Every command of `pingce`, with its options, from the click commands themselves.\n\n"
        "::: mkdocs-click\n"
        "    :module: pingce.cli\n"
        "    :command: cli\n"
        "    :prog_name: pingce\n"
        "    :depth: 1\n"
        "    :style: table\n"
        "    :list_subcommands: true\n"
    )


def options_page() -> str:
    from pingce.option_table import reference

    return (
        "# Options\n\n"
        "Every option, once: its command-line flag, its Python keyword (`pingce.evaluate`, "
        "`compare`, `compare_runs`), type, default, the commands that take it and whether "
        "`--engine ray` honours it. Made from `pingce.option_table`.\n\n" + reference()
    )


def python_api_page() -> str:
    """``pingce.__all__`` from the docstrings: the functions (evaluate, compare, compare_runs
    first), the result types, the errors, then any other name."""
    parts = [
        "# Python API",
        "",
        "`import pingce`: every name of `pingce.__all__`, from its docstring. The keyword "
        "options of `evaluate`, `compare` and `compare_runs` are the command line's, listed in "
        "[Options](options.md).",
    ]
    for title, names in _api_sections().items():
        if names:
            parts += ["", f"## {title}", ""]
            parts += [f"::: pingce.{name}\n{_LEVEL_3}" for name in names]
    return "\n".join(parts) + "\n"


_LEVEL_3 = "    options:\n      heading_level: 3\n"


def _api_sections() -> dict[str, list[str]]:
    import inspect

    import pingce

    first = ["evaluate", "compare", "compare_runs"]
    names = [n for n in pingce.__all__ if n != "__version__" and n not in first]
    values = {n: getattr(pingce, n) for n in names}
    functions = [n for n in names if inspect.isfunction(values[n])]
    errors = [n for n in names if inspect.isclass(values[n]) and issubclass(values[n], Exception)]
    results = [n for n in names if n.endswith(("Result", "Comparison"))]
    placed = set(functions) | set(errors) | set(results)
    return {
        "Functions": first + functions,
        "Results": results,
        "Errors": errors,
        "Other names": [n for n in names if n not in placed],
    }


def metrics_page() -> str:
    from pingce.cli.metrics import _parameters
    from pingce.metrics.registry import DEPRECATED, REQUIRED, metric_registry, table_registry

    lines = [
        "# Metrics",
        "",
        "Every registered metric, as `pingce metrics` prints it: its name (the key a suite's "
        "`metrics:` or `tables:` entry names), kind, definition and parameters (set in the suite "
        "YAML). Made from the metric registry.",
        "",
        "| name | kind | definition | parameters |",
        "|---|---|---|---|",
    ]
    for registry in (metric_registry(), table_registry()):
        for name, info in registry.items():
            parameters = _parameters(info.parameters, REQUIRED)
            lines.append(f"| `{name}` | {info.kind} | {_cell(info.definition)} | {parameters} |")
    lines += ["", "Deprecated names, still accepted in suite files:", ""]
    lines += [f"- `{old}`: now `{new}`" for old, new in DEPRECATED.items()]
    return "\n".join(lines) + "\n"


def suite_yaml_page() -> str:
    from pingce.suites.spec import SuiteSpec

    return (
        "# Suite YAML\n\n"
        "A suite file is YAML validated by `pingce.suites.spec.SuiteSpec`: the top-level keys "
        "below, then each block's. A key that is not listed is an error. Made from the "
        "pydantic model.\n\n" + _models(SuiteSpec) + _similarity_options()
    )


def _similarity_options() -> str:
    """The keys of a suite's ``similarity:`` block: the parameters of the registered backends
    (``pingce.similarity.registry.backend_options``), with their types and who takes them."""
    from pingce.similarity.registry import backend_options

    rows = [
        f"| `{o.name}` | {' or '.join(_cell(_type(h)) for h in o.hints)} | "
        f"{', '.join(f'`{b}`' for b in o.backends)} |"
        for o in backend_options().values()
    ]
    return (
        "## `similarity:`\n\n"
        "The options of the similarity backend a suite may set: each backend takes those among "
        "its parameters (the endpoint, key and cache come from the command line and the "
        "environment). A value out of its range, or a key no backend takes, is an error naming "
        "the key. Made from the registered backends' parameters.\n\n"
        "| key | type | backends |\n|---|---|---|\n" + "\n".join(rows) + "\n"
    )


def results_json_page() -> str:
    from pingce.results import ComparisonResult, EvaluationResult

    return (
        "# results.json and comparison.json\n\n"
        "`results.json` is `pingce.EvaluationResult` as JSON (`result.model_dump_json()`), "
        "`comparison.json` is `pingce.ComparisonResult`. Values are full-precision numbers, or "
        "null with a reason. Made from the pydantic models.\n\n"
        "## results.json\n\n"
        + _models(EvaluationResult, level=3)
        + "## comparison.json\n\n"
        + _models(ComparisonResult, level=3, skip=_seen(EvaluationResult))
    )


def run_folder_page() -> str:
    import pingce.runfolder.layout as layout
    from pingce.results import RecordRows
    from pingce.runfolder import records, records_parquet, stats

    docs = _attribute_docs(layout)
    lines = ["# The run folder", "", _doc(layout), "", "| file | what it holds |", "|---|---|"]
    for name in layout.__all__:
        value = getattr(layout, name)
        if isinstance(value, str):
            lines.append(f"| `{value}` | {_cell(docs.get(name, ''))} |")
    sections = {
        "records.jsonl": [_doc(records), _doc(RecordRows)],
        "records.parquet": [_doc(records_parquet)],
        "stats.npz": [_doc(stats.SavedStats), _doc(stats)],
        "predictions.jsonl": [_doc(records.write_predictions)],
    }
    example = _example_run()
    for title, texts in sections.items():
        lines += ["", f"## {title}", "", *(f"{text}\n" for text in texts)]
        lines += example.get(title, [])
    return "\n".join(lines) + "\n"


def _array_text(name: str, array: Any) -> str:
    shape = " x ".join(str(n) for n in array.shape) or "one value"
    kind = "text" if array.dtype.kind == "U" else array.dtype.name
    return f"`{name}` ({kind}, {shape})"


EXAMPLE = ("contract-risk", "examples/contract_risk/records.jsonl")
"""The run whose files the run-folder page shows: a built-in suite on its bundled example."""


def _example_run() -> dict[str, list[str]]:
    """The first line of records.jsonl and the arrays of stats.npz of :data:`EXAMPLE`'s run
    (without intervals), as the run-folder page shows them."""
    import json
    import tempfile
    from pathlib import Path

    import numpy as np

    import pingce

    suite, data = EXAMPLE
    command = f"`pingce run {suite} --data {data}`"
    with tempfile.TemporaryDirectory() as folder:
        root = Path(__file__).resolve().parents[2]
        pingce.evaluate(suite, root / data, bootstrap=0, out=folder)
        first = (Path(folder) / "records.jsonl").read_text(encoding="utf-8").splitlines()[0]
        with np.load(Path(folder) / "stats.npz", allow_pickle=False) as saved:
            arrays = [_array_text(name, saved[name]) for name in saved.files]
    shown = json.dumps(json.loads(first), ensure_ascii=False, indent=2)
    return {
        "records.jsonl": [
            f"The first line of {command}'s records.jsonl, indented:",
            "",
            "```json",
            shown,
            "```",
            "",
        ],
        "stats.npz": [f"The arrays of {command}'s stats.npz: " + ", ".join(arrays) + ".", ""],
    }


def exit_codes_page() -> str:
    from pingce.cli.environment import EXIT_CODES

    lines = [
        "# Exit codes",
        "",
        "The exit status of every `pingce` command (from `pingce.cli.environment.EXIT_CODES`).",
        "",
        "| status | meaning |",
        "|---|---|",
    ]
    lines += [f"| {e.code} | {_cell(e.meaning)} |" for e in EXIT_CODES]
    return "\n".join(lines) + "\n"


def environment_page() -> str:
    from pingce.cli.environment import VARIABLES

    lines = [
        "# Environment variables",
        "",
        "Every environment variable pingce reads (from `pingce.cli.environment.VARIABLES`). "
        "An option on the command line wins over the variable.",
        "",
        "| variable | what it sets | read by |",
        "|---|---|---|",
    ]
    for v in VARIABLES:
        names = ", ".join(f"`{n.strip()}`" for n in v.name.split(","))
        lines.append(f"| {names} | {_cell(v.meaning)} | {_cell(v.used_by)} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ pydantic models


def _models(
    root: type, key: str | None = None, level: int = 2, skip: set[type] | None = None
) -> str:
    """A section per model reachable from ``root`` (pydantic models and TypedDicts): its
    docstring and a table of its fields (key, type, default, description)."""
    done: set[type] = set(skip or ())
    todo: list[tuple[type, str | None]] = [(root, key)]
    parts: list[str] = []
    while todo:
        model, name = todo.pop(0)
        if model in done:
            continue
        done.add(model)
        rows, nested = _fields(model)
        title = f"`{name}:`" if name else f"`{model.__name__}`"
        parts += [f"{'#' * level} {title}", "", _doc(model), ""]
        parts += ["| key | type | default | description |", "|---|---|---|---|", *rows, ""]
        todo += nested
    return "\n".join(parts) + "\n"


def _seen(root: type) -> set[type]:
    done: set[type] = set()
    todo = [root]
    while todo:
        model = todo.pop()
        if model not in done:
            done.add(model)
            todo += [m for m, _ in _fields(model)[1]]
    return done


def _fields(model: type) -> tuple[list[str], list[tuple[type, str | None]]]:
    from typing import get_type_hints

    from pydantic import BaseModel
    from pydantic_core import PydanticUndefined

    from pingce._plain import PlainModel, mirror

    docs = _attribute_docs(getattr(model, "__plain_class__", model))
    rows: list[str] = []
    nested: list[tuple[type, str | None]] = []
    if isinstance(model, type) and issubclass(model, PlainModel):  # its pydantic model's fields
        model = mirror(model)
    if isinstance(model, type) and issubclass(model, BaseModel):
        for name, info in model.model_fields.items():
            default = "required" if info.is_required() else ""
            if info.default is not PydanticUndefined and not info.is_required():
                default = f"`{_json(info.default)}`"
            elif info.default_factory is not None:
                default = f"`{_json(info.default_factory())}`"  # type: ignore[call-arg]
            text = info.description or docs.get(name, "")
            rows.append(f"| `{name}` | {_type(info.annotation)} | {default} | {_cell(text)} |")
            nested += [(m, name) for m in _nested(info.annotation)]
    else:  # a TypedDict: every key optional
        for name, hint in get_type_hints(model, include_extras=True).items():
            rows.append(f"| `{name}` | {_type(hint)} |  | {_cell(docs.get(name, ''))} |")
    return rows, nested


def _nested(annotation: Any) -> list[type]:
    from typing import get_args

    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _nested(arg)]


def _type(annotation: Any) -> str:
    """A type as a reader writes it in YAML or reads it in JSON: ``list[str]``, ``float | null``,
    ``int in 1..1000``."""
    import types
    import typing
    from typing import get_args, get_origin

    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is type(None):
        return "null"
    if origin is typing.Annotated:
        return _type(args[0]) + "".join(_range(meta, args[0]) for meta in args[1:])
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type(arg) for arg in args)
    if origin is typing.Literal:
        return " \\| ".join(f"`{_json(arg)}`" for arg in args)
    if origin is not None:
        inner = ", ".join(_type(arg) for arg in args)
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]"
    if annotation is typing.Any:
        return "any"
    return getattr(annotation, "__name__", str(annotation)).replace("typing.", "")


def _range(meta: Any, base: Any) -> str:
    text = getattr(meta, "text", None)
    return f" {text(base is int)}" if callable(text) else ""


def _json(value: Any) -> str:
    import json

    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        value = value.model_dump()
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


# ------------------------------------------------------------------------------ text


def _attribute_docs(owner: Any) -> dict[str, str]:
    """The docstrings written under a class's or a module's attributes (``name: type = value``
    then a string), which Python keeps nowhere: read from the source."""
    import ast
    import inspect
    import itertools
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(owner)))
    except (OSError, TypeError):
        return {}
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else tree.body
    docs: dict[str, str] = {}
    for statement, following in itertools.pairwise(body):
        target = getattr(statement, "target", None)
        targets = getattr(statement, "targets", [target])
        if not (isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)):
            continue
        if isinstance(following.value.value, str) and isinstance(targets[0], ast.Name):
            docs[targets[0].id] = inspect.cleandoc(following.value.value)
    return docs


def _doc(owner: Any) -> str:
    """A docstring as Markdown: reST's double backquotes and roles as code."""
    import inspect
    import re

    text = inspect.getdoc(owner) or ""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def _cell(text: str) -> str:
    """Text in a Markdown table cell: one line, pipes escaped, reST code as Markdown's."""
    import re

    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text).replace("``", "`")
    return " ".join(text.split()).replace("|", "\\|")


PAGES: dict[str, Callable[[], str]] = {
    "cli.md": cli_page,
    "options.md": options_page,
    "python-api.md": python_api_page,
    "suite-yaml.md": suite_yaml_page,
    "metrics.md": metrics_page,
    "results-json.md": results_json_page,
    "run-folder.md": run_folder_page,
    "exit-codes.md": exit_codes_page,
    "environment.md": environment_page,
}
"""Each generated page under ``reference/`` and the function that writes it."""


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for name, page in PAGES.items():
        files.append(File.generated(config, f"reference/{name}", content=page()))
    return files
