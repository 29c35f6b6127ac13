"""The kernels behind the function-call suite's text scores, against the libraries its reference
implementation uses.

Expected values come from the ``rouge`` package (pltrdy, 1.0.1: ``Rouge().get_scores``, its
``_recon_lcs`` traceback and ``rouge_l_summary_level``), nltk (``modified_precision``,
``sentence_bleu`` with ``SmoothingFunction().method3``), jieba (``jieba.cut``), the standard
library's ``json.dumps`` and scipy's ``linear_sum_assignment``, never from pingce. Data: hand-made
edge cases (empty texts, '.', repeated words, very long texts) and seeded random pairs that share
a prefix and a suffix (the case the kernels shortcut) or share nothing.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jieba
import numpy as np
import pytest
from nltk.translate.bleu_score import SmoothingFunction, modified_precision, sentence_bleu
from rouge import Rouge
from rouge import rouge_score as package
from scipy.optimize import linear_sum_assignment

import pingce
from pingce import _halves
from pingce.errors import OptionError
from pingce.metrics.calls import _max_matching
from pingce.metrics.calls import _TextPairs as TextPairs
from pingce.remote.toolcalls import canonical_json, parse_calls
from pingce.text.bleu import nltk_bleu, nltk_stats_from_matches
from pingce.text.pairs import clipped_matches, common_ends
from pingce.text.rouge_reference import (
    SeedEmptyText,
    rouge_package_batch,
    rouge_package_scores,
    rouge_sentences,
    traceback_lcs_words,
    union_lcs_count,
)
from pingce.text.tokenize import jieba_words

from .fc_data import random_records, realistic_records, special_records

TOL = 1e-12
WORDS = ["打开", "客厅", "的", "灯", "a", "b", "the", "{", "}", '"', ":", ",", "22", "26.5", "x"]


@contextmanager
def recursion_limit(limit: int) -> Iterator[None]:
    """The package's traceback is recursive: long texts need a higher limit."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def similar_pair(rng: random.Random, vocab: list[str], low: int = 0, high: int = 40) -> tuple:
    """Two word lists that share a prefix and a suffix around a changed middle (or nothing)."""
    base = [rng.choice(vocab) for _ in range(rng.randint(low, high))]
    kind = rng.random()
    if kind < 0.15:
        return base, [rng.choice(vocab) for _ in range(rng.randint(low, high))]
    other = list(base)
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        at = rng.randint(0, len(other))
        action = rng.random()
        if action < 0.4 and at < len(other):
            other[at] = rng.choice(vocab)
        elif action < 0.7:
            other[at:at] = [rng.choice(vocab) for _ in range(rng.randint(1, 4))]
        else:
            del other[at : at + rng.randint(1, 5)]
    return (base, other) if rng.random() < 0.5 else (other, base)


# --- common prefix and suffix -------------------------------------------------------------------


def brute_common_ends(x: list[Any], y: list[Any]) -> tuple[int, int]:
    prefix = 0
    while prefix < min(len(x), len(y)) and x[prefix] == y[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(x), len(y)) - prefix and x[len(x) - 1 - suffix] == y[len(y) - 1 - suffix]
    ):
        suffix += 1
    return prefix, suffix


def test_common_ends_equal_a_plain_scan() -> None:
    rng = random.Random(1)
    cases = [([], []), ([], ["a"]), (["a"], ["a"]), (["a", "a"], ["a"]), (["a"] * 5, ["a"] * 3)]
    cases += [similar_pair(rng, ["a", "b", "c"]) for _ in range(3000)]
    for x, y in cases:
        assert common_ends(x, y) == brute_common_ends(x, y), (x, y)


# --- BLEU: clipped matches and nltk's sentence_bleu with method 3 ------------------------------


def nltk_matches(hyp: list[str], ref: list[str], n: int) -> int:
    return int(modified_precision([ref], hyp, n).numerator)


BLEU_EDGES = [
    ([], []),
    ([], ["a"]),
    (["a"], []),
    (["a"], ["a"]),
    (["a", "a", "a", "a"], ["a", "a"]),
    (["a", "b", "a", "b", "a"], ["b", "a", "b"]),
    (["的"] * 9, ["的"] * 12),
    (list("abcdefg"), list("abcxdefg")),
    (list("abcdefg"), list("xabcdefgx")),
    (["."], ["."]),
]


