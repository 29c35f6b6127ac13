"""The one path of a run: load -> plan -> check -> sample -> similarities -> statistics ->
values, per-record values and reasons -> intervals -> slices -> result.

``pingce run``, ``pingce.evaluate``, ``pingce compare`` and ``pingce calibrate`` all go through the
phases here (:mod:`.compare` runs them for both sides). Each statistic is computed once and
shared by every metric that reads it; corpus values, per-record values, slices and bootstrap
intervals are all finalisations of the same blocks, and no model is called after the
similarity phase.
"""

from __future__ import annotations

import glob
import os
import platform
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from .._version import __version__
from ..errors import InputError, OptionError
from ..gates import check_gate_names
from ..joins import joined_reading
from ..metrics.protocol import Context, StatBlock
from ..options import RunOptions
from ..progress import ProgressHook, no_progress
from ..records import Table, load_records, wanted_fields
from ..results import (
    DataInfo,
    EvaluationResult,
    MetricResult,
    Signature,
    SliceResult,
)
from ..sampling import SamplingInfo, sample_indices
from ..stats import Interval, bootstrap_intervals
from ..suites.build import BuiltSuite, load_suite
from ..suites.spec import SuiteSpec
from .fields import check_maps_read, data_paths, field_map, suite_names
from .groups import bootstrap_keys, unit_codes
from .model import Answered, ask_model, mark_model_failures, model_plan
from .plan import Plan, check_records, make_plan
from .profile import Profile
from .saved import saved_stats
from .shards import expand_paths
from .similarities import BackendChoice, Scored, score_pairs
from .slices import slice_keys, slice_seed, table_slices
from .values import (
    count_failures,
    finalised_value,
    metric_values,
    record_rows,
    split_unit_values,
    statistic_notes,
    table_values,
    unparsed_rows,
)

__all__ = ["Blocks", "Data", "Run", "evaluate_suite", "load", "plan_run", "statistics"]

Data = str | os.PathLike[str] | Iterable[Mapping[str, Any]] | Any
"""Records: a path (JSONL, JSON, CSV, TSV, Parquet, Excel; ``-`` for standard input), a data
frame (pandas, polars, pyarrow, ``datasets``) or an iterable of dictionaries."""
Blocks = dict[Hashable, StatBlock]


def plan_run(
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite,
    options: RunOptions,
    *,
    comparison: bool = False,
) -> Plan:
    """Validate the options, load the suite with them laid over its defaults, and plan (for a
    comparison, the suite's ``match_by`` fields are read too)."""
    options.validate()
    built = load_suite(suite, defaults=options.suite_defaults())
    identify = built.spec.match_by or [] if comparison else []
    plan = make_plan(built, options, identify=identify)
    check_gate_names([*options.gates, *options.regression_gates], plan.metrics)
    return plan


def load(plan: Plan, data: Data, progress: ProgressHook, label: str = "records") -> Table:
    """Read and validate the fields the plan needs (a progress bar over the file's bytes)."""
    _one_file(data)
    total: float | None = None
    if isinstance(data, str | os.PathLike) and os.path.isfile(data):
        total = float(os.path.getsize(data))
    advance = progress(f"loading {label}", total)
    mapping = field_map(plan.suite.spec.fields, plan.options.field_map)
    source = str(data) if isinstance(data, str | os.PathLike) else None
    specs, id_path = data_paths(plan.fields, plan.suite.spec.id_field, mapping, source)
    options = plan.options
    source_or_join: Any = data
    join = None
    if options.gold is not None:
        if not isinstance(data, str | os.PathLike):
            raise OptionError("--gold joins two files: give the predictions as a file too")
        source_or_join, join = joined_reading(
            data,
            options.gold,
            wanted=wanted_fields(specs, id_path),
            id_field=id_path,
            encoding=options.encoding,
            allow_missing=options.allow_missing,
        )
    try:
        table = load_records(
            source_or_join,
            specs,
            id_path=id_path,
            progress=advance if total is not None and join is None else None,
            encoding=options.encoding,
        )
    except InputError as exc:
        raise exc if join is None else join.relocate(exc) from None
    if join is not None:
        table.notes.extend(join.notes(str(data)))
    if mapping:
        suite_names(table, plan.fields, specs)
        check_maps_read(table, options.field_map)
    if not isinstance(data, str | os.PathLike) and label != "records":
        table.source = f"<{label}>"  # two lists of dicts: say which is which
    return table


