"""Running and comparing other tools' files: ``pingce run LOG``, ``pingce compare LOG_B LOG_A``
and ``pingce compare LOG --by provider``.

A file's records are evaluated with the suite made from it (one mean a scorer,
:meth:`ToolRun.suite`) or with a suite the user names; its natural groupings are the slices
when ``--slice`` gives none; and each mean is checked against the number the tool itself
reported for the run, in a note (equal to 1e-9, or the reason they differ).
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any

from ..errors import InputError, OptionError
from ..options import RunOptions
from ..progress import ProgressHook
from ..readers import RECORDS_PER_BLOCK, Block, Reading
from ..results import ComparisonResult, EvaluationResult
from . import read_tool_file
from ._base import TOOL_NAMES, ToolRun

__all__ = ["compare_tool_files", "evaluate_tool_file", "reported_notes", "split_by"]

AGREE = 1e-9
"""How close a mean must be to the tool's own number to be called equal."""


def _reading(
    run: ToolRun, records: list[dict[str, Any]] | None = None, label: str | None = None
) -> Reading:
    """The records as a reading named after the tool's file (or ``label``), numbered by
    sample."""
    rows = run.records if records is None else records

    def blocks() -> Any:
        step = RECORDS_PER_BLOCK
        for start in range(0, len(rows), step):
            part = rows[start : start + step]
            yield Block(list(range(start + 1, start + 1 + len(part))), part)

    return Reading(label or run.source, blocks(), unit="record", own_objects=False)


def _sliced(options: RunOptions, run: ToolRun, without: str | None = None) -> RunOptions:
    """The run's options with the file's natural slices when ``--slice`` gives none."""
    if options.slices:
        return options
    slices = tuple(s for s in run.slices if s != without)
    return dataclasses.replace(options, slices=slices) if slices else options


def reported_notes(run: ToolRun, result: EvaluationResult | None) -> list[str]:
    """Each scorer's mean beside the number the tool reported for the run."""
    notes = []
    for score in run.scores:
        if score.reported is None or result is None or score.name not in result.metrics:
            continue
        mine = result.metrics[score.name].value
        if mine is None:
            continue
        tool = TOOL_NAMES[run.tool]
        said = f"{score.name}: {tool} reported {score.reported:.6g} ({score.reported_as})"
        if math.isclose(mine, score.reported, rel_tol=0.0, abs_tol=AGREE):
            notes.append(f"{said}; pingce's mean is the same number")
        elif score.differs is not None:
            notes.append(f"{said}; pingce's mean {mine:.6g} differs: {score.differs}")
        else:
            notes.append(
                f"{said}; pingce's mean is {mine:.6g}: they differ, which the file does not "
                "explain (a sample without a score counted by the tool as 0?)"
            )
    return notes


def evaluate_tool_file(
    path: str | os.PathLike[str],
    options: RunOptions | None = None,
    *,
    tool: str | None = None,
    suite: Any = None,
    progress: ProgressHook | None = None,
    profile: Any = None,
) -> EvaluationResult:
    """``pingce run LOG``: the file's records evaluated with the suite made from it (or
    ``suite``), its tool's numbers checked in the notes."""
    from ..engine import evaluate_suite
    from ..provenance import file_digest

    options = options or RunOptions()
    run = read_tool_file(path, tool)
    given = _sliced(options, run)
    result = evaluate_suite(
        run.suite() if suite is None else suite,
        _reading(run),
        given,
        progress=progress,
        profile=profile,
    )
    result.notes = [
        *run.notes,
        *result.notes,
        *(reported_notes(run, result) if suite is None else []),
    ]
    if result.inputs is not None and os.path.isfile(path):
        result.inputs["data"] = file_digest(path)
    return result