def bleu_pairs() -> list[tuple[list[str], list[str]]]:
    rng = random.Random(2)
    pairs = list(BLEU_EDGES)
    pairs += [similar_pair(rng, WORDS) for _ in range(2500)]
    pairs += [similar_pair(rng, ["a", "b"], 0, 12) for _ in range(1000)]  # many repeats
    pairs += [similar_pair(rng, WORDS, 300, 600) for _ in range(20)]  # long
    return pairs


def test_clipped_matches_equal_nltk_modified_precision() -> None:
    pairs = bleu_pairs()
    ours = clipped_matches([h for h, _ in pairs], [r for _, r in pairs], 4)
    assert ours.shape == (len(pairs), 4)
    for (hyp, ref), row in zip(pairs, ours, strict=True):
        want = [nltk_matches(hyp, ref, n) for n in range(1, 5)]
        assert row.tolist() == want, (hyp, ref)


def test_clipped_matches_of_no_pairs_and_other_orders() -> None:
    assert clipped_matches([], [], 4).shape == (0, 4)
    rng = random.Random(3)
    pairs = [similar_pair(rng, ["a", "b", "c"], 0, 15) for _ in range(300)]
    ours = clipped_matches([h for h, _ in pairs], [r for _, r in pairs], 6)
    for (hyp, ref), row in zip(pairs, ours, strict=True):
        assert row.tolist() == [nltk_matches(hyp, ref, n) for n in range(1, 7)]
    with pytest.raises(ValueError, match="hypotheses"):
        clipped_matches([["a"]], [], 4)


def test_bleu_from_clipped_matches_equals_nltk_method3() -> None:
    pairs = bleu_pairs()
    hyps = [h for h, _ in pairs]
    refs = [r for _, r in pairs]
    stats = nltk_stats_from_matches(
        np.array([len(h) for h in hyps]),
        np.array([len(r) for r in refs]),
        clipped_matches(hyps, refs),
    )
    ours = nltk_bleu(stats, smoothing=3)
    method3 = SmoothingFunction().method3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [sentence_bleu([r], h, smoothing_function=method3) for h, r in pairs]
    assert np.allclose(ours, want, rtol=0, atol=TOL)


# --- ROUGE: the rouge package --------------------------------------------------------------------


def package_recon_words(x: list[str], y: list[str]) -> set[str]:
    return set(package._recon_lcs(x, y, exclusive=True)._ngrams)


def test_traceback_words_equal_the_package_traceback() -> None:
    rng = random.Random(4)
    cases = [([], []), (["a"], []), (["a"], ["a"]), (["a", "b"], ["b", "a"])]
    cases += [similar_pair(rng, WORDS) for _ in range(2000)]
    cases += [similar_pair(rng, ["a", "b"], 0, 15) for _ in range(1000)]
    with recursion_limit(5000):
        cases += [similar_pair(rng, WORDS, 200, 400) for _ in range(10)]
        for x, y in cases:
            assert traceback_lcs_words(x, y) == package_recon_words(x, y), (x, y)


def sentence_lists(rng: random.Random) -> list[list[str]]:
    return [[rng.choice(WORDS) for _ in range(rng.randint(1, 8))] for _ in range(rng.randint(1, 4))]


def test_union_lcs_count_equals_the_package_overlap() -> None:
    rng = random.Random(5)
    for _ in range(1500):
        hyp = sentence_lists(rng)
        if rng.random() < 0.5:  # similar texts: the same sentences, one changed
            ref = [list(s) for s in hyp]
            ref[rng.randrange(len(ref))] = [rng.choice(WORDS) for _ in range(rng.randint(1, 8))]
        else:
            ref = sentence_lists(rng)
        raw = package.rouge_l_summary_level(
            [" ".join(s) for s in hyp], [" ".join(s) for s in ref], raw_results=True
        )
        assert union_lcs_count(hyp, ref) == raw["overlap"], (hyp, ref)


ROUGE_EDGES = [
    ("a", "a"),
    ("a", "b"),
    (".", "a"),
    ("a . b", "a . b"),
    ("a . . b", "b . a"),
    ("26.5 度", "26.8 度"),
    ("的 的 的 的", "的 的"),
    ("打开 打开 打开", "打开"),
    ("a  b\tc", "a b c"),
    (" . ", "a"),
    ("a", ". ."),  # a sentence of one empty word: no exception, all 0
    ("x . ", " . x"),
    ("a b c d e f g", "a b c x d e f g"),
]
ROUGE_EMPTY = [("", "a"), ("a", ""), ("", ""), (".", "."), ("..", "a"), ("a", "...")]


