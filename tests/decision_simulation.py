"""Simulated replays of one system for issue 35's decision oracles (``pingce compare
--non-inferior``, ``--fail-on-regression``, ``pingce plan``), shared by
``tests/test_decision_simulations.py`` (few replays) and ``benchmarks/bench_decisions.py`` (many).

A population of records, each a function-call question whose gold is one call ``f(x=i)``; a
system is a per-record chance of naming the right function (``p_name``) and of the whole call
being right (``p_all <= p_name``). One replay of a system draws, for every record
independently, a uniform ``u``: the whole call right when ``u < p_all``, only the name right when
``u < p_name``, else a wrong function; two replays of one system are two independent draws on
the same records. So ``fn_acc_name`` and ``fn_acc_all`` are the means of 0/1 outcomes whose
expected values are ``mean(p_name)`` and ``mean(p_all)``: a candidate planted ``δ`` worse has
each record's chances lowered by ``δ`` (the true paired difference is ``-δ`` in every record,
hence in every slice).

The replays go through pingce's own comparison (:func:`pingce.compare`: records loaded and
checked, the function-call statistics, the paired bootstrap, the margin p-values, the decision
with its multiplicity; the regression gate's verdict by :func:`pingce.gates.regressions`, as
``pingce compare`` exits) and its planning (:func:`pingce.power.plan_power` on a pilot run's
blocks, as ``pingce plan`` reads them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

SUITE = """\
name: decision-sim
description: function calls of one tool, for the decision simulations (issue 35)
id_field: id
context: [query]
inputs:
  gold: gold_fn
  pred: pred_fn
metrics:
{metrics}model:
  prompt: query
  tools: [tools]
  prediction: pred_fn
"""

TOOL = {
    "type": "function",
    "function": {
        "name": "f",
        "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}},
    },
}
TOPICS = ("alpha", "beta", "gamma")
"""The slice field's values (records are assigned round robin)."""


