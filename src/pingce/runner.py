"""The pipeline: load -> sample -> statistics -> values, intervals, slices -> result.

Each statistic is computed once and shared by every metric that reads it; corpus values,
per-record values, slices and bootstrap intervals are all finalisations of the same blocks.
"""

from __future__ import annotations

import math
import os
import platform
import re
import zlib
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._version import __version__
from .errors import OptionError
from .metrics.base import Metric, StatBlock, Statistic
from .records import FieldSpec, ParseFailure, Table, json_equal_key, load_records, parse_path
from .results import (
    DataInfo,
    EvaluationResult,
    Failures,
    MetricResult,
    Signature,
    SliceResult,
)
from .sampling import Allocation, SamplingInfo, Shortfall, sample_indices
from .similarity import BackendStats, SimilarityBackend, SimilarityTable, make_backend
from .stats import CIMethod, Interval, bootstrap_intervals
from .suites.spec import BuiltSuite, DefaultsSpec, SuiteSpec, load_suite

__all__ = ["ProgressHook", "RunOptions", "evaluate_suite"]

ProgressHook = Callable[[str, float | None], Callable[[float], None]]
"""``hook(description, total)`` starts a progress task and returns its ``advance(amount)``."""

_SIMILARITY = re.compile(
    r"^(exact|levenshtein|lexical(:[\w.-]+)?|embedding:.+|embedding-api:.+|openai:.+|rerank:.+)$"
)


def _no_progress(description: str, total: float | None) -> Callable[[float], None]:
    return lambda amount: None


@dataclass
class RunOptions:
    """Options of a run (the command line's, with the same defaults)."""

    similarity: str | SimilarityBackend = "lexical"
    """A backend name (``--similarity``) or, from Python, a backend instance (the caller keeps
    it open and closes it)."""
    sample: int | None = None
    stratify: str | None = None
    allocation: Allocation = "equal"
    short_strata: Shortfall = "error"
    seed: int = 0
    bootstrap: int = 1000
    ci_method: CIMethod = "bca"
    ci_level: float = 0.95
    slices: tuple[str, ...] = ()
    zero_division: float | str | None = "suite"
    base_url: str | None = None
    cache: str | bool | None = None
    """Similarity cache: a path, None for the default file, False for none."""

    def validate(self) -> None:
        """Reject invalid options with a message naming the option."""
        if not isinstance(self.similarity, SimilarityBackend) and not (
            isinstance(self.similarity, str) and _SIMILARITY.match(self.similarity)
        ):
            raise OptionError(
                f"--similarity {self.similarity!r}: expected exact, levenshtein, lexical, "
                "embedding:<model>, embedding-api:<model>, rerank:<model> or openai:<model>"
            )
        if self.sample is not None and self.sample <= 0:
            raise OptionError(f"--sample must be a positive number of records, got {self.sample}")
        if self.stratify is not None and self.sample is None:
            raise OptionError("--stratify needs --sample N (how many records to draw)")
        if self.bootstrap < 0:
            raise OptionError(
                f"--bootstrap must be 0 (off) or a positive count, got {self.bootstrap}"
            )
        if self.bootstrap == 1:
            raise OptionError("--bootstrap 1 cannot give an interval; use 0 (off) or at least 2")
        if not 0.0 < self.ci_level < 1.0:
            raise OptionError(f"--ci-level must be between 0 and 1, got {self.ci_level}")
        if self.ci_method not in ("bca", "percentile", "basic"):
            raise OptionError(
                f"--ci-method must be bca, percentile or basic, got {self.ci_method!r}"
            )
        if self.allocation not in ("equal", "proportional"):
            raise OptionError(
                f"--allocation must be equal or proportional, got {self.allocation!r}"
            )
        if self.short_strata not in ("error", "take-all"):
            raise OptionError(
                f"--short-strata must be error or take-all, got {self.short_strata!r}"
            )
        if self.zero_division not in ("suite", None, 0.0, 1.0):
            raise OptionError(f"--zero-division must be null, 0 or 1, got {self.zero_division!r}")
        for path in [*self.slices, *([self.stratify] if self.stratify else [])]:
            try:
                parse_path(path)
            except ValueError as exc:
                raise OptionError(str(exc)) from None


