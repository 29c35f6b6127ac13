"""One home for the zero-division policy and the one safe division every ratio metric uses.

A ratio whose denominator is 0 is undefined. What it becomes is one explicit policy, as
scikit-learn's ``zero_division``: ``None`` (the default: null in results, with a reason), ``0.0``
or ``1.0``. The policy is validated by :func:`check_zero_division` wherever it enters (the
command line, a suite's ``defaults``, a metric's own arguments, ``pingce.evaluate``) and applied
by :func:`safe_divide`, nowhere else.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from .._constraints import Checked

__all__ = ["ZeroDivision", "check_zero_division", "fill_value", "safe_divide"]


def check_zero_division(value: object) -> ZeroDivision:
    """The policy from ``null``/``None``, ``0`` or ``1`` (numbers or their text); else
    ``ValueError`` naming the value."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().casefold()
        if text in ("null", "none"):
            return None
        if text in ("0", "1", "0.0", "1.0"):
            return float(text)
    elif isinstance(value, int | float) and not isinstance(value, bool) and value in (0, 1):
        return float(value)
    raise ValueError(f"zero_division must be null, 0 or 1, got {value!r}")


ZeroDivision = Annotated[float | None, Checked(check_zero_division, "null, 0 or 1")]
"""What a ratio whose denominator is 0 becomes: ``None`` (null with a reason), 0.0 or 1.0. As an
argument's type hint, the value is :func:`check_zero_division`'s to check (it also reads the
text ``"null"``, ``"0"`` and ``"1"`` that the command line gives)."""


def fill_value(zero_division: ZeroDivision) -> float:
    """The number an undefined ratio takes under the policy (NaN for null)."""
    return np.nan if zero_division is None else float(zero_division)


def safe_divide(num: object, den: object, zero_division: ZeroDivision) -> np.ndarray:
    """``num / den`` elementwise, as float64; where ``den == 0`` the policy's value (NaN for
    null). Broadcasts like numpy; never warns."""
    n = np.asarray(num, dtype=np.float64)
    d = np.asarray(den, dtype=np.float64)
    zero = d == 0
    out = np.divide(n, np.where(zero, 1.0, d))
    return np.asarray(np.where(zero, fill_value(zero_division), out), dtype=np.float64)
