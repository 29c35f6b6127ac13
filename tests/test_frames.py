"""Results as pandas DataFrames: ``EvaluationResult.to_pandas()`` and ``record_frame()``,
``ComparisonResult.to_pandas()``. Every expected value is read here from the files pingce wrote
(results.json, records.jsonl, comparison.json) with the json module, never from the frame's own
code; pandas is imported only when a frame is asked for."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
from pingce.similarity.fake import FakeBackend

pd = pytest.importorskip("pandas")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "function_points" / "records.jsonl"
METRIC_COLUMNS = ["value", "ci_low", "ci_high", "n", "n_records", "n_scored"]
METRIC_COLUMNS += ["unparsed_records", "higher_is_better", "failed_records", "model_failed_records"]
NOTES = ["undefined_reason", "value_note", "ci_note"]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def same(cell: Any, expected: Any) -> bool:
    """A frame's cell holds the JSON value: null as NaN/NA/None, numbers exactly."""
    if expected is None:
        return cell is None or bool(pd.isna(cell))
    if isinstance(expected, float):
        return isinstance(cell, float) and cell == expected  # NaN is never a number's cell
    return bool(cell == expected)


def read_csv(text: str, like: Any) -> Any:
    """CSV text read back with the dtypes of frame ``like``, floats exactly (pandas 3 reads them
    so by default and deprecates asking; pandas 2 needs ``float_precision="round_trip"``)."""
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    return pd.read_csv(io.StringIO(text), dtype=like.dtypes.to_dict(), **exact)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """function-points on its example, sliced by task, written out: the result and its files."""
    out = tmp_path_factory.mktemp("frames") / "out"
    result = pingce.evaluate(  # records.jsonl with the fields: what the frames are checked against
        "function-points", EXAMPLE, bootstrap=200, slice="task", out=out, records_fields="all"
    )
    return {
        "result": result,
        "json": json.loads((out / "results.json").read_text(encoding="utf-8")),
        "records": read_jsonl(out / "records.jsonl"),
    }


# EvaluationResult.to_pandas -------------------------------------------------------------


def expected_metric_rows(results: dict[str, Any]) -> list[tuple[Any, Any, str, dict[str, Any]]]:
    """(slice field, slice value, metric, entry) in results.json's order: all records first."""
    rows = [(None, None, name, entry) for name, entry in results["metrics"].items()]
    for key, part in results["slices"].items():
        field, value = key.split("=", 1)
        rows.extend((field, value, name, entry) for name, entry in part["metrics"].items())
    return rows


def test_metric_frame_holds_the_metrics_of_results_json(run: dict[str, Any]) -> None:
    frame = run["result"].to_pandas()
    expected = expected_metric_rows(run["json"])
    assert list(frame.columns) == ["slice", "slice_value", "metric", *METRIC_COLUMNS, *NOTES]
    assert len(frame) == len(expected) == 3 * len(run["json"]["metrics"])  # all, judge, selection
    for (field, value, name, entry), (_, row) in zip(expected, frame.iterrows(), strict=True):
        assert same(row["slice"], field) and same(row["slice_value"], value)
        assert row["metric"] == name
        for column in [*METRIC_COLUMNS, *NOTES]:
            assert same(row[column], entry.get(column)), (field, value, name, column)
    # the numbers are the result's own, unrounded
    for name, entry in run["result"].metrics.items():
        row = frame[frame["slice"].isna() & (frame["metric"] == name)].iloc[0]
        assert row["value"] == entry.value and row["n"] == entry.n


