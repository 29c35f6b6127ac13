"""A human audit of a run's judge (``pingce audit``) drawn from audit.json's plain data: its own
page (audit.html, and audit.md) and the Audit section of the run's report.html and report.md
(:func:`audit_section`, :func:`audit_markdown`), one renderer for both. The judge's agreement
with the people, then each metric's value with the judge alone, with the labels alone and
corrected, the corrected interval drawn with the judge's value as the dashed line, so a judge
that moved the number shows as an interval away from the line; the metrics of the judge itself
and those that read no judge are named as such."""

from __future__ import annotations

from typing import Any

from .charts import PLOT_WIDTH, axis_labels, forest, is_finite, nice_ceiling
from .format import fmt_number
from .page import STYLE, asset, esc, head, style

__all__ = [
    "agreement_value",
    "audit_data",
    "audit_facts",
    "audit_level",
    "audit_markdown",
    "audit_section",
    "corrected_cell",
    "render_audit_html",
    "render_audit_markdown",
]

_AGREEMENT = (
    ("pairs", "labelled pairs"),
    ("accuracy", "accuracy at τ"),
    ("kappa", "Cohen's kappa at τ"),
    ("true_positive_rate", "true positive rate"),
    ("false_positive_rate", "false positive rate"),
    ("roc_auc", "ROC AUC"),
    ("threshold", "τ of the run"),
    ("best_threshold", "τ that agrees best"),
)


def audit_data(result: Any) -> dict[str, Any]:
    """An audit as audit.json's plain data: a :class:`pingce.audits.runs.AuditResult`'s
    ``to_dict()``, or audit.json as read."""
    data: dict[str, Any] = result.to_dict() if hasattr(result, "to_dict") else dict(result)
    return data


def audit_level(audit: dict[str, Any], level: float | None = None) -> float:
    """The level of the audit's intervals: ``level`` when given, else audit.json's."""
    return float(level if level is not None else audit.get("level", 0.95))


def agreement_value(agreement: dict[str, Any], key: str) -> str:
    """An agreement statistic with its bootstrap interval when audit.json holds one."""
    text = fmt_number(agreement[key])
    interval = (agreement.get("intervals") or {}).get(key)
    if interval:
        text += f" [{fmt_number(interval[0])}, {fmt_number(interval[1])}]"
    return text


def _agreement_items(agreement: dict[str, Any]) -> list[str]:
    items = [
        f"{label}: {agreement_value(agreement, key) if key != 'pairs' else agreement[key]}"
        for key, label in _AGREEMENT
        if agreement.get(key) is not None
    ]
    for task, one in agreement.get("graded", {}).items():
        items.append(
            f"{task} grades: {one['records']} records, equal {fmt_number(one['equal'])}, mean "
            f"absolute difference {fmt_number(one['mean_absolute_difference'])}, Pearson r "
            f"{fmt_number(one['pearson_r'])}"
        )
    return items


def _interval(m: dict[str, Any]) -> str:
    if m.get("ci_low") is None or m.get("ci_high") is None:
        return "—"
    return f"[{fmt_number(m['ci_low'])}, {fmt_number(m['ci_high'])}]"


