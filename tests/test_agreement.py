"""Inter-rater agreement (pingce.metrics.agreement): Krippendorff's alpha at every level equals
the ``krippendorff`` package's, Fleiss' kappa equals statsmodels', on seeded random ratings and
on Krippendorff's own worked examples; undefined values are null with their reason; intervals,
slices and comparisons come from the engine as for every metric.

Reliability data below are as the ``krippendorff`` package takes them: a ``raters x units``
matrix with NaN where a rater gave no rating. A record is a unit: its ``ratings`` are the
column, null for NaN.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
from pingce.errors import InputError, SuiteError
from pingce.suites import SuiteSpec

from .cli_run import run_pingce

krippendorff = pytest.importorskip("krippendorff")
inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")

LEVELS = ("nominal", "ordinal", "interval", "ratio")
TOL = 1e-9


def random_matrix(rng: np.random.Generator, *, real: bool = False) -> np.ndarray:
    """``raters x units`` ratings (units 5-300, raters 2-7), some missing: integers 1-5 that
    agree more than chance (a true value per unit plus noise), or real values >= 0 with one
    decimal (about a hundred distinct values: the package's memory is units x values²)."""
    units, raters = int(rng.integers(5, 301)), int(rng.integers(2, 8))
    truth = rng.uniform(1, 5, size=units)
    noise = rng.normal(0, rng.uniform(0.2, 2.0), size=(raters, units))
    if real:
        m = np.round(np.clip(2 * truth + 2 * noise, 0, 12), 1)
    else:
        m = np.clip(np.rint(truth + noise), 1, 5)
    m[rng.random(m.shape) < rng.uniform(0, 0.5)] = np.nan
    return m


def records_of(m: np.ndarray, labels: list[str] | None = None) -> list[dict[str, Any]]:
    """One record per unit (column of ``m``); ``labels``: rating ``v`` written as
    ``labels[v - 1]``."""
    out = []
    for u in range(m.shape[1]):
        ratings: list[Any] = []
        for x in m[:, u]:
            if np.isnan(x):
                ratings.append(None)
            elif labels is not None:
                ratings.append(labels[int(x) - 1])
            else:
                ratings.append(int(x) if float(x).is_integer() else float(x))
        out.append({"id": f"u{u}", "ratings": ratings})
    return out


def package_alpha(m: Any, level: str, **kwargs: Any) -> float | None:
    """The package's alpha; None where it refuses (no unit rated twice, one value in all) or
    gives NaN (chance disagreement 0)."""
    try:
        with np.errstate(invalid="ignore", divide="ignore"):
            value = float(
                krippendorff.alpha(reliability_data=m, level_of_measurement=level, **kwargs)
            )
    except ValueError:
        return None
    return None if math.isnan(value) else value


def alpha_suite(**extra: Any) -> SuiteSpec:
    metrics = {level: {"metric": "krippendorff_alpha", "level": level, **extra} for level in LEVELS}
    return SuiteSpec.model_validate({"name": "agreement", "metrics": metrics})


def assert_close(ours: float | None, expected: float | None, what: str) -> None:
    if expected is None:
        assert ours is None, what
    else:
        assert ours is not None and abs(ours - expected) <= TOL, (what, ours, expected)


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_suite(path: Path, metrics: dict[str, dict[str, Any]]) -> Path:
    """A suite YAML (JSON is YAML) with these metrics."""
    path.write_text(json.dumps({"name": "ratings", "metrics": metrics}), encoding="utf-8")
    return path


# ---------------------------------------------------------------------- alpha = the package


@pytest.mark.parametrize("seed", range(25))
def test_alpha_equals_the_package_at_every_level(seed: int) -> None:
    """Integer ratings 1-5 (every level) and real ratings (interval, ratio), seeded: pingce's
    alpha equals krippendorff.alpha to 1e-9, or both are undefined."""
    rng = np.random.default_rng(seed)
    m = random_matrix(rng)
    result = pingce.evaluate(alpha_suite(), records_of(m), bootstrap=0)
    for level in LEVELS:
        assert_close(result.metrics[level].value, package_alpha(m, level), f"{seed} {level}")
    real = random_matrix(rng, real=True)
    suite = SuiteSpec.model_validate(
        {
            "name": "real",
            "metrics": {
                level: {"metric": "krippendorff_alpha", "level": level}
                for level in ("interval", "ratio")
            },
        }
    )
    result = pingce.evaluate(suite, records_of(real), bootstrap=0)
    for level in ("interval", "ratio"):
        assert_close(
            result.metrics[level].value, package_alpha(real, level), f"{seed} real {level}"
        )


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_through_a_suite_file(tmp_path: Path, level: str) -> None:
    """A suite YAML naming ``krippendorff_alpha`` and a JSON-lines file of ratings, as a user
    writes them: the value is the package's (real ratings for interval and ratio)."""
    rng = np.random.default_rng(100 + LEVELS.index(level))
    m = random_matrix(rng, real=level in ("interval", "ratio"))
    data = write_jsonl(tmp_path / "ratings.jsonl", records_of(m))
    suite = write_suite(
        tmp_path / "suite.yaml",
        {"alpha": {"metric": "krippendorff_alpha", "ratings": "ratings", "level": level}},
    )
    result = pingce.evaluate(suite, data, bootstrap=0)
    assert_close(result.metrics["alpha"].value, package_alpha(m, level), level)
    assert result.metrics["alpha"].n == int((np.sum(~np.isnan(m), axis=0) >= 2).sum())


def test_text_labels_and_a_scale_of_values() -> None:
    """Labels given as text: nominal needs no order; ordinal reads the order from ``values``;
    a scale with values nobody used gives the same alpha (a value no rating has adds nothing)."""
    rng = np.random.default_rng(7)
    names = ["很差", "差", "中", "好", "很好"]
    for _ in range(5):
        m = random_matrix(rng)
        text = np.where(
            np.isnan(m),
            "nan",
            np.asarray(names, dtype=object)[np.nan_to_num(m, nan=1).astype(int) - 1],
        )
        suite = SuiteSpec.model_validate(
            {
                "name": "labels",
                "metrics": {
                    "nominal": {"metric": "krippendorff_alpha", "level": "nominal"},
                    "ordinal": {
                        "metric": "krippendorff_alpha",
                        "level": "ordinal",
                        "values": ["极差", *names, "极好"],
                    },
                },
            }
        )
        result = pingce.evaluate(suite, records_of(m, names), bootstrap=0)
        text = text.astype(str)
        assert_close(result.metrics["nominal"].value, package_alpha(text, "nominal"), "nominal")
        assert_close(
            result.metrics["ordinal"].value,
            package_alpha(text, "ordinal", value_domain=names),
            "ordinal",
        )
    m = random_matrix(rng)
    wide = pingce.evaluate(alpha_suite(values=list(range(0, 10))), records_of(m), bootstrap=0)
    for level in LEVELS:
        assert_close(wide.metrics[level].value, package_alpha(m, level), f"wide {level}")


# ---------------------------------------------------------------------------- worked examples

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: four observers,
# twelve units, missing data; also the krippendorff package's docstring
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
]
PUBLISHED_2011 = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}

