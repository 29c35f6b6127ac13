"""Run history: every ``pingce run`` recorded in one SQLite file (the standard library's sqlite3).

The store is ``$PINGCE_STORE``, else ``$XDG_DATA_HOME/pingce/runs.db`` (``~/.local/share`` when
``XDG_DATA_HOME`` is not set); ``pingce run --store PATH`` moves it for one run and ``--no-store``
skips it. A run is recorded with its name (unique in the store), suite, signature, data path and
the sha256 of the data file, the options, the pingce version, the git commit of the repository
the data (or the working directory) is in, every metric's value, interval and direction (all
records and each slice) and the output folder.

Two processes may write at once: the database is in WAL mode, each connection waits for a lock
(``busy_timeout``) and a write that still finds the database locked is tried again
(:mod:`pingce._sqlite`, shared with the cache). A run given
a name (``pingce run --name``) reserves it before any work (:func:`reserve_name`: a row of the
table ``reservations``, inserted in one transaction), so that a second run of the same name
started meanwhile stops at once instead of being silently not recorded; recording the run takes
the reservation back in the transaction that inserts the run, a failed run releases it, and the
reservation of a process that died (killed: it could release nothing) is taken over
(:class:`pingce._processes.Owner`). The schema
carries its version (``PRAGMA user_version``); :data:`MIGRATIONS` takes an older file to the
current one when it is opened for writing.

Python: :func:`runs`, :func:`run_info`, :func:`remove_run` (also as ``pingce.runs`` ...),
:func:`record_run` for a result made with :func:`pingce.evaluate` and :func:`run_folder` (a run
name or output folder to its folder, as ``pingce report`` and ``pingce compare RUN_A RUN_B`` take
them).
"""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._processes import Owner, this_process
from ._sqlite import connect, retrying, transaction, use_wal
from ._version import __version__
from .errors import OptionError, PingceError
from .urls import public_url

if TYPE_CHECKING:
    from .results import EvaluationResult, MetricResult

__all__ = [
    "SCHEMA_VERSION",
    "MetricRow",
    "Reservation",
    "RunInfo",
    "StoreError",
    "data_hash",
    "default_name",
    "default_store_path",
    "git_commit",
    "name_taken",
    "name_used_message",
    "record_run",
    "remove_run",
    "reserve_name",
    "run_folder",
    "run_info",
    "runs",
]

SCHEMA_VERSION = 3
"""The schema this pingce writes (``PRAGMA user_version`` of the file)."""


class StoreError(OptionError):
    """The store cannot be read or written, or has no run of that name."""


class _NameTaken(StoreError):
    """A run name in the store already, or reserved by a run in progress."""


@dataclass(frozen=True)
class MetricRow:
    """One metric of a stored run: over all records (``slice`` None) or one slice's records
    (``slice`` as in results.json: ``field=value``)."""

    metric: str
    slice: str | None
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    higher_is_better: bool | None = None
    """The metric's direction as the run recorded it; for a run stored before directions were
    (schema 2), the metric registry's for that name; None when neither knows it (the viewer
    then shows no mark rather than a guessed one)."""


