"""report.html: one self-contained page of a run, readable offline and attachable to a ticket.

The page reads only an :class:`~pingce.results.EvaluationResult` and its
:class:`~pingce.results.RecordRows`. It shows the metric table with each interval drawn as a
forest plot, each confusion matrix as a heat map, the slice values as small multiples, the
similarity accounting, the run's signature, and a drill-down of every record (its values and the
reason it missed each metric), filterable and paged.

Charts: hand-written inline SVG, made here in Python. A chart library (Vega-Lite through
altair, plotly) would have to be inlined to keep the page offline: about 0.8 MB (Vega with
Vega-Lite) to 3.5 MB (plotly) of JavaScript per page, run on every open before anything
shows, for three chart types that are a few rectangles, lines and labels each. The SVG is a
few kilobytes, needs no dependency, draws before any script runs (and without scripts), prints
sharply, and its text is escaped by the same :func:`html.escape` as the rest of the page. The
drill-down alone needs a script: a small inline vanilla one that renders a page of records at a
time with DOM APIs (``textContent``, never ``innerHTML`` of data).

Untrusted text (ids, fields, reasons, labels, metric names) is escaped on the server with
:func:`html.escape`; the records are embedded once as JSON in a
``<script type="application/json">`` block with ``<``, ``>``, ``&``, U+2028 and U+2029 written as
``\\uXXXX`` escapes, so no record text can close the block. A Content-Security-Policy allows no
network at all and only the page's own script (by its hash), so even a mistake in the escaping
could not run a script or fetch anything.

Writing is fast: the records go into the JSON by column (one orjson call per column, values
rounded to the four decimals the page shows, repeated reasons written once and referred to by
number, misses stored sparsely), and :func:`write_html` writes them a column at a time, never
holding the page whole: 100,000 records take about 0.2 s, a million about 2 s.

A comparison gets a page of its own, :func:`render_comparison_html` (comparison.html, no script).
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
import operator
import os
from collections.abc import Iterable, Iterator
from itertools import repeat
from typing import Any, TypeGuard

import numpy as np
import orjson

from .._json import json_texts
from ..results import (
    ComparisonResult,
    EvaluationResult,
    MetricComparison,
    MetricResult,
    RecordRows,
)
from .format import fmt_interval, fmt_number, fmt_p, fmt_value

__all__ = [
    "FIELD_CHARS",
    "PAGE_STYLE",
    "axis_range",
    "esc",
    "render_comparison_html",
    "render_html",
    "write_html",
]

FIELD_CHARS = 120
"""Characters of a field's value kept in the page (longer values end in an ellipsis; records.jsonl
has them whole)."""
DIGITS = 4
"""Decimals of the per-record values in the page (records.jsonl has them at full precision)."""

FONTS = (
    'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans CJK SC", '
    '"Source Han Sans SC", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", '
    '"WenQuanYi Micro Hei", "WenQuanYi Zen Hei", sans-serif'
)


def esc(value: object) -> str:
    """Text for HTML (element content and quoted attributes alike)."""
    return html.escape(str(value), quote=True)


def render_html(result: EvaluationResult, rows: RecordRows | None = None) -> str:
    """The whole page; ``rows`` defaults to the result's own per-record rows (none for a result
    read from results.json: the page then says so instead of listing records)."""
    return b"".join(_page(result, rows)).decode("utf-8")


def write_html(
    result: EvaluationResult, path: str | os.PathLike[str], rows: RecordRows | None = None
) -> None:
    """Write :func:`render_html`'s page to ``path``, a column of records at a time (the page
    is never held whole in memory)."""
    with open(path, "wb") as handle:
        for chunk in _page(result, rows):
            handle.write(chunk)


def _page(result: EvaluationResult, rows: RecordRows | None) -> Iterator[bytes]:
    rows = result.records if rows is None else rows
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'"
    )
    title = f"pingce report: {result.suite}"
    parts = [
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">\n',
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
        f"<title>{esc(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n",
        _header(result, title),
        _metrics_section(result),
        _tables_section(result),
        _slices_section(result),
        _similarity_section(result),
        _records_section(result, rows),
        _signature_section(result),
        "<footer>Written by pingce ",
        esc(result.pingce_version),
        ". Everything on this page is in this one file; it makes no network request.</footer>\n",
    ]
    if rows is None:
        parts.append("</body>\n</html>\n")
        yield "".join(parts).encode("utf-8")
        return
    parts.append('<script type="application/json" id="pingce-data">')
    yield "".join(parts).encode("utf-8")
    for chunk in _records_json(result, rows):
        yield _escaped(chunk)
    yield f"</script>\n<script>{_SCRIPT}</script>\n</body>\n</html>\n".encode()


# --- the sections drawn on the server -----------------------------------------------------------


def _header(result: EvaluationResult, title: str) -> str:
    sig = result.signature
    facts = [
        f"data <code>{esc(result.data.source)}</code>: {result.data.n_loaded:,} records loaded, "
        f"{result.n_records:,} evaluated",
    ]
    if sig.bootstrap:
        unit = f", resampling whole units of <code>{esc(sig.unit)}</code>" if sig.unit else ""
        facts.append(
            f"intervals: {sig.ci_level:.0%} {esc(sig.ci_method)} "
            f"{'Poisson bootstrap' if sig.bootstrap_method == 'poisson' else 'bootstrap'}, "
            f"{sig.bootstrap:,} resamples, seed {sig.seed}{unit}"
        )
    else:
        facts.append("intervals: off (--bootstrap 0)")
    failures = ", ".join(f"{esc(k)} {esc(v)}" for k, v in result.failures.model_dump().items())
    facts.append(f"failures: {failures}")
    if result.sampling is not None:
        s = result.sampling
        how = "simple random" if s.method == "random" else f"stratified by {esc(s.field)}"
        facts.append(f"sample: {how}, {s.n_sampled:,} of {s.n_population:,} records")
    items = "".join(f"<li>{fact}</li>" for fact in facts)
    notes = "".join(f'<li class="note">{esc(note)}</li>' for note in result.notes)
    nav = " · ".join(
        f'<a href="#{anchor}">{name}</a>'
        for anchor, name, shown in (
            ("metrics", "metrics", True),
            ("tables", "tables", bool(result.tables)),
            ("slices", "slices", bool(result.slices)),
            ("similarity", "similarity", True),
            ("records", "records", True),
            ("signature", "signature", True),
        )
        if shown
    )
    return (
        f'<header><h1>{esc(title)}</h1><ul class="facts">{items}{notes}</ul>'
        f"<nav>{nav}</nav></header>\n"
    )


def _axis(entries: Iterable[MetricResult]) -> tuple[float, float]:
    """The x range of a forest plot of ``entries`` (:func:`axis_range` of their values and
    interval ends)."""
    return axis_range(x for m in entries for x in (m.value, m.ci_low, m.ci_high))


def axis_range(points: Iterable[float | None]) -> tuple[float, float]:
    """The axis of some values and interval ends: [0, 1] when every one is in it, [-1, 1] when
    in that (kappas), else from 0 (or a round number below) to a round number above (0 when
    none is above). The one axis rule of report.html, comparison.html and ``pingce view``."""
    ends = [x for x in points if x is not None and math.isfinite(x)]
    if not ends:
        return 0.0, 1.0
    low, high = min(ends), max(ends)
    if low >= 0 and high <= 1:
        return 0.0, 1.0
    if low >= -1 and high <= 1:
        return -1.0, 1.0
    return _nice_floor(min(low, 0.0)), _nice_ceiling(max(high, 0.0))


def _nice_ceiling(x: float) -> float:
    """The round number (1, 2, 2.5 or 5 times a power of ten) at or above ``x``; ``x`` itself
    when that number is beyond the largest float (a latency of 1.5e308 s: its axis ends at
    1.5e308). ``x`` is finite."""
    if x <= 0:
        return 0.0 if x == 0 else -_nice_floor(-x)
    power = 10 ** math.floor(math.log10(x))
    for step in (1, 2, 2.5, 5, 10):
        if x <= step * power:
            try:
                nice = float(step * power)
            except OverflowError:  # an integer power of ten beyond the floats
                return x
            return nice if math.isfinite(nice) else x
    return x  # pragma: no cover


def _nice_floor(x: float) -> float:
    return 0.0 if x >= 0 else -_nice_ceiling(-x)


def _forest(
    m: MetricResult | None,
    low: float,
    high: float,
    width: int,
    height: int = 18,
    reference: float | None = None,
) -> str:
    """One row of a forest plot: faint grid, the interval as a line, the value as a point, and a
    dashed ``reference`` line (the overall value, on a slice's row)."""

    def x(v: float) -> float:
        return round(4 + (width - 8) * _fraction(v, low, high), 2)

    mid = height / 2
    out = [f'<svg class="forest" width="{width}" height="{height}" role="img">']
    grid = [_between(low, high, k / 4) for k in range(5)]
    out += [f'<line class="grid" x1="{x(g)}" x2="{x(g)}" y1="0" y2="{height}"/>' for g in grid]
    if reference is not None and math.isfinite(reference):
        out.append(
            f'<line class="ref" x1="{x(reference)}" x2="{x(reference)}" y1="0" y2="{height}"/>'
        )
    if m is not None and _is_finite(m.ci_low) and _is_finite(m.ci_high):
        out.append(
            f'<line class="ci" x1="{x(m.ci_low)}" x2="{x(m.ci_high)}" y1="{mid}" y2="{mid}"/>'
            f'<line class="ci" x1="{x(m.ci_low)}" x2="{x(m.ci_low)}" y1="{mid - 4}" '
            f'y2="{mid + 4}"/><line class="ci" x1="{x(m.ci_high)}" x2="{x(m.ci_high)}" '
            f'y1="{mid - 4}" y2="{mid + 4}"/>'
        )
    if m is not None and m.value is not None and math.isfinite(m.value):
        out.append(f'<circle class="pt" cx="{x(m.value)}" cy="{mid}" r="4"/>')
    elif m is not None:
        out.append(f'<text class="null" x="4" y="{mid + 4}">null</text>')
    out.append("</svg>")
    return "".join(out)


def _fraction(v: float, low: float, high: float) -> float:
    """Where ``v`` lies on the axis from ``low`` to ``high``, from 0 to 1 (clamped), computed
    in halves so that an axis wider than the largest float (-1e308 to 1e308) has no infinite
    span."""
    if high <= low:
        return 0.0
    at = min(max(v, low), high)
    return (at / 2 - low / 2) / (high / 2 - low / 2)


def _between(low: float, high: float, fraction: float) -> float:
    """The value at ``fraction`` of the axis from ``low`` to ``high`` (finite for finite ends)."""
    return low * (1 - fraction) + high * fraction


def _is_finite(v: float | None) -> TypeGuard[float]:
    return v is not None and math.isfinite(v)


def _axis_labels(low: float, high: float, width: int) -> str:
    """The tick labels of a forest plot column (the top of the column)."""
    out = [f'<svg class="axis" width="{width}" height="16">']
    for k in range(5):
        v = _between(low, high, k / 4)
        xpos = 4 + (width - 8) * k / 4
        anchor = "start" if k == 0 else "end" if k == 4 else "middle"
        out.append(f'<text x="{xpos:.1f}" y="12" text-anchor="{anchor}">{_tick(v)}</text>')
    out.append("</svg>")
    return "".join(out)


def _tick(v: float) -> str:
    return f"{v:g}" if abs(v) >= 1e-9 else "0"


PLOT_WIDTH = 260


def _metrics_section(result: EvaluationResult) -> str:
    sig = result.signature
    unit = [m for m in result.metrics.values() if _axis([m]) == (0.0, 1.0)]
    shared = _axis(unit) if unit else (0.0, 1.0)
    rows = []
    for name, m in result.metrics.items():
        low, high = _axis([m])
        own = (low, high) != shared
        scale = f'<span class="scale">{_tick(low)} – {_tick(high)}</span>' if own else ""
        definition = result.definitions.get(name)
        label = (
            f'<code title="{esc(definition)}">{esc(name)}</code>'
            if definition
            else f"<code>{esc(name)}</code>"
        )
        scored = m.partial()
        rows.append(
            f'<tr><th scope="row">{label}</th><td class="num">{esc(fmt_value(m))}</td>'
            f'<td class="num">{esc(fmt_interval(m))}</td><td class="num">{m.n:,}'
            + (f" <small>({esc(scored)} scored)</small>" if scored else "")
            + f'</td><td class="plot">{_forest(m, low, high, PLOT_WIDTH)}{scale}</td>'
            f"<td>{esc(m.note())}</td></tr>"
        )
    ci_head = f"{sig.ci_level:.0%} interval" if sig.bootstrap else "interval"
    return (
        '<section id="metrics"><h2>Metrics</h2>'
        '<table class="metrics"><thead><tr><th>metric</th><th>value</th>'
        f"<th>{esc(ci_head)}</th><th>n</th><th>{_axis_labels(*shared, PLOT_WIDTH)}</th>"
        "<th>note</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
        '<p class="hint">The dot is the value, the bar its interval. Rows whose values lie outside '
        "the shared axis have their own range, printed beside them.</p></section>\n"
    )


def _blue(share: float) -> str:
    """A colour from white to dark blue for a share in [0, 1]."""
    share = min(max(share, 0.0), 1.0)
    start, end = (247, 251, 255), (8, 48, 107)
    r, g, b = (round(s + (e - s) * share) for s, e in zip(start, end, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def _cell_count(value: float) -> str:
    """A cell of a confusion matrix: a count, or a sum of sample weights (``sample_weight``)."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.4g}"


def _heat_map(name: str, table: dict[str, Any]) -> str:
    labels = [str(label) for label in table["labels"]]
    # the predicted labels: one more, (invalid), when some prediction is off the scale
    columns = [str(label) for label in table.get("columns", labels)]
    matrix = [[float(v) for v in row] for row in table["matrix"]]
    cell, left, top = 56, 96, 40
    k = len(columns)
    width, height = left + cell * k + 70, top + cell * len(labels) + 8
    out = [
        f'<figure class="heat"><figcaption>{esc(name)}: rows gold, columns predicted; shade = '
        "share of the gold row</figcaption>"
        f'<svg width="{width}" height="{height}" role="img" aria-label="{esc(name)}">',
        f'<text class="lab" x="{left + cell * k / 2}" y="12" text-anchor="middle">predicted</text>',
        f'<text class="lab" x="{left + cell * k + 8}" y="{top - 6}">total</text>',
        f'<text class="lab" x="14" y="{top + cell * len(labels) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + cell * len(labels) / 2})">gold</text>',
    ]
    for j, label in enumerate(columns):
        out.append(
            f'<text class="lab" x="{left + cell * j + cell / 2}" y="{top - 6}" '
            f'text-anchor="middle">{esc(_short(label, 8))}<title>{esc(label)}</title></text>'
        )
    for i, (label, row) in enumerate(zip(labels, matrix, strict=True)):
        total = sum(row)
        y = top + cell * i
        out.append(
            f'<text class="lab" x="{left - 6}" y="{y + cell / 2 + 4}" text-anchor="end">'
            f"{esc(_short(label, 10))}<title>gold {esc(label)}</title></text>"
        )
        for j, count in enumerate(row):
            share = count / total if total else 0.0
            fill = _blue(share)
            ink = ' class="on-dark"' if share > 0.5 else ""
            cls = "cell diag" if i == j else "cell"
            out.append(
                f'<g class="{cls}" data-gold="{esc(label)}" data-predicted="{esc(columns[j])}">'
                f'<rect x="{left + cell * j}" y="{y}" width="{cell - 2}" height="{cell - 2}" '
                f'fill="{fill}"><title>gold {esc(label)}, predicted {esc(columns[j])}: '
                f"{_cell_count(count)} ({share:.1%} of the row)</title></rect>"
                f'<text x="{left + cell * j + cell / 2 - 1}" y="{y + cell / 2 + 4}" '
                f'text-anchor="middle"{ink}>{_cell_count(count)}</text></g>'
            )
        out.append(
            f'<text class="lab" x="{left + cell * k + 8}" y="{y + cell / 2 + 4}">'
            f"{_cell_count(total)}</text>"
        )
    out.append("</svg></figure>")
    return "".join(out)


def _plain_table(name: str, table: dict[str, Any]) -> str:
    columns = [key for key in table if key != "labels"]
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    for i, label in enumerate(table.get("labels", [])):
        cells = []
        for key in columns:
            column = table[key]
            value = column[i] if isinstance(column, list) and i < len(column) else column
            shown = fmt_number(value) if isinstance(value, float) or value is None else value
            cells.append(f'<td class="num">{esc(shown)}</td>')
        body.append(f'<tr><th scope="row">{esc(label)}</th>{"".join(cells)}</tr>')
    return (
        f'<figure><figcaption>{esc(name)}</figcaption><table class="small"><thead><tr>'
        f"<th>label</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></figure>"
    )


def _tables_section(result: EvaluationResult) -> str:
    if not result.tables:
        return ""
    parts = []
    for name, table in result.tables.items():
        if "matrix" in table and "labels" in table:
            parts.append(_heat_map(name, table))
        elif "labels" in table:
            parts.append(_plain_table(name, table))
        else:
            text = orjson.dumps(table, option=orjson.OPT_INDENT_2).decode()
            parts.append(f"<figure><figcaption>{esc(name)}</figcaption><pre>{esc(text)}</pre>")
    return (
        '<section id="tables"><h2>Tables</h2><div class="row">'
        + "".join(parts)
        + ("</div></section>\n")
    )


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _slice_groups(result: EvaluationResult) -> dict[str, list[tuple[str, str]]]:
    """Slice keys by field: ``{field: [(value, key), ...]}`` in results.json's order."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for key in result.slices:
        field, _, value = key.partition("=")
        groups.setdefault(field, []).append((value, key))
    return groups


def _slices_section(result: EvaluationResult) -> str:
    if not result.slices:
        return ""
    parts = ['<section id="slices"><h2>Slices</h2>']
    width, row, left = 300, 18, 110
    for field, members in _slice_groups(result).items():
        parts.append(
            f'<h3>by <code>{esc(field)}</code></h3><p class="hint">One panel per metric, one '
            "row per value; the dashed line is the value over all records.</p>"
            '<div class="multiples">'
        )
        for name, overall in result.metrics.items():
            entries = [result.slices[key].metrics.get(name) for _, key in members]
            low, high = _axis([overall, *(e for e in entries if e is not None)])
            rows = []
            for (value, key), entry in zip(members, entries, strict=True):
                n = result.slices[key].n_records
                shown = "—" if entry is None else fmt_value(entry, 3)
                rows.append(
                    f'<div class="mrow"><span class="mlab" title="{esc(value)} ({n:,} records)">'
                    f"{esc(_short(value, 14))}</span>"
                    f"{_forest(entry, low, high, width - left - 50, row, overall.value)}"
                    f'<span class="mval">{esc(shown)}</span></div>'
                )
            parts.append(
                f'<div class="panel"><div class="ptitle"><code>{esc(name)}</code> '
                f'<span class="scale">{_tick(low)} – {_tick(high)}</span></div>'
                + "".join(rows)
                + "</div>"
            )
        parts.append("</div>")
    parts.append("</section>\n")
    return "".join(parts)


SIMILARITY_KEYS = (
    ("pairs", "pairs scored"),
    ("requests", "calls (requests)"),
    ("cache_hits", "cache hits"),
    ("failures", "failed calls"),
    ("prompt_tokens", "prompt tokens"),
    ("completion_tokens", "completion tokens"),
    ("cost", "cost"),
)


def _similarity_section(result: EvaluationResult) -> str:
    sig = result.signature
    stats = result.similarity
    head = '<section id="similarity"><h2>Similarity accounting</h2>'
    if not stats:
        backend = f" (<code>{esc(sig.similarity)}</code>)" if sig.similarity else ""
        return (
            head + f"<p>No metric of this run needed similarity scores{backend}: no model was "
            "called.</p></section>\n"
        )
    rows = []
    shown = set()
    for key, label in SIMILARITY_KEYS:
        value = stats.get(key, 0)
        shown.add(key)
        rows.append(
            f'<tr><th scope="row">{esc(label)}</th><td class="num">{_count(value)}</td></tr>'
        )
    for key, value in stats.items():
        if key not in shown:
            rows.append(
                f'<tr><th scope="row">{esc(key)}</th><td class="num">{_count(value)}</td></tr>'
            )
    return (
        head + f"<p>Backend <code>{esc(sig.similarity or '')}</code>.</p>"
        f'<table class="small similarity"><tbody>{"".join(rows)}</tbody></table></section>\n'
    )


def _count(value: Any) -> str:
    if isinstance(value, bool):
        return esc(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4f}"
    if isinstance(value, dict | list):
        return f"<code>{esc(orjson.dumps(value).decode())}</code>"
    return esc(value)


def _signature_section(result: EvaluationResult) -> str:
    sig = result.signature
    text = sig.model_dump_json(indent=2)
    data = result.data.model_dump_json(indent=2)
    definitions = "".join(
        f"<dt><code>{esc(name)}</code></dt><dd>{esc(text)}</dd>"
        for name, text in result.definitions.items()
    )
    return (
        '<section id="signature"><h2>Signature</h2><p class="hint">Everything needed to reproduce '
        "the numbers (as in results.json).</p>"
        f'<div class="row"><pre class="sig">{esc(text)}</pre><pre class="sig">{esc(data)}</pre>'
        "</div>"
        + (
            f"<details><summary>Definitions of the metrics</summary><dl>{definitions}</dl>"
            "</details>"
            if definitions
            else ""
        )
        + "</section>\n"
    )


def _records_section(result: EvaluationResult, rows: RecordRows | None) -> str:
    head = '<section id="records"><h2>Records</h2>'
    if rows is None:
        return (
            head + "<p>This result holds no per-record rows (it was read from results.json); "
            "records.jsonl has them.</p></section>\n"
        )
    slice_select = ""
    if result.slices:
        options = ['<option value="">all slices</option>']
        for g, (field, members) in enumerate(_slice_groups(result).items()):
            options.append(f'<optgroup label="{esc(field)}">')
            options += [
                f'<option value="{g}:{k}">{esc(value)}</option>'
                for k, (value, _) in enumerate(members)
            ]
            options.append("</optgroup>")
        slice_select = f'<label>slice <select id="f-slice">{"".join(options)}</select></label>'
    return (
        head + f'<p class="hint">{rows.n:,} records: their values (to {DIGITS} decimals) and the '
        "reason each metric missed; field values are cut at "
        f"{FIELD_CHARS} characters (records.jsonl has everything).</p>"
        "<noscript><p>The record list needs JavaScript.</p></noscript>"
        '<div class="controls">'
        '<label>metric <select id="f-metric"><option value="">all metrics</option></select>'
        "</label>"
        '<label><input type="checkbox" id="f-misses"> misses only</label>'
        '<label>reason <input type="search" id="f-reason" list="reasons" '
        'placeholder="reason contains…"></label><datalist id="reasons"></datalist>'
        f"{slice_select}"
        '<label>search <input type="search" id="f-search" placeholder="id, field, reason…">'
        "</label></div>"
        '<div class="pager"><button type="button" id="p-first">«</button>'
        '<button type="button" id="p-prev">‹ previous</button><span id="p-info"></span>'
        '<button type="button" id="p-next">next ›</button>'
        '<button type="button" id="p-last">»</button>'
        '<label>per page <select id="p-size"><option>25</option><option selected>50</option>'
        "<option>100</option><option>500</option></select></label></div>"
        '<table class="records"><thead><tr><th>line</th><th>id</th><th>fields</th>'
        '<th>values</th><th>missed because</th></tr></thead><tbody id="r-body"></tbody></table>'
        "</section>\n"
    )


# --- the records, as JSON -----------------------------------------------------------------------


def _rounded(column: np.ndarray) -> bytes:
    """A float or integer column as a JSON array (floats to DIGITS decimals, NaN as null)."""
    if column.dtype.kind == "f":
        column = np.round(column.astype(np.float64), DIGITS)
        column[column == 0] = 0.0  # no -0.0
    return orjson.dumps(column, option=orjson.OPT_SERIALIZE_NUMPY)


_SCALARS = (str, int, float, bool)


def _field_texts(column: Any) -> bytes:
    """A field as a JSON array. When the whole column's JSON fits the page's budget (on average
    FIELD_CHARS a record) it is that JSON, values as they are (the page's script shows an object
    as its JSON text and cuts long texts); otherwise numbers stay numbers and every other value
    is its JSON text cut at FIELD_CHARS. None, NaN and infinities are null."""
    if isinstance(column, np.ndarray) and column.dtype.kind in "fiub":
        return _rounded(column.astype(np.float64) if column.dtype.kind == "b" else column)
    values = column.tolist() if isinstance(column, np.ndarray) else list(column)
    try:
        whole = orjson.dumps(values)
    except TypeError:  # an integer beyond 64 bits, or a value orjson cannot write
        whole = b""
    if whole and len(whole) <= 2 + FIELD_CHARS * len(values):
        return whole
    others = [i for i, v in enumerate(values) if not (v is None or type(v) in _SCALARS)]
    texts = json_texts([values[i] for i in others]) if others else []
    out: list[Any] = values
    for i, text in zip(others, texts, strict=True):
        out[i] = text.decode("utf-8")
    for i, v in enumerate(out):
        if type(v) is str and len(v) > FIELD_CHARS:
            out[i] = _cut(v)
        elif type(v) is float and not math.isfinite(v):
            out[i] = None
        elif type(v) is int and not -(2**63) <= v < 2**64:
            out[i] = json_texts([v])[0].decode("utf-8")
    return orjson.dumps(out)


def _cut(text: str) -> str:
    return text[: FIELD_CHARS - 1] + "…"


def _slice_codes(result: EvaluationResult, rows: RecordRows) -> list[np.ndarray | None]:
    """For each slice field (in :func:`_slice_groups`' order), each record's position among that
    field's slice values in results.json (-1 when its value is not among them; the values named
    as the engine names slices), or None when the rows do not hold the field."""
    out: list[np.ndarray | None] = []
    for field, members in _slice_groups(result).items():
        column = rows.fields.get(field)
        if column is None:
            out.append(None)
            continue
        if isinstance(column, np.ndarray) and column.dtype.kind == "f":
            names = [
                "(missing)" if math.isnan(v) else str(int(v)) if float(v).is_integer() else repr(v)
                for v in column.tolist()
            ]
        else:
            names = ["(missing)" if v is None else str(v) for v in column]
        index = {value: k for k, (value, _) in enumerate(members)}
        out.append(np.fromiter((index.get(name, -1) for name in names), np.int32, len(names)))
    return out


def _records_json(result: EvaluationResult, rows: RecordRows) -> Iterator[bytes]:
    """The records as the JSON the page's script reads, a column at a time (not yet escaped
    for a script element): ids, lines, the metrics' names, ``values`` (a column per metric),
    ``fields`` (a column per field), ``misses`` (per metric that missed somewhere: the rows that
    missed and each one's reason as a number), ``slices`` (per slice field, each record's slice
    value as a number), ``reasons`` (the distinct reasons, by number) and ``frequent`` (the
    numbers of the most frequent reasons, most frequent first)."""
    numpy_option = orjson.OPT_SERIALIZE_NUMPY
    metrics = list(dict.fromkeys([*rows.values, *rows.misses]))
    yield b'{"n":' + str(rows.n).encode() + b',"field_chars":' + str(FIELD_CHARS).encode()
    yield b',"ids":'
    yield orjson.dumps([None if i is None else str(i) for i in rows.ids])
    yield b',"lines":' + orjson.dumps(np.asarray(rows.lines, dtype=np.int64), option=numpy_option)
    yield b',"metrics":' + orjson.dumps(metrics) + b',"values":{'
    for k, (name, column) in enumerate(rows.values.items()):
        yield (b"," if k else b"") + orjson.dumps(name) + b":" + _rounded(np.asarray(column))
    yield b'},"fields":{'
    for k, (name, column) in enumerate(rows.fields.items()):
        yield (b"," if k else b"") + orjson.dumps(name) + b":" + _field_texts(column)
    yield b'},"misses":{'
    code: dict[str, int] = {}
    tallies: list[np.ndarray] = []
    first = True
    for name, given in rows.misses.items():
        column = np.asarray(given, dtype=object)
        n = len(column)
        missed = np.flatnonzero(np.fromiter(map(operator.is_not, column, repeat(None)), bool, n))
        if not len(missed):
            continue
        reasons = column[missed].tolist()
        codes = np.fromiter(
            (code.setdefault(str(r), len(code)) for r in reasons), np.int64, len(reasons)
        )
        tallies.append(np.bincount(codes))
        yield (
            (b"" if first else b",")
            + orjson.dumps(name)
            + b":["
            + orjson.dumps(missed.astype(np.int64), option=numpy_option)
            + b","
            + orjson.dumps(codes, option=numpy_option)
            + b"]"
        )
        first = False
    yield b'},"slices":['
    for k, positions in enumerate(_slice_codes(result, rows)):
        yield (b"," if k else b"") + (
            b"null" if positions is None else orjson.dumps(positions, option=numpy_option)
        )
    counts = np.zeros(len(code), dtype=np.int64)
    for tally in tallies:
        counts[: len(tally)] += tally
    frequent = np.argsort(-counts, kind="stable")[:FREQUENT]
    yield b'],"reasons":' + orjson.dumps(list(code))
    yield b',"frequent":' + orjson.dumps(frequent.astype(np.int64), option=numpy_option) + b"}"


FREQUENT = 200
"""Reasons offered in the reason filter's list (the most frequent)."""


_ESCAPES = (
    (b"&", b"\\u0026"),
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)


def _escaped(data: bytes) -> bytes:
    """JSON text safe inside a ``<script>`` element: ``<``, ``>``, ``&`` and the line and
    paragraph separators (which occur only inside strings) as ``\\uXXXX`` escapes."""
    for raw, escaped in _ESCAPES:
        if raw in data:
            data = data.replace(raw, escaped)
    return data


def script_json(data: bytes) -> str:
    """:func:`_escaped` as text: JSON that no string in it can end a ``<script>`` element."""
    return _escaped(data).decode("utf-8")


# --- style and script ---------------------------------------------------------------------------

_STYLE = (
    """
:root { color-scheme: light; --ink: #1b1f24; --muted: #5b6470; --line: #d8dde3; --accent: #1f5fa8;
  --bad: #b42318; --bg: #ffffff; --band: #f5f7fa; }
* { box-sizing: border-box; }
body { font-family: FONTS; color: var(--ink); background: var(--bg); margin: 0 auto;
  padding: 16px 24px 48px; max-width: 1400px; font-size: 14px; line-height: 1.45; }
h1 { font-size: 22px; margin: 0 0 6px; } h2 { font-size: 18px; margin: 28px 0 8px;
  border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 4px; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono",
  "WenQuanYi Micro Hei Mono", monospace; font-size: 12.5px; }
ul.facts { margin: 0; padding-left: 18px; color: var(--muted); } li.note { color: var(--bad); }
nav { margin-top: 8px; } a { color: var(--accent); }
table { border-collapse: collapse; } th, td { padding: 3px 8px; text-align: left;
  vertical-align: middle; border-bottom: 1px solid var(--line); }
thead th { background: var(--band); font-weight: 600; vertical-align: bottom; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.plot { white-space: nowrap; } td.verdict { min-width: 12em; }
small.dir { display: block; color: var(--muted); font-weight: normal; }
.mnote { color: var(--muted); font-size: 12px; }
.wide { max-width: 100%; overflow-x: auto; }
.scale { color: var(--muted); font-size: 11px; margin-left: 4px; }
svg text { font-family: inherit; font-size: 11px; fill: var(--ink); }
svg.axis text { fill: var(--muted); }
svg.forest { vertical-align: middle; } .grid { stroke: #e8ebef; stroke-width: 1; }
.ci { stroke: var(--accent); stroke-width: 2; } .pt { fill: var(--accent); }
.ref { stroke: var(--bad); stroke-dasharray: 3 2; stroke-width: 1; } text.null { fill: var(--bad); }
.hint { color: var(--muted); font-size: 12.5px; margin: 4px 0 8px; }
.row { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
figure { margin: 0; } figcaption { font-weight: 600; margin-bottom: 6px; }
.heat .cell text { font-size: 13px; } .heat text.on-dark { fill: #fff; }
.heat .diag rect { stroke: var(--ink); stroke-width: 1.5; }
.heat text.lab { fill: var(--muted); }
table.small td, table.small th { padding: 2px 8px; }
.multiples { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr));
  gap: 10px; }
.panel { border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px; break-inside: avoid; }
.ptitle { margin-bottom: 4px; } .mrow { display: flex; align-items: center; height: 18px; }
.mlab { width: 110px; overflow: hidden; white-space: nowrap; font-size: 12px; }
.mval { width: 50px; text-align: right; font-size: 12px; font-variant-numeric: tabular-nums; }
pre.sig { background: var(--band); padding: 8px 12px; border-radius: 6px; margin: 0;
  max-width: 100%; overflow: auto; }
.controls, .pager { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center;
  margin: 8px 0; } .controls input[type=search] { width: 220px; }
#p-info { min-width: 220px; text-align: center; color: var(--muted); }
table.records { width: 100%; table-layout: fixed; }
table.records th:nth-child(1) { width: 64px; } table.records th:nth-child(2) { width: 150px; }
table.records th:nth-child(3) { width: 26%; } table.records th:nth-child(4) { width: 26%; }
table.records td { vertical-align: top; overflow-wrap: anywhere; font-size: 12.5px; }
table.records tr.miss td:first-child { border-left: 3px solid var(--bad); }
.kv { display: inline-block; margin-right: 10px; } .k { color: var(--muted); }
.v.low { color: var(--bad); font-weight: 600; } .reason { margin-bottom: 2px; }
.reason .k { font-family: ui-monospace, monospace; }
.empty { color: var(--muted); padding: 12px; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
@media print { .controls, .pager, nav { display: none; } body { max-width: none; } }
"""
).replace("FONTS", FONTS)

PAGE_STYLE = _STYLE
"""The pages' style sheet (also the viewer's, ``pingce view``, so that its pages and the reports
look alike)."""

_SCRIPT = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("pingce-data").textContent);
  var N = D.n, metrics = D.metrics, reasons = D.reasons;
  var fieldNames = Object.keys(D.fields);
  var miss = {};
  var anyMiss = new Uint8Array(N);
  metrics.forEach(function (name) {
    var codes = new Int32Array(N).fill(-1);
    var m = D.misses[name];
    if (m) {
      for (var k = 0; k < m[0].length; k++) { codes[m[0][k]] = m[1][k]; anyMiss[m[0][k]] = 1; }
    }
    miss[name] = codes;
  });
  var $ = function (id) { return document.getElementById(id); };
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  var metricSelect = $("f-metric");
  metrics.forEach(function (name) { metricSelect.appendChild(el("option", "", name)); });
  var list = $("reasons");
  D.frequent.forEach(function (k) {
    var o = el("option");
    o.value = reasons[k];
    list.appendChild(o);
  });

  var state = { page: 0, size: 50, rows: null };
  var haystack = null;
  function whole(v) { return typeof v === "object" ? JSON.stringify(v) : String(v); }
  function shown(v) {
    var t = whole(v);
    return t.length > D.field_chars ? t.slice(0, D.field_chars - 1) + "\u2026" : t;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "null";
    if (typeof v === "number") return String(Math.round(v * 1e4) / 1e4);
    return shown(v);
  }
  function searchText(i) {
    var parts = [D.ids[i] === null ? "" : D.ids[i], String(D.lines[i])];
    fieldNames.forEach(function (f) {
      var v = D.fields[f][i];
      if (v !== null) parts.push(whole(v));
    });
    metrics.forEach(function (m) { var c = miss[m][i]; if (c >= 0) parts.push(reasons[c]); });
    return parts.join("\u0001").toLowerCase();
  }
  function filter() {
    var metric = metricSelect.value;
    var missesOnly = $("f-misses").checked;
    var reason = $("f-reason").value.trim().toLowerCase();
    var query = $("f-search").value.trim().toLowerCase();
    var sliceSel = $("f-slice") ? $("f-slice").value : "";
    var sliceCodes = null, sliceCode = -1;
    if (sliceSel) {
      var at = sliceSel.split(":");
      sliceCodes = D.slices[parseInt(at[0], 10)] || new Int32Array(0);
      sliceCode = parseInt(at[1], 10);
    }
    var names = metric ? [metric] : metrics;
    var reasonHit = null;
    if (reason) {
      reasonHit = new Uint8Array(reasons.length);
      for (var r = 0; r < reasons.length; r++) {
        if (reasons[r].toLowerCase().indexOf(reason) >= 0) reasonHit[r] = 1;
      }
    }
    if (query && haystack === null) {
      haystack = new Array(N);
      for (var h = 0; h < N; h++) haystack[h] = searchText(h);
    }
    var out = new Int32Array(N), n = 0;
    for (var i = 0; i < N; i++) {
      if (sliceCodes && sliceCodes[i] !== sliceCode) continue;
      if (missesOnly || reasonHit) {
        var ok = false;
        for (var j = 0; j < names.length && !ok; j++) {
          var c = miss[names[j]][i];
          if (c >= 0 && (!reasonHit || reasonHit[c])) ok = true;
        }
        if (!ok) continue;
      }
      if (query && haystack[i].indexOf(query) < 0) continue;
      out[n++] = i;
    }
    state.rows = out.subarray(0, n);
    state.page = 0;
    render();
  }
  function render() {
    var body = $("r-body");
    var rows = state.rows, size = state.size;
    var pages = Math.max(1, Math.ceil(rows.length / size));
    if (state.page >= pages) state.page = pages - 1;
    var start = state.page * size, stop = Math.min(rows.length, start + size);
    var metric = metricSelect.value;
    var names = metric ? [metric] : metrics;
    var frag = document.createDocumentFragment();
    for (var p = start; p < stop; p++) {
      var i = rows[p];
      var tr = el("tr");
      tr.dataset.index = String(i);
      tr.appendChild(el("td", "num", String(D.lines[i])));
      tr.appendChild(el("td", "id", D.ids[i] === null ? "" : D.ids[i]));
      var ftd = el("td", "fields");
      fieldNames.forEach(function (f) {
        var s = el("span", "kv");
        s.appendChild(el("span", "k", f + " "));
        s.appendChild(el("span", "v", fmt(D.fields[f][i])));
        ftd.appendChild(s);
      });
      tr.appendChild(ftd);
      var vtd = el("td", "values"), mtd = el("td", "misses");
      var groups = [], byReason = {};
      names.forEach(function (m) {
        var col = D.values[m], c = miss[m][i];
        if (col) {
          var s = el("span", "kv");
          s.appendChild(el("span", "k", m + " "));
          s.appendChild(el("span", c >= 0 ? "v low" : "v", fmt(col[i])));
          vtd.appendChild(s);
        }
        if (c >= 0) {
          if (byReason[c] === undefined) { byReason[c] = groups.length; groups.push([c, []]); }
          groups[byReason[c]][1].push(m);
        }
      });
      groups.forEach(function (g) {
        var d = el("div", "reason");
        d.appendChild(el("span", "k", g[1].join(", ") + ": "));
        d.appendChild(el("span", "why", reasons[g[0]]));
        mtd.appendChild(d);
      });
      if (groups.length) tr.className = "miss";
      tr.appendChild(vtd);
      tr.appendChild(mtd);
      frag.appendChild(tr);
    }
    if (!rows.length) {
      var none = el("tr"), td = el("td", "empty", "No record matches these filters.");
      td.colSpan = 5;
      none.appendChild(td);
      frag.appendChild(none);
    }
    body.replaceChildren(frag);
    var count = function (x) { return x.toLocaleString("en"); };
    var of = rows.length < N ? " (filtered from " + count(N) + ")" : "";
    $("p-info").textContent = rows.length
      ? "records " + count(start + 1) + "–" + count(stop) + " of " + count(rows.length) + of +
        " · page " + (state.page + 1) + " of " + pages
      : "0 of " + count(N) + " records";
    $("p-prev").disabled = $("p-first").disabled = state.page === 0;
    $("p-next").disabled = $("p-last").disabled = state.page >= pages - 1;
  }
  var timer = null;
  function later() { clearTimeout(timer); timer = setTimeout(filter, 150); }
  ["f-metric", "f-misses", "f-slice"].forEach(function (id) {
    if ($(id)) $(id).addEventListener("change", filter);
  });
  ["f-reason", "f-search"].forEach(function (id) {
    $(id).addEventListener("input", later);
    $(id).addEventListener("change", function () { clearTimeout(timer); filter(); });
  });
  $("p-size").addEventListener("change", function () {
    state.size = parseInt(this.value, 10);
    state.page = 0;
    render();
  });
  $("p-first").addEventListener("click", function () { state.page = 0; render(); });
  $("p-prev").addEventListener("click", function () {
    state.page = Math.max(0, state.page - 1);
    render();
  });
  $("p-next").addEventListener("click", function () { state.page += 1; render(); });
  $("p-last").addEventListener("click", function () { state.page = 1e9; render(); });
  filter();
  document.documentElement.dataset.ready = "1";
})();
"""


# --- the page of a comparison -------------------------------------------------------------------

FLIPS_SHOWN = 200
"""Flipped records listed per metric and direction (the counts are always complete)."""


def _verdict(m: MetricComparison) -> str:
    """The engine's verdict in words (Holm included: one home for that policy); what to say
    when it has none."""
    if m.verdict:
        return m.verdict
    return "undefined" if m.delta is None else "not tested"


def _aligned(candidate: RecordRows, baseline: RecordRows) -> np.ndarray | None:
    """For each candidate record, the position of the same record among the baseline's: by id
    when every record of both has one, else by position when both have as many records."""
    ids_c, ids_b = candidate.ids, baseline.ids
    if None not in ids_c and None not in ids_b:
        index = {key: i for i, key in enumerate(ids_b)}
        if len(index) == len(ids_b) and all(key in index for key in ids_c):
            return np.fromiter((index[key] for key in ids_c), np.int64, len(ids_c))
    if candidate.n == baseline.n:
        return np.arange(candidate.n, dtype=np.int64)
    return None


def _missed(rows: RecordRows, name: str) -> np.ndarray | None:
    column = rows.misses.get(name)
    if column is None:
        return None
    return np.fromiter(map(operator.is_not, column, repeat(None)), bool, rows.n)


def _flips(
    candidate: RecordRows, baseline: RecordRows, order: np.ndarray, name: str
) -> tuple[np.ndarray, np.ndarray] | None:
    """Candidate positions of the records that the candidate got right and the baseline missed
    (fixed), and the reverse (broken), by the metric's per-record miss reasons."""
    missed_c = _missed(candidate, name)
    missed_b = _missed(baseline, name)
    if missed_c is None and missed_b is None:
        return None
    none = np.zeros(candidate.n, dtype=bool)
    c = none if missed_c is None else missed_c
    b = none if missed_b is None else missed_b[order]
    return np.flatnonzero(b & ~c), np.flatnonzero(c & ~b)


