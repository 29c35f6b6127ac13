"""The audit of a stored run: its records and its judge's scores found again (nothing asked
again: a remote judge answers from the cache, a local backend scores as it did), the sheet of
pairs a human should check, and the corrected metrics from the filled sheet.

``sample``: the stratified draw (:mod:`.sample`) over the records the judge decided something
for, written as a sheet (CSV or JSON Lines), one row a pair: the record's id and line, its
stratum, both texts, the judge's score and its verdict at τ, and an empty ``human`` column
(a score in [0, 1], or 1/0, yes/no, true/false). ``audit``: the filled sheet read back; the
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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.judgements import Graded, Judgements
from ..engine.phases import load, plan_run, similarities
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
    planned_half_widths,
    record_pairs,
    regime_notes,
)
from .sample import Allocation, Draw, draw

__all__ = [
    "AuditResult",
    "Reopened",
    "audit_run",
    "read_sheet",
    "redraw",
    "reopen",
    "sample_sheet",
    "sheet_drawing",
    "write_audit",
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


def _stored_run(folder: Path, store: str | None) -> Any:
    """The run store's record of the run whose output folder is ``folder`` (None if none)."""
    from ..history import runs

    target = folder.resolve()
    for info in runs(store=store):
        if info.out_dir and Path(info.out_dir).resolve() == target and info.data_path:
            return info
    return None


