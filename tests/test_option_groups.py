"""The options' groups (issue 29): :class:`pingce.options.RunOptions` parsed once into small frozen
groups carrying parsed values, which the engine reads (the bootstrap's, the sample's, the inputs',
the similarity backend's, the model's, the executor's and the gates'), one per group of the
option table (:mod:`pingce.option_table`)."""

from __future__ import annotations

import dataclasses
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pingce
from pingce.decisions import parse_margin_gates
from pingce.gates import parse_gates, parse_regression_gates
from pingce.option_table import OPTIONS
from pingce.options import (
    Executor,
    Gating,
    Inputs,
    Judging,
    ModelCall,
    Resampling,
    RunOptions,
    Sampling,
    Scoring,
    run_options,
)
from pingce.similarity.lexical import LexicalBackend
from pingce.similarity.names import BackendName, parse_backend_name

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

GROUPS = {
    "bootstrap": "resampling",
    "sampling": "sampling",
    "inputs": "inputs",
    "scoring": "scoring",
    "model": "model_call",
    "judge": "judging",
    "engine": "executor",
    "gates": "gating",
}
"""The option table's group -> the attribute of :class:`RunOptions` that carries it (the groups
``policy`` and ``output`` have none: the engine reads their few options alone)."""


def _changed(tmp_path: Path) -> dict[str, tuple[dict[str, Any], Any]]:
    """Each option of a grouped field: the options it needs, and a value other than its default."""
    gold = tmp_path / "gold.jsonl"
    gold.write_text("{}\n", "utf-8")
    model = {"model": "openai:qwen"}
    ray = {"engine": "ray"}
    return {
        "seed": ({}, 7),
        "bootstrap": ({}, 10),
        "ci_method": ({}, "basic"),
        "bootstrap_method": ({}, "poisson"),
        "bootstrap_stream": ({}, "indices"),
        "ci_level": ({}, 0.9),
        "sample": ({}, 5),
        "stratify": ({"sample": 5}, "meta.source"),
        "allocation": ({}, "proportional"),
        "short_strata": ({}, "take-all"),
        "field_map": ({}, {"pred_level": "answer"}),
        "encoding": ({}, "gb18030"),
        "context": ({}, ("question",)),
        "gold": ({}, str(gold)),
        "allow_missing": ({"gold": str(gold)}, True),
        "similarity": ({}, "exact"),
        "base_url": ({}, "http://localhost:1/v1"),
        "cache": ({}, False),
        "model": ({}, "openai:qwen"),
        "model_base_url": (model, "http://localhost:2/v1"),
        "api_key_env": (model, "MY_KEY"),
        "model_params": (model, {"temperature": 0.2}),
        "model_concurrency": (model, 2),
        "repeats": (model, 3),
        "engine": ({}, "ray"),
        "ray_address": (ray, "auto"),
        "ray_scratch": (ray, str(tmp_path)),
        "gates": ({}, parse_gates(["accuracy=0.5"])),
        "regression_gates": ({}, parse_regression_gates(["all"])),
        "gate_on_interval": ({}, True),
        "margin_gates": ({}, parse_margin_gates(["accuracy=0.1"])),
        "multiplicity": ({}, "bh"),
        "baseline": ({}, "last-release"),
        "judges": ({}, ("openai:judge",)),
        "rubric": ({}, "Is it helpful?"),
        "scale": ({}, "0-1"),
        "pairwise": ({}, True),
        "judge_repeats": ({}, 3),
    }


def test_each_option_of_a_table_group_goes_into_its_group_alone(tmp_path: Path) -> None:
    """Derived from the table: every option it declares in a group that has a field of
    :class:`RunOptions` changes that group, and no other (the seed aside: the sample draws from
    it too)."""
    changed = _changed(tmp_path)
    fields = {f.name for f in dataclasses.fields(RunOptions)}
    grouped = [o for o in OPTIONS if o.group in GROUPS and o.name in fields]
    assert sorted(o.name for o in grouped) == sorted(changed)
    for option in grouped:
        needs, value = changed[option.name]
        before, after = RunOptions(**needs), RunOptions(**needs, **{option.name: value})
        differ = {a for a in GROUPS.values() if getattr(before, a) != getattr(after, a)}
        expected = {GROUPS[option.group]} | ({"sampling"} if option.name == "seed" else set())
        assert differ == expected, option.name