def split_by(
    run: ToolRun, field: str, sides: tuple[str, str] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], tuple[str, str]]:
    """One file's records as two systems': those of each value of ``field`` (a promptfoo
    ``provider`` or ``prompt``), re-keyed by what identifies a sample without it. ``sides``:
    the candidate's and the baseline's values (default: the file's two, the later one the
    candidate)."""
    if field not in run.keys:
        known = ", ".join(run.keys) or "none"
        raise OptionError(f"--by {field}: {run.source} holds several systems by: {known}")
    values = list(dict.fromkeys(str(r.get(field)) for r in run.records))
    if sides is None:
        if len(values) != 2:
            raise OptionError(
                f"--by {field}: {run.source} has {len(values)} values of {field} ("
                + ", ".join(values)
                + f"); name the two to compare: --by {field}=CANDIDATE,BASELINE"
            )
        sides = (values[1], values[0])
    for side in sides:
        if side not in values:
            raise OptionError(
                f"--by {field}: {side!r} is not a value of {field} in {run.source} ("
                + ", ".join(values)
                + ")"
            )
    rest = run.keys[field]
    out: list[list[dict[str, Any]]] = [[], []]
    for record in run.records:
        value = str(record.get(field))
        if value not in sides:
            continue
        key = "/".join(str(record.get(k)) for k in rest)
        out[sides.index(value)].append({**record, "id": key})
    return out[0], out[1], sides


def compare_tool_files(
    candidate: str | os.PathLike[str],
    baseline: str | os.PathLike[str] | None,
    options: RunOptions | None = None,
    *,
    tool: str | None = None,
    by: str | None = None,
    progress: ProgressHook | None = None,
    profile: Any = None,
) -> ComparisonResult:
    """``pingce compare LOG_B LOG_A`` (two files of one tool's runs, samples paired by id and
    epoch) or ``pingce compare LOG --by FIELD[=CANDIDATE,BASELINE]`` (two systems in one
    file): the paired comparison of every scorer both sides have."""
    from ..engine import compare_suite

    options = options or RunOptions()
    if by is not None:
        if baseline is not None:
            raise OptionError("--by compares two systems in one file: give one file")
        run = read_tool_file(candidate, tool)
        field, _, named = by.partition("=")
        sides = None
        if named:
            parts = named.split(",")
            if len(parts) != 2 or not all(parts):
                raise OptionError(f"--by {by}: expected FIELD=CANDIDATE,BASELINE")
            sides = (parts[0], parts[1])
        records_c, records_b, sides = split_by(run, field, sides)
        runs = (run, run)
        labels = (f"{run.source} ({field} {sides[0]})", f"{run.source} ({field} {sides[1]})")
    else:
        if baseline is None:
            raise OptionError("compare two files of a tool (LOG_B LOG_A), or one with --by FIELD")
        run_c, run_b = read_tool_file(candidate, tool), read_tool_file(baseline, tool)
        if run_c.tool != run_b.tool:
            raise OptionError(
                f"{run_c.source} is {run_c.tool}'s and {run_b.source} is {run_b.tool}'s: "
                "compare two runs of one tool"
            )
        runs, records_c, records_b = (run_c, run_b), run_c.records, run_b.records
        labels = (run_c.source, run_b.source)
        field = None
    shared = [s for s in runs[0].scores if s.name in {t.name for t in runs[1].scores}]
    if not shared:
        raise InputError(
            "the two runs share no scorer: "
            + ", ".join(s.name for s in runs[0].scores)
            + " against "
            + ", ".join(s.name for s in runs[1].scores),
            source=runs[0].source,
        )
    made = dataclasses.replace(runs[0], scores=shared)
    if runs[0].name != runs[1].name:
        made = dataclasses.replace(made, name=f"{runs[0].tool}-comparison")
    given = _sliced(options, runs[0], without=field)
    result = compare_suite(
        made.suite(),
        _reading(runs[0], records_c, labels[0]),
        _reading(runs[1], records_b, labels[1]),
        given,
        progress=progress,
        profile=profile,
    )
    return result
