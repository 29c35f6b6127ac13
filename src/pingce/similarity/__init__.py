"""Similarity backends behind one small protocol: ``exact``, ``levenshtein``, ``lexical``,
``embedding:<model>``, ``embedding-api:<model>``, ``rerank:<model>`` (a ``/rerank`` endpoint)
and ``openai:<model>`` (an LLM judge)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from ..errors import OptionError
from .base import BackendStats, Pair, SimilarityBackend, SimilarityTable
from .cache import SimilarityCache, default_cache_path

__all__ = [
    "BackendStats",
    "Pair",
    "SimilarityBackend",
    "SimilarityCache",
    "SimilarityTable",
    "backend_options",
    "default_cache_path",
    "make_backend",
]


def _classes() -> list[type]:
    from .embedding import EmbeddingAPIBackend, EmbeddingBackend
    from .judge import JudgeBackend
    from .lexical import LexicalBackend
    from .rerank import RerankBackend

    return [EmbeddingAPIBackend, EmbeddingBackend, JudgeBackend, LexicalBackend, RerankBackend]


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
    kind, _, model = spec.partition(":")
    store: SimilarityCache | None = None
    if kind in ("openai", "embedding-api", "rerank") and cache is not False:
        store = SimilarityCache(default_cache_path() if cache in (None, True) else Path(str(cache)))
    try:
        return _build(spec, kind, model, base_url, store, options)
    except BaseException:
        if store is not None:
            store.close()
        raise


def _build(
    spec: str,
    kind: str,
    model: str,
    base_url: str | None,
    store: SimilarityCache | None,
    options: dict[str, Any] | None,
) -> SimilarityBackend:
    try:
        if kind == "exact" and not model:
            from .lexical import ExactBackend

            return ExactBackend()
        if kind == "levenshtein" and not model:
            from .lexical import LevenshteinBackend

            return LevenshteinBackend()
        if kind == "lexical":
            from .lexical import LexicalBackend

            if model:
                low, _, high = model.removeprefix("char-").partition("-")
                return LexicalBackend(int(low), int(high or low))
            return LexicalBackend()
        if kind == "embedding" and model:
            from .embedding import EmbeddingBackend

            return EmbeddingBackend(model, **_accepted(EmbeddingBackend, options))
        if kind == "embedding-api" and model:
            from .embedding import EmbeddingAPIBackend

            return EmbeddingAPIBackend(
                model, base_url=base_url, cache=store, **_accepted(EmbeddingAPIBackend, options)
            )
        if kind == "rerank" and model:
            from .rerank import RerankBackend

            return RerankBackend(
                model, base_url=base_url, cache=store, **_accepted(RerankBackend, options)
            )
        if kind == "openai" and model:
            from .judge import JudgeBackend

            return JudgeBackend(
                model, base_url=base_url, cache=store, **_accepted(JudgeBackend, options)
            )
    except (TypeError, ValueError) as exc:
        raise OptionError(f"--similarity {spec}: {exc}") from None
    raise OptionError(
        f"--similarity {spec!r}: expected exact, levenshtein, lexical[:char-1-3], "
        "embedding:<model or path>, embedding-api:<model>, rerank:<model> or openai:<model>"
    )
