"""Inspect AI's logs: ``.eval`` (a zip of JSON documents) and ``.json``.

Read by the ``inspect_ai`` package's own log reader when it is installed (``pip install
pingce[inspect]``), else by ours (the JSON of the log, or the zip's ``header.json`` and
``samples/*.json``): the same log as the same plain data either way. Each sample (and epoch)
becomes a record: its id, input (text, or the messages), target, the model's completion, its
metadata, its epoch as ``repeat`` (a log of several epochs is a run with repeats) and each
scorer's value as Inspect's ``value_to_float`` maps it (``C`` 1, ``P`` 0.5, ``I`` and ``N`` 0,
``yes``/``true`` 1, ``no``/``false`` 0, a number as itself); a scorer with a dictionary of values
gives one score a key. The log's own results (``accuracy`` or ``mean`` of each scorer) are what
pingce's means are checked against.
"""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path
from typing import Any

from ..errors import InputError
from ._base import SCORES, Score, ToolRun, tool_reader

__all__ = ["read_inspect", "value_to_float"]

_CORRECT, _INCORRECT, _PARTIAL, _NOANSWER = "C", "I", "P", "N"


def value_to_float(value: Any) -> float:
    """A score's value as a number, as ``inspect_ai.scorer.value_to_float()`` maps it (tested
    against it on every kind of value)."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.lower()
        if text in ("yes", "true"):
            return 1.0
        if text in ("no", "false"):
            return 0.0
        if value == _CORRECT:
            return 1.0
        if value == _PARTIAL:
            return 0.5
        if value in (_INCORRECT, _NOANSWER):
            return 0.0
        try:
            return float(value)
        except ValueError:
            pass
    return 0.0  # as Inspect's: anything else (it warns) is 0


def _recognises(path: Path, head: bytes) -> bool:
    if head[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(path) as archive:
                names = set(archive.namelist())
        except zipfile.BadZipFile:
            return False
        return "header.json" in names or "_journal/start.json" in names
    start = head.lstrip()[:4096]
    return start.startswith(b"{") and b'"eval"' in start and b'"version"' in start


def _log_data(path: Path) -> dict[str, Any]:
    """The log as plain data: by ``inspect_ai`` when installed, else from its JSON."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        return _own_log_data(path)
    log = read_eval_log(str(path))
    data: dict[str, Any] = log.model_dump(mode="json")
    return data


_ZSTD = 93
"""The zip compression method of Inspect's ``.eval`` members (Zstandard), which Python's
``zipfile`` does not read before 3.14."""


def _member(archive: zipfile.ZipFile, name: str, source: str) -> bytes:
    """A member's bytes, Zstandard members decompressed by ``zstandard`` (or pyarrow's
    codec)."""
    info = archive.getinfo(name)
    if info.compress_type != _ZSTD:
        return archive.read(name)
    handle = archive.fp
    assert handle is not None
    handle.seek(info.header_offset)
    local = handle.read(30)
    name_length, extra_length = struct.unpack("<HH", local[26:30])
    handle.seek(info.header_offset + 30 + name_length + extra_length)
    packed = handle.read(info.compress_size)
    try:
        import zstandard
    except ImportError:
        try:
            import pyarrow as pa
        except ImportError:
            raise InputError(
                "this Inspect log's members are Zstandard-compressed: install inspect_ai "
                "(pip install 'pingce[inspect]'), zstandard or pyarrow to read it",
                source=source,
            ) from None
        data: bytes = pa.decompress(packed, decompressed_size=info.file_size, codec="zstd")
        return bytes(data)
    unpacked: bytes = zstandard.ZstdDecompressor().decompress(
        packed, max_output_size=info.file_size
    )
    return unpacked


def _own_log_data(path: Path) -> dict[str, Any]:
    """The log as plain data, read without inspect_ai."""
    source = str(path)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if "header.json" not in names:
                raise InputError(
                    "an Inspect log that did not finish (no header.json): the run was cut "
                    "short; rerun it or `inspect log` it first",
                    source=source,
                )
            data: dict[str, Any] = json.loads(_member(archive, "header.json", source))
            samples = [
                json.loads(_member(archive, name, source))
                for name in names
                if name.startswith("samples/") and name.endswith(".json")
            ]
        data["samples"] = samples
        return data
    with open(path, "rb") as handle:
        loaded: dict[str, Any] = json.load(handle)
    return loaded


def _text(value: Any) -> Any:
    """An input or target as Inspect shows it: a text, or the messages' texts."""
    if isinstance(value, list) and all(isinstance(m, dict) for m in value):
        return [{"role": m.get("role"), "content": _content(m.get("content"))} for m in value]
    return value


def _content(content: Any) -> Any:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content


