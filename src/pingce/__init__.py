"""pingce (评测): evaluate LLM applications against ground truth.

>>> import pingce
>>> result = pingce.evaluate("contract-risk", "records.jsonl")  # doctest: +SKIP
>>> result.metrics["accuracy"].value  # doctest: +SKIP

Every ``pingce run`` is recorded in the run store: ``pingce.runs()``, ``pingce.run_info(name)``
and ``pingce.remove_run(name)`` read and edit it (:mod:`pingce.history`).

Names are imported on first use, so ``import pingce`` (and the ``pingce`` command) start fast.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Unpack

from ._lazy import lazy_exports
from ._version import __version__

if TYPE_CHECKING:
    from .errors import InputError, OptionError, PingceError, SuiteError
    from .history import RunInfo, remove_run, run_info, runs
    from .labels import LabelScale
    from .option_table import CompareOptions, CompareRunsOptions, EvaluateOptions
    from .results import ComparisonResult, EvaluationResult, MetricComparison, MetricResult

__all__ = [
    "ComparisonResult",
    "EvaluationResult",
    "InputError",
    "LabelScale",
    "MetricComparison",
    "MetricResult",
    "OptionError",
    "PingceError",
    "RunInfo",
    "SuiteError",
    "__version__",
    "audit",
    "compare",
    "compare_logs",
    "compare_runs",
    "evaluate",
    "evaluate_log",
    "remove_run",
    "run_info",
    "runs",
]

_LAZY = {
    "ComparisonResult": "results",
    "EvaluationResult": "results",
    "MetricComparison": "results",
    "MetricResult": "results",
    "InputError": "errors",
    "OptionError": "errors",
    "PingceError": "errors",
    "SuiteError": "errors",
    "LabelScale": "labels",
    "RunInfo": "history",
    "runs": "history",
    "run_info": "history",
    "remove_run": "history",
}


__getattr__ = lazy_exports(__name__, _LAZY, globals())


def evaluate(
    suite: str | os.PathLike[str] | Any,
    records: str | os.PathLike[str] | Iterable[Mapping[str, Any]] | Any,
    *,
    out: str | os.PathLike[str] | None = None,
    **options: Unpack[EvaluateOptions],
) -> EvaluationResult:
    """Evaluate ``records`` with ``suite`` and return the result that results.json serialises.

    ``suite`` is a built-in name, a suite YAML path or a :class:`pingce.suites.SuiteSpec`;
    ``records`` a path (``.jsonl``, ``.json``, ``.csv``, ``.tsv``, each also ``.gz``;
    ``.parquet``; ``.xlsx``), a data frame (pandas or polars DataFrame, pyarrow Table, Hugging
    Face ``datasets.Dataset``; one record a row) or an iterable of dictionaries. ``options`` are
    the command line's, with underscores: ``sample``, ``stratify``, ``allocation``,
    ``short_strata``, ``seed``, ``bootstrap``, ``ci_method``, ``bootstrap_method``
    (``multinomial`` or ``poisson``), ``ci_level``, ``slices`` (or ``slice``),
    ``zero_division``, ``similarity`` (a name or a backend object), ``base_url``,
    ``cache``, ``encoding`` (of a text file; detected by default). ``model="openai:NAME"``
    asks the model under test for every record's prediction first (the suite's ``model:`` block
    names the prompt, tools and prediction fields), with ``base_url`` (or ``model_base_url``),
    ``api_key_env``, ``model_params`` (request parameters) and ``model_concurrency``; the
    answered records are ``result.predictions``. With ``out``, results.json, records.jsonl and
    report.md (and, with ``model``, predictions.jsonl) are written there.
    """
    from ._outputs import checked_out
    from .engine import evaluate_suite
    from .options import run_options
    from .report.files import write_outputs

    given = run_options(options)
    with checked_out(out):  # before any work: an OutputError if out cannot be written
        result = _decided(evaluate_suite(suite, records, given), suite, given)
        if out is not None:
            write_outputs(result, out)
    return result


def _decided(result: EvaluationResult, suite: Any, given: Any) -> EvaluationResult:
    """``baseline=``: the run decided against a stored run (its ``decision``), as ``pingce run
    --baseline`` decides; the result as it is without one."""
    if given.gating.baseline is None:
        return result
    from .compare_stored import decide_against_baseline

    return decide_against_baseline(result, suite, given)


def evaluate_log(
    path: str | os.PathLike[str],
    *,
    tool: str | None = None,
    suite: str | os.PathLike[str] | Any = None,
    out: str | os.PathLike[str] | None = None,
    **options: Unpack[EvaluateOptions],
) -> EvaluationResult:
    """Evaluate another tool's file: an Inspect log (``.eval`` or ``.json``), promptfoo's
    ``results.json``, lm-eval's ``samples_<task>_*.jsonl`` (or its output folder) or a BFCL
    score file, recognised by its content (``tool``: ``inspect``, ``promptfoo``, ``lm-eval``
    or ``bfcl`` forces one). Each scorer's per-sample values get their mean and interval (or
    ``suite`` reads the records), the tool's groupings are the slices unless ``slices`` says
    otherwise, and the notes set each mean beside the number the tool reported. ``options``
    and ``out`` as :func:`evaluate`'s."""
    from ._outputs import checked_out
    from .options import run_options
    from .report.files import write_outputs
    from .tool_logs.evaluate import evaluate_tool_file

    given = run_options(options)
    with checked_out(out):
        result = _decided(evaluate_tool_file(path, given, tool=tool, suite=suite), suite, given)
        if out is not None:
            write_outputs(result, out)
    return result


