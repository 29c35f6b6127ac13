"""Kept for imports of an earlier pingce: the record shards of ``--engine ray`` are read and
written by :mod:`pingce.runfolder.records`."""

from .runfolder.records import read_record_shards

__all__ = ["read_record_shards"]
