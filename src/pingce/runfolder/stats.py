"""stats.npz, a run's statistic blocks as plain arrays (:class:`SavedStats`: what a later
comparison pairs without evaluating again; :mod:`pingce.engine.saved` makes it from the blocks
and blocks of it), written and read; and, from ``--engine ray``, ``stats/part-N.npz`` (a whole
stats.npz of each piece's records, written by the worker that scored it) joined into one
(:func:`joined_stats`, :func:`read_stat_shards`): the same arrays the local engine saves for the
same records, so that ``pingce compare RUN_A RUN_B`` pairs a ray run's records with another
run's (ray or local) as it pairs two local runs'.

Joining is exact and cheap: codes, rows and masks concatenate; units (each whole in one piece)
are numbered in sorted order of their values, as one table's are; each ``--slice`` field's
values become the sorted union of the pieces' and its codes are renumbered into it; failure
counts add up. The joined statistics are in memory as a local run's are (a comparison needs
every paired record).
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import orjson

from .._json import dumps
from .layout import part_files

__all__ = ["SavedStats", "joined_stats", "read_stat_shards", "small_codes"]


def small_codes(codes: np.ndarray, width: int) -> np.ndarray:
    """One-hot ``codes`` into a ``width``-vector in the smallest unsigned type that holds them."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if width <= np.iinfo(dtype).max + 1:
            return codes.astype(dtype, copy=False)
    return codes


@dataclass
class SavedStats:
    """A run's per-record statistic blocks as plain arrays: the content of stats.npz, what a
    later comparison pairs without evaluating again (:mod:`pingce.engine.saved` makes it from
    the blocks and makes blocks of it).

    ``manifest`` is JSON-able: ``format``, ``n`` (records), ``suite``, ``statistics`` (per
    statistic name ``s0``, ``s1``...: ``key`` (the statistic's identity, as text), ``width``,
    ``layout`` (``codes`` or ``rows``), ``decomposable``, ``counts`` and, where the statistic
    names them, ``columns``), ``metrics`` (each
    metric's and table's statistic name), ``unit`` (the unit field, or None) and ``slices``
    (per slice field, its values in code order), and ``match_by`` when ``match`` is kept.

    ``arrays``: ``ids_json`` (the ids as one JSON array in UTF-8 bytes, null for a record
    without one; files of earlier versions hold ``ids``, a text array instead) and
    ``ids_missing`` (marks records without an id; then ``match``, in a suite with ``match_by``
    fields, holds each record's values of them as a JSON array), ``lines``, ``units`` (unit
    codes, in a unit suite), per statistic ``<name>.codes`` or ``<name>.rows`` (or
    ``<name>.row``: one row that every record shares) and, when present, ``<name>.scope``,
    ``<name>.unparsed``, ``<name>.left_out`` (boolean masks), and ``slice.<field>`` (a code per
    record into that slice field's values)."""

    FORMAT: ClassVar[int] = 1

    manifest: dict[str, Any]
    arrays: dict[str, np.ndarray]

    @property
    def columns(self) -> dict[str, list[str]]:
        """The names of each statistic's columns where its statistic names them
        (:meth:`pingce.metrics.protocol.Statistic.column_names`, kept in the manifest's
        ``columns``), for report.html's detail view; a stats.npz written before they were kept
        has none."""
        return {
            name: [str(c) for c in entry["columns"]]
            for name, entry in self.manifest["statistics"].items()
            if entry.get("columns")
        }

    @classmethod
    def load(cls, path: Any) -> SavedStats:
        """Read stats.npz (no pickled objects: plain arrays and the manifest as JSON text)."""
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        manifest = orjson.loads(str(arrays.pop("manifest")))
        if manifest.get("format") != cls.FORMAT:
            raise ValueError(f"{path}: stats.npz format {manifest.get('format')} is not known")
        return cls(manifest, arrays)

    def save(self, path: Any) -> None:
        """Write stats.npz: every array as ``<name>.npy`` and the manifest as JSON text
        (``manifest.npy``), in an uncompressed zip that ``numpy.load`` reads without pickles.
        The members carry a fixed date, so the same statistics give the same bytes."""
        members = {"manifest": np.array(dumps(self.manifest).decode("utf-8"))}
        members.update(self.arrays)
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            for name, array in members.items():
                info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                with zf.open(info, "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)

    def ids(self) -> list[str | None]:
        """The records' ids (None for a record without one)."""
        if "ids_json" in self.arrays:
            return list(orjson.loads(self.arrays["ids_json"].tobytes()))
        ids: list[str | None] = self.arrays["ids"].tolist()  # written by earlier versions
        missing = self.arrays.get("ids_missing")
        if missing is not None:
            for i in np.flatnonzero(missing).tolist():
                ids[i] = None
        return ids


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
        "ids_json": np.frombuffer(dumps([i for p in parts for i in p.ids()]), dtype=np.uint8),
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
