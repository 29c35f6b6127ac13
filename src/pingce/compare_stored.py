"""Two stored runs compared, as ``pingce compare RUN_A RUN_B`` and :func:`pingce.compare_runs`
take them: run names (from the run store) or run output folders, read back (results.json,
records.jsonl, stats.npz) and handed to :func:`pingce.engine.stored_runs.compare_runs`. Nothing is
evaluated again and no model is called.

The suite is the one given, else the suite file the store recorded for the candidate (when it
was run from a file that is still there), else the built-in suite of the runs' suite name; the
law list likewise (``--laws``, else the candidate's recorded one)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .engine.profile import Profile
from .engine.stored_runs import compare_runs
from .errors import OptionError
from .history import RunInfo, StoreError, run_folder
from .options import RunOptions
from .progress import ProgressHook
from .results import ComparisonResult, EvaluationResult
from .runfolder.reader import read_run

__all__ = ["RunRef", "compare_stored", "decide_against_baseline", "read_stored"]

RunRef = str | os.PathLike[str] | EvaluationResult
"""A run: its name in the run store, its output folder, or a result in memory."""


def read_stored(
    ref: RunRef, store: str | os.PathLike[str] | None = None, label: str = "run"
) -> tuple[str, EvaluationResult, RunInfo | None]:
    """How a comparison names the run, its result (with its rows and saved statistics:
    :attr:`EvaluationResult.outputs`) and what the store holds of it (None for a folder or a
    result)."""
    if isinstance(ref, EvaluationResult):
        return label, ref, None
    try:
        folder, info = run_folder(ref, store=store)
    except StoreError:
        if Path(ref).is_file():  # records, most likely: the other form of compare
            raise OptionError(
                f"{ref} is a file, not a run (a run name or a run's output folder); to compare "
                "two record files: pingce compare SUITE --data CANDIDATE --baseline BASELINE"
            ) from None
        raise
    return (info.name if info is not None else str(ref)), read_run(folder), info


def compare_stored(
    candidate: RunRef,
    baseline: RunRef,
    options: RunOptions,
    *,
    suite: str | os.PathLike[str] | None = None,
    store: str | os.PathLike[str] | None = None,
    progress: ProgressHook | None = None,
    profile: Profile | None = None,
) -> ComparisonResult:
    """Compare two runs (names, folders or results) from their saved per-record statistics."""
    label_c, result_c, info = read_stored(candidate, store, "candidate")
    label_b, result_b, _ = read_stored(baseline, store, "baseline")
    recorded = {} if info is None else info.options
    if suite is None:  # the suite file the candidate was run with, when it is still there
        path = recorded.get("suite")
        if isinstance(path, str) and _suite_file(path):
            suite = path
    laws = recorded.get("laws")
    if options.laws is None and (
        laws == "builtin" or (isinstance(laws, str) and Path(laws).is_file())
    ):
        options = dataclasses.replace(options, laws=laws)
    return compare_runs(
        result_c,
        result_b,
        options,
        suite=suite,
        labels=_distinct((label_c, label_b)),
        progress=progress,
        profile=profile,
    )


def _suite_file(path: str) -> bool:
    """Whether a run's recorded suite is a suite YAML file that is still there (not a built-in
    name, nor another tool's file that a suite was made from)."""
    return Path(path).suffix in (".yaml", ".yml") and Path(path).is_file()


def _distinct(labels: Sequence[str]) -> tuple[str, str]:
    first, second = labels[0], labels[1]
    if first == second:  # one run compared with itself: still say which side is which
        return f"{first} (candidate)", f"{second} (baseline)"
    return first, second


def decide_against_baseline(
    result: EvaluationResult,
    suite: str | os.PathLike[str] | Any,
    options: RunOptions,
    *,
    store: str | os.PathLike[str] | None = None,
    progress: ProgressHook | None = None,
) -> EvaluationResult:
    """``pingce run --baseline RUN --non-inferior ...``: the run just made compared with the
    stored baseline as ``pingce compare RUN BASELINE`` compares two stored runs (so that command
    gives the same decision bit for bit), its decision and what it paired kept in the result
    (results.json's ``decision`` and ``baseline``); the result as it is without a baseline."""
    baseline = options.gating.baseline
    if baseline is None:
        return result
    path = os.fspath(suite) if isinstance(suite, str | os.PathLike) else None
    compared = compare_stored(
        result,
        baseline,
        options,
        # a suite file; a built-in suite, or one made from another tool's file, by the run's own
        suite=path if path is not None and _suite_file(path) else None,
        store=store,
        progress=progress,
    )
    result.decision = compared.decision
    result.baseline = {
        "run": compared.baseline,
        "records": compared.n_records,
        "notes": compared.notes,
    }
    return result
