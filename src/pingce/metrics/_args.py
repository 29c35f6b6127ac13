"""One home for checking a metric's arguments (a suite's ``args``, ``defaults`` or a metric built
in Python): :func:`check_arguments` reads the type hint on the metric class of each argument that
is a boolean, a number (with its ``Annotated`` range) or a block of options, and checks the value
with the one validator,
:func:`pingce._constraints.check_value`; an ``ArgumentError`` (a ``ValueError``) names the
argument, what it may be and the value it got. ``strict: "false"`` is refused there, not read
as true.

``check_bool`` and ``check_int`` are the same validator for the checks a class makes itself.
The zero-division policy has its own home, :mod:`pingce.metrics._policy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from .._constraints import Range, check_value, is_options, is_scalar, type_hints

__all__ = ["check_arguments", "check_bool", "check_int"]


def check_arguments(cls: type, args: Mapping[str, Any]) -> None:
    """Check the arguments in ``args`` that take a boolean or a number (with its range), or a
    block of options (``normalize``), against their type hints on ``cls`` (a metric or table
    dataclass). Text, lists and choices are the class's own to check: it knows what they mean
    (a field path, a tokenizer with a "did you mean", a label on the scale). Arguments the class
    does not declare are the registry's to refuse."""
    hints = type_hints(cls)
    for name, value in args.items():
        hint = hints.get(name)
        if hint is not None and (is_scalar(hint) or is_options(hint)):
            check_value(name, value, hint)


def check_bool(name: str, value: Any) -> bool:
    """``value`` if it is ``True`` or ``False`` (not 0 or 1, not the text ``"false"``); else
    ``ValueError``."""
    return bool(check_value(name, value, bool))


def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """``value`` if it is an integer (not a bool) in ``low..high`` (``high`` None: no upper
    bound); else ``ValueError``."""
    return int(check_value(name, value, Annotated[int, Range(low, high)]))