class RecordValues:
    """Per-record values and miss reasons; rows for records.jsonl are made lazily, a chunk at a
    time, so a million records never sit in memory as a million dictionaries."""

    CHUNK = 65536

    def __init__(
        self,
        table: Table,
        label_fields: Mapping[str, list[str]],
        values: dict[str, np.ndarray],
        explainers: dict[str, Metric],
    ):
        self.table = table
        self.label_fields = label_fields
        self.values = values
        self.explainers = explainers

    def iter_rows(self) -> Iterator[dict[str, Any]]:
        """One dictionary per record: id, line, the fields read, values and miss reasons."""
        table = self.table
        for start in range(0, table.n, self.CHUNK):
            index = np.arange(start, min(start + self.CHUNK, table.n))
            chunk = table.take(index)
            fields: list[tuple[str, list[Any]]] = []
            for path, column in chunk.columns.items():
                if path in self.label_fields:
                    labels = np.asarray(self.label_fields[path], dtype=object)
                    fields.append((path, list(labels[column])))
                elif isinstance(column, np.ndarray):
                    fields.append((path, _nullable(column)))
                else:
                    fields.append((path, column))
            values = [(name, _nullable(column[index])) for name, column in self.values.items()]
            misses: list[tuple[str, list[str | None]]] = []
            for name, metric in self.explainers.items():
                reasons = metric.explain_miss(chunk, self.values[name][index])
                if reasons is not None:
                    misses.append((name, reasons))
            for i in range(index.shape[0]):
                row: dict[str, Any] = {
                    "id": chunk.ids[i],
                    "line": int(chunk.lines[i]),
                    "fields": {path: column[i] for path, column in fields},
                    "values": {name: column[i] for name, column in values},
                }
                missed = {name: reasons[i] for name, reasons in misses if reasons[i]}
                if missed:
                    row["misses"] = missed
                yield row


def _nullable(values: np.ndarray) -> list[Any]:
    """A numeric array as a list with NaN as None."""
    out: list[Any] = values.tolist()
    if values.dtype.kind == "f":
        for i in np.flatnonzero(np.isnan(values)):
            out[i] = None
    return out


def _versions() -> dict[str, str]:
    import scipy

    return {
        "pingce": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
    }


def _value(metric: Metric, block: StatBlock) -> MetricResult:
    """A metric's corpus value on a block, with n and the reason when undefined."""
    if metric.decomposable:
        summed = block.total()
        value = float(metric.compute(summed[None, :])[0])
        n = round(float(metric.count(summed[None, :])[0]))
        reason = metric.undefined_reason(summed) if math.isnan(value) else None
    else:
        assert block.rows is not None
        value = metric.compute_rows(block.rows)
        n = metric.count_rows(block.rows)
        reason = metric.undefined_rows_reason(block.rows) if math.isnan(value) else None
    return MetricResult(value=None if math.isnan(value) else value, n=n, undefined_reason=reason)


class _Evaluator:
    """Computes values, intervals and tables of one suite over one set of records."""

    def __init__(self, suite: BuiltSuite, options: RunOptions, progress: ProgressHook):
        self.suite = suite
        self.options = options
        self.progress = progress
        self.keys: dict[str, Hashable] = {}
        self.backend_stats: BackendStats | None = None
        self.backend_signature: str | None = None
        for name, item in suite.items().items():
            self.keys[name] = item.statistic().key

    def blocks(self, table: Table) -> dict[Hashable, StatBlock]:
        statistics: dict[Hashable, Statistic] = {}
        for item in self.suite.items().values():
            statistic = item.statistic()
            statistics.setdefault(statistic.key, statistic)
        similar = [s for s in statistics.values() if s.needs_similarity]
        scores: SimilarityTable | None = None
        if similar:
            given = self.options.similarity
            backend = (
                given
                if isinstance(given, SimilarityBackend)
                else make_backend(
                    given,
                    base_url=self.options.base_url,
                    cache=self.options.cache,
                    options=dict(self.suite.spec.similarity),
                )
            )
            pairs = list(dict.fromkeys(p for s in similar for p in s.similarity_pairs(table)))
            label = backend.signature().split("|")[0]
            advance = self.progress(f"similarity {label}", float(len(pairs)))
            try:
                scores, self.backend_stats = backend.score(pairs, advance)
            finally:
                if backend is not given:
                    backend.close()
            self.backend_signature = backend.signature()
        blocks: dict[Hashable, StatBlock] = {}
        for key, statistic in statistics.items():
            if statistic.needs_similarity:
                blocks[key] = statistic.compute(table, scores)  # type: ignore[call-arg]
            else:
                blocks[key] = statistic.compute(table)
        return blocks

    def evaluate(
        self,
        blocks: Mapping[Hashable, StatBlock],
        seed: int | list[int],
        label: str,
        units: np.ndarray | None = None,
    ) -> tuple[dict[str, MetricResult], dict[str, dict[str, Any]]]:
        """Values, intervals and tables; with ``units`` (a unit code per record) the bootstrap
        resamples whole units."""
        metrics = self.suite.metrics
        results = {name: _value(m, blocks[self.keys[name]]) for name, m in metrics.items()}
        intervals: dict[str, Interval] = {}
        if self.options.bootstrap > 0:
            resampled = blocks
            if units is not None:
                codes, dense = np.unique(units, return_inverse=True)
                resampled = {k: b.grouped(dense, len(codes)) for k, b in blocks.items()}
            advance = self.progress(f"bootstrap {label}".strip(), float(self.options.bootstrap))
            intervals = bootstrap_intervals(
                resampled,
                {name: (m, self.keys[name]) for name, m in metrics.items()},
                {name: r.value for name, r in results.items()},
                resamples=self.options.bootstrap,
                seed=seed,
                method=self.options.ci_method,
                level=self.options.ci_level,
                progress=advance,
            )
        for name, interval in intervals.items():
            results[name] = results[name].model_copy(
                update={"ci_low": interval.low, "ci_high": interval.high, "ci_note": interval.note}
            )
        tables = {
            name: t.build(blocks[self.keys[name]].total()) for name, t in self.suite.tables.items()
        }
        return results, tables

    def record_values(self, table: Table, blocks: Mapping[Hashable, StatBlock]) -> RecordValues:
        values: dict[str, np.ndarray] = {}
        explainers: dict[str, Metric] = {}
        for name, metric in self.suite.metrics.items():
            if not (metric.per_record and metric.decomposable):
                continue
            block = blocks[self.keys[name]]
            if block.codes is not None:
                per_cell = np.asarray(metric.compute(np.eye(block.width)), dtype=np.float64)
                column = per_cell[block.codes]
            else:
                column = np.asarray(metric.compute(block.per_record()), dtype=np.float64)
            values[name] = column
            explainers[name] = metric
        scale = self.suite.scale
        label_fields = (
            {path: list(scale.labels) for path in self.suite.label_fields()}
            if scale is not None
            else {}
        )
        return RecordValues(table, label_fields, values, explainers)


