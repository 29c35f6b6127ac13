"""Function-call records for the tests and the benchmark: the reference's demo, seeded random ones.

* :data:`SEED_DEMO_RECORDS`: the 11 ``mock_data`` records of the reference's ``fc_score_demo.py``,
  verbatim (the function-call protocol's reference implementation).
* :func:`random_records`: realistic and adversarial records: Chinese, English and mixed names
  and values; 0-3 calls, parallel calls of one name with different arguments; strings, ints,
  floats (with decimal points, which the ``rouge`` package takes for sentence ends), booleans,
  null, nested objects and lists; predictions with wrong names or values, swapped order,
  missing or extra arguments or calls, values equal under Python's ``==`` but serialised
  differently (``1``, ``1.0``, ``true``), empty lists, tiny and repetitive serialisations.
* :func:`realistic_records`: what a benchmark of a deployed assistant looks like: 1-3 calls,
  2-6 arguments, mostly Chinese values, a plausible mix of right and wrong predictions.
* :func:`as_json_arguments`, :func:`as_tool_calls`, :func:`as_model_text`: the other input
  forms of a prediction (arguments as JSON text, OpenAI ``tool_calls``, raw model text).

Everything is deterministic for a given seed (``random.Random``); values are JSON-safe (no NaN,
no integer beyond 64 bits) unless a function says otherwise.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

__all__ = [
    "REALISTIC_ERRORS",
    "SEED_DEMO_RECORDS",
    "as_json_arguments",
    "as_model_text",
    "as_tool_calls",
    "long_record",
    "random_records",
    "realistic_records",
    "special_records",
]

Call = dict[str, Any]
Record = dict[str, Any]

# fc_score_demo.py: mock_data, verbatim (comments kept as they are in the reference).
SEED_DEMO_RECORDS: list[Record] = [
    {
        "query": "打开客厅灯",
        "gold_fn": [{"name": "light_control", "arguments": {"room": "客厅", "action": "打开"}}],
        "pred_fn": [{"name": "light_control", "arguments": {"room": "客厅", "action": "打开"}}],
    },
    {
        "query": "关闭卧室空调",
        "gold_fn": [{"name": "ac_control", "arguments": {"room": "卧室", "action": "关闭"}}],
        "pred_fn": [{"name": "ac_control", "arguments": {"room": "卧室", "action": "关闭"}}],
    },
    {
        "query": "调节厨房温度到22度",
        "gold_fn": [
            {"name": "temperature_set", "arguments": {"room": "厨房", "temperature": "22"}}
        ],
        "pred_fn": [
            {"name": "temperature_set", "arguments": {"room": "厨房", "temperature": "23"}}
        ],  # 温度错了
    },
    {
        "query": "客厅窗帘拉上",
        "gold_fn": [{"name": "curtain_control", "arguments": {"room": "客厅", "action": "关闭"}}],
        "pred_fn": [{"name": "curtain_control", "arguments": {"room": "客厅", "action": "关闭"}}],
    },
    {
        "query": "开启卧室加湿器",
        "gold_fn": [
            {"name": "humidifier_control", "arguments": {"room": "卧室", "action": "打开"}}
        ],
        "pred_fn": [
            {"name": "humidifier_control", "arguments": {"room": "卧室", "action": "开启"}}
        ],  # 词汇不一致
    },
    {
        "query": "把客厅灯调暗一些",
        "gold_fn": [{"name": "light_control", "arguments": {"room": "客厅", "brightness": "降低"}}],
        "pred_fn": [{"name": "light_control", "arguments": {"room": "客厅", "brightness": "降低"}}],
    },
    {
        "query": "关闭厨房排风扇",
        "gold_fn": [{"name": "fan_control", "arguments": {"room": "厨房", "action": "关闭"}}],
        "pred_fn": [{"name": "fan_control", "arguments": {"room": "厨房", "action": "关闭"}}],
    },
    {
        "query": "卧室空调调到25度",
        "gold_fn": [
            {"name": "temperature_set", "arguments": {"room": "卧室", "temperature": "25"}}
        ],
        "pred_fn": [
            {"name": "temperature_set", "arguments": {"room": "卧室", "temperature": "25"}}
        ],
    },
    {
        "query": "打开客厅音响",
        "gold_fn": [{"name": "audio_control", "arguments": {"room": "客厅", "action": "打开"}}],
        "pred_fn": [{"name": "audio_control", "arguments": {"room": "客厅", "action": "打开"}}],
    },
    {
        "query": "关闭卧室灯",
        "gold_fn": [{"name": "light_control", "arguments": {"room": "卧室", "action": "关闭"}}],
        "pred_fn": [{"name": "light_control", "arguments": {"room": "卧室", "action": "关闭"}}],
    },
    {
        "query": "打开书房灯",
        "gold_fn": [{"name": "light_control", "arguments": {"room": "书房", "action": "打开"}}],
        "pred_fn": [
            {"name": "light_control", "arguments": {"room": "书房", "action": "关闭"}}
        ],  # 故意动作错误
    },
]

# --- vocabularies -----------------------------------------------------------------------------

NAMES_EN = [
    "light_control",
    "ac_control",
    "temperature_set",
    "get_weather",
    "send_email",
    "search.v2",
    "calendar.create_event",
    "playMusic",
    "set-alarm",
    "book_flight",
    "translate",
    "a",
    "x",
    "API_v1.2",
]
NAMES_ZH = [
    "打开应用",
    "查询天气",
    "播放音乐",
    "订机票",
    "导航",
    "设置闹钟",
    "发送短信",
    "调节音量",
]
NAMES_MIXED = [
    "get_weather天气",
    "导航_navigate",
    "C++编译",
    "音量+",
    "100%充电",
    "app切换",
    "search搜索.v3",
    "ＡＰＰ全角",
    "emoji😀call",
    "get weather",
    "名 字",
    "x;y",
    "a\r\nb",
    "v1.0.api",
    "...",
]

ARG_KEYS = [
    "room",
    "action",
    "temperature",
    "city",
    "date",
    "time",
    "query",
    "count",
    "enabled",
    "options",
    "location",
    "tags",
    "房间",
    "动作",
    "城市",
    "日期",
    "数量",
    "key.with.dots",
    "key with spaces",
    "Ｋｅｙ",
    "😀",
    "",
]

ZH_WORDS = [
    "客厅",
    "卧室",
    "厨房",
    "书房",
    "打开",
    "关闭",
    "开启",
    "降低",
    "北京",
    "上海",
    "南京市长江大桥",
    "明天下午三点",
    "周杰伦的稻香",
    "张三",
    "中华人民共和国",
    "二十二度",
    "空调",
    "加湿器",
    "窗帘",
    "后天早上八点半",
    "请帮我订一张去广州的机票",
    "的",
    "了",
]
EN_WORDS = [
    "on",
    "off",
    "living room",
    "New York",
    "Hello, world!",
    "v1.2.3",
    "e.g. this one",
    "Mr. Smith",
    "3.14",
    "50%",
    "C++",
    "C#",
    "a&b",
    "x_y-z",
    "...",
    "AM",
    "the the the the",
    "https://example.com/a.b?c=d",
]
MIXED_WORDS = [
    "iPhone 15 Pro 手机",
    "明天 9:30 AM",
    "温度22.5度",
    "路由器WiFi密码",
    "Python编程",
    "打开 打开 打开 打开",
    "的的的的的的",
    "中文。句号。",
    "第1.5版",
    "APP应用",
]
ODD_STRINGS = [
    "",
    " ",
    "  two  spaces ",
    "tab\there",
    "new\nline",
    "cr\r\nlf",
    'quote"d',
    "back\\slash",
    "slash/ed",
    "emoji😀",
    "𠀀扩展B",
    "㐀扩展A",
    "鿕鿖鿿",
    "全角ＡＢＣ１２３",
    "nbsp\u00a0x",
    "ideo\u3000space",
    "zw\u200bsp",
    "line\u2028sep",
    "nel\x85x",
    "control\x01\x1f",
    "del\x7f",
    ". . .",
    "a. .b",
    ".",
    "..",
    "a .  . b",
    "ｶﾀｶﾅ",
    "한국어",
    "ﬁ ligature",
    "İstanbul",
]
INTS = [0, 1, 2, 22, 25, -5, 100, 2**31, 10**15, -(2**63), 2**64 - 1]
FLOATS = [22.5, 0.5, 3.0, -0.0, 1e-05, 1e16, 1.5e300, 3.14159, 100.0, 0.1 + 0.2, 2.5e-7, -273.15]
EQUIVALENT = [(1, 1.0, True), (0, 0.0, False), (22, 22.0)]  # equal under Python's ==


def _text(rng: random.Random, chinese: float = 0.4) -> str:
    u = rng.random()
    if u < chinese:
        words = rng.sample(ZH_WORDS, rng.randint(1, 2))
        return "".join(words)
    if u < chinese + 0.2:
        return rng.choice(EN_WORDS)
    if u < chinese + 0.35:
        return rng.choice(MIXED_WORDS)
    return rng.choice(ODD_STRINGS)


def _value(rng: random.Random, depth: int = 0) -> Any:
    u = rng.random()
    if u < 0.45:
        return _text(rng)
    if u < 0.58:
        return rng.choice(INTS)
    if u < 0.72:
        return rng.choice(FLOATS) if rng.random() < 0.6 else round(rng.uniform(-100, 100), 2)
    if u < 0.78:
        return rng.choice([True, False])
    if u < 0.8:
        return None
    if u < 0.84:
        return rng.choice(rng.choice(EQUIVALENT))
    if depth >= 2 or u < 0.9:
        return [_text(rng) for _ in range(rng.randint(0, 3))]
    if u < 0.95:
        return {rng.choice(ARG_KEYS): _value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return [_value(rng, depth + 1) for _ in range(rng.randint(1, 3))]


def _name(rng: random.Random) -> str:
    u = rng.random()
    if u < 0.5:
        return rng.choice(NAMES_EN)
    if u < 0.8:
        return rng.choice(NAMES_ZH)
    return rng.choice(NAMES_MIXED)


def _arguments(rng: random.Random, low: int = 0, high: int = 4) -> dict[str, Any]:
    keys = rng.sample(ARG_KEYS, rng.randint(low, high))
    return {k: _value(rng) for k in keys}


def _gold_calls(rng: random.Random) -> list[Call]:
    n = rng.choices([0, 1, 2, 3], weights=[1, 5, 3, 2])[0]
    calls: list[Call] = []
    for _ in range(n):
        if calls and rng.random() < 0.35:
            # a parallel call: same name, other arguments (same keys, some values changed)
            base = copy.deepcopy(rng.choice(calls))
            args = base.get("arguments", {})
            for key in list(args):
                if rng.random() < 0.6:
                    args[key] = _value(rng)
            if not args or rng.random() < 0.3:
                args[rng.choice(ARG_KEYS)] = _value(rng)
            calls.append(base)
            continue
        call: Call = {"name": _name(rng), "arguments": _arguments(rng)}
        if not call["arguments"] and rng.random() < 0.5:
            del call["arguments"]  # the reference reads a missing "arguments" as {}
        calls.append(call)
    return calls


def _equivalent(value: Any, rng: random.Random) -> Any:
    """Another value equal under Python's ``==`` (1 / 1.0 / True) when there is one."""
    for group in EQUIVALENT:
        if any(value == v and type(value) is type(v) for v in group):
            others = [v for v in group if type(v) is not type(value)]
            return rng.choice(others)
    return value


