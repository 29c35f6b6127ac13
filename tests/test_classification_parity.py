"""Parity of the classification metrics with scikit-learn, the oracle, to 1e-12.

Thousands of seeded random cases (1..200 records, scales of 2, 3 and 5 labels, skewed label
distributions, labels never predicted or absent) plus hand-made degenerate cases are scored by
pingce and by scikit-learn; every value must agree, and where scikit-learn says "undefined"
(nan) pingce must say NaN / null with a reason.

Zero-division policies: pingce's ``None`` (null) is scikit-learn's ``zero_division=np.nan``
(whose macro/weighted averages then skip the nan classes); 0.0 and 1.0 are the same in both.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import sklearn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    precision_recall_fscore_support,
)

import pingce
from pingce.labels import RISK_LEVELS, LabelScale
from pingce.metrics import Context, Metric, TableMetric, create_metric, create_table
from pingce.records import load_records

TOL = 1e-12

SCALES: dict[int, LabelScale] = {
    2: LabelScale(("是", "否"), {"yes": "是", "no": "否"}),
    3: RISK_LEVELS,
    5: LabelScale.from_spec([1, 2, 3, 4, 5]),
}
ZERO_DIVISIONS: tuple[float | None, ...] = (None, 0.0, 1.0)
AVERAGES = ("macro", "micro", "weighted")
KINDS = ("precision", "recall", "f1")
KAPPAS: dict[str, str | None] = {"cohen_kappa": None, "linear_kappa": "linear", "qwk": "quadratic"}

# Spellings of the risk levels a data file may use: the Chinese labels and the aliases, in any case.
RISK_SPELLINGS = {
    0: ["高", "high", "High", "HIGH", " high", "高 "],
    1: ["中", "medium", "Medium", "MEDIUM", "mEdIuM "],
    2: ["低", "low", "Low", "LOW", " low "],
}


def sk_zero_division(zero_division: float | None) -> float:
    return np.nan if zero_division is None else zero_division


def oracle(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call scikit-learn with its UndefinedMetricWarning / RuntimeWarning silenced.

    Parameter validation is skipped for speed only (the arguments are well-formed); the
    computation is scikit-learn's own.
    """
    with warnings.catch_warnings(), sklearn.config_context(skip_parameter_validation=True):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# --------------------------------------------------------------------------------------------
# pingce side
# --------------------------------------------------------------------------------------------


@functools.cache
def metric(name: str, k: int, **args: Any) -> Metric:
    """A registered metric on the k-label scale (cached: instances are stateless)."""
    if "positive" in args:
        args["positive"] = list(args["positive"])
    return create_metric(name, gold="gold", pred="pred", scale=SCALES[k], **args)


@functools.cache
def table_metric(name: str, k: int, **args: Any) -> TableMetric:
    return create_table(name, gold="gold", pred="pred", scale=SCALES[k], **args)


# Predictions off the scale, as a model may give them: code k (scored as wrong, never an error).
OFF_SCALE: tuple[Any, ...] = ("medium-high", None, "", "  ", "极高", 7, True, {"level": "高"})


def raw_label(k: int, code: int, variant: int) -> Any:
    """A raw label as a record would carry it (label text, alias, or integer for 1..5); code
    ``k``: a prediction off the scale."""
    if code == k:
        return OFF_SCALE[variant % len(OFF_SCALE)]
    if k == 3:
        spellings = RISK_SPELLINGS[code]
        return spellings[variant % len(spellings)]
    if k == 5 and variant % 2:
        return code + 1  # an integer label
    return SCALES[k].labels[code]


