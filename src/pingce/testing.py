"""Assertions for pytest: ``pingce.testing.assert_metrics(result, accuracy=0.8)``.

The same gates as ``pingce run --fail-under/--fail-over`` (:mod:`pingce.gates`): a failed
assertion lists every metric that fell short, a null metric never passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .gates import Gate, check_gate_names, failed_gates

__all__ = ["assert_metrics"]


def assert_metrics(
    result: Any,
    *,
    at_most: Mapping[str, float] | None = None,
    on_interval: bool = False,
    **at_least: float,
) -> None:
    """Assert each named metric of ``result`` (an :class:`~pingce.EvaluationResult`) is at
    least its bound (keyword arguments) and at most the bounds in ``at_most``; with
    ``on_interval``, the pessimistic end of the bootstrap interval must be."""
    gates = [Gate(name, float(bound), True) for name, bound in at_least.items()]
    gates += [Gate(name, float(bound), False) for name, bound in (at_most or {}).items()]
    check_gate_names(gates, result.metrics)
    failed = failed_gates(result.metrics, gates, on_interval=on_interval)
    if failed:
        raise AssertionError("; ".join(failed))
