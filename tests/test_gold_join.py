"""Issue 12, "gold and predictions in two files": ``--gold FILE`` joins a second file by id; a
record on one side only is an error naming it, or with ``--allow-missing`` a counted miss; an
invalid gold value is reported in the gold file, on its own line."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score

import pingce
from pingce.errors import OptionError
from tests.cli_run import run_pingce

EXAMPLE = Path(pingce.__file__).parent / "examples" / "contract_risk" / "records.jsonl"
GOLD_FIELDS = ("gold_level", "contract", "gold_rules")
LEVELS = {"high": "高", "medium": "中", "low": "低"}


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]


def split(records: list[dict[str, Any]], folder: Path) -> tuple[Path, Path]:
    """The records as a predictions file and a gold file (in reverse order: a join by id)."""
    pred, gold = folder / "pred.jsonl", folder / "gold.jsonl"
    with open(pred, "w", encoding="utf-8") as p, open(gold, "w", encoding="utf-8") as g:
        for r in records:
            p.write(json.dumps({k: v for k, v in r.items() if k not in GOLD_FIELDS}) + "\n")
        for r in reversed(records):
            g.write(json.dumps({k: r[k] for k in ("id", *GOLD_FIELDS) if k in r}) + "\n")
    return pred, gold


def test_two_files_joined_by_id_give_the_numbers_of_one(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    pred, gold = split(records, tmp_path)
    done = run_pingce(
        "run", "contract-risk", "--data", str(pred), "--gold", str(gold),
        "--bootstrap", "0", "--out", str(tmp_path / "o"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    joined = json.loads((tmp_path / "o" / "results.json").read_text())["metrics"]
    whole = pingce.evaluate("contract-risk", EXAMPLE, bootstrap=0)
    for name, entry in whole.metrics.items():
        assert joined[name]["value"] == entry.value, name
    gold_levels = [r["gold_level"] for r in records]
    predicted = [LEVELS.get(r["pred_level"], r["pred_level"]) for r in records]
    assert joined["accuracy"]["value"] == pytest.approx(accuracy_score(gold_levels, predicted))
    kappa = cohen_kappa_score(gold_levels, predicted)
    assert joined["cohen_kappa"]["value"] == pytest.approx(kappa)


def test_the_gold_file_may_be_a_csv(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    pred, _ = split(records, tmp_path)
    gold = tmp_path / "gold.csv"
    with open(gold, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "gold_level", "contract", "gold_rules"])
        for r in records:
            rules = json.dumps(r["gold_rules"], ensure_ascii=False) if "gold_rules" in r else ""
            writer.writerow([r["id"], r["gold_level"], r.get("contract", ""), rules])
    result = pingce.evaluate("contract-risk", pred, gold=str(gold), bootstrap=0)
    whole = pingce.evaluate("contract-risk", EXAMPLE, bootstrap=0)
    for name, entry in whole.metrics.items():
        assert result.metrics[name].value == entry.value, name
    gold_levels = [r["gold_level"] for r in records]
    predicted = [LEVELS.get(r["pred_level"], r["pred_level"]) for r in records]
    assert result.metrics["accuracy"].value == pytest.approx(accuracy_score(gold_levels, predicted))


def test_records_on_one_side_only(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    pred, gold = split(records, tmp_path)
    kept = pred.read_text(encoding="utf-8").splitlines()
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(kept[:50]) + "\n", encoding="utf-8")
    done = run_pingce("run", "contract-risk", "--data", str(short), "--gold", str(gold))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    # the first gold record without a prediction, on its line in the gold file (reversed)
    assert f"{gold}:1: field 'id': no record of {short} has this id" in done.stderr
    assert records[-1]["id"] in done.stderr
    assert f"{len(records) - 50} gold record(s) without a prediction" in done.stderr
    result = pingce.evaluate(
        "contract-risk", short, gold=str(gold), allow_missing=True, bootstrap=0
    )
    assert result.n_records == 50
    assert any(
        f"{len(records) - 50} record(s) of {gold} have no prediction" in n for n in result.notes
    ), result.notes
    gold_levels = [r["gold_level"] for r in records[:50]]
    predicted = [LEVELS.get(r["pred_level"], r["pred_level"]) for r in records[:50]]
    assert result.metrics["accuracy"].value == pytest.approx(accuracy_score(gold_levels, predicted))
    # a prediction without gold names its own line
    extra = tmp_path / "extra.jsonl"
    extra.write_text(pred.read_text(encoding="utf-8") + '{"id": "new", "pred_level": "高"}\n')
    with pytest.raises(pingce.InputError, match=rf"{extra}:{len(records) + 1}: field 'id'"):
        pingce.evaluate("contract-risk", extra, gold=str(gold), bootstrap=0)
    counted = pingce.evaluate("contract-risk", extra, gold=str(gold), allow_missing=True)
    assert counted.n_records == len(records)
    assert any(f"1 record(s) of {extra} have no gold record" in n for n in counted.notes)


def test_a_bad_gold_value_is_reported_in_the_gold_file(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    pred, gold = split(records, tmp_path)
    lines = gold.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[4])
    bad["gold_level"] = "极高"
    lines[4] = json.dumps(bad, ensure_ascii=False)
    gold.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(pingce.InputError) as caught:
        pingce.evaluate("contract-risk", pred, gold=str(gold), bootstrap=0)
    message = str(caught.value)
    assert message.startswith(f"{gold}:5: field 'gold_level'") and "极高" in message


def test_a_field_both_files_have_must_agree(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    pred, gold = split(records, tmp_path)
    lines = pred.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["gold_level"] = "低" if records[0]["gold_level"] != "低" else "高"
    lines[0] = json.dumps(first, ensure_ascii=False)
    pred.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(pingce.InputError, match=rf"{pred}:1: field 'gold_level': differs from"):
        pingce.evaluate("contract-risk", pred, gold=str(gold), bootstrap=0)


def test_option_errors(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    pred, gold = split(records, tmp_path)
    with pytest.raises(OptionError, match="--allow-missing needs --gold"):
        pingce.evaluate("contract-risk", pred, allow_missing=True)
    with pytest.raises(OptionError, match=r"--gold 'nope\.jsonl': no such file"):
        pingce.evaluate("contract-risk", pred, gold="nope.jsonl")
    with pytest.raises(OptionError, match="give the predictions as a file"):
        pingce.evaluate("contract-risk", records, gold=str(gold))


def test_compare_joins_both_sides(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    pred, gold = split(records, tmp_path)
    done = run_pingce(
        "compare", "contract-risk", "--data", str(pred), "--baseline", str(pred),
        "--gold", str(gold), "--bootstrap", "0", "--out", str(tmp_path / "c"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    compared = json.loads((tmp_path / "c" / "comparison.json").read_text())
    assert compared["metrics"]["accuracy"]["delta"] == 0.0
    assert compared["metrics"]["accuracy"]["candidate"] == pytest.approx(
        accuracy_score(
            [r["gold_level"] for r in records],
            [LEVELS.get(r["pred_level"], r["pred_level"]) for r in records],
        )
    )


def test_a_nested_id_field_is_an_option_error_before_reading(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    pred, gold = split(records, tmp_path)
    builtin = Path(pingce.__file__).parent / "suites" / "contract-risk.yaml"
    suite = tmp_path / "nested.yaml"
    suite.write_text(
        builtin.read_text(encoding="utf-8").replace("id_field: id", "id_field: meta.uid", 1),
        encoding="utf-8",
    )
    with pytest.raises(OptionError, match=r"'meta\.uid' is a path"):
        pingce.evaluate(suite, pred, gold=str(gold), bootstrap=0)