# the package's first docstring example: three coders, fifteen units
DOCSTRING = [
    [np.nan, np.nan, np.nan, np.nan, np.nan, 3, 4, 1, 2, 1, 1, 3, 3, np.nan, 3],
    [1, np.nan, 2, 1, 3, 3, 4, 3, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan],
    [np.nan, np.nan, 2, 1, 3, 4, 4, np.nan, 2, 1, 1, 3, 3, np.nan, 4],
]
PUBLISHED_DOCSTRING = {"nominal": 0.691358, "interval": 0.810845}


def test_krippendorffs_worked_example() -> None:
    """The published figures of Krippendorff (2011) at three decimals, the package's to 1e-9;
    the same data as text labels: nominal 0.743, ordinal (with ``values``) 0.815."""
    m = np.asarray(KRIPPENDORFF_2011, dtype=float)
    result = pingce.evaluate(alpha_suite(), records_of(m), bootstrap=0)
    for level, published in PUBLISHED_2011.items():
        value = result.metrics[level].value
        assert value is not None and round(value, 3) == published, level
        assert_close(value, package_alpha(m, level), level)
    names = ["very low", "low", "mid", "high", "very high"]
    suite = SuiteSpec.model_validate(
        {
            "name": "labels",
            "metrics": {
                "nominal": {"metric": "krippendorff_alpha", "level": "nominal"},
                "ordinal": {"metric": "krippendorff_alpha", "level": "ordinal", "values": names},
            },
        }
    )
    labelled = pingce.evaluate(suite, records_of(m, names), bootstrap=0)
    assert round(labelled.metrics["nominal"].value or 0, 3) == 0.743
    assert round(labelled.metrics["ordinal"].value or 0, 3) == 0.815
    m = np.asarray(DOCSTRING, dtype=float)
    result = pingce.evaluate(alpha_suite(), records_of(m), bootstrap=0)
    for level, published in PUBLISHED_DOCSTRING.items():
        assert round(result.metrics[level].value or 0, 6) == published, level
    for level in LEVELS:
        assert_close(result.metrics[level].value, package_alpha(m, level), level)


