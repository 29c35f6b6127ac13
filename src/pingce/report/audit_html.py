"""The page of a human audit of a run's judge (``pingce audit``: audit.html, and audit.md): the
judge's agreement with the people, then each metric's value with the judge alone, with the
labels alone and corrected, the corrected interval drawn with the judge's value as the dashed
line, so a judge that moved the number shows as an interval away from the line."""

from __future__ import annotations

from typing import Any

from ..results import MetricResult
from .charts import PLOT_WIDTH, axis_labels, forest, is_finite, nice_ceiling
from .format import fmt_number
from .page import STYLE, asset, esc, head, style

__all__ = ["render_audit_html", "render_audit_markdown"]

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


def _agreement_items(agreement: dict[str, Any]) -> list[str]:
    items = [
        f"{label}: {fmt_number(agreement[key]) if key != 'pairs' else agreement[key]}"
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


def _interval(m: Any) -> str:
    if m.ci_low is None or m.ci_high is None:
        return "—"
    return f"[{fmt_number(m.ci_low)}, {fmt_number(m.ci_high)}]"


def render_audit_html(result: Any, level: float = 0.95) -> str:
    """audit.html of a :class:`pingce.audits.runs.AuditResult`."""
    title = f"pingce audit: {result.run}"
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    judged = {
        k: m for k, m in result.metrics.items() if m.depends_on_judge and not m.measures_the_judge
    }
    of_judge = [(k, m) for k, m in result.metrics.items() if m.measures_the_judge]
    ends = [
        x
        for m in judged.values()
        for x in (m.judge, m.human, m.value, m.ci_low, m.ci_high)
        if is_finite(x)
    ]
    reach = max(ends, default=1.0)
    top = 1.0 if 0 < reach <= 1.05 else nice_ceiling(reach) if reach > 0 else 1.0
    low = min(0.0, min(ends, default=0.0))
    rows = []
    for name, m in judged.items():
        shown = MetricResult(value=m.value, ci_low=m.ci_low, ci_high=m.ci_high, n=m.labelled)
        rows.append(
            f'<tr><th scope="row"><code>{esc(name)}</code></th>'
            f'<td class="num">{esc(fmt_number(m.judge))}</td>'
            f'<td class="num">{esc(fmt_number(m.human))}</td>'
            f'<td class="num"><b>{esc(fmt_number(m.value))}</b></td>'
            f'<td class="num">{esc(_interval(m))}</td>'
            f'<td class="plot">{forest(shown, low, top, PLOT_WIDTH, reference=m.judge)}</td>'
            f'<td class="num">{m.labelled:,}</td><td class="num">{m.unlabelled:,}</td>'
            f'<td class="num">{"" if m.effective_n is None else f"{m.effective_n:,.1f}"}</td>'
            "</tr>"
        )
        rows += [
            f'<tr><td></td><td colspan="8" class="note">{esc(note)}</td></tr>' for note in m.notes
        ]
    unchanged = [k for k, m in result.metrics.items() if not m.depends_on_judge]
    agreement = "".join(f"<li>{esc(item)}</li>" for item in _agreement_items(result.agreement))
    notes = "".join(f'<li class="note">{esc(note)}</li>' for note in result.notes)
    return "".join(
        [
            head(title, csp, style(asset(STYLE))),
            f'<header><h1>{esc(title)}</h1><ul class="facts">'
            f"<li>{result.labelled_pairs:,} labelled rows of the sheet, "
            f"{result.unlabelled_pairs:,} without a label</li>{notes}</ul></header>\n",
            f'<section id="agreement"><h2>The judge against the people</h2><ul>{agreement}</ul>'
            "</section>\n",
            '<section id="metrics"><h2>Metrics corrected by the audit</h2>'
            '<div class="wide"><table class="metrics"><thead><tr><th>metric</th>'
            "<th>judge alone</th><th>labels alone</th><th>corrected</th>"
            f"<th>{level:.0%} interval</th><th>{axis_labels(low, top, PLOT_WIDTH)}</th>"
            "<th>labelled</th><th>unlabelled</th><th>effective n</th></tr></thead><tbody>",
            "".join(rows),
            '</tbody></table></div><p class="hint">The dot is the corrected value, the bar its '
            "interval (prediction-powered inference, delta method), the dashed line the value "
            "with the judge alone. Effective n: the labelled records that would give the labels "
            "alone the same precision.</p>",
            (
                "<p>Of the judge itself, nothing to correct: "
                + ", ".join(
                    f"<code>{esc(k)}</code> {esc(fmt_number(m.judge))}" for k, m in of_judge
                )
                + "</p>"
                if of_judge
                else ""
            ),
            (
                "<p>Unchanged (they read no judge): "
                + ", ".join(f"<code>{esc(k)}</code>" for k in unchanged)
                + "</p>"
                if unchanged
                else ""
            ),
            "</section>\n</body>\n</html>\n",
        ]
    )


def render_audit_markdown(result: Any, level: float = 0.95) -> str:
    """audit.md of a :class:`pingce.audits.runs.AuditResult`."""
    lines = [f"# pingce audit: {result.run}", ""]
    lines += [f"- {item}" for item in _agreement_items(result.agreement)]
    lines += [f"- Note: {note}" for note in result.notes]
    notes: list[str] = []
    lines += [
        "",
        "## Metrics corrected by the audit",
        "",
        f"| metric | judge alone | labels alone | corrected | {level:.0%} interval | labelled "
        "| unlabelled | effective n |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, m in result.metrics.items():
        if not m.depends_on_judge or m.measures_the_judge:
            continue
        effective = "" if m.effective_n is None else f"{m.effective_n:.1f}"
        lines.append(
            f"| `{name}` | {fmt_number(m.judge)} | {fmt_number(m.human)} | "
            f"{fmt_number(m.value)} | {_interval(m)} | {m.labelled} | {m.unlabelled} | "
            f"{effective} |"
        )
        notes += [f"`{name}`: {note}" for note in m.notes]
    lines += [""] + [f"- Note: {note}" for note in notes] if notes else []
    of_judge = [
        f"`{k}` {fmt_number(m.judge)}" for k, m in result.metrics.items() if m.measures_the_judge
    ]
    if of_judge:
        lines += ["", "Of the judge itself, nothing to correct: " + ", ".join(of_judge)]
    unchanged = [k for k, m in result.metrics.items() if not m.depends_on_judge]
    if unchanged:
        lines += ["", "Unchanged (they read no judge): " + ", ".join(f"`{k}`" for k in unchanged)]
    return "\n".join(lines) + "\n"
