"""Where a run's time goes: seconds per phase (``--profile``).

Phases: ``start-up`` (the command line importing what it needs; not the interpreter's own
start), ``plan`` (suite, fields, checks, sampling), ``load`` (read and validate the records),
``similarities`` (model calls, cache), ``statistics`` (the metrics' own arithmetic: statistics,
values, per-record values and reasons), ``intervals`` (bootstrap), ``slices``, ``write`` (output
files) and ``report`` (console).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PHASES", "Profile"]

PHASES = (
    "start-up",
    "plan",
    "cluster",
    "load",
    "similarities",
    "statistics",
    "intervals",
    "slices",
    "write",
    "report",
)


class Profile:
    """Accumulates wall-clock seconds per phase."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the body as (part of) phase ``name``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def ordered(self) -> dict[str, float]:
        """Seconds by phase, in pipeline order."""
        order = {name: i for i, name in enumerate(PHASES)}
        return dict(sorted(self.seconds.items(), key=lambda kv: order.get(kv[0], len(order))))
