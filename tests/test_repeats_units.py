"""Repeats in a unit suite (tcm-dialogue: each repeat of a dialogue a dialogue of its own, the
bootstrap resampling a dialogue with all its repeats) and in a comparison of two files of
records with repeats (each file run, the runs compared record by record) (issue 35)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
from pingce.errors import InputError, OptionError
from pingce.repeats import decompose
from tests.cli_run import run_pingce
from tests.test_repeats_run import _level, _repeated, _write
from tests.test_tcm_dialogue import (
    assert_matches,
    evaluate,
    lexical_cosine,
    random_records,
    reference,
)


def _with_repeats(records: list[dict[str, Any]], k: int, seed: int) -> list[dict[str, Any]]:
    """Each turn k times (its id the dialogue and turn), the later repeats' diagnoses and
    confidences changed at random, shuffled: the repeats are attempts at the same turns."""
    rng = np.random.default_rng(seed)
    out = []
    for r in records:
        for repeat in range(1, k + 1):
            row = {**r, "id": f"{r['dialogue_id']}/{r['turn']}", "repeat": repeat}
            if repeat > 1 and rng.random() < 0.4:
                row["pred_diagnosis"] = row.get("gt_diagnosis") if rng.random() < 0.5 else "错"
                row["confidence"] = float(rng.random())
            out.append(row)
    return [out[int(i)] for i in rng.permutation(len(out))]


def _as_dialogues(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same rows with each repeat of a dialogue renamed as a dialogue of its own: what the
    protocol's reference reads (it knows nothing of repeats)."""
    return [
        {k: v for k, v in r.items() if k not in ("id", "repeat")}
        | {"dialogue_id": f"{r['dialogue_id']}#{r['repeat']}"}
        for r in rows
    ]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_repeat_of_a_dialogue_is_a_dialogue(seed: int) -> None:
    """Every metric (the dialogue ones too: the slope by numpy.polyfit, the turns to stability)
    equals the protocol's reference over the repeats read as dialogues of their own."""
    rows = _with_repeats(random_records(seed, n_dialogues=25), 3, seed)
    result = evaluate(rows)
    renamed = _as_dialogues(rows)
    expected, _ = reference(renamed, lexical_cosine(renamed))
    assert_matches(result, expected)
    assert result.repeats is not None and result.repeats["unit"] == "dialogue_id"
    assert result.repeats["records"] == 25 and result.repeats["repeats"] == 3


def test_identical_repeats_are_the_run_without_them() -> None:
    """Three identical repeats of every turn: the values and the intervals (a dialogue with
    its repeats resampled as one unit) are those of the run without repeats."""
    records = random_records(7, n_dialogues=30)
    tripled = [
        {**r, "id": f"{r['dialogue_id']}/{r['turn']}", "repeat": k}
        for r in records
        for k in (1, 2, 3)
    ]
    plain = pingce.evaluate("tcm-dialogue", records, similarity="lexical", bootstrap=300)
    repeated = pingce.evaluate("tcm-dialogue", tripled, similarity="lexical", bootstrap=300)
    for name, m in plain.metrics.items():
        r = repeated.metrics[name]
        assert r.value == pytest.approx(m.value, abs=1e-12), name
        assert r.ci_low == pytest.approx(m.ci_low, abs=1e-9), name
        assert r.ci_high == pytest.approx(m.ci_high, abs=1e-9), name


def test_a_dialogues_variance_split_reads_its_mean_per_repeat() -> None:
    """The split of a turn metric in a unit suite: the records-by-repeats ANOVA of each
    dialogue's mean per repeat (pandas-free, by hand)."""
    rows = _with_repeats(random_records(3, n_dialogues=30), 4, 3)
    result = evaluate(rows)
    entry = result.repeats["metrics"]["funnel_adherence"]
    listed = result.record_values()
    assert [r["repeat"] for r in listed] == [r["repeat"] for r in rows]  # the file's order
    per_row = np.array(
        [np.nan if v is None else v for v in (r["values"]["funnel_adherence"] for r in listed)]
    )
    dialogues = sorted({r["dialogue_id"] for r in rows})
    grid = np.full((len(dialogues), 4), np.nan)
    for d, name in enumerate(dialogues):
        for k in range(4):
            at = [
                i
                for i, r in enumerate(rows)
                if r["dialogue_id"] == name and r["repeat"] == k + 1 and np.isfinite(per_row[i])
            ]
            grid[d, k] = np.mean(per_row[at])
    expected = decompose(grid[:, :, None], level=0.95, seed=0)
    assert entry["components"]["variance"]["records"] == pytest.approx(
        expected.variance["records"], abs=1e-12
    )
    assert entry["components"]["variance"]["generations"] == pytest.approx(
        expected.variance["generations"], abs=1e-12
    )


