"""Similarity backends registered by decorator (:mod:`pingce.similarity.registry`): one
registration drives the name grammar, the remote check (the Ray engine's among them), the
options a suite may pass, how the backend is built and the help text."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any

import numpy as np
import pytest

from pingce._constraints import Range
from pingce.errors import OptionError, SuiteError
from pingce.options import RunOptions
from pingce.progress import Advance
from pingce.similarity import BackendStats, Pair, SimilarityBackend, backend_options, make_backend
from pingce.similarity.names import parse_backend_name
from pingce.similarity.registry import (
    backend,
    backend_classes,
    backend_entries,
    backend_grammar,
    backend_help,
    remote_help,
    unregister,
)
from pingce.suites import load_suite


class _Echo(SimilarityBackend):
    """A backend of the test's own: every pair scores ``level``."""

    name = "echo-remote"

    def __init__(
        self,
        model: str = "local",
        *,
        level: Annotated[float, Range(0, 1)] = 0.5,
        base_url: str | None = None,
        cache: Any = None,
    ):
        self.model, self.level, self.base_url, self.cache = model, level, base_url, cache

    def signature(self) -> str:
        return f"echo-remote:{self.model}"

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None = None
    ) -> np.ndarray:
        return np.full(len(pairs), self.level)


@pytest.fixture
def echo() -> Iterator[None]:
    @backend("echo-remote", remote=True)
    def _load() -> type[SimilarityBackend]:
        return _Echo

    @backend("echo-local", model="none", help="echo-local (a test's own)")
    def _load_local() -> type[SimilarityBackend]:
        return _Echo

    yield
    unregister("echo-remote")
    unregister("echo-local")


def test_a_registered_backend_is_in_the_name_grammar(echo: None) -> None:
    name = parse_backend_name("echo-remote:m1")
    assert (name.kind, name.model, name.arguments) == ("echo-remote", "m1", ("m1",))
    assert parse_backend_name("echo-local").kind == "echo-local"
    with pytest.raises(ValueError, match=r"echo-remote:<model> or echo-local"):
        parse_backend_name("echo-remote")  # a model is required
    with pytest.raises(ValueError, match=r"expected exact, levenshtein"):
        parse_backend_name("echo-local:m")  # none is taken
    assert backend_grammar().endswith("openai:<model>, echo-remote:<model> or echo-local")


def test_a_registered_backend_is_in_the_help(echo: None) -> None:
    text = backend_help()
    assert text.startswith("Similarity backend for semantic metrics: exact, levenshtein, lexical")
    assert text.endswith("openai:<model>, echo-remote:<model>, echo-local (a test's own).")
    assert remote_help() == "embedding-api:, rerank:, openai:, echo-remote:"  # --base-url's help


def test_the_remote_check_reads_the_registration(echo: None) -> None:
    assert parse_backend_name("echo-remote:m").remote
    assert not parse_backend_name("echo-local").remote
    for name in ("openai:m", "embedding-api:m", "rerank:m"):
        assert parse_backend_name(name).remote, name
    for name in ("exact", "levenshtein", "lexical", "lexical:char-1-2", "embedding", "embedding:m"):
        assert not parse_backend_name(name).remote, name


def test_the_ray_engine_asks_a_registered_remote_backend_once_for_the_whole_data(
    echo: None,
) -> None:
    """The judge phase (every distinct pair asked once, before the pieces, through the cache)
    is for every backend registered ``remote=True``: it refuses to run without the cache."""
    from pingce.engine.distributed import _judge_phase

    plan: Any = SimpleNamespace(statistics={"s": SimpleNamespace(needs_similarity=True)})
    remote = RunOptions(similarity="echo-remote:m", cache=False)
    with pytest.raises(OptionError, match="leave the cache on"):
        _judge_phase(None, None, remote, plan, [], 1)
    local = RunOptions(similarity="echo-local", cache=False)
    assert _judge_phase(None, None, local, plan, [], 1) is None


def test_a_registered_backend_is_built_with_its_options(echo: None, tmp_path: Any) -> None:
    assert backend_options()["level"].backends == ("echo-remote:<model>", "echo-local")
    assert _Echo in backend_classes()
    built = make_backend(
        "echo-remote:m2",
        base_url="http://localhost:1/v1",
        cache=tmp_path / "c.sqlite3",
        options={"level": 0.25, "template": "not mine"},
    )
    try:
        assert isinstance(built, _Echo)
        assert (built.model, built.level, built.base_url) == ("m2", 0.25, "http://localhost:1/v1")
        assert built.cache is not None  # a remote backend is given the run's cache
        table, _ = built.score([("a", "b")])
        assert table.get("a", "b") == 0.25
    finally:
        built.cache.close()
    local = make_backend("echo-local", options={"level": 0.75})
    assert isinstance(local, _Echo) and local.cache is None


def test_registering_a_name_twice_is_an_error(echo: None) -> None:
    with pytest.raises(ValueError, match="registered already"):
        backend("echo-remote", remote=True)(lambda: _Echo)
    with pytest.raises(ValueError, match="without a colon"):
        backend("a:b")


def test_the_builtin_backends_come_first_and_unregistering_removes_one(echo: None) -> None:
    kinds = [entry.kind for entry in backend_entries()]
    assert kinds[:3] == ["exact", "levenshtein", "lexical"]
    unregister("echo-local")
    assert "echo-local" not in [entry.kind for entry in backend_entries()]


def test_a_registered_backends_option_is_a_suite_option_with_its_range(
    echo: None, tmp_path: Path
) -> None:
    """A backend's keyword-only parameter is what a suite's ``similarity:`` block may set, its
    ``Annotated`` range checked with the file, key and value named: one place, no second table."""
    path = tmp_path / "suite.yaml"
    head = (
        "name: t\nlabels: {values: [a, b]}\ninputs: {gold: g, pred: p}\nmetrics: {accuracy: {}}\n"
    )
    path.write_text(head + "similarity: {level: 0.25, concurrency: 4}\n", encoding="utf-8")
    assert load_suite(path).spec.similarity == {"level": 0.25, "concurrency": 4}
    path.write_text(head + "similarity: {level: 2}\n", encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert info.value.key == "similarity.level"
    assert "level must be a number within [0, 1], got 2" in str(info.value)
    assert str(info.value).startswith(f"{path}:5: key 'similarity.level': ")
    unregister("echo-remote")
    unregister("echo-local")
    with pytest.raises(SuiteError, match=r"unknown similarity option\(s\) \['level'\]"):
        load_suite(path)


class _Narrow(_Echo):
    """``level`` declared again, narrower: a suite's value must suit every backend taking it."""

    def __init__(self, model: str = "local", *, level: Annotated[float, Range(0, 0.5)] = 0.5):
        super().__init__(model, level=level)


def test_an_option_declared_by_two_backends_is_checked_against_both(
    echo: None, tmp_path: Path
) -> None:
    backend("echo-narrow")(lambda: _Narrow)
    try:
        option = backend_options()["level"]
        assert len(option.hints) == 2 and option.backends[-1] == "echo-narrow:<model>"
        path = tmp_path / "suite.yaml"
        head = "name: t\nlabels: {values: [a, b]}\ninputs: {gold: g, pred: p}\n"
        path.write_text(head + "metrics: {accuracy: {}}\nsimilarity: {level: 0.75}\n", "utf-8")
        with pytest.raises(SuiteError, match=r"level must be a number within \[0, 0.5\]"):
            load_suite(path)
    finally:
        unregister("echo-narrow")