def confusion_total(k: int, gold: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Summed confusion statistic of the records, loaded through ``load_records``."""
    records = [
        {"gold": raw_label(k, int(g), i), "pred": raw_label(k, int(p), i + 1)}
        for i, (g, p) in enumerate(zip(gold, pred, strict=True))
    ]
    statistic = metric("accuracy", k).statistic()
    table = load_records(records, statistic.fields())
    np.testing.assert_array_equal(table.column("gold"), gold)
    np.testing.assert_array_equal(table.column("pred"), pred)
    total: np.ndarray = statistic.compute(table, Context()).total()
    return total


def ours(m: Metric, total: np.ndarray) -> float:
    return float(m.finalize(total[None, :])[0])


def assert_match(got: float, expected: float, what: str, m: Metric | None, total: Any) -> None:
    expected = float(expected)
    if math.isnan(expected):
        assert math.isnan(got), f"{what}: scikit-learn says undefined (nan), pingce gives {got}"
        if m is not None:
            reason = m.undefined_reason(total)
            assert isinstance(reason, str) and reason.strip(), f"{what}: empty undefined_reason"
    else:
        assert not math.isnan(got), f"{what}: pingce says undefined, scikit-learn gives {expected}"
        assert abs(got - expected) <= TOL, f"{what}: pingce {got!r} != scikit-learn {expected!r}"


# --------------------------------------------------------------------------------------------
# the checks, one family at a time
# --------------------------------------------------------------------------------------------


def check_accuracy(k: int, gold: np.ndarray, pred: np.ndarray, total: np.ndarray) -> None:
    expected = oracle(accuracy_score, gold, pred)
    for zd in ZERO_DIVISIONS:
        m = metric("accuracy", k, zero_division=zd)
        assert_match(ours(m, total), expected, "accuracy", m, total)


def check_weighted_accuracy(k: int, gold: np.ndarray, pred: np.ndarray, total: np.ndarray) -> None:
    # Hand formula: credit 1 - |i - j| / (k - 1) per record (0 off the scale), averaged.
    credit = 1.0 - np.abs(gold.astype(float) - pred) / (k - 1)
    expected = float(np.mean(np.where(pred < k, credit, 0.0)))
    for zd in ZERO_DIVISIONS:
        m = metric("weighted_accuracy", k, zero_division=zd)
        assert_match(ours(m, total), expected, "weighted_accuracy", m, total)


def check_binary(
    k: int,
    gold: np.ndarray,
    pred: np.ndarray,
    total: np.ndarray,
    positive: Sequence[int],
    zero_divisions: Sequence[float | None],
) -> None:
    names = tuple(SCALES[k].labels[c] for c in positive)
    y_true = np.isin(gold, positive).astype(int)
    y_pred = np.isin(pred, positive).astype(int)
    for zd in zero_divisions:
        expected = oracle(
            precision_recall_fscore_support,
            y_true,
            y_pred,
            average="binary",
            pos_label=1,
            zero_division=sk_zero_division(zd),
        )[:3]
        for kind, value in zip(KINDS, expected, strict=True):
            m = metric(kind, k, positive=names, zero_division=zd)
            what = f"binary {kind} positive={names} zero_division={zd}"
            assert_match(ours(m, total), value, what, m, total)


def check_averaged(
    k: int,
    gold: np.ndarray,
    pred: np.ndarray,
    total: np.ndarray,
    averages: Sequence[str],
    zero_divisions: Sequence[float | None],
) -> None:
    for average, zd in itertools.product(averages, zero_divisions):
        expected = oracle(
            precision_recall_fscore_support,
            gold,
            pred,
            labels=list(range(k)),
            average=average,
            zero_division=sk_zero_division(zd),
        )[:3]
        for kind, value in zip(KINDS, expected, strict=True):
            m = metric(f"{average}_{kind}", k, zero_division=zd)
            what = f"{average}_{kind} zero_division={zd}"
            assert_match(ours(m, total), value, what, m, total)
            # The generic metric with `average` is the same metric.
            generic = metric(kind, k, average=average, zero_division=zd)
            assert_match(ours(generic, total), value, f"{kind}(average={average})", None, total)


def check_kappas(
    k: int,
    gold: np.ndarray,
    pred: np.ndarray,
    total: np.ndarray,
    names: Sequence[str] = tuple(KAPPAS),
) -> None:
    valid = pred < k  # a prediction off the scale has no position: left out of kappa
    for name in names:
        weights = KAPPAS[name]
        expected = (
            oracle(
                cohen_kappa_score, gold[valid], pred[valid], labels=list(range(k)), weights=weights
            )
            if valid.any()
            else math.nan
        )
        m = metric(name, k)
        assert_match(ours(m, total), expected, name, m, total)
        assert round(float(m.count(total[None, :])[0])) == int(valid.sum()), name
        generic = metric("cohen_kappa", k, weights=weights or "none")
        assert_match(ours(generic, total), expected, f"cohen_kappa({weights})", generic, total)


def check_confusion_table(k: int, gold: np.ndarray, pred: np.ndarray, total: np.ndarray) -> None:
    """scikit-learn's matrix with a prediction off the scale kept as a class of its own (the
    last column; its row, all zeros, left out), shown only when some prediction is."""
    built = table_metric("confusion_matrix", k).build(total)
    expected = oracle(confusion_matrix, gold, pred, labels=list(range(k + 1)))[:k]
    labels = list(SCALES[k].labels)
    assert built["labels"] == labels
    if (pred == k).any():
        assert built["columns"] == [*labels, "(invalid)"]
    else:
        assert "columns" not in built
        expected = expected[:, :k]
    assert built["matrix"] == expected.tolist()
    assert all(type(x) is int for row in built["matrix"] for x in row)


def check_per_class_table(
    k: int,
    gold: np.ndarray,
    pred: np.ndarray,
    total: np.ndarray,
    zero_divisions: Sequence[float | None],
) -> None:
    for zd in zero_divisions:
        built = table_metric("per_class", k, zero_division=zd).build(total)
        p, r, f, support = oracle(
            precision_recall_fscore_support,
            gold,
            pred,
            labels=list(range(k)),
            average=None,
            zero_division=sk_zero_division(zd),
        )
        assert built["labels"] == list(SCALES[k].labels)
        for column, expected in (("precision", p), ("recall", r), ("f1", f)):
            got = built[column]
            assert len(got) == k
            for label, g, e in zip(SCALES[k].labels, got, expected, strict=True):
                what = f"per_class {column}[{label}] zero_division={zd}"
                if math.isnan(e):
                    assert g is None, f"{what}: scikit-learn nan, pingce {g!r} (expected null)"
                else:
                    assert g is not None, f"{what}: pingce null, scikit-learn {e!r}"
                    assert abs(g - e) <= TOL, f"{what}: pingce {g!r} != scikit-learn {e!r}"
        assert built["support"] == support.tolist()
        assert built["predicted"] == np.bincount(pred, minlength=k)[:k].tolist()


def check_everything(
    k: int,
    gold: np.ndarray,
    pred: np.ndarray,
    *,
    positives: Sequence[Sequence[int]],
    averages: Sequence[str] = AVERAGES,
    zero_divisions: Sequence[float | None] = ZERO_DIVISIONS,
) -> None:
    gold = np.asarray(gold, dtype=np.int64)
    pred = np.asarray(pred, dtype=np.int64)
    total = confusion_total(k, gold, pred)
    check_accuracy(k, gold, pred, total)
    check_weighted_accuracy(k, gold, pred, total)
    for positive in positives:
        check_binary(k, gold, pred, total, positive, zero_divisions)
    check_averaged(k, gold, pred, total, averages, zero_divisions)
    check_kappas(k, gold, pred, total)
    check_confusion_table(k, gold, pred, total)
    check_per_class_table(k, gold, pred, total, zero_divisions)


def proper_subsets(k: int) -> list[tuple[int, ...]]:
    return [s for r in range(1, k) for s in itertools.combinations(range(k), r)]


# --------------------------------------------------------------------------------------------
# seeded random cases
# --------------------------------------------------------------------------------------------


@dataclass
class Case:
    k: int
    gold: np.ndarray
    pred: np.ndarray


def random_case(rng: np.random.Generator, off_scale: bool = False) -> Case:
    """Skewed, sometimes degenerate, gold/pred labels for 1..200 records; with ``off_scale``,
    a share of the predictions (none to all) off the scale (code k)."""
    k = int(rng.choice([2, 3, 5]))
    n = int(np.clip(round(math.exp(rng.uniform(0.0, math.log(200.0)))), 1, 200))
    alpha = float(rng.choice([0.15, 0.5, 1.0, 5.0]))
    gold_p = rng.dirichlet(np.full(k, alpha))
    pred_p = rng.dirichlet(np.full(k, alpha))
    # Sometimes restrict the predictions to a subset (labels never predicted) and the gold
    # labels too (labels absent from both).
    if rng.random() < 0.3:
        pred_p[rng.choice(k, size=int(rng.integers(1, k)), replace=False)] = 0.0
        if pred_p.sum() == 0:
            pred_p[int(rng.integers(k))] = 1.0
        pred_p /= pred_p.sum()
    if rng.random() < 0.2:
        drop = int(rng.integers(k))
        gold_p[drop] = 0.0
        pred_p[drop] = 0.0
        if gold_p.sum() == 0:
            gold_p[(drop + 1) % k] = 1.0
        if pred_p.sum() == 0:
            pred_p[(drop + 1) % k] = 1.0
        gold_p /= gold_p.sum()
        pred_p /= pred_p.sum()
    gold = rng.choice(k, size=n, p=gold_p)
    noise = rng.choice(k, size=n, p=pred_p)
    correct = rng.random(n) < rng.uniform(0.0, 1.0)
    pred = np.where(correct & (pred_p[gold] > 0), gold, noise)
    if off_scale:
        share = float(rng.choice([0.0, 0.05, 0.3, 1.0]))
        pred = np.where(rng.random(n) < share, k, pred)
    return Case(k, gold.astype(np.int64), pred.astype(np.int64))


CHUNKS = 12
CASES_PER_CHUNK = 250  # 3000 random cases in all
FAMILIES = ("binary", "averaged", "kappa", "per_class")


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_cases_match_sklearn(chunk: int) -> None:
    """Each case checks accuracy, weighted accuracy and the confusion matrix, plus two of the
    other families with a random zero-division policy, averaging mode, kappa weighting and
    positive set (each scikit-learn call costs ~2 ms); every combination still occurs
    hundreds of times over the 3000 cases."""
    rng = np.random.default_rng([20240611, chunk])
    for i in range(CASES_PER_CHUNK):
        case = random_case(rng)
        k, gold, pred = case.k, case.gold, case.pred
        subsets = proper_subsets(k)
        positive = subsets[int(rng.integers(len(subsets)))]
        zd = ZERO_DIVISIONS[int(rng.integers(3))]
        average = AVERAGES[int(rng.integers(3))]
        kappa = list(KAPPAS)[int(rng.integers(3))]
        families = rng.choice(FAMILIES, size=2, replace=False)
        try:
            total = confusion_total(k, gold, pred)
            check_accuracy(k, gold, pred, total)
            check_weighted_accuracy(k, gold, pred, total)
            check_confusion_table(k, gold, pred, total)
            if "binary" in families:
                check_binary(k, gold, pred, total, positive, [zd])
            if "averaged" in families:
                check_averaged(k, gold, pred, total, [average], [zd])
            if "kappa" in families:
                check_kappas(k, gold, pred, total, [kappa])
            if "per_class" in families:
                check_per_class_table(k, gold, pred, total, [zd])
        except AssertionError as exc:
            raise AssertionError(
                f"case {i} of chunk {chunk}: k={k} gold={gold.tolist()} pred={pred.tolist()}: {exc}"
            ) from exc


@pytest.mark.parametrize("chunk", range(3))
def test_random_cases_with_predictions_off_the_scale_match_sklearn(chunk: int) -> None:
    """A prediction off the scale ("medium-high", null, "", 7, ...: code k) is a wrong answer,
    scored as scikit-learn scores a predicted label kept as a class of its own beside
    ``labels=`` the scale: accuracy, the binary counts (never a predicted positive; a gold
    positive is a miss), every average, per class, the confusion matrix (its own column); the
    kappas are scikit-learn's on the records predicted on the scale, n counting those."""
    rng = np.random.default_rng([20261127, chunk])
    seen = {"some off": 0, "all off": 0}
    for i in range(60):
        case = random_case(rng, off_scale=True)
        k, gold, pred = case.k, case.gold, case.pred
        seen["some off"] += bool((pred == k).any())
        seen["all off"] += bool((pred == k).all())
        subsets = proper_subsets(k)
        try:
            check_everything(
                k, gold, pred, positives=[subsets[int(rng.integers(len(subsets)))], subsets[-1]]
            )
        except AssertionError as exc:
            raise AssertionError(
                f"case {i} of chunk {chunk}: k={k} gold={gold.tolist()} pred={pred.tolist()}: {exc}"
            ) from exc
    assert seen["some off"] >= 20 and seen["all off"] >= 3, seen


