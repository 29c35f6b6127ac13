"""The per-block multinomial stream (``--bootstrap-stream per-block``, the default) against the
record-index stream it replaced (``indices``): the same law, so, on every bundled suite, the
replicates of each metric pass a two-sample Kolmogorov-Smirnov test and the interval ends
agree within Monte Carlo error; a paired comparison's differences too (joint cells of the two
systems); the Poisson bootstrap and ``--engine ray`` draw neither.

Monte Carlo error, not a copied tolerance: the ``p``-quantile of ``B`` replicates is an order
statistic whose rank is Binomial(B, p) around ``B·p`` (sd ``sqrt(B·p·(1-p))``), so the other
stream's quantile, for two independent streams, must lie between the order statistics ``Z``
such sds (times sqrt(2): the difference of two ranks) below and above ``B·p`` of this one's. This
holds for lattice-valued statistics (60 records) as for smooth ones.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
import pingce.engine.compare as engine_compare
import pingce.engine.local as engine_local
from pingce import stats

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
RESAMPLES = 2000
SEED = 20261128
Z = 4.4  # two-sided 1e-5 per end: with ~200 ends over the suites, a false alarm about 1 in 500
KS_ALPHA = 1e-4

SUITES = {
    "contract-risk": "contract_risk",
    "function-call": "function_call",
    "function-call-hf": "function_call_hf",
    "function-points": "function_points",
    "tcm-dialogue": "tcm_dialogue",
    "tool-use": "tool_use",
}


def _captured(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> dict[str, Any]:
    """The arguments of the engine's call to ``name`` (no interval is computed)."""
    seen: dict[str, Any] = {}

    def grab(*args: Any, **kwargs: Any) -> dict[str, Any]:
        seen.setdefault("args", args)
        seen.setdefault("kwargs", kwargs)
        return {}

    monkeypatch.setattr(module, name, grab)
    return seen


def _band(replicates: np.ndarray, p: float) -> tuple[float, float]:
    """Order statistics ``Z`` rank sds (two streams: times sqrt 2) below and above the
    ``p``-quantile's rank."""
    x = np.sort(replicates[~np.isnan(replicates)])
    b = x.size
    half = Z * math.sqrt(2 * b * p * (1 - p))
    low = max(0, math.floor(b * p - half))
    high = min(b - 1, math.ceil(b * p + half))
    return float(x[low]), float(x[high])


def _agree(name: str, old: np.ndarray, new: np.ndarray) -> None:
    from scipy.stats import ks_2samp

    old, new = old[~np.isnan(old)], new[~np.isnan(new)]
    if old.size < 50 or new.size < 50 or np.ptp(np.concatenate([old, new])) == 0:
        return
    for p in (0.025, 0.975):
        q_new = float(np.quantile(new, p))
        low, high = _band(old, p)
        assert low <= q_new <= high, (name, p, q_new, low, high)
        q_old = float(np.quantile(old, p))
        low, high = _band(new, p)
        assert low <= q_old <= high, (name, p, q_old, low, high)
    assert ks_2samp(old, new).pvalue > KS_ALPHA, name


