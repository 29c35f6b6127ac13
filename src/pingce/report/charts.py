"""The charts of every page pingce writes or serves, as inline SVG drawn here: the one axis rule
(:func:`axis_range`), the forest-plot row of report.html and comparison.html, the axis labels
above a column of rows, the confusion matrix's heat map, and the viewer's two runs on one axis
and a metric's trend across runs.

Charts read an :class:`Estimate` (a value and its interval: a result's ``MetricResult``, a
stored run's ``MetricRow``) or plain numbers, never a store or an engine. Every position goes
through :func:`fraction`, so that an axis wider than the largest float still draws; every text is
escaped by :func:`~pingce.report.page.esc`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard

from .page import esc, short

__all__ = [
    "PLOT_WIDTH",
    "Estimate",
    "TrendPoint",
    "axis_labels",
    "axis_range",
    "between",
    "forest",
    "fraction",
    "heat_map",
    "is_finite",
    "nice_ceiling",
    "scaled",
    "tick",
    "trend",
    "two_intervals",
    "value_range",
]


class Estimate(Protocol):
    """A value and its interval (any of them None: undefined, or no interval)."""

    @property
    def value(self) -> float | None: ...
    @property
    def ci_low(self) -> float | None: ...
    @property
    def ci_high(self) -> float | None: ...


# --- axes ---------------------------------------------------------------------------------------


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
    return _nice_floor(min(low, 0.0)), nice_ceiling(max(high, 0.0))


def value_range(estimates: Iterable[Estimate | None]) -> tuple[float, float]:
    """The axis (:func:`axis_range`) of some estimates' values and interval ends."""
    return axis_range(x for e in estimates if e is not None for x in (e.value, e.ci_low, e.ci_high))


def nice_ceiling(x: float) -> float:
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
    return 0.0 if x >= 0 else -nice_ceiling(-x)


def fraction(v: float, low: float, high: float) -> float:
    """Where ``v`` lies on the axis from ``low`` to ``high``, from 0 to 1 (clamped), computed
    in halves so that an axis wider than the largest float (-1e308 to 1e308) has no infinite
    span."""
    if high <= low:
        return 0.0
    at = min(max(v, low), high)
    return (at / 2 - low / 2) / (high / 2 - low / 2)


def scaled(v: float, low: float, high: float, length: float) -> float:
    """``length`` times :func:`fraction` ``(v, low, high)``, multiplied before it is divided
    (the rounding of the viewer's charts, which it keeps)."""
    if high <= low:
        return 0.0
    at = min(max(v, low), high)
    return length * (at / 2 - low / 2) / (high / 2 - low / 2)


def between(low: float, high: float, share: float) -> float:
    """The value at ``share`` of the axis from ``low`` to ``high`` (finite for finite ends)."""
    return low * (1 - share) + high * share


def is_finite(v: float | None) -> TypeGuard[float]:
    return v is not None and math.isfinite(v)


def tick(v: float) -> str:
    """An axis label."""
    return f"{v:g}" if abs(v) >= 1e-9 else "0"


def axis_labels(low: float, high: float, width: int, left: int = 4, right: int = 4) -> str:
    """The five tick labels above a column of rows drawn from ``left`` to ``width - right``."""
    out = [f'<svg class="axis" width="{width}" height="16">']
    for k in range(5):
        xpos = left + (width - left - right) * k / 4
        anchor = "start" if k == 0 else "end" if k == 4 else "middle"
        label = tick(between(low, high, k / 4))
        out.append(f'<text x="{xpos:.1f}" y="12" text-anchor="{anchor}">{label}</text>')
    out.append("</svg>")
    return "".join(out)


# --- report.html and comparison.html ------------------------------------------------------------

PLOT_WIDTH = 260
"""The width of a forest plot's column on report.html and comparison.html."""


