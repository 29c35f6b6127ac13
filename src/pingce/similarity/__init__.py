"""Similarity backends behind one small protocol: ``exact``, ``levenshtein``, ``lexical``,
``embedding`` (the multilingual Universal Sentence Encoder, offline), ``embedding:<model>``
(sentence-transformers), ``embedding-api:<model>``, ``rerank:<model>`` (a ``/rerank`` endpoint)
and ``openai:<model>`` (an LLM judge)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from ..cache import cache_path
from ..errors import OptionError
from .base import BackendStats, Pair, SimilarityBackend, SimilarityTable
from .cache import SimilarityCache, default_cache_path
from .names import BACKEND_NAMES, USE_MODEL, BackendName, parse_backend_name

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


def _classes() -> list[type]:
    from .embedding import EmbeddingAPIBackend, EmbeddingBackend
    from .judge import JudgeBackend
    from .lexical import LexicalBackend
    from .rerank import RerankBackend
    from .use import USEBackend

    return [
        EmbeddingAPIBackend,
        EmbeddingBackend,
        JudgeBackend,
        LexicalBackend,
        RerankBackend,
        USEBackend,
    ]


def backend_options() -> set[str]:
    """Names a suite's ``similarity:`` options may use: what some backend takes (the endpoint,
    key and cache come from the command line and the environment, not from a suite file)."""
    names: set[str] = set()
    for cls in _classes():
        names.update(inspect.signature(cls).parameters)
    return names - {"model", "base_url", "api_key", "cache"}


def _accepted(cls: type, options: dict[str, Any] | None) -> dict[str, Any]:
    """The suite's backend options that this backend takes (others are for other backends)."""
    params = inspect.signature(cls).parameters
    return {
        k: v for k, v in (options or {}).items() if k in params and k not in ("base_url", "cache")
    }


def make_backend(
    spec: str,
    *,
    base_url: str | None = None,
    cache: str | Path | bool | None = None,
    options: dict[str, Any] | None = None,
) -> SimilarityBackend:
    """A backend from its command-line name. ``cache``: a path, None for the default file, or
    False for no cache. ``options`` go to the backend (judge template, concurrency, prices...)."""
    try:
        name = parse_backend_name(spec)
    except ValueError as exc:
        raise OptionError(f"--similarity {exc}") from None
    store: SimilarityCache | None = None
    path = cache_path(cache) if name.remote else None
    if path is not None:
        store = SimilarityCache(path)
    try:
        return _build(spec, name, base_url, store, options)
    except BaseException:
        if store is not None:
            store.close()
        raise


def _build(
    spec: str,
    name: BackendName,
    base_url: str | None,
    store: SimilarityCache | None,
    options: dict[str, Any] | None,
) -> SimilarityBackend:
    kind, model = name.kind, name.model
    try:
        if kind == "exact":
            from .lexical import ExactBackend

            return ExactBackend()
        if kind == "levenshtein":
            from .lexical import LevenshteinBackend

            return LevenshteinBackend()
        if kind == "lexical":
            from .lexical import LexicalBackend

            return LexicalBackend(*name.lexical_orders) if name.lexical_orders else LexicalBackend()
        if kind == "embedding" and model == USE_MODEL:
            from .use import USEBackend

            return USEBackend(**_accepted(USEBackend, options))
        if kind == "embedding":
            from .embedding import EmbeddingBackend

            return EmbeddingBackend(model, **_accepted(EmbeddingBackend, options))
        if kind == "embedding-api":
            from .embedding import EmbeddingAPIBackend

            return EmbeddingAPIBackend(
                model, base_url=base_url, cache=store, **_accepted(EmbeddingAPIBackend, options)
            )
        if kind == "rerank":
            from .rerank import RerankBackend

            return RerankBackend(
                model, base_url=base_url, cache=store, **_accepted(RerankBackend, options)
            )
        from .judge import JudgeBackend

        return JudgeBackend(
            model, base_url=base_url, cache=store, **_accepted(JudgeBackend, options)
        )
    except (TypeError, ValueError) as exc:
        raise OptionError(f"--similarity {spec}: {exc}") from None
