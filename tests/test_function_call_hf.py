"""The built-in suite function-call-hf (issue 14): the function-call protocol's second
computation, ``hf_fc_score`` with Hugging Face ``evaluate``, on the records of function-call.

The oracle is :mod:`tests.hf_reference`: the reference's ``hf_fc_score`` built from the libraries
``evaluate``'s metric scripts call (scikit-learn's ``accuracy_score``, rouge-score's
``RougeScorer`` and ``BootstrapAggregator``, sacrebleu's ``Tokenizer13a`` and tensorflow/nmt's
``compute_bleu`` written out from its source), because ``evaluate`` itself cannot run here:
``pip install evaluate`` works, but ``evaluate.load("rouge")`` fetches the metric script from the
Hugging Face Hub at run time and fails offline (the module docstring there says more, and how a
one-off run of the real ``evaluate`` from local copies of its scripts agreed with pingce).

Checked here, each against that oracle or the library itself:

* the tokenizer ``rouge_score`` (and ``rouge_score_stemmed``) equals rouge-score's
  ``DefaultTokenizer`` on adversarial text, and the text_rouge_* metrics with
  ``tokenizer: rouge_score`` (``use_stemmer`` true or false) equal ``RougeScorer``;
* :func:`pingce.text.hf.bootstrap_aggregate` equals ``BootstrapAggregator`` after
  ``np.random.seed(s)``, for every score type in order, bit for bit;
* :func:`pingce.text.hf.nmt_bleu` of summed statistics equals ``compute_bleu``;
* the suite equals ``hf_fc_score`` at 1e-12 on seeded random records (Chinese and English
  arguments, abstentions, parallel calls) and the bundled examples, through ``pingce.evaluate``
  and the command line, by default (the exact mean) and with ``aggregate: bootstrap`` (the
  aggregator's mid for the seed); slices, intervals and comparisons work on it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from rouge_score import rouge_scorer, scoring, tokenizers

import pingce
from pingce.errors import SuiteError
from pingce.metrics.calls_hf import tokens_13a
from pingce.suites import builtin_suites, load_suite
from pingce.suites.spec import SuiteSpec
from pingce.text.bleu import sacrebleu_bleu_stats_batch
from pingce.text.hf import bootstrap_aggregate, nmt_bleu
from pingce.text.tokenize import drops_letters, get_tokenizer

from .cli_run import run_pingce
from .fc_data import SEED_DEMO_RECORDS, random_records, realistic_records, special_records
from .fc_reference import fns2str, parse_calls
from .hf_reference import HF_METRICS, compute_bleu, hf_fc_score, tokenizer_13a

TOL = 1e-12
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "function_call" / "records.jsonl"
Record = dict[str, Any]


def seed_form(records: list[Record]) -> list[Record]:
    """The records as the reference reads them: calls as lists of ``{"name", "arguments"}`` dicts
    (raw model text, JSON-text arguments and ``tool_calls`` parsed with the standard library;
    prose that is not JSON, a refusal, calls nothing, which the reference cannot read at all)."""
    return [
        {**r, "gold_fn": _calls(r["gold_fn"]), "pred_fn": _calls(r.get("pred_fn", []))}
        for r in records
    ]


def _calls(value: Any) -> list[dict[str, Any]]:
    try:
        return parse_calls(value)
    except ValueError:
        if isinstance(value, str) and not value.lstrip().startswith(("{", "[", "`")):
            return []
        raise


def example_records() -> list[Record]:
    return [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if line]


DATASETS: dict[str, Callable[[], list[Record]]] = {
    "seed-demo": lambda: [dict(r) for r in SEED_DEMO_RECORDS],
    "special": special_records,
    "random-1": lambda: random_records(150, seed=11),
    "random-2": lambda: random_records(150, seed=12),
    "realistic": lambda: realistic_records(150, seed=13),
    "examples": example_records,
}


def suite_copy(tmp_path: Path, **defaults: Any) -> Path:
    """The built-in function-call-hf with some defaults replaced, as a user's copy."""
    text = (resources.files("pingce.suites") / "function-call-hf.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    data["defaults"].update(defaults)
    path = tmp_path / f"hf-{abs(hash(json.dumps(defaults, sort_keys=True)))}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def values(result: Any) -> dict[str, float | None]:
    return {name: result.metrics[name].value for name in HF_METRICS}


def assert_equal_values(got: dict[str, float | None], expected: dict[str, float]) -> None:
    for name in HF_METRICS:
        value = got[name]
        assert value is not None, name
        assert value == pytest.approx(expected[name], abs=TOL, rel=TOL), name


# ----------------------------------------------------------------------------------------------
# kernels: tokenizer, aggregator, BLEU
# ----------------------------------------------------------------------------------------------

ALPHABET = "abcXYZ019 \t\n_-.,;:'\"{}[]客厅打开éÉßİ\u212aℌ①٣\u00a0\u2028ﬁ😀"
WORDS = [
    "running", "flies", "happily", "generously", "caresses", "ponies", "national", "relational",
    "conditional", "control", "controlling", "lights", "switching", "temperature", "rooms",
    "a", "an", "the", "is", "was", "agreed", "hopping", "sized", "meeting", "ies", "sses",
]  # fmt: skip


def random_text(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))
    words = [
        rng.choice(WORDS) + rng.choice(["", "s", "ing", "ed", "ly", "ness", "-2"])
        for _ in range(rng.randint(0, 14))
    ]
    return rng.choice([" ", ", ", "\n"]).join(words)


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_score_tokenizer_equals_rouge_scores_default_tokenizer(use_stemmer: bool) -> None:
    ours = get_tokenizer("rouge_score_stemmed" if use_stemmer else "rouge_score")
    theirs = tokenizers.DefaultTokenizer(use_stemmer=use_stemmer)
    rng = random.Random(3)
    texts = [random_text(rng) for _ in range(4000)]
    texts += ["", "客厅打开", "\u212a", "İstanbul", 'light_control{"room": "客厅"}']
    mismatches = [t for t in texts if ours(t) != theirs.tokenize(t)]
    assert not mismatches, mismatches[:3]
    assert ours('light_control{"room": "客厅"}') == ["light", "control", "room"]


