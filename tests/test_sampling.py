"""Random and stratified sampling: pingce.sampling.sample_indices and
``pingce.evaluate(..., sample=N, stratify=...)`` on the contract-risk suite.

Expected allocations are computed by hand (or by an exact-fraction largest-remainder rule written
here), and uniformity within strata is checked with a chi-square test at alpha = 1e-4.
"""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

import pingce
from pingce.errors import OptionError
from pingce.sampling import sample_indices

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "contract_risk" / "records.jsonl"
LEVELS = ["高", "中", "低"]
ALPHA = 1e-4


def example_records() -> list[dict[str, object]]:
    with open(EXAMPLE, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def make_records(sizes: dict[str, int], spellings: dict[str, list[str]] | None = None):
    """Contract-risk records, ``sizes[level]`` of each gold level, interleaved."""
    records: list[dict[str, object]] = []
    remaining = dict(sizes)
    i = 0
    while any(remaining.values()):
        for level in LEVELS:
            if remaining.get(level, 0) > 0:
                remaining[level] -= 1
                names = (spellings or {}).get(level, [level])
                records.append(
                    {
                        "id": f"c{i:04d}",
                        "gold_level": names[remaining[level] % len(names)],
                        "pred_level": level,
                        "latency_sec": 1.0 + (i % 7) / 10,
                        "contract_type": ["买卖合同", "租赁合同"][i % 2],
                    }
                )
                i += 1
    return records


def run(records, **options):
    options.setdefault("bootstrap", 0)
    return pingce.evaluate("contract-risk", records, **options)


def sampled_gold(result) -> Counter[str]:
    return Counter(row["fields"]["gold_level"] for row in result.record_values())


def strata_of(result) -> dict[str, tuple[int, int, int]]:
    return {s.value: (s.population, s.quota, s.sampled) for s in result.sampling.strata}


# --------------------------------------------------------------------------------------------
# Equal allocation (the contract-review protocol's 1:1:1 rule)


def test_example_data_has_the_expected_strata() -> None:
    gold = Counter(r["gold_level"] for r in example_records())
    assert gold == {"高": 22, "中": 20, "低": 18}


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (12, {"高": 4, "中": 4, "低": 4}),
        # Remainder one each to the first strata in scale order (高 first), not in sorted
        # string order (which would be 中, 低, 高).
        (13, {"高": 5, "中": 4, "低": 4}),
        (14, {"高": 5, "中": 5, "低": 4}),
        (3, {"高": 1, "中": 1, "低": 1}),
        (1, {"高": 1, "中": 0, "低": 0}),
    ],
)
def test_equal_allocation_on_contract_risk(n: int, expected: dict[str, int]) -> None:
    result = run(example_records(), sample=n, stratify="gold_level", seed=5)
    assert result.n_records == n
    got = sampled_gold(result)
    assert {level: got.get(level, 0) for level in LEVELS} == expected
    info = result.sampling
    assert info.method == "stratified" and info.field == "gold_level"
    assert info.allocation == "equal"
    assert info.n_requested == n and info.n_sampled == n and info.n_population == 60
    assert [s.value for s in info.strata] == LEVELS
    population = {"高": 22, "中": 20, "低": 18}
    assert strata_of(result) == {
        level: (population[level], expected[level], expected[level]) for level in LEVELS
    }
    assert info.notes == []


def test_equal_allocation_sample_indices_order_argument() -> None:
    keys = ["b"] * 10 + ["a"] * 10 + ["c"] * 10
    # Default order is sorted: a, b, c.
    index, info = sample_indices(keys, 30, 5, seed=0)
    assert [(s.value, s.quota) for s in info.strata] == [("a", 2), ("b", 2), ("c", 1)]
    index, info = sample_indices(keys, 30, 5, seed=0, order=["c", "b", "a"])
    assert [(s.value, s.quota) for s in info.strata] == [("c", 2), ("b", 2), ("a", 1)]
    drawn = Counter(keys[i] for i in index)
    assert drawn == {"c": 2, "b": 2, "a": 1}


# --------------------------------------------------------------------------------------------
# Proportional allocation (largest remainder)


def test_proportional_allocation_hand_computed_on_contract_risk() -> None:
    # 31 * (22, 20, 18) / 60 = (11.367, 10.333, 9.3): floors 11 + 10 + 9 = 30, one left over,
    # to the largest fraction (.367, 高) -> 12 / 10 / 9. (Equal allocation would be 11/10/10.)
    result = run(
        example_records(), sample=31, stratify="gold_level", allocation="proportional", seed=1
    )
    assert sampled_gold(result) == {"高": 12, "中": 10, "低": 9}
    assert strata_of(result) == {"高": (22, 12, 12), "中": (20, 10, 10), "低": (18, 9, 9)}
    assert result.sampling.allocation == "proportional"


