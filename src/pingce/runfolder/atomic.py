"""The one way pingce writes files, all or nothing: run folders (:func:`pingce.report.
write_outputs`), comparisons, reports written again (``pingce report``) and ``pingce calibrate
--out FILE``.

:func:`atomic_files` checks the place (:func:`pingce._outputs.output_place`: folders made, a
probe, an :class:`~pingce.errors.OutputError` with the path and the system's reason), gives a
:class:`Staging`, a hidden folder inside the output folder (named after this process, so that a
later command removes it if this one is killed: :func:`pingce._outputs.remove_stale`), where the
caller makes every file; when the block ends without an error, the files it replaces are removed
and each made file is renamed into place (a rename within one file system: a file is there whole
or not at all). On an error nothing is renamed, the staging folder is removed, and the folders
made for the command are removed again while empty.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .._outputs import STAGING_PREFIX, output_place
from .._processes import this_process

__all__ = ["Staging", "atomic_files", "staged"]


@contextmanager
def staged(folder: Path) -> Iterator[Path]:
    """A new staging folder in ``folder`` (named after this process), removed at the end
    whatever happens."""
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{this_process().tag}-", dir=folder))
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


class Staging:
    """The files being made for ``target`` (a folder) in the staging folder ``folder``."""

    def __init__(self, folder: Path, target: Path) -> None:
        self.folder = folder
        self.target = target
        self.names: list[str] = []
        self.replaced: set[str] = set()

    def path(self, name: str) -> Path:
        """Where to make the file (or folder) ``name``; it goes into place with the others."""
        if name not in self.names:
            self.names.append(name)
        return self.folder / name

    def write_bytes(self, name: str, data: bytes) -> Path:
        """Make the file ``name`` holding ``data``."""
        path = self.path(name)
        path.write_bytes(data)
        return path

    def write_text(self, name: str, text: str) -> Path:
        """Make the file ``name`` holding ``text`` in UTF-8."""
        path = self.path(name)
        path.write_bytes(text.encode("utf-8"))
        return path

    def link_tree(self, name: str, source: str | os.PathLike[str]) -> Path:
        """Make the folder ``name`` of ``source``'s files: hard links where both are on one file
        system (no bytes copied: ten million records' shards are gigabytes), copies elsewhere."""

        def link(src: str, dst: str) -> None:
            try:
                os.link(src, dst)
            except OSError:  # another file system, or one without hard links
                shutil.copy2(src, dst)

        path = self.path(name)
        shutil.copytree(source, path, copy_function=link)
        return path

    def placed(self) -> dict[str, Path]:
        """The paths the made files have (or will have) in the target, by name, in the order
        they were made."""
        return {name: self.target / name for name in self.names}

    def replaces(self, *names: str) -> None:
        """The files (or folders) ``names`` are removed from the target when the made ones go
        into place, unless one of them is made (another run's variant of a file)."""
        self.replaced.update(names)

    def commit(self) -> None:
        """Remove what the made files replace and rename each made file into place."""
        for stale in sorted(self.replaced - set(self.names)):
            _remove(self.target / stale)
        for name in self.names:
            if (self.target / name).is_dir():
                shutil.rmtree(self.target / name)
            os.replace(self.folder / name, self.target / name)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


@contextmanager
def atomic_files(out: str | os.PathLike[str], *, file: bool = False) -> Iterator[Staging]:
    """A :class:`Staging` for the output folder ``out`` (with ``file=True``: for the one output
    file ``out``, made as ``staging.path(Path(out).name)``), committed when the block ends
    without an error; nothing is left of it otherwise."""
    target = Path(out)
    folder = target.parent if file else target
    with output_place(target, file=file), staged(folder) as place:
        staging = Staging(place, folder)
        yield staging
        staging.commit()
