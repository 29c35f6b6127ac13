"""What a run produced beside its result: :class:`RunOutputs` (per-record rows, saved
statistics, the model's answers, the shards of ``--engine ray`` and their folder's lifetime), and
:class:`ComparisonOutputs` (both sides' rows of a comparison, paired).

The engine returns them with the result (:meth:`pingce.results.EvaluationResult.with_outputs`:
the result it returns keeps a reference to them, which a copy of it shares), so that
``pingce.report.write_outputs(result, out)`` after ``pingce.evaluate(...)`` writes
records.jsonl and stats.npz (or a ray run's records/ and stats/) without being handed them;
:func:`pingce.report.write_outputs` takes them as an explicit argument too. The result itself is
plain data: what results.json holds.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from ..results import RecordRows
from .layout import RECORD_SHARDS, STAT_SHARDS
from .records import records_in_memory
from .stats import SavedStats, read_stat_shards

__all__ = ["ComparisonOutputs", "Kept", "RunOutputs", "ShardFolder"]


@dataclass(frozen=True)
class Kept:
    """How a run's folder keeps its per-record rows (the ``output`` options of the run):
    ``format`` records.jsonl or records.parquet (``--records``); ``fields``: whether the rows
    echo the input fields the suite read (``--records-fields all``; by default not: the data
    file holds them); ``report_records``: the records report.html embeds, the first N
    (``--report-records``), with their input fields whatever ``fields`` says."""

    format: Literal["jsonl", "parquet"] = "jsonl"
    fields: bool = False
    report_records: int = 2000


class ShardFolder:
    """A folder of a run's shards (``--engine ray``), removed with the last holder of it (the
    run's outputs and their copies, shallow or deep, share it) or at :meth:`remove`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._remove = weakref.finalize(self, shutil.rmtree, path, True)

    @classmethod
    def make(cls, scratch: str | os.PathLike[str] | None = None) -> ShardFolder:
        """A new folder for a run's shards in ``scratch`` (``--ray-scratch``; default: the
        system's temporary folder), holding an empty records/ and stats/ for the workers'
        ``part-N`` files (:func:`.layout.part_file`)."""
        folder = cls(os.path.abspath(tempfile.mkdtemp(prefix="pingce-shards-", dir=scratch)))
        for name in (RECORD_SHARDS, STAT_SHARDS):
            os.mkdir(os.path.join(folder.path, name))
        return folder

    def remove(self) -> None:
        """Remove the folder now (once)."""
        self._remove()

    def __deepcopy__(self, memo: dict[int, Any]) -> ShardFolder:
        return self  # a copy shares the folder on disk


@dataclass(eq=False)
class RunOutputs:
    """What a run produced beside its result.

    ``records``: the per-record values and miss reasons (records.jsonl; for ``--engine ray``,
    read back from the shards up to :data:`pingce.runfolder.records.RECORDS_IN_MEMORY` records);
    ``saved``: the per-record statistic blocks (stats.npz), or what makes them when
    :attr:`stats` is first asked for; ``predictions``: the records the model answered
    (``--model``; predictions.jsonl); ``record_shards`` and ``stat_shards``: ``--engine ray``'s
    folders of Parquet and stats.npz shards (the outputs' records/ and stats/), which live in
    ``shards`` (removed with the last holder, or at :meth:`release`); ``kept``: how the
    written folder keeps the rows."""

    records: RecordRows | None = None
    saved: SavedStats | Callable[[], SavedStats] | None = None
    predictions: list[dict[str, Any]] | None = None
    record_shards: str | None = None
    stat_shards: str | None = None
    shards: ShardFolder | None = field(default=None, repr=False)
    kept: Kept = field(default_factory=Kept)
    """How the folder keeps the rows (:class:`Kept`: the run's ``--records``,
    ``--records-fields``, ``--report-records``)."""

    @classmethod
    def of_shards(cls, shards: ShardFolder, n: int) -> RunOutputs:
        """What a run of ``n`` records over shards wrote into ``shards``: its records/ (read
        back into :attr:`records` up to :data:`.records.RECORDS_IN_MEMORY` records) and its
        stats/ (joined when :attr:`stats` is first asked for)."""
        rows_to, stats_to = (
            os.path.join(shards.path, name) for name in (RECORD_SHARDS, STAT_SHARDS)
        )
        return cls(
            records=records_in_memory(rows_to, n),
            saved=partial(read_stat_shards, stats_to),
            record_shards=rows_to,
            stat_shards=stats_to,
            shards=shards,
        )

    @property
    def stats(self) -> SavedStats | None:
        """The per-record statistic blocks (stats.npz), made when first asked for."""
        if callable(self.saved):
            self.saved = self.saved()
        return self.saved

    def release(self) -> None:
        """Remove the folder of the run's shards now (``--engine ray``; the written outputs hold
        links to them): :attr:`record_shards` and :attr:`stat_shards` are None after, and
        :attr:`stats` too unless it was read. Nothing to do for a local run."""
        if self.shards is None:
            return
        self.shards.remove()
        self.shards = None
        self.record_shards = self.stat_shards = None
        if callable(self.saved):
            self.saved = None


@dataclass(eq=False)
class ComparisonOutputs:
    """What a comparison produced beside its result: both sides' per-record rows, the same
    records in the same order (comparison.html lists the records that flipped), or what makes
    them when :attr:`records` is first asked for."""

    sides: tuple[RecordRows, RecordRows] | Callable[[], tuple[RecordRows, RecordRows]] | None = None

    @property
    def records(self) -> tuple[RecordRows, RecordRows] | None:
        """The candidate's and the baseline's per-record rows, paired."""
        if callable(self.sides):
            self.sides = self.sides()
        return self.sides