def _flip_rows(
    candidate: RecordRows,
    baseline: RecordRows,
    order: np.ndarray,
    name: str,
    positions: np.ndarray,
) -> str:
    values_c = candidate.values.get(name)
    values_b = baseline.values.get(name)
    misses_c = candidate.misses.get(name)
    misses_b = baseline.misses.get(name)
    out = []
    for i in positions[:FLIPS_SHOWN].tolist():
        j = int(order[i])
        key = candidate.ids[i]
        reason = (misses_c[i] if misses_c is not None else None) or (
            misses_b[j] if misses_b is not None else None
        )
        vc = "—" if values_c is None else fmt_number(_finite(values_c[i]))
        vb = "—" if values_b is None else fmt_number(_finite(values_b[j]))
        out.append(
            f'<tr><td class="num">{int(candidate.lines[i])}</td>'
            f"<td>{esc('' if key is None else key)}</td>"
            f'<td class="num">{esc(vb)}</td><td class="num">{esc(vc)}</td>'
            f"<td>{esc(reason or '')}</td></tr>"
        )
    more = len(positions) - FLIPS_SHOWN
    if more > 0:
        out.append(f'<tr><td colspan="5" class="empty">… and {more:,} more</td></tr>')
    return "".join(out)


def _finite(value: Any) -> float | None:
    number = float(value)
    return number if math.isfinite(number) else None


