"""``pingce run``: evaluate records with a suite."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from .common import (
    EXIT_GATE,
    EXIT_JUDGE_FAILURES,
    consoles,
    fail,
    imports_done,
    keep,
    out_checked,
    profiler,
    progress,
    show_profile,
    store_path_option,
)
from .table import table_options

__all__ = ["run"]


_DEFAULT_OUT = Path("pingce-out")
"""Where a run without --out writes (a folder of its own in it, :func:`_default_out`)."""


def _default_out(suite: str) -> Path:
    name = Path(suite).stem if suite.endswith((".yaml", ".yml")) else suite
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = _DEFAULT_OUT / f"{name}-{stamp}"
    suffix = 1
    while out.exists():
        suffix += 1
        out = _DEFAULT_OUT / f"{name}-{stamp}-{suffix}"
    return out


def _store_options(command: Any) -> Any:
    """``--name``, ``--store`` and ``--no-store`` of run: where the run is recorded."""
    command = click.option(
        "--no-store", is_flag=True, help="Do not record this run in the run store."
    )(command)
    command = store_path_option(command)
    return click.option(
        "--name",
        "name",
        default=None,
        help="Name of the run in the run store (unique) [default: <suite>-<time>].",
    )(command)


@contextmanager
def _name_reserved(name: str | None, store: str | None) -> Iterator[None]:
    """Before any work: a --name already in the store, or reserved by a run of that name in
    progress (or blank), stops the run; else the name is reserved for this run (in the store,
    :func:`pingce.history.reserve_name`) until the block ends, when recording the run has taken
    the reservation back, or the run failed and it is released."""
    if name is None:
        yield
        return
    from ..errors import PingceError
    from ..history import reserve_name

    if not name.strip():
        fail("--name: a run name cannot be empty")
    try:
        reservation = reserve_name(name, store)
    except PingceError as exc:
        fail(str(exc))
        return
    try:
        yield
    finally:
        if reservation is not None:
            reservation.release()


def _record(
    result: Any,
    name: str | None,
    store: str | None,
    data: str,
    out: Path,
    options: Any,
    suite: str,
    started: float,
) -> str | None:
    """Record the run in the store; the name it got, or None (one warning line on stderr: a
    store that cannot be written never fails the run)."""
    from ..errors import PingceError
    from ..history import default_store_path, record_run

    kept = {"suite": suite, **options.recorded()}
    try:
        return record_run(
            result,
            name=name,
            store=store,
            data=data,
            out=out,
            options=kept,
            started=started,
        ).name
    except (PingceError, OSError) as exc:
        path = store if store is not None else default_store_path()
        reason = str(exc) if isinstance(exc, PingceError) else f"run store {path}: {exc}"
        click.echo(f"pingce: warning: run not recorded: {reason}", err=True)
        return None


def _evaluated(
    suite: str, data: str | None, tool: str | None, options: Any, hook: Any, timer: Any
) -> Any:
    """The run: of --data with SUITE, or of another tool's file (LOG, or --data recognised as
    one, or read as --from says)."""
    from ..engine import evaluate_suite
    from ..errors import OptionError
    from ..tool_logs import detect_tool
    from ..tool_logs.evaluate import evaluate_tool_file

    if data is None:
        if tool is None and detect_tool(suite) is None:
            raise OptionError(
                f"--data is missing: give the records to evaluate with {suite} (--data FILE), "
                "or give another tool's file in place of the suite (pingce run LOG)"
            )
        return evaluate_tool_file(suite, options, tool=tool, progress=hook, profile=timer)
    if tool is not None or (data != "-" and detect_tool(data) is not None):
        return evaluate_tool_file(
            data, options, tool=tool, suite=suite, progress=hook, profile=timer
        )
    return evaluate_suite(suite, data, options, progress=hook, profile=timer)


@click.command()
@click.argument("suite", metavar="SUITE | LOG")
@click.option(
    "--data",
    "data",
    default=None,
    type=click.Path(),  # a folder or a pattern is told what reads it (pingce.readers)
    help="Records: .jsonl, .json, .csv, .tsv (also .gz), .parquet, .xlsx, or - for stdin; "
    "with --engine ray, files or a glob ('shards/*.jsonl'); or another tool's file (an "
    "Inspect log, promptfoo results, lm-eval samples, a BFCL score file).",
)
@click.option(
    "--from",
    "tool",
    type=click.Choice(["inspect", "promptfoo", "lm-eval", "bfcl"]),
    default=None,
    help="Read LOG (or --data) as this tool's file [default: recognised by its content].",
)
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False),
    help="Output folder [default: pingce-out/<suite>-<time>].",
)
@table_options("run")
@_store_options
def run(
    suite: str,
    data: str | None,
    tool: str | None,
    out: str | None,
    name: str | None,
    store: str | None,
    no_store: bool,
    **values: Any,
) -> None:
    """Evaluate the records in --data with SUITE (a built-in name or a suite YAML file).

    \b
    pingce run LOG
        evaluates another tool's file (an Inspect .eval or .json log, promptfoo's results.json,
        lm-eval's samples_<task>_*.jsonl or its output folder, a BFCL score file) with a suite
        made from it: each scorer's mean with its interval, the tool's groupings as slices,
        and the tool's own number for each scorer beside pingce's.
    """
    from .._collector import collector_paused

    with collector_paused():  # modules and classes, alive to the end: nothing to collect
        from ..errors import PingceError
        from ..gates import failed_gates
        from ..options import command_line_options
        from ..report import print_result, write_outputs

    quiet, no_progress = values["quiet"], values["no_progress"]
    console, err_console = consoles()
    timer = profiler(values["profile"])
    imports_done()
    started = time.time()
    with _name_reserved(None if no_store else name, store), out_checked(out or _DEFAULT_OUT):
        try:
            options = command_line_options("run", values)
            with progress(
                err_console, enabled=not (quiet or no_progress) and err_console.is_terminal
            ) as hook:
                result = _evaluated(suite, data, tool, options, hook, timer)
                if options.gating.baseline is not None:  # decided against a stored run
                    from ..compare_stored import decide_against_baseline

                    result = decide_against_baseline(
                        result, suite, options, store=store, progress=hook
                    )
            target = Path(out) if out else _default_out(result.suite)
            start = time.perf_counter()
            try:
                paths = write_outputs(result, target)
            finally:  # --engine ray: the workers' shards, linked into the outputs by now
                if result.outputs is not None:  # (the process ends at once: no finaliser runs)
                    result.outputs.release()
            written = time.perf_counter() - start
        except PingceError as exc:
            fail(exc)
            return
        start = time.perf_counter()
        if not quiet:
            print_result(result, console)
        if not no_store:  # the outputs line stays the last one printed
            recorded = _record(result, name, store, data or suite, target, options, suite, started)
            if recorded and not quiet:
                console.print(f"run: {recorded}", highlight=False)
        console.print(f"outputs: {target}/ ({', '.join(paths)})")
        show_profile(timer, written, start, err_console)
        keep(result)
        gating = options.gating
        failed = failed_gates(result.metrics, gating.gates, on_interval=gating.on_interval)
        for line in failed:
            err_console.print(f"gate failed: {line}", markup=False, highlight=False, soft_wrap=True)
        decision = result.decision
        if decision is not None:
            for gate in decision.gates:
                said = "passed" if gate.passed else "gate failed"
                (console if gate.passed else err_console).print(
                    f"{said}: {gate.reason}", markup=False, highlight=False, soft_wrap=True
                )
        if failed or (decision is not None and not decision.passed):
            sys.exit(EXIT_GATE)
        if gating.gates and not quiet:
            console.print(f"gates passed: {len(gating.gates)}")
        graded_badly = any(  # a model judge's failed calls or answers without a grade
            one.get("failures") or one.get("unparsed_answers")
            for one in (result.judge or {}).values()
        )
        if result.failures.judge or getattr(result.failures, "model", 0) or graded_badly:
            sys.exit(EXIT_JUDGE_FAILURES)
