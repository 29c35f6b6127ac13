"""The one JSON policy of pingce: how every JSON text it writes, sends or keys is made.

* **Non-finite numbers are null.** JSON has no NaN or infinity (Python's ``json`` would write
  ``NaN``, which other readers refuse): a NaN or an infinity is written ``null``, by every
  encoder here and by the result models (:data:`NON_FINITE`, pydantic's ``ser_json_inf_nan``).
  A reader takes ``null`` back as "no value" (records.jsonl's NaN values, a null metric).
* **UTF-8 as it is**: characters are never escaped as ``\\uXXXX``.
* **Compact text by orjson** (:func:`dumps`, :func:`json_texts`: results' rows, records.jsonl,
  predictions.jsonl, a stats.npz manifest, a model's request, a cache key); for what orjson
  refuses (an integer of 2**64 or more, valid JSON that a record or a tool's schema may hold) the
  standard library writes the same text, any integer exactly. Indented text (a calibration file,
  :func:`dumps_indented`; the ``--json`` outputs of ``pingce runs``) is the standard library's
  with two spaces; the run history's options are stored as :func:`dumps` writes them.

A request, a cache key and a function schema may hold such an integer when the user's records
do; they are sent and keyed as written, never a traceback."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import orjson

__all__ = ["NON_FINITE", "dumps", "dumps_indented", "finite", "json_texts"]

NON_FINITE: Literal["null"] = "null"
"""What a NaN or an infinity is written as, in every JSON text pingce writes (the value of
pydantic's ``ser_json_inf_nan`` for the result models)."""


def dumps(
    value: Any, *, sort_keys: bool = False, default: Callable[[Any], Any] | None = None
) -> bytes:
    """The compact JSON text of ``value`` as UTF-8 bytes (keys sorted when ``sort_keys``; a
    value JSON has no type for written as ``default`` makes it, e.g. ``str``): orjson's, else the
    json module's when orjson cannot write an integer. The two texts of one value may differ (a
    cache key made by one is only ever compared with keys made the same way, since the value
    decides which encoder writes it)."""
    try:
        return orjson.dumps(
            value, default=default, option=orjson.OPT_SORT_KEYS if sort_keys else None
        )
    except TypeError:
        text = json.dumps(
            finite(value),
            ensure_ascii=False,
            separators=(",", ":"),
            sort_keys=sort_keys,
            default=default,
        )
        return text.encode("utf-8")


def dumps_indented(value: Any, *, sort_keys: bool = False) -> str:
    """The JSON text of ``value`` indented by two spaces (a file a person reads, a ``--json``
    output; keys sorted when ``sort_keys``)."""
    return json.dumps(finite(value), ensure_ascii=False, indent=2, sort_keys=sort_keys)


def finite(value: Any) -> Any:
    """``value`` with every NaN and infinity (in its lists and objects too) made None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


_NUMERIC = (np.dtype(np.float64), np.dtype(np.int64))
_COMMA_FREE = {int, float, bool, type(None)}
"""Types whose JSON texts hold no comma: a list of them is serialised whole, then split."""
_GAP = "\x00"
"""Put between the values of a list serialised whole: its JSON text ``"\\u0000"`` is a string
of its own, so where it occurs only as often as it was put in, it marks where values end."""
_GAP_TEXT = orjson.dumps(_GAP)
_CUT = b"\x00"
"""A byte orjson never writes (it escapes the character): where a text is cut in pieces."""


def json_texts(values: Sequence[Any] | np.ndarray, prefix: bytes = b"") -> list[bytes]:
    """``prefix`` followed by ``orjson.dumps(value)`` for each value (NaN and infinities: null;
    an array of float64 or int64 gives the texts of its elements as Python numbers), from one
    orjson call for the whole list where the values allow: a call per value costs several
    times as much, and each result holds a few kilobytes of room. Values orjson cannot write
    (an integer beyond 64 bits, valid JSON that a record may hold) go through the standard
    library's encoder instead."""
    try:
        return _json_texts(values, prefix)
    except TypeError:
        if isinstance(values, np.ndarray):
            values = values.tolist()
        return [prefix + _standard_json(value) for value in values]


def _standard_json(value: Any) -> bytes:
    """The compact JSON text of a value by the standard library (NaN and infinities: null)."""
    return json.dumps(
        finite(value), ensure_ascii=False, separators=(",", ":"), default=_as_orjson_would
    ).encode("utf-8")


def _as_orjson_would(value: Any) -> Any:
    """What orjson writes for values the standard encoder does not know: a dataclass as an
    object of its fields (but those whose name starts with an underscore, as orjson leaves them
    out: a call's cached text), a numpy number as a number; anything else as its text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return finite({f.name: getattr(value, f.name) for f in fields if f.name[0] != "_"})
    if isinstance(value, np.generic):
        return finite(value.item())
    return str(value)


def _json_texts(values: Sequence[Any] | np.ndarray, prefix: bytes) -> list[bytes]:
    if isinstance(values, np.ndarray) and values.dtype in _NUMERIC and values.ndim == 1:
        if not values.size:
            return []
        numbers = orjson.dumps(np.ascontiguousarray(values), option=orjson.OPT_SERIALIZE_NUMPY)
        return _cut(numbers[1:-1], b",", prefix)
    if not isinstance(values, list):
        values = values.tolist() if isinstance(values, np.ndarray) else list(values)
    if not values:
        return []
    if set(map(type, values)) <= _COMMA_FREE:
        return _cut(orjson.dumps(values)[1:-1], b",", prefix)
    spaced: list[Any] = [_GAP] * (2 * len(values) - 1)
    spaced[::2] = values
    text = orjson.dumps(spaced)
    if text.count(_GAP_TEXT) == len(values) - 1:  # no value holds the gap itself
        return _cut(text[1:-1], b"," + _GAP_TEXT + b",", prefix)
    return _cut(b"".join(map(_cut_before, values)), _CUT, prefix)[1:]


def _cut(text: bytes, separator: bytes, prefix: bytes) -> list[bytes]:
    """``text`` split at ``separator``, each piece with ``prefix`` before it."""
    return (prefix + text.replace(separator, _CUT + prefix)).split(_CUT)


def _cut_before(value: Any) -> bytes:
    return _CUT + orjson.dumps(value)