def test_perfect_agreement_is_one() -> None:
    records = [
        {"id": "a", "ratings": [1, 1, None]},
        {"id": "b", "ratings": [3, 3, 3]},
        {"id": "c", "ratings": [None, 4, 4]},
        {"id": "d", "ratings": [2]},  # one rating: pairs with nothing, adds nothing
    ]
    suite = SuiteSpec.model_validate(
        {
            "name": "perfect",
            "metrics": {
                **{lv: {"metric": "krippendorff_alpha", "level": lv} for lv in LEVELS},
            },
        }
    )
    result = pingce.evaluate(suite, records, bootstrap=0)
    for level in LEVELS:
        assert result.metrics[level].value == pytest.approx(1.0, abs=1e-12), level
        assert result.metrics[level].n == 3
    kappa = pingce.evaluate(
        SuiteSpec.model_validate({"name": "k", "metrics": {"k": {"metric": "fleiss_kappa"}}}),
        [{"id": "a", "ratings": ["x", "x"]}, {"id": "b", "ratings": ["y", "y"]}],
        bootstrap=0,
    )
    assert kappa.metrics["k"].value == pytest.approx(1.0, abs=1e-12)


def test_undefined_values_are_null_with_their_reason(tmp_path: Path) -> None:
    """Everyone used one value (chance disagreement 0), or no unit was rated twice: null with
    the reason in results.json, never 0."""
    metrics = {
        **{lv: {"metric": "krippendorff_alpha", "level": lv} for lv in LEVELS},
        "kappa": {"metric": "fleiss_kappa"},
    }
    suite = write_suite(tmp_path / "suite.yaml", metrics)
    one_value = write_jsonl(
        tmp_path / "same.jsonl", [{"id": f"r{i}", "ratings": [0.3, 0.3, 0.3]} for i in range(4)]
    )
    pingce.evaluate(suite, one_value, out=tmp_path / "same")
    saved = json.loads((tmp_path / "same" / "results.json").read_text(encoding="utf-8"))
    for name in metrics:
        entry = saved["metrics"][name]
        assert entry["value"] is None, name
        assert "0/0" in entry["undefined_reason"], name
        assert entry["ci_low"] is None and entry["ci_high"] is None
    alone = write_jsonl(
        tmp_path / "alone.jsonl",
        [{"id": "a", "ratings": [1, None]}, {"id": "b", "ratings": [None, 2]}],
    )
    alpha_only = {lv: metrics[lv] for lv in LEVELS}
    pingce.evaluate(write_suite(tmp_path / "a.yaml", alpha_only), alone, out=tmp_path / "alone")
    saved = json.loads((tmp_path / "alone" / "results.json").read_text(encoding="utf-8"))
    for level in LEVELS:
        entry = saved["metrics"][level]
        assert entry["value"] is None and entry["n"] == 0
        assert "rated at least twice" in entry["undefined_reason"]


