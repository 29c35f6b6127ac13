"""pandas views of results: the frames of ``EvaluationResult.to_pandas()``,
``EvaluationResult.record_frame()`` and ``ComparisonResult.to_pandas()`` are built here.

pandas is optional: it is imported when a frame is asked for (never by ``import pingce``), and
its absence is an ImportError that says what to install. The frames hold the results' own numbers,
unrounded: a float column has NaN where results.json has null, a count that may be absent is a
nullable integer (``Int64``), and text is pandas' text dtype (``str`` from pandas 3 on, with NaN
where there is none; ``object`` with None before).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    from pydantic.fields import FieldInfo

    from .results import RecordRows

__all__ = ["entry_frame", "record_frame", "require_pandas", "split_slice_key"]

REASON_SUFFIX = "_reason"
"""A record frame's column of why a record missed metric ``m`` is ``m + REASON_SUFFIX``."""


def require_pandas(what: str) -> None:
    """Import pandas, or raise an ImportError that says ``what`` needs it and how to install it."""
    try:
        import pandas  # noqa: F401
    except ImportError:
        raise ImportError(
            f"{what} needs pandas, which is not installed: pip install pandas"
        ) from None


def _text_dtype(pd: Any) -> Any:
    """The dtype pandas gives text: ``str`` where it infers one (pandas 3; NaN for missing),
    else ``object`` (None for missing; ``astype(str)`` would write None as "None")."""
    return pd.Series(["text"]).dtype


def _dtype(pd: Any, annotation: Any) -> Any:
    """The column dtype of a result field from its annotation."""
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    args = set(typing.get_args(annotation)) if union else set()
    kinds = args - {type(None)} or {annotation}
    optional = type(None) in args
    if kinds <= {float, int} and float in kinds:
        return "float64"
    if kinds == {int}:
        return "Int64" if optional else "int64"
    if kinds == {bool}:
        return "boolean" if optional else "bool"
    return _text_dtype(pd)


def split_slice_key(key: str) -> tuple[str, str]:
    """``("task", "judge")`` from a slice's key ``"task=judge"`` (the value may hold ``=``)."""
    field, _, value = key.partition("=")
    return field, value


def entry_frame(
    what: str,
    entries: Sequence[tuple[Mapping[str, Any], Any]],
    fields: Mapping[str, FieldInfo],
    leading: Sequence[str],
    last: Sequence[str] = (),
) -> pd.DataFrame:
    """One row per ``(labels, entry)``: the ``leading`` label columns (text), then the entry
    model's ``fields`` in their order with those in ``last`` at the end, typed by annotation."""
    require_pandas(what)
    import pandas as pd

    names = [n for n in fields if n not in last] + [n for n in last if n in fields]
    columns: dict[str, Any] = {}
    text = _text_dtype(pd)
    for label in leading:
        columns[label] = pd.Series([labels[label] for labels, _ in entries], dtype=object)
        columns[label] = columns[label].astype(text)
    for name in names:
        values = [getattr(entry, name) for _, entry in entries]
        dtype = _dtype(pd, fields[name].annotation)
        if dtype == "float64":
            values = [np.nan if v is None else v for v in values]
        columns[name] = pd.Series(values, dtype=object).astype(dtype)
    return pd.DataFrame(columns, columns=[*leading, *names])


def record_frame(what: str, rows: RecordRows, fields: bool) -> pd.DataFrame:
    """One row per record: ``id``, ``line``, the fields read and the context fields (with
    ``fields``; a context value None where the record lacks it), each metric's
    per-record value (float64, NaN where undefined) and, where the engine gives one, the reason
    each record missed it (``<metric>_reason``, text; missing where it did not miss)."""
    require_pandas(what)
    import pandas as pd

    text = _text_dtype(pd)
    columns: dict[str, Any] = {
        "id": pd.Series(rows.ids, dtype=object).astype(text),
        "line": pd.Series(np.asarray(rows.lines, dtype=np.int64)),
    }

    def add(name: str, column: Any) -> None:
        if name in columns:
            raise ValueError(
                f"{what}: two columns would be named {name!r} (a field, a metric, or a metric's "
                f"reason column, <metric>{REASON_SUFFIX}); rename the metric in the suite"
            )
        columns[name] = column

    if fields:
        for path, column in [*rows.fields.items(), *rows.context.items()]:
            add(path, pd.Series(_objects(column), dtype=object))
    for name, values in rows.values.items():
        add(name, pd.Series(np.asarray(values, dtype=np.float64)))
    for name, reasons in rows.misses.items():
        add(name + REASON_SUFFIX, pd.Series(_objects(reasons), dtype=object).astype(text))
    return pd.DataFrame(columns, columns=list(columns))


def _objects(column: Any) -> np.ndarray:
    """A column as an object array of Python values (numpy scalars as Python's)."""
    values = column.tolist() if isinstance(column, np.ndarray) else list(column)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out
