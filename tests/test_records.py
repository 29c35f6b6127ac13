"""pingce.records: loading JSONL/CSV/iterables, field paths, labels, ids and input errors."""

from __future__ import annotations

import gc
import json
import math
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from pingce import readers as readers_module
from pingce._json import json_texts
from pingce.errors import InputError
from pingce.labels import RISK_LEVELS, LabelScale
from pingce.records import FieldSpec, load_records, parse_path

RISK_SPECS = [
    FieldSpec("gold_level", "label", scale=RISK_LEVELS),
    FieldSpec("pred_level", "label", scale=RISK_LEVELS),
    FieldSpec("latency_sec", "number", required=False, minimum=0.0),
]

# Codes in scale order: 高 = 0, 中 = 1, 低 = 2 (written out by hand, not read from pingce).
HIGH, MEDIUM, LOW = 0, 1, 2


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    """Write rows as JSONL; a row that is a str is written verbatim (blank or broken lines)."""
    lines = [row if isinstance(row, str) else json.dumps(row, ensure_ascii=False) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rec(rid: str | int | None = "a", gold: Any = "高", pred: Any = "中", **extra: Any) -> dict:
    row: dict[str, Any] = {} if rid is None else {"id": rid}
    row.update(gold_level=gold, pred_level=pred, **extra)
    return row


# --------------------------------------------------------------------------- parse_path


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("id", ("id",)),
        ("output.level", ("output", "level")),
        ("evidence[0].clause", ("evidence", 0, "clause")),
        ("output.evidence[12].law", ("output", "evidence", 12, "law")),
        ("grid[1][2]", ("grid", 1, 2)),
    ],
)
def test_parse_path_splits_keys_and_indexes(path: str, parts: tuple) -> None:
    assert parse_path(path) == parts


@pytest.mark.parametrize("path", ["", " id", "id ", "[0]", "a..b", "a.", "a[x]", "a[0", "a]b"])
def test_parse_path_rejects_malformed_paths(path: str) -> None:
    with pytest.raises(ValueError, match="invalid field path"):
        parse_path(path)


@pytest.mark.parametrize("path", [".a", "a[0]b"])
def test_parse_path_rejects_misplaced_separators(path: str) -> None:
    # BUG (src/pingce/records.py, parse_path): a leading "." is accepted (".a" -> ("a",)) and a
    # key directly after an index is accepted without its "." ("a[0]b" -> ("a", 0, "b")).
    with pytest.raises(ValueError, match="invalid field path"):
        parse_path(path)


# --------------------------------------------------------------------------- JSONL basics


def test_jsonl_loads_columns_and_ignores_blank_lines(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "r.jsonl",
        [
            "",
            rec("a", "高", "中", latency_sec=1.5),
            "   ",
            rec("b", "低", "低", latency_sec=0),
            "\t",
            rec("c", "中", "高", latency_sec=2),
        ],
    )
    table = load_records(path, RISK_SPECS)
    assert table.n == 3
    assert table.source == str(path)
    assert table.ids == ["a", "b", "c"]
    assert table.lines.tolist() == [2, 4, 6]
    assert table.column("gold_level").tolist() == [HIGH, LOW, MEDIUM]
    assert table.column("pred_level").tolist() == [MEDIUM, LOW, HIGH]
    np.testing.assert_array_equal(table.column("latency_sec"), [1.5, 0.0, 2.0])
    assert table.column("latency_sec").dtype == np.float64


def test_jsonl_windows_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "crlf.jsonl"
    text = "\r\n".join(json.dumps(rec(str(i)), ensure_ascii=False) for i in range(3))
    path.write_bytes((text + "\r\n").encode("utf-8"))
    table = load_records(path, RISK_SPECS)
    assert table.ids == ["0", "1", "2"]