def test_no_value_per_record(tmp_path: Path) -> None:
    """Agreement is a property of a set of units: records.jsonl has no per-record value."""
    m = random_matrix(np.random.default_rng(3))
    pingce.evaluate(alpha_suite(), records_of(m), bootstrap=0, out=tmp_path / "run")
    lines = (tmp_path / "run" / "records.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(not json.loads(line).get("values") for line in lines)


# ------------------------------------------------------------------- Fleiss' kappa = statsmodels


@pytest.mark.parametrize("seed", range(20))
def test_fleiss_kappa_equals_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    units, raters, k = int(rng.integers(5, 301)), int(rng.integers(2, 8)), int(rng.integers(2, 7))
    truth = rng.integers(0, k, size=units)
    noisy = rng.random((units, raters)) < rng.uniform(0.1, 0.9)
    ratings = np.where(noisy, rng.integers(0, k, size=(units, raters)), truth[:, None])
    labels = [f"类{j}" for j in range(k)] if seed % 2 else list(range(k))
    records = [
        {"id": f"u{i}", "ratings": [labels[int(v)] for v in row]} for i, row in enumerate(ratings)
    ]
    table = np.stack([np.bincount(row, minlength=k) for row in ratings])
    expected = float(inter_rater.fleiss_kappa(table, method="fleiss"))
    suite = SuiteSpec.model_validate({"name": "k", "metrics": {"k": {"metric": "fleiss_kappa"}}})
    result = pingce.evaluate(suite, records, bootstrap=0)
    assert_close(result.metrics["k"].value, expected, f"seed {seed}")
    assert result.metrics["k"].n == units


# ------------------------------------------------------------------------------- input errors


def _error(tmp_path: Path, metric: dict[str, Any], records: list[dict[str, Any]]) -> InputError:
    suite = write_suite(tmp_path / "suite.yaml", {"m": metric})
    data = write_jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(InputError) as caught:
        pingce.evaluate(suite, data, bootstrap=0)
    error = caught.value
    assert error.source is not None and error.source.endswith("bad.jsonl")
    assert error.field == "ratings"
    return error


@pytest.mark.parametrize(
    ("metric", "bad", "value", "says"),
    [
        ({"metric": "krippendorff_alpha", "level": "interval"}, [1, "high"], "high", "number"),
        ({"metric": "krippendorff_alpha", "level": "ratio"}, [1, -2], -2, ">= 0"),
        ({"metric": "krippendorff_alpha", "level": "ordinal"}, [1, "low"], "low", "values"),
        (
            {"metric": "krippendorff_alpha", "level": "ordinal", "values": ["low", "mid"]},
            ["low", "hi"],
            "hi",
            "one of the suite's values",
        ),
        ({"metric": "fleiss_kappa", "values": ["a", "b"]}, ["a", "c"], "c", "values"),
    ],
)
def test_a_rating_off_the_scale_is_an_input_error(
    tmp_path: Path, metric: dict[str, Any], bad: list[Any], value: Any, says: str
) -> None:
    good = [{"id": "a", "ratings": bad[:1] * 2}, {"id": "b", "ratings": bad[:1] * 2}]
    error = _error(tmp_path, metric, [*good, {"id": "c", "ratings": bad}])
    assert error.line == 3 and error.value == value and says in str(error)


def test_fleiss_needs_the_same_number_of_raters(tmp_path: Path) -> None:
    records = [
        {"id": "a", "ratings": ["x", "y", "x"]},
        {"id": "b", "ratings": ["x", None, "x"]},
    ]
    error = _error(tmp_path, {"metric": "fleiss_kappa"}, records)
    assert error.line == 2 and error.value == ["x", None, "x"]
    assert "same number of ratings" in str(error)


def test_ratings_must_be_a_list_of_scalars(tmp_path: Path) -> None:
    for bad in (3, [1, {"a": 1}], [1, [2]]):
        suite = write_suite(
            tmp_path / "suite.yaml", {"m": {"metric": "krippendorff_alpha", "level": "nominal"}}
        )
        data = write_jsonl(tmp_path / "bad.jsonl", [{"id": "a", "ratings": bad}])
        with pytest.raises(InputError, match="ratings"):
            pingce.evaluate(suite, data, bootstrap=0)


@pytest.mark.parametrize(
    "metric",
    [
        {"metric": "krippendorff_alpha"},  # the level of measurement is the user's to say
        {"metric": "krippendorff_alpha", "level": "ordinal", "values": [1]},
        {"metric": "krippendorff_alpha", "level": "ordinal", "values": [1, 2, 1.0]},
        {"metric": "krippendorff_alpha", "level": "interval", "values": ["a", "b"]},
        {"metric": "krippendorff_alpha", "level": "ratio", "values": [-1, 2]},
        {"metric": "krippendorff_alpha", "level": "cardinal"},
    ],
)
def test_bad_arguments_are_suite_errors(tmp_path: Path, metric: dict[str, Any]) -> None:
    suite = write_suite(tmp_path / "suite.yaml", {"m": metric})
    data = write_jsonl(tmp_path / "r.jsonl", [{"id": "a", "ratings": [1, 2]}])
    with pytest.raises(SuiteError):
        pingce.evaluate(suite, data, bootstrap=0)


# ------------------------------------------------------------- intervals, slices, comparisons


def test_the_bootstrap_interval_is_the_bootstrap_over_units() -> None:
    """pingce's interval resamples records, i.e. units: its percentile quantiles agree with a
    bootstrap done by hand (units resampled, alpha recomputed by the package) within Monte
    Carlo error. With B draws a p-quantile's standard error is about sqrt(p(1-p)/B) / f(q_p),
    f the density there (normal: phi(z_p)/sd); two independent estimates differ by sqrt(2)
    times that; 4.5 of those is the tolerance (seeded, so the test is deterministic; at these
    sizes a correct bootstrap fails it with probability about 1e-5 per quantile). The BCa
    interval contains the point value."""
    from statistics import NormalDist

    rng = np.random.default_rng(2026)
    units, draws = 150, 1000
    truth = rng.integers(1, 6, size=units)
    m = np.clip(
        truth[None, :] + rng.integers(-1, 2, size=(3, units)) * (rng.random((3, units)) < 0.5), 1, 5
    ).astype(float)
    m[rng.random(m.shape) < 0.2] = np.nan
    records = records_of(m)
    suite = alpha_suite()
    bca = pingce.evaluate(suite, records, bootstrap=draws, seed=5)
    for level in LEVELS:
        r = bca.metrics[level]
        assert r.value is not None and r.ci_low is not None and r.ci_high is not None
        assert r.ci_low <= r.value <= r.ci_high, level
    by_hand = {level: np.empty(draws) for level in ("ordinal", "interval")}
    hand_rng = np.random.default_rng(11)
    for b in range(draws):
        sample = m[:, hand_rng.integers(0, units, size=units)]
        for level in by_hand:
            by_hand[level][b] = krippendorff.alpha(
                reliability_data=sample, level_of_measurement=level
            )
    for ci_level in (0.95, 0.5):
        result = pingce.evaluate(
            suite, records, bootstrap=draws, seed=5, ci_method="percentile", ci_level=ci_level
        )
        for level, values in by_hand.items():
            sd = float(values.std())
            for p, ours in (
                (0.5 - ci_level / 2, result.metrics[level].ci_low),
                (0.5 + ci_level / 2, result.metrics[level].ci_high),
            ):
                density = NormalDist().pdf(NormalDist().inv_cdf(p)) / sd
                se = math.sqrt(p * (1 - p) / draws) / density
                expected = float(np.quantile(values, p))
                assert ours is not None and abs(ours - expected) <= 4.5 * math.sqrt(2) * se, (
                    level,
                    p,
                    ours,
                    expected,
                    se,
                )


def _grouped(m: np.ndarray, groups: list[str]) -> list[dict[str, Any]]:
    return [dict(r, group=g) for r, g in zip(records_of(m), groups, strict=True)]


def test_slices_are_alpha_over_their_records() -> None:
    rng = np.random.default_rng(21)
    m = random_matrix(rng)
    groups = [str(g) for g in rng.choice(["新闻", "法律", "医疗"], size=m.shape[1])]
    result = pingce.evaluate(alpha_suite(), _grouped(m, groups), bootstrap=50, slices=["group"])
    for value in set(groups):
        part = m[:, [g == value for g in groups]]
        metrics = result.slices[f"group={value}"].metrics
        for level in LEVELS:
            assert_close(metrics[level].value, package_alpha(part, level), f"{value} {level}")


def test_compare_two_rating_files(tmp_path: Path) -> None:
    """``pingce compare`` of two raters' panels on the same units: each side's value is the
    package's on that side's ratings (the baseline never uses 5: the two sides are laid over
    one scale), delta their difference, with a paired interval and tests; the command line
    writes comparison.json."""
    rng = np.random.default_rng(33)
    truth = rng.integers(1, 6, size=120)
    close = np.clip(
        truth[None, :] + rng.integers(-1, 2, size=(3, 120)) * (rng.random((3, 120)) < 0.3), 1, 5
    ).astype(float)
    far = np.clip(truth[None, :] + rng.integers(-2, 3, size=(3, 120)), 1, 4).astype(float)
    far[rng.random(far.shape) < 0.2] = np.nan
    a = write_jsonl(tmp_path / "a.jsonl", records_of(close))
    b = write_jsonl(tmp_path / "b.jsonl", records_of(far))
    metrics = {
        **{lv: {"metric": "krippendorff_alpha", "level": lv} for lv in LEVELS},
        "kappa": {"metric": "fleiss_kappa"},
    }
    suite = write_suite(tmp_path / "suite.yaml", {k: v for k, v in metrics.items() if k != "kappa"})
    result = pingce.compare(suite, a, b, bootstrap=200)
    for level in LEVELS:
        c = result.metrics[level]
        assert_close(c.candidate, package_alpha(close, level), f"candidate {level}")
        assert_close(c.baseline, package_alpha(far, level), f"baseline {level}")
        assert c.delta is not None and c.ci_low is not None and c.ci_high is not None
        assert c.ci_low <= c.delta <= c.ci_high and c.p_value is not None
    done = run_pingce(
        "compare",
        str(suite),
        "--data",
        str(a),
        "--baseline",
        str(b),
        "--bootstrap",
        "100",
        "--out",
        str(tmp_path / "cmp"),
    )
    assert done.returncode == 0, done.stderr
    saved = json.loads((tmp_path / "cmp" / "comparison.json").read_text(encoding="utf-8"))
    assert_close(saved["metrics"]["ordinal"]["candidate"], package_alpha(close, "ordinal"), "cli")


def test_pieces_with_a_scale_merge_into_the_local_run(tmp_path: Path) -> None:
    """With ``values:`` every piece of ``--engine ray`` lays its rows over one scale: 4 pieces
    scored alone and merged (the driver's steps, without Ray) give the local run's values and
    Poisson intervals, for every level and Fleiss' kappa (a piece may not use every value)."""
    from pingce.options import RunOptions

    from .test_ray_engine import local, sharded

    rng = np.random.default_rng(44)
    truth = rng.integers(1, 6, size=90)
    m = np.clip(truth[None, :] + rng.integers(-1, 2, size=(3, 90)), 1, 5).astype(float)
    data = write_jsonl(tmp_path / "ratings.jsonl", records_of(m))
    scale = [1, 2, 3, 4, 5]
    metrics: dict[str, dict[str, Any]] = {
        lv: {"metric": "krippendorff_alpha", "level": lv, "values": scale} for lv in LEVELS
    }
    metrics["kappa"] = {"metric": "fleiss_kappa", "values": scale}
    suite = str(write_suite(tmp_path / "suite.yaml", metrics))
    options = {"bootstrap": 200, "seed": 4, "ci_method": "percentile"}
    want = local(suite, data, **options)
    got = sharded(suite, data, RunOptions(bootstrap_method="poisson", **options), 4)
    assert got["pieces"] >= 3
    for name in metrics:  # the pieces' sums add in another order: equal to rounding
        for end in ("value", "ci_low", "ci_high"):
            ours, theirs = got["metrics"][name][end], want["metrics"][name][end]
            assert abs(ours - theirs) <= 1e-12, (name, end, ours, theirs)
    for level in LEVELS:
        assert_close(want["metrics"][level]["value"], package_alpha(m, level), level)


def test_interval_ratings_far_from_zero() -> None:
    """The moment form's documented limit: ratings around 10^4 with a spread of about 1 keep
    about 8 digits of alpha; around 10^6 (variance below a billionth of the mean square) they
    read as one value, null with the reason, never a number made of rounding."""
    rng = np.random.default_rng(8)
    suite = SuiteSpec.model_validate(
        {"name": "far", "metrics": {"a": {"metric": "krippendorff_alpha", "level": "interval"}}}
    )
    base = np.round(rng.normal(3, 1, size=(4, 200)), 1)
    base[rng.random(base.shape) < 0.2] = np.nan
    for offset, tol in ((0.0, TOL), (1e4, 1e-6)):
        m = base + offset
        result = pingce.evaluate(suite, records_of(m), bootstrap=0)
        value, expected = result.metrics["a"].value, package_alpha(m, "interval")
        assert value is not None and expected is not None and abs(value - expected) <= tol
    far = pingce.evaluate(suite, records_of(base + 1e6), bootstrap=0).metrics["a"]
    assert far.value is None and "to rounding" in (far.undefined_reason or "")


def test_pingce_run_with_the_metric_named_as_its_key(tmp_path: Path) -> None:
    """The suite as a user writes it (``metrics: {krippendorff_alpha: {ratings: ratings,
    level: ordinal}}``), run by the command line: results.json holds the package's alpha with
    an interval around it; a rating off the scale exits 2 naming file, line, field and value."""
    m = random_matrix(np.random.default_rng(55))
    data = write_jsonl(tmp_path / "ratings.jsonl", records_of(m))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: panel\nmetrics:\n  krippendorff_alpha: {ratings: ratings, level: ordinal}\n"
        "  fleiss_kappa: {ratings: ratings}\n",
        encoding="utf-8",
    )
    good = write_jsonl(tmp_path / "full.jsonl", records_of(np.nan_to_num(m, nan=3.0)))
    suite_alpha = tmp_path / "alpha.yaml"
    suite_alpha.write_text(
        "name: panel\nmetrics:\n  krippendorff_alpha: {ratings: ratings, level: ordinal}\n",
        encoding="utf-8",
    )
    done = run_pingce("run", str(suite_alpha), "--data", str(data), "--out", str(tmp_path / "o"))
    assert done.returncode == 0, done.stderr
    saved = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    entry = saved["metrics"]["krippendorff_alpha"]
    assert_close(entry["value"], package_alpha(m, "ordinal"), "cli")
    assert entry["ci_low"] <= entry["value"] <= entry["ci_high"]
    done = run_pingce("run", str(suite), "--data", str(good), "--out", str(tmp_path / "k"))
    assert done.returncode == 0, done.stderr
    bad = write_jsonl(
        tmp_path / "bad.jsonl", [{"id": "a", "ratings": [1, 2]}, {"id": "b", "ratings": [1, "x"]}]
    )
    done = run_pingce("run", str(suite_alpha), "--data", str(bad), "--out", str(tmp_path / "b"))
    assert done.returncode == 2
    assert "bad.jsonl:2: field 'ratings':" in done.stderr and '(got "x")' in done.stderr


