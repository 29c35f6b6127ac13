"""A run with repeats (results.json's ``repeats``, :mod:`pingce.repeats.summary`) in report.md
and report.html: how much of each metric's variance comes from the records and how much from
the repeats, the plan of repeats for ``--target-se``, pass@k and pass^k, and the flaky records.
One module for both renderers, so both say the same."""

from __future__ import annotations

from typing import Any

from .page import esc

__all__ = ["repeats_html", "repeats_markdown"]

_SOURCES = (("records", "the records"), ("generations", "the repeats"), ("judge", "the judge"))


def _share(component: dict[str, Any], source: str) -> str | None:
    share = component["share"].get(source)
    if share is None:
        return None
    low, high = component["share_low"].get(source), component["share_high"].get(source)
    shown = f"{share:.0%}"
    if low is not None and high is not None:
        shown += f" [{low:.0%}, {high:.0%}]"
    return shown


def _sentence(name: str, entry: dict[str, Any]) -> str:
    """One metric's split of its variance in words."""
    component = entry.get("components")
    if component is None:
        return f"{name}: no split ({entry.get('note') or 'not enough repeats'})"
    parts = [
        f"{shown} from {words}"
        for source, words in _SOURCES
        if (shown := _share(component, source)) is not None
    ]
    text = (
        f"{name}: of the variance of the mean of its per-record values (SE "
        f"{component['standard_error']:.4g}, over the records with every repeat), "
        + ", ".join(parts)
    )
    plan = component.get("plan")
    if plan is not None:
        if plan["reachable"]:
            text += (
                f"; SE {plan['target_se']:g} needs {plan['repeats']} repeat(s) a record "
                f"({plan['model_calls']:,} model calls, SE {plan['standard_error']:.4g})"
            )
        else:
            text += (
                f"; SE {plan['target_se']:g} is out of reach with repeats alone: about "
                f"{plan['records_needed']:,} records are needed"
            )
    if entry.get("note"):
        text += f" ({entry['note']})"
    return text


def _interval(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "null"
    if low is None or high is None:
        return f"{value:.4f}"
    return f"{value:.4f} [{low:.4f}, {high:.4f}]"


def _flaky_line(row: dict[str, Any]) -> str:
    return (
        f"{row['id']}: {row['passed']}/{row['attempts']} passed "
        f"(rate {row['pass_rate']:.2f}, [{row['low']:.2f}, {row['high']:.2f}])"
    )


def _flaky_head(name: str, entry: dict[str, Any], fcr: float) -> str:
    if not entry["disagreeing"]:
        return f"{name}: every record's repeats agree (no flaky record)"
    return (
        f"{name}: {entry['flaky']} flaky of {entry['disagreeing']} records whose repeats "
        f"disagree (flagged when the pass rate's exact interval holds 1/2; the intervals at "
        f"{entry['flaky_level']:.1%}, adjusted for choosing the disagreeing records: a false "
        f"coverage rate of {fcr:.0%})"
    )


def _success(entry: dict[str, Any]) -> str:
    return " (an attempt passes with the value 0: lower is better)" if entry["success"] == 0 else ""


def _head(repeats: dict[str, Any]) -> str:
    unit = repeats.get("unit")
    what = "records" if unit is None else f"units of {unit}"
    balanced = "" if repeats["balanced"] else f" (not every one of the {what} has them all)"
    calls = repeats.get("judge_calls", 1)
    judged = f" x {calls} judge calls" if calls > 1 else ""
    split = "" if unit is None else " (a unit's value in a repeat: its records' mean)"
    return (
        f"{repeats['records']:,} {what} x up to {repeats['repeats']} repeats{judged} "
        f"({repeats['rows']:,} rows){balanced}: every metric is over all rows, and its interval "
        f"resamples {what} with their repeats{split}."
    )


def repeats_markdown(repeats: dict[str, Any] | None) -> list[str]:
    """report.md's Repeats section (nothing for a run without repeats)."""
    if repeats is None:
        return []
    metrics = repeats["metrics"]
    lines = ["## Repeats", "", _head(repeats), ""]
    lines += [f"- {_sentence(name, entry)}" for name, entry in metrics.items()]
    for name, entry in metrics.items():
        if "pass_k" not in entry:
            continue
        lines += [
            "",
            f"### pass@k and pass^k: {name}{_success(entry)}",
            "",
            "| k | records | pass@k | pass^k |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {c['k']} | {c['records']:,} "
            f"| {_interval(c['pass_at'], c['pass_at_low'], c['pass_at_high'])} "
            f"| {_interval(c['pass_hat'], c['pass_hat_low'], c['pass_hat_high'])} |"
            for c in entry["pass_k"]
        ]
        lines += ["", _flaky_head(name, entry, repeats["flaky_fcr"]), ""]
        lines += [f"- {_flaky_line(row)}" for row in entry["flaky_records"]]
    return [*lines, ""]


def repeats_html(repeats: dict[str, Any] | None) -> str:
    """report.html's Repeats section (empty for a run without repeats)."""
    if repeats is None:
        return ""
    metrics = repeats["metrics"]
    parts = [
        '<section id="repeats"><h2>Repeats</h2>',
        f"<p>{esc(_head(repeats))}</p><ul>",
        *(f"<li>{esc(_sentence(name, entry))}</li>" for name, entry in metrics.items()),
        "</ul>",
    ]
    for name, entry in metrics.items():
        if "pass_k" not in entry:
            continue
        rows = "".join(
            f"<tr><td>{c['k']}</td><td>{c['records']:,}</td>"
            f"<td>{esc(_interval(c['pass_at'], c['pass_at_low'], c['pass_at_high']))}</td>"
            f"<td>{esc(_interval(c['pass_hat'], c['pass_hat_low'], c['pass_hat_high']))}</td>"
            "</tr>"
            for c in entry["pass_k"]
        )
        flaky = "".join(f"<li>{esc(_flaky_line(row))}</li>" for row in entry["flaky_records"])
        parts += [
            f"<h3>pass@k and pass^k: {esc(name + _success(entry))}</h3>",
            '<table class="small"><thead><tr><th>k</th>'
            '<th title="records with at least k attempts">records</th>'
            "<th>pass@k</th><th>pass^k</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>",
            f'<p class="flaky">{esc(_flaky_head(name, entry, repeats["flaky_fcr"]))}</p>',
            f'<ul class="flaky">{flaky}</ul>' if flaky else "",
        ]
    parts.append("</section>\n")
    return "".join(parts)
