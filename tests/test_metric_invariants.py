"""One shared tester over every registered metric (in the spirit of scikit-learn's test_common
and torchmetrics' MetricTester).

Every metric in ``metric_registry()`` is picked up automatically, built in a few configurations,
fed random records generated from the fields its statistic declares (labels of its scale,
latencies with some missing, ...) and checked for the properties the design promises:

(a) the corpus value is the finalisation of the summed per-record statistics (non-decomposable
    metrics: ``compute_rows`` equals the direct definition, e.g. ``np.percentile``);
(b) record order does not matter;
(c) the same seed gives the same bootstrap interval, another seed (generally) another one, and
    every interval method equals ``scipy.stats.bootstrap`` recomputing the metric from scratch;
(d) slices' summed statistics add up to the whole, and slice sizes add up to the record count;
(e) empty input is a clear error;
(f) the jackknife (closed forms included) equals brute-force leave-one-out recomputation.

A metric whose parameters, field kinds or statistic layout the generator does not know makes the
tests fail loudly: extend the generator (and, for a non-decomposable metric, ``direct_raw``).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import warnings
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import scipy.stats

import pingce
from pingce.errors import InputError
from pingce.labels import RISK_LEVELS, LabelScale
from pingce.metrics import Context, Metric, StatBlock, Statistic, create_metric, metric_registry
from pingce.metrics import agreement as agreement_module
from pingce.metrics import calls as calls_module
from pingce.metrics import dialogue as dialogue_module
from pingce.metrics import evidence as evidence_module
from pingce.metrics import overlap as overlap_module
from pingce.metrics import registry as base
from pingce.metrics import rules as rules_module
from pingce.metrics import sets as sets_module
from pingce.metrics import tools as tools_module
from pingce.metrics.timing import LatencyPercentile
from pingce.records import FieldSpec, Table, load_records, parse_path
from pingce.similarity.lexical import LexicalBackend
from pingce.stats import CIMethod, Interval, _jackknife, bootstrap_intervals
from pingce.suites.spec import SuiteSpec

TOL = 1e-12

SCALES: dict[int, LabelScale] = {
    2: LabelScale(("通过", "拒绝"), {"pass": "通过", "reject": "拒绝"}),
    3: RISK_LEVELS,
    5: LabelScale.from_spec([1, 2, 3, 4, 5]),
}

METHODS: tuple[CIMethod, ...] = ("bca", "percentile", "basic")
GROUP = "group"  # the slice field added to every generated record
GROUP_VALUES = ("甲", "乙", "丙", None)  # None: missing, the "(missing)" slice

# Parameters the configuration builder knows how to vary. Parameters with defaults that are not
# listed keep their default; a parameter without a default that is not listed fails the tests.
HANDLED_PARAMETERS = {
    "label",  # label_rate: a grade of the fake jury's 1-5 scale, or C of correctness
    "level",
    "gold",
    "pred",
    "scale",
    "zero_division",
    "latency",
    "q",
    "average",
    "positive",
    "weights",
    "labels",
    "sample_weight",
    "beta",
    "field",  # mean_score: the per-record score another tool recorded
}


# --------------------------------------------------------------------------------------------
# configurations and data, derived from the registry
# --------------------------------------------------------------------------------------------


def registered_metric_names() -> list[str]:
    return list(metric_registry())


def configurations(name: str) -> list[tuple[str, dict[str, Any]]]:
    """A few argument sets of metric ``name``, from the parameters the registry lists."""
    info = metric_registry()[name]
    params = info.parameters
    unhandled = [
        p
        for p, default in params.items()
        if default is base.REQUIRED and p not in HANDLED_PARAMETERS
    ]
    if unhandled:
        pytest.fail(
            f"metric {name!r} has required parameter(s) {unhandled} that the invariant tester "
            "cannot fill in: extend configurations() in tests/test_metric_invariants.py"
        )
    configs: list[tuple[str, dict[str, Any]]] = [("defaults", {})]
    if params.get("level") is base.REQUIRED:  # Krippendorff's alpha: its level of measurement
        levels = ("nominal", "ordinal", "interval", "ratio")
        configs = [(f"level={lv}", {"level": lv}) for lv in levels]
        configs.append(("values=[3,1,0,9]", {"level": "ordinal", "values": [3, 1, 0, 9]}))
    if "scale" in params:
        configs.append(("k=2", {"scale": SCALES[2]}))
        configs.append(("k=5", {"scale": SCALES[5]}))
    if "zero_division" in params:
        configs.append(("zero_division=0", {"zero_division": 0.0}))
        extra: dict[str, Any] = {"scale": SCALES[5]} if "scale" in params else {}
        configs.append(("zero_division=1", {"zero_division": 1.0, **extra}))
    if "q" in params:
        configs += [(f"q={q}", {"q": q}) for q in (0.0, 12.5, 50.0, 99.0, 100.0)]
    if "average" in params:
        configs += [(f"average={a}", {"average": a}) for a in ("macro", "micro", "weighted")]
    if "positive" in params:
        default_scale = params.get("scale")
        labels = default_scale.labels if isinstance(default_scale, LabelScale) else ("高", "低")
        first, last = labels[0], labels[-1]
        configs.append((f"positive=[{last}]", {"positive": [last]}))
        configs.append((f"positive=[{first},{last}]", {"positive": [first, last]}))
    if "weights" in params and params["weights"] is None:  # nltk BLEU's weight tuple
        configs += [("weights=[1]", {"weights": [1.0]}), ("weights=[.2,.3,.5]", {"weights": W3})]
    elif "weights" in params:
        configs += [(f"weights={w}", {"weights": w}) for w in ("linear", "quadratic")]
    if "beta" in params:
        configs += [(f"beta={b}", {"beta": b}) for b in (0.5, 3.0)]
    if "labels" in params:
        # a subset of the default scale in another order (averaged metrics only take labels)
        default_scale = params.get("scale")
        assert isinstance(default_scale, LabelScale)
        subset = [default_scale.labels[-1], default_scale.labels[0]]
        extra = {"average": "macro"} if "average" in params else {}
        configs.append((f"labels=[{','.join(subset)}]", {"labels": subset, **extra}))
    if "sample_weight" in params:
        configs.append(("sample_weight=weight", {"sample_weight": "weight"}))
        extra = {"weights": "quadratic"} if "weights" in params else {}
        extra.update({"scale": SCALES[5]} if "scale" in params else {})
        configs.append(("sample_weight=weight k=5", {"sample_weight": "weight", **extra}))
    if params.get("label") is base.REQUIRED:  # label_rate: a point, and C of correctness
        configs = [("label=3", {"label": "3"}), ("C", {"label": "C", "grading": "correctness"})]
    # arguments without a default get one value in every configuration (beta: F-beta)
    filled: dict[str, Any] = {"beta": 2.0} if params.get("beta") is base.REQUIRED else {}
    if params.get("field") is base.REQUIRED:
        filled["field"] = "scores.value"
    return [(label, {**filled, **args}) for label, args in configs]


def build(name: str, args: dict[str, Any]) -> Metric:
    metric = create_metric(name, **args)
    statistic = metric.statistic()
    if not isinstance(statistic, Statistic):
        pytest.fail(f"{name}: statistic() returned {statistic!r}, not a Statistic")
    return metric


def label_spellings(scale: LabelScale, code: int) -> list[Any]:
    label = scale.labels[code]
    spellings: list[Any] = [label]
    if scale.case_insensitive:
        spellings.append(f" {label.upper()}")
    spellings += [alias for alias, target in scale.aliases.items() if target == label]
    if label.isdigit():
        spellings.append(int(label))
    return spellings


def set_path(record: dict[str, Any], path: str, value: Any) -> None:
    """Put ``value`` at a field path such as ``a.b[0].c``, creating dicts and lists."""
    parts = parse_path(path)
    node: Any = record
    for part, following in zip(parts, [*parts[1:], None], strict=True):
        last = following is None
        child: Any = value if last else ([] if isinstance(following, int) else {})
        if isinstance(part, int):
            while len(node) <= part:
                node.append(None)
            if last or node[part] is None:
                node[part] = child
            node = node[part]
        else:
            if last or part not in node:
                node[part] = child
            node = node[part]


def random_calls(rng: np.random.Generator, lenient: bool) -> Any:
    """A random list of function calls; a lenient field (a prediction) sometimes gets prose,
    which calls nothing, or a broken call, which does not parse."""
    if lenient and rng.random() < 0.1:
        return ["抱歉，我无法完成这个操作。", '好的：{"name": "light_control", "arguments": {'][
            int(rng.integers(2))
        ]
    names = ["light_control", "ac_control", "播放音乐"]
    keys = ["room", "action", "level"]
    values: list[Any] = ["客厅", "卧室", "打开", 22, 22.5, "on"]
    calls = []
    for _ in range(int(rng.integers(0, 3))):
        arguments = {
            key: values[int(rng.integers(len(values)))] for key in keys if rng.random() < 0.6
        }
        calls.append({"name": names[int(rng.integers(len(names)))], "arguments": arguments})
    return calls


_TOOL_FUNCTIONS = [
    {
        "name": "light_control",
        "parameters": {
            "type": "dict",
            "properties": {"room": {"type": "string"}, "level": {"type": "float"}},
            "required": ["room"],
        },
    },
    {
        "type": "function",
        "function": {
            "name": "ac_control",
            "parameters": {"type": "object", "properties": {"temp": {"type": "integer"}}},
        },
    },
]


def random_tool_functions(rng: np.random.Generator, lenient: bool) -> Any:
    """The functions of a tool-use record (one fixed pair, so gold always names one of them)."""
    return _TOOL_FUNCTIONS


def random_tool_gold(rng: np.random.Generator, lenient: bool) -> Any:
    """0-2 gold calls of the fixed functions, in BFCL's possible-answer shape."""
    calls: list[Any] = []
    for _ in range(int(rng.integers(0, 3))):
        if rng.random() < 0.5:
            calls.append({"light_control": {"room": ["客厅", "卧室"], "level": [0.5, ""]}})
        else:
            calls.append({"ac_control": {"temp": [22, 23]}})
    return calls