def test_drops_letters_says_when_rouge_score_loses_letters_or_digits() -> None:
    tokenize = get_tokenizer("rouge_score")
    rng = random.Random(4)
    texts = [random_text(rng) for _ in range(3000)] + ["\u212a", "İ", "ß", "①", "a客"]
    for text in texts:
        kept = "".join(tokenize(text))
        assert set(kept) <= set("abcdefghijklmnopqrstuvwxyz0123456789"), text
        letters_and_digits = sum(1 for c in text.lower() if c.isalnum())
        assert drops_letters(text) == (len(kept) < letters_and_digits), text
    assert not drops_letters("\u212a") and drops_letters("a客") and not drops_letters("ab-c")


def test_drops_letters_on_every_character() -> None:
    for code in range(0x110000):
        c = chr(code)
        expected = any(x.isalnum() and not x.isascii() for x in c.lower())
        assert drops_letters(c) == expected, hex(code)


def test_call_texts_tokenised_piece_by_piece_equal_13a_on_the_whole_text() -> None:
    """tokens_13a splits at json's ", " and tokenises the pieces alone: the tokens of
    evaluate's tokenizer_13a (sacrebleu's Tokenizer13a) of the whole text, on texts made of
    everything 13a treats specially."""
    rng = random.Random(9)
    parts = [
        ", ", ",", ".", " ", "-", "1", "9", "a", "&amp;", "&quot;", "&lt", ";", "<skipped>",
        "\n", "-\n", '"', "{", "}", "客厅", "..", ",,", "1.5", "x-", "&", "\u3000", "\t",
    ]  # fmt: skip
    texts = ["".join(rng.choice(parts) for _ in range(rng.randint(0, 14))) for _ in range(20000)]
    texts = [t.rstrip() + "}" for t in texts]  # a call text ends in } (or null)
    texts += [fns2str(r["gold_fn"]) for r in seed_form(random_records(300, seed=10))]
    assert tokens_13a(texts) == [tokenizer_13a(t) for t in texts]


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_text_rouge_metrics_take_the_rouge_score_tokenizer(use_stemmer: bool) -> None:
    rng = random.Random(5 + use_stemmer)
    records = [
        {"id": str(i), "pred_text": random_text(rng), "gold_text": random_text(rng)}
        for i in range(400)
    ]
    options = {"tokenizer": "rouge_score", "use_stemmer": use_stemmer}
    spec = SuiteSpec.model_validate(
        {
            "name": "text",
            "metrics": {
                "r1": {"metric": "text_rouge_n", "n": 1, **options},
                "r2": {"metric": "text_rouge_n", "n": 2, **options},
                "rl": {"metric": "text_rouge_l", **options},
                "rlsum": {"metric": "text_rouge_lsum", **options},
                "r1p": {"metric": "text_rouge_n", "n": 1, "stat": "p", **options},
            },
        }
    )
    with pytest.warns(UserWarning, match="no tokens"):  # some random texts hold no a-z0-9
        result = pingce.evaluate(spec, records, bootstrap=0)
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer)
    scores = [scorer.score(r["gold_text"], r["pred_text"]) for r in records]
    expected = {
        "r1": np.mean([s["rouge1"].fmeasure for s in scores]),
        "r2": np.mean([s["rouge2"].fmeasure for s in scores]),
        "rl": np.mean([s["rougeL"].fmeasure for s in scores]),
        "rlsum": np.mean([s["rougeLsum"].fmeasure for s in scores]),
        "r1p": np.mean([s["rouge1"].precision for s in scores]),
    }
    for name, value in expected.items():
        assert result.metrics[name].value == pytest.approx(value, abs=1e-9), name
    rows = result.record_values()
    for row, score in zip(rows, scores, strict=True):
        assert row["values"]["rl"] == pytest.approx(score["rougeL"].fmeasure, abs=1e-12)


