"""``pingce view``: the run store served on localhost. The server runs in a thread on a free port
over a store of runs made with ``pingce.evaluate(..., out=...)`` and ``pingce.history.record_run``;
each route is fetched with urllib (values equal the store's, names escaped, unknown names and
paths a 404) and driven in Debian's chromium through Playwright (open the list, click a run, pick
two runs to compare, open a trend, a screenshot)."""

from __future__ import annotations

import base64
import html
import http.client
import json
import re
import shutil
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import numpy as np
import pytest

import pingce
from pingce.history import MetricRow, RunInfo, record_run, run_info, runs
from pingce.report.charts import value_range
from pingce.report.format import direction_mark, fmt_number
from pingce.viewer import REPORT_CSP, Viewer, ViewerServer, make_server, run_href

from .cli_run import ENV

SUITE = """\
name: {name}
id_field: id
labels:
  values: [高, 中, 低]
inputs:
  gold: gold_level
  pred: pred_level
  latency: latency_sec
metrics:
  accuracy: {{}}
  macro_f1: {{}}
  qwk: {{}}
  avg_latency_sec: {{}}
tables:
  confusion_matrix: {{}}
"""
RISK = "risk-lite"
OTHER = "<i>other</i>-suite"
XSS_NAME = "<script>window.__xss=1;alert(1)</script>"
ODD_NAME = "a/b?c#d 编号 &amp;"
XSS_SLICE = '<img src=x onerror="window.__xss=2">'
LEVELS = ["高", "中", "低"]
DAY = 86_400.0


def make_records(right: float, seed: int, n: int = 90) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        gold = LEVELS[int(rng.integers(0, 3))]
        pred = gold if rng.random() < right else LEVELS[int(rng.integers(0, 3))]
        out.append(
            {
                "id": f"r{i:03d}",
                "gold_level": gold,
                "pred_level": pred,
                "latency_sec": round(float(rng.lognormal(0.0, 0.3)), 3),
                "kind": [XSS_SLICE, "买卖合同", "劳动合同"][i % 3],
            }
        )
    return out


@dataclass
class Store:
    path: Path
    folder: Path
    names: list[str]
    """The risk-lite runs, oldest first."""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    folder = tmp_path_factory.mktemp("view")
    db = folder / "runs.db"
    suites = {}
    for name in (RISK, OTHER):
        path = folder / f"{len(suites)}.yaml"
        # a suite file's name is a plain name; a stored run from elsewhere may say anything, so
        # the other suite's runs are stored under OTHER, which every page must escape
        path.write_text(SUITE.format(name="other-suite" if name == OTHER else name), "utf-8")
        suites[name] = path
    start = time.time() - 30 * DAY
    made: list[str] = []

    def made_run(
        name: str,
        suite: str,
        right: float,
        day: int,
        out: str | None,
        bootstrap: int = 100,
        n: int = 90,
    ) -> None:
        target = None if out is None else folder / out
        records = make_records(right, day, n)
        result = pingce.evaluate(
            suites[suite], records, slices=["kind"], bootstrap=bootstrap, out=target
        )
        if suite == OTHER:
            result = result.model_copy(update={"suite": OTHER})
        record_run(result, name=name, store=db, out=target, started=start + day * DAY)
        if suite == RISK:
            made.append(name)

    made_run("v1", RISK, 0.45, 1, "out-v1")
    made_run("v2", RISK, 0.6, 2, "out-v2", n=3000)  # a report longer than the first read
    made_run(XSS_NAME, RISK, 0.7, 3, "out-xss")
    made_run(ODD_NAME, RISK, 0.75, 4, "out-odd")
    made_run("gone", RISK, 0.8, 5, "out-gone")
    shutil.rmtree(folder / "out-gone")
    made_run("over", RISK, 0.5, 6, "out-shared")
    made_run("over-2", RISK, 0.9, 7, "out-shared")  # wrote over the folder of "over"
    made_run("in-memory", RISK, 0.85, 8, None, bootstrap=0)  # no folder, no intervals
    made_run("other-1", OTHER, 0.6, 9, "out-other")
    return Store(db, folder, made)