def random_tool_pred(rng: np.random.Generator, lenient: bool) -> Any:
    """0-2 predicted calls of the fixed functions (some wrong), sometimes text."""
    if lenient and rng.random() < 0.1:
        return ["抱歉，我无法完成这个操作。", '{"name": "ac_control", "arguments": {'][
            int(rng.integers(2))
        ]
    calls: list[Any] = []
    for _ in range(int(rng.integers(0, 3))):
        if rng.random() < 0.5:
            args: dict[str, Any] = {"room": ["客厅", "卧室", "厨房"][int(rng.integers(3))]}
            if rng.random() < 0.5:
                args["level"] = [0.5, 1, "high"][int(rng.integers(3))]
            calls.append({"name": "light_control", "arguments": args})
        else:
            calls.append({"name": "ac_control", "arguments": {"temp": int(rng.integers(21, 24))}})
    return calls


def random_yes_no(rng: np.random.Generator, lenient: bool) -> Any:
    """A judge answer: a boolean or Yes/No text (a lenient field sometimes gets nonsense)."""
    if lenient and rng.random() < 0.1:
        return "maybe"
    return [True, False, "Yes", "No", "是", "否"][int(rng.integers(6))]


def random_items(rng: np.random.Generator, lenient: bool) -> Any:
    """A list of items, some shared between records so exact and fuzzy matches occur."""
    pool = ["员工信息", "员工信息表", "部门", "Customer Account", "customer account", "订单"]
    return [pool[int(rng.integers(len(pool)))] for _ in range(int(rng.integers(0, 4)))]


_TURNS = itertools.count(1)


def random_dialogue(rng: np.random.Generator, lenient: bool) -> Any:
    """A dialogue id from a pool of 12 (strings and integers), so dialogues have several turns.
    Not fewer: with few units a resample equal to the data (theta_b = theta_hat up to rounding)
    is likely, and BCa's z0 counts it below or not by the last bit, in scipy as in pingce."""
    pool: list[Any] = [f"d{i}" for i in range(10)] + [10, "对话11"]
    return pool[int(rng.integers(len(pool)))]


def random_turn(rng: np.random.Generator, lenient: bool) -> Any:
    """A turn index never used before in this run, so (dialogue, turn) is always unique."""
    return next(_TURNS) * 2 + int(rng.integers(2))


def random_diagnosis(rng: np.random.Generator, lenient: bool) -> Any:
    return ["风寒表实证", " 风寒表实证 ", "风寒表实证", "风热犯表证", "", None][
        int(rng.integers(6))
    ]


def random_features(rng: np.random.Generator, lenient: bool) -> Any:
    values: dict[str, list[Any]] = {
        "nature": ["寒", "热"],
        "sweat": ["有汗", "无汗"],
        "deficiency": ["虚", "实"],
        "han": [1, 1.0, True, 0],
    }
    return {k: v[int(rng.integers(len(v)))] for k, v in values.items() if rng.random() < 0.5}


def random_terms(rng: np.random.Generator, lenient: bool) -> Any:
    pool = ["发冷", "身痛", "怕风", "口干"]
    return [pool[int(rng.integers(len(pool)))] for _ in range(int(rng.integers(0, 4)))]


