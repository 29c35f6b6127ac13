"""``pingce plan``: the power of a release decision before the run (issue 35)."""

from __future__ import annotations

from typing import Any

import click

from .common import consoles, fail, store_path_option

__all__ = ["plan"]


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("suite_name", metavar="SUITE")
@click.option("--baseline", required=True, help="The baseline: a stored run's name or folder.")
@click.option(
    "--candidate",
    default=None,
    help="A candidate run already made (a name or folder): the paired difference's spread is "
    "measured rather than assumed.",
)
@click.option(
    "--non-inferior",
    "non_inferior",
    multiple=True,
    metavar="METRIC=MARGIN",
    help="A gate as pingce compare takes it. Repeatable.",
)
@click.option("--equivalent", multiple=True, metavar="METRIC=MARGIN", help="A gate. Repeatable.")
@click.option(
    "--power",
    "power",
    type=click.FloatRange(0.5, 1, max_open=True),
    default=0.8,
    show_default=True,
    help="The power wanted.",
)
@click.option(
    "--correlation",
    type=click.FloatRange(-1, 1),
    default=0.0,
    show_default=True,
    help="Without --candidate: the assumed correlation of the two systems' per-record values "
    "(0: independent, the cautious choice).",
)
@click.option(
    "--ci-level",
    type=click.FloatRange(0.5, 1, max_open=True),
    default=0.95,
    show_default=True,
    help="The comparison's confidence level (the one-sided alpha is (1 - level) / 2).",
)
@click.option(
    "--multiplicity",
    type=click.Choice(["holm", "bh", "none"]),
    default="holm",
    show_default=True,
    help="As pingce compare: the gates' family.",
)
@store_path_option
def plan(
    suite_name: str,
    baseline: str,
    candidate: str | None,
    non_inferior: tuple[str, ...],
    equivalent: tuple[str, ...],
    power: float,
    correlation: float,
    ci_level: float,
    multiplicity: Any,
    store: str | None,
) -> None:
    """Before a comparison: each gate's power at the baseline's record count, the margin it
    would clear with --power, and the records its margin needs.

    \b
    pingce plan SUITE --baseline RUN --non-inferior METRIC=MARGIN [--candidate RUN]
    """
    from ..compare_stored import read_stored
    from ..decisions import parse_margin_gates
    from ..engine.stored_runs import planning_blocks
    from ..errors import OptionError, PingceError
    from ..gates import check_gate_names
    from ..power import plan_power
    from ..report.console import print_power

    console, _ = consoles()
    try:
        gates = parse_margin_gates(non_inferior, equivalent)
        if not gates:
            raise OptionError(
                "give the gates to plan: --non-inferior or --equivalent METRIC=MARGIN"
            )
        label, result, _ = read_stored(baseline, store, "baseline")
        if result.suite != suite_name:
            raise OptionError(f"{label} is a run of {result.suite!r}, not of {suite_name!r}")
        other = None if candidate is None else read_stored(candidate, store, "candidate")[1]
        built, blocks_b, blocks_c = planning_blocks(result, other, labels=(label, candidate or ""))
        check_gate_names(gates, built.metrics)
        rows = plan_power(
            built.metrics,
            built.keys,
            blocks_b,
            gates,
            candidate=blocks_c,
            correlation=correlation,
            level=ci_level,
            multiplicity=multiplicity,
            power=power,
            repeats=result.repeats,
        )
    except PingceError as exc:
        fail(exc)
        return
    print_power(rows, console, power)
