"""The engine: one path from records to results for every command.

:mod:`.plan` (fields, statistics, checks), :mod:`.phases` (plan, load, sample, similarities,
statistics, signature), :mod:`.evaluate` (a run, by its executor: :mod:`.local` or Ray's
:mod:`.distributed` with :mod:`.merge`), :mod:`.compare_files` (two record files: read, then
paired by :mod:`.compare`, or with repeats run and compared as runs) and
:mod:`.stored_runs` (two stored runs), :mod:`.slices` (``--slice``), :mod:`.assembly` (results),
:mod:`.context` (options, progress, profiler), :mod:`.similarities` (the one model phase),
:mod:`.values` (values, per-record rows, failures), :mod:`.groups` (units, Poisson keys),
:mod:`.profile` (time per phase).
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the names as mypy and editors see them
    from .compare_files import compare_suite
    from .evaluate import evaluate_suite
    from .profile import Profile

__all__ = ["Profile", "compare_suite", "evaluate_suite"]

# a run does not pay for the comparison's imports, nor a comparison for the run's
__getattr__ = lazy_exports(
    __name__,
    {"compare_suite": "compare_files", "evaluate_suite": "evaluate", "Profile": "profile"},
    globals(),
)
