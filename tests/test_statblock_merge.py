"""A StatBlock declares how its statistic combines over blocks of other records (issue 29, as
torchmetrics' ``add_state(dist_reduce_fx=...)``): one-hot and dense rows add up, raw rows
concatenate; and it merges itself. The merge of a block's pieces is the block of all its
records, and the merge of their reductions is the reduction of the whole: what a run on Ray adds
up from its shards."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pingce.metrics.protocol import LEFT_OUT, MODEL_FAILED, StatBlock, reason_column

N = 12
CUTS = (0, 5, 6, 12)  # pieces of 5, 1 and 6 records


def _reasons() -> dict[str, np.ndarray]:
    left = reason_column(("left out" if i in (2, 7) else None for i in range(N)), N)
    model = reason_column(("no answer" if i == 7 else None for i in range(N)), N)
    return {LEFT_OUT: left, MODEL_FAILED: model}


def _masks() -> dict[str, np.ndarray]:
    scope = np.ones(N, dtype=bool)
    scope[[0, 9]] = False
    unparsed = np.zeros(N, dtype=bool)
    unparsed[[3, 9]] = True
    return {"scope": scope, "unparsed": unparsed}


def blocks() -> dict[str, StatBlock]:
    rng = np.random.default_rng(0)
    return {
        "one-hot": StatBlock(
            width=4, codes=rng.integers(0, 4, N), counts={"x": 2}, reasons=_reasons(), **_masks()
        ),
        "dense": StatBlock(  # halves: every sum exact in any order
            width=3, rows=rng.integers(0, 9, (N, 3)) / 2.0, counts={"x": 1}, **_masks()
        ),
        "raw": StatBlock(
            width=1,
            rows=np.where(rng.random((N, 1)) < 0.2, np.nan, rng.random((N, 1))),
            decomposable=False,
            reasons=_reasons(),
        ),
    }


def pieces(block: StatBlock) -> list[StatBlock]:
    out = []
    for k, (start, stop) in enumerate(itertools.pairwise(CUTS)):
        piece = block.take(np.arange(start, stop))
        piece.counts = {"x": k + 1} if block.counts else {}
        piece.notes = [f"note {k % 2}"]
        out.append(piece)
    return out


def _same_records(a: StatBlock, b: StatBlock) -> None:
    assert (a.width, a.decomposable, a.n) == (b.width, b.decomposable, b.n)
    for name in ("codes", "rows", "scope", "unparsed"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name
    assert set(a.reasons) == set(b.reasons)
    for name in a.reasons:
        assert a.reasons[name].tolist() == b.reasons[name].tolist()


def _same_counts(a: StatBlock, b: StatBlock) -> None:
    got = (a.n, a.covered(), a.unparsed_covered(), a.left_out_count(), a.model_failed_count())
    want = (b.n, b.covered(), b.unparsed_covered(), b.left_out_count(), b.model_failed_count())
    assert got == want
    assert a.onehot == b.onehot


@pytest.mark.parametrize("kind", ["one-hot", "dense", "raw"])
def test_each_kind_declares_its_reduction(kind: str) -> None:
    block = blocks()[kind]
    assert block.reduction == ("cat" if kind == "raw" else "sum")
    assert block.onehot == (kind == "one-hot")


@pytest.mark.parametrize("kind", ["one-hot", "dense", "raw"])
def test_the_merge_of_a_blocks_pieces_is_the_block_of_all_its_records(kind: str) -> None:
    whole = blocks()[kind]
    merged = StatBlock.merge(pieces(whole))
    _same_records(merged, whole)
    _same_counts(merged, whole)
    assert merged.counts == ({"x": 6} if whole.counts else {})  # 1 + 2 + 3
    assert merged.notes == ["note 0", "note 1"]


@pytest.mark.parametrize("kind", ["one-hot", "dense", "raw"])
def test_the_merge_of_reduced_pieces_is_the_reduction_of_the_whole(kind: str) -> None:
    whole = blocks()[kind]
    reduced = [p.reduced() for p in pieces(whole)]
    merged = StatBlock.merge(reduced)
    want = whole.reduced()
    assert merged.tally is not None and want.tally is not None
    _same_counts(merged, whole)
    assert merged.tally == want.tally
    assert merged.reduction == whole.reduction
    if whole.decomposable:  # one row: the summed statistics
        assert merged.rows is not None and merged.rows.shape == (1, whole.width)
        assert np.array_equal(merged.total(), whole.total())
    else:  # the rows themselves, in order
        assert np.array_equal(merged.rows, whole.rows, equal_nan=True)
    # blocks of records among reduced ones are reduced first; a reduced block merges as itself
    mixed = StatBlock.merge([reduced[0], *pieces(whole)[1:]])
    assert mixed.tally == want.tally
    assert StatBlock.merge([want]).tally == want.tally


def test_a_reduced_block_has_no_records_to_take_and_blocks_of_two_statistics_do_not_merge() -> None:
    found = blocks()
    with pytest.raises(AssertionError):
        found["dense"].reduced().take(np.arange(1))
    with pytest.raises(ValueError):
        StatBlock.merge([found["dense"], found["raw"]])
    with pytest.raises(ValueError):
        StatBlock.merge([])
