"""Defaults shared by the command line (which shows them in its help before it imports anything
heavy) and :class:`pingce.options.RunOptions`: one home for each, and for the range of every
number an option takes."""

from __future__ import annotations

from typing import Annotated, Any

from ._constraints import Range

__all__ = [
    "BOOTSTRAP_METHODS",
    "BOOTSTRAP_STREAMS",
    "CONCURRENCY",
    "DEFAULT_SIMILARITY",
    "MAX_BOOTSTRAP",
    "OPTION_TYPES",
]

DEFAULT_SIMILARITY = "lexical"
"""``--similarity`` of ``pingce run``, ``pingce compare`` and ``pingce calibrate``: offline, fast,
a pair's score depends on the pair alone."""

BOOTSTRAP_STREAMS = ("per-block", "indices")
"""``--bootstrap-stream`` of ``pingce run`` and ``pingce compare``, the default first: how the
multinomial bootstrap draws (per block: Multinomial counts of its distinct rows; indices: n
record indices shared by every block, the stream before issue 32, kept for one release)."""

BOOTSTRAP_METHODS = ("multinomial", "poisson")
"""``--bootstrap-method`` of ``pingce run`` and ``pingce compare``, the default first
(:data:`pingce.stats.BootstrapMethod`)."""

MAX_BOOTSTRAP = 1_000_000
"""The most resamples a run may ask for: a bound that keeps a typo (1000000000) from trying to
allocate tens of gigabytes."""

CONCURRENCY = Range(1, 1024)
"""Calls in flight at once, to the model under test (``--model-concurrency``, a suite's
``model.concurrency``) or to a remote similarity backend (``similarity.concurrency``)."""

OPTION_TYPES: dict[str, Any] = {
    "sample": Annotated[int, Range(1, 10**12)],
    "seed": Annotated[int, Range(0, 2**63 - 1)],
    "bootstrap": Annotated[int, Range(0, MAX_BOOTSTRAP)],
    "ci_level": Annotated[float, Range(0, 1, low_open=True, high_open=True)],
    "model_concurrency": Annotated[int, CONCURRENCY],
    "repeats": Annotated[int, Range(1, 1000)],
    "judge_repeats": Annotated[int, Range(1, 100)],
    "target_se": Annotated[float, Range(0, None, low_open=True)],
    "limit": Annotated[int, Range(0, 10**12)],
    "report_records": Annotated[int, Range(0, 10**9)],
    "port": Annotated[int, Range(0, 65535)],
}
"""Every number a command-line option takes, with its range: the command line declares them as
click's ``IntRange``/``FloatRange`` (``pingce.cli.table``),
:meth:`pingce.options.RunOptions.validate` checks the same (``pingce.evaluate(seed=-1)``) with
:func:`pingce._constraints.check_value`.
The seed is stored in the run store's SQLite integer (64 bits); ``limit`` 0 lists every run."""