@dataclass(frozen=True)
class RunInfo:
    """A stored run (what ``pingce runs show`` prints)."""

    name: str
    suite: str
    created: str
    """When the run started, ISO 8601 with the local UTC offset."""
    n_records: int
    data_path: str | None
    """The data file (absolute), ``-`` for standard input, None for records given in memory."""
    data_sha256: str | None
    """sha256 of the data file's bytes (None for standard input and records in memory)."""
    git_commit: str | None
    """``git rev-parse HEAD`` in the data's repository, else the working directory's."""
    pingce_version: str
    out_dir: str | None
    """The run's output folder (absolute), None when nothing was written."""
    signature: dict[str, Any]
    options: dict[str, Any]
    failures: dict[str, Any]
    metrics: list[MetricRow] = field(default_factory=list)

    def value(self, metric: str, slice: str | None = None) -> float | None:
        """The stored value of ``metric`` (over all records, or over ``slice``)."""
        for row in self.metrics:
            if row.metric == metric and row.slice == slice:
                return row.value
        where = f" in the slice {slice}" if slice else ""
        raise KeyError(f"run {self.name!r} has no metric {metric!r}{where}")

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready)."""
        return dataclasses.asdict(self)


# ------------------------------------------------------------------------------ where and what


def default_store_path() -> Path:
    """``$PINGCE_STORE``, else ``$XDG_DATA_HOME/pingce/runs.db`` (``~/.local/share/...``)."""
    explicit = os.environ.get("PINGCE_STORE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or ""
    root = Path(base).expanduser() if base.strip() else Path.home() / ".local" / "share"
    return root / "pingce" / "runs.db"


def _store_path(store: str | os.PathLike[str] | None) -> Path:
    return default_store_path() if store is None else Path(store).expanduser()


def default_name(suite: str, when: float | None = None) -> str:
    """``<suite>-<YYYYmmdd-HHMMSS>`` (local time; the default output folder's name too)."""
    stem = Path(suite).stem if suite.endswith((".yaml", ".yml")) else suite
    return f"{stem}-{time.strftime('%Y%m%d-%H%M%S', time.localtime(when))}"


def data_hash(*paths: str | os.PathLike[str]) -> str:
    """sha256 of the files' bytes one after the other (of one file; of several, that of the
    file ``cat`` would join them into), read a megabyte at a time."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def git_commit(*places: str | os.PathLike[str] | None) -> str | None:
    """The commit checked out (``git rev-parse HEAD``) in the first of ``places`` (folders, or
    files: their folder) that is inside a git repository; None when none is, or git is absent."""
    for place in places:
        if place is None:
            continue
        folder = Path(place)
        if not folder.is_dir():
            folder = folder.parent
        if not folder.is_dir():
            continue
        try:
            done = subprocess.run(
                ["git", "rev-parse", "HEAD"],
                cwd=folder,
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        commit = done.stdout.strip()
        if done.returncode == 0 and len(commit) >= 40:
            return commit
    return None


# ------------------------------------------------------------------------------ the schema


def _create(db: sqlite3.Connection) -> None:
    """Version 1: runs and their metrics."""
    db.execute(
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            suite TEXT NOT NULL,
            created TEXT NOT NULL,
            created_ts REAL NOT NULL,
            n_records INTEGER NOT NULL,
            data_path TEXT,
            data_sha256 TEXT,
            git_commit TEXT,
            pingce_version TEXT NOT NULL,
            out_dir TEXT,
            signature TEXT NOT NULL,
            options TEXT NOT NULL,
            failures TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX runs_by_suite ON runs (suite, created_ts)")
    db.execute("CREATE INDEX runs_by_time ON runs (created_ts)")
    db.execute(
        """CREATE TABLE metrics (
            run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            metric TEXT NOT NULL,
            slice TEXT NOT NULL DEFAULT '',
            value REAL,
            ci_low REAL,
            ci_high REAL,
            n INTEGER NOT NULL,
            PRIMARY KEY (run_id, slice, metric)
        )"""
    )


def _reservations(db: sqlite3.Connection) -> None:
    """Version 2: run names reserved by runs at work (:func:`reserve_name`)."""
    db.execute(
        """CREATE TABLE reservations (
            name TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            process_start INTEGER NOT NULL,
            created_ts REAL NOT NULL
        )"""
    )


def _directions(db: sqlite3.Connection) -> None:
    """Version 3: each metric's direction (1 higher is better, 0 lower is; NULL in the rows of
    runs stored before, and of a result that did not say)."""
    db.execute("ALTER TABLE metrics ADD COLUMN higher_is_better INTEGER")


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _create,
    2: _reservations,
    3: _directions,
}
"""``MIGRATIONS[v]`` takes a file at version ``v - 1`` to version ``v`` (0: an empty file). A
schema change adds the next version here and raises :data:`SCHEMA_VERSION`."""


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring the file to :data:`SCHEMA_VERSION` inside one write transaction (two processes
    opening a new store at once: the second finds the first's tables)."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the run store {path} was written by a newer pingce (schema {version}, this pingce "
            f"reads up to {SCHEMA_VERSION}): upgrade pingce, or use another --store"
        )

    def steps() -> None:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        for step in range(version + 1, SCHEMA_VERSION + 1):
            MIGRATIONS[step](db)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    transaction(db, steps)


@contextmanager
def _connect(path: Path, *, write: bool) -> Iterator[sqlite3.Connection]:
    """A connection in autocommit mode (transactions are explicit), in WAL mode and at the
    current schema when ``write``; a store that does not exist is an error when reading."""
    if write:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.is_file():
        raise StoreError(f"no run store at {path} (pingce run records runs there)")
    db = connect(path)
    with closing(db):
        db.execute("PRAGMA foreign_keys = ON")
        if write:
            retrying(lambda: use_wal(db))
            retrying(lambda: _migrate(db, path))
        else:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"the run store {path} was written by a newer pingce (schema {version}): "
                    "upgrade pingce"
                )
            if version < SCHEMA_VERSION:  # an older (or empty) file: bring it up to date
                retrying(lambda: _migrate(db, path))
        yield db


def _failed(path: Path, exc: Exception) -> StoreError:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return StoreError(f"run store {path}: {reason}")


# ------------------------------------------------------------------------------ writing


def name_taken(name: str, store: str | os.PathLike[str] | None = None) -> bool:
    """Whether the store holds a run named ``name`` (False when there is no store, or it
    cannot be read: recording will say so)."""
    path = _store_path(store)
    if not path.is_file():
        return False
    try:
        with _connect(path, write=False) as db:
            row = db.execute("SELECT 1 FROM runs WHERE name = ?", (name,)).fetchone()
    except (sqlite3.Error, OSError, StoreError):
        return False
    return row is not None


def record_run(
    result: EvaluationResult,
    *,
    name: str | None = None,
    store: str | os.PathLike[str] | None = None,
    data: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    options: Mapping[str, Any] | None = None,
    started: float | None = None,
) -> RunInfo:
    """Record ``result`` in the store and return what was stored.

    ``name``: unique in the store (a name already used is a :class:`StoreError`); None gives
    ``<suite>-<YYYYmmdd-HHMMSS>`` of ``started`` (a UNIX time; now by default), with ``-2``,
    ``-3``... when two runs start in the same second. ``data``: the records' file (hashed;
    ``-`` for standard input), ``out``: the output folder, ``options``: what to keep of the
    options (JSON-able)."""
    from ._json import dumps  # numpy with it, loaded already when a result exists

    path = _store_path(store)
    when = time.time() if started is None else started
    created = datetime.fromtimestamp(when).astimezone().isoformat(timespec="seconds")
    data_path: str | None = None
    digest: str | None = None
    if data is not None:
        data_path = "-" if str(data) == "-" else str(Path(data).resolve())
        if data_path != "-" and Path(data_path).is_file():
            digest = data_hash(data_path)
        elif data_path != "-" and glob.has_magic(str(data)):  # --engine ray's shards
            from .engine.shards import expand_paths

            with suppress(PingceError):
                digest = data_hash(*expand_paths(str(data)))
    commit = git_commit(None if data_path in (None, "-") else data_path, Path.cwd())
    out_dir = None if out is None else str(Path(out).resolve())
    rows = list(_metric_rows(result))
    fields = {
        "suite": result.suite,
        "created": created,
        "created_ts": when,
        "n_records": result.n_records,
        "data_path": data_path,
        "data_sha256": digest,
        "git_commit": commit,
        "pingce_version": result.pingce_version or __version__,
        "out_dir": out_dir,
        "signature": result.signature.model_dump_json(),
        "options": dumps(_shown_options(options or {}), default=str).decode("utf-8"),
        "failures": result.failures.model_dump_json(),
    }

    def insert(db: sqlite3.Connection) -> str:
        chosen = name if name is not None else _free_name(db, default_name(result.suite, when))
        if name is not None:
            _check_free(db, name, path)
            db.execute("DELETE FROM reservations WHERE name = ?", (name,))
        columns = ["name", *fields]
        cursor = db.execute(
            f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            [chosen, *fields.values()],
        )
        db.executemany(
            "INSERT INTO metrics (run_id, position, metric, slice, value, ci_low, ci_high, n, "
            "higher_is_better) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(cursor.lastrowid, k, *row) for k, row in enumerate(rows)],
        )
        return chosen

    try:
        with _connect(path, write=True) as db:
            chosen = retrying(lambda: transaction(db, lambda: insert(db)))
    except (sqlite3.Error, OSError) as exc:
        raise _failed(path, exc) from exc
    return run_info(chosen, store=path)


def _shown_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options as they may be stored and shown: base URLs (``base_url``, ``model_base_url``)
    as :func:`pingce.urls.public_url` makes them (no user and password, secret query values
    redacted). Applied when a run is recorded and when one is read (a run recorded before)."""
    return {
        key: public_url(value) if key.endswith("base_url") and isinstance(value, str) else value
        for key, value in options.items()
    }


