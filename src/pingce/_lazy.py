"""Names a package exports without importing them at start-up: the one ``__getattr__`` (PEP 562)
of :mod:`pingce` and :mod:`pingce.similarity`, which import the module that defines a name when
the name is first read (``import pingce`` and ``--similarity``'s help stay free of numpy and
pydantic)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: Mapping[str, str], keep: MutableMapping[str, Any] | None = None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``where`` maps each name to the submodule that
    defines it (relative to ``package``); a name read is imported from there and, with ``keep``
    (the package's ``globals()``), kept so that it is looked up once. Any other name is the
    ``AttributeError`` Python raises for a module."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        if keep is not None:
            keep[name] = value
        return value

    return __getattr__
