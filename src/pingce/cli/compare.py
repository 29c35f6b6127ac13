"""``pingce compare``: two record files, or two stored runs, compared."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

import click

from .common import (
    EXIT_GATE,
    EXIT_JUDGE_FAILURES,
    consoles,
    fail,
    imports_done,
    out_checked,
    profiler,
    progress,
    show_profile,
    store_path_option,
)
from .table import table_options

if TYPE_CHECKING:
    from ..engine.profile import Profile
    from ..progress import ProgressHook

__all__ = ["compare"]


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument(
    "refs", nargs=-1, metavar="SUITE --data FILE --baseline FILE | RUN_A RUN_B | LOG_B LOG_A"
)
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
@click.option(
    "--labels",
    "labels",
    default=None,
    type=click.Path(dir_okay=False),
    help="RUN_A RUN_B: a filled audit sheet over both runs (pingce audit sample RUN_A RUN_B): "
    "each judge-dependent metric of both runs and their difference corrected by the people's "
    "labels, paired on the records labelled in both (--bootstrap 0: the delta method's "
    "interval).",
)
@click.option(
    "--lambda",
    "lam",
    type=click.FloatRange(0, 1),
    default=None,
    help="With --labels: the weight of the judge's scores, 1 classic PPI, 0 the labels alone "
    "[default: tuned for each metric, PPI++].",
)
@click.option(
    "--by",
    "by",
    default=None,
    help="LOG: compare two systems in one file of another tool, FIELD or "
    "FIELD=CANDIDATE,BASELINE (promptfoo's provider or prompt).",
)
@click.option(
    "--from",
    "tool",
    type=click.Choice(["inspect", "promptfoo", "lm-eval", "bfcl"]),
    default=None,
    help="Read LOG_B LOG_A as this tool's files [default: recognised by their content].",
)
@store_path_option
@table_options("compare", last="ci_level")
@table_options("compare", first="zero_division", last="zero_division")
@table_options("compare", first="slices", last="slices")
@table_options("compare", first="on_judge_failure")
def compare(
    refs: tuple[str, ...],
    data: str | None,
    baseline: str | None,
    suite_file: str | None,
    out: str | None,
    labels: str | None,
    lam: float | None,
    by: str | None,
    tool: str | None,
    store: str | None,
    **values: Any,
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

    \b
    pingce compare LOG_B LOG_A
        compares two runs of another tool (Inspect logs, promptfoo results, lm-eval samples,
        BFCL score files), LOG_B the candidate: samples paired by id (and epoch), every
        scorer both have. pingce compare LOG --by provider compares two systems in one file.

    \b
    --pairwise --judge openai:MODEL (either form; a suite with judged metrics)
        also asks the judge, for every paired record, which side's answer is better, in both
        orders: the candidate's win rate over the baseline and the judge's position bias.
        Stored runs keep their answers with pingce run --records-fields all.

    \b
    pingce compare RUN_A RUN_B --labels SHEET
        the judge-dependent metrics of both runs and their difference corrected by a human
        audit of the judge: SHEET from pingce audit sample RUN_A RUN_B, filled in.
    """
    from ..engine import compare_suite
    from ..errors import PingceError
    from ..options import command_line_options
    from ..report import print_comparison, write_comparison

    console, err_console = consoles()
    timer = profiler(values["profile"])
    imports_done()
    by_runs = data is None and baseline is None and len(refs) == 2
    logs = _tool_files(refs, data, baseline, by, tool)
    if labels is not None or lam is not None:
        _compare_audited(refs, labels, lam, by_runs, out, store, values)
        return
    if not by_runs and not logs:
        if len(refs) != 1 or data is None or baseline is None:
            fail(
                "pingce compare takes SUITE --data CANDIDATE --baseline BASELINE (two record "
                "files), RUN_A RUN_B (two stored runs: names or output folders), or LOG_B LOG_A "
                "(two files of another tool: Inspect, promptfoo, lm-eval, BFCL)"
            )
            return
        if suite_file is not None:
            fail("--suite is for RUN_A RUN_B; with --data and --baseline the suite is SUITE")
            return
    with out_checked(out):  # before any work
        try:
            options = command_line_options("compare", values)
            enabled = not values["no_progress"] and err_console.is_terminal
            with progress(err_console, enabled=enabled) as hook:
                if logs:
                    from ..tool_logs.evaluate import compare_tool_files

                    second = refs[1] if len(refs) > 1 else None
                    result = compare_tool_files(
                        refs[0], second, options, tool=tool, by=by, progress=hook, profile=timer
                    )
                elif by_runs:
                    result = _compare_stored_runs(refs, suite_file, store, options, hook, timer)
                else:
                    assert data is not None and baseline is not None
                    result = compare_suite(
                        refs[0], data, baseline, options, progress=hook, profile=timer
                    )
            start = time.perf_counter()
            path = write_comparison(result, out) if out else None
            written = time.perf_counter() - start
        except PingceError as exc:
            fail(exc)
            return
    start = time.perf_counter()
    whole = None if path is None else str(path.parent / "comparison.md")
    print_comparison(result, console, written=whole)
    if path is not None:
        console.print(f"output: {path}")
    show_profile(timer, written, start, err_console)
    _gates(result, options.gating.regression_gates, console, err_console)
    if any(side.judge for side in result.failures.values()) or _pairwise_failed(result):
        sys.exit(EXIT_JUDGE_FAILURES)


