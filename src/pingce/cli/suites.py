"""``pingce suites``: the built-in suites."""

from __future__ import annotations

import click

__all__ = ["suites"]


@click.command()
def suites() -> None:
    """List the built-in suites."""
    from rich.console import Console

    from ..report.console import print_suite_list
    from ..suites import builtin_suites

    print_suite_list(builtin_suites(), Console())