def forest(
    m: Estimate | None,
    low: float,
    high: float,
    width: int,
    height: int = 18,
    reference: float | None = None,
) -> str:
    """One row of a forest plot: faint grid, the interval as a line, the value as a point, and a
    dashed ``reference`` line (the overall value, on a slice's row; 0 for a difference)."""

    def x(v: float) -> float:
        return round(4 + (width - 8) * fraction(v, low, high), 2)

    mid = height / 2
    out = [f'<svg class="forest" width="{width}" height="{height}" role="img">']
    grid = [between(low, high, k / 4) for k in range(5)]
    out += [f'<line class="grid" x1="{x(g)}" x2="{x(g)}" y1="0" y2="{height}"/>' for g in grid]
    if reference is not None and math.isfinite(reference):
        out.append(
            f'<line class="ref" x1="{x(reference)}" x2="{x(reference)}" y1="0" y2="{height}"/>'
        )
    if m is not None and is_finite(m.ci_low) and is_finite(m.ci_high):
        out.append(
            f'<line class="ci" x1="{x(m.ci_low)}" x2="{x(m.ci_high)}" y1="{mid}" y2="{mid}"/>'
            f'<line class="ci" x1="{x(m.ci_low)}" x2="{x(m.ci_low)}" y1="{mid - 4}" '
            f'y2="{mid + 4}"/><line class="ci" x1="{x(m.ci_high)}" x2="{x(m.ci_high)}" '
            f'y1="{mid - 4}" y2="{mid + 4}"/>'
        )
    if m is not None and is_finite(m.value):
        out.append(f'<circle class="pt" cx="{x(m.value)}" cy="{mid}" r="4"/>')
    elif m is not None:
        out.append(f'<text class="null" x="4" y="{mid + 4}">null</text>')
    out.append("</svg>")
    return "".join(out)


