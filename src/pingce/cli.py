"""The ``pingce`` command line: run, compare, calibrate, metrics, suites, demo.

Only click is imported at start-up: numpy, pydantic, rich and the metric families are imported by
the command that needs them, so ``pingce --help`` answers at once.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, get_args

import click

from ._defaults import BOOTSTRAP_METHODS, DEFAULT_SIMILARITY, OPTION_TYPES
from ._version import __version__
from .similarity.registry import backend_help

_STARTED = time.perf_counter()
"""When this module was imported: ``--profile``'s start-up phase runs from here to the engine."""

if TYPE_CHECKING:
    from rich.console import Console

    from .engine.profile import Profile
    from .progress import ProgressHook

__all__ = ["main"]

EXIT_INPUT = 2
EXIT_JUDGE_FAILURES = 3
EXIT_GATE = 4
EXIT_INTERRUPTED = 130
"""Ctrl+C (SIGINT): 128 + the signal's number, as shells report it."""


def _ranged(name: str) -> click.IntRange | click.FloatRange:
    """The click type of a number option: its type and range as ``OPTION_TYPES`` declares them
    (what :meth:`pingce.options.RunOptions.validate` checks for Python callers too)."""
    base, bounds = get_args(OPTION_TYPES[name])
    ranged = click.IntRange if base is int else click.FloatRange
    return ranged(
        bounds.low, bounds.high, min_open=bounds.low_open, max_open=bounds.high_open, clamp=False
    )


@contextmanager
def _progress(console: Console, enabled: bool) -> Iterator[ProgressHook]:
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from .progress import Advance

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=not enabled,
    )

    class Task:
        """Advances one bar, and shows a note beside its description (failing calls)."""

        def __init__(self, description: str, total: float | None):
            self.description = description
            self.id = progress.add_task(description, total=total)

        def __call__(self, amount: float) -> None:
            progress.advance(self.id, amount)

        def note(self, text: str) -> None:
            shown = f"{self.description} [red]({escape(text)})[/red]"
            progress.update(self.id, description=shown)

    def hook(description: str, total: float | None) -> Advance:
        return Task(description, total)

    with progress:
        yield hook


def _consoles() -> tuple[Console, Console]:
    from rich.console import Console

    return Console(stderr=False), Console(stderr=True)


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


def _fail(message: str | Exception) -> None:
    """Exit 2 with the message (of an error: an output error names --out)."""
    if isinstance(message, Exception):
        for_option = getattr(message, "for_option", None)  # errors.OutputError
        message = for_option("--out") if callable(for_option) else str(message)
    click.echo(f"pingce: error: {message}", err=True)
    sys.exit(EXIT_INPUT)


def _profiler(enabled: bool) -> Profile | None:
    if not enabled:
        return None
    from .engine.profile import Profile

    return Profile()


def _show_profile(timer: Profile | None, written: float, started: float, console: Console) -> None:
    """With --profile: start-up (importing what the command needs), the engine's phases, then
    writing and printing, on stderr."""
    if timer is None:
        return
    from .report import print_profile

    seconds = {
        "start-up": _imported - _STARTED,
        **timer.ordered(),
        "write": written,
        "report": time.perf_counter() - started,
    }
    print_profile(seconds, console)


_imported = _STARTED


def _imports_done() -> None:
    """Mark the end of start-up: the command has imported what it needs."""
    global _imported
    _imported = time.perf_counter()


def _policy_options(command: Any) -> Any:
    """The options that run and compare share beyond the similarity backend: what a failed
    judge call does to a metric (``--on-judge-failure``) and the law list (``--laws``)."""
    command = click.option(
        "--map",
        "field_map",
        multiple=True,
        metavar="FIELD=COLUMN",
        help="Read the suite's FIELD from the data's COLUMN (a path such as output.level); "
        "repeatable, e.g. --map pred_level=answer.",
    )(command)
    command = click.option(
        "--laws",
        default=None,
        help="Law list for law citations: a CSV, JSONL or SQLite file, or 'builtin' [default: "
        "the suite's, the packaged list].",
    )(command)
    return click.option(
        "--on-judge-failure",
        type=click.Choice(["null", "skip"]),
        default="null",
        show_default=True,
        help="A metric that needs records whose judge (or embedding, reranker) calls failed: "
        "null with the count, or computed over the other records with a note.",
    )(command)


def _bootstrap_method_option(command: Any) -> Any:
    """``--bootstrap-method`` of run and compare."""
    return click.option(
        "--bootstrap-method",
        type=click.Choice(BOOTSTRAP_METHODS),
        default=BOOTSTRAP_METHODS[0],
        show_default=True,
        help="multinomial: n records drawn with replacement; poisson: a Poisson(1) weight per "
        "record keyed on its id (the same in every slice and shard, and on both sides of a "
        "comparison).",
    )(command)


