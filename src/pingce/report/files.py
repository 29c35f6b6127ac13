"""Writing a run's files (results.json, records.jsonl, report.md, report.html, stats.npz) or a
comparison's (comparison.json, comparison.html), all or nothing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from .._halves import in_halves
from .._outputs import output_place, staged
from ..records import json_texts
from ..results import ComparisonResult, EvaluationResult, RecordRows
from .comparison_html import render_comparison_html
from .html import write_html
from .markdown import render_comparison_markdown, render_markdown

__all__ = ["OUTPUT_FILES", "write_comparison", "write_outputs", "write_records"]

OUTPUT_FILES = ("results.json", "records.jsonl", "report.md", "report.html", "stats.npz")


def write_outputs(result: EvaluationResult, out: str | os.PathLike[str]) -> dict[str, Path]:
    """Write the output files into ``out`` (created if needed) and return their paths.

    Files are written into a staging folder inside ``out`` first and moved into place only when
    all of them are complete, so an interrupted run never leaves half a result behind; a folder
    that cannot be written, or a failure while writing (a full disk), is an
    :class:`~pingce.errors.OutputError` with the path and the reason, and leaves nothing
    (:mod:`pingce._outputs`)."""
    target = Path(out)
    with output_place(target), staged(target) as staging:
        return _write_outputs(result, target, staging)


def _write_outputs(result: EvaluationResult, target: Path, staging: Path) -> dict[str, Path]:
    (staging / "results.json").write_text(result.to_json() + "\n", encoding="utf-8")
    written = list(OUTPUT_FILES)
    shards = result.record_shards
    if shards is None:
        write_records(result.records, staging / "records.jsonl")
    else:  # --engine ray: the workers' Parquet shards, moved in with the other outputs
        written.remove("records.jsonl")
        _link_tree(shards, staging / "records")
        written.append("records")
    (staging / "report.md").write_text(render_markdown(result), encoding="utf-8")
    write_html(result, staging / "report.html")
    if result.stat_shards is not None:  # --engine ray: the workers' stats shards
        written.remove("stats.npz")
        _link_tree(result.stat_shards, staging / "stats")
        written.append("stats")
    elif result.stats is not None:
        result.stats.save(staging / "stats.npz")
    else:  # a result read from results.json: no blocks to keep
        written.remove("stats.npz")
    if result.predictions is not None:
        records = result.predictions
        with open(staging / "predictions.jsonl", "wb") as handle:
            for start in range(0, len(records), 4096):  # integers beyond 64 bits too
                lines = json_texts(records[start : start + 4096])
                handle.writelines(line + b"\n" for line in lines)
        written.append("predictions.jsonl")
    paths = {}
    # never another run's rows or statistics
    for stale in {"records.jsonl", "records", "stats.npz", "stats"} - set(written):
        if (target / stale).is_dir():
            shutil.rmtree(target / stale)
        else:
            (target / stale).unlink(missing_ok=True)
    for name in written:
        if (target / name).is_dir():
            shutil.rmtree(target / name)
        os.replace(staging / name, target / name)
        paths[name] = target / name
    return paths


def _link_tree(source: str | os.PathLike[str], target: Path) -> None:
    """``source``'s files in a new folder ``target``: hard links where both are on one file
    system (no bytes copied: ten million records' shards are gigabytes), copies elsewhere."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:  # another file system, or one without hard links
            shutil.copy2(src, dst)

    shutil.copytree(source, target, copy_function=link)


def write_records(rows: RecordRows | None, path: Path) -> None:
    """records.jsonl: with many records on an idle two-core Linux machine, the second half of
    the lines made and written by a forked child process into a file of its own while this
    process writes the first half (:func:`pingce._halves.in_halves` decides; the lines of a
    record depend on that record alone), then appended (by the kernel, without a copy through
    Python). The bytes are those of one process writing every line."""
    if rows is None:
        path.write_bytes(b"")
        return

    def write(part: Sequence[int]) -> str:
        start, stop = (part[0], part[-1] + 1) if len(part) else (0, 0)
        name = f"{path.name}.{start}-{stop}"
        with open(path.with_name(name), "wb") as handle:
            for text in rows.iter_jsonl(start=start, stop=stop):
                handle.write(text)
        return name

    first, *rest = in_halves(write, range(rows.n))
    os.replace(path.with_name(first), path)
    for name in rest:
        with open(path, "r+b") as whole, open(path.with_name(name), "rb") as part:
            whole.seek(0, os.SEEK_END)
            if not _copied_in_kernel(part, whole):
                shutil.copyfileobj(part, whole)
        os.remove(path.with_name(name))


def _copied_in_kernel(source: BinaryIO, target: BinaryIO) -> bool:
    """Append all of ``source`` at ``target``'s position with ``os.copy_file_range`` (no copy
    through Python); False, with nothing written, where it is not available."""
    copy = getattr(os, "copy_file_range", None)
    if copy is None:
        return False
    size = os.fstat(source.fileno()).st_size
    done = 0
    try:
        while done < size:
            sent = copy(source.fileno(), target.fileno(), size - done, done)
            if sent == 0:
                raise OSError("copy_file_range copied nothing")
            done += sent
    except OSError:
        if done:
            raise
        return False
    return True


def write_comparison(
    result: ComparisonResult,
    out: str | os.PathLike[str],
    *,
    candidate: RecordRows | None = None,
    baseline: RecordRows | None = None,
) -> Path:
    """Write comparison.json, its page comparison.html and comparison.md into ``out`` and return
    the path of comparison.json. All are made first, in a staging folder, and renamed into place
    only then (a failure: an :class:`~pingce.errors.OutputError`, nothing left). The page lists
    the records that flipped when both sides' per-record rows are given (by default, those
    attached to the result: :attr:`ComparisonResult.records`)."""
    if candidate is None and baseline is None and result.records is not None:
        candidate, baseline = result.records
    target = Path(out)
    with output_place(target), staged(target) as staging:
        (staging / "comparison.json").write_text(result.to_json() + "\n", encoding="utf-8")
        page = render_comparison_html(result, candidate, baseline)
        (staging / "comparison.html").write_bytes(page.encode("utf-8"))
        (staging / "comparison.md").write_text(render_comparison_markdown(result), encoding="utf-8")
        for name in ("comparison.json", "comparison.html", "comparison.md"):
            os.replace(staging / name, target / name)
    return target / "comparison.json"
