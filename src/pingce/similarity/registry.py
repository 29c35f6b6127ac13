"""Similarity backends by name: the one list that the name grammar, the remote check, the options
a suite may pass and the help text are read from.

A backend is registered with :func:`backend` on a function that returns its class, imported
only when the backend is built (as inspect_ai's ``@modelapi``), so reading the names and the
help imports no model library::

    @backend("openai", remote=True)
    def judge() -> type[SimilarityBackend]:
        from .judge import JudgeBackend

        return JudgeBackend

What may follow the colon is the registration's ``model``: ``"required"`` (``openai:<model>``,
the default), ``"none"`` (``exact``: no colon) or a function reading it (``lexical``'s
``char-MIN-MAX``). A backend is built as ``cls(*arguments, **keywords)``: the arguments read
from its name (the model, or what the function returned), its keyword-only parameters that the
suite's ``similarity:`` options set, and for a remote one (``remote=True``: it calls a model
server) ``base_url`` and ``cache``. What a suite's ``similarity:`` block may set is read from the
classes' parameters, their names and their ``Annotated`` types with ranges
(:func:`backend_options`, :mod:`pingce.remote.limits`): a new option is a new parameter.
A remote backend's pairs are asked once for the whole data under ``--engine ray``
(:attr:`pingce.similarity.names.BackendName.remote`).

The built-in registrations are in :mod:`pingce.similarity.backends`, imported on first use.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .base import SimilarityBackend

__all__ = [
    "BUILTIN_MODULE",
    "NOT_SUITE_OPTIONS",
    "BackendEntry",
    "BackendOption",
    "ReadModel",
    "backend",
    "backend_classes",
    "backend_entries",
    "backend_grammar",
    "backend_help",
    "backend_options",
    "remote_help",
    "unregister",
]

BUILTIN_MODULE = "backends"
"""The module (in this package) that registers the built-in backends."""

ReadModel = Callable[[str | None], "tuple[str, tuple[Any, ...]] | None"]
"""Reads what follows the colon (None: no colon): ``(model, arguments)``, None when the name is
not this registration's (another of the same kind may take it), ``ValueError`` saying what is
wrong when it is this backend's name written wrong (the parser puts the name before it)."""

Loader = Callable[[], "type[SimilarityBackend]"]


@dataclass(frozen=True)
class BackendEntry:
    """One registered backend: its kind (before the colon) and how its name is read."""

    kind: str
    load: Loader
    """Returns the backend's class (imported then)."""
    remote: bool
    """Whether it calls a model server: a base URL, a key, the cache; under ``--engine ray`` its
    pairs are asked once, before the pieces."""
    model: Literal["none", "required"] | ReadModel
    grammar: str
    """The name in words, for messages (``openai:<model>``)."""
    help: str
    """The name in words, for ``--similarity``'s help."""

    def read(self, model: str | None) -> tuple[str, tuple[Any, ...]] | None:
        """``(model, arguments)`` of a name of this kind with ``model`` after the colon (None:
        no colon), or None when it is not this registration's name."""
        if self.model == "none":
            return ("", ()) if model is None else None
        if self.model == "required":
            return (model, (model,)) if model is not None and model.strip() else None
        return self.model(model)


_ENTRIES: list[BackendEntry] = []
_LOADED: list[bool] = []


def _load_builtins() -> None:
    if not _LOADED:
        _LOADED.append(True)
        importlib.import_module(f"{__package__}.{BUILTIN_MODULE}")


