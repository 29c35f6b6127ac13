"""The screenshots in the documentation (``docs/images/``), made by the browser from the bundled
examples: report.html of the contract-risk example (at 1280 px, its metrics at 800 px, a record
opened, a record of a ``--model`` run of the function-call example opened), ``pingce view``
over a run history of samples of it (the list of runs, two runs compared, a metric's trend), and
comparison.html's records side by side (the function-call example against a candidate that fixed
one record and broke another).

Each test takes its screenshot in Debian's chromium (the ``browser`` fixture) and checks that the
committed image is up to date: it exists and has the fresh one's width and height, and a size
within a quarter of it (the pixels differ from one chromium or font build to another, so the
bytes are not compared). ``PINGCE_DOCS_IMAGES=write`` writes the fresh images instead.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pingce

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
EXAMPLE = "examples/contract_risk/records.jsonl"
"""As the pages show it: relative to the repository root, where the runs are made."""
FUNCTION_CALL = ROOT / "examples" / "function_call" / "records.jsonl"
WRITE = os.environ.get("PINGCE_DOCS_IMAGES") == "write"
VIEWPORT = {"width": 1280, "height": 900}
DAY = 86_400.0
START = 1_767_225_600.0  # 2026-01-01 UTC: the runs' dates on the pages
SAMPLES = (("baseline", 30, 1), ("prompt-v2", 40, 2), ("prompt-v3", 50, 3), ("full", None, None))
"""The history's runs: name, records drawn from the example (None: all 60), seed (None: the
default)."""


def size(data: bytes) -> tuple[int, int]:
    """A PNG's width and height, from its header."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def check_image(name: str, data: bytes) -> None:
    """The committed ``docs/images/<name>`` matches the fresh screenshot ``data`` (or is written
    from it with ``PINGCE_DOCS_IMAGES=write``)."""
    path = IMAGES / name
    if WRITE:
        IMAGES.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return
    hint = f"docs/images/{name} is out of date: run the test with PINGCE_DOCS_IMAGES=write"
    assert path.is_file(), hint
    committed = path.read_bytes()
    assert size(committed) == size(data), hint
    assert abs(len(committed) - len(data)) <= len(data) / 4, hint


def function_call_candidate() -> list[dict[str, Any]]:
    """The bundled function-call example with two predictions changed: seed-03's temperature
    made right (fixed), seed-01's room made wrong (broken)."""
    lines = FUNCTION_CALL.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        if record["id"] == "seed-03":
            record["pred_fn"] = record["gold_fn"]
        if record["id"] == "seed-01":
            record["pred_fn"] = [
                {"name": "light_control", "arguments": {"room": "卧室", "action": "打开"}}
            ]
    return records


def shot(page: Any, *, full_page: bool = True) -> bytes:
    data: bytes = page.screenshot(full_page=full_page)
    return data


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Runs of samples of the contract-risk example recorded in a run store of their own, a
    day apart; the store and the full run's folder."""
    from pingce.store import record_run

    folder = tmp_path_factory.mktemp("docs-images")
    store = folder / "runs.db"
    here = Path.cwd()
    os.chdir(ROOT)
    try:
        for day, (name, sample, seed) in enumerate(SAMPLES):
            out = folder / name
            options: dict[str, Any] = {"slices": ["contract_type"]}
            if sample is not None:
                options.update(sample=sample, seed=seed)
            result = pingce.evaluate("contract-risk", EXAMPLE, out=out, **options)
            started = START + day * DAY
            record_run(result, name=name, store=store, data=EXAMPLE, out=out, started=started)
    finally:
        os.chdir(here)
    return store, folder / "full"


@pytest.fixture(scope="module")
def viewer(history: tuple[Path, Path]) -> Iterator[str]:
    from pingce.viewer import make_server

    served = make_server(history[0], port=0)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served.url
    served.shutdown()
    served.server_close()
    thread.join(5)


def test_report_html(browser: Any, history: tuple[Path, Path]) -> None:
    page = browser.new_page(viewport=VIEWPORT)
    page.goto((history[1] / "report.html").as_uri())
    page.wait_for_selector("html[data-ready]", timeout=15_000)
    check_image("report.png", shot(page, full_page=False))
    page.close()