def _tool_files(
    refs: tuple[str, ...], data: str | None, baseline: str | None, by: str | None, tool: str | None
) -> bool:
    """Whether the command compares files of another tool: LOG_B LOG_A, or LOG --by FIELD."""
    if data is not None or baseline is not None or len(refs) != (1 if by else 2):
        if by is not None:
            fail("--by FIELD compares two systems in one file of another tool: pingce compare "
                 "LOG --by FIELD")  # fmt: skip
        return False
    if tool is not None:
        return True
    from ..tool_logs import detect_tool

    return all(detect_tool(ref) is not None for ref in refs)


def _compare_audited(
    refs: tuple[str, ...],
    labels: str | None,
    lam: float | None,
    by_runs: bool,
    out: str | None,
    store: str | None,
    values: dict[str, Any],
) -> None:
    """``pingce compare RUN_A RUN_B --labels SHEET``: both runs and their difference corrected
    by the audit; a regression gate with a margin judges the corrected difference's interval."""
    from ..audits.correct import Intervals
    from ..audits.paired import audit_pair, write_pair_audit
    from ..audits.runs import reopen
    from ..errors import PingceError
    from ..gates import regressions
    from ..options import command_line_options
    from ..report.console import print_paired_audit

    console, err_console = consoles()
    if not by_runs or labels is None:
        fail(
            "--labels and --lambda are for two stored runs: pingce compare RUN_A RUN_B --labels "
            "SHEET (the sheet from pingce audit sample RUN_A RUN_B)"
        )
        return
    for name, flag in (("pairwise", "--pairwise"), ("slices", "--slice")):
        if values.get(name):
            fail(f"{flag} does not apply with --labels (the corrected comparison)")
            return
    with out_checked(out):
        try:
            options = command_line_options("compare", values)
            gates = options.gating.regression_gates
            if any(g.margin is None for g in gates):
                raise _no_margin()
            if options.gating.margin_gates:
                raise _no_margin("--non-inferior and --equivalent do not apply with --labels")
            method: Any = "normal" if values["bootstrap"] == 0 else values["ci_method"]
            ci = Intervals(method, max(values["bootstrap"], 1), values["seed"])
            a = reopen(refs[0], store=store)
            b = reopen(refs[1], store=store)
            result = audit_pair(a, b, labels, lam=lam, level=values["ci_level"], ci=ci)
            path = write_pair_audit(result, out) if out else None
        except PingceError as exc:
            fail(exc)
            return
    print_paired_audit(result, console, values["ci_level"])
    if path is not None:
        console.print(f"output: {path}")
    entries = _gated(result, a)
    unknown = next((g for g in gates if g.metric is not None and g.metric not in entries), None)
    if unknown is not None:
        fail(
            f"{unknown.option}: {unknown.metric} is not corrected by the audit (it reads no "
            "judge, or measures the judge itself): gate it with pingce compare without --labels"
        )
        return
    failed = regressions(entries, gates)
    for line in failed:
        err_console.print(f"gate failed: {line}", markup=False, highlight=False, soft_wrap=True)
    if failed:
        sys.exit(EXIT_GATE)
    if gates:
        console.print(f"no regression on the corrected values: {len(gates)} gate(s) passed")