def _encoding_option(command: Any) -> Any:
    """``--encoding``, ``--gold`` and ``--allow-missing``, shared by run and compare: how the
    record files are read."""
    command = click.option(
        "--allow-missing",
        is_flag=True,
        help="With --gold: leave out (and count) records on one side only instead of stopping.",
    )(command)
    command = click.option(
        "--gold",
        default=None,
        type=click.Path(dir_okay=False),
        help="Gold records in a file of their own, joined to --data by id.",
    )(command)
    return click.option(
        "--encoding",
        default=None,
        help="Encoding of text record files (utf-8, gb18030, utf-16, ...) [default: detected].",
    )(command)


def _store_path_option(command: Any) -> Any:
    return click.option(
        "--store",
        "store",
        default=None,
        type=click.Path(dir_okay=False),
        help="Run store file [default: $PINGCE_STORE or ~/.local/share/pingce/runs.db].",
    )(command)


def _store_options(command: Any) -> Any:
    """``--name``, ``--store`` and ``--no-store`` of run: where the run is recorded."""
    command = click.option(
        "--no-store", is_flag=True, help="Do not record this run in the run store."
    )(command)
    command = _store_path_option(command)
    return click.option(
        "--name",
        "name",
        default=None,
        help="Name of the run in the run store (unique) [default: <suite>-<time>].",
    )(command)


@contextmanager
def _out_checked(out: str | Path | None, *, file: bool = False) -> Iterator[None]:
    """Before any work: ``out`` (a folder; with ``file``, a file's path) can be written, else
    exit 2 naming the path and the reason (:func:`pingce._outputs.prepare_out`); the folders
    made for the check are removed again when the command then fails."""
    if out is None:
        yield
        return
    from ._outputs import prepare_out
    from .errors import OutputError

    try:
        place = prepare_out(out, file=file)
    except OutputError as exc:
        _fail(exc.for_option("--out"))
        return
    try:
        yield
    except BaseException:
        place.discard()
        raise


@contextmanager
def _name_reserved(name: str | None, store: str | None) -> Iterator[None]:
    """Before any work: a --name already in the store, or reserved by a run of that name in
    progress (or blank), stops the run; else the name is reserved for this run (in the store,
    :func:`pingce.store.reserve_name`) until the block ends, when recording the run has taken
    the reservation back, or the run failed and it is released."""
    if name is None:
        yield
        return
    from .errors import PingceError
    from .store import reserve_name

    if not name.strip():
        _fail("--name: a run name cannot be empty")
    try:
        reservation = reserve_name(name, store)
    except PingceError as exc:
        _fail(str(exc))
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
    import dataclasses

    from .errors import PingceError
    from .store import default_store_path, record_run

    kept = {"suite": suite, **dataclasses.asdict(options)}
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pingce")
def cli() -> None:
    """pingce (评测): evaluate LLM applications against ground truth."""