def random_text(rng: random.Random, words: list[str]) -> str:
    return " ".join(rng.choice(words) for _ in range(rng.randint(1, 30)))


def rouge_texts() -> list[tuple[str, str]]:
    rng = random.Random(6)
    vocab = [*WORDS, ".", "  ", "\u3000"]
    texts = list(ROUGE_EDGES)
    for _ in range(2500):
        hyp, ref = similar_pair(rng, vocab, 1, 40)
        texts.append((" ".join(hyp), " ".join(ref)))
    texts += [(random_text(rng, vocab), random_text(rng, vocab)) for _ in range(500)]
    return texts


def package_scores(hyp: str, ref: str) -> dict[str, float]:
    scores = Rouge().get_scores(hyp, ref)[0]
    return {name: scores[name]["f"] for name in ("rouge-1", "rouge-2", "rouge-l")}


def test_rouge_package_scores_equal_the_package() -> None:
    with recursion_limit(5000):
        for hyp, ref in rouge_texts():
            try:
                want = package_scores(hyp, ref)
            except ValueError:  # the package raises: pingce must raise too
                with pytest.raises(SeedEmptyText):
                    rouge_package_scores(hyp, ref)
                continue
            got = rouge_package_scores(hyp, ref)
            assert got.keys() == want.keys()
            for name, value in want.items():
                assert got[name] == pytest.approx(value, abs=TOL), (hyp, ref, name)


def test_the_package_raises_where_pingce_counts_an_empty_text() -> None:
    for hyp, ref in ROUGE_EMPTY:
        with pytest.raises(ValueError):
            package_scores(hyp, ref)
        with pytest.raises(SeedEmptyText):
            rouge_package_scores(hyp, ref)
    rows = rouge_package_batch(
        [rouge_sentences(h) for h, _ in ROUGE_EMPTY], [rouge_sentences(r) for _, r in ROUGE_EMPTY]
    )
    assert rows.tolist() == [[0.0, 0.0, 0.0, 1.0]] * len(ROUGE_EMPTY)


def test_rouge_on_long_texts_beyond_the_package_recursion_limit() -> None:
    """One sentence of 1,500 words: the package needs a raised recursion limit (the reference,
    without one, scores 0); pingce gives the package's value without it."""
    rng = random.Random(7)
    hyp, ref = similar_pair(rng, [w for w in WORDS if "." not in w], 1500, 1500)
    hyp_text, ref_text = " ".join(hyp), " ".join(ref)
    with recursion_limit(20_000):
        want = package_scores(hyp_text, ref_text)
    got = rouge_package_scores(hyp_text, ref_text)
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=TOL), name


def test_rouge_sentences_equal_the_package_split() -> None:
    rng = random.Random(8)
    chars = [" ", ".", "a", "\t", "\u3000", "中", "\n", "\x85", "\x1c", "\u200b", "..", "b"]
    for _ in range(20_000):
        text = "".join(rng.choice(chars) for _ in range(rng.randint(0, 12)))
        # the package: hyp = [" ".join(_.split()) for _ in hyp.split(".") if len(_) > 0], then
        # words of each sentence are sentence.split(" ")
        want = [" ".join(p.split()).split(" ") for p in text.split(".") if len(p) > 0]
        assert rouge_sentences(text) == want, repr(text)


# --- jieba words of calls ---------------------------------------------------------------------


def test_record_words_equal_jieba_cut_of_the_joined_text() -> None:
    """pingce segments each distinct piece of a serialisation (between ", ") once and joins the
    words with [",", " "], and the serialisations' words with ";"; the reference segments the whole
    record text: equal for every serialisation the generators make, and odd ones."""
    records = random_records(1500, seed=9) + special_records() + realistic_records(300, seed=9)
    odd = [
        [{"name": ", x\r", "arguments": {"a, b": "c, \nd", ", ": ", "}}],
        [{"name": "x\r\n", "arguments": {"k": "v"}}, {"name": "\n,", "arguments": {}}],
        [{"name": "", "arguments": {"": ""}}, {"name": ";", "arguments": {";": ";, ;"}}],
    ]
    texts = TextPairs()
    for calls in [parse_calls(r[side]) for r in records for side in ("gold_fn", "pred_fn")] + [
        parse_calls(c) for c in odd
    ]:
        parts = sorted(c.text for c in calls)
        joined = ";".join(parts)
        want = list(jieba.cut(joined))
        assert jieba_words(joined) == want, joined
        assert texts.text_words(parts) == want, joined
    assert list(jieba.cut(", ")) == [",", " "]


