"""``pingce metrics``: every registered metric."""

from __future__ import annotations

from collections.abc import Mapping

import click

__all__ = ["metrics"]


@click.command()
def metrics() -> None:
    """List every registered metric with a one-line definition."""
    from rich.console import Console

    from ..metrics.registry import DEPRECATED, REQUIRED, metric_registry, table_registry
    from ..report.console import print_metric_list

    rows = [
        (name, info.kind, info.definition, _parameters(info.parameters, REQUIRED))
        for registry in (metric_registry(), table_registry())
        for name, info in registry.items()
    ]
    print_metric_list(rows, DEPRECATED, Console())


def _parameters(parameters: Mapping[str, object], required: object) -> str:
    """A metric's parameters in words (the label scale aside)."""
    return ", ".join(
        f"{p} (required)" if default is required else p
        for p, default in parameters.items()
        if p != "scale"
    )
