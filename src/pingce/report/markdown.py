"""report.md: the result as a document a person can read and share."""

from __future__ import annotations

from typing import Any

from ..results import (
    ComparisonResult,
    EvaluationResult,
    MetricComparison,
    MetricResult,
    Signature,
)
from .audit_html import audit_markdown
from .decision import decision_markdown
from .format import (
    direction_legend,
    direction_mark,
    fmt_interval,
    fmt_number,
    fmt_p,
    fmt_value,
    model_line,
    similarity_line,
    stream_words,
)
from .repeats import repeats_markdown

__all__ = ["render_comparison_markdown", "render_markdown"]


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _name(name: str, higher: bool | None) -> str:
    """A metric's name in a table cell, as code, and its direction mark after it."""
    mark = direction_mark(higher)
    return f"`{name}` {mark}" if mark else f"`{name}`"


def _legend(directions: list[bool | None]) -> list[str]:
    """The line under a table that says what its direction marks mean (none without marks)."""
    legend = direction_legend(directions)
    return [f"_{legend}_", ""] if legend else []


def _metric_table(metrics: dict[str, MetricResult], ci_head: str) -> list[str]:
    """The metrics table; a column ``scored`` (records scored/covered) when some metric was
    computed over fewer records than it covers."""
    partial = any(m.partial() for m in metrics.values())
    scored_head = " scored |" if partial else ""
    rows = [
        f"| metric | value | {ci_head} | n |{scored_head} note |",
        "|---|---|---|---|" + ("---|" if partial else "") + "---|",
    ]
    for name, m in metrics.items():
        scored = f" {m.partial() or ''} |" if partial else ""
        rows.append(
            f"| {_name(name, m.higher_is_better)} | {fmt_value(m)} | {fmt_interval(m)} | {m.n} |"
            f"{scored} {_cell(m.note())} |"
        )
    return [*rows, "", *_legend([m.higher_is_better for m in metrics.values()])]


