"""Simulation study of release decisions with a margin (issue 35, "Oracles and guarantees"): not
a speed benchmark. Replays of one system through pingce's own comparison (``pingce.compare``:
the function-call statistics, the paired bootstrap, the margin p-values, the decision; the
regression gate by ``pingce.gates.regressions``) and planning (``pingce.power.plan_power``, as
``pingce plan`` runs it); the engine is ``tests/decision_simulation.py``, whose small version is
``tests/test_decision_simulations.py`` (read its docstring for how the issue's sentence is read).

Per data mix (``spread``: per-record chances ``p_name = 0.35 + 0.6 Beta(2, 2)``, ``p_all =
p_name (0.5 + 0.5 Beta(2, 2))``, records of very different difficulty; ``flat``: 0.7 and 0.5 for
every record), 300 records, ci_level 0.90 (one-sided α = 5%), percentile intervals of 500
resamples, a fresh population and fresh replays each time:

- the MDE ``pingce plan`` reports for ``fn_acc_all`` from one pilot replay (correlation assumed
  0, the default; and measured from a second pilot replay, ``--candidate``);
- **type I**: a candidate planted exactly δ = MDE worse passes ``--non-inferior fn_acc_all=δ``
  (target ≤ 5%, and 5% ± 1 at the boundary);
- **power**: A/A passes the gate at δ = the MDE (target ≥ 80%), at the default MDE and at the
  measured one;
- **caught**: a regression of the MDE fails ``--fail-on-regression fn_acc_all`` (target ≥ 80%);
- **family**: ``fn_acc_name`` and ``fn_acc_all`` gated, in all records and in three slices
  (8 gates), each at its null's boundary (δ = 0.06): the chance that any gate passes under
  holm (target ≤ 5%), bh and none (decided again from the same comparison by
  ``pingce.decisions.decide``), and the chance the whole decision passes.

Run: ``.venv/bin/python benchmarks/bench_decisions.py [replays] [resamples]`` (1,000 and 500 by
default; ``--small``: 100 and 300); ``--family``: the family table alone (with each gate's own
false passes), kept as ``benchmarks/out/bench_decisions_family_<resamples>.json``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _cli import ROOT, machine, print_table, save_summary

sys.path.insert(0, str(ROOT))
from tests.decision_simulation import (
    compare,
    outcomes,
    planned_mde,
    population,
    write_suite,
)

N = 300
FAMILY_DELTA = 0.06


def _rate(hits: int, replays: int) -> dict[str, float]:
    """A rate with its binomial standard error."""
    rate = hits / replays
    return {"rate": rate, "se": float(np.sqrt(rate * (1 - rate) / replays)), "replays": replays}


def planned(suite: Path, mix: str, seed: int) -> dict[str, float]:
    """The MDE of one pilot (assumed correlation 0) and of a pilot pair (measured)."""
    rng = np.random.default_rng(seed)
    system = population(rng, N, mix)
    pilot, again = outcomes(rng, system), outcomes(rng, system)
    return {
        "assumed": planned_mde(suite, pilot, "fn_acc_all"),
        "measured": planned_mde(suite, pilot, "fn_acc_all", candidate=again),
    }


def single_gate(
    suite: Path, mix: str, mde: dict[str, float], replays: int, resamples: int, seed: int
) -> dict[str, Any]:
    """Type I at the boundary, power at the MDEs, regressions caught, over ``replays``."""
    rng = np.random.default_rng(seed)
    delta = mde["assumed"]
    counts = {"type_i": 0, "power": 0, "power_measured": 0, "caught": 0}
    for r in range(replays):
        system = population(rng, N, mix)
        base = outcomes(rng, system)
        gate = [f"fn_acc_all={delta}"]
        counts["type_i"] += compare(
            suite,
            outcomes(rng, system.shifted(delta)),
            base,
            non_inferior=gate,
            resamples=resamples,
            seed=r,
        ).passed
        same = outcomes(rng, system)
        for name, margin in (("power", delta), ("power_measured", mde["measured"])):
            counts[name] += compare(
                suite,
                same,
                base,
                non_inferior=[f"fn_acc_all={margin}"],
                resamples=resamples,
                seed=r,
            ).passed
        counts["caught"] += compare(
            suite,
            outcomes(rng, system.shifted(delta)),
            base,
            regression=["fn_acc_all"],
            resamples=resamples,
            seed=r,
        ).regression
        if (r + 1) % 100 == 0:
            print(f"  {mix} {r + 1}/{replays}: {counts}", flush=True)
    return {name: _rate(hits, replays) for name, hits in counts.items()}


def family(suite: Path, replays: int, resamples: int, seed: int) -> dict[str, Any]:
    """Any gate's false pass under each multiplicity, all 8 gates at their null's boundary."""
    from pingce.decisions import Multiplicity, decide, parse_margin_gates

    rng = np.random.default_rng(seed)
    texts = [f"fn_acc_all={FAMILY_DELTA}", f"fn_acc_name={FAMILY_DELTA}"]
    gates = parse_margin_gates(texts)
    counts = {"holm": 0, "bh": 0, "none": 0, "decision_holm": 0, "decision_none": 0}
    per_gate: dict[str, int] = {}
    for r in range(replays):
        system = population(rng, N, "spread")
        found = compare(
            suite,
            outcomes(rng, system.shifted(FAMILY_DELTA)),
            outcomes(rng, system),
            non_inferior=texts,
            slices=["topic"],
            resamples=resamples,
            seed=r,
            keep=True,
        ).result
        hows: tuple[Multiplicity, ...] = ("holm", "bh", "none")
        for how in hows:
            decision = decide(
                found.metrics,
                found.slices,
                gates,
                level=0.90,
                multiplicity=how,
                resamples=resamples,
            )
            counts[how] += any(g.passed for g in decision.gates)
            if how in ("holm", "none"):
                counts[f"decision_{how}"] += decision.passed
            if how == "none":
                for g in decision.gates:
                    key = f"{g.metric} [{g.slice or 'all'}]"
                    per_gate[key] = per_gate.get(key, 0) + g.passed
        if (r + 1) % 100 == 0:
            print(f"  family {r + 1}/{replays}: {counts}", flush=True)
    out: dict[str, Any] = {name: _rate(hits, replays) for name, hits in counts.items()}
    out["per_gate"] = {name: _rate(hits, replays) for name, hits in per_gate.items()}
    return out


def _pct(cell: dict[str, float]) -> str:
    return f"{100 * cell['rate']:.1f} ± {100 * cell['se']:.1f}"


def single_table(suite: Path, replays: int, resamples: int) -> dict[str, Any]:
    """The one-gate study in both mixes, printed."""
    summary: dict[str, Any] = {}
    rows = []
    for k, mix in enumerate(("spread", "flat")):
        mde = planned(suite, mix, 35 + k)
        found = single_gate(suite, mix, mde, replays, resamples, 350 + k)
        summary[mix] = {"mde": mde, **found}
        rows.append(
            [
                mix,
                f"{mde['assumed']:.4f}",
                f"{mde['measured']:.4f}",
                *(_pct(found[c]) for c in ("type_i", "power", "power_measured", "caught")),
            ]
        )
    print_table(
        [
            *("mix", "MDE (ρ=0)", "MDE (ρ measured)", "type I % (≤ 5)"),
            *("A/A passes at MDE % (≥ 80)", "at measured MDE %", "MDE regression caught %"),
        ],
        rows,
        f"one gate, {N} records, ci_level 0.90, {replays} replays",
    )
    return summary


def family_table(suite: Path, replays: int, resamples: int) -> dict[str, Any]:
    """The family study, printed: any gate's false pass, then each gate's own (unadjusted)."""
    cells = family(suite, replays, resamples, 359)
    print_table(
        ["multiplicity", "any gate passes % (holm: ≤ 5)", "the decision passes %"],
        [
            ["holm", _pct(cells["holm"]), _pct(cells["decision_holm"])],
            ["bh", _pct(cells["bh"]), ""],
            ["none", _pct(cells["none"]), _pct(cells["decision_none"])],
        ],
        f"8 gates (2 metrics x (all + 3 slices)) at the null's boundary, {replays} replays, "
        f"{resamples} resamples",
    )
    print_table(
        ["gate", "passes alone % (≤ 5)"],
        [[name, _pct(cell)] for name, cell in cells["per_gate"].items()],
        "each gate unadjusted",
    )
    return cells


def main() -> None:
    flags = {"--small", "--family"}
    args = [a for a in sys.argv[1:] if a not in flags]
    small = "--small" in sys.argv[1:]
    replays = int(args[0]) if args else (100 if small else 1_000)
    resamples = int(args[1]) if len(args) > 1 else (300 if small else 500)
    print(machine(["numpy"]), flush=True)
    started = time.perf_counter()
    summary: dict[str, Any] = {"replays": replays, "resamples": resamples, "records": N}
    with tempfile.TemporaryDirectory(prefix="bench-decisions-") as folder:
        if "--family" not in sys.argv[1:]:
            summary.update(single_table(write_suite(Path(folder)), replays, resamples))
        two = write_suite(Path(folder), ("fn_acc_name", "fn_acc_all"))
        summary["family"] = family_table(two, replays, resamples)
    summary["seconds"] = time.perf_counter() - started
    name = "bench_decisions_family" if "--family" in sys.argv[1:] else "bench_decisions"
    save_summary(f"{name}_{resamples}" if name.endswith("family") else name, summary)


if __name__ == "__main__":
    main()
