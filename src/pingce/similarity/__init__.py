"""Similarity backends behind one small protocol: ``exact``, ``levenshtein``, ``lexical``,
``embedding`` (the multilingual Universal Sentence Encoder, offline), ``embedding:<model>``
(sentence-transformers), ``embedding-api:<model>``, ``rerank:<model>`` (a ``/rerank`` endpoint)
and ``openai:<model>`` (an LLM judge), each registered by name
(:func:`pingce.similarity.registry.backend`).

Names are imported on first use, so reading the backends' names (``--similarity``'s help) imports
no numpy."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._lazy import lazy_exports
from ..errors import OptionError
from ..remote.cache import cache_path
from .names import BackendName, parse_backend_name
from .registry import backend_options, keyword_options

if TYPE_CHECKING:
    from .base import BackendStats, Pair, SimilarityBackend, SimilarityTable
    from .cache import SimilarityCache, default_cache_path
    from .names import BACKEND_NAMES

__all__ = [
    "BACKEND_NAMES",
    "BackendName",
    "BackendStats",
    "Pair",
    "SimilarityBackend",
    "SimilarityCache",
    "SimilarityTable",
    "backend_options",
    "default_cache_path",
    "make_backend",
    "parse_backend_name",
]

_LAZY = {
    "BACKEND_NAMES": "names",
    "BackendStats": "base",
    "Pair": "base",
    "SimilarityBackend": "base",
    "SimilarityTable": "base",
    "SimilarityCache": "cache",
    "default_cache_path": "cache",
}


__getattr__ = lazy_exports(__name__, _LAZY)


def _accepted(cls: type, options: dict[str, Any] | None) -> dict[str, Any]:
    """The suite's backend options that this backend takes: its keyword-only parameters (others
    are for other backends)."""
    params = keyword_options(cls)
    return {
        k: v for k, v in (options or {}).items() if k in params and k not in ("base_url", "cache")
    }


def make_backend(
    spec: str | BackendName,
    *,
    base_url: str | None = None,
    cache: str | Path | bool | None = None,
    options: dict[str, Any] | None = None,
) -> SimilarityBackend:
    """A backend from its command-line name (or the name parsed already: a run's options carry
    it, :attr:`pingce.options.RunOptions.scoring`). ``cache``: a path, None for the default file,
    or False for no cache. ``options`` go to the backend (judge template, concurrency,
    prices...)."""
    from .cache import SimilarityCache

    name = spec if isinstance(spec, BackendName) else _parsed(spec)
    store: SimilarityCache | None = None
    path = cache_path(cache) if name.remote else None
    if path is not None:
        store = SimilarityCache(path)
    try:
        return _build(name, base_url, store, options)
    except BaseException:
        if store is not None:
            store.close()
        raise


def _parsed(spec: str) -> BackendName:
    try:
        return parse_backend_name(spec)
    except ValueError as exc:
        raise OptionError(f"--similarity {exc}") from None


def _build(
    name: BackendName,
    base_url: str | None,
    store: SimilarityCache | None,
    options: dict[str, Any] | None,
) -> SimilarityBackend:
    """``cls(*arguments, **keywords)``: the arguments read from the name, the options the class
    takes, and a remote backend's endpoint and cache."""
    assert name.entry is not None
    cls = name.entry.load()
    keywords = _accepted(cls, options)
    if name.entry.remote:
        keywords.update(base_url=base_url, cache=store)
    try:
        return cls(*name.arguments, **keywords)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"--similarity {name.text}: {exc}") from None