def _exists(db: sqlite3.Connection, name: str) -> bool:
    return db.execute("SELECT 1 FROM runs WHERE name = ?", (name,)).fetchone() is not None


def _reserved(db: sqlite3.Connection, name: str) -> tuple[Owner, float] | None:
    """The owner of the reservation of ``name`` and when it was made, if there is one."""
    row = db.execute(
        "SELECT host, pid, process_start, created_ts FROM reservations WHERE name = ?", (name,)
    ).fetchone()
    return None if row is None else (Owner(row[0], row[1], row[2]), row[3])


def _check_free(db: sqlite3.Connection, name: str, path: Path) -> None:
    """A :class:`StoreError` when a run named ``name`` is in the store, or another process
    that is still alive has reserved the name."""
    if _exists(db, name):
        raise _NameTaken(name_used_message(name, path))
    found = _reserved(db, name)
    if found is not None:
        owner, since = found
        if owner != this_process() and owner.alive(since):
            raise _NameTaken(_in_progress_message(name, path, owner, since))


def _in_progress_message(name: str, path: Path, owner: Owner, since: float) -> str:
    started = datetime.fromtimestamp(since).astimezone().isoformat(timespec="seconds")
    return (
        f"--name {name}: a run of that name is in progress (process {owner.pid} on {owner.host}, "
        f"started {started}; run store {path}); wait for it to end, or choose another name"
    )


