"""report.html: one self-contained page of a run, readable offline and attachable to a ticket.

The page reads only an :class:`~pingce.results.EvaluationResult` and its
:class:`~pingce.results.RecordRows`. It shows the metric table with each interval drawn as a
forest plot, each confusion matrix as a heat map, the slice values as small multiples, the
similarity accounting, the run's signature, and a drill-down of every record (its values and the
reason it missed each metric), filterable, sortable by any column and paged; a record opens in
place, whole (every field, each metric's value and reason, its dialogue's turns).

Charts: hand-written inline SVG, made in Python (:mod:`pingce.report.charts`). A chart library
(Vega-Lite through altair, plotly) would have to be inlined to keep the page offline: about 0.8 MB
(Vega with Vega-Lite) to 3.5 MB (plotly) of JavaScript per page, run on every open before
anything shows, for three chart types that are a few rectangles, lines and labels each. The SVG is
a few kilobytes, needs no dependency, draws before any script runs (and without scripts), prints
sharply, and its text is escaped by the same :func:`html.escape` as the rest of the page. The
drill-down alone needs a script: a small vanilla one (``report/assets/report.js``, embedded in
the page with the style sheet ``report/assets/report.css``: :mod:`pingce.report.page`) that
renders a page of records at a time with DOM APIs (``textContent``, never ``innerHTML`` of
data).

Untrusted text (ids, fields, reasons, labels, metric names) is escaped on the server with
:func:`html.escape`; the records are embedded once as JSON in a
``<script type="application/json">`` block with ``<``, ``>``, ``&``, U+2028 and U+2029 written as
``\\uXXXX`` escapes, so no record text can close the block. A Content-Security-Policy allows no
network at all and only the page's own script (by its hash), so even a mistake in the escaping
could not run a script or fetch anything.

Writing is fast: the records go into the JSON by column (one orjson call per column, values
rounded to the four decimals the page shows, repeated reasons written once and referred to by
number, misses stored sparsely), and :func:`write_html` writes them a column at a time, never
holding the page whole: 100,000 records take about 0.2 s, a million about 2 s. The records' JSON
is written by :mod:`pingce.report.records_json`.

A comparison gets a page of its own (:mod:`pingce.report.comparison_html`, no script).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import orjson

from ..results import EvaluationResult, RecordRows
from ..runfolder.layout import RECORDS
from ..runfolder.records import FieldTexts
from .audit_html import audit_facts, audit_level, audit_section, corrected_cell
from .charts import PLOT_WIDTH, axis_labels, forest, heat_map, tick, value_range
from .decision import decision_html
from .format import fmt_interval, fmt_number, fmt_value, stream_words
from .page import STYLE, asset, direction, esc, head, script, script_hash, short, style
from .records_json import (
    DIGITS,
    FIELD_CHARS,
    REPORT_RECORDS,
    VALUE_CHARS,
    Embedded,
    escaped,
    record_measures,
    records_json,
    slice_groups,
)
from .repeats import repeats_html

__all__ = ["PLOT_WIDTH", "SCRIPT", "render_html", "write_html"]

SCRIPT = "report.js"
"""The script of report.html's record list (report/assets/)."""


def render_html(
    result: EvaluationResult,
    rows: RecordRows | None = None,
    *,
    bound: int = REPORT_RECORDS,
    rest: str = RECORDS,
    audit: dict[str, Any] | None = None,
) -> str:
    """The whole page; ``rows`` defaults to the result's own per-record rows (none for a result
    read from results.json: the page then says so instead of listing records). The page embeds
    the first ``bound`` records and says that all of them are in ``rest`` (the run folder's
    records.jsonl, records.parquet or records/). ``audit``: the run's audit by people
    (audit.json's data), shown in an Audit section and beside each metric."""
    return b"".join(_page(result, rows, bound, rest, audit=audit)).decode("utf-8")


def write_html(
    result: EvaluationResult,
    path: str | os.PathLike[str],
    rows: RecordRows | None = None,
    *,
    bound: int = REPORT_RECORDS,
    rest: str = RECORDS,
    shared: FieldTexts | None = None,
    audit: dict[str, Any] | None = None,
) -> None:
    """Write :func:`render_html`'s page to ``path``, a column of records at a time (the page
    is never held whole in memory); ``shared``: the embedded records' field texts as
    records.jsonl made them (:class:`~pingce.runfolder.records.FieldTexts`); ``audit``: as
    :func:`render_html`'s."""
    with open(path, "wb") as handle:
        for chunk in _page(result, rows, bound, rest, shared, audit):
            handle.write(chunk)