def test_proportional_allocation_hand_computed_direct() -> None:
    keys = ["x"] * 50 + ["y"] * 30 + ["z"] * 20
    # 7 * (50, 30, 20) / 100 = (3.5, 2.1, 1.4): floors 3 + 2 + 1 = 6, remainder to x -> 4/2/1.
    _, info = sample_indices(keys, 100, 7, seed=3, allocation="proportional")
    assert [s.quota for s in info.strata] == [4, 2, 1]
    # 11 * (50, 30, 20) / 100 = (5.5, 3.3, 2.2): floors 5 + 3 + 2 = 10 -> 6/3/2.
    _, info = sample_indices(keys, 100, 11, seed=3, allocation="proportional")
    assert [s.quota for s in info.strata] == [6, 3, 2]
    # Four equal strata, 6 records: 1.5 each, remainder 2 -> the first two in order.
    keys = [k for k in "abcd" for _ in range(10)]
    _, info = sample_indices(keys, 40, 6, seed=3, allocation="proportional", order=list("dcba"))
    assert [(s.value, s.quota) for s in info.strata] == [("d", 2), ("c", 2), ("b", 1), ("a", 1)]


def largest_remainder(sizes: list[int], n: int) -> tuple[list[int], bool]:
    """Hamilton's method in exact arithmetic; ties go to the stratum that comes first.

    Also says whether a tie decided who got a remainder seat (the cut falls inside a tie).
    """
    total = sum(sizes)
    exact = [Fraction(n * s, total) for s in sizes]
    quotas = [int(e) for e in exact]
    left = n - sum(quotas)
    fraction = [e - q for e, q in zip(exact, quotas, strict=True)]
    ranked = sorted(range(len(sizes)), key=lambda i: (-fraction[i], i))
    for i in ranked[:left]:
        quotas[i] += 1
    tie = 0 < left < len(sizes) and fraction[ranked[left - 1]] == fraction[ranked[left]]
    return quotas, tie


def proportional_quotas(sizes: list[int], n: int) -> list[int]:
    keys = [f"s{i}" for i, size in enumerate(sizes) for _ in range(size)]
    _, info = sample_indices(keys, len(keys), n, seed=0, allocation="proportional")
    assert [s.value for s in info.strata] == sorted(set(keys))
    return [s.quota for s in info.strata]


def test_proportional_allocation_matches_exact_largest_remainder_random() -> None:
    """Random sizes and N, where no tie decides a seat (ties: next test)."""
    rng = np.random.default_rng(17)
    checked = 0
    for _ in range(400):
        k = int(rng.integers(2, 6))
        sizes = [int(s) for s in rng.integers(1, 40, size=k)]
        n = int(rng.integers(1, sum(sizes) + 1))
        expected, tie = largest_remainder(sizes, n)
        if tie:
            continue
        got = proportional_quotas(sizes, n)
        assert sum(got) == n
        assert got == expected, (sizes, n)
        checked += 1
    assert checked > 300


@pytest.mark.parametrize(
    ("sizes", "n", "expected"),
    [
        # 7 * (10, 10, 10, 10, 30) / 70 = 1, 1, 1, 1, 3: no remainder at all.
        ([10, 10, 10, 10, 30], 7, [1, 1, 1, 1, 3]),
        # 6 * (2, 2, 2) / 6: fractions 0 -> 2/2/2.
        ([2, 2, 2], 6, [2, 2, 2]),
        # 24 * (15, 9, 1, 17) / 42 = 8 4/7, 5 1/7, 4/7, 9 5/7: floors 22, two seats left: one to
        # 5/7 (s3), one to the tie 4/7 between s0 and s2 -> s0 (first in order).
        ([15, 9, 1, 17], 24, [9, 5, 0, 10]),
        # 3 * (40, 40, 10) / 90 = 4/3, 4/3, 1/3: floors 2, one seat, a three-way tie at 1/3.
        ([40, 40, 10], 3, [2, 1, 0]),
    ],
)
def test_proportional_tie_broken_by_order_exactly(
    sizes: list[int], n: int, expected: list[int]
) -> None:
    """Equal fractional parts tie, and a tie goes to the stratum that comes first. Computed in
    floating point, n * size / total makes e.g. 4/3 - 1 slightly smaller than 1/3, so the seat
    goes to whichever rounding error is largest instead (see the report: src bug)."""
    assert largest_remainder(sizes, n)[0] == expected
    assert proportional_quotas(sizes, n) == expected