@dataclass(frozen=True)
class Reservation:
    """A run name reserved by this process (:func:`reserve_name`)."""

    name: str
    store: Path
    owner: Owner

    def release(self) -> None:
        """Give the name back (a run that failed); nothing once the run is recorded, which
        took the reservation back already. Never raises: a reservation that cannot be
        released is taken over by the next run once this process has ended."""
        try:
            with _connect(self.store, write=True) as db:
                retrying(
                    lambda: db.execute(
                        "DELETE FROM reservations WHERE name = ? AND host = ? AND pid = ?",
                        (self.name, self.owner.host, self.owner.pid),
                    )
                )
        except (sqlite3.Error, OSError, PingceError):
            pass


def reserve_name(name: str, store: str | os.PathLike[str] | None = None) -> Reservation | None:
    """Reserve the run name ``name`` for this process before the run's work, in one write
    transaction: a :class:`StoreError` when a run of that name is in the store, or in progress
    (reserved by another process that is alive: on this host, its process id and start time
    say so; on another host, a reservation less than a day old). A reservation of a process
    that has died is taken over. None when the store cannot be written: the run goes on, and
    recording it will say why it could not be recorded."""
    path = _store_path(store)
    me = this_process()

    def reserve(db: sqlite3.Connection) -> None:
        _check_free(db, name, path)
        db.execute(
            "INSERT OR REPLACE INTO reservations (name, host, pid, process_start, created_ts) "
            "VALUES (?, ?, ?, ?, ?)",
            (name, me.host, me.pid, me.start, time.time()),
        )

    try:
        with _connect(path, write=True) as db:
            retrying(lambda: transaction(db, lambda: reserve(db)))
    except _NameTaken:
        raise
    except (sqlite3.Error, OSError, StoreError):  # e.g. a store of a newer pingce
        return None
    return Reservation(name, path, me)


