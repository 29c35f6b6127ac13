"""Golden outputs: every bundled example run, compared and run on Ray gives the numbers and files
it gave when these were taken (before issue 29's rework of the engine, the run folder and the
options), byte for byte where the format is ours.

What is compared, for each case under ``tests/golden/<engine>/<case>/``:

- ``results.json`` (or ``comparison.json``) as JSON, every value equal (floats to 12 significant
  digits: the bootstrap's sums by BLAS may round in the last bits otherwise on another CPU),
  with what differs by machine or release left out (``pingce_version``, ``signature.versions``)
  and paths written from ``<examples>`` and ``<tmp>`` (the test's folder);
- ``records.jsonl`` byte for byte (a Ray run's ``records/`` shards as their rows);
- ``stats.npz`` (a Ray run's ``stats/*.npz``) array by array: the same names, dtypes, shapes and
  values (the zip's own timestamps aside).

Every example's similarity is lexical, so no model's floating point is pinned. To take the
goldens anew, only when a change of numbers is intended and said so in the commit:
``PINGCE_GOLDEN=write pytest tests/test_golden.py``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .cli_run import run_pingce

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GOLDEN = Path(__file__).resolve().parent / "golden"
WRITE = os.environ.get("PINGCE_GOLDEN") == "write"

RUNS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "contract-risk": ("contract-risk", "contract_risk", ()),
    "contract-risk-sliced": ("contract-risk", "contract_risk", ("--slice", "contract_type")),
    "function-call": ("function-call", "function_call", ()),
    "function-call-hf": ("function-call-hf", "function_call_hf", ()),
    "function-points": ("function-points", "function_points", ()),
    "tcm-dialogue": ("tcm-dialogue", "tcm_dialogue", ()),
    "tool-use": ("tool-use", "tool_use", ()),
}
"""Each golden run: the suite, its example folder, extra options (the defaults otherwise)."""

VOLATILE = (("pingce_version",), ("signature", "versions"))


def _normal(text: str, tmp: Path) -> dict[str, Any]:
    """A written JSON document without what differs by machine or release, its paths written
    from ``<examples>`` and ``<tmp>`` (the test's folder)."""
    for root, name in ((tmp, "<tmp>"), (EXAMPLES, "<examples>")):
        text = text.replace(json.dumps(str(root))[1:-1], name)
    document: dict[str, Any] = json.loads(text)
    for path in VOLATILE:
        holder = document
        for key in path[:-1]:
            holder = holder.get(key) or {}
        holder.pop(path[-1], None)
    return document


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as saved:
        return {name: saved[name] for name in saved.files}


def _same_arrays(got: Path, want: Path) -> None:
    a, b = _arrays(got), _arrays(want)
    assert sorted(a) == sorted(b), (got, sorted(a), sorted(b))
    for name in a:
        assert a[name].dtype == b[name].dtype and a[name].shape == b[name].shape, (got, name)
        assert np.array_equal(a[name], b[name], equal_nan=a[name].dtype.kind in "fc"), (got, name)


def _check(kind: str, got: Path, golden: Path, tmp: Path) -> None:
    """The files of output folder ``got`` (``kind``: run or comparison) against ``golden``."""
    document = "results.json" if kind == "run" else "comparison.json"
    written = _normal((got / document).read_text("utf-8"), tmp)
    records = _record_lines(got) if kind == "run" else None
    stats = _stats_files(got) if kind == "run" else []
    if WRITE:
        shutil.rmtree(golden, ignore_errors=True)
        golden.mkdir(parents=True)
        text = json.dumps(written, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
        (golden / document).write_text(text, "utf-8")
        if records is not None:
            (golden / "records.jsonl").write_bytes(records)
        for name, path in stats:
            (golden / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, golden / name)
        return
    assert golden.is_dir(), f"no golden outputs at {golden}: PINGCE_GOLDEN=write takes them"
    want = json.loads((golden / document).read_text("utf-8"))
    _same_json(written, want, document)
    if records is not None:
        assert records == (golden / "records.jsonl").read_bytes(), f"{got}: records differ"
    names = sorted(name for name, _ in stats)
    kept = sorted(str(p.relative_to(golden)) for p in golden.rglob("*.npz"))
    assert names == kept, (names, kept)
    for name, path in stats:
        _same_arrays(path, golden / name)


def _same_json(got: Any, want: Any, where: str) -> None:
    """Equal JSON, naming the first path that differs (floats to 12 significant digits)."""
    if isinstance(want, dict) and isinstance(got, dict):
        assert sorted(got) == sorted(want), (where, sorted(set(got) ^ set(want)))
        for key in want:
            _same_json(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list) and isinstance(got, list):
        assert len(got) == len(want), (where, len(got), len(want))
        for k, (a, b) in enumerate(zip(got, want, strict=True)):
            _same_json(a, b, f"{where}[{k}]")
    elif isinstance(want, float) and isinstance(got, float):
        # to the last bits: a sum by BLAS (the bootstrap) may round otherwise on another CPU
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-300), (where, got, want)
    else:
        assert got == want and type(got) is type(want), (where, got, want)


def _record_lines(folder: Path) -> bytes:
    """records.jsonl's bytes, or a Ray run's record shards as JSON lines."""
    if (folder / "records.jsonl").is_file():
        return (folder / "records.jsonl").read_bytes()
    from pingce.runfolder.records import read_record_shards

    rows = read_record_shards(folder / "records").iter_rows()
    return b"".join(
        json.dumps(row, ensure_ascii=False, sort_keys=True).encode() + b"\n" for row in rows
    )


def _stats_files(folder: Path) -> list[tuple[str, Path]]:
    if (folder / "stats.npz").is_file():
        return [("stats.npz", folder / "stats.npz")]
    return [(f"stats/{p.name}", p) for p in sorted((folder / "stats").glob("*.npz"))]


def _run(case: str, out: Path, *more: str) -> Path:
    suite, example, extra = RUNS[case]
    data = EXAMPLES / example / "records.jsonl"
    done = run_pingce(
        *["run", suite, "--data", str(data), "--out", str(out)],
        *["--no-store", "--no-cache", "--no-progress", *extra, *more],
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("case", sorted(RUNS))
def test_every_example_gives_its_golden_outputs(case: str, tmp_path: Path) -> None:
    _check("run", _run(case, tmp_path / "out"), GOLDEN / "local" / case, tmp_path)


def _baseline(tmp_path: Path) -> Path:
    """contract-risk's example records with every third prediction the gold level, every
    fifth one level off: a second system over the same ids."""
    lines = (EXAMPLES / "contract_risk" / "records.jsonl").read_text("utf-8").splitlines()
    scale = ["低", "中", "高"]
    rows = []
    for k, line in enumerate(lines):
        record = json.loads(line)
        if k % 3 == 0:
            record["pred_level"] = record["gold_level"]
        elif k % 5 == 0:
            record["pred_level"] = scale[(scale.index(record["gold_level"]) + 1) % 3]
        record["latency_sec"] = round(record.get("latency_sec") or 1.0, 3) + 0.25
        rows.append(json.dumps(record, ensure_ascii=False))
    path = tmp_path / "baseline.jsonl"
    path.write_text("\n".join(rows) + "\n", "utf-8")
    return path


def test_a_comparison_of_two_files_gives_its_golden_outputs(tmp_path: Path) -> None:
    data = EXAMPLES / "contract_risk" / "records.jsonl"
    out = tmp_path / "compared"
    done = run_pingce(
        *["compare", "contract-risk", "--data", str(data), "--baseline", str(_baseline(tmp_path))],
        *["--out", str(out), "--slice", "contract_type", "--no-progress"],
    )
    assert done.returncode == 0, done.stderr
    _check("comparison", out, GOLDEN / "local" / "compare-files", tmp_path)


def test_a_comparison_of_two_run_folders_gives_its_golden_outputs(tmp_path: Path) -> None:
    a = _run("contract-risk-sliced", tmp_path / "a")
    suite_data = _baseline(tmp_path)
    done = run_pingce(
        *["run", "contract-risk", "--data", str(suite_data), "--out", str(tmp_path / "b")],
        *["--no-store", "--no-cache", "--no-progress", "--slice", "contract_type"],
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "compared"
    done = run_pingce("compare", str(a), str(tmp_path / "b"), "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    _check("comparison", out, GOLDEN / "local" / "compare-runs", tmp_path)


# ---------------------------------------------------------------------------------- on Ray


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """A local Ray cluster for this module's Ray runs, shut down after them."""
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


@pytest.mark.parametrize("case", sorted(RUNS))
def test_every_example_on_ray_gives_its_golden_outputs(
    ray_cluster: Any, case: str, tmp_path: Path
) -> None:
    import pingce
    import pingce.report

    suite, example, extra = RUNS[case]
    data = EXAMPLES / example / "records.jsonl"
    options: dict[str, Any] = {"bootstrap": 200, "seed": 3}
    if extra:
        options["slices"] = (extra[1],)
    shards = _shards(data, tmp_path / "shards", "dialogue_id" if suite == "tcm-dialogue" else None)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    result = pingce.evaluate(suite, shards, engine="ray", ray_scratch=str(scratch), **options)
    out = tmp_path / "out"
    pingce.report.write_outputs(result, out)
    _check("run", out, GOLDEN / "ray" / case, tmp_path)


def _shards(data: Path, folder: Path, unit: str | None) -> str:
    """``data`` dealt into three files (a glob), each unit whole in one: the pieces merge."""
    rows = [json.loads(line) for line in data.read_text("utf-8").splitlines()]
    folder.mkdir()
    keys = [r[unit] if unit else k for k, r in enumerate(rows)]
    units = list(dict.fromkeys(keys))
    for k in range(3):
        mine = set(units[k::3])
        text = "".join(
            json.dumps(r, ensure_ascii=False) + "\n"
            for r, key in zip(rows, keys, strict=True)
            if key in mine
        )
        (folder / f"part-{k}.jsonl").write_text(text, "utf-8")
    return str(folder / "part-*.jsonl")
