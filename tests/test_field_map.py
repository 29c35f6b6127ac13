"""Issue 12, "column mapping": ``--map FIELD=COLUMN`` and a suite's ``fields:`` map read a suite's
fields from the data's own column names; a missing field names the columns that were found and
the closest one; a suite id field that no record has is a note, not an error."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import accuracy_score, f1_score

import pingce
from pingce.errors import OptionError
from tests.cli_run import run_pingce

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
LEVELS = {"high": "高", "medium": "中", "low": "低"}  # the suite's aliases
RENAMES = {"gold_level": "label", "pred_level": "output.level", "contract": "doc"}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def renamed(record: dict[str, Any]) -> dict[str, Any]:
    """A contract-risk record as another team keeps it: other names, the prediction nested."""
    out = {k: v for k, v in record.items() if k not in RENAMES}
    out["label"] = record["gold_level"]
    out["output"] = {"level": record["pred_level"]}
    if "contract" in record:
        out["doc"] = record["contract"]
    return out


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return read_jsonl(EXAMPLES / "contract_risk" / "records.jsonl")


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_map_reads_the_suites_fields_from_other_columns(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    data = write(tmp_path / "theirs.jsonl", [renamed(r) for r in records])
    args = ["--bootstrap", "0", "--similarity", "lexical"]
    maps = [f"--map={name}={column}" for name, column in RENAMES.items()]
    done = run_pingce(
        "run",
        "contract-risk",
        "--data",
        str(data),
        *args,
        *maps,
        "--out",
        str(tmp_path / "o"),
        "--records-fields",
        "all",
    )
    assert done.returncode == 0, done.stderr
    mapped = json.loads((tmp_path / "o" / "results.json").read_text())
    original = pingce.evaluate("contract-risk", records, bootstrap=0, similarity="lexical")
    gold = [r["gold_level"] for r in records]
    pred = [LEVELS.get(r["pred_level"], r["pred_level"]) for r in records]
    assert mapped["metrics"]["accuracy"]["value"] == pytest.approx(accuracy_score(gold, pred))
    assert mapped["metrics"]["macro_f1"]["value"] == pytest.approx(
        f1_score(gold, pred, average="macro")
    )
    for name, entry in original.metrics.items():  # the evidence metrics read the mapped text
        assert mapped["metrics"][name]["value"] == entry.value, name
    assert mapped["data"]["field_map"] == RENAMES
    # records.jsonl keeps the suite's names, so reports read alike whatever the columns were
    first = json.loads((tmp_path / "o" / "records.jsonl").read_text().splitlines()[0])
    assert first["fields"]["pred_level"] == records[0]["pred_level"]


def test_a_suite_fields_map_and_the_option_over_it(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    builtin = Path(pingce.__file__).parent / "suites" / "contract-risk.yaml"
    text = builtin.read_text(encoding="utf-8")
    suite = tmp_path / "ours.yaml"
    suite.write_text(
        text.replace(
            "defaults:", "fields:\n  gold_level: label\n  pred_level: guess\ndefaults:", 1
        ),
        encoding="utf-8",
    )
    rows = [
        {
            "id": r["id"],
            "label": r["gold_level"],
            "guess": r["pred_level"],
            "other": r["gold_level"],
        }
        for r in records
    ]
    by_suite = pingce.evaluate(suite, rows, bootstrap=0)
    gold = [r["gold_level"] for r in records]
    assert by_suite.metrics["accuracy"].value == pytest.approx(
        accuracy_score(gold, [LEVELS.get(r["pred_level"], r["pred_level"]) for r in records])
    )
    # --map is laid over the suite's map: the prediction now comes from 'other' (= gold)
    over = pingce.evaluate(suite, rows, bootstrap=0, field_map={"pred_level": "other"})
    assert over.metrics["accuracy"].value == 1.0
    assert over.data.field_map == {"gold_level": "label", "pred_level": "other"}


def test_a_missing_field_names_the_columns_found_and_the_closest(tmp_path: Path) -> None:
    data = write(tmp_path / "d.jsonl", [{"id": "a", "gold_level": "高", "pred_levle": "中"}])
    done = run_pingce("run", "contract-risk", "--data", str(data), "--out", str(tmp_path / "o"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{data}:1: field 'pred_level': required field is missing" in done.stderr
    assert "(the record has 'id', 'gold_level', 'pred_levle'; did you mean 'pred_levle'?)" in (
        done.stderr
    )
    assert "--map pred_level=COLUMN" in done.stderr
    assert not (tmp_path / "o").exists()
    # in a CSV the header is what the record has; a name inside another one is found too
    csv = tmp_path / "d.csv"
    csv.write_text("id,gold_level,level\na,高,中\n", encoding="utf-8")
    with pytest.raises(pingce.InputError, match=r"did you mean 'level'\?"):
        pingce.evaluate("contract-risk", csv, bootstrap=0)
    # a frame or a Parquet file is read by column: the columns it has are still listed
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"id": ["a"], "gold_level": ["高"], "prediction": ["中"]})
    with pytest.raises(pingce.InputError, match=r"'prediction'.*did you mean 'prediction'\?"):
        pingce.evaluate("contract-risk", frame, bootstrap=0)
    frame.to_parquet(tmp_path / "d.parquet")
    with pytest.raises(pingce.InputError, match=r"did you mean 'prediction'\?"):
        pingce.evaluate("contract-risk", tmp_path / "d.parquet", bootstrap=0)


@pytest.mark.parametrize(
    ("field_map", "message"),
    [
        ({"pred_levl": "x"}, "the suite reads no field 'pred_levl'"),
        ({"pred_levl": "x"}, "did you mean 'pred_level'?"),
        ({"gold_level": "x", "pred_level": "x"}, "would both be read from 'x'"),
        ({"pred_level": "a..b"}, "'a..b' is not a field path"),
    ],
)
def test_bad_maps_are_option_errors(
    records: list[dict[str, Any]], field_map: dict[str, str], message: str
) -> None:
    with pytest.raises(OptionError, match=message.replace("(", r"\(").replace("?", r"\?")):
        pingce.evaluate("contract-risk", records, bootstrap=0, field_map=field_map)


@pytest.mark.parametrize(
    ("value", "message"),
    [("pred_level", "expected FIELD=COLUMN"), ("=x", "expected FIELD=COLUMN")],
)
def test_bad_map_syntax_on_the_command_line(tmp_path: Path, value: str, message: str) -> None:
    data = EXAMPLES / "contract_risk" / "records.jsonl"
    done = run_pingce("run", "contract-risk", "--data", str(data), f"--map={value}")
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_compare_reads_both_sides_through_the_map(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    theirs = write(tmp_path / "c.jsonl", [renamed(r) for r in records])
    done = run_pingce(
        "compare",
        "contract-risk",
        "--data",
        str(theirs),
        "--baseline",
        str(theirs),
        "--bootstrap",
        "0",
        *(f"--map={k}={v}" for k, v in RENAMES.items()),
        "--out",
        str(tmp_path / "c"),
    )
    assert done.returncode == 0, done.stderr
    compared = json.loads((tmp_path / "c" / "comparison.json").read_text())
    assert compared["metrics"]["accuracy"]["delta"] == 0.0


def test_an_id_field_that_no_record_has_is_a_note(records: list[dict[str, Any]]) -> None:
    rows = [{k: v for k, v in r.items() if k != "id"} for r in records]
    result = pingce.evaluate("contract-risk", rows, bootstrap=0)
    assert result.n_records == len(records)
    assert any("has the id field 'id'" in note for note in result.notes), result.notes
    with_ids = pingce.evaluate("contract-risk", records, bootstrap=0)
    assert not any("id field" in note for note in with_ids.notes)


# issue 28: one message of a missing field in every suite, and the --map it suggests is right


def test_a_map_to_a_column_the_data_lacks_suggests_the_suites_name(tmp_path: Path) -> None:
    """Was '--map no_such_col=COLUMN reads it from another column' (the map the wrong way)."""
    data = EXAMPLES / "contract_risk" / "records.jsonl"
    out = tmp_path / "o"
    done = run_pingce("run", "contract-risk", "--data", str(data), "--out", str(out),
                      "--map", "pred_level=no_such_col")  # fmt: skip
    assert done.returncode == 2 and not out.exists()
    assert f"{data}:1: field 'no_such_col': required field is missing (read for pred_level by " \
        "--map pred_level=no_such_col; the record has 'id'" in done.stderr  # fmt: skip
    assert "did you mean 'pred_level'?); --map pred_level=COLUMN reads it from another column" in (
        done.stderr
    )
    assert "--map no_such_col" not in done.stderr


@pytest.mark.parametrize(
    ("target", "hint"),
    [("latency", "the records have 'latency_sec' itself: leave out --map latency_sec"),
     ("latencysec", "the records have 'latency_sec' itself")],
)  # fmt: skip
def test_a_map_of_an_optional_field_to_a_column_no_record_has_is_an_error(
    tmp_path: Path, target: str, hint: str
) -> None:
    """Was exit 0 with the latency metrics null ("no record has latency_sec") and nothing saying
    that the map read nothing: an optional field mapped to a typo."""
    data = EXAMPLES / "contract_risk" / "records.jsonl"
    out = tmp_path / "o"
    done = run_pingce("run", "contract-risk", "--data", str(data), "--out", str(out),
                      "--map", f"latency_sec={target}", "--no-store")  # fmt: skip
    assert done.returncode == 2 and not out.exists(), done.stderr
    assert f"--map latency_sec={target}: no record of {data} has a field {target!r} (the " \
        "records have 'id', 'contract_type'" in done.stderr  # fmt: skip
    assert hint in done.stderr
    records = read_jsonl(data)
    for record in records[1:]:  # a column that some record has is read
        record["took"] = record.pop("latency_sec", None)
    sparse = tmp_path / "sparse.jsonl"
    sparse.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    done = run_pingce("run", "contract-risk", "--data", str(sparse), "--out", str(tmp_path / "s"),
                      "--map", "latency_sec=took", "--no-store", "--bootstrap", "0")  # fmt: skip
    assert done.returncode == 0, done.stderr


def renamed_example(folder: str, old: str, new: str) -> list[dict[str, Any]]:
    return [
        {new if key == old else key: value for key, value in record.items()}
        for record in read_jsonl(EXAMPLES / folder / "records.jsonl")
    ]


@pytest.mark.parametrize(
    ("suite", "folder", "field", "column", "need"),
    [
        ("contract-risk", "contract_risk", "pred_level", "prediction", ""),
        ("function-points", "function_points", "pred", "prediction",
         "task 'judge' records need it; "),
        ("tool-use", "tool_use", "gold", "expected", "a record needs its gold calls"),
        ("tool-use", "tool_use", "functions", "tools", "every record needs the functions"),
        ("function-call", "function_call", "gold_fn", "expected", ""),
        ("tcm-dialogue", "tcm_dialogue", "turn", "turn_index", ""),
    ],
)  # fmt: skip
def test_a_missing_field_has_one_message_in_every_suite(
    tmp_path: Path, suite: str, folder: str, field: str, column: str, need: str
) -> None:
    """The fields the record has, the closest (by spelling, or a word of the same role: gold /
    expected, functions / tools) and the --map that reads it. function-points said 'required
    for task 'judge' records: field is missing', tool-use 'no gold calls' (neither listed the
    fields nor suggested a map)."""
    rows = renamed_example(folder, field, column)
    data = write(tmp_path / "d.jsonl", rows)
    line = next(i for i, row in enumerate(rows, 1) if column in row)
    out = tmp_path / "o"
    done = run_pingce("run", suite, "--data", str(data), "--out", str(out), "--bootstrap", "0")
    assert done.returncode == 2 and "Traceback" not in done.stderr and not out.exists()
    assert f"{data}:{line}: field '{field}': required field is missing ({need}" in done.stderr
    assert re.search(r"the records? ha(s|ve) '[^;]*'" + column + "'", done.stderr)
    assert f"did you mean '{column}'?); --map {field}=COLUMN reads it from another column" in (
        done.stderr
    )
    done = run_pingce("run", suite, "--data", str(data), "--out", str(out), "--bootstrap", "0",
                      "--map", f"{field}={column}")  # fmt: skip
    assert done.returncode == 0, done.stderr  # the map it suggests reads it


def test_a_gold_that_is_a_whole_assistant_message_suggests_its_tool_calls(
    tmp_path: Path,
) -> None:
    rows = read_jsonl(EXAMPLES / "function_call" / "records.jsonl")
    for row in rows:
        row["expected"] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"type": "function", "function": {"name": call["name"],
                 "arguments": json.dumps(call["arguments"], ensure_ascii=False)}}
                for call in row.pop("gold_fn")
            ],
        }  # fmt: skip
    data = write(tmp_path / "messages.jsonl", rows)
    with pytest.raises(pingce.InputError) as info:
        pingce.evaluate("function-call", data, bootstrap=0, field_map={"gold_fn": "expected"})
    assert (info.value.line, info.value.field) == (1, "expected")
    assert "got a whole assistant message; --map gold_fn=expected.tool_calls reads them" in str(
        info.value
    )
    mapped = pingce.evaluate(
        "function-call", data, bootstrap=0, field_map={"gold_fn": "expected.tool_calls"}
    )
    plain = pingce.evaluate("function-call", EXAMPLES / "function_call" / "records.jsonl",
                            bootstrap=0)  # fmt: skip
    assert {k: m.value for k, m in mapped.metrics.items()} == {
        k: m.value for k, m in plain.metrics.items()
    }