# --- JSON serialisation -------------------------------------------------------------------------


def random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.random()
    if depth > 2 or kind < 0.5:
        return rng.choice(
            [
                "",
                "客厅",
                'q"uote\\',
                "ctl\x01\n\t",
                "\u2028\u00a0😀",
                0,
                -1,
                2**64,
                -(10**30),
                1.5,
                -0.0,
                1e16,
                1e-05,
                float("nan"),
                float("inf"),
                -float("inf"),
                True,
                False,
                None,
            ]
        )
    if kind < 0.75:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = ["b", "a", "", "中", "Ａ", "😀", "a\nb", "10", "2"]
    return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def test_json_encoder_equals_json_dumps() -> None:
    rng = random.Random(10)
    values = [{}, None, {"a": {"b": {}}}] + [
        {k: random_json(rng) for k in ("x", "y", "名")} for _ in range(3000)
    ]
    for value in values:
        assert canonical_json(value) == json.dumps(value, sort_keys=True, ensure_ascii=False)
    with pytest.raises(TypeError):
        canonical_json({"a": object()})
    assert canonical_json({"a": 1}) == '{"a": 1}'  # usable again after an error


# --- fn_acc_args: the best pairing ------------------------------------------------------------


def test_max_matching_equals_scipy() -> None:
    rng = np.random.default_rng(11)
    for _ in range(2000):
        rows, cols = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        weight = rng.integers(0, 4, size=(rows, cols))
        r, c = linear_sum_assignment(weight, maximize=True)
        assert _max_matching(weight.tolist()) == int(weight[r, c].sum())
    big = rng.integers(0, 5, size=(8, 7))  # beyond brute force: scipy itself
    r, c = linear_sum_assignment(big, maximize=True)
    assert _max_matching(big.tolist()) == int(big[r, c].sum())


# --- the second process -----------------------------------------------------------------------


def squares(items: Any) -> list[int]:
    return [x * x for x in items]


def test_in_halves_forks_and_equals_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_halves, "MINIMUM", 10)
    monkeypatch.setenv("PINGCE_PROCESSES", "2")  # whatever the load
    items = list(range(1001))
    if not _halves.two_processes_allowed(len(items)):
        pytest.skip("no fork or a single core here")
    parent = os.getpid()
    seen: list[int] = []

    def work(part: Any) -> tuple[int, list[int]]:
        seen.append(len(part))
        return os.getpid(), squares(part)

    (mine, first), (theirs, second) = _halves.in_halves(work, items)
    assert first + second == squares(items)
    assert mine == parent and theirs != parent  # the second half came from the child
    assert seen == [500]  # only the first half was computed here


def test_in_halves_recomputes_what_a_failed_child_owed(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_halves, "MINIMUM", 10)
    monkeypatch.setenv("PINGCE_PROCESSES", "2")  # whatever the load
    if not _halves.two_processes_allowed(100):
        pytest.skip("no fork or a single core here")
    parent = os.getpid()

    def work(part: Any) -> list[int]:
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return squares(part)

    first, second = _halves.in_halves(work, list(range(100)))
    assert first + second == squares(range(100))
    err = capfd.readouterr().err
    assert "RuntimeError: the child fails" in err  # the child's own traceback
    assert "the second process failed (exit status 1)" in err  # and what the parent did


def test_in_halves_stops_the_child_when_this_process_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_halves, "MINIMUM", 10)
    monkeypatch.setenv("PINGCE_PROCESSES", "2")
    if not _halves.two_processes_allowed(100):
        pytest.skip("no fork or a single core here")
    parent = os.getpid()

    def work(part: Any) -> list[int]:
        if os.getpid() == parent:
            raise KeyboardInterrupt  # the user's Ctrl-C while the child still works
        time.sleep(60)
        return squares(part)

    before = _children()  # a Ray cluster of another test may have children of its own here
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        _halves.in_halves(work, list(range(100)))
    assert time.monotonic() - started < 30  # the child was not waited for: it was stopped
    assert _children() <= before  # and reaped: no child of its own is left, not even a zombie


