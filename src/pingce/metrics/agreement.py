"""Inter-rater agreement: Krippendorff's alpha (nominal, ordinal, interval, ratio) and Fleiss'
kappa, from statistics that add up per record, so intervals, slices and paired comparisons are
the engine's as for every metric.

A record is a *unit*; its ratings field holds one entry per rater, null where that rater gave
none (``{"id": "a", "ratings": [3, 4, null, 3]}``). Labels may be text; two ratings are the
same value when they are equal as JSON (``1`` and ``1.0`` are, ``true`` and ``1`` are not).
The scale's values (``K`` of them, in order) are the suite's ``values:`` when given, else the
values the records use, sorted.

Krippendorff's alpha is ``1 - D_o / D_e``: the disagreement observed within units over the one
expected by chance from all pairable values (those of units rated at least twice). Each unit of
``m_u`` pairable values adds each ordered pair of its values with weight ``1 / (m_u - 1)`` to the
coincidence matrix ``o``; its marginals ``n_c`` count the pairable values of each value ``c``,
``n`` their total, and ``alpha = 1 - (n - 1) Σ o_ck δ_ck / Σ n_c n_k δ_ck`` with the level's
distance ``δ`` (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"). Per record:

* ``nominal`` (δ = [c ≠ k]) and ``ratio`` (δ = ((c - k)/(c + k))², ratings >= 0): ``[1 if
  pairable, the unit's Σ o_ck δ_ck, its counts n_uc of each value]``; ``ratio`` adds ``v_c n_uc``
  per value, so that the values themselves are recovered from the sums (``Σ v_c n_uc / n_c``):
  the rows describe themselves, whatever records they come from;
* ``ordinal``: ``[1 if pairable, the unit's K x K coincidences]`` (the distance of two ranks is
  ``(Σ_{g between them} n_g - (n_c + n_k)/2)²``, which depends on the marginals of the summed
  matrix, so the cells are kept);
* ``interval`` (δ = (c - k)², any number of distinct values): the moments ``[1 if pairable, m_u,
  Σ v, Σ v², 2 m_u Σ (v - v̄_u)² / (m_u - 1)]``, which give the same alpha: ``Σ n_c n_k (c - k)²
  = 2 (n Σ v² - (Σ v)²)``.

A unit with fewer than two ratings adds nothing. Alpha is undefined (null, with the reason;
never 0) when no unit is rated twice or when everyone used one value (``D_e = 0``).

Fleiss' kappa (labels; every record rated by the same number ``r`` of raters, else an input
error): per record ``[1, P_i, n_i1 ... n_iK]`` with ``P_i = (Σ_j n_ij² - r) / (r (r - 1))``;
``kappa = (P̄ - P_e) / (1 - P_e)``, ``P_e = Σ_j p_j²``, ``p_j`` the share of all ratings in ``j``
(statsmodels' ``fleiss_kappa(method="fleiss")``).

Both are properties of a set of units, not of one: no value per record (``per_record`` False).
The rows' layout depends on ``K``, so two sets of records (the sides of ``pingce compare``, the
pieces of ``--engine ray``) add up and pair only over the same values: give ``values:`` where
their records may use different ones.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from ..errors import InputError
from ..records import FieldSpec, Table, json_equal_key
from ._policy import safe_divide
from .protocol import Context, Metric, StatBlock, Statistic
from .registry import register_metric

__all__ = [
    "AgreementStatistic",
    "Coded",
    "FleissKappa",
    "KrippendorffAlpha",
    "agreement_rows",
    "check_ordinal_size",
    "fleiss_rows",
    "parse_ratings",
]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
Mode = Literal["labels", "ordinal", "interval", "ratio"]
"""How a statistic reads the ratings: labels (nominal alpha, Fleiss' kappa), ordered values,
numbers, numbers >= 0."""

ValueList = Sequence[str | float]

_ORDINAL_CELLS = 1 << 28
"""The most numbers (records x K x K, 2 GB) ordinal alpha's rows may hold: more is an error
that says so, not a machine out of memory."""
_RATINGS_TEXT = "a list of ratings (a number or a label each, null where a rater gave none)"
_INTERVAL_FLAT = 1e-9
"""Interval ratings whose spread ``n Σv² - (Σv)²`` is below this share of ``n Σv²`` are read as
one value: the moment form cannot tell them apart from rounding. It loses about
``log10(n Σv² / spread)`` of 16 digits (ratings around 10^4 with a spread of 1 keep about 8), as
sums that add up must: the cancellation is in the sums, not in any one record's row."""


def _rating(value: Any) -> Any:
    """One entry of a ratings list: None (no rating; NaN too), a boolean, a finite number or
    text; else ValueError."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, numbers.Real):
        number = float(value) if not isinstance(value, numbers.Integral) else int(value)
        if isinstance(number, float) and math.isnan(number):
            return None
        if isinstance(number, float) and math.isinf(number):
            raise ValueError("a rating is not infinite")
        return number
    raise ValueError("a rating is a number or a label (text), or null where a rater gave none")


def parse_ratings(value: Any) -> tuple[Any, ...]:
    """A record's ratings: a list (one entry per rater) of numbers, labels (text, booleans) and
    nulls; NaN reads as null (a frame's missing value). Else ValueError."""
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()  # an array cell of a frame or a Parquet list
    if not isinstance(value, list | tuple):
        raise ValueError(f"expected {_RATINGS_TEXT}")
    return tuple(_rating(v) for v in value)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _sort_key(key: Hashable) -> tuple[int, Any]:
    """Order of a value found in the data (no ``values:``): booleans, numbers, then text."""
    if isinstance(key, str):
        return (2, key)
    assert isinstance(key, tuple)
    return (0 if key[0] == "bool" else 1, key[1])


@dataclass(frozen=True)
class Ratings:
    """The ratings of a table read for one mode: each rating's record and value (its JSON
    key), each rating as a number (numeric modes), and each value as first written."""

    record: np.ndarray
    keys: list[Hashable]
    numbers: np.ndarray | None
    shown: dict[Hashable, Any]


@dataclass(frozen=True)
class Coded:
    """Ratings laid over a scale: each rating's record and code (its value's place on the
    scale), the scale's values, and each rating as a number (numeric modes)."""

    record: np.ndarray
    code: np.ndarray
    domain: tuple[Any, ...]
    numbers: np.ndarray | None


class _Reader:
    """Reads a table's ratings for one mode and scale (``values``, or None: the data's)."""

    def __init__(self, table: Table, path: str, mode: Mode, values: tuple[Any, ...] | None):
        self.table, self.path, self.mode, self.values = table, path, mode, values
        self.field = table.paths.get(path, path)
        self.allowed = None if values is None else {json_equal_key(v) for v in values}

    def error(self, i: int, message: str, value: Any) -> InputError:
        return InputError(
            message,
            source=self.table.source,
            line=int(self.table.lines[i]),
            field=self.field,
            value=value,
        )

    def check(self, i: int, rating: Any) -> Hashable:
        """The rating's key, or the input error of a rating this mode cannot read."""
        numeric = self.mode in ("interval", "ratio")
        if numeric and not _number(rating):
            raise self.error(i, f"a {self.mode} rating is a number", rating)
        if self.mode == "ratio" and rating < 0:
            raise self.error(i, "a ratio rating is >= 0 (the scale starts at 0)", rating)
        key = json_equal_key(rating)
        if self.allowed is not None:
            if key not in self.allowed:
                shown = ", ".join(map(str, self.values or ()))
                raise self.error(i, f"a rating is one of the suite's values ({shown})", rating)
        elif self.mode == "ordinal" and not _number(rating):
            raise self.error(
                i,
                "ordinal ratings that are not numbers need the suite's `values:` in order",
                rating,
            )
        return key

    def read(self) -> Ratings:
        records: list[int] = []
        keys: list[Hashable] = []
        shown: dict[Hashable, Any] = {}
        for i, ratings in enumerate(self.table.column(self.path)):
            for rating in ratings:
                if rating is None:
                    continue
                key = self.check(i, rating)
                shown.setdefault(key, rating)
                records.append(i)
                keys.append(key)
        numbers = None
        if self.mode in ("interval", "ratio"):
            numbers = np.asarray([float(shown[key]) for key in keys], dtype=np.float64)
        return Ratings(np.asarray(records, dtype=np.intp), keys, numbers, shown)


def read_ratings(table: Table, path: str, mode: Mode, values: tuple[Any, ...] | None) -> Ratings:
    """The table's ratings in ``path`` read for ``mode``, made once per table (the check and
    the statistic both need them); the first rating a mode cannot read is an input error naming
    the file, line, field and value."""
    scale = None if values is None else tuple(map(json_equal_key, values))
    key = ("agreement ratings", path, mode, scale)
    return table.derived(key, lambda: _Reader(table, path, mode, values).read())  # type: ignore[no-any-return]


def lay_out(ratings: Ratings, domain: dict[Hashable, Any]) -> Coded:
    """``ratings`` coded over ``domain`` (every value's key and how it is shown, in scale
    order), which holds every value they use."""
    place = {key: k for k, key in enumerate(domain)}
    codes = np.fromiter((place[key] for key in ratings.keys), np.intp, len(ratings.keys))
    return Coded(ratings.record, codes, tuple(domain.values()), ratings.numbers)


def _counts(c: Coded, n: int, k: int) -> np.ndarray:
    """Each record's count of each value, ``(n, k)``."""
    flat = np.bincount(c.record * k + c.code, minlength=n * k)
    return np.asarray(flat.reshape(n, k), dtype=np.float64)


def _ratio_distance(v: np.ndarray) -> np.ndarray:
    """``((c - k)/(c + k))²`` over the last axis's values, 0 where ``c + k = 0``."""
    a, b = v[..., :, None], v[..., None, :]
    total = a + b
    return np.asarray(safe_divide(a - b, total, 0.0) ** 2, dtype=np.float64)


def agreement_rows(c: Coded, n: int, level: Level) -> np.ndarray:
    """The per-record rows of alpha (module docstring): each record a unit, ``c`` its ratings
    record by record."""
    if level == "interval":
        assert c.numbers is not None
        m = np.bincount(c.record, minlength=n).astype(np.float64)
        total = np.bincount(c.record, weights=c.numbers, minlength=n)
        squares = np.bincount(c.record, weights=c.numbers**2, minlength=n)
        # within a unit, from its ratings less its first one (the disagreement is the same):
        # exact for whole numbers, and no cancellation for large ones
        first = np.zeros(n, dtype=np.intp)
        boundary = np.ones(c.record.size, dtype=bool)
        boundary[1:] = c.record[1:] != c.record[:-1]  # the ratings come record by record
        starts = np.flatnonzero(boundary)
        first[c.record[starts]] = starts
        d = c.numbers - c.numbers[first[c.record]]
        d_total = np.bincount(c.record, weights=d, minlength=n)
        d_squares = np.bincount(c.record, weights=d**2, minlength=n)
        spread = np.maximum(m * d_squares - d_total**2, 0.0)  # >= 0 but for rounding
        within = safe_divide(2 * spread, m - 1, 0.0)
        rows = np.column_stack([np.ones(n), m, total, squares, within])
        rows[m < 2] = 0.0
        return rows
    k = len(c.domain)
    counts = _counts(c, n, k)
    m = counts.sum(axis=1)
    pairable = m >= 2
    counts[~pairable] = 0.0
    m[~pairable] = 0.0
    weight = np.where(pairable, 1.0 / np.maximum(m - 1, 1.0), 0.0)[:, None]
    if level == "ordinal":
        pairs = counts[:, :, None] * counts[:, None, :]
        pairs[:, np.arange(k), np.arange(k)] -= counts
        return np.column_stack(
            [pairable.astype(np.float64), (pairs * weight[:, :, None]).reshape(n, k * k)]
        )
    if level == "nominal":
        within = (m**2 - (counts**2).sum(axis=1)) * weight[:, 0]
        return np.column_stack([pairable.astype(np.float64), within, counts])
    assert c.numbers is not None
    values = np.asarray([float(v) for v in c.domain], dtype=np.float64)
    within = ((counts @ _ratio_distance(values)) * counts).sum(axis=1) * weight[:, 0]
    return np.column_stack([pairable.astype(np.float64), within, counts, counts * values])


_MODE: dict[str, Mode] = {
    "nominal": "labels",
    "ordinal": "ordinal",
    "interval": "interval",
    "ratio": "ratio",
    "fleiss": "labels",
}


class AgreementStatistic(Statistic):
    """The per-record rows of Krippendorff's alpha at one level, or of Fleiss' kappa
    (``level`` ``fleiss``), over the ratings in ``field`` (module docstring).

    The scale is ``values`` when given. Else it is every value of the tables this statistic
    has checked or computed, sorted: the two sides of a comparison are both checked before
    either is computed, so their rows have one layout and pair column by column. A value that
    no rating of a table uses adds nothing to any of its sums, so a larger scale changes no
    number."""

    def __init__(
        self, field: str, level: Level | Literal["fleiss"], values: tuple[Any, ...] | None
    ):
        self.field, self.level, self.values = field, level, values
        self.mode = _MODE[level]
        self._seen: dict[Hashable, Any] = (
            {} if values is None else {json_equal_key(v): v for v in values}
        )

    @property
    def key(self) -> Hashable:
        values = None if self.values is None else tuple(map(json_equal_key, self.values))
        return ("agreement", self.field, self.level, values)

    def fields(self) -> list[FieldSpec]:
        return [FieldSpec(self.field, "json", parser=parse_ratings, what=_RATINGS_TEXT)]

    def _ratings(self, table: Table) -> Ratings:
        ratings = read_ratings(table, self.field, self.mode, self.values)
        if self.values is None:
            for key, shown in ratings.shown.items():
                self._seen.setdefault(key, shown)
        return ratings

    def _domain(self) -> dict[Hashable, Any]:
        """The scale: every value's key and how it is shown, in order."""
        if self.values is not None:
            return self._seen
        return {key: self._seen[key] for key in sorted(self._seen, key=_sort_key)}

    def check(self, table: Table) -> None:
        ratings = self._ratings(table)
        if self.level == "fleiss":
            _raters(table, self.field, ratings)

    def column_names(self, width: int) -> list[str]:
        if self.level == "interval":
            return ["pairable unit", "pairable ratings", "sum", "sum of squares", "within"]
        names = [str(v) for v in self._domain().values()]
        if self.level == "ordinal":
            return ["pairable unit"] + [f"o[{a},{b}]" for a in names for b in names]
        if self.level == "fleiss":
            return ["record", "P_i"] + [f"n[{a}]" for a in names]
        head = ["pairable unit", "within"] + [f"n[{a}]" for a in names]
        return head + ([f"v*n[{a}]" for a in names] if self.level == "ratio" else [])

    def compute(self, table: Table, context: Context) -> StatBlock:
        ratings = self._ratings(table)
        c = lay_out(ratings, self._domain())
        if self.level == "ordinal":
            check_ordinal_size(table, len(c.domain), self.field)
        if self.level == "fleiss":
            rows = fleiss_rows(c, table.n, _raters(table, self.field, ratings))
        else:
            rows = agreement_rows(c, table.n, self.level)
        return StatBlock(width=rows.shape[1], rows=rows)


def check_ordinal_size(table: Table, k: int, path: str) -> None:
    """The input error of ordinal alpha over ``k`` values whose rows (a ``k x k`` matrix per
    record) would not fit in memory; checked before any rating is read into rows."""
    if table.n * k * k > _ORDINAL_CELLS:
        raise InputError(
            f"ordinal alpha keeps a {k} x {k} matrix per record (the ratings use {k} "
            f"values): {table.n} records would need {table.n * k * k * 8 / 1e9:.1f} GB; "
            "give fewer values, or use level interval",
            source=table.source,
            field=table.paths.get(path, path),
        )


def fleiss_rows(c: Coded, n: int, raters: int) -> np.ndarray:
    """Fleiss' kappa's per-record rows ``[1, P_i, n_i1 ... n_iK]`` (module docstring) of ``n``
    records each rated by ``raters`` raters, ``c`` their ratings coded over the scale."""
    counts = _counts(c, n, len(c.domain))
    agree = safe_divide((counts**2).sum(axis=1) - raters, raters * (raters - 1), 0.0)
    return np.column_stack([np.ones(n), agree, counts])


def _raters(table: Table, path: str, c: Ratings) -> int:
    """The number of raters of every record (Fleiss' kappa needs one number, at least 2);
    else an input error naming the first record that differs."""
    per_record = np.bincount(c.record, minlength=table.n)
    if table.n == 0:
        return 2
    raters = int(per_record[0])
    differs = np.flatnonzero(per_record != raters)
    field = table.paths.get(path, path)
    if differs.size or raters < 2:
        i = int(differs[0]) if differs.size else 0
        need = (
            f"Fleiss' kappa needs the same number of ratings on every record: this one has "
            f"{int(per_record[i])}, line {int(table.lines[0])} has {raters}"
            if differs.size
            else f"Fleiss' kappa needs at least two ratings per record, this one has {raters}"
        )
        raise InputError(
            need,
            source=table.source,
            line=int(table.lines[i]),
            field=field,
            value=list(table.column(path)[i]),
        )
    return raters


def _check_values(values: Any, level: str) -> tuple[Any, ...] | None:
    """The suite's ``values:`` as a tuple (None when not given); ValueError when they are not
    at least two distinct ratings (numbers for interval and ratio, >= 0 for ratio)."""
    if values is None:
        return None
    if not isinstance(values, list | tuple) or len(values) < 2:
        raise ValueError(f"values must be a list of at least two ratings, got {values!r}")
    for v in values:
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            raise ValueError(f"values must be ratings (numbers or labels), got {v!r}")
        _rating(v)
        if level in ("interval", "ratio") and not _number(v):
            raise ValueError(f"{level} values must be numbers, got {v!r}")
        if level == "ratio" and v < 0:
            raise ValueError(f"ratio values must be >= 0, got {v!r}")
    keys = [json_equal_key(v) for v in values]
    if len(set(keys)) != len(keys):
        raise ValueError(f"values must be distinct, got {values!r}")
    return tuple(values)


class _Agreement(Metric):
    """What both agreement metrics share."""

    per_record: ClassVar[bool] = False

    def count(self, summed: np.ndarray) -> np.ndarray:
        units: np.ndarray = np.asarray(summed, dtype=np.float64)[..., 0]
        return units


@dataclass(eq=False)
class KrippendorffAlpha(_Agreement):
    """Krippendorff's alpha 1 - D_o/D_e over the units (records) of the ratings field, at the
    level of measurement given (nominal, ordinal, interval, ratio); null when undefined."""

    level: Level
    ratings: str = "ratings"
    values: ValueList | None = None
    """The scale's values, in order (needed for ordinal labels given as text); ratings outside
    them are input errors. None: the values the records use, sorted."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._values = _check_values(self.values, self.level)
        if self._values is not None:
            self.values = list(self._values)

    def statistic(self) -> Statistic:
        return AgreementStatistic(self.ratings, self.level, self._values)

    def _observed_expected(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(n - 1) Σ o δ``-style observed disagreement, the expected one, and ``n``."""
        if self.level == "interval":
            n, total, squares, within = s[..., 1], s[..., 2], s[..., 3], s[..., 4]
            expected = 2 * (n * squares - total**2)
            flat = expected <= _INTERVAL_FLAT * 2 * n * squares
            return (n - 1) * within, np.where(flat, 0.0, expected), n
        if self.level == "ordinal":
            k = math.isqrt(s.shape[-1] - 1)
            o = s[..., 1:].reshape(*s.shape[:-1], k, k)
            marginals = o.sum(axis=-1)
            distance = _ordinal_distance(marginals)
            n = marginals.sum(axis=-1)
            observed = (o * distance).sum(axis=(-2, -1))
            expected = (marginals[..., :, None] * distance * marginals[..., None, :]).sum(
                axis=(-2, -1)
            )
            return (n - 1) * observed, expected, n
        within = s[..., 1]
        if self.level == "nominal":
            marginals = s[..., 2:]
            n = marginals.sum(axis=-1)
            return (n - 1) * within, n**2 - (marginals**2).sum(axis=-1), n
        k = (s.shape[-1] - 2) // 2
        marginals, weighted = s[..., 2 : 2 + k], s[..., 2 + k :]
        n = marginals.sum(axis=-1)
        return (n - 1) * within, _ratio_expected(marginals, weighted), n

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        observed, expected, _ = self._observed_expected(s)
        # alpha is 1 - D_o/D_e; 0/0 is undefined whatever the policy (not a ratio of counts)
        return np.asarray(1.0 - safe_divide(observed, expected, None), dtype=np.float64)

    def undefined_reason(self, summed: np.ndarray) -> str:
        s = np.asarray(summed, dtype=np.float64)
        if float(s[..., 0]) == 0:
            return "no record has two or more ratings: alpha needs a unit rated at least twice"
        rounding = " (to rounding)" if self.level == "interval" else ""
        return (
            f"every pairable rating is the same value{rounding}: the disagreement expected by "
            "chance is 0, so alpha is 0/0 (undefined, not 0)"
        )


def _ordinal_distance(marginals: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal distance of ranks c and k: ``(Σ_{g=c..k} n_g - (n_c + n_k)/2)²``,
    over the last axis's marginals, shape ``(..., K, K)``."""
    k = marginals.shape[-1]
    cumulative = np.concatenate(
        [np.zeros((*marginals.shape[:-1], 1)), np.cumsum(marginals, axis=-1)], axis=-1
    )
    idx = np.arange(k)
    low, high = np.minimum(idx[:, None], idx[None, :]), np.maximum(idx[:, None], idx[None, :])
    between = cumulative[..., high + 1] - cumulative[..., low]
    ends = (marginals[..., :, None] + marginals[..., None, :]) / 2
    return np.asarray((between - ends) ** 2, dtype=np.float64)


def _ratio_expected(marginals: np.ndarray, weighted: np.ndarray) -> np.ndarray:
    """``Σ n_c n_k δ(v_c, v_k)`` of each row, each value ``v_c`` recovered from the sums as
    ``Σ v_c n_uc / Σ n_uc``, pooled over the rows finalised together (every row with ratings of
    ``c`` gives the same ``v_c`` but for rounding; a value no rating has counts nothing): one
    ``K x K`` distance matrix and one matrix product for all rows, however many values."""
    k = marginals.shape[-1]
    rows = math.prod(marginals.shape[:-1])
    n = marginals.reshape(rows, k)
    values = safe_divide(weighted.reshape(rows, k).sum(axis=0), n.sum(axis=0), 0.0)
    out = ((n @ _ratio_distance(values)) * n).sum(axis=-1)
    return np.asarray(out.reshape(marginals.shape[:-1]), dtype=np.float64)


@dataclass(eq=False)
class FleissKappa(_Agreement):
    """Fleiss' kappa (P̄ - P_e)/(1 - P_e) over records each rated by the same number of raters
    (labels), as statsmodels' fleiss_kappa(method="fleiss"); null when undefined."""

    ratings: str = "ratings"
    values: ValueList | None = None
    """The labels, in any order; ratings outside them are input errors. None: the labels the
    records use."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._values = _check_values(self.values, "nominal")
        if self._values is not None:
            self.values = list(self._values)

    def statistic(self) -> Statistic:
        return AgreementStatistic(self.ratings, "fleiss", self._values)

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        records, agree, counts = s[..., 0], s[..., 1], s[..., 2:]
        observed = safe_divide(agree, records, None)
        shares = safe_divide(counts, counts.sum(axis=-1)[..., None], None)
        chance = (shares**2).sum(axis=-1)
        return np.asarray(safe_divide(observed - chance, 1.0 - chance, None), dtype=np.float64)

    def undefined_reason(self, summed: np.ndarray) -> str:
        if float(np.asarray(summed)[..., 0]) == 0:
            return "no records"
        return (
            "every rating is the same label: the agreement expected by chance is 1, so kappa is "
            "0/0 (undefined, not 0)"
        )


register_metric("krippendorff_alpha")(KrippendorffAlpha)
register_metric("fleiss_kappa")(FleissKappa)