def test_metric_frame_dtypes_and_nulls_with_their_reasons(run: dict[str, Any]) -> None:
    frame = run["result"].to_pandas()
    for column in ("value", "ci_low", "ci_high"):
        assert frame[column].dtype == np.float64
    assert frame["n"].dtype == np.int64
    assert str(frame["failed_records"].dtype) == "Int64"
    assert str(frame["higher_is_better"].dtype) == "boolean"
    assert frame["higher_is_better"].all()  # every metric of function-points: higher is better
    for column in ("slice", "slice_value", "metric", *NOTES):
        assert pd.api.types.is_string_dtype(frame[column]) or frame[column].dtype == object
    # the judge records have no selection items: the set metrics are null there, and say why
    judge = frame[(frame["slice_value"] == "judge") & frame["metric"].str.startswith("set_")]
    assert len(judge) == 3 and judge["value"].isna().all()
    reasons = run["json"]["slices"]["task=judge"]["metrics"]
    for _, row in judge.iterrows():
        assert row["undefined_reason"] == reasons[row["metric"]]["undefined_reason"]
    assert frame.loc[frame["value"].notna(), "undefined_reason"].isna().all()


def test_without_slices_there_are_no_slice_columns() -> None:
    result = pingce.evaluate("function-points", EXAMPLE, bootstrap=0)
    frame = result.to_pandas()
    assert list(frame.columns) == ["metric", *METRIC_COLUMNS, *NOTES]
    assert list(frame["metric"]) == list(result.metrics)
    assert frame["value"].tolist() == [e.value for e in result.metrics.values()]
    assert frame["ci_low"].isna().all()  # no bootstrap, no interval


RECORDS: list[dict[str, Any]] = [
    {"id": "a", "task": "selection", "gold_items": ["订单"], "pred_items": ["订单表"]},
    {"id": "b", "task": "selection", "gold_items": ["客户"], "pred_items": ["坏"]},
    {"id": "c", "task": "selection", "gold_items": ["员工"], "pred_items": ["员工表"]},
    {"id": "d", "task": "judge", "gold": True, "pred": "Yes"},
]


@pytest.mark.parametrize("policy", ["null", "skip"])
def test_failed_judge_calls_show_in_both_frames(tmp_path: Path, policy: str) -> None:
    backend = FakeBackend(lambda a, b: 0.9, fail={("坏", "客户")})
    result = pingce.evaluate(
        "function-points",
        RECORDS,
        similarity=backend,
        bootstrap=0,
        on_judge_failure=policy,
        out=tmp_path,
    )
    written = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    frame = result.to_pandas().set_index("metric")
    for name, entry in written["metrics"].items():
        assert same(frame.loc[name, "failed_records"], entry.get("failed_records"))
        assert same(frame.loc[name, "value"], entry["value"])
        assert same(frame.loc[name, "undefined_reason"], entry.get("undefined_reason"))
        assert same(frame.loc[name, "value_note"], entry.get("value_note"))
    assert frame.loc["sem_f1", "failed_records"] == 1
    assert pd.isna(frame.loc["set_f1", "failed_records"])
    # record b has no sem values, and its reason column says why
    records = result.record_frame().set_index("id")
    assert pd.isna(records.loc["b", "sem_f1"]) and records["sem_f1"].dtype == np.float64
    line = read_jsonl(tmp_path / "records.jsonl")[1]
    assert line["values"]["sem_f1"] is None
    assert records.loc["b", "sem_f1_reason"] == line["misses"]["sem_f1"]
    assert "similarity failed" in str(records.loc["b", "sem_f1_reason"])


# EvaluationResult.record_frame ----------------------------------------------------------


def test_record_frame_holds_records_jsonl(run: dict[str, Any]) -> None:
    frame = run["result"].record_frame()
    lines = run["records"]
    metrics = list(lines[0]["values"])
    reasons = sorted({name for line in lines for name in line.get("misses", {})})
    assert len(frame) == len(lines) == run["json"]["n_records"]
    assert list(frame.columns[:2]) == ["id", "line"]
    assert list(frame.columns[2 : 2 + len(metrics)]) == metrics
    assert {c.removesuffix("_reason") for c in frame.columns[2 + len(metrics) :]} >= set(reasons)
    for line, (_, row) in zip(lines, frame.iterrows(), strict=True):
        assert row["id"] == line["id"] and row["line"] == line["line"]
        for name in metrics:
            assert same(row[name], line["values"][name]), (line["id"], name)
            assert same(row[name + "_reason"], line.get("misses", {}).get(name))
    assert frame["line"].dtype == np.int64
    assert all(frame[name].dtype == np.float64 for name in metrics)
    # a record without a value for a metric (a judge record's set metrics) is NaN
    judge = frame[frame["id"] == "judge-01"].iloc[0]
    assert math.isnan(judge["set_f1"]) and judge["judge_accuracy"] == 1.0
    # the frame agrees with the result's own per-record rows
    assert frame["sem_f1"].tolist() == pytest.approx(
        run["result"].records.values["sem_f1"].tolist(), nan_ok=True
    )