def test_in_halves_stops_the_child_when_this_process_is_stopped_while_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 28: a SIGTERM (here: an alarm raising KeyboardInterrupt) while this process waits
    for the child's half left the child running (writing into a staging folder)."""
    import signal

    monkeypatch.setattr(_halves, "MINIMUM", 10)
    monkeypatch.setenv("PINGCE_PROCESSES", "2")
    if not _halves.two_processes_allowed(100):
        pytest.skip("no fork or a single core here")
    parent = os.getpid()

    def work(part: Any) -> list[int]:
        if os.getpid() != parent:
            time.sleep(60)
        return squares(part)

    def interrupt(*_: Any) -> None:
        raise KeyboardInterrupt

    before = _children()
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            _halves.in_halves(work, list(range(100)))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - started < 30
    assert _children() <= before


CHILD_OUTLIVES = """
import os, sys, time
from pingce import _halves

_halves.MINIMUM = 10
os.environ["PINGCE_PROCESSES"] = "2"
parent = os.getpid()

def work(part):
    if os.getpid() != parent:
        with open(sys.argv[1], "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(60)
    return list(part)

_halves.in_halves(work, list(range(100)))
"""


def test_the_child_dies_with_its_parent(tmp_path: Any) -> None:
    """Issue 28: a run killed with SIGKILL while a forked child wrote the second half of
    records.jsonl left the child writing into the staging folder; it now dies with the parent
    (PR_SET_PDEATHSIG)."""
    import signal
    import subprocess

    if not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("the child process is used on Linux with two cores")
    flag = tmp_path / "child"
    with subprocess.Popen([sys.executable, "-c", CHILD_OUTLIVES, str(flag)]) as proc:
        deadline = time.monotonic() + 60
        while not (flag.exists() and flag.read_text()):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        child = int(flag.read_text())
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for init to reap it does not)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children() -> set[int]:
    """This process's children, zombies included (from /proc)."""
    me, out = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            if parent == me:
                out.add(int(entry))
    return out


def test_processes_setting_outside_its_values_is_an_option_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for value in ("0", "4", "off"):
        monkeypatch.setenv("PINGCE_PROCESSES", value)
        with pytest.raises(OptionError, match=f"PINGCE_PROCESSES .*got '{value}'"):
            _halves.two_processes_allowed(10**6)
        with pytest.raises(OptionError, match="PINGCE_PROCESSES"):  # before any work
            pingce.evaluate("contract-risk", [{"id": "a", "gold_level": "高", "pred_level": "高"}])
    for value in ("", " 1 ", "2"):
        monkeypatch.setenv("PINGCE_PROCESSES", value)
        assert _halves.processes_setting() == value.strip()


def test_no_child_on_a_busy_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_halves, "MINIMUM", 10)
    monkeypatch.delenv("PINGCE_PROCESSES", raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    assert not _halves.two_processes_allowed(10**6)
    if not sys.platform.startswith("linux"):
        assert not _halves.two_processes_allowed(10**6)
        return
    monkeypatch.setattr(os, "getloadavg", lambda: (1.0, 1.0, 1.0))  # this process alone
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert _halves.two_processes_allowed(10**6) is True
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})  # one core: never a child
    assert _halves.two_processes_allowed(10**6) is False
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "getloadavg", lambda: (1.6, 1.0, 1.0))  # 1.4 idle cores < 1.5
    assert _halves.two_processes_allowed(10**6) is False


def test_one_process_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_halves, "MINIMUM", 10)
    monkeypatch.setenv("PINGCE_PROCESSES", "1")
    assert not _halves.two_processes_allowed(10**6)
    monkeypatch.setenv("PINGCE_PROCESSES", "2")
    assert not _halves.two_processes_allowed(9)  # too few records for a child
    parent = os.getpid()
    seen: list[int] = []

    def work(part: Any) -> list[int]:
        seen.append(len(part))
        return [os.getpid()] * len(part)

    [whole] = _halves.in_halves(work, [0] * 9)
    assert whole == [parent] * 9
    assert seen == [9]  # one call over every item: nothing split, nothing done twice