def _judged(audit: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The metrics the audit corrected: those that depend on the judge, but not of the judge."""
    return {
        k: m
        for k, m in audit["metrics"].items()
        if m["depends_on_judge"] and not m["measures_the_judge"]
    }


class _Row:
    """A corrected metric as :func:`~pingce.report.charts.forest` reads an estimate."""

    def __init__(self, m: dict[str, Any]) -> None:
        self.value, self.ci_low, self.ci_high = m["value"], m["ci_low"], m["ci_high"]


def corrected_cell(audit: dict[str, Any], name: str) -> str:
    """report.html's metrics table: the audit's word on the metric ``name`` (HTML): its
    corrected value and interval, or that it is of the judge itself or reads no judge."""
    m = audit["metrics"].get(name)
    if m is None:
        return '<td class="audited"></td>'
    if m["measures_the_judge"]:
        return '<td class="audited mnote">of the judge itself</td>'
    if not m["depends_on_judge"]:
        return '<td class="audited mnote">unchanged</td>'
    return (
        f'<td class="audited"><b>{esc(fmt_number(m["value"]))}</b> '
        f"<small>{esc(_interval(m))}</small></td>"
    )


def _metric_rows(judged: dict[str, dict[str, Any]], low: float, top: float) -> list[str]:
    rows = []
    for name, m in judged.items():
        effective = "" if m.get("effective_n") is None else f"{m['effective_n']:,.1f}"
        rows.append(
            f'<tr data-metric="{esc(name)}"><th scope="row"><code>{esc(name)}</code></th>'
            f'<td class="num">{esc(fmt_number(m["judge"]))}</td>'
            f'<td class="num">{esc(fmt_number(m["human"]))}</td>'
            f'<td class="num corrected"><b>{esc(fmt_number(m["value"]))}</b></td>'
            f'<td class="num">{esc(_interval(m))}</td>'
            f'<td class="plot">{forest(_Row(m), low, top, PLOT_WIDTH, reference=m["judge"])}</td>'
            f'<td class="num">{m["labelled"]:,}</td><td class="num">{m["unlabelled"]:,}</td>'
            f'<td class="num">{effective}</td></tr>'
        )
        rows += [
            f'<tr><td></td><td colspan="8" class="note">{esc(note)}</td></tr>'
            for note in m["notes"]
        ]
    return rows


def audit_section(audit: dict[str, Any], level: float | None = None, depth: int = 2) -> str:
    """The audit's agreement and corrected metrics as HTML, its headings ``<h{depth}>``: the
    body of audit.html, and within report.html's Audit section."""
    level = audit_level(audit, level)
    h = f"h{depth}"
    judged = _judged(audit)
    of_judge = [(k, m) for k, m in audit["metrics"].items() if m["measures_the_judge"]]
    ends = [
        x
        for m in judged.values()
        for x in (m["judge"], m["human"], m["value"], m["ci_low"], m["ci_high"])
        if is_finite(x)
    ]
    reach = max(ends, default=1.0)
    top = 1.0 if 0 < reach <= 1.05 else nice_ceiling(reach) if reach > 0 else 1.0
    low = min(0.0, min(ends, default=0.0))
    unchanged = [k for k, m in audit["metrics"].items() if not m["depends_on_judge"]]
    agreement = "".join(f"<li>{esc(item)}</li>" for item in _agreement_items(audit["agreement"]))
    return "".join(
        [
            f'<div class="audit-agreement"><{h}>The judge against the people</{h}>'
            f"<ul>{agreement}</ul></div>\n",
            f'<div class="audit-metrics"><{h}>Metrics corrected by the audit</{h}>'
            '<div class="wide"><table class="metrics audit"><thead><tr><th>metric</th>'
            "<th>judge alone</th><th>labels alone</th><th>corrected</th>"
            f"<th>{level:.0%} interval</th><th>{axis_labels(low, top, PLOT_WIDTH)}</th>"
            "<th>labelled</th><th>unlabelled</th><th>effective n</th></tr></thead><tbody>",
            "".join(_metric_rows(judged, low, top)),
            '</tbody></table></div><p class="hint">The dot is the corrected value, the bar its '
            "interval (prediction-powered inference), the dashed line the value with the judge "
            "alone. Labelled and unlabelled: records (or units) people checked and those the "
            "judge alone decided. Effective n: the labelled records that would give the labels "
            "alone the same precision.</p>",
            (
                '<p class="of-judge">Of the judge itself, nothing to correct: '
                + ", ".join(
                    f"<code>{esc(k)}</code> {esc(fmt_number(m['judge']))}" for k, m in of_judge
                )
                + "</p>"
                if of_judge
                else ""
            ),
            (
                '<p class="unchanged">Unchanged (they read no judge): '
                + ", ".join(f"<code>{esc(k)}</code>" for k in unchanged)
                + "</p>"
                if unchanged
                else ""
            ),
            "</div>\n",
        ]
    )


def audit_facts(audit: dict[str, Any]) -> str:
    """The audit's counts and notes as ``<li>`` items."""
    checked = len(audit.get("verified", []))
    notes = "".join(f'<li class="note">{esc(note)}</li>' for note in audit["notes"])
    return (
        f"<li>{audit['labelled_pairs']:,} labelled rows of the sheet, "
        f"{audit['unlabelled_pairs']:,} without a label; {checked:,} records checked whole by "
        f"people</li>{notes}"
    )


def render_audit_html(result: Any, level: float | None = None) -> str:
    """audit.html of an audit (:func:`audit_data`)."""
    audit = audit_data(result)
    title = f"pingce audit: {audit['run']}"
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return "".join(
        [
            head(title, csp, style(asset(STYLE))),
            f'<header><h1>{esc(title)}</h1><ul class="facts">{audit_facts(audit)}</ul></header>\n',
            f'<section id="audit">{audit_section(audit, level)}</section>\n</body>\n</html>\n',
        ]
    )


def audit_markdown(audit: dict[str, Any], level: float | None = None, depth: int = 2) -> list[str]:
    """The audit as Markdown lines, its headings ``depth`` deep: audit.md's body, and report.md's
    Audit section."""
    level = audit_level(audit, level)
    lines = [f"- {item}" for item in _agreement_items(audit["agreement"])]
    lines += [f"- Note: {note}" for note in audit["notes"]]
    notes: list[str] = []
    lines += [
        "",
        f"{'#' * depth} Metrics corrected by the audit",
        "",
        f"| metric | judge alone | labels alone | corrected | {level:.0%} interval | labelled "
        "| unlabelled | effective n |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, m in _judged(audit).items():
        effective = "" if m.get("effective_n") is None else f"{m['effective_n']:.1f}"
        lines.append(
            f"| `{name}` | {fmt_number(m['judge'])} | {fmt_number(m['human'])} | "
            f"{fmt_number(m['value'])} | {_interval(m)} | {m['labelled']} | {m['unlabelled']} | "
            f"{effective} |"
        )
        notes += [f"`{name}`: {note}" for note in m["notes"]]
    lines += [""] + [f"- Note: {note}" for note in notes] if notes else []
    of_judge = [
        f"`{k}` {fmt_number(m['judge'])}"
        for k, m in audit["metrics"].items()
        if m["measures_the_judge"]
    ]
    if of_judge:
        lines += ["", "Of the judge itself, nothing to correct: " + ", ".join(of_judge)]
    unchanged = [k for k, m in audit["metrics"].items() if not m["depends_on_judge"]]
    if unchanged:
        lines += ["", "Unchanged (they read no judge): " + ", ".join(f"`{k}`" for k in unchanged)]
    return lines


def render_audit_markdown(result: Any, level: float | None = None) -> str:
    """audit.md of an audit (:func:`audit_data`)."""
    audit = audit_data(result)
    lines = [f"# pingce audit: {audit['run']}", ""]
    return "\n".join(lines + audit_markdown(audit, level)) + "\n"
