"""lm-evaluation-harness's ``--log_samples`` files: ``samples_<task>_<time>.jsonl``.

Give one samples file, or the folder lm-eval wrote (``--output_path``; every task's newest
samples file in it). Each line (a document under one filter) becomes a record: ``doc_id``
(``<task>/<doc_id>`` when the folder holds several tasks), the document as the input, the
target, the filtered response as the output, the task as a slice, and each metric's per-sample
value as a score (named ``<metric>``, or ``<metric>_<filter>`` for a filter other than
``none``). A metric whose per-sample value is not one number (a perplexity's pair, aggregated
by lm-eval as a whole) is left out, said in a note. The results file beside the samples
(``results_<time>.json``) gives the task's numbers (``<metric>,<filter>``) that the means are
checked against, and whether higher is better.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import InputError
from ._base import SCORES, Score, ToolRun, tool_reader

__all__ = ["read_lm_eval"]

_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
_RESULTS = re.compile(r"^results_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.json$")
_RESERVED = {
    "doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
    "doc_hash", "prompt_hash", "target_hash",
}  # fmt: skip


def _recognises(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return any(_SAMPLES.match(p.name) for p in path.iterdir())
    first = head.lstrip().split(b"\n", 1)[0]
    return first.startswith(b"{") and b'"doc_id"' in first and b'"filtered_resps"' in first


def _sample_files(path: Path) -> list[tuple[str, str, Path]]:
    """(task, time, file) of each task's newest samples file."""
    if path.is_file():
        found = _SAMPLES.match(path.name)
        if found is None:
            return [("task", "", path)]
        return [(found["task"], found["time"], path)]
    newest: dict[str, tuple[str, Path]] = {}
    for file in sorted(path.iterdir()):
        found = _SAMPLES.match(file.name)
        if found and (found["task"] not in newest or found["time"] > newest[found["task"]][0]):
            newest[found["task"]] = (found["time"], file)
    return [(task, time, file) for task, (time, file) in sorted(newest.items())]


def _results(folder: Path, time: str) -> dict[str, Any] | None:
    """The results file of the run at ``time`` (or the newest) in ``folder``."""
    files = sorted(f for f in folder.iterdir() if _RESULTS.match(f.name))
    if not files:
        return None
    chosen = next((f for f in files if f.name == f"results_{time}.json"), files[-1])
    with open(chosen, "rb") as handle:
        loaded: dict[str, Any] = json.load(handle)
    return loaded


def _response(value: Any) -> Any:
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value


@tool_reader("lm-eval", _recognises)
def read_lm_eval(path: Path) -> ToolRun:
    """lm-eval's samples as pingce records (see the module)."""
    files = _sample_files(path)
    if not files:
        raise InputError("no samples_<task>_*.jsonl in the folder (run lm_eval with "
                         "--log_samples)", source=str(path))  # fmt: skip
    folder = files[0][2].parent
    results = _results(folder, files[0][1]) or {}
    several = len(files) > 1
    by_doc: dict[str, dict[str, Any]] = {}
    sources: dict[str, set[str]] = {}  # score name -> its "task<TAB>metric,filter" keys
    skipped: set[str] = set()
    for task, _, file in files:
        with open(file, "rb") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    sample = json.loads(line)
                except ValueError as exc:
                    raise InputError(f"not JSON: {exc}", source=str(file), line=number) from None
                if "doc_id" not in sample:
                    raise InputError("a sample without doc_id", source=str(file), line=number,
                                     field="doc_id")  # fmt: skip
                filter_name = str(sample.get("filter") or "none")
                doc_id = sample["doc_id"]
                key = f"{task}/{doc_id}" if several else str(doc_id)
                record = by_doc.get(key)
                if record is None:  # a document's first filter gives its output
                    record = by_doc[key] = {
                        "id": key,
                        "task": task,
                        "input": sample.get("doc"),
                        "target": sample.get("target"),
                        "output": _response(sample.get("filtered_resps")),
                        "metadata": {"doc_hash": sample.get("doc_hash")},
                        SCORES: {},
                    }
                for metric in sample.get("metrics") or [k for k in sample if k not in _RESERVED]:
                    value = sample.get(metric)
                    if isinstance(value, bool) or not isinstance(value, int | float):
                        skipped.add(metric)
                        continue
                    name = metric if filter_name == "none" else f"{metric}_{filter_name}"
                    record[SCORES][name] = float(value)
                    sources.setdefault(name, set()).add(f"{task}\t{metric},{filter_name}")
    records = list(by_doc.values())
    table = results.get("results") or {}
    better = results.get("higher_is_better") or {}
    scores = []
    for name, found in sources.items():
        task, key = sorted(found)[0].split("\t")
        metric = key.split(",")[0]
        reported = (table.get(task) or {}).get(key) if len(found) == 1 else None
        scores.append(
            Score(
                name,
                float(reported) if isinstance(reported, int | float) else None,
                f"results[{task!r}][{key!r}]",
                bool((better.get(task) or {}).get(metric, True)),
            )
        )
    notes = []
    if skipped:
        notes.append(
            f"{path}: {', '.join(sorted(skipped))}: a per-sample value that is not one number "
            "(lm-eval aggregates it as a whole): not read"
        )
    if several:
        notes.append(f"{path}: tasks {', '.join(t for t, _, _ in files)}, each a slice")
    task_name = files[0][0] if not several else "tasks"
    return ToolRun(
        "lm-eval",
        str(path),
        "lm-eval-" + re.sub(r"[^A-Za-z0-9_.-]", "-", task_name),
        records,
        scores,
        ["task"] if several else [],
        notes=notes,
    )
