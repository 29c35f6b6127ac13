"""A persistent SQLite cache of similarity scores, keyed by backend signature and texts.

Each score is written as soon as it arrives (committed in small batches), so a run that is killed
halfway loses nothing: the rerun finds the finished pairs in the cache and only asks for the rest.
Only a hash of (signature, a, b) and the score are stored, with the token counts of the call;
never the texts, an API key or a base URL's credentials.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from .base import Pair

__all__ = ["SimilarityCache", "default_cache_path", "public_url"]


def public_url(url: str) -> str:
    """The URL without user info or query string, fit for signatures, results and reports."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


_SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    key TEXT PRIMARY KEY,
    score REAL NOT NULL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
)
"""


def default_cache_path() -> Path:
    """``$PINGCE_CACHE_DIR/similarity.sqlite3``, else ``~/.cache/pingce/similarity.sqlite3``."""
    root = os.environ.get("PINGCE_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "pingce"
    return base / "similarity.sqlite3"


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
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get_many(self, signature: str, pairs: Sequence[Pair]) -> dict[Pair, float]:
        """Cached scores of the pairs that have one."""
        keys = {_key(signature, pair): pair for pair in pairs}
        found: dict[Pair, float] = {}
        items = list(keys)
        with self._lock:
            for start in range(0, len(items), 500):
                chunk = items[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, score FROM scores WHERE key IN ({marks})", chunk
                ).fetchall()
                for key, score in rows:
                    found[keys[key]] = float(score)
        return found

    def put_many(self, signature: str, items: Iterable[tuple[Pair, float, int, int]]) -> None:
        """Store scores ``(pair, score, prompt_tokens, completion_tokens)`` and commit."""
        now = time.time()
        rows = [(_key(signature, pair), score, pt, ct, now) for pair, score, pt, ct in items]
        if not rows:
            return
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO scores (key, score, prompt_tokens, completion_tokens, "
                "created) VALUES (?, ?, ?, ?, ?)",
                rows,
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM scores").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