def test_nested_field_paths(tmp_path: Path) -> None:
    specs = [
        FieldSpec("output.level", "label", scale=RISK_LEVELS),
        FieldSpec("gold.level", "label", scale=RISK_LEVELS),
        FieldSpec("evidence[0].clause", "string", required=False),
        FieldSpec("evidence[1].law", "string", required=False),
    ]
    path = write_jsonl(
        tmp_path / "nested.jsonl",
        [
            {
                "id": "x",
                "output": {"level": "低"},
                "gold": {"level": "高"},
                "evidence": [{"clause": "c-one"}, {"law": "l-two"}],
            },
            {"id": "y", "output": {"level": "中"}, "gold": {"level": "中"}, "evidence": []},
            {"id": "z", "output": {"level": "高"}, "gold": {"level": "低"}},
        ],
    )
    table = load_records(path, specs)
    assert table.column("output.level").tolist() == [LOW, MEDIUM, HIGH]
    assert table.column("gold.level").tolist() == [HIGH, MEDIUM, LOW]
    assert list(table.column("evidence[0].clause")) == ["c-one", None, None]
    assert list(table.column("evidence[1].law")) == ["l-two", None, None]


def test_nested_required_field_missing_names_the_path(tmp_path: Path) -> None:
    specs = [FieldSpec("output.level", "label", scale=RISK_LEVELS)]
    path = write_jsonl(
        tmp_path / "n.jsonl", [{"output": {"level": "高"}}, {"output": {"lvl": "高"}}]
    )
    with pytest.raises(InputError) as info:
        load_records(path, specs)
    err = info.value
    assert (err.source, err.line, err.field) == (str(path), 2, "output.level")
    assert f"{path}:2" in str(err)
    assert "output.level" in str(err)


# --------------------------------------------------------------------------- labels


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("高", HIGH),
        ("中", MEDIUM),
        ("低", LOW),
        (" 高 ", HIGH),
        ("high", HIGH),
        ("HIGH", HIGH),
        ("High", HIGH),
        (" medium ", MEDIUM),
        ("MeDiUm", MEDIUM),
        ("low", LOW),
        ("\tLOW\n", LOW),
    ],
)
def test_risk_labels_and_aliases_normalised(raw: str, code: int) -> None:
    table = load_records([rec("a", gold=raw, pred=raw)], RISK_SPECS)
    assert table.column("gold_level").tolist() == [code]
    assert table.column("pred_level").tolist() == [code]


def test_same_alias_spelled_many_ways_in_one_file(tmp_path: Path) -> None:
    spellings = ["high", "HIGH", " High", "medium", "Medium ", "LOW", "low", "高", "中", "低"]
    expected = [HIGH, HIGH, HIGH, MEDIUM, MEDIUM, LOW, LOW, HIGH, MEDIUM, LOW]
    rows = [rec(str(i), gold=s, pred="低") for i, s in enumerate(spellings)]
    table = load_records(write_jsonl(tmp_path / "s.jsonl", rows), RISK_SPECS)
    assert table.column("gold_level").tolist() == expected


FIVE = LabelScale.from_spec([5, 4, 3, 2, 1])
FIVE_SPECS = [FieldSpec("gold", "label", scale=FIVE), FieldSpec("pred", "label", scale=FIVE)]


def test_integer_labels_on_a_five_point_scale() -> None:
    rows = [
        {"gold": 5, "pred": 1},
        {"gold": "4", "pred": 2},
        {"gold": 3, "pred": " 3 "},
        {"gold": 1.0, "pred": 5},
    ]
    table = load_records(rows, FIVE_SPECS)
    # scale order 5,4,3,2,1 -> codes 0..4
    assert table.column("gold").tolist() == [0, 1, 2, 4]
    assert table.column("pred").tolist() == [4, 3, 2, 0]


@pytest.mark.parametrize(("raw", "shown"), [(6, "6"), (0, "0"), (2.5, "2.5"), (True, "true")])
def test_integer_label_off_the_scale_is_an_input_error(raw: Any, shown: str) -> None:
    with pytest.raises(InputError) as info:
        load_records([{"gold": 5, "pred": 5}, {"gold": raw, "pred": 5}], FIVE_SPECS)
    err = info.value
    assert (err.line, err.field, err.value) == (2, "gold", raw)
    assert type(err.value) is type(raw)
    assert "gold" in str(err) and shown in str(err)


