"""Console output of a run or a comparison, with rich: tables of metrics (with intervals), the
confusion matrix, slices, failures, notes and the time per phase.

Made for 80 columns: a note is one line, cut at the console's width (the whole text is in
report.md and results.json, or comparison.md and comparison.json); a metric computed over no
record (its fields absent from the data) has no row but a place in one line that names it and
says why; a comparison's table holds the metrics that changed, and one line names the others."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..results import ComparisonResult, EvaluationResult, MetricComparison, MetricResult
from .format import (
    direction_legend,
    fmt_interval,
    fmt_number,
    fmt_p,
    fmt_value,
    marked,
    model_line,
    similarity_line,
    stream_tag,
)

if TYPE_CHECKING:
    from ..calibrate import CalibrationResult

__all__ = [
    "left_out",
    "one_line",
    "print_calibration",
    "print_comparison",
    "print_metric_list",
    "print_notes",
    "print_profile",
    "print_result",
    "print_slices",
    "print_suite_list",
    "unchanged",
]


def print_notes(notes: list[str], console: Console) -> bool:
    """Things the user should know (deprecated names...), one line each, cut at the console's
    width (the whole text is in the report files); whether one was cut."""
    cut = False
    for note in notes:
        cut |= one_line(f"[yellow]note:[/yellow] {escape(note)}", console)
    return cut


def one_line(text: str, console: Console, *, markup: bool = True) -> bool:
    """``text`` on one line of the console, cut with an ellipsis where it is wider; whether it
    was."""
    console.print(
        text, markup=markup, highlight=False, emoji=False, no_wrap=True, overflow="ellipsis"
    )
    shown = Text.from_markup(text) if markup else Text(text)
    return shown.cell_len > console.width


def left_out(metrics: Mapping[str, MetricResult]) -> dict[str, list[str]]:
    """The metrics computed over no record, with no value (their fields absent from the data,
    such as a latency field no record has), by the reason they have none, in order."""
    reasons: dict[str, list[str]] = {}
    for name, m in metrics.items():
        if m.value is None and m.n == 0:
            reasons.setdefault(m.undefined_reason or "no value", []).append(name)
    return reasons


def print_left_out(reasons: Mapping[str, list[str]], console: Console) -> None:
    """One line naming the metrics :func:`left_out` found and why (nothing when there are none)."""
    if not reasons:
        return
    n = sum(map(len, reasons.values()))
    why = "; ".join(f"{', '.join(names)} ({reason})" for reason, names in reasons.items())
    console.print(
        f"left out, {n} metric(s) computed over no record: {why}",
        markup=False,
        highlight=False,
        emoji=False,
    )


def print_profile(seconds: dict[str, float], console: Console) -> None:
    """Seconds and share of each phase of the run (``--profile``)."""
    total = sum(seconds.values())
    table = Table(title=f"time per phase ({total:.2f} s)", title_justify="left")
    table.add_column("phase", style="bold")
    table.add_column("seconds", justify="right")
    table.add_column("share", justify="right")
    for name, value in seconds.items():
        table.add_row(name, f"{value:.3f}", f"{value / total:.1%}" if total else "—")
    console.print(table)


def print_result(result: EvaluationResult, console: Console) -> None:
    """Print the metrics table, each metric's note on a line of its own (cut at the console's
    width), one line for the metrics computed over no record, any tables, slices, failures and
    sampling."""
    sig = result.signature
    title = f"{result.suite}: {result.n_records} records"
    if result.n_records != result.data.n_loaded:
        title += f" (of {result.data.n_loaded} loaded)"
    by = f", by {sig.unit}" if sig.unit else ""
    by += stream_tag(sig)
    ci_head = f"{sig.ci_level:.0%} CI ({sig.ci_method}{by})" if sig.bootstrap else "CI (off)"
    missing = left_out(result.metrics)
    gone = {name for names in missing.values() for name in names}
    kept = {name: m for name, m in result.metrics.items() if name not in gone}
    partial = any(m.partial() for m in kept.values())
    table = Table(
        title=title, title_justify="left", caption=_legend(kept.values()), caption_justify="left"
    )
    table.add_column("metric", style="bold", no_wrap=True)
    table.add_column("value", justify="right")
    table.add_column(ci_head, justify="right")
    table.add_column("n", justify="right")
    if partial:  # records scored / records covered, where some were left out
        table.add_column("scored", justify="right", style="yellow")
    for name, m in kept.items():
        value = fmt_value(m)
        if m.value is None:
            value = f"[yellow]{value}[/yellow]"
        scored = [m.partial() or ""] if partial else []
        table.add_row(escape(marked(name, m.higher_is_better)), value, fmt_interval(m), str(m.n),
                      *scored)  # fmt: skip
    console.print(table)
    for name, m in kept.items():  # the notes, a line each (whole in report.md)
        if m.note():
            one_line(f"{name}: {m.note()}", console, markup=False)
    print_left_out(missing, console)
    for name, data in result.tables.items():
        drawn = _matrix_table(name, data) if "matrix" in data else _label_table(name, data)
        if drawn is not None:
            console.print(drawn)
    if result.slices:
        print_slices(result, console)
    if result.sampling is not None and result.sampling.method == "stratified":
        counts = ", ".join(f"{c.value}: {c.sampled}/{c.population}" for c in result.sampling.strata)
        console.print(f"sampled by {result.sampling.field} (sampled/population): {counts}")
        for note in result.sampling.notes:
            console.print(f"[yellow]note:[/yellow] {note}")
    failure_counts: dict[str, int] = result.failures.model_dump()
    if any(failure_counts.values()):
        shown = ", ".join(f"{name} {count}" for name, count in failure_counts.items())
        console.print(f"[red]failures:[/red] {shown}")
    spent = similarity_line(result.signature.similarity, result.similarity)
    if spent is not None:
        console.print(spent, markup=False, highlight=False, emoji=False)
    asked = model_line(result.model)
    if asked is not None:
        console.print(asked, markup=False, highlight=False, emoji=False)
    print_notes(result.notes, console)


def _legend(metrics: Iterable[MetricResult | MetricComparison]) -> str | None:
    """A table's caption: what the direction marks of its metrics mean (None without marks)."""
    return direction_legend(m.higher_is_better for m in metrics) or None