def test_report_html_at_800_px_and_a_record_opened(
    browser: Any, history: tuple[Path, Path]
) -> None:
    """The metrics table in a window 800 px wide (nothing cut off), and a record's detail view."""
    page = browser.new_page(viewport={"width": 800, "height": 900})
    page.goto((history[1] / "report.html").as_uri())
    page.wait_for_selector("html[data-ready]", timeout=15_000)
    assert page.evaluate("document.documentElement.scrollWidth") <= 800
    data: bytes = page.locator("#metrics").screenshot()
    check_image("report-800.png", data)
    page.set_viewport_size(VIEWPORT)
    row = page.locator("#r-body tr.rec").nth(1)
    row.click()
    data = page.locator("#r-body tr.detail").screenshot()
    check_image("report-record.png", data)
    page.close()


def test_viewer_pages(browser: Any, viewer: str) -> None:
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(viewer)
    page.wait_for_load_state()
    check_image("viewer-runs.png", shot(page))
    page.locator('input[name="a"][value="baseline"]').check()
    page.locator('input[name="b"][value="full"]').check()
    page.locator("#compare").click()
    page.wait_for_load_state()
    check_image("viewer-compare.png", shot(page, full_page=False))
    page.goto(viewer.rstrip("/") + "/trend?suite=contract-risk&metric=accuracy")
    page.wait_for_load_state()
    assert page.locator("svg.trend a.point").count() == len(SAMPLES)
    check_image("viewer-trend.png", shot(page))
    page.close()


def test_comparison_side_by_side(browser: Any, tmp_path: Path) -> None:
    """comparison.html's records side by side, the changed ones: each with its query, its
    statuses (the metrics with their direction marks) and both systems' calls, argument by
    argument."""
    from pingce.report import write_comparison

    result = pingce.compare("function-call", function_call_candidate(), FUNCTION_CALL)
    write_comparison(result, tmp_path)
    page = browser.new_page(viewport={"width": 1280, "height": 760})
    page.goto((tmp_path / "comparison.html").as_uri())
    page.select_option("#sbs-status", "fb")
    assert page.locator("article.pair:visible").count() == 2
    check_image("comparison-side-by-side.png", page.locator("#pairs").screenshot())
    page.close()


def _png(width: int, height: int, size: int) -> bytes:
    header = b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR" + struct.pack(">II", width, height)
    return header + b"\0" * (size - len(header))


def test_an_image_of_another_size_is_out_of_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.modules[__name__], "IMAGES", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "WRITE", False)
    with pytest.raises(AssertionError, match="PINGCE_DOCS_IMAGES=write"):
        check_image("a.png", _png(1280, 900, 1000))  # not there
    (tmp_path / "a.png").write_bytes(_png(1280, 900, 1000))
    check_image("a.png", _png(1280, 900, 1100))
    with pytest.raises(AssertionError, match="out of date"):
        check_image("a.png", _png(1280, 1400, 1000))  # the page grew
    with pytest.raises(AssertionError, match="out of date"):
        check_image("a.png", _png(1280, 900, 2000))


def test_report_html_a_model_call(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record of a ``--model`` run opened: the messages sent and the answer, with its tokens
    and latency (the model: the docs' stand-in, answering as the function-call example's
    system did)."""
    from tests.loopback import LoopbackServer, keep_local
    from tests.test_docs import _stand_in_message

    keep_local(monkeypatch, tmp_path / "cache")
    monkeypatch.chdir(ROOT)
    with LoopbackServer() as server:
        server.answer = _stand_in_message
        pingce.evaluate(
            "function-call", "examples/function_call/records.jsonl", bootstrap=0,
            model="openai:Qwen/Qwen2.5-7B-Instruct", base_url=server.url, out=tmp_path / "run",
        )  # fmt: skip
    page = browser.new_page(viewport=VIEWPORT)
    page.goto((tmp_path / "run" / "report.html").as_uri())
    page.wait_for_selector("html[data-ready]", timeout=15_000)
    page.locator("#r-body tr.rec").nth(1).click()
    data: bytes = page.locator("#r-body tr.detail").screenshot()
    check_image("report-model-call.png", data)
    page.close()
