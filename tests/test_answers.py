"""Model answers as they come (function-call suite): a required gold.

Every expected number comes from the seed's ``score_fn`` (tests/fc_reference.py) applied to call
lists written out by hand, never from pingce.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import pingce
from pingce.errors import InputError

from .cli_run import run_pingce
from .fc_reference import score_fn

CallDict = dict[str, Any]

BJ: CallDict = {"name": "get_weather", "arguments": {"city": "北京", "unit": "celsius"}}


def _write_jsonl(path: Path, records: list[Any]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            text = record if isinstance(record, str) else json.dumps(record, ensure_ascii=False)
            handle.write(text + "\n")


# --- gold: required ---------------------------------------------------------------------------

GOLD_CASES = {
    "missing": ({"id": "b", "pred_fn": [BJ]}, "required field is missing"),
    "null": ({"id": "b", "gold_fn": None, "pred_fn": [BJ]}, "required field is null"),
}


@pytest.mark.parametrize("case", list(GOLD_CASES))
def test_missing_or_null_gold_is_an_input_error(case: str) -> None:
    """Old main scored such a record as gold "no call": fn_acc_all 0.5 for these two records."""
    bad, message = GOLD_CASES[case]
    records = [{"id": "a", "gold_fn": [BJ], "pred_fn": [BJ]}, bad]
    with pytest.raises(InputError) as info:
        pingce.evaluate("function-call", records, bootstrap=0)
    assert info.value.line == 2 and info.value.field == "gold_fn", str(info.value)
    assert message in str(info.value)


@pytest.mark.parametrize("case", list(GOLD_CASES))
def test_missing_or_null_gold_exits_2_naming_file_line_and_field(tmp_path: Path, case: str) -> None:
    bad, message = GOLD_CASES[case]
    data = tmp_path / "gold.jsonl"
    _write_jsonl(data, [{"id": "a", "gold_fn": [BJ], "pred_fn": [BJ]}, "", bad])
    out = tmp_path / "out"
    proc = run_pingce("run", "function-call", "--data", str(data), "--out", str(out))
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert re.search(r"gold\.jsonl:3: field 'gold_fn': " + message, proc.stderr), proc.stderr
    assert not out.exists()


def test_explicit_empty_gold_is_a_valid_abstention_gold() -> None:
    records = [
        {"id": "a", "gold_fn": [], "pred_fn": []},
        {"id": "b", "gold_fn": [], "pred_fn": [BJ]},
    ]
    result = pingce.evaluate("function-call", records, bootstrap=0)
    want = [score_fn([], [])[1], score_fn([], [BJ])[1]]
    assert [row["values"]["fn_acc_all"] for row in result.record_values()] == want == [1.0, 0.0]
