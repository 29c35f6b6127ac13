"""Whether the process that left something behind is still at work.

A run leaves marks of itself while it works: its staging folder in ``--out`` (written there and
renamed into place at the end) and, with ``--name``, the name reserved in the run store. A
process killed with SIGKILL (or by a power cut) cannot take them back, so the next run must
tell a mark of a process that still works from one of a dead process. A mark names its owner:
the host (a short hash of its name: folders and stores may be shared over a network), the
process id, and the process's start time (on Linux, ``/proc/PID/stat``; 0 where unknown), so
that a process id given to another process after the owner died is not taken for the owner.
A mark of another host cannot be checked from here: it is left alone until it is older than
:data:`OTHER_HOST_SECONDS`.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import time
from dataclasses import dataclass
from functools import cache

__all__ = ["OTHER_HOST_SECONDS", "Owner", "host_name", "this_process"]

OTHER_HOST_SECONDS = 24 * 3600.0
"""Age after which a mark of another host's process is taken for a dead process's."""

_TAG = re.compile(r"([0-9a-f]{8})-([0-9]+)-([0-9]+)")


@dataclass(frozen=True)
class Owner:
    """The process a mark belongs to."""

    host: str
    """The host's name (:func:`host_name`)."""
    pid: int
    start: int
    """Start time of the process in clock ticks after boot (Linux), 0 where unknown."""

    @property
    def tag(self) -> str:
        """The owner in a file name: ``HHHHHHHH-PID-START`` (``H``: hash of the host name)."""
        return f"{_host_hash(self.host)}-{self.pid}-{self.start}"

    @classmethod
    def from_tag(cls, text: str) -> tuple[str, Owner] | None:
        """(rest of the text, owner) of a text that begins with a :attr:`tag`, else None. The
        owner's ``host`` is this host's name when the hash is this host's, else the hash."""
        found = _TAG.match(text)
        if found is None:
            return None
        digest, pid, start = found.groups()
        host = host_name() if digest == _host_hash(host_name()) else digest
        return text[found.end() :], cls(host, int(pid), int(start))

    def alive(self, since: float | None = None) -> bool:
        """Whether the owner may still be at work: on this host, the process exists (not a
        zombie) and started when the owner did; on another, ``since`` (when the mark was made
        or last touched, a UNIX time) is less than :data:`OTHER_HOST_SECONDS` ago."""
        if self.host != host_name():
            return since is None or time.time() - since < OTHER_HOST_SECONDS
        if self.pid <= 0:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's process: it exists
            pass
        except OSError:  # pragma: no cover (cannot tell: assume it works)
            return True
        state = _stat(self.pid)
        if state is None:
            return True  # no /proc: the process exists, that is all we can know
        status, start = state
        return status != "Z" and (not self.start or start == self.start)


def this_process() -> Owner:
    """The owner of the marks this process makes."""
    pid = os.getpid()
    state = _stat(pid)
    return Owner(host_name(), pid, 0 if state is None else state[1])


@cache
def host_name() -> str:
    """This host's name (``socket.gethostname``)."""
    return socket.gethostname() or "localhost"


def _host_hash(host: str) -> str:
    return hashlib.sha256(host.encode("utf-8", "replace")).hexdigest()[:8]


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, start time in ticks) of a process from ``/proc/PID/stat``; None without it."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # after the command name, which may hold spaces
    try:
        return fields[0], int(fields[19])  # state (field 3), starttime (field 22)
    except (IndexError, ValueError):
        return None