def _perturb(gold: list[Call], rng: random.Random) -> list[Call]:
    pred = copy.deepcopy(gold)
    kinds = [
        "same",
        "same",
        "wrong_name",
        "wrong_value",
        "equivalent_value",
        "swap_order",
        "missing_arg",
        "extra_arg",
        "drop_call",
        "extra_call",
        "empty",
        "shuffle_keys",
        "string_for_number",
        "name_case",
    ]
    for kind in rng.sample(kinds, rng.choice([1, 1, 1, 2])):
        if kind == "swap_order" or (kind == "same" and len(pred) > 1):
            rng.shuffle(pred)
        elif kind == "wrong_name" and pred:
            rng.choice(pred)["name"] = _name(rng)
        elif kind == "name_case" and pred:
            call = rng.choice(pred)
            call["name"] = call["name"].upper()
        elif kind in ("wrong_value", "equivalent_value", "string_for_number") and pred:
            call = rng.choice(pred)
            args = call.setdefault("arguments", {})
            if not args:
                args[rng.choice(ARG_KEYS)] = _value(rng)
                continue
            key = rng.choice(list(args))
            if kind == "wrong_value":
                args[key] = _value(rng)
            elif kind == "equivalent_value":
                args[key] = _equivalent(args[key], rng)
            else:
                args[key] = str(args[key])
        elif kind == "missing_arg" and pred:
            args = rng.choice(pred).get("arguments", {})
            if args:
                del args[rng.choice(list(args))]
        elif kind == "extra_arg" and pred:
            rng.choice(pred).setdefault("arguments", {})[rng.choice(ARG_KEYS)] = _value(rng)
        elif kind == "drop_call" and pred:
            pred.pop(rng.randrange(len(pred)))
        elif kind == "extra_call":
            pred.insert(
                rng.randint(0, len(pred)), {"name": _name(rng), "arguments": _arguments(rng)}
            )
        elif kind == "empty":
            pred = []
        elif kind == "shuffle_keys":
            for call in pred:
                items = list(call.get("arguments", {}).items())
                rng.shuffle(items)
                if "arguments" in call:
                    call["arguments"] = dict(items)
    return pred


