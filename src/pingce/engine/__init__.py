"""The engine: one path from records to results for every command.

:mod:`.plan` (fields, statistics, checks), :mod:`.phases` (plan, load, sample, similarities,
statistics, signature), :mod:`.evaluate` (a run, by its executor: :mod:`.local` or Ray's
:mod:`.distributed` with :mod:`.merge`), :mod:`.compare` (two record files, paired) and
:mod:`.stored_runs` (two stored runs), :mod:`.slices` (``--slice``), :mod:`.assembly` (results),
:mod:`.context` (options, progress, profiler), :mod:`.similarities` (the one model phase),
:mod:`.values` (values, per-record rows, failures), :mod:`.groups` (units, Poisson keys),
:mod:`.profile` (time per phase).
"""

from .compare import compare_suite
from .evaluate import evaluate_suite
from .profile import Profile

__all__ = ["Profile", "compare_suite", "evaluate_suite"]
