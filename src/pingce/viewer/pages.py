"""The pages of ``pingce view`` (:mod:`pingce.viewer`): :class:`Viewer` answers a request target
with a :class:`Response`, reading the run store (:mod:`pingce.history`) and a run's folder, pairing
two runs through :func:`pingce.compare_runs`, and drawing with report/'s renderers (the style
sheet, :mod:`pingce.report.charts`, comparison.html)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from .. import compare_runs
from .._json import dumps_indented
from .._version import __version__
from ..errors import PingceError
from ..history import MetricRow, RunInfo, default_store_path, run_info, runs
from ..report.charts import (
    TWO_LEFT,
    TWO_RIGHT,
    TrendPoint,
    axis_labels,
    tick,
    trend,
    two_intervals,
    value_range,
)
from ..report.comparison_html import render_comparison_html
from ..report.format import fmt_number, marked
from ..report.page import STYLE, asset, direction, esc, head, style
from ..runfolder.layout import AUDIT_JSON

__all__ = [
    "CSP",
    "HEADLINE",
    "REPORT_CSP",
    "NotFound",
    "Response",
    "Viewer",
    "run_href",
]

HEADLINE = 4
"""Metrics shown per run in the list (the first ones of its suite)."""
LISTED = 500
"""Runs listed on ``/`` at most (the newest; a filter narrows them)."""

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'none'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""The viewer's own pages: no script, no network, forms only to the viewer."""
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'unsafe-inline'; "
    "form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)
"""A served report.html: its own meta policy (only its script, by hash) narrows this further."""


# --- responses ----------------------------------------------------------------------------------


@dataclass
class Response:
    """What the viewer answers: a status, a content type, a body, and for a report a file whose
    bytes from ``skip`` to ``end`` follow the body (its first ``skip`` bytes are inside the
    body; ``end`` is its size when it was read, so a file replaced meanwhile cannot make the
    response longer or shorter than it said)."""

    status: int
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    csp: str = CSP
    file: Path | None = None
    skip: int = 0
    end: int = 0

    @property
    def length(self) -> int:
        extra = 0 if self.file is None else self.end - self.skip
        return len(self.body) + extra


def _html(status: int, title: str, content: str, store: Path) -> Response:
    return Response(status, _page(title, content, store).encode("utf-8"))


def _page(title: str, content: str, store: Path) -> str:
    return (
        head(title, CSP, style(asset(STYLE), asset("viewer.css", __package__)), no_referrer=True)
        + '<nav class="bar"><a class="home" href="/">pingce runs</a>'
        '<a href="/compare">compare two runs</a><a href="/trend">trend of a metric</a>'
        f'<span class="store">run store <code>{esc(store)}</code></span></nav>\n'
        f"<main>\n<h1>{esc(title)}</h1>\n{content}</main>\n"
        f"<footer>pingce {esc(__version__)} view: read from the run store on this machine; the "
        "pages make no other request.</footer>\n</body>\n</html>\n"
    )


# --- small pieces -------------------------------------------------------------------------------


def run_href(name: str) -> str:
    """The viewer's address of a run's page (the name percent-encoded, ``/`` included)."""
    return "/run/" + quote(name, safe="")


def _href(path: str, **query: str | None) -> str:
    params = {k: v for k, v in query.items() if v is not None}
    return path + ("?" + urlencode(params) if params else "")


def _when(created: str) -> str:
    return created[:16].replace("T", " ")


def _interval(row: MetricRow | None) -> str:
    if row is None or row.ci_low is None or row.ci_high is None:
        return "—"
    return f"[{fmt_number(row.ci_low)}, {fmt_number(row.ci_high)}]"


def _value(row: MetricRow | None) -> str:
    if row is None:
        return "—"
    return "null" if row.value is None else fmt_number(row.value)


PLOT_WIDTH = 280
AXIS_LABELS = axis_labels(0.0, 1.0, PLOT_WIDTH, TWO_LEFT, TWO_RIGHT)