def compare_logs(
    candidate: str | os.PathLike[str],
    baseline: str | os.PathLike[str] | None = None,
    *,
    by: str | None = None,
    tool: str | None = None,
    out: str | os.PathLike[str] | None = None,
    **options: Unpack[CompareOptions],
) -> ComparisonResult:
    """Compare two runs of another tool (two Inspect logs of one task, two lm-eval runs, two
    BFCL score files of a category), samples paired by id (and epoch); or, with ``by``, two
    systems in one file (``by="provider"`` or ``"provider=CANDIDATE,BASELINE"`` for
    promptfoo). Every scorer both sides have, with :func:`compare`'s tests."""
    from ._outputs import checked_out
    from .options import run_options
    from .report.files import write_comparison
    from .tool_logs.evaluate import compare_tool_files

    with checked_out(out):
        result = compare_tool_files(
            candidate, baseline, run_options(options, "compare"), tool=tool, by=by
        )
        if out is not None:
            write_comparison(result, out)
    return result


def compare(
    suite: str | os.PathLike[str] | Any,
    candidate: str | os.PathLike[str] | Iterable[Mapping[str, Any]] | Any,
    baseline: str | os.PathLike[str] | Iterable[Mapping[str, Any]] | Any,
    *,
    out: str | os.PathLike[str] | None = None,
    **options: Unpack[CompareOptions],
) -> ComparisonResult:
    """Compare two systems' outputs over the same records (matched by id) on ``suite``.

    ``candidate`` and ``baseline`` are what :func:`evaluate` takes as ``records``. Returns a
    :class:`ComparisonResult`: per metric both values, ``delta = candidate - baseline``, its
    paired bootstrap interval and p-value. ``options``: ``similarity``, ``bootstrap``, ``seed``,
    ``ci_method``, ``bootstrap_method``, ``ci_level``, ``base_url``, ``cache``, ``encoding``;
    ``pairwise=True`` (with ``judges``): the judges also asked which side's answer is better
    for every record, the candidate's win rate in :attr:`ComparisonResult.pairwise`. With
    ``out``, comparison.json is written there.
    """
    from ._outputs import checked_out
    from .engine import compare_suite
    from .options import run_options
    from .report.files import write_comparison

    with checked_out(out):  # before any work
        result = compare_suite(suite, candidate, baseline, run_options(options, "compare"))
        if out is not None:
            write_comparison(result, out)
    return result


