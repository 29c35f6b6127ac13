"""lm-evaluation-harness's ``--log_samples`` output read as a pingce run (issue 36), on files
``lm_eval`` 0.4.13 wrote (examples/other_tools/lm_eval: the two local tasks, the fixed-answer
model and how they were made), and on files lm-eval writes in the test itself: a generative
task with two filters and a multiple-choice task,
run by a fixed-answer model and by lm-eval's own ``dummy``. Each metric's mean is the number in
lm-eval's results file; two runs compare with McNemar's exact test as scipy computes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest

import pingce
from pingce.tool_logs import detect_tool, read_tool_file
from tests.cli_run import run_pingce

HERE = Path(pingce.__file__).parent / "examples" / "other_tools" / "lm_eval"
MOCK, DUMMY = HERE / "mock", HERE / "dummy"


def _results(folder: Path) -> dict[str, Any]:
    [path] = folder.glob("results_*.json")
    loaded: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return loaded


def _samples(folder: Path, task: str) -> list[dict[str, Any]]:
    [path] = folder.glob(f"samples_{task}_*.jsonl")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("folder", [MOCK, DUMMY], ids=["mock", "dummy"])
def test_each_mean_is_lm_evals_number(folder: Path) -> None:
    result = pingce.evaluate_log(folder, bootstrap=200)
    table = _results(folder)["results"]
    expected = {
        "acc": table["pingce_mc"]["acc,none"],
        "acc_norm": table["pingce_mc"]["acc_norm,none"],
        "exact_match": table["pingce_qa_gen"]["exact_match,none"],
        "exact_match_strip": table["pingce_qa_gen"]["exact_match,strip"],
    }
    for name, value in expected.items():
        assert result.metrics[name].value == pytest.approx(value, abs=1e-9), name
        assert any(n.startswith(f"{name}: lm-eval reported") for n in result.notes)
    assert result.metrics["acc"].n == 10 and result.metrics["exact_match"].n == 20
    assert result.n_records == 30  # one record a document, its filters' values together
    assert set(result.slices or {}) == {"task=pingce_mc", "task=pingce_qa_gen"}


def test_one_samples_file_is_one_task() -> None:
    [path] = MOCK.glob("samples_pingce_qa_gen_*.jsonl")
    run = read_tool_file(path)
    assert run.name == "lm-eval-pingce_qa_gen"
    assert [r["id"] for r in run.records] == [str(i) for i in range(20)]
    by_filter = {s["doc_id"]: s for s in _samples(MOCK, "pingce_qa_gen") if s["filter"] == "strip"}
    for record in run.records:
        assert record["scores"]["exact_match_strip"] == by_filter[int(record["id"])]["exact_match"]
    assert detect_tool(path) == "lm-eval" and detect_tool(MOCK) == "lm-eval"


def test_two_runs_compare_document_by_document() -> None:
    compared = pingce.compare_logs(MOCK, DUMMY, bootstrap=300)
    mock = {s["doc_id"]: s["exact_match"] for s in _samples(MOCK, "pingce_qa_gen")
            if s["filter"] == "none"}  # fmt: skip
    dummy = {s["doc_id"]: s["exact_match"] for s in _samples(DUMMY, "pingce_qa_gen")
             if s["filter"] == "none"}  # fmt: skip
    only_c = sum(mock[d] == 1 and dummy[d] == 0 for d in mock)
    only_b = sum(mock[d] == 0 and dummy[d] == 1 for d in mock)
    m = compared.metrics["exact_match"]
    exact = next(t for t in m.tests if t.test == "mcnemar-exact")
    assert (exact.candidate_only, exact.baseline_only) == (only_c, only_b)
    assert exact.p_value == pytest.approx(binomtest(only_c, only_c + only_b).pvalue, abs=1e-12)
    table_c, table_b = _results(MOCK)["results"], _results(DUMMY)["results"]
    delta = table_c["pingce_mc"]["acc,none"] - table_b["pingce_mc"]["acc,none"]
    assert compared.metrics["acc"].delta == pytest.approx(delta, abs=1e-9)


def test_the_command_line(tmp_path: Path) -> None:
    done = run_pingce("run", str(MOCK), "--out", str(tmp_path / "r"), "--no-store")
    assert done.returncode == 0, done.stderr
    saved = json.loads((tmp_path / "r" / "results.json").read_text("utf-8"))
    assert saved["metrics"]["exact_match_strip"]["value"] == pytest.approx(0.75, abs=1e-12)
    done = run_pingce("compare", str(MOCK), str(DUMMY), "--out", str(tmp_path / "c"))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "c" / "comparison.json").read_text("utf-8"))["n_records"] == 30


# --------------------------------------------------- lm-eval run here, on the same tasks


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """lm-eval itself (the test extra's ``lm_eval``), offline, on the example's two local tasks
    with the fixed-answer model and with its ``dummy``: the files the example was recorded
    from, made again."""
    pytest.importorskip("lm_eval")
    out = tmp_path_factory.mktemp("lm-eval")
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": str(out / "hf"),
        "TOKENIZERS_PARALLELISM": "false",
    }
    common = ["--tasks", "pingce_qa_gen", "pingce_mc", "--include_path", "tasks",
              "--log_samples", "--output_path", str(out), "--seed", "0"]  # fmt: skip
    runs = (
        ("pingce-mock-v1", ["run_lm_eval.py", "run", "--model", "pingce_mock"]),  # registers it
        ("dummy", ["-m", "lm_eval", "run", "--model", "dummy"]),
    )
    for pretrained, command in runs:
        done = subprocess.run(
            [sys.executable, *command, "--model_args", f"pretrained={pretrained}", *common],
            cwd=HERE,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
    return {"mock": out / "pingce-mock-v1", "dummy": out / "dummy"}


def test_lm_evals_own_run_reads_as_its_results_say(made: dict[str, Path]) -> None:
    """Files lm-eval wrote in this test: every mean is its results file's number, and the
    records are the recorded example's (the example is what lm-eval makes)."""
    for side, recorded in (("mock", MOCK), ("dummy", DUMMY)):
        result = pingce.evaluate_log(made[side], bootstrap=0)
        table = _results(made[side])["results"]
        assert result.metrics["exact_match_strip"].value == pytest.approx(
            table["pingce_qa_gen"]["exact_match,strip"], abs=1e-9
        )
        assert result.metrics["acc"].value == pytest.approx(
            table["pingce_mc"]["acc,none"], abs=1e-9
        )
        assert all("same number" in n for n in result.notes if "lm-eval reported" in n)
        fresh = {r["id"]: r["scores"] for r in read_tool_file(made[side]).records}
        kept = {r["id"]: r["scores"] for r in read_tool_file(recorded).records}
        assert fresh == kept, side