def test_a_turn_twice_in_one_repeat_names_the_repeat() -> None:
    rows = [
        {"id": "a/1", "dialogue_id": "a", "turn": 1, "status": "INQUIRY_ONLY", "repeat": 1},
        {"id": "a/1", "dialogue_id": "a", "turn": 1, "status": "INQUIRY_ONLY", "repeat": 2},
        {"id": "a/2", "dialogue_id": "a", "turn": 1, "status": "INQUIRY_ONLY", "repeat": 2},
    ]
    with pytest.raises(InputError) as caught:
        evaluate(rows)
    assert "(repeat 2)" in str(caught.value) and caught.value.line == 3
    assert caught.value.field == "turn"


# --------------------------------------------------------------- comparisons of two files


def test_two_files_with_repeats_compare_as_their_runs(tmp_path: Path) -> None:
    """``pingce compare SUITE --data C --baseline B`` of files with repeats: the numbers of
    the two runs compared (``compare_runs``), to the bit, and a note that says how."""
    rows_c, rows_b = _repeated(3, 0.2, seed=11), _repeated(2, 0.4, seed=12)
    c, b = _write(tmp_path / "c.jsonl", rows_c), _write(tmp_path / "b.jsonl", rows_b)
    compared = pingce.compare("contract-risk", str(c), str(b), bootstrap=400)
    runs = pingce.compare_runs(
        pingce.evaluate("contract-risk", str(c), bootstrap=0),
        pingce.evaluate("contract-risk", str(b), bootstrap=0),
        bootstrap=400,
    )
    for name, m in runs.metrics.items():
        got = compared.metrics[name]
        assert (got.delta, got.ci_low, got.ci_high) == (m.delta, m.ci_low, m.ci_high), name
    accuracy = np.mean([_level(r["pred_level"]) == r["gold_level"] for r in rows_c]) - np.mean(
        [_level(r["pred_level"]) == r["gold_level"] for r in rows_b]
    )
    assert compared.metrics["accuracy"].delta == pytest.approx(accuracy, abs=1e-12)
    assert compared.metrics["accuracy"].tests  # a paired test of the records with repeats
    assert any(note.startswith("each file evaluated as a run") for note in compared.notes)
    assert compared.n_records == 60


def test_the_command_line_compares_files_with_repeats(tmp_path: Path) -> None:
    c = _write(tmp_path / "c.jsonl", _repeated(2, 0.1, seed=1))
    b = _write(tmp_path / "b.jsonl", _repeated(2, 0.5, seed=2))
    out = tmp_path / "cmp"
    done = run_pingce(
        "compare", "contract-risk", "--data", str(c), "--baseline", str(b),
        "--bootstrap", "200", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    saved = json.loads((out / "comparison.json").read_text("utf-8"))
    assert saved["metrics"]["accuracy"]["delta"] > 0
    assert any("with repeats" in note for note in saved["notes"])


def test_pairwise_judging_refuses_repeats(tmp_path: Path) -> None:
    judged = Path(pingce.__file__).parent / "examples" / "judged" / "records.jsonl"
    records = [json.loads(line) for line in judged.read_text("utf-8").splitlines()]
    data = _write(tmp_path / "rep.jsonl", [{**r, "repeat": k} for r in records for k in (1, 2)])
    with pytest.raises(OptionError, match="--pairwise"):
        pingce.compare(
            "judged", str(data), str(data), bootstrap=0, pairwise=True, judges=["openai:x"]
        )


def test_a_shard_of_the_ray_engine_refuses_repeats(tmp_path: Path) -> None:
    """--engine ray reads pieces of a file, and a record's repeats may fall in two of them: a
    shard that finds repeats stops the run, saying to run it with the local engine."""
    from pingce.engine.merge import run_shard
    from pingce.engine.phases import plan_run
    from pingce.options import RunOptions

    data = _write(tmp_path / "rep.jsonl", _repeated(2, 0.3, seed=6))
    with pytest.raises(OptionError, match="--engine ray does not read repeats") as caught:
        run_shard(plan_run("contract-risk", RunOptions(bootstrap=0)), str(data))
    assert "local engine" in str(caught.value)