def random_bool(rng: np.random.Generator, lenient: bool) -> Any:
    return bool(rng.random() < 0.5)


def random_confidence(rng: np.random.Generator, lenient: bool) -> Any:
    return None if rng.random() < 0.15 else round(float(rng.random()), 2)


def random_evidence(rng: np.random.Generator, lenient: bool) -> Any:
    """Clauses that are or are not in the random contracts (of the words of field_values), and
    laws that exist, do not, or do not parse."""
    clauses = [
        "打开 客厅 的 灯",
        "the light in room",
        "关闭 灯",
        "甲方 应于 五日 内 付款",
        "room",
        "不 打开 客厅 的 灯",  # a quotation with a negation added: altered
        "不 关闭 灯",
    ]
    laws = ["《民法典》第五百八十五条", "民法典第1300条", "《合同管理法》第3条", "相关规定"]
    items = []
    for _ in range(int(rng.integers(0, 4))):
        item = {}
        if rng.random() < 0.7:
            item["clause"] = clauses[int(rng.integers(len(clauses)))]
        if rng.random() < 0.5 or not item:
            item["law"] = laws[int(rng.integers(len(laws)))]
        items.append(item)
    return items


TEXT_WORDS = ["打开", "客厅", "的", "灯", "the", "light", "in", "room", "关闭"]
W3 = [0.2, 0.3, 0.5]


def random_text(rng: np.random.Generator) -> str:
    """Several words, shared between records, so n-gram metrics are defined and vary."""
    size = int(rng.integers(1, 9))
    return " ".join(TEXT_WORDS[int(i)] for i in rng.integers(len(TEXT_WORDS), size=size))


def random_references(rng: np.random.Generator, lenient: bool) -> Any:
    """A reference text, or a list of one to three (several references per record)."""
    if rng.random() < 0.5:
        return random_text(rng)
    return [random_text(rng) for _ in range(int(rng.integers(1, 4)))]


def random_rules(rng: np.random.Generator, lenient: bool) -> Any:
    """Rule id lists of 0, 1, 2 or 4 distinct ids (absent now and then), so that per-record
    recall and precision are dyadic and resampled sums are exact in any order: BCa on 40
    records picks its percentile from ties that summation order would otherwise break."""
    if rng.random() < 0.1:
        return None
    pool = ["R1", "R2", "R3", 4, "R5", "R6"]
    size = [0, 1, 2, 4][int(rng.integers(4))]
    return [pool[int(i)] for i in rng.choice(len(pool), size=size, replace=False)]


def random_ratings(rng: np.random.Generator, lenient: bool) -> Any:
    """Three ratings and a null (a rater who gave none), so that every record has as many
    raters (Fleiss' kappa needs that); values 0, 1 and 3, so that every statistic of alpha
    (ratio distances 1 and 1/4 included) and every resampled sum is exact in any order."""
    ratings: list[Any] = [[0, 1, 3][int(i)] for i in rng.choice(3, size=3, p=[0.5, 0.3, 0.2])]
    ratings.insert(int(rng.integers(4)), None)
    return ratings


JSON_GENERATORS: dict[Any, Any] = {
    agreement_module.parse_ratings: random_ratings,
    evidence_module.parse_evidence: random_evidence,
    rules_module.parse_rule_ids: random_rules,
    dialogue_module._parse_id: random_dialogue,
    dialogue_module._parse_turn: random_turn,
    dialogue_module._parse_diagnosis: random_diagnosis,
    dialogue_module._parse_object: random_features,
    dialogue_module._parse_terms: random_terms,
    dialogue_module._parse_bool: random_bool,
    dialogue_module._parse_confidence: random_confidence,
    calls_module._gold_parser: random_calls,
    calls_module.parse_calls: random_calls,
    sets_module.parse_yes_no: random_yes_no,
    sets_module.parse_items: random_items,
    overlap_module.text_references: random_references,
    tools_module.parse_functions: random_tool_functions,
    tools_module.parse_gold: random_tool_gold,
    tools_module.parse_prediction: random_tool_pred,
}


def field_values(spec: FieldSpec, n: int, rng: np.random.Generator, decimals: int) -> list[Any]:
    """Random raw values of one declared field; ``...`` marks a missing value."""
    if spec.kind == "label":
        assert spec.scale is not None
        k = spec.scale.k
        codes = rng.choice(k, size=n, p=rng.dirichlet(np.full(k, 0.8)))
        out = []
        for code in codes:
            spellings = label_spellings(spec.scale, int(code))
            out.append(spellings[int(rng.integers(len(spellings)))])
        if spec.lenient:  # a prediction: sometimes off the scale, blank or null (scored wrong)
            for i in np.flatnonzero(rng.random(n) < 0.1):
                out[i] = ["medium-high", "", None, 42][int(rng.integers(4))]
        return out
    if spec.kind == "number":
        low = 0.0 if spec.minimum is None else spec.minimum
        values = low + np.round(rng.exponential(1.5, size=n), decimals)
        out = [float(v) for v in values]
        if not spec.required:
            for i in np.flatnonzero(rng.random(n) < 0.25):
                out[i] = ... if i % 2 else None  # absent key, or an explicit null
        return out
    if spec.kind == "string" and spec.choices:
        return [spec.choices[int(rng.integers(len(spec.choices)))] for _ in range(n)]
    if spec.kind == "string":
        return [random_text(rng) for _ in range(n)]
    if spec.kind == "value":
        choices = ["甲", "乙", "abc", "x y"]
        return [choices[int(rng.integers(len(choices)))] for _ in range(n)]
    if spec.kind == "json" and spec.parser in JSON_GENERATORS:
        return [JSON_GENERATORS[spec.parser](rng, spec.lenient) for _ in range(n)]
    if spec.kind == "json" and spec.parser is None:  # any JSON read as text (a judge's input)
        return [random_text(rng) for _ in range(n)]
    pytest.fail(
        f"field {spec.path!r} has kind {spec.kind!r}, which the invariant tester cannot "
        "generate: extend field_values() in tests/test_metric_invariants.py"
    )


def make_records(
    metric: Metric, n: int, rng: np.random.Generator, decimals: int = 2
) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for i in range(n):
        record: dict[str, Any] = {"id": f"r{i}"}
        group = GROUP_VALUES[int(rng.integers(len(GROUP_VALUES)))]
        if group is not None:
            record[GROUP] = group
        records.append(record)
    for spec in metric.statistic().fields():
        for record, value in zip(records, field_values(spec, n, rng, decimals), strict=True):
            if value is not ...:
                set_path(record, spec.path, value)
    return records


def load(metric: Metric, records: list[dict[str, Any]]) -> Table:
    specs = [*metric.statistic().fields(), FieldSpec(GROUP, "value", required=False)]
    return load_records(records, specs)


