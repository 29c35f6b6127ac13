"""Two runs audited together: ``pingce audit sample RUN_A RUN_B`` draws one sheet over the same
records of both (a candidate and a baseline of one suite, records paired by id), and ``pingce
compare RUN_A RUN_B --labels SHEET`` corrects every judge-dependent metric of each run and
their difference on the records people checked in both.

The draw stratifies each record by the judge's scores of both runs' pairs (a record where
either run's pairs were hard to decide gets more labels); the sheet holds every pair of both
runs once (a pair both runs gave is labelled once: labels go by the pair's texts), with a
``run`` column saying whose it is. A record counts as labelled when every pair of both runs is.
The difference is one prediction-powered estimate over the two runs' statistic rows side by
side, ``finalize_A(m_A) - finalize_B(m_B)``, so its interval keeps the pairing (the same
records, the same labels), as ``pingce compare``'s paired bootstrap does.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, OptionError
from ..similarity import Pair, SimilarityTable
from .correct import (
    AuditedMetric,
    Design,
    Entry,
    Intervals,
    correct_entries,
    entries,
    regime_notes,
    run_rows,
)
from .runs import (
    COLUMNS,
    JUDGED_COLUMNS,
    Drawing,
    DrawSpec,
    Reopened,
    agreement_of,
    checked_values,
    drawing_over,
    drawn_summary,
    grade_agreement,
    read_sheet,
    record_scores,
    resolved_grades,
    sheet_drawing,
    sheet_rows,
    slice_groups,
    slice_values,
    units_of,
    with_values,
    write_sheet,
)
from .sample import Allocation

__all__ = ["PairedAudit", "align", "audit_pair", "pair_drawing", "sample_pair_sheet"]

PAIR_COLUMNS = (*COLUMNS[:3], "run", *COLUMNS[3:])
"""The columns of a sheet over two runs: a pair's ``run`` is ``candidate``, ``baseline`` or
``both``."""
PAIR_JUDGED_COLUMNS = (*JUDGED_COLUMNS[:3], "run", *JUDGED_COLUMNS[3:])
"""The columns of a sheet over two runs graded by a model: each task's row of each run."""
SIDES = ("candidate", "baseline", "difference")


def align(a: Reopened, b: Reopened) -> np.ndarray:
    """For each record of run ``a``, the index of the same record in run ``b``: by id, or by
    position when the records have no ids; an error naming a record only one run has."""
    ids_a, ids_b = a.table.ids, b.table.ids
    if all(k is not None for k in ids_a) and all(k is not None for k in ids_b):
        where = {k: j for j, k in enumerate(ids_b)}
        missing = next((k for k in ids_a if k not in where), None)
        if missing is not None:
            raise InputError(f"record {missing!r} of {a.name} is not in {b.name}")
        if len(ids_b) != len(ids_a):
            known = set(ids_a)
            extra = next(k for k in ids_b if k not in known)
            raise InputError(f"record {extra!r} of {b.name} is not in {a.name}")
        return np.array([where[k] for k in ids_a], dtype=np.intp)
    if a.table.n != b.table.n:
        raise InputError(
            f"{a.name} has {a.table.n} records and {b.name} {b.table.n}, without ids to pair "
            "them by: two runs audited together are of the same records"
        )
    return np.arange(a.table.n, dtype=np.intp)


def _check_comparable(a: Reopened, b: Reopened, order: np.ndarray) -> None:
    """Refuse two runs that cannot share a sheet: other suites, other judges, model-judged
    grades (one sheet's grade is of one run's answer), units that do not pair."""
    if a.plan.suite.spec.name != b.plan.suite.spec.name:
        raise OptionError(
            f"{a.name} is a run of {a.plan.suite.spec.name!r} and {b.name} of "
            f"{b.plan.suite.spec.name!r}: runs audited together are of one suite"
        )
    if (a.scored is None) != (b.scored is None) or (a.judged is None) != (b.judged is None):
        raise OptionError(
            f"{a.name} and {b.name} were not judged alike (one has a judge the other has not): "
            "one sheet checks one judge"
        )
    if a.scored is not None and b.scored is not None and a.scored.signature != b.scored.signature:
        raise OptionError(
            f"the runs' similarities were scored by other judges ({a.scored.signature} and "
            f"{b.scored.signature}): one sheet checks one judge"
        )
    judges = [_judge_signature(run) for run in (a, b)]
    if judges[0] != judges[1]:
        raise OptionError(
            f"the runs were graded by other judges, prompts or scales ({judges[0]} and "
            f"{judges[1]}): one sheet checks one judge"
        )
    unit = a.plan.unit
    if unit is not None:
        units_a = [str(v) for v in a.table.column(unit)]
        units_b = [str(v) for v in b.table.column(unit)]
        for i, j in enumerate(order.tolist()):
            if units_a[i] != units_b[j]:
                raise InputError(
                    f"record {a.table.ids[i]!r} is in {unit} {units_a[i]!r} in {a.name} and "
                    f"{units_b[j]!r} in {b.name}: the runs' {unit}s do not pair"
                )


