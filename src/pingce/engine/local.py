"""The local executor: the phases (:mod:`.phases`) in order over one table in this process:
load -> plan checks -> sample -> similarities -> statistics -> values, per-record values and
reasons -> intervals -> slices -> result (:mod:`.assembly`).

Each statistic is computed once and shared by every metric that reads it; corpus values,
per-record values, slices and bootstrap intervals are all finalisations of the same blocks, and
no model is called after the similarity phase. This executor owns the parallel policy of the
statistics' per-record work: it gives them :func:`pingce._halves.in_halves` as their
``Context.map_records`` (the second half of a large run in a forked child when a core is idle;
Ray's executor keeps the plain map, its shards already parallel). The statistics pause the
collector where they gain by it (:mod:`pingce._collector`), and the bootstrap runs on one BLAS
thread (:mod:`pingce.threads`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from .._halves import in_halves
from ..errors import InputError, OptionError
from ..progress import ProgressHook
from ..records import Table
from ..results import EvaluationResult, MetricResult, SliceResult
from ..runfolder.outputs import RunOutputs
from ..sampling import SamplingInfo
from ..stats import Interval, bootstrap_intervals
from ..suites.build import BuiltSuite
from ..suites.spec import SuiteSpec
from .assembly import data_info, id_notes, run_result, slice_result
from .context import RunContext
from .groups import bootstrap_keys, repeat_clusters, resampled_blocks, unclustered_notes
from .phases import Data, load, plan_run, sample, signature, similarities, statistics
from .plan import Plan, StatBlocks, check_records, found_context, unseen_context
from .saved import saved_stats
from .similarities import judge_columns
from .slices import slice_seed, table_slices
from .values import (
    count_failures,
    finalised_numbers,
    metric_results,
    record_rows,
    statistic_notes,
    table_results,
    with_intervals,
)

if TYPE_CHECKING:
    from .judgements import Judgements
    from .model import Answered

__all__ = ["Run", "run_local"]


@dataclass
class Run:
    """A run in progress: the plan, the records, their statistic blocks and unit codes."""

    plan: Plan
    table: Table
    blocks: StatBlocks
    units: np.ndarray | None
    progress: ProgressHook
    keys: np.ndarray | None = None
    """Each record's Poisson bootstrap key (``--bootstrap-method poisson``), else None."""

    def values(
        self,
        blocks: StatBlocks,
        seed: int | list[int],
        label: str,
        units: np.ndarray | None,
        keys: np.ndarray | None = None,
    ) -> tuple[dict[str, MetricResult], dict[str, dict[str, Any]]]:
        """Values, intervals and tables over ``blocks``; with ``units`` (a unit code per record)
        the bootstrap resamples whole units; with ``keys`` (a Poisson key per record) it weighs
        each record (or unit) by its own key."""
        plan, resampling = self.plan, self.plan.options.resampling
        results = metric_results(plan, blocks)
        intervals: dict[str, Interval] = {}
        if resampling.resamples > 0:
            resampled, keys = resampled_blocks(blocks, units, keys)
            advance = self.progress(f"bootstrap {label}".strip(), float(resampling.resamples))
            intervals = bootstrap_intervals(
                resampled,
                {
                    name: (m, plan.keys[name])
                    for name, m in plan.metrics.items()
                    if plan.keys[name] in resampled
                },
                finalised_numbers(plan, blocks, results),
                resamples=resampling.resamples,
                seed=seed,
                method=resampling.interval_method,
                level=resampling.level,
                progress=advance,
                keys=keys,
                stream=resampling.stream,
            )
        return with_intervals(results, intervals), table_results(plan, blocks)

    def slices(self) -> dict[str, SliceResult]:
        """Metrics per value of each ``--slice`` field."""
        plan, units = self.plan, self.units
        out: dict[str, SliceResult] = {}
        for part in table_slices(plan, self.table, units):
            rows = part.rows
            values = self.values(
                {k: b.take(rows) for k, b in self.blocks.items()},
                slice_seed(plan.options.resampling.seed, part.key, poisson=self.keys is not None),
                part.key,
                None if units is None else units[rows],
                None if self.keys is None else self.keys[rows],
            )
            out[part.key] = slice_result(plan, part.path, part.n, part.splits_units, values)
        return out


def _with_model(
    plan: Plan, data: Data, context: RunContext
) -> tuple[Table, np.ndarray | None, SamplingInfo | None, int, Answered, Plan]:
    """``--model``: the records answered by the model, then loaded and checked. With
    ``--sample`` the records are first loaded (no prediction needed) and drawn, and only the
    drawn ones are sent to the model."""
    from .model import ask_model, model_plan  # only with --model: the HTTP client's imports

    plan = model_plan(plan)
    progress = context.progress
    lines: set[int] | None = None
    sampling: SamplingInfo | None = None
    n_loaded = 0
    if plan.options.sampling.size is not None:
        with context.phase("load"):
            first = load(plan, data, progress)
        n_loaded = first.n
        with context.phase("plan"):
            check_records(plan, first)
            drawn, _, sampling = sample(plan, first, repeat_clusters(first, plan.unit))
        lines = {int(line) for line in drawn.lines}
    with context.phase("model"):
        answered = ask_model(plan, data, progress, lines)
    with context.phase("load"):
        table = load(plan, answered.reading(), progress)
    if lines is None:
        n_loaded = table.n
    with context.phase("plan"):
        check_records(plan, table)
        units = repeat_clusters(table, plan.unit)
    return table, units, sampling, n_loaded, answered, plan