@pytest.fixture(scope="module")
def server(store: Store) -> Iterator[ViewerServer]:
    served = make_server(store.path, port=0)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.server_close()
    thread.join(5)


@dataclass
class Fetched:
    status: int
    headers: Any
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


def fetch(server: ViewerServer, target: str, method: str = "GET", **headers: str) -> Fetched:
    request = urllib.request.Request(server.url.rstrip("/") + target, method=method)
    for key, value in headers.items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return Fetched(response.status, response.headers, response.read())
    except urllib.error.HTTPError as exc:
        return Fetched(exc.code, exc.headers, exc.read())


def raw(server: ViewerServer, target: str, method: str = "GET", host: str | None = None) -> int:
    """The status of a request sent as it is (urllib would normalise the path)."""
    address = server.server_address
    connection = http.client.HTTPConnection(str(address[0]), int(address[1]), timeout=30)
    try:
        connection.putrequest(method, target, skip_host=host is not None)
        if host is not None:
            connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def shown(row: MetricRow | None) -> tuple[str, str]:
    """A stored value and interval as the pages print them."""
    if row is None:
        return "—", "—"
    value = "null" if row.value is None else fmt_number(row.value)
    if row.ci_low is None or row.ci_high is None:
        return value, "—"
    return value, f"[{fmt_number(row.ci_low)}, {fmt_number(row.ci_high)}]"


def named(row: MetricRow) -> str:
    """A metric's name and its direction mark, as a page's text reads (the mark's element just
    after the name)."""
    return row.metric + direction_mark(row.higher_is_better)


def overall(info: RunInfo) -> list[MetricRow]:
    return [m for m in info.metrics if m.slice is None]


def table_rows(text: str, table_class: str) -> list[str]:
    found = re.search(rf'<table class="{table_class}">(.*?)</table>', text, re.S)
    assert found is not None, table_class
    return re.findall(r"<tr[ >].*?</tr>", found.group(1), re.S)


def cells(row: str) -> list[str]:
    return [
        html.unescape(re.sub(r"<[^>]+>", "", c))
        for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)
    ]


# --- the list -----------------------------------------------------------------------------------


def test_the_list_holds_every_run_newest_first_with_the_stored_values(
    server: ViewerServer, store: Store
) -> None:
    got = fetch(server, "/")
    assert got.status == 200
    assert got.headers["Content-Type"] == "text/html; charset=utf-8"
    stored = runs(store=store.path)
    rows = table_rows(got.text, "runs")[1:]  # after the head
    assert [html.unescape(re.search(r'data-run="(.*?)"', r).group(1)) for r in rows] == [  # type: ignore[union-attr]
        r.name for r in stored
    ]
    for row, info in zip(rows, stored, strict=True):
        texts = cells(row)
        assert texts[2].startswith(info.name)
        assert texts[3] == info.suite
        assert texts[4] == info.created[:16].replace("T", " ")
        assert texts[5] == f"{info.n_records:,}"
        for metric in overall(info)[:4]:
            value, interval = shown(metric)
            assert f"{named(metric)} {value} {interval}" in texts[6]
        assert f'href="{html.escape(run_href(info.name))}"' in row


