"""The shards of a data set: files or globs cut into pieces that are read independently with the
same records, line numbers and errors as a reading of each whole file.

A JSONL file is cut at line starts into pieces of about :data:`PIECE_BYTES`; the first line
number of each piece is found by counting the newlines before it (done by the pieces themselves,
in parallel, with :func:`count_lines`). A Parquet file is cut at row groups (its metadata gives
their sizes). A compressed or other file is one piece.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from ..errors import InputError, OptionError
from ..readers import Reading, jsonl_range_reading, parquet_groups_reading
from ..records import wanted_fields
from .fields import data_paths, field_map
from .plan import Plan

__all__ = [
    "PIECE_BYTES",
    "Piece",
    "count_lines",
    "expand_paths",
    "number_pieces",
    "open_piece",
    "plan_pieces",
]

PIECE_BYTES = 64 << 20
"""About how many bytes of JSONL a piece holds."""


@dataclass(frozen=True)
class Piece:
    """One independently read part of one file."""

    path: str
    kind: str
    """``jsonl`` (a byte range), ``parquet`` (row groups) or ``file`` (the whole file)."""
    start: int = 0
    stop: int = 0
    """JSONL: the byte range; Parquet: the row groups ``start`` to ``stop - 1``."""
    first: int = 1
    """The number of the piece's first line (JSONL) or record (Parquet)."""
    file: int | None = None
    """In a run over several files, the number of its file among them (from 0, in the order
    given), which keys its records without an id in the bootstrap; None for one file."""


def expand_paths(data: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """The files of ``data``: a path, a glob (``shards/*.jsonl``) or a list of them, each glob
    sorted, each file once however it is spelled (``a.jsonl``, ``./a.jsonl``, a link to it);
    an error naming a path or glob that matches no file. A file whose name has ``*``, ``?`` or
    ``[`` is that file, not a pattern."""
    given = [data] if isinstance(data, str | os.PathLike) else list(data)
    if not given:
        raise OptionError("--data names no file")
    out: dict[str, str] = {}  # a file's real path: the name it was first given by
    for item in given:
        text = os.fspath(item)
        if os.path.isfile(text):
            found = [text]
        elif glob.has_magic(text):
            found = sorted(p for p in glob.glob(text, recursive=True) if os.path.isfile(p))
            if not found:
                raise InputError("no file matches this pattern", source=text)
        elif os.path.isdir(text):
            raise InputError(
                "a folder, not a file: name its files with a pattern (FOLDER/*.jsonl)",
                source=text,
            )
        else:
            raise InputError("no such file", source=text)
        for path in found:
            out.setdefault(os.path.realpath(path), path)
    return list(out.values())


def plan_pieces(
    paths: Sequence[str], piece_bytes: int = PIECE_BYTES, *, whole_files: bool = False
) -> list[Piece]:
    """Cut the files into pieces (JSONL pieces still numbered from 1: see
    :func:`number_pieces`). ``whole_files``: one piece per file (a suite with ``unit:`` reads
    a unit's records together, and a unit must not be cut: keep each unit in one file)."""
    pieces: list[Piece] = []
    several = len(paths) > 1
    for k, path in enumerate(paths):
        name = path.lower()
        if whole_files:
            cut = [Piece(path, "file")]
        elif name.endswith(".jsonl") or name.endswith(".ndjson"):
            cut = _jsonl_pieces(path, piece_bytes)
        elif name.endswith(".parquet"):
            cut = _parquet_pieces(path, piece_bytes)
        else:
            cut = [Piece(path, "file")]
        pieces.extend(replace(piece, file=k) if several else piece for piece in cut)
    return pieces


def _jsonl_pieces(path: str, piece_bytes: int) -> list[Piece]:
    size = os.path.getsize(path)
    with open(path, "rb") as handle:
        head = handle.read(4)
        if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise OptionError(
                f"{path}: the distributed engine reads UTF-8 JSONL; this file is UTF-16 "
                "(convert it, or run it with the local engine)"
            )
        cuts = [0]
        at = piece_bytes
        while at < size:
            handle.seek(at)
            handle.readline()  # to the start of the next line
            cut = handle.tell()
            if cut >= size:
                break
            if cut > cuts[-1]:
                cuts.append(cut)
            at = cut + piece_bytes
    cuts.append(size)
    return [Piece(path, "jsonl", a, b) for a, b in pairwise(cuts) if b > a]


def _parquet_pieces(path: str, piece_bytes: int) -> list[Piece]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return [Piece(path, "file")]
    try:
        meta = pq.ParquetFile(path).metadata
    except Exception:
        return [Piece(path, "file")]
    pieces: list[Piece] = []
    start, size, first, rows = 0, 0, 1, 0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        size += group.total_byte_size
        rows += group.num_rows
        if size >= piece_bytes or g == meta.num_row_groups - 1:
            pieces.append(Piece(path, "parquet", start, g + 1, first))
            start, size, first, rows = g + 1, 0, first + rows, 0
    return pieces or [Piece(path, "file")]


def count_lines(piece: Piece) -> int:
    """The newlines in a JSONL piece (what numbers the lines of the pieces after it)."""
    if piece.kind != "jsonl":
        return 0
    count = 0
    with open(piece.path, "rb") as handle:
        handle.seek(piece.start)
        left = piece.stop - piece.start
        while left > 0:
            data = handle.read(min(1 << 22, left))
            if not data:
                break
            left -= len(data)
            count += data.count(b"\n")
    return count


def number_pieces(pieces: Sequence[Piece], newlines: Sequence[int]) -> list[Piece]:
    """The JSONL pieces with their first line numbers, from each piece's newline count."""
    out: list[Piece] = []
    line: dict[str, int] = {}
    for piece, count in zip(pieces, newlines, strict=True):
        if piece.kind == "jsonl":
            first = line.get(piece.path, 1)
            out.append(replace(piece, first=first))
            line[piece.path] = first + count
        else:
            out.append(piece)
    return out


def open_piece(plan: Plan, piece: Piece) -> Reading | str:
    """A piece as what :func:`pingce.engine.phases.load` reads."""
    if piece.kind == "jsonl":
        return jsonl_range_reading(piece.path, piece.start, piece.stop, piece.first)
    if piece.kind == "parquet":
        mapping = field_map(plan.suite.spec.fields, plan.options.field_map)
        specs, id_path = data_paths(plan.fields, plan.suite.spec.id_field, mapping, piece.path)
        groups = range(piece.start, piece.stop)
        return parquet_groups_reading(
            piece.path, list(groups), piece.first, wanted_fields(specs, id_path)
        )
    return piece.path
