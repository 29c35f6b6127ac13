"""Gold and predictions in two files, joined by id (``--gold FILE``, ``--allow-missing``).

Many teams keep the references apart from each system's outputs. The gold file is read whole
(the fields the suite reads, by id); the predictions are then streamed, and each record gets
the gold record of its id. A record on one side only is an error naming it, or, with
``--allow-missing``, left out and counted (the result says how many, in words). A field both
files have must agree. An invalid value is reported in the file and on the line it came from.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError, OptionError
from .readers import Block, BlockStream, Reading, Wanted, path_reading

__all__ = ["GoldJoin", "joined_reading"]


@dataclass
class GoldJoin:
    """How the join went: the gold file, and the records of one side only (left out under
    ``--allow-missing``)."""

    gold: str
    id_field: str
    allow_missing: bool
    predictions_without_gold: int = 0
    gold_without_prediction: int = 0
    origin: dict[int, tuple[int, frozenset[str]]] = field(default_factory=dict)
    """For each prediction line, the gold line joined to it and the keys that came from it."""
    encoding: str | None = None
    """What to say of the gold file's encoding (:meth:`Reading.encoding_note`)."""

    def notes(self, predictions: str) -> list[str]:
        """The gold file's encoding when it is not UTF-8, and the counted misses, in words."""
        out = [] if self.encoding is None else [self.encoding]
        if self.gold_without_prediction:
            out.append(
                f"{self.gold_without_prediction} record(s) of {self.gold} have no prediction in "
                f"{predictions} and were left out (--allow-missing)"
            )
        if self.predictions_without_gold:
            out.append(
                f"{self.predictions_without_gold} record(s) of {predictions} have no gold record "
                f"in {self.gold} and were left out (--allow-missing)"
            )
        return out

    def relocate(self, error: InputError) -> InputError:
        """``error`` (raised on a joined record) moved to the gold file's line when the field
        at fault came from the gold record."""
        if error.source == self.gold or error.line is None or error.field is None:
            return error  # the join's own errors name their file already
        if error.line not in self.origin:
            return error
        gold_line, keys = self.origin[error.line]
        head = error.field.split(".")[0].split("[")[0]
        if head not in keys:
            return error
        return InputError(
            error.reason,
            source=self.gold,
            line=gold_line,
            field=error.field,
            value=error.value,
            unit=error.unit,
        )


def _rows(block: Block) -> Iterator[tuple[int, Any]]:
    """(line, record) pairs of a block, a columnar block's records made into objects."""
    if block.columns is None:
        yield from zip(block.numbers, block.records, strict=True)
        return
    names = list(block.columns)
    for i, number in enumerate(block.numbers):
        yield number, {name: block.columns[name][i] for name in names}


def _blocks(reading: Reading) -> Iterator[tuple[int, Any]]:
    try:
        for block in reading.blocks:
            yield from _rows(block)
            if block.error is not None:
                raise block.error
    finally:
        reading.blocks.close()


def _id(record: Any, id_field: str, source: str, line: int) -> str:
    if not isinstance(record, dict):
        raise InputError(
            "each record must be a JSON object", source=source, line=line, value=record
        )
    value = record.get(id_field)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(
            "--gold joins records by id: each record needs one (a string or an integer)",
            source=source,
            line=line,
            field=id_field,
            value=value,
        )
    return str(value)


def joined_reading(
    predictions: str | os.PathLike[str],
    gold: str | os.PathLike[str],
    *,
    wanted: Wanted,
    id_field: str,
    encoding: str | None,
    allow_missing: bool,
) -> tuple[Reading, GoldJoin]:
    """The prediction file's records, each with its gold record's fields, as one reading."""
    gold_label = str(gold)
    if "." in id_field or "[" in id_field:
        raise OptionError(
            f"--gold joins by a top-level id field; the suite's id field {id_field!r} is a path "
            "(map it to a column with --map, or set the suite's id_field)"
        )
    join = GoldJoin(gold_label, id_field, allow_missing)
    gold_reading = path_reading(gold, wanted=wanted, encoding=encoding)
    by_id: dict[str, tuple[int, dict[str, Any]]] = {}
    for line, record in _blocks(gold_reading):
        key = _id(record, id_field, gold_label, line)
        if key in by_id:
            raise InputError(
                f"duplicate id; first seen on line {by_id[key][0]}",
                source=gold_label,
                line=line,
                field=id_field,
                value=key,
            )
        by_id[key] = (line, record)
    if not by_id:
        raise InputError("no records: the gold file is empty", source=gold_label)
    reading = path_reading(predictions, wanted=wanted, encoding=encoding)
    label = str(predictions)

    def blocks() -> BlockStream:
        seen: set[str] = set()
        numbers: list[int] = []
        merged: list[Any] = []
        for line, record in _blocks(reading):
            key = _id(record, id_field, label, line)
            found = by_id.get(key)
            if found is None:
                if not allow_missing:
                    raise InputError(
                        f"no record of {gold_label} has this id (--allow-missing leaves such "
                        "records out and counts them)",
                        source=label,
                        line=line,
                        field=id_field,
                        value=key,
                    )
                join.predictions_without_gold += 1
                continue
            gold_line, gold_record = found
            seen.add(key)
            record = {name: value for name, value in record.items() if value is not None}
            for name, value in gold_record.items():
                if (
                    name != id_field
                    and name in record
                    and value is not None
                    and (record[name] != value)
                ):
                    raise InputError(
                        f"differs from {gold_label} line {gold_line} ({value!r}): a field "
                        "both files have must agree",
                        source=label,
                        line=line,
                        field=name,
                        value=record[name],
                    )
            join.origin[line] = (gold_line, frozenset(gold_record))
            numbers.append(line)
            merged.append({**{k: v for k, v in gold_record.items() if v is not None}, **record})
            if len(merged) >= 16384:
                yield Block(numbers, merged)
                numbers, merged = [], []
        if numbers:
            yield Block(numbers, merged)
        missing = [(line, key) for key, (line, _) in by_id.items() if key not in seen]
        if missing and not allow_missing:
            line, key = min(missing)
            raise InputError(
                f"no record of {label} has this id ({len(missing)} gold record(s) without a "
                "prediction; --allow-missing leaves them out and counts them)",
                source=gold_label,
                line=line,
                field=id_field,
                value=key,
            )
        join.gold_without_prediction = len(missing)

    joined = Reading(
        label, blocks(), unit=reading.unit, encoding=reading.encoding, detected=reading.detected
    )
    join.encoding = gold_reading.encoding_note()
    return joined, join
