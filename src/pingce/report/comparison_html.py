"""comparison.html: the page of a comparison (:class:`~pingce.results.ComparisonResult`): each
metric's two values, their difference with its paired interval drawn as a forest plot around 0
(:mod:`pingce.report.charts`), the p-values and the verdict in words, failures per side, the
records that flipped, both systems' records side by side (:mod:`pingce.report.side_by_side`,
from both sides' :class:`~pingce.results.RecordRows`) and the signature. The style sheet of
report.html and its own (``report/assets/comparison.css``); one small script
(``report/assets/comparison.js``, allowed by its hash) filters the records side by side."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..results import ComparisonResult, MetricComparison, MetricResult, RecordRows
from .charts import PLOT_WIDTH, axis_labels, forest, is_finite, nice_ceiling, tick
from .decision import decision_html
from .format import fmt_number, fmt_p, stream_words
from .page import STYLE, asset, direction, esc, head, script, script_hash, style
from .pairwise import pairwise_html
from .side_by_side import pairs_section, statuses

__all__ = ["FLIPS_SHOWN", "SCRIPT", "STYLE_OWN", "render_comparison_html"]

SCRIPT = "comparison.js"
"""The script of comparison.html's records side by side (report/assets/)."""
STYLE_OWN = "comparison.css"
"""comparison.html's own style sheet, after report.css (report/assets/)."""


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


def _flips(
    candidate: RecordRows, baseline: RecordRows, order: np.ndarray, name: str
) -> tuple[np.ndarray, np.ndarray] | None:
    """Candidate positions of the records that the candidate got right and the baseline missed
    (fixed), and the reverse (broken), by the metric's per-record miss reasons (the statuses of
    :func:`~pingce.report.side_by_side.statuses`)."""
    codes = statuses(candidate, baseline, order, [name]).get(name)
    if codes is None:
        return None
    return np.flatnonzero(codes == "f"), np.flatnonzero(codes == "b")


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


def _record_sections(
    result: ComparisonResult, candidate: RecordRows | None, baseline: RecordRows | None
) -> tuple[str, dict[str, tuple[int, int]]]:
    """The records that flipped and both systems' records side by side (when both sides'
    rows are given and can be matched), and each metric's flip counts."""
    flipped, counts = _flipped_section(result, candidate, baseline)
    if candidate is None or baseline is None:
        return flipped, counts
    order = _aligned(candidate, baseline)
    if order is None:
        return flipped, counts
    verdicts = {name: _verdict(m) for name, m in result.metrics.items()}
    directions = {name: m.higher_is_better for name, m in result.metrics.items()}
    return flipped + pairs_section(candidate, baseline, order, verdicts, directions), counts


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
            f"<details><summary><code>{esc(name)}</code>"
            f"{direction(result.metrics[name].higher_is_better)}: {len(fixed):,} fixed by the "
            f"candidate, {len(broken):,} broken</summary>"
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
    flipped, counts = _record_sections(result, candidate, baseline)
    title = f"pingce comparison: {result.suite}"
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src {script_hash(SCRIPT)}"
    )
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
    shared = nice_ceiling(reach) if reach > 0 else 0.1
    rows = []
    for (name, m), d in zip(result.metrics.items(), deltas, strict=True):
        ends = [abs(x) for x in (d.value, d.ci_low, d.ci_high) if is_finite(x)]
        own = max(ends, default=0.0) > 1
        limit = nice_ceiling(max(ends)) if own else shared
        scale = f'<span class="scale">±{tick(limit)}</span>' if own else ""
        interval = (
            f"[{fmt_number(m.ci_low)}, {fmt_number(m.ci_high)}]"
            if m.ci_low is not None and m.ci_high is not None
            else "—"
        )
        flips = counts.get(name)
        flip_text = "" if flips is None else f"{flips[0]:,} / {flips[1]:,}"
        note = f'<div class="mnote">{esc(m.note)}</div>' if m.note else ""
        rows.append(
            f'<tr><th scope="row"><code>{esc(name)}</code>{direction(m.higher_is_better)}</th>'
            f'<td class="num">{esc(fmt_number(m.candidate))}</td>'
            f'<td class="num">{esc(fmt_number(m.baseline))}</td>'
            f'<td class="num">{esc(fmt_number(m.delta))}</td><td class="num">{esc(interval)}</td>'
            f'<td class="plot">{forest(d, -limit, limit, PLOT_WIDTH, reference=0.0)}{scale}</td>'
            f'<td class="num">{esc(fmt_p(m.p_value))}</td>'
            f'<td class="num">{esc(fmt_p(m.p_holm))}</td>'
            f'<td class="verdict">{esc(_verdict(m))}{note}</td>'
            f'<td class="num">{esc(flip_text)}</td></tr>'
        )
    method = (
        f"{sig.ci_level:.0%} paired {esc(sig.ci_method)} "
        f"{'Poisson bootstrap' if sig.bootstrap_method == 'poisson' else 'bootstrap'} "
        f"({esc(stream_words(sig))}), {sig.bootstrap:,} resamples, "
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
            head(title, csp, style(asset(STYLE), asset(STYLE_OWN))),
            f'<header><h1>{esc(title)}</h1><ul class="facts">'
            f"<li>candidate <code>{esc(result.candidate)}</code></li>"
            f"<li>baseline <code>{esc(result.baseline)}</code></li>"
            f"<li>{result.n_records:,} records, matched; {method}</li>"
            f"{failures}{notes}</ul></header>\n",
            '<section id="metrics"><h2>Differences (candidate − baseline)</h2>'
            '<div class="wide"><table class="metrics compare"><thead><tr><th>metric</th>'
            "<th>candidate</th>"
            "<th>baseline</th><th>delta</th><th>interval of delta</th>"
            f"<th>{axis_labels(-shared, shared, PLOT_WIDTH)}</th><th>p</th><th>p Holm</th>"
            "<th>verdict</th>"
            "<th>flipped: fixed / broken</th></tr></thead><tbody>",
            "".join(rows),
            '</tbody></table></div><p class="hint">The dot is the difference, the bar its paired '
            "interval, the dashed line 0. p comes from the same resamples as the interval (it "
            "is below 1 − the interval's level exactly when the interval excludes 0); p Holm "
            "adjusts it for the number of metrics compared. The verdict says which system is "
            "better when p is below 1 − the level, and whether that holds after Holm.</p>"
            "</section>\n",
            "" if result.decision is None else decision_html(result.decision),
            "" if result.pairwise is None else pairwise_html(result.pairwise),
            flipped,
            '<section id="signature"><h2>Signature</h2>'
            f'<pre class="sig">{esc(sig.model_dump_json(indent=2))}</pre></section>\n',
            "<footer>Written by pingce ",
            esc(result.pingce_version),
            ". Everything on this page is in this one file; it makes no network request."
            f"</footer>\n<script>{script(SCRIPT)}</script>\n</body>\n</html>\n",
        ]
    )
