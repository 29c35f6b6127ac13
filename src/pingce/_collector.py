"""Pausing Python's cyclic garbage collector around work that makes many containers and no
reference cycles: reading records, the per-turn statistics, writing records.jsonl.

CPython starts a collection every 700 new containers (tuples, lists, dictionaries). Work that
makes millions of them, as reading a large file does, then spends as long collecting as working
(measured: half the time of building 200,000 tuples next to the columns of 100,000 records),
although none of what it makes can form a cycle.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the collector for the body (if it runs), and resume it after, whatever happens."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
