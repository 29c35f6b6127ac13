"""The audit of a stored run: its records and its judge's scores found again (nothing asked
again: a remote judge answers from the cache, a local backend scores as it did; the records as
the run evaluated them on either engine: a glob's files in its order, the same ``--sample``,
the answers of ``--model`` from predictions.jsonl), the sheet of pairs a human should check,
and the corrected metrics from the filled sheet.

``sample``: the stratified draw (:mod:`.sample`) over the records the judge decided something
for, written as a sheet (CSV or JSON Lines), one row a pair: the record's id and line (and
its file in a run of several), its stratum, both texts, the judge's score and its verdict at
τ, and an empty ``human`` column (a score in [0, 1], or 1/0, yes/no, true/false). ``audit``:
the filled sheet read back; the
records whose pairs are all labelled count, the others are said; every metric corrected
(:func:`.correct.correct`) within the sheet's strata; agreement of judge and humans on the
labelled pairs (accuracy and Cohen's kappa at τ, true and false positive rates, ROC AUC, the
best τ as ``pingce calibrate`` chooses it); all of it as plain data for audit.json.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.groups import repeat_clusters
from ..engine.judgements import Graded, Judgements
from ..engine.phases import load, plan_run, sample, similarities
from ..engine.plan import Plan, check_records
from ..engine.similarities import BackendChoice, Scored, score_pairs
from ..errors import InputError, OptionError
from ..options import RunOptions
from ..progress import no_progress
from ..records import Table
from ..similarity import Pair
from .correct import (
    AuditedMetric,
    Intervals,
    correct,
    graded_task,
    judged_tasks,
    pair_counts,
    planned_half_widths,
    record_pairs,
    regime_notes,
)
from .sample import Allocation, Draw, draw

__all__ = [
    "AuditResult",
    "Reopened",
    "agreement_of",
    "audit_run",
    "checked_values",
    "drawing_over",
    "drawn_summary",
    "grade_agreement",
    "read_sheet",
    "record_scores",
    "redraw",
    "reopen",
    "resolved_grades",
    "sample_sheet",
    "sheet_drawing",
    "sheet_rows",
    "slice_groups",
    "slice_values",
    "units_of",
    "with_values",
    "write_audit",
    "write_sheet",
]

COLUMNS = ("id", "line", "stratum", "a", "b", "judge_score", "judge_verdict", "human", "draw")
"""The sheet's columns, in order, for a similarity judge's pairs."""
JUDGED_COLUMNS = (
    *("id", "line", "stratum", "task", "input", "output", "reference", "output_a", "output_b"),
    *("judge_score", "human", "draw"),
)
"""The sheet's columns for answers graded by a model: the grade on the scale's own units
(correctness: C 1, P 0.5, I 0; a preference: A's win, 1, 0.5 or 0), the human's on the same
scale (a number or a label: C / P / I, A / B / tie)."""
_TRUE = {"1", "1.0", "true", "yes", "y", "match", "是"}
_FALSE = {"0", "0.0", "false", "no", "n", "no match", "否"}


@dataclass
class Reopened:
    """A run found again: its plan, records and the judge's scores."""

    name: str
    folder: Path
    plan: Plan
    table: Table
    scored: Scored | None
    """The similarity judge's scores (None when no metric reads one)."""
    judged: Judgements | None
    """The model judges' grades (None when no metric is graded by a model)."""
    values: dict[str, float | None]
    """The run's metric values as results.json holds them."""
    threshold: float | None
    files: list[str] = field(default_factory=list)
    """A run over several files (a glob): their names as the sheet shows them, in the order the
    run read them (else empty: a record is known by its line)."""
    file_of: np.ndarray | None = None
    """With several files: each record's file (an index into :attr:`files`)."""

    def where(self, i: int) -> Where:
        """Where record ``i`` is: its file's name (``""`` for a run of one file) and line."""
        name = "" if self.file_of is None else self.files[int(self.file_of[i])]
        return name, int(self.table.lines[i])

    def index(self) -> dict[Where, int]:
        """Each record's index by where it is (:meth:`where`)."""
        found = {self.where(i): i for i in range(self.table.n)}
        if len(found) < self.table.n:  # --repeats K with --model: a line per record, K rows
            raise OptionError(
                "the run's rows share their lines (--repeats asked each record several times): "
                "a sheet names a record by its line, so audit a run of the model's answers "
                "(pingce run SUITE --data predictions.jsonl, one line a repeat)"
            )
        return found


Where = tuple[str, int]
"""Where a record is: its data file's name as the sheet shows it (``""`` in a run of one file:
the sheet has no ``file`` column) and its line (or row) in that file."""


def _stored_run(folder: Path, store: str | None, suite: str | None = None) -> Any:
    """The run store's record of the run whose output folder is ``folder`` (None if none),
    among the runs of ``suite`` (results.json's) when given."""
    from ..history import runs

    target = folder.resolve()
    for info in runs(suite=suite, store=store):
        if info.out_dir and Path(info.out_dir).resolve() == target and info.data_path:
            return info
    return None


def _options(stored: dict[str, Any]) -> RunOptions:
    known = {f.name for f in dataclasses.fields(RunOptions)}
    keep = (
        *("similarity", "field_map", "base_url", "encoding", "zero_division", "laws", "slices"),
        *("judges", "rubric", "scale"),
        *("sample", "stratify", "allocation", "short_strata", "seed"),  # the same sample
        *("gold", "allow_missing"),  # the same join
    )
    given = {k: stored[k] for k in keep if k in known and stored.get(k) is not None}
    for key in ("slices", "judges"):
        if isinstance(given.get(key), list):
            given[key] = tuple(given[key])
    if given.get("zero_division") == "suite":  # the command line's word for the suite's own
        del given["zero_division"]
    return RunOptions(**given, bootstrap=0)


def _threshold(plan: Plan) -> float | None:
    for metric in plan.metrics.values():
        value = getattr(metric, "threshold", None)
        if isinstance(value, int | float):
            return float(value)
    return None


def _scores_again(plan: Plan, table: Table, failed: int = 0) -> Scored | None:
    """The similarity judge's scores as the run had them: a local backend scores again (the
    same numbers), a remote one answers from the cache alone, and a pair it cannot find there
    is an error, not a call (the audit asks no judge), unless the run's own calls failed on as
    many (``failed``: those are not in the cache either)."""
    from ..similarity import make_backend
    from ..similarity.names import BackendName
    from ..similarity.remote import RemoteBackend

    scoring = plan.options.scoring
    name = scoring.backend
    if not (isinstance(name, BackendName) and name.remote):
        return similarities(plan, [table], no_progress)
    if not any(s.needs_similarity for s in plan.statistics.values()):
        return None
    backend = make_backend(
        name,
        base_url=scoring.base_url,
        cache=scoring.cache,
        options=dict(plan.suite.spec.similarity or {}),
    )
    assert isinstance(backend, RemoteBackend)
    backend.cache_only = True
    try:
        choice = BackendChoice(backend)
        pairs = (p for s in plan.statistics.values() if s.needs_similarity for p in s.pairs(table))
        scored = score_pairs(pairs, choice, no_progress)
    finally:
        backend.close()
    missing = scored.stats.failures
    if missing > failed:
        raise OptionError(
            f"{missing} pair(s) the judge scored in the run are not in the answer cache (was the "
            "run made with --no-cache, or the cache removed?): the audit asks no judge; run the "
            "suite again with the cache on"
        )
    return scored


def _found(info: Any, results: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """The run's suite, options and data path: the run store's record, else (an output folder
    alone) what results.json says."""
    if info is not None:
        return str(info.options.get("suite") or info.suite), info.options, info.data_path or ""
    sig = results.get("signature", {})
    data = results.get("data", {})
    stored: dict[str, Any] = {
        "similarity": (sig.get("similarity") or "lexical").split("|")[0],
        "field_map": data.get("field_map") or {},
        "encoding": data.get("encoding"),
    }
    sampling = results.get("sampling") or {}
    if sampling:  # --sample: drawn again from the same seed
        short = sampling["n_sampled"] < sampling["n_requested"]
        stored.update(
            sample=sampling["n_requested"],
            seed=sampling["seed"],
            stratify=sampling.get("field"),
            allocation=sampling.get("allocation") or "equal",
            short_strata="take-all" if short else "error",
        )
    if results.get("model"):
        stored["model"] = results["model"].get("model") or True
    return results["suite"], stored, data.get("source", "")


def _data_files(data_path: str, info: Any, folder: Path) -> list[str]:
    """The run's data files (one, or a glob's in the order the run read them), checked to be
    there and unchanged since the run (their sha256 as the run store recorded it)."""
    from ..engine.shards import expand_paths
    from ..errors import PingceError
    from ..history import data_hash

    several = re.fullmatch(r"(\d+) files: (.*)", data_path or "", re.S)
    try:
        if several:  # an output folder alone of a run over several files (--engine ray)
            files = expand_paths(several.group(2).split(", "))
            if len(files) != int(several.group(1)):
                raise InputError("the run's file names cannot be told apart", source=data_path)
        else:
            files = expand_paths(data_path) if data_path not in ("", "-") else []
    except PingceError:
        files = []
    if not files:
        raise InputError(f"the run's data file is gone: {data_path!r}", source=str(folder))
    if info is not None and info.data_sha256 and data_hash(*files) != info.data_sha256:
        raise InputError(
            "the data file changed since the run (its sha256 is not the one the run store "
            "recorded): audit a run of the file as it is now",
            source=data_path,
        )
    return files


def _joined(tables: list[Table], source: str) -> Table:
    """The tables of several files one after another, as the run read them."""
    if len(tables) == 1:
        return tables[0]
    columns: dict[str, Any] = {}
    for name, first in tables[0].columns.items():
        parts = [t.columns[name] for t in tables]
        if isinstance(first, np.ndarray):
            columns[name] = np.concatenate(parts)
        else:
            columns[name] = [v for part in parts for v in part]
    return dataclasses.replace(
        tables[0],
        source=source,
        ids=[i for t in tables for i in t.ids],
        lines=np.concatenate([t.lines for t in tables]),
        columns=columns,
        notes=list(dict.fromkeys(n for t in tables for n in t.notes)),
    )


def _file_names(files: list[str]) -> list[str]:
    """Several files' names as a sheet shows them: their paths below the folder they share."""
    if len(files) < 2:
        return []
    common = os.path.commonpath([os.path.abspath(f) for f in files])
    return [os.path.relpath(os.path.abspath(f), common) for f in files]


def _answered(plan: Plan, folder: Path, results: dict[str, Any]) -> tuple[Plan, Table]:
    """A run answered by ``--model``: the records as the model answered them
    (predictions.jsonl: the model is not asked again), each at its line in the data file (the
    run's records.jsonl)."""
    from ..engine.model import PREDICTIONS_FILE, model_plan
    from ..runfolder.reader import read_run

    failed = int((results.get("failures") or {}).get("model") or 0)
    if failed:
        raise OptionError(
            f"{failed} record(s) of the run had failed model calls: auditing such a run is not "
            "supported (they are left out of its metrics, which the audit does not do yet); "
            "run it again until every call is answered (the answer cache keeps the others)"
        )
    answers = folder / PREDICTIONS_FILE
    if not answers.is_file():
        raise InputError(
            "the run was answered by --model, and its predictions.jsonl is gone", source=str(folder)
        )
    plan = model_plan(plan)
    table = load(plan, answers, no_progress)
    outputs = read_run(folder).outputs
    rows = None if outputs is None else outputs.records
    if rows is None or rows.n != table.n:
        raise InputError(
            "the run's records.jsonl does not hold a row a record of predictions.jsonl",
            source=str(folder),
        )
    table.lines = np.asarray(rows.lines, dtype=table.lines.dtype)
    return plan, table


def _records(
    plan: Plan, stored: dict[str, Any], files: list[str], folder: Path, results: dict[str, Any]
) -> tuple[Plan, Table, np.ndarray | None]:
    """The records the run evaluated, in its order: its data files read as the run read them
    (a glob's files one after another, on any engine), the same seeded ``--sample``, or the
    model's answers (``--model``); each record's file among ``files`` (None: one file)."""
    if stored.get("model"):
        plan, table = _answered(plan, folder, results)
        return plan, table, None
    tables = [load(plan, path, no_progress) for path in files]
    table = _joined(tables, files[0] if len(files) == 1 else ", ".join(files))
    file_of = None
    if len(files) > 1:
        file_of = np.repeat(np.arange(len(files)), [t.n for t in tables])
    check_records(plan, table)
    if plan.options.sampling.size is not None and file_of is None:  # ray draws no --sample
        table, _, _ = sample(plan, table, repeat_clusters(table, plan.unit))
    return plan, table, file_of


def reopen(ref: str | os.PathLike[str], *, store: str | None = None) -> Reopened:
    """The run ``ref`` (a stored run's name or its output folder) with its records and scores,
    as the run had them on either engine: one data file or a glob's, all the records or the
    same ``--sample``, the data or the answers of ``--model`` (predictions.jsonl). An error
    when its data file is gone or changed, or when no metric reads a judge."""
    from ..history import run_folder

    folder, info = run_folder(ref, store=store)
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    if info is None:
        info = _stored_run(folder, store, results.get("suite"))
    suite, stored, data_path = _found(info, results)
    plan = plan_run(suite, _options(stored))
    if not any(s.needs_similarity or s.needs_judge for s in plan.statistics.values()):
        raise OptionError(
            f"no metric of the suite {plan.suite.spec.name!r} reads a judge: there is nothing "
            "to audit"
        )
    files = [] if stored.get("model") else _data_files(data_path, info, folder)
    plan, table, file_of = _records(plan, stored, files, folder, results)
    failed = int((results.get("similarity") or {}).get("failures") or 0)
    scored = _scores_again(plan, table, failed)
    judged = None
    if any(s.needs_judge for s in plan.statistics.values()):
        from ..engine.judgements import grade

        judged = grade(plan, table, no_progress)  # the answer cache answers what the run asked
    values = {k: v.get("value") for k, v in results.get("metrics", {}).items()}
    reopened = Reopened(str(ref), folder, plan, table, scored, judged, values, _threshold(plan))
    reopened.files, reopened.file_of = _file_names(files), file_of
    return reopened


# ------------------------------------------------------------------------------ the sheet


def record_scores(run: Reopened) -> tuple[np.ndarray, list[list[Pair]], list[np.ndarray]]:
    """The records the judges decided something for, each record's pairs, and the scores the
    draw is stratified by: a similarity judge's pair scores, else the model judges' grades
    mapped to [0, 1] (NaN where a judge gave none)."""
    n = run.table.n
    if run.scored is not None:
        pairs = record_pairs(run.plan, run.table, np.arange(n))
        counts, flat = pair_counts(pairs)
        values = run.scored.table.values  # record_pairs leaves out (a, a): 1.0 to every judge
        every = np.fromiter(map(values.__getitem__, flat), dtype=np.float64, count=len(flat))
        decided = np.flatnonzero(counts)
        scores = np.split(every, np.cumsum(counts[decided])[:-1]) if decided.size else []
        return decided, pairs, scores
    assert run.judged is not None
    columns = [
        (_judge_values(g, task) - g.scale.low) / (g.scale.high - g.scale.low)
        for task, g in _task_grades(run).items()
    ]
    matrix = np.stack(columns, axis=1) if columns else np.full((n, 1), np.nan)
    return np.arange(n), [[] for _ in range(n)], [row for row in matrix]


def _judge_values(graded: Graded, task: str) -> np.ndarray:
    """Each record's grade by its judges (their mean; NaN where one gave none): a preference
    as A's win, read from both orders (A shown first, and 1 - the verdict with B first)."""
    values = np.asarray(graded.values, dtype=np.float64)
    if task == "pairwise":
        values = (values[0::2] + (1.0 - values[1::2])) / 2
    out: np.ndarray = values.mean(axis=1)
    return out


def _task_grades(run: Reopened) -> dict[str, Graded]:
    """The model judges' grades by task (``rubric``, ``correctness``)."""
    out: dict[str, Graded] = {}
    if run.judged is None:
        return out
    for one in run.judged.graded.values():
        task = graded_task(one)
        if task in judged_tasks(run.judged):
            out.setdefault(task, one)
    return out


@dataclass(frozen=True)
class DrawSpec:
    """How a sheet was drawn; written on each of its rows (``draw``), so that the audit draws
    the same again and knows every record's stratum, and which records were drawn."""

    budget: int
    seed: int = 0
    strata: int = 4
    allocation: Allocation = "neyman"
    runs: int = 1
    """2: one draw over the same records of two runs (``pingce audit sample RUN_A RUN_B``)."""
    slice: str | None = None
    """``--slice FIELD``: the records stratified within each of the field's values."""

    def text(self) -> str:
        return (
            f"budget={self.budget} seed={self.seed} strata={self.strata} "
            f"allocation={self.allocation}"
            + (f" runs={self.runs}" if self.runs != 1 else "")
            + (f" slice={self.slice}" if self.slice else "")
        )

    @classmethod
    def parse(cls, text: str, where: str) -> DrawSpec:
        try:
            given = dict(part.split("=", 1) for part in str(text).split())
            allocation = given["allocation"]
            if allocation not in ("neyman", "uniform"):
                raise ValueError(allocation)
            return cls(
                int(given["budget"]),
                int(given["seed"]),
                int(given["strata"]),
                "neyman" if allocation == "neyman" else "uniform",
                int(given.get("runs", 1)),
                given.get("slice") or None,
            )
        except (KeyError, ValueError):
            raise InputError(
                f"draw: {text!r} is not how pingce audit sample writes a draw (budget=N seed=N "
                "strata=N allocation=neyman|uniform)",
                source=where,
            ) from None


@dataclass
class Drawing:
    """A draw over a run: each record's stratum (-1: decided by nothing), which records were
    drawn, the records' pairs."""

    spec: DrawSpec
    result: Draw
    keys: np.ndarray
    """What was drawn from: the decided records, or in a unit suite their units."""
    units: np.ndarray | None
    codes: np.ndarray
    drawn: np.ndarray
    pairs: list[list[Pair]]


def redraw(run: Reopened, spec: DrawSpec) -> Drawing:
    """The draw ``spec`` over ``run`` (the same every time: seeded, from the same scores)."""
    decided, pairs, scores = record_scores(run)
    groups = slice_groups(run, spec.slice)
    return drawing_over(run.table.n, decided, pairs, scores, units_of(run), spec, groups)


def slice_groups(run: Reopened, field: str | None) -> np.ndarray | None:
    """Each record's value of the ``--slice`` field, as a code (the values in sorted order);
    None without one; an error when the run did not read the field."""
    if field is None:
        return None
    from ..engine.groups import unit_codes

    if field not in run.table.columns:
        raise OptionError(
            f"--slice {field}: the run did not read {field!r}; run the suite with --slice "
            f"{field} (or --context {field}), then draw the sheet"
        )
    codes = unit_codes(run.table, field)
    assert codes is not None
    return codes


def slice_values(run: Reopened, field: str) -> list[str]:
    """The ``--slice`` field's values in the order of their codes (:func:`slice_groups`)."""
    codes = slice_groups(run, field)
    assert codes is not None
    values = run.table.column(field)
    first = {int(c): i for i, c in reversed(list(enumerate(codes.tolist())))}
    return [str(values[first[c]]) for c in sorted(first)]


def drawing_over(
    n: int,
    decided: np.ndarray,
    pairs: list[list[Pair]],
    scores: list[np.ndarray],
    units: np.ndarray | None,
    spec: DrawSpec,
    groups: np.ndarray | None = None,
) -> Drawing:
    """The draw ``spec`` over ``n`` records of which ``decided`` were decided by the judges
    (each with its ``pairs`` and the ``scores`` the draw is stratified by, in the order of
    ``decided``), or in a unit suite over their ``units``; stratified within ``groups`` (a
    code per record: ``--slice``; a unit's is its first decided record's) when given."""
    if decided.size == 0:
        raise InputError("the judge decided no pair in this run: there is nothing to label")
    keys, grouped = decided, scores
    if units is not None:  # a unit suite: its units are drawn, with all their records' scores
        by_unit: dict[int, list[np.ndarray]] = {}
        for i, s in zip(decided.tolist(), scores, strict=True):
            by_unit.setdefault(int(units[i]), []).append(s)
        keys = np.array(sorted(by_unit), dtype=np.intp)
        grouped = [np.concatenate(by_unit[k]) for k in keys.tolist()]
    sizes = np.fromiter(map(len, grouped), dtype=np.intp, count=len(grouped))
    every = np.nan_to_num(np.concatenate(grouped), nan=0.5) if grouped else np.zeros(0)
    clean = np.split(every, np.cumsum(sizes)[:-1])
    of_key = None
    if groups is not None:
        if units is None:
            of_key = groups[keys]
        else:
            first = {int(units[i]): int(groups[i]) for i in decided[::-1].tolist()}
            of_key = np.array([first[int(k)] for k in keys.tolist()], dtype=np.intp)
    result = draw(
        clean,
        spec.budget,
        seed=spec.seed,
        strata=spec.strata,
        allocation=spec.allocation,
        groups=of_key,
    )
    owner = np.arange(n) if units is None else units
    is_decided = np.zeros(n, dtype=bool)
    is_decided[decided] = True
    at = np.minimum(np.searchsorted(keys, owner), keys.size - 1)  # keys are sorted
    known = keys[at] == owner
    chosen = np.zeros(keys.size, dtype=bool)
    chosen[result.indices] = True
    codes = np.where(known & (is_decided | (units is not None)), result.codes[at], -1)
    drawn = known & chosen[at] & is_decided
    return Drawing(spec, result, keys, units, codes.astype(np.intp), drawn, pairs)


def sample_sheet(
    run: Reopened,
    budget: int,
    out: str | os.PathLike[str],
    *,
    seed: int = 0,
    strata: int = 4,
    allocation: Allocation = "neyman",
    slice: str | None = None,
) -> dict[str, Any]:
    """Draw the records a human should check and write their pairs to ``out`` (``.csv`` or
    ``.jsonl``); what was drawn, per stratum (within each value of the ``slice`` field)."""
    drawing = redraw(run, DrawSpec(budget, seed, strata, allocation, slice=slice))
    pairs = drawing.pairs
    rows = []
    for i in np.flatnonzero(drawing.drawn).tolist():
        rows += sheet_rows(run, i, int(drawing.codes[i]), pairs[i], drawing.spec.text())
    columns = JUDGED_COLUMNS if run.scored is None else COLUMNS
    if run.files:  # several data files: each record's file beside its line
        columns = (columns[0], "file", *columns[1:])
    write_sheet(rows, Path(out), columns)
    drawn, units, codes = drawing.result, drawing.units, drawing.codes
    planned = planned_half_widths(
        run.plan, run.table, run.scored, run.judged, codes, drawn.quotas, units=units
    )
    summary = drawn_summary(drawing, len(rows), planned, run.scored is None, run.plan.unit)
    if slice is not None:
        with_values(summary, drawing, slice_values(run, slice))
    return summary


def with_values(summary: dict[str, Any], drawing: Drawing, values: list[str]) -> None:
    """Each stratum of ``summary`` given the ``--slice`` value it lies in."""
    groups = drawing.result.groups
    assert groups is not None
    for stratum in summary["strata"]:
        stratum["slice"] = values[int(groups[stratum["stratum"]])]


def drawn_summary(
    drawing: Drawing,
    rows: int,
    planned: dict[str, float],
    graded: bool,
    unit: str | None,
) -> dict[str, Any]:
    """What ``pingce audit sample`` says of a draw: the records drawn of those decided, the
    sheet's rows, each stratum's score range, size and quota, and the planned half-widths."""
    drawn, spec = drawing.result, drawing.spec
    return {
        "expected_half_width": planned,
        "graded": graded,
        "unit": unit,
        "records": int(drawn.indices.size),
        "pairs": rows,
        "decided_records": int(drawing.keys.size),
        "strata": [
            {
                "stratum": h,
                "judge_score_from": float(drawn.bounds[h, 0]),
                "judge_score_to": float(drawn.bounds[h, 1]),
                "records": int(drawn.sizes[h]),
                "drawn": int(drawn.quotas[h]),
            }
            for h in range(drawn.sizes.size)
        ],
        "seed": spec.seed,
        "allocation": spec.allocation,
    }


def sheet_rows(
    run: Reopened, i: int, stratum: int, pairs: list[Pair], drawn_by: str
) -> list[dict[str, Any]]:
    """The sheet's rows of record ``i``: one a task its model judges graded, one a pair its
    similarity judge decided."""
    file, line = run.where(i)
    head = {"id": run.table.ids[i], "line": line, "stratum": stratum, "draw": drawn_by}
    if file:
        head["file"] = file
    rows: list[dict[str, Any]] = []
    texts = _task_texts(run)
    for task, graded in _task_grades(run).items():
        value = float(_judge_values(graded, task)[i])
        rows.append(
            {
                **head,
                "task": task,
                **texts[task][i],
                "judge_score": None if math.isnan(value) else value,
                "human": None,
            }
        )
    for pair in pairs:
        assert run.scored is not None  # a record has pairs only with a similarity judge
        score = run.scored.table.get(*pair)
        verdict = None
        if run.threshold is not None and not math.isnan(score):
            verdict = int(score > run.threshold)
        rows.append(
            {
                **head,
                "a": pair[0],
                "b": pair[1],
                "judge_score": None if math.isnan(score) else round(score, 6),
                "judge_verdict": verdict,
                "human": None,
            }
        )
    return rows


def _task_texts(run: Reopened) -> dict[str, list[dict[str, str]]]:
    """Per task, each record's texts as its judge read them (input, output, reference)."""
    out: dict[str, list[dict[str, str]]] = {}
    for statistic in run.plan.statistics.values():
        if statistic.needs_judge and statistic.judge_task not in out:
            texts = statistic.judge_texts(run.table)
            if statistic.judge_task == "pairwise":  # a record's first prompt: A shown first
                texts = texts[0::2]
            keys = ("input", "output", "reference", "output_a", "output_b")
            out[statistic.judge_task] = [{k: t[k] for k in keys if k in t} for t in texts]
    return out


def write_sheet(rows: list[dict[str, Any]], path: Path, columns: tuple[str, ...]) -> None:
    from ..runfolder.atomic import atomic_files

    with atomic_files(path, file=True) as staging:
        target = staging.path(path.name)
        if path.suffix.lower() == ".jsonl":
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            target.write_text(text, encoding="utf-8")
            return
        with open(target, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            for row in rows:
                writer.writerow({k: "" if row.get(k) is None else row[k] for k in columns})


def _label(value: Any, where: str) -> float | None:
    """A human label as a score in [0, 1]; None when empty."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        return float(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return 1.0
    if text in _FALSE:
        return 0.0
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not 0.0 <= number <= 1.0:
        raise InputError(
            f"human: {value!r} is not a label (a score in [0, 1], 1/0, yes/no or true/false)",
            source=where,
        )
    return number


@dataclass
class Sheet:
    """A filled sheet as read: the similarity labels by pair, the model-judged grades as
    written (by record id and task, with where each is), each record's stratum, and how many
    rows have no label yet."""

    labels: dict[Pair, float] = field(default_factory=dict)
    grades: dict[tuple[Where, str], tuple[str, str]] = field(default_factory=dict)
    """By (where the record is in the data, task): the grade as written and where."""
    baseline_grades: dict[tuple[Where, str], tuple[str, str]] = field(default_factory=dict)
    """A sheet over two runs: the grades of the baseline's answers (rows whose ``run`` is
    ``baseline``), by where the candidate's record is and task."""
    strata: dict[Where, int] = field(default_factory=dict)
    """By where the record is in the data (its file, "" for one, and line): its stratum."""
    ids: dict[Where, str] = field(default_factory=dict)
    """By where the record is: its id as the sheet shows it ("" for none)."""
    spec: DrawSpec | None = None
    """How the sheet was drawn (its ``draw`` column)."""
    empty: int = 0


def _rows_of(path: Path) -> list[tuple[int, Any]]:
    """The sheet's rows with their line numbers (a CSV's header is line 1)."""
    try:
        if path.suffix.lower() == ".jsonl":
            rows: list[tuple[int, Any]] = []
            for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if text.strip():
                    try:
                        rows.append((n, json.loads(text)))
                    except json.JSONDecodeError as exc:
                        raise InputError(f"not JSON: {exc.msg}", source=str(path), line=n) from None
            return rows
        with open(path, encoding="utf-8-sig", newline="") as handle:
            return list(enumerate(csv.DictReader(handle), 2))
    except UnicodeDecodeError:
        raise InputError(
            "the sheet is not UTF-8: save it as UTF-8 (Excel: Save As, CSV UTF-8)",
            source=str(path),
        ) from None


def read_sheet(path: str | os.PathLike[str]) -> Sheet:
    """A filled sheet (CSV or JSON Lines, as :func:`sample_sheet` writes it)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file", source=str(path))
    sheet = Sheet()
    for line, row in _rows_of(path):
        if not isinstance(row, dict):
            raise InputError("a row of the sheet is not an object", source=str(path), line=line)
        judged = bool(row.get("task"))
        needed = ("line", "stratum", "human", "draw", *(("task",) if judged else ("a", "b")))
        missing = [c for c in needed if c not in row]
        if missing:
            raise InputError(f"the sheet has no column {missing[0]!r}", source=str(path), line=line)
        drawn_by = row.get("draw")
        if not drawn_by:
            raise InputError(
                "the sheet has no draw column: use the sheet pingce audit sample wrote",
                source=str(path),
                line=line,
            )
        spec = DrawSpec.parse(str(drawn_by), f"{path}:{line}")
        if sheet.spec is None:
            sheet.spec = spec
        elif spec != sheet.spec:
            raise InputError(
                f"draw: {drawn_by!r} differs from the sheet's first row ({sheet.spec.text()}): "
                "one sheet is one draw",
                source=str(path),
                line=line,
            )
        try:
            record = "" if row.get("id") is None else str(row["id"])
            at: Where = (str(row.get("file") or ""), int(row["line"]))
            if sheet.ids.setdefault(at, record) != record:
                raise InputError(
                    f"id {record!r}: another row of line {row['line']} says "
                    f"{sheet.ids[at]!r} (the sheet's id and line columns as drawn)",
                    source=str(path),
                    line=line,
                )
            sheet.strata[at] = int(row["stratum"])
        except (TypeError, ValueError):
            raise InputError(
                f"line {row['line']!r} or stratum {row['stratum']!r} is not a number (the sheet "
                "is pingce audit sample's, its line and stratum columns as written)",
                source=str(path),
                line=line,
            ) from None
        raw = row["human"]
        if raw is None or not str(raw).strip():
            sheet.empty += 1
        elif judged:
            side = sheet.baseline_grades if row.get("run") == "baseline" else sheet.grades
            side[(at, str(row["task"]))] = (str(raw).strip(), f"{path}:{line}")
        else:
            value = _label(raw, f"{path}:{line}")
            assert value is not None
            sheet.labels[(str(row["a"]), str(row["b"]))] = value
    return sheet


def _grade(text: str, scale: Any, where: str) -> float:
    """A human's grade on the task's scale: a number within it, or one of its labels."""
    if scale.kind == "labels":
        label = scale.find_label(text)
        if label is not None:
            return float(scale.value_of(label))
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not scale.low <= value <= scale.high:
        raise InputError(
            f"human: {text!r} is not a grade on the judge's scale {scale.spec!r}", source=where
        )
    return value


# ------------------------------------------------------------------------------ the audit


@dataclass
class AuditResult:
    """What ``pingce audit`` reports (audit.json)."""

    run: str
    unit: str | None
    """The field whose values are the units sampled and counted (a dialogue), or None: records."""
    labelled_pairs: int
    """Rows of the sheet with a label (pairs of a similarity judge, graded answers)."""
    unlabelled_pairs: int
    agreement: dict[str, Any]
    metrics: dict[str, AuditedMetric]
    notes: list[str] = field(default_factory=list)
    verified: list[dict[str, Any]] = field(default_factory=list)
    """The records people checked whole (every pair or task labelled): each one's ``id``,
    ``line`` in the data file and ``stratum``, with their labels beside the judge's (``pairs``:
    ``a``, ``b``, ``judge``, ``human``; ``grades``: by task, ``judge`` and ``human``)."""
    level: float = 0.95
    """The level of the intervals."""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["metrics"] = {k: asdict(v) for k, v in self.metrics.items()}
        return out


def grade_agreement(
    run: Reopened, grades: dict[tuple[int, str], float]
) -> dict[str, dict[str, Any]]:
    """Per model-judged task: the judges' grade (their mean) against the human's on the labelled
    records: how many, the share equal, the mean absolute difference, Pearson's r."""
    out: dict[str, dict[str, Any]] = {}
    for task, graded in _task_grades(run).items():
        keys = [(i, t) for (i, t) in grades if t == task]
        if not keys:
            continue
        values = _judge_values(graded, task)
        judge = np.array([values[i] for i, _ in keys])
        human = np.array([grades[k] for k in keys])
        ok = ~np.isnan(judge)
        judge, human = judge[ok], human[ok]
        r = None
        if judge.size >= 3 and judge.std() > 0 and human.std() > 0:
            r = float(np.corrcoef(judge, human)[0, 1])
        out[task] = {
            "records": int(judge.size),
            "equal": float(np.mean(judge == human)) if judge.size else None,
            "mean_absolute_difference": float(np.mean(np.abs(judge - human)))
            if judge.size
            else None,
            "pearson_r": r,
        }
    return out


def agreement_of(run: Reopened, labels: dict[Pair, float], level: float = 0.95) -> dict[str, Any]:
    """The judge's agreement with the people on the labelled pairs (:mod:`.agreement`): ROC
    AUC; at the run's τ accuracy, Cohen's kappa, the true and false positive rates and the τ
    that would have agreed best; each with its bootstrap interval at ``level``."""
    from ..calibrate import best_point, roc_auc, threshold_curve, threshold_point

    if run.scored is None or not labels:
        return {}
    pairs = list(labels)
    scores = np.array([run.scored.table.get(*p) for p in pairs])
    human = np.array([labels[p] for p in pairs]) >= 0.5
    ok = ~np.isnan(scores)
    scores, human = scores[ok], human[ok]
    out: dict[str, Any] = {"pairs": int(ok.sum()), "roc_auc": roc_auc(scores, human)}
    if run.threshold is not None and scores.size:
        same = np.zeros(scores.size, dtype=bool)  # the sheet holds no identical pair
        at = threshold_point(run.threshold, scores, human, same)  # as pingce calibrate counts
        n = at.tp + at.fp + at.fn + at.tn
        out.update(
            threshold=run.threshold,
            accuracy=(at.tp + at.tn) / n,
            kappa=at.kappa,
            true_positive_rate=at.tp / (at.tp + at.fn) if at.tp + at.fn else None,
            false_positive_rate=at.fp / (at.fp + at.tn) if at.fp + at.tn else None,
        )
        curve = threshold_curve(scores, human, same)
        out["best_threshold"] = best_point(curve).threshold if curve and human.any() else None
    if scores.size >= 2:
        from .agreement import agreement_intervals

        out["intervals"] = agreement_intervals(scores, human, run.threshold, level=level)
    return out


def _resolved_grades(run: Reopened, sheet: Sheet) -> dict[tuple[int, str], float]:
    """The sheet's model-judged grades by (record index, task), read on each task's scale."""
    return resolved_grades(run, sheet.grades)


def resolved_grades(
    run: Reopened,
    grades: dict[tuple[Where, str], tuple[str, str]],
    index: dict[Where, int] | None = None,
) -> dict[tuple[int, str], float]:
    """``grades`` (a sheet's, by where the record is and task) by (record index in ``run``,
    task), read on each task's scale; ``index``: where a sheet's record is to its index
    (default: ``run``'s own, :meth:`Reopened.index`)."""
    if not grades:
        return {}
    scales = {task: one.scale for task, one in _task_grades(run).items()}
    if index is None:
        index = run.index()
    out: dict[tuple[int, str], float] = {}
    for (record, task), (text, where) in grades.items():
        if task not in scales:
            raise InputError(f"task: {task!r} is not graded in this run", source=where)
        if record not in index:
            raise InputError(f"line: {_shown(record)} is not a record of the run", source=where)
        out[(index[record], task)] = _grade(text, scales[task], where)
    return out


def units_of(run: Reopened) -> np.ndarray | None:
    """Each record's unit (a dialogue) in a unit suite, its id with repeats (its repeats
    resample together, as in the run), else None."""
    return repeat_clusters(run.table, run.plan.unit)


def _checked(
    pairs: list[Pair],
    labels: dict[Pair, float],
    i: int,
    grades: dict[tuple[int, str], float],
    tasks: list[str],
) -> bool:
    """Whether people labelled every pair and task of record ``i`` (and at least one)."""
    if not pairs and not tasks:
        return False
    return all(p in labels for p in pairs) and all((i, t) in grades for t in tasks)


def _shown(where: Where) -> str:
    """Where a record is, as a message names it: its line (in its file, with several)."""
    return f"{where[1]} of {where[0]}" if where[0] else str(where[1])


def _file_of(run: Reopened, i: int) -> dict[str, str]:
    """Record ``i``'s file, in a run of several (audit.json's ``verified``)."""
    return {"file": run.where(i)[0]} if run.files else {}


def _verified(
    run: Reopened,
    drawing: Drawing,
    labels: dict[Pair, float],
    grades: dict[tuple[int, str], float],
) -> list[dict[str, Any]]:
    """The records people checked whole, each with its ``id``, ``line`` and ``stratum``, and
    their labels beside the judge's: ``pairs`` (a similarity judge's: both texts, its score,
    the label) and ``grades`` (by task: the judges' grade and the person's)."""
    tasks = judged_tasks(run.judged)
    graded = _task_grades(run)
    out = []
    for i in np.flatnonzero(drawing.drawn).tolist():
        pairs = drawing.pairs[i]
        if not _checked(pairs, labels, i, grades, tasks):
            continue
        entry: dict[str, Any] = {
            "id": run.table.ids[i],
            "line": run.where(i)[1],
            **_file_of(run, i),
            "stratum": int(drawing.codes[i]),
        }
        if pairs:
            assert run.scored is not None
            entry["pairs"] = [
                {
                    "a": a,
                    "b": b,
                    "judge": _finite(run.scored.table.get(a, b)),
                    "human": labels[a, b],
                }
                for a, b in pairs
            ]
        if tasks:
            entry["grades"] = {
                t: {"judge": _finite(float(_judge_values(graded[t], t)[i])), "human": grades[i, t]}
                for t in tasks
            }
        out.append(entry)
    return out


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 6)


