"""Statistics that add up: what one shard of records contributes to a run, and the run's values,
tables, slices and Poisson intervals from the sum of the shards' contributions.

This is the core of the distributed engine (:mod:`.distributed` runs it on Ray Data), written
without Ray so that it is tested on its own. A shard is read, checked and scored by the same
functions as a local run (:mod:`.phases`); what it hands on is small and merges by addition:

* per statistic, the summed statistics (a decomposable one) or its rows (one that does not
  decompose: latency percentiles bring their one column, exactly), with the counts that failure
  accounting reads (records covered, unparsed, left out);
* per statistic, the Poisson bootstrap's replicate sums, ``(B, width)``: a record's weight in
  replicate ``b`` depends on its key and the seed alone (:func:`pingce.stats.poisson_counts`), so
  the sums of the shards are the sums of the whole, for any sharding;
* the same per slice value.

BCa's acceleration needs each record's leave-one-out value against the whole run's sums; a
second pass (:func:`jackknife_pass`) over the shards' rows gives its moments
(:func:`pingce.stats.jackknife_moments`), which add up too. One-hot statistics (confusion
matrices) need no second pass: their jackknife follows from the merged counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import OptionError, SuiteError
from ..metrics.protocol import Metric, StatBlock
from ..options import Resampling
from ..progress import no_progress
from ..results import Failures, MetricResult, SliceResult
from ..runfolder.records import write_record_shard
from ..stats import (
    Interval,
    acceleration_of_moments,
    jackknife_moments,
    poisson_counts,
    poisson_sums,
    record_keys,
    replicate_intervals,
)
from .assembly import Values, slice_result
from .groups import bootstrap_keys, resampled_blocks, unit_codes
from .phases import load, similarities, statistics
from .plan import Plan, StatBlocks, check_records, found_context
from .saved import saved_stats
from .slices import slice_order, table_slices
from .values import (
    count_failures,
    finalised_numbers,
    metric_results,
    record_rows,
    statistic_notes,
    table_results,
    with_intervals,
)

__all__ = [
    "Merger",
    "Scope",
    "Shard",
    "added_counts",
    "duplicate_keys",
    "finish",
    "jackknife_pass",
    "merge_shards",
    "needs_jackknife_pass",
    "raw_thetas",
    "run_shard",
    "scope_blocks",
    "scope_finalised_numbers",
    "shard_of",
]

WHOLE = ""
"""The scope of every record (a slice's scope is ``field=value``)."""


@dataclass
class Scope:
    """What one scope's records (the whole run, or one slice) add to a run: every statistic as a
    reduced block (:meth:`pingce.metrics.protocol.StatBlock.reduced`: sums, or the rows of a
    statistic that does not decompose, and the record counts), the Poisson replicate sums of the
    decomposable ones, and the Poisson keys of the records (for the raw rows' replicates)."""

    n: int
    blocks: StatBlocks
    replicates: dict[Hashable, np.ndarray] = field(default_factory=dict)
    """Poisson replicate sums ``(B, width)`` per decomposable statistic (with a bootstrap)."""
    keys: np.ndarray | None = None
    """The records' Poisson keys, in the order of raw rows (a raw statistic and a bootstrap)."""


@dataclass
class Shard:
    """What one shard of records contributes to a run (all of it adds up)."""

    n: int
    scopes: dict[str, Scope]
    failures: dict[str, int]
    notes: list[str]
    with_id: bool
    """Whether any record of the shard has an id."""
    id_keys: np.ndarray
    """The 64-bit keys of the shard's ids (for the duplicate check across shards)."""
    unit_keys: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    """In a unit suite, the 64-bit keys of the shard's units (a unit must be in one shard)."""
    splits_units: dict[str, bool] = field(default_factory=dict)
    """Per slice field: whether it varies within a unit of this shard."""
    similarity: dict[str, Any] | None = None
    """The similarity backend's counts (added over shards)."""
    signature: str | None = None
    """The similarity backend's signature (the same in every shard)."""
    judge: dict[str, dict[str, Any]] | None = None
    """The judges' counts by judge (results.json's ``judge``; added over shards)."""
    judge_signature: str | None = None
    """The judges' signature (the same in every shard)."""
    sources: list[str] = field(default_factory=list)
    context_found: frozenset[str] = frozenset()
    """The ``--context`` fields some record of the shard has (the run's note names the others)."""

    def add(self, other: Shard) -> Shard:
        """The two shards' contributions added up, but for their scopes (:class:`Merger`)."""
        failures = dict(self.failures)
        for name, count in other.failures.items():
            failures[name] = failures.get(name, 0) + count
        return Shard(
            n=self.n + other.n,
            scopes={},
            failures=failures,
            notes=_added_notes(self.notes, other.notes),
            with_id=self.with_id or other.with_id,
            id_keys=np.concatenate([self.id_keys, other.id_keys]),
            unit_keys=np.concatenate([self.unit_keys, other.unit_keys]),
            splits_units={
                k: self.splits_units.get(k, False) or other.splits_units.get(k, False)
                for k in {*self.splits_units, *other.splits_units}
            },
            similarity=added_counts(self.similarity, other.similarity),
            signature=self.signature or other.signature,
            judge=_added_judges(self.judge, other.judge),
            judge_signature=self.judge_signature or other.judge_signature,
            sources=list(dict.fromkeys([*self.sources, *other.sources])),
            context_found=self.context_found | other.context_found,
        )


def added_counts(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any] | None:
    """Two backends' summaries with their counts added (latencies are per shard: dropped)."""
    if a is None or b is None:
        return a if b is None else b
    out: dict[str, Any] = {}
    for name in {*a, *b}:
        x, y = a.get(name), b.get(name)
        if isinstance(x, int | float) and isinstance(y, int | float):
            out[name] = x + y
        elif isinstance(x, dict) and isinstance(y, dict) and name != "latency_sec":
            out[name] = {k: x.get(k, 0) + y.get(k, 0) for k in {*x, *y}}
        elif name != "latency_sec":
            out[name] = x if y is None else y
    return out


def _added_judges(
    a: dict[str, dict[str, Any]] | None, b: dict[str, dict[str, Any]] | None
) -> dict[str, dict[str, Any]] | None:
    """Two shards' judge summaries, each judge's counts added (in the order judges were given)."""
    if a is None or b is None:
        return a if b is None else b
    out: dict[str, dict[str, Any]] = {}
    for judge in dict.fromkeys([*a, *b]):
        added = added_counts(a.get(judge), b.get(judge)) or {}
        first = a.get(judge) or b.get(judge) or {}
        out[judge] = {k: added[k] for k in dict.fromkeys([*first, *added]) if k in added}
    return out


_COUNTED = re.compile(r"(\d+) of (\d+) (.+)", re.DOTALL)


def _added_notes(first: Sequence[str], second: Sequence[str]) -> list[str]:
    """The notes of two shards, each once; a note that counts records ("N of M records ...",
    the same words after the counts) is one note whose counts add up, as the whole data's
    note would read."""
    out: dict[str, str] = {}  # a note's words after any counts: the note
    for note in [*first, *second]:
        counted = _COUNTED.fullmatch(note)
        if counted is None:
            out.setdefault(note, note)
            continue
        count, total, words = int(counted[1]), int(counted[2]), counted[3]
        earlier = _COUNTED.fullmatch(out.get(words, ""))
        if earlier is not None:
            count, total = count + int(earlier[1]), total + int(earlier[2])
        out[words] = f"{count} of {total} {words}"
    return list(out.values())


class Merger:
    """Adds shards as they arrive. The scopes' blocks are gathered and merged once at the end
    (:meth:`StatBlock.merge`, sums added in arrival order), so the rows that only concatenate
    (those of a statistic that does not decompose, and the id keys) are copied once, not once
    per shard; replicate sums are added as they come."""

    def __init__(self) -> None:
        self.merged: Shard | None = None
        self.ids: list[np.ndarray] = []
        self.units: list[np.ndarray] = []
        self.n: dict[str, int] = {}
        self.blocks: dict[str, dict[Hashable, list[StatBlock]]] = {}
        self.replicates: dict[str, dict[Hashable, np.ndarray]] = {}
        self.keys: dict[str, list[np.ndarray]] = {}

    def add(self, shard: Shard) -> None:
        self.ids.append(shard.id_keys)
        self.units.append(shard.unit_keys)
        shard.id_keys = shard.unit_keys = np.empty(0, dtype=np.uint64)
        for name, scope in shard.scopes.items():
            self.n[name] = self.n.get(name, 0) + scope.n
            blocks = self.blocks.setdefault(name, {})
            for key, block in scope.blocks.items():
                found = blocks.setdefault(key, [])
                if found and found[0].width != block.width:
                    raise _other_layouts(key, found[0].width, block.width)
                found.append(block)
            summed = self.replicates.setdefault(name, {})
            for key, sums in scope.replicates.items():
                summed[key] = summed[key] + sums if key in summed else sums
            if scope.keys is not None:
                self.keys.setdefault(name, []).append(scope.keys)
        shard.scopes = {}
        self.merged = shard if self.merged is None else self.merged.add(shard)

    def result(self) -> Shard:
        if self.merged is None:
            raise ValueError("no shard to merge")
        merged = self.merged
        merged.id_keys = np.concatenate(self.ids)
        merged.unit_keys = np.concatenate(self.units)
        merged.scopes = {
            name: Scope(
                self.n[name],
                {key: StatBlock.merge(found) for key, found in blocks.items()},
                self.replicates[name],
                np.concatenate(self.keys[name]) if name in self.keys else None,
            )
            for name, blocks in self.blocks.items()
        }
        return merged


def _other_layouts(key: Hashable, width: int, other: int) -> SuiteError:
    """Two pieces whose blocks of one statistic have different widths do not add up (an
    agreement metric without ``values:`` whose pieces' raters used different values)."""
    return SuiteError(
        f"statistic {key!r}: the pieces of the data give it different layouts ({width} and "
        f"{other} columns), so they do not add up; an agreement metric needs the scale's "
        "values: in the suite with --engine ray"
    )


def merge_shards(shards: Iterable[Shard]) -> Shard:
    """The sum of the shards (in any order: every part adds up)."""
    merger = Merger()
    for shard in shards:
        merger.add(shard)
    return merger.result()


# ------------------------------------------------------------------------------- one shard


def _scope(
    resampling: Resampling,
    blocks: StatBlocks,
    units: np.ndarray | None,
    keys: np.ndarray | None,
) -> Scope:
    sums: dict[Hashable, np.ndarray] = {}
    if keys is not None and resampling.resamples > 0:
        resampled, unit_keys = resampled_blocks(
            {k: b for k, b in blocks.items() if b.decomposable}, units, keys
        )
        assert unit_keys is not None
        sums = poisson_sums(resampled, unit_keys, resampling.resamples, resampling.seed)
    n = next(iter(blocks.values())).n if blocks else 0
    raw = any(not b.decomposable for b in blocks.values())
    return Scope(n, {k: b.reduced() for k, b in blocks.items()}, sums, keys if raw else None)


def shard_of(
    plan: Plan,
    table: Any,
    blocks: StatBlocks,
    units: np.ndarray | None,
    failures: Failures,
    notes: list[str],
    similarity: dict[str, Any] | None = None,
    *,
    file: int | None = None,
) -> Shard:
    """What the shard ``table`` (scored into ``blocks``) adds to its run (``file``: the number
    of its file in a run over several, which keys its records without an id with their line)."""
    resampling = plan.options.resampling
    keys = bootstrap_keys(table, plan.unit, file=file) if resampling.resamples > 0 else None
    scopes = {WHOLE: _scope(resampling, blocks, units, keys)}
    splits: dict[str, bool] = {}
    for part in table_slices(plan, table, units):
        rows = part.rows
        splits[part.path] = part.splits_units
        scopes[part.key] = _scope(
            resampling,
            {k: b.take(rows) for k, b in blocks.items()},
            None if units is None else units[rows],
            None if keys is None else keys[rows],
        )
    ids = [i for i in table.ids if i is not None]
    unit_keys = np.empty(0, dtype=np.uint64)
    if plan.unit is not None:
        unit_keys = np.unique(bootstrap_keys(table, plan.unit))
    return Shard(
        n=table.n,
        scopes=scopes,
        failures=dict(failures.model_dump()),
        notes=list(dict.fromkeys(notes)),
        with_id=bool(ids),
        id_keys=np.sort(record_keys(ids)) if ids else np.empty(0, dtype=np.uint64),
        unit_keys=unit_keys,
        splits_units=splits,
        similarity=similarity,
        sources=[table.source],
    )


ScopeBlocks = dict[str, tuple[StatBlocks, np.ndarray | None]]
"""A shard's blocks per scope, and its unit codes there (what the jackknife pass reads)."""


def run_shard(
    plan: Plan,
    data: Any,
    rows_to: str | None = None,
    stats_to: str | None = None,
    *,
    file: int | None = None,
    judges_share: int = 1,
) -> tuple[Shard, ScopeBlocks | None]:
    """Read, check and score one shard (``data``: a path, a :class:`pingce.readers.Reading` of
    part of a file, or records) by the local engine's own functions, and what it adds to the
    run; with the shard's blocks per scope when BCa will need the jackknife pass. ``rows_to``:
    a Parquet file to write the shard's per-record values and reasons to
    (:mod:`pingce.runfolder.records`); ``stats_to``: a stats.npz to write its per-record statistics
    to (:mod:`pingce.runfolder.stats`); ``file``: in a run over several files, the number of the
    shard's file (its records without an id are keyed by it and their line in the bootstrap);
    ``judges_share``: how many shards are graded at once (each judge's concurrency divided among
    them)."""

    table = load(plan, data, no_progress)
    if table.repeats is not None:
        raise OptionError(
            f"{table.source}: the records have repeats (a repeat field): --engine ray does not "
            "read repeats yet (a record's repeats may fall in two pieces); run them with the "
            "local engine"
        )
    check_records(plan, table)
    units = unit_codes(table, plan.unit)
    scored = similarities(plan, [table], no_progress)
    judged = None
    if any(s.needs_judge for s in plan.statistics.values()):
        from .judgements import grade  # only when judged: the HTTP client's imports

        judged = grade(plan, table, no_progress, share=judges_share)
    blocks = statistics(plan, table, scored, judged=judged)
    failures = count_failures(table, blocks, 0 if scored is None else scored.stats.failures)
    notes = [*table.notes, *statistic_notes([blocks])]
    if judged is not None:
        notes += judged.self_preference(plan.options.model_call)
    shard = shard_of(
        plan,
        table,
        blocks,
        units,
        failures,
        notes,
        None if scored is None else scored.stats.summary(),
        file=file,
    )
    if scored is not None:
        shard.signature = scored.signature
    if judged is not None:
        shard.judge, shard.judge_signature = judged.summary(), judged.signature
    shard.context_found = found_context(plan, table)
    if rows_to is not None:
        rows = record_rows(plan, table, blocks)
        if judged is not None:
            rows.judge.update(judged.column(table.n))
        write_record_shard(rows, table.source, rows_to)
    if stats_to is not None:
        saved_stats(plan, table, blocks, units, piece=True).save(stats_to)
    resampling = plan.options.resampling
    keep = resampling.resamples > 0 and resampling.interval_method == "bca"
    return shard, scope_blocks(plan, table, blocks, units) if keep else None


# ------------------------------------------------------------------------ the merged run


def _thetas(
    plan: Plan,
    scope: Scope,
    wanted: Mapping[str, tuple[Metric, Hashable]],
    resample_raw: RawThetas | None = None,
) -> dict[str, np.ndarray]:
    """Each metric's value on each Poisson replicate of the scope."""
    resampling = plan.options.resampling
    out: dict[str, np.ndarray] = {}
    raw: dict[Hashable, list[tuple[str, Metric]]] = {}  # metrics of one raw statistic together
    for name, (metric, key) in wanted.items():
        if scope.blocks[key].decomposable:
            if key in scope.replicates:
                out[name] = np.asarray(metric.finalize(scope.replicates[key]), dtype=np.float64)
        elif scope.keys is not None:
            raw.setdefault(key, []).append((name, metric))
    resample = resample_raw or raw_thetas
    for key, named in raw.items():
        rows = scope.blocks[key].rows
        assert rows is not None and scope.keys is not None
        metrics = [metric for _, metric in named]
        thetas = resample(metrics, rows, scope.keys, resampling.resamples, resampling.seed)
        for k, (name, _) in enumerate(named):
            out[name] = thetas[k]
    return out


RawThetas = Callable[[Sequence[Metric], np.ndarray, np.ndarray, int, "int | list[int]"], np.ndarray]
"""How the values of a statistic that does not decompose are resampled (the driver's serial
loop, or Ray tasks over ranges of resamples)."""


def raw_thetas(
    metrics: Sequence[Metric],
    rows: np.ndarray,
    keys: np.ndarray,
    resamples: int,
    seed: int | list[int],
    start: int = 0,
) -> np.ndarray:
    """Each of ``metrics`` (of one raw statistic) on Poisson replicates ``start`` to
    ``resamples - 1`` of raw ``rows``, one row a metric: each replicate's weights drawn once
    for all of them (latency percentiles also share its cumulative counts)."""
    theta = np.empty((len(metrics), resamples - start))
    for b, weights in enumerate(poisson_counts(keys, resamples, seed, start)):
        for k, metric in enumerate(metrics):
            theta[k, b] = metric.finalize_rows(rows, weights)
    return theta


def _jackknife(
    metric: Metric, block: StatBlock, moments: np.ndarray | None, by_unit: bool
) -> Callable[[], tuple[np.ndarray, np.ndarray] | float]:
    """BCa's jackknife of a merged (reduced) block: from its rows (not decomposable), its cell
    counts (one-hot, records resampled alone) or the merged moments of the jackknife pass."""

    def jack() -> tuple[np.ndarray, np.ndarray] | float:
        if not block.decomposable:
            assert block.rows is not None
            return metric.jackknife_rows(block.rows)
        if block.onehot and not by_unit:
            counts = block.total()
            present = np.flatnonzero(counts)
            values = metric.finalize(counts[None, :] - np.eye(block.width)[present])
            return np.asarray(values, dtype=np.float64), counts[present]
        if moments is None:
            raise ValueError("BCa on a dense statistic needs the jackknife pass")
        return acceleration_of_moments(moments)

    return jack


def needs_jackknife_pass(plan: Plan, merged: Shard) -> bool:
    """Whether BCa needs the second pass over the shards (a dense decomposable statistic)."""
    resampling = plan.options.resampling
    if resampling.resamples <= 0 or resampling.interval_method != "bca":
        return False
    whole = merged.scopes[WHOLE]
    return any(
        (b.decomposable and not (b.onehot and plan.unit is None))
        for k, b in whole.blocks.items()
        if k in {plan.keys[name] for name in plan.metrics}
    )


def scope_finalised_numbers(plan: Plan, scope: Scope) -> dict[str, float | None]:
    """Each metric's finalised value over the scope (what the jackknife pass subtracts from)."""
    return finalised_numbers(plan, scope.blocks, metric_results(plan, scope.blocks))


def jackknife_pass(
    plan: Plan,
    shard_blocks: Mapping[str, tuple[StatBlocks, np.ndarray | None]],
    totals: Mapping[str, Mapping[Hashable, np.ndarray]],
    values: Mapping[str, Mapping[str, float | None]],
) -> dict[tuple[str, str], np.ndarray]:
    """One shard's jackknife moments per (scope, metric) of a dense statistic: ``shard_blocks``
    maps a scope to its blocks and unit codes in this shard; ``totals`` and ``values`` are the
    merged run's, per scope."""
    out: dict[tuple[str, str], np.ndarray] = {}
    for scope, (blocks, units) in shard_blocks.items():
        if scope not in totals:
            continue
        resampled, _ = resampled_blocks(
            {k: b for k, b in blocks.items() if b.decomposable}, units, None
        )
        for name, metric in plan.metrics.items():
            key = plan.keys[name]
            block = resampled.get(key)
            theta = values[scope].get(name)
            if block is None or theta is None or (block.codes is not None and units is None):
                continue
            out[(scope, name)] = jackknife_moments(
                metric, block.per_record(), np.asarray(totals[scope][key]), theta
            )
    return out


def scope_blocks(
    plan: Plan, table: Any, blocks: StatBlocks, units: np.ndarray | None
) -> ScopeBlocks:
    """A shard's blocks per scope (the whole shard and each slice value's records)."""
    out: ScopeBlocks = {WHOLE: (dict(blocks), units)}
    for part in table_slices(plan, table, units):
        rows = part.rows
        out[part.key] = (
            {k: b.take(rows) for k, b in blocks.items()},
            None if units is None else units[rows],
        )
    return out


def _finish_scope(
    plan: Plan,
    scope: Scope,
    moments: Mapping[str, np.ndarray],
    resample_raw: RawThetas | None = None,
) -> tuple[dict[str, MetricResult], dict[str, dict[str, Any]]]:
    resampling = plan.options.resampling
    blocks = scope.blocks
    results = metric_results(plan, blocks)
    if resampling.resamples > 0:
        values = finalised_numbers(plan, blocks, results)
        wanted = {name: (m, plan.keys[name]) for name, m in plan.metrics.items()}
        wanted = {name: pair for name, pair in wanted.items() if values.get(name) is not None}
        intervals: dict[str, Interval] = replicate_intervals(
            wanted,
            values,
            _thetas(plan, scope, wanted, resample_raw),
            method=resampling.interval_method,
            level=resampling.level,
            jackknives={
                name: _jackknife(metric, blocks[key], moments.get(name), plan.unit is not None)
                for name, (metric, key) in wanted.items()
            },
        )
        with_intervals(results, intervals)
    return results, table_results(plan, blocks)


def finish(
    plan: Plan,
    merged: Shard,
    moments: Mapping[tuple[str, str], np.ndarray] | None = None,
    resample_raw: RawThetas | None = None,
) -> Values:
    """The run's metrics, tables and slices from the merged shards (and, for BCa on dense
    statistics, the merged jackknife moments; ``resample_raw``: how the replicates of raw
    statistics are computed, :func:`raw_thetas` by default)."""
    moments = moments or {}

    def of(scope: str) -> dict[str, np.ndarray]:
        return {name: m for (s, name), m in moments.items() if s == scope}

    metrics, tables = _finish_scope(plan, merged.scopes[WHOLE], of(WHOLE), resample_raw)
    slices: dict[str, SliceResult] = {}
    for path in plan.options.slices:
        prefix = f"{path}="
        values = sorted(name[len(prefix) :] for name in merged.scopes if name.startswith(prefix))
        for i in slice_order(values, path, plan):
            key = prefix + values[i]
            scope = merged.scopes[key]
            found = _finish_scope(plan, scope, of(key), resample_raw)
            split = bool(merged.splits_units.get(path))
            slices[key] = slice_result(plan, path, scope.n, split, found)
    return metrics, tables, slices


def merged_failures(merged: Shard) -> Failures:
    return Failures(**merged.failures)


def duplicate_keys(keys: np.ndarray) -> np.ndarray:
    """The keys found more than once (ids of two records, units in two shards)."""
    keys = np.sort(keys)
    return np.unique(keys[1:][keys[1:] == keys[:-1]])
