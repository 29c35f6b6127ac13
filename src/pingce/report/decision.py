"""A comparison's release decision (``--non-inferior``, ``--equivalent``: comparison.json's
``decision``) in comparison.md and comparison.html: the outcome first, then each gate's test in
words (passed or failed said in words, never by colour alone)."""

from __future__ import annotations

from typing import Any

from .page import esc

__all__ = ["decision_html", "decision_markdown"]


def _headline(decision: Any) -> str:
    outcome = "passes" if decision.passed else "does not pass"
    return (
        f"The candidate {outcome}: {len(decision.gates)} gate(s), one-sided alpha "
        f"{decision.alpha:g}, multiplicity {decision.multiplicity}."
    )


def _power(gate: Any) -> str:
    """A gate's power in words (nothing when the comparison had no interval)."""
    if getattr(gate, "power", None) is None:
        return ""
    return (
        f" (power {gate.power:.0%} for a candidate exactly as good as the baseline; 80% at a "
        f"margin of {gate.detectable:.3g})"
    )


def decision_markdown(decision: Any) -> list[str]:
    """comparison.md's lines of the decision."""
    lines = ["## Decision", "", _headline(decision), ""]
    lines += [
        f"- {'passed' if gate.passed else 'FAILED'}: {gate.reason}{_power(gate)}"
        for gate in decision.gates
    ]
    return [*lines, ""]


def decision_html(decision: Any, against: str | None = None) -> str:
    """comparison.html's section of the decision (report.html's, ``against`` a baseline)."""
    items = "".join(
        f'<li class="{"pass" if gate.passed else "fail"}">'
        f"<b>{'passed' if gate.passed else 'failed'}</b>: {esc(gate.reason + _power(gate))}</li>"
        for gate in decision.gates
    )
    title = "Decision" if against is None else f"Decision against the baseline {against}"
    return (
        f'<section id="decision"><h2>{esc(title)}</h2><p>{esc(_headline(decision))}</p>'
        f"<ul>{items}</ul></section>\n"
    )