@cli.command()
@click.argument("suite")
@click.option(
    "--data",
    "data",
    required=True,
    type=click.Path(),  # a folder or a pattern is told what reads it (pingce.readers)
    help="Records: .jsonl, .json, .csv, .tsv (also .gz), .parquet, .xlsx, or - for stdin; "
    "with --engine ray, files or a glob ('shards/*.jsonl').",
)
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False),
    help="Output folder [default: pingce-out/<suite>-<time>].",
)
@click.option(
    "--similarity",
    default=DEFAULT_SIMILARITY,
    show_default=True,
    help=backend_help(),
)
@click.option(
    "--base-url",
    default=None,
    help="Endpoint for openai:/embedding-api:/rerank: backends (or PINGCE_BASE_URL).",
)
@click.option(
    "--model",
    "model",
    default=None,
    metavar="openai:NAME",
    help="Run the model under test: send each record's prompt (and tools) to NAME at an "
    "OpenAI-compatible /v1/chat/completions and score its answers (the suite's model: block "
    "names the fields); predictions.jsonl is written beside results.json.",
)
@click.option(
    "--model-base-url",
    default=None,
    help="Endpoint of --model [default: --base-url, PINGCE_BASE_URL, OPENAI_BASE_URL].",
)
@click.option(
    "--api-key-env",
    default=None,
    metavar="VAR",
    help="Environment variable holding the key of --model [default: PINGCE_API_KEY, then "
    "OPENAI_API_KEY].",
)
@click.option(
    "--model-param",
    "model_param",
    multiple=True,
    metavar="KEY=VALUE",
    help="A request parameter of --model (VALUE read as JSON, else text), e.g. "
    "temperature=0.2, max_tokens=512, tool_choice=auto; repeatable [default: temperature=0].",
)
@click.option(
    "--model-concurrency",
    type=_ranged("model_concurrency"),
    default=None,
    help="Calls to --model in flight at once [default: the suite's, 16].",
)
@click.option(
    "--sample",
    type=_ranged("sample"),
    default=None,
    help="Evaluate N records drawn at random (seeded).",
)
@click.option(
    "--stratify", default=None, help="Draw --sample N with equal numbers per value of this field."
)
@click.option(
    "--allocation",
    type=click.Choice(["equal", "proportional"]),
    default="equal",
    show_default=True,
    help="How --stratify splits N over strata.",
)
@click.option(
    "--short-strata",
    type=click.Choice(["error", "take-all"]),
    default="error",
    show_default=True,
    help="A stratum with fewer records than its quota: stop, or take all it has.",
)
@click.option(
    "--seed",
    type=_ranged("seed"),
    default=0,
    show_default=True,
    help="Seed of every random choice (sampling, bootstrap).",
)
@click.option(
    "--bootstrap",
    type=_ranged("bootstrap"),
    default=1000,
    show_default=True,
    help="Bootstrap resamples for intervals; 0 turns them off.",
)
@click.option(
    "--ci-method",
    type=click.Choice(["bca", "percentile", "basic"]),
    default="bca",
    show_default=True,
    help="Bootstrap interval method.",
)
@_bootstrap_method_option
@click.option(
    "--ci-level",
    type=_ranged("ci_level"),
    default=0.95,
    show_default=True,
    help="Confidence level of the intervals.",
)
@click.option(
    "--slice",
    "slices",
    multiple=True,
    help="Also report metrics per value of this field (repeatable).",
)
@click.option(
    "--zero-division",
    type=click.Choice(["null", "0", "1"]),
    default=None,
    help="Value of 0/0 ratios [default: the suite's, null].",
)
@_policy_options
@_encoding_option
@click.option(
    "--fail-under",
    "fail_under",
    multiple=True,
    metavar="METRIC=X",
    help="Exit 4 when METRIC is below X (repeatable), e.g. --fail-under accuracy=0.8.",
)
@click.option(
    "--fail-over",
    "fail_over",
    multiple=True,
    metavar="METRIC=X",
    help="Exit 4 when METRIC is above X (repeatable), e.g. --fail-over hallucination_rate=0.1.",
)
@click.option(
    "--gate-on-interval",
    is_flag=True,
    help="Gates read the pessimistic end of the bootstrap interval instead of the value.",
)
@click.option(
    "--cache",
    "cache",
    default=None,
    type=click.Path(dir_okay=False),
    help="Similarity cache file [default: $PINGCE_CACHE_DIR or ~/.cache/pingce/].",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Do not read or write the cache (similarity scores and the model's answers).",
)
@click.option("--quiet", is_flag=True, help="Print only where the outputs are.")
@click.option("--no-progress", is_flag=True, help="Never show progress bars.")
@click.option(
    "--profile", "profile", is_flag=True, help="Show the time spent in each phase of the run."
)
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="ray: shards of --data (files or a glob such as 'shards/*.jsonl') on Ray Data, with "
    "the Poisson bootstrap (pip install 'pingce[ray]').",
)
@click.option(
    "--ray-address",
    default=None,
    metavar="ADDRESS",
    help="With --engine ray: the cluster to join (auto, ray://HOST:PORT) [default: a local one].",
)
@click.option(
    "--ray-scratch",
    default=None,
    metavar="DIR",
    help="With --engine ray: where the workers write their per-record shards until the outputs "
    "are written; on several machines, a folder they all share [default: a temporary folder].",
)
@_store_options
def run(
    suite: str,
    data: str,
    out: str | None,
    similarity: str,
    base_url: str | None,
    model: str | None,
    model_base_url: str | None,
    api_key_env: str | None,
    model_param: tuple[str, ...],
    model_concurrency: int | None,
    sample: int | None,
    stratify: str | None,
    allocation: Any,
    short_strata: Any,
    seed: int,
    bootstrap: int,
    ci_method: Any,
    bootstrap_method: Any,
    ci_level: float,
    slices: tuple[str, ...],
    zero_division: str | None,
    on_judge_failure: Any,
    laws: str | None,
    field_map: tuple[str, ...],
    encoding: str | None,
    gold: str | None,
    allow_missing: bool,
    fail_under: tuple[str, ...],
    fail_over: tuple[str, ...],
    gate_on_interval: bool,
    cache: str | None,
    no_cache: bool,
    quiet: bool,
    no_progress: bool,
    profile: bool,
    engine: Any,
    ray_address: str | None,
    ray_scratch: str | None,
    name: str | None,
    store: str | None,
    no_store: bool,
) -> None:
    """Evaluate the records in --data with SUITE (a built-in name or a suite YAML file)."""
    from .engine import evaluate_suite
    from .errors import PingceError
    from .gates import failed_gates, parse_gates
    from .options import RunOptions, parse_map, parse_model_params
    from .report import print_result, write_outputs

    console, err_console = _consoles()
    timer = _profiler(profile)
    _imports_done()
    started = time.time()
    with _name_reserved(None if no_store else name, store), _out_checked(out or _DEFAULT_OUT):
        try:
            options = RunOptions(
                similarity=similarity,
                sample=sample,
                stratify=stratify,
                allocation=allocation,
                short_strata=short_strata,
                seed=seed,
                bootstrap=bootstrap,
                ci_method=ci_method,
                bootstrap_method=bootstrap_method,
                ci_level=ci_level,
                slices=slices,
                zero_division="suite" if zero_division is None else zero_division,
                laws=laws,
                on_judge_failure=on_judge_failure,
                field_map=parse_map(field_map),
                base_url=base_url,
                cache=False if no_cache else cache,
                encoding=encoding,
                gold=gold,
                allow_missing=allow_missing,
                gates=parse_gates(fail_under, fail_over),
                gate_on_interval=gate_on_interval,
                model=model,
                model_base_url=model_base_url,
                api_key_env=api_key_env,
                model_params=parse_model_params(model_param),
                model_concurrency=model_concurrency,
                engine=engine,
                ray_address=ray_address,
                ray_scratch=ray_scratch,
            )
            with _progress(
                err_console, enabled=not (quiet or no_progress) and err_console.is_terminal
            ) as hook:
                result = evaluate_suite(suite, data, options, progress=hook, profile=timer)
            target = Path(out) if out else _default_out(result.suite)
            start = time.perf_counter()
            try:
                paths = write_outputs(result, target)
            finally:  # --engine ray: the workers' shards, linked into the outputs by now
                result.release_shards()  # (the process ends at once: no finaliser would run)
            written = time.perf_counter() - start
        except PingceError as exc:
            _fail(exc)
            return
        start = time.perf_counter()
        if not quiet:
            print_result(result, console)
        if not no_store:  # the outputs line stays the last one printed
            recorded = _record(result, name, store, data, target, options, suite, started)
            if recorded and not quiet:
                console.print(f"run: {recorded}", highlight=False)
        console.print(f"outputs: {target}/ ({', '.join(paths)})")
        _show_profile(timer, written, start, err_console)
        _keep(result)
        failed = failed_gates(result.metrics, options.gates, on_interval=options.gate_on_interval)
        for line in failed:
            err_console.print(f"gate failed: {line}", markup=False, highlight=False, soft_wrap=True)
        if failed:
            sys.exit(EXIT_GATE)
        if options.gates and not quiet:
            console.print(f"gates passed: {len(options.gates)}")
        if result.failures.judge or getattr(result.failures, "model", 0):
            sys.exit(EXIT_JUDGE_FAILURES)