def special_records() -> list[Record]:
    """Hand-picked corner cases (each one a record; ids ``s0``, ``s1``, ...)."""
    lc = {"name": "light_control", "arguments": {"room": "客厅", "action": "打开"}}
    cases: list[tuple[list[Call], list[Call]]] = [
        ([], []),  # empty / empty: acc 1, the rouge package raises on empty text
        ([lc], []),  # empty prediction
        ([], [lc]),  # empty gold
        ([{"name": "a"}], [{"name": "b"}]),
        ([{"name": "a"}], [{"name": "a", "arguments": {}}]),
        ([{"name": "开"}], [{"name": "开"}]),
        ([{"name": "x", "arguments": {"k": 1}}], [{"name": "x", "arguments": {"k": True}}]),
        ([{"name": "x", "arguments": {"k": 1}}], [{"name": "x", "arguments": {"k": 1.0}}]),
        ([{"name": "x", "arguments": {"k": 1}}], [{"name": "x", "arguments": {"k": "1"}}]),
        ([{"name": "x", "arguments": {"k": [1, 2]}}], [{"name": "x", "arguments": {"k": [2, 1]}}]),
        (
            [{"name": "x", "arguments": {"k": {"a": 1, "b": 2}}}],
            [{"name": "x", "arguments": {"k": {"b": 2, "a": 1}}}],
        ),
        # parallel calls, same name, pairing by the sorted serialisation
        (
            [
                {"name": "light_control", "arguments": {"room": "客厅", "action": "打开"}},
                {"name": "light_control", "arguments": {"room": "卧室", "action": "打开"}},
            ],
            [
                {"name": "light_control", "arguments": {"room": "卧室", "action": "打开"}},
                {"name": "light_control", "arguments": {"room": "客厅", "action": "关闭"}},
            ],
        ),
        # a name that is a prefix of another: "{" sorts after letters
        (
            [{"name": "a", "arguments": {"k": 1}}, {"name": "ab", "arguments": {"k": 1}}],
            [{"name": "ab", "arguments": {"k": 1}}, {"name": "a", "arguments": {"k": 2}}],
        ),
        # floats with decimal points: sentence ends for the rouge package
        (
            [{"name": "temperature_set", "arguments": {"temperature": 22.5, "delta": 0.5}}],
            [{"name": "temperature_set", "arguments": {"temperature": 22.0, "delta": 0.5}}],
        ),
        (
            [{"name": "f", "arguments": {"v": 1e-05, "w": 1e16, "z": -0.0}}],
            [{"name": "f", "arguments": {"v": 1e-05, "w": 1e16, "z": 0.0}}],
        ),
        # texts that are only dots and spaces around the dots
        ([{"name": ".", "arguments": {}}], [{"name": "..", "arguments": {}}]),
        ([{"name": "f", "arguments": {"s": "a. .b"}}], [{"name": "f", "arguments": {"s": ". ."}}]),
        # repeated n-grams
        (
            [{"name": "f", "arguments": {"s": "打开 打开 打开 打开 打开"}}],
            [{"name": "f", "arguments": {"s": "打开 打开"}}],
        ),
        (
            [{"name": "f", "arguments": {"s": "的的的的的的的的"}}],
            [{"name": "f", "arguments": {"s": "的的的的的的的的的的的"}}],
        ),
        # JSON escapes and unusual whitespace
        (
            [{"name": "f", "arguments": {"s": 'a"b\\c\nd\te\x01'}}],
            [{"name": "f", "arguments": {"s": 'a"b\\c\nd\te\x02'}}],
        ),
        (
            [{"name": "f", "arguments": {"s": "x\u00a0y\u3000z\u2028w\u200bv\x85u"}}],
            [{"name": "f", "arguments": {"s": "x y z w v u"}}],
        ),
        # characters jieba does not count as Han (extension A/B, U+9FD6..)
        (
            [{"name": "打开𠀀", "arguments": {"k": "㐀鿖鿿〇"}}],
            [{"name": "打开𠀀", "arguments": {"k": "㐀鿖〇"}}],
        ),
        # keys whose order differs between code points and UTF-16 units
        (
            [{"name": "f", "arguments": {"\uff21": 1, "😀": 2, "a": 3}}],
            [{"name": "f", "arguments": {"😀": 2, "\uff21": 1, "a": 3}}],
        ),
        # three calls, order swapped, one argument missing
        (
            [
                {"name": "导航", "arguments": {"城市": "北京", "目的地": "天安门"}},
                {"name": "播放音乐", "arguments": {"歌手": "周杰伦", "歌曲": "稻香"}},
                {"name": "设置闹钟", "arguments": {"时间": "07:30", "重复": True}},
            ],
            [
                {"name": "设置闹钟", "arguments": {"时间": "07:30"}},
                {"name": "导航", "arguments": {"目的地": "天安门", "城市": "北京"}},
                {"name": "播放音乐", "arguments": {"歌曲": "稻香", "歌手": "周杰伦"}},
            ],
        ),
        # same count, different names
        ([lc, {"name": "ac_control"}], [lc, {"name": "fan_control"}]),
        # duplicate calls
        ([lc, lc], [lc, lc]),
        ([lc, lc], [lc, {"name": "light_control", "arguments": {"room": "客厅"}}]),
        # nested structures
        (
            [{"name": "f", "arguments": {"o": {"a": [1, {"b": None}], "c": {}}, "l": []}}],
            [{"name": "f", "arguments": {"o": {"a": [1, {"b": False}], "c": {}}, "l": []}}],
        ),
    ]
    return [
        {"id": f"s{i}", "query": f"special {i}", "gold_fn": g, "pred_fn": p}
        for i, (g, p) in enumerate(cases)
    ]


