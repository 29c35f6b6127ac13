"""JSON text of any value pingce sends or keys: orjson's, or, for what orjson refuses (an integer
of 2**64 or more, as ``"maximum": 18446744073709551616`` in a tool's schema), the standard
library's, which writes any integer exactly.

A model's request, a cache key and a function schema may hold such an integer when the user's
records do (JSON allows it); they are sent and keyed as written, never a traceback."""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["dumps"]


def dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    """The compact JSON text of ``value`` as UTF-8 bytes (keys sorted when ``sort_keys``):
    orjson's, else the json module's when orjson cannot write an integer. The two texts of one
    value may differ (a cache key made by one is only ever compared with keys made the same way,
    since the value decides which encoder writes it)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except TypeError:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
        return text.encode("utf-8")
