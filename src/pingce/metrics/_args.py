"""One home for checking a metric's arguments, as scikit-learn's ``validate_params``: the type
hint on the metric class of each argument declares what it may be (a boolean, a number with its
``Annotated`` range, a ``Literal`` choice, a block of options, or a policy of its own such as the
zero-division policy), and the one validator, :func:`pingce._constraints.check_value`, checks
it. :func:`check_fields` runs once when a metric or table is built, in Python or by the registry
from a suite (:class:`~pingce.metrics.protocol.Metric`'s ``__post_init__`` calls it; a class's
own ``__post_init__`` calls that first and then only derives its state); an ``ArgumentError``
(a ``ValueError``) names the argument, what it may be and the value it got. ``strict: "false"``
is refused there, not read as true.

The zero-division policy has its own home, :mod:`pingce.metrics._policy`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from .._constraints import check_value, is_declared, type_hints

__all__ = ["check_arguments", "check_fields"]


def check_arguments(cls: type, args: Mapping[str, Any]) -> None:
    """Check the arguments in ``args`` whose type hints on ``cls`` (a metric or table dataclass)
    declare what they may be (:func:`pingce._constraints.is_declared`). Text, lists and classes
    of their own are the class's to check: it knows what they mean (a field path, a tokenizer
    with a "did you mean", a label on the scale). Arguments the class does not declare are the
    registry's to refuse."""
    hints = type_hints(cls)
    for name, value in args.items():
        hint = hints.get(name)
        if hint is not None and is_declared(hint):
            check_value(name, value, hint)


def check_fields(instance: Any) -> None:
    """Check every argument (init field) of a metric or table dataclass that its type hint
    declares, in field order, and keep the value its policy reads (the zero-division policy's
    ``0.0`` for the text ``"0"``)."""
    cls: type = type(instance)
    hints = type_hints(cls)
    for field in dataclasses.fields(cls):
        hint = hints.get(field.name)
        if field.init and hint is not None and is_declared(hint):
            value = getattr(instance, field.name)
            checked = check_value(field.name, value, hint)
            if checked is not value:
                setattr(instance, field.name, checked)
