"""Where a command writes (``--out``): checked before the work, staged, left clean.

Every command that writes files goes through here: ``pingce run``, ``compare``, ``report``,
``calibrate`` and ``demo``, and :func:`pingce.evaluate` and :func:`pingce.compare` with ``out``.

* Before the work (:func:`prepare_out`): the folder is made (with the folders above it that are
  missing) and a probe file written in it and removed, so that a path under a file, a read-only
  file system, a folder without permission or a name too long stops the command at once (an
  :class:`~pingce.errors.OutputError` naming the path and the system's reason), not after an
  hour of judge calls. The folders made for the check are removed again if the command then
  fails (:meth:`OutputPlace.discard`, while they are empty): a failed command leaves nothing.
* While writing (:func:`pingce.runfolder.atomic.atomic_files`, the one writer): the files are
  made in a hidden staging folder inside the output folder and renamed into place once all are
  complete. A failure while writing (a full
  disk) is an :class:`~pingce.errors.OutputError` too (:func:`output_place`), the staging folder
  removed. The staging folder's name carries its owner (``.pingce-HOST-PID-START-...``,
  :class:`pingce._processes.Owner`): a process killed while writing (SIGKILL) cannot remove it,
  so every later command writing to the same folder removes the staging folders and probes of
  processes that are no longer alive (:func:`remove_stale`).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from ._processes import OTHER_HOST_SECONDS, Owner, this_process
from .errors import OutputError

__all__ = [
    "STAGING_PREFIX",
    "OutputPlace",
    "checked_out",
    "output_error",
    "output_place",
    "prepare_out",
    "remove_stale",
]

STAGING_PREFIX = ".pingce-"
"""The start of the name of everything pingce leaves in an output folder while it writes."""

_LEGACY = re.compile(r"\.pingce-[a-z0-9_]{8}")
"""Staging folders of pingce before their names carried the owner (``tempfile.mkdtemp``)."""


@dataclass
class OutputPlace:
    """An output folder checked by :func:`prepare_out`."""

    folder: Path
    created: list[Path] = field(default_factory=list)
    """The folders made for it, outermost first."""

    def discard(self) -> None:
        """Remove the folders :func:`prepare_out` made, innermost first, as long as they are
        empty (a failed command leaves no empty output folder behind; never anyone's files)."""
        for folder in reversed(self.created):
            try:
                folder.rmdir()
            except OSError:
                return
        self.created = []


def prepare_out(out: str | os.PathLike[str], *, file: bool = False) -> OutputPlace:
    """Check that the output folder ``out`` (with ``file=True``: the folder of the output
    file ``out``) can be written, before any work: the folder is made if needed, stale staging
    folders of dead processes removed (:func:`remove_stale`) and a probe file written and
    removed. An :class:`OutputError` names the path and the reason."""
    target = Path(out)
    what = "output file" if file else "output folder"
    if file and target.is_dir():
        raise OutputError(
            "is a folder; give the path of a file",
            path=str(target),
            reason="Is a directory",
            what=what,
        )
    folder = target.parent if file else target
    place = OutputPlace(folder, _make_folders(folder, target, what))
    try:
        remove_stale(folder)
        probe = folder / f"{STAGING_PREFIX}{this_process().tag}-probe"
        try:
            with open(probe, "wb") as handle:
                handle.write(b"pingce\n")
        finally:
            with suppress(OSError):
                probe.unlink()
    except OSError as exc:
        place.discard()
        raise output_error(what, target, exc) from None
    return place


def _make_folders(folder: Path, target: Path, what: str) -> list[Path]:
    """Make ``folder`` and the folders above it that are missing; those made, outermost first.
    A file where a folder should be is named."""
    missing: list[Path] = []
    here = folder
    while True:
        try:
            mode = here.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):  # missing, or under a file: go up
            missing.append(here)
            if here.parent == here:
                break
            here = here.parent
            continue
        except OSError as exc:  # a name too long, no permission to look
            raise output_error(what, target, exc) from None
        if not stat.S_ISDIR(mode):
            raise OutputError(
                f"{here} is a file, not a folder",
                path=str(target),
                reason="Not a directory",
                what=what,
            )
        break
    made: list[Path] = []
    try:
        for step in reversed(missing):
            step.mkdir()
            made.append(step)
    except FileExistsError:  # another process made it meanwhile: fine if it is a folder
        return [*made, *_make_folders(folder, target, what)]
    except OSError as exc:
        OutputPlace(folder, made).discard()
        raise output_error(what, target, exc) from None
    return made


def output_error(
    what: str, target: str | os.PathLike[str], exc: OSError, doing: str = "cannot be written"
) -> OutputError:
    """The error of an OSError ``exc`` while making or writing ``target``: the path, the file
    the system named (when it is another) and the system's reason."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    named = ""
    if exc.filename is not None:
        name = Path(os.fsdecode(exc.filename))
        if name.name.startswith(STAGING_PREFIX) or name.parent.name.startswith(STAGING_PREFIX):
            name = Path(target) / name.name  # a staged file: the name it was to have
        if name != Path(target) and not name.name.startswith(STAGING_PREFIX):
            named = f" ({name})"
    return OutputError(f"{doing}{named}: {reason}", path=str(target), reason=reason, what=what)


@contextmanager
def checked_out(
    out: str | os.PathLike[str] | None, *, file: bool = False
) -> Iterator[OutputPlace | None]:
    """:func:`prepare_out` before the block (nothing when ``out`` is None); the folders made
    for the check are removed again when the block fails."""
    if out is None:
        yield None
        return
    place = prepare_out(out, file=file)
    try:
        yield place
    except BaseException:
        place.discard()
        raise


@contextmanager
def output_place(out: str | os.PathLike[str], *, file: bool = False) -> Iterator[None]:
    """:func:`checked_out` for the block that writes there: an OSError in the block becomes an
    :class:`OutputError` (the path, the file and the system's reason)."""
    with checked_out(out, file=file):
        try:
            yield
        except OSError as exc:
            what = "output file" if file else "output folder"
            raise output_error(what, out, exc, "writing failed") from None


def remove_stale(folder: str | os.PathLike[str]) -> list[str]:
    """Remove from ``folder`` the staging folders and probes of processes no longer alive
    (killed while they wrote), and staging folders of an older pingce untouched for a day;
    the names removed."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    removed = []
    for entry in entries:
        if not entry.name.startswith(STAGING_PREFIX):
            continue
        try:
            since = entry.stat(follow_symlinks=False).st_mtime
            is_folder = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        owned = Owner.from_tag(entry.name[len(STAGING_PREFIX) :])
        if owned is None:
            legacy = _LEGACY.fullmatch(entry.name) and is_folder
            if not legacy or time.time() - since < OTHER_HOST_SECONDS:
                continue
        elif owned[1].alive(since):
            continue
        if is_folder:
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with suppress(OSError):
                os.unlink(entry.path)
        removed.append(entry.name)
    return removed
