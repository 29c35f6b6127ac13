"""BFCL's score files read as pingce runs (issue 36): real files written by BFCL's own checker
(examples/other_tools/bfcl/make.sh: ``bfcl evaluate`` over 40 simple_python entries of two
models' real result files). Every entry's verdict recovered from the failed entries the score
file lists and the ids of the result file beside it; BFCL's accuracy reproduced; two models
compared with McNemar's exact test as scipy computes it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from scipy.stats import binomtest

import pingce
from pingce.errors import InputError
from pingce.tool_logs import detect_tool, read_tool_file
from tests.cli_run import run_pingce

HERE = Path(pingce.__file__).parent / "examples" / "other_tools" / "bfcl"
MODEL = "claude-sonnet-4-5-20250929-FC"
SCORE = f"score/{MODEL}/non_live/BFCL_v4_simple_python_score.json"
RESULT = f"result/{MODEL}/BFCL_v4_simple_python_result.json"
CLAUDE, DEEPSEEK = HERE / "claude" / SCORE, HERE / "deepseek" / SCORE


def _header_and_failed(path: Path) -> tuple[dict[str, float], set[str]]:
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return lines[0], {line["id"] for line in lines[1:]}


def _ids(side: str) -> list[str]:
    text = (HERE / side / RESULT).read_text("utf-8")
    return [json.loads(line)["id"] for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("path", [CLAUDE, DEEPSEEK], ids=["claude", "deepseek"])
def test_the_accuracy_is_bfcls(path: Path) -> None:
    header, failed = _header_and_failed(path)
    result = pingce.evaluate_log(path)
    accuracy = result.metrics["accuracy"]
    assert accuracy.value == pytest.approx(header["accuracy"], abs=1e-12)
    assert accuracy.n == header["total_count"] == 40
    assert accuracy.ci_low < accuracy.value <= accuracy.ci_high
    assert any("pingce's mean is the same number" in note for note in result.notes)
    side = path.parents[3].name
    verdicts = {r["id"]: r["values"]["accuracy"] for r in result.record_values()}
    assert set(verdicts) == set(_ids(side))
    assert {i for i, v in verdicts.items() if v == 0.0} == failed


def test_two_models_compare_with_mcnemar() -> None:
    (c_header, c_failed), (b_header, b_failed) = map(_header_and_failed, (CLAUDE, DEEPSEEK))
    compared = pingce.compare_logs(CLAUDE, DEEPSEEK)
    m = compared.metrics["accuracy"]
    assert m.delta == pytest.approx(c_header["accuracy"] - b_header["accuracy"], abs=1e-12)
    only_c, only_b = len(b_failed - c_failed), len(c_failed - b_failed)  # right on one side
    exact = next(t for t in m.tests if t.test == "mcnemar-exact")
    assert (exact.candidate_only, exact.baseline_only) == (only_c, only_b)
    assert exact.p_value == pytest.approx(binomtest(only_c, only_c + only_b).pvalue, abs=1e-12)
    assert compared.n_records == 40


def test_the_command_line_runs_and_compares_score_files(tmp_path: Path) -> None:
    done = run_pingce("run", str(CLAUDE), "--out", str(tmp_path / "run"), "--no-store")
    assert done.returncode == 0, done.stderr
    saved = json.loads((tmp_path / "run" / "results.json").read_text("utf-8"))
    assert saved["metrics"]["accuracy"]["value"] == pytest.approx(0.975, abs=1e-12)
    assert saved["suite"] == "bfcl-simple_python"
    done = run_pingce("compare", str(CLAUDE), str(DEEPSEEK), "--out", str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr
    saved = json.loads((tmp_path / "cmp" / "comparison.json").read_text("utf-8"))
    tests = [t["test"] for t in saved["metrics"]["accuracy"]["tests"]]
    assert "mcnemar-exact" in tests
    assert saved["candidate"].endswith("claude/" + SCORE)


def test_without_a_result_file_a_full_runs_ids(tmp_path: Path) -> None:
    alone = tmp_path / "BFCL_v4_simple_python_score.json"
    shutil.copy(CLAUDE, alone)
    run = read_tool_file(alone)
    assert [r["id"] for r in run.records] == [f"simple_python_{i}" for i in range(40)]
    assert any("no result file found" in note for note in run.notes)
    lines = alone.read_text("utf-8").splitlines()
    header = json.loads(lines[0])
    header["total_count"] = 10  # a partial run: failed ids beyond the first ten
    header["correct_count"] = 9
    alone.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="partial run"):
        read_tool_file(alone)


def test_counts_that_do_not_add_up_are_an_error(tmp_path: Path) -> None:
    copy = tmp_path / "claude"
    shutil.copytree(HERE / "claude", copy)
    score = copy / SCORE
    lines = score.read_text("utf-8").splitlines()
    header = json.loads(lines[0])
    header["correct_count"] = 38
    score.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="38 of 40 correct") as caught:
        read_tool_file(score)
    assert caught.value.source == str(score)


def test_other_files_are_not_bfcls() -> None:
    examples = Path(pingce.__file__).parent / "examples"
    for path in examples.glob("*/*"):
        if path.parent.name != "other_tools":
            assert detect_tool(path) is None, path
    assert detect_tool(HERE) == "bfcl"  # a folder of score files
    assert detect_tool(HERE / "claude" / RESULT) is None  # a result file is tool-use's


def test_stored_runs_of_score_files_compare_as_the_files(tmp_path: Path) -> None:
    """Two run folders of BFCL score files compare without the files: the suite is made again
    from the runs' own signature; the numbers are the files' comparison's."""
    pingce.evaluate_log(CLAUDE, out=tmp_path / "claude", bootstrap=0)
    pingce.evaluate_log(DEEPSEEK, out=tmp_path / "deepseek", bootstrap=0)
    stored = pingce.compare_runs(tmp_path / "claude", tmp_path / "deepseek", bootstrap=300)
    files = pingce.compare_logs(CLAUDE, DEEPSEEK, bootstrap=300)
    a, b = stored.metrics["accuracy"], files.metrics["accuracy"]
    assert a.delta == b.delta and (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)


