"""ARCHITECTURE.md's "Where a change goes", walked: each recipe followed as written, in fixtures
that undo themselves, and the change found where the recipe says it reaches.

An option has its own walk: ``tests/test_option_table.py``
(``test_an_option_declared_in_the_table_reaches_the_cli_the_api_and_the_reference``). A suite
(a YAML file and its example) is walked by every example's golden test (``tests/test_golden.py``).
"""

from __future__ import annotations

import json
import re
import sys
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

import click
import numpy as np
import pytest
from click.testing import CliRunner

import pingce
from pingce._constraints import Range
from pingce.errors import SuiteError
from pingce.metrics.classification import ConfusionMetric
from pingce.metrics.registry import metric_registry, register_metric
from pingce.metrics.registry import unregister as unregister_metric
from pingce.predict.client import Answer
from pingce.predict.registry import ModelClient, model_help, modelapi, parse_model
from pingce.predict.registry import unregister as unregister_provider
from pingce.progress import Advance
from pingce.remote.usage import BackendStats as CallStats
from pingce.similarity import BackendStats, Pair, SimilarityBackend, make_backend
from pingce.similarity.registry import backend, backend_help, backend_options
from pingce.similarity.registry import unregister as unregister_backend
from pingce.suites import load_suite
from tests.cli_run import run_python

EXAMPLES = Path(pingce.__file__).parent / "examples"
LABELS = "labels: {values: [高, 中, 低]}\n"


def _cli() -> click.Group:
    from pingce.cli import cli

    return cli


# ------------------------------------------------------------------------------- a metric