def random_records(n: int, seed: int = 0) -> list[Record]:
    """``n`` random records (ids ``r0``, ``r1``, ...) mixing every case above."""
    rng = random.Random(seed)
    out: list[Record] = []
    for i in range(n):
        gold = _gold_calls(rng)
        pred = _perturb(gold, rng)
        out.append(
            {"id": f"r{i}", "query": _text(rng, chinese=0.7), "gold_fn": gold, "pred_fn": pred}
        )
    return out


# --- realistic records for the benchmark ------------------------------------------------------

SCHEMAS: list[tuple[str, list[str]]] = [
    ("light_control", ["room", "action", "brightness", "color", "duration", "scene"]),
    ("ac_control", ["room", "action", "mode", "temperature", "fan_speed", "timer"]),
    ("play_music", ["singer", "song", "album", "playlist", "volume", "device"]),
    ("navigate", ["origin", "destination", "mode", "avoid", "departure_time", "waypoint"]),
    ("book_flight", ["from_city", "to_city", "date", "cabin", "passengers", "airline"]),
    ("set_alarm", ["time", "repeat", "label", "ring", "snooze", "volume"]),
    ("send_message", ["contact", "content", "channel", "at_time", "priority", "attach"]),
    ("query_weather", ["city", "date", "detail", "unit", "district", "days"]),
    ("查询快递", ["单号", "快递公司", "收件人", "手机号", "城市", "状态"]),
    ("预约挂号", ["医院", "科室", "医生", "日期", "时段", "就诊人"]),
]
REAL_VALUES = [
    "客厅",
    "卧室",
    "主卧",
    "次卧",
    "厨房",
    "书房",
    "打开",
    "关闭",
    "调高",
    "调低",
    "制冷模式",
    "睡眠模式",
    "周杰伦",
    "稻香",
    "晴天",
    "我的最爱",
    "北京市海淀区中关村",
    "上海虹桥站",
    "避开高速",
    "明天上午九点",
    "后天下午三点半",
    "每个工作日",
    "起床",
    "张三",
    "李四",
    "妈妈",
    "今晚不回家吃饭了",
    "紧急",
    "广州",
    "深圳",
    "经济舱",
    "南方航空",
    "顺丰速运",
    "北京协和医院",
    "心内科",
    "王医生",
    "上午",
    "摄氏度",
    "三天",
    "暖黄色",
    "阅读模式",
    "蓝牙音箱",
]