def _free_name(db: sqlite3.Connection, base: str) -> str:
    name, k = base, 1
    while _exists(db, name) or _reserved(db, name) is not None:
        k += 1
        name = f"{base}-{k}"
    return name


def name_used_message(name: str, store: str | os.PathLike[str] | None = None) -> str:
    """The message of a ``--name`` already in the store."""
    path = _store_path(store)
    return (
        f"--name {name}: a run of that name is already in the run store {path}; choose another "
        f"name, or remove the old run with: pingce runs rm {name}"
    )


def _metric_rows(result: EvaluationResult) -> Iterator[tuple[Any, ...]]:
    def row(metric: str, where: str, entry: MetricResult) -> tuple[Any, ...]:
        higher = entry.higher_is_better
        return (metric, where, entry.value, entry.ci_low, entry.ci_high, entry.n, higher)

    for metric, entry in result.metrics.items():
        yield row(metric, "", entry)
    for key, part in result.slices.items():
        for metric, entry in part.metrics.items():
            yield row(metric, key, entry)


# ------------------------------------------------------------------------------ reading


_COLUMNS = (
    "id, name, suite, created, n_records, data_path, data_sha256, git_commit, pingce_version, "
    "out_dir, signature, options, failures"
)


def _info(db: sqlite3.Connection, row: tuple[Any, ...], metrics: bool = True) -> RunInfo:
    run_id, name, suite, created, n_records, data_path, digest, commit, version, out_dir = row[:10]
    signature, options, failures = (json.loads(text) for text in row[10:13])
    rows: list[MetricRow] = []
    if metrics:
        for metric, where, value, low, high, n, higher in db.execute(
            "SELECT metric, slice, value, ci_low, ci_high, n, higher_is_better FROM metrics "
            "WHERE run_id = ? ORDER BY position",
            (run_id,),
        ):
            known = _registered_direction(metric) if higher is None else bool(higher)
            rows.append(MetricRow(metric, where or None, value, low, high, n, known))
    return RunInfo(
        name=name,
        suite=suite,
        created=created,
        n_records=n_records,
        data_path=data_path,
        data_sha256=digest,
        git_commit=commit,
        pingce_version=version,
        out_dir=out_dir,
        signature=signature,
        options=_shown_options(options),
        failures=failures,
        metrics=rows,
    )


def _registered_direction(metric: str) -> bool | None:
    """The direction of the metric registered under ``metric`` (a deprecated name read as its
    new one), for a row stored without one; None when no metric of that name is registered in
    this process (a suite's own metric, say)."""
    from .metrics.registry import metric_registry, resolve_name

    info = metric_registry().get(resolve_name(metric)[0])
    if info is None:
        return None
    higher = getattr(info.factory, "higher_is_better", None)
    return higher if isinstance(higher, bool) else None


