"""The plan of a run: which fields to read, which statistics to compute, which metric reads which.

Everything that can be checked without the records is checked here, before a byte is read: the
fields that metrics read must be read the same way by all of them (a metric given the wrong kind
of input is a suite error naming its key, not a crash mid-run). :func:`check_records` then runs,
on the loaded records and before any model call, every check that needs the records but no
model: the statistics' own (required fields, duplicate turns) and the command line's (a
``--slice`` field that no record has).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError, OptionError, SuiteError
from ..labels import LabelScale
from ..metrics.protocol import Metric, StatBlock, Statistic, TableMetric
from ..options import RunOptions
from ..records import FieldSpec, ParseFailure, Table
from ..suites.build import BuiltSuite

__all__ = [
    "Plan",
    "StatBlocks",
    "check_records",
    "context_paths",
    "found_context",
    "make_plan",
    "unseen_context",
]

StatBlocks = Mapping[Hashable, StatBlock]
"""The statistic blocks of a run (or a slice, a shard, one side of a comparison), each under its
statistic's key in :attr:`Plan.statistics`: what the statistics phase makes and values,
intervals, slices and comparisons read."""


@dataclass
class Plan:
    """What a run reads and computes.

    ``statistics`` are keyed by their identity (metrics with equal keys share one computation);
    ``keys`` maps every metric and table (by result name) to its statistic."""

    suite: BuiltSuite
    options: RunOptions
    fields: list[FieldSpec]
    statistics: dict[Hashable, Statistic]
    keys: dict[str, Hashable]
    label_scales: dict[str, LabelScale]
    """Fields read as labels, and their scale (records.jsonl shows their names)."""
    context: tuple[str, ...] = ()
    """The context fields (the suite's ``context:``, ``--context``, with ``--model`` the
    prompt's fields), in that order: shown beside each record, read by no statistic. Those that
    a statistic reads anyway are in records.jsonl's ``fields``; the others are read as
    :attr:`FieldSpec.context` fields."""

    @property
    def metrics(self) -> dict[str, Metric]:
        """The suite's scalar metrics by result name."""
        return self.suite.metrics

    @property
    def tables(self) -> dict[str, TableMetric]:
        """The suite's table metrics by result name."""
        return self.suite.tables

    @property
    def unit(self) -> str | None:
        """The field whose values group records that resample together (a dialogue)."""
        return self.suite.spec.unit

    def statistic_of(self, name: str) -> Statistic:
        """The statistic that metric or table ``name`` reads."""
        return self.statistics[self.keys[name]]


def _merge(
    merged: dict[str, tuple[FieldSpec, str]], spec: FieldSpec, owner: str, suite: BuiltSuite
) -> None:
    """Add ``spec`` (read by ``owner``, a suite key) to the fields read so far."""
    known = merged.get(spec.path)
    if known is None:
        merged[spec.path] = (spec, owner)
        return
    first, first_owner = known
    if not first.reads_like(spec):
        raise SuiteError(
            f"reads field {spec.path!r} as {spec.describe()}, but {first_owner} reads it as "
            f"{first.describe()}: one field cannot feed both (point this metric at another field "
            "with its `pred`/`gold` arguments, or use a metric made for that input)",
            source=suite.source,
            key=owner,
        )
    if spec.required and not first.required:
        merged[spec.path] = (dataclasses.replace(first, required=True), first_owner)


def make_plan(
    suite: BuiltSuite,
    options: RunOptions,
    *,
    identify: Sequence[str] = (),
) -> Plan:
    """The plan of running ``suite`` with ``options``. ``identify``: fields that identify a
    record across two outputs (a comparison's ``match_by``), read as required JSON values."""
    merged: dict[str, tuple[FieldSpec, str]] = {}
    statistics: dict[Hashable, Statistic] = {}
    keys: dict[str, Hashable] = {}
    for name, item in suite.items().items():
        owner = f"{'tables' if isinstance(item, TableMetric) else 'metrics'}.{name}"
        statistic = item.statistic()
        for spec in statistic.fields():
            _merge(merged, spec, owner, suite)
        statistics.setdefault(statistic.key, statistic)
        keys[name] = statistic.key
    fields = [spec for spec, _ in merged.values()]
    known = set(merged)
    required = [suite.spec.unit, *identify] if suite.spec.unit else list(identify)
    for path in required:
        if path not in known:  # every record must say which unit it belongs to
            fields.append(FieldSpec(path, "json", required=True))
            known.add(path)
    for path in [*([options.stratify] if options.stratify else []), *options.slices]:
        if path not in known:
            fields.append(FieldSpec(path, "value", required=False))
            known.add(path)
    scales = {f.path: f.scale for f in fields if f.kind == "label" and f.scale is not None}
    context = context_paths(suite, options)
    for path in context:
        if path not in known:  # kept to be shown; absent or null: not there for that record
            fields.append(FieldSpec(path, "json", required=False, context=True))
            known.add(path)
    return Plan(suite, options, fields, statistics, keys, scales, context)


def context_paths(suite: BuiltSuite, options: RunOptions) -> tuple[str, ...]:
    """The context fields of a run: the suite's ``context:``, ``--context`` and, with
    ``--model``, the fields its prompt is read from (the messages sent), each once."""
    model = suite.spec.model
    prompt = model.prompt if model is not None and options.model is not None else []
    return tuple(dict.fromkeys([*suite.spec.context, *options.inputs.context, *prompt]))


def found_context(plan: Plan, table: Table) -> frozenset[str]:
    """The ``--context`` fields that some record of ``table`` has."""
    return frozenset(
        path for path in plan.options.inputs.context if not _absent(table.column(path))
    )


def unseen_context(plan: Plan, found: Collection[str]) -> list[str]:
    """The run's note of the ``--context`` fields that no record has (``found``: those some
    record has, :func:`found_context`): none, or one. A suite's own context fields that no
    record has are silent (a suite names what its records may hold)."""
    unseen = [path for path in plan.options.inputs.context if path not in found]
    if not unseen:
        return []
    which = "this field" if len(unseen) == 1 else "these fields"
    return [f"--context {', '.join(unseen)}: no record has {which} (check its spelling or path)"]


def _absent(column: Any) -> bool:
    """Whether a column holds no value at all (NaN or None in every record)."""
    if isinstance(column, np.ndarray) and column.dtype.kind == "f":
        return bool(np.isnan(column).all())
    return isinstance(column, list) and all(value is None for value in column)


def check_records(plan: Plan, table: Table) -> None:
    """Every check that needs the records but no model: the statistics' own and the options'.
    Runs before any similarity is asked for."""
    for statistic in plan.statistics.values():
        statistic.check(table)
    options = plan.options
    for option, path in [
        *(("--stratify", p) for p in ([options.stratify] if options.stratify else [])),
        *(("--slice", p) for p in options.slices),
    ]:
        column = table.column(path)
        if _absent(column):
            raise OptionError(
                f"{option} {path}: no record of {table.source} has the field {path!r} "
                f"({table.n} records read); check its spelling or its path (a.b[0].c)"
            )
        if not isinstance(column, np.ndarray):
            _check_single_values(table, option, path, column)


_SCALARS = (str, int, float, ParseFailure)


def _check_single_values(table: Table, option: str, path: str, column: list[Any]) -> None:
    """Refuse a ``--slice`` or ``--stratify`` field whose values are lists or objects (a field
    the suite parses, such as a list of terms): a slice is the records of one value. One slice
    per item would put a record in several slices, and one per distinct whole list is as many
    slices as records, which nobody asks for; a value inside it (``terms[0]``,
    ``features.nature``) is a slice."""
    for i, value in enumerate(column):
        if value is None or isinstance(value, _SCALARS):
            continue
        what = "an object" if isinstance(value, dict) else "a list"
        raise InputError(
            f"{option} takes one value a record, and this is {what}: {option} a value inside "
            f"it, e.g. {option} {path}{_inside(value)} (a path: a.b[0].c)",
            source=table.source,
            line=int(table.lines[i]),
            field=path,
            value=list(value) if isinstance(value, tuple) else value,
        )


def _inside(value: Any) -> str:
    """The path of a first value inside ``value`` (``.key``, ``[0]``, ``[0].key``)."""
    if isinstance(value, dict):
        return f".{next(iter(value))}" if value else ".KEY"
    first = value[0] if isinstance(value, list | tuple) and value else None
    if isinstance(first, dict) and first:
        return f"[0].{next(iter(first))}"
    if dataclasses.is_dataclass(first):
        return f"[0].{dataclasses.fields(first)[0].name}"
    return "[0]"
