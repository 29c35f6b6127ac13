"""Options declared once (issue 29): the table in pingce.option_table is where the command line,
the Python API, the applies-to checks and the options reference come from."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import click
import pytest
from click.testing import CliRunner

from pingce import option_table
from pingce._constraints import Range
from pingce.errors import OptionError
from pingce.option_table import (
    OPTIONS,
    Option,
    keywords,
    ray_refused,
    reference,
    render_typed_dicts,
    stored_run_refusal,
    typed_dict,
)
from pingce.options import RunOptions, run_options

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "contract_risk" / "records.jsonl"

SHOTS = Option(
    "shots",
    Annotated[int, Range(1, 9)],
    "Few-shot examples per prompt.",
    frozenset({"run"}),
    "model",
    default=3,
    python="int",
    show_default=True,
)


def _run_command() -> click.Command:
    """The ``run`` command as the command line builds it now (its module imported again)."""
    from pingce.cli import cli

    command = cli.get_command(click.Context(cli), "run")
    assert command is not None and command.callback is not None
    module = importlib.reload(importlib.import_module(command.callback.__module__))
    found = module.run
    assert isinstance(found, click.Command)
    return found


@pytest.fixture
def shots() -> Iterator[click.Command]:
    """One more option, declared in the table alone; the ``run`` command built with it."""
    OPTIONS.append(SHOTS)
    try:
        yield _run_command()
    finally:
        OPTIONS.remove(SHOTS)
        _run_command()


class Stop(Exception):
    """Raised by the stand-in engine with the options it was given."""

    def __init__(self, options: RunOptions) -> None:
        self.options = options


def _stand_in(suite: Any, records: Any, options: RunOptions, **kwargs: Any) -> Any:
    raise Stop(options)


def test_an_option_declared_in_the_table_reaches_the_cli_the_api_and_the_reference(
    shots: click.Command, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    shown = runner.invoke(shots, ["--help"])
    assert shown.exit_code == 0
    assert "--shots INTEGER RANGE" in shown.output and "Few-shot examples" in shown.output
    bad = runner.invoke(shots, ["contract-risk", "--data", str(EXAMPLE), "--shots", "12"])
    assert bad.exit_code == 2 and "12 is not in the range 1<=x<=9" in bad.output

    import pingce.engine

    monkeypatch.setattr(pingce.engine, "evaluate_suite", _stand_in)
    args = ["contract-risk", "--data", str(EXAMPLE), "--shots", "5", "--no-store"]
    parsed = runner.invoke(shots, args)
    assert isinstance(parsed.exception, Stop), parsed.output
    assert parsed.exception.options.given()["shots"] == 5
    default = runner.invoke(shots, ["contract-risk", "--data", str(EXAMPLE), "--no-store"])
    assert isinstance(default.exception, Stop)
    assert default.exception.options.given()["shots"] == 3

    assert "shots" in typed_dict("run").__annotations__
    assert "shots" in keywords("run") and "shots" not in keywords("compare")
    with pytest.raises(Stop) as stopped:
        pingce.evaluate("contract-risk", str(EXAMPLE), shots=7)
    assert stopped.value.options.given()["shots"] == 7
    assert run_options({"shots": 2}).given()["shots"] == 2
    with pytest.raises(OptionError, match="unknown option"):
        pingce.compare("contract-risk", [], [], shots=2)

    row = next(line for line in reference().splitlines() if "`--shots`" in line)
    assert "`shots`" in row and "int in 1..9" in row and "`3`" in row and "run" in row


def test_the_typed_dicts_are_rendered_from_the_table() -> None:
    """The TypedDicts that type checkers read are render_typed_dicts()'s text (after adding an
    option, paste its output over them)."""
    source = inspect.getsource(option_table)
    assert render_typed_dicts() in source, render_typed_dicts()
    for command in ("run", "compare", "compare-runs"):
        assert set(typed_dict(command).__annotations__) == set(keywords(command)) | (
            {"slice"} if "slices" in keywords(command) else set()
        )


def test_the_keywords_are_the_old_allow_lists() -> None:
    """What pingce.evaluate, pingce.compare and pingce.compare_runs accepted by hand-written
    lists before the table (RunOptions' fields, COMPARE_OPTIONS, compare_runs' ``allowed``)."""
    assert set(keywords("run")) == {
        *[
            "similarity",
            "sample",
            "stratify",
            "allocation",
            "short_strata",
            "seed",
            "bootstrap",
            "ci_method",
        ],
        *[
            "bootstrap_method",
            "bootstrap_stream",  # issue 32: the index stream kept for one release
            "ci_level",
            "slices",
            "zero_division",
            "on_judge_failure",
            "laws",
            "field_map",
        ],
        *["base_url", "cache", "encoding", "gates", "regression_gates", "gate_on_interval", "gold"],
        *["allow_missing", "model", "model_base_url", "api_key_env", "model_params"],
        *["model_concurrency", "engine", "ray_address", "ray_scratch"],
        "context",  # issue 31: context travels with the record
        *["records_format", "records_fields", "report_records"],  # issue 32: outputs
        *["judges", "rubric", "scale"],  # issue 33: the judged metrics
        *["repeats", "target_se", "judge_repeats"],  # issue 35: repeats
        *["baseline", "multiplicity", "margin_gates"],  # issue 35: decisions
    }
    assert set(keywords("compare")) == {
        *[
            "similarity",
            "bootstrap",
            "seed",
            "ci_method",
            "bootstrap_method",
            "bootstrap_stream",
            "ci_level",
            "zero_division",
        ],
        *[
            "laws",
            "on_judge_failure",
            "field_map",
            "base_url",
            "cache",
            "encoding",
            "gold",
            "allow_missing",
        ],
        "regression_gates",
        "slices",
        "context",
        *["judges", "rubric", "scale"],  # issue 33: each side graded as a run grades it
        "pairwise",  # issue 33: the two sides' answers judged against each other
        *["margin_gates", "multiplicity"],  # issue 35: decisions with a margin
    }
    assert set(keywords("compare-runs")) == {
        *["bootstrap", "seed", "ci_method", "bootstrap_method", "ci_level", "on_judge_failure"],
        "bootstrap_stream",
        *["slices", "zero_division", "laws", "regression_gates"],
        *["pairwise", "judges", "rubric", "base_url", "cache"],  # issue 33: --pairwise asks
        "scale",  # a jury's agreement is laid out on the runs' scale
        *["margin_gates", "multiplicity"],  # issue 35: decisions with a margin
    }


def test_what_two_stored_runs_refuse_or_leave_unused() -> None:
    compared = [o.name for o in OPTIONS if "compare" in o.commands]
    refused = {name: stored_run_refusal(name) for name in compared}
    assert {n for n, why in refused.items() if why == "error"} == {
        "field_map",
        "encoding",
        "gold",
        "allow_missing",
        "context",
    }
    assert {n for n, why in refused.items() if why == "note"} == {
        "similarity",
    }  # the judge's options apply to --pairwise (noted as unused without it), --scale to a jury


def test_what_the_ray_engine_refuses() -> None:
    assert ray_refused(RunOptions().given()) == []
    given = {**RunOptions().given(), "sample": 5, "gold": "g.jsonl", "model": "openai:m"}
    assert sorted(ray_refused(given)) == ["--gold", "--model", "--sample"]


def test_every_option_has_help_for_each_of_its_commands() -> None:
    for option in OPTIONS:
        assert option.commands <= set(option_table.COMMANDS), option.name
        for command in option.commands:
            assert option.help_for(command).strip(), (option.name, command)
        if option.python is None:
            assert option.option is not None, option.name  # command line only: has a flag


def test_options_are_parsed_once_and_checking_them_changes_nothing() -> None:
    import dataclasses

    from pingce.options import KEEP_SUITE

    unset = run_options({"zero_division": "suite"})
    assert unset.zero_division is KEEP_SUITE and unset.suite_defaults() == {}
    assert unset.recorded()["zero_division"] == "suite"  # what the run store has always had
    parsed = run_options({"zero_division": "0", "slice": "meta.source"})
    assert parsed.zero_division == 0.0 and parsed.slices == ("meta.source",)
    before = dataclasses.asdict(parsed)
    parsed.validate()
    assert dataclasses.asdict(parsed) == before
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.seed = 3  # type: ignore[misc]
    with pytest.raises(OptionError, match="--ci-method must be bca, percentile or basic"):
        RunOptions(ci_method="nope")  # type: ignore[arg-type]


def test_each_command_is_imported_only_when_it_is_asked_for() -> None:
    """The command line is a lazy group: `pingce run` imports cli/run.py, not the other commands;
    `pingce --help` lists every command without importing numpy, pydantic or rich."""
    import subprocess
    import sys

    code = (
        "import sys, click\n"
        "from pingce.cli import cli\n"
        "before = sorted(m for m in sys.modules if m.startswith('pingce.cli.'))\n"
        "cli.get_command(click.Context(cli), 'run')\n"
        "after = sorted(m for m in sys.modules if m.startswith('pingce.cli.'))\n"
        "print(before, after)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == [
        "['pingce.cli.common',",
        "'pingce.cli.environment']",
        "['pingce.cli.common',",
        "'pingce.cli.environment',",
        "'pingce.cli.run',",
        "'pingce.cli.table']",
    ]
    code = (
        "import sys\nfrom pingce.cli import cli\n"
        "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('numpy', 'pydantic', 'rich') if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().endswith("[]")
    assert "calibrate" in done.stdout and "suites" in done.stdout