def compare_runs(
    candidate: str | os.PathLike[str] | EvaluationResult,
    baseline: str | os.PathLike[str] | EvaluationResult,
    *,
    suite: str | os.PathLike[str] | None = None,
    store: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    **options: Unpack[CompareRunsOptions],
) -> ComparisonResult:
    """Compare two runs of one suite from their saved per-record statistics (stats.npz): run
    names in the run store, run output folders, or results of :func:`evaluate`. Records pair
    by id; nothing is evaluated again and no model is called (but the judges of
    ``pairwise=True``). Records in one run only are counted and listed in the result's
    ``notes``.

    ``suite``: the runs' suite file when it is not built in. ``options``: ``bootstrap``,
    ``seed``, ``ci_method``, ``bootstrap_method``, ``ci_level``, ``on_judge_failure``,
    ``slices`` (fields both runs were sliced by), ``zero_division`` and ``laws`` (by default
    the runs' own); ``pairwise=True`` with ``judges``, ``base_url``, ``rubric`` and ``cache``:
    the judges asked which run's answer is better for every paired record (the runs' records
    must keep their answers: ``records_fields="all"``). With ``out``, comparison.json and
    comparison.html (with the records that flipped) are written there.
    """
    from ._outputs import checked_out
    from .compare_stored import compare_stored
    from .options import run_options
    from .report.files import write_comparison

    with checked_out(out):  # before any work
        result = compare_stored(
            candidate, baseline, run_options(options, "compare-runs"), suite=suite, store=store
        )
        if out is not None:
            write_comparison(result, out)
    return result


def audit(
    run: str | os.PathLike[str],
    labels: str | os.PathLike[str],
    *,
    lam: float | None = None,
    folds: int = 5,
    ci_method: str = "bca",
    bootstrap: int = 1000,
    ci_level: float = 0.95,
    out: str | os.PathLike[str] | None = None,
    store: str | os.PathLike[str] | None = None,
    record: bool = False,
    baseline: str | os.PathLike[str] | None = None,
) -> Any:
    """``pingce audit RUN --labels SHEET``: the run's judge against the human labels of
    ``labels`` (a sheet from ``pingce audit sample``) and every metric that depends on the judge
    corrected by them (:class:`pingce.audits.runs.AuditResult`); with ``out``, audit.json,
    audit.html and audit.md are written there; with ``record=True``, the audit is recorded in
    the run's own folder as the command does by default (audit.json, audit.md, the checked
    records marked in records.jsonl, report.html and report.md with the audit; a later audit
    replaces it). ``run``: a stored run's name or its output folder; ``lam``: the judge's
    weight (None: tuned for each metric, PPI++, cross-fitted over ``folds`` folds of the
    labelled records; ``folds=1``: tuned on all of them; 1: PPI; 0: the labels alone);
    ``ci_method``: a bootstrap of ``bootstrap`` resamples (``bca``, the default, or
    ``percentile``) or ``normal`` (the delta method). With ``baseline`` (another run of the
    suite over the same records, and a sheet from ``pingce audit sample RUN BASELINE``):
    ``pingce compare RUN BASELINE --labels SHEET``, both runs and their difference corrected
    (:class:`pingce.audits.paired.PairedAudit`; ``out`` gets audit_comparison.json)."""
    from .audits.correct import Intervals
    from .audits.runs import audit_run, reopen, write_audit
    from .errors import OptionError

    if ci_method not in ("normal", "percentile", "bca"):
        raise OptionError(f"ci_method {ci_method!r}: normal, percentile or bca")
    if not isinstance(bootstrap, int) or bootstrap < 100:
        raise OptionError(f"bootstrap {bootstrap!r}: at least 100 resamples")

    if not 0.5 <= ci_level < 1:
        raise OptionError(f"ci_level {ci_level!r}: a level in [0.5, 1), such as 0.95")
    if lam is not None and not 0 <= lam <= 1:
        raise OptionError(f"lam {lam!r}: a weight in [0, 1] (1 PPI, 0 the labels alone), or None")
    if not isinstance(folds, int) or not 1 <= folds <= 50:
        raise OptionError(f"folds {folds!r}: 1 to 50 folds of the labelled records")
    ci = Intervals(ci_method, bootstrap, folds=folds)  # type: ignore[arg-type]  # checked above
    where = None if store is None else str(store)
    if baseline is not None:
        from .audits.paired import audit_pair, write_pair_audit

        if record:
            raise OptionError("record: an audit of two runs is not recorded in either run")
        pair = audit_pair(
            reopen(run, store=where),
            reopen(baseline, store=where),
            labels,
            lam=lam,
            level=ci_level,
            ci=ci,
        )
        if out is not None:
            write_pair_audit(pair, out)
        return pair
    reopened = reopen(run, store=where)
    result = audit_run(reopened, labels, lam=lam, level=ci_level, ci=ci)
    if out is not None:
        write_audit(result, out, ci_level)
    if record:
        from .audits.recorded import record_audit

        record_audit(result, reopened.folder)
    return result