def runs(
    *,
    suite: str | None = None,
    name: str | None = None,
    limit: int | None = None,
    store: str | os.PathLike[str] | None = None,
    slices: bool = False,
) -> list[RunInfo]:
    """The stored runs, newest first: of ``suite`` only, whose name contains ``name`` (a
    substring, case-insensitive), at most ``limit``. Each with its metrics over all records
    (and each slice's too with ``slices=True``). No store yet: an empty list."""
    path = _store_path(store)
    if not path.is_file():
        return []
    where, params = [], []
    if suite is not None:
        where.append("suite = ?")
        params.append(suite)
    if name:
        where.append("instr(lower(name), lower(?)) > 0")
        params.append(name)
    query = f"SELECT {_COLUMNS} FROM runs"
    if where:
        query += " WHERE " + " AND ".join(where)
    query += " ORDER BY created_ts DESC, id DESC"
    if limit is not None:
        query += f" LIMIT {max(0, int(limit))}"
    try:
        with _connect(path, write=False) as db:
            found = [_info(db, row) for row in db.execute(query, params).fetchall()]
    except (sqlite3.Error, OSError) as exc:
        raise _failed(path, exc) from exc
    if not slices:
        found = [
            dataclasses.replace(r, metrics=[m for m in r.metrics if m.slice is None]) for r in found
        ]
    return found


def run_info(name: str, *, store: str | os.PathLike[str] | None = None) -> RunInfo:
    """The stored run named ``name`` (a :class:`StoreError` when there is none)."""
    path = _store_path(store)
    try:
        with _connect(path, write=False) as db:
            row = db.execute(f"SELECT {_COLUMNS} FROM runs WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise StoreError(_unknown(db, name, path))
            return _info(db, row)
    except (sqlite3.Error, OSError) as exc:
        raise _failed(path, exc) from exc


def run_folder(
    ref: str | os.PathLike[str], *, store: str | os.PathLike[str] | None = None
) -> tuple[Path, RunInfo | None]:
    """The output folder of a run given as ``ref``: a run's output folder (one holding
    results.json) as it is, else the folder of the stored run named ``ref`` (with what the store
    holds of it). A :class:`StoreError` when it is neither, or the run kept no folder."""
    folder = Path(ref)
    if (folder / "results.json").is_file():
        return folder, None
    try:
        info = run_info(str(ref), store=store)
    except StoreError as exc:
        if folder.is_dir():
            raise StoreError(
                f"{folder} is not a run's output folder (no results.json) and {exc}"
            ) from None
        if str(ref) not in str(exc):  # no store at all: still say which run was asked for
            raise StoreError(f"no run {str(ref)!r}: {exc}") from None
        raise
    if info.out_dir is None:
        raise StoreError(f"run {info.name!r} has no output folder recorded")
    folder = Path(info.out_dir)
    if not (folder / "results.json").is_file():
        raise StoreError(
            f"run {info.name!r}: its output folder {folder} holds no results.json (moved or "
            "deleted?)"
        )
    return folder, info


def remove_run(name: str, *, store: str | os.PathLike[str] | None = None) -> RunInfo:
    """Delete the run named ``name`` from the store (its output folder is left as it is) and
    return what it held."""
    path = _store_path(store)
    info = run_info(name, store=path)

    def delete(db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM runs WHERE name = ?", (name,))

    try:
        with _connect(path, write=True) as db:
            retrying(lambda: transaction(db, lambda: delete(db)))
    except (sqlite3.Error, OSError) as exc:
        raise _failed(path, exc) from exc
    return info


def _unknown(db: sqlite3.Connection, name: str, path: Path) -> str:
    near = [
        row[0]
        for row in db.execute(
            "SELECT name FROM runs WHERE instr(lower(name), lower(?)) > 0 "
            "ORDER BY created_ts DESC LIMIT 5",
            (name,),
        )
    ]
    hint = f" (names containing it: {', '.join(near)})" if near else " (pingce runs lists them)"
    return f"no run named {name!r} in the run store {path}{hint}"
