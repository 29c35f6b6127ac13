"""Inspect AI's logs read as pingce runs (issue 36), on real logs that ``inspect_ai`` writes in
the test (tests/inspect_logs.py: its offline mock model, ``match()``, ``includes()``, a
C/P/I scorer and a numeric one, 3 epochs). Each scorer's mean is Inspect's own number from the
log's results; the values are Inspect's ``value_to_float``; epochs are repeats; two logs compare
with McNemar's exact test as scipy computes it (one epoch) or with their epochs together."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest

import pingce
from pingce.errors import InputError
from pingce.tool_logs import detect_tool, inspect_log, read_tool_file
from tests.cli_run import run_pingce
from tests.inspect_logs import BASELINE, CANDIDATE, make_log

inspect_ai = pytest.importorskip("inspect_ai")  # installed by `make test` (the test extra)
# inspect_ai leaves anyio streams unclosed (ResourceWarning when they are collected)
pytestmark = pytest.mark.filterwarnings(
    "ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning"
)
SCORERS = ("match", "includes", "exact_partial", "char_overlap")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("inspect-logs")
    return {
        "baseline.eval": make_log(folder / "b", BASELINE),
        "baseline.json": make_log(folder / "bj", BASELINE, log_format="json"),
        "candidate.eval": make_log(folder / "c", CANDIDATE),
        "baseline-1.eval": make_log(folder / "b1", BASELINE, epochs=1),
        "candidate-1.eval": make_log(folder / "c1", CANDIDATE, epochs=1),
        "max.eval": make_log(folder / "m", BASELINE, reducer="max"),
    }


def _inspects_numbers(path: Path) -> dict[str, float]:
    """Each scorer's number in the log's results, as inspect_ai reads them."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path), header_only=True)
    assert log.results is not None
    out = {}
    for score in log.results.scores:
        metric = score.metrics.get("accuracy") or score.metrics.get("mean")
        assert metric is not None
        out[score.name] = float(metric.value)
    return out


@pytest.mark.parametrize("name", ["baseline.eval", "baseline.json", "candidate.eval"])
def test_each_mean_is_inspects_number(logs: dict[str, Path], name: str) -> None:
    result = pingce.evaluate_log(logs[name], bootstrap=200)
    own = _inspects_numbers(logs[name])
    assert set(result.metrics) == set(SCORERS) == set(own)
    for scorer in SCORERS:
        assert result.metrics[scorer].value == pytest.approx(own[scorer], abs=1e-9)
        assert result.metrics[scorer].n == 36  # 12 samples x 3 epochs
        assert f"{scorer}: Inspect reported" in " ".join(result.notes)
    assert result.repeats is not None and result.repeats["repeats"] == 3
    assert result.repeats["records"] == 12
    assert set(result.slices or {}) >= {"metadata.lang=en", "metadata.lang=zh"}