def test_the_list_filters_by_suite_and_name(server: ViewerServer, store: Store) -> None:
    got = fetch(server, "/?" + urlencode({"suite": OTHER}))
    rows = table_rows(got.text, "runs")[1:]
    assert len(rows) == 1 and 'data-run="other-1"' in rows[0]
    assert "Runs of &lt;i&gt;other&lt;/i&gt;-suite" in got.text
    # the suite's metrics link to their trend
    assert html.escape("/trend?" + urlencode({"suite": OTHER, "metric": "qwk"})) in got.text
    got = fetch(server, "/?" + urlencode({"suite": RISK, "name": "OVER"}))
    names = re.findall(r'<tr data-run="(.*?)"', got.text)
    assert names == ["over-2", "over"]
    got = fetch(server, "/?" + urlencode({"name": "o"}))
    notes = dict(re.findall(r'<tr data-run="([^"]*)">.*?</a>(.*?)</td>', got.text))
    assert "(report gone)" in notes["gone"] and "(no output folder)" in notes["in-memory"]
    assert notes["over"] == notes["other-1"] == ""
    got = fetch(server, "/?" + urlencode({"name": "no such run"}))
    assert "No run matches." in got.text


def test_the_list_of_a_store_not_made_yet(tmp_path: Path) -> None:
    page = Viewer(tmp_path / "nothing.db").respond("/")
    assert page.status == 200
    assert "does not exist yet" in page.body.decode()
    assert not (tmp_path / "nothing.db").exists()  # looking made no store


# --- a run's report -----------------------------------------------------------------------------


def test_a_run_serves_its_report_with_a_bar_back(server: ViewerServer, store: Store) -> None:
    for name, folder in (("v2", "out-v2"), (XSS_NAME, "out-xss"), (ODD_NAME, "out-odd")):
        got = fetch(server, run_href(name))
        assert got.status == 200, name
        written = (store.folder / folder / "report.html").read_bytes()
        assert name != "v2" or len(written) > 3 * 65536
        assert int(got.headers["Content-Length"]) == len(got.body)
        bar = re.search(rb'<div style="[^"]*">.*?</div>\n', got.body)
        assert bar is not None
        assert got.body.replace(bar.group(0), b"", 1) == written
        assert html.escape(name).encode() in bar.group(0)
        assert b'<a href="/">' in bar.group(0)
        # the report keeps its own policy (its script by hash); the header only narrows it
        assert "default-src 'none'" in got.headers["Content-Security-Policy"]
        assert got.headers["X-Content-Type-Options"] == "nosniff"


def test_a_run_whose_report_is_gone_says_so_and_shows_the_store(
    server: ViewerServer, store: Store
) -> None:
    cases = {
        "gone": "is gone",
        "over": "now holds another run",
        "in-memory": "wrote no output folder",
    }
    for name, message in cases.items():
        got = fetch(server, run_href(name))
        assert got.status == 200
        assert message in got.text, name
        info = run_info(name, store=store.path)
        rows = [
            row
            for table in re.findall(r'<table class="metrics">(.*?)</table>', got.text, re.S)
            for row in re.findall(r"<tr[ >].*?</tr>", table, re.S)
        ]
        slices = {m.slice for m in info.metrics}
        assert len(rows) == len(info.metrics) + len(slices)  # a head per table
        for metric in overall(info):
            value, interval = shown(metric)
            assert any(cells(r)[:3] == [named(metric), value, interval] for r in rows)
    assert (
        "The newest run recorded with that folder is over-2" in fetch(server, run_href("over")).text
    )
    # the run that wrote last gets the report
    assert fetch(server, run_href("over-2")).body.startswith(b"<!DOCTYPE html>")
    assert b"pingce report" in fetch(server, run_href("over-2")).body


# --- comparing two runs -------------------------------------------------------------------------


