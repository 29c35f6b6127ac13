"""The run-folder package (issue 29, point 2): one layout, one atomic writer, one JSON policy,
the records and stats codecs and the reader of every layout variant."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from pingce._outputs import STAGING_PREFIX
from pingce.errors import OutputError
from pingce.runfolder import layout
from pingce.runfolder.atomic import atomic_files


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def test_the_atomic_writer_puts_every_file_in_place_and_removes_replaced_variants(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / layout.RECORDS).write_text("old rows\n")
    (out / layout.STAT_SHARDS).mkdir()
    (out / layout.STAT_SHARDS / "part-00000.npz").write_bytes(b"old")
    (out / "notes.txt").write_text("mine")
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "part-00000.parquet").write_bytes(b"parquet")
    with atomic_files(out) as staging:
        staging.write_text(layout.RESULTS, "{}\n")
        staging.replaces(*layout.ROWS)
        staging.link_tree(layout.RECORD_SHARDS, shards)
        staging.write_bytes(layout.STATS, b"npz")
    assert list(staging.placed()) == [layout.RESULTS, layout.RECORD_SHARDS, layout.STATS]
    assert _names(out) == {layout.RESULTS, layout.RECORD_SHARDS, layout.STATS, "notes.txt"}
    assert (out / layout.RECORD_SHARDS / "part-00000.parquet").read_bytes() == b"parquet"


@pytest.mark.parametrize("fresh", [True, False])
def test_the_atomic_writer_leaves_nothing_when_a_file_fails(tmp_path: Path, fresh: bool) -> None:
    """A failure while the files are made (here: after two of them) leaves the folder as it
    was: no file of this write, no staging folder, and a folder made for it removed again."""
    out = tmp_path / "new" / "out"
    if not fresh:
        out.mkdir(parents=True)
        (out / layout.RESULTS).write_text("earlier\n")
        (out / layout.RECORDS).write_text("earlier rows\n")
    before = {p.name: p.read_bytes() for p in out.iterdir()} if not fresh else None
    with pytest.raises(RuntimeError, match="stop"), atomic_files(out) as staging:
        staging.write_text(layout.RESULTS, "{}\n")
        staging.replaces(*layout.ROWS)
        staging.write_text(layout.REPORT_MD, "# report\n")
        raise RuntimeError("stop")
    if fresh:
        assert not (tmp_path / "new").exists()
    else:
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_an_os_error_while_writing_is_an_output_error_naming_the_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(OutputError, match=r"report\.html"), atomic_files(out) as staging:
        staging.write_text(layout.RESULTS, "{}\n")
        raise OSError(28, os.strerror(28), str(staging.path(layout.REPORT_HTML)))
    assert not out.exists()


def test_the_atomic_writer_writes_one_file(tmp_path: Path) -> None:
    target = tmp_path / "calibration.json"
    target.write_text("old\n")
    with atomic_files(target, file=True) as staging:
        staging.write_text(target.name, "new\n")
    assert target.read_text() == "new\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(STAGING_PREFIX)]
    with pytest.raises(RuntimeError), atomic_files(target, file=True) as staging:
        staging.write_text(target.name, "newer\n")
        raise RuntimeError("stop")
    assert _names(tmp_path) == {target.name} and target.read_text() == "new\n"


def test_only_the_run_folder_package_renames_files_into_place() -> None:
    """One atomic writer: no module outside pingce/runfolder/ renames a file into place or makes
    a staging or shard folder of its own."""
    src = Path(__file__).resolve().parents[1] / "src" / "pingce"
    found = []
    for path in sorted(src.rglob("*.py")):
        if path.parent.name == "runfolder":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("replace", "rename", "mkdtemp"):
                owner = node.value
                if isinstance(owner, ast.Name) and owner.id in ("os", "tempfile"):
                    found.append(f"{path.relative_to(src)}:{node.lineno} {owner.id}.{node.attr}")
    assert not found


def test_shards_are_listed_in_the_order_of_their_pieces(tmp_path: Path) -> None:
    for k in (100000, 2, 99999):
        Path(layout.part_file(tmp_path, k, ".npz")).write_bytes(b"")
    assert [p.name for p in layout.part_files(tmp_path, ".npz")] == [
        "part-00002.npz",
        "part-99999.npz",
        "part-100000.npz",
    ]


# ------------------------------------------------------------------------ one JSON policy


def test_every_json_encoder_writes_a_non_finite_number_as_null() -> None:
    """One NaN policy (:data:`pingce._json.NON_FINITE`): orjson's text, the standard library's
    fallback (an integer of 2**64 or more), the indented text, the column texts and the result
    models all write NaN and infinities as null."""
    import math

    from pingce._json import NON_FINITE, dumps, dumps_indented, json_texts
    from pingce.results import MetricResult, SliceResult

    nan, inf = math.nan, math.inf
    assert NON_FINITE == "null"
    assert dumps({"a": nan, "b": [inf]}) == b'{"a":null,"b":[null]}'
    big = 2**70
    assert dumps({"a": nan, "b": [-inf], "n": big}) == f'{{"a":null,"b":[null],"n":{big}}}'.encode()
    assert dumps_indented({"a": nan, "b": "中"}) == '{\n  "a": null,\n  "b": "中"\n}'
    assert json_texts([nan, inf, 1.5, big], b"x") == [b"xnull", b"xnull", b"x1.5", b"x%d" % big]
    entry = MetricResult(value=nan, ci_low=-inf, ci_high=inf, n=1)
    assert entry.model_dump_json() == '{"value":null,"ci_low":null,"ci_high":null,"n":1}'
    part = SliceResult(n_records=1, metrics={"m": entry}, tables={"t": {"x": nan}})
    assert '"x":null' in part.model_dump_json()


def test_the_run_folder_writers_use_the_one_json_policy() -> None:
    """No writer of a run folder (or of a comparison, a report written again, a calibration
    file) encodes JSON but through :mod:`pingce._json` or the result models."""
    src = Path(__file__).resolve().parents[1] / "src" / "pingce"
    writers = [
        *sorted((src / "runfolder").glob("*.py")),
        src / "report" / "files.py",
        src / "report" / "rewrite.py",
        src / "calibrate.py",
    ]
    for path in writers:
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                if isinstance(owner, ast.Name) and owner.id in ("json", "orjson"):
                    assert node.func.attr not in ("dumps", "dump"), (path.name, node.lineno)
            if isinstance(node, ast.keyword):
                assert node.arg != "allow_nan", (path.name, node.lineno)


# ---------------------------------------------------------------- the reader and the codecs

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RISK = EXAMPLES / "contract_risk" / "records.jsonl"


def _ray_layout(folder: Path, results: Path) -> None:
    """A run folder as ``--engine ray`` writes it (results.json, records/ and stats/ of two
    pieces), made by the pieces' own function without Ray."""
    from pingce.engine.merge import run_shard
    from pingce.engine.phases import plan_run
    from pingce.engine.shards import (
        count_lines,
        expand_paths,
        number_pieces,
        open_piece,
        plan_pieces,
    )
    from pingce.options import RunOptions

    for name in (layout.RECORD_SHARDS, layout.STAT_SHARDS):
        (folder / name).mkdir(parents=True)
    (folder / layout.RESULTS).write_bytes(results.read_bytes())
    plan = plan_run("contract-risk", RunOptions(bootstrap=0))
    cut = plan_pieces(expand_paths(str(RISK)), RISK.stat().st_size // 2, whole_files=False)
    cut = number_pieces(cut, [count_lines(p) for p in cut])
    assert len(cut) >= 2
    for k, piece in enumerate(cut):
        run_shard(
            plan,
            open_piece(plan, piece),
            rows_to=layout.part_file(folder / layout.RECORD_SHARDS, k, ".parquet"),
            stats_to=layout.part_file(folder / layout.STAT_SHARDS, k, ".npz"),
        )


def test_the_reader_reads_every_layout_variant(tmp_path: Path) -> None:
    """records.jsonl or records/, stats.npz or stats/, or results.json alone: the same result,
    the same rows (records.jsonl's bytes again) and the same statistics."""
    import numpy as np

    import pingce
    from pingce.report import write_outputs
    from pingce.runfolder.reader import read_run
    from pingce.runfolder.records import jsonl_lines

    result = pingce.evaluate("contract-risk", RISK, bootstrap=0)
    local, ray, bare = tmp_path / "local", tmp_path / "ray", tmp_path / "bare"
    write_outputs(result, local)
    _ray_layout(ray, local / layout.RESULTS)
    bare.mkdir()
    (bare / layout.RESULTS).write_bytes((local / layout.RESULTS).read_bytes())
    assert result.outputs is not None and result.outputs.stats is not None
    want = result.outputs.stats
    for folder in (local, ray):
        back = read_run(folder)
        assert back.model_dump() == result.model_dump()
        assert back.records is not None and back.outputs is not None
        text = b"".join(jsonl_lines(back.records))
        assert text == (local / layout.RECORDS).read_bytes(), folder.name
        stats = back.outputs.stats
        assert stats is not None and stats.ids() == want.ids()
        for name, array in want.arrays.items():
            np.testing.assert_array_equal(stats.arrays[name], array, err_msg=name)
    back = read_run(bare)
    assert back.model_dump() == result.model_dump()
    assert back.records is None and back.outputs is not None and back.outputs.stats is None


def test_a_damaged_run_folder_is_an_input_error(tmp_path: Path) -> None:
    from pingce.errors import InputError
    from pingce.runfolder.reader import read_run

    with pytest.raises(InputError, match=r"no results\.json"):
        read_run(tmp_path)
    (tmp_path / layout.RESULTS).write_text("{")
    with pytest.raises(InputError, match=r"results\.json cannot be read"):
        read_run(tmp_path)


# ------------------------------------------------------- the result, and what the run produced


def test_a_result_is_plain_data_and_its_run_outputs_stand_beside_it(tmp_path: Path) -> None:
    """EvaluationResult holds what results.json holds and one reference to what its run
    produced beside it (RunOutputs), which copies share and write_outputs finds; an explicit
    RunOutputs given to write_outputs is written instead."""
    import dataclasses

    import pingce
    from pingce.report import write_outputs
    from pingce.results import ComparisonResult, EvaluationResult
    from pingce.runfolder.outputs import RunOutputs

    for model in (EvaluationResult, ComparisonResult):
        assert set(model.PRIVATE) == {"_outputs"}  # pingce._plain's private attributes
        assert not [name for name in dir(model) if name.startswith("attach")]
    result = pingce.evaluate("contract-risk", RISK, bootstrap=0)
    outputs = result.outputs
    assert isinstance(outputs, RunOutputs) and outputs.records is result.records
    assert result.model_copy().outputs is outputs  # a copy shares them
    plain = EvaluationResult.model_validate_json(result.to_json())
    assert plain.outputs is None and plain.records is None
    write_outputs(plain, tmp_path / "plain")
    assert (tmp_path / "plain" / layout.RECORDS).read_bytes() == b""
    assert not (tmp_path / "plain" / layout.STATS).exists()
    write_outputs(plain, tmp_path / "given", outputs)
    write_outputs(result, tmp_path / "own")
    for name in (layout.RECORDS, layout.STATS, layout.REPORT_HTML):
        assert (tmp_path / "given" / name).read_bytes() == (tmp_path / "own" / name).read_bytes()
    fewer = dataclasses.replace(outputs, records=None, saved=None)
    write_outputs(result, tmp_path / "fewer", fewer)
    assert (tmp_path / "fewer" / layout.RECORDS).read_bytes() == b""
    assert result.outputs is outputs and outputs.records is not None  # untouched


def test_a_runs_shard_folder_lasts_as_long_as_its_outputs(tmp_path: Path) -> None:
    """The shard lifetime (``--engine ray``): the folder goes with the last holder of the
    outputs (a result and its copies share them) or at release(), and not before."""
    import gc

    from pingce.results import DataInfo, EvaluationResult, Signature
    from pingce.runfolder.outputs import RunOutputs, ShardFolder

    shards = ShardFolder.make(tmp_path)
    folder = Path(shards.path)
    assert sorted(p.name for p in folder.iterdir()) == [layout.RECORD_SHARDS, layout.STAT_SHARDS]
    result = EvaluationResult(
        pingce_version="0",
        suite="s",
        n_records=0,
        metrics={},
        signature=Signature(
            seed=0,
            bootstrap=0,
            ci_method="bca",
            ci_level=0.95,
            similarity=None,
            zero_division=None,
            labels=None,
            metrics={},
            versions={},
        ),
        data=DataInfo(source="-", n_loaded=0, id_field="id"),
    ).with_outputs(RunOutputs.of_shards(shards, 0))
    del shards
    copies = [result.model_copy(), result.model_copy(deep=True)]
    del result
    gc.collect()
    assert folder.is_dir()
    outputs = copies[1].outputs
    assert outputs is not None and outputs.stat_shards is not None
    outputs.release()
    assert not folder.exists() and outputs.record_shards is None and outputs.stats is None
    again = ShardFolder.make(tmp_path)
    kept = RunOutputs.of_shards(again, 0)
    path = Path(again.path)
    del again
    gc.collect()
    assert path.is_dir()
    del kept
    gc.collect()
    assert not path.exists()
