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

from ..errors import OptionError
from ..records import FieldSpec, Table

__all__ = ["data_paths", "field_map", "suite_names"]


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