def _options(stored: dict[str, Any]) -> RunOptions:
    known = {f.name for f in dataclasses.fields(RunOptions)}
    keep = (
        *("similarity", "field_map", "base_url", "encoding", "zero_division", "laws", "slices"),
        *("judges", "rubric", "scale"),
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


def _check_supported(stored: dict[str, Any], data_path: str, folder: Path) -> None:
    """Refuse, with the reason, the runs an audit cannot find again yet."""
    if stored.get("model"):
        raise OptionError(
            "the run was answered by --model: auditing such a run is not supported yet (its "
            "answers are in predictions.jsonl)"
        )
    if stored.get("sample"):
        raise OptionError(
            f"the run evaluated a sample of its records (--sample {stored['sample']}): auditing "
            "a sampled run is not supported yet; audit a run of all the records"
        )
    if any(ch in data_path for ch in "*?[") or stored.get("engine") == "ray":
        raise OptionError(
            "the run read its records on Ray (--engine ray) or from a glob: auditing it is not "
            "supported yet; audit a local run of one file"
        )


def reopen(ref: str | os.PathLike[str], *, store: str | None = None) -> Reopened:
    """The run ``ref`` (a stored run's name or its output folder) with its records and scores.
    An error when its data file is gone or changed, when it was answered by ``--model`` (the
    answers are in predictions.jsonl: not audited yet), or when no metric reads a judge."""
    from ..history import run_folder

    folder, info = run_folder(ref, store=store)
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    if info is None:
        info = _stored_run(folder, store)
    found = (
        (str(info.options.get("suite") or info.suite), info.options, info.data_path or "")
        if info is not None
        else None
    )
    if found is None:
        sig = results.get("signature", {})
        data = results.get("data", {})
        stored = {
            "similarity": (sig.get("similarity") or "lexical").split("|")[0],
            "field_map": data.get("field_map") or {},
            "encoding": data.get("encoding"),
        }
        found = (results["suite"], stored, data.get("source", ""))
    suite, stored, data_path = found
    _check_supported(stored, data_path, folder)
    if info is not None and info.data_sha256 and Path(data_path).is_file():
        from ..history import data_hash

        if data_hash(data_path) != info.data_sha256:
            raise InputError(
                "the data file changed since the run (its sha256 is not the one the run store "
                "recorded): audit a run of the file as it is now",
                source=data_path,
            )
    if not data_path or not Path(data_path).is_file():
        raise InputError(f"the run's data file is gone: {data_path!r}", source=str(folder))
    plan = plan_run(suite, _options(stored))
    if not any(s.needs_similarity or s.needs_judge for s in plan.statistics.values()):
        raise OptionError(
            f"no metric of the suite {plan.suite.spec.name!r} reads a judge: there is nothing "
            "to audit"
        )
    table = load(plan, data_path, no_progress)
    check_records(plan, table)
    failed = int((results.get("similarity") or {}).get("failures") or 0)
    scored = _scores_again(plan, table, failed)
    judged = None
    if any(s.needs_judge for s in plan.statistics.values()):
        from ..engine.judgements import grade

        judged = grade(plan, table, no_progress)  # the answer cache answers what the run asked
    values = {k: v.get("value") for k, v in results.get("metrics", {}).items()}
    return Reopened(str(ref), folder, plan, table, scored, judged, values, _threshold(plan))


# ------------------------------------------------------------------------------ the sheet


def _record_scores(run: Reopened) -> tuple[np.ndarray, list[list[Pair]], list[np.ndarray]]:
    """The records the judges decided something for, each record's pairs, and the scores the
    draw is stratified by: a similarity judge's pair scores, else the model judges' grades
    mapped to [0, 1] (NaN where a judge gave none)."""
    n = run.table.n
    if run.scored is not None:
        pairs = record_pairs(run.plan, run.table, np.arange(n))
        decided = np.flatnonzero([bool(p) for p in pairs])
        scores = [np.array([run.scored.table.get(*p) for p in pairs[i]]) for i in decided]
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

    def text(self) -> str:
        return (
            f"budget={self.budget} seed={self.seed} strata={self.strata} "
            f"allocation={self.allocation}"
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
    decided, pairs, _ = _record_scores(run)
    if decided.size == 0:
        raise InputError("the judge decided no pair in this run: there is nothing to label")
    keys, scores, units = _unit_scores(run)  # records, or in a unit suite their units
    clean = [np.nan_to_num(s, nan=0.5) for s in scores]
    result = draw(
        clean, spec.budget, seed=spec.seed, strata=spec.strata, allocation=spec.allocation
    )
    by_key = dict(zip(keys.tolist(), result.codes.tolist(), strict=True))
    chosen = {int(keys[k]) for k in result.indices.tolist()}
    owner = np.arange(run.table.n) if units is None else units
    is_decided = np.zeros(run.table.n, dtype=bool)
    is_decided[decided] = True
    codes = np.array(
        [
            by_key.get(int(owner[i]), -1) if is_decided[i] or units is not None else -1
            for i in range(run.table.n)
        ],
        dtype=np.intp,
    )
    drawn = np.array([int(owner[i]) in chosen for i in range(run.table.n)]) & is_decided
    return Drawing(spec, result, keys, units, codes, drawn, pairs)


def sample_sheet(
    run: Reopened,
    budget: int,
    out: str | os.PathLike[str],
    *,
    seed: int = 0,
    strata: int = 4,
    allocation: Allocation = "neyman",
) -> dict[str, Any]:
    """Draw the records a human should check and write their pairs to ``out`` (``.csv`` or
    ``.jsonl``); what was drawn, per stratum."""
    drawing = redraw(run, DrawSpec(budget, seed, strata, allocation))
    pairs = drawing.pairs
    rows = []
    for i in np.flatnonzero(drawing.drawn).tolist():
        rows += _sheet_rows(run, i, int(drawing.codes[i]), pairs[i], drawing.spec.text())
    _write_sheet(rows, Path(out), JUDGED_COLUMNS if run.scored is None else COLUMNS)
    drawn, units, codes = drawing.result, drawing.units, drawing.codes
    planned = {}
    if units is None:  # per unit, the planned width is not computed yet
        planned = planned_half_widths(
            run.plan, run.table, run.scored, run.judged, codes, drawn.quotas
        )
    return {
        "expected_half_width": planned,
        "graded": run.scored is None,
        "unit": run.plan.unit,
        "records": int(drawn.indices.size),
        "pairs": len(rows),
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
        "seed": seed,
        "allocation": allocation,
    }


def _sheet_rows(
    run: Reopened, i: int, stratum: int, pairs: list[Pair], drawn_by: str
) -> list[dict[str, Any]]:
    """The sheet's rows of record ``i``: one a task its model judges graded, one a pair its
    similarity judge decided."""
    ids, lines = run.table.ids, run.table.lines
    head = {"id": ids[i], "line": int(lines[i]), "stratum": stratum, "draw": drawn_by}
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


def _write_sheet(rows: list[dict[str, Any]], path: Path, columns: tuple[str, ...]) -> None:
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
    grades: dict[tuple[int, str], tuple[str, str]] = field(default_factory=dict)
    """By (the record's line in the data file, task): the grade as written and where."""
    strata: dict[int, int] = field(default_factory=dict)
    """By the record's line in the data file: its stratum in the draw."""
    ids: dict[int, str] = field(default_factory=dict)
    """By the record's line: its id as the sheet shows it ("" for none)."""
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
            if sheet.ids.setdefault(int(row["line"]), record) != record:
                raise InputError(
                    f"id {record!r}: another row of line {row['line']} says "
                    f"{sheet.ids[int(row['line'])]!r} (the sheet's id and line columns as drawn)",
                    source=str(path),
                    line=line,
                )
            sheet.strata[int(row["line"])] = int(row["stratum"])
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
            sheet.grades[(int(row["line"]), str(row["task"]))] = (
                str(raw).strip(),
                f"{path}:{line}",
            )
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
    """The records people checked whole (every pair or task labelled): each one's ``id`` and
    ``line`` in the data file."""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["metrics"] = {k: asdict(v) for k, v in self.metrics.items()}
        return out


def _grade_agreement(
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


def _agreement(run: Reopened, labels: dict[Pair, float]) -> dict[str, Any]:
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
    return out


def _resolved_grades(run: Reopened, sheet: Sheet) -> dict[tuple[int, str], float]:
    """The sheet's model-judged grades by (record index, task), read on each task's scale."""
    if not sheet.grades:
        return {}
    scales = {task: one.scale for task, one in _task_grades(run).items()}
    index = {int(line): i for i, line in enumerate(run.table.lines)}
    out: dict[tuple[int, str], float] = {}
    for (record, task), (text, where) in sheet.grades.items():
        if task not in scales:
            raise InputError(f"task: {task!r} is not graded in this run", source=where)
        if record not in index:
            raise InputError(f"line: {record!r} is not a record of the run", source=where)
        out[(index[record], task)] = _grade(text, scales[task], where)
    return out


def _units(run: Reopened) -> np.ndarray | None:
    """Each record's unit (a dialogue) in a unit suite, else None."""
    from ..engine.groups import unit_codes

    return unit_codes(run.table, run.plan.unit)


def _unit_scores(
    run: Reopened,
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray | None]:
    """What the draw samples: the records the judges decided something for (or, in a unit
    suite, their units), each with the scores it is stratified by; the records' units."""
    decided, _, scores = _record_scores(run)
    units = _units(run)
    if units is None:
        return decided, scores, None
    by_unit: dict[int, list[np.ndarray]] = {}
    for i, s in zip(decided.tolist(), scores, strict=True):
        by_unit.setdefault(int(units[i]), []).append(s)
    keys = np.array(sorted(by_unit), dtype=np.intp)
    return keys, [np.concatenate(by_unit[k]) for k in keys.tolist()], units


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


def sheet_drawing(run: Reopened, sheet: Sheet, where: str) -> Drawing:
    """The draw the sheet says it is, made again over ``run``; an error when a row of the sheet
    is not a record of that draw (a sheet of another run, or a data file changed since)."""
    if sheet.spec is None:
        raise InputError("the sheet has no rows", source=where)
    drawing = redraw(run, sheet.spec)
    index = {int(line): i for i, line in enumerate(run.table.lines)}
    for line, stratum in sheet.strata.items():
        i = index.get(line)
        if i is None or not drawing.drawn[i] or int(drawing.codes[i]) != stratum:
            raise InputError(
                f"line {line} (stratum {stratum}) is not a record of this run's draw "
                f"({sheet.spec.text()}): the sheet is of another run, or the data file changed",
                source=where,
            )
        record = run.table.ids[i]
        if sheet.ids.get(line, "") != ("" if record is None else str(record)):
            raise InputError(
                f"line {line}: the sheet's id {sheet.ids.get(line)!r} is not the record's "
                f"{record!r}: the data file changed since the sheet was drawn",
                source=where,
            )
    return drawing


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
    partly = sum(
        1
        for i, p in enumerate(pairs)
        if drawing.drawn[i] and any(q in labels for q in p) and not all(q in labels for q in p)
    )
    if partly:
        notes.append(f"{partly} record(s) have only some of their pairs labelled: left out")
    notes += regime_notes(metrics)
    for name, audited in list(metrics.items()):
        stored = run.values.get(name)
        if audited.judge is not None and stored is not None and abs(audited.judge - stored) > 1e-9:
            raise InputError(
                f"metric {name}: the run holds {stored!r} but its records and judge give "
                f"{audited.judge!r} now: the data file or the options changed since the run",
                source=str(run.folder / "results.json"),
            )
        if audited.judge is None and not audited.depends_on_judge:  # rows that do not add up
            metrics[name] = dataclasses.replace(
                audited, judge=stored, human=stored, value=stored, notes=[]
            )
    verified = [
        {"id": run.table.ids[i], "line": int(run.table.lines[i])}
        for i in range(run.table.n)
        if drawing.drawn[i] and _checked(pairs[i], labels, i, grades, judged_tasks(run.judged))
    ]
    return AuditResult(
        run=run.name,
        unit=run.plan.unit,
        verified=verified,
        labelled_pairs=len(labels) + len(grades),
        unlabelled_pairs=empty,
        agreement={
            **_agreement(run, labels),
            **({"graded": g} if (g := _grade_agreement(run, grades)) else {}),
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