def test_random_cases_cover_the_degenerate_situations() -> None:
    """The generator really produces the situations the parity cases are meant to cover."""
    rng = np.random.default_rng([20240611, 0])
    seen = {"never predicted": 0, "absent from both": 0, "one class only": 0, "n=1": 0}
    sizes = set()
    for _ in range(CASES_PER_CHUNK):
        case = random_case(rng)
        sizes.add(case.gold.size)
        present_pred = set(case.pred.tolist())
        present_any = present_pred | set(case.gold.tolist())
        seen["never predicted"] += len(present_pred) < case.k
        seen["absent from both"] += len(present_any) < case.k
        seen["one class only"] += len(present_any) == 1
        seen["n=1"] += case.gold.size == 1
    assert all(count > 0 for count in seen.values()), seen
    assert min(sizes) == 1 and max(sizes) > 150


def test_compute_is_vectorised_over_cases() -> None:
    """Finalising a stack of summed vectors at once equals finalising them one by one."""
    rng = np.random.default_rng(7)
    by_k: dict[int, list[np.ndarray]] = {2: [], 3: [], 5: []}
    for _ in range(120):
        case = random_case(rng)
        by_k[case.k].append(
            # cells of a k x (k + 1) matrix (the last column: predictions off the scale)
            np.bincount(
                case.gold * (case.k + 1) + case.pred, minlength=case.k * (case.k + 1)
            ).astype(float)
        )
    for k, totals in by_k.items():
        stacked = np.stack(totals)
        names = ["accuracy", "weighted_accuracy", "cohen_kappa", "linear_kappa", "qwk"]
        names += [f"{a}_{kind}" for a in AVERAGES for kind in KINDS] + list(KINDS)
        for name in names:
            m = metric(name, k)
            one_by_one = np.array([ours(m, t) for t in totals])
            np.testing.assert_array_equal(m.finalize(stacked), one_by_one, err_msg=name)
            grid = m.finalize(stacked[: (len(totals) // 2) * 2].reshape(2, -1, k * (k + 1)))
            np.testing.assert_array_equal(
                grid.reshape(-1), one_by_one[: (len(totals) // 2) * 2], err_msg=name
            )


# --------------------------------------------------------------------------------------------
# hand-made degenerate cases
# --------------------------------------------------------------------------------------------


def degenerate_cases() -> list[Any]:
    cases = []
    for k in (2, 3, 5):
        top, bottom = 0, k - 1
        spread = np.arange(12) % k
        cases += [
            pytest.param(k, [top] * 6, [top] * 6, id=f"k{k}-one-class-only-first"),
            pytest.param(k, [bottom] * 5, [bottom] * 5, id=f"k{k}-one-class-only-last"),
            pytest.param(k, [top], [bottom], id=f"k{k}-single-record-wrong"),
            pytest.param(k, [1], [1], id=f"k{k}-single-record-right"),
            pytest.param(k, spread, (spread + 1) % k, id=f"k{k}-always-wrong"),
            pytest.param(k, spread, spread, id=f"k{k}-perfect"),
            # label 0 is never predicted
            pytest.param(k, spread, np.maximum(spread, 1), id=f"k{k}-first-never-predicted"),
            # label k-1 absent from gold and predictions
            pytest.param(
                k, spread % (k - 1), (spread + 1) % (k - 1), id=f"k{k}-last-absent-from-both"
            ),
            # every prediction is one label
            pytest.param(k, spread, [top] * 12, id=f"k{k}-all-predicted-first"),
            pytest.param(k, spread, [bottom] * 12, id=f"k{k}-all-predicted-last"),
            # gold is one label, predictions vary
            pytest.param(k, [bottom] * 12, spread, id=f"k{k}-gold-one-label"),
            # gold one label, predicted another one label
            pytest.param(k, [top] * 4, [bottom] * 4, id=f"k{k}-gold-one-pred-other"),
        ]
        if k > 2:
            middle = k // 2
            cases.append(
                pytest.param(
                    k,
                    spread[spread != middle],
                    spread[spread != middle][::-1],
                    id=f"k{k}-middle-absent-from-both",
                )
            )
    return cases


@pytest.mark.parametrize(("k", "gold", "pred"), degenerate_cases())
def test_degenerate_cases_match_sklearn(k: int, gold: Any, pred: Any) -> None:
    subsets = proper_subsets(k)
    if k == 5:
        subsets = [(0,), (4,), (0, 1), (1, 3), (0, 1, 2), (0, 1, 2, 3), (1, 2, 3, 4)]
    check_everything(k, np.asarray(gold), np.asarray(pred), positives=subsets)


def test_degenerate_values_by_hand() -> None:
    """A few degenerate values worked out by hand, independently of scikit-learn."""
    k = 3
    # Everything is 低 and predicted 低.
    total = confusion_total(k, np.full(4, 2), np.full(4, 2))
    assert ours(metric("accuracy", k), total) == 1.0
    assert ours(metric("weighted_accuracy", k), total) == 1.0
    for name in ("cohen_kappa", "linear_kappa", "qwk"):
        m = metric(name, k)
        assert math.isnan(ours(m, total)), name
        assert "0/0" in m.undefined_reason(total)
    for zd, expected in ((None, math.nan), (0.0, 0.0), (1.0, 1.0)):
        for kind in KINDS:  # default positive labels 高, 中: none in gold, none predicted
            got = ours(metric(kind, k, zero_division=zd), total)
            assert got == expected or (math.isnan(expected) and math.isnan(got)), (kind, zd)
    # macro F1 with null policy averages only 低 (F1 1); with 0 policy (0 + 0 + 1) / 3.
    assert ours(metric("macro_f1", k), total) == 1.0
    assert abs(ours(metric("macro_f1", k, zero_division=0.0), total) - 1 / 3) <= TOL
    # gold 高 高 中 低, predicted 高 中 中 高: accuracy 2/4, credit (1 + .5 + 1 + 0) / 4.
    total = confusion_total(k, np.array([0, 0, 1, 2]), np.array([0, 1, 1, 0]))
    assert abs(ours(metric("accuracy", k), total) - 0.5) <= TOL
    assert abs(ours(metric("weighted_accuracy", k), total) - 0.625) <= TOL
    # positives 高/中: TP 3 (高→高, 高→中, 中→中), predicted positive 4, gold positive 3.
    assert abs(ours(metric("precision", k), total) - 0.75) <= TOL
    assert ours(metric("recall", k), total) == 1.0
    assert abs(ours(metric("f1", k), total) - 6 / 7) <= TOL


# --------------------------------------------------------------------------------------------
# property-based (hypothesis, fixed profile: derandomised, no example database)
# --------------------------------------------------------------------------------------------


@st.composite
def label_pairs(draw: st.DrawFn) -> tuple[int, list[int], list[int]]:
    k = draw(st.sampled_from([2, 3, 5]))
    n = draw(st.integers(min_value=1, max_value=200))
    # a small alphabet per draw makes labels missing from gold and/or predictions likely
    gold_alphabet = draw(st.lists(st.integers(0, k - 1), min_size=1, max_size=k, unique=True))
    pred_alphabet = draw(st.lists(st.integers(0, k - 1), min_size=1, max_size=k, unique=True))
    gold = draw(st.lists(st.sampled_from(gold_alphabet), min_size=n, max_size=n))
    pred = draw(st.lists(st.sampled_from(pred_alphabet), min_size=n, max_size=n))
    return k, gold, pred


@settings(
    max_examples=120,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(label_pairs(), st.data())
def test_hypothesis_cases_match_sklearn(
    case: tuple[int, list[int], list[int]], data: st.DataObject
) -> None:
    k, gold, pred = case
    subsets = proper_subsets(k)
    positive = data.draw(st.sampled_from(subsets), label="positive")
    check_everything(k, np.asarray(gold), np.asarray(pred), positives=[positive])


# --------------------------------------------------------------------------------------------
# end to end: pingce.evaluate on the built-in suite, results.json against scikit-learn
# --------------------------------------------------------------------------------------------

SUITE_BINARY_POSITIVE = (0, 1)  # contract-risk: precision/recall/f1 with positive [高, 中]


def risk_records(
    rng: np.random.Generator, n: int, gold: np.ndarray | None = None, pred: np.ndarray | None = None
) -> tuple[list[dict[str, Any]], np.ndarray, np.ndarray, np.ndarray]:
    if gold is None:
        gold = rng.choice(3, size=n, p=rng.dirichlet(np.ones(3)))
    if pred is None:
        pred = np.where(rng.random(n) < 0.6, gold, rng.choice(3, size=n))
    latency = np.round(rng.exponential(2.0, size=n), 3)
    latency[rng.random(n) < 0.2] = np.nan
    records = []
    for i in range(n):
        g_spell = RISK_SPELLINGS[int(gold[i])]
        p_spell = RISK_SPELLINGS[int(pred[i])]
        record: dict[str, Any] = {
            "id": f"r{i:04d}",
            "gold_level": g_spell[int(rng.integers(len(g_spell)))],
            "pred_level": p_spell[int(rng.integers(len(p_spell)))],
        }
        if not np.isnan(latency[i]):
            record["latency_sec"] = float(latency[i])
        elif rng.random() < 0.5:
            record["latency_sec"] = None
        records.append(record)
    return records, np.asarray(gold), np.asarray(pred), latency


def expected_suite_values(gold: np.ndarray, pred: np.ndarray, zd: float | None) -> dict[str, float]:
    """scikit-learn's (and numpy's) value of every contract-risk metric."""
    labels = [0, 1, 2]
    szd = sk_zero_division(zd)
    out: dict[str, float] = {
        "accuracy": oracle(accuracy_score, gold, pred),
        "weighted_accuracy": float(np.mean(1.0 - np.abs(gold - pred) / 2.0)),
    }
    y_true = np.isin(gold, SUITE_BINARY_POSITIVE).astype(int)
    y_pred = np.isin(pred, SUITE_BINARY_POSITIVE).astype(int)
    p, r, f, _ = oracle(
        precision_recall_fscore_support,
        y_true,
        y_pred,
        average="binary",
        pos_label=1,
        zero_division=szd,
    )
    out.update(precision=p, recall=r, f1=f)
    for average in AVERAGES:
        p, r, f, _ = oracle(
            precision_recall_fscore_support,
            gold,
            pred,
            labels=labels,
            average=average,
            zero_division=szd,
        )
        out[f"{average}_f1"] = f
        if average == "macro":
            out["macro_precision"] = p
            out["macro_recall"] = r
    for name, weights in KAPPAS.items():
        out[name] = oracle(cohen_kappa_score, gold, pred, labels=labels, weights=weights)
    return {name: float(v) for name, v in out.items()}


def assert_json_metric(entry: dict[str, Any], expected: float, what: str) -> None:
    if math.isnan(expected):
        assert entry["value"] is None, f"{what}: expected null, got {entry['value']!r}"
        reason = entry.get("undefined_reason")
        assert isinstance(reason, str) and reason.strip(), f"{what}: no undefined_reason"
    else:
        assert entry["value"] is not None, f"{what}: null, scikit-learn {expected!r}"
        assert abs(entry["value"] - expected) <= TOL, f"{what}: {entry['value']!r} != {expected!r}"
        assert "undefined_reason" not in entry, what


def check_results_json(
    data: dict[str, Any],
    gold: np.ndarray,
    pred: np.ndarray,
    latency: np.ndarray,
    zd: float | None,
) -> None:
    assert data["n_records"] == gold.size
    expected = expected_suite_values(gold, pred, zd)
    for name, value in expected.items():
        assert_json_metric(data["metrics"][name], value, name)
    present = latency[~np.isnan(latency)]
    latency_expected = {
        # the mean is a ratio (sum / count): 0/0 follows the zero-division policy
        "avg_latency_sec": float(np.mean(present))
        if present.size
        else (math.nan if zd is None else zd),
        "p50_latency_sec": float(np.percentile(present, 50)) if present.size else math.nan,
        "p95_latency_sec": float(np.percentile(present, 95)) if present.size else math.nan,
        "p99_latency_sec": float(np.percentile(present, 99)) if present.size else math.nan,
    }
    for name, value in latency_expected.items():
        if name == "avg_latency_sec" and not present.size and zd is not None:
            assert data["metrics"][name]["value"] == zd, name
            assert data["metrics"][name]["n"] == 0, name
            continue
        assert_json_metric(data["metrics"][name], value, name)
        assert data["metrics"][name]["n"] == present.size
    cm = oracle(confusion_matrix, gold, pred, labels=[0, 1, 2])
    assert data["tables"]["confusion_matrix"] == {
        "labels": ["高", "中", "低"],
        "matrix": cm.tolist(),
    }
    p, r, f, support = oracle(
        precision_recall_fscore_support,
        gold,
        pred,
        labels=[0, 1, 2],
        average=None,
        zero_division=sk_zero_division(zd),
    )
    per_class = data["tables"]["per_class"]
    for column, values in (("precision", p), ("recall", r), ("f1", f)):
        for got, e in zip(per_class[column], values, strict=True):
            if math.isnan(e):
                assert got is None, column
            else:
                assert got is not None and abs(got - e) <= TOL, column
    assert per_class["support"] == support.tolist()


@pytest.mark.parametrize(
    ("seed", "n", "zd"),
    [(1, 57, None), (2, 200, 0.0), (3, 13, 1.0), (4, 3, None), (5, 120, None)],
)
def test_evaluate_results_json_matches_sklearn(
    seed: int, n: int, zd: float | None, tmp_path: Any
) -> None:
    rng = np.random.default_rng(seed)
    records, gold, pred, latency = risk_records(rng, n)
    result = pingce.evaluate(
        "contract-risk", records, bootstrap=0, seed=seed, zero_division=zd, out=tmp_path
    )
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    check_results_json(data, gold, pred, latency, zd)
    assert data["signature"]["zero_division"] == zd
    # units each value is computed over, by hand
    metrics = data["metrics"]
    gold_pos = np.isin(gold, SUITE_BINARY_POSITIVE)
    pred_pos = np.isin(pred, SUITE_BINARY_POSITIVE)
    assert metrics["accuracy"]["n"] == n and metrics["qwk"]["n"] == n
    assert metrics["precision"]["n"] == int(pred_pos.sum())
    assert metrics["recall"]["n"] == int(gold_pos.sum())
    assert metrics["f1"]["n"] == int((gold_pos | pred_pos).sum())
    # the in-memory result serialises to the same document
    assert json.loads(result.to_json()) == data


@pytest.mark.parametrize("zd", [None, 0.0, 1.0])
def test_evaluate_degenerate_results_json(zd: float | None, tmp_path: Any) -> None:
    """Everything is 低 and predicted 低; no latency at all: nulls with reasons (or policy)."""
    n = 9
    rng = np.random.default_rng(11)
    gold = np.full(n, 2)
    records, gold, pred, latency = risk_records(rng, n, gold=gold, pred=gold.copy())
    for record in records:
        record.pop("latency_sec", None)
    latency[:] = np.nan
    result = pingce.evaluate("contract-risk", records, bootstrap=50, seed=3, zero_division=zd)
    data = json.loads(result.to_json())
    check_results_json(data, gold, pred, latency, zd)
    metrics = data["metrics"]
    undefined = ["cohen_kappa", "linear_kappa", "qwk", "p95_latency_sec"]
    # the latency mean is a ratio: 0/0 follows the policy (kappa and percentiles have none)
    undefined += ["avg_latency_sec"] if zd is None else []
    for name in undefined:
        assert metrics[name]["value"] is None
        assert metrics[name]["undefined_reason"]
        assert "ci_low" in metrics[name] and metrics[name]["ci_low"] is None
    if zd is None:
        for name in ("precision", "recall", "f1"):
            assert metrics[name]["value"] is None, name
            assert "高/中" in metrics[name]["undefined_reason"], metrics[name]
    assert metrics["accuracy"]["value"] == 1.0


def test_evaluate_mixed_spellings_are_one_label() -> None:
    """高 / high / HIGH / ' high' are the same label: the matrix counts them together."""
    records = [
        {"gold_level": "高", "pred_level": "HIGH"},
        {"gold_level": " high", "pred_level": "高 "},
        {"gold_level": "Medium", "pred_level": "中"},
        {"gold_level": "low", "pred_level": "MEDIUM"},
        {"gold_level": "LOW", "pred_level": "低"},
    ]
    result = pingce.evaluate("contract-risk", records, bootstrap=0)
    gold = np.array([0, 0, 1, 2, 2])
    pred = np.array([0, 0, 1, 1, 2])
    data = json.loads(result.to_json())
    assert data["tables"]["confusion_matrix"]["matrix"] == confusion_matrix(gold, pred).tolist()
    assert data["metrics"]["accuracy"]["value"] == pytest.approx(0.8, abs=TOL)


def test_evaluate_slices_by_gold_label_match_sklearn() -> None:
    """Slicing by the gold label: one slice per label in scale order, whatever the spelling;
    each slice's metrics are scikit-learn's on that slice's records."""
    rng = np.random.default_rng(21)
    records, gold, pred, _ = risk_records(rng, 150)
    result = pingce.evaluate("contract-risk", records, bootstrap=0, slices=("gold_level",))
    data = json.loads(result.to_json())
    present = [c for c in (0, 1, 2) if (gold == c).any()]
    assert list(data["slices"]) == [f"gold_level={RISK_LEVELS.labels[c]}" for c in present]
    assert sum(s["n_records"] for s in data["slices"].values()) == data["n_records"] == 150
    for c in present:
        piece = data["slices"][f"gold_level={RISK_LEVELS.labels[c]}"]
        rows = gold == c
        assert piece["n_records"] == int(rows.sum())
        expected = expected_suite_values(gold[rows], pred[rows], None)
        for name, value in expected.items():
            assert_json_metric(piece["metrics"][name], value, f"slice {c}: {name}")
