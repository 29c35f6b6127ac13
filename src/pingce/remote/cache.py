"""The one persistent cache of pingce's model calls: rows by hash key in an SQLite file.

One file (:func:`default_cache_path`) holds a table for each kind of answer: the similarity
backends' scores (``scores``, :class:`~pingce.similarity.SimilarityCache`) and the answers of
the model under test (``answers``, :class:`~pingce.predict.AnswerCache`), so ``--cache`` and
``--no-cache`` govern both. Each owner makes its keys (a SHA-256 of everything its answer
depends on; never an API key or a URL's credentials) and decides what a row holds;
:class:`KeyedTable` stores and finds the rows, and :func:`buffered_writer` writes the answers of
a run as they arrive (every 0.2 s), so a killed run keeps what it was given and the rerun asks
only for the rest. The file is opened as the run store's (:mod:`pingce._sqlite`: WAL, a wait for
another process's lock, each write one transaction).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .._sqlite import connect, retrying, transaction, use_wal

__all__ = ["KeyedTable", "buffered_writer", "cache_path", "default_cache_path"]

T = TypeVar("T")

_NAME = re.compile(r"[a-z_][a-z0-9_]*")
_CHUNK = 500
"""Keys per ``SELECT ... IN (...)`` (SQLite's limit of host parameters is 999 on old builds)."""


def default_cache_path() -> Path:
    """``$PINGCE_CACHE_DIR/similarity.sqlite3``, else ``~/.cache/pingce/similarity.sqlite3``."""
    root = os.environ.get("PINGCE_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "pingce"
    return base / "similarity.sqlite3"


def cache_path(option: str | os.PathLike[str] | bool | None) -> Path | None:
    """The cache file the ``cache`` option names: a path; None or True, the default file
    (:func:`default_cache_path`); False (``--no-cache``), none."""
    if option is False:
        return None
    if option is None or option is True:
        return default_cache_path()
    return Path(option)


class KeyedTable:
    """Rows by key in one table of an SQLite file; safe to share between threads.

    ``columns`` are the SQL definitions of the stored columns (``"score REAL NOT NULL"``); the
    table also has ``key TEXT PRIMARY KEY`` first and ``created REAL NOT NULL`` (when the row was
    written) last. A row is the tuple of the stored columns' values, in their order."""

    def __init__(self, path: str | os.PathLike[str], table: str, columns: Sequence[str]):
        names = [column.split()[0] for column in columns]
        for name in (table, *names):
            if not _NAME.fullmatch(name):
                raise ValueError(f"not an SQL name: {name!r}")
        self.path = Path(path)
        self.table = table
        self._names = ", ".join(names)
        self._marks = ", ".join("?" * (len(names) + 2))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = connect(self.path, threads=True, synchronous="NORMAL")
        try:
            retrying(lambda: use_wal(self._db))
            self._db.execute(
                f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, "
                f"{', '.join(columns)}, created REAL NOT NULL)"
            )
        except BaseException:
            self._db.close()
            raise

    def get_many(self, keys: Iterable[str]) -> dict[str, tuple[Any, ...]]:
        """The stored rows of the keys that have one."""
        items = list(dict.fromkeys(keys))
        found: dict[str, tuple[Any, ...]] = {}
        with self._lock:
            for start in range(0, len(items), _CHUNK):
                chunk = items[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, {self._names} FROM {self.table} WHERE key IN ({marks})", chunk
                ).fetchall()
                for key, *values in rows:
                    found[key] = tuple(values)
        return found

    def put_many(self, rows: Iterable[tuple[str, Sequence[Any]]]) -> None:
        """Store ``(key, row)`` items (replacing a key's old row) and commit."""
        now = time.time()
        data = [(key, *values, now) for key, values in rows]
        if not data:
            return
        sql = (
            f"INSERT OR REPLACE INTO {self.table} (key, {self._names}, created) "
            f"VALUES ({self._marks})"
        )
        with self._lock:
            transaction(self._db, lambda: self._db.executemany(sql, data))

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()


def buffered_writer(
    put: Callable[[list[T]], None], failed: Callable[[], None]
) -> tuple[list[T], Callable[[], None]]:
    """A list to append answered items to, and the function that writes them with ``put`` and
    empties it (run every 0.2 s and at the end by :func:`pingce.remote.http.run_workers`,
    also when SIGINT or SIGTERM stops the calls (:func:`pingce.remote.http.run_async`): a
    run stopped so loses no answer, one killed by SIGKILL at most the last 0.2 s). A write that
    fails (a locked file) is counted by ``failed`` and tried again, three times; items still
    unwritten wait for the next call."""
    pending: list[T] = []

    def flush() -> None:
        if not pending:
            return
        for attempt in range(3):
            try:
                put(pending)
            except Exception:  # e.g. a locked file: keep the items and try again
                failed()
                time.sleep(0.05 * (attempt + 1))
                continue
            pending.clear()
            return

    return pending, flush