def sheet_drawing(
    run: Reopened, sheet: Sheet, where: str, drawing: Drawing | None = None
) -> Drawing:
    """The draw the sheet says it is, made again over ``run`` (or ``drawing``, the draw made
    again over two runs, in ``run``'s records); an error when a row of the sheet is not a
    record of that draw (a sheet of another run, or a data file changed since)."""
    if sheet.spec is None:
        raise InputError("the sheet has no rows", source=where)
    if drawing is None:
        if sheet.spec.runs != 1:
            raise InputError(
                f"draw: {sheet.spec.text()!r}: the sheet was drawn over two runs (pingce audit "
                "sample RUN_A RUN_B); compare the two with it: pingce compare RUN_A RUN_B "
                "--labels SHEET",
                source=where,
            )
        drawing = redraw(run, sheet.spec)
    index = run.index()
    for line, stratum in sheet.strata.items():
        i = index.get(line)
        if i is None or not drawing.drawn[i] or int(drawing.codes[i]) != stratum:
            raise InputError(
                f"line {_shown(line)} (stratum {stratum}) is not a record of this run's draw "
                f"({sheet.spec.text()}): the sheet is of another run, or the data file changed",
                source=where,
            )
        record = run.table.ids[i]
        if sheet.ids.get(line, "") != ("" if record is None else str(record)):
            raise InputError(
                f"line {_shown(line)}: the sheet's id {sheet.ids.get(line)!r} is not the record's "
                f"{record!r}: the data file changed since the sheet was drawn",
                source=where,
            )
    return drawing