def test_use_stemmer_needs_the_rouge_score_tokenizer() -> None:
    spec = SuiteSpec.model_validate(
        {"name": "t", "metrics": {"r": {"metric": "text_rouge_n", "use_stemmer": True}}}
    )
    with pytest.raises(SuiteError, match="tokenizer: rouge_score"):
        load_suite(spec)
    bad = SuiteSpec.model_validate(
        {
            "name": "t",
            "metrics": {
                "r": {"metric": "text_rouge_l", "tokenizer": "rouge_score", "use_stemmer": 1}
            },
        }
    )
    with pytest.raises(SuiteError, match="use_stemmer must be true or false"):
        load_suite(bad)


def _rouge_score_rows(n: int, rng: np.random.Generator) -> list[dict[str, scoring.Score]]:
    """Per-record rouge-score results of four types, with ties (repeated values) as real
    scores have."""
    out = []
    for _ in range(n):
        row = {}
        for t in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
            p, r = rng.choice([0.0, 0.25, 0.5, 1.0, rng.random()], size=2)
            row[t] = scoring.Score(p, r, scoring.fmeasure(p, r))
        out.append(row)
    return out


@pytest.mark.parametrize(
    ("n", "seed", "n_samples", "confidence"),
    [(1, 0, 1000, 0.95), (2, 7, 1000, 0.95), (11, 2024, 1000, 0.95), (60, 1, 300, 0.9),
     (257, 2**32 - 1, 50, 0.5), (40, 3, 1, 1.0)],
)  # fmt: skip
def test_bootstrap_aggregate_equals_rouge_scores_aggregator(
    n: int, seed: int, n_samples: int, confidence: float
) -> None:
    rows = _rouge_score_rows(n, np.random.default_rng(n))
    aggregator = scoring.BootstrapAggregator(confidence_interval=confidence, n_samples=n_samples)
    for row in rows:
        aggregator.add_scores(row)
    saved = np.random.get_state()  # noqa: NPY002
    np.random.seed(seed)  # noqa: NPY002  (the state rouge-score draws from)
    expected = aggregator.aggregate()
    after = np.random.get_state()  # noqa: NPY002
    for skip, kind in enumerate(("rouge1", "rouge2", "rougeL", "rougeLsum")):
        matrix = np.vstack([tuple(row[kind]) for row in rows])
        got = bootstrap_aggregate(
            matrix, seed=seed, n_samples=n_samples, confidence_interval=confidence, skip=skip
        )
        want = np.array([tuple(getattr(expected[kind], b)) for b in ("low", "mid", "high")])
        assert np.array_equal(got, want), (kind, got, want)
    state = np.random.get_state()  # noqa: NPY002
    assert all(np.array_equal(a, b) for a, b in zip(state[1:3], after[1:3], strict=True))
    np.random.set_state(saved)  # noqa: NPY002