# --------------------------------------------------------------------------- ids


def test_missing_ids_are_none_and_lines_identify_the_records(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "ids.jsonl", ["", rec(None), rec("named"), "", rec(None), rec(None, id=None)]
    )
    table = load_records(path, RISK_SPECS)
    assert table.ids == [None, "named", None, None]
    assert table.lines.tolist() == [2, 3, 5, 6]
    assert table.first_without_id() == 0


def test_integer_ids_become_text() -> None:
    table = load_records([rec(7), rec(0), rec("8")], RISK_SPECS)
    assert table.ids == ["7", "0", "8"]


def test_custom_nested_id_path() -> None:
    rows = [{"meta": {"uid": 3}, **rec(None)}, {"meta": {"uid": "k"}, **rec(None)}]
    table = load_records(rows, RISK_SPECS, id_path="meta.uid")
    assert table.ids == ["3", "k"]


def test_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "dup.jsonl", [rec("x"), rec("y"), "", rec("x")])
    with pytest.raises(InputError) as info:
        load_records(path, RISK_SPECS)
    err = info.value
    assert (err.source, err.line, err.field, err.value) == (str(path), 4, "id", "x")
    message = str(err)
    assert f"{path}:4" in message
    assert "line 1" in message
    assert '"x"' in message


def test_an_id_that_looks_like_a_line_is_a_real_id() -> None:
    # failed on the old main: a record without an id was named "line-2", so a real id "line-2"
    # beside it was reported as a duplicate
    table = load_records([rec("line-2"), rec(None), rec(None)], RISK_SPECS)
    assert table.ids == ["line-2", None, None]


@pytest.mark.parametrize("bad_id", [True, 1.5, ["a"], {"k": 1}])
def test_id_of_wrong_type(bad_id: Any) -> None:
    with pytest.raises(InputError) as info:
        load_records([rec(bad_id)], RISK_SPECS)
    assert (info.value.line, info.value.field, info.value.value) == (1, "id", bad_id)


# --------------------------------------------------------------------------- optional numbers


def test_optional_number_missing_or_null_is_nan(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "lat.jsonl",
        [rec("a", latency_sec=3.25), rec("b"), rec("c", latency_sec=None), rec("d", latency_sec=0)],
    )
    lat = load_records(path, RISK_SPECS).column("latency_sec")
    assert lat[0] == 3.25
    assert math.isnan(lat[1])
    assert math.isnan(lat[2])
    assert lat[3] == 0.0


def test_integer_number_accepted_as_float() -> None:
    lat = load_records([rec("a", latency_sec=4)], RISK_SPECS).column("latency_sec")
    assert lat.dtype == np.float64 and lat.tolist() == [4.0]


# --------------------------------------------------------------------------- input errors (JSONL)

GOOD = json.dumps(rec("ok"), ensure_ascii=False)