def test_compare_puts_the_stored_values_and_intervals_side_by_side(
    server: ViewerServer, store: Store
) -> None:
    got = fetch(server, "/compare?" + urlencode({"a": "v1", "b": XSS_NAME}))
    assert got.status == 200
    a, b = run_info("v1", store=store.path), run_info(XSS_NAME, store=store.path)
    tables = re.findall(r'<table class="metrics compare">(.*?)</table>', got.text, re.S)
    slices = [None, *sorted({m.slice for m in a.metrics if m.slice})]
    assert len(tables) == len(slices)
    for where, table in zip(
        [None, *dict.fromkeys(m.slice for m in a.metrics if m.slice)], tables, strict=True
    ):
        rows = re.findall(r"<tr data-metric=.*?</tr>", table, re.S)
        metrics = [m for m in a.metrics if m.slice == where]
        assert len(rows) == len(metrics)
        for row, ma in zip(rows, metrics, strict=True):
            mb = b.value(ma.metric, where)
            texts = cells(row)
            assert texts[0] == named(ma)
            assert texts[1:3] == list(shown(ma))
            assert texts[3:5] == list(
                shown(next(m for m in b.metrics if m.metric == ma.metric and m.slice == where))
            )
            assert ma.value is not None and mb is not None
            assert texts[5] == ("+" if mb >= ma.value else "") + fmt_number(mb - ma.value)
            assert row.count("<circle") == 1 and row.count("<rect") == 1  # A and B marks
    assert "same suite" in got.text and "signature</th><td colspan='3'>the same" in got.text
    assert "Slice kind=" + html.escape(XSS_SLICE) in got.text
    assert XSS_SLICE not in got.text and "<script" not in got.text


def test_compare_without_two_names_offers_the_choice(server: ViewerServer, store: Store) -> None:
    got = fetch(server, "/compare")
    assert got.status == 200
    options = [html.unescape(o) for o in re.findall(r"<option value=\"(.*?)\"", got.text)]
    names = [r.name for r in runs(store=store.path)]
    assert options == names + names  # A's and B's choices
    assert f'<option value="{html.escape("v1")}" selected>' not in got.text
    got = fetch(server, "/compare?" + urlencode({"a": "v1", "b": "other-1"}))
    assert "Different suites" in got.text and "different suites" in got.text


# --- a trend ------------------------------------------------------------------------------------


def test_the_trend_of_a_metric_in_time_order(server: ViewerServer, store: Store) -> None:
    got = fetch(server, "/trend?" + urlencode({"suite": RISK, "metric": "qwk"}))
    assert got.status == 200
    assert "qwk across the runs of risk-lite" in got.text
    points = re.findall(r'<a href="([^"]*)" class="point" data-run="([^"]*)">(.*?)</a>', got.text)
    assert [html.unescape(p[1]) for p in points] == store.names  # oldest first
    assert [html.unescape(p[0]) for p in points] == [run_href(n) for n in store.names]
    stored = [run_info(n, store=store.path) for n in store.names]
    rows = [r.metrics[[m.metric for m in r.metrics].index("qwk")] for r in stored]
    low, high = value_range(rows)
    top, height = 14, 260  # the plot area of the chart

    def y(v: float) -> float:
        return top + height * (1 - (v - low) / (high - low))

    for (_, _, drawn), row in zip(points, rows, strict=True):
        assert row.value is not None
        cy = float(re.search(r'<circle class="pt" cx="[^"]*" cy="([^"]*)"', drawn).group(1))  # type: ignore[union-attr]
        assert cy == pytest.approx(y(row.value), abs=0.01)
        ys = sorted(float(y) for y in re.findall(r'y1="([^"]*)"', drawn))
        if row.ci_low is None or row.ci_high is None:  # bootstrap 0: a point without a bar
            assert ys == []
            continue
        assert ys[0] == pytest.approx(y(row.ci_high), abs=0.01)
        assert ys[-1] == pytest.approx(y(row.ci_low), abs=0.01)
        assert html.escape(row.metric) in got.text
    table = table_rows(got.text, "small trend-table")[1:]
    assert [cells(r)[0] for r in table] == list(reversed(store.names))  # newest first
    for r, row in zip(table, reversed(rows), strict=True):
        assert cells(r)[2:4] == list(shown(row))


