"""Release decisions with a margin (issue 35): ``pingce compare --non-inferior METRIC=δ``
(repeatable) and ``--equivalent METRIC=δ``.

A non-inferiority gate passes when the candidate is shown to be worse than the baseline by less
than δ: the one-sided test of ``delta <= -δ`` (``delta >= δ`` for a metric lower is better)
rejects at level ``alpha = (1 - ci_level) / 2``, which without a family is "the paired interval
at ci_level lies above -δ". An equivalence gate needs both sides (two one-sided tests: the
interval inside ±δ). Every gated metric, in every ``--slice`` value too, is one test of one
family, adjusted by Holm (default; any false pass at most ``alpha``), Benjamini–Hochberg
(``bh``: the expected share of false passes at most ``alpha``) or not at all (``none``); the
candidate passes when every gate does. The p-values are the paired bootstrap's, from the same
resamples as the interval (:func:`pingce.stats.margin_p_value`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .errors import OptionError

__all__ = [
    "MarginGate",
    "Multiplicity",
    "decide",
    "gate_power",
    "margins_of",
    "parse_margin_gates",
    "planned_alpha",
]

Multiplicity = Literal["holm", "bh", "none"]


@dataclass(frozen=True)
class MarginGate:
    """``metric`` must be no worse than the baseline by ``margin`` (``equivalent``: nor
    better)."""

    metric: str
    margin: float
    equivalent: bool = False

    @property
    def option(self) -> str:
        flag = "--equivalent" if self.equivalent else "--non-inferior"
        return f"{flag} {self.metric}={self.margin:g}"

    @property
    def test(self) -> str:
        return "equivalence" if self.equivalent else "non-inferiority"


def parse_margin_gates(
    non_inferior: Iterable[str] = (), equivalent: Iterable[str] = ()
) -> tuple[MarginGate, ...]:
    """Gates from ``METRIC=δ`` texts (δ > 0, in the metric's units); a malformed one is an
    :class:`OptionError`; a metric gated twice is one too."""
    gates: list[MarginGate] = []
    for texts, is_equivalent in ((non_inferior, False), (equivalent, True)):
        flag = "--equivalent" if is_equivalent else "--non-inferior"
        for text in texts:
            name, sep, margin_text = str(text).partition("=")
            try:
                margin = float(margin_text)
            except ValueError:
                margin = math.nan
            if not sep or not name.strip() or not math.isfinite(margin) or margin <= 0:
                raise OptionError(
                    f"{flag} {text!r}: expected METRIC=MARGIN with a margin > 0 in the metric's "
                    f"units, e.g. {flag} accuracy=0.02"
                )
            gate = MarginGate(name.strip(), margin, is_equivalent)
            if any(g.metric == gate.metric for g in gates):
                raise OptionError(f"{gate.option}: {gate.metric} is gated twice")
            gates.append(gate)
    return tuple(gates)


def margins_of(
    gates: Iterable[MarginGate], higher_is_better: Mapping[str, bool]
) -> dict[str, tuple[float | None, float | None]]:
    """Per gated metric, the bounds its difference must clear: above ``-δ`` (higher is
    better), below ``δ`` (lower is better), or both (equivalence)."""
    out: dict[str, tuple[float | None, float | None]] = {}
    for gate in gates:
        if gate.equivalent:
            out[gate.metric] = (-gate.margin, gate.margin)
        elif higher_is_better[gate.metric]:
            out[gate.metric] = (-gate.margin, None)
        else:
            out[gate.metric] = (None, gate.margin)
    return out


def _adjusted(p_values: dict[Any, float], multiplicity: Multiplicity) -> dict[Any, float]:
    from .stats import benjamini_hochberg, holm

    if multiplicity == "holm":
        return holm(p_values)
    if multiplicity == "bh":
        return benjamini_hochberg(p_values)
    return dict(p_values)


def _shown(p: float, resamples: int) -> str:
    """A p-value in words: one the resamples cannot resolve as below ``1 / (B + 1)``."""
    return f"< {1 / (resamples + 1):.2g}" if p == 0 else f"{p:.4g}"


def decide(
    metrics: Mapping[str, Any],
    slices: Mapping[str, Any] | None,
    gates: Iterable[MarginGate],
    *,
    level: float,
    multiplicity: Multiplicity = "holm",
    resamples: int = 1000,
) -> Any:
    """The :class:`pingce.results.Decision` over a comparison's ``metrics`` (and its
    ``slices``' metrics), None without gates. A gate without a p-value (a null difference,
    ``--bootstrap 0``) fails, saying why."""
    from .results import Decision, DecisionGate

    gates = list(gates)
    if not gates:
        return None
    from .stats import ndtri

    alpha = (1.0 - level) / 2.0
    family: dict[tuple[str, str | None], tuple[MarginGate, Any]] = {}
    for gate in gates:
        family[(gate.metric, None)] = (gate, metrics[gate.metric])
        for key, part in (slices or {}).items():
            family[(gate.metric, key)] = (gate, part.metrics[gate.metric])
    p_values = {
        key: entry.margin_p_value
        for key, (_, entry) in family.items()
        if entry.margin_p_value is not None
    }
    adjusted = _adjusted(p_values, multiplicity)
    out = []
    for (name, part), (gate, entry) in family.items():
        p, q = p_values.get((name, part)), adjusted.get((name, part))
        where = "" if part is None else f" [{part}]"
        if q is None:
            why = entry.note or (
                "no interval (--bootstrap 0)" if entry.delta is not None else "no difference"
            )
            passed, reason = False, f"{name}{where}: not tested ({why}), so {gate.option} fails"
        else:
            passed = q < alpha
            bound = f"±{gate.margin:g}" if gate.equivalent else f"a margin of {gate.margin:g}"
            assert p is not None
            reason = (
                f"{name}{where}: delta {entry.delta:+.4f}, {gate.test} p {_shown(p, resamples)}"
                + ("" if multiplicity == "none" else f" ({multiplicity} {_shown(q, resamples)})")
                + (" < " if passed else " >= ")
                + f"{alpha:g}: {'within' if passed else 'not shown within'} {bound}"
            )
        power = detectable = None
        if entry.ci_low is not None and entry.ci_high is not None and entry.ci_high > entry.ci_low:
            se = (entry.ci_high - entry.ci_low) / (2.0 * ndtri(1.0 - alpha))
            gate_alpha = planned_alpha(level, len(family), multiplicity)
            power, detectable, _ = gate_power(
                se, gate.margin, gate_alpha, 0.8, entry.n, equivalent=gate.equivalent
            )
        out.append(
            DecisionGate(
                metric=name,
                slice=part,
                test=gate.test,
                margin=gate.margin,
                delta=entry.delta,
                p_value=p,
                p_adjusted=q,
                passed=passed,
                reason=reason,
                power=power,
                detectable=detectable,
            )
        )
    return Decision(
        passed=all(g.passed for g in out), alpha=alpha, multiplicity=multiplicity, gates=out
    )


def gate_power(
    se_difference: float,
    margin: float,
    alpha: float,
    power: float,
    records: int,
    *,
    equivalent: bool,
) -> tuple[float, float, int]:
    """Power at ``margin``, the margin reached with ``power``, and the records needed for it
    (the standard error shrinking as ``1 / sqrt(records)``)."""
    from .stats import ndtr, ndtri

    z_alpha = ndtri(1.0 - alpha)
    z_power = ndtri((1.0 + power) / 2.0) if equivalent else ndtri(power)
    one_side = ndtr(margin / se_difference - z_alpha) if se_difference > 0 else 1.0
    achieved = max(0.0, 2.0 * one_side - 1.0) if equivalent else one_side
    detectable = (z_alpha + z_power) * se_difference
    needed = math.ceil(records * (detectable / margin) ** 2)
    return achieved, detectable, needed


def planned_alpha(level: float, gates: int, multiplicity: Multiplicity) -> float:
    """One gate's one-sided level in a family of ``gates`` (Bonferroni's share under holm and
    bh: the level their first step uses, so the power it gives is a lower bound)."""
    one_sided = (1.0 - level) / 2.0
    return one_sided if multiplicity == "none" else one_sided / gates