def test_bootstrap_aggregate_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="n_samples"):
        bootstrap_aggregate(np.ones((3, 3)), seed=0, n_samples=0)
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_aggregate(np.ones((0, 3)), seed=0)
    with pytest.raises(ValueError, match="confidence_interval"):
        bootstrap_aggregate(np.ones((3, 3)), seed=0, confidence_interval=1.5)


@pytest.mark.parametrize("smooth", [False, True])
def test_nmt_bleu_of_summed_statistics_equals_compute_bleu(smooth: bool) -> None:
    rng = random.Random(8 + smooth)
    vocab = ["a", "b", "c", "d", "e", "{", "}", '"', ":", "x1"]
    worst = 0.0
    for trial in range(300):
        n = rng.randint(1, 8)
        hyps = [[rng.choice(vocab) for _ in range(rng.randint(0, 12))] for _ in range(n)]
        refs = [[rng.choice(vocab) for _ in range(rng.randint(0, 12))] for _ in range(n)]
        if trial % 5 == 0:  # near copies: high-order matches
            hyps = [r[: len(r) - rng.randint(0, 2)] + ["a"] * rng.randint(0, 2) for r in refs]
        stats = sacrebleu_bleu_stats_batch(hyps, refs, max_order=4).sum(axis=0)
        ours = float(nmt_bleu(stats, smooth))
        try:
            expected = compute_bleu([[r] for r in refs], hyps, smooth=smooth)[0]
        except ZeroDivisionError:  # no tokens on a side: nmt divides by zero
            hyp_len, ref_len = sum(map(len, hyps)), sum(map(len, refs))
            assert hyp_len == 0 or ref_len == 0
            assert (np.isnan(ours) and hyp_len == ref_len == 0) or ours == 0.0
            continue
        worst = max(worst, abs(ours - expected))
    assert worst <= TOL


def test_nmt_bleu_any_zero_precision_gives_zero_and_the_brevity_penalty_is_nmts() -> None:
    # 4 tokens, all unigrams and bigrams match, no trigram: p3 = 0 -> BLEU 0 (unsmoothed)
    stats = sacrebleu_bleu_stats_batch([["a", "b", "a", "c"]], [["a", "b", "c", "a", "b"]], 4)
    assert float(nmt_bleu(stats[0])) == 0.0
    assert float(nmt_bleu(stats[0], smooth=True)) > 0.0
    hyps, refs = [["a", "b", "c", "d"]], [["a", "b", "c", "d", "e", "f"]]
    stats = sacrebleu_bleu_stats_batch(hyps, refs, 4)[0]
    assert float(nmt_bleu(stats)) == pytest.approx(compute_bleu([refs], hyps)[0], abs=TOL)
    assert float(nmt_bleu(stats)) == pytest.approx(np.exp(1 - 6 / 4), abs=TOL)


# ----------------------------------------------------------------------------------------------
# the suite against hf_fc_score
# ----------------------------------------------------------------------------------------------


def test_the_suite_is_built_in_and_listed() -> None:
    assert "function-call-hf" in builtin_suites()
    suite = load_suite("function-call-hf")
    assert list(suite.metrics) == list(HF_METRICS)
    listed = run_pingce("suites")
    assert listed.returncode == 0 and "function-call-hf" in listed.stdout


@pytest.mark.parametrize("name", list(DATASETS))
def test_suite_equals_hf_fc_score_with_the_exact_mean(name: str) -> None:
    records = DATASETS[name]()
    result = pingce.evaluate("function-call-hf", records, bootstrap=0)
    assert result.n_records == len(records)
    assert_equal_values(values(result), hf_fc_score(seed_form(records)))
    for metric in HF_METRICS:
        assert result.metrics[metric].n == len(records)
        assert result.metrics[metric].value_note is None


@pytest.mark.parametrize(("name", "seed"), [("random-1", 0), ("examples", 7), ("realistic", 2024)])
def test_aggregate_bootstrap_equals_evaluates_seeded_aggregator(
    tmp_path: Path, name: str, seed: int
) -> None:
    records = DATASETS[name]()
    suite = suite_copy(tmp_path, aggregate="bootstrap", seed=seed)
    result = pingce.evaluate(suite, records, bootstrap=0)
    expected = hf_fc_score(seed_form(records), seed=seed)
    assert_equal_values(values(result), expected)
    mean = hf_fc_score(seed_form(records))
    for metric in ("rouge-1", "rouge-2", "rouge-l"):
        note = result.metrics[metric].value_note
        assert note is not None and f"seed={seed}" in note, note
        assert f"the exact mean over records is {mean[metric]:.6g}" in note, note
        assert f"mid - mean = {expected[metric] - mean[metric]:+.3g}" in note, note
    assert result.metrics["bleu-4"].value_note is None