def _both_streams(sides: list[Any], wanted: dict[str, Any], seed: Any) -> tuple[Any, Any]:
    n = next(iter(sides[0].values())).n
    draws = stats._bootstrap_counts(n, RESAMPLES, seed)
    old = stats._resample(sides, wanted, draws, RESAMPLES, None)
    new = stats._per_block(sides, wanted, RESAMPLES, seed, None)
    return old, new


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_the_two_streams_agree_in_law_on_every_suite(
    suite: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _captured(monkeypatch, engine_local, "bootstrap_intervals")
    pingce.evaluate(suite, EXAMPLES / SUITES[suite] / "records.jsonl", bootstrap=2)
    blocks, metrics, values = seen["args"]
    wanted = {k: v for k, v in metrics.items() if values.get(k) is not None}
    (old,), (new,) = _both_streams([blocks], wanted, SEED)
    assert set(old) == set(new) == set(wanted)
    for name in wanted:
        _agree(f"{suite}: {name}", old[name], new[name])


def test_a_paired_comparison_draws_the_joint_cells_of_both_systems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The paired differences of contract-risk's example against a second system over the
    same ids (two thirds of the predictions changed): the same law in both streams, and the
    per-block stream reads both sides with the same counts of joint cells (a system compared
    with itself differs by exactly 0 in every resample)."""
    data = EXAMPLES / "contract_risk" / "records.jsonl"
    lines = data.read_text("utf-8").splitlines()
    scale = ["低", "中", "高"]
    rows = []
    for k, line in enumerate(lines):
        record = json.loads(line)
        if k % 3:
            record["pred_level"] = scale[(scale.index(record["gold_level"]) + k) % 3]
        record["latency_sec"] = round(record.get("latency_sec") or 1.0, 3) + 0.25
        rows.append(json.dumps(record, ensure_ascii=False))
    baseline = tmp_path / "baseline.jsonl"
    baseline.write_text("\n".join(rows) + "\n", "utf-8")
    seen = _captured(monkeypatch, engine_compare, "paired_intervals")
    pingce.compare("contract-risk", data, baseline, bootstrap=2)
    candidate, base, metrics, deltas = seen["args"][:4]
    wanted = {k: v for k, v in metrics.items() if deltas.get(k) is not None}
    old, new = _both_streams([candidate, base], wanted, SEED)
    for name in wanted:
        _agree(f"paired {name}", old[0][name] - old[1][name], new[0][name] - new[1][name])
    same = stats._per_block([candidate, candidate], wanted, 200, SEED, None)
    for name in wanted:
        a, b = same[0][name], same[1][name]
        assert np.array_equal(a, b, equal_nan=True), name


def test_the_stream_is_named_in_the_signature_and_the_old_one_kept() -> None:
    data = EXAMPLES / "contract_risk" / "records.jsonl"
    new = pingce.evaluate("contract-risk", data, bootstrap=50)
    old = pingce.evaluate("contract-risk", data, bootstrap=50, bootstrap_stream="indices")
    poisson = pingce.evaluate("contract-risk", data, bootstrap=50, bootstrap_method="poisson")
    assert new.signature.resampling == "multinomial-per-block"
    assert old.signature.resampling == "multinomial-indices"
    assert poisson.signature.resampling == "poisson"
    assert new.metrics["accuracy"].value == old.metrics["accuracy"].value
    assert new.metrics["accuracy"].ci_low != old.metrics["accuracy"].ci_low
    # the Poisson bootstrap is keyed on the records: the stream option changes nothing there
    again = pingce.evaluate(
        "contract-risk", data, bootstrap=50, bootstrap_method="poisson", bootstrap_stream="indices"
    )
    assert again.metrics["accuracy"].ci_low == poisson.metrics["accuracy"].ci_low


def test_per_block_draws_are_multinomial_counts_of_the_distinct_rows() -> None:
    """Unit check of pingce.block_draws: categories of each layout, joint categories, counts
    that add up to n, and the stream keyed on the statistic."""
    from pingce.block_draws import block_rng, categories, joint_categories, multinomial_counts
    from pingce.metrics import StatBlock

    rng = np.random.default_rng(0)
    n = 1000
    onehot = StatBlock(width=4, codes=rng.integers(0, 4, n))
    dense = StatBlock(width=2, rows=np.array([[1.0, 0.0], [0.5, 1.0]])[rng.integers(0, 2, n)])
    wide = StatBlock(width=2, rows=rng.random((n, 2)))
    raw = StatBlock(width=1, rows=np.round(rng.random((n, 1)), 1), decomposable=False)
    raw.rows[::7] = np.nan  # type: ignore[index]
    for block in (onehot, dense, raw):
        found = categories(block)
        assert found is not None
        code, rows = found
        if block.codes is None and block.decomposable:
            np.testing.assert_array_equal(rows[code], block.rows)  # type: ignore[arg-type]
    assert categories(wide) is None  # nearly all distinct: the index stream
    raw_code, raw_rows = categories(raw)  # type: ignore[misc]
    assert np.isnan(raw_rows[-1, 0]) and np.isnan(raw_rows[raw_code[::7], 0]).all()
    joint = joint_categories(categories(onehot), categories(dense))  # type: ignore[arg-type]
    assert joint is not None
    (code, a), (_, b) = joint
    np.testing.assert_array_equal(a[code], np.eye(4)[onehot.codes])  # type: ignore[index]
    np.testing.assert_array_equal(b[code], dense.rows)  # type: ignore[arg-type]
    m = np.bincount(code)
    counts = np.concatenate(list(multinomial_counts(m, 300, block_rng(1, "k"))))
    assert counts.shape == (300, m.size) and (counts.sum(axis=1) == n).all()
    again = np.concatenate(list(multinomial_counts(m, 300, block_rng(1, "k"))))
    other = np.concatenate(list(multinomial_counts(m, 300, block_rng(1, "other key"))))
    assert np.array_equal(counts, again) and not np.array_equal(counts, other)


def test_the_old_stream_gives_the_old_intervals() -> None:
    """``indices`` is the stream before the per-block draws, to the bit: the QWK interval the
    documentation showed before them (README, first-run tutorial)."""
    data = EXAMPLES / "contract_risk" / "records.jsonl"
    qwk = pingce.evaluate("contract-risk", data, bootstrap_stream="indices").metrics["qwk"]
    assert (round(qwk.ci_low or 0, 4), round(qwk.ci_high or 0, 4)) == (0.6124, 0.9136)


def test_the_reports_name_the_stream() -> None:
    from rich.console import Console

    from pingce.report.console import print_result
    from pingce.report.html import render_html
    from pingce.report.markdown import render_markdown

    data = EXAMPLES / "contract_risk" / "records.jsonl"
    new = pingce.evaluate("contract-risk", data, bootstrap=20)
    old = pingce.evaluate("contract-risk", data, bootstrap=20, bootstrap_stream="indices")
    cases = ((new, "per-block multinomial draws", ""), (old, "record-index draws", ", indices"))
    for result, words, tag in cases:
        assert f"bootstrap ({words})" in render_markdown(result)
        assert f"bootstrap ({words})" in render_html(result)
        console = Console(record=True, width=200)
        print_result(result, console)
        assert f"95% CI (bca{tag})" in console.export_text()
    # a Poisson run's results.json written before the field: its default is not read as indices
    poisson = pingce.evaluate("contract-risk", data, bootstrap=20, bootstrap_method="poisson")
    earlier = poisson.signature.model_copy(update={"resampling": "multinomial-indices"})
    before = poisson.model_copy(update={"signature": earlier})
    assert "record-index" not in render_markdown(before)
    assert "Poisson bootstrap (Poisson weights)" in render_html(before)


def test_chunked_category_sums_equal_the_per_resample_sums_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """stats._chunked sums a block's categories a chunk of resamples at a time (one matrix
    product) only where every sum is exact; the replicates equal the per-resample path's to
    the bit, for one side and for a paired comparison, and a block whose sums are not exact
    (rows of arbitrary fractions) is left to the per-resample path."""
    from pingce.metrics import StatBlock
    from tests.test_significance import Ratio

    rng = np.random.default_rng(5)
    n = 3000
    rows = np.array([[1.0, 1.0], [0.0, 1.0], [0.25, 1.0]])
    side_a = {"k": StatBlock(width=2, rows=rows[rng.integers(0, 3, n)])}
    side_b = {"k": StatBlock(width=2, rows=rows[rng.integers(0, 2, n)])}
    wanted = {"m": (Ratio(), "k")}
    for sides in ([side_a], [side_a, side_b]):
        chunked = stats._per_block(sides, wanted, 400, 7, None)
        with monkeypatch.context() as patched:
            patched.setattr(stats, "_chunked", lambda *args: None)
            one_by_one = stats._per_block(sides, wanted, 400, 7, None)
        for got, expected in zip(chunked, one_by_one, strict=True):
            assert got["m"].tobytes() == expected["m"].tobytes()
    thirds = np.array([[1 / 3, 1.0], [0.1, 1.0]])
    inexact = {"k": StatBlock(width=2, rows=thirds[rng.integers(0, 2, n)])}
    from pingce.block_draws import categories

    found = categories(inexact["k"])
    assert found is not None
    small = [{"k": StatBlock(width=2, rows=found[1])}]
    parts = (np.arange(2), np.arange(2))
    counts = [np.array([[1500.0, 1500.0]])]
    assert stats._chunked(small, "k", wanted, counts, parts, n, 1) is None
