"""The one engine under run, compare and calibrate (issue 10): each defect found on the old main,
as a test that failed there, plus the engine's structural promises (no callbacks from reports
into metrics, no private imports across modules, no import cycle, a fast start-up)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import pingce
from pingce.errors import InputError, OptionError, SuiteError
from pingce.metrics import calls as calls_module
from pingce.metrics.protocol import Metric, Statistic
from pingce.metrics.registry import BUILTIN_NAMES, DEPRECATED, metric_registry
from pingce.report import write_outputs
from pingce.results import RecordRows
from pingce.similarity.fake import FakeBackend

from .cli_run import run_pingce, run_python
from .test_structure import MODULES, PACKAGES

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "pingce"
SUITES = SRC / "suites"
EXAMPLES = ROOT / "examples"
PINGCE = [sys.executable, "-m", "pingce"]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    return path


def suite_copy(tmp_path: Path, name: str, edit: Any) -> Path:
    """A copy of a built-in suite with ``edit(data)`` applied to its YAML."""
    data = yaml.safe_load((SUITES / f"{name}.yaml").read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / f"{name}-copy.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_pingce(*args, cwd=cwd)


# ------------------------------------------------------------------ options overlay the suite


def test_zero_division_option_keeps_the_suites_other_defaults(tmp_path: Path) -> None:
    """Old main: `--zero-division 0` replaced the whole `defaults:` block, so a suite's
    `threshold: 0.99` silently became 0.7 (sem_precision 0.2000 -> 0.7013)."""

    def strict(data: dict[str, Any]) -> None:
        data["defaults"]["threshold"] = 0.99

    suite = suite_copy(tmp_path, "function-points", strict)
    data = EXAMPLES / "function_points" / "records.jsonl"
    plain = pingce.evaluate(suite, data, bootstrap=0)
    overlaid = pingce.evaluate(suite, data, bootstrap=0, zero_division=0)
    default = pingce.evaluate("function-points", data, bootstrap=0)
    assert overlaid.value("sem_precision") == plain.value("sem_precision")
    assert plain.value("sem_precision") != default.value("sem_precision")
    assert "threshold=0.99" in overlaid.signature.metrics["sem_precision"]
    assert "zero_division=0.0" in overlaid.signature.metrics["sem_precision"]
    assert overlaid.signature.zero_division == 0.0


def test_zero_division_option_keeps_the_normalize_synonyms(tmp_path: Path) -> None:
    """Old main: a function-call suite's `normalize:` synonyms were dropped with the block."""

    def synonyms(data: dict[str, Any]) -> None:
        data["defaults"]["normalize"] = {"synonyms": {"开启": "打开"}}

    suite = suite_copy(tmp_path, "function-call", synonyms)
    call = {"name": "light", "arguments": {"action": "打开"}}
    records = [
        {
            "id": "a",
            "gold_fn": [call],
            "pred_fn": [{"name": "light", "arguments": {"action": "开启"}}],
        },
        {"id": "b", "gold_fn": [call], "pred_fn": [call]},
    ]
    for zero_division in ("suite", 0, 1, None):
        result = pingce.evaluate(suite, records, bootstrap=0, zero_division=zero_division)
        assert result.value("fn_acc_all") == 1.0, zero_division
    assert pingce.evaluate("function-call", records, bootstrap=0).value("fn_acc_all") == 0.5


def test_cli_zero_division_overlays_one_default(tmp_path: Path) -> None:
    def strict(data: dict[str, Any]) -> None:
        data["defaults"]["threshold"] = 0.99

    suite = suite_copy(tmp_path, "function-points", strict)
    data = EXAMPLES / "function_points" / "records.jsonl"
    values = []
    for extra in ([], ["--zero-division", "0"]):
        out = tmp_path / f"out{len(extra)}"
        run = cli("run", str(suite), "--data", str(data), "--bootstrap", "0", "--out", str(out),
                  *extra, cwd=tmp_path)  # fmt: skip
        assert run.returncode == 0, run.stderr
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        values.append(results["metrics"]["sem_precision"]["value"])
        assert "threshold=0.99" in results["signature"]["metrics"]["sem_precision"]
    assert values[0] == values[1]


# ------------------------------------------------------------ reports only read plain results