@cli.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("refs", nargs=-1, metavar="SUITE --data FILE --baseline FILE | RUN_A RUN_B")
@click.option(
    "--data",
    "data",
    default=None,
    type=click.Path(dir_okay=False),
    help="The candidate system's records (the formats of run --data).",
)
@click.option(
    "--baseline",
    default=None,
    type=click.Path(dir_okay=False),
    help="The baseline system's records over the same ids.",
)
@click.option(
    "--suite",
    "suite_file",
    default=None,
    help="RUN_A RUN_B: the runs' suite, when it is not built in [default: the suite the run "
    "store recorded for RUN_A, else the built-in suite of the runs' suite name].",
)
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False),
    help="Write comparison.json and comparison.html here.",
)
@_store_path_option
@click.option(
    "--similarity",
    default=DEFAULT_SIMILARITY,
    show_default=True,
    help="Similarity backend (the names of run --similarity).",
)
@click.option("--base-url", default=None, help="Endpoint of a remote similarity backend.")
@click.option(
    "--seed", type=_ranged("seed"), default=0, show_default=True, help="Seed of the bootstrap."
)
@click.option(
    "--bootstrap",
    type=_ranged("bootstrap"),
    default=1000,
    show_default=True,
    help="Paired bootstrap resamples; 0 gives the differences only.",
)
@click.option(
    "--ci-method",
    type=click.Choice(["bca", "percentile", "basic"]),
    default="bca",
    show_default=True,
    help="Interval method for the differences.",
)
@_bootstrap_method_option
@click.option(
    "--ci-level",
    type=_ranged("ci_level"),
    default=0.95,
    show_default=True,
    help="Confidence level; a difference is significant when its Holm-adjusted p < 1 - level.",
)
@click.option(
    "--zero-division",
    type=click.Choice(["null", "0", "1"]),
    default=None,
    help="Value of 0/0 ratios [default: the suite's, null].",
)
@click.option(
    "--slice",
    "slices",
    multiple=True,
    help="Compare within each value of this field too (repeatable); both sides must agree on it.",
)
@_policy_options
@_encoding_option
@click.option(
    "--fail-on-regression",
    "fail_on_regression",
    multiple=True,
    metavar="METRIC[:MARGIN]",
    help="Exit 4 when METRIC (or 'all') is significantly worse after Holm; with a margin, when "
    "the paired interval does not exclude a drop larger than MARGIN. Repeatable.",
)
@click.option("--cache", "cache", default=None, type=click.Path(dir_okay=False), help="Cache file.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the similarity cache.")
@click.option("--no-progress", is_flag=True, help="Never show progress bars.")
@click.option("--profile", "profile", is_flag=True, help="Show the time spent in each phase.")
def compare(
    refs: tuple[str, ...],
    data: str | None,
    baseline: str | None,
    suite_file: str | None,
    out: str | None,
    store: str | None,
    similarity: str,
    base_url: str | None,
    seed: int,
    bootstrap: int,
    ci_method: Any,
    bootstrap_method: Any,
    ci_level: float,
    zero_division: str | None,
    slices: tuple[str, ...],
    on_judge_failure: Any,
    laws: str | None,
    field_map: tuple[str, ...],
    encoding: str | None,
    gold: str | None,
    allow_missing: bool,
    fail_on_regression: tuple[str, ...],
    cache: str | None,
    no_cache: bool,
    no_progress: bool,
    profile: bool,
) -> None:
    """Compare two systems: both values of every metric, their difference, a paired bootstrap
    interval of the difference and the tests of "no difference" (the bootstrap p-value that
    inverts the interval, exact McNemar for accuracy-type metrics, approximate randomisation;
    Holm across the metrics), in words.

    \b
    pingce compare SUITE --data CANDIDATE --baseline BASELINE
        evaluates both record files with SUITE (records match by id).
    pingce compare RUN_A RUN_B
        compares two stored runs of one suite, RUN_A the candidate: run names (pingce runs) or
        run output folders. Their saved per-record statistics (stats.npz) are paired by record
        id: nothing is evaluated again and no model is called.
    """
    from .engine import compare_suite
    from .errors import PingceError
    from .gates import parse_regression_gates, regressions
    from .options import RunOptions, parse_map
    from .report import print_comparison, write_comparison

    console, err_console = _consoles()
    timer = _profiler(profile)
    _imports_done()
    by_runs = data is None and baseline is None and len(refs) == 2
    if not by_runs:
        if len(refs) != 1 or data is None or baseline is None:
            _fail(
                "pingce compare takes SUITE --data CANDIDATE --baseline BASELINE (two record "
                "files), or RUN_A RUN_B (two stored runs: names or output folders)"
            )
            return
        if suite_file is not None:
            _fail("--suite is for RUN_A RUN_B; with --data and --baseline the suite is SUITE")
            return
    with _out_checked(out):  # before any work
        try:
            options = RunOptions(
                similarity=similarity,
                seed=seed,
                bootstrap=bootstrap,
                ci_method=ci_method,
                bootstrap_method=bootstrap_method,
                ci_level=ci_level,
                zero_division="suite" if zero_division is None else zero_division,
                laws=laws,
                on_judge_failure=on_judge_failure,
                field_map=parse_map(field_map),
                base_url=base_url,
                cache=False if no_cache else cache,
                encoding=encoding,
                regression_gates=parse_regression_gates(fail_on_regression),
                gold=gold,
                allow_missing=allow_missing,
                slices=slices,
            )
            enabled = not no_progress and err_console.is_terminal
            with _progress(err_console, enabled=enabled) as hook:
                if by_runs:
                    result = _compare_runs(refs, suite_file, store, options, hook, timer)
                else:
                    assert data is not None and baseline is not None
                    result = compare_suite(
                        refs[0], data, baseline, options, progress=hook, profile=timer
                    )
            start = time.perf_counter()
            path = write_comparison(result, out) if out else None
            written = time.perf_counter() - start
        except PingceError as exc:
            _fail(exc)
            return
    start = time.perf_counter()
    print_comparison(result, console)
    if path is not None:
        console.print(f"output: {path}")
    _show_profile(timer, written, start, err_console)
    failed = regressions(result.metrics, options.regression_gates)
    for line in failed:
        err_console.print(f"gate failed: {line}", markup=False, highlight=False, soft_wrap=True)
    if failed:
        sys.exit(EXIT_GATE)
    if options.regression_gates:
        console.print(f"no regression: {len(options.regression_gates)} gate(s) passed")
    if any(side.judge for side in result.failures.values()):
        sys.exit(EXIT_JUDGE_FAILURES)


