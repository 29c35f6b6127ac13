"""The one slices module (issue 29): keys, order, seed derivation and the unit-split rule that a
run (local or on Ray), a comparison of two files and a comparison of two stored runs share."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import pingce
from pingce.engine.phases import plan_run
from pingce.engine.slices import slice_seed, slices_of, splits_units, unit_split_reason
from pingce.options import RunOptions

EXAMPLES = Path(pingce.__file__).resolve().parent / "examples"


def test_a_field_splits_units_when_it_varies_within_one() -> None:
    units = np.array([0, 0, 1, 1, 2])
    assert not splits_units(units, np.array([0, 0, 1, 1, 0]))  # constant within each unit
    assert splits_units(units, np.array([0, 1, 1, 1, 0]))  # unit 0 is in two slices
    assert not splits_units(None, np.array([0, 1, 0]))  # no unit suite: nothing to split


def test_a_slice_seed_is_the_runs_with_poisson_else_derived_from_its_name() -> None:
    assert slice_seed(7, "lang=zh", poisson=True) == 7
    derived = slice_seed(7, "lang=zh", poisson=False)
    assert derived == [7, 2, 673918291]  # the seed of this slice since slices had seeds
    assert derived != slice_seed(7, "lang=en", poisson=False)
    assert derived == slice_seed(7, "lang=zh", poisson=False)


def test_slices_come_in_report_order_with_their_records_and_the_split_rule() -> None:
    plan = plan_run("tcm-dialogue", RunOptions(bootstrap=0, similarity="exact"))
    names = {"turn": ["10", "2", "(missing)", "2", "10"], "tag": ["b", "a", "a", "b", "b"]}
    units = np.array([0, 0, 1, 1, 2])
    found = slices_of(plan, names, units)
    assert [s.key for s in found] == [
        "turn=2",
        "turn=10",
        "turn=(missing)",
        "tag=a",
        "tag=b",
    ]  # numbers in numeric order, (missing) last; fields in the order given
    assert [s.rows.tolist() for s in found] == [[1, 3], [0, 4], [2], [1, 2], [0, 3, 4]]
    assert all(s.splits_units for s in found)
    assert {s.n for s in found} == {1, 2, 3}


def test_the_unit_split_reason_names_the_metrics_that_read_whole_units() -> None:
    plan = plan_run("tcm-dialogue", RunOptions(bootstrap=0, similarity="exact"))
    reasons = {name: unit_split_reason(plan, "turn", name) for name in plan.metrics}
    whole = {name for name, reason in reasons.items() if reason is not None}
    assert whole == {n for n in plan.metrics if plan.statistic_of(n).unit_field is not None}
    assert whole  # the dialogue suite has metrics that read a dialogue whole
    reason = next(r for r in reasons.values() if r is not None)
    assert reason.startswith("turn varies within ") and "slice by a field" in reason
