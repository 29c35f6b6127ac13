"""Issue 28: a suite file's YAML is read by a safe loader that refuses what PyYAML would take
silently or fail on with a traceback: a key given twice in one mapping (named with both lines),
nesting deeper than a sane limit (named with the file), a value inside itself."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
import yaml

from pingce.errors import SuiteError
from pingce.suites import builtin_suites, load_suite

from .cli_run import run_pingce

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SUITE_HEAD = "name: t\nlabels: {values: [高, 中, 低]}\ninputs: {gold: g, pred: p}\n"


def failed_run(tmp_path: Path, suite: Path, data: Path) -> str:
    """``pingce run``: exit 2, nothing in --out, no traceback; its stderr."""
    out = tmp_path / "out"
    done = run_pingce(
        "run", str(suite), "--data", str(data), "--out", str(out), "--bootstrap", "0", "--no-store"
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert not out.exists()
    return done.stderr


def test_a_deeply_nested_suite_file_is_an_error_naming_the_file(tmp_path: Path) -> None:
    # before: RecursionError (PyYAML composes nodes recursively)
    path = tmp_path / "deep.yaml"
    path.write_text(
        "name: x\nmetrics: {accuracy: {}}\nextra: " + "[" * 50_000 + "]" * 50_000 + "\n",
        encoding="utf-8",
    )
    stderr = failed_run(tmp_path, path, EXAMPLES / "contract_risk" / "records.jsonl")
    assert stderr.startswith(f"pingce: error: {path}:3: nested more than 64 levels deep")


def test_nesting_within_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    deep = "{a: " * 40 + "1" + "}" * 40
    path.write_text(
        SUITE_HEAD + f"metrics: {{accuracy: {{}}}}\nmodel: {{prediction: p, parameters: {deep}}}\n",
        encoding="utf-8",
    )
    assert load_suite(path).spec.model is not None


DUPLICATES = [
    # (YAML text, key named, the two lines)
    (SUITE_HEAD + "metrics: {accuracy: {}}\nmetrics: {qwk: {}}\n", "metrics", (4, 5)),
    (SUITE_HEAD + "metrics:\n  accuracy: {}\n  qwk: {}\n  accuracy: {zero_division: 1}\n",
     "metrics.accuracy", (5, 7)),
    (SUITE_HEAD + "metrics: {f1: {average: macro, average: micro}}\n", "metrics.f1.average",
     (4, 4)),
    (SUITE_HEAD.replace("inputs: {gold: g, pred: p}", "inputs: {gold: g, pred: p, gold: h}")
     + "metrics: {accuracy: {}}\n", "inputs.gold", (3, 3)),
]  # fmt: skip


@pytest.mark.parametrize(("text", "key", "lines"), DUPLICATES, ids=[c[1] for c in DUPLICATES])
def test_a_key_given_twice_is_an_error_naming_it_and_both_lines(
    tmp_path: Path, text: str, key: str, lines: tuple[int, int]
) -> None:
    # before: YAML kept the second silently
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    message = str(info.value)
    assert info.value.key == key, message
    assert message.startswith(f"{path}:{lines[1]}: key '{key}': ")
    assert f"given twice in one mapping (lines {lines[0]} and {lines[1]})" in message


def test_a_duplicate_key_stops_the_run_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        "name: t\nlabels: {values: [高, 中, 低]}\ninputs: {gold: gold_level, pred: pred_level}\n"
        "metrics:\n  accuracy: {}\n  accuracy: {zero_division: 1}\n",
        encoding="utf-8",
    )
    stderr = failed_run(tmp_path, path, EXAMPLES / "contract_risk" / "records.jsonl")
    assert "key 'metrics.accuracy'" in stderr and "lines 5 and 6" in stderr


def test_merge_keys_and_anchors_still_work_and_a_value_inside_itself_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        SUITE_HEAD + "metrics:\n  f1: &b {metric: f1, average: macro}\n"
        "  f1_micro: {<<: *b, average: micro}\n  f1_again: *b\n",
        encoding="utf-8",
    )
    suite = load_suite(path)  # a merged key overridden is not a duplicate
    assert [suite.metrics[n].args["average"] for n in ("f1", "f1_micro", "f1_again")] == [
        "macro",
        "micro",
        "macro",
    ]
    path.write_text(SUITE_HEAD + "metrics: &m {accuracy: {}, again: *m}\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="contain itself") as info:
        load_suite(path)
    assert info.value.key == "metrics.again"


def test_the_builtin_suites_have_no_duplicate_keys() -> None:
    for name in builtin_suites():
        assert load_suite(name).spec.name == name
        text = (resources.files("pingce.suites") / f"{name}.yaml").read_text(encoding="utf-8")
        assert yaml.safe_load(text)["name"] == name


@pytest.mark.parametrize(
    ("body", "line", "key", "said"),
    [
        # a metric's argument: the line of its entry
        ("metrics:\n  accuracy: {}\n  f1:\n    average: macro\n    beta: 2\n", 6, "metrics.f1",
         "takes no 'beta'"),
        # a default that no metric takes: the line of that default
        ("defaults:\n  zero_division: 0\n  strict: false\nmetrics:\n  accuracy: {}\n", 6,
         "defaults.strict", "would be ignored"),
        # an unknown metric: the line of its name
        ("metrics:\n  accuracy: {}\n  acuracy: {}\n", 6, "metrics.acuracy", "did you mean"),
        # a value the schema refuses: the line of the key
        ("metrics:\n  accuracy: {}\nbootstrap: many\n", 6, "bootstrap", ""),
    ],
)  # fmt: skip
def test_an_error_about_a_key_names_its_line(
    tmp_path: Path, body: str, line: int, key: str, said: str
) -> None:
    """The file, the line where the file writes the key (or the nearest key around it) and the
    key: `suite.yaml:6: key 'metrics.f1': ...` (the line was missing but for duplicate keys)."""
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE_HEAD + body, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert (caught.value.line, caught.value.key) == (line, key)
    assert str(caught.value).startswith(f"{path}:{line}: key '{key}': ")
    assert said.lower() in str(caught.value).lower()
    stderr = failed_run(tmp_path, path, EXAMPLES / "contract_risk" / "records.jsonl")
    assert f"{path}:{line}: key '{key}'" in stderr


# --------------------------------------------------- built-in suites read once (parsed.json)


def test_the_built_in_suites_parsed_json_is_current() -> None:
    """parsed.json holds what the YAML reader makes of every built-in suite file today (after
    editing a suite: ``python -c "from pingce.suites._parsed import write; write()"``)."""
    from pingce.suites import _parsed

    kept = (resources.files("pingce.suites") / _parsed.FILE).read_text(encoding="utf-8")
    assert kept == _parsed.snapshot(), "stale: run pingce.suites._parsed.write()"


@pytest.mark.parametrize("name", sorted(builtin_suites()))
def test_a_built_in_suite_is_read_from_parsed_json_as_from_its_yaml(name: str) -> None:
    """The kept document is the YAML reader's, keys in the same order (a suite's metrics are
    shown in its order), with the same key lines, and the kept spec (made without pydantic on a
    run) is the document validated; another text, or another name, is not answered from the
    file (an edited suite file is parsed)."""
    import json

    from pingce.suites._parsed import kept_document
    from pingce.suites._yaml import load_yaml
    from pingce.suites.spec import SuiteSpec

    text = (resources.files("pingce.suites") / f"{name}.yaml").read_text(encoding="utf-8")
    lines: dict[str, int] = {}
    document = load_yaml(text, lines)
    kept = kept_document(name, text)
    assert kept is not None
    assert json.dumps(kept[0]) == json.dumps(document)
    assert kept[1] == lines
    validated = SuiteSpec.model_validate(document)
    assert SuiteSpec.model_construct(**kept[2]) == validated
    assert SuiteSpec.model_construct(**kept[2]).model_dump() == validated.model_dump()
    assert kept_document(name, text + "\n# edited\n") is None
    assert kept_document(f"{name}.yaml", text) is None


def test_an_edited_built_in_suite_is_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text that parsed.json was not made from goes through the YAML reader, its errors with
    their lines."""
    from pingce.suites import build

    text = (resources.files("pingce.suites") / "contract-risk.yaml").read_text(encoding="utf-8")
    edited = text.replace("metrics:", "metrics:\n  accuracy: {}\n  accuracy: {}", 1)
    monkeypatch.setattr(build, "_read", lambda suite: (edited, "built-in suite contract-risk"))
    with pytest.raises(SuiteError, match="given twice"):
        load_suite("contract-risk")
