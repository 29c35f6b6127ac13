"""The metric protocol, the statistic blocks metrics share, and the registry.

Statistics first, scores second (as sacrebleu does for BLEU):

* a :class:`Statistic` turns the loaded records into a :class:`StatBlock`: per record, a small
  vector of numbers that add up (confusion-matrix cells, sums and counts). It is computed once per
  run, however many metrics read it;
* a :class:`Metric` turns a *summed* statistic vector into its value with :meth:`Metric.compute`,
  vectorised over any leading axes, so one call finalises the corpus, every bootstrap resample or
  every record at once.

Corpus value, per-record values, slices, bootstrap intervals and jackknife values all come from
these two steps. A metric that does not decompose into sums (a latency percentile) sets
``decomposable = False`` and reads the rows themselves through :meth:`Metric.compute_rows`.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np

from ..errors import SuiteError
from ..records import FieldSpec, Table

__all__ = [
    "Metric",
    "MetricInfo",
    "StatBlock",
    "Statistic",
    "TableMetric",
    "ZeroDivision",
    "check_zero_division",
    "create_metric",
    "create_table",
    "metric_registry",
    "register_metric",
    "register_table",
    "table_registry",
]

ZeroDivision = float | None
"""What a ratio whose denominator is 0 becomes: ``None`` (null with a reason), 0.0 or 1.0."""


def check_zero_division(value: object) -> ZeroDivision:
    """Validate a zero-division policy: None (null), 0 or 1."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and value in (0, 1):
        return float(value)
    raise ValueError(f"zero_division must be null, 0 or 1, got {value!r}")


@dataclass
class StatBlock:
    """Per-record statistics of one :class:`Statistic`, in one of three layouts.

    * one-hot: record ``i`` adds 1 to cell ``codes[i]`` of a ``width``-vector (a confusion matrix
      flattened); sums are ``np.bincount``, the cheapest layout to resample;
    * dense: ``rows[i]`` is a vector of ``width`` numbers that add up;
    * raw: ``rows[i]`` are values that do not add up (``decomposable`` is False), e.g. latencies
      with NaN where a record has none.
    """

    width: int
    codes: np.ndarray | None = None
    rows: np.ndarray | None = None
    decomposable: bool = True
    counts: dict[str, int] = field(default_factory=dict)
    """Events to report in ``failures`` (e.g. texts the seed's library scores 0)."""

    @property
    def n(self) -> int:
        """Number of records."""
        if self.codes is not None:
            return int(self.codes.shape[0])
        assert self.rows is not None
        return int(self.rows.shape[0])

    def total(self) -> np.ndarray:
        """The statistics summed over all records (decomposable blocks only)."""
        if self.codes is not None:
            return np.bincount(self.codes, minlength=self.width).astype(np.float64)
        assert self.rows is not None and self.decomposable
        return np.asarray(self.rows.sum(axis=0), dtype=np.float64)

    def weighted_total(self, weights: np.ndarray) -> np.ndarray:
        """Sum of the statistics with record ``i`` counted ``weights[i]`` times."""
        if self.codes is not None:
            return np.asarray(
                np.bincount(self.codes, weights=weights, minlength=self.width), dtype=np.float64
            )
        assert self.rows is not None
        return np.asarray(weights @ self.rows, dtype=np.float64)

    def resampled_total(self, index: np.ndarray, counts: Callable[[], np.ndarray]) -> np.ndarray:
        """Sum over the records at ``index`` (with repeats); ``counts()``: per-record counts."""
        if self.codes is not None:
            return np.bincount(self.codes[index], minlength=self.width).astype(np.float64)
        assert self.rows is not None
        return np.asarray(counts() @ self.rows, dtype=np.float64)

    def per_record(self) -> np.ndarray:
        """Each record's own statistic vector, shape ``(n, width)``."""
        if self.codes is not None:
            onehot: np.ndarray = np.eye(self.width, dtype=np.float64)[self.codes]
            return onehot
        assert self.rows is not None
        return np.asarray(self.rows, dtype=np.float64)

    def grouped(self, units: np.ndarray, n_units: int) -> StatBlock:
        """The statistics summed within units (record ``i`` belongs to unit ``units[i]``): a
        block of ``n_units`` rows whose totals equal this block's."""
        assert self.decomposable
        out = np.zeros((n_units, self.width))
        if self.codes is not None:
            np.add.at(out, (units, self.codes), 1.0)
        else:
            assert self.rows is not None
            np.add.at(out, units, self.rows)
        return StatBlock(width=self.width, rows=out, counts=dict(self.counts))

    def take(self, index: np.ndarray) -> StatBlock:
        """The block restricted to the records at ``index`` (a slice)."""
        return StatBlock(
            width=self.width,
            codes=None if self.codes is None else self.codes[index],
            rows=None if self.rows is None else self.rows[index],
            decomposable=self.decomposable,
        )


