"""The click options of a command, derived from the table of options
(:mod:`pingce.option_table`): one declaration per option."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

import click

from ..option_table import OPTIONS, Option

__all__ = ["number_type", "table_options"]


def _click_option(option: Option, command: str) -> Callable[[Any], Any]:
    """The click option of a declared option (:mod:`pingce.option_table`) in a command."""
    kwargs: dict[str, Any] = {"help": option.help_for(command)}
    if option.type is bool:
        kwargs["is_flag"] = True
    elif option.choices() is not None:
        kwargs["type"] = click.Choice(option.choices() or ())
    elif option.number_range() is not None:
        kwargs["type"] = _ranged(option.type)
    elif option.path:
        kwargs["type"] = click.Path(dir_okay=False)
    if option.type is not bool and not option.multiple:
        kwargs["default"] = option.default
    extras = {"multiple": option.multiple, "show_default": option.show_default}
    kwargs.update({key: True for key, value in extras.items() if value})
    if option.metavar is not None:
        kwargs["metavar"] = option.metavar
    return click.option(option.option or "", option.name, **kwargs)


def table_options(
    command: str, first: str | None = None, last: str | None = None
) -> Callable[[Any], Any]:
    """The click options of a command, as the table declares them (those from ``first`` to
    ``last`` in the table's order, when given: a command may list its own options between)."""
    names = [o.name for o in OPTIONS]
    start = names.index(first) if first else 0
    stop = names.index(last) + 1 if last else len(names)
    reads = {"compare", "compare-runs"} if command == "compare" else {command}
    chosen = [o for o in OPTIONS[start:stop] if o.commands & reads and o.option is not None]

    def decorate(function: Any) -> Any:
        for option in reversed(chosen):
            function = _click_option(option, command)(function)
        return function

    return decorate


def _ranged(hint: Any) -> click.IntRange | click.FloatRange:
    """The click type of ``Annotated[int | float, Range(...)]``: the same type and range that
    :func:`pingce._constraints.check_value` checks for Python callers."""
    base, bounds = get_args(hint)
    ranged = click.IntRange if base is int else click.FloatRange
    return ranged(
        bounds.low, bounds.high, min_open=bounds.low_open, max_open=bounds.high_open, clamp=False
    )


def number_type(name: str) -> click.IntRange | click.FloatRange:
    """The click type of a number option of another command (``--limit``, ``--port``), as
    ``OPTION_TYPES`` declares it."""
    from .._defaults import OPTION_TYPES

    return _ranged(OPTION_TYPES[name])
