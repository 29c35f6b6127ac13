"""The metric protocol: statistics first, scores second (as sacrebleu does for BLEU).

* A :class:`Statistic` turns the loaded records into a :class:`StatBlock`: per record, a small
  vector of numbers that add up (confusion-matrix cells, sums and counts), and, made in the same
  pass, the reason a record missed. It is computed once per run, however many metrics read it.
  Input checks that need no model are in :meth:`Statistic.check` (the engine runs them before
  any model call); the text pairs whose similarity it needs are listed by
  :meth:`Statistic.pairs` and arrive, scored, in the :class:`Context` of
  :meth:`Statistic.compute`.
* A :class:`Metric` is a pure finaliser: :meth:`Metric.finalize` turns a *summed* statistic
  vector into its value, vectorised over any leading axes, so one call finalises the corpus,
  every bootstrap resample or every record at once. Ratios go through the one safe division of
  :mod:`pingce.metrics._policy`.

Corpus value, per-record values, slices, bootstrap intervals and jackknife values all come from
these two steps. A metric that does not decompose into sums (a latency percentile) sets
``decomposable = False`` and reads the rows themselves through :meth:`Metric.finalize_rows`.

Metric classes are dataclasses: their fields are the arguments a suite may set, which the
registry (:mod:`pingce.metrics.registry`) reads and keeps on every instance.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeVar

import numpy as np

from ..records import FieldSpec, Table
from ._args import check_fields

if TYPE_CHECKING:
    from ..similarity.base import Pair, SimilarityTable

__all__ = [
    "LEFT_OUT",
    "MODEL_FAILED",
    "Context",
    "Metric",
    "Reduction",
    "StatBlock",
    "Statistic",
    "TableMetric",
    "Tally",
    "describe",
    "reason_column",
]


@dataclass
class StatBlock:
    """Per-record statistics of one :class:`Statistic`, in one of three layouts.

    * one-hot: record ``i`` adds 1 to cell ``codes[i]`` of a ``width``-vector (a confusion matrix
      flattened); sums are ``np.bincount``, the cheapest layout to resample;
    * dense: ``rows[i]`` is a vector of ``width`` numbers that add up;
    * raw: ``rows[i]`` are values that do not add up (``decomposable`` is False), e.g. latencies
      with NaN where a record has none.

    ``reasons`` holds named columns of per-record explanations (an object array: a string where
    the statistic knows why a record missed, None elsewhere); a metric names the column that
    explains its misses (:attr:`Metric.reason`). The column ``left_out`` (:data:`LEFT_OUT`) says
    why a record was left out of every metric of the block (a failed similarity call).
    """

    width: int
    codes: np.ndarray | None = None
    rows: np.ndarray | None = None
    decomposable: bool = True
    counts: dict[str, int] = field(default_factory=dict)
    """Events to report in ``failures`` (e.g. texts the reference's library scores 0)."""
    reasons: dict[str, np.ndarray] = field(default_factory=dict)
    scope: np.ndarray | None = None
    """Which records the statistic covers (a boolean mask; None: all of them). Records outside
    it (a selection record for a judge statistic) have zero rows and count nowhere."""
    unparsed: np.ndarray | None = None
    """Records whose prediction did not parse (a boolean mask, set by the engine from the
    statistic's lenient fields; None: none did)."""
    notes: list[str] = field(default_factory=list)
    """Things the run's notes should say about these records (a tokeniser that drops part of
    their text); they are not failures and change no number."""
    tally: Tally | None = None
    """A reduced block's record counts (:meth:`reduced`); None in a block of records, which
    counts them from its per-record states."""

    @property
    def reduction(self) -> Reduction:
        """How this statistic's rows combine over blocks of other records, as torchmetrics'
        ``add_state(dist_reduce_fx=...)`` declares it: one-hot and dense rows add up
        (``"sum"``), raw rows concatenate (``"cat"``). Counts always add up; reason columns and
        record masks concatenate in blocks of records and are counted in reduced ones."""
        return "sum" if self.decomposable else "cat"

    @property
    def onehot(self) -> bool:
        """Whether the statistic is one-hot (its records' rows are cells of a ``width``-vector),
        in a block of records or a reduced one."""
        return self.codes is not None if self.tally is None else self.tally.onehot

    @property
    def n(self) -> int:
        """Number of records."""
        if self.tally is not None:
            return self.tally.n
        if self.codes is not None:
            return int(self.codes.shape[0])
        assert self.rows is not None
        return int(self.rows.shape[0])

    def total(self) -> np.ndarray:
        """The statistics summed over all records (decomposable blocks only)."""
        if self.codes is not None:
            return np.bincount(self.codes, minlength=self.width).astype(np.float64)
        assert self.rows is not None and self.decomposable
        with np.errstate(over="ignore"):  # an infinite sum: the value's finaliser says so
            return np.asarray(self.rows.sum(axis=0), dtype=np.float64)

    def weighted_total(self, weights: np.ndarray) -> np.ndarray:
        """Sum of the statistics with record ``i`` counted ``weights[i]`` times (a bootstrap
        resample: ``weights`` are its per-record counts).

        One-hot: a weighted ``np.bincount`` of the codes (exact: counts are whole numbers).
        Dense: ``weights @ rows``, a BLAS product, which the bootstrap runs on one BLAS thread
        (:mod:`pingce.threads`)."""
        if self.codes is not None:
            return np.asarray(
                np.bincount(self.codes, weights=weights, minlength=self.width), dtype=np.float64
            )
        assert self.rows is not None
        return np.asarray(weights @ self.rows, dtype=np.float64)

    def compact(self) -> StatBlock:
        """This block without what costs memory per record and says nothing: reason columns
        with no reason in them are dropped, and dense rows that are the same for every record
        are kept as one row broadcast (a read-only view), so a statistic over fields that no
        record has (rules on level-only records) costs no memory per record. Sums, resamples
        and finalisations read the view like any array, with the same numbers."""
        self.reasons = {
            name: column
            for name, column in self.reasons.items()
            if (column != None).any()  # noqa: E711  (object array)
        }
        rows = self.rows
        if rows is None or not self.decomposable or rows.ndim != 2 or rows.shape[0] < 2:
            return self
        if rows.strides[0] != 0 and (rows == rows[0]).all():
            self.rows = np.broadcast_to(rows[:1].copy(), rows.shape)
        return self

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
        assert self.decomposable and self.tally is None
        out = np.zeros((n_units, self.width))
        if self.codes is not None:
            np.add.at(out, (units, self.codes), 1.0)
        else:
            assert self.rows is not None
            np.add.at(out, units, self.rows)
        return StatBlock(width=self.width, rows=out, counts=dict(self.counts))

    def take(self, index: np.ndarray) -> StatBlock:
        """The block restricted to the records at ``index`` (a sample or a slice)."""
        assert self.tally is None, "a reduced block has no records to take"
        return StatBlock(
            width=self.width,
            codes=None if self.codes is None else self.codes[index],
            rows=None if self.rows is None else self.rows[index],
            decomposable=self.decomposable,
            reasons={name: column[index] for name, column in self.reasons.items()},
            scope=None if self.scope is None else self.scope[index],
            unparsed=None if self.unparsed is None else self.unparsed[index],
        )

    def left_out_count(self) -> int:
        """Records the statistic left out (failed similarity or model calls)."""
        if self.tally is not None:
            return self.tally.left_out
        column = self.reasons.get(LEFT_OUT)
        return 0 if column is None else int(np.count_nonzero(column != None))  # noqa: E711

    def model_failed_count(self) -> int:
        """Records left out because the model under test gave no answer."""
        if self.tally is not None:
            return self.tally.model_failed
        column = self.reasons.get(MODEL_FAILED)
        return 0 if column is None else int(np.count_nonzero(column != None))  # noqa: E711

    def covered(self) -> int:
        """Records the statistic covers."""
        if self.tally is not None:
            return self.tally.covered
        return self.n if self.scope is None else int(np.count_nonzero(self.scope))

    def unparsed_covered(self) -> int:
        """Covered records whose prediction did not parse."""
        if self.tally is not None:
            return self.tally.unparsed
        if self.unparsed is None:
            return 0
        inside = self.unparsed if self.scope is None else self.unparsed & self.scope
        return int(np.count_nonzero(inside))

    def reduced(self) -> StatBlock:
        """This block reduced over its records, each state by its own reduction
        (:attr:`reduction`): the summed statistics as one row (one-hot and dense), the rows
        themselves (raw); the reasons and record masks counted (:class:`Tally`). What a shard
        of a run hands on; :meth:`merge` adds such blocks up, and values, tables and counts read
        a reduced block as they read the block of its records."""
        if self.tally is not None:
            return self
        tally = Tally(
            n=self.n,
            covered=self.covered(),
            unparsed=self.unparsed_covered(),
            left_out=self.left_out_count(),
            model_failed=self.model_failed_count(),
            onehot=self.codes is not None,
        )
        rows = self.total()[None, :] if self.decomposable else self.rows
        return StatBlock(
            width=self.width,
            rows=np.asarray(rows, dtype=np.float64),
            decomposable=self.decomposable,
            counts=dict(self.counts),
            notes=list(self.notes),
            tally=tally,
        )

    @classmethod
    def merge(cls, blocks: Sequence[StatBlock]) -> StatBlock:
        """One block of the records of ``blocks`` (of one statistic, in this order), each state
        combined by its reduction. Blocks of records give the block of all their records (every
        state concatenated); reduced blocks (:meth:`reduced`; blocks of records among them are
        reduced first) give the reduced block of all their records: sums added, in order, raw
        rows concatenated, counts added."""
        if not blocks:
            raise ValueError("no block to merge")
        first = blocks[0]
        if any(b.decomposable != first.decomposable or b.width != first.width for b in blocks):
            raise ValueError("blocks of different statistics do not merge")
        if all(b.tally is None for b in blocks):
            return _concatenated(blocks)
        return _summed([b.reduced() for b in blocks])


Reduction = Literal["sum", "cat"]
"""How a state combines over blocks of other records (:attr:`StatBlock.reduction`)."""


@dataclass(frozen=True)
class Tally:
    """The record counts of a reduced block (:meth:`StatBlock.reduced`), which add up."""

    n: int
    covered: int
    unparsed: int
    left_out: int
    model_failed: int
    onehot: bool
    """Whether the statistic is one-hot (its jackknife follows from the summed cells)."""

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            n=self.n + other.n,
            covered=self.covered + other.covered,
            unparsed=self.unparsed + other.unparsed,
            left_out=self.left_out + other.left_out,
            model_failed=self.model_failed + other.model_failed,
            onehot=self.onehot and other.onehot,
        )