def _loaded(
    plan: Plan, data: Data, context: RunContext
) -> tuple[Table, np.ndarray | None, SamplingInfo | None, int, Answered | None, Plan]:
    """The records of the run (answered by the model first with ``--model``), checked and
    drawn (``--sample``), their unit codes, how many were loaded, and the model's answers."""
    if context.options.model_call is not None:
        return _with_model(plan, data, context)
    if isinstance(data, Table):  # loaded already (a comparison of files with repeats)
        table = data
    else:
        with context.phase("load"):
            table = load(plan, data, context.progress)
    n_loaded = table.n
    with context.phase("plan"):
        check_records(plan, table)
        units = repeat_clusters(table, plan.unit)
        table, units, sampling = sample(plan, table, units)
    return table, units, sampling, n_loaded, None, plan


def _judged_again(plan: Plan, table: Table, calls: int) -> tuple[Table, np.ndarray | None]:
    """``--judge-repeats J``: each record (and repeat) J rows, one a judge call, its cluster
    its id (as repeats are): the judges asked J times, every other statistic the same J times
    (its value unchanged, its share of the variance from the judge 0)."""
    if not any(s.needs_judge for s in plan.statistics.values()):
        raise OptionError(
            f"--judge-repeats {calls}: suite {plan.suite.spec.name!r} has no metric graded by a "
            "model judge (rubric_score, correctness)"
        )
    missing = table.first_without_id()
    if missing is not None:
        raise InputError(
            "--judge-repeats needs an id on every record: a record's judge calls are found by "
            "its id",
            source=table.source,
            line=int(table.lines[missing]),
            field=plan.suite.spec.id_field,
        )
    table = table.with_judge_calls(calls)
    return table, repeat_clusters(table, plan.unit)


def _judgements(plan: Plan, table: Table, context: RunContext) -> Judgements | None:
    """The judges' grades of the judged statistics' records (None when none is judged)."""
    if not any(s.needs_judge for s in plan.statistics.values()):
        return None
    from .judgements import grade  # only when judged: the HTTP client's imports

    return grade(plan, table, context.progress)


def run_local(
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite, data: Data, context: RunContext
) -> EvaluationResult:
    """Run ``suite`` over ``data`` in this process (per-record values attached); ``data`` may
    be a :class:`~pingce.records.Table` loaded already."""
    options = context.options
    with context.phase("plan"):
        plan = plan_run(suite, options)
    table, units, sampling, n_loaded, answered, plan = _loaded(plan, data, context)
    if options.judging.repeats > 1:
        table, units = _judged_again(plan, table, options.judging.repeats)
    with context.phase("similarities"):
        scored = similarities(plan, [table], context.progress)
        judged = _judgements(plan, table, context)
    with context.phase("statistics"):
        blocks = statistics(plan, table, scored, in_halves, judged)
        model_failed = 0
        if answered is not None:
            from .model import call_columns, mark_model_failures

            model_failed = mark_model_failures(plan, table, blocks, answered.failed)
        rows = record_rows(plan, table, blocks)
        if answered is not None:
            rows.model = call_columns(answered, table.lines, table.repeats)
        needing = [s for s in plan.statistics.values() if s.needs_similarity]
        rows.judge = judge_columns(needing, table, scored)
        if judged is not None:
            rows.judge.update(judged.column(table.n))
        repeats = None
        if table.repeats is not None:
            from ..repeats.summary import summarise

            rows.repeat = table.repeats
            rows.judge_call = table.judge_calls
            repeats, rows.flaky = summarise(
                rows.values,
                table.ids if plan.unit is None else [str(v) for v in table.column(plan.unit)],
                table.repeats,
                judge_calls=table.judge_calls,
                clusters=units,
                unit=plan.unit,
                level=options.resampling.level,
                seed=options.resampling.seed,
                target_se=options.target_se,
                lower_is_better=frozenset(
                    name for name, m in plan.metrics.items() if not m.higher_is_better
                ),
            )
            if units is not None:  # records with several repeats resample whole
                table.notes.extend(unclustered_notes(plan, blocks))
        failures = count_failures(table, blocks, 0 if scored is None else scored.stats.failures)
        if answered is not None:
            failures.model = model_failed  # type: ignore[attr-defined]  # an extra count
    keys = None
    resampling = options.resampling
    if resampling.poisson and resampling.resamples > 0:
        keys = bootstrap_keys(table, plan.unit)
    run = Run(plan, table, blocks, units, context.progress, keys)
    with context.phase("intervals"):
        metrics, tables = run.values(blocks, resampling.seed, "", units, keys)
    with context.phase("slices"):
        slices = run.slices()
    result = run_result(
        plan,
        (metrics, tables, slices),
        n_records=table.n,
        failures=failures,
        signature=signature(plan, scored),
        data=data_info(plan, table.source, n_loaded, table.encoding),
        sampling=sampling,
        notes=[
            *table.notes,
            *id_notes(plan, any(i is not None for i in table.ids), table.source),
            *unseen_context(plan, found_context(plan, table)),
            *statistic_notes([blocks]),
            *(answered.notes if answered is not None else []),
            *([] if judged is None else judged.self_preference(options.model_call)),
        ],
        similarity=None if scored is None else scored.stats.summary(),
    )
    result.repeats = repeats
    if answered is not None:
        result.model = answered.summary
        result.signature = result.signature.model_copy(update={"model": answered.signature})
    if judged is not None:
        result.judge = judged.summary()
        result.signature = result.signature.model_copy(update={"judge": judged.signature})
    context.finish(result)
    return result.with_outputs(
        RunOutputs(
            records=rows,
            saved=partial(saved_stats, plan, table, blocks, units),
            predictions=None if answered is None else answered.records,
        )
    )