def _table_md(name: str, table: dict[str, Any]) -> list[str]:
    if "matrix" in table:
        labels = table["labels"]
        columns = table.get("columns", labels)  # (invalid): predictions off the scale
        lines = [
            f"**{name}** (rows gold, columns predicted)",
            "",
            "| gold \\ predicted | " + " | ".join(columns) + " | total |",
            "|---" * (len(columns) + 2) + "|",
        ]
        for label, row in zip(labels, table["matrix"], strict=True):
            lines.append(f"| **{label}** | " + " | ".join(str(x) for x in row) + f" | {sum(row)} |")
        return [*lines, ""]
    columns = [key for key in table if key != "labels"]
    lines = [
        f"**{name}**",
        "",
        "| label | " + " | ".join(columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for i, label in enumerate(table["labels"]):
        cells = []
        for key in columns:
            value = table[key][i]
            cells.append(
                fmt_number(value) if isinstance(value, float) or value is None else str(value)
            )
        lines.append(f"| **{label}** | " + " | ".join(cells) + " |")
    return [*lines, ""]


SLICES_PER_TABLE = 3
"""Slice values side by side in one report.md table (a metric a row): narrow enough to read in
a terminal; more values go into further tables."""


def _slice_tables(result: EvaluationResult) -> list[str]:
    """A table per slice field (and per :data:`SLICES_PER_TABLE` of its values): a row per
    metric, a column per value."""
    by_field: dict[str, list[str]] = {}
    for key in result.slices:
        by_field.setdefault(key.split("=", 1)[0], []).append(key)
    lines: list[str] = []
    for field, keys in by_field.items():
        for start in range(0, len(keys), SLICES_PER_TABLE):
            chunk = keys[start : start + SLICES_PER_TABLE]
            heads = " | ".join(_cell(key.split("=", 1)[-1]) for key in chunk)
            lines += [
                f"**{_cell(field)}**",
                "",
                f"| metric | {heads} |",
                "|---" * (len(chunk) + 1) + "|",
                "| records | "
                + " | ".join(str(result.slices[key].n_records) for key in chunk)
                + " |",
            ]
            for name in result.metrics:
                cells = []
                for key in chunk:
                    m = result.slices[key].metrics[name]
                    cell = fmt_value(m)
                    if m.ci_low is not None:
                        cell += f" {fmt_interval(m)}"
                    cells.append(cell)
                higher = result.metrics[name].higher_is_better
                lines.append(f"| {_name(name, higher)} | " + " | ".join(cells) + " |")
            lines.append("")
    return lines


def render_markdown(result: EvaluationResult, audit: dict[str, Any] | None = None) -> str:
    """The whole report as Markdown; ``audit``: the run's audit by people (audit.json's data),
    a section after the metrics."""
    sig = result.signature
    lines = [
        f"# pingce report: {result.suite}",
        "",
        f"- Data: `{result.data.source}`: {result.data.n_loaded} records loaded, "
        f"{result.n_records} evaluated",
    ]
    if sig.bootstrap:
        lines.append(
            f"- Intervals: {sig.ci_level:.0%} {sig.ci_method} {_kind(sig)}, "
            f"{sig.bootstrap} resamples, seed {sig.seed}"
            + (f", resampling whole units of `{sig.unit}`" if sig.unit else "")
        )
    else:
        lines.append("- Intervals: off (`--bootstrap 0`)")
    failures = ", ".join(f"{k} {v}" for k, v in result.failures.model_dump().items())
    lines.append(f"- Failures: {failures}")
    spent = similarity_line(sig.similarity, result.similarity)
    if spent is not None:
        lines.append(f"- {spent[0].upper()}{spent[1:]}")
    asked = model_line(result.model)
    if asked is not None:
        lines.append(f"- Model under test: {asked[len('model ') :]}")
    lines.append(f"- pingce {result.pingce_version}")
    lines += [f"- Note: {note}" for note in result.notes]
    if result.sampling is not None:
        s = result.sampling
        lines += ["", "## Sampling", ""]
        if s.method == "random":
            lines.append(
                f"Simple random sample of {s.n_sampled} of {s.n_population} records "
                f"(seed {s.seed})."
            )
        else:
            lines += [
                f"Stratified by `{s.field}`, {s.allocation} allocation, {s.n_sampled} of "
                f"{s.n_population} records (seed {s.seed}).",
                "",
                "| stratum | population | quota | sampled |",
                "|---|---|---|---|",
            ]
            lines += [f"| {c.value} | {c.population} | {c.quota} | {c.sampled} |" for c in s.strata]
        for note in s.notes:
            lines.append(f"\n> {note}")
    ci_head = f"{sig.ci_level:.0%} CI"
    lines += [
        "",
        "## Metrics",
        "",
        *_metric_table(result.metrics, ci_head),
        *_audit_lines(audit),
        *repeats_markdown(result.repeats),
        *_decision_lines(result),
    ]
    if result.tables:
        lines += ["## Tables", ""]
        for name, table in result.tables.items():
            lines += _table_md(name, table)
    if result.slices:
        lines += ["## Slices", "", "Each cell: value [CI].", ""]
        lines += _slice_tables(result)
    if result.definitions:
        lines += ["## Definitions", ""]
        lines += [f"- `{name}`: {text}" for name, text in result.definitions.items()]
        lines.append("")
    lines += [
        "## Reproduce",
        "",
        "```json",
        sig.model_dump_json(indent=2),
        "```",
        "",
    ]
    return "\n".join(lines)


def _decision_lines(result: EvaluationResult) -> list[str]:
    """report.md's decision against ``--baseline`` (nothing without one)."""
    if result.decision is None or result.baseline is None:
        return []
    lines = decision_markdown(result.decision)
    lines[0] = f"## Decision against the baseline `{result.baseline['run']}`"
    return lines


def _audit_lines(audit: dict[str, Any] | None) -> list[str]:
    """report.md's Audit section (nothing for a run no one audited)."""
    if audit is None:
        return []
    checked = len(audit.get("verified", []))
    return [
        "## Audit of the judge by people",
        "",
        f"- {audit['labelled_pairs']} labelled rows of the sheet, {audit['unlabelled_pairs']} "
        f"without a label; {checked} records checked whole by people (marked `audit` in "
        "records.jsonl; audit.json holds all of it)",
        *audit_markdown(audit, depth=3),
        "",
    ]


def _comparison_rows(metrics: dict[str, MetricComparison]) -> list[str]:
    rows = [
        "| metric | candidate | baseline | delta | CI of delta | p | p Holm |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, m in metrics.items():
        interval = (
            f"[{fmt_number(m.ci_low)}, {fmt_number(m.ci_high)}]"
            if m.ci_low is not None and m.ci_high is not None
            else ""
        )
        rows.append(
            f"| {_name(name, m.higher_is_better)} | {fmt_number(m.candidate)} | "
            f"{fmt_number(m.baseline)} | {fmt_number(m.delta)} | {interval} | "
            f"{fmt_p(m.p_value)} | {fmt_p(m.p_holm)} |"
        )
    rows += ["", *_legend([m.higher_is_better for m in metrics.values()])]
    said = [(name, m.verdict) for name, m in metrics.items() if m.verdict]
    rows += [f"- `{name}`: {_cell(verdict)}" for name, verdict in said]
    notes = [(name, m.note) for name, m in metrics.items() if m.note]
    rows += [f"- `{name}` note: {_cell(note)}" for name, note in notes]
    return [*rows, ""]


def render_comparison_markdown(result: ComparisonResult) -> str:
    """comparison.md: the differences, their intervals and tests, and what they mean in words
    (never by colour alone), narrow enough for a terminal (the verdicts are lines below)."""
    sig = result.signature
    by = f", by {sig.unit}" if sig.unit else ""
    lines = [
        f"# {result.suite}: candidate vs baseline",
        "",
        f"- Candidate: `{result.candidate}`",
        f"- Baseline: `{result.baseline}`",
        f"- Records compared: {result.n_records}",
        f"- Intervals: {sig.ci_level:.0%} paired {_kind(sig)} ({sig.ci_method}{by}), "
        f"{sig.bootstrap} resamples, seed {sig.seed}; p from the same resamples; Holm across "
        "the metrics",
        "",
        "## Differences",
        "",
        *_comparison_rows(result.metrics),
    ]
    if result.decision is not None:
        from .decision import decision_markdown

        lines += ["", *decision_markdown(result.decision)]
    if result.pairwise is not None:
        from .pairwise import pairwise_markdown

        lines += pairwise_markdown(result.pairwise)
    for key, part in (result.slices or {}).items():
        lines += [f"## Slice {key} ({part.n_records} records)", "", *_comparison_rows(part.metrics)]
    for side, failed in result.failures.items():
        counts = {k: v for k, v in failed.model_dump().items() if v}
        if counts:
            shown = ", ".join(f"{k} {v}" for k, v in counts.items())
            lines.append(f"- {side} failures: {shown}")
    lines += [f"- Note: {note}" for note in result.notes]
    return "\n".join(lines).rstrip() + "\n"


def _kind(sig: Signature) -> str:
    """The bootstrap's name as the reports say it."""
    if sig.bootstrap_method == "poisson":
        return "Poisson bootstrap (a Poisson(1) weight per record, keyed on the record)"
    return f"bootstrap ({stream_words(sig)})"
