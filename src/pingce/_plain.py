"""Data classes declared as pydantic models are, without importing pydantic until asked.

The result models (:mod:`pingce.results`, :class:`pingce.sampling.SamplingInfo`) and the suite
file's schema (:mod:`pingce.suites.spec`) are :class:`PlainModel` classes: fields declared with
annotations and :func:`Field`, as on a pydantic model. Making one, reading and copying it
(``model_copy``), ``model_dump()`` and ``model_dump_json()`` (orjson, the same bytes as
pydantic's: NaN as null, ``OMIT_WHEN_NONE`` keys left out when None) need no pydantic, so a
command-line run never imports it (about 0.08 s of a 0.43 s run, issue 32).

Everything else of pydantic's API is its own, on a pydantic model made from the class when first
asked for (:func:`mirror`: the same fields, descriptions, constraints and validators):
``model_validate`` and ``model_validate_json`` validate with it and return the plain class,
``model_fields`` and ``model_json_schema`` are its, and any other ``model_*`` method of an
instance (``model_dump(exclude=...)``...) is called on the instance made a pydantic model.

Validators are declared with :func:`field_check` and :func:`model_check` (pydantic's
``field_validator`` and ``model_validator``, applied to the pydantic model); a value made
directly is not validated (the engine's own values, a built-in suite read from ``parsed.json``),
only brought to its declared scalar type as pydantic would (an int into a float field: ``1.0``).
"""

from __future__ import annotations

import copy
import sys
import types
import typing
from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar, Literal, TypeVar, dataclass_transform

import orjson

__all__ = ["Field", "PlainModel", "PrivateAttr", "field_check", "mirror", "model_check"]

_Model = TypeVar("_Model", bound="PlainModel")
_REQUIRED: Any = object()


class Declared:
    """A field's default, description and pydantic constraints (``min_length``...)."""

    __slots__ = ("constraints", "default", "default_factory", "description", "init")

    def __init__(
        self,
        default: Any,
        default_factory: Callable[[], Any] | None,
        description: str | None,
        init: bool,
        constraints: dict[str, Any],
    ) -> None:
        self.default = default
        self.default_factory = default_factory
        self.description = description
        self.init = init
        self.constraints = constraints

    def made_default(self) -> Any:
        """A new default value (a mutable default copied, as pydantic does)."""
        if self.default_factory is not None:
            return self.default_factory()
        if isinstance(self.default, dict | list | set | PlainModel):
            return copy.deepcopy(self.default)
        return self.default


def Field(  # pydantic's name
    default: Any = _REQUIRED,
    *,
    default_factory: Callable[[], Any] | None = None,
    description: str | None = None,
    init: bool = True,
    **constraints: Any,
) -> Any:
    """A field's default (or ``default_factory``; the type checker reads ``default=`` by name
    only), its description and pydantic's constraints (``min_length=1``...); ``init=False``: a
    private attribute, as :func:`PrivateAttr`."""
    return Declared(default, default_factory, description, init, constraints)


def PrivateAttr(  # pydantic's name
    default: Any = None, *, default_factory: Callable[[], Any] | None = None
) -> Any:
    """A private attribute (a name starting with ``_``): each instance's own, never in the JSON,
    not compared."""
    return Declared(default, default_factory, None, False, {})


def field_check(*names: str, mode: Literal["before", "after"] = "after") -> Callable[[Any], Any]:
    """Mark a classmethod as pydantic's ``field_validator(*names, mode=mode)``."""

    def mark(method: Any) -> Any:
        getattr(method, "__func__", method).__plain_check__ = ("field", names, mode)
        return method

    return mark


def model_check(mode: Literal["before", "after"]) -> Callable[[Any], Any]:
    """Mark a classmethod as pydantic's ``model_validator(mode=mode)``."""

    def mark(method: Any) -> Any:
        getattr(method, "__func__", method).__plain_check__ = ("model", (), mode)
        return method

    return mark


