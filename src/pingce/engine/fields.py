"""Field names as users have them: the suite reads ``pred_level``, the data calls it ``answer``.

The suite's ``fields:`` map and ``--map pred_level=answer`` (laid over it) name, for a field the
suite reads, the path it has in the data. The loader reads the data's paths (so an error names
the column the user knows); the table it returns is keyed by the suite's names again, so no
statistic knows a map was used.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import OptionError
from ..records import FieldSpec, Table

__all__ = ["check_maps_read", "data_paths", "field_map", "suite_names"]


def field_map(suite_fields: Mapping[str, str], option: Mapping[str, str]) -> dict[str, str]:
    """The suite's map with ``--map`` over it (an entry mapping a field to itself is dropped)."""
    merged = {**suite_fields, **option}
    return {name: path for name, path in merged.items() if name != path}


def _mapped(path: str, mapping: Mapping[str, str]) -> str:
    """``path`` under the map: a whole path, or its leading key (``meta`` maps ``meta.source``)."""
    if path in mapping:
        return mapping[path]
    for name, target in mapping.items():
        if path.startswith((f"{name}.", f"{name}[")):
            return target + path[len(name) :]
    return path


def data_paths(
    specs: Sequence[FieldSpec], id_path: str, mapping: Mapping[str, str], source: str | None
) -> tuple[list[FieldSpec], str]:
    """The specs and the id path as the data names them. Every name in the map must be a field
    the suite reads (the error lists them, with the closest), and two fields may not be read
    from one column."""
    read = [spec.path for spec in specs] + [id_path]
    heads = {path.split(".")[0].split("[")[0] for path in read}
    for name, target in mapping.items():
        if name not in read and name not in heads:
            close = difflib.get_close_matches(name, read, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise OptionError(
                f"--map {name}={target}: the suite reads no field {name!r} (it reads "
                f"{', '.join(sorted(set(read)))}){hint}"
            )
    renamed = []
    for spec in specs:  # the suite's name kept for messages (FieldSpec.name)
        path = _mapped(spec.path, mapping)
        renamed.append(
            spec if path == spec.path else dataclasses.replace(spec, path=path, name=spec.path)
        )
    owners: dict[str, str] = {}
    for spec, new in zip(specs, renamed, strict=True):
        first = owners.setdefault(new.path, spec.path)
        if first != spec.path:
            raise OptionError(
                f"--map: the fields {first!r} and {spec.path!r} would both be read from "
                f"{new.path!r} of {source or 'the data'}; map one of them elsewhere"
            )
    return renamed, _mapped(id_path, mapping)


def suite_names(table: Table, specs: Sequence[FieldSpec], renamed: Sequence[FieldSpec]) -> None:
    """Key ``table``'s columns by the suite's names again (in place), keeping the data's path
    of each renamed field (:attr:`Table.paths`, for messages)."""
    back = {new.path: old.path for old, new in zip(specs, renamed, strict=True)}
    table.columns = {back.get(path, path): column for path, column in table.columns.items()}
    table.paths = {name: path for path, name in back.items() if name != path}
    by_name = {spec.path: spec for spec in specs}
    table.specs = {
        back.get(path, path): by_name.get(back.get(path, path), spec)
        for path, spec in table.specs.items()
    }


def check_maps_read(table: Table, option: Mapping[str, str]) -> None:
    """``--map FIELD=COLUMN`` naming a column that no record has is an error: for an optional
    field a typo (``--map latency_sec=latency``) would leave it empty, its metrics null with "no
    record has latency_sec", and nothing would say that the map read nothing. ``table`` is
    keyed by the suite's names again (:func:`suite_names`)."""
    found = set(table.found)
    for name, target in option.items():
        head = target.split(".")[0].split("[")[0]
        if head in found or target in found:
            continue
        read = [
            column
            for path, column in table.columns.items()
            if path == name or path.startswith((f"{name}.", f"{name}["))
        ]
        if not read or any(_any_value(column) for column in read):
            continue
        close = difflib.get_close_matches(head, sorted(found), n=1, cutoff=0.6)
        if name in found:
            hint = f"; the records have {name!r} itself: leave out --map {name}"
        else:
            hint = f"; did you mean --map {name}={close[0]}?" if close else ""
        has = ", ".join(repr(key) for key in table.found[:20])
        raise OptionError(
            f"--map {name}={target}: no record of {table.source or 'the data'} has a field "
            f"{head!r} (the records have {has}){hint}"
        )


def _any_value(column: Any) -> bool:
    """Whether a loaded column holds any value (numbers: not NaN; others: not None)."""
    if isinstance(column, np.ndarray) and column.dtype.kind == "f":
        return bool((~np.isnan(column)).any())
    return any(value is not None for value in column)
