"""The model's answers in the cache (:mod:`pingce.remote.cache`, table ``answers``), keyed by a
hash of everything sent.

The key is a SHA-256 of the model name, the endpoint (without credentials), the messages, the
tools and the request parameters (temperature, max_tokens, ...), so a rerun with the same
request asks nothing and a changed request asks again. Stored with each answer: the whole reply
(the ``chat.completion``), the latency measured when it was first asked, and its token counts.
Never an API key. It lives in the similarity cache's file
(:func:`pingce.remote.cache.default_cache_path`), so ``--cache`` and ``--no-cache`` govern both.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from .._json import dumps
from ..remote.cache import KeyedTable

__all__ = ["AnswerCache", "CachedAnswer", "request_key"]

_COLUMNS = (
    "reply TEXT NOT NULL",
    "latency_sec REAL NOT NULL",
    "prompt_tokens INTEGER NOT NULL DEFAULT 0",
    "completion_tokens INTEGER NOT NULL DEFAULT 0",
)

CachedAnswer = tuple[Any, float, int, int]
"""``(reply, latency_sec, prompt_tokens, completion_tokens)``."""


def request_key(identity: str, body: dict[str, Any]) -> str:
    """The cache key of a request: ``identity`` (model and endpoint) and the body's canonical
    JSON (sorted keys)."""
    digest = hashlib.sha256()
    digest.update(identity.encode("utf-8"))
    digest.update(b"\x00")
    digest.update(dumps(body, sort_keys=True))
    return digest.hexdigest()


class AnswerCache:
    """Answers by request key in an SQLite file; safe to share between threads."""

    def __init__(self, path: str | os.PathLike[str]):
        self._store = KeyedTable(path, "answers", _COLUMNS)
        self.path: Path = self._store.path

    def get_many(self, keys: Sequence[str]) -> dict[str, CachedAnswer]:
        """Cached answers of the keys that have one."""
        return {
            key: (orjson.loads(reply), float(latency), int(pt), int(ct))
            for key, (reply, latency, pt, ct) in self._store.get_many(keys).items()
        }

    def put_many(self, items: Iterable[tuple[str, CachedAnswer]]) -> None:
        """Store answers ``(key, (reply, latency_sec, prompt_tokens, completion_tokens))``."""
        self._store.put_many(
            (key, (dumps(reply).decode("utf-8"), latency, pt, ct))
            for key, (reply, latency, pt, ct) in items
        )

    def __len__(self) -> int:
        return len(self._store)

    def close(self) -> None:
        """Close the database."""
        self._store.close()