def _slice_keys(table: Table, path: str, suite: BuiltSuite) -> list[str]:
    column = table.column(path)
    if path in suite.label_fields() and suite.scale is not None:
        return suite.scale.names(np.asarray(column, dtype=np.int64))
    if isinstance(column, np.ndarray):  # a number field: NaN is a missing value
        return [
            "(missing)" if math.isnan(v) else str(int(v)) if float(v).is_integer() else repr(v)
            for v in column.tolist()
        ]
    return ["(missing)" if v is None else str(v) for v in column]


def _units(table: Table, path: str | None) -> np.ndarray | None:
    """A unit code per record (records with equal values of ``path``, equal as JSON values:
    ``1`` and ``"1"`` are two units), numbered in sorted order of the values; or None."""
    if path is None:
        return None
    keys = [v if isinstance(v, str) else json_equal_key(v) for v in table.column(path)]
    distinct = sorted(
        set(keys), key=lambda k: (0, k, "") if isinstance(k, str) else (1, "", repr(k))
    )
    number = {key: code for code, key in enumerate(distinct)}
    return np.fromiter((number[k] for k in keys), np.int64, len(keys))


def _failures(
    table: Table, evaluator: _Evaluator, blocks: Mapping[Hashable, StatBlock]
) -> Failures:
    """Parse failures, failed judge calls and the events the statistics counted."""
    failures = Failures(parse=_parse_failures(table))
    if evaluator.backend_stats is not None:
        failures.judge = evaluator.backend_stats.failures
    for block in blocks.values():
        for name, count in block.counts.items():
            setattr(failures, name, getattr(failures, name, 0) + count)
    return failures


def _parse_failures(table: Table) -> int:
    """Records with a value that its parser rejected (a prediction that did not parse)."""
    failed = np.zeros(table.n, dtype=bool)
    for path, column in table.columns.items():
        if table.specs.get(path) is not None and table.specs[path].lenient:
            failed |= np.fromiter((isinstance(v, ParseFailure) for v in column), bool, table.n)
    return int(failed.sum())


