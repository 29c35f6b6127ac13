"""The command line end to end (subprocesses), checked against counts made here from the data."""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
from pingce.metrics import metric_registry, table_registry

from .cli_run import run_pingce, run_python

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "contract_risk" / "records.jsonl"
LEVELS = ["高", "中", "低"]
ALIASES = {"high": "高", "medium": "中", "low": "低"}

# results.json's top level, and the contract-risk metric names scripts rely on.
TOP_LEVEL_KEYS = {
    "pingce_version",
    "suite",
    "n_records",
    "metrics",
    "tables",
    "slices",
    "failures",
    "signature",
}
CONTRACT_METRICS = [
    "accuracy",
    "weighted_accuracy",
    "precision",
    "recall",
    "f1",
    "macro_f1",
    "cohen_kappa",
    "qwk",
    "avg_latency_sec",
    "p95_latency_sec",
    # the evidence half (clauses, laws, task success, rules)
    "clause_hallucination_rate",
    "altered_clause_rate",
    "law_hallucination_rate",
    "hallucination_rate",
    "task_success_rate",
    "rule_recall",
]
OUTPUT_FILES = {"results.json", "records.jsonl", "report.md", "report.html", "stats.npz"}


def level(raw: str) -> str:
    """The canonical level of a raw label (own normalisation, not pingce's)."""
    text = raw.strip()
    return ALIASES.get(text.casefold(), text)


