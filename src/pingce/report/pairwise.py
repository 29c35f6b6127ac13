"""A comparison's pairwise preference (``--pairwise``, :class:`~pingce.results.PairwiseComparison`)
as the console, comparison.md and comparison.html show it: the candidate's win rate over the
baseline and the judges' position bias, each with its interval, the verdict in words and what
the judges' calls did. Reads the result only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..results import MetricResult, PairwiseComparison, PairwiseSlice, Signature
from .charts import PLOT_WIDTH, axis_labels, forest
from .format import fmt_interval, fmt_value, marked
from .page import direction, esc

__all__ = ["judge_lines", "pairwise_html", "pairwise_markdown", "print_pairwise"]

MEANING = {
    "win_rate": "the share of records where the judges prefer the candidate's answer (a tie, or "
    "a verdict that flips with the order, counts a half): 0.5 is no preference",
    "position_bias": "the share of records whose verdict changed when the answers swapped "
    "places: 0 when the order never sways the judges",
}


def _rows(pairwise: PairwiseComparison | PairwiseSlice) -> dict[str, MetricResult]:
    return {"win_rate": pairwise.win_rate, "position_bias": pairwise.position_bias}


def _slice_rows(pairwise: PairwiseComparison) -> list[tuple[str, str, MetricResult]]:
    """Each slice's metrics: (slice, metric, result)."""
    return [
        (key, name, m)
        for key, part in (pairwise.slices or {}).items()
        for name, m in _rows(part).items()
    ]


def _title(pairwise: PairwiseComparison) -> str:
    judges = ", ".join(pairwise.judge) or "the judges"
    return (
        f"the candidate's {pairwise.output} against the baseline's, asked of {judges} in both "
        "orders"
    )


def judge_lines(judge: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per judge: prompts, requests, answers from the cache, failed calls, answers
    without a verdict, tokens and cost."""
    lines = []
    for name, stats in judge.items():
        parts = [
            f"{stats.get('prompts', 0):,} prompts",
            f"{stats.get('requests', 0):,} requests",
            f"{stats.get('cache_hits', 0):,} from the cache",
        ]
        if stats.get("failures"):
            parts.append(f"{stats['failures']:,} failed calls")
        if stats.get("unparsed_answers"):
            parts.append(f"{stats['unparsed_answers']:,} answers without a verdict")
        prompt, completion = stats.get("prompt_tokens", 0), stats.get("completion_tokens", 0)
        if prompt or completion:
            parts.append(f"{prompt:,} prompt + {completion:,} completion tokens")
        if stats.get("cost"):
            parts.append(f"cost {stats['cost']:.4f}")
        lines.append(f"judge {name}: " + ", ".join(parts))
    return lines


def print_pairwise(pairwise: PairwiseComparison, signature: Signature, console: Console) -> None:
    """The console's table of the win rate and the position bias, then the verdict, the notes
    and the judges' calls, a line each."""
    by = f", by {signature.unit}" if signature.unit else ""
    head = f"{signature.ci_level:.0%} CI ({signature.ci_method}{by})"
    console.print(
        f"pairwise preference: {_title(pairwise)}", markup=False, highlight=False, soft_wrap=True
    )
    table = Table()
    table.add_column("metric", style="bold", no_wrap=True)
    table.add_column("value", justify="right")
    table.add_column(head if signature.bootstrap else "CI (off)", justify="right")
    table.add_column("n", justify="right")
    for name, m in _rows(pairwise).items():
        value = fmt_value(m) if m.value is not None else f"[yellow]{fmt_value(m)}[/yellow]"
        table.add_row(escape(marked(name, m.higher_is_better)), value, fmt_interval(m), str(m.n))
    console.print(table)
    said = [f"  win_rate: {pairwise.verdict}"] if pairwise.verdict else []
    said += [f"  {name}: {m.note()}" for name, m in _rows(pairwise).items() if m.note()]
    for key, part in (pairwise.slices or {}).items():
        said.append(
            f"  slice {key} ({part.n_records} records): "
            + ", ".join(
                f"{name} {fmt_value(m)} {fmt_interval(m)}" for name, m in _rows(part).items()
            )
            + (f"; {part.verdict}" if part.verdict else "")
        )
    for line in [*said, *judge_lines(pairwise.judge)]:
        console.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)