def _page(
    result: EvaluationResult,
    given: RecordRows | None,
    bound: int,
    rest: str,
    shared: FieldTexts | None = None,
    audit: dict[str, Any] | None = None,
) -> Iterator[bytes]:
    given = result.records if given is None else given
    rows = given if given is None or given.n <= bound else given.take(np.arange(bound))
    embedded = Embedded(given.n, rest) if given is not None else None
    measures = record_measures(rows) if rows is not None else {}
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src {script_hash(SCRIPT)}"
    )
    title = f"pingce report: {result.suite}"
    parts = [
        head(title, csp, style(asset(STYLE))),
        _header(result, title, audit),
        _metrics_section(result, audit),
        _audit_section(audit),
        repeats_html(result.repeats),
        ""
        if result.decision is None or result.baseline is None
        else decision_html(result.decision, against=str(result.baseline["run"])),
        _tables_section(result),
        _slices_section(result),
        _similarity_section(result),
        _judge_section(result),
        _records_section(result, rows, list(measures), embedded, audit),
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
    stats = result.outputs.stats if result.outputs is not None else None
    for chunk in records_json(result, rows, measures, stats, embedded, shared):
        yield escaped(chunk)
    yield f"</script>\n<script>{script(SCRIPT)}</script>\n</body>\n</html>\n".encode()


# --- the sections drawn on the server -----------------------------------------------------------


def _header(result: EvaluationResult, title: str, audit: dict[str, Any] | None = None) -> str:
    sig = result.signature
    facts = [
        f"data <code>{esc(result.data.source)}</code>: {result.data.n_loaded:,} records loaded, "
        f"{result.n_records:,} evaluated",
    ]
    if sig.bootstrap:
        unit = f", resampling whole units of <code>{esc(sig.unit)}</code>" if sig.unit else ""
        facts.append(
            f"intervals: {sig.ci_level:.0%} {esc(sig.ci_method)} "
            f"{'Poisson bootstrap' if sig.bootstrap_method == 'poisson' else 'bootstrap'} "
            f"({esc(stream_words(sig))}), {sig.bootstrap:,} resamples, seed {sig.seed}{unit}"
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
            ("audit", "audit", audit is not None),
            ("repeats", "repeats", result.repeats is not None),
            ("decision", "decision", result.decision is not None),
            ("tables", "tables", bool(result.tables)),
            ("slices", "slices", bool(result.slices)),
            ("similarity", "similarity", True),
            ("judges", "judges", bool(result.judge)),
            ("records", "records", True),
            ("signature", "signature", True),
        )
        if shown
    )
    return (
        f'<header><h1>{esc(title)}</h1><ul class="facts">{items}{notes}</ul>'
        f"<nav>{nav}</nav></header>\n"
    )


def _metrics_section(result: EvaluationResult, audit: dict[str, Any] | None = None) -> str:
    sig = result.signature
    unit = [m for m in result.metrics.values() if value_range([m]) == (0.0, 1.0)]
    shared = value_range(unit) if unit else (0.0, 1.0)
    rows = []
    for name, m in result.metrics.items():
        low, high = value_range([m])
        own = (low, high) != shared
        scale = f'<span class="scale">{tick(low)} – {tick(high)}</span>' if own else ""
        definition = result.definitions.get(name)
        label = (
            f'<code title="{esc(definition)}">{esc(name)}</code>'
            if definition
            else f"<code>{esc(name)}</code>"
        )
        scored = m.partial()
        rows.append(
            f'<tr><th scope="row">{label}{direction(m.higher_is_better)}</th>'
            f'<td class="num">{esc(fmt_value(m))}</td>'
            f'<td class="num">{esc(fmt_interval(m))}</td><td class="num">{m.n:,}'
            + (f" <small>({esc(scored)} scored)</small>" if scored else "")
            + f'</td><td class="plot">{forest(m, low, high, PLOT_WIDTH)}{scale}</td>'
            + (corrected_cell(audit, name) if audit is not None else "")
            + f'<td class="note">{esc(m.note())}</td></tr>'
        )
    ci_head = f"{sig.ci_level:.0%} interval" if sig.bootstrap else "interval"
    audited = (
        f'<th title="corrected by the audit of the judge ({audit_level(audit):.0%} interval)">'
        "corrected by the audit</th>"
        if audit is not None
        else ""
    )
    told = (
        " Corrected by the audit: the value with the people's labels in place of the judge's "
        '(see <a href="#audit">Audit</a>).'
        if audit is not None
        else ""
    )
    return (
        '<section id="metrics"><h2>Metrics</h2>'
        '<table class="metrics"><thead><tr><th>metric</th><th>value</th>'
        f"<th>{esc(ci_head)}</th><th>n</th><th>{axis_labels(*shared, PLOT_WIDTH)}</th>"
        f'{audited}<th class="note">note</th></tr></thead><tbody>' + "".join(rows) + "</tbody>"
        '</table><p class="hint">The dot is the value, the bar its interval; ↑ higher is better, '
        "↓ lower is better. Rows whose values lie outside the shared axis have their own range, "
        f"printed beside them.{told}</p></section>\n"
    )