def test_record_frame_with_the_fields_read(run: dict[str, Any]) -> None:
    frame = run["result"].record_frame(fields=True)
    lines = run["records"]
    fields = list(lines[0]["fields"])
    assert list(frame.columns[2 : 2 + len(fields)]) == fields
    for line, (_, row) in zip(lines, frame.iterrows(), strict=True):
        assert row["task"] == line["fields"]["task"]
        items = row["gold_items"]
        assert (None if items is None else list(items)) == line["fields"]["gold_items"]


def test_a_result_read_from_json_has_no_record_rows(run: dict[str, Any]) -> None:
    read = pingce.EvaluationResult.model_validate_json(run["result"].to_json())
    assert read.to_pandas()["value"].tolist() == pytest.approx(
        run["result"].to_pandas()["value"].tolist(), nan_ok=True
    )
    with pytest.raises(ValueError, match=r"records\.jsonl"):
        read.record_frame()


# CSV --------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["to_pandas", "record_frame"])
def test_frames_round_trip_through_csv(run: dict[str, Any], which: str) -> None:
    frame = getattr(run["result"], which)()
    pd.testing.assert_frame_equal(read_csv(frame.to_csv(index=False), frame), frame)


# ComparisonResult.to_pandas -------------------------------------------------------------


def test_comparison_frame_holds_comparison_json(tmp_path: Path) -> None:
    candidate = read_jsonl(EXAMPLE)
    baseline = [
        dict(r, pred="No") if r["task"] == "judge" and r["id"].endswith(("1", "3")) else r
        for r in candidate
    ]
    result = pingce.compare("function-points", candidate, baseline, bootstrap=200, out=tmp_path)
    written = json.loads((tmp_path / "comparison.json").read_text(encoding="utf-8"))
    frame = result.to_pandas()
    columns = ["candidate", "baseline", "delta", "ci_low", "ci_high", "p_value", "p_method"]
    columns += ["p_holm", "significant", "verdict", "n", "n_baseline", "higher_is_better"]
    columns += ["left_out", "margin_p_value", "note"]
    assert list(frame.columns) == ["metric", *columns]
    assert list(frame["metric"]) == list(written["metrics"])
    for (_, row), entry in zip(frame.iterrows(), written["metrics"].values(), strict=True):
        for column in columns:
            assert same(row[column], entry.get(column)), (row["metric"], column)
    accuracy = frame.set_index("metric").loc["judge_accuracy"]
    assert accuracy["delta"] == pytest.approx(accuracy["candidate"] - accuracy["baseline"])
    assert accuracy["delta"] > 0
    assert frame["p_value"].dtype == np.float64 and frame["higher_is_better"].dtype == bool
    pd.testing.assert_frame_equal(read_csv(frame.to_csv(index=False), frame), frame)


# pandas stays optional ------------------------------------------------------------------


def test_without_pandas_the_error_says_what_to_install(
    run: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    for call in (run["result"].to_pandas, run["result"].record_frame):
        with pytest.raises(ImportError, match=r"needs pandas.*pip install pandas"):
            call()


def test_pandas_is_imported_only_when_a_frame_is_asked_for() -> None:
    code = (
        "import sys, pingce\n"
        f"result = pingce.evaluate('function-points', {str(EXAMPLE)!r}, bootstrap=20)\n"
        "before = 'pandas' in sys.modules\n"
        "result.to_pandas()\n"
        "print(before, 'pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