def pairwise_markdown(pairwise: PairwiseComparison) -> list[str]:
    """comparison.md's section."""
    lines = [
        "## Pairwise preference",
        "",
        f"The candidate's `{pairwise.output}` against the baseline's, asked of "
        f"{', '.join(f'`{j}`' for j in pairwise.judge)} in both orders (a verdict that flips "
        "with the order is a tie).",
        "",
        "| metric | value | CI | n | what it is |",
        "|---|---|---|---|---|",
    ]
    for name, m in _rows(pairwise).items():
        lines.append(
            f"| {marked(name, m.higher_is_better)} | {fmt_value(m)} | {fmt_interval(m)} | {m.n} "
            f"| {MEANING[name]} |"
        )
    for key, name, m in _slice_rows(pairwise):
        lines.append(
            f"| {marked(name, m.higher_is_better)}, slice {key} | {fmt_value(m)} | "
            f"{fmt_interval(m)} | {m.n} | |"
        )
    lines.append("")
    if pairwise.verdict:
        lines.append(f"- `win_rate`: {pairwise.verdict}")
    for key, part in (pairwise.slices or {}).items():
        if part.verdict:
            lines.append(f"- `win_rate`, slice {key}: {part.verdict}")
    lines += [f"- `{name}` note: {m.note()}" for name, m in _rows(pairwise).items() if m.note()]
    lines += [f"- {line}" for line in judge_lines(pairwise.judge)]
    lines += [f"- Signature: `{pairwise.signature}`", ""]
    return lines


def pairwise_html(pairwise: PairwiseComparison) -> str:
    """comparison.html's section: each value with its interval drawn on [0, 1] (the dashed line
    at 0.5 for the win rate: no preference), the verdict and the judges' calls."""
    rows = []
    for name, m in _rows(pairwise).items():
        note = f'<div class="mnote">{esc(m.note())}</div>' if m.note() else ""
        reference = 0.5 if name == "win_rate" else 0.0
        rows.append(
            f'<tr><th scope="row"><code>{esc(name)}</code>{direction(m.higher_is_better)}</th>'
            f'<td class="num">{esc(fmt_value(m))}</td><td class="num">{esc(fmt_interval(m))}</td>'
            f'<td class="plot">{forest(m, 0.0, 1.0, PLOT_WIDTH, reference=reference)}</td>'
            f'<td class="num">{m.n:,}</td><td class="verdict">{esc(MEANING[name])}{note}</td></tr>'
        )
    for key, name, m in _slice_rows(pairwise):
        reference = 0.5 if name == "win_rate" else 0.0
        rows.append(
            f'<tr class="slice"><th scope="row"><code>{esc(name)}</code> {esc(key)}</th>'
            f'<td class="num">{esc(fmt_value(m))}</td><td class="num">{esc(fmt_interval(m))}</td>'
            f'<td class="plot">{forest(m, 0.0, 1.0, PLOT_WIDTH, reference=reference)}</td>'
            f'<td class="num">{m.n:,}</td><td class="verdict">slice {esc(key)}</td></tr>'
        )
    verdict = f"<p><b>{esc(pairwise.verdict)}</b></p>" if pairwise.verdict else ""
    calls = "".join(f"<li>{esc(line)}</li>" for line in judge_lines(pairwise.judge))
    return (
        '<section id="pairwise"><h2>Pairwise preference (candidate against baseline)</h2>'
        f"<p>{esc(_title(pairwise).replace('the', 'The', 1))}; a verdict that flips with the "
        "order is a tie.</p>"
        f"{verdict}"
        '<div class="wide"><table class="metrics"><thead><tr><th>metric</th><th>value</th>'
        f"<th>interval</th><th>{axis_labels(0.0, 1.0, PLOT_WIDTH)}</th><th>n</th>"
        "<th>what it is</th></tr></thead><tbody>"
        + "".join(rows)
        + f'</tbody></table></div><ul class="facts">{calls}'
        f"<li>signature <code>{esc(pairwise.signature)}</code></li></ul>"
        f"{_records_html(pairwise.records)}</section>\n"
    )


VERDICTS = {
    "baseline": "the baseline's answer preferred",
    "order-dependent": "order-dependent (a tie: the verdict flipped with the order)",
    "none": "no verdict (a failed call or an answer without a verdict)",
    "tie": "a tie in both orders",
    "candidate": "the candidate's answer preferred",
}
"""The verdicts a record can have, in the order the page lists them (what to look at first)."""

SHOWN = 200
"""Records listed per verdict (the counts are always complete)."""


def _records_html(records: list[dict[str, Any]]) -> str:
    """Each verdict's records (at most :data:`SHOWN`): line, id and what each judge said in each
    order; nothing for a result read from comparison.json."""
    if not records:
        return ""
    parts = [
        f'<h3>Verdicts per record</h3><p class="hint">At most {SHOWN} records are listed per '
        "verdict.</p>"
    ]
    for verdict, words in VERDICTS.items():
        found = [r for r in records if r["verdict"] == verdict]
        if not found:
            continue
        rows = "".join(
            f'<tr><td class="num">{r["line"]}</td><td>{esc(r["id"] if r["id"] is not None else "")}'
            f"</td><td>{'<br>'.join(esc(a) for a in r['answers'])}</td></tr>"
            for r in found[:SHOWN]
        )
        parts.append(
            f'<details class="pairwise-{esc(verdict)}"><summary>{esc(words)}: {len(found):,}'
            '</summary><table class="small"><thead><tr><th>line</th><th>id</th><th>what the '
            f"judges said</th></tr></thead><tbody>{rows}</tbody></table></details>"
        )
    return "".join(parts)
