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
    names = "\n".join(f"::: pingce.{name}" for name in _api_names())
    return (
        "# Python API\n\n"
        "`import pingce`: the names of `pingce.__all__`, from their docstrings.\n\n" + names + "\n"
    )


def _api_names() -> list[str]:
    import pingce

    return [name for name in pingce.__all__ if name != "__version__"]


def _todo(title: str) -> Callable[[], str]:
    return lambda: f"# {title}\n\n(generated page: to come)\n"


PAGES: dict[str, Callable[[], str]] = {
    "cli.md": cli_page,
    "options.md": options_page,
    "python-api.md": python_api_page,
    "suite-yaml.md": _todo("Suite YAML"),
    "metrics.md": _todo("Metrics"),
    "results-json.md": _todo("results.json and comparison.json"),
    "run-folder.md": _todo("The run folder"),
    "exit-codes.md": _todo("Exit codes"),
    "environment.md": _todo("Environment variables"),
}
"""Each generated page under ``reference/`` and the function that writes it."""


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for name, page in PAGES.items():
        files.append(File.generated(config, f"reference/{name}", content=page()))
    return files