def test_a_score_file_decides_against_a_stored_baseline(tmp_path: Path) -> None:
    """``pingce run SCORE --baseline RUN --non-inferior``: the decision of comparing the two
    stored runs, the suite made again from the baseline run's signature."""
    pingce.evaluate_log(DEEPSEEK, out=tmp_path / "deepseek", bootstrap=0)
    gates = pingce.decisions.parse_margin_gates(["accuracy=0.05"])
    result = pingce.evaluate_log(
        CLAUDE, bootstrap=1000, baseline=str(tmp_path / "deepseek"), margin_gates=gates
    )
    assert result.decision is not None and result.decision.passed
    gate = result.decision.gates[0]
    assert gate.delta == pytest.approx(0.975 - 0.825, abs=1e-12)
    done = run_pingce(
        "run", str(DEEPSEEK), "--baseline", str(tmp_path / "deepseek"),
        "--non-inferior", "accuracy=0.01", "--no-store", "--out", str(tmp_path / "same"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr  # the same run: delta 0, inside any margin


@pytest.mark.parametrize("side", ["claude", "deepseek"])
def test_tool_use_on_the_result_file_fails_what_bfcl_failed(side: str, tmp_path: Path) -> None:
    """The other way in: BFCL's questions with the model's raw result (each call's arguments as
    JSON text, as function-calling models' results are written) checked by pingce's tool-use
    suite against BFCL's possible answers (its greedy pairing, ``bfcl_compat``) fails exactly
    the entries BFCL's own checker listed in the score file."""
    data = HERE / "data"
    questions = [
        json.loads(line)
        for line in (data / "BFCL_v4_simple_python.json").read_text("utf-8").splitlines()
    ]
    results = {
        r["id"]: r["result"]
        for r in map(json.loads, (HERE / side / RESULT).read_text("utf-8").splitlines())
    }
    merged = tmp_path / "records.jsonl"
    merged.write_text(
        "".join(json.dumps({**q, "pred": results[q["id"]]}) + "\n" for q in questions),
        encoding="utf-8",
    )
    result = pingce.evaluate(
        "tool-use",
        str(merged),
        gold=str(data / "possible_answer" / "BFCL_v4_simple_python.json"),
        bootstrap=0,
    )
    failed = {r["id"] for r in result.record_values() if r["values"]["tool_call_accuracy"] == 0}
    _, listed = _header_and_failed(HERE / side / SCORE)
    assert failed == listed


def test_a_bfcl_result_call_is_read_with_its_json_arguments() -> None:
    from pingce.metrics.tools import parse_prediction

    calls = parse_prediction([{"math.factorial": '{"number": 5}'}, {"f": {"x": [1]}}])
    assert [(c.name, c.arguments) for c in calls] == [
        ("math.factorial", {"number": 5}),
        ("f", {"x": [1]}),
    ]
    with pytest.raises(ValueError, match=r"call 0 \(g\): arguments are text that is not JSON"):
        parse_prediction([{"g": "base=10"}])
    with pytest.raises(ValueError, match="JSON text of an object"):
        parse_prediction([{"g": "[1, 2]"}])


def test_a_run_of_a_score_file_is_in_the_run_store_and_the_viewers_list(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    done = run_pingce(
        "run", str(CLAUDE), "--name", "claude-bfcl", "--store", str(store),
        "--out", str(tmp_path / "r"), "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    listed = run_pingce("runs", "--store", str(store), "--json")
    assert listed.returncode == 0, listed.stderr
    [run] = json.loads(listed.stdout)
    assert run["name"] == "claude-bfcl" and run["suite"] == "bfcl-simple_python"
    from pingce.viewer.pages import Viewer

    page = Viewer(store).respond("/")  # the viewer's list of runs
    assert page.status == 200 and "claude-bfcl" in page.body.decode("utf-8")
    run_page = Viewer(store).respond("/run/claude-bfcl")
    assert run_page.status == 200 and "0.975" in run_page.body.decode("utf-8")
