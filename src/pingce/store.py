"""The former name of :mod:`pingce.history` (the run history), kept so that code written against
it (``from pingce.store import record_run``) keeps working. New code imports
:mod:`pingce.history`."""

from .history import (
    SCHEMA_VERSION,
    MetricRow,
    Reservation,
    RunInfo,
    StoreError,
    data_hash,
    default_name,
    default_store_path,
    git_commit,
    name_taken,
    name_used_message,
    record_run,
    remove_run,
    reserve_name,
    run_folder,
    run_info,
    runs,
)

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
