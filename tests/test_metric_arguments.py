"""A metric's arguments are checked once, by the one validator, from the type hints on its class
(scikit-learn's ``validate_params``), whether it is built in Python or from a suite file; and a
statistic's per-record work runs through the map its executor gives it (``Context.map_records``).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import pytest

import pingce
from pingce._constraints import type_hints
from pingce.engine import local
from pingce.errors import SuiteError
from pingce.metrics import Context, create_metric, metric_registry, table_registry
from pingce.metrics.classification import Accuracy, PrecisionRecallF1
from pingce.metrics.protocol import Metric, TableMetric
from pingce.metrics.ter import Ter
from pingce.records import load_records
from pingce.suites import load_suite

T = TypeVar("T")
R = TypeVar("R")


# ------------------------------------------------------------------ arguments, one validator


def test_a_literal_choice_is_refused_with_the_argument_its_choices_and_the_value() -> None:
    with pytest.raises(ValueError) as info:
        PrecisionRecallF1(average="mean")  # type: ignore[arg-type]
    assert str(info.value) == (
        'average must be one of "binary", "macro", "micro", "weighted", got "mean"'
    )


def test_a_metric_built_in_python_and_from_a_suite_is_refused_the_same_way(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError) as python:
        PrecisionRecallF1(average="mean")  # type: ignore[arg-type]
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: s\nlabels: {values: [高, 中, 低]}\ninputs: {gold: g, pred: p}\n"
        "metrics:\n  precision: {average: mean}\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError) as loaded:
        load_suite(suite)
    assert str(loaded.value).endswith(f"metric 'precision': {python.value}")
    with pytest.raises(SuiteError) as created:
        create_metric("precision", average="mean")
    assert str(created.value).endswith(f"metric 'precision': {python.value}")


def test_shared_arguments_are_checked_and_read_by_their_policy_in_python_too() -> None:
    with pytest.raises(ValueError, match=r'zero_division must be null, 0 or 1, got "2"'):
        Accuracy(zero_division="2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sample_weight must be the name of the record field"):
        Accuracy(sample_weight=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="case_sensitive must be true or false"):
        Ter(case_sensitive="false")  # type: ignore[arg-type]
    assert Accuracy(zero_division="0").zero_division == 0.0  # type: ignore[arg-type]
    assert create_metric("accuracy", zero_division="1").zero_division == 1.0


def _classes() -> list[type]:
    """Every registered metric and table class and the classes of pingce.metrics they inherit
    from, once each."""
    seen: dict[type, None] = {}
    for registry in (metric_registry(), table_registry()):
        for info in registry.values():
            for cls in info.factory.__mro__:
                if cls.__module__.startswith("pingce.metrics") and cls not in (
                    Metric,
                    TableMetric,
                ):
                    seen.setdefault(cls)
    return list(seen)


def _literal_fields(cls: type) -> set[str]:
    def has_literal(hint: Any) -> bool:
        if typing.get_origin(hint) is Literal:
            return True
        return any(has_literal(arg) for arg in typing.get_args(hint))

    return {name for name, hint in type_hints(cls).items() if has_literal(hint)}


def test_no_post_init_checks_its_arguments_by_hand() -> None:
    """Every ``__post_init__`` of a metric or table class calls the validator first (through
    ``super().__post_init__()``) and checks no ``Literal`` choice nor the zero-division policy
    itself: it only derives state."""
    checked = 0
    for cls in _classes():
        method = cls.__dict__.get("__post_init__")
        if method is None:
            continue
        source = textwrap.dedent(inspect.getsource(method))
        body = ast.parse(source).body[0].body  # type: ignore[attr-defined]
        first = ast.unparse(body[0])
        assert first == "super().__post_init__()", f"{cls.__name__}: first {first!r}"
        assert "check_zero_division" not in source, cls.__name__
        for name in _literal_fields(cls):
            assert f"self.{name} not in" not in source, f"{cls.__name__} checks {name} by hand"
        checked += 1
    assert checked >= 20


# ------------------------------------------------------------------ per-record map


def test_a_statistic_runs_its_per_record_work_through_the_context_map() -> None:
    metric = create_metric("text_ter")
    statistic = metric.statistic()
    records = [
        {"id": i, "pred_text": f"the cat sat {i}", "gold_text": f"a cat sat on {i}"}
        for i in range(7)
    ]
    table = load_records(records, statistic.fields())
    calls: list[int] = []

    def counting(work: Callable[[Sequence[T]], R], items: Sequence[T]) -> list[R]:
        calls.append(len(items))
        middle = len(items) // 2  # two parts, as a forked child would give
        return [work(items[:middle]), work(items[middle:])]

    plain = statistic.compute(table, Context())
    mapped = statistic.compute(table, Context(map_records=counting))
    assert calls == [7]
    assert (plain.rows == mapped.rows).all()  # type: ignore[union-attr]


def test_the_local_executor_gives_the_statistics_the_halves_map(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    given: list[int] = []

    def spy(work: Callable[[Sequence[T]], R], items: Sequence[T]) -> list[R]:
        given.append(len(items))
        return [work(items)]

    monkeypatch.setattr(local, "in_halves", spy)
    records = [
        {"id": str(i), "gold_fn": [{"name": "f", "arguments": {"a": i}}], "pred_fn": []}
        for i in range(5)
    ]
    pingce.evaluate("function-call", records, bootstrap=0)
    assert given and all(n == 5 for n in given)