def _blue(share: float) -> str:
    """A colour from white to dark blue for a share in [0, 1]."""
    share = min(max(share, 0.0), 1.0)
    start, end = (247, 251, 255), (8, 48, 107)
    r, g, b = (round(s + (e - s) * share) for s, e in zip(start, end, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def _cell_count(value: float) -> str:
    """A cell of a confusion matrix: a count, or a sum of sample weights (``sample_weight``)."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.4g}"


def heat_map(name: str, table: dict[str, Any]) -> str:
    """A confusion matrix (a result's table with ``labels`` and ``matrix``, and ``columns`` when
    some prediction is off the scale), each cell shaded by its share of the gold row."""
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
            f'text-anchor="middle">{esc(short(label, 8))}<title>{esc(label)}</title></text>'
        )
    for i, (label, row) in enumerate(zip(labels, matrix, strict=True)):
        total = sum(row)
        y = top + cell * i
        out.append(
            f'<text class="lab" x="{left - 6}" y="{y + cell / 2 + 4}" text-anchor="end">'
            f"{esc(short(label, 10))}<title>gold {esc(label)}</title></text>"
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


# --- the viewer's ---------------------------------------------------------------------------------

TWO_LEFT, TWO_RIGHT = 14, 6
"""Where :func:`two_intervals` draws its axis (room on the left for the A and B labels); its
:func:`axis_labels` take the same."""


def two_intervals(
    a: Estimate | None,
    b: Estimate | None,
    low: float,
    high: float,
    width: int,
    single: bool = False,
) -> str:
    """One row of the comparison chart: run A's value and interval above run B's, on one axis
    (A a circle, B a square, each labelled: never told apart by colour alone); ``single``: A's
    alone, unlabelled (a run's own page)."""
    height = 18 if single else 30

    def x(v: float) -> float:
        return round(TWO_LEFT + scaled(v, low, high, width - TWO_LEFT - TWO_RIGHT), 2)

    out = [f'<svg class="two" width="{width}" height="{height}" role="img">']
    for k in range(5):
        g = x(between(low, high, k / 4))
        out.append(f'<line class="grid" x1="{g}" x2="{g}" y1="0" y2="{height}"/>')
    sides = (("a", a, 9),) if single else (("a", a, 8), ("b", b, 22))
    for side, row, y in sides:
        if not single:
            out.append(f'<text x="0" y="{y + 4}" class="lab">{side.upper()}</text>')
        if row is not None:
            out.append(_side(side, row, y, x))
    out.append("</svg>")
    return "".join(out)


def _side(side: str, row: Estimate, y: int, x: Callable[[float], float]) -> str:
    """One run's interval and value (or "null") on a row of :func:`two_intervals`."""
    out = []
    if is_finite(row.ci_low) and is_finite(row.ci_high):
        lo, hi = x(row.ci_low), x(row.ci_high)
        out.append(
            f'<line class="{side}" x1="{lo}" x2="{hi}" y1="{y}" y2="{y}"/>'
            f'<line class="{side}" x1="{lo}" x2="{lo}" y1="{y - 3}" y2="{y + 3}"/>'
            f'<line class="{side}" x1="{hi}" x2="{hi}" y1="{y - 3}" y2="{y + 3}"/>'
        )
    if is_finite(row.value):
        v = x(row.value)
        out.append(
            f'<circle class="a" cx="{v}" cy="{y}" r="4"/>'
            if side == "a"
            else f'<rect class="b" x="{v - 3.5}" y="{y - 3.5}" width="7" height="7"/>'
        )
    else:
        out.append(f'<text class="null" x="16" y="{y + 4}">null</text>')
    return "".join(out)


@dataclass(frozen=True)
class TrendPoint:
    """A run on a trend chart: its name, the address of its page, the tooltip, and its value and
    interval (None: the run has no such metric)."""

    name: str
    href: str
    tip: str
    estimate: Estimate | None


def trend(metric: str, points: Sequence[TrendPoint]) -> str:
    """Each run a point with its interval bar, oldest on the left, the runs' names below, a line
    through the values."""
    n = max(len(points), 1)
    step = max(30.0, min(160.0, 1000.0 / n))
    left, top, plot_h, label_h = 56, 14, 260, 130
    width = int(left + step * n + 24)
    height = top + plot_h + label_h
    low, high = value_range(p.estimate for p in points)

    def y(v: float) -> float:
        return round(top + plot_h * (1 - fraction(v, low, high)), 2)

    grid = []
    for k in range(5):
        v = between(low, high, k / 4)
        grid.append(
            f'<line class="grid" x1="{left}" x2="{width - 8}" y1="{y(v)}" y2="{y(v)}"/>'
            f'<text x="{left - 6}" y="{y(v) + 4}" text-anchor="end">{tick(v)}</text>'
        )
    line, out = [], []
    for i, point in enumerate(points):
        x = round(left + step * (i + 0.5), 2)
        row = point.estimate
        base = top + plot_h + 10
        mark: list[str] = []
        if row is not None and is_finite(row.ci_low) and is_finite(row.ci_high):
            lo, hi = y(row.ci_low), y(row.ci_high)
            mark.append(
                f'<line class="bar-ci" x1="{x}" x2="{x}" y1="{lo}" y2="{hi}"/>'
                f'<line class="bar-ci" x1="{x - 4}" x2="{x + 4}" y1="{lo}" y2="{lo}"/>'
                f'<line class="bar-ci" x1="{x - 4}" x2="{x + 4}" y1="{hi}" y2="{hi}"/>'
            )
        if row is not None and is_finite(row.value):
            yv = y(row.value)
            line.append(f"{x},{yv}")
            mark.append(f'<circle class="pt" cx="{x}" cy="{yv}" r="4"/>')
        else:
            what = "no value" if row is None else "null"
            mark.append(
                f'<text class="null" x="{x}" y="{top + plot_h - 4}" text-anchor="middle">'
                f"{what}</text>"
            )
        out.append(
            f'<a href="{esc(point.href)}" class="point" data-run="{esc(point.name)}">'
            f'<title>{esc(point.tip)}</title><rect class="hit" x="{x - step / 2}" y="{top}" '
            f'width="{step}" height="{plot_h + label_h - 8}" fill="transparent"/>{"".join(mark)}'
            f'<text class="run" x="{x}" y="{base}" text-anchor="end" '
            f'transform="rotate(-45 {x} {base})">{esc(short(point.name, 28))}</text></a>'
        )
    path = f'<polyline class="path" points="{" ".join(line)}"/>' if len(line) > 1 else ""
    return (
        f'<svg class="trend" width="{width}" height="{height}" role="img" '
        f'aria-label="{esc(metric)} across runs">{"".join(grid)}{path}{"".join(out)}</svg>'
    )