def _completion(output: Any) -> Any:
    if not isinstance(output, dict):
        return None
    if output.get("completion") is not None:
        return output["completion"]
    choices = output.get("choices") or []
    if choices and isinstance(choices[0], dict):
        return _content((choices[0].get("message") or {}).get("content"))
    return None


def _score_values(scores: dict[str, Any], listed: set[str]) -> dict[str, float]:
    """Each scorer's value as a number (a dictionary of values one a key); the scorers whose
    value is a list, which has no one number, into ``listed``."""
    out: dict[str, float] = {}
    for scorer, score in scores.items():
        value = score.get("value") if isinstance(score, dict) else score
        if isinstance(value, dict):
            for key, each in value.items():
                out[f"{scorer}_{key}"] = value_to_float(each)
        elif isinstance(value, list):
            listed.add(scorer)
        else:
            out[scorer] = value_to_float(value)
    return out


def _reported(results: dict[str, Any]) -> dict[str, tuple[float, str, str | None]]:
    """Each score's number in the log's results: its ``accuracy`` (or ``mean``), the metric's
    name and its epoch reducer."""
    out: dict[str, tuple[float, str, str | None]] = {}
    for entry in results.get("scores") or []:
        metrics = entry.get("metrics") or {}
        for metric in ("accuracy", "mean"):
            if metric in metrics and metrics[metric].get("value") is not None:
                name = entry.get("name")
                out[str(name)] = (float(metrics[metric]["value"]), metric, entry.get("reducer"))
                break
    return out


@tool_reader("inspect", _recognises)
def read_inspect(path: Path) -> ToolRun:
    """An Inspect log's samples as pingce records (see the module)."""
    data = _log_data(path)
    source = str(path)
    samples = data.get("samples") or []
    if not samples:
        raise InputError(
            "the Inspect log holds no samples (it was written without them: log_samples "
            "false, or the run failed before any finished)",
            source=source,
        )
    evaluation = data.get("eval") or {}
    task = str(evaluation.get("task") or "task").split("/")[-1]
    records: list[dict[str, Any]] = []
    names: dict[str, None] = {}
    listed: set[str] = set()
    epochs = {int(s.get("epoch") or 1) for s in samples}
    for sample in sorted(samples, key=lambda s: (str(s.get("id")), int(s.get("epoch") or 1))):
        values = _score_values(sample.get("scores") or {}, listed)
        names.update(dict.fromkeys(values))
        record: dict[str, Any] = {
            "id": str(sample.get("id")),
            "input": _text(sample.get("input")),
            "target": sample.get("target"),
            "output": _completion(sample.get("output")),
            "metadata": sample.get("metadata") or {},
            SCORES: values,
        }
        if len(epochs) > 1:
            record["repeat"] = int(sample.get("epoch") or 1)
        if sample.get("error"):
            record["error"] = str(
                sample["error"].get("message")
                if isinstance(sample["error"], dict)
                else sample["error"]
            )
        records.append(record)
    reported = _reported(data.get("results") or {})
    scores = []
    for name in names:
        number, metric, reducer = reported.get(name, (None, "accuracy", None))
        differs = None
        if len(epochs) > 1 and reducer not in (None, "mean"):
            differs = (
                f"Inspect reduced each sample's {len(epochs)} epochs by {reducer} before its "
                f"{metric}; pingce's mean is over every epoch"
            )
        scores.append(
            Score(name, number, f"the log's {metric}" if number is not None else "", True, differs)
        )
    slices = _metadata_slices(records)
    notes = []
    errored = sum(1 for r in records if "error" in r)
    if errored:
        notes.append(
            f"{source}: {errored} sample(s) ended in an error; a scorer without a value there "
            "leaves the sample out of its mean (each metric's n says over how many)"
        )
    if listed:
        notes.append(
            f"{source}: {', '.join(sorted(listed))}: a list of values a sample, which has no one "
            "number: not read"
        )
    if len(epochs) > 1:
        notes.append(
            f"{source}: {len(epochs)} epochs read as repeats of each sample (the interval "
            "resamples samples with all their epochs)"
        )
    return ToolRun(
        "inspect", source, f"inspect-{_safe(task)}", records, scores, slices, notes=notes
    )


def _metadata_slices(records: list[dict[str, Any]], most: int = 20) -> list[str]:
    """Metadata fields with a few text values shared by records: the natural slices."""
    seen: dict[str, set[Any]] = {}
    for record in records:
        for key, value in record["metadata"].items():
            if isinstance(value, str | bool | int):
                seen.setdefault(key, set()).add(value)
    return [
        f"metadata.{key}"
        for key, values in seen.items()
        if 1 < len(values) <= most and len(values) < len(records)
    ]


def _safe(name: str) -> str:
    kept = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name)
    return kept.strip("-._") or "task"
