"""Saved per-record statistics as shards: what ``--engine ray`` writes instead of stats.npz
(``stats/part-NNNNN.npz``, one a piece of the data, each a whole stats.npz of that piece's
records, written by the worker that scored it), and :func:`joined_stats`, the shards made one
:class:`pingce.results.SavedStats` again, in piece order: the same arrays the local engine saves
for the same records, so that ``pingce compare RUN_A RUN_B`` pairs a ray run's records with
another run's (ray or local) as it pairs two local runs'.

Joining is exact and cheap: codes, rows and masks concatenate; units (each whole in one piece)
are numbered in sorted order of their values, as one table's are; each ``--slice`` field's
values become the sorted union of the pieces' and its codes are renumbered into it; failure
counts add up. The joined statistics are in memory as a local run's are (a comparison needs
every paired record).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import orjson

from .engine.saved import small_codes
from .record_shards import part_files
from .results import SavedStats

__all__ = ["joined_stats", "read_stat_shards"]

_DEFAULTS = {"scope": True, "unparsed": False, "left_out": False, "model_failed": False}
"""Each mask's value for the records of a piece that kept none (what its absence means)."""


def read_stat_shards(folder: str | os.PathLike[str]) -> SavedStats:
    """The stats shards in ``folder`` (``part-*.npz``, in name order) as one :class:`SavedStats`
    (a ``ValueError`` when there are none or they are not of one run)."""
    parts = part_files(folder, ".npz")
    if not parts:
        raise ValueError(f"{folder}: no stats shards (part-*.npz)")
    return joined_stats([SavedStats.load(part) for part in parts])


def joined_stats(parts: Sequence[SavedStats]) -> SavedStats:
    """The saved statistics of consecutive pieces of one run as those of all their records."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0].manifest
    for part in parts[1:]:
        for field in ("suite", "metrics", "unit"):
            if part.manifest.get(field) != first.get(field):
                raise ValueError(f"the stats shards disagree on {field}: not pieces of one run")
    sizes = [int(p.manifest["n"]) for p in parts]
    arrays: dict[str, np.ndarray] = {
        "ids_json": np.frombuffer(
            orjson.dumps([i for p in parts for i in p.ids()]), dtype=np.uint8
        ),
        "lines": np.concatenate([p.arrays["lines"] for p in parts]),
    }
    manifest: dict[str, Any] = {**first, "n": sum(sizes)}
    if any("ids_missing" in p.arrays for p in parts):
        arrays["ids_missing"] = _mask(parts, "ids_missing", False)
        if all("match" in p.arrays for p in parts):  # every piece keeps them (see saved_stats)
            arrays["match"] = np.concatenate([p.arrays["match"] for p in parts])
        else:
            manifest.pop("match_by", None)
    else:
        manifest.pop("match_by", None)
    if first.get("unit") is not None:
        arrays["units"] = _units(parts)
        manifest.pop("unit_keys", None)
    manifest["statistics"] = _statistics(parts, sizes, arrays)
    manifest["slices"] = {}
    for path in first.get("slices", {}):
        values = sorted({v for p in parts for v in p.manifest["slices"][path]})
        code = {v: k for k, v in enumerate(values)}
        arrays[f"slice.{path}"] = np.concatenate(
            [
                np.asarray([code[v] for v in p.manifest["slices"][path]], dtype=np.int64)[
                    p.arrays[f"slice.{path}"]
                ]
                for p in parts
            ]
        )
        manifest["slices"][path] = values
    return SavedStats(manifest, arrays)


def _mask(parts: Sequence[SavedStats], name: str, default: bool) -> np.ndarray:
    return np.concatenate(
        [
            p.arrays[name]
            if name in p.arrays
            else np.full(int(p.manifest["n"]), default, dtype=bool)
            for p in parts
        ]
    )


def _units(parts: Sequence[SavedStats]) -> np.ndarray:
    """The pieces' unit codes renumbered as one table's (:func:`pingce.engine.groups.unit_codes`
    numbers units in sorted order of their values; a unit lies whole in one piece)."""
    keys: list[tuple[int, str]] = []
    offsets = []
    for part in parts:
        offsets.append(len(keys))
        keys.extend(tuple(k) for k in part.manifest["unit_keys"])
    rank = np.empty(len(keys), dtype=np.int64)
    rank[sorted(range(len(keys)), key=keys.__getitem__)] = np.arange(len(keys))
    return np.concatenate(
        [rank[part.arrays["units"] + offset] for part, offset in zip(parts, offsets, strict=True)]
    )


def _statistics(
    parts: Sequence[SavedStats], sizes: list[int], arrays: dict[str, np.ndarray]
) -> dict[str, dict[str, Any]]:
    """The joined statistics' manifest entries, their arrays put in ``arrays``."""
    first = parts[0].manifest["statistics"]
    out: dict[str, dict[str, Any]] = {}
    for name, entry in first.items():
        entries = [p.manifest["statistics"].get(name) for p in parts]
        if any(e is None or e["key"] != entry["key"] for e in entries):
            raise ValueError(f"the stats shards disagree on the statistic {entry['key']}")
        width = int(entry["width"])
        counts: dict[str, int] = {}
        for e in entries:
            assert e is not None
            for reason, count in e["counts"].items():
                counts[reason] = counts.get(reason, 0) + int(count)
        layouts = {e["layout"] for e in entries if e is not None}
        if layouts == {"codes"}:
            codes = np.concatenate([p.arrays[f"{name}.codes"].astype(np.int64) for p in parts])
            arrays[f"{name}.codes"] = small_codes(codes, width)
        else:
            _rows(parts, sizes, name, width, arrays)
        for mask, default in _DEFAULTS.items():
            if any(f"{name}.{mask}" in p.arrays for p in parts):
                arrays[f"{name}.{mask}"] = _mask(parts, f"{name}.{mask}", default)
        out[name] = {
            **entry,
            "layout": "codes" if layouts == {"codes"} else "rows",
            "counts": counts,
        }
    return out


def _rows(
    parts: Sequence[SavedStats],
    sizes: list[int],
    name: str,
    width: int,
    arrays: dict[str, np.ndarray],
) -> None:
    """A statistic's rows over all pieces: one shared row when every piece shares the same one,
    otherwise every record's row (one-hot codes made rows)."""
    shared = [p.arrays.get(f"{name}.row") for p in parts]
    same = [row for row in shared if row is not None]
    if len(same) == len(parts) and all(np.array_equal(row, same[0]) for row in same):
        arrays[f"{name}.row"] = same[0]
        return
    rows = []
    for part, size, row in zip(parts, sizes, shared, strict=True):
        if row is not None:
            rows.append(np.broadcast_to(row, (size, row.shape[0])))
        elif f"{name}.codes" in part.arrays:
            rows.append(np.eye(width, dtype=np.float64)[part.arrays[f"{name}.codes"]])
        else:
            rows.append(part.arrays[f"{name}.rows"])
    arrays[f"{name}.rows"] = np.concatenate(rows)