def _flipped_section(
    result: ComparisonResult, candidate: RecordRows | None, baseline: RecordRows | None
) -> tuple[str, dict[str, tuple[int, int]]]:
    head = '<section id="flipped"><h2>Records that flipped</h2>'
    if candidate is None or baseline is None:
        return (
            head + "<p>This comparison holds no per-record rows, so the records that flipped "
            "cannot be listed.</p></section>\n",
            {},
        )
    order = _aligned(candidate, baseline)
    if order is None:
        return (
            head + "<p>The two sides' records could not be matched (ids missing or different, "
            "and different counts).</p></section>\n",
            {},
        )
    counts: dict[str, tuple[int, int]] = {}
    parts = [
        head,
        '<p class="hint">A record flips on a metric when one system missed it and the other did '
        f"not (by the per-record miss reasons); at most {FLIPS_SHOWN} are listed per metric and "
        "direction.</p>",
    ]
    for name in result.metrics:
        found = _flips(candidate, baseline, order, name)
        if found is None:
            continue
        fixed, broken = found
        counts[name] = (len(fixed), len(broken))
        if not len(fixed) and not len(broken):
            continue
        parts.append(
            f"<details><summary><code>{esc(name)}</code>: {len(fixed):,} fixed by the candidate, "
            f"{len(broken):,} broken</summary>"
        )
        for label, positions in (("fixed (baseline missed)", fixed), ("broken", broken)):
            if not len(positions):
                continue
            parts.append(
                f'<h3>{esc(label)}: {len(positions):,}</h3><table class="small flips">'
                "<thead><tr><th>line</th><th>id</th><th>baseline</th><th>candidate</th>"
                "<th>missed because</th></tr></thead><tbody>"
                + _flip_rows(candidate, baseline, order, name, positions)
                + "</tbody></table>"
            )
        parts.append("</details>")
    parts.append("</section>\n")
    return "".join(parts), counts


