"""The phases of a run, each a function of the plan: plan (suite and options), load (the records
a plan reads), sample, similarities (every pair of every statistic, one backend), statistics
(every statistic once) and signature (what reproduces the numbers).

The local executor (:mod:`.local`) runs them in order over one table; the Ray executor
(:mod:`.distributed`, through :mod:`.merge`) runs them over each piece of the data; a comparison
of two files (:mod:`.compare`) runs them for both sides. None of them knows which.
"""

from __future__ import annotations

import glob
import os
import platform
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._version import __version__
from ..errors import InputError, OptionError
from ..gates import check_gate_names
from ..joins import joined_reading
from ..metrics.protocol import Context, RecordMap, one_part
from ..options import RunOptions
from ..progress import ProgressHook
from ..readers import Reading
from ..records import Table, load_records, wanted_fields
from ..results import Signature
from ..sampling import SamplingInfo, sample_indices
from ..suites.build import BuiltSuite, load_suite
from ..suites.spec import SuiteSpec
from .fields import check_maps_read, data_paths, field_map, suite_names
from .judge_setup import grade_on_scale
from .plan import Plan, StatBlocks, make_plan
from .shards import expand_paths
from .similarities import BackendChoice, Scored, score_pairs
from .slices import slice_keys
from .values import unparsed_rows

if TYPE_CHECKING:
    from .judgements import Judgements

__all__ = [
    "Data",
    "load",
    "pairs_of",
    "plan_run",
    "sample",
    "signature",
    "similarities",
    "statistics",
    "versions",
]

Data = str | os.PathLike[str] | Iterable[Mapping[str, Any]] | Any
"""Records: a path (JSONL, JSON, CSV, TSV, Parquet, Excel; ``-`` for standard input), a data
frame (pandas, polars, pyarrow, ``datasets``) or an iterable of dictionaries."""


def plan_run(
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite,
    options: RunOptions,
    *,
    comparison: bool = False,
) -> Plan:
    """Load the suite with the options (validated when they were made) laid over its defaults,
    and plan (for a comparison, the suite's ``match_by`` fields are read too)."""
    built = load_suite(suite, defaults=options.suite_defaults())
    grade_on_scale(built, options.judging)  # a jury's agreement is laid out on the scale
    identify = built.spec.match_by or [] if comparison else []
    plan = make_plan(built, options, identify=identify)
    gating = options.gating
    check_gate_names([*gating.gates, *gating.regression_gates, *gating.margin_gates], plan.metrics)
    return plan


def load(plan: Plan, data: Data, progress: ProgressHook, label: str = "records") -> Table:
    """Read and validate the fields the plan needs (a progress bar over the file's bytes)."""
    _one_file(data)
    total: float | None = None
    if isinstance(data, str | os.PathLike) and os.path.isfile(data):
        total = float(os.path.getsize(data))
    advance = progress(f"loading {label}", total)
    inputs = plan.options.inputs
    mapping = field_map(plan.suite.spec.fields, inputs.field_map)
    source = str(data) if isinstance(data, str | os.PathLike) else None
    specs, id_path = data_paths(plan.fields, plan.suite.spec.id_field, mapping, source)
    source_or_join: Any = data
    join = None
    if inputs.gold is not None:
        if not isinstance(data, str | os.PathLike):
            raise OptionError("--gold joins two files: give the predictions as a file too")
        source_or_join, join = joined_reading(
            data,
            inputs.gold,
            wanted=wanted_fields(specs, id_path),
            id_field=id_path,
            encoding=inputs.encoding,
            allow_missing=inputs.allow_missing,
        )
    try:
        table = load_records(
            source_or_join,
            specs,
            id_path=id_path,
            progress=advance if total is not None and join is None else None,
            encoding=inputs.encoding,
        )
    except InputError as exc:
        raise exc if join is None else join.relocate(exc) from None
    if join is not None:
        table.notes.extend(join.notes(str(data)))
    if mapping:
        suite_names(table, plan.fields, specs)
        check_maps_read(table, inputs.field_map)
    if not isinstance(data, str | os.PathLike | Reading) and label != "records":
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
    scoring = plan.options.scoring
    choice = BackendChoice(
        scoring.backend, scoring.base_url, scoring.cache, plan.suite.spec.similarity
    )
    return score_pairs(pairs, choice, progress)