class _FromMirror:
    """A class attribute that is the pydantic model's (``model_fields``, ``model_json_schema``)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: object, owner: type[PlainModel]) -> Any:
        return getattr(mirror(owner), self.name)


@dataclass_transform(kw_only_default=True, field_specifiers=(Field,))
class PlainModel:
    """A class of plain data declared as a pydantic model (see the module)."""

    OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ()
    """Keys left out of the JSON (and ``model_dump()``) when None."""
    EXTRA: ClassVar[Literal["allow", "forbid", "ignore"]] = "ignore"
    """pydantic's ``extra``: with ``allow``, other keywords are kept (``model_extra``)."""
    VALIDATE: ClassVar[bool] = False
    """Whether making an instance validates it by the pydantic model, as a pydantic model does
    (a suite file's blocks, which users make); :meth:`model_construct` never does."""
    FIELDS: ClassVar[dict[str, Declared]] = {}
    """The fields in declaration order (bases' first); the private attributes are not here."""
    PRIVATE: ClassVar[dict[str, Declared]] = {}

    model_fields: ClassVar[dict[str, Any]] = _FromMirror()  # type: ignore[assignment]
    model_json_schema: ClassVar[Callable[..., dict[str, Any]]] = _FromMirror()  # type: ignore[assignment]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = {
            k: v
            for base in reversed(cls.__mro__[1:])
            for k, v in vars(base).get("FIELDS", {}).items()
        }
        private = {
            k: v
            for base in reversed(cls.__mro__[1:])
            for k, v in vars(base).get("PRIVATE", {}).items()
        }
        for name, annotation in vars(cls).get("__annotations__", {}).items():
            if "ClassVar" in str(annotation):
                continue
            value = vars(cls).get(name, _REQUIRED)
            info = value if isinstance(value, Declared) else Declared(value, None, None, True, {})
            if name in vars(cls):
                delattr(cls, name)
            (fields if info.init else private)[name] = info
        cls.FIELDS, cls.PRIVATE = fields, private
        cls._coercers = None

    _coercers: ClassVar[dict[str, Callable[[Any], Any]] | None] = None

    def __init__(self, **data: Any) -> None:
        if self.VALIDATE:
            self.__dict__.update(type(self).model_validate(data).__dict__)
        else:
            self._construct(data)

    @classmethod
    def model_construct(cls: type[_Model], **data: Any) -> _Model:
        """An instance of ``data`` as it is, not validated (pydantic's ``model_construct``):
        defaults filled, values brought to their scalar types and dictionaries given for
        nested models made those models the same way."""
        made = cls.__new__(cls)
        made._construct(data)
        return made

    def _construct(self, data: dict[str, Any]) -> None:
        coercers = type(self)._coercers
        if coercers is None:
            coercers = type(self)._coercers = _coercers_of(type(self))
        values = self.__dict__
        for name, info in self.FIELDS.items():
            if name in data:
                value = data.pop(name)
                coerce = coercers.get(name)
                values[name] = value if coerce is None else coerce(value)
            elif info.default is _REQUIRED and info.default_factory is None:
                raise TypeError(f"{type(self).__name__}() needs the field {name!r}")
            else:
                values[name] = info.made_default()
        for name, info in self.PRIVATE.items():
            values[name] = info.made_default()
        if data and self.EXTRA == "allow":
            values.update(data)
        elif data and self.EXTRA == "forbid":
            raise TypeError(f"{type(self).__name__}() has no field {sorted(data)[0]!r}")

    @property
    def model_extra(self) -> dict[str, Any] | None:
        """The values of keys that are not fields (None unless the class allows them)."""
        if self.EXTRA != "allow":
            return None
        skip = self.FIELDS.keys() | self.PRIVATE.keys()
        return {k: v for k, v in self.__dict__.items() if k not in skip}

    def _data(self) -> dict[str, Any]:
        """The fields and extra keys, nested models as dictionaries (pydantic's
        ``model_dump()``)."""
        skip = self.PRIVATE.keys()
        out = {k: _dumped(v) for k, v in self.__dict__.items() if k not in skip}
        for key in self.OMIT_WHEN_NONE:
            if out.get(key, 0) is None:
                del out[key]
        return out

    def model_dump(self, **options: Any) -> dict[str, Any]:
        """The data as dictionaries (pydantic's ``model_dump``)."""
        if options:
            result: dict[str, Any] = self.as_pydantic().model_dump(**options)
            return result
        return self._data()

    def model_dump_json(self, *, indent: int | None = None, **options: Any) -> str:
        """The JSON text (pydantic's bytes, NaN as null): orjson's, and pydantic's for what
        orjson does not write (an integer of 2**64, a numpy number...) or other options."""
        if not options and indent in (None, 2):
            try:
                return orjson.dumps(
                    self._data(), option=orjson.OPT_INDENT_2 if indent else None
                ).decode("utf-8")
            except TypeError:
                pass
        text: str = self.as_pydantic().model_dump_json(indent=indent, **options)
        return text

    def model_copy(
        self: _Model, *, update: dict[str, Any] | None = None, deep: bool = False
    ) -> _Model:
        """A copy (deep with ``deep``), ``update``'s values set as they are (not validated)."""
        made = copy.deepcopy(self) if deep else copy.copy(self)
        made.__dict__.update(update or {})
        return made

    def as_pydantic(self) -> Any:
        """This value as an instance of its pydantic model (:func:`mirror`), its values as they
        are (``model_construct``: what pydantic writes of them is what it wrote before)."""
        return _constructed(self)

    @classmethod
    def model_validate(cls: type[_Model], data: Any) -> _Model:
        """``data`` validated by the pydantic model (its errors are pydantic's
        ``ValidationError``), as this class."""
        return _plain(mirror(cls).model_validate(_pydantic_input(data)))  # type: ignore[no-any-return]

    @classmethod
    def model_validate_json(cls: type[_Model], data: str | bytes) -> _Model:
        """JSON text validated by the pydantic model, as this class."""
        return _plain(mirror(cls).model_validate_json(data))  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("model_"):  # the rest of pydantic's API, on the pydantic model
            return getattr(self.as_pydantic(), name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        skip = self.PRIVATE.keys()
        mine = {k: v for k, v in self.__dict__.items() if k not in skip}
        theirs = {k: v for k, v in other.__dict__.items() if k not in skip}
        return mine == theirs

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._data().items())
        return f"{type(self).__name__}({shown})"


