"""Per-record work on two cores: the second half of the records in a forked child process.

A statistic whose rows are computed record by record (the same code for every record, no state
carried from one record to the next that changes a value) can give the second half of its
records to a child process made with ``fork`` (which sees the loaded records without copying or
pickling them) while it computes the first half itself. The child sends its result back through
a pipe, pickled, and exits. The numbers cannot differ from one process's: each record is
computed by the same code either way.

The child is used only where it pays: on Linux (``fork`` is the safe default there, and the only
way to share the records for free), with two or more cores of which about one is idle besides
this process's (the 1-minute load average says), for at least :data:`MINIMUM` records, and
unless ``PINGCE_PROCESSES=1``; ``PINGCE_PROCESSES=2`` uses it whatever the load. If the child
fails in any way (it cannot be started, it dies, its answer is incomplete), the parent computes
the second half itself, so the result is the same, only later.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

__all__ = ["MINIMUM", "in_halves", "two_processes_allowed"]

T = TypeVar("T")
R = TypeVar("R")

MINIMUM = 20_000
"""Fewest records for which a child process is started (below, its start-up is not repaid)."""
IDLE = 1.5
"""Idle cores needed (:func:`_idle_cores`): on a machine whose other processes keep the cores
busy, the child only competes with this process for the same core, and its start-up (copying
the pages it touches) makes the run slower, not faster."""


def two_processes_allowed(n: int) -> bool:
    """Whether :func:`in_halves` would use a child process for ``n`` records."""
    if n < MINIMUM or not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    asked = os.environ.get("PINGCE_PROCESSES", "").strip()
    if asked == "1":
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover (Linux has sched_getaffinity)
        cores = os.cpu_count() or 1
    return cores >= 2 and (asked == "2" or _idle_cores(cores) >= IDLE)


def _idle_cores(cores: int) -> float:
    """Cores left idle by the other processes: the cores less the 1-minute load average, which
    counts this process too (about 1 while it computes)."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover
        return 0.0
    return cores - max(0.0, load - 1.0)


def in_halves(work: Callable[[Sequence[T]], R], items: Sequence[T]) -> tuple[R, R]:
    """``(work(first half), work(second half))``, the second half in a forked child process
    when :func:`two_processes_allowed`, else both here."""
    middle = len(items) // 2
    first, second = items[:middle], items[middle:]
    if not two_processes_allowed(len(items)):
        return work(first), work(second)
    child = _start(work, second)
    mine = work(first)
    answer = _collect(child)
    if answer is None:  # the child failed: same numbers, computed here
        return mine, work(second)
    return mine, cast(R, answer[0])


def _start(work: Callable[[Sequence[T]], R], items: Sequence[T]) -> tuple[int, int] | None:
    """Fork a child that writes ``pickle(work(items))`` to a pipe; ``(pid, read end)``."""
    try:
        read, write = os.pipe()
    except OSError:
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: compute, answer, leave without running the parent's exit code
        status = 1
        try:
            os.close(read)
            payload = pickle.dumps(work(items), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as pipe:
                pipe.write(payload)
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    return pid, read


def _collect(child: tuple[int, int] | None) -> tuple[object] | None:
    """The child's answer (in a tuple), or None if it failed."""
    if child is None:
        return None
    pid, read = child
    try:
        with os.fdopen(read, "rb") as pipe:
            payload = pipe.read()
    except OSError:
        payload = b""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return None
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0 or not payload:
        return None
    try:
        return (pickle.loads(payload),)
    except Exception:  # an incomplete answer: compute it here
        return None
