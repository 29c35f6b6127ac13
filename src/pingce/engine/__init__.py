"""The engine: one path from records to results for every command.

:mod:`.plan` (fields, statistics, checks), :mod:`.pipeline` (a run), :mod:`.compare` (two runs,
paired), :mod:`.similarities` (the one model phase), :mod:`.values` (values, per-record rows,
failures), :mod:`.groups` (units and slices), :mod:`.profile` (time per phase).
"""

from .compare import compare_suite
from .pipeline import evaluate_suite
from .profile import Profile

__all__ = ["Profile", "compare_suite", "evaluate_suite"]