def _added_counts(blocks: Sequence[StatBlock]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for block in blocks:
        for name, count in block.counts.items():
            counts[name] = counts.get(name, 0) + count
    return counts


def _notes(blocks: Sequence[StatBlock]) -> list[str]:
    return list(dict.fromkeys(note for block in blocks for note in block.notes))


def _summed(blocks: Sequence[StatBlock]) -> StatBlock:
    """Reduced blocks added up (:meth:`StatBlock.merge`)."""
    first = blocks[0]
    assert first.tally is not None and first.rows is not None
    tally, rows = first.tally, first.rows
    with np.errstate(over="ignore"):  # an infinite sum: the value's finaliser says so
        for block in blocks[1:]:
            assert block.tally is not None and block.rows is not None
            tally = tally + block.tally
            rows = rows + block.rows if first.decomposable else rows
    if not first.decomposable:
        rows = np.concatenate([np.asarray(b.rows) for b in blocks])
    return StatBlock(
        width=first.width,
        rows=rows,
        decomposable=first.decomposable,
        counts=_added_counts(blocks),
        notes=_notes(blocks),
        tally=tally,
    )


def _mask(blocks: Sequence[StatBlock], name: str, fill: bool) -> np.ndarray | None:
    """A record mask (``scope``, ``unparsed``) of concatenated blocks; ``fill`` where a block
    has none."""
    masks = [getattr(b, name) for b in blocks]
    if all(m is None for m in masks):
        return None
    return np.concatenate(
        [np.full(b.n, fill) if m is None else m for b, m in zip(blocks, masks, strict=True)]
    )


def _concatenated(blocks: Sequence[StatBlock]) -> StatBlock:
    """Blocks of records joined into the block of all their records (:meth:`StatBlock.merge`)."""
    first = blocks[0]
    codes = rows = None
    if all(b.codes is not None for b in blocks):
        codes = np.concatenate([b.codes for b in blocks if b.codes is not None])
    elif all(b.rows is not None for b in blocks):
        rows = np.concatenate([np.asarray(b.rows) for b in blocks if b.rows is not None])
    else:
        raise ValueError("blocks of one statistic in different layouts do not merge")
    names = dict.fromkeys(name for b in blocks for name in b.reasons)
    reasons = {
        name: np.concatenate(
            [b.reasons.get(name, np.full(b.n, None, dtype=object)) for b in blocks]
        )
        for name in names
    }
    return StatBlock(
        width=first.width,
        codes=codes,
        rows=rows,
        decomposable=first.decomposable,
        counts=_added_counts(blocks),
        reasons=reasons,
        scope=_mask(blocks, "scope", True),
        unparsed=_mask(blocks, "unparsed", False),
        notes=_notes(blocks),
    )


LEFT_OUT = "left_out"
"""The reason column that says why a record was left out of a block's metrics."""

MODEL_FAILED = "model_failed"
"""The reason column that says which of the left-out records had no prediction because the call
to the model under test failed (``--model``); the others had failed similarity calls."""


def reason_column(texts: Iterable[str | None], n: int) -> np.ndarray:
    """An object array of ``n`` reasons (None: nothing to say) from an iterable."""
    out = np.empty(n, dtype=object)
    out[:] = list(texts)
    return out


_T = TypeVar("_T")
_R = TypeVar("_R")


class RecordMap(Protocol):
    """How per-record work runs: ``work`` over ``items`` as a list of parts in order (one part,
    or several that the caller joins), each ``work`` of a contiguous run of the items. Records
    are independent, so the parts are the numbers of one call, however many there are."""

    def __call__(self, work: Callable[[Sequence[_T]], _R], items: Sequence[_T]) -> list[_R]: ...


def one_part(work: Callable[[Sequence[_T]], _R], items: Sequence[_T]) -> list[_R]:
    """The plain :class:`RecordMap`: ``[work(items)]``, in this process."""
    return [work(items)]


@dataclass(frozen=True)
class Context:
    """What a statistic reads besides the records: the similarity scores of the pairs it listed
    in :meth:`Statistic.pairs` (None when no statistic of the run needs any), and how its
    per-record work runs (:attr:`map_records`)."""

    similarity: SimilarityTable | None = None
    map_records: RecordMap = one_part
    """The executor's policy for per-record work: one part in this process by default (Ray's
    shards are already parallel); the local executor gives :func:`pingce._halves.in_halves`
    (the second half of a large run in a forked child when a core is idle)."""
    judged: Mapping[Hashable, Any] | None = None
    """The judges' grades by judged statistic key (:mod:`pingce.engine.judgements`); None when
    no statistic of the run is judged."""

    def scores(self) -> SimilarityTable:
        """The similarity table; a statistic that listed pairs can rely on it."""
        if self.similarity is None:
            raise RuntimeError("this statistic needs similarities but the engine gave none")
        return self.similarity

    def grades(self, key: Hashable) -> Any:
        """The judges' grades of the statistic of ``key`` (a statistic that ``needs_judge`` can
        rely on them: :class:`pingce.engine.judgements.Graded`)."""
        if self.judged is None or key not in self.judged:
            raise RuntimeError("this statistic needs a judge's grades but the engine gave none")
        return self.judged[key]


class Statistic(ABC):
    """Computes a :class:`StatBlock` from the records. Equal ``key`` means shareable."""

    needs_similarity: bool = False
    """Whether :meth:`pairs` may list pairs (then a similarity backend is opened)."""
    needs_judge: bool = False
    """Whether the statistic reads a judge's grades of its records (``judge_task`` and
    ``judge_texts`` then say what is asked: :mod:`pingce.engine.judgements`)."""
    judge_task: str = ""
    """With ``needs_judge``: what the judge is asked (``rubric``, ``correctness``,
    ``pairwise``)."""
    unit_field: str | None = None
    """A field whose records depend on one another (the turns of a dialogue): the statistic
    reads them together, so the suite must resample whole units of it (``unit:``)."""

    @property
    @abstractmethod
    def key(self) -> Hashable:
        """Identity of the statistic: metrics with equal keys share one computation."""

    @abstractmethod
    def fields(self) -> list[FieldSpec]:
        """The record fields this statistic reads."""

    def check(self, table: Table) -> None:  # noqa: B027  (optional hook)
        """Raise :class:`~pingce.errors.InputError` for records this statistic cannot read.

        Runs before any model call; checks that need no model belong here, not in
        :meth:`compute`."""

    def pairs(self, table: Table) -> Iterable[Pair]:
        """The (a, b) text pairs whose similarity :meth:`compute` will read."""
        return ()

    def indexed_pairs(self, table: Table) -> Iterable[tuple[int, Pair]]:
        """The pairs of :meth:`pairs`, each with the index of the record it is read for (what
        the audit shows a person record by record). By default one record at a time (a table
        of one record each: slow on many records); a statistic with pairs gives them itself."""
        for i in range(table.n):
            for pair in self.pairs(table.take(np.array([i], dtype=np.intp))):
                yield i, pair

    def judge_texts(self, table: Table) -> list[dict[str, str]]:
        """With ``needs_judge``: the texts of each prompt the judge is asked, record by record
        (a statistic asking several prompts a record gives them consecutively)."""
        return []

    def judge_reference(self) -> bool:
        """With ``needs_judge``: whether the prompts hold a reference answer."""
        return False

    @abstractmethod
    def compute(self, table: Table, context: Context) -> StatBlock:
        """Per-record statistics (and miss reasons) of every record in ``table``."""

    def column_names(self, width: int) -> Sequence[str] | None:
        """The names of a block's ``width`` columns (the cells of a one-hot block), for a
        reader of the per-record rows (report.html's detail view); None where the statistic
        does not name them."""
        return None


class Metric(ABC):
    """A scalar metric: ``finalize(summed statistics) -> value``.

    Subclasses are dataclasses whose fields are their arguments; they set ``definition`` (one
    line, shown by ``pingce metrics``), implement :meth:`statistic`, :meth:`finalize` and
    :meth:`count`, and explain undefined values in :meth:`undefined_reason`. ``name``,
    ``registry_name`` and ``args`` are filled in by the registry.
    """

    def __post_init__(self) -> None:
        """Check the arguments that their type hints declare (:func:`check_fields`), once,
        whether the metric is built in Python or by the registry. A subclass's own
        ``__post_init__`` calls this first, then derives its state."""
        check_fields(self)

    definition: str = ""
    unit: ClassVar[str] = "records"
    decomposable: ClassVar[bool] = True
    per_record: ClassVar[bool] = True
    """Whether a value per record is meaningful (shown in records.jsonl)."""
    higher_is_better: ClassVar[bool] = True
    maximum: ClassVar[float] = 1.0
    """The best value a metric on a 0-1 scale can have (100 for sacrebleu's 0-100 scores)."""
    measures_the_judge: ClassVar[bool] = False
    """Whether the metric describes the judge itself (its position bias, its verbosity, a
    jury's agreement) rather than the system graded: a human audit has nothing to correct in
    it (:mod:`pingce.audits`)."""
    reason: str | None = None
    """The statistic's reason column that says why a record missed this metric (a record misses
    when its value is defined and not the best, 1 or 0)."""

    name: str = ""
    registry_name: str = ""
    args: dict[str, Any]

    @abstractmethod
    def statistic(self) -> Statistic:
        """The statistic this metric is computed from."""

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        """Values from summed statistics of shape ``(..., width)``; NaN where undefined."""
        raise NotImplementedError

    def count(self, summed: np.ndarray) -> np.ndarray:
        """How many units (records, predicted positives, ...) each value was computed over."""
        raise NotImplementedError

    def undefined_reason(self, summed: np.ndarray) -> str:
        """Why the value of this summed vector is undefined (only called when it is)."""
        return "undefined for this data"

    def reported_value(self, block: StatBlock, value: float) -> tuple[float, str | None]:
        """The value to report for ``block`` (a run's, a slice's or a comparison side's
        records) whose finalised value is ``value``, and a note saying how they differ.

        By default the finalised value itself. A metric that follows a reference which reports
        another estimate of the same quantity (rouge-score's median of bootstrap means instead
        of the mean) returns that estimate here; intervals, per-record values and paired tests
        stay those of the finalised value."""
        return value, None

    def filled_by_policy(self, summed: np.ndarray) -> bool:
        """Whether the value of this summed vector (a 1-d vector) is, in whole or in part, a
        zero-division fill rather than a measurement: by default, when it counts no unit. A
        metric made of several ratios (an F1 of two rates) says so when any of them is 0/0;
        :meth:`undefined_reason` then names which."""
        return bool(self.count(summed[None, :])[0] == 0)

    @property
    def best(self) -> float:
        """A record's value when it did not miss: the maximum, or 0 where lower is better."""
        return self.maximum if self.higher_is_better else 0.0

    # Non-decomposable metrics implement these instead of finalize/count.
    def finalize_rows(self, rows: np.ndarray, weights: np.ndarray | None = None) -> float:
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
            values[i] = self.finalize_rows(rows, weights)
            weights[i] = 1.0
        return values, np.ones(n)

    def describe(self) -> str:
        """``name(arg=value, ...)``: the registered metric and the arguments it was built with."""
        return describe(self.registry_name, self.args)


class TableMetric(ABC):
    """A metric whose result is a table (a confusion matrix, a per-class report)."""

    def __post_init__(self) -> None:
        """Check the arguments that their type hints declare, as :class:`Metric` does."""
        check_fields(self)

    definition: str = ""
    name: str = ""
    registry_name: str = ""
    args: dict[str, Any]

    @abstractmethod
    def statistic(self) -> Statistic:
        """The statistic this table is built from."""

    @abstractmethod
    def build(self, summed: np.ndarray) -> dict[str, Any]:
        """The table, JSON-ready, from the summed statistics."""

    def describe(self) -> str:
        """``name(arg=value, ...)``: the registered table and the arguments it was built with."""
        return describe(self.registry_name, self.args)


def describe(name: str, args: Mapping[str, Any]) -> str:
    """``name(arg=value, ...)`` with lists shown compactly."""

    def show(value: Any) -> str:
        if isinstance(value, list | tuple):
            return "[" + ",".join(str(v) for v in value) + "]"
        return str(value)

    return f"{name}(" + ", ".join(f"{k}={show(v)}" for k, v in args.items()) + ")"