_FILE_ONLY = {
    "field_map": "--map",
    "encoding": "--encoding",
    "gold": "--gold",
    "allow_missing": "--allow-missing",
}
"""Options of compare that read record files: they do not apply to two stored runs."""
_SCORING = {
    "similarity": "--similarity",
    "base_url": "--base-url",
    "cache": "--cache",
    "no_cache": "--no-cache",
}
"""Options of compare that score similarities: two stored runs were scored already."""


def _compare_runs(
    refs: tuple[str, ...],
    suite_file: str | None,
    store: str | None,
    options: Any,
    hook: ProgressHook,
    timer: Profile | None,
) -> Any:
    """``pingce compare RUN_A RUN_B``: both runs read back from their folders (results.json,
    records.jsonl, stats.npz) and compared from their saved per-record statistics."""
    from click.core import ParameterSource

    from .errors import OptionError
    from .stored import compare_stored

    context = click.get_current_context()

    def given(name: str) -> bool:
        return context.get_parameter_source(name) in (
            ParameterSource.COMMANDLINE,
            ParameterSource.ENVIRONMENT,
        )

    for name, option in _FILE_ONLY.items():
        if given(name):
            raise OptionError(
                f"{option} reads record files: it does not apply to comparing two stored runs"
            )
    result = compare_stored(
        refs[0], refs[1], options, suite=suite_file, store=store, progress=hook, profile=timer
    )
    scoring = [option for name, option in _SCORING.items() if given(name)]
    if scoring:
        result.notes.append(
            f"{', '.join(scoring)} not used: the runs' similarities were scored when they ran "
            f"({result.signature.similarity or 'no metric needed any'})"
        )
    return result