def _judge_signature(run: Reopened) -> Any:
    """The run's model judges as results.json's signature names them (None: none)."""
    results = json.loads((run.folder / "results.json").read_text(encoding="utf-8"))
    return (results.get("signature") or {}).get("judge")


def _joint_scores(a: Reopened, b: Reopened) -> dict[Pair, float]:
    assert a.scored is not None and b.scored is not None
    return {**b.scored.table.values, **a.scored.table.values}


def pair_drawing(a: Reopened, b: Reopened, order: np.ndarray, spec: DrawSpec) -> Drawing:
    """The draw ``spec`` over the records of both runs (in ``a``'s order; ``order`` from
    :func:`align`): each record's pairs are ``a``'s and then ``b``'s others, stratified by the
    judges' scores (or grades) of both runs' records together."""
    decided_a, pairs_a, scores_a = record_scores(a)
    decided_b, pairs_b, scores_b = record_scores(b)
    ours = dict(zip(decided_a.tolist(), scores_a, strict=True))
    theirs = dict(zip(decided_b.tolist(), scores_b, strict=True))
    pairs: list[list[Pair]] = []
    decided, scores = [], []
    for i, j in enumerate(order.tolist()):
        seen = set(pairs_a[i])
        pairs.append(pairs_a[i] + [p for p in pairs_b[j] if p not in seen])
        if i in ours or j in theirs:
            decided.append(i)
            scores.append(np.concatenate([ours.get(i, np.empty(0)), theirs.get(j, np.empty(0))]))
    found = np.array(decided, dtype=np.intp)
    groups = slice_groups(a, spec.slice)
    return drawing_over(a.table.n, found, pairs, scores, units_of(a), spec, groups)


def sample_pair_sheet(
    a: Reopened,
    b: Reopened,
    budget: int,
    out: str | os.PathLike[str],
    *,
    seed: int = 0,
    strata: int = 4,
    allocation: Allocation = "neyman",
    slice: str | None = None,
) -> dict[str, Any]:
    """Draw the records of two runs a human should check and write both runs' pairs of them to
    ``out``; what was drawn, as :func:`pingce.audits.runs.sample_sheet` says it."""
    order = align(a, b)
    _check_comparable(a, b, order)
    drawing = pair_drawing(
        a, b, order, DrawSpec(budget, seed, strata, allocation, runs=2, slice=slice)
    )
    _, pairs_a, _ = record_scores(a)
    _, pairs_b, _ = record_scores(b)
    text = drawing.spec.text()
    rows: list[dict[str, Any]] = []
    for i in np.flatnonzero(drawing.drawn).tolist():
        stratum, j = int(drawing.codes[i]), int(order[i])
        ours, shared = set(pairs_a[i]), set(pairs_b[j])
        for row in sheet_rows(a, i, stratum, pairs_a[i], text):
            both = "task" not in row and (row["a"], row["b"]) in shared
            rows.append({**row, "run": "both" if both else "candidate"})
        file, line = a.where(i)
        head = {"id": a.table.ids[i], "line": line, **({"file": file} if file else {})}
        theirs = [p for p in pairs_b[j] if p not in ours]
        for row in sheet_rows(b, j, stratum, theirs, text):
            rows.append({**row, **head, "run": "baseline"})
    columns = PAIR_COLUMNS if a.scored is not None else PAIR_JUDGED_COLUMNS
    if a.files:  # several data files: each record's file beside its line
        columns = (columns[0], "file", *columns[1:])
    write_sheet(rows, Path(out), columns)
    # the planned widths are of one run's labels alone: not said for a difference
    summary = drawn_summary(drawing, len(rows), {}, a.scored is None, a.plan.unit)
    if slice is not None:
        with_values(summary, drawing, slice_values(a, slice))
    return summary


class _Difference:
    """A metric of the two runs' rows side by side: the candidate's value less the
    baseline's."""

    def __init__(self, candidate: Any, baseline: Any, width: int) -> None:
        self.candidate, self.baseline, self.width = candidate, baseline, width
        self.measures_the_judge = bool(candidate.measures_the_judge)

    def finalize(self, total: np.ndarray) -> Any:
        total = np.asarray(total, dtype=np.float64)
        first = np.asarray(self.candidate.finalize(total[..., : self.width]), dtype=np.float64)
        second = np.asarray(self.baseline.finalize(total[..., self.width :]), dtype=np.float64)
        return first - second


def _side_by_side(one: np.ndarray | None, other: np.ndarray | None) -> np.ndarray | None:
    if one is None or other is None:
        return None
    return np.hstack([one, other])


@dataclass
class PairedAudit:
    """What ``pingce compare RUN_A RUN_B --labels SHEET`` reports (audit_comparison.json)."""

    candidate: str
    baseline: str
    unit: str | None
    labelled_pairs: int
    unlabelled_pairs: int
    agreement: dict[str, Any]
    metrics: dict[str, dict[str, AuditedMetric]]
    """By metric: ``candidate``, ``baseline`` and ``difference`` (candidate less baseline),
    each judge-only, labels-only and corrected over the records labelled in both runs."""
    notes: list[str] = field(default_factory=list)
    verified: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["metrics"] = {
            k: {side: asdict(m) for side, m in v.items()} for k, v in self.metrics.items()
        }
        return out


