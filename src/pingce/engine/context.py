"""The run context: what every executor and comparison carries from the caller to the result
besides the suite and the data: the options, the progress hook and the profiler (``--profile``:
seconds per phase, written into the result only when asked for)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..options import RunOptions
from ..progress import ProgressHook, no_progress
from ..results import ComparisonResult, EvaluationResult
from .profile import Profile

__all__ = ["RunContext"]


@dataclass
class RunContext:
    """A run's (or a comparison's) options, progress hook and profiler."""

    options: RunOptions
    progress: ProgressHook = no_progress
    profile: Profile | None = None
    """The caller's profiler (``--profile``); None: the phases are timed but not reported."""
    timer: Profile = field(init=False)

    def __post_init__(self) -> None:
        self.timer = self.profile if self.profile is not None else Profile()

    @classmethod
    def of(
        cls,
        options: RunOptions | None,
        progress: ProgressHook | None = None,
        profile: Profile | None = None,
    ) -> RunContext:
        """The context of a call with these (optional) arguments: default options, no progress."""
        return cls(options or RunOptions(), progress or no_progress, profile)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the body as (part of) phase ``name``."""
        with self.timer.phase(name):
            yield

    def finish(self, result: EvaluationResult | ComparisonResult) -> None:
        """The seconds per phase into the result, when the caller asked for them."""
        if self.profile is not None:
            result.profile = self.timer.ordered()