def _no_margin(what: str = "--fail-on-regression with --labels needs a margin") -> Exception:
    from ..errors import OptionError

    return OptionError(
        f"{what}: with --labels, gate with --fail-on-regression METRIC:MARGIN (the corrected "
        "difference is judged by its interval)"
    )


def _gated(result: Any, run: Any) -> dict[str, Any]:
    """The corrected differences as a comparison's metric entries for the regression gates."""
    from types import SimpleNamespace

    out = {}
    for name, sides in result.metrics.items():
        d = sides["difference"]
        if not d.depends_on_judge or d.measures_the_judge:
            continue
        out[name] = SimpleNamespace(
            delta=d.value,
            ci_low=d.ci_low,
            ci_high=d.ci_high,
            higher_is_better=run.plan.metrics[name].higher_is_better,
            note=(d.notes or [None])[0],
        )
    return out


def _gates(result: Any, gates: Any, console: Any, err_console: Any) -> None:
    """Check the regression gates and the decision (``--non-inferior``, ``--equivalent``) on a
    comparison: what each says, and exit 4 when one fails."""
    from ..gates import regressions

    failed = regressions(result.metrics, gates)
    for line in failed:
        err_console.print(f"gate failed: {line}", markup=False, highlight=False, soft_wrap=True)
    decision = result.decision
    if decision is not None:
        for gate in decision.gates:
            if gate.passed:
                console.print(f"passed: {gate.reason}", markup=False, highlight=False)
            else:
                err_console.print(
                    f"gate failed: {gate.reason}", markup=False, highlight=False, soft_wrap=True
                )
    if failed or (decision is not None and not decision.passed):
        sys.exit(EXIT_GATE)
    if gates:
        console.print(f"no regression: {len(gates)} gate(s) passed")
    if decision is not None:
        console.print(
            f"decision: the candidate passes ({len(decision.gates)} gate(s), one-sided alpha "
            f"{decision.alpha:g}, {decision.multiplicity})"
        )


def _pairwise_failed(result: Any) -> bool:
    """Whether a judge call of ``--pairwise`` failed after its retries."""
    pairwise = result.pairwise
    return pairwise is not None and any(j.get("failures") for j in pairwise.judge.values())


def _compare_stored_runs(
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

    from ..compare_stored import compare_stored
    from ..errors import OptionError
    from ..option_table import options_of, stored_run_refusal

    context = click.get_current_context()

    def given(name: str) -> bool:
        return context.get_parameter_source(name) in (
            ParameterSource.COMMANDLINE,
            ParameterSource.ENVIRONMENT,
        )

    refused: dict[str, list[str]] = {"error": [], "note": []}
    for option in options_of("compare"):
        why = stored_run_refusal(option.name)
        if why is None and option.name in _ASKING and not options.judging.pairwise:
            why = "note"  # what only --pairwise asks a judge with
        if why is not None and option.option is not None and given(option.name):
            refused[why].append(option.option)
    if refused["error"]:
        raise OptionError(
            f"{refused['error'][0]} reads record files: it does not apply to comparing two "
            "stored runs"
        )
    result = compare_stored(
        refs[0], refs[1], options, suite=suite_file, store=store, progress=hook, profile=timer
    )
    scoring = refused["note"]
    if scoring:
        judging = {"--judge", "--rubric", "--scale"} & set(scoring)
        result.notes.append(
            f"{', '.join(scoring)} not used: the runs' similarities were scored when they ran "
            f"({result.signature.similarity or 'no metric needed any'})"
            + (", and two stored runs ask a judge only with --pairwise" if judging else "")
        )
    return result


_ASKING = ("judges", "rubric", "base_url", "cache", "no_cache")
"""The options two stored runs use only with ``--pairwise`` (the judges and their cache)."""