def test_proportional_tie_on_contract_risk() -> None:
    """The same tie through pingce.evaluate: 高 40, 中 40, 低 10, --sample 3 -> 2/1/0."""
    records = make_records({"高": 40, "中": 40, "低": 10})
    result = run(records, sample=3, stratify="gold_level", allocation="proportional", seed=0)
    assert strata_of(result) == {"高": (40, 2, 2), "中": (40, 1, 1), "低": (10, 0, 0)}


# --------------------------------------------------------------------------------------------
# Short strata


def test_short_stratum_is_an_option_error_naming_it() -> None:
    records = make_records({"高": 3, "中": 10, "低": 10})
    with pytest.raises(OptionError) as info:
        run(records, sample=12, stratify="gold_level")
    text = str(info.value)
    assert "高 has 3, needs 4" in text, text
    assert "中 has" not in text and "低 has" not in text
    assert "gold_level" in text


def test_short_strata_take_all(tmp_path: Path) -> None:
    records = make_records({"高": 3, "中": 10, "低": 10})
    out = tmp_path / "run"
    result = pingce.evaluate(
        "contract-risk",
        records,
        sample=12,
        stratify="gold_level",
        short_strata="take-all",
        bootstrap=0,
        out=out,
    )
    assert sampled_gold(result) == {"高": 3, "中": 4, "低": 4}
    assert result.n_records == 11
    info = result.sampling
    assert info.n_requested == 12 and info.n_sampled == 11
    assert len(info.notes) == 1 and "高" in info.notes[0] and "3" in info.notes[0]
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    sampling = saved["sampling"]
    assert sampling["method"] == "stratified" and sampling["field"] == "gold_level"
    assert sampling["n_sampled"] == 11 and sampling["n_requested"] == 12
    assert sampling["strata"] == [
        {"value": "高", "population": 3, "quota": 4, "sampled": 3},
        {"value": "中", "population": 10, "quota": 4, "sampled": 4},
        {"value": "低", "population": 10, "quota": 4, "sampled": 4},
    ]
    assert sampling["notes"] == info.notes
    assert saved["n_records"] == 11


def test_sample_larger_than_data_is_an_option_error() -> None:
    records = example_records()
    with pytest.raises(OptionError, match="61"):
        run(records, sample=61)
    with pytest.raises(OptionError, match="60"):
        run(records, sample=61, stratify="gold_level")
    with pytest.raises(OptionError):
        sample_indices(None, 5, 6, seed=0)
    # Exactly all of them is fine.
    assert run(records, sample=60).n_records == 60


# --------------------------------------------------------------------------------------------
# Determinism, uniqueness, order


def test_deterministic_for_a_seed_different_for_another() -> None:
    records = example_records()
    ids = []
    for seed in (7, 7, 8):
        result = run(records, sample=12, stratify="gold_level", seed=seed)
        ids.append([row["id"] for row in result.record_values()])
    assert ids[0] == ids[1]
    assert ids[0] != ids[2]
    keys = [r["gold_level"] for r in records]
    a, _ = sample_indices(keys, 60, 12, seed=7, order=LEVELS)
    b, _ = sample_indices(keys, 60, 12, seed=7, order=LEVELS)
    c, _ = sample_indices(keys, 60, 12, seed=8, order=LEVELS)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert [records[i]["id"] for i in a] == ids[0]


def test_indices_unique_sorted_and_in_range() -> None:
    rng = np.random.default_rng(2)
    keys = list(rng.choice(["p", "q", "r", "s"], size=97))
    for seed in range(50):
        for stratified in (True, False):
            index, info = sample_indices(keys if stratified else None, 97, 30, seed=seed)
            assert index.shape == (info.n_sampled,)
            assert np.all(np.diff(index) > 0)  # strictly increasing: sorted and unique
            assert index.min() >= 0 and index.max() < 97
    records = example_records()
    result = run(records, sample=20, stratify="contract_type", seed=4)
    lines = [row["line"] for row in result.record_values()]
    assert lines == sorted(set(lines)) and len(lines) == 20


# --------------------------------------------------------------------------------------------
# Uniformity within strata


def inclusion_pvalue(counts: np.ndarray, draws: int, take: int) -> float:
    """p-value that every member of a stratum of m was drawn equally often.

    Over ``draws`` independent samples of ``take`` of m without replacement, the inclusion
    counts have mean draws*take/m and covariance draws*p(1-p)*m/(m-1)*(I - J/m), so Pearson's
    statistic divided by (m - take)/(m - 1) is chi-square with m - 1 degrees of freedom.
    """
    m = counts.shape[0]
    expected = np.full(m, draws * take / m)
    stat = scipy.stats.chisquare(counts, expected).statistic
    return float(scipy.stats.chi2.sf(stat * (m - 1) / (m - take), m - 1))


