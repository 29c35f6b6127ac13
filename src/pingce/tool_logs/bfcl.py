"""BFCL's score files: ``score/<model>/[<group>/]BFCL_v<N>_<category>_score.json``.

BFCL's checker writes, per category, a summary line (``accuracy``, ``correct_count``,
``total_count``) and then one line per entry that FAILED only (with its ``error_type``). Every
entry's verdict is recovered from the result file beside it (``result/<model>/[<group>/]
BFCL_v<N>_<category>_result.json``, the same path with ``score`` for ``result``): an entry is
1 unless its id is listed as failed. Without a result file, a full run's ids are
``<category>_0`` … ``<category>_<total - 1>`` (said in a note); a partial run needs its result
file. The summary's counts are checked against what was recovered. A folder of score files (a
model's ``score/<model>``) reads every category, each a slice; the mean over all entries weighs
categories by their size, where BFCL's overall averages some of its categories unweighted.

A BFCL *result* file is predictions for the ``tool-use`` suite, which checks them itself:
``pingce run tool-use --data ... --gold ...``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import InputError
from ._base import SCORES, Score, ToolRun, tool_reader

__all__ = ["read_bfcl"]

_SCORE = re.compile(r"^(?P<version>BFCL_v\d+)_(?P<category>.+)_score\.json$")


def _recognises(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return any(_SCORE.match(p.name) for p in path.rglob("BFCL_v*_score.json"))
    first = head.lstrip().split(b"\n", 1)[0]
    return first.startswith(b"{") and b'"correct_count"' in first and b'"total_count"' in first


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    out = []
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                out.append((number, json.loads(line)))
            except ValueError as exc:
                raise InputError(f"not JSON: {exc}", source=str(path), line=number) from None
    return out


def _result_file(score: Path) -> Path | None:
    """The result file of a score file: ``score`` for ``result`` in its path (at any depth
    below the model's folder, as BFCL finds it)."""
    parts = list(score.parts)
    name = score.name.replace("_score.json", "_result.json")
    for at in range(len(parts) - 1, -1, -1):
        if parts[at] == "score":
            root = Path(*parts[:at], "result")
            below = Path(*parts[at + 1 : -1])
            model = below.parts[0] if below.parts else ""
            for candidate in (root / below / name, *(root / model).rglob(name)):
                if candidate.is_file():
                    return candidate
    beside = score.with_name(name)
    return beside if beside.is_file() else None


def _category(path: Path, source: str, notes: list[str]) -> list[dict[str, Any]]:
    found = _SCORE.match(path.name)
    category = found["category"] if found else path.stem
    lines = _lines(path)
    if not lines or "total_count" not in lines[0][1]:
        raise InputError(
            "not a BFCL score file: the first line has no total_count", source=str(path), line=1
        )
    header = lines[0][1]
    total, correct = int(header["total_count"]), int(header["correct_count"])
    failed: dict[str, dict[str, Any]] = {}
    for number, entry in lines[1:]:
        if "id" not in entry:
            raise InputError("a failed entry without an id", source=str(path), line=number,
                             field="id")  # fmt: skip
        failed.setdefault(str(entry["id"]), entry)  # v3 may list an id twice
    results = _result_file(path)
    outputs: dict[str, Any] = {}
    if results is not None:
        ids = []
        for _, entry in _lines(results):
            ids.append(str(entry.get("id")))
            outputs[ids[-1]] = entry.get("result")
    else:
        ids = [f"{category}_{i}" for i in range(total)]
        unknown = [i for i in failed if i not in set(ids)]
        if unknown:
            raise InputError(
                f"no result file beside the score file, and failed ids {unknown[:3]} are not "
                f"{category}_0 … {category}_{total - 1} (a partial run): keep BFCL's result "
                "folder next to its score folder",
                source=str(path),
            )
        notes.append(
            f"{path}: no result file found; the ids are those of a full run, {category}_0 "
            f"… {category}_{total - 1}"
        )
    if len(ids) != total or total - len(failed) != correct:
        raise InputError(
            f"the score file says {correct} of {total} correct, and {len(failed)} failed "
            f"entries of {len(ids)} in the result file {results} do not add up to it",
            source=str(path),
        )
    known = set(ids)
    stray = [i for i in failed if i not in known]
    if stray:
        raise InputError(
            f"failed ids not in the result file {results}: {', '.join(stray[:5])}",
            source=str(path),
        )
    records = []
    for entry_id in ids:
        listed: dict[str, Any] | None = failed.get(entry_id)
        error = None if listed is None else listed.get("error_type")
        if error is None and listed is not None and isinstance(listed.get("error"), dict):
            error = listed["error"].get("error_type")
        prompt = None if listed is None else listed.get("prompt")
        records.append(
            {
                "id": entry_id,
                "category": category,
                "input": prompt.get("question") if isinstance(prompt, dict) else None,
                "target": None if listed is None else listed.get("possible_answer"),
                "output": outputs.get(
                    entry_id, None if listed is None else listed.get("model_result_raw")
                ),
                "metadata": {"error_type": error},
                SCORES: {"accuracy": 0.0 if listed is not None else 1.0},
            }
        )
    return records


@tool_reader("bfcl", _recognises)
def read_bfcl(path: Path) -> ToolRun:
    """BFCL's score files as pingce records (see the module)."""
    files = sorted(path.rglob("BFCL_v*_score.json")) if path.is_dir() else [path]
    if not files:
        raise InputError("no BFCL_v*_score.json in the folder", source=str(path))
    notes: list[str] = []
    records = []
    for file in files:
        records.extend(_category(file, str(path), notes))
    several = len(files) > 1
    reported = None
    if not several:
        reported = float(_lines(files[0])[0][1]["accuracy"])
    score = Score("accuracy", reported, "its accuracy: correct_count / total_count", True)
    categories = [r["category"] for r in records]
    name = "bfcl-" + (categories[0] if not several else "categories")
    if several:
        notes.append(
            f"{path}: {len(files)} categories, each a slice; the accuracy over every entry "
            "weighs each category by its size (BFCL's overall averages categories unweighted "
            "within its groups)"
        )
    return ToolRun(
        "bfcl",
        str(path),
        re.sub(r"[^A-Za-z0-9_.-]", "-", name),
        records,
        [score],
        ["category"] if several else [],
        notes=notes,
    )