def _one_file(data: Data) -> None:
    """The local engine reads one file: several (a list of paths, a glob, a folder) stop the run
    with what reads them (the files found as :func:`.shards.expand_paths` finds them for
    ``--engine ray``), not with "no such file"."""
    several = (
        "the local engine reads one file: run them with --engine ray "
        "(pip install 'pingce[ray]'), or join them first (cat FILES > all.jsonl)"
    )
    if (
        isinstance(data, list | tuple)
        and data
        and all(isinstance(x, str | os.PathLike) for x in data)
    ):
        raise OptionError(f"data is a list of {len(data)} file names; {several}")
    if not isinstance(data, str | os.PathLike) or os.path.isfile(data):
        return
    text = os.fspath(data)
    if os.path.isdir(text):
        raise InputError(
            f"a folder, not a file: name its files with a pattern (FOLDER/*.jsonl); {several}",
            source=text,
        )
    if glob.has_magic(text):  # a pattern that matches nothing is an error of expand_paths
        raise InputError(f"a pattern of {len(expand_paths(text))} file(s); {several}", source=text)


def similarities(plan: Plan, tables: Sequence[Table], progress: ProgressHook) -> Scored | None:
    """Score every pair any statistic needs on any of ``tables``, with one backend."""
    needing = [s for s in plan.statistics.values() if s.needs_similarity]
    if not needing:
        return None
    pairs = (p for table in tables for s in needing for p in s.pairs(table))
    options = plan.options
    choice = BackendChoice(
        options.similarity, options.base_url, options.cache, plan.suite.spec.similarity
    )
    return score_pairs(pairs, choice, progress)


def pairs_of(plan: Plan, table: Table) -> list[tuple[str, str]]:
    """The distinct pairs the statistics need on ``table``."""
    needing = [s for s in plan.statistics.values() if s.needs_similarity]
    return list(dict.fromkeys(p for s in needing for p in s.pairs(table)))


def statistics(plan: Plan, table: Table, scored: Scored | None) -> Blocks:
    """Every statistic of the plan over ``table``, once each."""
    context = Context(similarity=None if scored is None else scored.table)
    blocks = {}
    for key, statistic in plan.statistics.items():
        block = statistic.compute(table, context).compact()
        block.unparsed = unparsed_rows(table, statistic.fields())
        blocks[key] = block
    return blocks


def versions() -> dict[str, str]:
    """Versions that the numbers depend on (read from the installed metadata, so asking costs
    no import)."""
    from importlib.metadata import version

    return {
        "pingce": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": version("scipy"),
    }


def signature(plan: Plan, scored: Scored | None) -> Signature:
    """Everything needed to reproduce the numbers."""
    options, suite = plan.options, plan.suite
    return Signature(
        seed=options.seed,
        bootstrap=options.bootstrap,
        ci_method=options.ci_method,
        bootstrap_method=options.bootstrap_method,
        ci_level=options.ci_level,
        similarity=None if scored is None else scored.signature,
        unit=suite.spec.unit,
        zero_division=suite.spec.defaults.zero_division,
        labels=list(suite.scale.labels) if suite.scale is not None else None,
        metrics={name: item.describe() for name, item in suite.items().items()},
        versions=versions(),
    )