def backend(
    kind: str,
    *,
    remote: bool = False,
    model: Literal["none", "required"] | ReadModel = "required",
    grammar: str | None = None,
    help: str | None = None,
) -> Callable[[Loader], Loader]:
    """Register the backend whose class the decorated function returns, under ``kind``.

    ``grammar`` is its name in words (default: ``kind`` or ``kind:<model>``), ``help`` the same
    for ``--similarity``'s help (default: ``grammar``). Registrations of one kind are tried in
    order; the built-in ones come first."""
    if not kind or ":" in kind:
        raise ValueError(f"a backend kind is a name without a colon, got {kind!r}")
    words = grammar or (kind if model == "none" else f"{kind}:<model>")

    def register(load: Loader) -> Loader:
        _load_builtins()
        if any(e.kind == kind and e.grammar == words for e in _ENTRIES):
            raise ValueError(f"similarity backend {words!r} is registered already")
        _ENTRIES.append(BackendEntry(kind, load, remote, model, words, help or words))
        return load

    return register


def unregister(kind: str) -> None:
    """Remove the backends registered under ``kind`` (a test's own)."""
    _ENTRIES[:] = [entry for entry in _ENTRIES if entry.kind != kind]


def backend_entries() -> tuple[BackendEntry, ...]:
    """Every registered backend, in order."""
    _load_builtins()
    return tuple(_ENTRIES)


def backend_grammar() -> str:
    """The names in words, for messages: ``exact, levenshtein, ... or openai:<model>``."""
    words = [entry.grammar for entry in backend_entries()]
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else "".join(words)


def backend_help() -> str:
    """``--similarity``'s help: every backend's name."""
    names = ", ".join(entry.help for entry in backend_entries())
    return f"Similarity backend for semantic metrics: {names}."


def remote_help() -> str:
    """The remote backends' kinds (``embedding-api:, rerank:, openai:``), for ``--base-url``'s
    help."""
    return ", ".join(f"{entry.kind}:" for entry in backend_entries() if entry.remote)


def backend_classes() -> list[type[SimilarityBackend]]:
    """Every registered backend's class (each imported)."""
    return list(dict.fromkeys(entry.load() for entry in backend_entries()))


def keyword_options(cls: type) -> set[str]:
    """The keyword-only parameters of a backend class: those a suite's options may set."""
    return {
        name
        for name, param in inspect.signature(cls).parameters.items()
        if param.kind is inspect.Parameter.KEYWORD_ONLY
    }


NOT_SUITE_OPTIONS = frozenset({"model", "base_url", "api_key", "cache"})
"""Parameters of a backend that a suite file does not set: the model is in the backend's name,
the endpoint, key and cache come from the command line and the environment."""


@dataclass(frozen=True)
class BackendOption:
    """An option of a suite's ``similarity:`` block: a parameter of one backend class or more."""

    name: str
    hints: tuple[Any, ...]
    """Its type (with its range) as each backend declares it, distinct ones in registration
    order: a value is checked against every one."""
    backends: tuple[str, ...]
    """The backends that take it (their names in words: ``openai:<model>``)."""


def _parameter_hints(cls: type) -> dict[str, Any]:
    """The type hints of a backend class's parameters (``Annotated`` ranges kept)."""
    try:
        return typing.get_type_hints(cls.__init__, include_extras=True)  # type: ignore[misc]
    except NameError as exc:  # an annotation imported under TYPE_CHECKING only
        raise TypeError(
            f"similarity backend {cls.__qualname__}: its parameters' types must be importable "
            f"({exc})"
        ) from None


def backend_options() -> dict[str, BackendOption]:
    """What a suite's ``similarity:`` block may set, by name: every named parameter of a
    registered backend's class (but :data:`NOT_SUITE_OPTIONS`), with its type and the backends
    that take it; each class is imported."""
    found: dict[str, tuple[list[Any], list[str]]] = {}
    for entry in backend_entries():
        cls = entry.load()
        hints = _parameter_hints(cls)
        for name, param in inspect.signature(cls).parameters.items():
            if name in NOT_SUITE_OPTIONS or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            declared, backends = found.setdefault(name, ([], []))
            hint = hints.get(name, Any)
            if hint not in declared:
                declared.append(hint)
            if entry.grammar not in backends:
                backends.append(entry.grammar)
    return {
        name: BackendOption(name, tuple(declared), tuple(backends))
        for name, (declared, backends) in sorted(found.items())
    }
