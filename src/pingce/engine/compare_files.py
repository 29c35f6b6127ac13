"""``pingce compare SUITE --data CANDIDATE --baseline BASELINE``: two files of records read on
one plan, then compared record by record (:func:`.compare.compare_tables`); when either file
holds repeats, each file is run as ``pingce run`` runs it and the two runs compared as two
stored runs are (:func:`.stored_runs.compare_runs`), every record with all its repeats on both
sides. The one comparison module that runs an executor (the local one, for files with
repeats): the comparisons themselves know none."""

from __future__ import annotations

import dataclasses
import os

from ..errors import OptionError
from ..options import RunOptions
from ..progress import ProgressHook
from ..records import Table
from ..results import ComparisonResult
from ..suites.build import BuiltSuite
from ..suites.spec import SuiteSpec
from .compare import compare_tables
from .context import RunContext
from .local import run_local
from .pairwise import pairwise_fields
from .phases import Data, load, plan_run
from .plan import Plan
from .profile import Profile
from .stored_runs import compare_runs

__all__ = ["compare_suite"]


def compare_suite(
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite,
    candidate: Data,
    baseline: Data,
    options: RunOptions | None = None,
    *,
    progress: ProgressHook | None = None,
    profile: Profile | None = None,
) -> ComparisonResult:
    """Compare ``candidate`` with ``baseline`` (two outputs over the same records) on ``suite``.

    Uses ``options``' similarity, bootstrap, seed, ci_method, ci_level and slices (the same
    comparison within each value of a ``--slice`` field); sampling does not apply to a
    comparison. Files with repeats (:attr:`Table.repeats`) are each run and the runs compared
    record by record, every record with all its repeats (:func:`_compare_repeats`).
    """
    context = RunContext.of(options, progress, profile)
    options, progress = context.options, context.progress
    with context.phase("plan"):
        plan = plan_run(suite, options, comparison=True)
        if options.judging.pairwise:
            pairwise_fields(plan)  # a suite without answers to judge: said before any load
    with context.phase("load"):
        table_c = load(plan, candidate, progress, "candidate records")
        loaded_b = load(plan, baseline, progress, "baseline records")
    if table_c.repeats is not None or loaded_b.repeats is not None:
        return _compare_repeats(plan, (table_c, loaded_b), context)
    return compare_tables(plan, table_c, loaded_b, context)


def _compare_repeats(
    plan: Plan, tables: tuple[Table, Table], context: RunContext
) -> ComparisonResult:
    """Two files of records of which one has repeats: each side run as ``pingce run`` runs it
    (without intervals), and the two runs compared as ``pingce compare RUN_B RUN_A`` compares
    them (:func:`pingce.engine.stored_runs.compare_runs`): each record paired with all its
    repeats on both sides, the delta that of the all-rows values."""
    options = context.options
    if options.judging.pairwise:
        source = next(t.source for t in tables if t.repeats is not None)
        raise OptionError(
            f"{source}: the records have repeats; --pairwise asks a judge about one answer a "
            "record on each side: compare files without repeats"
        )
    alone = dataclasses.replace(
        options, bootstrap=0, regression_gates=(), margin_gates=(), pairwise=False
    )
    timer = context.timer  # the phases of both runs and the comparison timed together
    candidate, baseline = (
        run_local(plan.suite, t, RunContext(alone, context.progress, timer)) for t in tables
    )
    labels = (tables[0].source, tables[1].source)
    result = compare_runs(
        candidate,
        baseline,
        options,
        suite=plan.suite,
        labels=labels,
        progress=context.progress,
        profile=timer,
        files=True,
    )
    context.finish(result)
    return result