def pairs_of(plan: Plan, table: Table) -> list[tuple[str, str]]:
    """The distinct pairs the statistics need on ``table``."""
    needing = [s for s in plan.statistics.values() if s.needs_similarity]
    return list(dict.fromkeys(p for s in needing for p in s.pairs(table)))


def statistics(
    plan: Plan,
    table: Table,
    scored: Scored | None,
    map_records: RecordMap = one_part,
    judged: Judgements | None = None,
    only: Collection[Hashable] | None = None,
) -> StatBlocks:
    """Every statistic of the plan over ``table`` (or those keyed in ``only``), once each;
    their per-record work runs through ``map_records`` (the executor's policy: one part here
    by default); the judged ones read the judges' grades (``judged``)."""
    context = Context(
        similarity=None if scored is None else scored.table,
        map_records=map_records,
        judged=None if judged is None else judged.graded,
    )
    blocks = {}
    for key, statistic in plan.statistics.items():
        if only is not None and key not in only:
            continue
        block = statistic.compute(table, context).compact()
        block.unparsed = unparsed_rows(table, statistic.fields())
        blocks[key] = block
    return blocks


def versions() -> dict[str, str]:
    """Versions that the numbers depend on: scipy's is its module's (importing scipy alone is a
    third of the instructions of importing importlib.metadata to read it, which a run otherwise
    does not import)."""
    import scipy

    return {
        "pingce": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
    }


def signature(plan: Plan, scored: Scored | None) -> Signature:
    """Everything needed to reproduce the numbers."""
    resampling, suite = plan.options.resampling, plan.suite
    return Signature(
        seed=resampling.seed,
        bootstrap=resampling.resamples,
        ci_method=resampling.interval_method,
        bootstrap_method=resampling.method,
        resampling=resampling.signature,
        ci_level=resampling.level,
        similarity=None if scored is None else scored.signature,
        unit=suite.spec.unit,
        zero_division=suite.spec.defaults.zero_division,
        labels=list(suite.scale.labels) if suite.scale is not None else None,
        metrics={name: item.describe() for name, item in suite.items().items()},
        versions=versions(),
    )


def sample(
    plan: Plan, table: Table, units: np.ndarray | None
) -> tuple[Table, np.ndarray | None, SamplingInfo | None]:
    """``--sample N [--stratify FIELD]``: the drawn records (whole units in a unit suite)."""
    sampling = plan.options.sampling
    if sampling.size is None:
        return table, units, None
    keys = None
    order = None
    if sampling.stratify:
        keys = slice_keys(table, sampling.stratify, plan)
        scale = plan.label_scales.get(sampling.stratify)
        if scale is not None:
            order = list(scale.labels)
    population, noun = table.n, "records"
    if units is not None:  # draw whole units; a unit's stratum is that of its first record
        unit = plan.unit or "id"  # no unit: the records' repeats, drawn together by id
        population, noun = int(units.max()) + 1, f"units of {unit}"
        first = np.full(population, table.n, dtype=np.int64)
        np.minimum.at(first, units, np.arange(table.n))
        keys = None if keys is None else [keys[i] for i in first]
    index, info = sample_indices(
        keys,
        population,
        sampling.size,
        seed=sampling.seed,
        allocation=sampling.allocation,
        short=sampling.short_strata,
        field=sampling.stratify,
        order=order,
        noun=noun,
    )
    if units is not None:
        info = info.model_copy(update={"unit": unit})
        index = np.flatnonzero(np.isin(units, index))
    return table.take(index), None if units is None else units[index], info