def audit_pair(
    a: Reopened,
    b: Reopened,
    sheet: str | os.PathLike[str],
    *,
    lam: float | None = None,
    level: float = 0.95,
    ci: Intervals | None = None,
) -> PairedAudit:
    """Every metric of runs ``a`` (the candidate) and ``b`` (the baseline), and their
    difference, corrected by the labels of ``sheet`` (drawn by :func:`sample_pair_sheet`)."""
    read = read_sheet(sheet)
    where = str(sheet)
    if read.spec is not None and read.spec.runs != 2:
        raise InputError(
            f"draw: {read.spec.text()!r}: the sheet was drawn over one run; to compare two "
            "audited runs, draw one sheet over both: pingce audit sample RUN_A RUN_B --budget N",
            source=where,
        )
    if not (read.labels or read.grades or read.baseline_grades):
        raise InputError("the sheet has no label yet: fill in its human column", source=where)
    order = align(a, b)
    _check_comparable(a, b, order)
    assert read.spec is not None
    drawing = sheet_drawing(a, read, where, pair_drawing(a, b, order, read.spec))
    labels = read.labels
    lines = a.index()
    grades_a = resolved_grades(a, read.grades, lines)
    grades_b = resolved_grades(
        b, read.baseline_grades, {line: int(order[i]) for line, i in lines.items()}
    )
    drawn_b = np.zeros(b.table.n, dtype=bool)
    drawn_b[order] = drawing.drawn
    rows_a = run_rows(
        a.plan, a.table, a.scored, labels, judged=a.judged, grades=grades_a, drawn=drawing.drawn
    )
    rows_b = run_rows(
        b.plan, b.table, b.scored, labels, judged=b.judged, grades=grades_b, drawn=drawn_b
    )
    known_b = (rows_b.labelled | rows_b.undecided)[order]
    undecided = rows_a.undecided & rows_b.undecided[order]
    labelled = (rows_a.labelled | rows_a.undecided) & known_b & ~undecided
    if not labelled.any():
        raise InputError(
            "no record has a human label on every pair both runs' judge decided for it",
            source=where,
        )
    design = Design.of(labelled, undecided, drawing.codes, units_of(a))
    ours = entries(a.plan, rows_a)
    theirs = {
        name: dataclasses.replace(
            e,
            judge=None if e.judge is None else e.judge[order],
            human=None if e.human is None else e.human[order],
        )
        for name, e in entries(b.plan, rows_b).items()
    }
    difference = {
        name: Entry(
            _Difference(e.metric, theirs[name].metric, 0 if e.judge is None else e.judge.shape[1]),
            _side_by_side(e.judge, theirs[name].judge),
            _side_by_side(e.human, theirs[name].human),
            e.depends_on_judge or theirs[name].depends_on_judge,
        )
        for name, e in ours.items()
        if name in theirs
    }
    sides = {
        "candidate": checked_values(a, correct_entries(ours, design, lam=lam, level=level, ci=ci)),
        "baseline": checked_values(b, correct_entries(theirs, design, lam=lam, level=level, ci=ci)),
        "difference": correct_entries(difference, design, lam=lam, level=level, ci=ci),
    }
    metrics = {name: {side: sides[side][name] for side in SIDES} for name in difference}
    agreement: dict[str, Any] = {}
    if a.scored is not None:
        table = SimilarityTable(_joint_scores(a, b), a.scored.table.signature)
        joint = dataclasses.replace(a, scored=dataclasses.replace(a.scored, table=table))
        agreement = agreement_of(joint, labels, level)
    graded = {
        f"{task} ({side})": one
        for side, run, grades in (("candidate", a, grades_a), ("baseline", b, grades_b))
        for task, one in grade_agreement(run, grades).items()
    }
    if graded:
        agreement["graded"] = graded
    notes = regime_notes(sides["difference"])
    if read.empty:
        notes.append(
            f"{read.empty} pair(s) of the sheet have no label yet: their records do not count"
        )
    verified = [
        {"id": a.table.ids[i], "line": int(a.table.lines[i])}
        for i in np.flatnonzero(labelled & drawing.drawn).tolist()
    ]
    return PairedAudit(
        candidate=a.name,
        baseline=b.name,
        unit=a.plan.unit,
        labelled_pairs=len(labels) + len(grades_a) + len(grades_b),
        unlabelled_pairs=read.empty,
        agreement=agreement,
        metrics=metrics,
        notes=notes,
        verified=verified,
    )


def write_pair_audit(result: PairedAudit, out: str | os.PathLike[str]) -> Path:
    """Write audit_comparison.json into the folder ``out``; its path."""
    from .._json import dumps_indented
    from ..runfolder.atomic import atomic_files

    with atomic_files(out) as staging:
        staging.write_bytes(
            "audit_comparison.json", dumps_indented(result.to_dict()).encode("utf-8")
        )
    return Path(out) / "audit_comparison.json"