def test_the_groups_hold_the_parsed_values() -> None:
    options = run_options(
        {
            "seed": 3,
            "bootstrap": 200,
            "ci_method": "percentile",
            "bootstrap_method": "poisson",
            "ci_level": 0.9,
            "similarity": "embedding",
            "model": "openai:qwen2.5-7b-instruct",
            "model_params": {"temperature": 0},
            "sample": 20,
        }
    )
    assert options.resampling == Resampling(200, "poisson", "percentile", 0.9, 3)
    assert options.resampling.poisson
    assert options.sampling == Sampling(20, None, "equal", "error", 3)
    backend = options.scoring.backend
    assert isinstance(backend, BackendName)  # parsed: `embedding` alone is the USE model
    assert (backend.kind, backend.model, backend.text) == (
        "embedding",
        "use-multilingual-v3",
        "embedding",
    )
    assert options.scoring == Scoring(parse_backend_name("embedding"), None, None)
    assert options.model_call == ModelCall(
        "openai:qwen2.5-7b-instruct",
        "qwen2.5-7b-instruct",
        None,
        None,
        {"temperature": 0},
        None,
        "openai",
    )
    assert options.inputs == Inputs(None, {}, None, False)
    assert options.executor == Executor("local", None, None)
    assert options.gating == Gating((), (), False)
    assert options.judging == Judging((), None, None)
    rubric = run_options({"judges": "openai:a", "rubric": __file__}).judging
    assert rubric.judges == ("openai:a",) and rubric.rubric == Path(__file__).read_text().strip()
    assert RunOptions().model_call is None
    shared = RunOptions(model="openai:m", base_url="http://localhost:1/v1").model_call
    assert shared is not None and shared.base_url == "http://localhost:1/v1"  # the fallback


def test_a_backend_instance_is_carried_as_given() -> None:
    backend = LexicalBackend()
    assert RunOptions(similarity=backend).scoring.backend is backend


def test_a_group_is_built_once_and_frozen() -> None:
    options = RunOptions(bootstrap=50)
    assert options.resampling is options.resampling
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.resampling.resamples = 10  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.scoring.backend = "exact"  # type: ignore[misc]


def test_the_groups_leave_the_recorded_options_alone() -> None:
    """``recorded()`` and ``given()`` read the fields: no group, the similarity as given."""
    options = RunOptions(similarity="embedding", bootstrap=20)
    _ = options.resampling, options.scoring
    recorded = options.recorded()
    assert recorded["similarity"] == "embedding"
    assert not set(recorded) & set(GROUPS.values())
    assert not set(options.given()) & set(GROUPS.values())
    assert options == RunOptions(similarity="embedding", bootstrap=20)


def test_the_groups_travel_with_the_options(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Ray engine pickles the options to its workers: their groups arrive built (a worker
    parses nothing again)."""
    options = RunOptions(similarity="lexical:char-1-3", bootstrap=20)
    _ = options.scoring
    calls = _counting(monkeypatch)
    copy = pickle.loads(pickle.dumps(options))
    assert copy == options and copy.scoring == options.scoring
    assert isinstance(copy.scoring.backend, BackendName)
    assert copy.scoring.backend.text == "lexical:char-1-3"
    assert calls == []


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call of ``parse_backend_name``, wherever a module of pingce holds it."""
    calls: list[str] = []
    original: Callable[[str], BackendName] = parse_backend_name

    def counted(text: str) -> BackendName:
        calls.append(text)
        return original(text)

    for name, module in list(sys.modules.items()):
        if name.startswith("pingce") and getattr(module, "parse_backend_name", None) is original:
            monkeypatch.setattr(module, "parse_backend_name", counted)
    return calls


def test_the_similarity_name_is_parsed_once_in_a_whole_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """From ``pingce.evaluate(..., similarity=...)`` to the result: the name is read once, when
    the options are made (before issue 29 it was read again to build the backend)."""
    calls = _counting(monkeypatch)
    result = pingce.evaluate(
        "contract-risk",
        str(EXAMPLES / "contract_risk" / "records.jsonl"),
        similarity="lexical:char-1-3",
        bootstrap=20,
        cache=False,
    )
    assert result.signature.similarity is not None  # the suite scored similarities
    assert calls == ["lexical:char-1-3"]
