"""Repeats in a run (issue 35): records with a ``repeat`` field (or Inspect's ``epoch``), and
``--repeats K`` asking the loopback model K times. Every metric over all record x repeat rows,
intervals that resample records with their repeats, pass@k and pass^k by the formulas, the
variance split, flaky records, records.jsonl's ``repeat`` and ``flaky``, the report, and a
comparison of two stored runs that pairs record by record."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

import pingce
from pingce.errors import InputError, OptionError
from pingce.repeats import decompose
from pingce.repeats.summary import clopper_pearson, flaky_records
from tests import cli_run
from tests.cli_run import loopback_pingce, run_pingce
from tests.loopback import LoopbackServer, Request, keep_local
from tests.test_model_run import CALLS, RECORDS, model_answer, run_model

EXAMPLE = Path(pingce.__file__).parent / "examples" / "contract_risk" / "records.jsonl"
LEVELS = ["高", "中", "低"]
SYNONYMS = {"high": "高", "medium": "中", "low": "低"}  # the suite's scale reads both


def _level(text: str) -> str:
    return SYNONYMS.get(text, text)


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]


def _repeated(k: int, flip: float, seed: int) -> list[dict[str, Any]]:
    """Each example record k times, its predicted level replaced at random with chance
    ``flip`` in each repeat."""
    rng = np.random.default_rng(seed)
    out = []
    for record in _records():
        for r in range(1, k + 1):
            row = {**record, "repeat": r}
            if rng.random() < flip:
                row["pred_level"] = LEVELS[int(rng.integers(3))]
            out.append(row)
    return out


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def _interval(result: pingce.EvaluationResult, name: str) -> tuple[Any, Any, Any]:
    m = result.metrics[name]
    return m.value, m.ci_low, m.ci_high


# ----------------------------------------------------------------------------- the values


def test_one_repeat_a_record_is_todays_run() -> None:
    """K = 1: every metric, interval and note as without the field."""
    plain = pingce.evaluate("contract-risk", _records())
    once = pingce.evaluate("contract-risk", [{**r, "repeat": 1} for r in _records()])
    for name in plain.metrics:
        assert _interval(once, name) == _interval(plain, name), name
    assert once.notes == plain.notes
    assert once.repeats is None  # a repeat field beside unique ids is a field like any other


def test_metrics_are_over_every_row() -> None:
    rows = _repeated(3, 0.4, seed=1)
    result = pingce.evaluate("contract-risk", rows, bootstrap=0)
    gold = [r["gold_level"] for r in rows]
    pred = [_level(r["pred_level"]) for r in rows]
    assert result.n_records == len(rows) == 180
    assert result.metrics["accuracy"].value == pytest.approx(accuracy_score(gold, pred), abs=1e-12)


def test_the_interval_resamples_records_with_their_repeats() -> None:
    """Three identical repeats of every record are one observation each: the interval is as
    wide as the records' own (a bootstrap of rows would be about 1/sqrt(3) as wide)."""
    plain = pingce.evaluate("contract-risk", _records(), bootstrap=2000)
    thrice = pingce.evaluate(
        "contract-risk", [{**r, "repeat": k} for r in _records() for k in (1, 2, 3)], bootstrap=2000
    )
    for name in ("accuracy", "macro_f1", "cohen_kappa", "avg_latency_sec", "rule_precision"):
        v, low, high = _interval(plain, name)
        v3, low3, high3 = _interval(thrice, name)
        assert v3 == pytest.approx(v, abs=1e-12), name
        assert (high3 - low3) / (high - low) == pytest.approx(1.0, abs=0.1), name
    # a percentile of rows has no record-by-record form: no interval, said in a note
    assert thrice.metrics["p95_latency_sec"].ci_low is None
    assert any("p95_latency_sec" in note and "no interval" in note for note in thrice.notes)


