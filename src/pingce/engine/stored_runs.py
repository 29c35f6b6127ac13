"""A comparison of two stored runs (``pingce compare RUN_A RUN_B``): their saved per-record
statistics (stats.npz, :mod:`.saved`) paired record by record, with nothing evaluated again and
no model called (but the judges of ``--pairwise``, :mod:`.pairwise`, on the answers the runs'
records.jsonl kept), then the comparison every ``pingce compare`` ends in
(:func:`.compare_blocks`).

Both runs must be of one suite with the same metric definitions (``signature.metrics``) and the
same similarity backend; the plan that reads their blocks is made from that suite with the
comparison's options (its bootstrap, seed, interval method and level, judge-failure policy,
``--slice`` fields) and must define the metrics as the runs did. Records pair by id (or, when
records have none, by the suite's ``match_by`` fields); records in one run only are counted and
listed in the notes, never dropped silently, and in a suite with ``unit`` a unit whose records
differ between the runs is left out whole (its statistics were computed over other records).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import orjson

from ..errors import OptionError, SuiteError
from ..metrics.protocol import StatBlock
from ..options import KEEP_SUITE, RunOptions
from ..progress import ProgressHook
from ..results import ComparisonResult, EvaluationResult
from ..runfolder.outputs import ComparisonOutputs
from ..runfolder.stats import SavedStats
from ..suites.build import BuiltSuite
from ..suites.spec import SuiteSpec
from .assembly import comparison_result
from .compare import compare_blocks
from .context import RunContext
from .groups import paired_keys, resampled_blocks
from .pairwise import judge_pairwise, pairs_of_rows, pairwise_fields
from .phases import plan_run, signature
from .plan import Plan
from .profile import Profile
from .saved import saved_blocks
from .slices import slices_of

__all__ = ["SHOWN", "Pairing", "compare_runs", "pair_records", "planning_blocks"]

SHOWN = 5
"""How many one-sided records a note names (all are counted)."""


@dataclasses.dataclass
class Pairing:
    """Which saved records are the same record in both runs.

    ``candidate`` and ``baseline``: positions of the paired records in each run (in the
    candidate's order); ``only_candidate`` and ``only_baseline``: how the records in one run only
    are known (an id, or ``field=value`` of the ``match_by`` fields); ``units_left_out`` and
    ``records_left_out``: in a unit suite, the units whose records differ between the runs and
    the paired records they hold (left out of the comparison, with the one-sided ones)."""

    candidate: np.ndarray
    baseline: np.ndarray
    only_candidate: list[str]
    only_baseline: list[str]
    units: np.ndarray | None = None
    units_left_out: int = 0
    records_left_out: int = 0
    by: str = "id"
    keys: list[str] = dataclasses.field(default_factory=list)
    """Each paired record's key in the candidate (its id, or its ``match_by`` values as JSON)."""


def _keys(saved: SavedStats, label: str) -> tuple[list[str], str, list[str] | None]:
    """Each record's key (its id, or its ``match_by`` values as JSON), what the keys are, and
    the ``match_by`` fields when the keys are theirs."""
    if "ids_missing" not in saved.arrays:
        return [str(i) for i in saved.ids()], "id", None
    match = saved.arrays.get("match")
    fields = saved.manifest.get("match_by")
    if match is None or not fields:
        first = int(np.flatnonzero(saved.arrays["ids_missing"])[0])
        line = int(saved.arrays["lines"][first])
        raise OptionError(
            f"run {label}: the record on line {line} has no id, and a comparison of stored runs "
            "pairs records by id (or by the suite's match_by fields, which this run's stats.npz "
            "does not hold): add ids to the records, or compare the record files with "
            "`pingce compare SUITE --data FILE --baseline FILE`"
        )
    return [str(k) for k in match.tolist()], ", ".join(fields), list(fields)


def _shown(key: str, fields: list[str] | None) -> str:
    if fields is None:
        return key
    values = orjson.loads(key)
    return ", ".join(f"{f}={orjson.dumps(v).decode()}" for f, v in zip(fields, values, strict=True))


def _index(
    keys: list[str], saved: SavedStats, label: str, what: str, fields: Any
) -> dict[str, int]:
    where: dict[str, int] = {}
    lines = saved.arrays["lines"]
    for i, key in enumerate(keys):
        if key in where:
            raise OptionError(
                f"run {label}: two records with {what} {_shown(key, fields)} (lines "
                f"{int(lines[where[key]])} and {int(lines[i])}); a comparison pairs one record "
                "with one record"
            )
        where[key] = i
    return where


def pair_records(
    candidate: SavedStats, baseline: SavedStats, labels: Sequence[str] = ("candidate", "baseline")
) -> Pairing:
    """Pair the records of two runs' saved statistics by id (by the suite's ``match_by`` fields
    when records have no id), in the candidate's order; in a unit suite, only units whose
    records are the same in both runs, and a record must be in the same unit in both."""
    keys_c, what_c, fields_c = _keys(candidate, labels[0])
    keys_b, what_b, fields_b = _keys(baseline, labels[1])
    if what_c != what_b:
        raise OptionError(
            f"run {labels[0]} knows its records by {what_c} and run {labels[1]} by {what_b}: a "
            "comparison pairs records that both runs identify alike (give every record an id, "
            "or none)"
        )
    where_c = _index(keys_c, candidate, labels[0], what_c, fields_c)
    where_b = _index(keys_b, baseline, labels[1], what_b, fields_b)
    index_c = np.asarray([i for i, k in enumerate(keys_c) if k in where_b], dtype=np.int64)
    index_b = np.asarray([where_b[keys_c[i]] for i in index_c.tolist()], dtype=np.int64)
    only_c = [_shown(k, fields_c) for k in keys_c if k not in where_b]
    only_b = [_shown(k, fields_b) for k in keys_b if k not in where_c]
    pairing = Pairing(index_c, index_b, only_c, only_b, by=what_c)
    units_c, units_b = candidate.arrays.get("units"), baseline.arrays.get("units")
    if units_c is None or units_b is None:
        pairing.keys = [keys_c[i] for i in index_c.tolist()]
        return pairing
    unit = candidate.manifest.get("unit") or "unit"
    paired_c, paired_b = units_c[index_c], units_b[index_b]
    # a record in the same unit on both sides: the units of the paired records correspond one
    # to one
    for mine, theirs, label in ((paired_c, paired_b, labels[1]), (paired_b, paired_c, labels[0])):
        first: dict[int, int] = {}
        for k, (u, v) in enumerate(zip(mine.tolist(), theirs.tolist(), strict=True)):
            if first.setdefault(u, v) != v:
                key = keys_c[int(index_c[k])]
                raise OptionError(
                    f"the record {_shown(key, fields_c)} is in another {unit} in run {label} "
                    f"than its {unit}'s other records: both runs must hold the same {unit}s"
                )
    # units whose records differ between the runs (a one-sided record in them) are left out
    # whole: their statistics were computed over other records
    one_sided = np.ones(units_c.shape[0], dtype=bool)
    one_sided[index_c] = False
    broken_c = set(units_c[one_sided].tolist())
    one_sided = np.ones(units_b.shape[0], dtype=bool)
    one_sided[index_b] = False
    broken_b = set(units_b[one_sided].tolist())
    keep = np.fromiter(
        (
            u not in broken_c and v not in broken_b
            for u, v in zip(paired_c.tolist(), paired_b.tolist(), strict=True)
        ),
        bool,
        paired_c.shape[0],
    )
    if not keep.all():
        pairing.units_left_out = len(set(paired_c[~keep].tolist()))
        pairing.records_left_out = int(np.count_nonzero(~keep))
        pairing.candidate, pairing.baseline = index_c[keep], index_b[keep]
    pairing.units = units_c[pairing.candidate]
    pairing.keys = [keys_c[i] for i in pairing.candidate.tolist()]
    return pairing


def by_record(saved: SavedStats, plan: Plan) -> tuple[SavedStats, dict[Hashable, StatBlock]]:
    """A run's saved statistics and blocks, with repeats (stats.npz's ``repeats``) summed into
    one row a record (by id: the record's cluster, which the bootstrap resamples whole), so
    that two runs pair record by record whatever their repeats; a run without repeats as it
    is. A statistic of raw rows (a latency percentile) does not sum: it is left out (its
    metrics get no interval, with a note)."""
    blocks = dict(saved_blocks(saved, plan))
    if "repeats" not in saved.arrays:
        return saved, blocks
    ids = [str(i) for i in saved.ids()]
    distinct, first, dense = np.unique(
        np.asarray(ids, dtype=object), return_index=True, return_inverse=True
    )
    grouped, _ = resampled_blocks(blocks, dense.reshape(-1), None)
    arrays: dict[str, np.ndarray] = {
        "ids_json": np.frombuffer(orjson.dumps([str(i) for i in distinct]), np.uint8),
        "lines": saved.arrays["lines"][first],
    }
    varies = []
    for name, codes in saved.arrays.items():
        if name.startswith("slice."):  # a record's slice: its first repeat's
            arrays[name] = codes[first]
            if (codes != codes[first][dense.reshape(-1)]).any():
                varies.append(name.removeprefix("slice."))
    manifest = {
        **saved.manifest,
        "n": int(distinct.shape[0]),
        "rows": int(dense.shape[0]),
        "slices_varying": varies,
    }
    return SavedStats(manifest, arrays), grouped


def _listed(keys: list[str]) -> str:
    shown = ", ".join(keys[:SHOWN])
    return shown + (f", ... ({len(keys) - SHOWN} more)" if len(keys) > SHOWN else "")


def _pairing_notes(
    pairing: Pairing,
    n_c: int,
    n_b: int,
    unit: str | None,
    pairwise: bool = False,
    files: bool = False,
) -> list[str]:
    n = pairing.candidate.shape[0]
    called = "the judges asked only for --pairwise" if pairwise else "no model called"
    how = (
        "each file evaluated as a run of its own (its records have repeats), the runs compared"
        if files
        else f"compared from the runs' saved per-record statistics (stats.npz), paired by "
        f"{pairing.by}: nothing evaluated again, {called}"
    )
    notes = [
        f"{how}; {n:,} records in both runs (of the candidate's {n_c:,} and the baseline's {n_b:,})"
    ]
    for side, keys in (("candidate", pairing.only_candidate), ("baseline", pairing.only_baseline)):
        if keys:
            notes.append(
                f"{len(keys):,} record(s) only in the {side} run, not compared: {_listed(keys)}"
            )
    if pairing.units_left_out:
        notes.append(
            f"{pairing.units_left_out:,} {unit or 'unit'}(s) hold records in one run only: their "
            f"{pairing.records_left_out:,} records in both runs are left out too (a {unit} is "
            "compared whole)"
        )
    return notes


def _differences(mine: dict[str, str], theirs: dict[str, str]) -> str:
    names = [n for n in dict.fromkeys([*mine, *theirs]) if mine.get(n) != theirs.get(n)]
    shown = [f"{n}: {mine.get(n, '(none)')} vs {theirs.get(n, '(none)')}" for n in names[:3]]
    more = f"; ... ({len(names) - 3} more)" if len(names) > 3 else ""
    return "; ".join(shown) + more


def _stats_of(result: EvaluationResult, label: str) -> SavedStats:
    stats = None if result.outputs is None else result.outputs.stats
    if stats is None:
        raise OptionError(
            f"run {label} has no saved per-record statistics (stats.npz, written by every "
            "pingce run since they were added): run it again, or compare its records with "
            "`pingce compare SUITE --data FILE --baseline FILE`"
        )
    return stats


def _plan(
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite | None,
    candidate: EvaluationResult,
    options: RunOptions,
    labels: Sequence[str],
) -> Plan:
    if options.zero_division is KEEP_SUITE:  # the runs' own, which their metrics were defined with
        options = dataclasses.replace(options, zero_division=candidate.signature.zero_division)
    if suite is None:  # a run of another tool's file: the suite it was made with
        from ..tool_logs import suite_from_result

        suite = suite_from_result(candidate)
    try:
        plan = plan_run(candidate.suite if suite is None else suite, options)
    except SuiteError as exc:
        if suite is not None:
            raise
        raise OptionError(
            f"run {labels[0]} is of the suite {candidate.suite!r}, which is not built in: give "
            f"its suite file with --suite FILE ({exc})"
        ) from None
    if plan.suite.spec.name != candidate.suite:
        raise OptionError(
            f"the suite {plan.suite.spec.name!r} is not the runs' suite {candidate.suite!r}"
        )
    return plan


def compare_runs(
    candidate: EvaluationResult,
    baseline: EvaluationResult,
    options: RunOptions | None = None,
    *,
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite | None = None,
    labels: Sequence[str] = ("candidate", "baseline"),
    progress: ProgressHook | None = None,
    profile: Profile | None = None,
    files: bool = False,
) -> ComparisonResult:
    """Compare two runs of one suite from their saved per-record statistics
    (``result.outputs.stats``: a result of :func:`pingce.evaluate`, or one read from a run's
    folder with its stats.npz).

    ``suite``: the runs' suite (default: the built-in suite of their name); ``labels``: how the
    comparison names the two runs (their names or folders). ``options``: bootstrap, seed,
    ci_method, ci_level, on_judge_failure, slices (fields both runs were sliced by), regression
    gates, and zero_division and laws when they must be given again (by default the runs' own
    zero-division policy). When both results carry their per-record rows, the comparison gets
    them, paired (:attr:`ComparisonResult.records`: comparison.html lists the records that
    flipped). ``files``: the runs were just evaluated from two files of records with repeats
    (:func:`pingce.engine.compare_files.compare_suite`), as the first note says."""
    context = RunContext.of(options, progress, profile)
    options = context.options
    with context.phase("plan"):
        saved_c, saved_b = _stats_of(candidate, labels[0]), _stats_of(baseline, labels[1])
        if candidate.suite != baseline.suite:
            raise OptionError(
                f"run {labels[0]} is of the suite {candidate.suite!r} and run {labels[1]} of "
                f"{baseline.suite!r}: a comparison needs two runs of one suite"
            )
        sig_c, sig_b = candidate.signature, baseline.signature
        if sig_c.metrics != sig_b.metrics:
            raise OptionError(
                f"runs {labels[0]} and {labels[1]} define their metrics differently (another "
                f"suite version or other options): {_differences(sig_c.metrics, sig_b.metrics)}"
            )
        if sig_c.similarity != sig_b.similarity:
            raise OptionError(
                f"run {labels[0]} scored similarities with {sig_c.similarity} and run "
                f"{labels[1]} with {sig_b.similarity}: their difference would be the judges' as "
                "much as the systems' (compare runs made with one --similarity)"
            )
        judge_c = (sig_c.model_extra or {}).get("judge")
        judge_b = (sig_b.model_extra or {}).get("judge")
        if judge_c != judge_b:
            raise OptionError(
                f"run {labels[0]} was graded by {judge_c} and run {labels[1]} by {judge_b}: "
                "their difference would be the judges' (or the rubric's, or the scale's) as much "
                "as the systems' (compare runs graded by one judge, rubric and scale)"
            )
        plan = _plan(suite, candidate, options, labels)
        asked = pairwise_fields(plan) if options.judging.pairwise else None
        made = signature(plan, None)
        if made.metrics != sig_c.metrics:
            raise OptionError(
                f"the suite {plan.suite.spec.name} defines its metrics differently from the runs "
                "(the suite file changed since, or the runs were made with --zero-division or "
                "--laws: give them again, or the suite file with --suite): "
                f"{_differences(sig_c.metrics, made.metrics)}"
            )
        rows_n = (saved_c.manifest["n"], saved_b.manifest["n"])
        saved_c, all_c = by_record(saved_c, plan)
        saved_b, all_b = by_record(saved_b, plan)
        pairing = pair_records(saved_c, saved_b, labels)
        if not pairing.candidate.shape[0]:
            raise OptionError(
                f"runs {labels[0]} and {labels[1]} have no record in common (paired by "
                f"{pairing.by}): nothing to compare"
            )
        blocks_c = {k: b.take(pairing.candidate) for k, b in all_c.items()}
        blocks_b = {k: b.take(pairing.baseline) for k, b in all_b.items() if k in all_c}
        blocks_c = {k: b for k, b in blocks_c.items() if k in blocks_b}
        slice_rows = slices_of(
            plan, _slice_names(plan, saved_c, saved_b, pairing, labels), pairing.units
        )
    keys = None
    if options.resampling.poisson:
        keys = paired_keys(pairing.keys, pairing.by == "id")
    pairwise = None
    if asked is not None:  # the one model call of a comparison of stored runs: asked for
        with context.phase("similarities"):
            pairs = pairs_of_rows(
                asked,
                (candidate.records, baseline.records),
                (saved_c.manifest["n"], saved_b.manifest["n"]),
                (pairing.candidate, pairing.baseline),
                labels,
            )
            pairwise = judge_pairwise(
                plan, asked, pairs, pairing.units, keys, context.progress, slice_rows
            )
    compared = compare_blocks(plan, blocks_c, blocks_b, pairing.units, slice_rows, context, keys)
    notes = [
        *_pairing_notes(
            pairing,
            saved_c.manifest["n"],
            saved_b.manifest["n"],
            plan.unit,
            asked is not None,
            files,
        ),
    ]
    if "rows" in saved_c.manifest or "rows" in saved_b.manifest:
        notes.append(
            f"with repeats: the candidate's {saved_c.manifest.get('rows', rows_n[0]):,} rows "
            f"and the baseline's {saved_b.manifest.get('rows', rows_n[1]):,}, each record's "
            "repeats together (values over every row; the paired bootstrap resamples records "
            "with all their repeats on both sides)"
        )
    for field in dict.fromkeys(
        [*saved_c.manifest.get("slices_varying", []), *saved_b.manifest.get("slices_varying", [])]
    ):
        if field in plan.options.slices:
            notes.append(
                f"--slice {field}: {field} differs between a record's repeats; the comparison "
                "puts each record, with all its repeats, in the slice of its first repeat"
            )
    versions = (sig_c.versions.get("pingce"), sig_b.versions.get("pingce"))
    if versions[0] != versions[1]:
        notes.append(f"the runs were made by pingce {versions[0]} and {versions[1]}")
    result = comparison_result(
        plan,
        compared,
        n_records=int(pairing.candidate.shape[0]),
        labels=(labels[0], labels[1]),
        failures={"candidate": candidate.failures, "baseline": baseline.failures},
        signature=made.model_copy(update={"similarity": sig_c.similarity}),
        notes=notes,
    )
    result.pairwise = pairwise
    if result.decision is not None:  # what the verdict was made of, both sides
        result.decision = result.decision.model_copy(
            update={"inputs": {"candidate": candidate.inputs, "baseline": baseline.inputs}}
        )
    rows_c, rows_b = candidate.records, baseline.records
    if (
        rows_c is not None
        and rows_b is not None
        and rows_c.n == saved_c.manifest["n"] == rows_n[0]
        and rows_b.n == saved_b.manifest["n"] == rows_n[1]
    ):
        sides = (rows_c.take(pairing.candidate), rows_b.take(pairing.baseline))
        result = result.with_outputs(ComparisonOutputs(sides))
    context.finish(result)
    return result


def _slice_names(
    plan: Plan, saved_c: SavedStats, saved_b: SavedStats, pairing: Pairing, labels: Sequence[str]
) -> dict[str, list[str]]:
    """Each ``--slice`` field's value of every paired record (the candidate's order), from the
    slice codes both runs saved; they must agree."""
    out: dict[str, list[str]] = {}
    for path in plan.options.slices:
        names = []
        for saved, index, label in (
            (saved_c, pairing.candidate, labels[0]),
            (saved_b, pairing.baseline, labels[1]),
        ):
            values = saved.manifest.get("slices", {}).get(path)
            if values is None:
                sliced = ", ".join(saved.manifest.get("slices", {})) or "none"
                raise OptionError(
                    f"--slice {path}: run {label} was not sliced by {path} (stats.npz keeps the "
                    f"values of a run's own --slice fields; this run's: {sliced}); run both "
                    f"with --slice {path}, or compare their record files"
                )
            codes = saved.arrays[f"slice.{path}"][index]
            names.append(np.asarray(values, dtype=object)[codes].tolist())
        for k, (a, b) in enumerate(zip(*names, strict=True)):
            if a != b:
                raise OptionError(
                    f"--slice {path}: a record has {path} {b!r} in run {labels[1]} but {a!r} in "
                    f"run {labels[0]} (line {int(saved_c.arrays['lines'][pairing.candidate[k]])} "
                    "of the candidate's records); a comparison slices both sides alike"
                )
        out[path] = names[0]
    return out


def planning_blocks(
    baseline: EvaluationResult,
    candidate: EvaluationResult | None = None,
    options: RunOptions | None = None,
    *,
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite | None = None,
    labels: Sequence[str] = ("baseline", "candidate"),
) -> tuple[Plan, dict[Hashable, StatBlock], dict[Hashable, StatBlock] | None]:
    """A stored baseline run's plan and per-record statistic blocks (summed per unit in a
    unit suite), and, with a ``candidate`` run, its blocks paired with the baseline's records
    (``pingce plan``)."""
    options = options or RunOptions(bootstrap=0)
    plan = _plan(suite, baseline, options, labels)
    saved_b, all_b = by_record(_stats_of(baseline, labels[0]), plan)
    if candidate is None:
        grouped, _ = resampled_blocks(all_b, saved_b.arrays.get("units"), None)
        return plan, grouped, None
    saved_c = _stats_of(candidate, labels[1])
    if (
        candidate.suite != baseline.suite
        or candidate.signature.metrics != baseline.signature.metrics
    ):
        raise OptionError(
            f"runs {labels[0]} and {labels[1]} are not of one suite with the same metrics"
        )
    saved_c, all_c = by_record(saved_c, plan)
    pairing = pair_records(saved_c, saved_b, (labels[1], labels[0]))
    blocks_c = {k: b.take(pairing.candidate) for k, b in all_c.items() if k in all_b}
    blocks_b = {k: b.take(pairing.baseline) for k, b in all_b.items() if k in all_c}
    grouped_b, _ = resampled_blocks(blocks_b, pairing.units, None)
    grouped_c, _ = resampled_blocks(blocks_c, pairing.units, None)
    return plan, grouped_b, grouped_c