@cli.command()
@click.option(
    "--pairs",
    "pairs",
    required=True,
    type=click.Path(dir_okay=False),
    help='JSONL of {"a", "b", "match": bool} labelled by people.',
)
@click.option(
    "--similarity",
    default=DEFAULT_SIMILARITY,
    show_default=True,
    help="Backend to calibrate (names as for run: lexical, embedding, openai:<model>, ...).",
)
@click.option(
    "--out",
    "out",
    default=None,
    type=click.Path(dir_okay=False),
    help="Also write the result as JSON (signature, n_pairs, failures, auc, best, curve) here.",
)
@click.option(
    "--base-url", default=None, help="Endpoint for openai:/embedding-api:/rerank: backends."
)
@click.option(
    "--cache", default=None, type=click.Path(dir_okay=False), help="Similarity cache file."
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the similarity cache.")
@click.option("--no-progress", is_flag=True, help="Never show progress bars.")
def calibrate(
    pairs: str,
    similarity: str,
    out: str | None,
    base_url: str | None,
    cache: str | None,
    no_cache: bool,
    no_progress: bool,
) -> None:
    """Choose the similarity threshold τ that best reproduces human match labels (max F1), and
    measure how well the backend ranks matches above non-matches (ROC AUC)."""
    from rich.table import Table

    from .calibrate import calibrate as run_calibration
    from .calibrate import write_calibration
    from .errors import PingceError
    from .report.format import fmt_number

    console, err_console = _consoles()
    with _out_checked(out, file=True):  # before any work
        try:
            with _progress(
                err_console, enabled=not no_progress and err_console.is_terminal
            ) as hook:
                result = run_calibration(
                    pairs,
                    similarity,
                    base_url=base_url,
                    cache=False if no_cache else cache,
                    progress=hook,
                )
            path = write_calibration(result, out) if out else None
        except PingceError as exc:
            _fail(exc)
            return
    table = Table(title=f"{result.signature}: {result.n_pairs} pairs", title_justify="left")
    for column in ("τ (Sim > τ)", "precision", "recall", "F1", "kappa", "TP", "FP", "FN", "TN"):
        table.add_column(column, justify="right")
    points = result.curve
    if len(points) > 25:
        step = len(points) / 25
        keep = {int(i * step) for i in range(25)} | {points.index(result.best)}
        points = [p for i, p in enumerate(points) if i in keep]
    for p in points:
        style = "bold green" if p == result.best else None
        table.add_row(
            f"{p.threshold:.4f}",
            fmt_number(p.precision),
            fmt_number(p.recall),
            fmt_number(p.f1),
            fmt_number(p.kappa),
            str(p.tp),
            str(p.fp),
            str(p.fn),
            str(p.tn),
            style=style,
        )
    console.print(table)
    best = result.best
    console.print(
        f"best τ = {best.threshold:.4f}: F1 {fmt_number(best.f1)}, Cohen's kappa with the labels "
        f"{fmt_number(best.kappa)} (precision {fmt_number(best.precision)}, recall "
        f"{fmt_number(best.recall)})"
    )
    console.print(f"ROC AUC {fmt_number(result.auc)} (0.5 is chance, 1 a perfect ranking)")
    if path is not None:
        console.print(f"output: {path}")
    if result.failures:
        console.print(f"[red]{result.failures} pair(s) could not be scored and were left out[/red]")
        sys.exit(EXIT_JUDGE_FAILURES)


@cli.command()
def metrics() -> None:
    """List every registered metric with a one-line definition."""
    from rich.console import Console
    from rich.table import Table

    from .metrics.registry import DEPRECATED, REQUIRED, metric_registry, table_registry

    console = Console()
    table = Table(title="metrics", title_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("kind")
    table.add_column("definition", overflow="fold")
    table.add_column("parameters", overflow="fold")
    for registry in (metric_registry(), table_registry()):
        for name, info in registry.items():
            params = ", ".join(
                f"{p} (required)" if default is REQUIRED else p
                for p, default in info.parameters.items()
                if p != "scale"
            )
            table.add_row(name, info.kind, info.definition, params)
    console.print(table)
    renamed = ", ".join(f"{old} -> {new}" for old, new in DEPRECATED.items())
    console.print(f"deprecated names (still accepted in suite files): {renamed}", highlight=False)


@cli.command()
def suites() -> None:
    """List the built-in suites."""
    from rich.console import Console
    from rich.table import Table

    from .suites import builtin_suites

    console = Console()
    table = Table(title="built-in suites", title_justify="left")
    table.add_column("suite", style="bold")
    table.add_column("description", overflow="fold")
    for name, description in builtin_suites().items():
        table.add_row(name, description)
    console.print(table)


@cli.command()
@click.option(
    "--examples",
    "examples",
    default=None,
    type=click.Path(file_okay=False),
    help="Folder with <suite>/records.jsonl examples [default: the ones installed with pingce].",
)
@click.option(
    "--out",
    "out",
    default="demo-out",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where the outputs go.",
)
def demo(examples: str | None, out: str) -> None:
    """Run every built-in suite on its bundled example records (from any folder: the examples
    are installed with pingce)."""
    from rich.console import Console

    from .engine import evaluate_suite
    from .errors import PingceError
    from .options import RunOptions
    from .report import print_result, write_outputs
    from .suites import builtin_suites

    if examples is None:
        examples = str(Path(__file__).resolve().parent / "examples")
    console = Console()
    ran = 0
    with _out_checked(out):  # before any work
        for name in builtin_suites():
            data = Path(examples) / name.replace("-", "_") / "records.jsonl"
            if not data.is_file():
                continue
            console.rule(f"[bold]{name}[/bold]: {data}")
            try:
                result = evaluate_suite(name, data, RunOptions())
                paths = write_outputs(result, Path(out) / name)
            except PingceError as exc:
                _fail(exc)
                return
            print_result(result, console)
            console.print(f"outputs: {Path(out) / name}/ ({', '.join(paths)})\n")
            ran += 1
        if not ran:
            _fail(f"no example records found under {examples}/<suite>/records.jsonl")
    console.print(f"ran {ran} example suite(s); outputs under {out}/")


@cli.command()
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--out",
    "out",
    default=None,
    type=click.Path(file_okay=False),
    help="Where report.html and report.md go [default: the run's own folder].",
)
@_store_path_option
def report(run_ref: str, out: str | None, store: str | None) -> None:
    """Write the report.html and report.md of RUN again (a run name from `pingce runs`, or a
    run's output folder), from its results.json and records.jsonl; or, for a comparison's
    folder, its comparison.html and comparison.md from comparison.json. Nothing is evaluated
    again and no model is called."""
    from .errors import PingceError
    from .report.rewrite import rewrite_reports

    with _out_checked(out):  # before reading the run
        try:
            from .store import run_folder

            if (Path(run_ref) / "comparison.json").is_file():  # a comparison's folder
                from .report.rewrite import rewrite_comparison

                paths = rewrite_comparison(run_ref, out)
            else:
                folder, _ = run_folder(run_ref, store=store)
                paths = rewrite_reports(folder, out)
        except PingceError as exc:
            _fail(exc)
            return
    click.echo(f"wrote {', '.join(str(p) for p in paths)}")


@cli.group(invoke_without_command=True)
@click.option("--suite", default=None, help="Only the runs of this suite.")
@click.option("--name", "name", default=None, help="Only runs whose name contains this text.")
@click.option(
    "--limit",
    type=_ranged("limit"),
    default=20,
    show_default=True,
    help="At most this many runs (0: all of them).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
@_store_path_option
@click.pass_context
def runs(
    ctx: click.Context,
    suite: str | None,
    name: str | None,
    limit: int,
    as_json: bool,
    store: str | None,
) -> None:
    """List the recorded runs, newest first (show one with `pingce runs show NAME`, delete one
    with `pingce runs rm NAME`)."""
    ctx.obj = store
    if ctx.invoked_subcommand is not None:
        return
    from .errors import PingceError
    from .report.runs import print_runs
    from .store import default_store_path
    from .store import runs as stored_runs

    try:
        found = stored_runs(suite=suite, name=name, limit=limit or None, store=store)
    except PingceError as exc:
        _fail(str(exc))
        return
    if as_json:
        import json

        click.echo(json.dumps([r.to_dict() for r in found], ensure_ascii=False, indent=2))
        return
    console, _ = _consoles()
    print_runs(found, store if store is not None else default_store_path(), console)


@runs.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
@_store_path_option
@click.pass_context
def runs_show(ctx: click.Context, name: str, as_json: bool, store: str | None) -> None:
    """Print a recorded run: its metrics (and slices) with intervals, and where it came from."""
    from .errors import PingceError
    from .report.runs import print_run
    from .store import run_info

    try:
        info = run_info(name, store=store if store is not None else ctx.obj)
    except PingceError as exc:
        _fail(str(exc))
        return
    if as_json:
        import json

        click.echo(json.dumps(info.to_dict(), ensure_ascii=False, indent=2))
        return
    console, _ = _consoles()
    print_run(info, console)


@runs.command("rm")
@click.argument("names", nargs=-1, required=True)
@_store_path_option
@click.pass_context
def runs_rm(ctx: click.Context, names: tuple[str, ...], store: str | None) -> None:
    """Delete recorded runs from the store (their output folders stay where they are)."""
    from .errors import PingceError
    from .store import default_store_path, remove_run

    path = store if store is not None else ctx.obj
    for name in names:
        try:
            info = remove_run(name, store=path)
        except PingceError as exc:
            _fail(str(exc))
            return
        where = path if path is not None else default_store_path()
        kept = f"; its output folder {info.out_dir} was left as it is" if info.out_dir else ""
        click.echo(f"removed run {info.name} from the run store {where}{kept}")


@cli.command()
@_store_path_option
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (one that is not a loopback address lets others read the store).",
)
@click.option(
    "--port",
    type=_ranged("port"),
    default=0,
    show_default=True,
    help="Port to listen on (0: a free one).",
)
@click.option("--no-browser", is_flag=True, help="Only print the address; open no browser.")
def view(store: str | None, host: str, port: int, no_browser: bool) -> None:
    """Serve the run store on this machine: the runs, each run's report, two runs compared, and
    a metric's trend across the runs of a suite (Ctrl+C stops)."""
    from .report.viewer import serve

    try:
        serve(
            store,
            host,
            port,
            open_browser=not no_browser,
            echo=click.echo,
            warn=lambda text: click.echo(text, err=True),
        )
    except OSError as exc:
        _fail(f"pingce view cannot listen on {host}:{port}: {exc.strerror or exc}")


_ends_at_once = False
"""Set by :func:`main` alone: the process ends as soon as the command is done."""
_left_to_the_system: list[object] = []
"""What a command made, kept (when the process ends at once) so that it is not freed an object
at a time on the way out: the operating system takes the memory back whole."""


def _keep(*made: object) -> None:
    """Keep what the command made to the end when :func:`main` ends the process at once."""
    if _ends_at_once:
        _left_to_the_system.extend(made)


_default_show_warning = warnings.showwarning


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """pingce's own warnings as one line for people (``pingce: warning: ...``), without the
    source file and line of the code that warned; other packages' warnings as Python shows them."""
    if category.__module__.startswith("pingce"):
        print(f"pingce: warning: {message}", file=file or sys.stderr)
        return
    _default_show_warning(message, category, filename, lineno, file, line)


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM (``kill``, a job scheduler's stop): the command ends as Ctrl+C ends it, through
    every ``finally`` on the way out (a staging folder removed, a folder made for --out and a
    reserved run name given back), with status 128 + 15."""
    raise SystemExit(128 + signum)


_interrupted = False
"""Whether Ctrl+C stopped the command (click then says "Aborted!" and exits 1)."""


def _ctrl_c(number: int, frame: object) -> None:
    """SIGINT: Python's own handler (a KeyboardInterrupt, so every ``finally`` runs, the cache
    writes among them), remembered for the exit status."""
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def main() -> None:
    """Entry point of the ``pingce`` command (the console script and ``python -m pingce``).

    When the command is done (its files written and closed), the process ends at once with the
    command's exit status (``os._exit`` after flushing stdout and stderr): freeing half a
    million records an object at a time, and the interpreter's own teardown, would only make
    the user wait. Code that calls :func:`cli` itself (tests, other programs) is not ended.
    ``atexit`` handlers do not run: whatever a command must finish (a cache, a connection, a
    cluster) it finishes inside the command."""
    global _ends_at_once
    _ends_at_once = True
    warnings.showwarning = _show_warning
    signal.signal(signal.SIGTERM, _terminated)
    signal.signal(signal.SIGINT, _ctrl_c)
    code: int
    try:
        cli(prog_name="pingce")
        code = 0
    except SystemExit as exc:
        if _interrupted and exc.code == 1:  # click's "Aborted!" (pingce view stops with 0)
            code = EXIT_INTERRUPTED
        elif exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:  # sys.exit("message"): the message on stderr, status 1
            print(exc.code, file=sys.stderr)
            code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said
            code = code or 1
    os._exit(code)
