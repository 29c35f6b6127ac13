"""The fast paths of the tcm-dialogue suite against the general code they stand in for, on seeded
random dialogues: feature objects of strings keyed by one JSON text per turn, the dialogue order
from one stable sort, the unit codes of a column of strings, the ``match_by`` texts of strings
and integers, and the turn columns shared by the two dialogue statistics. Each must give what
the general path gives, value for value and reason for reason (and the metrics what the
independent reference of tests/test_tcm_dialogue.py gives)."""

from __future__ import annotations

import itertools
import json
import operator
from typing import Any

import numpy as np
import pytest

from pingce._json import dumps, json_texts
from pingce.engine import groups, saved
from pingce.metrics import dialogue
from pingce.records import Table, load_records
from tests.test_tcm_dialogue import (
    assert_matches,
    evaluate,
    lexical_cosine,
    random_records,
    reference,
)

SEEDS = [0, 1, 2, 3]


def strings_only(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records with every feature value a string (the feature fast path's case)."""
    out = []
    for record in records:
        record = dict(record)
        for key in ("pred_features", "gt_features"):
            value = record.get(key)
            if isinstance(value, dict):
                record[key] = {k: v for k, v in value.items() if isinstance(v, str)}
        out.append(record)
    return out


def per_record(result: Any) -> list[tuple[Any, Any]]:
    return [(row["values"], row.get("misses", {})) for row in result.record_values()]


def general_feature_pairs(
    pred: Any, gold: Any, from_text: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    return dialogue._alike(dialogue._feature_keys(pred), dialogue._feature_keys(gold))


# ------------------------------------------------------------------------------ features


@pytest.mark.parametrize("seed", SEEDS)
def test_string_features_match_the_reference(seed: int) -> None:
    records = strings_only(random_records(seed))
    features = [r.get(k) for r in records for k in ("pred_features", "gt_features")]
    assert any(isinstance(f, dict) and len(f) > 1 for f in features)
    result = evaluate(records)
    expected, _ = reference(records, lexical_cosine(records))
    assert_matches(result, expected)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("strings", [True, False])
@pytest.mark.parametrize("from_text", [True, False])
def test_feature_pairs_partition_as_the_general_keys(
    seed: int, strings: bool, from_text: bool
) -> None:
    records = random_records(seed, n_dialogues=80)
    if strings:
        records = strings_only(records)
    pred = [r.get("pred_features") or None for r in records]
    gold = [r.get("gt_features") or None for r in records]
    codes, firsts = dialogue._feature_pairs(pred, gold, from_text)
    general, general_firsts = general_feature_pairs(pred, gold)
    # the same groups of turns (numbered otherwise), each first seen at the same turn
    assert sorted(firsts.tolist()) == sorted(general_firsts.tolist())
    renumber = dict(zip(general[firsts].tolist(), range(len(firsts)), strict=True))
    assert [renumber[c] for c in general.tolist()] == codes.tolist()
    assert codes[firsts].tolist() == list(range(len(firsts)))


def test_pair_texts_are_cut_at_the_pairs_alone() -> None:
    """The pairs' texts cut from one JSON text are each pair's JSON text without its brackets;
    strings that hold brackets (where a cut could fall inside one) take the general texts."""
    pairs = [({"a": "寒"}, {"a": "热", "b": "x"}), ({}, {"a": "寒"}), ({}, {})]
    assert dialogue._pair_texts(pairs) == [dumps(list(p))[1:-1] for p in pairs]
    tricky = [({"a": "],["}, {"a": "["}), ({"a": "]"}, {}), ({"b": "[x]"}, {"a": "],["})]
    assert dialogue._pair_texts(tricky) == json_texts(tricky)
    assert dialogue._pair_texts([]) == []


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("bracket", ["[", "],[", "]"])
def test_feature_pairs_with_brackets_in_strings(seed: int, bracket: str) -> None:
    records = strings_only(random_records(seed, n_dialogues=40))
    for i, record in enumerate(records[::3]):
        record["pred_features"] = {"nature": f"寒{bracket}{i % 2}"}
    pred = [r.get("pred_features") or None for r in records]
    gold = [r.get("gt_features") or None for r in records]
    codes, firsts = dialogue._feature_pairs(pred, gold)
    general, general_firsts = general_feature_pairs(pred, gold)
    assert sorted(firsts.tolist()) == sorted(general_firsts.tolist())
    renumber = dict(zip(general[firsts].tolist(), range(len(firsts)), strict=True))
    assert [renumber[c] for c in general.tolist()] == codes.tolist()


@pytest.mark.parametrize(
    "values",
    [
        ["寒", float("nan"), None],  # NaN and null: one text (null), two comparisons
        ["1", 1, 1.0, True, "true"],
        ["寒", ["寒"], {"x": "寒"}],
    ],
)
def test_feature_objects_read_from_text_alike_in_text_not_in_type(
    tmp_path: Any, values: list[Any]
) -> None:
    """Read from a file, objects whose texts are alike but whose members are not all strings
    (NaN beside null, numbers beside strings) are checked turn by turn, as the general keys
    and the reference have them."""
    records = strings_only(random_records(0, n_dialogues=30))
    for i, record in enumerate(records):
        # as JSON text of the object (which may hold NaN, that JSON lines may not)
        features = {"nature": values[i % len(values)], "sweat": "无汗"}
        record["pred_features"] = json.dumps(features, ensure_ascii=False)
    path = tmp_path / "features.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n")
    fields = dialogue.DialogueFields()
    table = load_records(str(path), fields.specs(), id_path="id")
    assert table.read_from_text
    pred, gold = table.column("pred_features"), table.column("gt_features")
    codes, firsts = dialogue._feature_pairs(pred, gold, from_text=True)
    general, general_firsts = general_feature_pairs(pred, gold)
    assert sorted(firsts.tolist()) == sorted(general_firsts.tolist())
    renumber = dict(zip(general[firsts].tolist(), range(len(firsts)), strict=True))
    assert [renumber[c] for c in general.tolist()] == codes.tolist()
    fast = dialogue._feature_checks(pred, gold, ("nature",), from_text=True)
    slow = dialogue._feature_checks(pred, gold, ("nature",))
    assert all(np.array_equal(a, b) for a, b in zip(fast, slow, strict=True))


@pytest.mark.parametrize("seed", SEEDS)
def test_per_record_values_and_reasons_as_the_general_path(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = strings_only(random_records(seed))
    fast = per_record(evaluate(records, similarity="exact"))
    monkeypatch.setattr(dialogue, "_feature_pairs", general_feature_pairs)
    assert per_record(evaluate(records, similarity="exact")) == fast


# ------------------------------------------------------------------------------ order


def reference_order(group: np.ndarray, turns: np.ndarray) -> np.ndarray:
    return np.lexsort((np.arange(turns.size), turns, group))


@pytest.mark.parametrize("seed", range(6))
def test_stable_order_is_the_lexsort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    group = rng.integers(0, max(1, n // 3), size=n)
    low, high = [(0, 9), (-50, 50), (-(2**61), 2**61), (2**40, 2**40 + 3)][seed % 4]
    turns = rng.integers(low, high, size=n, dtype=np.int64)  # ties on purpose
    assert dialogue._stable_order(group, turns).tolist() == reference_order(group, turns).tolist()


def test_stable_order_falls_back_where_the_key_would_overflow() -> None:
    turns = np.array([2**62 - 1, -(2**62) + 1, 0, 0], dtype=np.int64)
    group = np.array([1, 1, 0, 1])
    assert dialogue._stable_order(group, turns).tolist() == [2, 1, 3, 0]


# ------------------------------------------------------------------------------ turn columns


@pytest.mark.parametrize("seed", SEEDS)
def test_turn_columns_read_the_records(seed: int) -> None:
    records = random_records(seed)
    fields = dialogue.DialogueFields()
    table = load_records(records, fields.specs())
    status, correct, conf = dialogue.turn_columns(table, fields)
    assert [dialogue.STATUSES[c] for c in status.tolist()] == [r["status"] for r in records]
    pred, gold = table.column("pred_diagnosis"), table.column("gt_diagnosis")
    assert correct.tolist() == [p is not None and p == g for p, g in zip(pred, gold, strict=True)]
    assert conf.tolist() == [c if c is not None else 0.0 for c in table.column("confidence")]
    assert dialogue.turn_columns(table, fields)[0] is status  # made once per table


def test_lengths_count_none_as_zero() -> None:
    values = [None, (), ("a",), ("a", "b"), None, ("x",) * 7]
    assert dialogue._lengths(values).tolist() == [0, 0, 1, 2, 0, 7]
    assert dialogue._lengths([]).tolist() == []


# ------------------------------------------------------------------------------ unit codes


def general_unit_codes(values: list[Any]) -> list[int]:
    keys = [v if isinstance(v, str) else groups.json_equal_key(v) for v in values]
    ordered = sorted(dict.fromkeys(keys), key=groups._unit_order)
    rank = {key: r for r, key in enumerate(ordered)}
    return [rank[k] for k in keys]


def column_table(name: str, values: list[Any]) -> Table:
    return Table(
        source="<test>",
        ids=[None] * len(values),
        lines=np.arange(1, len(values) + 1),
        columns={name: values},
        specs={},
    )


@pytest.mark.parametrize("seed", range(4))
def test_unit_codes_of_strings_as_the_general_path(seed: int) -> None:
    rng = np.random.default_rng(seed)
    alphabet = ["d", "D", "对话", "é", " ", "1", "10", "9", "", "😀"]
    values = [
        "".join(alphabet[int(i)] for i in rng.integers(0, len(alphabet), size=rng.integers(0, 4)))
        for _ in range(500)
    ]
    codes = groups.unit_codes(column_table("u", values), "u")
    assert codes is not None and codes.dtype == np.int64
    assert codes.tolist() == general_unit_codes(values)
    mixed = [*values, 1, 1.0, True, None]  # not all strings: the general path
    codes = groups.unit_codes(column_table("u", mixed), "u")
    assert codes is not None and codes.tolist() == general_unit_codes(mixed)


# ------------------------------------------------------------------------------ match keys


def canonical_texts(columns: list[list[Any]]) -> list[str]:
    return [
        dumps([saved._canonical(v) for v in row], sort_keys=True).decode()
        for row in zip(*columns, strict=True)
    ]


@pytest.mark.parametrize(
    "extra",
    [
        [],
        [True],  # a boolean: the general path
        [2**70],  # beyond what orjson writes
        [1.0],  # a float the general path writes as 1
        ["\ud800"],  # a lone surrogate
    ],
)
@pytest.mark.parametrize("seed", range(3))
def test_match_keys_of_strings_and_integers_as_the_general_path(
    seed: int, extra: list[Any]
) -> None:
    rng = np.random.default_rng(seed)
    texts = ["d1", "对话,2", 'q"uote', "a\\b", "],[", "\n", "😀", ""]
    ids = [texts[int(i)] for i in rng.integers(0, len(texts), size=300)] + ["x"] * len(extra)
    turns = rng.integers(-(2**63), 2**63 - 1, size=300, dtype=np.int64).tolist() + extra
    table = column_table("dialogue_id", ids)
    table.columns["turn"] = turns
    try:
        expected = canonical_texts([ids, turns])
    except (TypeError, UnicodeEncodeError) as exc:  # the general path cannot write it either
        with pytest.raises(type(exc)):
            saved.match_keys(table, ["dialogue_id", "turn"])
        return
    keys = saved.match_keys(table, ["dialogue_id", "turn"])
    assert keys.tolist() == expected
    assert keys.dtype == np.array(expected, dtype=str).dtype


def test_match_keys_fast_path_is_taken_for_strings_and_integers() -> None:
    columns: list[list[Any]] = [["a", "b"], [1, 2]]
    assert saved._plain_texts(columns) == ['["a",1]', '["b",2]']
    for other in ([True, 2], [1.0, 2], [None, 2], [2**64, 2]):
        assert saved._plain_texts([["a", "b"], other]) is None
    assert saved._plain_texts([]) is None


def test_statistic_blocks_are_unchanged_by_the_order_of_records() -> None:
    """Shuffled records give every turn the same values and reasons (the order and the shared
    columns are made per table)."""
    records = strings_only(random_records(7))
    by_turn = dict(
        zip(
            map(operator.itemgetter("dialogue_id", "turn"), records),
            per_record(evaluate(records, similarity="exact")),
            strict=True,
        )
    )
    shuffled = list(itertools.chain(records[1::2], records[::2]))
    again = dict(
        zip(
            map(operator.itemgetter("dialogue_id", "turn"), shuffled),
            per_record(evaluate(shuffled, similarity="exact")),
            strict=True,
        )
    )
    assert again == by_turn
