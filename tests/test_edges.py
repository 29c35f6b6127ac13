"""Issue 12, bad input found by fuzzing: each case a clean error (exit 2, the file or option
named, nothing written) or, where the input is valid, a result."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import pingce
from tests.cli_run import run_pingce

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "contract_risk" / "records.jsonl"


def test_a_suite_file_that_is_not_utf8_is_a_suite_error(tmp_path: Path) -> None:
    builtin = Path(pingce.__file__).parent / "suites" / "contract-risk.yaml"
    suite = tmp_path / "gbk.yaml"
    suite.write_bytes(builtin.read_text(encoding="utf-8").encode("gb18030"))
    done = run_pingce("run", str(suite), "--data", str(EXAMPLE), "--out", str(tmp_path / "o"))
    assert done.returncode == 2, done.stderr
    assert str(suite) in done.stderr and "not UTF-8" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "o").exists()


def test_a_csv_field_longer_than_the_csv_module_default_is_read(tmp_path: Path) -> None:
    contract = "甲方应于每月五日前支付货款。" * 20_000  # 280,000 characters > 131,072
    data = tmp_path / "long.csv"
    with open(data, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "gold_level", "pred_level", "contract"])
        writer.writerow(["a", "高", "高", contract])
    result = pingce.evaluate("contract-risk", data, bootstrap=0)
    assert result.n_records == 1 and result.metrics["accuracy"].value == 1.0


def test_an_absurd_bootstrap_count_is_an_option_error(tmp_path: Path) -> None:
    done = run_pingce(
        "run",
        "contract-risk",
        "--data",
        str(EXAMPLE),
        "--bootstrap",
        "1000000000",
        "--out",
        str(tmp_path / "o"),
    )
    assert done.returncode == 2, done.stderr
    assert "'--bootstrap': 1000000000 is not in the range" in done.stderr
    assert not (tmp_path / "o").exists()
    negative = run_pingce("run", "contract-risk", "--data", str(EXAMPLE), "--seed", "-1")
    assert negative.returncode == 2 and "--seed" in negative.stderr


def test_an_integer_beyond_64_bits_in_a_record_is_written(tmp_path: Path) -> None:
    """orjson cannot write integers beyond 64 bits: records.jsonl falls back to the standard
    library for them (before: a TypeError traceback and an empty output folder)."""
    import json

    big = 10**30
    rows = [
        {
            "id": "a",
            "query": "q",
            "gold_fn": [{"name": "f", "arguments": {"n": big}}],
            "pred_fn": [{"name": big, "arguments": {}}],
        },
        {
            "id": "b",
            "query": "q",
            "gold_fn": [{"name": "f", "arguments": {"n": big}}],
            "pred_fn": [{"name": "f", "arguments": {"n": big}}],
        },
    ]
    data = tmp_path / "big.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "o"
    done = run_pingce(
        "run", "function-call", "--data", str(data), "--out", str(out), "--bootstrap", "0",
        "--records-fields", "all",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert written[1]["fields"]["gold_fn"][0]["arguments"]["n"] == big
    assert written[1]["values"]["fn_acc_all"] == 1.0 and written[0]["values"]["fn_acc_all"] == 0.0
    assert "could not be parsed" in written[0]["misses"]["fn_acc_all"]


def test_unparseable_predictions_are_counted_beside_every_metric_they_affect(
    tmp_path: Path,
) -> None:
    records = [
        {"id": "a", "task": "selection", "gold_items": ["x", "y"], "pred_items": 10**30},
        {"id": "b", "task": "selection", "gold_items": ["x", "y"], "pred_items": ["x"]},
        {"id": "c", "task": "selection", "gold_items": ["x"], "pred_items": "x"},
        {"id": "d", "task": "judge", "entity": "e", "gold": True, "pred": "Yes"},
    ]
    result = pingce.evaluate("function-points", records, bootstrap=0)
    for name in ("set_precision", "set_recall", "set_f1", "sem_precision"):
        entry = result.metrics[name]
        assert (entry.unparsed_records, entry.n_records) == (2, 3), name
        assert "2 of 3 predictions did not parse" in entry.note(), name
    # the two unparsed predictions read as empty: precision is over b's one prediction only,
    # recall over the five gold items (b finds one) -- and the note says why precision is high
    assert result.metrics["set_precision"].value == 1.0
    assert result.metrics["set_recall"].value == 1 / 5
    # the judge metrics cover the judge record alone, whose prediction parsed: no note
    judge = result.metrics["judge_accuracy"]
    assert judge.unparsed_records is None and judge.n_records == 1 and judge.note() == ""
    assert result.failures.parse == 2


def test_status_values_and_labels_match_whatever_their_letter_case() -> None:
    """Issue 12: a suite's choices (tcm statuses, function-points tasks), label scales and
    Yes/No answers are read case-insensitively, alike in every suite; a value that is no
    choice at all stays an input error."""
    import json

    import pytest

    examples = Path(pingce.__file__).parent / "examples"

    def read(name: str) -> list[dict[str, object]]:
        text = (examples / name / "records.jsonl").read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line]

    def same(suite: str, rows: list[dict[str, object]], other: list[dict[str, object]]) -> None:
        a = pingce.evaluate(suite, rows, bootstrap=0)
        b = pingce.evaluate(suite, other, bootstrap=0)
        assert {k: m.value for k, m in a.metrics.items()} == {
            k: m.value for k, m in b.metrics.items()
        }, suite

    tcm = read("tcm_dialogue")
    same("tcm-dialogue", tcm, [dict(r, status=f" {str(r['status']).lower()}") for r in tcm])
    points = read("function_points")
    same("function-points", points, [dict(r, task=str(r["task"]).title()) for r in points])
    same(
        "function-points",
        points,
        [dict(r, pred=r["pred"].upper()) if isinstance(r.get("pred"), str) else r for r in points],
    )
    risk = read("contract_risk")
    same("contract-risk", risk, [dict(r, pred_level=str(r["pred_level"]).upper()) for r in risk])
    with pytest.raises(pingce.InputError, match="expected one of"):
        pingce.evaluate("tcm-dialogue", [dict(tcm[0], status="INQUIRY")], bootstrap=0)


def test_field_paths_of_slice_and_stratify_are_checked_naming_the_option(tmp_path: Path) -> None:
    cases = [
        (["--slice", "."], "--slice '.': not a field path"),
        (["--sample", "3", "--stratify", "a..b"], "--stratify 'a..b': not a field path"),
        (["--slice", "nosuch"], "--slice nosuch: no record of"),
        (["--sample", "3", "--stratify", "meta.none"], "--stratify meta.none: no record of"),
    ]
    for args, message in cases:
        done = run_pingce(
            "run", "contract-risk", "--data", str(EXAMPLE), *args, "--out", str(tmp_path / "o")
        )
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr and not (tmp_path / "o").exists()


def test_a_slice_of_a_list_or_object_field_is_refused_naming_a_value_inside(
    tmp_path: Path,
) -> None:
    """Issue 28: --slice on a list or object field made a slice per distinct value named by its
    Python repr (ambiguous_terms=('发冷', '身痛'), gt_features={'nature': '寒'}; 35 slices of
    contract-risk's evidence). A slice is the records of one value: refused, naming the line,
    the value and a path to a value inside, which slices."""
    dialogues = EXAMPLE.parents[1] / "tcm_dialogue" / "records.jsonl"
    cases = [
        ("tcm-dialogue", dialogues, "ambiguous_terms", "a list", "ambiguous_terms[0]",
         '(got ["发冷", "身痛", "怕风"])'),
        ("tcm-dialogue", dialogues, "gt_features", "an object", "gt_features.nature",
         '(got {"nature": "寒", "sweat": "无汗", "deficiency": "实"})'),
        ("contract-risk", EXAMPLE, "evidence", "a list", "evidence[0].clause", "(got ["),
    ]  # fmt: skip
    for suite, data, field, what, inside, value in cases:
        out = tmp_path / field
        done = run_pingce("run", suite, "--data", str(data), "--slice", field, "--out", str(out))
        assert done.returncode == 2 and "Traceback" not in done.stderr and not out.exists()
        line = next(
            i for i, text in enumerate(data.read_text("utf-8").splitlines(), 1) if field in text
        )
        assert (
            f"{data}:{line}: field '{field}': --slice takes one value a record, and this is "
            f"{what}: --slice a value inside it, e.g. --slice {inside}"
        ) in done.stderr, done.stderr
        assert value in done.stderr
        done = run_pingce("run", suite, "--data", str(data), "--slice", inside,
                          "--out", str(tmp_path / "inside"), "--bootstrap", "0")  # fmt: skip
        assert done.returncode == 0, done.stderr
    # a field the suite does not parse is read as one value: the same advice
    rows = [{"id": "a", "gold_level": "高", "pred_level": "高", "tags": ["x", "y"]}]
    with pytest.raises(pingce.InputError, match=r"a path reads one inside it, e.g. tags\[0\]"):
        pingce.evaluate("contract-risk", rows, bootstrap=0, slices=["tags"])


def test_boolean_slices_are_named_as_the_data_has_them() -> None:
    """A flag the suite parses was named True/False (Python's), one it does not parse
    true/false: both true/false now."""
    rows = [
        json.loads(line)
        for line in (EXAMPLE.parents[1] / "tcm_dialogue" / "records.jsonl")
        .read_text("utf-8")
        .splitlines()
    ]
    result = pingce.evaluate("tcm-dialogue", rows, bootstrap=0, slices=["gt_conflict"])
    assert result.slices is not None
    assert sorted(result.slices) == [
        "gt_conflict=(missing)", "gt_conflict=false", "gt_conflict=true"
    ]  # fmt: skip