def example_rows() -> list[dict[str, Any]]:
    with open(EXAMPLE, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_pingce(*args, cwd=cwd)


def run_ok(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = cli(cwd, *args)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc


def read_results(out: Path) -> dict[str, Any]:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def read_record_lines(out: Path) -> list[dict[str, Any]]:
    text = (out / "records.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    data = example_rows()
    assert len(data) == 60
    return data


@pytest.fixture(scope="module")
def default_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run with the default options except a smaller bootstrap; returns its --out folder."""
    cwd = tmp_path_factory.mktemp("default-run")
    proc = run_ok(cwd, "run", "contract-risk", "--data", str(EXAMPLE), "--bootstrap", "200")
    # with no --out: pingce-out/contract-risk-<timestamp> under the working directory
    made = list((cwd / "pingce-out").iterdir())
    assert len(made) == 1
    assert re.fullmatch(r"contract-risk-\d{8}-\d{6}(-\d+)?", made[0].name), made[0].name
    assert made[0].name in proc.stdout
    return made[0]


# --------------------------------------------------------------------------- a full run


def test_run_writes_the_four_files(tmp_path: Path) -> None:
    proc = run_ok(
        tmp_path, "run", "contract-risk", "--data", str(EXAMPLE), "--out", "out", "--bootstrap", "0"
    )
    assert proc.stderr.strip() == ""
    out = tmp_path / "out"
    assert {p.name for p in out.iterdir()} == OUTPUT_FILES
    assert not (tmp_path / "pingce-out").exists()
    assert "accuracy" in proc.stdout


def test_default_out_folder(default_run: Path) -> None:
    assert {p.name for p in default_run.iterdir()} == OUTPUT_FILES
    assert default_run.parent.name == "pingce-out"


def test_results_json_has_the_contract_shape(default_run: Path, rows: list) -> None:
    results = read_results(default_run)
    missing = TOP_LEVEL_KEYS - set(results)
    assert not missing, f"results.json lacks {missing}"
    assert results["pingce_version"] == pingce.__version__
    assert results["suite"] == "contract-risk"
    assert results["n_records"] == len(rows)
    assert {"judge", "parse"} <= set(results["failures"])
    assert results["failures"]["judge"] == 0 and results["failures"]["parse"] == 0
    signature = results["signature"]
    assert {"seed", "bootstrap", "similarity", "versions"} <= set(signature)
    assert signature["seed"] == 0
    assert signature["bootstrap"] == 200
    assert isinstance(signature["versions"], dict)
    assert results["slices"] == {}
    assert isinstance(results["tables"], dict)


def test_every_metric_has_value_interval_and_n(default_run: Path) -> None:
    metrics = read_results(default_run)["metrics"]
    missing = [name for name in CONTRACT_METRICS if name not in metrics]
    assert not missing, f"contract metrics missing: {missing}"
    for name, entry in metrics.items():
        assert {"value", "ci_low", "ci_high", "n"} <= set(entry), name
        assert isinstance(entry["n"], int), name
        if entry["value"] is None:
            assert entry.get("undefined_reason"), name
            continue
        assert isinstance(entry["value"], float), name
        # 200 resamples of 60 records: every defined metric gets an interval here
        assert entry["ci_low"] is not None and entry["ci_high"] is not None, name
        assert entry["ci_low"] <= entry["ci_high"], name


def test_confusion_matrix_matches_a_recount(default_run: Path, rows: list) -> None:
    table = read_results(default_run)["tables"]["confusion_matrix"]
    assert table["labels"] == LEVELS
    counts = [[0, 0, 0] for _ in LEVELS]
    for row in rows:
        counts[LEVELS.index(level(row["gold_level"]))][LEVELS.index(level(row["pred_level"]))] += 1
    assert table["matrix"] == counts
    assert sum(map(sum, counts)) == 60


def test_metric_values_match_a_recount(default_run: Path, rows: list) -> None:
    metrics = read_results(default_run)["metrics"]
    gold = [LEVELS.index(level(r["gold_level"])) for r in rows]
    pred = [LEVELS.index(level(r["pred_level"])) for r in rows]
    pairs = list(zip(gold, pred, strict=True))
    correct = sum(g == p for g, p in pairs)
    assert metrics["accuracy"]["value"] == correct / len(rows)
    assert metrics["accuracy"]["n"] == len(rows)
    credit = sum(1.0 - abs(g - p) / 2 for g, p in pairs)
    assert metrics["weighted_accuracy"]["value"] == pytest.approx(credit / len(rows))
    # positive = 高 or 中 (codes 0 and 1)
    tp = sum(g < 2 and p < 2 for g, p in pairs)
    predicted = sum(p < 2 for _, p in pairs)
    actual = sum(g < 2 for g, _ in pairs)
    assert metrics["precision"]["value"] == pytest.approx(tp / predicted)
    assert metrics["recall"]["value"] == pytest.approx(tp / actual)
    assert metrics["f1"]["value"] == pytest.approx(2 * tp / (predicted + actual))
    latency = np.array([r["latency_sec"] for r in rows], dtype=float)
    assert metrics["avg_latency_sec"]["value"] == pytest.approx(latency.mean())
    assert metrics["p95_latency_sec"]["value"] == pytest.approx(np.percentile(latency, 95))


def test_records_jsonl_one_line_per_record_with_misses(default_run: Path, rows: list) -> None:
    lines = read_record_lines(default_run)
    assert [line["id"] for line in lines] == [r["id"] for r in rows]
    for line, row in zip(lines, rows, strict=True):
        gold, pred = level(row["gold_level"]), level(row["pred_level"])
        assert "values" in line
        assert line["values"]["accuracy"] == (1.0 if gold == pred else 0.0), row["id"]
        if gold == pred:
            assert "accuracy" not in line.get("misses", {}), row["id"]
        else:
            reason = line["misses"]["accuracy"]
            assert gold in reason and pred in reason, reason


def test_report_md_has_the_metric_table(default_run: Path, rows: list) -> None:
    report = (default_run / "report.md").read_text(encoding="utf-8")
    correct = sum(level(r["gold_level"]) == level(r["pred_level"]) for r in rows)
    assert "| metric | value |" in report
    row = next(line for line in report.splitlines() if line.startswith("| `accuracy` ↑ |"))
    assert f"{correct / len(rows):.4f}" in row
    for name in CONTRACT_METRICS:
        assert re.search(rf"^\| `{name}` [↑↓] \|", report, re.M), name  # with its direction
    assert "contract-risk" in report


# --------------------------------------------------------------------------- options


def test_bootstrap_zero_gives_null_intervals(tmp_path: Path, default_run: Path) -> None:
    run_ok(
        tmp_path, "run", "contract-risk", "--data", str(EXAMPLE), "--out", "o", "--bootstrap", "0"
    )
    results = read_results(tmp_path / "o")
    assert results["signature"]["bootstrap"] == 0
    with_ci = read_results(default_run)["metrics"]
    for name, entry in results["metrics"].items():
        assert entry["ci_low"] is None and entry["ci_high"] is None, name
        assert entry["value"] == with_ci[name]["value"], name


def test_seed_changes_intervals_and_reproduces_them(tmp_path: Path) -> None:
    def run(seed: str, out: str) -> dict[str, Any]:
        run_ok(
            tmp_path,
            "run",
            "contract-risk",
            "--data",
            str(EXAMPLE),
            "--out",
            out,
            "--bootstrap",
            "150",
            "--seed",
            seed,
        )
        return read_results(tmp_path / out)

    first, again, other = run("11", "a"), run("11", "b"), run("12", "c")
    assert first["metrics"] == again["metrics"]
    assert first["signature"]["seed"] == 11 and other["signature"]["seed"] == 12
    changed = [
        name
        for name, entry in first["metrics"].items()
        if (entry["ci_low"], entry["ci_high"])
        != (other["metrics"][name]["ci_low"], other["metrics"][name]["ci_high"])
    ]
    assert changed, "a different seed gave identical intervals for every metric"
    assert "accuracy" in changed
    for name, entry in first["metrics"].items():
        assert entry["value"] == other["metrics"][name]["value"], name


def test_slice_by_contract_type(tmp_path: Path, rows: list) -> None:
    run_ok(
        tmp_path,
        "run",
        "contract-risk",
        "--data",
        str(EXAMPLE),
        "--out",
        "o",
        "--bootstrap",
        "0",
        "--slice",
        "contract_type",
    )
    slices = read_results(tmp_path / "o")["slices"]
    by_type: dict[str, list[dict]] = {}
    for row in rows:
        by_type.setdefault(row["contract_type"], []).append(row)
    assert set(slices) == {f"contract_type={t}" for t in by_type}
    for kind, members in by_type.items():
        entry = slices[f"contract_type={kind}"]
        assert entry["n_records"] == len(members)
        correct = sum(level(r["gold_level"]) == level(r["pred_level"]) for r in members)
        assert entry["metrics"]["accuracy"]["value"] == pytest.approx(correct / len(members))
        assert entry["metrics"]["accuracy"]["n"] == len(members)
    assert sum(entry["n_records"] for entry in slices.values()) == len(rows)


def test_stratified_sample(tmp_path: Path, rows: list) -> None:
    run_ok(
        tmp_path,
        "run",
        "contract-risk",
        "--data",
        str(EXAMPLE),
        "--out",
        "o",
        "--bootstrap",
        "0",
        "--sample",
        "12",
        "--stratify",
        "gold_level",
    )
    out = tmp_path / "o"
    results = read_results(out)
    assert results["n_records"] == 12
    lines = read_record_lines(out)
    assert len(lines) == 12
    gold_of = {r["id"]: level(r["gold_level"]) for r in rows}
    assert len({line["id"] for line in lines}) == 12
    assert Counter(gold_of[line["id"]] for line in lines) == {"高": 4, "中": 4, "低": 4}
    sampled = {r["id"]: r for r in rows if r["id"] in {line["id"] for line in lines}}
    correct = sum(level(r["gold_level"]) == level(r["pred_level"]) for r in sampled.values())
    assert results["metrics"]["accuracy"]["value"] == pytest.approx(correct / 12)
    assert results["metrics"]["accuracy"]["n"] == 12
    assert sum(map(sum, results["tables"]["confusion_matrix"]["matrix"])) == 12
    strata = results.get("sampling", {}).get("strata")
    if strata is not None:
        assert {s["value"]: s["sampled"] for s in strata} == {"高": 4, "中": 4, "低": 4}


def test_metrics_command_lists_every_registered_name(tmp_path: Path) -> None:
    proc = run_ok(tmp_path, "metrics")
    names = [*metric_registry(), *table_registry()]
    assert len(names) >= len(CONTRACT_METRICS)
    for name in names:
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", proc.stdout), name


def test_suites_command_lists_contract_risk(tmp_path: Path) -> None:
    proc = run_ok(tmp_path, "suites")
    assert "contract-risk" in proc.stdout


def test_version(tmp_path: Path) -> None:
    proc = run_ok(tmp_path, "--version")
    assert pingce.__version__ in proc.stdout
    assert re.search(r"\d+\.\d+\.\d+", pingce.__version__)


# --------------------------------------------------------------------------- bad input


def _line(rid: str, gold: Any = "高", pred: Any = "中", **extra: Any) -> str:
    row = {"id": rid, "gold_level": gold, "pred_level": pred, **extra}
    return json.dumps(row, ensure_ascii=False)


def _lines(*items: str) -> str:
    return "\n".join(items) + "\n"


GOOD_1, GOOD_2 = _line("cr-1"), _line("cr-2", "低", "低", latency_sec=1.0)

BAD_INPUTS = [
    # (case, files to write, arguments after `run`, words stderr must contain)
    ("malformed JSON", {"bad.jsonl": _lines(GOOD_1, '{"id": "cr-2", "gold_level": "高"')},
     ["contract-risk", "--data", "bad.jsonl"], ["bad.jsonl:2", "JSON"]),
    # a gold label off the scale (a prediction off it is a wrong answer: test_invalid_predictions)
    ("unknown label", {"bad.jsonl": _lines(GOOD_1, _line("cr-2", gold="极高"))},
     ["contract-risk", "--data", "bad.jsonl"], ["bad.jsonl:2", "gold_level", "极高"]),
    ("missing field", {"bad.jsonl": _lines(GOOD_1, "", '{"id": "cr-2", "gold_level": "低"}')},
     ["contract-risk", "--data", "bad.jsonl"], ["bad.jsonl:3", "pred_level", "missing"]),
    ("wrong type", {"bad.jsonl": _lines(GOOD_1, _line("cr-2", latency_sec="fast"))},
     ["contract-risk", "--data", "bad.jsonl"], ["bad.jsonl:2", "latency_sec", '"fast"']),
    ("duplicate id", {"bad.jsonl": _lines(GOOD_1, GOOD_2, _line("cr-1"))},
     ["contract-risk", "--data", "bad.jsonl"], ["bad.jsonl:3", "'id'", "cr-1", "line 1"]),
    ("empty file", {"bad.jsonl": ""},
     ["contract-risk", "--data", "bad.jsonl"], ["bad.jsonl", "empty"]),
    ("nonexistent data", {}, ["contract-risk", "--data", "absent.jsonl"], ["absent.jsonl"]),
    ("nonexistent suite", {}, ["no-such-suite", "--data", str(EXAMPLE)],
     ["no-such-suite", "contract-risk"]),
    ("invalid suite YAML", {"broken.yaml": "name: x\nmetrics: {accuracy: {}\n"},
     ["broken.yaml", "--data", str(EXAMPLE)], ["broken.yaml", "YAML"]),
    ("bad suite key", {"typo.yaml": "name: x\nlabels: {values: [高, 中, 低]}\n"
                       "inputs: {gold: gold_level, pred: pred_level}\n"
                       "metrics: {accuracy: {}, acuracy: {}}\n"},
     ["typo.yaml", "--data", str(EXAMPLE)], ["typo.yaml", "metrics.acuracy"]),
    ("unknown option value", {}, ["contract-risk", "--data", str(EXAMPLE), "--ci-method", "nope"],
     ["--ci-method", "nope"]),
    ("sample bigger than data", {}, ["contract-risk", "--data", str(EXAMPLE), "--sample", "61"],
     ["--sample", "61", "60"]),
    ("stratify without sample", {},
     ["contract-risk", "--data", str(EXAMPLE), "--stratify", "gold_level"],
     ["--stratify", "--sample"]),
    # 57 over three levels is 19 each; the example has only 18 records of 低
    ("short stratum", {},
     ["contract-risk", "--data", str(EXAMPLE), "--sample", "57", "--stratify", "gold_level"],
     ["gold_level", "低", "18", "19"]),
]  # fmt: skip


def _bad_input_cases() -> list[Any]:
    """Every case with --out; a few also without it (then no pingce-out/ may appear)."""
    also_default_out = {
        "malformed JSON",
        "duplicate id",
        "nonexistent suite",
        "unknown option value",
        "short stratum",
    }
    cases = []
    for name, files, args, words in BAD_INPUTS:
        cases.append(pytest.param(files, args, words, True, id=f"{name}-with-out"))
        if name in also_default_out:
            cases.append(pytest.param(files, args, words, False, id=f"{name}-default-out"))
    return cases


@pytest.mark.parametrize(("files", "args", "words", "with_out"), _bad_input_cases())
def test_bad_input_exits_2_and_writes_nothing(
    tmp_path: Path, files: dict[str, str], args: list[str], words: list[str], with_out: bool
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    extra = ["--out", "out", "--bootstrap", "0"] if with_out else ["--bootstrap", "0"]
    proc = cli(tmp_path, "run", *args, *extra)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    for word in words:
        assert word in proc.stderr, (word, proc.stderr)
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "pingce-out").exists()
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert after == before
    assert "outputs:" not in proc.stdout


# --------------------------------------------------------------------------- Python API


def test_evaluate_matches_the_cli_and_writes_the_same_files(tmp_path: Path) -> None:
    options = ["--bootstrap", "120", "--seed", "5", "--slice", "contract_type"]
    run_ok(tmp_path, "run", "contract-risk", "--data", str(EXAMPLE), "--out", "cli", *options)
    cli_out = tmp_path / "cli"

    result = pingce.evaluate(
        "contract-risk",
        str(EXAMPLE),
        bootstrap=120,
        seed=5,
        slice="contract_type",
        out=tmp_path / "py",
    )
    from_cli = read_results(cli_out)
    from_python = json.loads(result.to_json())
    assert from_python == from_cli
    assert result.metrics["accuracy"].value == from_cli["metrics"]["accuracy"]["value"]
    assert result.n_records == from_cli["n_records"]
    assert from_cli["slices"]  # the options really were applied

    py_out = tmp_path / "py"
    assert {p.name for p in py_out.iterdir()} == OUTPUT_FILES
    for name in sorted(OUTPUT_FILES):
        assert (py_out / name).read_bytes() == (cli_out / name).read_bytes(), name


def test_the_command_ends_at_once_with_every_file_complete(tmp_path: Path) -> None:
    example = EXAMPLE.parents[1] / "tcm_dialogue" / "records.jsonl"
    out = tmp_path / "out"
    script = (
        "import sys\n"
        "from pingce.cli import main\n"
        "sys.argv = ['pingce', *sys.argv[1:]]\n"
        "main()\n"
        "print('after main')\n"  # never reached: main ends the process
    )
    args = ["run", "tcm-dialogue", "--data", str(example), "--out", str(out), "--bootstrap", "0"]
    proc = run_python("-c", script, *args, "--similarity", "exact", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "after main" not in proc.stdout
    assert proc.stdout.rstrip().endswith("stats.npz)")  # the last line printed is all there
    assert {p.name for p in out.iterdir()} == OUTPUT_FILES
    n = sum(1 for line in example.read_text(encoding="utf-8").splitlines() if line.strip())
    assert len(read_record_lines(out)) == n
    assert read_results(out)["n_records"] == n
    missing = run_python("-c", script, "run", "tcm-dialogue", "--data", str(tmp_path / "no.jsonl"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_demo_runs_outside_the_repository(tmp_path: Path) -> None:
    """Issue 12: ``pingce demo`` from any folder runs the examples installed with pingce."""
    done = run_pingce("demo", "--out", "d", cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "ran 8 example suite(s)" in done.stdout
    suites = (
        "contract-risk",
        "function-call",
        "function-call-hf",
        "function-points",
        "judged",
        "judged-pairwise",
        "tcm-dialogue",
        "tool-use",
    )
    for suite in suites:
        assert (tmp_path / "d" / suite / "results.json").is_file(), suite
    # the judged examples are graded by the stand-in judges on loopback, and the demo says so
    assert "stand-in judges" in done.stdout and "(a rule, not a model)" in done.stdout
    for suite in ("judged", "judged-pairwise"):
        results = read_results(tmp_path / "d" / suite)
        assert "openai:stand-in-overlap" in results["signature"]["judge"], suite
        assert results["failures"]["judge"] == 0, suite
        assert all(m["value"] is not None for m in results["metrics"].values()), suite


def test_the_wheel_carries_the_examples_suites_and_law_list(tmp_path: Path) -> None:
    import shutil
    import subprocess
    import sys
    import zipfile

    root = Path(__file__).resolve().parents[1]
    source = tmp_path / "src-copy"
    shutil.copytree(root / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (root / name).is_file():
            shutil.copy(root / name, source / name)
    command = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps"]
    built = subprocess.run(
        [*command, "--no-build-isolation", "-q", "-w", str(tmp_path / "wheel")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "wheel").glob("pingce-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for suite in ("contract_risk", "function_call", "function_points", "tcm_dialogue", "tool_use"):
        assert f"pingce/examples/{suite}/records.jsonl" in names
    # function_call_hf is a link to function_call in the source: the wheel holds the file
    assert "pingce/examples/function_call_hf/records.jsonl" in names
    assert "pingce/suites/contract-risk.yaml" in names and "pingce/data/laws.csv" in names
    assert "pingce/suites/function-call-hf.yaml" in names


def test_tables_at_80_columns_never_cut_a_name(tmp_path: Path) -> None:
    """Issue 13: piped at 80 columns, metric names and slice labels are whole (no ellipsis);
    slice values beyond the width go to further tables."""
    import subprocess
    import sys

    from tests.cli_run import ENV

    data = Path(pingce.__file__).parent / "examples" / "contract_risk" / "records.jsonl"
    args = [sys.executable, "-m", "pingce", "run", "contract-risk", "--data", str(data)]
    args += ["--slice", "contract_type", "--bootstrap", "200", "--out", str(tmp_path / "o")]
    env = {**ENV, "COLUMNS": "80"}
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    assert all(len(line) <= 80 for line in done.stdout.splitlines())
    result = json.loads((tmp_path / "o" / "results.json").read_text())
    for name in result["metrics"]:
        assert any(line.startswith(f"│ {name} ") for line in done.stdout.splitlines()), name
    for key in result["slices"]:
        assert key.split("=", 1)[1] in done.stdout


def test_a_comparison_at_80_columns_never_cuts_a_name(tmp_path: Path) -> None:
    """Issue 13: the comparison table stacks at 80 columns (a metric's numbers below its name);
    at 130 it is a table; notes follow it as lines. Issue 31: the metrics that changed have rows,
    one line names the unchanged ones; only a note or verdict line ends cut with an ellipsis."""
    import subprocess
    import sys

    from tests.cli_run import ENV

    data = Path(pingce.__file__).parent / "examples" / "contract_risk" / "records.jsonl"
    old = tmp_path / "old.jsonl"
    text = data.read_text(encoding="utf-8")
    old.write_text(text.replace('"pred_level": "中"', '"pred_level": "低"'), encoding="utf-8")
    args = [sys.executable, "-m", "pingce", "compare", "contract-risk", "--data", str(data)]
    args += ["--baseline", str(old), "--bootstrap", "200", "--out", str(tmp_path / "c")]
    for width in ("80", "160"):
        env = {**ENV, "COLUMNS": width}
        done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert all("…" not in line[:-1] for line in lines)
        assert all(len(line) <= int(width) for line in lines)
        compared = json.loads((tmp_path / "c" / "comparison.json").read_text())
        unchanged = done.stdout.split("unchanged (", 1)[1].split("significance at", 1)[0]
        named = set(re.split(r"[,\s]+", unchanged.split(":", 1)[1].strip()))
        for name, m in compared["metrics"].items():
            if m["delta"] == 0:
                assert name in named, name
            else:
                assert any(line.startswith(f"│ {name} ") for line in lines), (width, name)


def test_report_md_slice_tables_stay_narrow(tmp_path: Path) -> None:
    """Issue 13: report.md's slice tables are a row per metric and at most three slice values
    a table, so they read in a terminal; every value and every metric is there."""
    data = Path(pingce.__file__).parent / "examples" / "contract_risk" / "records.jsonl"
    result = pingce.evaluate(
        "contract-risk", data, bootstrap=200, slice="contract_type", out=tmp_path / "o"
    )
    text = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    section = text.split("## Slices", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert rows and max(len(line) for line in rows) <= 112  # 110 and the direction mark
    for key, part in result.slices.items():
        assert key.split("=", 1)[1] in section
        for name, entry in part.metrics.items():
            if entry.value is not None:
                assert f"{entry.value:.4f}" in section, (key, name)
    for name in result.metrics:
        assert f"| `{name}` ↑ |" in section or f"| `{name}` ↓ |" in section


def test_a_pingce_warning_is_one_line_for_people(tmp_path: Path) -> None:
    """rouge-score's tokenizer turns Chinese text into no tokens: the command says so in one
    line, `pingce: warning: ...`, not as Python's warning with the source line that raised it."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: w\nmetrics:\n  r: {metric: text_rouge_l, tokenizer: rouge_score}\n"
        "inputs: {pred: a, gold: b}\n",
        encoding="utf-8",
    )
    data = tmp_path / "data.jsonl"
    data.write_text(
        json.dumps({"id": "1", "a": "今天天气很好", "b": "今天天气不错"}, ensure_ascii=False)
        + "\n"
        + json.dumps({"id": "2", "a": "the cat", "b": "the cat"})
        + "\n",
        encoding="utf-8",
    )
    done = run_python(
        "-m", "pingce", "run", str(suite), "--data", str(data), "--no-store",
        "--bootstrap", "0", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "no tokens" in line]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("pingce: warning: tokenizer 'rouge_score' turned 1 non-empty")
    assert "warn_if_empty" not in done.stderr and ".py:" not in done.stderr
