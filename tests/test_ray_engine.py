"""The distributed engine (issue 16): shards whose statistics add up give the local engine's
numbers, and ``--engine ray`` runs them on Ray Data.

The first half needs no Ray: the files are cut into pieces, each piece is scored by
:func:`pingce.engine.merge.run_shard` and the pieces' contributions are merged, in any number of
pieces. The second half runs the same on a local Ray cluster, started once for the session."""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
import pingce.report
import pingce.runfolder.records as record_shards
from pingce.engine.merge import (
    finish,
    jackknife_pass,
    merge_shards,
    needs_jackknife_pass,
    run_shard,
    scope_finalised_numbers,
)
from pingce.engine.phases import plan_run
from pingce.engine.shards import count_lines, expand_paths, number_pieces, open_piece, plan_pieces
from pingce.errors import InputError, OptionError
from pingce.options import RunOptions
from pingce.runfolder.layout import part_files

from .cli_run import run_pingce

EXAMPLES = Path(pingce.__file__).resolve().parent / "examples"

SUITES = {  # every built-in suite, on its example records (judge-free similarities)
    "contract-risk": (EXAMPLES / "contract_risk" / "records.jsonl", {"slices": ("contract_type",)}),
    "function-call": (EXAMPLES / "function_call" / "records.jsonl", {}),
    "function-call-hf": (EXAMPLES / "function_call_hf" / "records.jsonl", {}),
    "function-points": (
        EXAMPLES / "function_points" / "records.jsonl",
        {"similarity": "lexical"},
    ),
    "tcm-dialogue": (EXAMPLES / "tcm_dialogue" / "records.jsonl", {"similarity": "exact"}),
    "tool-use": (EXAMPLES / "tool_use" / "records.jsonl", {}),
}
TOL = 1e-12