def test_the_trend_of_a_slice_and_the_defaults(server: ViewerServer, store: Store) -> None:
    where = "kind=买卖合同"
    got = fetch(
        server, "/trend?" + urlencode({"suite": RISK, "metric": "accuracy", "slice": where})
    )
    assert got.status == 200
    for name, r in zip(store.names, cells_of_trend(got.text), strict=True):
        assert r == shown(
            next(
                m
                for m in run_info(name, store=store.path).metrics
                if m.metric == "accuracy" and m.slice == where
            )
        )
    # no suite: the newest run's; no metric: the suite's first
    newest = runs(store=store.path)[0]
    got = fetch(server, "/trend")
    assert f"accuracy across the runs of {html.escape(newest.suite)}" in got.text
    assert '<option value="macro_f1">' in got.text


def cells_of_trend(text: str) -> list[tuple[str, str]]:
    rows = table_rows(text, "small trend-table")[1:]
    return [tuple(cells(r)[2:4]) for r in reversed(rows)]  # type: ignore[misc]


# --- what the viewer refuses --------------------------------------------------------------------


def test_unknown_names_and_paths_are_404(server: ViewerServer) -> None:
    for target in (
        "/run/no-such-run",
        "/run/" + quote("../../../../etc/passwd", safe=""),
        "/run/",
        "/runs",
        "/static/style.css",
        "/report.html",
        "/favicon.ico",
        "/compare?a=v1&b=no-such-run",
        "/trend?suite=no-such-suite",
        "/trend?suite=risk-lite&metric=no_such_metric",
        "/trend?suite=risk-lite&metric=qwk&slice=kind%3Dnone",
    ):
        got = fetch(server, target)
        assert got.status == 404, target
        assert got.headers["Content-Type"].startswith("text/html")
    # sent as they are (no normalisation on the way)
    for target in ("/run/../../etc/passwd", "/../runs.db", "//etc/passwd", "/run/%ff"):
        assert raw(server, target) == 404, target
    got = fetch(server, "/run/" + quote(XSS_NAME + "-not", safe=""))
    assert "&lt;script&gt;" in got.text and "<script" not in got.text


def test_only_get_and_head_from_localhost(server: ViewerServer) -> None:
    assert raw(server, "/", method="POST") == 501
    assert raw(server, "/", method="DELETE") == 501
    assert raw(server, "/", method="HEAD") == 200
    head = fetch(server, "/", method="HEAD")
    assert head.body == b"" and int(head.headers["Content-Length"]) > 1000
    # a page of another site whose name was pointed at 127.0.0.1 (DNS rebinding) gets nothing
    assert raw(server, "/", host="evil.example:80") == 403
    assert raw(server, "/", host=f"localhost:{server.server_address[1]}") == 200
    assert raw(server, "/", host="[::1]") == 200