JSONL_ERRORS = [
    # (case, bad line text, field, value check, substring of str(err))
    ("malformed JSON", '{"id": "b", "gold_level": "高",', None, "snippet", "not valid JSON"),
    ("array, not object", '["高", "低"]', None, ["高", "低"], "JSON object"),
    ("missing required", '{"id": "b", "gold_level": "高"}', "pred_level", None, "missing"),
    ("null required", '{"id": "b", "gold_level": "高", "pred_level": null}', "pred_level", None,
     "null"),
    ("unknown label", '{"id": "b", "gold_level": "高", "pred_level": "极高"}', "pred_level",
     "极高", '"极高"'),
    ("unknown label type", '{"id": "b", "gold_level": 2, "pred_level": "高"}', "gold_level",
     2, "(got 2)"),
    ("number as string", json.dumps(rec("b", latency_sec="2.5")), "latency_sec",
     "2.5", '"2.5"'),
    ("boolean as number", json.dumps(rec("b", latency_sec=True)), "latency_sec", True, "true"),
    ("negative latency", json.dumps(rec("b", latency_sec=-0.5)), "latency_sec", -0.5, "-0.5"),
    ("object as number", json.dumps(rec("b", latency_sec={"s": 1})), "latency_sec", {"s": 1},
     "latency_sec"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("line_text", "field", "value", "needle"),
    [case[1:] for case in JSONL_ERRORS],
    ids=[case[0] for case in JSONL_ERRORS],
)
def test_jsonl_input_errors_name_file_line_field_value(
    tmp_path: Path, line_text: str, field: str | None, value: Any, needle: str
) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [GOOD, "", line_text, GOOD.replace("ok", "ok2")])
    with pytest.raises(InputError) as info:
        load_records(path, RISK_SPECS)
    err = info.value
    message = str(err)
    assert err.source == str(path)
    assert err.line == 3
    assert err.field == field
    assert message.startswith(f"{path}:3: ")
    if field is not None:
        assert f"'{field}'" in message
    if value == "snippet":
        assert err.value == line_text
    else:
        assert err.value == value
        assert type(err.value) is type(value)
    assert needle in message


def test_jsonl_non_finite_token_is_an_input_error_at_its_line(tmp_path: Path) -> None:
    # NaN / 1e999 are not JSON; they must still be reported at their line, not crash.
    for token in ["NaN", "Infinity", "1e999"]:
        bad = GOOD[:-1] + f', "latency_sec": {token}}}'
        path = write_jsonl(tmp_path / "nan.jsonl", [GOOD.replace("ok", "first"), bad])
        with pytest.raises(InputError) as info:
            load_records(path, RISK_SPECS)
        assert (info.value.source, info.value.line) == (str(path), 2)
        assert token in str(info.value)


@pytest.mark.parametrize("number", [math.inf, -math.inf, math.nan])
def test_non_finite_number_is_an_input_error(number: float) -> None:
    # BUG for NaN (src/pingce/records.py, _Column._numbers): NaN is taken for "absent"
    # (present = ~np.isnan(values)), so a NaN latency is silently dropped instead of rejected.
    with pytest.raises(InputError) as info:
        load_records([rec("a"), rec("b", latency_sec=number)], RISK_SPECS)
    err = info.value
    assert (err.source, err.line, err.field) == ("<records>", 2, "latency_sec")
    assert err.value is number or (math.isnan(number) and math.isnan(err.value))
    assert "finite" in str(err)
    assert "latency_sec" in str(err)


def test_nan_in_a_required_number_field_is_an_input_error() -> None:
    # BUG (src/pingce/records.py, _Column._numbers): a required number that is NaN passes every
    # check and NaN is stored in a required column.
    specs = [FieldSpec("score", "number")]
    with pytest.raises(InputError) as info:
        load_records([{"score": 1.0}, {"score": math.nan}], specs)
    assert (info.value.line, info.value.field) == (2, "score")


def test_number_too_large_for_a_float_is_an_input_error() -> None:
    # BUG (src/pingce/records.py, _Column._numbers): np.asarray / values[i] = raw raise
    # OverflowError (not InputError) for a Python int beyond float range.
    with pytest.raises(InputError) as info:
        load_records([rec("a"), rec("b", latency_sec=10**400)], RISK_SPECS)
    assert (info.value.line, info.value.field) == (2, "latency_sec")


def test_first_bad_record_is_the_one_reported() -> None:
    # BUG (src/pingce/records.py, load_records): duplicate ids are only checked after the whole
    # input is read, so a later bad record (line 4) is reported instead of the duplicate (line 2).
    rows = [rec("a"), rec("a"), rec("b"), rec("c", pred="bogus")]
    with pytest.raises(InputError) as info:
        load_records(rows, RISK_SPECS)
    assert (info.value.line, info.value.field, info.value.value) == (2, "id", "a")


