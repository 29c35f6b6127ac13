"""Console tables of the run history (``pingce runs``, ``pingce runs show``): they read runs as
the plain data declared here (:class:`StoredRun`, :class:`StoredMetric`: the attributes read,
nothing else), which :class:`pingce.history.RunInfo` and ``MetricRow`` are; no import of the
history.

Names (of runs and of metrics) are never cut: their columns do not wrap and are as wide as
their longest entry; the other columns fold when the console is narrow."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .charts import Estimate
from .format import direction_legend, fmt_number, marked

__all__ = ["HEADLINE", "StoredMetric", "StoredRun", "print_run", "print_runs"]

HEADLINE = 3
"""Metrics shown per run in the list (the first ones of its suite)."""


class StoredMetric(Estimate, Protocol):
    """One metric of a stored run, as the tables read it: a value and its interval
    (:class:`~pingce.report.charts.Estimate`) over all records (``slice`` None) or over one
    slice (``field=value``)."""

    @property
    def metric(self) -> str: ...
    @property
    def slice(self) -> str | None: ...
    @property
    def n(self) -> int: ...
    @property
    def higher_is_better(self) -> bool | None: ...


class StoredRun(Protocol):
    """A stored run, as the tables read it (times ISO 8601, paths absolute or None)."""

    @property
    def name(self) -> str: ...
    @property
    def suite(self) -> str: ...
    @property
    def created(self) -> str: ...
    @property
    def n_records(self) -> int: ...
    @property
    def data_path(self) -> str | None: ...
    @property
    def data_sha256(self) -> str | None: ...
    @property
    def git_commit(self) -> str | None: ...
    @property
    def pingce_version(self) -> str: ...
    @property
    def out_dir(self) -> str | None: ...
    @property
    def signature(self) -> Mapping[str, Any]: ...
    @property
    def options(self) -> Mapping[str, Any]: ...
    @property
    def failures(self) -> Mapping[str, Any]: ...
    @property
    def metrics(self) -> Sequence[StoredMetric]: ...


def _when(created: str) -> str:
    """``YYYY-mm-dd HH:MM`` of an ISO time."""
    return created[:16].replace("T", " ")


def _interval(row: StoredMetric) -> str:
    if row.ci_low is None or row.ci_high is None:
        return "—"
    return f"[{fmt_number(row.ci_low)}, {fmt_number(row.ci_high)}]"


def _shown_path(path: str | None) -> str:
    """A path relative to the working directory when it is under it (shorter), else as is."""
    if not path:
        return "—"
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith("..") else relative


def print_runs(found: Sequence[StoredRun], store: str | os.PathLike[str], console: Console) -> None:
    """The runs, newest first: name, suite, when, records, the first metrics, output folder.

    A table when it fits the console's width; else one block of lines per run (the name on a
    line of its own, never cut), which reads well at 80 columns and in a pipe."""
    if not found:
        console.print(f"no runs recorded in {escape(str(store))}", highlight=False)
        return
    rows = [_row(run) for run in found]
    headers = ("name", "suite", "created", "records", "metrics", "output")
    widths = [
        max(cell_len(line) for text in column for line in text.splitlines() or [""])
        for column in zip(headers, *rows, strict=True)
    ]
    title = f"runs in {escape(str(store))}"
    if sum(widths) + 3 * len(widths) + 1 <= console.width:
        table = Table(title=title, title_justify="left", highlight=False)
        for header in headers:
            right = header == "records"
            table.add_column(header, justify="right" if right else "left", no_wrap=True)
        for row in rows:
            table.add_row(*(escape(cell) for cell in row))
        console.print(table)
        return
    console.print(title, highlight=False)
    for name, suite, created, records, metrics, output in rows:
        console.print()
        console.print(f"[bold]{escape(name)}[/bold]", highlight=False)
        console.print(f"  {escape(suite)}, {created}, {records} records", highlight=False)
        if metrics != "—":
            console.print("  " + escape(", ".join(metrics.splitlines())), highlight=False)
        console.print(f"  output {escape(output)}", highlight=False)


def _row(run: StoredRun) -> tuple[str, str, str, str, str, str]:
    headline = [m for m in run.metrics if m.slice is None][:HEADLINE]
    metrics = "\n".join(
        f"{marked(m.metric, m.higher_is_better)} {fmt_number(m.value, 3)}" for m in headline
    )
    return (
        run.name,
        run.suite,
        _when(run.created),
        f"{run.n_records:,}",
        metrics or "—",
        _shown_path(run.out_dir),
    )


def print_run(run: StoredRun, console: Console) -> None:
    """One run: its metrics with intervals (all records, then a table per slice), then where it
    came from (data and its hash, git commit, options, version, output folder)."""
    parts: dict[str | None, list[StoredMetric]] = {}
    for row in run.metrics:
        parts.setdefault(row.slice, []).append(row)
    longest = max((cell_len(marked(m.metric, m.higher_is_better)) for m in run.metrics), default=6)
    for part, rows in parts.items():
        title = f"run {run.name}" + ("" if part is None else f", slice {part}")
        legend = direction_legend(row.higher_is_better for row in rows) or None
        table = Table(
            title=escape(title),
            title_justify="left",
            caption=legend,
            caption_justify="left",
            highlight=False,
        )
        table.add_column("metric", style="bold", no_wrap=True, min_width=longest)
        table.add_column("value", justify="right", no_wrap=True)
        table.add_column("interval", justify="right")
        table.add_column("n", justify="right", no_wrap=True)
        for row in rows:
            name = marked(row.metric, row.higher_is_better)
            table.add_row(escape(name), fmt_number(row.value), _interval(row), f"{row.n:,}")
        console.print(table)
    about = Table.grid(padding=(0, 2))
    about.add_column(style="dim", no_wrap=True)
    about.add_column(overflow="fold")
    similarity = run.signature.get("similarity")
    options = ", ".join(
        f"{key}={value}"
        for key, value in run.options.items()
        if value not in (None, (), [], {}, False) and key != "suite"
    )
    failures = ", ".join(f"{key} {value}" for key, value in run.failures.items() if value)
    for label, value in (
        ("suite", run.suite),
        ("created", run.created),
        ("records", f"{run.n_records:,}"),
        ("data", run.data_path or "— (records in memory)"),
        ("data sha256", run.data_sha256 or "—"),
        ("git commit", run.git_commit or "—"),
        ("similarity", similarity or "—"),
        ("options", options or "—"),
        ("failures", failures or "none"),
        ("pingce", run.pingce_version),
        ("output", run.out_dir or "—"),
    ):
        about.add_row(label, escape(str(value)))
    console.print(about)
