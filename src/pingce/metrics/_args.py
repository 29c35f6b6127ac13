"""One home for checking a metric's scalar arguments (a suite's ``args``, ``defaults`` or a
metric built in Python): ``ValueError`` naming the argument and the value it got.

The zero-division policy has its own home, :mod:`pingce.metrics._policy`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_bool", "check_int"]


def check_bool(name: str, value: Any) -> bool:
    """``value`` if it is ``True`` or ``False`` (not 0 or 1); else ``ValueError``."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return value


def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """``value`` if it is an integer (not a bool) in ``low..high`` (``high`` None: no upper
    bound); else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be an integer in {low}..{high}, got {value!r}")
    return value
