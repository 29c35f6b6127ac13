"""pingce._plain: the result models and the suite spec without pydantic, pydantic's API on demand.

The JSON of a plain model is pydantic's, byte for byte (orjson writes it; pydantic's model made
from the class writes what orjson does not); validation, the fields and the schema are
pydantic's own."""

from __future__ import annotations

import json
import math
import random
import struct
from pathlib import Path
from typing import Any

import pydantic
import pytest

from pingce._plain import mirror
from pingce.results import (
    DataInfo,
    EvaluationResult,
    Failures,
    MetricComparison,
    MetricResult,
    Signature,
    SignificanceTest,
)
from pingce.sampling import SamplingInfo, StratumCount
from pingce.suites.spec import LabelsSpec, SuiteSpec

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _result(**metrics: Any) -> EvaluationResult:
    return EvaluationResult(
        pingce_version="0",
        suite="s",
        n_records=3,
        metrics={name: MetricResult(**entry) for name, entry in metrics.items()},
        signature=Signature(
            seed=1,
            bootstrap=10,
            ci_method="bca",
            ci_level=0.95,
            similarity=None,
            zero_division=None,
            labels=["a", "b"],
            metrics={},
            versions={},
        ),
        data=DataInfo(source="x.jsonl", n_loaded=3, id_field="id"),
    )


def _floats(n: int) -> list[float]:
    rng = random.Random(7)
    out = [0.0, -0.0, 1.0, 1e16, 1e15, 1e-5, 1e-7, 5e-324, 1.7976931348623157e308, 0.1, 1 / 3]
    while len(out) < n:
        bits = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        out += [bits] if math.isfinite(bits) else []
        out.append(rng.random() * 10 ** rng.randint(-30, 30))
    return out


def test_the_json_of_a_result_is_pydantics_byte_for_byte() -> None:
    """Every float (random bit patterns, every magnitude), NaN and infinities as null, text of
    every code point, keys left out when None, extra counts and nested models: the plain
    model's JSON equals its pydantic model's, indented and compact."""
    floats = _floats(20_000)
    text = "".join(chr(c) for c in range(0, 0x3000)) + "合同风险\u2028\U0001f600"
    metrics = {
        f"m{i}": {
            "value": x,
            "ci_low": -x,
            "ci_high": None,
            "n": i,
            "ci_note": text[i * 37 % len(text) :][:40],
        }
        for i, x in enumerate(floats)
    }
    metrics["nan"] = {"value": math.nan, "ci_low": math.inf, "ci_high": -math.inf, "n": 0}
    metrics["int"] = {"value": 1, "n": 2, "higher_is_better": False}
    result = _result(**metrics)
    result.tables = {"t": {"rows": [[1, 2.5, None, math.nan]], "labels": ("a", "b"), "s": text}}
    result.failures = Failures(judge=1, parse=2, invalid_prediction=3)
    result.sampling = SamplingInfo(
        method="stratified",
        seed=1,
        n_population=10,
        n_requested=4,
        n_sampled=4,
        strata=[StratumCount(value="a", population=5, quota=2, sampled=2)],
    )
    as_pydantic = result.as_pydantic()
    assert isinstance(as_pydantic, pydantic.BaseModel)
    assert result.model_dump_json(indent=2) == as_pydantic.model_dump_json(indent=2)
    assert result.model_dump_json() == as_pydantic.model_dump_json()
    assert result.to_json() == as_pydantic.model_dump_json(indent=2)
    assert result.model_dump() == as_pydantic.model_dump()
    assert json.loads(result.to_json())["metrics"]["int"]["value"] == 1.0  # an int made a float
    assert "judge" not in json.loads(result.to_json())  # OMIT_WHEN_NONE


def test_what_orjson_cannot_write_is_written_by_pydantic() -> None:
    """An integer of 2**64 or more, or a set: pydantic's text, as before."""
    result = _result(a={"value": 0.5, "n": 1})
    result.tables = {"big": {"count": 2**70, "kinds": {"b"}}}
    assert result.to_json() == result.as_pydantic().model_dump_json(indent=2)
    assert '"count": 1180591620717411303424' in result.to_json()


