"""Constraints as data, one validator: what a value given in a suite file, a metric's arguments
or an option may be, declared as a type hint, and checked by :func:`check_value` alone.

A hint is read as strictly as YAML is written: ``bool`` is ``true`` or ``false`` (not the text
``"false"``, not 0 or 1); ``int`` an integer (not a bool, not ``5.0``, not ``"5"``); ``float``
a finite number (an integer too); ``str`` text; ``None`` null; ``Literal[...]`` one of its
values; a union any of its members; ``list[X]``/``Sequence[X]`` a list of X; ``Mapping[K, V]``
a mapping; a ``TypedDict`` a mapping of those keys only, each checked under its own name
(``normalize.casefold``). ``Annotated[int, Range(1, 1000)]`` adds the range of a number (every
number a user sets has one, so that a typo such as ``top_k: 100000000000000000000`` is an error,
not an allocation of terabytes), and ``Annotated[X, Checked(function, "...")]`` hands the value
to its own policy (the zero-division policy also reads ``"null"``). Any other class is left to
its owner to check.

The command line declares the same ranges (``pingce._defaults.OPTION_TYPES``), as click's
``IntRange``/``FloatRange``; :class:`pingce.options.RunOptions` checks them with this validator.
"""

from __future__ import annotations

import functools
import math
import numbers
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from .errors import did_you_mean, show_value

_T = TypeVar("_T")

__all__ = [
    "ArgumentError",
    "Checked",
    "Range",
    "check_value",
    "describe",
    "is_declared",
    "is_options",
    "is_scalar",
    "type_hints",
]

_BOOL_WORDS = frozenset(
    ("true", "false", "yes", "no", "on", "off", "y", "n", "t", "f", "1", "0", "none", "null")
)


class ArgumentError(ValueError):
    """A value that its hint refuses: ``name`` (``top_k``, ``normalize.casefold``) and the
    ``reason`` (``must be true or false, got "false" (...)``)."""

    def __init__(self, name: str, reason: str):
        self.name = name
        self.reason = reason
        super().__init__(f"{name} {reason}" if name else reason)


@dataclass(frozen=True)
class Range:
    """The range of a number: ``low`` to ``high`` (None: no bound), each end included unless it
    is open. ``Annotated[int, Range(1, 1000)]`` is an integer from 1 to 1000."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def __contains__(self, value: float) -> bool:
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return not (
            self.high is not None and (value >= self.high if self.high_open else value > self.high)
        )

    def text(self, integer: bool) -> str:
        """The range in words: ``>= 1``, ``in 1..1000`` (integers), ``within [0, 1]``, ``> 0``."""
        low, high = _number(self.low), _number(self.high)
        if self.low is not None and self.high is not None:
            if integer and not (self.low_open or self.high_open):
                return f"in {low}..{high}"
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"within {left}{low}, {high}{right}"
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {low}"
        if self.high is not None:
            return f"{'<' if self.high_open else '<='} {high}"
        return ""


@dataclass(frozen=True)
class Checked:
    """``Annotated[X, Checked(function, "null, 0 or 1")]``: the value is ``function``'s to check
    (a ``ValueError`` refuses it); ``expected`` says in words what it may be."""

    function: Callable[[Any], Any]
    expected: str


def _number(value: float | None) -> str:
    """A bound as written in Python: ``1_000_000``, ``0.5``."""
    if value is None:
        return ""
    if isinstance(value, int) or float(value).is_integer():
        whole = int(value)
        return f"{whole:_}" if abs(whole) >= 10**6 else str(whole)
    return repr(float(value))


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    """A finite real number, not a bool (an integer of any size is finite)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    return isinstance(value, numbers.Integral) or math.isfinite(value)


def _is_union(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType)


def _container(hint: Any) -> str | None:
    """``"mapping"``, ``"list"`` or None: what shape of value the hint is."""
    base = get_args(hint)[0] if get_origin(hint) is Annotated else hint
    if typing.is_typeddict(base):
        return "mapping"
    origin = get_origin(base) or base
    if origin in (dict, Mapping):
        return "mapping"
    if origin in (list, tuple, Sequence):
        return "list"
    return None


def _shape(value: Any) -> str | None:
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, list | tuple):
        return "list"
    return None