def checked_values(run: Reopened, metrics: dict[str, AuditedMetric]) -> dict[str, AuditedMetric]:
    """``metrics`` with the run's own value where its rows do not add up (a metric that reads
    no judge); an error when a judge-only value is not the one the run holds (the data file or
    the options changed since the run)."""
    out = dict(metrics)
    for name, audited in metrics.items():
        stored = run.values.get(name)
        if audited.judge is not None and stored is not None and abs(audited.judge - stored) > 1e-9:
            raise InputError(
                f"metric {name}: the run holds {stored!r} but its records and judge give "
                f"{audited.judge!r} now: the data file or the options changed since the run",
                source=str(run.folder / "results.json"),
            )
        if audited.judge is None and not audited.depends_on_judge:  # rows that do not add up
            out[name] = dataclasses.replace(
                audited, judge=stored, human=stored, value=stored, notes=[]
            )
    return out


def audit_run(
    run: Reopened,
    sheet: str | os.PathLike[str],
    *,
    lam: float | None = None,
    level: float = 0.95,
    ci: Intervals | None = None,
) -> AuditResult:
    """Every metric of ``run`` corrected by the labels of ``sheet``."""
    read = read_sheet(sheet)
    labels, empty = read.labels, read.empty
    if not labels and not read.grades:
        raise InputError("the sheet has no label yet: fill in its human column", source=str(sheet))
    grades = _resolved_grades(run, read)
    drawing = sheet_drawing(run, read, str(sheet))
    pairs = drawing.pairs
    codes = drawing.codes
    metrics = correct(
        run.plan,
        run.table,
        run.scored,
        labels,
        judged=run.judged,
        grades=grades,
        strata=codes,
        drawn=drawing.drawn,
        lam=lam,
        level=level,
        ci=ci,
    )
    notes = []
    if empty:
        notes.append(f"{empty} pair(s) of the sheet have no label yet: their records do not count")
    on_sheet = np.flatnonzero(drawing.drawn).tolist()
    partly = sum(
        1
        for i in on_sheet
        if any(q in labels for q in pairs[i]) and not all(q in labels for q in pairs[i])
    )
    if partly:
        notes.append(f"{partly} record(s) have only some of their pairs labelled: left out")
    outside = sum(
        1
        for i in np.flatnonzero(~drawing.drawn).tolist()
        if pairs[i] and all(q in labels for q in pairs[i])
    )
    if outside:
        notes.append(
            f"{outside} record(s) outside the draw have every pair labelled (the same texts "
            "elsewhere on the sheet): their labels count for the agreement, not for the "
            "corrected metrics (people did not check them at random)"
        )
    notes += regime_notes(metrics)
    metrics = checked_values(run, metrics)
    return AuditResult(
        run=run.name,
        level=level,
        unit=run.plan.unit,
        verified=_verified(run, drawing, labels, grades),
        labelled_pairs=len(labels) + len(grades),
        unlabelled_pairs=empty,
        agreement={
            **agreement_of(run, labels, level),
            **({"graded": g} if (g := grade_agreement(run, grades)) else {}),
        },
        metrics=metrics,
        notes=notes,
    )


def write_audit(result: AuditResult, out: str | os.PathLike[str], level: float = 0.95) -> Path:
    """Write audit.json, audit.html and audit.md into the folder ``out`` (all or nothing); the
    path of audit.json."""
    from .._json import dumps_indented
    from ..report.audit_html import render_audit_html, render_audit_markdown
    from ..runfolder.atomic import atomic_files

    with atomic_files(out) as staging:
        staging.write_bytes("audit.json", dumps_indented(result.to_dict()).encode("utf-8"))
        staging.write_bytes("audit.html", render_audit_html(result, level).encode("utf-8"))
        staging.write_bytes("audit.md", render_audit_markdown(result, level).encode("utf-8"))
    return Path(out) / "audit.json"