NUMBERS = ("nominal", "interval", "ratio")


def test_every_rating_a_different_number() -> None:
    """Ratings that are all different numbers (K = every rating; not ordinal, whose rows are
    K x K): alpha equals the package's, and a bootstrap's thousand resamples finalise in one
    matrix product (ratio: the values come back from the pooled sums) rather than one K x K
    matrix a resample."""
    rng = np.random.default_rng(9)
    m = rng.uniform(0.5, 10, size=(7, 60)) * rng.uniform(0.8, 1.2, size=60)
    m[rng.random(m.shape) < 0.1] = np.nan
    suite = SuiteSpec.model_validate(
        {
            "name": "reals",
            "metrics": {lv: {"metric": "krippendorff_alpha", "level": lv} for lv in NUMBERS},
        }
    )
    result = pingce.evaluate(suite, records_of(m), bootstrap=1000)
    for level in NUMBERS:
        r = result.metrics[level]
        assert_close(r.value, package_alpha(m, level), level)
        assert r.ci_low is not None and r.ci_high is not None and r.ci_low <= r.ci_high


def test_ordinal_over_too_many_values_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ordinal rows are K x K per record: past a memory bound the run stops saying why (the
    bound lowered here: 40 records of 5 values hold 1,000 numbers)."""
    from pingce.metrics import agreement

    monkeypatch.setattr(agreement, "_ORDINAL_CELLS", 999)
    m = np.tile(np.arange(1.0, 6.0), (2, 8))
    suite = SuiteSpec.model_validate(
        {"name": "o", "metrics": {"a": {"metric": "krippendorff_alpha", "level": "ordinal"}}}
    )
    with pytest.raises(InputError, match="5 x 5 matrix per record"):
        pingce.evaluate(suite, records_of(m), bootstrap=0)
    monkeypatch.setattr(agreement, "_ORDINAL_CELLS", 1000)
    assert pingce.evaluate(suite, records_of(m), bootstrap=0).metrics["a"].value == 1.0


def test_two_stored_runs_with_other_values_and_no_scale_say_why(tmp_path: Path) -> None:
    """Two stored runs whose raters used different values, without the suite's ``values:``,
    cannot pair their rows column by column: pingce compare RUN_A RUN_B says which metric and
    what to give (it was a numpy broadcast traceback), and with ``values:`` it compares."""
    from pingce.errors import SuiteError

    a = write_jsonl(tmp_path / "a.jsonl", records_of(np.array([[1.0, 2, 3, 4], [1, 2, 3, 5]])))
    b = write_jsonl(tmp_path / "b.jsonl", records_of(np.array([[1.0, 2, 3, 4], [1, 2, 4, 4]])))
    suite = write_suite(
        tmp_path / "s.yaml", {"m": {"metric": "krippendorff_alpha", "level": "nominal"}}
    )
    pingce.evaluate(suite, a, bootstrap=0, out=tmp_path / "ra")
    pingce.evaluate(suite, b, bootstrap=0, out=tmp_path / "rb")
    with pytest.raises(SuiteError, match=r"metric m: .*different layouts.*values:"):
        pingce.compare_runs(tmp_path / "ra", tmp_path / "rb", suite=suite, bootstrap=0)
    scaled = {"m": {"metric": "krippendorff_alpha", "level": "nominal", "values": [1, 2, 3, 4, 5]}}
    suite = write_suite(tmp_path / "s2.yaml", scaled)
    pingce.evaluate(suite, a, bootstrap=0, out=tmp_path / "sa")
    pingce.evaluate(suite, b, bootstrap=0, out=tmp_path / "sb")
    compared = pingce.compare_runs(tmp_path / "sa", tmp_path / "sb", suite=suite, bootstrap=0)
    assert compared.metrics["m"].delta is not None


def test_pieces_without_a_scale_that_use_other_values_say_why(tmp_path: Path) -> None:
    """Without ``values:``, pieces of ``--engine ray`` whose raters used different values give
    blocks of different widths: the merge says which statistic and what to give (it was a
    numpy broadcast traceback)."""
    from pingce.errors import SuiteError
    from pingce.options import RunOptions

    from .test_ray_engine import sharded

    first = np.array([[1.0, 2, 3, 1, 2, 3], [1, 2, 3, 1, 2, 2]])
    second = np.array([[4.0, 5, 4, 5, 4, 5], [4, 5, 5, 5, 4, 4]])
    data = write_jsonl(tmp_path / "ratings.jsonl", records_of(np.hstack([first, second])))
    suite = str(
        write_suite(
            tmp_path / "s.yaml", {"m": {"metric": "krippendorff_alpha", "level": "nominal"}}
        )
    )
    options = RunOptions(bootstrap_method="poisson", bootstrap=20)
    with pytest.raises(SuiteError, match=r"different layouts.*values: in the suite"):
        sharded(suite, data, options, 2)
