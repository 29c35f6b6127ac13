"""Suites with a ``unit`` (tcm-dialogue: ``unit: dialogue_id``): the bootstrap resamples whole
units and ``--sample`` draws whole units.

Oracles: ``scipy.stats.bootstrap`` over per-dialogue sums (``paired=True`` resamples dialogues,
the textbook cluster bootstrap; Monte-Carlo agreement), and the percentile interval written out
on the same resample stream (exact agreement).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.stats

import pingce
from pingce.errors import InputError, OptionError, SuiteError
from pingce.stats import resample_indices
from pingce.suites import load_suite


def clustered_records(dialogues: int, turns: int, seed: int) -> list[dict[str, Any]]:
    """Dialogues whose turns are alike: an emergency dialogue tends to be missed on every turn."""
    rng = np.random.default_rng(seed)
    records = []
    for d in range(dialogues):
        careless = rng.random() < 0.4
        for t in range(turns):
            missed = rng.random() < (0.85 if careless else 0.1)
            records.append(
                {
                    "dialogue_id": f"d{d:03d}",
                    "turn": t + 1,
                    "status": "INQUIRY_ONLY" if missed else "EMERGENCY_ABORT",
                    "gt_is_emergency": True,
                }
            )
    order = rng.permutation(len(records))  # record order must not matter
    return [records[i] for i in order]


def per_dialogue(records: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Illegal turns and turns per dialogue, dialogues in sorted id order."""
    ids = sorted({r["dialogue_id"] for r in records})
    where = {d: i for i, d in enumerate(ids)}
    illegal, turns = np.zeros(len(ids)), np.zeros(len(ids))
    for r in records:
        i = where[r["dialogue_id"]]
        turns[i] += 1
        illegal[i] += r["status"] != "EMERGENCY_ABORT"
    return illegal, turns


def spec(unit: str | None) -> Any:
    base = load_suite("tcm-dialogue").spec.model_copy(deep=True)
    base.metrics = {"funnel_adherence": {}}
    base.unit = unit
    return base


