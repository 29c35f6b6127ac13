"""The similarity backends' scores in the cache (:mod:`pingce.remote.cache`, table ``scores``),
keyed by backend signature and texts.

Each score is written as soon as it arrives (committed in small batches), so a run that is killed
halfway loses nothing: the rerun finds the finished pairs in the cache and only asks for the rest.
Only a hash of (signature, a, b) and the score are stored, with the token counts of the call;
never the texts, an API key or a base URL's credentials.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..remote.cache import KeyedTable, default_cache_path
from .base import Pair

__all__ = ["SimilarityCache", "default_cache_path"]


_COLUMNS = (
    "score REAL NOT NULL",
    "prompt_tokens INTEGER NOT NULL DEFAULT 0",
    "completion_tokens INTEGER NOT NULL DEFAULT 0",
)


def _key(signature: str, pair: Pair) -> str:
    digest = hashlib.sha256()
    for part in (signature, pair[0], pair[1]):
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


class SimilarityCache:
    """Scores by (signature, a, b) in an SQLite file; safe to share between threads."""

    def __init__(self, path: str | os.PathLike[str]):
        self._store = KeyedTable(path, "scores", _COLUMNS)
        self.path: Path = self._store.path

    def get_many(self, signature: str, pairs: Sequence[Pair]) -> dict[Pair, float]:
        """Cached scores of the pairs that have one."""
        keys = {_key(signature, pair): pair for pair in pairs}
        return {keys[key]: float(row[0]) for key, row in self._store.get_many(keys).items()}

    def put_many(self, signature: str, items: Iterable[tuple[Pair, float, int, int]]) -> None:
        """Store scores ``(pair, score, prompt_tokens, completion_tokens)`` and commit."""
        self._store.put_many(
            (_key(signature, pair), (score, pt, ct)) for pair, score, pt, ct in items
        )

    def __len__(self) -> int:
        return len(self._store)

    def close(self) -> None:
        """Close the database."""
        self._store.close()