FAKE_JUDGES = ("openai:fake-a", "openai:fake-b")
"""The fake jury of the judged metrics: two judges, so a jury's agreement is defined."""


def fake_grades(statistic: Statistic, table: Table) -> Any:
    """A judged statistic's grades from a fake jury that reads the prompts' texts
    (deterministic: CRC32 of each text and judge; every prompt graded: a withheld grade and the
    judge-failure policy are tests/test_judged.py's)."""
    import zlib

    from pingce.engine.judgements import Graded
    from pingce.judged import CORRECTNESS_SCALE, PREFERENCE_SCALE, parse_scale

    task = statistic.judge_task
    scale = {"rubric": parse_scale("1-5"), "correctness": CORRECTNESS_SCALE}.get(
        task, PREFERENCE_SCALE
    )
    texts = statistic.judge_texts(table)
    points = scale.points or scale.values
    values = np.full((len(texts), len(FAKE_JUDGES)), np.nan)
    failures = np.full(values.shape, None, dtype=object)
    codes = np.full(values.shape, -1, dtype=np.intp)
    for p, text in enumerate(texts):
        for j, judge in enumerate(FAKE_JUDGES):
            h = zlib.crc32(f"{judge}|{sorted(text.items())}".encode())
            values[p, j] = points[h % len(points)]
            codes[p, j] = h % len(points)  # the points, or the labels in the values' order
    entries: list[list[dict[str, Any]]] = [[] for _ in texts]
    return Graded(values, scale, FAKE_JUDGES, failures, codes, entries)


def fake_judgements(plan: Any, table: Table, progress: Any) -> Any:
    """The engine's judge phase with the fake jury (patched in for every test here)."""
    from pingce.engine.judgements import Judgements

    needing = [s for s in plan.statistics.values() if s.needs_judge]
    if not needing:
        return None
    return Judgements({s.key: fake_grades(s, table) for s in needing}, {}, "fake")


@pytest.fixture(autouse=True)
def _fake_jury(monkeypatch: pytest.MonkeyPatch) -> None:
    import pingce.engine.judgements as judgements

    monkeypatch.setattr(judgements, "grade", fake_judgements)


def compute_block(statistic: Statistic, table: Table) -> StatBlock:
    """A statistic's block; one that needs similarities gets them from the lexical backend,
    one that a judge grades gets the fake jury's grades."""
    if statistic.needs_judge:
        return statistic.compute(
            table, Context(judged={statistic.key: fake_grades(statistic, table)})
        )
    if not statistic.needs_similarity:
        return statistic.compute(table, Context())
    scores, _ = LexicalBackend().score(statistic.pairs(table))
    block: StatBlock = statistic.compute(table, Context(similarity=scores))
    return block


def stat_block(metric: Metric, table: Table) -> StatBlock:
    block = compute_block(metric.statistic(), table)
    if not isinstance(block, StatBlock):
        pytest.fail(f"{metric.describe()}: statistic computed {block!r}, not a StatBlock")
    if (block.codes is None) == (block.rows is None):
        pytest.fail(f"{metric.describe()}: a StatBlock needs exactly one of codes / rows")
    if block.decomposable != metric.decomposable:
        pytest.fail(
            f"{metric.describe()}: metric.decomposable={metric.decomposable} but its statistic "
            f"block has decomposable={block.decomposable}"
        )
    assert block.n == table.n
    return block


def value_of(metric: Metric, block: StatBlock) -> float:
    """The corpus value from a block: finalised total, or the raw rows."""
    if metric.decomposable:
        return float(metric.finalize(block.total()[None, :])[0])
    assert block.rows is not None
    return float(metric.finalize_rows(block.rows))


def value_from_table(metric: Metric, table: Table) -> float:
    """Recompute from scratch: a fresh statistic over the records."""
    return value_of(metric, compute_block(metric.statistic(), table))


def units_of(metric: Metric, table: Table) -> np.ndarray | None:
    """A unit code per record when the metric's statistic reads units (dialogues) together."""
    field = metric.statistic().unit_field
    if field is None:
        return None
    _, codes = np.unique(
        np.asarray(table.column(field), dtype=object).astype(str), return_inverse=True
    )
    return np.asarray(codes, dtype=np.int64)


def take_units(table: Table, field: str, units: np.ndarray, chosen: np.ndarray) -> Table:
    """The records of the units at ``chosen`` (with repeats); a repeated unit becomes a new one
    (its id gets ``#k``), as a resample of dialogues must treat it."""
    index: list[int] = []
    copy: list[int] = []
    for k, u in enumerate(chosen):
        members = np.flatnonzero(units == u)
        index.extend(members.tolist())
        copy.extend([k] * len(members))
    taken = table.take(np.asarray(index, dtype=np.int64))
    ids = taken.columns[field]
    taken.columns[field] = [f"{v}#{c}" for v, c in zip(ids, copy, strict=True)]
    return taken


def same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= TOL * max(1.0, abs(a), abs(b))


def assert_same(a: float, b: float, what: str) -> None:
    assert same(a, b), f"{what}: {a!r} != {b!r}"


def as_nan(value: float | None) -> float:
    return math.nan if value is None else value


def suite_for(name: str, args: dict[str, Any]) -> SuiteSpec:
    """A one-metric suite (result name ``m``) equivalent to ``create_metric(name, **args)``."""
    args = dict(args)
    params = metric_registry()[name].parameters
    labels = None
    if "scale" in params:
        scale = args.pop("scale", params["scale"])
        assert isinstance(scale, LabelScale)
        labels = {
            "values": list(scale.labels),
            "aliases": dict(scale.aliases),
            "case_insensitive": scale.case_insensitive,
        }
    unit = create_metric(name, **args).statistic().unit_field  # resample what it reads together
    return SuiteSpec.model_validate(
        {
            "name": "invariants",
            "labels": labels,
            "unit": unit,
            "metrics": {"m": {"metric": name, **args}},
        }
    )


# Direct definitions. Non-decomposable metrics must have one (there is no sum to check).
def _percentile(metric: Metric, table: Table) -> float:
    assert isinstance(metric, LatencyPercentile)
    values = np.asarray(table.column(metric.field), dtype=float)
    values = values[~np.isnan(values)]
    return float(np.percentile(values, metric.q)) if values.size else math.nan


def direct_raw(metric: Metric) -> Callable[[Metric, Table], float]:
    if isinstance(metric, LatencyPercentile):
        return _percentile
    pytest.fail(
        f"non-decomposable metric {metric.describe()} has no direct definition in the invariant "
        "tester: add one to direct_raw() in tests/test_metric_invariants.py"
    )