def _real_value(rng: random.Random) -> Any:
    u = rng.random()
    if u < 0.75:
        return rng.choice(REAL_VALUES)
    if u < 0.85:
        return rng.randint(0, 100)
    if u < 0.92:
        return round(rng.uniform(16, 30), 1)
    return rng.choice([True, False])


# How the predictions of :func:`realistic_records` that are not left exact go wrong, in shares
# of those records (at the default exact share 0.55 these are 20, 7, 6, 5, 4 and 3 % of all).
REALISTIC_ERRORS: tuple[tuple[str, float], ...] = (
    ("wrong_value", 20 / 45),
    ("wrong_name", 7 / 45),
    ("missing_argument", 6 / 45),
    ("missing_call", 5 / 45),
    ("shuffled_calls", 4 / 45),
    ("empty", 3 / 45),
)


def _error_bounds(exact_share: float) -> list[float]:
    """Upper bounds in [0, 1) of each kind of :data:`REALISTIC_ERRORS` for a uniform draw."""
    if exact_share == 0.55:  # the literal bounds the tests' data was generated with
        return [0.75, 0.82, 0.88, 0.93, 0.97]
    bounds, total = [], exact_share
    for _, share in REALISTIC_ERRORS[:-1]:
        total += (1.0 - exact_share) * share
        bounds.append(total)
    return bounds