def test_a_page_that_fails_is_a_500_and_the_server_goes_on(
    store: Store, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    served = make_server(store.path)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    try:

        def broken(target: str) -> Any:
            raise RuntimeError("a bug")

        monkeypatch.setattr(served.viewer, "respond", broken)
        got = fetch(served, "/")
        assert got.status == 500 and b"a bug" in got.body
        monkeypatch.undo()
        assert fetch(served, "/").status == 200
    finally:
        served.shutdown()
        served.server_close()
    assert "a bug" in capsys.readouterr().err


def test_a_store_that_cannot_be_read(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    path.write_bytes(b"not a database" * 100)
    got = Viewer(path).respond("/")
    assert got.status == 500
    assert "The run store cannot be read" in got.body.decode()


def test_every_page_is_escaped_and_closed_to_the_network(server: ViewerServer) -> None:
    targets = [
        "/",
        "/compare?" + urlencode({"a": XSS_NAME, "b": ODD_NAME}),
        "/trend?" + urlencode({"suite": RISK, "metric": "accuracy"}),
        "/trend?" + urlencode({"suite": OTHER}),
        run_href("gone"),
    ]
    for target in targets:
        got = fetch(server, target)
        assert got.status == 200, target
        text = got.text
        assert "<script" not in text and "<img" not in text and "<i>" not in text, target
        assert not re.search(r"""(src|href|action)\s*=\s*["']?(https?:|//)""", text)
        policy = got.headers["Content-Security-Policy"]
        assert "default-src 'none'" in policy and "script-src 'none'" in policy
        assert html.escape(policy) in text  # and in the page itself
    assert "&lt;script&gt;window.__xss=1;alert(1)&lt;/script&gt;" in fetch(server, "/").text


def test_value_range() -> None:
    def row(v: float, lo: float, hi: float) -> MetricRow:
        return MetricRow("m", None, v, lo, hi, 1)

    assert value_range([row(0.5, 0.4, 0.6), None]) == (0.0, 1.0)
    assert value_range([row(0.1, -0.2, 0.3)]) == (-1.0, 1.0)
    assert value_range([row(1.3, 1.1, 1.6)]) == (0.0, 2.0)
    assert value_range([row(-3.0, -3.4, -2.0)]) == (-5.0, 0.0)
    assert value_range([]) == (0.0, 1.0)


# --- the command ---------------------------------------------------------------------------------


def test_pingce_view_serves_until_stopped(store: Store) -> None:
    command = [sys.executable, "-m", "pingce", "view", "--store", str(store.path), "--no-browser"]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
            assert found, line
            assert str(store.path) in line
            with urllib.request.urlopen(found.group(0), timeout=30) as response:
                assert b"over-2" in response.read()
        finally:
            process.terminate()
            process.communicate(timeout=30)


def test_pingce_view_says_when_the_port_is_taken(store: Store, server: ViewerServer) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pingce", "view", "--store", str(store.path), "--no-browser",
         "--port", str(server.server_address[1])],
        capture_output=True, text=True, env=ENV, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "cannot listen on 127.0.0.1" in done.stderr


# --- in a browser -------------------------------------------------------------------------------


def test_in_the_browser(browser: Any, server: ViewerServer, store: Store, tmp_path: Path) -> None:
    dialogs: list[str] = []
    errors: list[str] = []
    requests: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    origin = server.url.rstrip("/")

    # the list: the XSS name is a name, the link leads to its report
    page.goto(server.url)
    assert page.locator("table.runs tbody tr").count() == len(runs(store=store.path))
    assert page.locator("a.run", has_text=XSS_NAME).count() == 1
    page.locator("a.run", has_text="v2").click()
    page.wait_for_selector("html[data-ready]", timeout=15_000)  # report.html's script ran
    assert page.url == origin + run_href("v2")
    assert page.locator("table.metrics tbody tr").count() == 4
    assert page.locator("#r-body tr[data-index]").count() == 50  # the drill-down's first page
    page.locator("a", has_text="pingce runs").first.click()
    page.wait_for_load_state()

    # a run whose name is a script: its report opens, nothing runs
    page.locator("a.run", has_text=XSS_NAME).click()
    page.wait_for_selector("html[data-ready]", timeout=15_000)
    assert page.evaluate("window.__xss") is None
    page.go_back()

    # pick two runs (A: v1, B: over-2) and compare
    page.locator('input[name="a"][value="v1"]').check()
    page.locator('input[name="b"][value="over-2"]').check()
    page.locator("#compare").click()
    page.wait_for_load_state()
    assert page.url.startswith(origin + "/compare?")
    assert page.locator("h1").text_content() == "v1 and over-2"
    first = page.locator("table.compare").first.locator("tbody tr").first
    v1, v2 = run_info("v1", store=store.path), run_info("over-2", store=store.path)
    assert first.locator("td").nth(0).text_content() == shown(overall(v1)[0])[0]
    assert first.locator("td").nth(2).text_content() == shown(overall(v2)[0])[0]
    assert page.locator("svg.two").first.is_visible()
    compare_shot = tmp_path / "compare.png"
    page.screenshot(path=str(compare_shot), full_page=True)

    # another pair through the form on the page
    page.select_option('select[name="a"]', XSS_NAME)
    page.locator("form.pick button").click()
    page.wait_for_load_state()
    assert XSS_NAME in (page.locator("h1").text_content() or "")

    # a trend: from the list's metric link, then the form picks another metric
    page.goto(server.url + "?" + urlencode({"suite": RISK}))
    page.locator("p.hint a", has_text="accuracy").click()
    page.wait_for_load_state()
    assert page.locator("svg.trend a.point").count() == len(store.names)
    page.select_option('select[name="metric"]', "qwk")
    page.locator("form.pick button").click()
    page.wait_for_load_state()
    assert (page.locator("h1").text_content() or "").startswith("qwk across the runs of")
    labels = page.locator("svg.trend text.run").all_text_contents()
    assert labels[0] == "v1" and XSS_NAME[:27] + "…" in labels
    circles = page.locator("svg.trend circle.pt")
    assert circles.count() == len(store.names)
    box = page.locator("svg.trend").bounding_box()
    assert box is not None and box["width"] > 800 and box["height"] > 350
    shot = tmp_path / "trend.png"
    page.screenshot(path=str(shot), full_page=True)

    # a point of the trend leads to its run
    page.locator("svg.trend a.point").first.click()
    page.wait_for_selector("html[data-ready]", timeout=15_000)
    assert page.url == origin + run_href("v1")

    for path in (shot, compare_shot):
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", data[16:24])
        assert width == 1280 and height >= 900
        assert _spread(page, data) > 100  # not blank
    assert dialogs == [] and errors == []
    assert all(url.startswith(origin) for url in requests), requests
    page.close()


def _spread(page: Any, data: bytes) -> float:
    """The variance of the screenshot's grey levels, decoded by the browser itself."""
    variance: float = page.evaluate(
        """async (b64) => {
            const img = new Image();
            img.src = "data:image/png;base64," + b64;
            await img.decode();
            const c = document.createElement("canvas");
            c.width = img.width; c.height = Math.min(img.height, 2000);
            const g = c.getContext("2d");
            g.drawImage(img, 0, 0);
            const d = g.getImageData(0, 0, c.width, c.height).data;
            let s = 0, s2 = 0, n = d.length / 4;
            for (let i = 0; i < d.length; i += 4) {
              const v = (d[i] + d[i + 1] + d[i + 2]) / 3; s += v; s2 += v * v;
            }
            return s2 / n - (s / n) * (s / n);
        }""",
        base64.b64encode(data).decode(),
    )
    return variance


def test_paired_runs_the_paired_test_of_two_stored_runs(tmp_path: Path) -> None:
    """``/paired?a=&b=`` is ``pingce compare A B`` of two stored runs in the viewer: the
    difference and McNemar's p as scipy gives them on the two runs' records, nothing run
    again; two runs that cannot be paired say why."""
    from scipy.stats import binomtest

    from .cli_run import run_pingce

    data = Path(pingce.__file__).parent / "examples" / "contract_risk" / "records.jsonl"
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    wrong = {"高": "低", "中": "高", "低": "中"}
    worse = tmp_path / "worse.jsonl"
    worse.write_text(
        "".join(
            json.dumps(dict(r, pred_level=wrong[r["gold_level"]]) if i % 3 == 0 else r,
                       ensure_ascii=False) + "\n"
            for i, r in enumerate(rows)
        ),
        encoding="utf-8",
    )  # fmt: skip
    db = tmp_path / "runs.db"
    for name, path in (("good", data), ("worse", worse)):
        done = run_pingce(
            "run", "contract-risk", "--data", str(path), "--name", name, "--store", str(db),
            "--bootstrap", "0", "--out", str(tmp_path / name),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    page = Viewer(db).respond("/paired?" + urlencode({"a": "worse", "b": "good"}))
    assert page.status == 200 and page.csp == REPORT_CSP
    text = page.body.decode("utf-8")
    levels = {"high": "高", "medium": "中", "low": "低"}
    right_good = [levels.get(r["pred_level"], r["pred_level"]) == r["gold_level"] for r in rows]
    right_worse = [ok and i % 3 != 0 for i, ok in enumerate(right_good)]
    delta = (sum(right_worse) - sum(right_good)) / len(rows)
    assert fmt_number(delta) in text
    fixed = sum(w and not g for w, g in zip(right_worse, right_good, strict=True))
    broken = sum(g and not w for w, g in zip(right_worse, right_good, strict=True))
    p = binomtest(fixed, fixed + broken, 0.5).pvalue
    assert f"{p:.4f}" in text or "&lt;0.0001" in text or "<0.0001" in text
    assert "candidate worse" in text
    other = Viewer(db).respond("/paired?" + urlencode({"a": "worse", "b": "nobody"}))
    assert other.status == 404


# --- direction marks ----------------------------------------------------------------------------


def test_every_page_marks_a_metrics_direction_and_an_old_run_only_a_known_one(
    tmp_path: Path,
) -> None:
    """A run stored with its directions shows them on every page; one stored before directions
    were (NULL) shows the metric registry's for a registered name and no mark for another."""
    import sqlite3

    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE.format(name=RISK), "utf-8")
    db = tmp_path / "runs.db"
    result = pingce.evaluate(suite, make_records(0.7, 1), bootstrap=0, slices=["kind"])
    record_run(result, name="new", store=db, started=time.time() - DAY)
    record_run(result, name="old", store=db)
    with sqlite3.connect(db) as connection:  # as a run stored by an earlier pingce reads
        old = "(SELECT id FROM runs WHERE name = 'old')"
        connection.execute(f"UPDATE metrics SET higher_is_better = NULL WHERE run_id = {old}")
        renamed = f"UPDATE metrics SET metric = 'own' WHERE metric = 'qwk' AND run_id = {old}"
        connection.execute(renamed)  # a suite's own metric, unknown to the registry
    new, old_run = run_info("new", store=db), run_info("old", store=db)
    directions = {m.metric: m.higher_is_better for m in overall(new)}
    assert directions == {"accuracy": True, "macro_f1": True, "qwk": True, "avg_latency_sec": False}
    assert {m.metric: m.higher_is_better for m in overall(old_run)} == {
        "accuracy": True, "macro_f1": True, "own": None, "avg_latency_sec": False,
    }  # fmt: skip
    up = '<span class="better" title="higher is better" aria-label="higher is better">↑</span>'
    down = '<span class="better" title="lower is better" aria-label="lower is better">↓</span>'
    viewer = Viewer(db)
    listed = viewer.respond("/?" + urlencode({"suite": RISK})).body.decode("utf-8")
    assert f">accuracy</a>{up}" in listed and f">avg_latency_sec</a>{down}" in listed
    assert ">own</a> " in listed  # a name no one knows: no mark
    compared = viewer.respond("/compare?" + urlencode({"a": "new", "b": "old"}))
    rows = table_rows(compared.body.decode("utf-8"), "metrics compare")
    texts = {cells(r)[0] for r in rows[1:]}
    assert {"accuracy↑", "avg_latency_sec↓", "qwk↑", "own"} <= texts
    trend = viewer.respond("/trend?" + urlencode({"suite": RISK, "metric": "avg_latency_sec"}))
    text = trend.body.decode("utf-8")
    assert f"<th>value{down}</th>" in text and ">avg_latency_sec ↓</option>" in text
    stored_only = viewer.respond(run_href("old")).body.decode("utf-8")  # no folder: the store's
    assert f"<code>accuracy</code>{up}</th>" in stored_only
    assert "<code>own</code></th>" in stored_only
