"""Per-record work on two cores: the second half of the records in a forked child process.

A statistic whose rows are computed record by record (the same code for every record, no state
carried from one record to the next that changes a value) can give the second half of its
records to a child process made with ``fork`` (which sees the loaded records without copying or
pickling them) while it computes the first half itself. The child sends its result back through
a pipe, pickled, and exits. The numbers cannot differ from one process's: each record is
computed by the same code either way.

The policy is the executor's, not the metrics': the local executor (and a comparison of two
files) hands :func:`in_halves` to the statistics as their ``Context.map_records``
(:mod:`pingce.metrics.protocol`), Ray's shards keep the plain map. The run folder's writer of
records.jsonl (:mod:`pingce.runfolder.records`) uses it directly: it runs when the outputs
are written, after the run, in the process that writes them, where no statistic's context
reaches.

The child is used only where it pays: on Linux (``fork`` is the safe default there, and the only
way to share the records for free), with two or more cores of which about one is idle besides
this process's (the 1-minute load average says), for at least :data:`MINIMUM` records, and
unless ``PINGCE_PROCESSES=1``; ``PINGCE_PROCESSES=2`` uses it whatever the load. If the child
fails in any way (it cannot be started, it dies, its answer is incomplete), the parent computes
the second half itself, so the result is the same, only later.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

from .errors import OptionError

__all__ = [
    "MINIMUM",
    "PROCESSES_VALUES",
    "PROCESSES_VARIABLE",
    "in_halves",
    "processes_setting",
    "two_processes_allowed",
]

T = TypeVar("T")
R = TypeVar("R")

MINIMUM = 20_000
"""Fewest records for which a child process is started (below, its start-up is not repaid)."""
IDLE = 1.5
"""Idle cores needed (:func:`_idle_cores`): on a machine whose other processes keep the cores
busy, the child only competes with this process for the same core, and its start-up (copying
the pages it touches) makes the run slower, not faster."""


PROCESSES_VARIABLE = "PINGCE_PROCESSES"
PROCESSES_VALUES = ("", "1", "2")
"""Its values: unset or empty (decide by the load), ``1`` (never a child), ``2`` (always)."""


def processes_setting() -> str:
    """The value of ``PINGCE_PROCESSES``, checked: a value outside :data:`PROCESSES_VALUES`
    is an error naming the variable and the value (never quietly read as "decide")."""
    asked = os.environ.get(PROCESSES_VARIABLE, "").strip()
    if asked not in PROCESSES_VALUES:
        raise OptionError(
            f"{PROCESSES_VARIABLE} must be 1 (one process), 2 (a second process whatever the "
            f"load) or unset (decide by the load), got {asked!r}"
        )
    return asked


def two_processes_allowed(n: int) -> bool:
    """Whether :func:`in_halves` would use a child process for ``n`` records."""
    asked = processes_setting()
    if n < MINIMUM or not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
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


def in_halves(work: Callable[[Sequence[T]], R], items: Sequence[T]) -> list[R]:
    """``work`` over ``items`` as a list of results in order: ``[work(items)]`` in this
    process, or, when :func:`two_processes_allowed`, ``[work(first half), work(second half)]``
    with the second half computed by a forked child. The caller joins the parts whatever
    their number. A child that fails is reported on stderr and its half computed here; if this
    process fails, the child is stopped before the error goes on."""
    if not two_processes_allowed(len(items)):
        return [work(items)]
    middle = len(items) // 2
    first, second = items[:middle], items[middle:]
    child = _start(work, second)
    try:
        mine = work(first)
    except BaseException:  # this process fails or is stopped (SIGTERM): so is the child
        _stop(child)
        raise
    answer = _collect(child)
    if answer is None:  # the child failed: same numbers, computed here
        return [mine, work(second)]
    return [mine, cast(R, answer[0])]


def _start(work: Callable[[Sequence[T]], R], items: Sequence[T]) -> tuple[int, int] | None:
    """Fork a child that writes ``pickle(work(items))`` to a pipe; ``(pid, read end)``."""
    try:
        read, write = os.pipe()
    except OSError as exc:
        _report(f"could not open a pipe ({exc})")
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError as exc:
        os.close(read)
        os.close(write)
        _report(f"could not start ({exc})")
        return None
    if pid == 0:  # the child: compute, answer, leave without running the parent's exit code
        status = 1
        try:
            _die_with(parent)
            os.close(read)
            payload = pickle.dumps(work(items), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as pipe:
                pipe.write(payload)
            status = 0
        except BaseException:
            traceback.print_exc()  # the child's own error, on the stderr it shares
            sys.stderr.flush()
        finally:
            os._exit(status)
    os.close(write)
    return pid, read


def _die_with(parent: int) -> None:
    """In the child: be killed when the parent dies (Linux's ``PR_SET_PDEATHSIG``), so that a
    parent killed with SIGKILL leaves no child behind that goes on writing its half (into a
    staging folder that is then never removed); a parent already gone ends the child now."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover (not glibc: the parent ends it)
        pass
    if os.getppid() != parent:  # it died before the signal was set
        os._exit(1)


def _stop(child: tuple[int, int] | None) -> None:
    """End a child whose answer is no longer wanted, and reap it."""
    if child is None:
        return
    pid, read = child
    os.close(read)
    _kill(pid)


def _kill(pid: int) -> None:
    """Kill the child and reap it."""
    with contextlib.suppress(ProcessLookupError):  # it may have ended already
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _collect(child: tuple[int, int] | None) -> tuple[object] | None:
    """The child's answer (in a tuple), or None if it failed (reported on stderr)."""
    if child is None:
        return None
    pid, read = child
    try:
        try:
            with os.fdopen(read, "rb") as pipe:
                payload = pipe.read()
        except OSError:
            payload = b""
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        _report("was lost")
        return None
    except BaseException:  # stopped while waiting (SIGTERM): so is the child
        _kill(pid)
        raise
    if os.WIFSIGNALED(status):
        _report(f"was killed by signal {os.WTERMSIG(status)}")
        return None
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0 or not payload:
        _report(f"failed (exit status {os.WEXITSTATUS(status)})")
        return None
    try:
        return (pickle.loads(payload),)
    except Exception as exc:  # an incomplete answer: compute it here
        _report(f"sent an answer that could not be read ({exc})")
        return None


def _report(what: str) -> None:
    print(
        f"pingce: the second process {what}; its half of the records is computed in this "
        f"process (same numbers, more time; {PROCESSES_VARIABLE}=1 turns the second process off)",
        file=sys.stderr,
        flush=True,
    )