def test_each_record_is_scored_once_and_reports_never_call_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Old main: writing records.jsonl re-scored every record for its miss reasons
    (score_record ran 80 times on the 21 example records)."""
    calls = {"score_record": 0}
    original = calls_module.score_record

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls["score_record"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(calls_module, "score_record", counting)
    data = EXAMPLES / "function_call" / "records.jsonl"
    n = sum(1 for line in data.read_text(encoding="utf-8").splitlines() if line.strip())
    result = pingce.evaluate("function-call", data, bootstrap=20)
    scored = n - result.failures.parse  # a prediction that did not parse is not scored
    assert calls["score_record"] == scored
    assert isinstance(result.records, RecordRows)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a report called back into a metric or a statistic")

    def subclasses(cls: type) -> set[type]:
        found = set(cls.__subclasses__())
        return found.union(*(subclasses(c) for c in found))

    for cls in {Metric, *subclasses(Metric)}:
        for name in ("finalize", "count", "statistic", "undefined_reason"):
            monkeypatch.setattr(cls, name, refuse)
    for cls in {Statistic, *subclasses(Statistic)}:
        monkeypatch.setattr(cls, "compute", refuse)
    paths = write_outputs(result, tmp_path / "out")
    assert calls["score_record"] == scored
    rows = [json.loads(line) for line in paths["records.jsonl"].read_text().splitlines()]
    assert len(rows) == n
    assert any("misses" in row and "fn_acc_all" in row["misses"] for row in rows)


def test_results_hold_plain_data_only() -> None:
    result = pingce.evaluate("contract-risk", EXAMPLES / "contract_risk" / "records.jsonl")
    rows = result.records
    assert rows is not None
    for column in [*rows.values.values(), *rows.misses.values()]:
        assert isinstance(column, np.ndarray)
    for value in vars(rows).values():
        assert not isinstance(value, Metric | Statistic)
    assert result.record_values()[0]["fields"]["gold_level"] in ("高", "中", "低")


# ---------------------------------------------------------------------------------- ids


def test_real_ids_that_look_like_line_numbers(tmp_path: Path) -> None:
    """Old main: ids `line-1`, `line-2` were taken for missing ids (compare exited 2, "this
    record has none"), and a real id `line-2` beside a record without an id was a duplicate."""
    records = [
        {"id": "line-1", "gold_level": "高", "pred_level": "高"},
        {"id": "line-2", "gold_level": "低", "pred_level": "中"},
    ]
    baseline = [{**records[0], "pred_level": "低"}, {**records[1], "pred_level": "高"}]
    result = pingce.compare("contract-risk", records, baseline, bootstrap=0)
    assert result.metrics["accuracy"].delta == pytest.approx(0.5)
    mixed = [records[1], {"gold_level": "高", "pred_level": "中"}]
    run = pingce.evaluate("contract-risk", mixed, bootstrap=0)
    assert [row["id"] for row in run.record_values()] == ["line-2", None]
    path = write_jsonl(tmp_path / "mixed.jsonl", mixed)
    done = cli("run", "contract-risk", "--data", str(path), "--out", str(tmp_path / "o"),
               "--bootstrap", "0", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr


# -------------------------------------------------------------------- validation up front


def test_a_metric_given_the_wrong_kind_of_input_is_a_suite_error(tmp_path: Path) -> None:
    """Old main: `rouge_l: {}` in a copy of function-call.yaml crashed mid-run with
    `TypeError: expected string or bytes-like object, got 'tuple'` (exit 1)."""

    def add(data: dict[str, Any]) -> None:
        data["metrics"]["rouge_l"] = {}

    suite = suite_copy(tmp_path, "function-call", add)
    with pytest.raises(SuiteError) as info:
        pingce.evaluate(suite, tmp_path / "never-read.jsonl")
    assert info.value.key == "metrics.rouge_l"
    message = str(info.value)
    assert "'pred_fn' as text" in message and "as function calls" in message, message
    data = EXAMPLES / "function_call" / "records.jsonl"
    done = cli("run", str(suite), "--data", str(data), "--out", str(tmp_path / "o"),
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert "metrics.rouge_l" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "args",
    [["--slice", "nosuch"], ["--sample", "4", "--stratify", "nosuch"]],
)
def test_an_option_naming_a_field_no_record_has_is_an_error(
    tmp_path: Path, args: list[str]
) -> None:
    """Old main: `--slice nosuch` reported one slice `nosuch=(missing)` with every record."""
    data = EXAMPLES / "contract_risk" / "records.jsonl"
    done = cli("run", "contract-risk", "--data", str(data), "--out", str(tmp_path / "o"),
               *args, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stdout
    assert "nosuch" in done.stderr and "no record" in done.stderr
    assert not (tmp_path / "o").exists()
    with pytest.raises(OptionError, match="nosuch"):
        pingce.evaluate("contract-risk", data, slices=["nosuch"])


def test_a_slice_field_some_records_have_keeps_a_missing_slice() -> None:
    records = [
        {"id": "a", "gold_level": "高", "pred_level": "高", "kind": "x"},
        {"id": "b", "gold_level": "低", "pred_level": "高"},
    ]
    result = pingce.evaluate("contract-risk", records, bootstrap=0, slices=["kind"])
    assert set(result.slices) == {"kind=x", "kind=(missing)"}


def test_duplicate_turns_stop_the_run_before_any_similarity_is_asked() -> None:
    turn = {
        "dialogue_id": "d1",
        "turn": 1,
        "status": "INQUIRY_ONLY",
        "pred_text": "恶寒无汗",
        "gt_text": "恶寒重，无汗",
    }
    records = [turn, {**turn, "turn": 2, "pred_text": "发热"}, {**turn, "pred_text": "头痛"}]
    fake = FakeBackend(lambda a, b: 0.5)
    with pytest.raises(InputError) as info:
        pingce.evaluate("tcm-dialogue", records, similarity=fake, bootstrap=0)
    assert info.value.line == 3 and info.value.field == "turn"
    assert fake.asked == []


def test_a_selection_record_without_gold_stops_before_any_judge_call() -> None:
    records = [
        {"id": "s1", "task": "selection", "gold_items": ["订单"], "pred_items": ["订单表"]},
        {"id": "s2", "task": "selection", "pred_items": ["客户"]},
    ]
    fake = FakeBackend(lambda a, b: 0.9)
    with pytest.raises(InputError) as info:
        pingce.evaluate("function-points", records, similarity=fake, bootstrap=0)
    assert (info.value.line, info.value.field) == (2, "gold_items")
    assert fake.asked == []


# ------------------------------------------------------------------------ one policy each


def test_one_similarity_grammar_for_every_entry_point(tmp_path: Path) -> None:
    from pingce.calibrate import calibrate

    pairs = write_jsonl(tmp_path / "pairs.jsonl", [{"a": "x", "b": "y", "match": True}])
    messages = []
    for call in (
        lambda: pingce.evaluate("function-points", [], similarity="lexical:words"),
        lambda: calibrate(pairs, "lexical:words"),
    ):
        with pytest.raises(OptionError) as info:
            call()
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "lexical:char-1-3" in messages[0], messages
    data = EXAMPLES / "function_points" / "records.jsonl"
    done = cli("run", "function-points", "--data", str(data), "--similarity", "lexical:words",
               "--out", str(tmp_path / "o"), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2 and "lexical:char-1-3" in done.stderr


@pytest.mark.parametrize("bad", ["2", "half", 0.5, True])
def test_zero_division_is_validated_in_one_place(bad: Any) -> None:
    with pytest.raises(OptionError, match="zero-division must be null, 0 or 1"):
        pingce.evaluate("contract-risk", [], zero_division=bad)


# ----------------------------------------------------------------------- function-points


def test_function_points_records_have_values_and_reasons(tmp_path: Path) -> None:
    """Old main: records.jsonl of function-points had empty `values` for all 20 records."""
    data = EXAMPLES / "function_points" / "records.jsonl"
    result = pingce.evaluate("function-points", data, bootstrap=0)
    rows = result.record_values()
    assert len(rows) == 20
    for row in rows:
        task = row["fields"]["task"]
        wanted = "judge_accuracy" if task == "judge" else "set_precision"
        assert row["values"][wanted] is not None or task == "selection", row
        assert set(row["values"]) >= {"judge_accuracy", "set_f1", "sem_f1"}
    judge = {row["id"]: row for row in rows if row["fields"]["task"] == "judge"}
    wrong = [row for row in judge.values() if row["values"]["judge_accuracy"] == 0.0]
    assert wrong and all("predicted" in row["misses"]["judge_accuracy"] for row in wrong)
    selection = [row for row in rows if row["fields"]["task"] == "selection"]
    assert any("missed" in row.get("misses", {}).get("set_recall", "") for row in selection)


# ---------------------------------------------------------------------------------- names


def test_generic_text_metrics_have_their_own_names() -> None:
    names = set(metric_registry())
    assert {"text_rouge_n", "text_rouge_l", "text_rouge_lsum", "text_bleu"} <= names
    assert {"text_corpus_bleu", "text_chrf"} <= names
    assert {"rouge-1", "rouge-2", "rouge-l", "bleu-4"} <= names  # the reference's, kept
    assert not set(DEPRECATED) & names


def test_a_deprecated_name_still_works_and_says_what_replaces_it(tmp_path: Path) -> None:
    records = [
        {"id": "1", "pred_text": "打开 客厅 的 灯", "gold_text": "打开 客厅 灯"},
        {"id": "2", "pred_text": "关闭 空调", "gold_text": "关闭 卧室 空调"},
    ]
    old = {"name": "t", "metrics": {"rouge_l": {}, "bleu": {"smoothing": 1}}}
    new = {
        "name": "t",
        "metrics": {
            "rouge_l": {"metric": "text_rouge_l"},
            "bleu": {"metric": "text_bleu", "smoothing": 1},
        },
    }
    paths = []
    for i, spec in enumerate((old, new)):
        path = tmp_path / f"suite{i}.yaml"
        path.write_text(yaml.safe_dump(spec), encoding="utf-8")
        paths.append(path)
    a = pingce.evaluate(paths[0], records, bootstrap=0)
    b = pingce.evaluate(paths[1], records, bootstrap=0)
    assert a.metrics == b.metrics
    assert any("'rouge_l' is deprecated" in n and "text_rouge_l" in n for n in a.notes)
    assert not b.notes
    data = write_jsonl(tmp_path / "r.jsonl", records)
    done = cli("run", str(paths[0]), "--data", str(data), "--out", str(tmp_path / "o"),
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0 and "deprecated" in done.stdout


def test_metrics_command_lists_new_names_and_the_renames(tmp_path: Path) -> None:
    done = cli("metrics", cwd=tmp_path)
    assert done.returncode == 0
    assert "text_rouge_l" in done.stdout and "rouge_l -> text_rouge_l" in done.stdout


# --------------------------------------------------------------------- structure of src


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def test_no_module_imports_another_modules_private_names() -> None:
    """Old main: comparison.py imported six private names of runner.py."""
    found = []
    modules, packages = MODULES, PACKAGES
    for module, tree in modules.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").startswith("pingce")
            ):
                for alias in node.names:
                    if alias.name.startswith("_") and alias.name != "__version__":
                        found.append(f"{module}: {alias.name}")
                # a private module (``metrics._policy``) is imported only inside its package
                source = _absolute(module, module in packages, node)
                parts = source.split(".")
                private = [i for i, part in enumerate(parts) if part.startswith("_")]
                if private and parts[0] == "pingce":
                    package = ".".join(parts[: private[0]])
                    if not module.startswith(package + ".") and module != package:
                        found.append(f"{module}: private module {source}")
    assert not found


def test_the_command_line_starts_without_the_heavy_libraries() -> None:
    """Old main: `import pingce.cli` pulled scipy.optimize, numpy, rich and every metric family
    (911 modules, 1.2 s for `pingce --help`)."""
    code = (
        "import sys, pingce.cli\n"
        "heavy = ['numpy', 'scipy', 'pydantic', 'rich', 'yaml', 'jieba', 'aiohttp', 'cn2an',"
        " 'rapidfuzz', 'pandas', 'pyarrow', 'asyncio']\n"
        "print([m for m in heavy if m in sys.modules], len(sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, count = done.stdout.rsplit(" ", 1)
    assert loaded == "[]," or loaded == "[]", done.stdout
    assert int(count) < 200
    help_text = subprocess.run(
        [*PINGCE, "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "run" in help_text and "compare" in help_text


def test_listing_metrics_does_not_import_scipy_or_pydantic() -> None:
    code = (
        "import sys\nfrom pingce.metrics.registry import metric_registry\nmetric_registry()\n"
        "print([m for m in ('scipy', 'pydantic', 'jieba', 'aiohttp') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_registry_table_names_what_each_family_registers() -> None:
    """A suite's metric is looked up by importing its family alone (``registry.BUILTIN_NAMES``,
    so a run pays only for the families it uses): the table lists exactly the names each family
    registers, in an order where no family imports one listed after it."""
    code = (
        "import importlib, json\nfrom pingce.metrics import registry as r\nfound = {}\n"
        "for module in r.BUILTIN_MODULES:\n"
        "    before = set(r._METRICS) | set(r._TABLES)\n"
        "    importlib.import_module('pingce.metrics.' + module)\n"
        "    found[module] = sorted((set(r._METRICS) | set(r._TABLES)) - before)\n"
        "print(json.dumps(found))"
    )
    done = run_python("-c", code)
    assert done.returncode == 0, done.stderr
    expected = {module: sorted(names) for module, names in BUILTIN_NAMES.items()}
    assert json.loads(done.stdout) == expected


# what a run must not import unless its records need it (the numbers of issue 32 in comments)
HEAVY_FOR_A_RUN = [
    "scipy.sparse",  # 0.15 s (evidence retrieval, with evidence only; scipy alone, for the
    # signature's version, is a third of importlib.metadata's instructions)
    "pydantic",  # 0.08 s: the results and a built-in suite's spec are plain (pingce._plain)
    "importlib.metadata",  # 0.03 s (pydantic's plugin loader imported it)
    "cn2an",  # 0.19 s compiling its regular expressions (a Chinese numeral in a citation)
    "jieba",
    "rapidfuzz",
    "pandas",
    "pyarrow",
    "asyncio",  # the HTTP client (--model, a remote similarity)
    "pingce.engine.model",
    "pingce.engine.compare",
    "pingce.report.comparison_html",  # the comparison page (pingce.report imports on first use)
    "pingce.report.side_by_side",
    "yaml",  # a built-in suite is read from suites/parsed.json (10 ms import, 3.5 ms parse)
    "pingce.text.bleu",
    *(f"pingce.metrics.{family}" for family in ("calls", "dialogue", "overlap", "ter", "tools")),
]


def test_a_run_imports_only_what_its_suite_and_records_need(tmp_path: Path) -> None:
    """contract-risk on records that cite no evidence: the families it does not use, the
    evidence checks' libraries, the HTTP client and the comparison are never imported."""
    records = [
        {**json.loads(line), "evidence": []}
        for line in (EXAMPLES / "contract_risk" / "records.jsonl").read_text("utf-8").splitlines()
    ]
    data = write_jsonl(tmp_path / "records.jsonl", records)
    assert heavy_modules_after_a_run(data, tmp_path) == []
    assert (tmp_path / "out" / "results.json").is_file()


def heavy_modules_after_a_run(data: Path, tmp_path: Path) -> list[str]:
    """The modules of HEAVY_FOR_A_RUN that `pingce run contract-risk --data DATA` imported, in
    a fresh interpreter."""
    code = (
        "import json, sys\nfrom pingce.cli import cli\n"
        f"cli(['run', 'contract-risk', '--data', {str(data)!r}, '--out', "
        f"{str(tmp_path / 'out')!r}], prog_name='pingce', standalone_mode=False)\n"
        f"print(json.dumps([m for m in {HEAVY_FOR_A_RUN!r} if m in sys.modules]))"
    )
    done = run_python("-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_a_run_on_the_example_records_reads_their_numerals_without_cn2an(tmp_path: Path) -> None:
    """Every example record cites evidence with Chinese numerals (十五万元, 第五百六十三条):
    standard spellings are read by grounding/numerals.py, so cn2an (1.3 G instructions, a third
    of this run in issue 32) is not imported; nor is scipy.sparse (0.6 G), since the evidence
    retrieval and the lexical cosines count a run this small in numpy (text.ngrams.JOIN_NGRAMS);
    nor pydantic (the results and the built-in suite's spec are pingce._plain classes, the spec
    read validated from parsed.json) nor importlib.metadata."""
    loaded = heavy_modules_after_a_run(EXAMPLES / "contract_risk" / "records.jsonl", tmp_path)
    assert "cn2an" not in loaded and "scipy.sparse" not in loaded, loaded
    assert "pydantic" not in loaded and "importlib.metadata" not in loaded, loaded
    assert set(loaded) <= {"rapidfuzz"}, loaded


@pytest.mark.parametrize("variable", [None, ""])
def test_the_command_turns_pydantic_plugins_off_unless_asked(
    tmp_path: Path, variable: str | None
) -> None:
    """``pingce`` (``main``) sets PYDANTIC_DISABLE_PLUGINS=__all__ when unset, so pydantic does not
    scan every installed package's entry points for plugins (6 ms of each start in issue 32);
    a user who sets the variable, empty included, gets pydantic's own behaviour. (A run of a
    built-in suite imports no pydantic: a suite file validated by pydantic is run here.)"""
    data = str(EXAMPLES / "contract_risk" / "records.jsonl")
    suite = resources.files("pingce.suites") / "contract-risk.yaml"
    (tmp_path / "suite.yaml").write_text(suite.read_text(encoding="utf-8"), encoding="utf-8")
    code = (
        "import json, os, sys\n"
        f"variable = {variable!r}\n"
        "os.environ.pop('PYDANTIC_DISABLE_PLUGINS', None)\n"
        "if variable is not None:\n"
        "    os.environ['PYDANTIC_DISABLE_PLUGINS'] = variable\n"
        "end = os._exit\n"
        "def ended(code):\n"
        "    import pydantic.plugin._loader as loader\n"
        "    print(json.dumps([code, loader._plugins is not None]), flush=True)\n"
        "    end(code)\n"
        "os._exit = ended\n"
        f"sys.argv = ['pingce', 'run', 'suite.yaml', '--data', {data!r}, '--out', 'out']\n"
        "from pingce.cli import main\n"
        "main()\n"
    )
    done = run_python("-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    code_seen, scanned = json.loads(done.stdout.splitlines()[-1])
    assert code_seen == 0
    assert scanned is (variable is not None)


def test_a_command_is_imported_with_the_collector_paused_and_frozen_after() -> None:
    """Start-up makes modules and classes that live to the end: a command's module (and a run's
    engine) is imported with the collector paused, and what it made is frozen after, so no
    collection walks it (17.6 -> 5.3 ms of collections in a run of the example, issue 32); the
    collector is on again afterwards."""
    code = (
        "import gc, json\nfrom pingce.cli import cli\n"
        "before = gc.get_freeze_count()\n"
        "command = cli.get_command(None, 'run')\n"
        "print(json.dumps([gc.isenabled(), gc.get_freeze_count() > before]))"
    )
    done = run_python("-c", code)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True, True]


def test_a_run_does_not_import_the_comparison_and_a_comparison_not_the_run() -> None:
    """Old main: ``pingce.engine`` imported ``engine.compare`` eagerly, so every run paid for the
    paired comparison's modules (0.36 s of start-up measured in issue 32)."""
    code = (
        "import sys\nfrom pingce.engine import {name}\n"
        "print(sorted(m for m in ('pingce.engine.compare', 'pingce.engine.evaluate') "
        "if m in sys.modules))"
    )
    for name, loaded, absent in [
        ("evaluate_suite", "pingce.engine.evaluate", "pingce.engine.compare"),
        ("compare_suite", "pingce.engine.compare", None),
    ]:
        done = subprocess.run(
            [sys.executable, "-c", code.format(name=name)],
            capture_output=True,
            text=True,
            check=True,
        )
        assert loaded in done.stdout, done.stdout
        if absent:
            assert absent not in done.stdout, done.stdout


# ------------------------------------------------------------------------------- profile


def test_profile_shows_the_time_of_each_phase(tmp_path: Path) -> None:
    data = EXAMPLES / "function_call" / "records.jsonl"
    out = tmp_path / "o"
    done = cli("run", "function-call", "--data", str(data), "--out", str(out), "--profile",
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    for phase in ("plan", "load", "statistics", "intervals", "write"):
        assert phase in done.stderr
    profile = json.loads((out / "results.json").read_text(encoding="utf-8"))["profile"]
    assert {"plan", "load", "statistics", "intervals"} <= set(profile)
    assert all(v >= 0 for v in profile.values())
    quiet = cli("run", "function-call", "--data", str(data), "--out", str(tmp_path / "o2"),
                cwd=tmp_path)  # fmt: skip
    assert "time per phase" not in quiet.stderr
    assert "profile" not in json.loads((tmp_path / "o2" / "results.json").read_text())


def test_compare_goes_through_the_engine_and_report(tmp_path: Path) -> None:
    """compare writes through report/, runs one similarity phase for both sides and types its
    signature."""
    data = EXAMPLES / "function_points" / "records.jsonl"
    records = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    fake = FakeBackend(lambda a, b: 0.8)
    result = pingce.compare("function-points", records, records, similarity=fake, bootstrap=0)
    distinct = set(fake.asked)
    assert len(distinct) == len(fake.asked)  # both sides' pairs asked once, together
    assert all(m.delta in (0.0, None) for m in result.metrics.values())
    assert result.signature.similarity == "fake"


# --------------------------------------------------------- review of the engine (findings)


def _function_points_with_a_failure(zero_division: Any) -> list[dict[str, Any]]:
    records = [
        {"id": "j1", "task": "judge", "gold": False, "pred": "No"},
        {"id": "j2", "task": "judge", "gold": True, "pred": "Yes"},
        {"id": "s1", "task": "selection", "gold_items": ["订单"], "pred_items": ["订单表"]},
        {"id": "s2", "task": "selection", "gold_items": ["客户"], "pred_items": ["客户"]},
    ]
    fake = FakeBackend(lambda a, b: 0.9, fail=[("订单表", "订单")])
    result = pingce.evaluate(
        "function-points", records, similarity=fake, bootstrap=0, zero_division=zero_division
    )
    return result.record_values()


@pytest.mark.parametrize("zero_division", [None, 0, 1])
def test_a_record_a_metric_does_not_count_has_no_value_whatever_the_policy(
    zero_division: Any,
) -> None:
    rows = {row["id"]: row for row in _function_points_with_a_failure(zero_division)}
    assert rows["j1"]["values"]["judge_precision"] is None  # said No: not a precision record
    assert rows["j1"]["values"]["judge_accuracy"] == 1.0
    assert rows["j1"]["values"]["sem_precision"] is None  # a judge record has no items
    assert rows["s2"]["values"]["judge_accuracy"] is None
    assert rows["s2"]["values"]["sem_f1"] == 1.0
    assert rows["s1"]["values"]["sem_precision"] is None  # left out: its call failed
    assert "similarity failed" in rows["s1"]["misses"]["sem_precision"]
    assert rows["s1"]["values"]["set_precision"] == 0.0


def test_a_value_filled_by_the_policy_says_so() -> None:
    records = [{"id": "a", "gold_level": "高", "pred_level": "高"}]
    result = pingce.evaluate("contract-risk", records, bootstrap=0, zero_division=0)
    latency = result.metrics["avg_latency_sec"]
    assert latency.value == 0.0 and latency.n == 0
    assert latency.value_note and "zero-division policy" in latency.value_note
    assert "no record has latency_sec" in latency.value_note
    plain = pingce.evaluate("contract-risk", records, bootstrap=0)
    assert plain.metrics["avg_latency_sec"].value is None
    assert plain.metrics["avg_latency_sec"].value_note is None
    assert result.metrics["accuracy"].value_note is None


def test_logic_weighted_f1_is_the_f1_of_its_parts_under_the_policy() -> None:
    turn = {"dialogue_id": "d", "status": "DEFINITIVE", "gt_diagnosis": "甲"}
    records = [
        {**turn, "turn": 1, "pred_diagnosis": "甲"},
        {**turn, "turn": 2, "pred_diagnosis": "乙"},
    ]
    result = pingce.evaluate("tcm-dialogue", records, bootstrap=0, zero_division=1)
    p = result.value("rejection_precision")  # no CASE_REJECTED turn: the policy's 1
    r = result.value("effective_recall")
    assert (p, r) == (1.0, 0.5)
    assert result.value("logic_weighted_f1") == pytest.approx(2 * p * r / (p + r))
    assert pingce.evaluate("tcm-dialogue", records, bootstrap=0).value("logic_weighted_f1") is None


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"gold": "a..b"}, "invalid field path"),
        ({"gold": 5}, "accuracy"),
    ],
)
def test_a_field_argument_that_is_not_a_path_is_a_suite_error(
    tmp_path: Path, entry: dict[str, Any], words: str
) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["metrics"]["accuracy"] = entry

    suite = suite_copy(tmp_path, "contract-risk", edit)
    with pytest.raises(SuiteError) as info:
        pingce.evaluate(suite, EXAMPLES / "contract_risk" / "records.jsonl")
    assert info.value.key == "metrics.accuracy" and words in str(info.value)


def test_a_negative_seed_is_an_option_error_before_any_call() -> None:
    fake = FakeBackend(lambda a, b: 0.5)
    with pytest.raises(OptionError, match="--seed"):
        pingce.evaluate(
            "function-points", EXAMPLES / "function_points" / "records.jsonl", similarity=fake,
            seed=-1,
        )  # fmt: skip
    assert fake.asked == []


def test_a_metric_left_without_records_by_failures_says_why() -> None:
    records = [{"id": "s1", "task": "selection", "gold_items": ["订单"], "pred_items": ["订单表"]}]
    fake = FakeBackend(lambda a, b: 0.9, fail=[("订单表", "订单")])
    result = pingce.evaluate("function-points", records, similarity=fake, bootstrap=0)
    reason = result.metrics["sem_precision"].undefined_reason
    assert reason and "failed similarity calls" in reason


def test_values_above_the_best_are_not_misses() -> None:
    """The reference's max assignment lets sem_recall exceed 1: that is no miss."""
    records = [
        {"id": "s1", "task": "selection", "gold_items": ["订单"], "pred_items": ["订单表", "订单"]},
    ]
    fake = FakeBackend(lambda a, b: 0.9)
    result = pingce.evaluate("function-points", records, similarity=fake, bootstrap=0)
    row = result.record_values()[0]
    assert row["values"]["sem_recall"] == pytest.approx(1.9)  # 1 (exact) + 0.9, one truth
    assert "sem_recall" not in row["misses"]
    assert row["values"]["sem_precision"] == pytest.approx(0.95)
    assert "'订单表' ~ '订单': 0.9 (> τ 0.7, counts 0.9)" in row["misses"]["sem_precision"]


@pytest.mark.parametrize(("group", "name"), [("defaults", "treshold"), ("inputs", "answer")])
def test_a_default_or_input_no_metric_takes_is_a_suite_error(
    tmp_path: Path, group: str, name: str
) -> None:
    def edit(data: dict[str, Any]) -> None:
        data.setdefault(group, {})[name] = 0.9 if group == "defaults" else "answer"

    suite = suite_copy(tmp_path, "function-points", edit)
    with pytest.raises(SuiteError) as info:
        pingce.evaluate(suite, EXAMPLES / "function_points" / "records.jsonl")
    assert info.value.key == f"{group}.{name}"
    assert "ignored" in str(info.value) and "threshold" in str(info.value)


def test_number_slices_are_in_numeric_order() -> None:
    records = [
        {"id": str(i), "gold_level": "高", "pred_level": "高", "latency_sec": float(v)}
        for i, v in enumerate([10, 2, 2, 30])
    ] + [{"id": "x", "gold_level": "低", "pred_level": "高"}]
    result = pingce.evaluate("contract-risk", records, bootstrap=0, slices=["latency_sec"])
    assert list(result.slices) == [
        "latency_sec=2",
        "latency_sec=10",
        "latency_sec=30",
        "latency_sec=(missing)",
    ]


def test_compare_takes_the_zero_division_policy(tmp_path: Path) -> None:
    records = [{"id": "a", "gold_level": "低", "pred_level": "低"}]
    compared = pingce.compare("contract-risk", records, records, bootstrap=0, zero_division=0)
    assert compared.metrics["precision"].candidate == 0.0
    assert (
        pingce.compare("contract-risk", records, records, bootstrap=0)
        .metrics["precision"]
        .candidate
        is None
    )