def test_first_bad_record_is_the_one_reported_across_fields(tmp_path: Path) -> None:
    rows = [rec("a"), rec("b", latency_sec=-1), rec("c", gold="bogus"), "{not json"]
    path = write_jsonl(tmp_path / "two.jsonl", rows)
    with pytest.raises(InputError) as info:
        load_records(path, RISK_SPECS)
    assert (info.value.line, info.value.field, info.value.value) == (2, "latency_sec", -1)


def test_minimum_zero_accepts_zero_but_not_below() -> None:
    assert load_records([rec("a", latency_sec=0.0)], RISK_SPECS).column("latency_sec")[0] == 0.0
    with pytest.raises(InputError) as info:
        load_records([rec("a", latency_sec=-1e-9)], RISK_SPECS)
    assert info.value.field == "latency_sec"


def test_required_string_of_wrong_type() -> None:
    specs = [FieldSpec("query", "string")]
    with pytest.raises(InputError) as info:
        load_records([{"query": "ok"}, {"query": 12}], specs)
    assert (info.value.line, info.value.field, info.value.value) == (2, "query", 12)


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_records(path, RISK_SPECS)
    assert info.value.source == str(path)
    assert str(path) in str(info.value)
    assert "empty" in str(info.value)


def test_empty_iterable() -> None:
    with pytest.raises(InputError, match="empty"):
        load_records([], RISK_SPECS)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.jsonl"
    with pytest.raises(InputError) as info:
        load_records(path, RISK_SPECS)
    assert info.value.source == str(path)
    assert str(path) in str(info.value)
    assert info.value.line is None


