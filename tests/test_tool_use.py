"""The built-in suite tool-use (issue 15): tool calls judged by BFCL's AST checker's rules.

* hand-written cases from BFCL's documented behaviour, one rule at a time: each leniency
  (string standardisation, integer for float, ``""`` = may be omitted, dotted names) and each
  error type on its own, with ``strict: true`` turning the leniencies off;
* schemas in both formats (BFCL docs, OpenAI tools), Chinese values, abstention, every answer
  shape;
* parallel calls: the optimal pairing against BFCL's greedy one (``bfcl_compat``) on a
  reordering that greedy judges wrong;
* seeded random records against ``tests/tool_reference.py``, a checker written from BFCL's
  rules without pingce's code;
* BFCL's own files (``function``, ``ground_truth``) with ``--gold``; ``pingce.evaluate``, the
  command line and the bundled examples.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

import pingce
from pingce.errors import InputError

from .cli_run import run_pingce
from .tool_reference import check_record as reference_check

ROOT = Path(__file__).resolve().parents[1]

TRIANGLE = {
    "name": "calculate_triangle_area",
    "description": "Area of a triangle.",
    "parameters": {
        "type": "dict",
        "properties": {
            "base": {"type": "integer"},
            "height": {"type": "integer"},
            "unit": {"type": "string"},
        },
        "required": ["base", "height"],
    },
}
TRIANGLE_GOLD = [{"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}]

FLOATS = {
    "name": "math.mean",
    "parameters": {
        "type": "dict",
        "properties": {
            "numbers": {"type": "array", "items": {"type": "float"}},
            "weight": {"type": "float"},
            "options": {"type": "dict"},
            "flag": {"type": "boolean"},
        },
        "required": ["numbers"],
    },
}


def verdict(
    functions: list[Any], gold: list[Any], pred: Any, **options: Any
) -> tuple[float, str | None]:
    """tool_call_accuracy of one record and its miss reason."""
    record = {"id": "r", "functions": functions, "gold": gold, "pred": pred}
    suite = "tool-use"
    if options:
        suite_spec = _suite(**options)
        result = pingce.evaluate(suite_spec, [record], bootstrap=0)
    else:
        result = pingce.evaluate(suite, [record], bootstrap=0)
    (row,) = result.record_values()
    return row["values"]["tool_call_accuracy"], row.get("misses", {}).get("tool_call_accuracy")


def _suite(**defaults: Any) -> Any:
    import yaml

    from pingce.suites import SuiteSpec

    text = (ROOT / "src/pingce/suites/tool-use.yaml").read_text(encoding="utf-8")
    spec = yaml.safe_load(text)
    spec["defaults"].update(defaults)
    return SuiteSpec.model_validate(spec)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


# -- one rule at a time -------------------------------------------------------------------------


def test_omitted_optional_argument_is_right_when_gold_accepts_empty() -> None:
    assert verdict(
        [TRIANGLE], TRIANGLE_GOLD, [call("calculate_triangle_area", base=10, height=5)]
    ) == (
        1.0,
        None,
    )


def test_value_not_among_acceptable_values_reason() -> None:
    value, reason = verdict(
        [TRIANGLE], TRIANGLE_GOLD, [call("calculate_triangle_area", base=10, height=5, unit="cm")]
    )
    assert value == 0.0
    assert reason == "wrong_value: param 'unit': value 'cm' not in ['units', '']"


@pytest.mark.parametrize("said", ["Units", " units", "UNITS.", "u-n_i*t^s", "units,"])
def test_strings_are_standardised_unless_strict(said: str) -> None:
    pred = [call("calculate_triangle_area", base=10, height=5, unit=said)]
    assert verdict([TRIANGLE], TRIANGLE_GOLD, pred)[0] == 1.0
    value, reason = verdict([TRIANGLE], TRIANGLE_GOLD, pred, strict=True)
    assert value == 0.0 and reason is not None and reason.startswith("wrong_value")


def test_integer_for_float_but_not_float_for_integer() -> None:
    gold = [{"math.mean": {"numbers": [[1.5]], "weight": [2.0], "options": [""], "flag": [""]}}]
    assert verdict([FLOATS], gold, [call("math.mean", numbers=[1.5], weight=2)])[0] == 1.0
    value, reason = verdict(
        [FLOATS], gold, [call("math.mean", numbers=[1.5], weight=2)], strict=True
    )
    assert value == 0.0 and reason is not None and reason.startswith("type_error")
    value, reason = verdict(
        [TRIANGLE], TRIANGLE_GOLD, [call("calculate_triangle_area", base=10.0, height=5)]
    )
    assert value == 0.0
    assert reason == "type_error: param 'base': expected integer, got float 10.0"


def test_dotted_names_may_be_underscored_unless_strict() -> None:
    gold = [{"math.mean": {"numbers": [[1.5, 2.5]]}}]
    assert verdict([FLOATS], gold, [call("math_mean", numbers=[1.5, 2.5])])[0] == 1.0
    value, reason = verdict([FLOATS], gold, [call("math_mean", numbers=[1.5, 2.5])], strict=True)
    assert value == 0.0 and reason is not None and reason.startswith("wrong_name")


@pytest.mark.parametrize(
    ("pred", "error"),
    [
        ([call("calculate_triangle_area", base=10)], "missing_required"),
        ([call("calculate_triangle_area", base=10, height=5, colour="red")], "unexpected_param"),
        ([call("calculate_triangle_area", base="10", height=5)], "type_error"),
        ([call("calculate_triangle_area", base=10, height=6)], "wrong_value"),
        ([call("area", base=10, height=5)], "wrong_name"),
        ([], "no_call"),
        ("The area is 25.", "no_call"),
        ([call("calculate_triangle_area", base=10, height=5)] * 2, "wrong_count"),
        ('{"name": "calculate_triangle_area", "arguments": {', "parse_error"),
    ],
)
def test_each_error_type_alone(pred: Any, error: str) -> None:
    value, reason = verdict([TRIANGLE], TRIANGLE_GOLD, pred)
    assert value == 0.0
    assert reason is not None and reason.split(":")[0] == error


def test_missing_optional_and_nested_type_error() -> None:
    gold = [{"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["cm"]}}]
    value, reason = verdict([TRIANGLE], gold, [call("calculate_triangle_area", base=10, height=5)])
    assert (value, reason) == (
        0.0,
        "missing_optional: param 'unit': omitted, but gold accepts only ['cm']",
    )
    gold = [{"math.mean": {"numbers": [[1.5, 2.5]]}}]
    value, reason = verdict([FLOATS], gold, [call("math.mean", numbers=[1.5, "2.5"])])
    assert value == 0.0 and reason is not None and reason.startswith("nested_type_error")


def test_unknown_to_gold_is_unexpected_even_if_the_schema_has_it() -> None:
    gold = [{"math.mean": {"numbers": [[1.5]]}}]
    value, reason = verdict([FLOATS], gold, [call("math.mean", numbers=[1.5], flag=True)])
    assert (
        value == 0.0
        and reason == "unexpected_param: param 'flag': not a parameter of the gold call"
    )


def test_dict_and_list_values_compared_after_standardisation() -> None:
    gold = [
        {"math.mean": {"numbers": [[1.5]], "options": [{"mode": ["Fast", "quick"], "n": [1, ""]}]}}
    ]
    assert (
        verdict([FLOATS], gold, [call("math.mean", numbers=[1.5], options={"mode": "fast"})])[0]
        == 1.0
    )
    value, _ = verdict([FLOATS], gold, [call("math.mean", numbers=[1.5], options={"mode": "slow"})])
    assert value == 0.0
    value, _ = verdict([FLOATS], gold, [call("math.mean", numbers=[1.5], options={"x": 1})])
    assert value == 0.0


def test_irrelevance_any_call_is_wrong_and_abstention_right() -> None:
    assert verdict([TRIANGLE], [], "我不能回答这个问题。") == (1.0, None)
    assert verdict([TRIANGLE], [], []) == (1.0, None)
    value, reason = verdict([TRIANGLE], [], [call("calculate_triangle_area", base=1, height=1)])
    assert (
        value == 0.0 and reason == "unexpected_call: no call expected, got calculate_triangle_area"
    )


def test_openai_tools_schema_and_chinese_values() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "订票",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "城市": {"type": "string"},
                        "张数": {"type": "integer"},
                        "价格": {"type": "number"},
                    },
                    "required": ["城市"],
                },
            },
        }
    ]
    gold = [{"订票": {"城市": ["北京", "北京市"], "张数": [2, ""], "价格": [99.5, ""]}}]
    assert verdict(tools, gold, [call("订票", 城市="北京市", 张数=2)])[0] == 1.0
    assert verdict(tools, gold, [call("订票", 城市="北 京", 价格=99.5)])[0] == 1.0
    value, reason = verdict(tools, gold, [call("订票", 城市="上海")])
    assert (
        value == 0.0
        and reason == "wrong_value: param '城市': value '上海' not in ['北京', '北京市']"
    )


@pytest.mark.parametrize(
    "pred",
    [
        [{"calculate_triangle_area": {"base": 10, "height": 5}}],  # BFCL's decoded shape
        [call("calculate_triangle_area", base=10, height=5)],
        [{"name": "calculate_triangle_area", "arguments": '{"base": 10, "height": 5}'}],
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c",
                    "type": "function",
                    "function": {
                        "name": "calculate_triangle_area",
                        "arguments": '{"base": 10, "height": 5}',
                    },
                }
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t",
                    "name": "calculate_triangle_area",
                    "input": {"base": 10, "height": 5},
                }
            ],
        },
        '<tool_call>{"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}'
        "</tool_call>",
    ],
)
def test_every_answer_shape(pred: Any) -> None:
    assert verdict([TRIANGLE], TRIANGLE_GOLD, pred) == (1.0, None)


def test_plain_gold_calls_have_one_acceptable_value_each() -> None:
    gold = [call("calculate_triangle_area", base=10, height=5)]
    assert verdict([TRIANGLE], gold, [call("calculate_triangle_area", base=10, height=5)])[0] == 1.0
    value, reason = verdict(
        [TRIANGLE], gold, [call("calculate_triangle_area", base=10, height=5, unit="units")]
    )
    assert value == 0.0 and reason is not None and reason.startswith("unexpected_param")


# -- parallel calls -----------------------------------------------------------------------------

WEATHER = {
    "name": "get_weather",
    "parameters": {
        "type": "dict",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
}


def test_parallel_calls_in_any_order() -> None:
    gold = [
        {"get_weather": {"city": ["北京"], "days": [""]}},
        {"get_weather": {"city": ["上海"], "days": [""]}},
    ]
    pred = [call("get_weather", city="上海"), call("get_weather", city="北京")]
    assert verdict([WEATHER], gold, pred) == (1.0, None)
    assert verdict([WEATHER], gold, pred, bfcl_compat=True) == (1.0, None)


def test_greedy_pairing_misses_a_pairing_that_exists() -> None:
    """Gold call 0 accepts 3 days or none, gold call 1 only none; the prediction's first call
    (no days) fits both, its second (3 days) only gold call 0. BFCL gives the first call to gold
    call 0 and then finds nothing for gold call 1; a perfect pairing exists."""
    gold = [
        {"get_weather": {"city": ["北京"], "days": [3, ""]}},
        {"get_weather": {"city": ["北京"], "days": [""]}},
    ]
    pred = [call("get_weather", city="北京"), call("get_weather", city="北京", days=3)]
    assert verdict([WEATHER], gold, pred) == (1.0, None)
    value, reason = verdict([WEATHER], gold, pred, bfcl_compat=True)
    assert value == 0.0 and reason is not None
    assert "gold call 1 (get_weather) matches no predicted call" in reason
    docs, outputs = (
        [WEATHER],
        [{"get_weather": {"city": "北京"}}, {"get_weather": {"city": "北京", "days": 3}}],
    )
    assert reference_check(docs, outputs, gold, greedy=True)["valid"] is False
    assert reference_check(docs, outputs, gold)["valid"] is True


def test_soft_metrics_by_formula() -> None:
    """tool_name_accuracy: names as a multiset; tool_arg_f1 = 2TP/(2TP+FP+FN) summed."""
    records = [
        {  # TP 2 (base, height), FP 1 (unit 'cm'), FN 0
            "id": "a",
            "functions": [TRIANGLE],
            "gold": TRIANGLE_GOLD,
            "pred": [call("calculate_triangle_area", base=10, height=5, unit="cm")],
        },
        {  # wrong name: TP 0, FP 2, FN 2
            "id": "b",
            "functions": [TRIANGLE],
            "gold": TRIANGLE_GOLD,
            "pred": [call("area", base=10, height=5)],
        },
        {"id": "c", "functions": [TRIANGLE], "gold": [], "pred": []},  # no arguments at all
    ]
    result = pingce.evaluate("tool-use", records, bootstrap=0)
    assert result.metrics["tool_call_accuracy"].value == pytest.approx(1 / 3)
    assert result.metrics["tool_name_accuracy"].value == pytest.approx(2 / 3)
    assert result.metrics["tool_arg_f1"].value == pytest.approx(4 / (4 + 3 + 2))
    rows = {row["id"]: row["values"] for row in result.record_values()}
    assert rows["a"]["tool_arg_f1"] == pytest.approx(4 / 5)
    assert rows["c"]["tool_arg_f1"] is None
    table = result.tables["tool_errors"]
    counts = dict(zip(table["labels"], table["counts"], strict=True))
    assert counts["correct"] == 1 and counts["wrong_value"] == 1 and counts["wrong_name"] == 1


# -- inputs ---------------------------------------------------------------------------------------


def test_gold_naming_an_unknown_function_is_an_input_error() -> None:
    record = {"id": "x", "functions": [TRIANGLE], "gold": [{"nope": {}}], "pred": []}
    with pytest.raises(
        InputError, match="'nope', which is not among the record's functions"
    ) as info:
        pingce.evaluate("tool-use", [record], bootstrap=0)
    assert info.value.line == 1 and info.value.field == "gold"


def test_a_record_without_functions_or_gold_is_an_input_error(tmp_path: Path) -> None:
    """Under either name (pingce's or BFCL's), every record needs its functions, and gold
    unless its category is irrelevance; the error names the file, the line and the field."""
    path = tmp_path / "r.jsonl"
    ok = {"id": "a", "function": [TRIANGLE], "ground_truth": [], "pred": []}
    lines = [ok, {"id": "b", "gold": [], "pred": []}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(InputError, match="needs the functions offered") as info:
        pingce.evaluate("tool-use", path, bootstrap=0)
    assert (info.value.source, info.value.line, info.value.field) == (str(path), 2, "functions")
    lines = [ok, {"id": "b", "functions": [TRIANGLE], "pred": []}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(InputError, match="needs its gold calls") as info:
        pingce.evaluate("tool-use", path, bootstrap=0)
    assert (info.value.line, info.value.field) == (2, "gold")
    lines[1]["category"] = "irrelevance"  # right answer: no call
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = pingce.evaluate("tool-use", path, bootstrap=0)
    assert result.metrics["tool_call_accuracy"].value == 1.0


def test_bad_schema_type_names_the_value(tmp_path: Path) -> None:
    bad = copy.deepcopy(TRIANGLE)
    bad["parameters"]["properties"]["base"]["type"] = "int"
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"id": "x", "functions": [bad], "gold": [], "pred": []}) + "\n")
    with pytest.raises(InputError, match="'int'") as info:
        pingce.evaluate("tool-use", path, bootstrap=0)
    assert info.value.line == 1 and info.value.field == "functions"


def test_bfcl_files_with_gold_join_and_field_aliases(tmp_path: Path) -> None:
    """BFCL's data (``function``; JSON Lines despite .json) with a prediction per record, and
    its possible-answer file (``ground_truth``) joined by id; category inferred and sliced."""
    data = tmp_path / "BFCL_v4_simple_python.json"
    answers = tmp_path / "possible_answer.json"
    questions = [
        {
            "id": "simple_python_0",
            "question": [[{"role": "user", "content": "area?"}]],
            "function": [TRIANGLE],
            "pred": [{"calculate_triangle_area": {"base": 10, "height": 5}}],
        },
        {
            "id": "simple_python_1",
            "question": [[{"role": "user", "content": "area?"}]],
            "function": [TRIANGLE],
            "pred": [{"calculate_triangle_area": {"base": 10, "height": 5, "unit": "m"}}],
        },
    ]
    data.write_text("".join(json.dumps(q) + "\n" for q in questions))
    answers.write_text(
        "".join(
            json.dumps({"id": q["id"], "ground_truth": TRIANGLE_GOLD}) + "\n" for q in questions
        )
    )
    done = run_pingce(
        "run",
        "tool-use",
        "--data",
        str(data),
        "--gold",
        str(answers),
        "--records-fields",
        "all",
        "--out",
        str(tmp_path / "o"),
        "--bootstrap",
        "0",
        "--slice",
        "category",
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["metrics"]["tool_call_accuracy"]["value"] == 0.5
    assert "simple" in json.dumps(results["slices"])
    # records.jsonl repeats BFCL's gold (read under its own name) but neither the schemas
    # (context, the same on most lines) nor pingce's field names that no record has
    rows = [json.loads(x) for x in (tmp_path / "o" / "records.jsonl").read_text().splitlines()]
    assert [sorted(row["fields"]) for row in rows] == [["category", "ground_truth", "pred"]] * 2
    assert rows[0]["fields"]["ground_truth"][0]["name"] == "calculate_triangle_area"


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_an_integer_beyond_64_bits_in_a_function_doc_is_read(tmp_path: Path, suffix: str) -> None:
    """Issue 28: orjson cannot write an integer of 2**64 or more, and parse_functions keyed
    the schemas by orjson's text (a traceback). Such a schema is read (the json module's text
    keys it), and so are such values in the gold and the prediction."""
    big = 2**64
    functions = copy.deepcopy([TRIANGLE])
    functions[0]["parameters"]["properties"]["base"]["maximum"] = big
    records = [
        {"id": "ok", "functions": functions, "gold": TRIANGLE_GOLD,
         "pred": [call("calculate_triangle_area", base=10, height=5)]},
        {"id": "big", "functions": functions,
         "gold": [{"calculate_triangle_area": {"base": [big + 1], "height": [5]}}],
         "pred": [call("calculate_triangle_area", base=big, height=5)]},
    ]  # fmt: skip
    data = tmp_path / f"big{suffix}"
    if suffix == ".jsonl":
        data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        data.write_text(json.dumps(records), encoding="utf-8")
    assert str(big) in data.read_text(encoding="utf-8")
    out = tmp_path / "o"
    done = run_pingce("run", "tool-use", "--data", str(data), "--out", str(out), "--bootstrap",
                      "0", "--no-store", "--records-fields", "all")  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = {}
    for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows[row["id"]] = row
    assert rows["ok"]["values"]["tool_call_accuracy"] == 1.0
    assert rows["big"]["values"]["tool_call_accuracy"] == 0.0
    reason = rows["big"]["misses"]["tool_call_accuracy"]
    assert reason.startswith("wrong_value") and str(big) in reason and str(big + 1) in reason
    assert rows["big"]["fields"]["pred"][0]["arguments"]["base"] == big  # exact, not a float


def test_the_bundled_examples_from_the_command_line(tmp_path: Path) -> None:
    done = run_pingce(
        "run",
        "tool-use",
        "--data",
        "examples/tool_use/records.jsonl",
        "--records-fields",
        "all",
        "--out",
        str(tmp_path / "o"),
        "--bootstrap",
        "0",
        "--slice",
        "category",
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    rows = [
        json.loads(line) for line in (tmp_path / "o" / "records.jsonl").read_text().splitlines()
    ]
    categories = {row["fields"]["category"] for row in rows}
    assert all(sorted(row["fields"]) == ["category", "gold", "pred"] for row in rows)
    assert categories == {"simple", "multiple", "parallel", "parallel_multiple", "irrelevance"}
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    table = results["tables"]["tool_errors"]
    assert all(count > 0 for count in table["counts"])  # every error type has an example
    report = (tmp_path / "o" / "report.md").read_text()
    assert "tool_errors" in report and "missing_optional" in report


# -- against the independent reference, on seeded random records ---------------------------------

SCHEMAS = [
    TRIANGLE,
    FLOATS,
    WEATHER,
    {
        "type": "function",
        "function": {
            "name": "plan.trip",
            "parameters": {
                "type": "object",
                "properties": {
                    "stops": {"type": "array", "items": {"type": "string"}},
                    "budget": {"type": "number"},
                    "rooms": {"type": "array", "items": {"type": "dict"}},
                },
                "required": ["stops"],
            },
        },
    },
]
VALUES: dict[str, list[Any]] = {
    "string": ["北京", "Beijing", "beijing ", "New-York", "units", "cm", 3],
    "integer": [1, 5, 10, 5.0, "5", True],
    "float": [1.5, 2, 2.0, "2", 0.5],
    "number": [1.5, 2, 2.0, "x"],
    "boolean": [True, False, 1, "true"],
    "dict": [{"mode": "fast"}, {"mode": "Fast"}, {"x": 1}, "fast"],
    "array": [["北京", "上海"], ["beijing", "上海"], [1.5, 2.5], [1, 2], [1.5, "2"], [], "a"],
}


def _param_specs(doc: dict[str, Any]) -> tuple[str, dict[str, Any], list[str]]:
    inner = doc.get("function", doc)
    return inner["name"], inner["parameters"]["properties"], inner["parameters"].get("required", [])


def _random_value(rng: random.Random, spec: dict[str, Any]) -> Any:
    kind = spec["type"]
    if kind == "array" and spec.get("items", {}).get("type") == "dict":
        return rng.choice([[{"n": 1}], [{"n": 2}, {"n": 1}], [{"N": "a"}], []])
    return copy.deepcopy(rng.choice(VALUES[kind]))


def _random_case(rng: random.Random) -> tuple[list[Any], list[Any], list[Any]]:
    docs = rng.sample(SCHEMAS, rng.randint(1, 3))
    gold: list[Any] = []
    pred: list[Any] = []
    for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3])):
        doc = rng.choice(docs)
        name, props, required = _param_specs(doc)
        answers: dict[str, list[Any]] = {}
        args: dict[str, Any] = {}
        for param, spec in props.items():
            if param in required or rng.random() < 0.5:
                options = [_random_value(rng, spec) for _ in range(rng.randint(1, 2))]
                if spec["type"] == "array" and spec.get("items", {}).get("type") == "dict":
                    options = [
                        [{"n": [1, ""], "N": ["A", ""]}] * len(o) if isinstance(o, list) else o
                        for o in options
                    ]
                if spec["type"] == "dict":
                    options = [
                        {"mode": ["fast", "quick"], "x": [1, ""]} if isinstance(o, dict) else o
                        for o in options
                    ]
                if param not in required and rng.random() < 0.5:
                    options.append("")
                answers[param] = options
                choice = rng.random()
                if choice < 0.6:
                    pick = rng.choice(options)
                    if pick != "":
                        args[param] = (
                            _random_value(rng, spec)
                            if isinstance(pick, dict | list) and rng.random() < 0.5
                            else pick
                        )
                elif choice < 0.9:
                    args[param] = _random_value(rng, spec)
            elif rng.random() < 0.1:
                args[param] = _random_value(rng, spec)
        gold.append({name: answers})
        out_name = name.replace(".", "_") if rng.random() < 0.2 else name
        if rng.random() < 0.05:
            out_name = _param_specs(rng.choice(SCHEMAS))[0]
        pred.append({out_name: args})
    rng.shuffle(pred)
    if rng.random() < 0.1:
        pred = pred[:-1]
    return docs, gold, pred


@pytest.mark.parametrize("options", [{}, {"strict": True}, {"bfcl_compat": True}])
def test_verdicts_equal_the_reference_on_random_records(options: dict[str, Any]) -> None:
    rng = random.Random(15)
    records = []
    expected = []
    for i in range(1500):
        docs, gold, pred = _random_case(rng)
        records.append({"id": str(i), "functions": docs, "gold": gold, "pred": pred})
        found = reference_check(
            docs,
            pred,
            gold,
            strict=options.get("strict", False),
            greedy=options.get("bfcl_compat", False),
        )
        expected.append(1.0 if found["valid"] else 0.0)
    result = pingce.evaluate(_suite(**options), records, bootstrap=0)
    got = [row["values"]["tool_call_accuracy"] for row in result.record_values()]
    wrong = [i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b]
    assert not wrong, [records[i] for i in wrong[:3]]
    assert 0.15 < sum(expected) / len(expected) < 0.85  # both verdicts are exercised


@pytest.mark.parametrize("options", [{}, {"strict": True}, {"bfcl_compat": True}])
def test_calls_paired_one_to_one_judged_as_the_pair_matrix_judges_them(
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several calls whose pairs of one function share no call skip the pair matrix and the
    pairing search (issue 32): verdict, reason, names and argument counts are the matrix's."""
    from pingce.metrics import tools

    rng = random.Random(32)
    items = []
    for _ in range(3000):
        docs, gold, pred = _random_case(rng)
        items.append(
            (
                tools.parse_functions(docs),
                tools.parse_gold(gold),
                tools.parse_prediction(pred),
            )
        )
    strict, compat = options.get("strict", False), options.get("bfcl_compat", False)

    def verdicts() -> list[Any]:
        rules = tools._Rules(strict)
        return [tools.check_record(*item, rules, compat) for item in items]

    calls: list[Any] = []
    partners = tools._partners
    monkeypatch.setattr(tools, "_partners", lambda names: calls.append(names) or partners(names))
    shortcut = verdicts()
    assert sum(partners(names) is not None for names in calls) > 200  # the shortcut is taken
    monkeypatch.setattr(tools, "_partners", lambda names: None)
    assert shortcut == verdicts()