@dataclass
class Run:
    """A run in progress: the plan, the records, their statistic blocks and unit codes."""

    plan: Plan
    table: Table
    blocks: Blocks
    units: np.ndarray | None
    progress: ProgressHook
    keys: np.ndarray | None = None
    """Each record's Poisson bootstrap key (``--bootstrap-method poisson``), else None."""

    def values(
        self,
        blocks: Blocks,
        seed: int | list[int],
        label: str,
        units: np.ndarray | None,
        keys: np.ndarray | None = None,
    ) -> tuple[dict[str, MetricResult], dict[str, dict[str, Any]]]:
        """Values, intervals and tables over ``blocks``; with ``units`` (a unit code per record)
        the bootstrap resamples whole units; with ``keys`` (a Poisson key per record) it weighs
        each record (or unit) by its own key."""
        plan, options = self.plan, self.plan.options
        results = metric_values(plan, blocks)
        intervals: dict[str, Interval] = {}
        if options.bootstrap > 0:
            resampled: Mapping[Hashable, StatBlock] = blocks
            if units is not None:
                codes, dense = np.unique(units, return_inverse=True)
                resampled = {k: b.grouped(dense, len(codes)) for k, b in blocks.items()}
                if keys is not None:  # a unit's key is that of any of its records
                    of_unit = np.empty(len(codes), dtype=np.uint64)
                    of_unit[dense] = keys
                    keys = of_unit
            advance = self.progress(f"bootstrap {label}".strip(), float(options.bootstrap))
            intervals = bootstrap_intervals(
                resampled,
                {name: (m, plan.keys[name]) for name, m in plan.metrics.items()},
                {
                    name: finalised_value(plan.metrics[name], blocks[plan.keys[name]], r.value)
                    for name, r in results.items()
                },
                resamples=options.bootstrap,
                seed=seed,
                method=options.ci_method,
                level=options.ci_level,
                progress=advance,
                keys=keys,
            )
        for name, interval in intervals.items():
            results[name] = results[name].model_copy(
                update={"ci_low": interval.low, "ci_high": interval.high, "ci_note": interval.note}
            )
        return results, table_values(plan, blocks)

    def slices(self) -> dict[str, SliceResult]:
        """Metrics per value of each ``--slice`` field."""
        plan, units = self.plan, self.units
        out: dict[str, SliceResult] = {}
        for part in table_slices(plan, self.table, units):
            rows = part.rows
            sub = {k: b.take(rows) for k, b in self.blocks.items()}
            metrics, tables = self.values(
                sub,
                slice_seed(plan.options.seed, part.key, poisson=self.keys is not None),
                part.key,
                None if units is None else units[rows],
                None if self.keys is None else self.keys[rows],
            )
            if part.splits_units:
                split_unit_values(plan, part.path, metrics)
            out[part.key] = SliceResult(n_records=part.n, metrics=metrics, tables=tables)
        return out


def sample(
    plan: Plan, table: Table, units: np.ndarray | None
) -> tuple[Table, np.ndarray | None, SamplingInfo | None]:
    """``--sample N [--stratify FIELD]``: the drawn records (whole units in a unit suite)."""
    options = plan.options
    if options.sample is None:
        return table, units, None
    keys = None
    order = None
    if options.stratify:
        keys = slice_keys(table, options.stratify, plan)
        scale = plan.label_scales.get(options.stratify)
        if scale is not None:
            order = list(scale.labels)
    population, noun = table.n, "records"
    if units is not None:  # draw whole units; a unit's stratum is that of its first record
        population, noun = int(units.max()) + 1, f"units of {plan.unit}"
        first = np.full(population, table.n, dtype=np.int64)
        np.minimum.at(first, units, np.arange(table.n))
        keys = None if keys is None else [keys[i] for i in first]
    index, info = sample_indices(
        keys,
        population,
        options.sample,
        seed=options.seed,
        allocation=options.allocation,
        short=options.short_strata,
        field=options.stratify,
        order=order,
        noun=noun,
    )
    if units is not None:
        info = info.model_copy(update={"unit": plan.unit})
        index = np.flatnonzero(np.isin(units, index))
    return table.take(index), None if units is None else units[index], info


def id_notes(plan: Plan, table: Table) -> list[str]:
    """A note when no record has the suite's id field: not an error (a record is then known by
    its line), but likely a misspelt ``id_field`` or a column under another name."""
    if plan.suite.spec.match_by or any(record_id is not None for record_id in table.ids):
        return []  # a suite with match_by knows its records by those fields
    id_field = plan.suite.spec.id_field
    return [
        f"no record of {table.source} has the id field {id_field!r}: records are identified by "
        f"their line numbers (set the suite's id_field, or --map {id_field}=COLUMN)"
    ]