def test_percentile_interval_is_the_quantiles_over_resampled_dialogues() -> None:
    records = clustered_records(25, 4, seed=3)
    illegal, turns = per_dialogue(records)
    ours = pingce.evaluate(
        spec("dialogue_id"),
        records,
        bootstrap=400,
        seed=7,
        ci_method="percentile",
        bootstrap_stream="indices",  # the dialogue indices drawn again below
    ).metrics["funnel_adherence"]
    theta = np.array(
        [
            1 - illegal[index].sum() / turns[index].sum()
            for index in resample_indices(len(turns), 400, 7)
        ]
    )
    assert ours.value == pytest.approx(1 - illegal.sum() / turns.sum(), abs=1e-15)
    assert ours.ci_low == pytest.approx(float(np.quantile(theta, 0.025)), abs=1e-12)
    assert ours.ci_high == pytest.approx(float(np.quantile(theta, 0.975)), abs=1e-12)


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_cluster_interval_agrees_with_scipy_paired_bootstrap_over_dialogues(method: str) -> None:
    records = clustered_records(60, 5, seed=11)
    illegal, turns = per_dialogue(records)

    def statistic(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return 1 - a.sum(axis=axis) / b.sum(axis=axis)

    ref = scipy.stats.bootstrap(
        (illegal, turns),
        statistic,
        paired=True,
        vectorized=True,
        n_resamples=9999,
        method=method,
        rng=np.random.default_rng(5),
    )
    ours = pingce.evaluate(
        spec("dialogue_id"), records, bootstrap=9999, seed=2024, ci_method=method.lower()
    ).metrics["funnel_adherence"]
    tol = 0.25 * float(ref.standard_error)  # ~5 sd of the Monte-Carlo error (see test_stats)
    assert ours.ci_low is not None and ours.ci_high is not None
    assert abs(ours.ci_low - ref.confidence_interval.low) <= tol, (ref, ours)
    assert abs(ours.ci_high - ref.confidence_interval.high) <= tol, (ref, ours)


def test_resampling_dialogues_widens_the_interval_of_correlated_turns() -> None:
    records = clustered_records(40, 8, seed=2)
    by_dialogue = pingce.evaluate(spec("dialogue_id"), records, bootstrap=2000, seed=1)
    by_turn = pingce.evaluate(spec(None), records, bootstrap=2000, seed=1)
    a, b = by_dialogue.metrics["funnel_adherence"], by_turn.metrics["funnel_adherence"]
    assert a.value == b.value  # the estimate is the same; only its uncertainty differs
    assert a.ci_low is not None and a.ci_high is not None
    assert b.ci_low is not None and b.ci_high is not None
    # turns of a dialogue are alike, so the turn-level interval is too narrow by ~sqrt(design
    # effect); with 8 turns and this correlation the ratio is well above 1.5
    assert (a.ci_high - a.ci_low) / (b.ci_high - b.ci_low) > 1.5


def test_one_turn_dialogues_resample_exactly_as_records() -> None:
    records = clustered_records(50, 1, seed=4)
    records.sort(key=lambda r: r["dialogue_id"])  # unit order = record order
    a = pingce.evaluate(spec("dialogue_id"), records, bootstrap=300, seed=9)
    b = pingce.evaluate(spec(None), records, bootstrap=300, seed=9)
    assert a.metrics["funnel_adherence"] == b.metrics["funnel_adherence"]


def test_slices_resample_the_dialogues_inside_the_slice() -> None:
    records = clustered_records(30, 4, seed=8)
    for r in records:
        r["site"] = "north" if int(r["dialogue_id"][1:]) % 2 else "south"
    result = pingce.evaluate(
        spec("dialogue_id"), records, bootstrap=300, seed=3, slices=["site"], ci_method="percentile"
    )
    north = [r for r in records if r["site"] == "north"]
    illegal, turns = per_dialogue(north)
    got = result.slices["site=north"].metrics["funnel_adherence"]
    assert got.value == pytest.approx(1 - illegal.sum() / turns.sum())
    assert got.ci_low is not None and got.ci_high is not None
    assert got.ci_low <= got.value <= got.ci_high


def test_sample_draws_whole_dialogues() -> None:
    records = clustered_records(20, 3, seed=6)
    result = pingce.evaluate("tcm-dialogue", records, bootstrap=0, sample=5, seed=1)
    assert result.sampling is not None
    assert result.sampling.unit == "dialogue_id"
    assert result.sampling.n_population == 20 and result.sampling.n_sampled == 5
    assert result.n_records == 15  # 5 dialogues x 3 turns, every turn of each
    with pytest.raises(OptionError, match="units of dialogue_id"):
        pingce.evaluate("tcm-dialogue", records, bootstrap=0, sample=21)


def test_stratified_sample_of_dialogues_uses_each_dialogue_s_first_record() -> None:
    records = clustered_records(24, 2, seed=5)
    for r in records:
        r["site"] = "a" if int(r["dialogue_id"][1:]) < 8 else "b"
    result = pingce.evaluate(
        "tcm-dialogue", records, bootstrap=0, sample=6, stratify="site", seed=2
    )
    assert result.sampling is not None
    counts = {s.value: s.sampled for s in result.sampling.strata}
    assert counts == {"a": 3, "b": 3}
    assert result.n_records == 12


def test_unit_with_a_metric_that_does_not_add_up_is_a_suite_error(tmp_path: Any) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        "name: t\nunit: session\nmetrics: {avg_latency_sec: {}, p95_latency_sec: {}}\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert info.value.key == "metrics.p95_latency_sec"
    assert "session" in str(info.value)


def test_a_record_without_a_unit_is_an_input_error(tmp_path: Any) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text("name: t\nunit: session\nmetrics: {avg_latency_sec: {}}\n", encoding="utf-8")
    records = [{"session": "s1", "latency_sec": 1.0}, {"latency_sec": 2.0}]
    with pytest.raises(InputError) as info:
        pingce.evaluate(load_suite(path).spec, records, bootstrap=10)
    assert (info.value.line, info.value.field) == (2, "session")


def test_units_are_told_apart_as_json_values() -> None:
    from pingce.engine.groups import unit_codes
    from pingce.records import FieldSpec, load_records

    table = load_records(
        [{"session": v, "latency_sec": 1.0} for v in (1, "1", 1.0, "a", 2)],
        [FieldSpec("session", "json"), FieldSpec("latency_sec", "number")],
    )
    codes = unit_codes(table, "session")
    assert codes is not None
    assert codes[0] == codes[2] != codes[1]  # 1 == 1.0 as JSON numbers; "1" is a string
    assert len(set(codes.tolist())) == 4


def test_a_slice_that_splits_dialogues_has_no_dialogue_values() -> None:
    example = Path(__file__).resolve().parent.parent / "examples" / "tcm_dialogue"
    records = [json.loads(line) for line in (example / "records.jsonl").read_text().splitlines()]
    by_status = pingce.evaluate("tcm-dialogue", records, bootstrap=0, slices=["status"])
    part = by_status.slices["status=DEFINITIVE"].metrics
    for name in ("incremental_hit_slope", "turns_to_stability", "ambiguity_resolution_rate"):
        assert part[name].value is None and "varies within dialogue_id" in (
            part[name].undefined_reason or ""
        ), name
    assert part["effective_recall"].value == pytest.approx(7 / 8)  # a turn metric: defined
    for r in records:  # a field constant within each dialogue keeps every metric
        r["site"] = "a" if r["dialogue_id"] in ("d1", "d2", "d3") else "b"
    by_site = pingce.evaluate("tcm-dialogue", records, bootstrap=0, slices=["site"])
    tts = by_site.slices["site=a"].metrics["turns_to_stability"]
    assert tts.value == pytest.approx((2 + 3 + 3) / 3)  # d1 locks at turn 3; d2, d3 never


def _unit_codes_by_sorting(values: list[Any]) -> list[int]:
    """The reference: every key sorted with one key function (strings first, others by repr)."""
    from pingce.records import json_equal_key

    keys = [v if isinstance(v, str) else json_equal_key(v) for v in values]
    distinct = sorted(
        set(keys), key=lambda k: (0, k, "") if isinstance(k, str) else (1, "", repr(k))
    )
    number = {key: code for code, key in enumerate(distinct)}
    return [number[k] for k in keys]


@pytest.mark.parametrize("mixed", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_unit_codes_number_units_in_sorted_order(seed: int, mixed: bool) -> None:
    import random

    from pingce.engine.groups import unit_codes
    from pingce.records import FieldSpec, load_records

    rng = random.Random(seed)
    pool: list[Any] = [f"d{rng.randrange(10**6)}" for _ in range(200)] + ["", "é", "d1", "D1"]
    if mixed:
        pool += [1, 1.0, 2.5, -3, True, False, None, [1, "a"], {"k": 1}, {"k": 1.0}, "1", 10**20]
    values = [rng.choice(pool) for _ in range(2000)]
    table = load_records(
        [{"u": v, "x": 1.0} for v in values],
        [FieldSpec("u", "json", required=False), FieldSpec("x", "number")],
    )
    codes = unit_codes(table, "u")
    assert codes is not None and codes.dtype == np.int64
    assert codes.tolist() == _unit_codes_by_sorting(table.column("u"))