def _mean_latency(metric: Metric, table: Table) -> float:
    field: str = metric.field  # type: ignore[attr-defined]
    values = np.asarray(table.column(field), dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size:
        return float(values.mean())
    policy = metric.zero_division  # type: ignore[attr-defined]
    return math.nan if policy is None else float(policy)


def _record_weights(metric: Metric, table: Table) -> np.ndarray:
    """Each record's ``sample_weight`` (1 without one)."""
    field = getattr(metric, "sample_weight", None)
    if field is None:
        return np.ones(table.n)
    return np.asarray(table.column(field), dtype=np.float64)


def _weighted_mean(values: np.ndarray, weights: np.ndarray) -> float:
    total = float(weights.sum())
    return float(values @ weights / total) if total > 0 else math.nan


def _accuracy(metric: Metric, table: Table) -> float:
    gold = table.column(metric.gold)  # type: ignore[attr-defined]
    pred = table.column(metric.pred)  # type: ignore[attr-defined]
    return _weighted_mean((gold == pred).astype(float), _record_weights(metric, table))


def _weighted_accuracy(metric: Metric, table: Table) -> float:
    gold = table.column(metric.gold).astype(float)  # type: ignore[attr-defined]
    pred = table.column(metric.pred).astype(float)  # type: ignore[attr-defined]
    k = metric.k  # type: ignore[attr-defined]
    credit = np.where(pred < k, 1.0 - np.abs(gold - pred) / (k - 1), 0.0)  # 0 off the scale
    return _weighted_mean(credit, _record_weights(metric, table))


# Optional direct definitions of decomposable metrics (the classification ones are checked
# against scikit-learn in test_classification_parity.py).
DIRECT_DECOMPOSABLE: dict[str, Callable[[Metric, Table], float]] = {
    "accuracy": _accuracy,
    "weighted_accuracy": _weighted_accuracy,
    "avg_latency_sec": _mean_latency,
    "mean_score": _mean_latency,  # the same definition: the mean of the values present
    "mean_score_lower": _mean_latency,
}


# Python's str hash is salted per process; derive seeds from a stable hash instead.
def stable_seed(*parts: Any) -> list[int]:
    text = "|".join(map(str, parts))
    return [int(b) for b in text.encode("utf-8")]


@dataclass
class Case:
    label: str
    args: dict[str, Any]
    metric: Metric
    n: int
    rng: np.random.Generator


def seeded_cases(name: str, sizes: tuple[int, ...], seeds: int = 2) -> list[Case]:
    """Every configuration x size x seed, each with its own seeded generator."""
    out = []
    for config, args in configurations(name):
        for n in sizes:
            for seed in range(seeds):
                rng = np.random.default_rng(stable_seed(name, config, n, seed))
                label = f"{name} [{config}] n={n} seed={seed}"
                out.append(Case(label, args, build(name, args), n, rng))
    return out


# --------------------------------------------------------------------------------------------
# the invariants, as plain functions of a registered metric name
# --------------------------------------------------------------------------------------------


def check_corpus_value(name: str) -> None:
    """(a) corpus value == finalisation of the summed per-record statistics."""
    for case in seeded_cases(name, (1, 7, 60)):
        label, args, metric, n, rng = case.label, case.args, case.metric, case.n, case.rng
        records = make_records(metric, n, rng)
        table = load(metric, records)
        block = stat_block(metric, table)
        if metric.decomposable:
            per_record = block.per_record()
            assert per_record.shape == (n, block.width), label
            summed = per_record.sum(axis=0)
            np.testing.assert_allclose(summed, block.total(), rtol=TOL, atol=TOL, err_msg=label)
            ones = np.ones(n)
            np.testing.assert_allclose(
                block.weighted_total(ones), block.total(), rtol=TOL, atol=TOL, err_msg=label
            )
            expected = float(metric.finalize(summed[None, :])[0])
            # the block's own summation, finalised one vector at a time or many at once
            assert_same(value_of(metric, block), expected, label)
            stacked = np.stack([summed, block.total(), summed])
            vector = np.asarray(metric.finalize(stacked), dtype=float)
            assert vector.shape == (3,), label
            for v in vector:
                assert_same(float(v), expected, f"{label} (vectorised)")
            grid = np.asarray(metric.finalize(stacked[None, :, :].repeat(2, axis=0)))
            assert grid.shape == (2, 3), label
            count = np.asarray(metric.count(stacked))
            assert count.shape == (3,), label
            direct = DIRECT_DECOMPOSABLE.get(metric.registry_name)
            if direct is not None:
                assert_same(expected, direct(metric, table), f"{label} (direct definition)")
        else:
            assert block.rows is not None and block.rows.shape[0] == n, label
            expected = direct_raw(metric)(metric, table)
            assert_same(metric.finalize_rows(block.rows), expected, f"{label} (direct)")
            assert_same(metric.finalize_rows(block.rows, np.ones(n)), expected, f"{label} (w=1)")
            doubled = metric.finalize_rows(block.rows, np.full(n, 2.0))
            duplicated = direct_raw(metric)(metric, table.take(np.repeat(np.arange(n), 2)))
            assert_same(doubled, duplicated, f"{label} (w=2)")
        if math.isnan(expected):
            reason = (
                metric.undefined_reason(block.total())
                if metric.decomposable
                else metric.undefined_rows_reason(block.rows)  # type: ignore[arg-type]
            )
            assert isinstance(reason, str) and reason.strip(), label
        if n == 60:
            # the corpus value the pipeline reports (results.json) is the same number
            result = pingce.evaluate(suite_for(name, args), records, bootstrap=0)
            entry = result.metrics["m"]
            assert_same(as_nan(entry.value), expected, f"{label} (evaluate)")
            assert (entry.value is None) == bool(entry.undefined_reason), label
            if metric.decomposable:
                assert entry.n == round(float(metric.count(block.total()[None, :])[0])), label
            else:
                assert entry.n == metric.count_rows(block.rows), label  # type: ignore[arg-type]
            check_record_values(metric, block, result.record_values(), label)


def check_record_values(
    metric: Metric, block: StatBlock, rows: list[dict[str, Any]], label: str
) -> None:
    """records.jsonl: each record's own value, finalised from its own statistic vector, and
    null for a record that adds nothing to the metric's count, whatever the zero-division
    policy (the policy fills corpus and slice values, never a record's)."""
    assert len(rows) == block.n, label
    shown = metric.per_record and metric.decomposable
    if not shown:
        assert all("m" not in row["values"] for row in rows), label
        return
    per_record = block.per_record()
    own = np.asarray(metric.finalize(per_record), dtype=float)
    own[np.asarray(metric.count(per_record)) == 0] = np.nan
    for i, row in enumerate(rows):
        assert_same(as_nan(row["values"]["m"]), float(own[i]), f"{label} record {i}")


def check_order_invariance(name: str) -> None:
    """(b) permuting the records changes nothing."""
    for case in seeded_cases(name, (5, 80)):
        label, metric, n, rng = case.label, case.metric, case.n, case.rng
        records = make_records(metric, n, rng)
        table = load(metric, records)
        block = stat_block(metric, table)
        perm = rng.permutation(n)
        shuffled = load(metric, [records[i] for i in perm])
        shuffled_block = stat_block(metric, shuffled)
        assert_same(value_of(metric, shuffled_block), value_of(metric, block), label)
        if metric.decomposable:
            np.testing.assert_allclose(
                shuffled_block.total(), block.total(), rtol=TOL, atol=TOL, err_msg=label
            )
            mine = np.asarray(metric.finalize(block.per_record()), dtype=float)
            theirs = np.asarray(metric.finalize(shuffled_block.per_record()), dtype=float)
            np.testing.assert_allclose(theirs, mine[perm], rtol=TOL, atol=TOL, err_msg=label)


def _defined_case(
    name: str, n: int
) -> tuple[str, dict[str, Any], Metric, list[dict[str, Any]], Table, StatBlock, float]:
    """A configuration and data on which the metric is defined and varies under resampling."""
    for case in seeded_cases(name, (n,), seeds=5):
        label, args, metric, rng = case.label, case.args, case.metric, case.rng
        records = make_records(metric, n, rng)
        table = load(metric, records)
        block = stat_block(metric, table)
        value = value_of(metric, block)
        units = units_of(metric, table)
        unit_block = block if units is None else block.grouped(units, int(units.max()) + 1)
        if metric.decomposable:
            jack = _jackknife(metric, unit_block)[0]
            varies = np.unique(jack[~np.isnan(jack)]).size > 1
        else:
            varies = True
        if not math.isnan(value) and varies:
            return label, args, metric, records, table, block, value
    pytest.fail(f"{name}: no generated data set gives a defined value")


def check_bootstrap_seeding(name: str) -> None:
    """(c) same seed, same interval; another seed, (generally) another interval."""
    moved = dict.fromkeys(METHODS, 0)
    for config, args in configurations(name):
        metric = build(name, args)
        key: Hashable = metric.statistic().key
        label = f"{name} [{config}]"
        rng = np.random.default_rng(stable_seed(name, config, "bootstrap"))

        def run(
            seed: int,
            method: CIMethod,
            block: StatBlock,
            value: float,
            metric: Metric = metric,
            key: Hashable = key,
        ) -> Interval:
            return bootstrap_intervals(
                {key: block},
                {"m": (metric, key)},
                {"m": value},
                resamples=200,
                seed=seed,
                method=method,
            )["m"]

        # data on which the metric is defined and not constant under resampling
        for _ in range(10):
            records = make_records(metric, 120, rng, decimals=3)
            block = stat_block(metric, load(metric, records))
            value = value_of(metric, block)
            if not math.isnan(value):
                probe = run(5, "percentile", block, value)
                if probe.low is not None and probe.high is not None and probe.low < probe.high:
                    break
        else:
            pytest.fail(f"{label}: no generated data set gives a varying bootstrap")
        moved_here = []
        for method in METHODS:
            first = run(5, method, block, value)
            assert first.low is not None and first.high is not None, (label, method, first)
            assert first.low <= first.high, (label, method, first)
            assert run(5, method, block, value) == first, (label, method)
            others = [run(seed, method, block, value) for seed in range(6, 12)]
            if any((o.low, o.high) != (first.low, first.high) for o in others):
                moved[method] += 1
                moved_here.append(method)
        # "generally": an interval may legitimately sit on the same two sample values for
        # every seed (BCa of a minimum does), but not for every method at once
        assert moved_here, f"{label}: seeds 5..11 give the same interval with every method"
    for method, count in moved.items():
        assert count, f"{name} {method}: no configuration's interval depends on the seed"


def check_bootstrap_matches_scipy(name: str) -> None:
    """(c) every interval method equals ``scipy.stats.bootstrap`` run on the record indices,
    with the record-index stream (``--bootstrap-stream indices``; the default per-block
    multinomial draws are checked against it in law by tests/test_bootstrap_streams.py).

    pingce's index rows are ``default_rng(seed).integers(0, n, size=n)`` drawn row by row, the
    same stream scipy draws as one ``(resamples, n)`` matrix; scipy's statistic recomputes the
    metric from scratch on the resampled (and, for BCa, leave-one-out) records.
    """
    label, _, metric, _, table, block, value = _defined_case(name, 40)
    key: Hashable = metric.statistic().key
    resamples, seed, level = 80, 17, 0.9
    units = units_of(metric, table)
    population = table.n

    def statistic(index: np.ndarray) -> float:
        return value_from_table(metric, table.take(np.asarray(index, dtype=np.int64)))

    if units is not None:  # resample whole units, as a suite with `unit:` does
        field = metric.statistic().unit_field
        assert field is not None
        population = int(units.max()) + 1
        block = block.grouped(units, population)

        def statistic(index: np.ndarray) -> float:
            chosen = np.asarray(index, dtype=np.int64)
            return value_from_table(metric, take_units(table, field, units, chosen))

    for method in METHODS:
        got = bootstrap_intervals(
            {key: block},
            {"m": (metric, key)},
            {"m": value},
            resamples=resamples,
            seed=seed,
            method=method,
            level=level,
            stream="indices",  # scipy's stream; the default per-block draws agree in law
        )["m"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = scipy.stats.bootstrap(
                (np.arange(population),),
                statistic,
                vectorized=False,
                n_resamples=resamples,
                rng=np.random.default_rng(seed),
                method=method,
                confidence_level=level,
            ).confidence_interval
        assert np.isfinite([expected.low, expected.high]).all(), (label, method, expected)
        assert got.low is not None and got.high is not None, (label, method, got)
        assert_same(got.low, float(expected.low), f"{label} {method} (low)")
        assert_same(got.high, float(expected.high), f"{label} {method} (high)")


def check_evaluate_seeding(name: str) -> None:
    """(c) through pingce.evaluate: the seed fixes every interval, another seed moves it."""
    _, args, _, records, _, _, _ = _defined_case(name, 90)
    suite = suite_for(name, args)

    def ci(seed: int) -> tuple[float | None, float | None]:
        entry = pingce.evaluate(suite, records, bootstrap=100, seed=seed).metrics["m"]
        return entry.ci_low, entry.ci_high

    first = ci(3)
    assert first[0] is not None and first[1] is not None, (name, first)
    assert ci(3) == first
    assert any(ci(seed) != first for seed in (4, 5, 6)), f"{name}: seeds 3..6 give {first}"


def check_slices(name: str) -> None:
    """(d) slices add up to the whole; slice values are the metric on the slice's records."""
    for case in seeded_cases(name, (50,), seeds=1):
        label, args, metric, rng = case.label, case.args, case.metric, case.rng
        records = make_records(metric, 50, rng)
        unit = metric.statistic().unit_field
        if unit is not None:  # slice by a field that is constant within a unit (a dialogue)
            group_of: dict[str, Any] = {}
            for record in records:
                group = group_of.setdefault(
                    str(record[unit]), GROUP_VALUES[len(group_of) % len(GROUP_VALUES)]
                )
                record.pop(GROUP, None)
                if group is not None:
                    record[GROUP] = group
        table = load(metric, records)
        block = stat_block(metric, table)
        groups = np.asarray(
            ["(missing)" if g is None else g for g in table.column(GROUP)], dtype=object
        )
        keys = sorted(set(groups.tolist()))
        assert len(keys) > 1, label
        parts = {g: np.flatnonzero(groups == g) for g in keys}
        if metric.decomposable:
            summed = sum((block.take(idx).total() for idx in parts.values()), np.zeros(block.width))
            np.testing.assert_allclose(summed, block.total(), rtol=TOL, atol=TOL, err_msg=label)
        result = pingce.evaluate(suite_for(name, args), records, bootstrap=0, slices=(GROUP,))
        assert result.n_records == 50
        assert sum(s.n_records for s in result.slices.values()) == result.n_records, label
        assert set(result.slices) == {f"{GROUP}={g}" for g in keys}, label
        for g, idx in parts.items():
            piece = result.slices[f"{GROUP}={g}"]
            assert piece.n_records == idx.size, (label, g)
            expected = value_from_table(metric, table.take(idx))
            assert_same(value_of(metric, block.take(idx)), expected, f"{label} slice {g}")
            assert_same(as_nan(piece.metrics["m"].value), expected, f"{label} slice {g} (eval)")


def check_empty_input(name: str, tmp_path: Any) -> None:
    """(e) no records is an InputError saying so, not a NaN or a crash."""
    args = configurations(name)[0][1]  # the defaults (and a value for a required argument)
    metric = build(name, args)
    with pytest.raises(InputError, match="no records"):
        load_records([], metric.statistic().fields())
    with pytest.raises(InputError, match="no records"):
        pingce.evaluate(suite_for(name, args), [], bootstrap=0)
    empty = tmp_path / f"{name}-empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="no records"):
        pingce.evaluate(suite_for(name, args), empty, bootstrap=0)


def expand(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    counts = np.asarray(counts, dtype=float)
    assert np.all(counts >= 0) and np.all(counts == np.round(counts)), counts
    out = np.repeat(np.asarray(values, dtype=float), counts.astype(np.int64))
    return np.sort(out)  # NaN sorts last


def check_jackknife(name: str) -> None:
    """(f) _jackknife == leave-one-out recomputation from scratch, as multisets."""
    for case in seeded_cases(name, (1, 2, 3, 6, 13), seeds=3):
        label, metric, n, rng = case.label, case.metric, case.n, case.rng
        decimals = int(rng.integers(0, 3))  # decimals 0 makes tied latencies likely
        table = load(metric, make_records(metric, n, rng, decimals=decimals))
        block = stat_block(metric, table)
        units = units_of(metric, table)
        field = metric.statistic().unit_field
        if units is not None:  # leave one unit (dialogue) out, as a suite with `unit:` does
            n = int(units.max()) + 1
            block = block.grouped(units, n)
        values, counts = _jackknife(metric, block)
        assert np.asarray(values).shape == np.asarray(counts).shape, label
        assert float(np.sum(counts)) == n, f"{label}: multiplicities sum to {np.sum(counts)}"
        got = expand(values, counts)
        brute = []
        for i in range(n):
            if units is not None and field is not None:
                rest = table.take(np.flatnonzero(units != i))
                brute.append(value_from_table(metric, rest))
                continue
            rest = table.take(np.delete(np.arange(n), i))
            brute.append(value_from_table(metric, rest))
            if not metric.decomposable:
                direct = direct_raw(metric)(metric, rest)
                assert_same(brute[-1], direct, f"{label} leave out {i} (direct)")
        expected = np.sort(np.asarray(brute, dtype=float))
        np.testing.assert_allclose(got, expected, rtol=TOL, atol=TOL, err_msg=label)


# --------------------------------------------------------------------------------------------
# the tests: every registered metric, picked up from the registry at collection time
# --------------------------------------------------------------------------------------------

REGISTERED = registered_metric_names()
every_metric = pytest.mark.parametrize("name", REGISTERED)


@every_metric
def test_corpus_value_is_finalised_sum(name: str) -> None:
    check_corpus_value(name)


@every_metric
def test_record_order_does_not_matter(name: str) -> None:
    check_order_invariance(name)


@every_metric
def test_bootstrap_interval_is_seeded(name: str) -> None:
    check_bootstrap_seeding(name)


@every_metric
def test_bootstrap_intervals_match_scipy(name: str) -> None:
    check_bootstrap_matches_scipy(name)


@every_metric
def test_evaluate_intervals_are_seeded(name: str) -> None:
    check_evaluate_seeding(name)


@every_metric
def test_slices_add_up(name: str) -> None:
    check_slices(name)


@every_metric
def test_empty_input_is_an_error(name: str, tmp_path: Any) -> None:
    check_empty_input(name, tmp_path)


@every_metric
def test_jackknife_matches_leave_one_out(name: str) -> None:
    check_jackknife(name)


def test_every_registered_metric_is_tested() -> None:
    assert set(REGISTERED) == set(metric_registry())
    # the families the design names are all there (so a broken registration is noticed)
    for name in ("accuracy", "macro_f1", "qwk", "avg_latency_sec", "p95_latency_sec"):
        assert name in REGISTERED


@pytest.mark.parametrize("q", [0.0, 1.0, 33.3, 50.0, 95.0, 99.0, 100.0])
def test_percentile_jackknife_closed_form_with_ties(q: float) -> None:
    """LatencyPercentile.jackknife_rows (closed form) on tie-heavy data with missing values."""
    metric = create_metric("latency_percentile", q=q)
    rng = np.random.default_rng(int(q * 10))
    for n in (1, 2, 3, 4, 5, 8, 21, 40):
        for _ in range(4):
            values = rng.integers(0, 4, size=n).astype(float)
            values[rng.random(n) < 0.3] = np.nan
            rows = values[:, None]
            jack_values, jack_counts = metric.jackknife_rows(rows)
            brute = []
            for i in range(n):
                rest = np.delete(values, i)
                rest = rest[~np.isnan(rest)]
                brute.append(float(np.percentile(rest, q)) if rest.size else math.nan)
            np.testing.assert_allclose(
                expand(jack_values, jack_counts),
                np.sort(brute),
                rtol=TOL,
                atol=TOL,
                err_msg=f"q={q} values={values.tolist()}",
            )


@pytest.mark.parametrize("seed", range(4))
def test_percentile_weighted_rows_match_numpy_on_repeated_values(seed: int) -> None:
    """compute_rows with integer weights (a resample's counts) == np.percentile of the
    expanded sample: ties, zero weights, missing latencies, random q."""
    rng = np.random.default_rng([99, seed])
    for _ in range(150):
        n = int(rng.integers(1, 60))
        q = float(rng.choice([0.0, 100.0, rng.uniform(0, 100), round(rng.uniform(0, 100))]))
        metric = create_metric("latency_percentile", q=q)
        values = np.round(rng.exponential(2.0, size=n), int(rng.integers(0, 3)))
        values[rng.random(n) < 0.2] = np.nan
        weights = rng.integers(0, 4, size=n).astype(float)
        expanded = np.repeat(values, weights.astype(int))
        expanded = expanded[~np.isnan(expanded)]
        expected = float(np.percentile(expanded, q)) if expanded.size else math.nan
        got = metric.finalize_rows(values[:, None], weights)
        assert_same(got, expected, f"q={q} values={values.tolist()} weights={weights.tolist()}")


# --------------------------------------------------------------------------------------------
# the tester itself: new metrics are picked up; unknown kinds fail loudly
# --------------------------------------------------------------------------------------------


class _ExactMatchStatistic(Statistic):
    def __init__(self, gold: str, pred: str, scale: LabelScale):
        self.gold, self.pred, self.scale = gold, pred, scale

    @property
    def key(self) -> Hashable:
        return ("test-exact-match", self.gold, self.pred, self.scale.labels)

    def fields(self) -> list[FieldSpec]:
        return [
            FieldSpec(self.gold, "label", scale=self.scale),
            FieldSpec(self.pred, "label", scale=self.scale),
        ]

    def compute(self, table: Table, context: Context) -> StatBlock:
        hit = table.column(self.gold) == table.column(self.pred)
        return StatBlock(width=2, rows=np.stack([hit, np.ones_like(hit)], axis=1).astype(float))


@dataclass(eq=False)
class _ExactMatch(Metric):
    """A metric registered by a test: share of exact matches (dense rows)."""

    gold: str = "out.gold"
    pred: str = "out.pred[0]"
    scale: LabelScale = RISK_LEVELS

    def statistic(self) -> Statistic:
        return _ExactMatchStatistic(self.gold, self.pred, self.scale)

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(summed[..., 0] / summed[..., 1])

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=float)[..., 1]


class _ImageStatistic(Statistic):
    key = ("test-image",)

    def fields(self) -> list[FieldSpec]:
        return [FieldSpec("image", "image")]  # type: ignore[arg-type]

    def compute(self, table: Table, context: Context) -> StatBlock:
        raise AssertionError("never reached")


class _ImageMetric(_ExactMatch):
    def statistic(self) -> Statistic:
        return _ImageStatistic()


@pytest.fixture
def private_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of the metric registry, restored after the test."""
    metric_registry()  # load the built-ins first
    monkeypatch.setattr(base, "_METRICS", dict(base._METRICS))


@pytest.mark.usefixtures("private_registry")
def test_new_metric_is_picked_up_and_tested(tmp_path: Any) -> None:
    base.register_metric("test_exact_match")(_ExactMatch)
    assert "test_exact_match" in registered_metric_names()
    assert [c for c, _ in configurations("test_exact_match")] == ["defaults", "k=2", "k=5"]
    check_corpus_value("test_exact_match")
    check_order_invariance("test_exact_match")
    check_slices("test_exact_match")
    check_empty_input("test_exact_match", tmp_path)
    check_jackknife("test_exact_match")


@pytest.mark.usefixtures("private_registry")
def test_unknown_field_kind_fails_loudly() -> None:
    base.register_metric("test_image_metric")(_ImageMetric)
    metric = build("test_image_metric", {})
    with pytest.raises(pytest.fail.Exception, match="kind 'image'"):
        make_records(metric, 3, np.random.default_rng(0))


@pytest.mark.usefixtures("private_registry")
def test_unknown_required_parameter_fails_loudly() -> None:
    @dataclass(eq=False)
    class _Thresholded(_ExactMatch):
        threshold: float = dataclasses.field(kw_only=True)

    base.register_metric("test_threshold_metric")(_Thresholded)
    with pytest.raises(pytest.fail.Exception, match="threshold"):
        configurations("test_threshold_metric")


@pytest.mark.usefixtures("private_registry")
def test_non_decomposable_metric_without_direct_definition_fails_loudly() -> None:
    @dataclass(eq=False)
    class _Median(Metric):
        decomposable = False

        def statistic(self) -> Statistic:
            return create_metric("p50_latency_sec").statistic()

        def finalize_rows(self, rows: np.ndarray, weights: np.ndarray | None = None) -> float:
            return float(np.nanmedian(rows))

    base.register_metric("test_median")(_Median)
    metric = build("test_median", {})
    with pytest.raises(pytest.fail.Exception, match="no direct definition"):
        check_corpus_value("test_median")
    assert not metric.decomposable


WITH_POLICY = [n for n in REGISTERED if "zero_division" in metric_registry()[n].parameters]


def test_ratio_metrics_take_the_zero_division_policy() -> None:
    assert len(WITH_POLICY) >= 20 and {"precision", "recall", "sem_f1"} <= set(WITH_POLICY)


@pytest.mark.parametrize("name", WITH_POLICY)
def test_zero_division_policy_decides_a_metric_with_nothing_to_count(name: str) -> None:
    """Every metric that takes ``zero_division`` gives the policy's value (null as NaN) when its
    summed statistics are all zero: one policy, honoured by every ratio metric."""
    for policy in (None, 0.0, 1.0):
        metric = build(name, {**configurations(name)[0][1], "zero_division": policy})
        if not metric.decomposable:
            continue
        rng = np.random.default_rng(0)
        block = stat_block(metric, load(metric, make_records(metric, 5, rng)))
        value = float(metric.finalize(np.zeros(block.width)[None, :])[0])
        if policy is None:
            assert math.isnan(value), (name, value)
            assert metric.undefined_reason(np.zeros(block.width)), name
        else:  # the policy's 0 or 1, on the metric's own scale (sacrebleu's 0-100)
            assert value == policy * metric.maximum, (name, policy, value)