def _counts(rows: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    by_id: dict[str, list[int]] = {}
    for r in rows:
        by_id.setdefault(r["id"], []).append(int(_level(r["pred_level"]) == r["gold_level"]))
    n = np.array([len(v) for v in by_id.values()])
    c = np.array([sum(v) for v in by_id.values()])
    return n, c


def test_pass_at_k_and_pass_hat_k_are_the_formulas() -> None:
    rows = _repeated(4, 0.5, seed=2)
    result = pingce.evaluate("contract-risk", rows, bootstrap=0)
    assert result.repeats is not None
    entry = result.repeats["metrics"]["accuracy"]
    n, c = _counts(rows)
    for curve in entry["pass_k"]:
        k = curve["k"]
        at = np.mean(
            [1 - math.comb(ni - ci, k) / math.comb(ni, k) for ni, ci in zip(n, c, strict=True)]
        )
        hat = np.mean([math.comb(ci, k) / math.comb(ni, k) for ni, ci in zip(n, c, strict=True)])
        assert curve["pass_at"] == pytest.approx(at, abs=1e-12)
        assert curve["pass_hat"] == pytest.approx(hat, abs=1e-12)
    assert [c["k"] for c in entry["pass_k"]] == [1, 2, 3, 4]
    assert entry["pass_k"][0]["pass_at"] == pytest.approx(result.metrics["accuracy"].value)


def test_the_variance_split_is_the_records_by_repeats_anova() -> None:
    rows = _repeated(3, 0.4, seed=3)
    result = pingce.evaluate("contract-risk", rows, bootstrap=0)
    assert result.repeats is not None
    found = result.repeats["metrics"]["accuracy"]["components"]
    values = np.array([int(_level(r["pred_level"]) == r["gold_level"]) for r in rows], float)
    expected = decompose(values.reshape(60, 3, 1), seed=0)
    assert found["variance"]["records"] == pytest.approx(expected.variance["records"])
    assert found["variance"]["generations"] == pytest.approx(expected.variance["generations"])
    # by hand: one-way ANOVA's mean squares
    grid = values.reshape(60, 3)
    ms_within = ((grid - grid.mean(1, keepdims=True)) ** 2).sum() / (60 * 2)
    ms_between = 3 * ((grid.mean(1) - grid.mean()) ** 2).sum() / 59
    assert found["variance"]["generations"] == pytest.approx(ms_within)
    assert found["variance"]["records"] == pytest.approx(max(0.0, (ms_between - ms_within) / 3))
    share = found["share"]
    assert share["records"] + share["generations"] == pytest.approx(1.0)
    assert share["judge"] is None  # one judge call: not separable


def test_target_se_plans_the_repeats() -> None:
    rows = _repeated(3, 0.5, seed=4)
    result = pingce.evaluate("contract-risk", rows, bootstrap=0, target_se=0.06)
    assert result.repeats is not None
    plan = result.repeats["metrics"]["accuracy"]["components"]["plan"]
    v = result.repeats["metrics"]["accuracy"]["components"]["variance"]
    if plan["reachable"]:
        k = plan["repeats"]
        se = math.sqrt(v["records"] / 60 + v["generations"] / (60 * k))
        assert se <= 0.06 and plan["standard_error"] == pytest.approx(se)
        if k > 1:  # one repeat fewer would not reach it
            assert math.sqrt(v["records"] / 60 + v["generations"] / (60 * (k - 1))) > 0.06
        assert plan["model_calls"] == 60 * k


# ------------------------------------------------------------------------- flaky records


def test_flaky_records_by_hand() -> None:
    """19 of 20 passes reliably; 10 of 20 is flaky; 0 of 20 and 20 of 20 agree."""
    successes = np.array([19, 10, 0, 20, 2])
    attempts = np.array([20, 20, 20, 20, 3])
    found = flaky_records(successes, attempts)
    assert found["disagree"].tolist() == [True, True, False, False, True]
    assert found["flagged"].tolist() == [False, True, False, False, True]
    assert found["level"] == pytest.approx(1 - 3 * 0.10 / 5)


def test_clopper_pearson_is_statsmodels() -> None:
    from statsmodels.stats.proportion import proportion_confint  # the test extra pins it

    c, n = np.array([0, 1, 5, 9, 10]), np.array([10, 10, 10, 10, 10])
    low, high = clopper_pearson(c, n, 0.9)
    ref_low, ref_high = proportion_confint(c, n, alpha=0.1, method="beta")
    np.testing.assert_allclose(low, np.nan_to_num(ref_low), atol=1e-10)
    np.testing.assert_allclose(high, np.nan_to_num(ref_high, nan=1.0), atol=1e-10)


def test_records_jsonl_has_repeat_and_flaky(tmp_path: Path) -> None:
    rows = _repeated(3, 0.5, seed=5)
    data = _write(tmp_path / "rep.jsonl", rows)
    done = run_pingce("run", "contract-risk", "--data", str(data), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in (tmp_path / "out" / "records.jsonl").read_text().splitlines()]
    assert [line["repeat"] for line in lines] == [r["repeat"] for r in rows]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    flagged = {r["id"] for r in results["repeats"]["metrics"]["accuracy"]["flaky_records"]}
    n, c = _counts(rows)
    ids = list(dict.fromkeys(r["id"] for r in rows))
    mixed = {i for i, ni, ci in zip(ids, n, c, strict=True) if 0 < ci < ni}
    assert flagged and flagged <= mixed  # with 3 repeats every disagreeing record is flagged
    assert flagged == mixed
    assert {line["id"] for line in lines if line["flaky"]} >= flagged
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Repeats" in report and "pass@k and pass^k: accuracy" in report
    html = (tmp_path / "out" / "report.html").read_text()
    assert 'id="repeats"' in html and sorted(flagged)[0] in html


# ------------------------------------------------------------------------- reading errors


def test_epoch_is_a_repeat() -> None:
    rows = [{**r, "epoch": k} for r in _records() for k in (1, 2)]
    result = pingce.evaluate("contract-risk", rows, bootstrap=0)
    assert result.repeats is not None and result.repeats["repeats"] == 2


@pytest.mark.parametrize(
    ("change", "line", "field", "words"),
    [
        (lambda rows: rows.__setitem__(3, {**rows[3], "repeat": 1}), 4, "id", "duplicate id"),
        (lambda rows: rows[5].pop("repeat"), 6, "repeat", "every record needs one"),
        (lambda rows: rows[2].pop("id"), 3, "id", "has no id"),
        (lambda rows: rows[1].__setitem__("repeat", "two"), 2, "repeat", "whole number"),
        (lambda rows: rows[1].__setitem__("repeat", -1), 2, "repeat", "0 or more"),
    ],
)
def test_bad_repeats_name_line_and_field(
    tmp_path: Path, change: Any, line: int, field: str, words: str
) -> None:
    rows = [{**r, "repeat": k} for r in _records()[:3] for k in (1, 2)]
    change(rows)
    data = _write(tmp_path / "bad.jsonl", rows)
    with pytest.raises(InputError) as caught:
        pingce.evaluate("contract-risk", str(data), bootstrap=0)
    assert caught.value.line == line and caught.value.field == field
    assert words in str(caught.value)


@pytest.mark.parametrize("value", [True, "yes", 1, "1"])
def test_a_repeat_field_beside_unique_ids_is_any_field(value: Any) -> None:
    """Records that happen to have a ``repeat`` (or ``epoch``) field, with ids that do not
    recur, are read as before: no repeats, no error, the same numbers."""
    plain = pingce.evaluate("contract-risk", _records())
    for name in ("repeat", "epoch"):
        other = pingce.evaluate("contract-risk", [{**r, name: value} for r in _records()])
        assert other.repeats is None
        assert {m: _interval(other, m) for m in other.metrics} == {
            m: _interval(plain, m) for m in plain.metrics
        }


def test_a_repeat_field_that_starts_late_names_the_first_record_without_it(
    tmp_path: Path,
) -> None:
    """Past the reader's first block of records: the error names the first record that lacks
    the field (line 1), not the block's first line."""
    base = _records()[0]
    rows = [{**base, "id": f"r{i}"} for i in range(20_000)]
    rows += [{**base, "id": "r5", "repeat": 2}]
    data = _write(tmp_path / "late.jsonl", rows)
    with pytest.raises(InputError) as caught:
        pingce.evaluate("contract-risk", str(data), bootstrap=0)
    assert caught.value.line == 1 and caught.value.field == "repeat"
    assert "no repeat" in str(caught.value)


# ------------------------------------------------------------ comparisons of stored runs


def test_stored_runs_with_repeats_pair_by_record(tmp_path: Path) -> None:
    """Each side's repeats summed by record: the delta is of the all-rows values, and with
    every repeat identical on both sides the paired interval is as wide as without repeats."""
    candidate = [
        {**r, "pred_level": r["gold_level"]} if i % 4 == 0 else r for i, r in enumerate(_records())
    ]
    plain_c = pingce.evaluate("contract-risk", candidate, bootstrap=0)
    plain_b = pingce.evaluate("contract-risk", _records(), bootstrap=0)
    plain = pingce.compare_runs(plain_c, plain_b, bootstrap=2000)
    rep_c = pingce.evaluate(
        "contract-risk", [{**r, "repeat": k} for r in candidate for k in (1, 2, 3)], bootstrap=0
    )
    rep_b = pingce.evaluate(
        "contract-risk", [{**r, "repeat": k} for r in _records() for k in (1, 2)], bootstrap=0
    )
    paired = pingce.compare_runs(rep_c, rep_b, bootstrap=2000)
    assert paired.n_records == 60
    for name in ("accuracy", "macro_f1", "cohen_kappa"):
        a, b = paired.metrics[name], plain.metrics[name]
        assert a.delta == pytest.approx(b.delta, abs=1e-12), name
        assert (a.ci_high - a.ci_low) / (b.ci_high - b.ci_low) == pytest.approx(1, abs=0.1)
    assert any("with repeats" in note for note in paired.notes)
    assert paired.metrics["p95_latency_sec"].delta is None


def test_unequal_repeats_compare_the_all_rows_values(tmp_path: Path) -> None:
    rows_c, rows_b = _repeated(3, 0.4, seed=7), _repeated(2, 0.2, seed=8)
    c = pingce.evaluate("contract-risk", rows_c, bootstrap=0)
    b = pingce.evaluate("contract-risk", rows_b, bootstrap=0)
    compared = pingce.compare_runs(c, b, bootstrap=200)

    def accuracy(rows: list[dict[str, Any]]) -> float:
        return float(np.mean([_level(r["pred_level"]) == r["gold_level"] for r in rows]))

    delta = accuracy(rows_c) - accuracy(rows_b)
    assert compared.metrics["accuracy"].delta == pytest.approx(delta, abs=1e-12)
    assert compared.metrics["accuracy"].n == 180 and compared.metrics["accuracy"].n_baseline == 120


# ----------------------------------------------------------------- --repeats with a model


@pytest.fixture(autouse=True)
def _local(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    keep_local(monkeypatch, tmp_path / "default-cache")
    monkeypatch.setitem(cli_run.ENV, "NO_PROXY", "127.0.0.1,localhost")


WRONG = {
    "tool_calls": [
        {
            "id": "c",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "X"}'},
        }
    ]
}


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    """The loopback model, right on its first two answers to each prompt and wrong after."""
    asked: Counter[str] = Counter()

    def answer(request: Request) -> dict[str, Any]:
        prompt = request.prompt or ""
        asked[prompt] += 1
        if asked[prompt] > 2 and prompt in CALLS and not isinstance(CALLS[prompt], str):
            return WRONG
        return model_answer(request)

    with LoopbackServer(lifetime=120) as srv:
        srv.answer = answer
        yield srv
        assert srv.errors == []


def _ask(server: LoopbackServer, cache: Path, k: int, **options: Any) -> pingce.EvaluationResult:
    return run_model(server, cache, repeats=k, model_params={"temperature": 0.7}, **options)


def test_repeats_ask_each_record_k_times_and_cache_each(
    server: LoopbackServer, tmp_path: Path
) -> None:
    cache = tmp_path / "c.sqlite3"
    first = _ask(server, cache, 3)
    assert server.count() == 12
    assert first.n_records == 12 and first.repeats is not None
    predictions = first.predictions or []
    assert sorted(Counter(p["repeat"] for p in predictions).items()) == [(1, 4), (2, 4), (3, 4)]
    # fn_acc_all per record: w1 right on two of its three asks, w2 never, t1 two of three, n1
    # (text, no call expected) always
    entry = first.repeats["metrics"]["fn_acc_all"]
    assert first.metrics["fn_acc_all"].value == pytest.approx((2 + 0 + 2 + 3) / 12)
    assert entry["pass_k"][2]["pass_at"] == pytest.approx((1 + 0 + 1 + 1) / 4)
    assert entry["pass_k"][2]["pass_hat"] == pytest.approx((0 + 0 + 0 + 1) / 4)
    # a rerun asks nothing; five repeats ask only the two new ones of each record
    again = _ask(server, cache, 3)
    assert (
        server.count() == 12
        and again.metrics["fn_acc_all"].value == first.metrics["fn_acc_all"].value
    )
    _ask(server, cache, 5)
    assert server.count() == 12 + 8
    # one repeat is the request of a run without repeats: from the cache
    _ask(server, cache, 1)
    assert server.count() == 20


def test_repeats_need_a_model() -> None:
    with pytest.raises(OptionError, match="--repeats"):
        pingce.evaluate("contract-risk", _records(), repeats=3)


def test_temperature_zero_repeats_say_so(server: LoopbackServer, tmp_path: Path) -> None:
    result = pingce.evaluate(
        "function-call",
        RECORDS,
        model="openai:tiny-model",
        base_url=server.url,
        cache=str(tmp_path / "c"),
        bootstrap=0,
        repeats=2,
    )
    assert any("temperature 0" in note for note in result.notes)


def test_command_line_repeats(server: LoopbackServer, tmp_path: Path) -> None:
    data = _write(tmp_path / "in.jsonl", RECORDS)
    out = tmp_path / "out"
    done = loopback_pingce(tmp_path)(
        "run",
        "function-call",
        "--data",
        str(data),
        "--model",
        "openai:m",
        "--base-url",
        server.url,
        "--cache",
        str(tmp_path / "c"),
        "--repeats",
        "2",
        "--model-param",
        "temperature=0.7",
        "--out",
        str(out),
        "--target-se",
        "0.1",
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["repeats"]["repeats"] == 2 and results["model"]["repeats"] == 2
    lines = (out / "predictions.jsonl").read_text().splitlines()
    assert [json.loads(x)["repeat"] for x in lines] == [1, 2] * 4


def test_plan_names_the_repeats_a_margin_needs(tmp_path: Path) -> None:
    """``pingce plan`` on a baseline run of repeats: the fewest repeats a record whose paired
    difference's SE, scaled by the measured components, reaches 80% power at the margin
    (checked here with scipy's normal distribution), and the command line says it."""
    from scipy.stats import norm

    from pingce.decisions import parse_margin_gates
    from pingce.engine.stored_runs import planning_blocks
    from pingce.power import plan_power

    rows = _repeated(3, 0.5, seed=21)
    data = _write(tmp_path / "rep.jsonl", rows)
    out = tmp_path / "base"
    done = run_pingce("run", "contract-risk", "--data", str(data), "--out", str(out), "--no-store")
    assert done.returncode == 0, done.stderr
    base = pingce.evaluate("contract-risk", rows, bootstrap=0)
    plan, blocks, _ = planning_blocks(base)
    for margin in (0.12, 0.2):
        (row,) = plan_power(
            plan.metrics,
            plan.keys,
            blocks,
            parse_margin_gates([f"accuracy={margin}"]),
            repeats=base.repeats,
        )
        assert base.repeats is not None and row.repeats == 3
        v = base.repeats["metrics"]["accuracy"]["components"]["variance"]
        assert row.se_difference is not None

        def power_at(k: int, v: Any = v, se: float = row.se_difference, m: float = margin) -> float:
            scaled = se * math.sqrt(
                (v["records"] + v["generations"] / k) / (v["records"] + v["generations"] / 3)
            )
            return float(norm.cdf(m / scaled - norm.ppf(1 - 0.025)))

        reaching = [k for k in range(1, 101) if power_at(k) >= 0.8]
        assert row.repeats_needed == (reaching[0] if reaching else None)
    said = run_pingce(
        "plan", "contract-risk", "--baseline", str(out), "--non-inferior", "accuracy=0.2"
    )
    assert said.returncode == 0, said.stderr
    assert "with repeats (the baseline's 3 a record)" in said.stdout


def test_a_failed_repeat_is_left_out_alone(server: LoopbackServer, tmp_path: Path) -> None:
    """The second ask of the Paris record fails: that one repeat is counted and left out (never
    a wrong answer), the record's other repeats are scored."""
    from tests.loopback import Fault

    paris = Counter[str]()

    def fail_second(request: Request) -> Fault | None:
        if "Paris" not in (request.prompt or ""):
            return None
        paris["asked"] += 1
        return Fault("400", text="overloaded") if paris["asked"] == 2 else None

    server.rule = fail_second
    result = _ask(server, tmp_path / "c", 3, on_judge_failure="skip")
    assert result.failures.model == 1  # type: ignore[attr-defined]
    rows = [(r["id"], r["values"]["fn_acc_name"]) for r in result.record_values()]
    assert len(rows) == 12
    left_out = [i for i, v in rows if v is None]
    assert left_out == ["w2"]
    # over the 11 answered rows: every name right but the triangle's third answer (the server
    # names get_weather from a prompt's third ask on)
    assert result.metrics["fn_acc_name"].value == pytest.approx(10 / 11)
    assert "1 of 12 records had failed model calls" in (
        result.metrics["fn_acc_name"].value_note or ""
    )


def test_a_sample_draws_records_with_all_their_repeats() -> None:
    rows = _repeated(3, 0.4, seed=9)
    result = pingce.evaluate("contract-risk", rows, sample=20, bootstrap=0)
    assert result.n_records == 60  # 20 records, each with its 3 repeats
    assert result.sampling is not None and result.sampling.n_sampled == 20
    assert result.repeats is not None and result.repeats["records"] == 20
    drawn = {r["id"] for r in result.record_values()}
    flaky = result.repeats["metrics"]["accuracy"]["flaky_records"]
    assert len(drawn) == 20 and {f["id"] for f in flaky} <= drawn
    by_id = Counter(r["id"] for r in result.record_values())
    assert set(by_id.values()) == {3}