_WORDS: dict[Any, tuple[str, str]] = {
    bool: ("true or false", "booleans (true or false)"),
    int: ("an integer", "integers"),
    float: ("a finite number", "finite numbers"),
    str: ("a string", "strings"),
    Any: ("any value", "values"),
    object: ("any value", "values"),
}
"""The words of a plain type, one and many."""


def _plain(table: Mapping[Any, _T], hint: Any) -> _T | None:
    """``table``'s entry for a plain type (None for any other hint, hashable or not)."""
    try:
        return table.get(hint)
    except TypeError:  # an unhashable hint is no plain type
        return None


def describe(hint: Any, plural: bool = False) -> str:
    """What a hint allows, in words (``an integer in 1..1000``, ``true or false``)."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is Annotated:
        return _describe_annotated(args[0], args[1:], plural)
    if hint is None or hint is type(None):
        return "null"
    words = _plain(_WORDS, hint)
    if words is not None:
        return words[plural]
    if origin is Literal:
        shown = ", ".join(show_value(a) for a in args)
        return f"each one of {shown}" if plural else f"one of {shown}"
    if _is_union(hint):
        members = [a for a in args if a is not type(None)]
        text = " or ".join(describe(a, plural) for a in members)
        return f"{text} or null" if len(members) < len(args) else text
    if typing.is_typeddict(hint):
        keys = ", ".join(type_hints(hint))
        return f"mappings of options ({keys})" if plural else f"a mapping of options ({keys})"
    if origin in (list, tuple, Sequence):
        item = describe(args[0], plural=True) if args else "values"
        return f"lists of {item}" if plural else f"a list of {item}"
    if origin in (dict, Mapping):
        key, value = (describe(a, plural=True) for a in args) if args else ("keys", "values")
        return f"mappings of {key} to {value}" if plural else f"a mapping of {key} to {value}"
    name = getattr(hint, "__name__", str(hint))
    return name


def _describe_annotated(base: Any, meta: tuple[Any, ...], plural: bool) -> str:
    """:func:`describe` of ``Annotated[base, *meta]``: a check's own words, a number's range."""
    for item in meta:
        if isinstance(item, Checked):
            return item.expected
    ranges = [item for item in meta if isinstance(item, Range)]
    if not ranges or base not in (int, float):
        return describe(base, plural)
    bounded = ranges[0].low is not None and ranges[0].high is not None
    if base is int:
        words = "integers" if plural else "an integer"
    elif bounded:
        words = "numbers" if plural else "a number"
    else:  # a number between two bounds is finite: say so of the others
        words = "finite numbers" if plural else "a finite number"
    return f"{words} {ranges[0].text(base is int)}"


def is_scalar(hint: Any) -> bool:
    """Whether a hint admits a boolean or a number (itself, or a member of its union, through
    ``Annotated``): the values YAML reads from unquoted words, and a quoted one is a mistake."""
    if get_origin(hint) is Annotated:
        return is_scalar(get_args(hint)[0])
    if _is_union(hint):
        return any(is_scalar(a) for a in get_args(hint))
    return hint in (bool, int, float)


def is_options(hint: Any) -> bool:
    """Whether a hint is a ``TypedDict`` of options (or one or null)."""
    if get_origin(hint) is Annotated:
        return is_options(get_args(hint)[0])
    if _is_union(hint):
        return any(is_options(a) for a in get_args(hint))
    return typing.is_typeddict(hint)


def _has_choice_or_check(hint: Any) -> bool:
    """Whether a hint is (or has, through ``Annotated`` and unions) a ``Literal`` choice or a
    :class:`Checked` policy."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is Annotated:
        return any(isinstance(m, Checked) for m in args[1:]) or _has_choice_or_check(args[0])
    if _is_union(hint):
        return any(_has_choice_or_check(a) for a in args)
    return origin is Literal


def is_declared(hint: Any) -> bool:
    """Whether a hint declares what its value may be in full: a boolean or a number (with its
    range), a block of options, a ``Literal`` choice or a :class:`Checked` policy. Text, lists
    and classes of their own (a field path, a tokenizer with a "did you mean", a label scale)
    are their owner's to check: it knows what they mean."""
    return is_scalar(hint) or is_options(hint) or _has_choice_or_check(hint)


@functools.cache
def type_hints(owner: Any) -> dict[str, Any]:
    """The type hints of a class (a dataclass, a TypedDict, a pydantic model), with their
    ``Annotated`` constraints, evaluated once."""
    return typing.get_type_hints(owner, include_extras=True)


