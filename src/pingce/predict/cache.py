"""A persistent SQLite cache of the model's answers, keyed by a hash of everything sent.

The key is a SHA-256 of the model name, the endpoint (without credentials), the messages, the
tools and the request parameters (temperature, max_tokens, ...), so a rerun with the same
request asks nothing and a changed request asks again. Stored with each answer: the whole reply
(the ``chat.completion``), the latency measured when it was first asked, and its token counts.
Never an API key. It lives in the similarity cache's file (table ``answers``), so ``--cache``
and ``--no-cache`` govern both.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from ..similarity.cache import default_cache_path

__all__ = ["AnswerCache", "CachedAnswer", "default_answer_cache_path", "request_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    reply TEXT NOT NULL,
    latency_sec REAL NOT NULL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
)
"""

CachedAnswer = tuple[Any, float, int, int]
"""``(reply, latency_sec, prompt_tokens, completion_tokens)``."""


def default_answer_cache_path() -> Path:
    """The similarity cache's file (``$PINGCE_CACHE_DIR/similarity.sqlite3``, else
    ``~/.cache/pingce/similarity.sqlite3``)."""
    return default_cache_path()


def request_key(identity: str, body: dict[str, Any]) -> str:
    """The cache key of a request: ``identity`` (model and endpoint) and the body's canonical
    JSON (sorted keys)."""
    digest = hashlib.sha256()
    digest.update(identity.encode("utf-8"))
    digest.update(b"\x00")
    digest.update(orjson.dumps(body, option=orjson.OPT_SORT_KEYS))
    return digest.hexdigest()


class AnswerCache:
    """Answers by request key in an SQLite file; safe to share between threads."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get_many(self, keys: Sequence[str]) -> dict[str, CachedAnswer]:
        """Cached answers of the keys that have one."""
        found: dict[str, CachedAnswer] = {}
        items = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(items), 500):
                chunk = items[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    "SELECT key, reply, latency_sec, prompt_tokens, completion_tokens FROM "
                    f"answers WHERE key IN ({marks})",
                    chunk,
                ).fetchall()
                for key, reply, latency, pt, ct in rows:
                    found[key] = (orjson.loads(reply), float(latency), int(pt), int(ct))
        return found

    def put_many(self, items: Iterable[tuple[str, CachedAnswer]]) -> None:
        """Store answers ``(key, (reply, latency_sec, prompt_tokens, completion_tokens))``."""
        now = time.time()
        rows = [
            (key, orjson.dumps(reply).decode("utf-8"), latency, pt, ct, now)
            for key, (reply, latency, pt, ct) in items
        ]
        if not rows:
            return
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO answers (key, reply, latency_sec, prompt_tokens, "
                "completion_tokens, created) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
