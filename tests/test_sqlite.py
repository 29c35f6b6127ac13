"""The one SQLite helper (:mod:`pingce._sqlite`) that the run store and the cache share."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from pingce import _sqlite
from pingce._sqlite import connect, retrying, transaction, use_wal
from pingce.remote.cache import KeyedTable


def test_a_connection_is_in_autocommit_mode_with_a_busy_timeout(tmp_path: Path) -> None:
    db = connect(tmp_path / "a.db", synchronous="NORMAL")
    try:
        assert db.isolation_level is None
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] == int(_sqlite.TIMEOUT * 1000)
        assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        use_wal(db)
        use_wal(db)  # asked once: already in WAL
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        db.close()


def test_a_transaction_is_all_or_nothing(tmp_path: Path) -> None:
    db = connect(tmp_path / "a.db")
    try:
        db.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")

        def half() -> None:
            db.execute("INSERT INTO t VALUES (1)")
            db.execute("INSERT INTO t VALUES (1)")  # the same key: the whole write fails

        with pytest.raises(sqlite3.IntegrityError):
            transaction(db, half)
        assert db.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0
        assert transaction(db, lambda: db.execute("INSERT INTO t VALUES (2)").rowcount) == 1
        assert not db.in_transaction
    finally:
        db.close()


def test_a_locked_write_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sqlite.time, "sleep", lambda _: None)
    tries: list[int] = []

    def work() -> str:
        tries.append(1)
        if len(tries) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "done"

    assert retrying(work) == "done" and len(tries) == 3
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        retrying(lambda: (_ for _ in ()).throw(sqlite3.OperationalError("no such table: x")))

    def always() -> None:
        tries.append(1)
        raise sqlite3.OperationalError("database is locked")

    tries.clear()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        retrying(always, attempts=2)
    assert len(tries) == 2


def test_the_cache_writes_from_threads_in_one_file_with_the_store_settings(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cache.sqlite3"
    stores = [KeyedTable(path, "scores", ["score REAL NOT NULL"]) for _ in range(2)]

    def write(i: int) -> None:
        stores[i % 2].put_many((f"k{i}-{j}", (float(j),)) for j in range(50))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(stores[0]) == 300
    assert stores[1].get_many(["k5-49", "nope"]) == {"k5-49": (49.0,)}
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    for store in stores:
        store.close()