def test_aggregate_bootstrap_leaves_numpys_global_state_alone(tmp_path: Path) -> None:
    before = np.random.get_state()  # noqa: NPY002
    pingce.evaluate(suite_copy(tmp_path, aggregate="bootstrap"), random_records(30), bootstrap=0)
    after = np.random.get_state()  # noqa: NPY002
    assert np.array_equal(before[1], after[1]) and before[2] == after[2]


def test_use_stemmer_equals_evaluates_use_stemmer(tmp_path: Path) -> None:
    records = random_records(200, seed=21)
    records += [  # words that only the stemmer matches
        {
            "id": f"s{i}",
            "gold_fn": [{"name": "switch_lights", "arguments": {"action": gold}}],
            "pred_fn": [{"name": "switching_light", "arguments": {"action": pred}}],
        }
        for i, (gold, pred) in enumerate([("dimming", "dimmed"), ("turns on", "turning on")])
    ]
    result = pingce.evaluate(suite_copy(tmp_path, use_stemmer=True), records, bootstrap=0)
    stemmed = hf_fc_score(seed_form(records), use_stemmer=True)
    assert_equal_values(values(result), stemmed)
    plain = hf_fc_score(seed_form(records))
    assert any(stemmed[m] != plain[m] for m in ("rouge-1", "rouge-2", "rouge-l"))


def test_the_non_ascii_note_counts_records_whose_letters_rouge_drops() -> None:
    records = random_records(120, seed=22)
    result = pingce.evaluate("function-call-hf", records, bootstrap=0)
    parsed = seed_form(records)
    count = sum(
        1
        for r in parsed
        if any(
            c.isalnum() and not c.isascii()
            for c in (fns2str(r["gold_fn"]) + fns2str(r["pred_fn"])).lower()
        )
    )
    assert count > 0
    notes = [n for n in result.notes if "rouge-score's tokeniser" in n]
    assert notes == [notes[0]] and notes[0].startswith(f"{count} of {len(records)} records"), notes
    english = [{"id": "e", "gold_fn": [{"name": "f", "arguments": {"x": "on"}}], "pred_fn": []}]
    plain = pingce.evaluate("function-call-hf", english, bootstrap=0)
    assert not [n for n in plain.notes if "rouge-score's tokeniser" in n]