def _plot_cell(a: MetricRow | None, b: MetricRow | None, single: bool = False) -> str:
    """A table cell with :func:`charts.two_intervals` on the shared axis 0 to 1, or on the rows' own
    range (printed beside it) when their values or intervals leave it."""
    low, high = value_range([a, b])
    own = (low, high) != (0.0, 1.0)
    scale = f'<span class="scale">{tick(low)} – {tick(high)}</span>' if own else ""
    return f'<td class="plot">{two_intervals(a, b, low, high, PLOT_WIDTH, single)}{scale}</td>'


def _options(values: Iterable[tuple[str, str]], chosen: str | None) -> str:
    return "".join(
        f'<option value="{esc(v)}"{" selected" if v == chosen else ""}>{esc(label)}</option>'
        for v, label in values
    )


# --- the viewer ---------------------------------------------------------------------------------


class NotFound(Exception):
    """A name or a route the viewer does not know (a 404 page with this message)."""


class Viewer:
    """The pages of the run store at ``store`` (default: the one ``pingce run`` writes)."""

    def __init__(self, store: str | os.PathLike[str] | None = None) -> None:
        self.store = Path(store).expanduser() if store is not None else default_store_path()

    # the request ------------------------------------------------------------------------------

    def respond(self, target: str) -> Response:
        """The response to a GET of ``target`` (a path with its query)."""
        parts = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        path = parts.path
        routes: dict[str, Callable[[dict[str, str]], Response]] = {
            "/": self.index,
            "/compare": self.compare,
            "/paired": self.paired,
            "/trend": self.trend,
        }
        try:
            if path in routes:
                return routes[path](query)
            if path.startswith("/run/") and len(path) > len("/run/"):
                return self.run(unquote(path[len("/run/") :], errors="strict"))
            raise NotFound(
                f"no page at {path}: the viewer has /, /run/NAME, /compare, /paired and /trend"
            )
        except NotFound as exc:
            return _html(404, "Not found", f'<p class="message">{esc(exc)}</p>', self.store)
        except UnicodeDecodeError:
            return _html(404, "Not found", '<p class="message">not a run name</p>', self.store)
        except PingceError as exc:  # the store cannot be read
            return _html(500, "The run store cannot be read", f"<p>{esc(exc)}</p>", self.store)

    def _recorded_runs(self, suite: str | None = None, slices: bool = False) -> list[RunInfo]:
        return runs(suite=suite, store=self.store, slices=slices)

    def _info(self, name: str) -> RunInfo:
        try:
            return run_info(name, store=self.store)
        except PingceError as exc:
            raise NotFound(str(exc)) from None

    # / ----------------------------------------------------------------------------------------

    def index(self, query: dict[str, str]) -> Response:
        suite = query.get("suite") or None
        part = (query.get("name") or "").strip()
        everything = self._recorded_runs()
        suites = sorted({r.suite for r in everything})
        shown = [
            r
            for r in everything
            if (suite is None or r.suite == suite) and (not part or part.lower() in r.name.lower())
        ]
        title = "Runs" + (f" of {suite}" if suite else "")
        if not everything:
            store_note = (
                "is empty" if self.store.is_file() else "does not exist yet (pingce run makes it)"
            )
            body = (
                f"<p>The run store <code>{esc(self.store)}</code> {store_note}. Every "
                "<code>pingce run</code> is recorded there.</p>"
            )
            return _html(200, title, body, self.store)
        filters = (
            '<form class="pick" method="get" action="/"><label>suite <select name="suite">'
            + _options([("", "all suites"), *((s, s) for s in suites)], suite or "")
            + '</select></label><label>name contains <input type="search" name="name" value="'
            + esc(part)
            + '"></label><button type="submit">filter</button></form>'
        )
        trend_links = ""
        if suite is not None and shown:
            metrics = _metric_names(shown)
            trend_links = (
                '<p class="hint">Trend across these runs: '
                + " · ".join(
                    f'<a href="{esc(_href("/trend", suite=suite, metric=m))}">{esc(m)}</a>'
                    f"{direction(_direction(shown, m))}"
                    for m in metrics
                )
                + "</p>"
            )
        more = len(shown) - LISTED
        listed = shown[:LISTED]
        rows = []
        for k, r in enumerate(listed):
            a_checked = " checked" if k == 1 else ""
            b_checked = " checked" if k == 0 else ""
            heads = [m for m in r.metrics if m.slice is None]
            metrics_html = "".join(
                f'<span class="m"><a class="k" href="'
                f'{esc(_href("/trend", suite=r.suite, metric=m.metric))}">{esc(m.metric)}</a>'
                f"{direction(m.higher_is_better)} {esc(_value(m))} "
                f"<small>{esc(_interval(m))}</small></span>"
                for m in heads[:HEADLINE]
            )
            if len(heads) > HEADLINE:
                metrics_html += f"<small>+{len(heads) - HEADLINE} more</small>"
            rows.append(
                f'<tr data-run="{esc(r.name)}">'
                f'<td class="pick"><input type="radio" name="a" value="{esc(r.name)}"'
                f' aria-label="A: {esc(r.name)}"{a_checked}></td>'
                f'<td class="pick"><input type="radio" name="b" value="{esc(r.name)}"'
                f' aria-label="B: {esc(r.name)}"{b_checked}></td>'
                f'<td><a class="run" href="{esc(run_href(r.name))}">{esc(r.name)}</a>'
                f"{_folder_note(r)}</td>"
                f'<td><a href="{esc(_href("/", suite=r.suite))}">{esc(r.suite)}</a></td>'
                f'<td title="{esc(r.created)}">{esc(_when(r.created))}</td>'
                f'<td class="num">{r.n_records:,}</td><td>{metrics_html}</td></tr>'
            )
        note = (
            f'<p class="hint">The newest {LISTED} of {len(shown):,} runs; filter to see others.</p>'
            if more > 0
            else ""
        )
        counted = f"{len(shown):,} run{'s' if len(shown) != 1 else ''}"
        body = (
            filters
            + trend_links
            + f'<p class="hint">{counted}, newest first. Pick a run as A and one as B to compare '
            "them.</p>" + '<form method="get" action="/compare"><table class="runs"><thead><tr>'
            "<th>A</th><th>B</th><th>name</th><th>suite</th><th>created</th><th>records</th>"
            f"<th>metrics (the first {HEADLINE}: value [interval])</th></tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table>"
            + (
                '<p><button type="submit" id="compare">compare A with B</button></p>'
                if listed
                else "<p>No run matches.</p>"
            )
            + "</form>"
            + note
        )
        return _html(200, title, body, self.store)

    # /run/NAME ---------------------------------------------------------------------------------

    def run(self, name: str) -> Response:
        info = self._info(name)
        folder = Path(info.out_dir) if info.out_dir else None
        if folder is None:
            why = "This run wrote no output folder (its records were evaluated in memory)."
            return self._history_page(info, why)
        report = folder / "report.html"
        if not folder.is_dir():
            return self._history_page(info, f"The run's output folder {folder} is gone.")
        if not report.is_file():
            return self._history_page(
                info,
                f"The run's output folder {folder} holds no report.html; "
                f"`pingce report {info.name}` writes it again from results.json.",
            )
        other = self._written_over(info, folder)
        if other is not None:
            return self._history_page(info, other)
        return self._report(info, report)

    def _written_over(self, info: RunInfo, folder: Path) -> str | None:
        """Why the folder's outputs are not this run's (a later run wrote over them), or None."""
        try:
            saved = json.loads((folder / "results.json").read_text(encoding="utf-8"))
            metrics = saved["metrics"]
            same = saved.get("suite") == info.suite and saved.get("n_records") == info.n_records
            for row in info.metrics:
                if row.slice is None:
                    value = metrics[row.metric]["value"]
                    same = same and _same(value, row.value)
        except (OSError, ValueError, KeyError, TypeError):
            return f"The run's output folder {folder} holds no readable results.json."
        if same:
            return None
        newer = [
            r.name
            for r in self._recorded_runs(suite=None)
            if r.out_dir == info.out_dir and r.name != info.name
        ]
        hint = f" The newest run recorded with that folder is {newer[0]}." if newer else ""
        return (
            f"The run's output folder {folder} now holds another run's outputs (its values "
            f"differ from the ones stored for {info.name}).{hint}"
        )

    def _report(self, info: RunInfo, report: Path) -> Response:
        """The report.html, streamed, with a bar back to the list after ``<body>``."""
        with open(report, "rb") as handle:
            head = handle.read(1 << 16)
            size = os.fstat(handle.fileno()).st_size
        mark = head.find(b"<body>")
        bar = (
            '<div style="font: 13px system-ui, sans-serif; padding: 4px 0 8px; '
            'border-bottom: 1px solid #d8dde3; margin-bottom: 8px">'
            '<a href="/">&larr; pingce runs</a> · run <code>'
            + esc(info.name)
            + '</code> · <a href="'
            + esc(_href("/compare", b=info.name))
            + '">compare with another run</a>'
            + (
                ' · <a href="#audit">audited by people</a>'
                if (report.parent / AUDIT_JSON).is_file()
                else ""
            )
            + "</div>\n"
        ).encode("utf-8")
        if mark < 0:  # not a page this pingce wrote: served as it is
            body = head
        else:
            cut = mark + len(b"<body>")
            newline = 1 if head[cut : cut + 1] == b"\n" else 0
            body = head[: cut + newline] + bar + head[cut + newline :]
        return Response(200, body, csp=REPORT_CSP, file=report, skip=len(head), end=size)

    def _history_page(self, info: RunInfo, why: str) -> Response:
        """A run's page from the store alone: the reason there is no report, the metrics with
        their intervals (all records, then each slice), and where the run came from."""
        groups: dict[str | None, list[MetricRow]] = {}
        for row in info.metrics:
            groups.setdefault(row.slice, []).append(row)
        parts = [
            f'<p class="message">{esc(why)} Shown here: what the run store kept.</p>',
        ]
        for where, rows in groups.items():
            parts.append(f"<h2>{'All records' if where is None else 'Slice ' + esc(where)}</h2>")
            parts.append(
                '<table class="metrics"><thead><tr><th>metric</th><th>value</th>'
                f"<th>interval</th><th>n</th><th>{AXIS_LABELS}</th></tr></thead><tbody>"
            )
            for row in rows:
                parts.append(
                    f"<tr><th scope='row'><code>{esc(row.metric)}</code>"
                    f"{direction(row.higher_is_better)}</th>"
                    f'<td class="num">{esc(_value(row))}</td>'
                    f'<td class="num">{esc(_interval(row))}</td><td class="num">{row.n:,}</td>'
                    f"{_plot_cell(row, None, single=True)}</tr>"
                )
            parts.append("</tbody></table>")
        parts.append(f"<h2>Where it came from</h2>{_facts([info])}")
        return _html(200, f"Run {info.name}", "".join(parts), self.store)

    # /compare ---------------------------------------------------------------------------------

    def compare(self, query: dict[str, str]) -> Response:
        a_name, b_name = query.get("a") or None, query.get("b") or None
        everything = self._recorded_runs()
        if a_name is None or b_name is None:
            picker = _compare_form(everything, a_name, b_name)
            text = "Pick two runs." if everything else "The run store holds no run yet."
            return _html(200, "Compare two runs", f"{picker}<p>{esc(text)}</p>", self.store)
        a, b = self._info(a_name), self._info(b_name)
        parts = [_compare_form(everything, a.name, b.name), _facts([a, b])]
        if a.suite != b.suite:
            parts.append(
                f'<p class="message">Different suites ({esc(a.suite)} and {esc(b.suite)}): '
                "metrics of the same name are put side by side as they are.</p>"
            )
        slices = []
        for row in [*a.metrics, *b.metrics]:
            if row.slice not in slices:
                slices.append(row.slice)
        for where in slices:
            parts.append(_compare_table(a, b, where))
        parts.append(
            '<p class="hint">A is the circle, B the square; each bar is that run\'s own interval, '
            "as stored; a row whose values leave 0 to 1 has its own range, printed beside it. "
            "B − A is the difference of the stored values. Whether the two intervals "
            "overlap is not a test of the difference: the "
            f'<a href="{esc(_href("/paired", a=b.name, b=a.name))}">paired test of B against A'
            "</a> pairs the two runs' records (what <code>pingce compare B A</code> does).</p>"
        )
        return _html(200, f"{a.name} and {b.name}", "".join(parts), self.store)

    # /paired ----------------------------------------------------------------------------------

    def paired(self, query: dict[str, str]) -> Response:
        """``pingce compare A B`` of two stored runs (``a`` the candidate): their records paired
        from stats.npz, the paired bootstrap, McNemar, approximate randomisation and Holm, as
        comparison.html (with the records that flipped); nothing evaluated again."""
        a_name, b_name = query.get("a") or None, query.get("b") or None
        if a_name is None or b_name is None:
            raise NotFound("/paired needs two runs: /paired?a=CANDIDATE&b=BASELINE")
        a, b = self._info(a_name), self._info(b_name)
        try:
            result = compare_runs(a.name, b.name, store=self.store)
        except PingceError as exc:  # no stats.npz, another suite, a folder gone...
            text = f"These two runs cannot be paired: {exc}"
            return _html(200, f"{a.name} against {b.name}", f'<p class="message">{esc(text)}</p>',
                         self.store)  # fmt: skip
        rows = result.records
        candidate, baseline = rows if rows is not None else (None, None)
        page = render_comparison_html(result, candidate, baseline)
        return Response(200, page.encode("utf-8"), csp=REPORT_CSP)

    # /trend -----------------------------------------------------------------------------------

    def trend(self, query: dict[str, str]) -> Response:
        everything = self._recorded_runs()
        suites = sorted({r.suite for r in everything})
        suite = query.get("suite") or None
        if suite is None and everything:
            suite = everything[0].suite  # the newest run's
        if suite is not None and suite not in suites:
            raise NotFound(f"no run of the suite {suite!r} in the run store {self.store}")
        if suite is None:
            return _html(200, "Trend", "<p>The run store holds no run yet.</p>", self.store)
        of_suite = list(reversed(self._recorded_runs(suite=suite, slices=True)))  # oldest first
        metrics = _metric_names(of_suite)
        metric = query.get("metric") or (metrics[0] if metrics else None)
        if metric is None or metric not in metrics:
            raise NotFound(f"the runs of {suite!r} have no metric {metric!r}")
        where = query.get("slice") or None
        slices = sorted(
            {r.slice for run in of_suite for r in run.metrics if r.metric == metric and r.slice}
        )
        if where is not None and where not in slices:
            raise NotFound(f"the runs of {suite!r} have no slice {where!r} of {metric!r}")
        points = [(run, _row(run, metric, where)) for run in of_suite]
        form = (
            '<form class="pick" method="get" action="/trend"><label>suite <select name="suite">'
            + _options(((s, s) for s in suites), suite)
            + '</select></label><label>metric <select name="metric">'
            + _options(((m, marked(m, _direction(of_suite, m))) for m in metrics), metric)
            + '</select></label><label>records <select name="slice">'
            + _options([("", "all records"), *((s, s) for s in slices)], where or "")
            + '</select></label><button type="submit">show</button></form>'
            '<p class="hint">After changing the suite, press show to list its metrics.</p>'
        )
        chart = _trend_svg(metric, points)
        rows = "".join(
            f'<tr><td><a href="{esc(run_href(run.name))}">{esc(run.name)}</a></td>'
            f'<td title="{esc(run.created)}">{esc(_when(run.created))}</td>'
            f'<td class="num">{esc(_value(row))}</td><td class="num">{esc(_interval(row))}</td>'
            f'<td class="num">{"—" if row is None else f"{row.n:,}"}</td></tr>'
            for run, row in reversed(points)
        )
        what = metric + (f" ({where})" if where else "")
        body = (
            form
            + f'<div class="trend-wrap">{chart}</div>'
            + '<p class="hint">Each run of the suite is a point with its interval, oldest on the '
            "left; the runs' names are below. A run without this metric is left out of the "
            'line.</p><h2>Runs, newest first</h2><table class="small trend-table"><thead><tr>'
            f"<th>run</th><th>created</th><th>value{direction(_direction(of_suite, metric))}</th>"
            "<th>interval</th><th>n</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
        return _html(200, f"{what} across the runs of {suite}", body, self.store)


def _same(saved: Any, stored: float | None) -> bool:
    if saved is None or stored is None:
        return saved is None and stored is None
    return math.isclose(float(saved), stored, rel_tol=1e-9, abs_tol=1e-12)


def _folder_note(r: RunInfo) -> str:
    if r.out_dir is None:
        return ' <small class="gone">(no output folder)</small>'
    if not (Path(r.out_dir) / "report.html").is_file():
        return ' <small class="gone">(report gone)</small>'
    if (Path(r.out_dir) / AUDIT_JSON).is_file():  # pingce audit recorded an audit there
        return (
            f' <small class="audited"><a href="{esc(run_href(r.name))}#audit">audited by people'
            "</a></small>"
        )
    return ""


def _metric_names(found: Sequence[RunInfo]) -> list[str]:
    """Metric names over ``found`` (all records), in the order the runs list them."""
    names: list[str] = []
    for r in found:
        for m in r.metrics:
            if m.slice is None and m.metric not in names:
                names.append(m.metric)
    return names


def _direction(found: Iterable[RunInfo], metric: str, where: str | None = None) -> bool | None:
    """The direction of ``metric`` in the runs ``found`` (a run stored without it, and not known
    to the metric registry, says nothing); None when none says, or when runs disagree."""
    said = {
        row.higher_is_better
        for run in found
        if (row := _row(run, metric, where)) is not None and row.higher_is_better is not None
    }
    return said.pop() if len(said) == 1 else None


def _row(info: RunInfo, metric: str, where: str | None) -> MetricRow | None:
    for row in info.metrics:
        if row.metric == metric and row.slice == where:
            return row
    return None


def _facts(found: Sequence[RunInfo]) -> str:
    """Where runs came from, one column per run."""
    sides = "AB" if len(found) == 2 else ""

    def short(text: str | None, n: int = 12) -> str:
        return "—" if not text else text[:n]

    lines: list[tuple[str, list[str]]] = [
        ("run", [f'<a href="{esc(run_href(r.name))}">{esc(r.name)}</a>' for r in found]),
        ("suite", [esc(r.suite) for r in found]),
        ("created", [esc(r.created) for r in found]),
        ("records", [f"{r.n_records:,}" for r in found]),
        ("data", [f"<code>{esc(r.data_path or '—')}</code>" for r in found]),
        (
            "data sha256",
            [
                f'<code title="{esc(r.data_sha256 or "")}">{esc(short(r.data_sha256))}</code>'
                for r in found
            ],
        ),
        ("git commit", [f"<code>{esc(short(r.git_commit))}</code>" for r in found]),
        ("pingce", [esc(r.pingce_version) for r in found]),
        ("output folder", [f"<code>{esc(r.out_dir or '—')}</code>" for r in found]),
    ]
    head = ""
    if sides:
        head = (
            "<thead><tr><th></th>"
            + "".join(f'<th class="side-{s.lower()}">{s}</th>' for s in sides)
            + "<th></th></tr></thead>"
        )
    body = []
    for label, cells in lines:
        same = ""
        if len(found) == 2:
            same = _sameness(label, found[0], found[1])
        body.append(
            f"<tr><th scope='row'>{esc(label)}</th>"
            + "".join(f"<td>{cell}</td>" for cell in cells)
            + (f"<td><small>{same}</small></td>" if sides else "")
            + "</tr>"
        )
    if len(found) == 2:
        a, b = found
        differ = sorted(
            k
            for k in set(a.signature) | set(b.signature)
            if a.signature.get(k) != b.signature.get(k)
        )
        text = "the same" if not differ else "differs in " + ", ".join(esc(k) for k in differ)
        body.append(f"<tr><th scope='row'>signature</th><td colspan='3'>{text}</td></tr>")
    else:
        (r,) = found
        sig = dumps_indented(r.signature, sort_keys=True)
        options = dumps_indented(r.options, sort_keys=True)
        body.append(
            "<tr><th scope='row'>signature</th><td><details><summary>show</summary>"
            f"<pre class='sig'>{esc(sig)}</pre></details></td></tr>"
            "<tr><th scope='row'>options</th><td><details><summary>show</summary>"
            f"<pre class='sig'>{esc(options)}</pre></details></td></tr>"
        )
    return f'<table class="small facts">{head}<tbody>{"".join(body)}</tbody></table>'


def _sameness(label: str, a: RunInfo, b: RunInfo) -> str:
    if label == "data sha256" and a.data_sha256 and b.data_sha256:
        return "same data" if a.data_sha256 == b.data_sha256 else "different data"
    if label == "git commit" and a.git_commit and b.git_commit:
        return "same commit" if a.git_commit == b.git_commit else "different commits"
    if label == "suite":
        return "same suite" if a.suite == b.suite else "different suites"
    return ""


def _compare_form(found: Sequence[RunInfo], a: str | None, b: str | None) -> str:
    listed = list(found[:LISTED])
    listed += [r for r in found[LISTED:] if r.name in (a, b)]  # the chosen ones, always
    choices = [(r.name, f"{r.name} · {r.suite} · {_when(r.created)}") for r in listed]
    return (
        '<form class="pick" method="get" action="/compare">'
        f'<label>A <select name="a">{_options(choices, a)}</select></label>'
        f'<label>B <select name="b">{_options(choices, b)}</select></label>'
        '<button type="submit">compare</button></form>'
    )


def _compare_table(a: RunInfo, b: RunInfo, where: str | None) -> str:
    names: list[str] = []
    for r in (a, b):
        for m in r.metrics:
            if m.slice == where and m.metric not in names:
                names.append(m.metric)
    pairs = [(name, _row(a, name, where), _row(b, name, where)) for name in names]
    rows = []
    for name, ra, rb in pairs:
        delta = "—"
        if ra is not None and rb is not None and ra.value is not None and rb.value is not None:
            difference = rb.value - ra.value
            if math.isfinite(difference):
                delta = ("+" if difference >= 0 else "") + fmt_number(difference)
        rows.append(
            f'<tr data-metric="{esc(name)}"><th scope="row"><code>{esc(name)}</code>'
            f"{direction(_direction([a, b], name, where))}</th>"
            f'<td class="num side-a">{esc(_value(ra))}</td>'
            f'<td class="num">{esc(_interval(ra))}</td>'
            f'<td class="num side-b">{esc(_value(rb))}</td>'
            f'<td class="num">{esc(_interval(rb))}</td>'
            f'<td class="num">{esc(delta)}</td>'
            f'<td class="num">{_n(ra)} / {_n(rb)}</td>'
            f"{_plot_cell(ra, rb)}</tr>"
        )
    title = "All records" if where is None else f"Slice {where}"
    return (
        f'<h2>{esc(title)}</h2><table class="metrics compare"><thead><tr><th>metric</th>'
        '<th class="side-a">A value</th><th>A interval</th><th class="side-b">B value</th>'
        "<th>B interval</th><th>B − A</th><th>n (A / B)</th>"
        f"<th>{AXIS_LABELS}</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _n(row: MetricRow | None) -> str:
    return "—" if row is None else f"{row.n:,}"


def _trend_svg(metric: str, points: Sequence[tuple[RunInfo, MetricRow | None]]) -> str:
    """Each run a point with its interval bar, oldest on the left (:func:`charts.trend`)."""
    return trend(
        metric,
        [
            TrendPoint(
                run.name,
                run_href(run.name),
                f"{run.name} ({_when(run.created)}): {_value(row)} {_interval(row)}",
                row,
            )
            for run, row in points
        ],
    )
