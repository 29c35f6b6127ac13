"""Gates for CI: ``--fail-under accuracy=0.8``, ``--fail-over hallucination_rate=0.1``.

A gate names a metric and a bound. ``under`` gates fail when the value is below the bound,
``over`` gates when it is above. With ``on_interval`` the gate reads the pessimistic end of the
bootstrap interval instead of the value (the lower end for ``under``, the upper for ``over``),
so a run passes only when the data make the bound credible, not when the point estimate is
lucky. A metric that is null never passes: there is no number to pass with.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import OptionError

__all__ = ["Gate", "check_gate_names", "failed_gates", "parse_gates"]


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


def check_gate_names(gates: Iterable[Gate], metrics: Iterable[str]) -> None:
    """Every gate names a metric of the suite (checked before the run, not after it)."""
    known = list(metrics)
    for gate in gates:
        if gate.metric not in known:
            close = difflib.get_close_matches(gate.metric, known, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise OptionError(
                f"{gate.option}: the suite has no metric {gate.metric!r} (it has "
                f"{', '.join(known)}){hint}"
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