def test_directory_is_not_a_data_file(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        load_records(tmp_path, RISK_SPECS)


@pytest.mark.parametrize("name", ["data.txt", "data.xlsx", "data.yaml"])
def test_unsupported_extension(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(GOOD + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_records(path, RISK_SPECS)
    assert info.value.source == str(path)
    assert Path(name).suffix in str(info.value)


def test_string_path_and_pathlike_both_accepted(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", [rec("a"), rec("b")])
    assert load_records(str(path), RISK_SPECS).ids == load_records(path, RISK_SPECS).ids


# --------------------------------------------------------------------------- CSV


def test_csv_with_bom_blank_lines_and_empty_cells(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    text = (
        "id,gold_level,pred_level,latency_sec,contract_type\n"
        "a,高,HIGH,1.25,租赁\n"
        "\n"
        "b, low ,中,,买卖\n"
        "c,medium,低,3,租赁\n"
    )
    path.write_bytes(("\ufeff" + text).encode("utf-8"))
    specs = [*RISK_SPECS, FieldSpec("contract_type", "value", required=False)]
    table = load_records(path, specs)
    assert table.ids == ["a", "b", "c"]  # the BOM must not end up in the "id" header
    assert table.lines.tolist() == [2, 4, 5]
    assert table.column("gold_level").tolist() == [HIGH, LOW, MEDIUM]
    assert table.column("pred_level").tolist() == [HIGH, MEDIUM, LOW]
    lat = table.column("latency_sec")
    assert lat[0] == 1.25 and math.isnan(lat[1]) and lat[2] == 3.0
    assert list(table.column("contract_type")) == ["租赁", "买卖", "租赁"]


def test_csv_without_id_column_has_no_ids(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("gold_level,pred_level\n高,高\n低,中\n", encoding="utf-8")
    table = load_records(path, RISK_SPECS)
    assert table.ids == [None, None] and table.lines.tolist() == [2, 3]


def test_csv_empty_id_cell_is_a_record_without_id(tmp_path: Path) -> None:
    # two rows with an empty id cell are two records without an id, not a duplicate id ""
    path = tmp_path / "r.csv"
    path.write_text("id,gold_level,pred_level\na,高,高\n,低,中\n,中,中\n", encoding="utf-8")
    table = load_records(path, RISK_SPECS)
    assert table.ids == ["a", None, None]
    assert table.first_without_id() == 1 and table.lines.tolist() == [2, 3, 4]


@pytest.mark.parametrize(
    ("row", "field", "value", "needle"),
    [
        ("b,极高,高,1", "gold_level", "极高", '"极高"'),
        ("b,高,高,fast", "latency_sec", "fast", '"fast"'),
        ("b,高,高,-2", "latency_sec", -2.0, "-2"),
        ("b,高,,1", "pred_level", None, "required field"),
        ("a,高,高,1", "id", "a", "line 2"),
    ],
    ids=["unknown label", "not a number", "negative", "empty required", "duplicate id"],
)
def test_csv_input_errors(tmp_path: Path, row: str, field: str, value: Any, needle: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(f"id,gold_level,pred_level,latency_sec\na,高,中,1\n{row}\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_records(path, RISK_SPECS)
    err = info.value
    assert (err.source, err.line, err.field) == (str(path), 3, field)
    if value is not None:
        assert err.value == value
    assert str(err).startswith(f"{path}:3: ")
    assert needle in str(err)


@pytest.mark.parametrize("cell", ["inf", "nan", "-inf"])
def test_csv_non_finite_number(tmp_path: Path, cell: str) -> None:
    # "nan" fails with the same NaN-is-absent bug as test_non_finite_number_is_an_input_error.
    path = tmp_path / "bad.csv"
    path.write_text(f"id,gold_level,pred_level,latency_sec\na,高,中,{cell}\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_records(path, RISK_SPECS)
    assert (info.value.line, info.value.field) == (2, "latency_sec")
    assert "finite" in str(info.value)


@pytest.mark.parametrize("content", ["", "id,gold_level,pred_level\n"])
def test_csv_empty(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_records(path, RISK_SPECS)
    assert info.value.source == str(path)
    assert "empty" in str(info.value)


# --------------------------------------------------------------------------- streaming


def test_iterable_reports_the_first_bad_record_and_reads_at_most_one_chunk_past_it() -> None:
    # Values are checked a chunk of records at a time (numpy, not a call per value), so a
    # generator may be advanced up to one chunk past the first bad record; the error must still
    # name the first bad record, not a later one.
    from pingce.readers import RECORDS_PER_BLOCK as _CHUNK

    handed_out: list[int] = []

    def records():
        for i in range(3 * _CHUNK):
            handed_out.append(i)
            pred = "bogus" if i in (5, 7, _CHUNK + 3) else "低"
            yield rec(f"r{i}", pred=pred)

    with pytest.raises(InputError) as info:
        load_records(records(), RISK_SPECS)
    assert (info.value.line, info.value.field, info.value.value) == (6, "pred_level", "bogus")
    assert len(handed_out) <= _CHUNK


def test_iterable_is_read_in_one_pass() -> None:
    class OnePass:
        def __init__(self) -> None:
            self.iterations = 0

        def __iter__(self):
            self.iterations += 1
            if self.iterations > 1:
                raise AssertionError("iterated twice")
            yield rec("a")
            yield rec("b", "低", "低")

    source = OnePass()
    table = load_records(source, RISK_SPECS)
    assert table.ids == ["a", "b"] and source.iterations == 1


def test_large_jsonl_loads_in_bounded_memory(tmp_path: Path) -> None:
    n = 200_000
    levels = ["高", "中", "低"]
    path = tmp_path / "big.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            row = {
                "id": f"r{i}",
                "gold_level": levels[i % 3],
                "pred_level": levels[(i // 3) % 3],
                "latency_sec": (i % 1000) / 100,
                "note": "an unused field the loader must not keep " + str(i),
            }
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    size = path.stat().st_size
    bound = 3 * size

    tracemalloc.start()
    try:
        table = load_records(path, RISK_SPECS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert table.n == n
    gold = table.column("gold_level")
    assert np.bincount(gold, minlength=3).tolist() == [66_667, 66_667, 66_666]
    assert table.column("pred_level")[:9].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert float(table.column("latency_sec").sum()) == pytest.approx(200 * sum(range(1000)) / 100)
    assert peak < bound, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"

    del table
    # The bound is meaningful: keeping every record as a dictionary exceeds it.
    tracemalloc.start()
    try:
        with open(path, encoding="utf-8") as handle:
            everything = [json.loads(line) for line in handle]
        _, naive_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(everything) == n
    del everything
    assert naive_peak > bound


# --------------------------------------------------------------------------- blocks of lines
# A JSONL file is read a block of bytes at a time and each block's lines are parsed and checked
# together. Blocks a few bytes long end mid-line and mid-character: the table and the errors
# must be those of the whole file read at once.

TRICKY_LINES = [
    "\ufeff" + json.dumps(rec("a", latency_sec=1.5), ensure_ascii=False),
    "",
    "   \t",
    json.dumps(rec("b", "低", "高"), ensure_ascii=False) + "\r",  # a Windows line ending
    json.dumps(rec(None, "中", "中", latency_sec=2), ensure_ascii=False),
    "\x0c",  # a form feed alone: blank too
    json.dumps(rec(7, "HIGH", "low", note="逗号, 括号]}"), ensure_ascii=False),
]


def write_lines(path: Path, lines: list[str], final_newline: bool) -> Path:
    path.write_bytes(("\n".join(lines) + ("\n" if final_newline else "")).encode("utf-8"))
    return path


def same_table(a: Any, b: Any) -> None:
    assert a.ids == b.ids and a.lines.tolist() == b.lines.tolist()
    for path, column in a.columns.items():
        assert np.array_equal(column, b.columns[path], equal_nan=True), path


@pytest.mark.parametrize("block_bytes", [1, 7, 37, 1 << 20])
@pytest.mark.parametrize("final_newline", [True, False])
def test_blocks_of_any_size_give_the_same_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int, final_newline: bool
) -> None:
    path = write_lines(tmp_path / "r.jsonl", TRICKY_LINES, final_newline)
    expected = load_records(path, RISK_SPECS)
    assert expected.ids == ["a", "b", None, "7"]
    assert expected.lines.tolist() == [1, 4, 5, 7]
    assert expected.column("gold_level").tolist() == [HIGH, LOW, MEDIUM, HIGH]
    monkeypatch.setattr(readers_module, "_BLOCK_BYTES", block_bytes)
    same_table(load_records(path, RISK_SPECS), expected)


@pytest.mark.parametrize("block_bytes", [5, 64, 1 << 20])
@pytest.mark.parametrize(
    ("bad", "needle"),
    [('{"id": "x", "gold_level": "高",', "not valid JSON"), ('"just text"', "JSON object")],
)
def test_a_bad_line_in_a_later_block_is_named_as_in_one_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int, bad: str, needle: str
) -> None:
    good = [json.dumps(rec(f"r{i}"), ensure_ascii=False) for i in range(8)]
    for final_newline in (True, False):  # the bad line is also the file's last, unterminated
        path = write_lines(tmp_path / "bad.jsonl", [*good, "", bad], final_newline)
        with pytest.raises(InputError) as whole:
            load_records(path, RISK_SPECS)
        monkeypatch.setattr(readers_module, "_BLOCK_BYTES", block_bytes)
        with pytest.raises(InputError) as blocks:
            load_records(path, RISK_SPECS)
        monkeypatch.undo()
        assert (blocks.value.line, str(blocks.value)) == (whole.value.line, str(whole.value))
        assert blocks.value.line == 10 and needle in str(blocks.value)


def test_an_earlier_bad_field_wins_over_a_later_bad_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [json.dumps(rec("a")), json.dumps(rec("b", pred="极高")), "{not json"]
    path = write_lines(tmp_path / "two.jsonl", lines, True)
    monkeypatch.setattr(readers_module, "_BLOCK_BYTES", 1 << 20)  # all in one block
    with pytest.raises(InputError) as info:
        load_records(path, RISK_SPECS)
    assert (info.value.line, info.value.field) == (2, "pred_level")


@pytest.mark.parametrize("block_bytes", [16, 1 << 20])
def test_duplicate_ids_within_and_across_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int
) -> None:
    monkeypatch.setattr(readers_module, "_BLOCK_BYTES", block_bytes)
    rows = [rec("a"), rec(None), rec("b"), rec(None), rec("c"), rec("b")]
    path = write_jsonl(tmp_path / "dup.jsonl", rows)
    with pytest.raises(InputError) as info:
        load_records(path, RISK_SPECS)
    assert (info.value.line, info.value.field, info.value.value) == (6, "id", "b")
    assert "first seen on line 3" in str(info.value)


def test_integers_too_long_for_64_bits_stay_exact_next_to_plain_lines(tmp_path: Path) -> None:
    specs = [FieldSpec("big", "value"), FieldSpec("note", "string", required=False)]
    lines = [
        '{"big": 1}',
        '{"big": 123456789012345678901234567890}',  # json, not orjson, keeps it exact
        '{"big": 2, "note": "a run of digits in text: 12345678901234567890123"}',
        '{"big": 0.1000000000000000000000001}',  # 19+ digits that are not an integer
    ]
    table = load_records(write_lines(tmp_path / "big.jsonl", lines, True), specs)
    assert table.column("big") == ["1", "123456789012345678901234567890", "2", "0.1"]


def test_optional_fields_absent_in_some_records_of_a_block() -> None:
    specs = [
        FieldSpec("score", "number", required=False, minimum=0.0),
        FieldSpec("kind", "string", required=False, choices=("x", "y")),
        FieldSpec("tag", "value", required=False),
        FieldSpec("extra", "json", required=False),
    ]
    rows = [
        {"score": 1, "kind": "x", "tag": "t", "extra": [1]},
        {"score": None, "kind": None},
        {},
        {"score": 2.5, "kind": "y", "tag": True, "extra": None},
    ]
    table = load_records(rows, specs)
    score = table.column("score")
    assert score[0] == 1.0 and math.isnan(score[1]) and math.isnan(score[2]) and score[3] == 2.5
    assert table.column("kind") == ["x", None, None, "y"]
    assert table.column("tag") == ["t", None, None, "true"]
    assert table.column("extra") == [[1], None, None, None]
    with pytest.raises(InputError) as info:
        load_records([*rows, {"kind": None}, {"kind": "z"}], specs)
    assert (info.value.line, info.value.field, info.value.value) == (6, "kind", "z")


def test_an_optional_parsed_field_no_record_has_is_all_null_without_parsing() -> None:
    calls: list[Any] = []

    def parser(value: Any) -> Any:
        calls.append(value)
        return value

    specs = [FieldSpec("extra", "json", required=False, parser=parser)]
    table = load_records([{"id": "a"}, {"id": "b", "extra": None}], specs)
    assert table.column("extra") == [None, None] and calls == []
    required = [FieldSpec("extra", "json", parser=parser)]
    with pytest.raises(InputError, match="required field is missing"):
        load_records([{"id": "a"}], required)


@pytest.mark.parametrize("enabled", [True, False])
def test_reading_a_file_leaves_the_garbage_collector_as_it_was(
    tmp_path: Path, enabled: bool
) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [rec("a"), rec("b")])
    bad = write_jsonl(tmp_path / "bad.jsonl", [rec("a"), "{broken"])
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        assert load_records(good, RISK_SPECS).n == 2
        assert gc.isenabled() is enabled
        with pytest.raises(InputError):
            load_records(bad, RISK_SPECS)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


@pytest.mark.parametrize(
    "values",
    [
        [1, 2.5, None, "a", True, -0.0],
        ["逗号, 在里面", "\x00", 'quote " and \\ backslash', "\n"],
        [{"a": [1, {"b": None}]}, (1, "x"), [], {}, "\x00 gap"],
        [float("nan"), float("inf"), 1e300, 5e-324, 2**63 - 1],
    ],
)
def test_json_texts_are_orjson_texts_with_the_prefix(values: list[Any]) -> None:
    assert json_texts(values) == [orjson.dumps(v) for v in values]
    assert json_texts(values, b',"k":') == [b',"k":' + orjson.dumps(v) for v in values]
    assert json_texts([]) == []