def _stable_hash(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def evaluate_suite(
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite,
    data: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    options: RunOptions | None = None,
    *,
    progress: ProgressHook | None = None,
) -> EvaluationResult:
    """Run ``suite`` over ``data`` and return the result (per-record values attached)."""
    options = options or RunOptions()
    options.validate()
    progress = progress or _no_progress
    built = suite if isinstance(suite, BuiltSuite) else load_suite(suite)
    if options.zero_division != "suite":
        spec = built.spec.model_copy(
            update={"defaults": DefaultsSpec(zero_division=options.zero_division)}
        )
        built = load_suite(spec)
    evaluator = _Evaluator(built, options, progress)

    fields = built.fields()
    known = {f.path for f in fields}
    extra = [options.stratify] if options.stratify else []
    if built.spec.unit is not None and built.spec.unit not in known:
        # every record must say which unit it belongs to: a missing value is an input error
        fields.append(FieldSpec(built.spec.unit, "json", required=True))
        known.add(built.spec.unit)
    extra += list(options.slices)
    for path in extra:
        if path not in known:
            fields.append(FieldSpec(path, "value", required=False))
            known.add(path)

    total_bytes: float | None = None
    if isinstance(data, str | os.PathLike) and os.path.isfile(data):
        total_bytes = float(os.path.getsize(data))
    advance = progress("loading records", total_bytes)
    table = load_records(
        data,
        fields,
        id_path=built.spec.id_field,
        progress=advance if total_bytes is not None else None,
    )
    n_loaded = table.n

    units = _units(table, built.spec.unit)
    sampling: SamplingInfo | None = None
    if options.sample is not None:
        keys = None
        order = None
        if options.stratify:
            keys = _slice_keys(table, options.stratify, built)
            if options.stratify in built.label_fields() and built.scale is not None:
                order = list(built.scale.labels)
        population, noun = table.n, "records"
        if units is not None:  # draw whole units; a unit's stratum is that of its first record
            population, noun = int(units.max()) + 1, f"units of {built.spec.unit}"
            first = np.full(population, table.n, dtype=np.int64)
            np.minimum.at(first, units, np.arange(table.n))
            keys = None if keys is None else [keys[i] for i in first]
        index, sampling = sample_indices(
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
            sampling = sampling.model_copy(update={"unit": built.spec.unit})
            index = np.flatnonzero(np.isin(units, index))
        table = table.take(index)
        units = None if units is None else units[index]

    blocks = evaluator.blocks(table)
    metrics, tables = evaluator.evaluate(blocks, options.seed, "", units)
    failures = _failures(table, evaluator, blocks)

    slices: dict[str, SliceResult] = {}
    for path in options.slices:
        keys_list = _slice_keys(table, path, built)
        values, inverse = np.unique(
            np.asarray(keys_list, dtype=object).astype(str), return_inverse=True
        )
        order_names = [str(v) for v in values]
        if path in built.label_fields() and built.scale is not None:
            rank = {label: i for i, label in enumerate(built.scale.labels)}
            order_idx = sorted(range(len(order_names)), key=lambda i: rank.get(order_names[i], 0))
        else:
            order_idx = list(range(len(order_names)))
        # a field that varies within a unit splits units: metrics that read a unit as a whole
        # (a dialogue's slope) have no value in such slices, rather than a misleading one
        splits_units = units is not None and (
            np.unique(np.stack([units, inverse]), axis=1).shape[1] > np.unique(units).size
        )
        for i in order_idx:
            key = f"{path}={order_names[i]}"
            rows = np.flatnonzero(inverse == i)
            sub = {k: b.take(rows) for k, b in blocks.items()}
            sub_metrics, sub_tables = evaluator.evaluate(
                sub,
                [options.seed, 2, _stable_hash(key)],
                key,
                None if units is None else units[rows],
            )
            if splits_units:
                for name, metric in built.metrics.items():
                    unit = metric.statistic().unit_field
                    if unit is not None:
                        sub_metrics[name] = MetricResult(
                            value=None,
                            n=0,
                            undefined_reason=f"{path} varies within {unit} units and "
                            f"{metric.registry_name} reads each {unit} as a whole: slice by a "
                            f"field that is constant within a {unit}",
                        )
            slices[key] = SliceResult(
                n_records=int(rows.shape[0]), metrics=sub_metrics, tables=sub_tables
            )

    signature = Signature(
        seed=options.seed,
        bootstrap=options.bootstrap,
        ci_method=options.ci_method,
        ci_level=options.ci_level,
        similarity=evaluator.backend_signature,
        unit=built.spec.unit,
        zero_division=built.spec.defaults.zero_division,
        labels=list(built.scale.labels) if built.scale is not None else None,
        metrics={name: item.describe() for name, item in built.items().items()},
        versions=_versions(),
    )
    result = EvaluationResult(
        pingce_version=__version__,
        suite=built.spec.name,
        n_records=table.n,
        metrics=metrics,
        tables=tables,
        slices=slices,
        failures=failures,
        signature=signature,
        data=DataInfo(source=table.source, n_loaded=n_loaded, id_field=built.spec.id_field),
        sampling=sampling,
        definitions={name: item.definition for name, item in built.items().items()},
    )
    if evaluator.backend_stats is not None:
        result.similarity = evaluator.backend_stats.summary()
    result._records = evaluator.record_values(table, blocks)
    return result