def render_comparison_html(
    result: ComparisonResult,
    candidate: RecordRows | None = None,
    baseline: RecordRows | None = None,
) -> str:
    """The page of a comparison: each metric's two values, their difference with its paired
    interval drawn as a forest plot around 0, the p-value and the verdict in words; failures per
    side; the records that flipped (when both sides' per-record rows are given: ``candidate``
    and ``baseline``, as :attr:`EvaluationResult.records` of each); the signature."""
    sig = result.signature
    flipped, counts = _flipped_section(result, candidate, baseline)
    title = f"pingce comparison: {result.suite}"
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'none'"
    deltas = [
        MetricResult(value=m.delta, ci_low=m.ci_low, ci_high=m.ci_high, n=m.n)
        for m in result.metrics.values()
    ]
    reach = max(
        (
            abs(x)
            for d in deltas
            for x in (d.value, d.ci_low, d.ci_high)
            if x is not None and math.isfinite(x) and abs(x) <= 1
        ),
        default=0.0,
    )
    shared = _nice_ceiling(reach) if reach > 0 else 0.1
    rows = []
    for (name, m), d in zip(result.metrics.items(), deltas, strict=True):
        ends = [abs(x) for x in (d.value, d.ci_low, d.ci_high) if _is_finite(x)]
        own = max(ends, default=0.0) > 1
        limit = _nice_ceiling(max(ends)) if own else shared
        scale = f'<span class="scale">±{_tick(limit)}</span>' if own else ""
        interval = (
            f"[{fmt_number(m.ci_low)}, {fmt_number(m.ci_high)}]"
            if m.ci_low is not None and m.ci_high is not None
            else "—"
        )
        flips = counts.get(name)
        flip_text = "" if flips is None else f"{flips[0]:,} / {flips[1]:,}"
        better = "higher" if m.higher_is_better else "lower"
        note = f'<div class="mnote">{esc(m.note)}</div>' if m.note else ""
        rows.append(
            f'<tr><th scope="row"><code>{esc(name)}</code>'
            f'<small class="dir">{better} is better</small></th>'
            f'<td class="num">{esc(fmt_number(m.candidate))}</td>'
            f'<td class="num">{esc(fmt_number(m.baseline))}</td>'
            f'<td class="num">{esc(fmt_number(m.delta))}</td><td class="num">{esc(interval)}</td>'
            f'<td class="plot">{_forest(d, -limit, limit, PLOT_WIDTH, reference=0.0)}{scale}</td>'
            f'<td class="num">{esc(fmt_p(m.p_value))}</td>'
            f'<td class="num">{esc(fmt_p(m.p_holm))}</td>'
            f'<td class="verdict">{esc(_verdict(m))}{note}</td>'
            f'<td class="num">{esc(flip_text)}</td></tr>'
        )
    method = (
        f"{sig.ci_level:.0%} paired {esc(sig.ci_method)} "
        f"{'Poisson bootstrap' if sig.bootstrap_method == 'poisson' else 'bootstrap'}, "
        f"{sig.bootstrap:,} resamples, "
        f"seed {sig.seed}" + (f", resampling whole units of {esc(sig.unit)}" if sig.unit else "")
        if sig.bootstrap
        else "intervals off (--bootstrap 0)"
    )
    failures = "".join(
        f"<li>{esc(side)}: "
        + ", ".join(f"{esc(k)} {esc(v)}" for k, v in failed.model_dump().items())
        + "</li>"
        for side, failed in result.failures.items()
    )
    notes = "".join(f'<li class="note">{esc(note)}</li>' for note in result.notes)
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f"<title>{esc(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n",
            f'<header><h1>{esc(title)}</h1><ul class="facts">'
            f"<li>candidate <code>{esc(result.candidate)}</code></li>"
            f"<li>baseline <code>{esc(result.baseline)}</code></li>"
            f"<li>{result.n_records:,} records, matched; {method}</li>"
            f"{failures}{notes}</ul></header>\n",
            '<section id="metrics"><h2>Differences (candidate − baseline)</h2>'
            '<div class="wide"><table class="metrics compare"><thead><tr><th>metric</th>'
            "<th>candidate</th>"
            "<th>baseline</th><th>delta</th><th>interval of delta</th>"
            f"<th>{_axis_labels(-shared, shared, PLOT_WIDTH)}</th><th>p</th><th>p Holm</th>"
            "<th>verdict</th>"
            "<th>flipped: fixed / broken</th></tr></thead><tbody>",
            "".join(rows),
            '</tbody></table></div><p class="hint">The dot is the difference, the bar its paired '
            "interval, the dashed line 0. p comes from the same resamples as the interval (it "
            "is below 1 − the interval's level exactly when the interval excludes 0); p Holm "
            "adjusts it for the number of metrics compared. The verdict says which system is "
            "better when p is below 1 − the level, and whether that holds after Holm.</p>"
            "</section>\n",
            flipped,
            '<section id="signature"><h2>Signature</h2>'
            f'<pre class="sig">{esc(sig.model_dump_json(indent=2))}</pre></section>\n',
            "<footer>Written by pingce ",
            esc(result.pingce_version),
            ". Everything on this page is in this one file; it makes no network request."
            "</footer>\n</body>\n</html>\n",
        ]
    )