class Statistic(ABC):
    """Computes a :class:`StatBlock` from the records. Equal ``key`` means shareable.

    A statistic that needs meaning sets ``needs_similarity``, lists the text pairs it needs in
    :meth:`similarity_pairs`, and receives the scored pairs as ``compute(table, similarity)``:
    the runner asks the backend once for the pairs of all such statistics.
    """

    needs_similarity: bool = False
    unit_field: str | None = None
    """A field whose records depend on one another (the turns of a dialogue): the statistic
    reads them together, so the suite must resample whole units of it (``unit:``)."""

    def similarity_pairs(self, table: Table) -> Iterable[tuple[str, str]]:
        """The (a, b) pairs whose similarity :meth:`compute` will read."""
        return ()

    @property
    @abstractmethod
    def key(self) -> Hashable:
        """Identity of the statistic: metrics with equal keys share one computation."""

    @abstractmethod
    def fields(self) -> list[FieldSpec]:
        """The record fields this statistic reads."""

    @abstractmethod
    def compute(self, table: Table) -> StatBlock:
        """Per-record statistics of every record in ``table``."""


class Metric(ABC):
    """A scalar metric: ``compute(summed statistics) -> value``.

    Subclasses set ``definition`` (one line, shown by ``pingce metrics``), implement
    :meth:`statistic`, :meth:`compute` and :meth:`count`, and explain undefined values in
    :meth:`undefined_reason`. ``name`` and ``args`` are filled in by the registry.
    """

    definition: str = ""
    unit: ClassVar[str] = "records"
    decomposable: ClassVar[bool] = True
    per_record: ClassVar[bool] = True
    """Whether a value per record is meaningful (shown in records.jsonl)."""
    higher_is_better: ClassVar[bool] = True

    name: str = ""
    registry_name: str = ""
    args: dict[str, Any]

    @abstractmethod
    def statistic(self) -> Statistic:
        """The statistic this metric is computed from."""

    def compute(self, summed: np.ndarray) -> np.ndarray:
        """Values from summed statistics of shape ``(..., width)``; NaN where undefined."""
        raise NotImplementedError

    def count(self, summed: np.ndarray) -> np.ndarray:
        """How many units (records, predicted positives, ...) each value was computed over."""
        raise NotImplementedError

    def undefined_reason(self, summed: np.ndarray) -> str:
        """Why the value of this summed vector is undefined (only called when it is)."""
        return "undefined for this data"

    # Non-decomposable metrics implement these three instead of compute/count.
    def compute_rows(self, rows: np.ndarray, weights: np.ndarray | None = None) -> float:
        """Value from raw rows, record ``i`` counted ``weights[i]`` times (NaN if undefined)."""
        raise NotImplementedError

    def count_rows(self, rows: np.ndarray) -> int:
        """Units the raw-row value is computed over."""
        raise NotImplementedError

    def undefined_rows_reason(self, rows: np.ndarray) -> str:
        """Why the value from these raw rows is undefined."""
        return "undefined for this data"

    def jackknife_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Leave-one-out values as ``(distinct values, how many records give each)``.

        The default recomputes once per record; metrics override it with a closed form.
        """
        n = rows.shape[0]
        weights = np.ones(n)
        values = np.empty(n)
        for i in range(n):
            weights[i] = 0.0
            values[i] = self.compute_rows(rows, weights)
            weights[i] = 1.0
        return values, np.ones(n)

    def explain_miss(self, table: Table, values: np.ndarray) -> list[str | None] | None:
        """Why each record missed (value below the best), or None if the metric has no story."""
        return None

    def describe(self) -> str:
        """``name(arg=value, ...)``: the registered metric and the arguments it was built with."""
        shown = ", ".join(f"{k}={_show_arg(v)}" for k, v in self.args.items())
        return f"{self.registry_name}({shown})"


def _show_arg(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "[" + ",".join(str(v) for v in value) + "]"
    return str(value)


class TableMetric(ABC):
    """A metric whose result is a table (a confusion matrix, a per-class report)."""

    definition: str = ""
    name: str = ""
    registry_name: str = ""
    args: dict[str, Any]

    @abstractmethod
    def statistic(self) -> Statistic:
        """The statistic this table is built from."""

    def describe(self) -> str:
        """``name(arg=value, ...)``: the registered table and the arguments it was built with."""
        shown = ", ".join(f"{k}={_show_arg(v)}" for k, v in self.args.items())
        return f"{self.registry_name}({shown})"

    @abstractmethod
    def build(self, summed: np.ndarray) -> dict[str, Any]:
        """The table, JSON-ready, from the summed statistics."""


@dataclass(frozen=True)
class MetricInfo:
    """A registry entry: the factory, its one-line definition and its parameters."""

    name: str
    factory: Callable[..., Any]
    definition: str
    parameters: tuple[str, ...]
    kind: str  # "metric" or "table"


_METRICS: dict[str, MetricInfo] = {}
_TABLES: dict[str, MetricInfo] = {}

F = TypeVar("F", bound=Callable[..., Any])


def _register(store: dict[str, MetricInfo], kind: str, name: str, definition: str | None) -> Any:
    def decorator(factory: F) -> F:
        if name in store:
            raise ValueError(f"{kind} {name!r} is registered twice")
        text = definition or getattr(factory, "definition", "") or (factory.__doc__ or "")
        text = text.strip().splitlines()[0] if text.strip() else ""
        params = tuple(
            p.name
            for p in inspect.signature(factory).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        )
        store[name] = MetricInfo(name, factory, text, params, kind)
        return factory

    return decorator


def register_metric(name: str, definition: str | None = None) -> Callable[[F], F]:
    """Register a metric class or factory under ``name`` (its arguments are kept on instances)."""
    return _register(_METRICS, "metric", name, definition)  # type: ignore[no-any-return]


def register_table(name: str, definition: str | None = None) -> Callable[[F], F]:
    """Register a table metric class or factory under ``name``."""
    return _register(_TABLES, "table", name, definition)  # type: ignore[no-any-return]


def metric_registry() -> dict[str, MetricInfo]:
    """Every registered scalar metric, by name."""
    _load_builtins()
    return dict(sorted(_METRICS.items()))


def table_registry() -> dict[str, MetricInfo]:
    """Every registered table metric, by name."""
    _load_builtins()
    return dict(sorted(_TABLES.items()))


def _create(store: dict[str, MetricInfo], kind: str, name: str, args: dict[str, Any]) -> Any:
    _load_builtins()
    info = store.get(name)
    if info is None:
        raise SuiteError(
            f"unknown {kind} {name!r}; registered {kind}s: {', '.join(sorted(store))}", key=name
        )
    signature = inspect.signature(info.factory)
    try:
        bound = signature.bind(**args)
    except TypeError as exc:
        unknown = sorted(set(args) - set(info.parameters))
        detail = f"unknown argument(s) {unknown}" if unknown else str(exc)
        raise SuiteError(
            f"{detail}; {kind} {name!r} takes {list(info.parameters)}", key=name
        ) from None
    bound.apply_defaults()
    try:
        instance = info.factory(**bound.arguments)
    except (ValueError, TypeError) as exc:
        raise SuiteError(f"{kind} {name!r}: {exc}", key=name) from None
    instance.registry_name = name
    instance.definition = info.definition
    instance.args = dict(bound.arguments)
    return instance


def create_metric(name: str, **args: Any) -> Metric:
    """Instantiate a registered metric, validating its arguments."""
    metric: Metric = _create(_METRICS, "metric", name, args)
    return metric


def create_table(name: str, **args: Any) -> TableMetric:
    """Instantiate a registered table metric, validating its arguments."""
    table: TableMetric = _create(_TABLES, "table", name, args)
    return table


def _load_builtins() -> None:
    from . import (  # noqa: F401  (registration side effect)
        calls,
        classification,
        dialogue,
        overlap,
        sets,
        timing,
    )