def test_inclusion_check_has_power() -> None:
    # A sampler that prefers low indices slightly (first member twice as likely) is caught.
    rng = np.random.default_rng(0)
    m, take, draws = 9, 3, 3000
    counts = np.zeros(m)
    p = np.ones(m)
    p[0] = 2.0
    for _ in range(draws):
        counts[rng.choice(m, size=take, replace=False, p=p / p.sum())] += 1
    assert inclusion_pvalue(counts, draws, take) < ALPHA


def test_every_record_equally_likely_within_its_stratum() -> None:
    keys = ["高"] * 9 + ["中"] * 6 + ["低"] * 13
    rng = np.random.default_rng(1)
    keys = list(rng.permutation(keys))
    members = {level: np.flatnonzero(np.asarray(keys) == level) for level in LEVELS}
    draws, n = 3000, 7  # quotas 3 / 2 / 2
    counts = np.zeros(len(keys))
    for seed in range(draws):
        index, info = sample_indices(keys, len(keys), n, seed=seed, order=LEVELS)
        counts[index] += 1
    quotas = {s.value: s.quota for s in info.strata}
    assert quotas == {"高": 3, "中": 2, "低": 2}
    for level in LEVELS:
        got = counts[members[level]]
        assert got.sum() == draws * quotas[level]
        assert inclusion_pvalue(got, draws, quotas[level]) > ALPHA, (level, got)


def test_simple_random_sample_is_uniform() -> None:
    population, n, draws = 23, 5, 3000
    counts = np.zeros(population)
    for seed in range(draws):
        index, info = sample_indices(None, population, n, seed=seed)
        assert info.method == "random" and info.n_sampled == n
        counts[index] += 1
    assert inclusion_pvalue(counts, draws, n) > ALPHA


# --------------------------------------------------------------------------------------------
# Other stratification fields, aliases, no stratification


def test_stratify_by_contract_type() -> None:
    records = example_records()
    population = Counter(r["contract_type"] for r in records)
    assert population == {"劳动合同": 20, "技术服务合同": 14, "买卖合同": 13, "租赁合同": 13}
    result = run(records, sample=10, stratify="contract_type", seed=3)
    got = Counter(row["fields"]["contract_type"] for row in result.record_values())
    # Not a label field: strata in sorted order (买 < 劳 < 技 < 租 by code point), so the
    # remainder of 10 = 4 * 2 + 2 goes to 买卖合同 and 劳动合同.
    assert got == {"买卖合同": 3, "劳动合同": 3, "技术服务合同": 2, "租赁合同": 2}
    assert [(s.value, s.population, s.sampled) for s in result.sampling.strata] == [
        ("买卖合同", 13, 3),
        ("劳动合同", 20, 3),
        ("技术服务合同", 14, 2),
        ("租赁合同", 13, 2),
    ]
    assert result.sampling.field == "contract_type"


def test_stratify_on_label_field_groups_aliases() -> None:
    records = make_records(
        {"高": 6, "中": 6, "低": 6},
        spellings={"高": ["高", "high", "HIGH "], "中": ["medium", "中"], "低": ["Low"]},
    )
    spelled = Counter(r["gold_level"] for r in records)
    assert spelled["high"] and spelled["HIGH "] and spelled["高"]
    result = run(records, sample=9, stratify="gold_level", seed=2)
    assert strata_of(result) == {"高": (6, 3, 3), "中": (6, 3, 3), "低": (6, 3, 3)}
    assert sampled_gold(result) == {"高": 3, "中": 3, "低": 3}


def test_sample_without_stratify_is_simple_random_sample() -> None:
    records = example_records()
    all_ids = [r["id"] for r in records]
    result = run(records, sample=15, seed=9)
    ids = [row["id"] for row in result.record_values()]
    assert len(ids) == 15 == len(set(ids)) == result.n_records
    assert set(ids) <= set(all_ids)
    assert ids == [i for i in all_ids if i in set(ids)]  # kept in file order
    info = result.sampling
    assert info.method == "random" and info.field is None and info.strata == []
    assert info.n_population == 60 and info.n_sampled == 15 and info.seed == 9
    # The strata are not forced to 5/5/5 (over a few seeds some draw is unbalanced).
    unbalanced = 0
    for seed in range(10):
        gold = sampled_gold(run(records, sample=15, seed=seed))
        unbalanced += gold != {"高": 5, "中": 5, "低": 5}
    assert unbalanced > 0


def test_stratify_needs_sample() -> None:
    with pytest.raises(OptionError, match="--sample"):
        run(example_records(), stratify="gold_level")