def _with_model(
    plan: Plan, data: Data, progress: ProgressHook, timer: Profile
) -> tuple[Table, np.ndarray | None, SamplingInfo | None, int, Answered, Plan]:
    """``--model``: the records answered by the model, then loaded and checked. With
    ``--sample`` the records are first loaded (no prediction needed) and drawn, and only the
    drawn ones are sent to the model."""
    plan = model_plan(plan)
    lines: set[int] | None = None
    sampling: SamplingInfo | None = None
    n_loaded = 0
    if plan.options.sample is not None:
        with timer.phase("load"):
            first = load(plan, data, progress)
        n_loaded = first.n
        with timer.phase("plan"):
            check_records(plan, first)
            drawn, _, sampling = sample(plan, first, unit_codes(first, plan.unit))
        lines = {int(line) for line in drawn.lines}
    with timer.phase("model"):
        answered = ask_model(plan, data, progress, lines)
    with timer.phase("load"):
        table = load(plan, answered.reading(), progress)
    if lines is None:
        n_loaded = table.n
    with timer.phase("plan"):
        check_records(plan, table)
        units = unit_codes(table, plan.unit)
    return table, units, sampling, n_loaded, answered, plan


def evaluate_suite(
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite,
    data: Data,
    options: RunOptions | None = None,
    *,
    progress: ProgressHook | None = None,
    profile: Profile | None = None,
) -> EvaluationResult:
    """Run ``suite`` over ``data`` and return the result (per-record values attached)."""
    options = options or RunOptions()
    if options.engine == "ray":
        from .distributed import evaluate_on_ray

        options.validate()
        return evaluate_on_ray(
            suite,
            data,
            options,
            progress=progress,
            profile=profile,
            ray_address=options.ray_address,
        )
    progress = progress or no_progress
    timer = profile or Profile()
    with timer.phase("plan"):
        plan = plan_run(suite, options)
    answered: Answered | None = None
    if options.model is None:
        with timer.phase("load"):
            table = load(plan, data, progress)
        n_loaded = table.n
        with timer.phase("plan"):
            check_records(plan, table)
            units = unit_codes(table, plan.unit)
            table, units, sampling = sample(plan, table, units)
    else:
        table, units, sampling, n_loaded, answered, plan = _with_model(plan, data, progress, timer)
    with timer.phase("similarities"):
        scored = similarities(plan, [table], progress)
    with timer.phase("statistics"):
        blocks = statistics(plan, table, scored)
        model_failed = 0
        if answered is not None:
            model_failed = mark_model_failures(plan, table, blocks, answered.failed)
        rows = record_rows(plan, table, blocks)
        failures = count_failures(table, blocks, 0 if scored is None else scored.stats.failures)
        if answered is not None:
            failures.model = model_failed  # type: ignore[attr-defined]  # an extra count
    keys = None
    if options.bootstrap_method == "poisson" and options.bootstrap > 0:
        keys = bootstrap_keys(table, plan.unit)
    run = Run(plan, table, blocks, units, progress, keys)
    with timer.phase("intervals"):
        metrics, tables = run.values(blocks, options.seed, "", units, keys)
    with timer.phase("slices"):
        slices = run.slices()
    result = EvaluationResult(
        pingce_version=__version__,
        suite=plan.suite.spec.name,
        n_records=table.n,
        metrics=metrics,
        tables=tables,
        slices=slices,
        failures=failures,
        signature=signature(plan, scored),
        data=DataInfo(
            source=table.source,
            n_loaded=n_loaded,
            id_field=plan.suite.spec.id_field,
            field_map=field_map(plan.suite.spec.fields, plan.options.field_map),
            encoding=table.encoding,
        ),
        sampling=sampling,
        definitions={name: item.definition for name, item in plan.suite.items().items()},
        notes=[
            *plan.suite.notes,
            *table.notes,
            *id_notes(plan, table),
            *statistic_notes([blocks]),
            *(answered.notes if answered is not None else []),
        ],
    )
    if scored is not None:
        result.similarity = scored.stats.summary()
    if answered is not None:
        result.model = answered.summary
        result.signature = result.signature.model_copy(update={"model": answered.signature})
        result.attach_predictions(answered.records)
    result.attach_records(rows)
    result.attach_stats(partial(saved_stats, plan, table, blocks, units))
    if profile is not None:
        result.profile = timer.ordered()
    return result
