"""Issue 35's decision oracles, small: simulated replays of one system through pingce's own
comparison (:mod:`tests.decision_simulation`; the full sizes are ``benchmarks/bench_decisions.py``).

How the issue's sentence ("A/A … fails a non-inferiority gate at rate ≤ α; a planted
regression of the reported minimum detectable effect is caught at ≥ 80%") is read. A
non-inferiority gate tests the null "the candidate is worse by δ or more" against "worse by less
than δ"; passing the gate is rejecting that null. So:

- its type I error is a **pass** when the null holds: the candidate planted exactly ``δ`` worse
  (the null's boundary, where the error is largest) passes at a rate ≤ α;
- an A/A candidate (the same system replayed: truly non-inferior) **fails** the gate only by
  a type II error, whose rate is 1 - power; at the margin ``pingce plan`` reports as reached
  with 80% power for this record count (the minimum detectable effect, MDE), A/A passes at
  ≥ 80%, so fails at ≤ 20% (and at ≤ α only at a margin about 1.3 times as wide: the MDE
  at 95% power);
- a regression is caught by the one-sided test in the other direction (``--fail-on-regression
  METRIC``: significantly worse at the same ci_level, one-sided α each side); a regression of
  the MDE is caught at ≥ 80%: the MDE's formula ``(z_{1-α} + z_{power}) SE_d`` is the same in
  both directions.

α here is ``(1 - ci_level) / 2`` with ci_level 0.90: 5%. The oracles are binomial bounds on the
planted rates (α and 80%), three standard errors of the replays' count wide (a false failure
about once in 700 runs), and for the family the planted null in every gate: with Holm the chance
that any gate passes falsely stays at α, and without an adjustment it visibly exceeds it (so that
assertion can fail). The end-to-end test replays a loopback model answering right with known
per-record chances through the command line (``pingce run --model``, ``pingce compare RUN_A
RUN_B``)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pingce.decisions import decide, parse_margin_gates

from .cli_run import loopback_pingce
from .decision_simulation import (
    Population,
    compare,
    lower_bound,
    outcomes,
    planned_mde,
    population,
    question,
    upper_bound,
    write_suite,
)
from .loopback import LoopbackServer, Request

ALPHA = 0.05  # one-sided, ci_level 0.90
N = 300


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_suite(tmp_path_factory.mktemp("suite"))


@pytest.fixture(scope="module")
def two_metrics(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_suite(tmp_path_factory.mktemp("suite2"), ("fn_acc_name", "fn_acc_all"))


def test_the_null_boundary_passes_at_most_alpha(suite: Path) -> None:
    """A candidate planted exactly δ = 0.06 worse on every record (records of different
    difficulty): the non-inferiority gate passes in at most α + 3 SE of 150 replays (the
    benchmark's 1,000: 4.1% at δ = 0.10)."""
    rng = np.random.default_rng(35)
    replays, delta = 150, 0.06
    false_passes = 0
    for r in range(replays):
        system = population(rng, N, "spread")
        worse = compare(
            suite,
            outcomes(rng, system.shifted(delta)),
            outcomes(rng, system),
            non_inferior=[f"fn_acc_all={delta}"],
            seed=r,
        )
        false_passes += worse.passed
    assert false_passes / replays <= upper_bound(ALPHA, replays), false_passes


@pytest.fixture(scope="module")
def mde(suite: Path) -> float:
    """The MDE ``pingce plan`` reports (correlation assumed 0, the default) from one pilot
    replay of the flat system (every record right with chance 0.5: replays independent, so the
    default is exact)."""
    rng = np.random.default_rng(350)
    return planned_mde(suite, outcomes(rng, population(rng, N, "flat")), "fn_acc_all")


def test_the_plan_s_mde_is_the_closed_form(mde: float) -> None:
    """(1.645 + 0.842) sqrt(2 p (1 - p) / N) at p = 0.5, up to the pilot's noise (its p̂)."""
    closed = (1.6448536 + 0.8416212) * np.sqrt(2 * 0.25 / N)
    assert mde == pytest.approx(closed, rel=0.02)


def test_a_a_passes_the_gate_at_the_mde_with_80_percent(suite: Path, mde: float) -> None:
    rng = np.random.default_rng(351)
    system, replays = population(rng, N, "flat"), 120
    passes = sum(
        compare(
            suite,
            outcomes(rng, system),
            outcomes(rng, system),
            non_inferior=[f"fn_acc_all={mde}"],
            seed=r,
        ).passed
        for r in range(replays)
    )
    assert passes / replays >= lower_bound(0.80, replays), passes


def test_a_regression_of_the_mde_is_caught_at_80_percent(suite: Path, mde: float) -> None:
    rng = np.random.default_rng(352)
    system, replays = population(rng, N, "flat"), 120
    caught = sum(
        compare(
            suite,
            outcomes(rng, system.shifted(mde)),
            outcomes(rng, system),
            regression=["fn_acc_all"],
            seed=r,
        ).regression
        for r in range(replays)
    )
    assert caught / replays >= lower_bound(0.80, replays), caught


def test_the_family_over_metrics_and_slices(two_metrics: Path) -> None:
    """Two gated metrics in all records and in each of three slices (8 gates), every one at
    its null's boundary (δ = 0.06 below on every record): with Holm the chance that any gate
    passes is at most α + 3 SE over 100 replays; the same comparisons decided without an
    adjustment (:func:`pingce.decisions.decide`, ``none``) pass some gate far more often. (The
    benchmark's 1,000 replays: holm 5.9 ± 0.7% with 500 resamples, 4.1 ± 0.6% with 2,000 on the
    same data; none 24%.)"""
    rng = np.random.default_rng(353)
    replays, delta = 100, 0.06
    gates = [f"fn_acc_all={delta}", f"fn_acc_name={delta}"]
    any_holm = any_none = 0
    for r in range(replays):
        system = population(rng, N, "spread")
        result = compare(
            two_metrics,
            outcomes(rng, system.shifted(delta)),
            outcomes(rng, system),
            non_inferior=gates,
            slices=["topic"],
            seed=r,
            keep=True,
        )
        assert result.result is not None
        any_holm += result.gates_passed > 0
        unadjusted = decide(
            result.result.metrics,
            result.result.slices,
            parse_margin_gates(gates),
            level=0.90,
            multiplicity="none",
            resamples=500,
        )
        assert len(unadjusted.gates) == 8
        any_none += any(g.passed for g in unadjusted.gates)
    assert any_holm / replays <= upper_bound(ALPHA, replays), any_holm
    assert any_none / replays > upper_bound(ALPHA, replays), any_none


# ------------------------------------------------------------------ a loopback model, end to end


def _chance(model: str, systems: dict[str, Population], i: int) -> tuple[float, float]:
    """The chances of the system the request's model name names (``SYSTEM-SEED``)."""
    system = systems[model.rsplit("-", 1)[0]]
    return float(system.p_name[i]), float(system.p_all[i])


def _answer(systems: dict[str, Population]) -> Any:
    """The loopback model: right with the named system's chance for the asked record, drawn
    from a uniform seeded by the model name's seed and the record (so a name is one replay)."""

    def answer(request: Request) -> dict[str, Any]:
        prompt = request.prompt or ""
        i = int(prompt.split(":")[0].split()[-1])
        model = str(request.json["model"])
        p_name, p_all = _chance(model, systems, i)
        seed = int(model.rsplit("-", 1)[1])
        u = np.random.default_rng([seed, i, zlib.crc32(model.encode())]).random()
        name, x = ("f", i) if u < p_all else ("f", -1 - i) if u < p_name else ("g", i)
        arguments = json.dumps({"x": x})
        call = {"id": "c0", "type": "function", "function": {"name": name, "arguments": arguments}}
        return {"tool_calls": [call]}

    return answer


@pytest.fixture
def systems() -> dict[str, Population]:
    rng = np.random.default_rng(354)
    good = population(rng, N, "spread")
    # a regression: every record's chance of the whole call a tenth of the good system's
    return {"good": good, "worse": Population(good.p_name / 5, good.p_all / 10)}


@pytest.fixture
def server(systems: dict[str, Population]) -> Iterator[LoopbackServer]:
    with LoopbackServer(lifetime=240) as srv:
        srv.answer = _answer(systems)
        yield srv


def test_replays_through_a_loopback_model_and_the_command_line(
    suite: Path, server: LoopbackServer, systems: dict[str, Population], tmp_path: Path
) -> None:
    """Two replays of one system (A1, A2) and one of a system right a tenth as often on every
    record (B), each a stored run; ``pingce compare A2 A1 --non-inferior fn_acc_all=0.2``
    decides as its own numbers say, and B against A1 fails the gate with exit status 4.

    The paired difference's SE is about 0.04 here (``sqrt(2 (p̄ (1 - p̄) - Var p) / 300)``), so
    A/A fails the gate at δ = 0.2 only when its difference is below -0.2 + 1.645 · 0.04, 3.4
    SE down (chance 3e-4), and B (0.44 worse) passes it with a chance below 1e-12."""
    pingce = loopback_pingce(tmp_path)
    data = tmp_path / "questions.jsonl"
    data.write_text("".join(json.dumps(question(i)) + "\n" for i in range(N)), encoding="utf-8")
    runs: dict[str, Path] = {}
    for name, model in (("a1", "good-1"), ("a2", "good-2"), ("b", "worse-3")):
        runs[name] = tmp_path / name
        done = pingce(
            *("run", str(suite), "--data", str(data), "--out", str(runs[name])),
            *("--model", f"openai:{model}", "--base-url", server.url, "--no-cache"),
            *("--bootstrap", "0", "--records-fields", "all"),
        )
        assert done.returncode == 0, done.stderr
    assert server.count() == 3 * N
    values = {k: _run_values(v) for k, v in runs.items()}
    for name, system in (("a1", "good"), ("a2", "good"), ("b", "worse")):
        expected = float(systems[system].p_all.mean())
        se = float(np.sqrt(expected * (1 - expected) / N))
        assert abs(values[name] - expected) <= 4 * se, (name, values[name], expected)
    assert _predictions(runs["a1"]) != _predictions(runs["a2"])  # two replays, not one
    gate = ("--non-inferior", "fn_acc_all=0.2", "--ci-level", "0.9", "--suite", str(suite))
    out = tmp_path / "aa"
    done = pingce("compare", str(runs["a2"]), str(runs["a1"]), *gate, "--out", str(out))
    saved = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    _consistent(saved, values["a2"] - values["a1"], 0.2)
    assert done.returncode == (0 if saved["decision"]["passed"] else 4), done.stderr
    assert saved["decision"]["passed"]
    out = tmp_path / "ab"
    done = pingce("compare", str(runs["b"]), str(runs["a1"]), *gate, "--out", str(out))
    saved = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    _consistent(saved, values["b"] - values["a1"], 0.2)
    assert not saved["decision"]["passed"]
    assert done.returncode == 4, done.stderr


def _run_values(run: Path) -> float:
    """fn_acc_all of a stored run, counted from its per-record predictions (not its results)."""
    rows = _predictions(run)
    return sum(row[0] == "f" and row[1] == int(key[1:]) for key, row in rows.items()) / len(rows)


def _predictions(run: Path) -> dict[str, tuple[str, int]]:
    """Per record id: the predicted function's name and its x, from predictions.jsonl."""
    out = {}
    for line in (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record["pred_fn"]["choices"][0]["message"]
        function = message["tool_calls"][0]["function"]
        out[record["id"]] = (function["name"], json.loads(function["arguments"])["x"])
    return out


def _consistent(saved: dict[str, Any], delta: float, margin: float) -> None:
    """comparison.json's decision agrees with its own numbers: the difference is the runs'
    (counted from their predictions), the gate's p-value is the metric's margin p-value and
    passes exactly below α (one gate: no adjustment changes it), and that is the interval at
    ci_level clearing -δ."""
    entry = saved["metrics"]["fn_acc_all"]
    decision = saved["decision"]
    (gate,) = decision["gates"]
    assert decision["alpha"] == pytest.approx(ALPHA)
    assert entry["delta"] == pytest.approx(delta, abs=1e-12)
    assert gate["delta"] == pytest.approx(delta, abs=1e-12)
    assert gate["p_value"] == entry["margin_p_value"] == gate["p_adjusted"]
    assert gate["passed"] == (gate["p_value"] < ALPHA) == decision["passed"]
    assert gate["passed"] == (entry["ci_low"] > -margin)