def _audit_section(audit: dict[str, Any] | None) -> str:
    """The run's audit by people (``pingce audit RUN --labels SHEET``), as audit.html draws it."""
    if audit is None:
        return ""
    return (
        '<section id="audit"><h2>Audit of the judge by people</h2>'
        f'<ul class="facts">{audit_facts(audit)}</ul>'
        '<p class="hint">The records people checked are marked ✓ in the record list below '
        "(and in records.jsonl: <code>audit</code>); audit.json holds all of it.</p>"
        f"{audit_section(audit, depth=3)}</section>\n"
    )


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
            parts.append(heat_map(name, table))
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


def _slices_section(result: EvaluationResult) -> str:
    if not result.slices:
        return ""
    parts = ['<section id="slices"><h2>Slices</h2>']
    width, row, left = 300, 18, 110
    for field, members in slice_groups(result).items():
        parts.append(
            f'<h3>by <code>{esc(field)}</code></h3><p class="hint">One panel per metric, one '
            "row per value; the dashed line is the value over all records.</p>"
            '<div class="multiples">'
        )
        for name, overall in result.metrics.items():
            entries = [result.slices[key].metrics.get(name) for _, key in members]
            low, high = value_range([overall, *entries])
            rows = []
            for (value, key), entry in zip(members, entries, strict=True):
                n = result.slices[key].n_records
                shown = "—" if entry is None else fmt_value(entry, 3)
                rows.append(
                    f'<div class="mrow"><span class="mlab" title="{esc(value)} ({n:,} records)">'
                    f"{esc(short(value, 14))}</span>"
                    f"{forest(entry, low, high, width - left - 50, row, overall.value)}"
                    f'<span class="mval">{esc(shown)}</span></div>'
                )
            parts.append(
                f'<div class="panel"><div class="ptitle"><code>{esc(name)}</code>'
                f"{direction(overall.higher_is_better)} "
                f'<span class="scale">{tick(low)} – {tick(high)}</span></div>'
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
        called = "the judges' calls are under judges" if result.judge else "no model was called"
        return (
            head + f"<p>No metric of this run needed similarity scores{backend}: {called}."
            "</p></section>\n"
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


JUDGE_KEYS = (
    ("prompts", "prompts"),
    ("requests", "calls (requests)"),
    ("cache_hits", "cache hits"),
    ("failures", "failed calls"),
    ("unparsed_answers", "answers without a grade"),
    ("stated_score_fallbacks", "stated scores: no usable logprobs (G-Eval)"),
    ("prompt_tokens", "prompt tokens"),
    ("completion_tokens", "completion tokens"),
    ("cost", "cost"),
)
_OPTIONAL_KEYS = frozenset({"stated_score_fallbacks"})
"""Rows of the judges' table shown only when the run has them (``logprobs`` asked for)."""
BIAS_METRICS = (
    ("position_bias", "position bias: verdicts that change when the two answers swap places"),
    ("score_length_correlation", "verbosity: correlation of score and answer length"),
    ("judge_agreement", "agreement of the jury (Krippendorff's alpha)"),
    ("judge_fleiss_kappa", "agreement of the jury on categories (Fleiss' kappa)"),
)


def _judge_section(result: EvaluationResult) -> str:
    """The judges of the judged metrics: who graded with what (the signature), what each
    judge's calls did, and the bias diagnostics the run measured."""
    if not result.judge:
        return ""
    judges = list(result.judge)
    head = "".join(f'<th scope="col"><code>{esc(j)}</code></th>' for j in judges)
    rows = []
    for key, label in JUDGE_KEYS:
        if key in _OPTIONAL_KEYS and not any(key in result.judge[j] for j in judges):
            continue
        cells = "".join(
            f'<td class="num">{_count(result.judge[j].get(key, 0))}</td>' for j in judges
        )
        rows.append(f'<tr><th scope="row">{esc(label)}</th>{cells}</tr>')
    extra = result.signature.model_extra or {}
    said = (
        f"<p>Graded by <code>{esc(extra.get('judge', ''))}</code>.</p>"
        if extra.get("judge")
        else ""
    )
    flags = [f'<li class="note">{esc(n)}</li>' for n in result.notes if "self-preference" in n]
    bias = []
    by_kind = {  # the suite's name of each metric by its registered one (signature: name(args))
        text.partition("(")[0]: name for name, text in result.signature.metrics.items()
    }
    for kind, label in BIAS_METRICS:
        metric = result.metrics.get(by_kind.get(kind, kind))
        if metric is None:
            continue
        value = "null" if metric.value is None else f"{metric.value:.4f}"
        interval = (
            f" [{metric.ci_low:.4f}, {metric.ci_high:.4f}]"
            if metric.ci_low is not None and metric.ci_high is not None
            else ""
        )
        why = (
            f" ({esc(metric.undefined_reason)})"
            if metric.value is None and metric.undefined_reason
            else ""
        )
        bias.append(f"<li>{esc(label)}: <b>{value}</b>{interval}{why}</li>")
    bias_html = (
        f"<h3>Bias diagnostics</h3><ul>{''.join(flags + bias)}</ul>" if bias or flags else ""
    )
    return (
        '<section id="judges"><h2>Judges</h2>'
        + said
        + f'<table class="small judges"><thead><tr><th></th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{bias_html}</section>\n"
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


MEASURE_HEADS = {"latency": "latency", "tokens": "tokens", "cost": "cost"}
"""The records table's head of each measure
(:func:`~pingce.report.records_json.record_measures`)."""


def _records_section(
    result: EvaluationResult,
    rows: RecordRows | None,
    measures: Sequence[str] = (),
    embedded: Embedded | None = None,
    audit: dict[str, Any] | None = None,
) -> str:
    head = '<section id="records"><h2>Records</h2>'
    if rows is None:
        return (
            head + "<p>This result holds no per-record rows (it was read from results.json); "
            "records.jsonl has them.</p></section>\n"
        )
    slice_select = ""
    if result.slices:
        options = ['<option value="">all slices</option>']
        for g, (field, members) in enumerate(slice_groups(result).items()):
            options.append(f'<optgroup label="{esc(field)}">')
            options += [
                f'<option value="{g}:{k}">{esc(value)}</option>'
                for k, (value, _) in enumerate(members)
            ]
            options.append("</optgroup>")
        slice_select = f'<label>slice <select id="f-slice">{"".join(options)}</select></label>'
    columns = [
        ("line", "line"),
        ("id", "id"),
        *((("context", "context"),) if rows.context else ()),
        *((f"m:{m}", MEASURE_HEADS[m]) for m in measures),
        ("fields", "fields"),
        ("values", "values"),
        ("misses", "missed because"),
    ]
    heads = "".join(
        f'<th data-col="{esc(col)}" aria-sort="none"><button type="button" class="sort" '
        f'title="sort by {esc(text)}">{esc(text)}<span class="arrow"></span></button></th>'
        for col, text in columns
    )
    part = ""
    if embedded is not None and embedded.total > rows.n:
        part = (
            f'<p class="hint bounded" id="r-bounded">This page holds the first {rows.n:,} of the '
            f"{embedded.total:,} records (pingce run --report-records N embeds more); all of "
            f"them are in <code>{esc(embedded.rest)}</code> beside this page.</p>"
        )
    return (
        head
        + part
        + f'<p class="hint">{rows.n:,} records: their values (to {DIGITS} decimals) and the '
        f"reason each metric missed; field values are cut at {FIELD_CHARS} characters here. "
        "Click a record, or press Enter on it, to open it whole: every field (up to "
        f"{VALUE_CHARS:,} characters; the data file has everything), every metric's value and "
        "reason, and the other turns of its dialogue. Click a column's head to sort by it.</p>"
        "<noscript><p>The record list needs JavaScript.</p></noscript>"
        '<div class="controls">'
        '<label>metric <select id="f-metric"><option value="">all metrics</option></select>'
        "</label>"
        '<label><input type="checkbox" id="f-misses"> misses only</label>'
        + (
            '<label><input type="checkbox" id="f-verified"> checked by people only</label>'
            if audit is not None or rows.audit
            else ""
        )
        + '<label>reason <input type="search" id="f-reason" list="reasons" '
        'placeholder="reason contains…"></label><datalist id="reasons"></datalist>'
        f"{slice_select}"
        '<label>search <input type="search" id="f-search" placeholder="id, field, reason…">'
        "</label>"
        '<label>sort by <select id="s-by"></select></label>'
        '<button type="button" id="s-dir" aria-label="sort order">ascending</button></div>'
        '<div class="pager"><button type="button" id="p-first">«</button>'
        '<button type="button" id="p-prev">‹ previous</button><span id="p-info"></span>'
        '<button type="button" id="p-next">next ›</button>'
        '<button type="button" id="p-last">»</button>'
        '<label>per page <select id="p-size"><option>25</option><option selected>50</option>'
        "<option>100</option><option>500</option></select></label></div>"
        f'<table class="records"><thead><tr>{heads}</tr></thead><tbody id="r-body"></tbody>'
        "</table></section>\n"
    )
