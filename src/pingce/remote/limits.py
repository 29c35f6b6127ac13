"""The ranges of what a client of a model server may be set to, declared once as ``Annotated``
types: a similarity backend's keyword-only parameters (which a suite's ``similarity:`` block sets,
:func:`pingce.similarity.registry.backend_options`) and a suite's ``model:`` block
(:class:`pingce.suites.spec.ModelSpec`) use them, and :func:`pingce._constraints.check_value`
reads them."""

from __future__ import annotations

from typing import Annotated

from .._constraints import Range
from .._defaults import CONCURRENCY

__all__ = [
    "Backoff",
    "BatchSize",
    "Concurrency",
    "MaxTokens",
    "Price",
    "Retries",
    "Seconds",
    "Temperature",
    "Wait",
]

Concurrency = Annotated[int, CONCURRENCY]
"""Calls in flight at once."""
Retries = Annotated[int, Range(0, 100)]
"""Retries after the first attempt."""
Seconds = Annotated[float, Range(0, 86_400, low_open=True)]
"""A call's timeout."""
Backoff = Annotated[float, Range(0, 3_600)]
"""The first back-off, in seconds."""
Wait = Annotated[float, Range(0, 86_400)]
"""A cap of a wait, in seconds (the back-off's, a server's ``Retry-After``)."""
Price = Annotated[float, Range(0, 1_000_000)]
"""Per 1k tokens."""
BatchSize = Annotated[int, Range(1, 100_000)]
"""Texts or pairs sent (or encoded) at once."""
Temperature = Annotated[float, Range(0, 2)]
MaxTokens = Annotated[int, Range(1, 1_000_000)]