def _quoted(value: Any, hint: Any) -> str:
    """A hint for text that looks like what was meant (``"false"``, ``"5"``): drop the quotes."""
    if not isinstance(value, str):
        return ""
    allowed = describe(hint)
    if "true or false" in allowed and value.strip().casefold() in _BOOL_WORDS:
        return " (text in quotes: write true or false without quotes)"
    if any(word in allowed for word in ("integer", "number")):
        try:
            float(value)
        except ValueError:
            return ""
        return " (text in quotes: write the number without quotes)"
    return ""


def _refuse(name: str, value: Any, hint: Any) -> ArgumentError:
    return ArgumentError(
        name, f"must be {describe(hint)}, got {show_value(value)}{_quoted(value, hint)}"
    )


def _join(name: str, key: Any) -> str:
    return f"{name}.{key}" if name else str(key)


def _fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` is allowed by ``hint``, without saying why not."""
    try:
        _check("", value, hint)
    except ArgumentError:
        return False
    return True


_PLAIN: dict[Any, Callable[[Any], bool]] = {
    bool: lambda value: isinstance(value, bool),
    int: lambda value: _is_int(value),
    float: lambda value: _is_number(value),
    str: lambda value: isinstance(value, str),
    None: lambda value: value is None,
    type(None): lambda value: value is None,
}
"""The test of a value against a plain type (an integer is no boolean, a number is finite)."""


def _check(name: str, value: Any, hint: Any) -> None:
    origin, args = get_origin(hint), get_args(hint)
    if origin is Annotated:
        _check_annotated(name, value, hint, args[0], args[1:])
        return
    if hint is Any or hint is object:
        return
    test = _plain(_PLAIN, hint)
    if test is not None:
        ok = test(value)
    elif origin is Literal:
        ok = any(value == a and type(value) is type(a) for a in args)
    elif _is_union(hint):
        shaped = [a for a in args if _shape(value) is not None and _container(a) == _shape(value)]
        if len(shaped) == 1:  # the one member of this shape says what inside it is wrong
            _check(name, value, shaped[0])
            return
        ok = any(_fits(value, a) for a in args)
    elif typing.is_typeddict(hint):
        _check_options(name, value, hint)
        return
    elif origin in (list, tuple, Sequence):
        ok = isinstance(value, list | tuple) and (
            not args or all(_fits(item, args[0]) for item in value)
        )
    elif origin in (dict, Mapping):
        ok = isinstance(value, Mapping) and (
            not args or all(_fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items())
        )
    else:  # a class of its own (a label scale, a nested spec): its owner checks it
        return
    if not ok:
        raise _refuse(name, value, hint)


def _check_annotated(name: str, value: Any, hint: Any, base: Any, meta: tuple[Any, ...]) -> None:
    """:func:`_check` of ``Annotated[base, *meta]``: a check's own function, else the base type
    and then every range."""
    for item in meta:
        if isinstance(item, Checked):
            try:
                item.function(value)
            except ValueError:
                raise _refuse(name, value, hint) from None
            return
    try:
        _check(name, value, base)
    except ArgumentError as exc:
        if exc.name != name:  # an inner value: its own name says where
            raise
        raise _refuse(name, value, hint) from None
    for item in meta:
        if isinstance(item, Range) and value not in item:
            raise _refuse(name, value, hint)


def _check_options(name: str, value: Any, hint: Any) -> None:
    """A ``TypedDict``: a mapping of its keys only, each value checked under its own name."""
    if not isinstance(value, Mapping):
        raise _refuse(name, value, hint)
    hints = type_hints(hint)
    for key, item in value.items():
        if key not in hints:
            raise ArgumentError(
                _join(name, key),
                f"is not an option here; the options are {', '.join(hints)}"
                + did_you_mean(str(key), hints),
            )
        _check(_join(name, key), item, hints[key])


def check_value(name: str, value: Any, hint: Any) -> Any:
    """``value`` if ``hint`` allows it (read by its :class:`Checked` policy if it has one: the
    zero-division policy gives ``0.0`` for the text ``"0"``); else :class:`ArgumentError` naming
    ``name`` (or the key inside it that is wrong), what is allowed and the value given."""
    _check(name, value, hint)
    if get_origin(hint) is Annotated:
        for item in get_args(hint)[1:]:
            if isinstance(item, Checked):
                return item.function(value)
    return value
