"""pingce (评测): evaluate LLM applications against ground truth.

>>> import pingce
>>> result = pingce.evaluate("contract-risk", "records.jsonl")  # doctest: +SKIP
>>> result.metrics["accuracy"].value  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from ._version import __version__
from .errors import InputError, OptionError, PingceError, SuiteError
from .labels import LabelScale
from .results import EvaluationResult, MetricResult

__all__ = [
    "EvaluationResult",
    "InputError",
    "LabelScale",
    "MetricResult",
    "OptionError",
    "PingceError",
    "SuiteError",
    "__version__",
    "compare",
    "evaluate",
]


def evaluate(
    suite: str | os.PathLike[str] | Any,
    records: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    *,
    out: str | os.PathLike[str] | None = None,
    **options: Any,
) -> EvaluationResult:
    """Evaluate ``records`` with ``suite`` and return the result that results.json serialises.

    ``suite`` is a built-in name, a suite YAML path or a :class:`pingce.suites.SuiteSpec`;
    ``records`` a JSONL/CSV path or an iterable of dictionaries. ``options`` are the command
    line's, with underscores: ``sample``, ``stratify``, ``allocation``, ``short_strata``, ``seed``,
    ``bootstrap``, ``ci_method``, ``ci_level``, ``slices`` (or ``slice``), ``zero_division``,
    ``similarity``. With ``out``, results.json, records.jsonl and report.md are written there.
    """
    from .report.files import write_outputs
    from .runner import RunOptions, evaluate_suite

    if "slice" in options:
        value = options.pop("slice")
        options["slices"] = (value,) if isinstance(value, str) else tuple(value)
    elif "slices" in options and isinstance(options["slices"], str):
        options["slices"] = (options["slices"],)
    known = set(RunOptions.__dataclass_fields__)
    unknown = sorted(set(options) - known)
    if unknown:
        raise OptionError(f"unknown option(s) {unknown}; known: {sorted(known)}")
    result = evaluate_suite(suite, records, RunOptions(**options))
    if out is not None:
        write_outputs(result, out)
    return result


_COMPARE_OPTIONS = ("similarity", "bootstrap", "seed", "ci_method", "ci_level", "base_url", "cache")


def compare(
    suite: str | os.PathLike[str] | Any,
    candidate: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    baseline: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    *,
    out: str | os.PathLike[str] | None = None,
    **options: Any,
) -> Any:
    """Compare two systems' outputs over the same records (matched by id) on ``suite``.

    Returns a :class:`pingce.comparison.ComparisonResult`: per metric both values, ``delta =
    candidate - baseline``, its paired bootstrap interval and p-value. ``options``:
    ``similarity``, ``bootstrap``, ``seed``, ``ci_method``, ``ci_level``, ``base_url``,
    ``cache``. With ``out``, comparison.json is written there.
    """
    from .comparison import compare_suite, write_comparison
    from .runner import RunOptions

    unknown = sorted(set(options) - set(_COMPARE_OPTIONS))
    if unknown:
        raise OptionError(f"unknown option(s) {unknown}; known: {sorted(_COMPARE_OPTIONS)}")
    result = compare_suite(suite, candidate, baseline, RunOptions(**options))
    if out is not None:
        write_comparison(result, out)
    return result
