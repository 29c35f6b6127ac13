"""Gates for CI: ``--fail-under accuracy=0.8``, ``--fail-over hallucination_rate=0.1``.

A gate names a metric and a bound. ``under`` gates fail when the value is below the bound,
``over`` gates when it is above. With ``on_interval`` the gate reads the pessimistic end of the
bootstrap interval instead of the value (the lower end for ``under``, the upper for ``over``),
so a run passes only when the data make the bound credible, not when the point estimate is
lucky. A metric that is null never passes: there is no number to pass with.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import OptionError, did_you_mean

__all__ = [
    "Gate",
    "RegressionGate",
    "check_gate_names",
    "failed_gates",
    "parse_gates",
    "parse_regression_gates",
    "regressions",
]


@dataclass(frozen=True)
class Gate:
    """``metric`` must not be below (``under``) or above (``over``) ``bound``."""

    metric: str
    bound: float
    under: bool = True

    @property
    def option(self) -> str:
        return f"--fail-{'under' if self.under else 'over'} {self.metric}={self.bound:g}"


def parse_gates(under: Iterable[str] = (), over: Iterable[str] = ()) -> tuple[Gate, ...]:
    """Gates from ``METRIC=BOUND`` texts; a malformed one is an :class:`OptionError`."""
    gates = []
    for texts, is_under in ((under, True), (over, False)):
        option = "--fail-under" if is_under else "--fail-over"
        for text in texts:
            name, sep, bound = str(text).partition("=")
            try:
                value = float(bound)
            except ValueError:
                value = math.nan
            if not sep or not name.strip() or not math.isfinite(value):
                raise OptionError(
                    f"{option} {text!r}: expected METRIC=NUMBER, e.g. {option} accuracy=0.8"
                )
            gates.append(Gate(name.strip(), value, is_under))
    return tuple(gates)


def check_gate_names(gates: Iterable[Any], metrics: Iterable[str]) -> None:
    """Every gate (a :class:`Gate`, :class:`RegressionGate` or
    :class:`pingce.decisions.MarginGate`) names a metric of the suite (checked before the run,
    not after it)."""
    known = list(metrics)
    for gate in gates:
        if gate.metric is not None and gate.metric not in known:
            raise OptionError(
                f"{gate.option}: the suite has no metric {gate.metric!r} (it has "
                f"{', '.join(known)}){did_you_mean(gate.metric, known)}"
            )


def failed_gates(
    metrics: Mapping[str, Any], gates: Iterable[Gate], *, on_interval: bool = False
) -> list[str]:
    """What each failed gate says, in words (empty when every gate passed). ``metrics``: the
    result's metric entries (``value``, ``ci_low``, ``ci_high``, ``undefined_reason``)."""
    out = []
    for gate in gates:
        entry = metrics[gate.metric]
        value = getattr(entry, "value", None)
        if value is None:
            reason = getattr(entry, "undefined_reason", None)
            out.append(
                f"{gate.metric} is null ({reason or 'undefined'}): no number to pass {gate.option}"
            )
            continue
        read, what = value, "value"
        if on_interval:
            end = getattr(entry, "ci_low" if gate.under else "ci_high", None)
            if end is None:
                out.append(
                    f"{gate.metric} has no interval ({gate.option} on the interval needs "
                    "--bootstrap > 0)"
                )
                continue
            read, what = (
                end,
                "lower end of its interval" if gate.under else "upper end of its interval",
            )
        if (read < gate.bound) if gate.under else (read > gate.bound):
            side = "below" if gate.under else "above"
            out.append(f"{gate.metric} {what} {read:.4f} is {side} {gate.bound:g} ({gate.option})")
    return out


@dataclass(frozen=True)
class RegressionGate:
    """``pingce compare --fail-on-regression METRIC[:MARGIN]`` (``metric`` None: every metric).

    Without a margin the gate fails when the candidate is significantly worse after Holm; with a
    margin, when the paired interval of the difference does not exclude a drop larger than the
    margin (the candidate is not shown to be within ``margin`` of the baseline)."""

    metric: str | None
    margin: float | None = None

    @property
    def option(self) -> str:
        name = self.metric or "all"
        return f"--fail-on-regression {name}" + (
            f":{self.margin:g}" if self.margin is not None else ""
        )


def parse_regression_gates(texts: Iterable[str]) -> tuple[RegressionGate, ...]:
    """``all``, ``METRIC`` or ``METRIC:MARGIN`` (``all:MARGIN`` for every metric)."""
    gates = []
    for text in texts:
        name, sep, margin_text = str(text).partition(":")
        name = name.strip()
        margin: float | None = None
        if sep:
            try:
                margin = float(margin_text)
            except ValueError:
                margin = math.nan
            if not math.isfinite(margin) or margin < 0:
                raise OptionError(
                    f"--fail-on-regression {text!r}: the margin after ':' must be a number >= 0 "
                    "(e.g. accuracy:0.02)"
                )
        if not name:
            raise OptionError(f"--fail-on-regression {text!r}: expected METRIC[:MARGIN] or all")
        gates.append(RegressionGate(None if name == "all" else name, margin))
    return tuple(gates)


def regressions(metrics: Mapping[str, Any], gates: Iterable[RegressionGate]) -> list[str]:
    """What each failed regression gate says (empty when none failed). ``metrics``: a
    comparison's metric entries (``delta``, ``ci_low``, ``ci_high``, ``significant``,
    ``p_holm``, ``higher_is_better``)."""
    out = []
    for gate in gates:
        names = list(metrics) if gate.metric is None else [gate.metric]
        for name in names:
            m = metrics[name]
            if m.delta is None:
                out.append(
                    f"{name}: no difference to judge ({m.note or 'a value is null'}), "
                    f"so it cannot pass {gate.option}"
                )
                continue
            better = m.higher_is_better
            if gate.margin is None:
                worse = (m.delta < 0) if better else (m.delta > 0)
                if worse and m.significant:
                    out.append(
                        f"{name}: candidate significantly worse (delta {m.delta:+.4f}, p Holm "
                        f"{m.p_holm:.4g}) ({gate.option})"
                    )
                continue
            end = m.ci_low if better else m.ci_high
            if end is None:
                out.append(
                    f"{name}: no interval ({gate.option} with a margin needs --bootstrap > 0)"
                )
                continue
            drop = -end if better else end
            if drop > gate.margin:
                out.append(
                    f"{name}: the interval of delta [{m.ci_low:.4f}, {m.ci_high:.4f}] does not "
                    f"exclude a drop larger than {gate.margin:g} ({gate.option})"
                )
    return out