def _dumped(value: Any) -> Any:
    if isinstance(value, PlainModel):
        return value._data()
    if type(value) is dict:
        return {k: _dumped(v) for k, v in value.items()}
    if type(value) is list:
        return [_dumped(v) for v in value]
    return value


def _pydantic_input(value: Any) -> Any:
    """``value`` with every plain model as its fields (private ones left out), for pydantic."""
    if isinstance(value, PlainModel):
        skip = value.PRIVATE.keys()
        return {k: _pydantic_input(v) for k, v in value.__dict__.items() if k not in skip}
    if isinstance(value, dict):
        return {k: _pydantic_input(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_pydantic_input(v) for v in value)
    return value


def _constructed(value: Any) -> Any:
    """``value`` with every plain model as an instance of its pydantic model, not validated."""
    if isinstance(value, PlainModel):
        skip = value.PRIVATE.keys()
        data = {k: _constructed(v) for k, v in value.__dict__.items() if k not in skip}
        return mirror(type(value)).model_construct(**data)
    if type(value) is dict:
        return {k: _constructed(v) for k, v in value.items()}
    if type(value) is list:
        return [_constructed(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    """A validated pydantic value with every mirrored model as its plain class."""
    plain = getattr(type(value), "__plain_class__", None)
    if plain is not None:
        made = plain.__new__(plain)
        fields = {name: _plain(getattr(value, name)) for name in type(value).model_fields}
        made.__dict__.update(fields)
        made.__dict__.update({k: _plain(v) for k, v in (value.model_extra or {}).items()})
        for name, info in plain.PRIVATE.items():
            made.__dict__[name] = info.made_default()
        return made
    if type(value) is dict:
        return {k: _plain(v) for k, v in value.items()}
    if type(value) is list:
        return [_plain(v) for v in value]
    return value


# Bringing a value to its declared scalar type (what pydantic's lax mode does to what the engine
# gives): float and int fields, also inside X | None, list[X], dict[str, X]; a dictionary given
# for a nested model is made that model.


def _hints(cls: type[PlainModel], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Each field's type, evaluated in its class's module (and ``extra``'s names); a type that
    names what only the type checker knows is left out."""
    out: dict[str, Any] = {}
    for owner in reversed(cls.__mro__):
        if owner is PlainModel or not issubclass(owner, PlainModel):
            continue
        namespace = {**(extra or {}), **vars(sys.modules[owner.__module__])}
        for name, annotation in vars(owner).get("__annotations__", {}).items():
            if name not in cls.FIELDS:
                continue
            try:
                out[name] = (
                    eval(annotation, namespace) if isinstance(annotation, str) else annotation
                )
            except NameError:
                out.pop(name, None)
    return out


def _coercers_of(cls: type[PlainModel]) -> dict[str, Callable[[Any], Any]]:
    coercers = {name: _coercer(hint) for name, hint in _hints(cls).items()}
    return {name: coerce for name, coerce in coercers.items() if coerce is not None}


def _coercer(hint: Any) -> Callable[[Any], Any] | None:
    """What brings a value to ``hint`` (None: nothing to do)."""
    if hint is float or hint is int:
        return partial(_scalar, hint)
    if isinstance(hint, type) and issubclass(hint, PlainModel):
        return partial(_model, hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return _coercer(args[0])
    inner = _coercer(args[-1]) if args else None
    if origin in (types.UnionType, typing.Union) and len(args) == 2 and args[1] is type(None):
        inner = _coercer(args[0])
        return None if inner is None else partial(_optional, inner)
    if origin is list and args:
        return list if inner is None else partial(_items, inner)
    if origin is dict and len(args) == 2:
        return dict if inner is None else partial(_values, inner)
    return None


def _scalar(to: type, value: Any) -> Any:
    return value if type(value) is to else to(value)


def _model(to: type[PlainModel], value: Any) -> Any:
    return to.model_construct(**value) if isinstance(value, dict) else value


def _optional(inner: Callable[[Any], Any], value: Any) -> Any:
    return None if value is None else inner(value)


def _items(inner: Callable[[Any], Any], value: Any) -> list[Any]:
    return [inner(item) for item in value]


def _values(inner: Callable[[Any], Any], value: Any) -> dict[Any, Any]:
    return {key: inner(item) for key, item in value.items()}


# The pydantic model of a plain class, made when first asked for.

_MIRRORS: dict[type, Any] = {}


def mirror(cls: type[PlainModel]) -> Any:
    """The pydantic model of ``cls``: its fields (nested plain classes as their models), defaults,
    descriptions and constraints, ``extra``, NaN written as null, ``OMIT_WHEN_NONE`` and the
    validators marked with :func:`field_check` and :func:`model_check`."""
    made = _MIRRORS.get(cls)
    if made is not None:
        return made
    import pydantic

    names = {name: getattr(pydantic, name) for name in pydantic.__all__ if name[0].isupper()}
    hints = _hints(cls, names)
    fields: dict[str, Any] = {}
    for name, info in cls.FIELDS.items():
        default = ... if info.default is _REQUIRED else info.default
        if isinstance(default, PlainModel):
            default = default.as_pydantic()
        if info.default_factory is not None:
            spec = pydantic.Field(
                default_factory=info.default_factory,
                description=info.description,
                **info.constraints,
            )
        else:
            spec = pydantic.Field(default, description=info.description, **info.constraints)
        fields[name] = (_mirrored(hints[name]), spec)
    checks: dict[str, Any] = {}
    for owner in reversed(cls.__mro__):
        for name, member in vars(owner).items():
            marked = getattr(getattr(member, "__func__", member), "__plain_check__", None)
            if marked is None:
                continue
            kind, names, mode = marked
            function = member if isinstance(member, classmethod) else classmethod(member)
            decorate: Any = (
                pydantic.field_validator(*names, mode=mode)
                if kind == "field"
                else pydantic.model_validator(mode=mode)
            )
            checks[name] = decorate(function)
    made = pydantic.create_model(
        cls.__name__,
        __base__=_base(cls.OMIT_WHEN_NONE, cls.EXTRA),
        __module__=cls.__module__,
        __doc__=cls.__doc__,
        __validators__=checks,
        **fields,
    )
    made.__plain_class__ = cls  # type: ignore[attr-defined]
    _MIRRORS[cls] = made
    return made


def _base(omit: tuple[str, ...], extra: str) -> Any:
    from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

    from ._json import NON_FINITE

    class Mirrored(BaseModel):
        model_config = ConfigDict(extra=extra, ser_json_inf_nan=NON_FINITE)  # type: ignore[typeddict-item]

        if omit:

            @model_serializer(mode="wrap")
            def _omit_none(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
                data: dict[str, Any] = handler(self)
                for key in omit:
                    if data.get(key) is None:
                        data.pop(key, None)
                return data

    return Mirrored


def _mirrored(hint: Any) -> Any:
    """``hint`` with each plain class as its pydantic model."""
    if isinstance(hint, type) and issubclass(hint, PlainModel):
        return mirror(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if not args or origin is Literal:
        return hint
    if origin is typing.Annotated:
        return typing.Annotated[(_mirrored(args[0]), *hint.__metadata__)]
    mapped = tuple(_mirrored(a) for a in args)
    if origin in (types.UnionType, typing.Union):
        return typing.Union[mapped]  # noqa: UP007
    return origin[mapped] if len(mapped) > 1 else origin[mapped[0]]
