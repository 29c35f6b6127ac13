"""scikit-learn's options on the classification metrics, against scikit-learn (the oracle):
``labels`` (a subset of the scale, in any order), ``sample_weight`` (a record field) and F-beta
(``fbeta``, ``macro_fbeta``, ``micro_fbeta``, ``weighted_fbeta``).

300 seeded random cases (scales of 2, 3 and 5 labels, skewed and degenerate labels from
the shared tester's generator, weights that are whole, fractional, zero or absent, random label
subsets and orders, labels absent from the data) are scored through ``load_records`` and the
statistic, and every value, count, matrix and per-class row is compared with scikit-learn's to
1e-9 (weighted sums are summed in another order than scikit-learn's). Then hand-made cases with
values worked out by hand, the input and suite errors, and the whole path: suite YAML, the
command line, bootstrap intervals, slices and a paired comparison.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    fbeta_score,
    precision_recall_fscore_support,
)

import pingce
from pingce.errors import InputError, SuiteError
from pingce.metrics import Context, Metric, TableMetric, create_metric, create_table
from pingce.records import load_records
from pingce.suites import load_suite
from tests.cli_run import run_pingce
from tests.test_classification_parity import (
    AVERAGES,
    KAPPAS,
    SCALES,
    ZERO_DIVISIONS,
    oracle,
    random_case,
    raw_label,
    sk_zero_division,
)

TOL = 1e-9
WEIGHT = "w"
BETAS = (0.5, 3.7)
PRF = ("precision", "recall")

Labels = tuple[int, ...] | None


# --------------------------------------------------------------------------------------------
# pingce side
# --------------------------------------------------------------------------------------------


@functools.cache
def metric(name: str, k: int, weighted: bool, labels: Labels = None, **args: Any) -> Metric:
    """A registered metric on the k-label scale, weighted by field ``w`` or not, with
    ``labels`` given as codes (passed to pingce as the scale's names)."""
    if labels is not None:
        args["labels"] = [SCALES[k].labels[c] for c in labels]
    if "positive" in args:
        args["positive"] = list(args["positive"])
    weight = WEIGHT if weighted else None
    return create_metric(
        name, gold="gold", pred="pred", scale=SCALES[k], sample_weight=weight, **args
    )


@functools.cache
def table(name: str, k: int, weighted: bool, labels: Labels = None, **args: Any) -> TableMetric:
    if labels is not None:
        args["labels"] = [SCALES[k].labels[c] for c in labels]
    weight = WEIGHT if weighted else None
    return create_table(
        name, gold="gold", pred="pred", scale=SCALES[k], sample_weight=weight, **args
    )


def summed(k: int, gold: np.ndarray, pred: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """The summed statistic of the records (raw spellings, weights as JSON numbers), loaded
    through ``load_records`` like any data file."""
    records: list[dict[str, Any]] = []
    for i, (g, p) in enumerate(zip(gold, pred, strict=True)):
        record: dict[str, Any] = {
            "gold": raw_label(k, int(g), i),
            "pred": raw_label(k, int(p), i + 1),
        }
        if weights is not None:
            w = float(weights[i])
            record[WEIGHT] = int(w) if w.is_integer() and i % 2 else w  # integers and floats
        records.append(record)
    statistic = metric("accuracy", k, weights is not None).statistic()
    loaded = load_records(records, statistic.fields())
    block = statistic.compute(loaded, Context())
    if weights is None:
        assert block.codes is not None  # unweighted: the one-hot layout, as before
    else:
        cells = k * (k + 1)  # a k x (k + 1) matrix: the last column, predictions off the scale
        assert block.rows is not None and block.width == 2 * cells
        # each record's row: its weight in its cell, and 1 in the cell of records that count
        np.testing.assert_array_equal(block.rows[:, :cells].sum(axis=1), weights)
        np.testing.assert_array_equal(block.rows[:, cells:].sum(axis=1), weights > 0)
    total: np.ndarray = block.total()
    return total


def value(m: Metric, total: np.ndarray) -> float:
    return float(m.finalize(total[None, :])[0])


def count(m: Metric, total: np.ndarray) -> int:
    return round(float(m.count(total[None, :])[0]))


def close(
    got: float, expected: float, what: str, m: Metric | None = None, total: Any = None
) -> None:
    expected = float(expected)
    if math.isnan(expected):
        assert math.isnan(got), f"{what}: scikit-learn says undefined (nan), pingce gives {got}"
        if m is not None:
            assert m.undefined_reason(total).strip(), f"{what}: no undefined_reason"
    else:
        assert not math.isnan(got), f"{what}: pingce says undefined, scikit-learn gives {expected}"
        assert abs(got - expected) <= TOL, f"{what}: pingce {got!r} != scikit-learn {expected!r}"


# --------------------------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------------------------


@dataclass
class Setting:
    k: int
    gold: np.ndarray
    pred: np.ndarray
    weights: np.ndarray | None
    labels: Labels

    @property
    def weighted(self) -> bool:
        return self.weights is not None

    def sk(self) -> dict[str, Any]:
        """scikit-learn's keyword for the weights."""
        return {} if self.weights is None else {"sample_weight": self.weights}

    def sk_labels(self) -> list[int]:
        return list(range(self.k)) if self.labels is None else list(self.labels)

    def counted(self) -> np.ndarray:
        """Records that count: weight above 0."""
        return np.ones(self.gold.size, bool) if self.weights is None else self.weights > 0

    def among(self, codes: np.ndarray) -> np.ndarray:
        return np.isin(codes, self.sk_labels())


def check_accuracy(s: Setting, total: np.ndarray) -> None:
    expected = oracle(accuracy_score, s.gold, s.pred, **s.sk())
    credit = np.where(s.pred < s.k, 1.0 - np.abs(s.gold - s.pred) / (s.k - 1), 0.0)
    by_hand = np.average(credit, weights=s.weights)  # weighted accuracy is pingce's own
    for zd in ZERO_DIVISIONS:
        m = metric("accuracy", s.k, s.weighted, zero_division=zd)
        close(value(m, total), expected, f"accuracy zd={zd}", m, total)
        assert count(m, total) == int(s.counted().sum())
        w = metric("weighted_accuracy", s.k, s.weighted, zero_division=zd)
        close(value(w, total), by_hand, f"weighted_accuracy zd={zd}", w, total)


def check_binary(s: Setting, total: np.ndarray, positive: Sequence[int]) -> None:
    names = tuple(SCALES[s.k].labels[c] for c in positive)
    y_true = np.isin(s.gold, positive).astype(int)
    y_pred = np.isin(s.pred, positive).astype(int)
    for zd in ZERO_DIVISIONS:
        szd = sk_zero_division(zd)
        p, r, f, _ = oracle(
            precision_recall_fscore_support,
            y_true,
            y_pred,
            average="binary",
            zero_division=szd,
            **s.sk(),
        )
        for kind, expected in (("precision", p), ("recall", r), ("f1", f)):
            m = metric(kind, s.k, s.weighted, positive=names, zero_division=zd)
            close(value(m, total), expected, f"binary {kind} {names} zd={zd}", m, total)
        for beta in BETAS:
            expected = oracle(
                fbeta_score,
                y_true,
                y_pred,
                beta=beta,
                average="binary",
                zero_division=szd,
                **s.sk(),
            )
            m = metric("fbeta", s.k, s.weighted, positive=names, beta=beta, zero_division=zd)
            close(value(m, total), expected, f"binary fbeta({beta}) {names} zd={zd}", m, total)
    counted = s.counted()
    m = metric("precision", s.k, s.weighted, positive=names)
    assert count(m, total) == int((counted & (y_pred == 1)).sum())
    m = metric("fbeta", s.k, s.weighted, positive=names, beta=2.0)
    assert count(m, total) == int((counted & ((y_pred == 1) | (y_true == 1))).sum())


def check_averaged(s: Setting, total: np.ndarray) -> None:
    involved = s.counted() & (s.among(s.gold) | s.among(s.pred))
    for average in AVERAGES:
        for zd in ZERO_DIVISIONS:
            szd = sk_zero_division(zd)
            kwargs = dict(labels=s.sk_labels(), average=average, zero_division=szd, **s.sk())
            p, r, f, _ = oracle(precision_recall_fscore_support, s.gold, s.pred, **kwargs)
            for kind, expected in (("precision", p), ("recall", r), ("f1", f)):
                m = metric(f"{average}_{kind}", s.k, s.weighted, s.labels, zero_division=zd)
                what = f"{average}_{kind} labels={s.labels} zd={zd}"
                close(value(m, total), expected, what, m, total)
                assert count(m, total) == int(involved.sum()), what
                generic = metric(kind, s.k, s.weighted, s.labels, average=average, zero_division=zd)
                close(value(generic, total), expected, f"{kind}(average={average}) {what}")
            for beta in BETAS:
                expected = oracle(fbeta_score, s.gold, s.pred, beta=beta, **kwargs)
                m = metric(
                    f"{average}_fbeta", s.k, s.weighted, s.labels, beta=beta, zero_division=zd
                )
                what = f"{average}_fbeta({beta}) labels={s.labels} zd={zd}"
                close(value(m, total), expected, what, m, total)
                generic = metric(
                    "fbeta", s.k, s.weighted, s.labels, average=average, beta=beta, zero_division=zd
                )
                close(value(generic, total), expected, f"fbeta(average={average}) {what}")
            # beta = 1 is F1, as in scikit-learn
            one = metric(f"{average}_fbeta", s.k, s.weighted, s.labels, beta=1.0, zero_division=zd)
            close(value(one, total), f, f"{average}_fbeta(1) = f1")


def check_kappas(s: Setting, total: np.ndarray) -> None:
    kept = s.counted() & s.among(s.gold) & s.among(s.pred)
    for name, weights in KAPPAS.items():
        m = metric(name, s.k, s.weighted, s.labels)
        got = value(m, total)
        try:
            expected = oracle(
                cohen_kappa_score, s.gold, s.pred, labels=s.sk_labels(), weights=weights, **s.sk()
            )
        except ValueError as exc:  # no label of `labels` in the gold labels: pingce says null
            assert "must be present" in str(exc) or "must be in y_true" in str(exc), exc
            assert not s.among(s.gold[s.counted()]).any()
            assert math.isnan(got) and "among" in m.undefined_reason(total), (name, got)
            expected = math.nan
        close(got, expected, f"{name} labels={s.labels}", m, total)
        assert count(m, total) == int(kept.sum()), name


def check_tables(s: Setting, total: np.ndarray) -> None:
    built = table("confusion_matrix", s.k, s.weighted, s.labels).build(total)
    names = [SCALES[s.k].labels[c] for c in s.sk_labels()]
    assert built["labels"] == names
    number = float if s.weighted else int
    assert all(type(x) is number for row in built["matrix"] for x in row)
    # a prediction off the scale (code k) is a class of its own: the last column, when the kept
    # rows have some (of weight above 0); its row (no gold is off the scale) is left out
    off = s.counted() & s.among(s.gold) & (s.pred == s.k)
    columns = [*s.sk_labels(), s.k] if off.any() else s.sk_labels()
    try:
        expected = oracle(confusion_matrix, s.gold, s.pred, labels=columns, **s.sk())
        expected = expected[: len(names)]
    except ValueError:  # scikit-learn refuses labels none of which is in y_true
        assert not s.among(s.gold).any()
        expected = np.zeros((len(names), len(columns)))
    assert built.get("columns", names) == names + ["(invalid)"] * bool(off.any())
    np.testing.assert_allclose(np.asarray(built["matrix"], dtype=float), expected, rtol=0, atol=TOL)
    for zd in ZERO_DIVISIONS:
        per_class = table("per_class", s.k, s.weighted, s.labels, zero_division=zd).build(total)
        p, r, f, support = oracle(
            precision_recall_fscore_support,
            s.gold,
            s.pred,
            labels=s.sk_labels(),
            average=None,
            zero_division=sk_zero_division(zd),
            **s.sk(),
        )
        assert per_class["labels"] == names
        for column, values in (("precision", p), ("recall", r), ("f1", f)):
            for got, e in zip(per_class[column], values, strict=True):
                if math.isnan(e):
                    assert got is None, column
                else:
                    assert got is not None and abs(got - e) <= TOL, (column, got, e)
        np.testing.assert_allclose(per_class["support"], support, rtol=0, atol=TOL)
        predicted = np.bincount(s.pred, weights=s.weights, minlength=s.k)[s.sk_labels()]
        np.testing.assert_allclose(per_class["predicted"], predicted, rtol=0, atol=TOL)


def check_all_zero_weights(s: Setting, total: np.ndarray) -> None:
    """scikit-learn refuses weights that are all 0; pingce counts no record: every value is null
    (or the policy's for a ratio) with a reason, and every n is 0."""
    assert not total[: s.k * s.k].any() and not total[s.k * s.k :].any()
    for zd in ZERO_DIVISIONS:
        for name in ("accuracy", "weighted_accuracy", "macro_f1", "micro_recall", "precision"):
            m = metric(name, s.k, True, zero_division=zd)
            got = value(m, total)
            assert math.isnan(got) if zd is None else got == zd, (name, zd, got)
            assert count(m, total) == 0
            assert "weight above 0" in m.undefined_reason(total), name
    for name in KAPPAS:
        m = metric(name, s.k, True)
        assert math.isnan(value(m, total)) and count(m, total) == 0


def check_setting(s: Setting, positives: Sequence[Sequence[int]]) -> None:
    total = summed(s.k, s.gold, s.pred, s.weights)
    if s.weights is not None and not s.weights.any():
        check_all_zero_weights(s, total)
        return
    check_accuracy(s, total)
    for positive in positives:
        check_binary(s, total, positive)
    check_averaged(s, total)
    check_kappas(s, total)
    check_tables(s, total)


# --------------------------------------------------------------------------------------------
# seeded random cases
# --------------------------------------------------------------------------------------------


def random_weights(rng: np.random.Generator, n: int) -> np.ndarray | None:
    kind = int(rng.integers(6))
    if kind == 0:
        return None
    if kind == 1:
        return rng.integers(0, 4, size=n).astype(float)  # whole numbers, zeros included
    if kind == 2:
        w = np.round(rng.exponential(1.0, size=n), 3)
        w[rng.random(n) < 0.3] = 0.0
        return w
    if kind == 3:
        return rng.uniform(0.0, 10.0, size=n)
    if kind == 4:
        return np.ones(n)
    return rng.choice([0.0, 0.0, 1e-3, 0.25, 7.5, 1e3], size=n)  # zeros and wide ranges


def random_labels(rng: np.random.Generator, k: int, gold: np.ndarray, pred: np.ndarray) -> Labels:
    roll = rng.random()
    if roll < 0.2:
        return None
    if roll < 0.35:  # labels absent from the data (when there are any), maybe with others
        absent = np.setdiff1d(np.arange(k), np.union1d(gold, pred))
        if absent.size:
            extra = rng.choice(k, size=int(rng.integers(0, k)), replace=False)
            chosen = np.unique(np.concatenate([absent[:1], extra]))
            return tuple(int(c) for c in rng.permutation(chosen))
    size = int(rng.integers(1, k + 1))
    return tuple(int(c) for c in rng.choice(k, size=size, replace=False))  # random order


def random_setting(seed: int, off_scale: bool = False) -> Setting:
    rng = np.random.default_rng([1414, seed])
    case = random_case(rng, off_scale)
    gold = np.asarray(case.gold, dtype=np.int64)
    pred = np.asarray(case.pred, dtype=np.int64)
    weights = random_weights(rng, gold.size)
    return Setting(case.k, gold, pred, weights, random_labels(rng, case.k, gold, pred))


@pytest.mark.parametrize("block", range(15))
def test_random_cases_match_sklearn(block: int) -> None:
    """300 seeded cases, 20 per test: labels, weights, F-beta against scikit-learn."""
    for seed in range(block * 20, block * 20 + 20):
        s = random_setting(seed)
        rng = np.random.default_rng([99, seed])
        positive = rng.choice(s.k, size=int(rng.integers(1, s.k)), replace=False)
        check_setting(s, positives=[tuple(int(c) for c in positive)])


@pytest.mark.parametrize("block", range(3))
def test_random_cases_with_predictions_off_the_scale_match_sklearn(block: int) -> None:
    """Predictions off the scale (code k) with labels and weights: scikit-learn's values with
    the invalid prediction a class of its own beside ``labels``; kappa on the others."""
    for seed in range(1000 + block * 20, 1000 + block * 20 + 20):
        s = random_setting(seed, off_scale=True)
        rng = np.random.default_rng([98, seed])
        positive = rng.choice(s.k, size=int(rng.integers(1, s.k)), replace=False)
        check_setting(s, positives=[tuple(int(c) for c in positive)])


def test_random_cases_cover_what_they_claim() -> None:
    """The generator reaches the cases that matter: zero weights, all-zero weights, no weights,
    label subsets in another order than the scale's, labels absent from the data."""
    seen = {"zero weight": 0, "unweighted": 0, "reordered": 0, "absent label": 0, "subset": 0}
    for seed in range(300):
        s = random_setting(seed)
        seen["unweighted"] += s.weights is None
        seen["zero weight"] += s.weights is not None and bool((s.weights == 0).any())
        if s.labels is not None:
            seen["reordered"] += list(s.labels) != sorted(s.labels)
            seen["subset"] += len(s.labels) < s.k
            seen["absent label"] += bool(np.setdiff1d(s.labels, np.union1d(s.gold, s.pred)).size)
    assert all(n >= 20 for n in seen.values()), seen


def test_finalize_is_vectorised_with_labels_and_weights() -> None:
    """A stack of summed vectors finalises exactly as each one alone (labels, weights)."""
    rng = np.random.default_rng(5)
    for k in (3, 5):
        totals = []
        for _ in range(40):
            gold = rng.integers(0, k, size=int(rng.integers(1, 40)))
            pred = np.where(rng.random(gold.size) < 0.5, gold, rng.integers(0, k, size=gold.size))
            totals.append(summed(k, gold, pred, rng.uniform(0, 3, size=gold.size)))
        stacked = np.stack(totals)
        labels = (k - 1, 0, 1)
        names = ["accuracy", "weighted_accuracy", "cohen_kappa", "qwk", "macro_f1", "micro_f1"]
        for name in [*names, "weighted_fbeta"]:
            extra: dict[str, Any] = {"beta": 2.0} if "fbeta" in name else {}
            chosen = None if "accuracy" in name else labels
            m = metric(name, k, True, chosen, **extra)
            one_by_one = np.array([value(m, t) for t in totals])
            np.testing.assert_array_equal(m.finalize(stacked), one_by_one, err_msg=name)


# --------------------------------------------------------------------------------------------
# hand-made cases, worked out by hand (and checked against scikit-learn too)
# --------------------------------------------------------------------------------------------

# gold 高 高 中 低 低, predicted 高 中 中 高 低 (codes 0 高, 1 中, 2 低)
GOLD = np.array([0, 0, 1, 2, 2])
PRED = np.array([0, 1, 1, 0, 2])


def test_micro_average_over_a_subset_leaves_the_other_labels_out() -> None:
    """labels=[高]: micro precision = TP(高) / predicted 高 = 1/2 and micro recall = TP(高) / gold
    高 = 1/2 (not accuracy 3/5): the other labels count in neither TP nor support."""
    total = summed(3, GOLD, PRED, None)
    p = metric("micro_precision", 3, False, (0,))
    r = metric("micro_recall", 3, False, (0,))
    assert value(p, total) == 0.5 and value(r, total) == 0.5
    assert count(p, total) == 3  # records whose gold or predicted label is 高
    kwargs: dict[str, Any] = {"labels": [0], "average": "micro"}
    assert oracle(precision_recall_fscore_support, GOLD, PRED, **kwargs)[:2] == (0.5, 0.5)
    # labels [中, 低]: TP 中 1 + 低 1 = 2; predicted 中/低 3; gold 中/低 3
    f = metric("micro_f1", 3, False, (1, 2))
    assert abs(value(f, total) - 2 / 3) <= TOL
    assert (
        abs(oracle(fbeta_score, GOLD, PRED, beta=1, labels=[1, 2], average="micro") - 2 / 3) < TOL
    )


def test_labels_absent_from_the_data_follow_zero_division() -> None:
    """Nothing is 中 in gold or predictions: with labels [高, 中] macro F1 averages F1(高) =
    2·1/(2 + 2) = 1/2 alone under null (F1(中) is 0/0), and (1/2 + 0)/2 or (1/2 + 1)/2 under 0
    or 1."""
    gold, pred = np.array([0, 0, 2, 2]), np.array([0, 2, 0, 2])
    total = summed(3, gold, pred, None)
    for zd, expected in ((None, 0.5), (0.0, 0.25), (1.0, 0.75)):
        m = metric("macro_f1", 3, False, (0, 1), zero_division=zd)
        assert abs(value(m, total) - expected) <= TOL, zd
        sk = oracle(
            fbeta_score,
            gold,
            pred,
            beta=1,
            labels=[0, 1],
            average="macro",
            zero_division=sk_zero_division(zd),
        )
        assert abs(sk - expected) <= TOL
    only_absent = metric("macro_f1", 3, False, (1,))
    assert math.isnan(value(only_absent, total))
    assert (
        only_absent.undefined_reason(total)
        == "no record has a gold or predicted label among ['中']"
    )


def test_a_weight_of_zero_is_a_record_left_out_and_whole_weights_are_repeats() -> None:
    """Weight 0 = the record removed; weight 3 = the record three times (pingce's weighted value
    against its own unweighted value on the edited records, and scikit-learn's)."""
    rng = np.random.default_rng(8)
    for _ in range(30):
        k = int(rng.choice([2, 3, 5]))
        gold = rng.integers(0, k, size=30)
        pred = np.where(rng.random(30) < 0.5, gold, rng.integers(0, k, size=30))
        weights = rng.integers(0, 4, size=30).astype(float)
        weights[0] = 1.0
        repeated = np.repeat(np.arange(30), weights.astype(int))
        weighted = summed(k, gold, pred, weights)
        plain = summed(k, gold[repeated], pred[repeated], None)
        labels = (k - 1, 0)
        for name, chosen, args in [
            ("accuracy", None, {}),
            ("weighted_accuracy", None, {}),
            ("macro_f1", labels, {}),
            ("weighted_recall", None, {}),
            ("micro_fbeta", labels, {"beta": 0.5}),
            ("qwk", labels, {}),
            ("linear_kappa", None, {}),
        ]:
            a = value(metric(name, k, True, chosen, **args), weighted)
            b = value(metric(name, k, False, chosen, **args), plain)
            assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOL, (name, a, b)
        # n: the records of weight above 0, not the sum of weights
        assert count(metric("accuracy", k, True), weighted) == int((weights > 0).sum())
        sk = oracle(accuracy_score, gold, pred, sample_weight=weights)
        assert abs(value(metric("accuracy", k, True), weighted) - sk) <= TOL


def test_fbeta_by_hand() -> None:
    """positive {高, 中}: TP 3, FP 1, FN 0; F2 = 5·3 / (5·3 + 4·0 + 1) = 15/16, F0.5 =
    1.25·3 / (1.25·3 + 0.25·0 + 1) = 3.75/4.75."""
    total = summed(3, GOLD, PRED, None)
    assert abs(value(metric("fbeta", 3, False, beta=2.0), total) - 15 / 16) <= TOL
    assert abs(value(metric("fbeta", 3, False, beta=0.5), total) - 3.75 / 4.75) <= TOL
    assert count(metric("fbeta", 3, False, beta=2.0), total) == 4


def test_weighted_confusion_matrix_and_kappa_by_hand() -> None:
    """Weights 1 2 0 0.5 4 on the five records; labels [低, 高] keep the records 高→高 (1),
    低→高 (0.5), 低→低 (4): the matrix [[4, 0.5], [0, 1]] in that order."""
    weights = np.array([1.0, 2.0, 0.0, 0.5, 4.0])
    total = summed(3, GOLD, PRED, weights)
    built = table("confusion_matrix", 3, True, (2, 0)).build(total)
    assert built == {"labels": ["低", "高"], "matrix": [[4.0, 0.5], [0.0, 1.0]]}
    # kappa on that matrix: observed disagreement 0.5 of 5.5; chance: pred 低 4, 高 1.5; gold
    # 低 4.5, 高 1 -> E(低,高) + E(高,低) = (4·1 + 1.5·4.5)/5.5
    m = metric("cohen_kappa", 3, True, (2, 0))
    expected = 1 - 0.5 / ((4 * 1 + 1.5 * 4.5) / 5.5)
    assert abs(value(m, total) - expected) <= TOL
    assert count(m, total) == 3


# --------------------------------------------------------------------------------------------
# errors: records and suites
# --------------------------------------------------------------------------------------------

SUITE = """\
name: weighted-risk
labels:
  values: [高, 中, 低]
  aliases: {high: 高, medium: 中, low: 低}
inputs:
  gold: gold_level
  pred: pred_level
  sample_weight: weight
metrics:
  accuracy: {}
  macro_f1: {labels: [高, 中]}
  f2: {metric: fbeta, beta: 2}
tables:
  confusion_matrix: {}
"""


@pytest.mark.parametrize(
    ("suffix", "bad", "message", "shown"),
    [
        (
            ".jsonl",
            '{"gold_level": "高", "pred_level": "低", "weight": -0.5}',
            "a number >= 0",
            "-0.5",
        ),
        (
            ".jsonl",
            '{"gold_level": "高", "pred_level": "低", "weight": "2"}',
            "expected a number",
            '"2"',
        ),
        (
            ".jsonl",
            '{"gold_level": "高", "pred_level": "低", "weight": true}',
            "expected a number",
            "true",
        ),
        (".jsonl", '{"gold_level": "高", "pred_level": "低", "weight": null}', "null", None),
        (".jsonl", '{"gold_level": "高", "pred_level": "低"}', "missing", None),
        (".csv", "高,低,nan", "a finite number", "nan"),
        (".csv", "高,低,inf", "a finite number", "inf"),
        (".csv", "高,低,-1", "a number >= 0", "-1.0"),
        (".csv", "高,低,heavy", "expected a number", '"heavy"'),
    ],
)
def test_bad_weights_are_input_errors_naming_file_line_field_value(
    tmp_path: Path, suffix: str, bad: str, message: str, shown: str | None
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    data = tmp_path / f"records{suffix}"
    if suffix == ".csv":
        data.write_text(f"gold_level,pred_level,weight\n高,中,1\n{bad}\n", encoding="utf-8")
        line = 3
    else:
        good = '{"gold_level": "高", "pred_level": "中", "weight": 1}'
        data.write_text(f"{good}\n{bad}\n", encoding="utf-8")
        line = 2
    with pytest.raises(InputError) as info:
        pingce.evaluate(suite, data, bootstrap=0)
    error = info.value
    assert error.source == str(data) and error.line == line and error.field == "weight"
    text = str(error)
    assert f"{data}:{line}: field 'weight'" in text and message in text, text
    if shown is not None:
        assert f"(got {shown})" in text, text


def test_nan_and_infinite_weights_from_python_records() -> None:
    for bad in (math.nan, math.inf, -math.inf):
        records = [{"gold_level": "高", "pred_level": "中", "weight": 1.0}] * 2
        records = [*records, {"gold_level": "高", "pred_level": "中", "weight": bad}]
        with pytest.raises(
            InputError, match=r"3: field 'weight': expected a finite number"
        ) as info:
            pingce.evaluate(load_suite_text(SUITE), records, bootstrap=0)
        assert info.value.line == 3 and info.value.field == "weight"


def load_suite_text(text: str) -> Any:
    import yaml

    from pingce.suites import SuiteSpec

    return SuiteSpec.model_validate(yaml.safe_load(text))


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("accuracy: {labels: [高]}", "takes no 'labels': scikit-learn's accuracy_score has no"),
        ("weighted_accuracy: {labels: [高]}", "takes no 'labels'"),
        ("precision: {labels: [高]}", "apply to average macro, micro or weighted"),
        ("macro_f1: {labels: [高, high]}", "labels names '高' twice"),
        ("macro_f1: {labels: [极高]}", "label '极高' in labels is not one of"),
        ("macro_f1: {labels: []}", "at least one label"),
        ("qwk: {labels: 高}", "labels must be a list"),
        ("confusion_matrix_typo: {metric: macro_recall, labels: [高, 7]}", "label 7 in labels"),
        ("fbeta: {}", "needs argument(s) ['beta']"),
        ("fbeta: {beta: 0}", "beta must be a finite number > 0"),
        ("macro_fbeta: {beta: -1}", "beta must be a finite number > 0"),
        ("macro_fbeta: {beta: .inf}", "got inf"),
        ("macro_fbeta: {beta: true}", "got true"),
        ("macro_fbeta: {beta: '2'}", 'got "2"'),
        ("f1: {beta: 2}", "takes no 'beta': F-beta is the metric `fbeta`"),
        ("accuracy: {sample_weight: 1}", "sample_weight must be the name of the record field"),
        ("accuracy: {sample_weight: 'a..b'}", "invalid field path"),
    ],
)
def test_suite_errors_name_the_key_and_the_value(tmp_path: Path, entry: str, message: str) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: s\nlabels: {values: [高, 中, 低], aliases: {high: 高}}\n"
        "inputs: {gold: g, pred: p}\nmetrics:\n  " + entry + "\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError) as info:
        load_suite(suite)
    assert message in str(info.value), str(info.value)
    assert f"key 'metrics.{entry.split(':')[0]}'" in str(info.value)


def test_table_errors(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: s\nlabels: {values: [高, 中, 低]}\ninputs: {gold: g, pred: p}\n"
        "metrics: {accuracy: {}}\ntables:\n  confusion_matrix: {labels: [中, 中]}\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError, match=r"key 'tables.confusion_matrix'.*'中' twice"):
        load_suite(suite)


# --------------------------------------------------------------------------------------------
# the whole path: suite defaults and inputs, evaluate, bootstrap, slices, CLI, compare
# --------------------------------------------------------------------------------------------

FULL_SUITE = """\
name: weighted-risk
id_field: id
labels:
  values: [高, 中, 低]
  aliases: {high: 高, medium: 中, low: 低}
inputs:
  gold: gold_level
  pred: pred_level
  sample_weight: weight          # every classification metric and table is weighted
  latency: latency_sec
defaults:
  labels: [低, 高]               # averaged metrics, kappas and tables; not accuracy, not binary
metrics:
  accuracy: {}
  weighted_accuracy: {}
  precision: {positive: [高]}
  macro_f1: {}
  micro_recall: {}
  weighted_precision: {labels: [中]}
  f2: {metric: macro_fbeta, beta: 2}
  fhalf: {metric: fbeta, beta: 0.5, positive: [高, 中]}
  qwk: {}
  cohen_kappa: {labels: null}
  avg_latency_sec: {}
tables:
  confusion_matrix: {}
  per_class: {labels: null}
"""


def full_records(
    seed: int, n: int
) -> tuple[list[dict[str, Any]], np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    gold = rng.choice(3, size=n, p=[0.3, 0.3, 0.4])
    pred = np.where(rng.random(n) < 0.6, gold, rng.integers(0, 3, size=n))
    weights = np.round(rng.exponential(2.0, size=n), 2)
    weights[rng.random(n) < 0.15] = 0.0
    names = ["高", "中", "低"]
    records = [
        {
            "id": f"r{i}",
            "gold_level": names[int(gold[i])],
            "pred_level": names[int(pred[i])],
            "weight": float(weights[i]),
            "latency_sec": 1.0 + i % 3,
            "group": "AB"[i % 2],
        }
        for i in range(n)
    ]
    return records, gold, pred, weights


def full_expected(gold: np.ndarray, pred: np.ndarray, weights: np.ndarray) -> dict[str, float]:
    """scikit-learn's value of every classification metric of FULL_SUITE."""
    sw = {"sample_weight": weights}
    labels = [2, 0]
    credit = 1.0 - np.abs(gold - pred) / 2.0
    nan: dict[str, Any] = {"zero_division": np.nan}
    return {
        "accuracy": oracle(accuracy_score, gold, pred, **sw),
        "weighted_accuracy": float(np.average(credit, weights=weights)),
        "precision": oracle(
            precision_recall_fscore_support, gold == 0, pred == 0, average="binary", **nan, **sw
        )[0],
        "macro_f1": oracle(
            fbeta_score, gold, pred, beta=1, labels=labels, average="macro", **nan, **sw
        ),
        "micro_recall": oracle(
            precision_recall_fscore_support, gold, pred, labels=labels, average="micro", **nan, **sw
        )[1],
        "weighted_precision": oracle(
            precision_recall_fscore_support, gold, pred, labels=[1], average="weighted", **nan, **sw
        )[0],
        "f2": oracle(fbeta_score, gold, pred, beta=2, labels=labels, average="macro", **nan, **sw),
        "fhalf": oracle(fbeta_score, gold <= 1, pred <= 1, beta=0.5, average="binary", **nan, **sw),
        "qwk": oracle(cohen_kappa_score, gold, pred, labels=labels, weights="quadratic", **sw),
        "cohen_kappa": oracle(cohen_kappa_score, gold, pred, **sw),
    }


def check_full(
    data: dict[str, Any], gold: np.ndarray, pred: np.ndarray, weights: np.ndarray
) -> None:
    for name, expected in full_expected(gold, pred, weights).items():
        got = data["metrics"][name]["value"]
        close(math.nan if got is None else got, expected, name)
    counted = weights > 0
    assert data["metrics"]["accuracy"]["n"] == int(counted.sum())
    assert data["metrics"]["qwk"]["n"] == int((counted & (gold != 1) & (pred != 1)).sum())
    assert data["metrics"]["avg_latency_sec"]["n"] == gold.size  # not weighted
    cm = oracle(confusion_matrix, gold, pred, labels=[2, 0], sample_weight=weights)
    assert data["tables"]["confusion_matrix"]["labels"] == ["低", "高"]
    np.testing.assert_allclose(data["tables"]["confusion_matrix"]["matrix"], cm, rtol=0, atol=TOL)
    support = oracle(
        precision_recall_fscore_support, gold, pred, average=None, sample_weight=weights
    )[3]
    np.testing.assert_allclose(data["tables"]["per_class"]["support"], support, rtol=0, atol=TOL)


def test_suite_inputs_and_defaults_reach_the_right_metrics(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(FULL_SUITE, encoding="utf-8")
    built = load_suite(suite)
    args = {name: m.args for name, m in {**built.metrics, **built.tables}.items()}
    weighted = [name for name, a in args.items() if a.get("sample_weight") == "weight"]
    assert sorted(weighted) == sorted(set(args) - {"avg_latency_sec"})
    assert args["macro_f1"]["labels"] == ["低", "高"] and args["f2"]["labels"] == ["低", "高"]
    assert args["weighted_precision"]["labels"] == ["中"]  # its own entry wins
    assert args["precision"]["labels"] is None  # binary: the default does not reach it
    assert args["fhalf"]["labels"] is None
    assert "labels" not in args["accuracy"]  # accuracy has none
    assert args["cohen_kappa"]["labels"] is None and args["per_class"]["labels"] is None
    assert args["confusion_matrix"]["labels"] == ["低", "高"]
    assert args["f2"]["beta"] == 2.0


def test_evaluate_weighted_suite_matches_sklearn_with_intervals_and_slices(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(FULL_SUITE, encoding="utf-8")
    records, gold, pred, weights = full_records(3, 240)
    result = pingce.evaluate(
        suite, records, bootstrap=300, seed=4, slices=("group",), out=tmp_path / "o"
    )
    data = json.loads(result.to_json())
    check_full(data, gold, pred, weights)
    for name in ("accuracy", "weighted_accuracy", "macro_f1", "micro_recall", "f2", "fhalf", "qwk"):
        entry = data["metrics"][name]
        assert entry["ci_low"] is not None and entry["ci_high"] is not None, (name, entry)
        assert entry["ci_low"] <= entry["value"] <= entry["ci_high"], (name, entry)
        assert entry["ci_high"] > entry["ci_low"], name  # the weights vary: so do resamples
    for group in "AB":
        rows = np.array([r["group"] == group for r in records])
        piece = data["slices"][f"group={group}"]
        assert piece["n_records"] == int(rows.sum())
        for name, expected in full_expected(gold[rows], pred[rows], weights[rows]).items():
            got = piece["metrics"][name]["value"]
            close(math.nan if got is None else got, expected, f"slice {group}: {name}")
    # records.jsonl: a record of weight 0 has no accuracy of its own; the others 0 or 1
    lines = (tmp_path / "o" / "records.jsonl").read_text(encoding="utf-8").splitlines()
    own = [json.loads(line)["values"]["accuracy"] for line in lines]
    for w, g, p, v in zip(weights, gold, pred, own, strict=True):
        assert v is None if w == 0 else v == float(g == p)


def test_weighted_suite_from_the_command_line(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(FULL_SUITE, encoding="utf-8")
    records, gold, pred, weights = full_records(5, 90)
    data_file = tmp_path / "records.jsonl"
    data_file.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    out = tmp_path / "out"
    proc = run_pingce(
        "run", str(suite), "--data", str(data_file), "--out", str(out), "--bootstrap", "50"
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    check_full(data, gold, pred, weights)
    assert "sample_weight=weight" in data["signature"]["metrics"]["macro_f1"]
    assert "labels=[低,高]" in data["signature"]["metrics"]["macro_f1"]
    assert "beta=2.0" in data["signature"]["metrics"]["f2"]
    html = (out / "report.html").read_text(encoding="utf-8")
    cm = oracle(confusion_matrix, gold, pred, labels=[2, 0], sample_weight=weights)
    cell = cm[0, 0]
    shown = f"{int(cell):,}" if float(cell).is_integer() else f"{cell:,.4g}"
    assert f">{shown}</text>" in html  # the weighted sum, not a truncated integer


def test_paired_comparison_of_weighted_metrics(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(FULL_SUITE, encoding="utf-8")
    records, gold, pred, weights = full_records(9, 150)
    rng = np.random.default_rng(10)
    other_pred = np.where(rng.random(gold.size) < 0.8, gold, rng.integers(0, 3, size=gold.size))
    baseline = [
        dict(r, pred_level=["高", "中", "低"][int(p)])
        for r, p in zip(records, other_pred, strict=True)
    ]
    result = pingce.compare(suite, records, baseline, bootstrap=200, seed=1)
    for name in ("accuracy", "macro_f1", "qwk"):
        a = full_expected(gold, pred, weights)[name]
        b = full_expected(gold, other_pred, weights)[name]
        entry = result.metrics[name]
        assert entry.delta is not None and abs(entry.delta - (a - b)) <= TOL, name
        assert entry.ci_low is not None and entry.ci_high is not None, name


def test_the_readme_example_suite_runs_and_matches_sklearn(tmp_path: Path) -> None:
    """The YAML under "scikit-learn's options" in docs/suites/contract-risk.md gives
    scikit-learn's values."""
    page = Path(__file__).parent.parent / "docs" / "suites" / "contract-risk.md"
    section = page.read_text(encoding="utf-8").split("# scikit-learn's options", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    suite = tmp_path / "suite.yaml"
    suite.write_text(example, encoding="utf-8")
    records, gold, pred, weights = full_records(12, 80)
    data = json.loads(pingce.evaluate(suite, records, bootstrap=0).to_json())
    sw = {"sample_weight": weights, "zero_division": np.nan}
    expected = {
        "accuracy": oracle(accuracy_score, gold, pred, sample_weight=weights),
        "macro_f1": oracle(fbeta_score, gold, pred, beta=1, labels=[0, 1], average="macro", **sw),
        "micro_recall": oracle(
            precision_recall_fscore_support, gold, pred, labels=[0], average="micro", **sw
        )[1],
        "f2": oracle(fbeta_score, gold, pred, beta=2, labels=[0, 1], average="macro", **sw),
        "qwk": oracle(cohen_kappa_score, gold, pred, weights="quadratic", sample_weight=weights),
    }
    for name, value_ in expected.items():
        close(data["metrics"][name]["value"], value_, name)
    cm = oracle(confusion_matrix, gold, pred, labels=[2, 1, 0], sample_weight=weights)
    np.testing.assert_allclose(data["tables"]["confusion_matrix"]["matrix"], cm, rtol=0, atol=TOL)
