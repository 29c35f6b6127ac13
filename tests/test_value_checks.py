"""Issue 28: every boolean and number a suite file or an option gives goes through one check
(``pingce._constraints.check_value``) and every number has a declared range: quoted booleans,
numbers out of range and the wrong type in an option block are errors naming the file, the key
and the value (exit 2), never a silent reading or a traceback; the command line declares the
same ranges as click ranges."""

from __future__ import annotations

import json
import re
import types
import typing
from importlib import resources
from pathlib import Path
from typing import Any

import click
import pytest

import pingce
from pingce._constraints import Range
from pingce.errors import OptionError, SuiteError
from pingce.labels import LabelScale
from pingce.metrics import create_metric, create_table, metric_registry, table_registry
from pingce.metrics.registry import REQUIRED
from pingce.suites import load_suite

from .cli_run import run_pingce

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def builtin_text(name: str) -> str:
    return (resources.files("pingce.suites") / f"{name}.yaml").read_text(encoding="utf-8")


def user_suite(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A copy of a built-in suite with one line of its text replaced."""
    text = builtin_text(name)
    assert old in text, old
    path = tmp_path / f"{name}-edited.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def failed_run(tmp_path: Path, suite: Path | str, data: Path, *args: str) -> str:
    """``pingce run``: exit 2, nothing in --out, no traceback; its stderr."""
    out = tmp_path / "out"
    done = run_pingce(
        "run", str(suite), "--data", str(data), "--out", str(out), "--bootstrap", "0",
        "--no-store", *args,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert not out.exists()
    return done.stderr


# ------------------------------------------------------------------------- quoted booleans


QUOTED_BOOLEANS = [
    # (suite, line in the built-in file, line written instead, key named, words)
    ("tool-use", "  strict: false ", '  strict: "false" ', "defaults.strict", ["strict"]),
    ("tool-use", "  bfcl_compat: false ", '  bfcl_compat: "false" ', "defaults.bfcl_compat",
     ["bfcl_compat"]),
    ("tool-use", "  tool_call_accuracy: {}", '  tool_call_accuracy: {bfcl_compat: "false"}',
     "metrics.tool_call_accuracy", ["bfcl_compat"]),
    ("function-call", "  normalize: null ", '  normalize: {casefold: "false"} ',
     "defaults.normalize", ["normalize.casefold"]),
    ("function-call", "  normalize: null ", '  normalize: {strip: "no"} ', "defaults.normalize",
     ["normalize.strip"]),
    ("function-call-hf", "  rouge-1: {metric: hf_rouge-1}",
     '  rouge-1: {metric: hf_rouge-1, normalize: {numeric_strings: "yes"}}', "metrics.rouge-1",
     ["normalize.numeric_strings"]),
    ("function-call-hf", "  use_stemmer: false ", '  use_stemmer: "false" ',
     "defaults.use_stemmer", ["use_stemmer"]),
    ("contract-risk", "  check_details: true ", '  check_details: "false" ',
     "defaults.check_details", ["check_details"]),
    ("contract-risk", "  case_insensitive: true", '  case_insensitive: "false"',
     "labels.case_insensitive", ["case_insensitive"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("suite", "old", "new", "key", "words"),
    QUOTED_BOOLEANS,
    ids=[f"{case[0]}:{case[3]}" for case in QUOTED_BOOLEANS],
)
def test_a_quoted_boolean_is_an_error_naming_the_key(
    tmp_path: Path, suite: str, old: str, new: str, key: str, words: list[str]
) -> None:
    # before: "false" was true (strict, bfcl_compat, casefold, strip: Python's truth of a text)
    path = user_suite(tmp_path, suite, old, new)
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    message = str(info.value)
    assert info.value.key == key, message
    assert re.match(rf"{re.escape(str(path))}:\d+: key '{re.escape(key)}': ", message)
    assert "must be true or false" in message and "without quotes" in message
    for word in words:
        assert word in message


def test_a_quoted_boolean_stops_the_run_with_exit_2(tmp_path: Path) -> None:
    path = user_suite(tmp_path, "tool-use", "  strict: false ", '  strict: "false" ')
    stderr = failed_run(tmp_path, path, EXAMPLES / "tool_use" / "records.jsonl")
    assert (
        re.search(rf"{re.escape(str(path))}:\d+: key 'defaults.strict': ", stderr)
        and '"false"' in stderr
    )


def _dummy_arguments(info: Any) -> dict[str, Any]:
    """The arguments a metric needs besides the one tested (its scale, fbeta's beta)."""
    out: dict[str, Any] = {}
    if "scale" in info.parameters:
        out["scale"] = LabelScale.from_spec(["高", "中", "低"], {}, True)
    for name, default in info.parameters.items():
        if default is REQUIRED and name not in out:
            out[name] = 1.0
    return out


def _hints(info: Any) -> dict[str, Any]:
    return typing.get_type_hints(info.factory, include_extras=True)


def _admits(hint: Any, kind: type) -> bool:
    """Whether a type hint is, or has as a member, ``kind`` (through Annotated and unions, not
    inside lists or mappings)."""
    if hint is kind:
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _admits(typing.get_args(hint)[0], kind)
    if origin in (typing.Union, types.UnionType):
        return any(_admits(arg, kind) for arg in typing.get_args(hint))
    return False


def _every_argument() -> list[tuple[str, str, Any, Any]]:
    """(kind, name, argument, hint) of every registered metric and table."""
    out = []
    for kind, registry in (("metric", metric_registry()), ("table", table_registry())):
        for name, info in registry.items():
            hints = _hints(info)
            out += [(kind, name, param, hints[param]) for param in info.parameters]
    return out


def test_every_boolean_argument_of_every_metric_refuses_the_text_false() -> None:
    checked = 0
    for kind, name, param, hint in _every_argument():
        if not _admits(hint, bool):
            continue
        info = (metric_registry() if kind == "metric" else table_registry())[name]
        create = create_metric if kind == "metric" else create_table
        for text in ("false", "no", "0"):
            with pytest.raises(SuiteError, match=f"{param} must be") as caught:
                create(name, **{**_dummy_arguments(info), param: text})
            assert repr(text)[1:-1] in str(caught.value)
        checked += 1
    assert checked >= 20  # strict, bfcl_compat, check_details, use_stemmer, lowercase, ...


# ------------------------------------------------------------------------------- ranges


def _ranges(hint: Any) -> list[Range]:
    found = [arg for arg in typing.get_args(hint) if isinstance(arg, Range)]
    for arg in typing.get_args(hint):
        if not isinstance(arg, Range):
            found += _ranges(arg)
    return found


def test_every_number_argument_of_every_metric_declares_a_range_that_is_checked() -> None:
    checked = 0
    for kind, name, param, hint in _every_argument():
        if param == "zero_division" or not (_admits(hint, int) or _admits(hint, float)):
            continue
        ranges = _ranges(hint)
        assert ranges, f"{kind} {name}: argument {param} ({hint}) declares no range"
        bound = ranges[0]
        outside = bound.high * 10 + 1 if bound.high is not None else bound.low - 1  # type: ignore[operator]
        info = (metric_registry() if kind == "metric" else table_registry())[name]
        create = create_metric if kind == "metric" else create_table
        integer = _admits(hint, int)
        for value in (int(outside) if integer else float(outside), "5", True):
            with pytest.raises(SuiteError, match=f"{param} must be") as caught:
                create(name, **{**_dummy_arguments(info), param: value})
            assert "Traceback" not in str(caught.value)
        checked += 1
    assert checked >= 15  # threshold, top_k, window, k, q, seed, n_samples, max_order, ...


def test_a_huge_top_k_is_an_error_not_an_allocation(tmp_path: Path) -> None:
    # before: numpy tried to allocate records x 10**20 candidates ("Maximum allowed dimension")
    path = user_suite(tmp_path, "contract-risk", "  top_k: 5", "  top_k: 100000000000000000000")
    stderr = failed_run(tmp_path, path, EXAMPLES / "contract_risk" / "records.jsonl")
    assert re.search(rf"{re.escape(str(path))}:\d+: key 'defaults.top_k': ", stderr)
    assert "top_k must be an integer in 1..1000, got 100000000000000000000" in stderr


OPTION_BLOCKS = [
    # (YAML added to a suite, key named, words)
    ("similarity: {concurrency: many}", "similarity.concurrency", ["integer", '"many"']),
    ("similarity: {concurrency: -4}", "similarity.concurrency", ["integer", "-4"]),
    ("similarity: {concurrency: '8'}", "similarity.concurrency", ["without quotes"]),
    ("similarity: {timeout: -1}", "similarity.timeout", ["number", "-1"]),
    ("similarity: {max_retries: -2}", "similarity.max_retries", ["integer", "-2"]),
    ("similarity: {max_retries: 2.5}", "similarity.max_retries", ["integer", "2.5"]),
    ("similarity: {temperature: true}", "similarity.temperature", ["number", "true"]),
    ("similarity: {structured: maybe}", "similarity.structured", ["auto", '"maybe"']),
    ("model: {prediction: p, concurrency: -1}", "model.concurrency", ["integer", "-1"]),
    ("model: {prediction: p, concurrency: true}", "model.concurrency", ["integer", "true"]),
    ("model: {prediction: p, timeout: 0}", "model.timeout", ["number", "0"]),
    ("model: {prediction: p, max_retries: -1}", "model.max_retries", ["integer", "-1"]),
    ("model: {prediction: p, price_prompt: cheap}", "model.price_prompt", ['"cheap"']),
]
SUITE_HEAD = "name: t\nlabels: {values: [高, 中, 低]}\ninputs: {gold: g, pred: p}\n"


@pytest.mark.parametrize(("text", "key", "words"), OPTION_BLOCKS, ids=[c[0] for c in OPTION_BLOCKS])
def test_option_blocks_name_the_key_the_type_and_the_value(
    tmp_path: Path, text: str, key: str, words: list[str]
) -> None:
    # before: `concurrency: many` gave Python's "'<' not supported between 'str' and 'int'",
    # negative concurrency, timeout and retries were taken
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE_HEAD + "metrics: {accuracy: {}}\n" + text + "\n", encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    message = str(info.value)
    assert info.value.key == key, message
    assert re.match(rf"{re.escape(str(path))}:\d+: key '{re.escape(key)}': ", message)
    assert "must be" in message
    for word in words:
        assert word in message


def test_normalize_of_the_wrong_type_names_the_option(tmp_path: Path) -> None:
    # before: "metric 'fn_acc_all': 'int' object is not iterable"
    path = tmp_path / "suite.yaml"
    path.write_text(
        "name: t\ninputs: {gold: gold_fn, pred: pred_fn}\n"
        "metrics: {fn_acc_all: {normalize: {synonyms: 5}}}\n",
        encoding="utf-8",
    )
    stderr = failed_run(tmp_path, path, EXAMPLES / "function_call" / "records.jsonl")
    assert re.search(rf"{re.escape(str(path))}:\d+: key 'metrics.fn_acc_all': ", stderr)
    assert "normalize.synonyms must be a mapping of strings to strings or null, got 5" in stderr
    path.write_text(
        "name: t\ninputs: {gold: gold_fn, pred: pred_fn}\n"
        "metrics: {fn_acc_all: {normalize: {casefld: true}}}\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError, match="did you mean 'casefold'"):
        load_suite(path)


def test_the_similarity_options_are_the_backends_parameters_each_number_with_its_range() -> None:
    """What a suite's ``similarity:`` block may set is read from the backends' parameters (no
    second table): every number has a range, a parameter shared by backends has one type."""
    from pingce.similarity.judge import STRUCTURED_MODES
    from pingce.similarity.registry import backend_options

    options = backend_options()
    assert set(options) == {
        "template", "system", "structured", "temperature", "max_tokens", "concurrency",
        "max_retries", "timeout", "backoff", "max_backoff", "max_retry_after", "price_prompt",
        "price_completion", "batch_size", "normalize", "device", "threads", "min_n", "max_n",
    }  # fmt: skip
    assert typing.get_args(options["structured"].hints[0]) == STRUCTURED_MODES
    assert options["max_tokens"].backends == ("openai:<model>",)
    for name, option in options.items():
        assert len(option.hints) == 1, name  # the built-in backends agree
        if _admits(option.hints[0], int) or _admits(option.hints[0], float):
            assert _ranges(option.hints[0]), name


# ------------------------------------------------------------------- command-line numbers


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name, command in group.commands.items():
        out.append((prefix + name, command))
        if isinstance(command, click.Group):
            out += _commands(command, prefix + name + " ")
    return out


def test_every_number_option_of_the_command_line_is_a_click_range() -> None:
    from pingce.cli import cli

    numbers = []
    for name, command in _commands(cli):
        for param in command.params:
            kind = param.type
            if isinstance(kind, click.types.IntParamType | click.types.FloatParamType):
                assert isinstance(kind, click.IntRange | click.FloatRange), (name, param.name)
                numbers.append(f"{name} {param.name}")
    assert {"run seed", "run bootstrap", "run ci_level", "view port", "runs limit"} <= set(numbers)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["view", "--port", "99999", "--no-browser"], ["--port", "99999"]),
        (["view", "--port", "-1", "--no-browser"], ["--port", "-1"]),
        (["runs", "--limit", "-1"], ["--limit", "-1"]),
        (["run", "contract-risk", "--data", "x.jsonl", "--ci-level", "1.5"], ["--ci-level"]),
        (["run", "contract-risk", "--data", "x.jsonl", "--model-concurrency", "0"],
         ["--model-concurrency"]),
    ],
    ids=["port too big", "negative port", "negative limit", "ci-level", "model-concurrency"],
)  # fmt: skip
def test_number_options_out_of_range_are_usage_errors(
    tmp_path: Path, args: list[str], words: list[str]
) -> None:
    # before: `view --port 99999` was an OverflowError traceback, `runs --limit -1` said the
    # store was empty
    done = run_pingce(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "no runs recorded" not in done.stdout
    for word in words:
        assert word in done.stderr


def test_runs_limit_0_lists_every_run(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    for i in range(3):
        done = run_pingce(
            "run", "contract-risk", "--data", str(EXAMPLES / "contract_risk" / "records.jsonl"),
            "--bootstrap", "0", "--out", str(tmp_path / f"o{i}"), "--store", str(store),
            "--quiet", cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    shown = {}
    for limit in ("0", "2"):
        done = run_pingce("runs", "--limit", limit, "--json", "--store", str(store), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        shown[limit] = len(json.loads(done.stdout))
    assert shown == {"0": 3, "2": 2}


def test_python_options_out_of_range_are_option_errors() -> None:
    data = [{"id": "1", "gold_level": "高", "pred_level": "高"}]
    for options, word in [
        ({"ci_level": 1.5}, "--ci-level"),
        ({"seed": 2**70}, "--seed"),
        ({"bootstrap": 10**9}, "--bootstrap"),
        ({"sample": 0}, "--sample"),
        ({"seed": "3"}, "--seed"),
    ]:
        with pytest.raises(OptionError, match=word):
            pingce.evaluate("contract-risk", data, **options)


def test_the_viewer_refuses_a_port_out_of_range() -> None:
    from pingce.viewer import make_server

    with pytest.raises(OptionError, match=r"port must be an integer in 0\.\.65535, got 99999"):
        make_server(None, "127.0.0.1", 99999)
