"""The one way pingce opens an SQLite file (the standard library's sqlite3), for the run store
(:mod:`pingce.history`) and the cache of model answers (:mod:`pingce.remote.cache`): connection
settings, write-ahead logging, how long a connection waits for another's lock, atomic write
transactions and the retries of a write that still finds the file locked.

Connections are in autocommit mode (``isolation_level=None``): every write is an explicit
:func:`transaction`, taken at once (``BEGIN IMMEDIATE``), so two processes writing the same file
wait for each other (``busy_timeout``) instead of failing halfway.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

__all__ = ["ATTEMPTS", "TIMEOUT", "connect", "locked", "retrying", "transaction", "use_wal"]

T = TypeVar("T")

TIMEOUT = 30.0
"""Seconds a connection waits for another's lock before sqlite gives up (``busy_timeout``)."""
ATTEMPTS = 8
"""Writes tried by :func:`retrying` when the database is still locked after that wait."""


def connect(
    path: str | os.PathLike[str],
    *,
    threads: bool = False,
    synchronous: Literal["NORMAL", "FULL"] | None = None,
) -> sqlite3.Connection:
    """A connection to ``path`` in autocommit mode, waiting up to :data:`TIMEOUT` for a lock.
    ``threads``: usable from several threads (the caller serialises its use with a lock);
    ``synchronous``: ``PRAGMA synchronous`` (None: sqlite's default, ``FULL``; ``NORMAL`` is
    safe with WAL and loses at most the last transactions on a power cut)."""
    db = sqlite3.connect(
        Path(path), timeout=TIMEOUT, isolation_level=None, check_same_thread=not threads
    )
    try:
        db.execute(f"PRAGMA busy_timeout = {int(TIMEOUT * 1000)}")
        if synchronous is not None:
            db.execute(f"PRAGMA synchronous = {synchronous}")
    except BaseException:
        db.close()
        raise
    return db


def use_wal(db: sqlite3.Connection) -> None:
    """Write-ahead logging (readers do not block the writer), set once per file: switching the
    mode needs the file to itself, so it is asked only when the file is not in it yet."""
    mode = db.execute("PRAGMA journal_mode").fetchone()[0]
    if str(mode).lower() != "wal":
        db.execute("PRAGMA journal_mode = WAL")


def transaction(db: sqlite3.Connection, work: Callable[[], T]) -> T:
    """``work()`` in one write transaction (taken at once: ``BEGIN IMMEDIATE``), committed, or
    rolled back when it raises."""
    db.execute("BEGIN IMMEDIATE")
    try:
        out = work()
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return out


def locked(exc: sqlite3.OperationalError) -> bool:
    """Whether an error is another connection's lock (``database is locked``, ``busy``)."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def retrying(work: Callable[[], T], attempts: int = ATTEMPTS) -> T:
    """``work()``, tried again (after a short random pause) while the database is locked."""
    for attempt in range(attempts):
        try:
            return work()
        except sqlite3.OperationalError as exc:
            if not locked(exc) or attempt == attempts - 1:
                raise
            time.sleep(random.uniform(0.05, 0.2) * (attempt + 1))
    raise AssertionError("unreachable")
