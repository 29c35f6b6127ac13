"""Providers of the model under test by name (``--model PROVIDER:NAME``): the one list that the
name grammar, its error message and ``--model``'s help are read from.

A provider is registered with :func:`modelapi` on a function that returns its client class,
imported only when the model is asked (as inspect_ai's ``@modelapi``), so reading the names and
the help imports no HTTP library::

    @modelapi("openai", describe="a model at an OpenAI-compatible endpoint", example=...)
    def openai() -> type[ModelClient]:
        from .client import ChatModel

        return ChatModel

The client is built as ``cls(model, base_url=..., api_key_env=..., parameters=...,
concurrency=..., timeout=..., policy=..., price_prompt=..., price_completion=..., cache=...)``
(:func:`pingce.engine.model.ask_model`) and answers as :class:`ModelClient` says. The built-in
registrations are in :mod:`pingce.predict.providers`, imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import OptionError

if TYPE_CHECKING:
    from ..progress import Advance
    from ..remote.usage import BackendStats
    from .client import Answer

__all__ = [
    "BUILTIN_MODULE",
    "ModelClient",
    "ModelName",
    "ProviderEntry",
    "model_grammar",
    "model_help",
    "model_metavar",
    "modelapi",
    "parse_model",
    "parse_model_name",
    "provider_entries",
    "provider_entry",
    "unregister",
]

BUILTIN_MODULE = "providers"
"""The module (in this package) that registers the built-in providers."""


class ModelClient(Protocol):
    """What the engine asks of a provider's client (:class:`pingce.predict.client.ChatModel`)."""

    def body(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        """The request of one record."""

    def signature(self) -> str:
        """What the predictions depend on besides each record's request (never a key)."""

    def answer_all(
        self,
        bodies: Sequence[dict[str, Any]],
        progress: Advance | None = None,
        repeats: Sequence[int] | None = None,
    ) -> tuple[list[Answer], BackendStats]:
        """An answer to every request body, and what it took; ``repeats``: each body's repeat
        number (``--repeats``: a repeat after the first is cached as an answer of its own)."""

    def close(self) -> None:
        """Release the cache."""


Loader = Callable[[], Callable[..., ModelClient]]


@dataclass(frozen=True)
class ProviderEntry:
    """One registered provider: its name (before the colon) and how it is told of."""

    name: str
    load: Loader
    """Returns the client's class (imported then)."""
    describe: str
    """What ``NAME`` is, for messages and the help (``a model at an OpenAI-compatible
    endpoint``)."""
    example: str
    """A name as written, with what it needs (``openai:qwen2.5-7b-instruct with --base-url
    http://localhost:8000/v1``)."""

    @property
    def grammar(self) -> str:
        """``openai:NAME``."""
        return f"{self.name}:NAME"


_ENTRIES: list[ProviderEntry] = []
_LOADED: list[bool] = []


def _load_builtins() -> None:
    if not _LOADED:
        _LOADED.append(True)
        importlib.import_module(f"{__package__}.{BUILTIN_MODULE}")


def modelapi(name: str, *, describe: str, example: str) -> Callable[[Loader], Loader]:
    """Register the provider whose client class the decorated function returns, under
    ``name``; the built-in ones come first."""
    if not name or ":" in name:
        raise ValueError(f"a model provider is a name without a colon, got {name!r}")

    def register(load: Loader) -> Loader:
        _load_builtins()
        if any(entry.name == name for entry in _ENTRIES):
            raise ValueError(f"model provider {name!r} is registered already")
        _ENTRIES.append(ProviderEntry(name, load, describe, example))
        return load

    return register


def unregister(name: str) -> None:
    """Remove the provider registered under ``name`` (a test's own)."""
    _ENTRIES[:] = [entry for entry in _ENTRIES if entry.name != name]


def provider_entries() -> tuple[ProviderEntry, ...]:
    """Every registered provider, in order."""
    _load_builtins()
    return tuple(_ENTRIES)


def provider_entry(name: str) -> ProviderEntry:
    """The registered provider ``name`` (a name :func:`parse_model` accepted)."""
    for entry in provider_entries():
        if entry.name == name:
            return entry
    raise OptionError(f"--model: no provider {name!r}; expected {model_grammar()}")


def model_grammar() -> str:
    """The names in words, for messages: ``openai:NAME (a model at ..., e.g. ...)``."""
    return " or ".join(
        f"{entry.grammar} ({entry.describe}, e.g. {entry.example})" for entry in provider_entries()
    )


def model_metavar() -> str:
    """``--model``'s metavar: ``openai:NAME`` (``|`` between providers)."""
    return "|".join(entry.grammar for entry in provider_entries())


def model_help() -> str:
    """``--model``'s help, naming every provider."""
    names = "; ".join(
        f"{entry.grammar}: {entry.describe}, e.g. {entry.example}" for entry in provider_entries()
    )
    return (
        f"Run the model under test ({names}): send each record's prompt (and tools) to it and "
        "score its answers (the suite's model: block names the fields); predictions.jsonl is "
        "written beside results.json."
    )


@dataclass(frozen=True)
class ModelName:
    """A parsed ``--model``: the provider, the model's name, and the registered provider."""

    provider: str
    model: str
    entry: ProviderEntry = field(compare=False, repr=False)


def parse_model(spec: str) -> ModelName:
    """Parse ``--model``; an :class:`OptionError` says what is expected."""
    provider, sep, name = spec.partition(":")
    for entry in provider_entries():
        if sep and entry.name == provider and name.strip():
            return ModelName(provider, name.strip(), entry)
    raise OptionError(f"--model {spec!r}: expected {model_grammar()}")


def parse_model_name(spec: str) -> str:
    """The model's name of ``--model`` (``qwen2.5-7b-instruct`` of
    ``openai:qwen2.5-7b-instruct``)."""
    return parse_model(spec).model
