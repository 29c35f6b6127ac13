"""Paired comparison of two systems on the same records: ``pingce compare``.

The run's own phases, for both sides: one plan, both outputs loaded and checked, records matched
by id (or by the suite's ``match_by`` fields when records carry no id), the pairs of both sides
scored by one backend in one call, each side's statistics computed once. The paired bootstrap
then draws the same records (or, in a suite with ``unit``, the same units) from both sides on
every resample, so the interval of ``candidate - baseline`` reflects only how the systems differ,
not how hard the records are (sacrebleu's paired bootstrap, on summed statistics).
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from .._version import __version__
from ..errors import InputError
from ..metrics.protocol import StatBlock
from ..options import RunOptions
from ..progress import ProgressHook, no_progress
from ..records import Table, json_equal_key
from ..results import ComparisonResult, MetricComparison
from ..stats import paired_intervals
from ..suites.build import BuiltSuite
from ..suites.spec import SuiteSpec
from .groups import unit_codes
from .pipeline import Data, load, pairs_of, plan_run, signature, similarities, statistics
from .plan import Plan, check_records
from .profile import Profile
from .values import count_failures, policed_value

__all__ = ["compare_suite"]


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


def _grouped(
    blocks: Mapping[Hashable, StatBlock], units: np.ndarray | None
) -> Mapping[Hashable, StatBlock]:
    if units is None:
        return blocks
    codes, dense = np.unique(units, return_inverse=True)
    return {k: b.grouped(dense, len(codes)) for k, b in blocks.items()}


def compare_suite(
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite,
    candidate: Data,
    baseline: Data,
    options: RunOptions | None = None,
    *,
    progress: ProgressHook | None = None,
    profile: Profile | None = None,
) -> ComparisonResult:
    """Compare ``candidate`` with ``baseline`` (two outputs over the same records) on ``suite``.

    Uses ``options``' similarity, bootstrap, seed, ci_method and ci_level; sampling and slices
    do not apply to a comparison.
    """
    options = options or RunOptions()
    progress = progress or no_progress
    timer = profile or Profile()
    with timer.phase("plan"):
        plan = plan_run(suite, options, comparison=True)
    with timer.phase("load"):
        table_c = load(plan, candidate, progress, "candidate records")
        loaded_b = load(plan, baseline, progress, "baseline records")
    with timer.phase("plan"):
        check_records(plan, table_c)
        check_records(plan, loaded_b)
        table_b = loaded_b.take(align(table_c, loaded_b, plan))
    with timer.phase("similarities"):
        scored = similarities(plan, [table_c, table_b], progress)
    with timer.phase("statistics"):
        blocks_c = statistics(plan, table_c, scored)
        blocks_b = statistics(plan, table_b, scored)
        failures = {
            side: count_failures(
                table, blocks, 0 if scored is None else scored.failed(pairs_of(plan, table))
            )
            for side, table, blocks in (
                ("candidate", table_c, blocks_c),
                ("baseline", table_b, blocks_b),
            )
        }
        results: dict[str, MetricComparison] = {}
        deltas: dict[str, float | None] = {}
        for name, metric in plan.metrics.items():
            key = plan.keys[name]
            policy = options.on_judge_failure
            c = policed_value(metric, blocks_c[key], policy)
            b = policed_value(metric, blocks_b[key], policy)
            delta = None if c.value is None or b.value is None else c.value - b.value
            deltas[name] = delta
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
    with timer.phase("intervals"):
        if options.bootstrap > 0:
            units = unit_codes(table_c, plan.unit)
            advance = progress("paired bootstrap", float(options.bootstrap))
            intervals = paired_intervals(
                _grouped(blocks_c, units),
                _grouped(blocks_b, units),
                {name: (m, plan.keys[name]) for name, m in plan.metrics.items()},
                deltas,
                resamples=options.bootstrap,
                seed=options.seed,
                method=options.ci_method,
                level=options.ci_level,
                progress=advance,
            )
            for name, interval in intervals.items():
                results[name] = results[name].model_copy(
                    update={
                        "ci_low": interval.low,
                        "ci_high": interval.high,
                        "p_value": interval.p_value,
                        "note": interval.note,
                    }
                )
    result = ComparisonResult(
        pingce_version=__version__,
        suite=plan.suite.spec.name,
        n_records=table_c.n,
        candidate=table_c.source,
        baseline=table_b.source,
        metrics=results,
        failures=failures,
        signature=signature(plan, scored),
        notes=list(plan.suite.notes),
    )
    if profile is not None:
        result.profile = timer.ordered()
    return result