def close(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two JSON-like values differ by more than TOL (relative, for numbers)."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return []
        return [] if abs(a - b) <= TOL * max(1.0, abs(a), abs(b)) else [f"{path}: {a} != {b}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(set(a) ^ set(b))}"]
        return [d for k in a for d in close(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: lengths {len(a)} != {len(b)}"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in close(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def sharded(suite: str, data: Path | str, options: RunOptions, pieces: int) -> dict[str, Any]:
    """The run from ``pieces`` pieces of the files, merged without Ray (the driver's steps)."""
    plan = plan_run(suite, options)
    paths = expand_paths(str(data))
    size = sum(os.path.getsize(p) for p in paths)
    cut = plan_pieces(paths, max(1, size // pieces), whole_files=plan.unit is not None)
    cut = number_pieces(cut, [count_lines(p) for p in cut])
    outs = [run_shard(plan, open_piece(plan, p), file=p.file) for p in cut]
    merged = merge_shards(shard for shard, _ in outs)
    moments: dict[tuple[str, str], np.ndarray] = {}
    if needs_jackknife_pass(plan, merged):
        totals = {
            name: {k: b.total() for k, b in scope.blocks.items() if b.decomposable}
            for name, scope in merged.scopes.items()
        }
        values = {
            name: scope_finalised_numbers(plan, scope) for name, scope in merged.scopes.items()
        }
        for _, blocks in outs:
            assert blocks is not None
            for key, value in jackknife_pass(plan, blocks, totals, values).items():
                moments[key] = moments[key] + value if key in moments else value
    metrics, tables, slices = finish(plan, merged, moments)
    return {
        "n": merged.n,
        "pieces": len(cut),
        "metrics": {k: v.model_dump() for k, v in metrics.items()},
        "tables": tables,
        "slices": {k: v.model_dump() for k, v in slices.items()},
        "failures": dict(merged.failures),
        "notes": merged.notes,
    }


def summary(result: Any) -> dict[str, Any]:
    """What the engines must agree on, as plain data."""
    return {
        "n": result.n_records,
        "metrics": {k: v.model_dump() for k, v in result.metrics.items()},
        "tables": result.tables,
        "slices": {k: v.model_dump() for k, v in result.slices.items()},
        "failures": result.failures.model_dump(),
        "notes": result.notes,
    }


def local(suite: str, data: Path, **options: Any) -> dict[str, Any]:
    return summary(pingce.evaluate(suite, data, bootstrap_method="poisson", **options))


def assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Equal to 1e-12. BCa's bias correction counts the resamples below the estimate, so when
    a resample ties with it and the two engines' sums of fractional statistics round the
    estimate one ulp apart (pieces are summed, then merged), z0 differs: such a metric's BCa
    ends are not compared (its value and its percentile interval are, in the percentile runs)."""
    for part in ("n", "metrics", "tables", "slices", "failures"):
        x, y = a[part], b[part]
        if part in ("metrics", "slices"):
            x, y = _without_ulp_ties(x, y), _without_ulp_ties(y, x)
        assert not close(x, y, part), close(x, y, part)[:5]


def _without_ulp_ties(mine: Any, other: Any) -> Any:
    if isinstance(mine, dict) and "value" in mine and "ci_low" in mine:
        value, theirs = mine["value"], other.get("value")
        if value is not None and theirs is not None and value != theirs:
            assert abs(value - theirs) <= 4 * np.spacing(abs(value))  # rounding only
            return {k: v for k, v in mine.items() if k not in ("ci_low", "ci_high", "ci_note")}
        return mine
    if isinstance(mine, dict):
        return {k: _without_ulp_ties(v, other.get(k, {})) for k, v in mine.items()}
    return mine


def by_unit(suite: str, data: Path, folder: Path, files: int = 3) -> str:
    """A unit suite's records written into ``files`` files, each unit whole in one of them (a
    glob of them returned)."""
    plan = plan_run(suite, RunOptions())
    assert plan.unit is not None
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    units = list(dict.fromkeys(json.loads(line)[plan.unit] for line in lines))
    for k in range(files):
        mine = set(units[k::files])
        text = "".join(line for line in lines if json.loads(line)[plan.unit] in mine)
        (folder / f"units-{k}.jsonl").write_text(text, encoding="utf-8")
    return str(folder / "units-*.jsonl")


def dealt(data: Path, folder: Path, files: int) -> Path:
    """The lines of ``data`` dealt into ``files`` files ``part-K.jsonl`` of a new ``folder``."""
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    folder.mkdir()
    for k in range(files):
        (folder / f"part-{k}.jsonl").write_text("".join(lines[k::files]), encoding="utf-8")
    return folder


# ------------------------------------------------------------------------- without Ray


@pytest.mark.parametrize("suite", sorted(SUITES))
@pytest.mark.parametrize("ci_method", ["bca", "percentile"])
def test_merged_pieces_give_the_local_engines_numbers(
    suite: str, ci_method: str, tmp_path: Path
) -> None:
    """Every built-in suite: its example file cut into 5 pieces (a unit suite's into files of
    whole dialogues), each scored alone, merged: values, intervals (Poisson, same seed),
    tables, slices and failures equal the local run's."""
    data, extra = SUITES[suite]
    options = {"bootstrap": 200, "seed": 4, "ci_method": ci_method, **extra}
    want = local(suite, data, **options)
    shards = by_unit(suite, data, tmp_path) if suite == "tcm-dialogue" else data
    got = sharded(suite, shards, RunOptions(bootstrap_method="poisson", **options), 5)
    assert got["pieces"] >= 3
    assert_same(got, want)
    assert any(m["ci_low"] is not None for m in got["metrics"].values())
    # the pieces' notes read as the whole run's (a note counting records adds the counts)
    assert set(got["notes"]) <= set(want["notes"]), (got["notes"], want["notes"])


def test_poisson_intervals_are_the_same_for_1_3_and_17_pieces() -> None:
    data, extra = SUITES["contract-risk"]
    options = RunOptions(bootstrap=300, seed=9, bootstrap_method="poisson", **extra)
    runs = [sharded("contract-risk", data, options, k) for k in (1, 3, 17)]
    assert next(r["pieces"] for r in runs) == 1 and runs[2]["pieces"] >= 15
    for other in runs[1:]:
        assert_same(other, runs[0])


def off_scale_records(path: Path, n: int = 90) -> Path:
    """contract-risk records, every third prediction off the scale, blank or null."""
    levels, off = ["高", "中", "低"], ["medium-high", "", None]
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            pred = off[(i // 3) % 3] if i % 3 == 0 else levels[(i * 7) % 3]
            record = {"id": f"r{i}", "gold_level": levels[i % 3], "pred_level": pred}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def test_merged_pieces_count_predictions_off_the_scale(tmp_path: Path) -> None:
    """Each piece counts its predictions off the scale; the merge adds them up: failures,
    values, intervals and the confusion matrix's invalid column equal the local run's."""
    data = off_scale_records(tmp_path / "off.jsonl")
    options = {"bootstrap": 200, "seed": 2}
    want = local("contract-risk", data, **options)
    got = sharded("contract-risk", data, RunOptions(bootstrap_method="poisson", **options), 5)
    assert got["pieces"] >= 3
    assert_same(got, want)
    assert got["failures"]["invalid_prediction"] == 30
    assert got["tables"]["confusion_matrix"]["columns"][-1] == "(invalid)"


def test_pieces_keep_line_numbers_in_errors(tmp_path: Path) -> None:
    """A bad record in the third piece is reported at its line of the whole file."""
    data, _ = SUITES["contract-risk"]
    lines = data.read_text(encoding="utf-8").splitlines()
    good = lines[40]
    bad = json.loads(lines[40])
    bad["gold_level"] = "极高"
    lines[40] = json.dumps(bad, ensure_ascii=False)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    plan = plan_run("contract-risk", RunOptions())
    pieces = plan_pieces([str(path)], path.stat().st_size // 6)
    pieces = number_pieces(pieces, [count_lines(p) for p in pieces])
    with pytest.raises(InputError) as raised:
        for piece in pieces:
            run_shard(plan, open_piece(plan, piece))
    assert raised.value.line == 41 and raised.value.source == str(path)
    assert "极高" in str(raised.value)
    # a file in another encoding: the pieces read UTF-8 only, and say how to go on (the
    # local engine's advice, --encoding, is refused by --engine ray)
    lines[40] = good
    path.write_bytes(("\n".join(lines) + "\n").encode("gb18030"))
    pieces = plan_pieces([str(path)], path.stat().st_size // 6)
    pieces = number_pieces(pieces, [count_lines(p) for p in pieces])
    with pytest.raises(InputError) as raised:
        for piece in pieces:
            run_shard(plan, open_piece(plan, piece))
    assert raised.value.line == 1 and "not UTF-8 text" in str(raised.value)
    assert "iconv -f GB18030 -t UTF-8" in str(raised.value) and "--encoding" in str(raised.value)
    assert pingce.evaluate("contract-risk", path, bootstrap=0).n_records == 60  # locally: read


def test_parquet_files_are_cut_at_row_groups(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    data, extra = SUITES["contract-risk"]
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    keep = ("id", "contract_type", "gold_level", "pred_level", "latency_sec")
    table = pa.Table.from_pylist([{k: r.get(k) for k in keep} for r in rows])
    path = tmp_path / "records.parquet"
    pq.write_table(table, path, row_group_size=7)
    options = {"bootstrap": 100, "seed": 2, **extra}
    pieces = plan_pieces([str(path)], 1)
    assert len(pieces) == math.ceil(len(rows) / 7) and pieces[1].first == 8
    got = sharded("contract-risk", path, RunOptions(bootstrap_method="poisson", **options), 9)
    assert_same(got, local("contract-risk", path, **options))


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_stats_shards_join_into_the_local_runs_saved_statistics(suite: str, tmp_path: Path) -> None:
    """Each piece's stats.npz (what a ray run keeps for ``pingce compare``), joined, holds the
    local run's saved statistics record for record: the same codes or rows, masks, failure
    counts and slice values for each record (paired by id, or by the suite's match_by fields),
    each unit whole; and a comparison of the two is exactly 0."""
    from pingce.engine.saved import saved_blocks
    from pingce.engine.stored_runs import compare_runs, pair_records
    from pingce.runfolder.stats import read_stat_shards

    data, extra = SUITES[suite]
    slices = ("contract_type",) if suite == "contract-risk" else ()
    options = RunOptions(bootstrap=0, bootstrap_method="poisson", **extra)
    plan = plan_run(suite, options)
    files = by_unit(suite, data, tmp_path) if suite == "tcm-dialogue" else str(data)
    paths = expand_paths(files)
    cut = plan_pieces(paths, max(1, data.stat().st_size // 5), whole_files=plan.unit is not None)
    cut = number_pieces(cut, [count_lines(p) for p in cut])
    assert len(cut) >= 3
    for k, piece in enumerate(cut):
        run_shard(plan, open_piece(plan, piece), stats_to=str(tmp_path / f"part-{k:05d}.npz"))
    joined = read_stat_shards(tmp_path)
    result = pingce.evaluate(suite, data, bootstrap=0, **extra)
    assert result.outputs is not None
    want = result.outputs.stats
    assert want is not None and joined.manifest["n"] == want.manifest["n"]
    pairing = pair_records(joined, want)  # also: each unit holds the same records in both
    assert pairing.candidate.shape[0] == want.manifest["n"] and not pairing.only_baseline
    if plan.unit is not None:  # numbered as one table's units are
        np.testing.assert_array_equal(
            joined.arrays["units"][pairing.candidate], want.arrays["units"][pairing.baseline]
        )
    mine, theirs = saved_blocks(joined, plan), saved_blocks(want, plan)
    for key, block in theirs.items():
        got = mine[key].take(pairing.candidate)
        expected = block.take(pairing.baseline)
        assert got.width == expected.width and mine[key].counts == block.counts, key
        for part in ("codes", "rows", "scope", "unparsed"):
            a, b = getattr(got, part), getattr(expected, part)
            assert (a is None) == (b is None) or part in ("scope", "unparsed"), (key, part)
            if a is not None and b is not None:
                np.testing.assert_array_equal(a, b, err_msg=f"{key} {part}")
    for path in slices:
        names = [
            np.asarray(s.manifest["slices"][path])[s.arrays[f"slice.{path}"]]
            for s in (joined, want)
        ]
        np.testing.assert_array_equal(names[0][pairing.candidate], names[1][pairing.baseline])
    twin = pingce.evaluate(suite, data, bootstrap=0, **extra)
    assert twin.outputs is not None
    twin = twin.with_outputs(dataclasses.replace(twin.outputs, saved=joined))
    compared = compare_runs(twin, result, RunOptions(bootstrap=50, **extra))
    deltas = [m.delta for m in compared.metrics.values() if m.delta is not None]
    assert deltas and all(d == 0 for d in deltas)


def test_globs_name_their_files_and_a_glob_without_files_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("b.jsonl", "a.jsonl", "c.txt", "run[1].jsonl", "run1.jsonl"):
        (tmp_path / name).write_text("{}\n", encoding="utf-8")
    assert expand_paths(str(tmp_path / "*.jsonl")) == [
        str(tmp_path / "a.jsonl"),
        str(tmp_path / "b.jsonl"),
        str(tmp_path / "run1.jsonl"),
        str(tmp_path / "run[1].jsonl"),
    ]
    with pytest.raises(InputError, match="no file matches"):
        expand_paths(str(tmp_path / "*.parquet"))
    # a file named like a pattern is that file
    assert expand_paths(str(tmp_path / "run[1].jsonl")) == [str(tmp_path / "run[1].jsonl")]
    # one file however it is spelled is read once
    monkeypatch.chdir(tmp_path)
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "a.jsonl")
    given = ["a.jsonl", "./a.jsonl", str(tmp_path / "a.jsonl"), "link.jsonl", "*.jsonl"]
    assert expand_paths(given) == ["a.jsonl", "b.jsonl", "run1.jsonl", "run[1].jsonl"]
    with pytest.raises(InputError, match=r"a folder, not a file: name its files with a pattern"):
        expand_paths(str(tmp_path))


def test_shards_are_read_in_piece_order_past_five_digits(tmp_path: Path) -> None:
    for i in (3, 100001, 99999, 100000, 10001):
        (tmp_path / f"part-{i:05d}.npz").write_bytes(b"")
    (tmp_path / "part-00007.parquet").write_bytes(b"")
    names = [p.name for p in part_files(tmp_path, ".npz")]
    assert names == [f"part-{i:05d}.npz" for i in (3, 10001, 99999, 100000, 100001)]


def test_records_without_ids_in_several_files_are_keyed_by_file_and_line(tmp_path: Path) -> None:
    """Line N of each file is another record: two copies of a file (no ids) weigh their records
    independently in the Poisson bootstrap, so the doubled data's intervals are narrower than
    one copy's, with the same values (before: line N of both files shared one weight, and the
    doubled data gave one copy's intervals exactly)."""
    data, _ = SUITES["contract-risk"]
    text = "".join(
        json.dumps({k: v for k, v in json.loads(line).items() if k != "id"}) + "\n"
        for line in data.read_text(encoding="utf-8").splitlines()
    )
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text(text, encoding="utf-8")
    options = RunOptions(bootstrap=400, seed=2, ci_method="percentile", bootstrap_method="poisson")
    one = sharded("contract-risk", tmp_path / "a.jsonl", options, 2)
    two = sharded("contract-risk", tmp_path / "*.jsonl", options, 4)
    assert two["n"] == 2 * one["n"] == 120
    narrower = 0
    for name, metric in one["metrics"].items():
        doubled = two["metrics"][name]
        if (name.startswith("p") and name.endswith("latency_sec")) or metric["ci_low"] is None:
            continue  # percentiles of a doubled sample move; intervals without a value
        assert doubled["value"] == pytest.approx(metric["value"], rel=1e-12), name
        width = metric["ci_high"] - metric["ci_low"]
        narrower += doubled["ci_high"] - doubled["ci_low"] < 0.95 * width
    assert narrower >= 15  # about 1/sqrt(2) as wide
    # one file keeps the local engine's keys (line N): the same intervals as a local run
    local_one = local(
        "contract-risk", tmp_path / "a.jsonl", bootstrap=400, seed=2, ci_method="percentile"
    )
    assert_same(one, local_one)


def test_the_local_engine_says_how_to_read_shards_instead_of_no_such_file(tmp_path: Path) -> None:
    """A glob, a folder or a list of files given to the local engine (the default) is an error
    that says what reads them, not "no such file"; a glob that matches nothing says so."""
    data, _ = SUITES["contract-risk"]
    shards = dealt(data, tmp_path / "shards", 3)
    out = tmp_path / "out"
    done = run_pingce(
        *["run", "contract-risk", "--data", str(shards / "*.jsonl"), "--out", str(out)],
        "--no-store",
    )
    assert done.returncode == 2
    assert "a pattern of 3 file(s)" in done.stderr and "--engine ray" in done.stderr
    assert "no such file" not in done.stderr and not out.exists()
    folder = run_pingce("run", "contract-risk", "--data", str(shards), "--out", str(out))
    assert folder.returncode == 2 and not out.exists()
    assert "a folder, not a file: name its files with a pattern" in folder.stderr
    with pytest.raises(
        InputError,
        match=r"a folder, not a file: name its files with a pattern \(FOLDER/\*\.jsonl\); the",
    ):
        pingce.evaluate("contract-risk", shards, bootstrap=0)
    with pytest.raises(OptionError, match="a list of 2 file names; the local engine reads one"):
        pingce.evaluate("contract-risk", sorted(shards.glob("*.jsonl"))[:2], bootstrap=0)
    with pytest.raises(InputError, match="no file matches this pattern"):
        pingce.evaluate("contract-risk", str(shards / "*.parquet"), bootstrap=0)
    with pytest.raises(InputError, match="no such file"):
        pingce.evaluate("contract-risk", str(shards / "part-9.jsonl"), bootstrap=0)


def test_ray_options_are_checked_before_ray_starts() -> None:
    with pytest.raises(OptionError, match="--ray-address needs --engine ray"):
        pingce.evaluate("contract-risk", SUITES["contract-risk"][0], ray_address="auto")
    with pytest.raises(OptionError, match="--sample is not available with --engine ray"):
        pingce.evaluate("contract-risk", SUITES["contract-risk"][0], engine="ray", sample=5)
    with pytest.raises(OptionError, match="--encoding gb18030: the ray engine reads UTF-8"):
        pingce.evaluate(
            "contract-risk", SUITES["contract-risk"][0], engine="ray", encoding="gb18030"
        )
    with pytest.raises(OptionError, match="--ray-scratch needs --engine ray"):
        pingce.evaluate("contract-risk", SUITES["contract-risk"][0], ray_scratch="/tmp")
    with pytest.raises(OptionError, match="--ray-scratch /no/such/folder: no such folder"):
        pingce.evaluate(
            "contract-risk", SUITES["contract-risk"][0], engine="ray", ray_scratch="/no/such/folder"
        )
    with pytest.raises(OptionError, match="--engine must be"):
        pingce.evaluate("contract-risk", SUITES["contract-risk"][0], engine="spark")


# ---------------------------------------------------------------------------- with Ray


@pytest.fixture(scope="module")
def ray_cluster() -> Any:
    """A local Ray cluster, started once (only this module uses it) and shut down after it,
    so that no other test sees its processes."""
    import ray

    if not ray.is_initialized():
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    yield ray
    ray.shutdown()


def ray_run(suite: str, data: Any, **options: Any) -> dict[str, Any]:
    result = pingce.evaluate(suite, data, engine="ray", **options)
    assert result.signature.model_dump()["engine"] == "ray"
    assert result.signature.bootstrap_method == "poisson"
    return summary(result)


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_every_suite_on_ray_equals_the_local_engine(
    ray_cluster: Any, suite: str, tmp_path: Path
) -> None:
    data, extra = SUITES[suite]
    options = {"bootstrap": 200, "seed": 1, **extra}
    shards = by_unit(suite, data, tmp_path) if suite == "tcm-dialogue" else data
    assert_same(ray_run(suite, shards, **options), local(suite, data, **options))


def test_ray_counts_predictions_off_the_scale_as_the_local_engine(
    ray_cluster: Any, tmp_path: Path
) -> None:
    data = off_scale_records(tmp_path / "off.jsonl")
    options = {"bootstrap": 200, "seed": 2}
    got = ray_run("contract-risk", data, **options)
    assert got["failures"]["invalid_prediction"] == 30
    assert_same(got, local("contract-risk", data, **options))


def test_ray_reads_parquet_files_by_row_groups(ray_cluster: Any, tmp_path: Path) -> None:
    """Two Parquet files of row groups of 7 records (cut into pieces at row groups, read by
    the workers): the local run's numbers on the same records in one JSONL file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data, extra = SUITES["contract-risk"]
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    keep = ("id", "contract_type", "gold_level", "pred_level", "latency_sec")
    kept = [{f: r.get(f) for f in keep} for r in rows]
    for k in range(2):
        table = pa.Table.from_pylist(kept[k::2])
        pq.write_table(table, tmp_path / f"part-{k}.parquet", row_group_size=7)
    assert len(plan_pieces(expand_paths(str(tmp_path / "*.parquet")), 1)) == 2 * math.ceil(30 / 7)
    whole = tmp_path / "whole.jsonl"
    whole.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), "utf-8")
    # empty shards among them add nothing: a Parquet file of no row group, one of an empty
    # row group, a JSONL file of 0 bytes and one of blank lines
    schema = pa.Table.from_pylist(kept).schema
    pq.ParquetWriter(tmp_path / "part-2.parquet", schema).close()
    pq.write_table(schema.empty_table(), tmp_path / "part-3.parquet")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "blank.jsonl").write_bytes(b"\n \n")
    options = {"bootstrap": 150, "seed": 6, **extra}
    shards = [
        str(tmp_path / "*.parquet"),
        str(tmp_path / "empty.jsonl"),
        str(tmp_path / "blank.jsonl"),
    ]
    got = ray_run("contract-risk", shards, **options)
    assert got["n"] == len(rows)
    assert_same(got, local("contract-risk", whole, **options))
    # with nothing else, no records is an error, as for the local engine
    with pytest.raises(InputError, match="no records: every file is empty"):
        ray_run(
            "contract-risk", [str(tmp_path / "part-[23].parquet"), str(tmp_path / "blank.jsonl")]
        )
    with pytest.raises(InputError, match="no records: every file is empty"):
        ray_run("contract-risk", str(tmp_path / "empty.jsonl"))


def test_a_dialogue_in_two_shards_is_an_error(ray_cluster: Any, tmp_path: Path) -> None:
    data, extra = SUITES["tcm-dialogue"]
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "a.jsonl").write_text("".join(lines[:-1]), encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(lines[-1], encoding="utf-8")
    dialogue = json.loads(lines[-1])["dialogue_id"]
    with pytest.raises(InputError) as raised:
        ray_run("tcm-dialogue", str(tmp_path / "*.jsonl"), bootstrap=0, **extra)
    message = str(raised.value)
    assert repr(dialogue) in message and "a.jsonl" in message and "b.jsonl" in message


def test_ray_reads_a_glob_of_shards_and_checks_ids_across_them(
    ray_cluster: Any, tmp_path: Path
) -> None:
    data, extra = SUITES["contract-risk"]
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    shards = dealt(data, tmp_path / "shards", 3)
    options = {"bootstrap": 150, "seed": 3, **extra}
    got = ray_run("contract-risk", str(shards / "*.jsonl"), **options)
    want = local("contract-risk", data, **options)
    assert_same(got, want)  # ids key the Poisson weights: any order, any files
    # the same id in two shards is an error naming the id and both places
    (shards / "part-3.jsonl").write_text(lines[4], encoding="utf-8")
    with pytest.raises(InputError) as raised:
        ray_run("contract-risk", str(shards / "*.jsonl"), **options)
    record = json.loads(lines[4])
    assert repr(record["id"]) in str(raised.value)
    assert "part-1.jsonl" in str(raised.value) and "part-3.jsonl" in str(raised.value)


def test_a_multinomial_request_on_ray_says_it_drew_poisson(ray_cluster: Any) -> None:
    data, extra = SUITES["contract-risk"]
    got = ray_run("contract-risk", data, bootstrap=100, bootstrap_method="multinomial", **extra)
    assert any("Poisson bootstrap" in note for note in got["notes"])


def test_the_command_line_runs_a_glob_on_ray(tmp_path: Path) -> None:
    data, _ = SUITES["contract-risk"]
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    for k in range(2):
        (tmp_path / f"part-{k}.jsonl").write_text("".join(lines[k::2]), encoding="utf-8")
    out, scratch = tmp_path / "out", tmp_path / "scratch"
    scratch.mkdir()
    done = run_pingce(
        *["run", "contract-risk", "--data", str(tmp_path / "part-*.jsonl")],
        *["--engine", "ray", "--bootstrap", "100", "--out", str(out), "--no-store"],
        *["--ray-scratch", str(scratch)],
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    # the workers' shards are in the outputs; the command ends the process at once (no
    # finaliser runs), so it removes their folder itself
    assert not any(scratch.iterdir()) and len(list((out / "records").iterdir())) == 2
    written = json.loads((out / "results.json").read_text(encoding="utf-8"))
    want = local("contract-risk", data, bootstrap=100)
    assert not close(
        {k: v["value"] for k, v in written["metrics"].items()},
        {k: v["value"] for k, v in want["metrics"].items()},
    )
    assert written["n_records"] == len(lines)


def test_ray_writes_per_record_values_as_parquet_shards_that_read_back(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """records/part-*.parquet hold what records.jsonl holds for a local run, record for record
    (ids, lines, fields, values, reasons); the report of the folder reads them back."""
    from pingce.runfolder.reader import read_run
    from pingce.runfolder.records import read_record_shards

    data, extra = SUITES["contract-risk"]
    ray_out, local_out, scratch = tmp_path / "ray", tmp_path / "local", tmp_path / "scratch"
    scratch.mkdir()
    result = pingce.evaluate(
        "contract-risk", str(data), engine="ray", bootstrap=0, ray_scratch=str(scratch), **extra
    )
    assert result.outputs is not None and result.outputs.record_shards is not None
    assert Path(result.outputs.record_shards).parent.parent == scratch  # the workers wrote there
    pingce.report.write_outputs(result, ray_out)
    # ray's shards keep the input fields: what a local run writes with --records-fields all
    fields = {"records_fields": "all"}
    pingce.evaluate("contract-risk", data, out=local_out, bootstrap=0, **fields, **extra)
    parts = sorted((ray_out / "records").glob("part-*.parquet"))
    assert parts and not (ray_out / "records.jsonl").exists()
    # the outputs are hard links to the workers' files (one file system): nothing copied
    assert all(p.stat().st_nlink == 2 for p in [*parts, *(ray_out / "stats").iterdir()])
    # copies share the shards: the folder goes with the last of them
    copies = [result.model_copy(), result.model_copy(deep=True)]
    del result
    gc.collect()
    for k, copy in enumerate(copies):
        pingce.report.write_outputs(copy, tmp_path / f"copy-{k}")
        assert len(list((tmp_path / f"copy-{k}" / "records").iterdir())) == len(parts)
    del copies, copy
    gc.collect()
    assert not any(scratch.iterdir())  # the scratch folder goes with the result
    assert all(p.stat().st_nlink == 3 for p in parts)  # the outputs and the copies' outputs
    want = [
        json.loads(line)
        for line in (local_out / "records.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    got = list(read_record_shards(ray_out / "records").iter_rows())
    assert len(got) == len(want) == 60
    for a, b in zip(got, want, strict=True):
        assert not close(json.loads(json.dumps(a)), b), close(a, b)
    again = read_run(ray_out)
    assert again.records is not None and again.records.n == 60
    # beyond RECORDS_IN_MEMORY records, pingce report leaves them in the shards, as the run did
    monkeypatch.setattr(record_shards, "RECORDS_IN_MEMORY", 59)
    assert read_run(ray_out).records is None
    monkeypatch.undo()
    # a local run written over the folder leaves no stale shards behind
    pingce.evaluate("contract-risk", data, out=ray_out, bootstrap=0, **extra)
    assert not (ray_out / "records").exists() and (ray_out / "records.jsonl").is_file()


def unit_files(records: list[dict[str, Any]], unit: str, folder: Path, files: int = 3) -> str:
    """``records`` written into ``files`` files, each unit whole in one of them (a glob)."""
    folder.mkdir(parents=True)
    units = list(dict.fromkeys(r[unit] for r in records))
    for k in range(files):
        mine = set(units[k::files])
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records if r[unit] in mine)
        (folder / f"part-{k}.jsonl").write_text(text, encoding="utf-8")
    return str(folder / "part-*.jsonl")


@pytest.mark.parametrize("suite", ["contract-risk", "tcm-dialogue"])
def test_pingce_compare_of_two_ray_runs_equals_the_comparison_of_their_record_files(
    ray_cluster: Any, suite: str, tmp_path: Path
) -> None:
    """A ray run keeps its statistics as one stats.npz a piece (``stats/``): ``pingce compare``
    of two ray runs' folders, and of a ray run with a local one, gives what the comparison of
    the record files gives (values, deltas, intervals, p-values, tests, slices), with the
    Poisson bootstrap both runs drew. tcm-dialogue's turns have no ids: they pair by the
    suite's match_by fields, each dialogue whole in one of three files."""
    from .test_compare_runs import (
        assert_same_comparison,
        comparison,
        contracts,
        dialogues,
        read,
        write,
    )

    if suite == "contract-risk":
        candidate, baseline = contracts(90, seed=2)
        sliced = ["--slice", "contract_type"]
        cand_data: Any = str(write(tmp_path / "cand.jsonl", candidate))
        base_data: Any = str(write(tmp_path / "base.jsonl", baseline))
        extra: dict[str, Any] = {"slices": ("contract_type",)}
    else:
        candidate, baseline = dialogues()
        sliced, extra = [], {"similarity": "exact"}
        cand_data = unit_files(candidate, "dialogue_id", tmp_path / "cand")
        base_data = unit_files(baseline, "dialogue_id", tmp_path / "base")
        # the record files hold the records in glob order: sums of fractional statistics
        # round by record order, which can move a BCa end near a tie by a resample
        candidate = [r for p in expand_paths(cand_data) for r in read(Path(p))]
        baseline = [r for p in expand_paths(base_data) for r in read(Path(p))]
    write(tmp_path / "cand-all.jsonl", candidate)
    write(tmp_path / "base-all.jsonl", baseline)
    similarity = ["--similarity", "exact"] if suite == "tcm-dialogue" else []
    for name, data in (("cand", cand_data), ("base", base_data)):
        pingce.evaluate(suite, data, out=tmp_path / f"ray-{name}", engine="ray", **extra)
        assert (tmp_path / f"ray-{name}" / "stats").is_dir()
        assert not (tmp_path / f"ray-{name}" / "stats.npz").exists()
    pingce.evaluate(suite, tmp_path / "base-all.jsonl", out=tmp_path / "local-base", **extra)
    args = ["--bootstrap", "300", "--seed", "5", "--bootstrap-method", "poisson", *sliced]
    files = run_pingce(
        "compare", suite, "--data", str(tmp_path / "cand-all.jsonl"), "--baseline",
        str(tmp_path / "base-all.jsonl"), "--out", str(tmp_path / "files"), *similarity, *args,
    )  # fmt: skip
    assert files.returncode == 0, files.stderr
    expected = comparison(tmp_path / "files")
    assert any(m["delta"] for m in expected["metrics"].values())
    for baseline_run in ("ray-base", "local-base"):
        done = run_pingce(
            "compare", str(tmp_path / "ray-cand"), str(tmp_path / baseline_run), "--out",
            str(tmp_path / f"vs-{baseline_run}"), *args,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        got = comparison(tmp_path / f"vs-{baseline_run}")
        assert_same_comparison(got, expected)
    # a local run written over a ray run's folder leaves no stale stats shards behind
    pingce.evaluate(suite, tmp_path / "cand-all.jsonl", out=tmp_path / "ray-cand", **extra)
    assert (tmp_path / "ray-cand" / "stats.npz").is_file()
    assert not (tmp_path / "ray-cand" / "stats").exists()


# ------------------------------------------------------------------- a judge on Ray


def judge_pairs(records: Path) -> set[tuple[str, str]]:
    from .test_similarity import asked_pairs, read_jsonl

    return set(asked_pairs(read_jsonl(records)))


def twice(data: Path, path: Path) -> Path:
    """``data``'s records, then again under other ids, in ``path``: every pair is needed twice,
    in different pieces."""
    text = data.read_text(encoding="utf-8")
    again = "".join(
        json.dumps({**json.loads(line), "id": json.loads(line)["id"] + "-b"}, ensure_ascii=False)
        + "\n"
        for line in text.splitlines()
    )
    path.write_text(text + again, encoding="utf-8")
    return path


def test_a_judge_on_ray_asks_each_distinct_pair_once_for_all_pieces(
    ray_cluster: Any, tmp_path: Path
) -> None:
    """The pairs of every piece are gathered and de-duplicated before any call; a pool of
    judge actors asks each once; the pieces then find every answer in the cache. The values
    equal the local engine's with the same judge."""
    from pingce.engine.context import RunContext
    from pingce.engine.distributed import run_on_ray

    from .loopback import LoopbackServer

    data, _ = SUITES["function-points"]
    doubled = twice(data, tmp_path / "twice.jsonl")
    options = {"similarity": "openai:m", "bootstrap": 0}
    with LoopbackServer(lifetime=120) as server:
        result = run_on_ray(
            "function-points",
            str(doubled),
            RunContext(
                RunOptions(base_url=server.url, cache=str(tmp_path / "c.sqlite3"), **options)
            ),
            piece_bytes=doubled.stat().st_size // 4,
        )
        asked = [r.pair for r in server.chat()]
        assert len(asked) == len(set(asked)) == len(judge_pairs(data)) == 36
        assert set(asked) == judge_pairs(data)
        assert result.similarity is not None and result.similarity["requests"] == 36
        server.reset()
        want = pingce.evaluate(
            "function-points",
            doubled,
            base_url=server.url,
            cache=str(tmp_path / "local.sqlite3"),
            **options,
        )
    assert not close(
        {k: v.value for k, v in result.metrics.items()},
        {k: v.value for k, v in want.metrics.items()},
    )


def test_a_pair_that_fails_on_ray_is_asked_as_often_as_locally_and_counted_once(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge that always fails one prediction's pairs (HTTP 500, one retry): the judge phase
    asks each pair with its retry and the pieces read the answers from the cache alone, so a
    failed pair is not asked again when its pieces are scored. Requests per pair, the judge
    failures (distinct pairs, each once though needed in several pieces) and every value equal
    the local run's against the same server. The suite's concurrency (4) is one limit over the
    judge actors: batches of 8 pairs make two actors, 2 calls each at a time."""
    from collections import Counter

    import pingce.engine.distributed as distributed
    from pingce.engine.context import RunContext
    from pingce.engine.distributed import run_on_ray

    monkeypatch.setattr(distributed, "JUDGE_BATCH", 8)

    from .loopback import Fault, LoopbackServer

    data, _ = SUITES["function-points"]
    doubled = twice(data, tmp_path / "twice.jsonl")
    suite = tmp_path / "fp.yaml"
    builtin = Path(pingce.__file__).parent / "suites" / "function-points.yaml"
    text = builtin.read_text(encoding="utf-8")
    suite.write_text(text.replace("concurrency: 16", "concurrency: 4\n  max_retries: 1"), "utf-8")
    options = {"similarity": "openai:m", "bootstrap": 0}
    with LoopbackServer(latency=0.05, lifetime=120) as server:
        server.rule = lambda r: Fault("500", 0) if r.x == "员工信息表" else None
        result = run_on_ray(
            str(suite),
            str(doubled),
            RunContext(
                RunOptions(base_url=server.url, cache=str(tmp_path / "c.sqlite3"), **options)
            ),
            piece_bytes=doubled.stat().st_size // 4,
        )
        on_ray = Counter(r.pair for r in server.chat())
        assert 2 <= server.max_in_flight <= 4, server.max_in_flight
        server.reset()
        want = pingce.evaluate(
            str(suite), doubled, base_url=server.url, cache=str(tmp_path / "l.sqlite3"), **options
        )
        locally = Counter(r.pair for r in server.chat())
    assert on_ray == locally
    assert sorted(set(on_ray.values())) == [1, 2]  # the failing pairs: asked and retried once
    assert result.failures.judge == want.failures.judge == 3
    assert result.similarity is not None and result.similarity["failures"] == 3
    got = {k: (v.value, v.undefined_reason) for k, v in result.metrics.items()}
    assert not close(got, {k: (v.value, v.undefined_reason) for k, v in want.metrics.items()})
    assert any(value is None for value, _ in got.values())  # withheld: a pair failed


def processes() -> dict[int, tuple[int, str]]:
    """Every live process: its parent and state (from /proc)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            out[int(entry.name)] = (int(fields[1]), fields[0])
    return out


def descendants(pid: int) -> set[int]:
    """The processes started by ``pid`` and by them (Ray's workers start sessions of their
    own, so the process group does not hold them)."""
    table = processes()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, (parent, _) in table.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> bool:
    table = processes()
    return any(p in table and table[p][1] != "Z" for p in pids)


def test_a_judge_run_on_ray_killed_halfway_resumes_without_asking_again(
    tmp_path: Path,
) -> None:
    """SIGKILL of the job (the driver and the Ray processes it started) while the judge actors
    wait on the server: the answers they got are in the cache, and the rerun asks only the
    rest (0 repeated calls)."""
    import signal
    import subprocess
    import time

    from .loopback import LoopbackServer
    from .test_similarity import cached_rows, cli_env, judge_run_args

    data, _ = SUITES["function-points"]
    pairs = judge_pairs(data)
    answered_first = 20
    env = cli_env(tmp_path / "cache")
    cache = tmp_path / "cache" / "similarity.sqlite3"
    with LoopbackServer(lifetime=300) as server:
        server.hold_after(answered_first)
        args = [*judge_run_args(server.url, tmp_path / "out1"), "--engine", "ray"]
        with subprocess.Popen(
            args,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # the run and the Ray processes it starts: one group
        ) as proc:
            deadline = time.monotonic() + 180
            while sum(r.answered for r in server.chat()) < answered_first:
                assert proc.poll() is None, proc.communicate()[1][-2000:]
                assert time.monotonic() < deadline
                time.sleep(0.05)
            deadline = time.monotonic() + 5
            while cached_rows(cache) < answered_first and time.monotonic() < deadline:
                time.sleep(0.05)
            started = descendants(proc.pid)  # the cluster it started, its judge actors
            os.killpg(proc.pid, signal.SIGKILL)  # the job killed: driver and cluster
            proc.communicate(timeout=60)
            deadline = time.monotonic() + 60  # the actors go when they lose their raylet
            while alive(started) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not alive(started)
        first = [r.pair for r in server.chat() if r.answered]
        assert len(first) == answered_first
        server.reset()
        server.release()
        args = [*judge_run_args(server.url, tmp_path / "out2"), "--engine", "ray"]
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        second = [r.pair for r in server.chat()]
    assert not set(first) & set(second), "pairs asked again after the kill"
    assert len(second) == len(set(second)) == len(pairs) - answered_first
    assert set(first) | set(second) == pairs
    results = json.loads((tmp_path / "out2" / "results.json").read_text(encoding="utf-8"))
    assert results["similarity"]["cache_hits"] == answered_first


def test_context_travels_on_ray_as_locally(ray_cluster: Any, tmp_path: Path) -> None:
    """--context on Ray: each record's context in its shard as in the local records.jsonl, and
    the note of a field no record has said once, for a field that only some pieces have not."""
    from pingce.runfolder.records import read_record_shards

    text = (EXAMPLES / "function_call" / "records.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines()]
    for k, row in enumerate(rows):
        if k % 7 == 0:  # in some pieces only
            row["meta"] = {"source": f"s{k}"}
    folder = tmp_path / "parts"
    folder.mkdir()
    for k in range(3):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows[k::3])
        (folder / f"part-{k}.jsonl").write_text(text, encoding="utf-8")
    options: dict[str, Any] = {"bootstrap": 0, "context": ["meta.source", "nowhere"]}
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    result = pingce.evaluate(
        "function-call",
        str(folder / "part-*.jsonl"),
        engine="ray",
        ray_scratch=str(scratch),
        **options,
    )
    pingce.report.write_outputs(result, tmp_path / "ray")
    assert result.notes == [
        "--context nowhere: no record has this field (check its spelling or path)"
    ]
    got = {
        r["id"]: r.get("context")
        for r in read_record_shards(tmp_path / "ray" / "records").iter_rows()
    }
    assert got["seed-03"] == {"query": "调节厨房温度到22度"}
    assert got["seed-01"] == {"query": "打开客厅灯", "meta.source": "s0"}
    assert sum("meta.source" in (c or {}) for c in got.values()) == len(rows[::7])


# ------------------------------------------------------------- judged metrics on Ray


def _judged_options(url: str, cache: Path) -> dict[str, Any]:
    from pingce.cli.stand_in import LENIENT, MODEL

    rubric = EXAMPLES / "judged" / "rubric.txt"
    return {
        "judges": [f"openai:{MODEL}", f"openai:{LENIENT}"],
        "base_url": url,
        "rubric": str(rubric),
        "cache": str(cache),
        "bootstrap": 200,
        "seed": 3,
    }


def test_judged_pieces_merge_into_the_local_engines_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judged example graded by a jury (the demo's stand-in judges) in 3 pieces, merged
    without Ray: every metric, interval and count equals the local run's (the jury's agreement
    too: its statistic adds up over pieces)."""
    from pingce.cli.stand_in import serving
    from pingce.judged import parse_scale

    from .loopback import keep_local

    keep_local(monkeypatch, tmp_path / "cache")
    data = EXAMPLES / "judged" / "records.jsonl"
    with serving(parse_scale("1-5")) as url:
        options = _judged_options(url, tmp_path / "c.sqlite3")
        pieces = sharded("judged", data, RunOptions(bootstrap_method="poisson", **options), 3)
        want = local("judged", data, **options)
    assert pieces["pieces"] == 3
    assert want["metrics"]["judge_agreement"]["value"] is not None
    assert_same(pieces, want)


def test_judged_metrics_on_ray_equal_the_local_engine(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judged suite on Ray in 4 pieces, each graded by its actor: the local engine's
    numbers, the judges' request counts added over the pieces, the same judge signature, and
    every record's grades in records.jsonl."""
    from pingce.cli.stand_in import MODEL, serving
    from pingce.engine.context import RunContext
    from pingce.engine.distributed import run_on_ray
    from pingce.judged import parse_scale

    from .loopback import keep_local

    keep_local(monkeypatch, tmp_path / "cache")
    data = EXAMPLES / "judged" / "records.jsonl"
    with serving(parse_scale("1-5")) as url:
        options = _judged_options(url, tmp_path / "c.sqlite3")
        given = {**options, "judges": tuple(options["judges"])}
        result = run_on_ray(
            "judged",
            str(data),
            RunContext(RunOptions(engine="ray", **given)),
            piece_bytes=data.stat().st_size // 4,
        )
        want = pingce.evaluate(
            "judged", data, bootstrap_method="poisson", **{**options, "cache": False}
        )
    assert_same(summary(result), summary(want))
    assert result.signature.judge == want.signature.judge
    assert result.judge is not None and want.judge is not None
    ours, theirs = result.judge[f"openai:{MODEL}"], want.judge[f"openai:{MODEL}"]
    assert ours["prompts"] == theirs["prompts"] == 24  # 12 rubric + 12 correctness prompts
    assert ours["requests"] == theirs["requests"] == 24
    import pyarrow.parquet as pq

    from pingce.report import write_outputs

    written = write_outputs(result, tmp_path / "out")
    lines = [
        line
        for part in sorted(Path(written["records"]).glob("*.parquet"))
        for line in pq.read_table(part, columns=["record"]).column("record").to_pylist()
    ]
    grades = [json.loads(line)["judge"]["grades"] for line in lines]
    assert len(grades) == 12 and all(len(g) == 4 for g in grades)  # 2 tasks x 2 judges