@pytest.fixture
def error_rate(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The recipe: a dataclass whose fields are its arguments, registered with
    ``@register_metric("name")``; ratios through the base's ``safe_divide`` policy."""
    metric_registry()  # the built-in ones first

    @register_metric("recipe_error_rate")
    @dataclass(eq=False)
    class ErrorRate(ConfusionMetric):
        """Share of records whose predicted label differs from the gold label."""

        definition = "wrong / total: share of records whose predicted label is not the gold one."
        reason = "label"
        refused_arguments: ClassVar[Mapping[str, str]] = {}

        def finalize(self, summed: np.ndarray) -> np.ndarray:
            c = self.matrix(summed)
            total = self.total(summed)
            return 1.0 - np.trace(c, axis1=-2, axis2=-1) / np.maximum(total, 1)

    try:
        yield "recipe_error_rate"
    finally:
        unregister_metric("recipe_error_rate")


def _metric_suite(tmp_path: Path) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(
        "name: recipe\n" + LABELS + "inputs: {gold: gold_level, pred: pred_level}\n"
        "metrics: {accuracy: {}, recipe_error_rate: {}}\n",
        encoding="utf-8",
    )
    return path


def _records(tmp_path: Path) -> Path:
    path = tmp_path / "records.jsonl"
    rows = [
        {"id": "a", "gold_level": "高", "pred_level": "高"},
        {"id": "b", "gold_level": "中", "pred_level": "低"},
        {"id": "c", "gold_level": "低", "pred_level": "低"},
        {"id": "d", "gold_level": "中", "pred_level": "中"},
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_a_metric_registered_in_a_test_is_used_by_a_suite_file(
    error_rate: str, tmp_path: Path
) -> None:
    suite, records = _metric_suite(tmp_path), _records(tmp_path)
    result = pingce.evaluate(suite, records, bootstrap=0)
    assert result.metrics[error_rate].value == pytest.approx(0.25)
    assert result.metrics["accuracy"].value == pytest.approx(0.75)
    out = tmp_path / "out"
    done = CliRunner().invoke(
        _cli(), ["run", str(suite), "--data", str(records), "--bootstrap", "0", "--out", str(out)]
    )
    assert done.exit_code == 0, done.output
    saved = json.loads((out / "results.json").read_text("utf-8"))
    assert saved["metrics"][error_rate]["value"] == pytest.approx(0.25)
    listed = CliRunner().invoke(_cli(), ["metrics"])
    assert listed.exit_code == 0 and error_rate in listed.output, listed.output


# ------------------------------------------------------------------------------ a backend


class _Constant(SimilarityBackend):
    """A backend of the test's own: every pair scores ``level``."""

    name = "recipe"

    def __init__(self, model: str, *, level: Annotated[float, Range(0, 1)] = 0.5):
        self.model, self.level = model, level

    def signature(self) -> str:
        return f"recipe:{self.model}|level={self.level}"

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None = None
    ) -> np.ndarray:
        if progress is not None:
            progress(len(pairs))
        return np.full(len(pairs), self.level)


@pytest.fixture
def constant() -> Iterator[str]:
    """The recipe: a ``SimilarityBackend`` (its suite options are its keyword-only parameters,
    numbers ``Annotated`` with their range) registered with ``@backend("kind", ...)``."""

    @backend("recipe", help="recipe:<model> (a test's own)")
    def _load() -> type[SimilarityBackend]:
        return _Constant

    yield "recipe"
    unregister_backend("recipe")


def test_a_backend_registered_in_a_test_is_a_similarity_name_a_help_entry_and_suite_options(
    constant: str, tmp_path: Path
) -> None:
    built = make_backend("recipe:m1", options={"level": 0.25, "template": "a judge's"})
    assert isinstance(built, _Constant) and (built.model, built.level) == ("m1", 0.25)
    assert backend_help().endswith("recipe:<model> (a test's own).")
    assert backend_options()["level"].backends == ("recipe:<model>",)
    result = pingce.evaluate(
        "contract-risk",
        EXAMPLES / "contract_risk" / "records.jsonl",
        similarity="recipe:m1",
        bootstrap=0,
    )
    assert "recipe:m1|level=0.5" in json.dumps(result.signature.model_dump(), default=str)
    suite = tmp_path / "suite.yaml"
    head = "name: t\n" + LABELS + "inputs: {gold: g, pred: p}\nmetrics: {accuracy: {}}\n"
    suite.write_text(head + "similarity: {level: 0.75}\n", encoding="utf-8")
    assert load_suite(suite).spec.similarity == {"level": 0.75}
    suite.write_text(head + "similarity: {level: 3}\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=r"key 'similarity.level': level must be a number within"):
        load_suite(suite)


def test_a_backend_registered_before_the_cli_is_in_similaritys_help() -> None:
    """The command line reads the registry when its options are built (a plugin registers its
    backend before ``pingce.cli`` builds ``run``): here, in a child process."""
    script = (
        "from pingce.similarity.registry import backend\n"
        "from pingce.similarity.lexical import ExactBackend\n"
        "backend('reciperemote', remote=True)(lambda: ExactBackend)\n"
        "from pingce.cli import cli\n"
        "cli(['run', '--help'])\n"
    )
    done = run_python("-c", script)
    assert done.returncode == 0, done.stderr
    text = " ".join(re.sub(r"-\s+", "-", done.stdout).split())  # unwrapped
    assert "openai:<model>, reciperemote:<model>." in text  # --similarity
    assert "embedding-api:, rerank:, openai:, reciperemote: backends" in text  # --base-url


# ------------------------------------------------------------------------ a model provider


class _Scripted:
    """A client of the test's own: answers every request with the tool call its record's query
    names (``get_weather`` of the city after "in")."""

    def __init__(self, model: str, **settings: Any):
        self.model, self.settings = model, settings

    def body(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        return {"model": self.model, "messages": messages, "tools": tools}

    def signature(self) -> str:
        return f"scripted:{self.model}"

    def answer_all(
        self, bodies: Sequence[dict[str, Any]], progress: Advance | None = None
    ) -> tuple[list[Answer], CallStats]:
        answers = []
        for body in bodies:
            city = str(body["messages"][-1]["content"]).rpartition(" in ")[2].rstrip("?")
            call = {"name": "get_weather", "arguments": json.dumps({"city": city})}
            message = {"role": "assistant", "tool_calls": [{"type": "function", "function": call}]}
            reply = {"object": "chat.completion", "choices": [{"message": message}]}
            answers.append(Answer(reply, 0.0))
        if progress is not None:
            progress(len(bodies))
        return answers, CallStats()

    def close(self) -> None:
        pass


@pytest.fixture
def scripted() -> Iterator[str]:
    """The recipe: a client class (``ModelClient``) registered with ``@modelapi("name")``."""

    @modelapi("scripted", describe="a scripted model of the test's own", example="scripted:m")
    def _load() -> Callable[..., ModelClient]:
        return _Scripted

    yield "scripted"
    unregister_provider("scripted")


def test_a_model_provider_registered_in_a_test_answers_for_model(
    scripted: str, tmp_path: Path
) -> None:
    weather = {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object"}},
    }
    records = [
        {"id": "a", "query": "Weather in Paris?", "tools": [weather],
         "gold_fn": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"id": "b", "query": "Weather in Rome?", "tools": [weather],
         "gold_fn": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    ]  # fmt: skip
    assert parse_model("scripted:m").entry.load() is _Scripted
    assert "scripted:NAME: a scripted model of the test's own" in model_help()
    result = pingce.evaluate("function-call", records, model="scripted:m", cache=False, bootstrap=0)
    assert result.metrics["fn_acc_all"].value == pytest.approx(0.5)
    data = tmp_path / "records.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "out"
    arguments = ["run", "function-call", "--data", str(data), "--model", "scripted:m"]
    done = CliRunner().invoke(_cli(), [*arguments, "--no-cache", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert (out / "predictions.jsonl").is_file()


# ---------------------------------------------------------------------------- an input format


def test_an_input_format_is_a_suffix_of_path_reading(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The recipe's reader function cannot be added to ``readers.py`` from a fixture: a new
    format is code in that module (a text format read by ``_text_blocks``, a binary one by its
    branch in ``path_reading``). What a fixture can follow: a suffix entered in the table that
    ``path_reading`` dispatches on is read as that format, and every suffix the message
    ``SUPPORTED`` names is in the tables."""
    from pingce import readers

    for suffix in re.findall(r"\.\w+", readers.SUPPORTED):
        if suffix != ".gz":
            assert suffix in readers._TEXT_FORMATS or suffix in readers._BINARY_FORMATS, suffix
    records = _records(tmp_path)
    renamed = records.with_suffix(".recipe")
    renamed.write_bytes(records.read_bytes())
    with pytest.raises(pingce.errors.InputError, match="unsupported file type"):
        pingce.evaluate(_metric_suite_plain(tmp_path), renamed, bootstrap=0)
    monkeypatch.setitem(readers._TEXT_FORMATS, ".recipe", "jsonl")
    result = pingce.evaluate(_metric_suite_plain(tmp_path), renamed, bootstrap=0)
    assert result.n_records == 4


def _metric_suite_plain(tmp_path: Path) -> Path:
    path = tmp_path / "plain.yaml"
    path.write_text(
        "name: plain\n" + LABELS + "inputs: {gold: gold_level, pred: pred_level}\n"
        "metrics: {accuracy: {}}\n",
        encoding="utf-8",
    )
    return path


# ------------------------------------------------------------------ a file in the run folder


def test_every_file_of_a_run_folder_is_named_in_the_layout(tmp_path: Path) -> None:
    """The recipe (a name in ``runfolder/layout.py``, a field of ``RunOutputs``, its writing in
    ``report/files._write_outputs``, its reading in ``runfolder/reader.py``) changes four
    modules: no fixture can add a file. What it rests on is tested: every file a run writes is
    named in the layout, none elsewhere."""
    from pingce.runfolder import layout

    names = {getattr(layout, name) for name in layout.__all__ if name.isupper()}
    names = {n for n in names if isinstance(n, str)}
    out = tmp_path / "out"
    done = CliRunner().invoke(
        _cli(),
        [
            "run",
            str(_metric_suite_plain(tmp_path)),
            "--data",
            str(_records(tmp_path)),
            "--out",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    written = {path.name for path in out.iterdir()}
    assert written == set(layout.OUTPUT_FILES)
    assert written <= names


# --------------------------------------------------------------------------- a CLI command


@pytest.fixture
def hello_command(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The recipe: a module ``cli/<name>.py`` with the function ``<name>`` and its name in
    ``cli.COMMANDS``. The module is made in memory (``sys.modules``) rather than as a file in the
    package."""
    import pingce.cli as cli_package

    module = types.ModuleType("pingce.cli.recipe_hello")

    @click.command("recipe-hello")
    def recipe_hello() -> None:
        """Say hello (a test's own command)."""
        click.echo("hello from a recipe")

    module.recipe_hello = recipe_hello  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pingce.cli.recipe_hello", module)
    monkeypatch.setattr(cli_package, "COMMANDS", (*cli_package.COMMANDS, "recipe_hello"))
    yield "recipe_hello"
    cli_package.cli.commands.pop("recipe_hello", None)


def test_a_command_module_named_in_commands_is_a_command(hello_command: str) -> None:
    done = CliRunner().invoke(_cli(), [hello_command])
    assert done.exit_code == 0 and done.output == "hello from a recipe\n", done.output
    listed = CliRunner().invoke(_cli(), ["--help"])
    assert hello_command in listed.output
