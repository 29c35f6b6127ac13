"""The collector pause (``pingce._collector``): off during the body, on after, and what the body
made frozen out of later collections' walks (issue 32)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pingce._collector import collector_paused


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        gc.enable() if was else gc.disable()


@pytest.fixture
def freezes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The calls of ``gc.freeze`` (still made): the permanent generation's count alone can fall
    while a test runs, when a frozen object of an earlier test in the process is freed."""
    calls: list[int] = []
    real = gc.freeze

    def counted() -> None:
        calls.append(1)
        real()

    monkeypatch.setattr(gc, "freeze", counted)
    return calls


def test_what_the_pause_made_is_frozen_and_the_collector_on_again(
    collector_on: None, freezes: list[int]
) -> None:
    with collector_paused():
        assert not gc.isenabled()
        made = [[k] for k in range(10_000)]
    assert gc.isenabled()
    assert freezes == [1]
    assert gc.get_freeze_count() >= len(made)
    young = {id(x) for x in gc.get_objects(generation=0)}
    assert id(made) not in young and not any(id(x) in young for x in made)


def test_a_nested_pause_freezes_once_when_the_outermost_ends(
    collector_on: None, freezes: list[int]
) -> None:
    with collector_paused():
        with collector_paused():
            made = [[k] for k in range(1_000)]
        assert not gc.isenabled()  # the inner pause left the collector to the outer one
        assert freezes == []
    assert gc.isenabled()
    assert freezes == [1]
    assert not any(x is made for x in gc.get_objects(generation=0))


def test_a_collector_already_off_stays_off_and_nothing_is_frozen(freezes: list[int]) -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            made = [[k] for k in range(1_000)]
        assert not gc.isenabled()
        assert freezes == []
        assert len(made) == 1_000
    finally:
        gc.enable() if was else gc.disable()


def test_the_collector_comes_back_when_the_body_raises(collector_on: None) -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
