"""records.jsonl: the text made a column at a time is, byte for byte, each row of
``RecordRows.iter_rows`` through ``orjson.dumps`` (what users' scripts read)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pingce
from pingce.records import ParseFailure
from pingce.results import RecordRows
from pingce.runfolder.records import jsonl_lines, read_jsonl

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.sampled_from(["高", "\x00", 'a "quoted", text', "line\nbreak", "\\", "]},{"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=4), inner, max_size=3),
    ),
    max_leaves=6,
)
FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1.0, 0.5])
)
REASONS = st.one_of(st.none(), st.sampled_from(["gold 高, predicted 中", "", "\x00", "x, y"]))


@st.composite
def record_rows(draw: Any) -> RecordRows:
    n = draw(st.integers(min_value=0, max_value=9))

    def column(elements: Any) -> list[Any]:
        # a column of few distinct values or of any values (serialised once or each)
        pool = draw(st.lists(elements, min_size=1, max_size=3))
        if draw(st.booleans()):
            return [draw(st.sampled_from(pool)) for _ in range(n)]
        return draw(st.lists(elements, min_size=n, max_size=n))

    fields: dict[str, Any] = {}
    for name in draw(st.lists(st.sampled_from(["a", "b.c", "名", "d"]), unique=True)):
        kind = draw(st.sampled_from(["values", "floats", "labels", "failures"]))
        if kind == "values":
            fields[name] = column(VALUES)
        elif kind == "floats":
            fields[name] = np.array(column(FLOATS), dtype=np.float64)
        elif kind == "labels":
            fields[name] = np.array(column(st.sampled_from(["高", "中", "低"])), dtype=object)
        else:
            fields[name] = column(st.one_of(st.none(), st.builds(ParseFailure, st.text())))
    values = {
        name: np.array(column(FLOATS), dtype=np.float64)
        for name in draw(st.lists(st.sampled_from(["m1", "m2", "指标"]), unique=True))
    }
    misses = {}
    for name in draw(st.lists(st.sampled_from(["m1", "m2", "m3"]), unique=True)):
        reasons = np.empty(n, dtype=object)
        reasons[:] = column(REASONS)
        misses[name] = reasons
    ids = column(st.one_of(st.none(), st.text(max_size=3)))
    lines = np.array(draw(st.lists(st.integers(1, 10**12), min_size=n, max_size=n)), np.int64)
    return RecordRows(ids, lines, fields, values, misses)


def expected_text(rows: RecordRows, fields: bool = True) -> bytes:
    """orjson of each row of ``iter_rows`` (without its "fields" unless ``fields``)."""
    made = rows.iter_rows()
    kept = made if fields else ({k: v for k, v in r.items() if k != "fields"} for r in made)
    return b"".join(orjson.dumps(row) + b"\n" for row in kept)


@settings(max_examples=400, deadline=None)
@given(rows=record_rows(), chunk=st.integers(min_value=1, max_value=4), fields=st.booleans())
def test_records_jsonl_is_orjson_of_each_row(rows: RecordRows, chunk: int, fields: bool) -> None:
    """records.jsonl is each row as orjson writes it; the input fields only when asked
    (``--records-fields all``), and nothing else differs without them."""
    text = b"".join(jsonl_lines(rows, chunk=chunk, fields=fields))
    assert text == expected_text(rows, fields)


def test_every_part_of_a_row_in_order() -> None:
    rows = RecordRows(
        ids=["r1", None],
        lines=np.array([3, 5]),
        fields={"gold": np.array(["高", "低"], dtype=object), "score": np.array([0.5, np.nan])},
        values={"accuracy": np.array([1.0, 0.0]), "mean": np.array([np.nan, -0.0])},
        misses={"accuracy": np.array([None, "gold 低, predicted 高"], dtype=object)},
    )
    text = b"".join(jsonl_lines(rows, fields=True))
    assert text == expected_text(rows)
    assert b"".join(jsonl_lines(rows)).decode("utf-8").splitlines() == [
        '{"id":"r1","line":3,"values":{"accuracy":1.0,"mean":null}}',
        '{"id":null,"line":5,"values":{"accuracy":0.0,"mean":-0.0},'
        '"misses":{"accuracy":"gold 低, predicted 高"}}',
    ]
    assert text.decode("utf-8").splitlines() == [
        '{"id":"r1","line":3,"fields":{"gold":"高","score":0.5},'
        '"values":{"accuracy":1.0,"mean":null}}',
        '{"id":null,"line":5,"fields":{"gold":"低","score":null},'
        '"values":{"accuracy":0.0,"mean":-0.0},"misses":{"accuracy":"gold 低, predicted 高"}}',
    ]


@settings(max_examples=100, deadline=None)
@given(rows=record_rows(), cut=st.integers(min_value=0, max_value=12))
def test_a_range_of_records_jsonl_is_that_part_of_the_text(rows: RecordRows, cut: int) -> None:
    lines = b"".join(jsonl_lines(rows, fields=True)).splitlines(keepends=True)
    cut = min(cut, rows.n)
    assert b"".join(jsonl_lines(rows, chunk=2, stop=cut, fields=True)) == b"".join(lines[:cut])
    assert b"".join(jsonl_lines(rows, chunk=3, start=cut, fields=True)) == b"".join(lines[cut:])


def _many_rows(n: int) -> RecordRows:
    rng = np.random.default_rng(0)
    reasons = np.empty(n, dtype=object)
    reasons[rng.random(n) < 0.3] = "gold 低, predicted 高"
    return RecordRows(
        ids=[f"r{i}" if i % 7 else None for i in range(n)],
        lines=np.arange(1, n + 1, dtype=np.int64),
        fields={"gold": [["高", "低"][i % 2] for i in range(n)], "score": rng.random(n)},
        values={"accuracy": rng.integers(0, 2, n).astype(np.float64)},
        misses={"accuracy": reasons},
    )


@pytest.mark.parametrize("processes", ["1", "2"])
def test_records_jsonl_written_in_halves_is_the_whole_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processes: str
) -> None:
    from pingce import _halves
    from pingce.runfolder.records import write_records

    monkeypatch.setattr(_halves, "MINIMUM", 10)
    monkeypatch.setenv("PINGCE_PROCESSES", processes)  # "2": the child writes the second half
    rows = _many_rows(5001)
    path = tmp_path / "records.jsonl"
    write_records(rows, path, fields=True)
    assert path.read_bytes() == b"".join(jsonl_lines(rows, fields=True))
    assert [p.name for p in tmp_path.iterdir()] == ["records.jsonl"]  # no part left behind
    write_records(None, path)
    assert path.read_bytes() == b""


def test_fields_no_record_has_are_not_repeated_on_every_line(tmp_path: Path) -> None:
    """An optional field that some record has is repeated on every line (null where absent);
    one that no record has is not (the line would only say null for it, record after record)."""
    data = tmp_path / "dialogue.jsonl"
    lines = [
        {"dialogue_id": "d1", "turn": 1, "status": "INQUIRY_ONLY", "gt_diagnosis": "风寒表实证",
         "pred_diagnosis": None, "confidence": 0.35, "pred_text": "恶寒", "gt_text": "恶寒重"},
        {"dialogue_id": "d1", "turn": 2, "status": "DEFINITIVE", "gt_diagnosis": "风寒表实证",
         "pred_diagnosis": "风寒表实证", "confidence": 0.9},
    ]  # fmt: skip
    data.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    result = pingce.evaluate("tcm-dialogue", data, bootstrap=0)
    assert result.records is not None
    fields = result.records.fields
    assert set(fields) == {"dialogue_id", "turn", "status", "gt_diagnosis", "pred_diagnosis",
                           "confidence", "pred_text", "gt_text"}  # fmt: skip
    assert list(fields["pred_text"]) == ["恶寒", None]
    assert "pred_features" not in fields and "risk" not in fields


def test_records_jsonl_read_back_pads_columns_seen_on_some_lines_only() -> None:
    """A column first met on a later line, or missing from a line, reads back as None (fields,
    misses) or NaN (values) on the other lines, in place: the rows read back equal the rows
    written."""
    rows = [
        {"id": "a", "line": 1, "fields": {"x": 1}, "values": {"m": 1.0}},
        {"id": None, "line": 2, "fields": {}, "values": {"m": 0.0}, "misses": {"m": "why"}},
        {"id": "c", "line": 3, "fields": {"x": 2, "y": "高"}, "values": {"m": None, "n": 0.5}},
        {"id": "d", "line": 5, "fields": {"y": [1]}, "values": {}},
    ]
    text = [orjson.dumps(r) + b"\n" for r in rows]
    read = read_jsonl([*text[:2], b"\n", *text[2:]], "records.jsonl")
    assert read.ids == ["a", None, "c", "d"]
    assert read.lines.tolist() == [1, 2, 3, 5]
    assert read.fields["x"].tolist() == [1, None, 2, None]
    assert read.fields["y"].tolist() == [None, None, "高", [1]]
    np.testing.assert_array_equal(read.values["m"], [1.0, 0.0, np.nan, np.nan])
    np.testing.assert_array_equal(read.values["n"], [np.nan, np.nan, 0.5, np.nan])
    assert read.misses["m"].tolist() == [None, "why", None, None]
    with pytest.raises(pingce.InputError) as raised:
        read_jsonl([text[0], b"{not json\n"], "records.jsonl")
    assert raised.value.line == 2 and raised.value.source == "records.jsonl"


def _builtin_examples() -> list[tuple[str, Path]]:
    from pingce.suites import builtin_suites

    examples = Path(pingce.__file__).resolve().parent / "examples"
    found = [
        (name, examples / name.replace("-", "_") / "records.jsonl") for name in builtin_suites()
    ]
    return [(name, path) for name, path in found if path.is_file()]


def _loopback_judge(
    stack: contextlib.ExitStack, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> dict[str, Any]:
    """A loopback judge that gives every rubric prompt a 4 and every correctness prompt a C."""
    from tests.loopback import LoopbackServer, Request, keep_local

    keep_local(monkeypatch, tmp_path / "cache")
    server = stack.enter_context(LoopbackServer())

    def answer(request: Request) -> dict[str, Any]:
        graded = "RUBRIC-MARK" in (request.prompt or "")
        return {"content": '{"score": 4}' if graded else '{"label": "C"}'}

    server.answer = answer
    return {"judges": ["openai:j"], "base_url": server.url, "rubric": "RUBRIC-MARK: helpful?"}


@pytest.mark.parametrize(("suite", "data"), _builtin_examples(), ids=lambda x: str(x)[-30:])
def test_record_values_are_plain_json_data_as_records_jsonl_holds(
    suite: str, data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28: record_values() is documented as what records.jsonl holds, but held
    EvidenceItem objects (and tuples) that json.dumps refused. records.jsonl holds them with
    ``records_fields="all"``; by default the same rows without their input fields. The judged
    example is graded by a loopback judge (its grades are in the rows too)."""
    with contextlib.ExitStack() as stack:
        judge = _loopback_judge(stack, monkeypatch, tmp_path) if suite.startswith("judged") else {}
        result = pingce.evaluate(
            suite, data, bootstrap=0, out=tmp_path, records_fields="all", **judge
        )
        rows = result.record_values()
        assert rows
        json.dumps(rows)
        text = (tmp_path / "records.jsonl").read_text(encoding="utf-8")
        assert rows == [json.loads(line) for line in text.splitlines()]
        pingce.evaluate(suite, data, bootstrap=0, out=tmp_path / "default", **judge)
    text = (tmp_path / "default" / "records.jsonl").read_text(encoding="utf-8")
    # (a judge's answers: the second run's come from the cache, with their first latency)
    without = [{k: v for k, v in row.items() if k not in ("fields", "judge")} for row in rows]
    second = [json.loads(line) for line in text.splitlines()]
    assert without == [{k: v for k, v in row.items() if k != "judge"} for row in second]