def test_own_reader_reads_what_inspect_reads(
    logs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without inspect_ai (its reader made to fail to import) the same records, from the
    .eval zip's Zstandard members and from the JSON log."""
    for name in ("baseline.eval", "baseline.json"):
        by_inspect = read_tool_file(logs[name]).records
        with monkeypatch.context() as patch:
            patch.setitem(__import__("sys").modules, "inspect_ai.log", None)
            by_us = read_tool_file(logs[name]).records
        assert _comparable(by_us) == _comparable(by_inspect), name


def _comparable(records: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in records)


def test_value_to_float_is_inspects() -> None:
    from inspect_ai.scorer import value_to_float

    theirs = value_to_float()
    values = ["C", "I", "P", "N", "yes", "No", "TRUE", "false", "0.25", "1", "x", "", True,
              False, 0, 1, 0.5, 3, -2.5]  # fmt: skip
    for value in values:
        assert inspect_log.value_to_float(value) == theirs(value), value


def test_epoch_answers_by_hand(logs: dict[str, Path]) -> None:
    """match on the baseline by hand: each epoch's answer against the target's end (Inspect's
    match() default), over every sample and epoch."""
    rows = read_tool_file(logs["baseline.eval"]).records
    assert len(rows) == 36 and {r["repeat"] for r in rows} == {1, 2, 3}
    by_id = {(r["id"], r["repeat"]): r["scores"]["match"] for r in rows}
    assert by_id[("q03", 3)] == 0.0 and by_id[("q03", 1)] == 1.0  # Jupiter in epoch 3
    assert by_id[("q06", 2)] == 0.0 and by_id[("q06", 1)] == 1.0
    assert all(by_id[("q05", e)] == 0.0 for e in (1, 2, 3))
    partial = {(r["id"], r["repeat"]): r["scores"]["exact_partial"] for r in rows}
    assert partial[("q04", 1)] == 0.5  # "The symbol is Au": contained, Inspect's P


def test_one_epoch_logs_compare_with_mcnemar(logs: dict[str, Path]) -> None:
    compared = pingce.compare_logs(logs["candidate-1.eval"], logs["baseline-1.eval"])
    c = {r["id"]: r["scores"]["match"] for r in read_tool_file(logs["candidate-1.eval"]).records}
    b = {r["id"]: r["scores"]["match"] for r in read_tool_file(logs["baseline-1.eval"]).records}
    only_c = sum(c[i] == 1 and b[i] == 0 for i in c)
    only_b = sum(c[i] == 0 and b[i] == 1 for i in c)
    m = compared.metrics["match"]
    exact = next(t for t in m.tests if t.test == "mcnemar-exact")
    assert exact.p_value == pytest.approx(binomtest(only_c, only_c + only_b).pvalue, abs=1e-12)
    own_c, own_b = (_inspects_numbers(logs[k]) for k in ("candidate-1.eval", "baseline-1.eval"))
    assert m.delta == pytest.approx(own_c["match"] - own_b["match"], abs=1e-9)


def test_logs_with_epochs_pair_samples_with_all_their_epochs(logs: dict[str, Path]) -> None:
    compared = pingce.compare_logs(logs["candidate.eval"], logs["baseline.json"], bootstrap=500)
    own_c, own_b = (
        _inspects_numbers(logs["candidate.eval"]),
        _inspects_numbers(logs["baseline.json"]),
    )
    for scorer in SCORERS:
        m = compared.metrics[scorer]
        assert m.delta == pytest.approx(own_c[scorer] - own_b[scorer], abs=1e-9)
        assert m.ci_low is not None and m.ci_low < m.delta < m.ci_high
    assert compared.n_records == 12
    assert any("with repeats" in note for note in compared.notes)


def test_another_reducer_is_said_to_differ(logs: dict[str, Path]) -> None:
    """Epochs reduced by max: Inspect's accuracy is the mean of each sample's best epoch, which
    pingce's mean over every epoch is not; the note says why."""
    result = pingce.evaluate_log(logs["max.eval"], bootstrap=0)
    own = _inspects_numbers(logs["max.eval"])
    rows = read_tool_file(logs["max.eval"]).records
    best = {}
    for r in rows:
        best[r["id"]] = max(best.get(r["id"], 0.0), r["scores"]["match"])
    assert own["match"] == pytest.approx(float(np.mean(list(best.values()))), abs=1e-12)
    assert not math.isclose(result.metrics["match"].value, own["match"])
    note = next(n for n in result.notes if n.startswith("match: Inspect reported"))
    assert "reduced each sample's 3 epochs by max" in note


def test_the_command_line_runs_and_compares_logs(logs: dict[str, Path], tmp_path: Path) -> None:
    run = run_pingce("run", str(logs["baseline.eval"]), "--out", str(tmp_path / "r"), "--no-store")
    assert run.returncode == 0, run.stderr
    saved = json.loads((tmp_path / "r" / "results.json").read_text("utf-8"))
    own = _inspects_numbers(logs["baseline.eval"])
    assert saved["metrics"]["match"]["value"] == pytest.approx(own["match"], abs=1e-9)
    assert saved["suite"] == "inspect-qa"
    done = run_pingce(
        "compare", str(logs["candidate.eval"]), str(logs["baseline.eval"]),
        "--out", str(tmp_path / "c"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "c" / "comparison.html").is_file()


def test_detection_and_a_log_without_samples(logs: dict[str, Path], tmp_path: Path) -> None:
    assert detect_tool(logs["baseline.eval"]) == "inspect"
    assert detect_tool(logs["baseline.json"]) == "inspect"
    data = json.loads(logs["baseline.json"].read_text("utf-8"))
    data["samples"] = []
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="holds no samples") as caught:
        read_tool_file(empty)
    assert caught.value.source == str(empty)


def test_a_list_valued_scorer_is_said_not_read(logs: dict[str, Path], tmp_path: Path) -> None:
    """A scorer whose value is a list has no one number: left out, and the notes say so; a
    dictionary of values is one score a key."""
    data = json.loads(logs["baseline.json"].read_text("utf-8"))
    for sample in data["samples"]:
        sample["scores"]["spans"] = {"value": [1, 0, 1]}
        sample["scores"]["parts"] = {"value": {"a": "C", "b": 0.25}}
    changed = tmp_path / "lists.json"
    changed.write_text(json.dumps(data), encoding="utf-8")
    run = read_tool_file(changed)
    assert "spans" not in {s.name for s in run.scores}
    assert {"parts_a", "parts_b"} <= {s.name for s in run.scores}
    assert run.records[0]["scores"]["parts_a"] == 1.0
    assert any("spans: a list of values a sample" in note for note in run.notes)


def test_samples_that_ended_in_an_error_are_counted(logs: dict[str, Path], tmp_path: Path) -> None:
    """A sample that errored has no scores: each mean is over the others (its n says so) and a
    note counts the errored samples, rather than reading them as 0."""
    data = json.loads(logs["baseline.json"].read_text("utf-8"))
    broken = {s["id"] for s in data["samples"][:2]}
    for sample in data["samples"][:2]:
        sample["scores"] = {}
        sample["error"] = {"message": "boom", "traceback": "", "traceback_ansi": ""}
    changed = tmp_path / "errors.json"
    changed.write_text(json.dumps(data), encoding="utf-8")
    result = pingce.evaluate_log(changed, bootstrap=0)
    kept = [s for s in data["samples"] if s["id"] not in broken or s["scores"]]
    assert result.metrics["match"].n == len(kept) == 34
    match = [inspect_log.value_to_float(s["scores"]["match"]["value"]) for s in kept]
    assert result.metrics["match"].value == pytest.approx(sum(match) / len(match), abs=1e-12)
    assert any("2 sample(s) ended in an error" in n for n in result.notes)
