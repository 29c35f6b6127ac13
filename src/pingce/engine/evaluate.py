"""``evaluate``: a run of a suite over records, by the executor its options choose.

* ``local`` (:mod:`.local`): every phase in this process, over one table;
* ``ray`` (:mod:`.distributed`): the same phases per piece of the files on Ray Data, whose
  contributions add up (:mod:`.merge`); imported only then.

Both end in the one result assembly (:mod:`.assembly`) with the same numbers (the Poisson
bootstrap's on Ray); neither executor imports the other.
"""

from __future__ import annotations

import os

from ..errors import OptionError
from ..options import RunOptions
from ..progress import ProgressHook
from ..provenance import input_digests
from ..results import EvaluationResult
from ..runfolder.outputs import Kept
from ..suites.build import BuiltSuite, load_suite
from ..suites.spec import SuiteSpec
from .context import RunContext
from .local import run_local
from .phases import Data
from .profile import Profile

__all__ = ["evaluate_suite"]


def evaluate_suite(
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite,
    data: Data,
    options: RunOptions | None = None,
    *,
    progress: ProgressHook | None = None,
    profile: Profile | None = None,
) -> EvaluationResult:
    """Run ``suite`` over ``data`` on the executor of ``options.engine`` and return the result,
    holding what the run produced beside it (:attr:`EvaluationResult.outputs`: per-record rows,
    saved statistics, the model's answers)."""
    context = RunContext.of(options, progress, profile)
    gating = context.options.gating
    if (gating.baseline is None) != (not gating.margin_gates):
        raise OptionError(
            "--baseline RUN decides with --non-inferior METRIC=MARGIN or --equivalent "
            "METRIC=MARGIN: give both"
            if gating.baseline is not None
            else "--non-inferior/--equivalent on a run decide against a stored run: give "
            "--baseline RUN (a run name or output folder)"
        )
    if context.options.executor.name == "ray":
        from .distributed import run_on_ray  # Ray Data is imported by this executor only

        result = run_on_ray(suite, data, context)
    else:
        result = run_local(suite, data, context)
    given = context.options
    built = load_suite(suite, defaults=given.suite_defaults())  # as the run laid them over
    result.inputs = input_digests(built.spec, data, given.gold, result.signature, given)
    if result.outputs is not None:  # how the run's folder keeps the rows (the output options)
        given = context.options
        result.outputs.kept = Kept(
            given.records_format, given.records_fields == "all", given.report_records
        )
    return result
