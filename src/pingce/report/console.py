"""Console output: the metric table (with intervals) and the confusion matrix, with rich."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..results import EvaluationResult
from .format import fmt_interval, fmt_number, fmt_value

__all__ = ["print_result"]


def print_result(result: EvaluationResult, console: Console) -> None:
    """Print the metrics table, any tables, slices, failures and sampling."""
    sig = result.signature
    title = f"{result.suite}: {result.n_records} records"
    if result.n_records != result.data.n_loaded:
        title += f" (of {result.data.n_loaded} loaded)"
    table = Table(title=title, title_justify="left")
    table.add_column("metric", style="bold")
    table.add_column("value", justify="right")
    by = f", by {sig.unit}" if sig.unit else ""
    ci_head = f"{sig.ci_level:.0%} CI ({sig.ci_method}{by})" if sig.bootstrap else "CI (off)"
    table.add_column(ci_head, justify="right")
    table.add_column("n", justify="right")
    table.add_column("note", overflow="fold", max_width=60)
    for name, m in result.metrics.items():
        value = fmt_value(m)
        if m.value is None:
            value = f"[yellow]{value}[/yellow]"
        table.add_row(name, value, fmt_interval(m), str(m.n), m.undefined_reason or m.ci_note or "")
    console.print(table)
    for name, data in result.tables.items():
        if "matrix" in data:
            cm = Table(title=name, title_justify="left", caption="rows gold, columns predicted")
            cm.add_column("gold \\ pred", style="bold")
            for label in data["labels"]:
                cm.add_column(label, justify="right")
            for label, row in zip(data["labels"], data["matrix"], strict=True):
                cm.add_row(label, *(str(x) for x in row))
            console.print(cm)
        elif "labels" in data:
            pc = Table(title=name, title_justify="left")
            pc.add_column("label", style="bold")
            columns = [key for key in data if key != "labels"]
            for key in columns:
                pc.add_column(key, justify="right")
            for i, label in enumerate(data["labels"]):
                cells = []
                for key in columns:
                    v = data[key][i]
                    cells.append(fmt_number(v) if isinstance(v, float) or v is None else str(v))
                pc.add_row(label, *cells)
            console.print(pc)
    if result.slices:
        st = Table(title="slices", title_justify="left")
        st.add_column("slice", style="bold")
        st.add_column("records", justify="right")
        names = list(result.metrics)[:6]
        for name in names:
            st.add_column(name, justify="right")
        for key, sl in result.slices.items():
            st.add_row(key, str(sl.n_records), *(fmt_value(sl.metrics[n]) for n in names))
        console.print(st)
    if result.sampling is not None and result.sampling.method == "stratified":
        counts = ", ".join(f"{c.value}: {c.sampled}/{c.population}" for c in result.sampling.strata)
        console.print(f"sampled by {result.sampling.field} (sampled/population): {counts}")
        for note in result.sampling.notes:
            console.print(f"[yellow]note:[/yellow] {note}")
    failure_counts: dict[str, int] = result.failures.model_dump()
    if any(failure_counts.values()):
        shown = ", ".join(f"{name} {count}" for name, count in failure_counts.items())
        console.print(f"[red]failures:[/red] {shown}")