def test_the_command_line_on_the_examples_equals_hf_fc_score(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = run_pingce(
        "run", "function-call-hf", "--data", str(EXAMPLES), "--out", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    records = example_records()
    assert results["suite"] == "function-call-hf" and results["n_records"] == len(records)
    expected = hf_fc_score(seed_form(records))
    for name in HF_METRICS:
        metric = results["metrics"][name]
        assert metric["value"] == pytest.approx(expected[name], abs=TOL), name
        assert metric["ci_low"] <= metric["value"] <= metric["ci_high"], name
    assert any("rouge-score's tokeniser" in note for note in results["notes"])
    assert "note: 17 of 21 records have letters or digits outside ASCII" in done.stdout
    rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    for row, record in zip(rows, seed_form(records), strict=True):
        score = scorer.score(fns2str(record["gold_fn"]), fns2str(record["pred_fn"]))
        assert row["values"]["rouge-2"] == pytest.approx(score["rouge2"].fmeasure, abs=TOL)
        gold = tokenizer_13a(fns2str(record["gold_fn"]))
        pred = tokenizer_13a(fns2str(record["pred_fn"]))
        if not gold and not pred:  # nmt divides 0 by 0: no value for this record
            assert row["values"]["bleu-4"] is None
        elif not gold or not pred:  # nmt divides by 0; no n-gram can match
            assert row["values"]["bleu-4"] == 0.0
        else:
            alone = compute_bleu([[gold]], [pred])[0]
            assert row["values"]["bleu-4"] == pytest.approx(alone, abs=TOL)


def test_a_prediction_that_does_not_parse_scores_as_no_call() -> None:
    gold = [{"name": "light_control", "arguments": {"room": "kitchen", "action": "on"}}]
    records = [
        {"id": "a", "gold_fn": gold, "pred_fn": gold},
        {"id": "b", "gold_fn": gold, "pred_fn": '```json\n{"name": "light_control", '},
        {"id": "c", "gold_fn": gold, "pred_fn": []},
    ]
    result = pingce.evaluate("function-call-hf", records, bootstrap=0)
    assert result.failures.parse == 1
    as_no_call = [records[0], {**records[1], "pred_fn": []}, records[2]]
    assert_equal_values(values(result), hf_fc_score(as_no_call))


def test_bleu_with_no_token_anywhere_is_undefined_and_one_sided_is_zero(tmp_path: Path) -> None:
    nothing = [{"id": str(i), "gold_fn": [], "pred_fn": []} for i in range(3)]
    result = pingce.evaluate("function-call-hf", nothing, bootstrap=0)
    bleu = result.metrics["bleu-4"]
    assert bleu.value is None and "ZeroDivisionError" in (bleu.undefined_reason or "")
    assert result.metrics["fn_acc_name"].value == 1.0
    assert result.metrics["rouge-1"].value == 0.0  # rouge-score: empty texts score 0
    filled = pingce.evaluate("function-call-hf", nothing, bootstrap=0, zero_division=0)
    assert filled.metrics["bleu-4"].value == 0.0 and filled.metrics["bleu-4"].value_note
    calls = [{"name": "f", "arguments": {"k": "v"}}]
    silent = [{"id": str(i), "gold_fn": calls, "pred_fn": []} for i in range(3)]
    with pytest.raises(ZeroDivisionError):  # evaluate's bleu cannot score it
        hf_fc_score(silent)
    assert pingce.evaluate("function-call-hf", silent, bootstrap=0).metrics["bleu-4"].value == 0.0


def _one_call(name: str, key: str, value: int) -> list[dict[str, Any]]:
    return [{"name": name, "arguments": {key: value}}]


# 13a tokens: f { " a " : 1 } against f { " b " : 2 } share no 4-gram (but 1-, 2- and 3-grams);
# against g { " b " : 2 } no 3-gram either; f { } (3 tokens) has no 4-gram, and its one 3-gram
# is not the gold's f { "
UNSMOOTHED_ZERO = [
    ("f", "b", 2, "no 4-gram of the predictions matches a reference;"),
    ("g", "b", 2, "no 3-gram or 4-gram of the predictions matches a reference;"),
    (
        "f",
        "",
        0,
        "no 3-gram or 4-gram of the predictions matches a reference (the predictions "
        "have no 4-gram);",
    ),
]


@pytest.mark.parametrize(("name", "key", "value", "says"), UNSMOOTHED_ZERO)
def test_bleu_zero_for_an_order_without_a_match_says_so(
    tmp_path: Path, name: str, key: str, value: int, says: str
) -> None:
    gold = _one_call("f", "a", 1)
    pred = _one_call(name, key, value) if key else [{"name": "f", "arguments": {}}]
    records = [{"id": str(i), "gold_fn": gold, "pred_fn": pred} for i in range(3)]
    assert hf_fc_score(seed_form(records))["bleu-4"] == 0.0  # the reference's own value
    result = pingce.evaluate("function-call-hf", records, bootstrap=0)
    bleu = result.metrics["bleu-4"]
    assert bleu.value == 0.0
    assert bleu.value_note is not None and bleu.value_note.startswith("0: " + says), bleu.value_note
    assert "unsmoothed" in bleu.value_note
    data = tmp_path / "records.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "out"
    done = run_pingce("run", "function-call-hf", "--data", str(data), "--out", str(out))
    assert done.returncode == 0, done.stderr
    written = json.loads((out / "results.json").read_text(encoding="utf-8"))["metrics"]["bleu-4"]
    assert written["value"] == 0.0 and written["value_note"] == bleu.value_note
    # one record whose 4-grams match makes every order match: a value, no note
    matched = [*records, {"id": "m", "gold_fn": gold, "pred_fn": gold}]
    expected = hf_fc_score(seed_form(matched))["bleu-4"]
    assert expected > 0
    after = pingce.evaluate("function-call-hf", matched, bootstrap=0).metrics["bleu-4"]
    assert after.value == pytest.approx(expected, abs=TOL) and after.value_note is None


# ----------------------------------------------------------------------------------------------
# slices, intervals and comparisons, as for every suite
# ----------------------------------------------------------------------------------------------


def with_category(records: list[Record]) -> list[Record]:
    return [{**r, "category": ("甲", "乙", "丙")[i % 3]} for i, r in enumerate(records)]


@pytest.mark.parametrize("aggregate", ["mean", "bootstrap"])
def test_slices_equal_hf_fc_score_on_the_slice(tmp_path: Path, aggregate: str) -> None:
    records = with_category(random_records(120, seed=31))
    suite = suite_copy(tmp_path, aggregate=aggregate, seed=5)
    result = pingce.evaluate(suite, records, bootstrap=200, slices=["category"])
    assert set(result.slices) == {"category=甲", "category=乙", "category=丙"}
    seed = None if aggregate == "mean" else 5
    for key, sliced in result.slices.items():
        subset = [r for r in records if f"category={r['category']}" == key]
        expected = hf_fc_score(seed_form(subset), seed=seed)
        got = {name: sliced.metrics[name].value for name in HF_METRICS}
        assert_equal_values(got, expected)
        for name in HF_METRICS:
            interval = sliced.metrics[name]
            assert interval.ci_low is not None and interval.ci_high is not None, (key, name)
            assert interval.ci_low <= interval.ci_high
    for name in HF_METRICS:  # the run's interval is seeded: again, the same
        assert result.metrics[name].ci_low is not None


def test_bleu_intervals_resample_summed_statistics() -> None:
    records = random_records(80, seed=32)
    first = pingce.evaluate("function-call-hf", records, bootstrap=300, seed=4)
    again = pingce.evaluate("function-call-hf", records, bootstrap=300, seed=4)
    bleu = first.metrics["bleu-4"]
    assert (bleu.ci_low, bleu.ci_high) == (again.metrics["bleu-4"].ci_low,
                                           again.metrics["bleu-4"].ci_high)  # fmt: skip
    assert bleu.ci_low is not None and bleu.ci_high is not None
    assert bleu.ci_low < bleu.value < bleu.ci_high  # type: ignore[operator]


def test_compare_differences_equal_hf_fc_score_differences(tmp_path: Path) -> None:
    baseline = random_records(100, seed=41)
    rng = random.Random(42)
    candidate = [
        {**r, "pred_fn": r["gold_fn"]} if rng.random() < 0.4 else dict(r) for r in baseline
    ]
    for aggregate, seed in (("mean", None), ("bootstrap", 3)):
        suite = suite_copy(tmp_path, aggregate=aggregate, seed=seed or 0)
        result = pingce.compare(suite, candidate, baseline, bootstrap=200)
        c = hf_fc_score(seed_form(candidate), seed=seed)
        b = hf_fc_score(seed_form(baseline), seed=seed)
        for name in HF_METRICS:
            metric = result.metrics[name]
            assert metric.delta == pytest.approx(c[name] - b[name], abs=TOL), (aggregate, name)
    assert any(note.startswith("candidate: ") for note in result.notes)
    assert any(note.startswith("baseline: ") for note in result.notes)


def test_aggregate_bootstrap_keeps_the_intervals_and_tests_of_the_mean(tmp_path: Path) -> None:
    """The mid replaces the reported value only: intervals (BCa's bias correction included)
    and paired tests resample the exact mean, as with ``aggregate: mean``."""
    records = random_records(60, seed=51)
    mean = pingce.evaluate("function-call-hf", records, bootstrap=300, seed=2)
    mid = pingce.evaluate(
        suite_copy(tmp_path, aggregate="bootstrap"), records, bootstrap=300, seed=2
    )
    baseline = [{**r, "pred_fn": []} if i % 4 == 0 else r for i, r in enumerate(records)]
    compared = {
        aggregate: pingce.compare(
            suite_copy(tmp_path, aggregate=aggregate), records, baseline, bootstrap=300
        )
        for aggregate in ("mean", "bootstrap")
    }
    for name in ("rouge-1", "rouge-2", "rouge-l"):
        assert mid.metrics[name].value != mean.metrics[name].value
        assert (mid.metrics[name].ci_low, mid.metrics[name].ci_high) == (
            mean.metrics[name].ci_low,
            mean.metrics[name].ci_high,
        )
        a, b = compared["mean"].metrics[name], compared["bootstrap"].metrics[name]
        assert (a.ci_low, a.ci_high, a.p_value) == (b.ci_low, b.ci_high, b.p_value)
        assert a.delta != b.delta
