"""Paired comparison of two systems on the same records: ``pingce compare``.

The run's own phases, for both sides: one plan, both outputs loaded and checked, records matched
by id (or by the suite's ``match_by`` fields when records carry no id), the pairs of both sides
scored by one backend in one call, each side's statistics computed once. The paired bootstrap
then draws the same records (or, in a suite with ``unit``, the same units) from both sides on
every resample, so the interval of ``candidate - baseline`` reflects only how the systems differ,
not how hard the records are (sacrebleu's paired bootstrap, on summed statistics).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Hashable, Mapping, Sequence
from functools import partial
from itertools import repeat
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .._halves import in_halves
from ..decisions import margins_of
from ..errors import InputError, SuiteError
from ..metrics.protocol import LEFT_OUT, StatBlock
from ..options import Resampling
from ..progress import ProgressHook
from ..records import Table, json_equal_key
from ..results import (
    ComparisonResult,
    ComparisonSlice,
    MetricComparison,
    RecordRows,
    SignificanceTest,
)
from ..runfolder.outputs import ComparisonOutputs
from ..stats import approximate_randomisation, holm, mcnemar_exact, paired_intervals
from .assembly import comparison_result
from .context import RunContext
from .groups import UNGROUPED, paired_keys, resampled_blocks, unit_codes
from .pairwise import judge_pairwise, pairs_of_tables, pairwise_fields
from .phases import pairs_of, signature, similarities, statistics
from .plan import Plan, StatBlocks, check_records, found_context, unseen_context
from .saved import match_keys
from .slices import Slice, slice_keys, slice_seed, slices_of, unit_split_reason
from .values import (
    count_failures,
    finalised_number,
    policed_result,
    record_rows,
    statistic_notes,
)

if TYPE_CHECKING:
    from .judgements import Judgements

__all__ = ["align", "compare_blocks", "compare_tables"]


def _keys(table: Table, plan: Plan, by_id: bool) -> list[Any]:
    if by_id:
        return list(table.ids)
    columns = [table.column(path) for path in plan.suite.spec.match_by or []]
    return [tuple(json_equal_key(c[i]) for c in columns) for i in range(table.n)]


def _show(key: Any) -> Any:
    return key if isinstance(key, str) else list(key)


def align(candidate: Table, baseline: Table, plan: Plan) -> np.ndarray:
    """Indices of the baseline's records in the candidate's order. Records match by id, or by
    the suite's ``match_by`` fields when a side has records without an id; every record must
    have exactly one counterpart, in the same unit."""
    spec = plan.suite.spec
    missing = [(t, t.first_without_id()) for t in (candidate, baseline)]
    by_id = all(i is None for _, i in missing)
    if not by_id and not spec.match_by:
        table, first = next((t, i) for t, i in missing if i is not None)
        assert first is not None
        raise InputError(
            "pingce compare matches records by id and this record has none: add the id field "
            "to both files (or `match_by:` fields to the suite)",
            source=table.source,
            line=int(table.lines[first]),
            field=spec.id_field,
        )
    what = spec.id_field if by_id else ", ".join(spec.match_by or [])
    keys_c, keys_b = _keys(candidate, plan, by_id), _keys(baseline, plan, by_id)
    where: dict[Any, int] = {}
    for table, keys in ((baseline, keys_b), (candidate, keys_c)):
        seen: dict[Any, int] = {}
        for i, key in enumerate(keys):
            if key in seen:
                raise InputError(
                    f"two records with {what} {_show(key)!r} (also line "
                    f"{int(table.lines[seen[key]])}); a comparison needs one per record",
                    source=table.source,
                    line=int(table.lines[i]),
                    field=what,
                    value=_show(key),
                )
            seen[key] = i
        if table is baseline:
            where = seen
    for i, key in enumerate(keys_c):
        if key not in where:
            raise InputError(
                f"no record with {what} {_show(key)!r} in the baseline {baseline.source}",
                source=candidate.source,
                line=int(candidate.lines[i]),
                field=what,
                value=_show(key),
            )
    if baseline.n != candidate.n:
        ours = set(keys_c)
        extra = next(i for i, key in enumerate(keys_b) if key not in ours)
        raise InputError(
            f"no record with {what} {_show(keys_b[extra])!r} in the candidate {candidate.source}",
            source=baseline.source,
            line=int(baseline.lines[extra]),
            field=what,
            value=_show(keys_b[extra]),
        )
    index = np.asarray([where[key] for key in keys_c], dtype=np.int64)
    unit = spec.unit
    if unit is not None:  # the same record must sit in the same unit on both sides
        units_c, units_b = candidate.column(unit), baseline.column(unit)
        for i, j in enumerate(index):
            if json_equal_key(units_c[i]) != json_equal_key(units_b[j]):
                raise InputError(
                    f"this record is in {unit} {units_c[i]!r} in the candidate "
                    f"({candidate.source}:{int(candidate.lines[i])}) but here in another",
                    source=baseline.source,
                    line=int(baseline.lines[j]),
                    field=unit,
                    value=units_b[j],
                )
    return index


def _judgements(plan: Plan, table: Table, progress: ProgressHook) -> Judgements | None:
    """One side's grades by the judges (None when no statistic is judged): each side's answers
    are graded as a run grades them, so equal answers hit the cache."""
    if not any(s.needs_judge for s in plan.statistics.values()):
        return None
    from .judgements import grade

    return grade(plan, table, progress)


def compare_tables(
    plan: Plan, table_c: Table, loaded_b: Table, context: RunContext
) -> ComparisonResult:
    """Compare two loaded tables of records (no repeats) on ``plan``: ``pingce compare SUITE
    --data CANDIDATE --baseline BASELINE`` once both are read
    (:func:`pingce.engine.compare_files.compare_suite`).

    Uses the options' similarity, bootstrap, seed, ci_method, ci_level and slices (the same
    comparison within each value of a ``--slice`` field); sampling does not apply to a
    comparison.
    """
    options, progress = context.options, context.progress
    asked = pairwise_fields(plan) if options.judging.pairwise else None
    with context.phase("plan"):
        check_records(plan, table_c)
        check_records(plan, loaded_b)
        table_b = loaded_b.take(align(table_c, loaded_b, plan))
        slice_rows = _slice_rows(plan, table_c, table_b)
    with context.phase("similarities"):
        scored = similarities(plan, [table_c, table_b], progress)
        judged_c, judged_b = (
            _judgements(plan, table_c, progress),
            _judgements(plan, table_b, progress),
        )
    with context.phase("statistics"):
        blocks_c = statistics(plan, table_c, scored, in_halves, judged_c)  # as local
        blocks_b = statistics(plan, table_b, scored, in_halves, judged_b)
        failures = {
            side: count_failures(
                table, blocks, 0 if scored is None else scored.failed(pairs_of(plan, table))
            )
            for side, table, blocks in (
                ("candidate", table_c, blocks_c),
                ("baseline", table_b, blocks_b),
            )
        }
    units = unit_codes(table_c, plan.unit)
    keys = None
    if options.resampling.poisson:
        by_id = table_c.first_without_id() is None and loaded_b.first_without_id() is None
        names = table_c.ids if by_id else match_keys(table_c, plan.suite.spec.match_by or [])
        keys = paired_keys([str(n) for n in names], by_id)
    pairwise = None
    if asked is not None:
        with context.phase("similarities"):
            pairs = pairs_of_tables(asked, table_c, table_b)
            pairwise = judge_pairwise(plan, asked, pairs, units, keys, progress, slice_rows)
    result = comparison_result(
        plan,
        compare_blocks(plan, blocks_c, blocks_b, units, slice_rows, context, keys),
        n_records=table_c.n,
        labels=(table_c.source, table_b.source),
        failures=failures,
        signature=signature(plan, scored),
        notes=[
            *table_c.notes,  # each names its file (an encoding other than UTF-8, a join's)
            *table_b.notes,
            *(f"candidate: {note}" for note in statistic_notes([blocks_c])),
            *(f"baseline: {note}" for note in statistic_notes([blocks_b])),
            *unseen_context(plan, found_context(plan, table_c) | found_context(plan, table_b)),
        ],
    )
    result.pairwise = pairwise
    context.finish(result)
    sides = partial(_both_rows, plan, (table_c, table_b), (blocks_c, blocks_b))
    return result.with_outputs(ComparisonOutputs(sides))


def _both_rows(
    plan: Plan, tables: tuple[Table, Table], blocks: tuple[StatBlocks, StatBlocks]
) -> tuple[RecordRows, RecordRows]:
    """Both sides' per-record values and miss reasons (the baseline's in the candidate's
    order), for the records that flipped."""
    return record_rows(plan, tables[0], blocks[0]), record_rows(plan, tables[1], blocks[1])


def _same_layouts(
    plan: Plan, blocks_c: Mapping[Hashable, StatBlock], blocks_b: Mapping[Hashable, StatBlock]
) -> None:
    """Both sides' blocks of each statistic have one width, so their rows pair column by
    column; else an error naming the metrics that read it (an agreement metric without
    ``values:`` over two runs whose raters used different values)."""
    for key, block in blocks_c.items():
        other = blocks_b.get(key)
        if other is None or other.width == block.width:
            continue
        names = sorted(name for name, k in plan.keys.items() if k == key)
        raise SuiteError(
            f"metric {', '.join(names)}: the two sides' statistics have different layouts "
            f"({block.width} and {other.width} columns), so their records cannot be paired; an "
            "agreement metric needs the scale's values: in the suite when the two runs' raters "
            "used different values"
        )


def compare_blocks(
    plan: Plan,
    blocks_c: Mapping[Hashable, StatBlock],
    blocks_b: Mapping[Hashable, StatBlock],
    units: np.ndarray | None,
    slice_rows: Sequence[Slice],
    context: RunContext,
    keys: np.ndarray | None = None,
) -> tuple[dict[str, MetricComparison], dict[str, ComparisonSlice] | None]:
    """The comparison of two sides' statistic blocks over the same records, in the same order
    (``units``: a unit code per record in a unit suite; ``slice_rows``: the ``--slice`` values,
    :mod:`.slices`). Every way of comparing ends here: two record files
    (:func:`.compare_files.compare_suite`) and two stored runs
    (:func:`.stored_runs.compare_runs`).

    Records left out after failed similarity calls on either side are left out of that
    statistic's comparison on both (under ``--on-judge-failure skip``; under ``null`` such a
    metric has no value to compare) and counted per metric (``left_out``). Then per metric: both
    values, the difference, its paired bootstrap interval and p-value, McNemar, approximate
    randomisation, Holm across the metrics (and across every metric of every slice) and the
    verdict in words. ``keys`` (a Poisson key per paired record, :func:`.groups.paired_keys`):
    the paired Poisson bootstrap (``--bootstrap-method poisson``), a record's weights the same
    on both sides and in every slice."""
    options, progress = plan.options, context.progress
    _same_layouts(plan, blocks_c, blocks_b)
    if options.on_judge_failure == "skip":
        blocks_c, blocks_b = _left_out_on_both(blocks_c, blocks_b)
    with context.phase("intervals"):
        seed = options.resampling.seed
        results = _compared(plan, blocks_c, blocks_b, units, seed, "", progress, keys)
        results = _judged(results, options.resampling)
    slices: dict[str, ComparisonSlice] | None = None
    if slice_rows:
        with context.phase("slices"):
            slices = {}
            for part in slice_rows:
                rows = part.rows
                metrics = _compared(
                    plan,
                    {k: b.take(rows) for k, b in blocks_c.items()},
                    {k: b.take(rows) for k, b in blocks_b.items()},
                    None if units is None else units[rows],
                    slice_seed(seed, part.key, poisson=keys is not None),
                    f" {part.key}",
                    progress,
                    None if keys is None else keys[rows],
                )
                if part.splits_units:
                    for name in plan.metrics:
                        reason = unit_split_reason(plan, part.path, name)
                        if reason is not None:
                            metrics[name] = _unit_split(metrics[name], reason)
                slices[part.key] = ComparisonSlice(n_records=part.n, metrics=metrics)
            # one family: every metric of every slice (scanning slices for a difference is
            # many tests)
            flat = {(k, n): m for k, sl in slices.items() for n, m in sl.metrics.items()}
            judged = _judged(flat, options.resampling)
            for (k, n), m in judged.items():
                slices[k].metrics[n] = m
    return results, slices


def _left_out_mask(block: StatBlock) -> np.ndarray | None:
    column = block.reasons.get(LEFT_OUT)
    if column is None:
        return None
    mask = np.fromiter(map(operator.is_not, column, repeat(None)), bool, block.n)
    return mask if mask.any() else None


def _left_out_on_both(
    blocks_c: Mapping[Hashable, StatBlock], blocks_b: Mapping[Hashable, StatBlock]
) -> tuple[dict[Hashable, StatBlock], dict[Hashable, StatBlock]]:
    """A record left out of a statistic after failed similarity calls on one side is left out
    on the other too: the other side's row becomes the left-out row (a left-out record's
    statistics hold nothing but its failure count) and its reason says why. So both values
    are over the same records, and the pairs the bootstrap draws are pairs."""
    out_c, out_b = dict(blocks_c), dict(blocks_b)
    for key in blocks_c:
        left_c, left_b = _left_out_mask(blocks_c[key]), _left_out_mask(blocks_b[key])
        if left_c is None and left_b is None:
            continue
        none = np.zeros(blocks_c[key].n, dtype=bool)
        left_c = none if left_c is None else left_c
        left_b = none if left_b is None else left_b
        out_b[key] = _left_out_like(blocks_b[key], blocks_c[key], left_c & ~left_b, "candidate")
        out_c[key] = _left_out_like(blocks_c[key], blocks_b[key], left_b & ~left_c, "baseline")
    return out_c, out_b


def _left_out_like(block: StatBlock, other: StatBlock, rows: np.ndarray, side: str) -> StatBlock:
    """``block`` with the records at ``rows`` (a mask) left out as ``other`` left them out."""
    if not rows.any():
        return block
    codes, data = block.codes, block.rows
    if codes is not None and other.codes is not None:
        codes = codes.copy()
        codes[rows] = other.codes[rows]
    elif data is not None and other.rows is not None:
        data = np.array(data, copy=True)
        data[rows] = other.rows[rows]
    else:  # not expected: the same statistic has one layout
        raise ValueError("the two sides' blocks of one statistic have different layouts")
    reasons = dict(block.reasons)
    column = reasons.get(LEFT_OUT)
    column = np.full(block.n, None, dtype=object) if column is None else column.copy()
    column[rows] = f"left out: similarity calls failed for this record in the {side}"
    reasons[LEFT_OUT] = column
    return dataclasses.replace(block, codes=codes, rows=data, reasons=reasons)


def _slice_rows(plan: Plan, candidate: Table, baseline: Table) -> list[Slice]:
    """Every ``--slice`` value's records (in report order); a slice field must have the same
    value on both sides."""
    keys: dict[str, list[str]] = {}
    for path in plan.options.slices:
        keys[path] = slice_keys(candidate, path, plan)
        theirs = slice_keys(baseline, path, plan)
        for i, (a, b) in enumerate(zip(keys[path], theirs, strict=True)):
            if a != b:
                raise InputError(
                    f"--slice {path}: this record has {path} {b!r} in the baseline but {a!r} "
                    f"in the candidate ({candidate.source}:{int(candidate.lines[i])}); a "
                    "comparison slices both sides alike (slice by a field they share)",
                    source=baseline.source,
                    line=int(baseline.lines[i]),
                    field=path,
                    value=b,
                )
    return slices_of(plan, keys, unit_codes(candidate, plan.unit))


def _unit_split(entry: MetricComparison, reason: str) -> MetricComparison:
    return MetricComparison(
        candidate=None,
        baseline=None,
        delta=None,
        n=0,
        n_baseline=0,
        higher_is_better=entry.higher_is_better,
        note=reason,
    )


def _compared(
    plan: Plan,
    blocks_c: Mapping[Hashable, StatBlock],
    blocks_b: Mapping[Hashable, StatBlock],
    units: np.ndarray | None,
    seed: int | list[int],
    label: str,
    progress: ProgressHook,
    keys: np.ndarray | None = None,
) -> dict[str, MetricComparison]:
    """Both values, the difference, its paired interval and the tests of every metric, over
    these blocks (all records, or one slice's); Holm and the verdict come later."""
    resampling, policy = plan.options.resampling, plan.options.on_judge_failure
    results: dict[str, MetricComparison] = {}
    deltas: dict[str, float | None] = {}
    for name, metric in plan.metrics.items():
        key = plan.keys[name]
        if key not in blocks_c:  # a percentile of runs with repeats: no record-by-record form
            results[name] = MetricComparison(
                candidate=None,
                baseline=None,
                delta=None,
                n=0,
                n_baseline=0,
                higher_is_better=metric.higher_is_better,
                note=f"not compared with repeats: {UNGROUPED} (compare each run's value)",
            )
            continue
        c = policed_result(metric, blocks_c[key], policy)
        b = policed_result(metric, blocks_b[key], policy)
        delta = None if c.value is None or b.value is None else c.value - b.value
        # the tests resample the finalised values (reported_value may report another estimate)
        fc = finalised_number(metric, blocks_c[key], c.value)
        fb = finalised_number(metric, blocks_b[key], b.value)
        deltas[name] = None if fc is None or fb is None else fc - fb
        reasons = [f"{s}: {r.undefined_reason}" for s, r in (("candidate", c), ("baseline", b))]
        results[name] = MetricComparison(
            candidate=c.value,
            baseline=b.value,
            delta=delta,
            n=c.n,
            n_baseline=b.n,
            higher_is_better=metric.higher_is_better,
            note=None
            if delta is not None
            else "; ".join(r for r in reasons if not r.endswith(": None")),
        )
    # the units that resample (and swap, and pair for McNemar) together
    grouped_c, keys = resampled_blocks(blocks_c, units, keys)
    grouped_b, _ = resampled_blocks(blocks_b, units, None)
    wanted = {
        name: (m, plan.keys[name])
        for name, m in plan.metrics.items()
        if plan.keys[name] in grouped_c
    }
    tests: dict[str, list[SignificanceTest]] = {name: [] for name in plan.metrics}
    margins = margins_of(
        plan.options.gating.margin_gates,
        {name: m.higher_is_better for name, m in plan.metrics.items()},
    )
    if resampling.resamples > 0:
        advance = progress(f"paired bootstrap{label}", float(resampling.resamples))
        intervals = paired_intervals(
            grouped_c,
            grouped_b,
            wanted,
            deltas,
            resamples=resampling.resamples,
            seed=seed,
            method=resampling.interval_method,
            level=resampling.level,
            progress=advance,
            keys=keys,
            stream=resampling.stream,
            margins=margins,
        )
        advance = progress(f"approximate randomisation{label}", float(resampling.resamples))
        randomised = approximate_randomisation(
            grouped_c,
            grouped_b,
            wanted,
            deltas,
            trials=resampling.resamples,
            seed=seed,
            progress=advance,
        )
        for name, interval in intervals.items():
            method = f"paired-bootstrap-{interval.method}"
            tests[name].append(
                SignificanceTest(
                    test=method, p_value=interval.p_value, resamples=resampling.resamples
                )
            )
            results[name] = results[name].model_copy(
                update={
                    "ci_low": interval.low,
                    "ci_high": interval.high,
                    "p_value": interval.p_value,
                    "p_method": method if interval.p_value is not None else None,
                    "note": interval.note,
                    "margin_p_value": interval.margin_p_value,
                }
            )
        for name, p_value in randomised.items():
            tests[name].append(
                SignificanceTest(
                    test="approximate-randomisation",
                    p_value=p_value,
                    resamples=resampling.resamples,
                )
            )
    for name, (metric, key) in wanted.items():
        if deltas[name] is None:
            continue
        exact = mcnemar_exact(metric, grouped_c[key], grouped_b[key])
        if exact is not None:
            tests[name].insert(
                1 if tests[name] else 0,
                SignificanceTest(
                    test="mcnemar-exact",
                    p_value=exact.p_value,
                    candidate_only=exact.candidate_only,
                    baseline_only=exact.baseline_only,
                ),
            )
    for name, found in tests.items():
        if found:
            results[name] = results[name].model_copy(update={"tests": found})
    for name, (_, key) in wanted.items():
        left = _left_out_mask(blocks_c[key]), _left_out_mask(blocks_b[key])
        if left[0] is None and left[1] is None:
            continue
        either = np.logical_or(*(np.zeros(blocks_c[key].n, bool) if m is None else m for m in left))
        if blocks_c[key].scope is not None:
            either &= blocks_c[key].scope
        count = int(np.count_nonzero(either))
        said = (
            f"{count} record(s) left out of this comparison: similarity calls failed for them "
            "on either side"
        )
        note = results[name].note
        results[name] = results[name].model_copy(
            update={"left_out": count, "note": f"{said}; {note}" if note else said}
        )
    return results


K = TypeVar("K", bound=Hashable)


def _judged(
    results: Mapping[K, MetricComparison], resampling: Resampling
) -> dict[K, MetricComparison]:
    """Holm across the entries that have a p-value, then significance (``p_holm < 1 -
    ci_level``) and the verdict in words."""
    alpha, resamples = 1.0 - resampling.level, resampling.resamples
    family: dict[K, float] = {key: m.p_value for key, m in results.items() if m.p_value is not None}
    adjusted = holm(family)
    out: dict[K, MetricComparison] = {}
    for key, m in results.items():
        if key not in adjusted:
            verdict = None
            if m.delta is not None:
                verdict = "not tested (--bootstrap 0)" if resamples <= 0 else "not tested"
            out[key] = m.model_copy(update={"verdict": verdict})
            continue
        p, p_holm = m.p_value, adjusted[key]
        assert p is not None and m.delta is not None
        significant = p_holm < alpha
        shown = _p(p, resamples)
        if p < alpha:
            better = (m.delta > 0) == m.higher_is_better
            verdict = f"candidate {'better' if better else 'worse'}, {shown}, "
            if significant:
                verdict += "significant after Holm"
            else:
                verdict += f"not significant after Holm ({_p(p_holm, resamples, 'p_holm')})"
        else:
            verdict = f"no significant difference ({shown})"
        out[key] = m.model_copy(
            update={"p_holm": p_holm, "significant": significant, "verdict": verdict}
        )
    return out


def _p(p: float, resamples: int, name: str = "p") -> str:
    """A p-value in words: two significant digits; below the resamples' resolution, a bound."""
    floor = 1.0 / (resamples + 1) if resamples > 0 else 0.0
    if p < max(floor, 1e-3):
        return f"{name}<{max(floor, 1e-3):.2g}"
    return f"{name}={p:.2g}"