def test_validating_json_gives_the_plain_classes_back() -> None:
    result = _result(a={"value": 0.25, "ci_low": 0.1, "ci_high": 0.4, "n": 4})
    result.failures = Failures(parse=1, law_citations_not_checked=3)
    again = EvaluationResult.model_validate_json(result.to_json())
    assert type(again) is EvaluationResult and type(again.metrics["a"]) is MetricResult
    assert again == result and again.to_json() == result.to_json()
    assert again.failures.model_extra == {"law_citations_not_checked": 3}
    with pytest.raises(pydantic.ValidationError):
        MetricResult.model_validate({"value": "high", "n": 1})


def test_pydantics_api_is_the_pydantic_models() -> None:
    """model_fields and model_json_schema are the pydantic model's (the same descriptions), and
    any other model_* method of an instance is called on it."""
    assert list(MetricResult.model_fields) == list(MetricResult.FIELDS)
    assert (
        MetricResult.model_fields["value"].description == MetricResult.FIELDS["value"].description
    )
    schema = EvaluationResult.model_json_schema()
    assert schema["title"] == "EvaluationResult" and "MetricResult" in schema["$defs"]
    entry = MetricComparison(candidate=1, baseline=0.5, delta=0.5, n=3, n_baseline=3)
    entry = entry.model_copy(update={"tests": [SignificanceTest(test="t", p_value=0.5)]})
    assert entry.model_dump(exclude={"tests"}) == entry.as_pydantic().model_dump(exclude={"tests"})
    assert mirror(MetricResult) is mirror(MetricResult)  # made once


def test_a_copy_is_plain_and_shallow_and_updates_are_set_as_given() -> None:
    signature = _result(a={"value": 1.0, "n": 1}).signature
    copied = signature.model_copy(update={"engine": "ray", "seed": 2})
    assert copied.seed == 2 and copied.model_extra == {"engine": "ray"}
    assert signature.seed == 1 and signature.model_extra == {}
    assert copied.labels is signature.labels


def test_a_suite_spec_made_from_keywords_is_validated_a_constructed_one_is_not() -> None:
    """SuiteSpec(...) validates as the pydantic model did (users make specs so); model_construct
    (a built-in suite read validated from parsed.json) does not, and makes nested blocks."""
    with pytest.raises(pydantic.ValidationError, match="suite's name"):
        SuiteSpec(name="../up", metrics={"accuracy": {}})
    with pytest.raises(pydantic.ValidationError, match="Extra inputs"):
        LabelsSpec(values=["a", "b"], colour="red")
    made = SuiteSpec(name="s", metrics={"accuracy": None}, context="question")
    assert made.metrics == {"accuracy": {}} and made.context == ["question"]
    built = SuiteSpec.model_construct(name="s", metrics={}, labels={"values": ["a", "b"]})
    assert isinstance(built.labels, LabelsSpec) and built.labels.case_insensitive is True


def test_making_a_plain_model_needs_no_pydantic(tmp_path: Path) -> None:
    """Making, copying, dumping and comparing results and a built-in suite's spec import no
    pydantic (a fresh interpreter)."""
    from .cli_run import run_python

    code = (
        "import sys\n"
        "from pingce.suites import load_suite\n"
        "from pingce.results import MetricResult, Failures\n"
        "suite = load_suite('contract-risk')\n"
        "m = MetricResult(value=1, n=2).model_copy(update={'n': 3})\n"
        "text = m.model_dump_json(indent=2) + Failures(parse=1, x=2).model_dump_json()\n"
        "assert m == MetricResult(value=1.0, n=3)\n"
        "print('pydantic' in sys.modules, suite.spec.name)\n"
    )
    done = run_python("-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "contract-risk"]