def _matrix_table(name: str, data: dict[str, Any]) -> Table:
    """A confusion matrix: rows gold, columns predicted (the last column: off the scale)."""
    cm = Table(title=name, title_justify="left", caption="rows gold, columns predicted")
    cm.add_column("gold \\ pred", style="bold")
    for label in data.get("columns", data["labels"]):  # (invalid): off the scale
        cm.add_column(label, justify="right")
    for label, row in zip(data["labels"], data["matrix"], strict=True):
        cm.add_row(label, *(str(x) for x in row))
    return cm


def _label_table(name: str, data: dict[str, Any]) -> Table | None:
    """A table of a column per key and a row per label (per_class); None for another table."""
    if "labels" not in data:
        return None
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
    return pc


MAX_SLICE_TABLES = 5
"""Tables of slice values printed per slice field; the rest are in report.md."""


def print_slices(result: EvaluationResult, console: Console) -> None:
    """Every metric per slice value: a row per metric (names never cut), a column per value of
    a slice field, as many columns a table as the console's width holds, the rest in further
    tables (labels wrap, never cut)."""
    gone = {name for names in left_out(result.metrics).values() for name in names}
    names = [name for name in result.metrics if name not in gone] or list(result.metrics)
    shown_names = {name: marked(name, result.metrics[name].higher_is_better) for name in names}
    label = max(cell_len(name) for name in [*shown_names.values(), "records"]) + 4
    per_table = max(1, (console.width - label) // 12)  # a value "0.8333" and its separators
    by_field: dict[str, list[str]] = {}
    for key in result.slices:
        by_field.setdefault(key.split("=", 1)[0], []).append(key)
    for field, keys in by_field.items():
        shown = keys[: per_table * MAX_SLICE_TABLES]
        for start in range(0, len(shown), per_table):
            chunk = keys[start : start + per_table]
            title = f"slices by {field}"
            if len(keys) > per_table:
                title += f" ({start + 1}-{start + len(chunk)} of {len(keys)})"
            legend = _legend(result.metrics[name] for name in names)
            table = Table(title=title, title_justify="left", caption=legend, caption_justify="left")
            table.add_column("metric", style="bold", no_wrap=True)
            for key in chunk:
                table.add_column(key.split("=", 1)[-1], justify="right", overflow="fold")
            table.add_row("records", *(str(result.slices[key].n_records) for key in chunk))
            for name in names:
                cells = (fmt_value(result.slices[key].metrics[name]) for key in chunk)
                table.add_row(escape(shown_names[name]), *cells)
            console.print(table)
        if len(keys) > len(shown):
            console.print(
                f"slices by {field}: {len(keys) - len(shown)} more values in report.md and "
                "results.json"
            )


def unchanged(metrics: Mapping[str, MetricComparison]) -> list[str]:
    """The metrics whose value is the same on both sides (a difference of exactly 0, or no value
    on either), in order."""
    return [
        name
        for name, m in metrics.items()
        if m.delta == 0 or (m.delta is None and m.candidate == m.baseline)
    ]


def print_comparison(
    result: ComparisonResult, console: Console, *, written: str | None = None
) -> None:
    """The comparison table of the metrics that changed (both values, the difference, its
    interval, p and Holm's p) and one line naming the unchanged ones, then what the tests say
    of the changed ones, in words (colour only repeats it), and the slices. Notes and verdicts
    are a line each, cut at the console's width; ``written``: the file that holds them whole
    (comparison.md), else a line says how to get them whole."""
    signature = result.signature
    by = f", by {signature.unit}" if signature.unit else ""
    title = f"{result.suite}: candidate {result.candidate} vs baseline {result.baseline}, "
    title += f"{result.n_records} records"
    cut = _print_table(title, result.metrics, result, by, console)
    alpha = 1.0 - signature.ci_level
    tested = [m for m in result.metrics.values() if m.p_value is not None]
    if tested or any(m.verdict for m in result.metrics.values()):
        console.print(
            f"significance at {alpha:.2g} (Holm across {len(tested)} metrics):", highlight=False
        )
        cut |= _print_verdicts(result.metrics, console)
    if result.pairwise is not None:
        from .pairwise import print_pairwise

        print_pairwise(result.pairwise, signature, console)
    for key, sl in (result.slices or {}).items():
        head = f"slice {key}: {sl.n_records} records"
        cut |= _print_table(head, sl.metrics, result, by, console)
    if result.slices:
        n_tests = sum(
            1 for sl in result.slices.values() for m in sl.metrics.values() if m.p_value is not None
        )
        console.print(
            f"slices, significance at {alpha:.2g} (Holm across {n_tests} slice metrics):",
            highlight=False,
        )
        for key, sl in result.slices.items():
            cut |= _print_verdicts(sl.metrics, console, f"{key}: ")
    for side, failed in result.failures.items():
        counts = {k: v for k, v in failed.model_dump().items() if v}
        if counts:
            shown = ", ".join(f"{k} {v}" for k, v in counts.items())
            console.print(f"[yellow]{side} failures: {shown}[/yellow]")
    cut |= print_notes(result.notes, console)
    if cut:
        where = written or "comparison.md, written with --out"
        console.print(f"(the lines cut are whole in {where})", highlight=False)


def _print_table(
    title: str,
    metrics: dict[str, MetricComparison],
    result: ComparisonResult,
    by: str,
    console: Console,
) -> bool:
    """The table of the metrics that changed, its notes a line each, and a line naming the
    unchanged metrics; whether a note was cut."""
    cut = False
    same = unchanged(metrics)
    changed = {name: m for name, m in metrics.items() if name not in same}
    if changed:
        console.print(_comparison_table(title, changed, result, by, console.width))
        for name, m in changed.items():
            if m.note:
                cut |= one_line(f"{name}: {m.note}", console, markup=False)
    else:
        console.print(title, markup=False, highlight=False)
    if same:
        console.print(
            f"unchanged (the same value on both sides), {len(same)} metric(s): {', '.join(same)}",
            markup=False,
            highlight=False,
            emoji=False,
        )
    return cut


def _comparison_table(
    title: str,
    metrics: dict[str, MetricComparison],
    result: ComparisonResult,
    by: str,
    width: int,
) -> Table:
    """A table when it fits the console, else a row per metric with its numbers on a line
    below (names are never cut)."""
    signature = result.signature
    ci_head = f"{signature.ci_level:.0%} CI ({signature.ci_method}{by}{stream_tag(signature)})"
    ci_head = ci_head if signature.bootstrap else "CI (off)"
    rows = []
    for name, m in metrics.items():
        delta = fmt_number(m.delta)
        if m.delta is not None and m.significant:  # colour repeats the verdict, never replaces it
            better = (m.delta > 0) == m.higher_is_better
            delta = f"[{'green' if better else 'red'}]{delta}[/]"
        interval = (
            f"[{fmt_number(m.ci_low)}, {fmt_number(m.ci_high)}]"
            if m.ci_low is not None and m.ci_high is not None
            else ""
        )
        rows.append((escape(marked(name, m.higher_is_better)), m, delta, interval))
    name_width = max(
        [len("metric"), *(cell_len(marked(n, m.higher_is_better)) for n, m in metrics.items())]
    )
    wide = name_width + 3 + 9 * 3 + 22 + 10 * 2 + 4 <= width
    table = Table(
        title=title, title_justify="left", caption=_legend(metrics.values()), caption_justify="left"
    )
    if wide:
        table.add_column("metric", style="bold", no_wrap=True)
        for column in ("candidate", "baseline", "delta"):
            table.add_column(column, justify="right", no_wrap=True)
        table.add_column(f"delta {ci_head}", justify="right", overflow="fold")
        table.add_column("p", justify="right", no_wrap=True)
        table.add_column("p Holm", justify="right", no_wrap=True)
        for name, m, delta, interval in rows:
            table.add_row(
                name,
                fmt_number(m.candidate),
                fmt_number(m.baseline),
                delta,
                interval,
                fmt_p(m.p_value),
                fmt_p(m.p_holm),
            )
    else:  # narrow: a metric's name on its own line, its numbers indented below
        table.add_column(
            f"metric / candidate, baseline, delta, delta {ci_head}, p, p Holm", overflow="fold"
        )
        for name, m, delta, interval in rows:
            numbers = (
                f"  {fmt_number(m.candidate)}  {fmt_number(m.baseline)}  {delta}  {interval}"
                f"  p {fmt_p(m.p_value) or '—'}  Holm {fmt_p(m.p_holm) or '—'}"
            )
            table.add_row(f"[bold]{name}[/bold]\n{numbers}")
    return table


def _print_verdicts(
    metrics: dict[str, MetricComparison], console: Console, prefix: str = ""
) -> bool:
    """One line per metric that changed: the verdict, then the other tests' p-values (cut at
    the console's width)."""
    same = set(unchanged(metrics))
    cut = False
    for name, m in metrics.items():
        if m.verdict is None or name in same:
            continue
        others = [
            f"{t.test} p={fmt_p(t.p_value)}"
            for t in m.tests
            if t.test != m.p_method and t.p_value is not None
        ]
        line = f"  {prefix}{name}: {m.verdict}"
        if others:
            line += f" ({'; '.join(others)})"
        cut |= one_line(line, console, markup=False)
    return cut


def print_calibration(result: CalibrationResult, console: Console) -> None:
    """``pingce calibrate``: the threshold curve (at most 25 rows, the best in bold), the best
    threshold and the ROC AUC."""
    table = Table(title=f"{result.signature}: {result.n_pairs} pairs", title_justify="left")
    for column in ("τ (Sim > τ)", "precision", "recall", "F1", "kappa", "TP", "FP", "FN", "TN"):
        table.add_column(column, justify="right")
    points = result.curve
    if len(points) > 25:
        step = len(points) / 25
        keep = {int(i * step) for i in range(25)} | {points.index(result.best)}
        points = [p for i, p in enumerate(points) if i in keep]
    for p in points:
        style = "bold green" if p == result.best else None
        table.add_row(
            f"{p.threshold:.4f}",
            fmt_number(p.precision),
            fmt_number(p.recall),
            fmt_number(p.f1),
            fmt_number(p.kappa),
            str(p.tp),
            str(p.fp),
            str(p.fn),
            str(p.tn),
            style=style,
        )
    console.print(table)
    best = result.best
    console.print(
        f"best τ = {best.threshold:.4f}: F1 {fmt_number(best.f1)}, Cohen's kappa with the labels "
        f"{fmt_number(best.kappa)} (precision {fmt_number(best.precision)}, recall "
        f"{fmt_number(best.recall)})"
    )
    console.print(f"ROC AUC {fmt_number(result.auc)} (0.5 is chance, 1 a perfect ranking)")


def print_audit(result: Any, console: Console, level: float = 0.95) -> None:
    """``pingce audit``: the judge's agreement with the labels, then each metric's judge-only,
    human-only and corrected value with its interval (:class:`pingce.audits.runs.AuditResult`)."""
    from .audit_html import agreement_value

    agreement = result.agreement
    parts = [f"{agreement.get('pairs', 0)} labelled pairs"]
    for key, label in (
        ("accuracy", "accuracy"),
        ("kappa", "Cohen's kappa"),
        ("true_positive_rate", "TPR"),
        ("false_positive_rate", "FPR"),
        ("roc_auc", "ROC AUC"),
    ):
        if key in agreement:
            parts.append(f"{label} {agreement_value(agreement, key)}")
    if agreement.get("threshold") is not None:
        parts.append(
            f"at τ {agreement['threshold']:g} (best τ on these labels: "
            f"{fmt_number(agreement.get('best_threshold'))})"
        )
    if agreement.get("pairs"):
        console.print("judge against the labels: " + ", ".join(parts))
    for task, one in agreement.get("graded", {}).items():
        console.print(
            f"{task} grades against the people's: {one['records']} records, equal "
            f"{fmt_number(one['equal'])}, mean absolute difference "
            f"{fmt_number(one['mean_absolute_difference'])}, Pearson r "
            f"{fmt_number(one['pearson_r'])}"
        )
    judged = {
        k: m for k, m in result.metrics.items() if m.depends_on_judge and not m.measures_the_judge
    }
    first = next(iter(judged.values()), None)
    if first is not None:
        what = "records" if result.unit is None else f"units of {result.unit}"
        console.print(
            f"{what}: {first.labelled} labelled, {first.unlabelled} decided by the judge alone"
            + (f", {first.exact} without a judged pair" if first.exact else "")
        )
    console.print(f"{escape(result.run)}: corrected by the audit ({level:.0%} intervals)")
    for name, m in judged.items():
        interval = (
            f" [{fmt_number(m.ci_low)}, {fmt_number(m.ci_high)}]"
            if m.ci_low is not None and m.ci_high is not None
            else ""
        )
        effective = "" if m.effective_n is None else f", effective n {m.effective_n:.0f}"
        console.print(
            f"  [bold]{escape(name)}[/bold]: {fmt_number(m.judge)} with the judge -> "
            f"[bold]{fmt_number(m.value)}[/bold]{interval} corrected (the labels alone "
            f"{fmt_number(m.human)}{effective})"
        )
        for note in m.notes:
            console.print(f"    note: {escape(note)}")
    of_judge = [
        f"{k} {fmt_number(m.judge)}" for k, m in result.metrics.items() if m.measures_the_judge
    ]
    if of_judge:
        console.print("of the judge itself, nothing to correct: " + ", ".join(of_judge))
    unchanged = [k for k, m in result.metrics.items() if not m.depends_on_judge]
    if unchanged:
        console.print("unchanged (they read no judge): " + ", ".join(unchanged))
    for note in result.notes:
        console.print(f"note: {escape(note)}")


def print_metric_list(
    rows: Iterable[tuple[str, str, str, str]], renamed: Mapping[str, str], console: Console
) -> None:
    """``pingce metrics``: every metric (name, kind, definition, parameters) and the deprecated
    names with what replaces them."""
    table = Table(title="metrics", title_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("kind")
    table.add_column("definition", overflow="fold")
    table.add_column("parameters", overflow="fold")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    names = ", ".join(f"{old} -> {new}" for old, new in renamed.items())
    console.print(f"deprecated names (still accepted in suite files): {names}", highlight=False)


def print_suite_list(suites: Mapping[str, str], console: Console) -> None:
    """``pingce suites``: the built-in suites and their descriptions."""
    table = Table(title="built-in suites", title_justify="left")
    table.add_column("suite", style="bold")
    table.add_column("description", overflow="fold")
    for name, description in suites.items():
        table.add_row(name, description)
    console.print(table)


def print_paired_audit(result: Any, console: Console, level: float = 0.95) -> None:
    """``pingce compare RUN_A RUN_B --labels SHEET``: each judge-dependent metric of both runs
    corrected, and their difference (:class:`pingce.audits.paired.PairedAudit`)."""
    from .audit_html import agreement_value

    agreement = result.agreement
    if agreement.get("pairs"):
        parts = [f"{agreement['pairs']} labelled pairs of both runs"]
        for key, label in (("accuracy", "accuracy"), ("kappa", "Cohen's kappa")):
            if agreement.get(key) is not None:
                parts.append(f"{label} {agreement_value(agreement, key)}")
        console.print("judge against the labels: " + ", ".join(parts))
    for note in result.notes:
        console.print(f"note: {escape(note)}")
    judged = {
        k: sides
        for k, sides in result.metrics.items()
        if sides["difference"].depends_on_judge and not sides["difference"].measures_the_judge
    }
    first = next(iter(judged.values()), None)
    if first is not None:
        d = first["difference"]
        what = "records" if result.unit is None else f"units of {result.unit}"
        console.print(
            f"{what} labelled in both runs: {d.labelled}; decided by the judge alone: "
            f"{d.unlabelled}" + (f"; without a judged pair: {d.exact}" if d.exact else "")
        )
    console.print(
        f"{escape(result.candidate)} against {escape(result.baseline)}: corrected by the audit "
        f"({level:.0%} intervals, paired on the labelled records)"
    )

    def interval(m: Any) -> str:
        if m.ci_low is None or m.ci_high is None:
            return ""
        return f" [{fmt_number(m.ci_low)}, {fmt_number(m.ci_high)}]"

    for name, sides in judged.items():
        c, b, d = sides["candidate"], sides["baseline"], sides["difference"]
        delta = "n/a" if d.value is None else f"{d.value:+.4f}"
        judge = "n/a" if d.judge is None else f"{d.judge:+.4f}"
        console.print(
            f"  [bold]{escape(name)}[/bold]: difference [bold]{delta}[/bold]{interval(d)} "
            f"corrected ({judge} with the judge); candidate {fmt_number(c.value)}{interval(c)}, "
            f"baseline {fmt_number(b.value)}{interval(b)}"
        )
        for note in d.notes:
            console.print(f"    note: {escape(note)}")
    unchanged = [k for k, s in result.metrics.items() if not s["difference"].depends_on_judge]
    if unchanged:
        console.print(
            "unchanged (they read no judge; compare them without --labels): " + ", ".join(unchanged)
        )


def print_power(rows: Any, console: Console, power: float) -> None:
    """``pingce plan``: each gate's power before the run (:class:`pingce.power.GatePower`)."""
    for row in rows:
        head = f"[bold]{escape(row.metric)}[/bold] ({row.test}, margin {row.margin:g})"
        if row.power is None:
            console.print(f"{head}: {escape(row.note or 'no standard error')}")
            continue
        how = "measured" if row.measured else "assumed"
        console.print(
            f"{head}: baseline {fmt_number(row.value)} over {row.records} records, SE "
            f"{fmt_number(row.se)}; the paired difference's SE {fmt_number(row.se_difference)} "
            f"(correlation {row.correlation:.2f}, {how}); one-sided alpha {row.alpha:.4g}"
        )
        console.print(
            f"  power {row.power:.0%} at {row.records} records; {power:.0%} power clears a "
            f"margin of {row.detectable:.4f}, or this margin with {row.records_needed} records"
        )
        if getattr(row, "repeats", None) is not None:
            needed = getattr(row, "repeats_needed", None)
            console.print(
                f"  with repeats (the baseline's {row.repeats} a record): "
                + (
                    f"{needed} repeat(s) a record reach {power:.0%} power at this margin"
                    if needed is not None
                    else f"no number of repeats reaches {power:.0%} power at this margin: more "
                    "records do"
                )
            )