def write_suite(folder: Path, metrics: Sequence[str] = ("fn_acc_all",)) -> Path:
    """The simulations' suite file in ``folder`` with these metrics (one by default: the
    comparison's Holm family over its metrics, which ``--fail-on-regression`` reads, is then
    that metric alone)."""
    path = folder / f"decision-sim-{len(metrics)}.yaml"
    listed = "".join(f"  {name}: {{}}\n" for name in metrics)
    path.write_text(SUITE.replace("{metrics}", listed), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Population:
    """Per-record chances of one system: the name right, the whole call right."""

    p_name: np.ndarray
    p_all: np.ndarray

    @property
    def n(self) -> int:
        return int(self.p_name.size)

    def shifted(self, delta: float) -> Population:
        """Every record's chances lowered by ``delta`` (a planted regression of ``delta``)."""
        if (self.p_all < delta).any() or (self.p_name > 1 + delta).any():
            raise ValueError(f"a shift of {delta} leaves [0, 1]")
        return Population(self.p_name - delta, self.p_all - delta)


def population(rng: np.random.Generator, n: int, mix: str) -> Population:
    """``spread``: ``p_name = 0.35 + 0.6 Beta(2, 2)``, ``p_all = p_name (0.5 + 0.5 Beta(2,
    2))`` (records of very different difficulty, so two replays correlate); ``flat``: 0.7 and
    0.5 for every record (replays independent)."""
    if mix == "flat":
        return Population(np.full(n, 0.7), np.full(n, 0.5))
    if mix != "spread":
        raise ValueError(f"mix {mix!r}: flat or spread")
    p_name = 0.35 + 0.6 * rng.beta(2.0, 2.0, n)
    return Population(p_name, p_name * (0.5 + 0.5 * rng.beta(2.0, 2.0, n)))


def outcomes(rng: np.random.Generator, system: Population) -> np.ndarray:
    """One replay: per record 2 (call right), 1 (only the name right) or 0 (wrong name)."""
    u = rng.random(system.n)
    out: np.ndarray = np.where(u < system.p_all, 2, np.where(u < system.p_name, 1, 0))
    return out


def call(outcome: int, i: int) -> list[dict[str, Any]]:
    """The predicted calls of record ``i`` for an outcome (what :func:`outcomes` draws)."""
    if outcome == 2:
        return [{"name": "f", "arguments": {"x": i}}]
    if outcome == 1:
        return [{"name": "f", "arguments": {"x": -1 - i}}]
    return [{"name": "g", "arguments": {"x": i}}]


def question(i: int) -> dict[str, Any]:
    """Record ``i`` without its prediction: its id, query, tools, gold call and topic."""
    return {
        "id": f"r{i}",
        "query": f"question {i}: call f with x = {i}",
        "tools": [TOOL],
        "gold_fn": [{"name": "f", "arguments": {"x": i}}],
        "topic": TOPICS[i % len(TOPICS)],
    }


def records(drawn: np.ndarray) -> list[dict[str, Any]]:
    """A replay's records with their predictions."""
    return [{**question(i), "pred_fn": call(int(o), i)} for i, o in enumerate(drawn)]


@dataclass(frozen=True)
class Replay:
    """What one comparison decided."""

    passed: bool
    """The decision (every margin gate passed)."""
    gates_passed: int
    regression: bool
    """Whether ``--fail-on-regression`` (when given) failed: significantly worse."""
    delta: float
    result: Any = None
    """The :class:`pingce.results.ComparisonResult` (``keep=True``)."""


def compare(
    suite: Path,
    candidate: np.ndarray,
    baseline: np.ndarray,
    *,
    non_inferior: Sequence[str] = (),
    regression: Sequence[str] = (),
    slices: Sequence[str] = (),
    multiplicity: str = "holm",
    ci_level: float = 0.90,
    resamples: int = 500,
    seed: int = 0,
    keep: bool = False,
) -> Replay:
    """One ``pingce compare`` of two replays (through :func:`pingce.compare`)."""
    import pingce
    from pingce.decisions import parse_margin_gates
    from pingce.gates import parse_regression_gates, regressions

    options: dict[str, Any] = {
        "bootstrap": resamples,
        "ci_level": ci_level,
        "seed": seed,
        "ci_method": "percentile",
        "multiplicity": multiplicity,
        "cache": False,
    }
    if non_inferior:
        options["margin_gates"] = parse_margin_gates(non_inferior)
    if regression:
        options["regression_gates"] = parse_regression_gates(regression)
    if slices:
        options["slices"] = list(slices)
    result = pingce.compare(str(suite), records(candidate), records(baseline), **options)
    decision = result.decision
    failed = regressions(result.metrics, parse_regression_gates(regression)) if regression else []
    first = next(iter(result.metrics.values()))
    return Replay(
        passed=bool(decision is not None and decision.passed),
        gates_passed=0 if decision is None else sum(g.passed for g in decision.gates),
        regression=bool(failed),
        delta=float(first.delta) if first.delta is not None else float("nan"),
        result=result if keep else None,
    )


def planned_mde(
    suite: Path,
    baseline: np.ndarray,
    metric: str,
    *,
    candidate: np.ndarray | None = None,
    ci_level: float = 0.90,
    power: float = 0.80,
) -> float:
    """The margin ``pingce plan SUITE --baseline RUN --non-inferior METRIC=…`` says a gate
    clears with ``power`` at the baseline's record count (with ``candidate``: ``--candidate``,
    the correlation measured; else assumed 0)."""
    import pingce
    from pingce.decisions import parse_margin_gates
    from pingce.engine.stored_runs import planning_blocks
    from pingce.power import plan_power

    base = pingce.evaluate(str(suite), records(baseline), bootstrap=0, cache=False)
    other = None
    if candidate is not None:
        other = pingce.evaluate(str(suite), records(candidate), bootstrap=0, cache=False)
    built, blocks_b, blocks_c = planning_blocks(base, other, suite=str(suite))
    rows = plan_power(
        built.metrics,
        built.keys,
        blocks_b,
        parse_margin_gates([f"{metric}=0.05"]),
        candidate=blocks_c,
        level=ci_level,
        power=power,
    )
    assert rows[0].detectable is not None, rows[0].note
    return float(rows[0].detectable)


def lower_bound(rate: float, replays: int, z: float = 3.0) -> float:
    """``rate - z`` binomial standard errors over ``replays`` (a one-sided bound on the rate a
    count of ``replays`` draws at ``rate`` falls below with chance about ``Φ(-z)``)."""
    return float(rate - z * np.sqrt(rate * (1.0 - rate) / replays))


def upper_bound(rate: float, replays: int, z: float = 3.0) -> float:
    """``rate + z`` binomial standard errors over ``replays``."""
    return float(rate + z * np.sqrt(rate * (1.0 - rate) / replays))