def realistic_records(n: int, seed: int = 0, *, exact_share: float = 0.55) -> list[Record]:
    """``n`` records of realistic size: 1-3 calls of 2-6 arguments, mostly Chinese values.

    A share ``exact_share`` of the predictions is drawn to be left exactly as the gold calls;
    the rest get one error of :data:`REALISTIC_ERRORS` (a new value, name or order can happen to
    equal the old one, and dropping the only call leaves none, so the share of predictions
    exactly right comes out a little above ``exact_share``). The default keeps the data the
    tests were written against.
    """
    if not 0.0 <= exact_share <= 1.0:
        raise ValueError(f"exact_share must be in [0, 1], got {exact_share!r}")
    value_bound, name_bound, arg_bound, call_bound, shuffle_bound = _error_bounds(exact_share)
    rng = random.Random(seed)
    out: list[Record] = []
    for i in range(n):
        gold: list[Call] = []
        for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
            name, keys = rng.choice(SCHEMAS)
            chosen = rng.sample(keys, rng.randint(2, 6))
            gold.append({"name": name, "arguments": {k: _real_value(rng) for k in chosen}})
        pred = copy.deepcopy(gold)
        u = rng.random()
        if u < exact_share:
            pass
        elif u < value_bound:
            args = rng.choice(pred)["arguments"]
            args[rng.choice(list(args))] = _real_value(rng)
        elif u < name_bound:
            rng.choice(pred)["name"] = rng.choice(SCHEMAS)[0]
        elif u < arg_bound:
            args = rng.choice(pred)["arguments"]
            del args[rng.choice(list(args))]
        elif u < call_bound:
            pred.pop()
        elif u < shuffle_bound:
            rng.shuffle(pred)
        else:
            pred = []
        query = "".join(rng.sample(REAL_VALUES, 3))
        out.append({"id": f"q{i}", "query": query, "gold_fn": gold, "pred_fn": pred})
    return out


def long_record(n_args: int, *, seed: int = 0) -> Record:
    """One call with ``n_args`` Chinese arguments and one changed value: a long serialisation
    without '.', for the ``rouge`` package's recursive LCS traceback."""
    rng = random.Random(seed)
    args = {f"参数{i}": rng.choice(REAL_VALUES) for i in range(n_args)}
    pred_args = dict(args)
    pred_args["参数0"] = "完全不同的值"
    return {
        "id": f"long{n_args}",
        "query": "long",
        "gold_fn": [{"name": "long_call", "arguments": args}],
        "pred_fn": [{"name": "long_call", "arguments": pred_args}],
    }


# --- other input forms of a prediction --------------------------------------------------------


def as_json_arguments(calls: list[Call]) -> list[Call]:
    """The calls with ``arguments`` as JSON text (keys in their own order, ASCII escapes)."""
    out = []
    for call in calls:
        c = {"name": call["name"]}
        if "arguments" in call:
            c["arguments"] = json.dumps(call["arguments"])
        out.append(c)
    return out


def as_tool_calls(calls: list[Call]) -> list[dict[str, Any]]:
    """OpenAI ``tool_calls``: ``{"id", "type": "function", "function": {"name", "arguments"}}``
    with ``arguments`` as JSON text."""
    return [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {
                "name": call["name"],
                "arguments": json.dumps(call.get("arguments", {}), ensure_ascii=False),
            },
        }
        for i, call in enumerate(calls)
    ]


def as_model_text(calls: list[Call]) -> str:
    """Raw model output: the call list as JSON text."""
    return json.dumps(calls, ensure_ascii=False, indent=1)
