"""Model answers as they come (function-call suite): the shapes APIs and open models return,
answers that call nothing, answers that try to call and are broken, and a required gold.

Every expected number comes from the reference's ``score_fn`` (tests/fc_reference.py) applied to
call
lists written out by hand, never from pingce. The answer shapes are built here from those lists
the way each API documents them (OpenAI Chat Completions and Responses, Anthropic Messages,
Qwen/Hermes ``<tool_call>`` text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pingce
from pingce.errors import InputError
from pingce.remote.toolcalls import parse_calls

from .cli_run import run_pingce
from .fc_reference import METRICS, fc_reference, score_fn

TOL = 1e-9

CallDict = dict[str, Any]

BJ: CallDict = {"name": "get_weather", "arguments": {"city": "北京", "unit": "celsius"}}
SH: CallDict = {"name": "get_weather", "arguments": {"city": "上海"}}
TIME: CallDict = {"name": "get_time", "arguments": {"tz": "Asia/Shanghai"}}
NO_ARGS: CallDict = {"name": "list_devices", "arguments": {}}


def _args_text(call: CallDict) -> str:
    return json.dumps(call["arguments"], ensure_ascii=False)


# --- the shapes, built from call lists as each API documents them ------------------------------


def chat_message(calls: list[CallDict], content: str | None = None) -> dict[str, Any]:
    """An OpenAI Chat Completions assistant message; no calls: ``"tool_calls": null``."""
    tool_calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": c["name"], "arguments": _args_text(c)},
        }
        for i, c in enumerate(calls)
    ]
    return {"role": "assistant", "content": content, "tool_calls": tool_calls or None}


def chat_completion(calls: list[CallDict], content: str | None = None) -> dict[str, Any]:
    """A whole OpenAI ``chat.completion`` object (the answer is ``choices[0].message``)."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1735689600,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {**chat_message(calls, content), "refusal": None},
                "logprobs": None,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 80, "completion_tokens": 20, "total_tokens": 100},
    }


def responses_output(calls: list[CallDict], text: str | None = None) -> list[dict[str, Any]]:
    """The ``output`` list of an OpenAI Responses object: a reasoning item, a message item when
    there is text, one ``function_call`` item per call (arguments as JSON text)."""
    out: list[dict[str, Any]] = [{"type": "reasoning", "id": "rs_1", "summary": []}]
    if text is not None:
        out.append(
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    out += [
        {
            "type": "function_call",
            "id": f"fc_{i}",
            "call_id": f"call_{i}",
            "name": c["name"],
            "arguments": _args_text(c),
            "status": "completed",
        }
        for i, c in enumerate(calls)
    ]
    return out


def responses_object(calls: list[CallDict], text: str | None = None) -> dict[str, Any]:
    """A whole OpenAI Responses API object."""
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1735689600,
        "status": "completed",
        "model": "gpt-4.1",
        "output": responses_output(calls, text),
        "usage": {"input_tokens": 80, "output_tokens": 20, "total_tokens": 100},
    }


def anthropic_content(calls: list[CallDict], text: str | None = None) -> list[dict[str, Any]]:
    """Anthropic Messages ``content`` blocks: a text block, one ``tool_use`` block per call."""
    blocks: list[dict[str, Any]] = []
    if text is not None:
        blocks.append({"type": "text", "text": text})
    blocks += [
        {"type": "tool_use", "id": f"toolu_{i}", "name": c["name"], "input": c["arguments"]}
        for i, c in enumerate(calls)
    ]
    return blocks


def anthropic_message(calls: list[CallDict], text: str | None = None) -> dict[str, Any]:
    """A whole Anthropic Messages response."""
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": anthropic_content(calls, text),
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 80, "output_tokens": 20},
    }


def qwen_text(calls: list[CallDict], text: str | None = None) -> str:
    """Qwen/Hermes model text: optional prose, then one ``<tool_call>`` block per call."""
    blocks = [
        "<tool_call>\n"
        + json.dumps({"name": c["name"], "arguments": c["arguments"]}, ensure_ascii=False)
        + "\n</tool_call>"
        for c in calls
    ]
    return "\n".join(([text] if text else []) + blocks)


SHAPES: dict[str, Callable[..., Any]] = {
    "openai-chat-message": chat_message,
    "openai-chat-completion": chat_completion,
    "openai-responses-object": responses_object,
    "openai-responses-output": responses_output,
    "anthropic-message": anthropic_message,
    "anthropic-content": anthropic_content,
    "qwen-tool-call-text": qwen_text,
}

CALL_LISTS = {
    "no-call": [],
    "one-call": [BJ],
    "two-calls": [TIME, SH],
    "no-arguments": [NO_ARGS],
}


def parsed(value: Any) -> list[tuple[str, Any]]:
    return [(c.name, c.arguments) for c in parse_calls(value)]


def as_pairs(calls: list[CallDict]) -> list[tuple[str, Any]]:
    return [(c["name"], c["arguments"]) for c in calls]


@pytest.mark.parametrize("calls", list(CALL_LISTS))
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("text", [None, "好的，我来查一下。"])
def test_each_shape_reads_as_its_calls(shape: str, calls: str, text: str | None) -> None:
    value = SHAPES[shape](CALL_LISTS[calls], text)
    assert parsed(value) == as_pairs(CALL_LISTS[calls])
    # the same answer stored as JSON text (a column of strings) reads the same
    if not isinstance(value, str):
        assert parsed(json.dumps(value, ensure_ascii=False)) == as_pairs(CALL_LISTS[calls])


NO_CALL_ANSWERS = {
    "tool_calls-null": {"tool_calls": None},
    "assistant-tool_calls-null": {"role": "assistant", "content": None, "tool_calls": None},
    "assistant-prose": {
        "role": "assistant",
        "content": "好的，我没有需要调用的工具。",
        "tool_calls": None,
    },
    "assistant-without-tool_calls": {"role": "assistant", "content": "北京今天晴。"},
    "legacy-function_call-null": {"role": "assistant", "content": "OK.", "function_call": None},
    "chat-completion-prose": chat_completion([], "天气很好，无需调用工具。"),
    "responses-message-only": {
        "id": "resp_2",
        "object": "response",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "No tool needed.", "annotations": []}],
            }
        ],
    },
    "anthropic-text-only": anthropic_message([], "I can answer that directly: it is sunny."),
    "anthropic-text-block": [{"type": "text", "text": "不需要调用。"}],
    "anthropic-thinking-and-text": [
        {"type": "thinking", "thinking": 'Maybe {"name": "get_weather"}? No.', "signature": "x"},
        {"type": "text", "text": "No call needed."},
    ],
}

PROSE = {
    "zh-punctuation": "好的，我没有需要调用的工具。",
    "zh-question": "请问您想查询哪个城市的天气？（例如：北京、上海）",
    "en-punctuation": "Sure! I don't need a tool for that; the answer is 42.",
    "en-colon-quotes": 'The word "name": it is a noun.',
    "zh-mentions-name-key": '请在表格里填写 "name": 您的名字。',
    "set-braces": "集合 {1, 2, 3} 有三个元素，空集写作 {}。",
    "template-braces": "Use {name} and {city} as placeholders, e.g. f'{name}'.",
    "json-object-in-prose": 'A JSON object looks like {"city": "北京"}; no tool is needed.',
    "bracketed-note": "[注] 本问题无需调用工具。",
    "markdown-link": "[天气网站](https://example.com) 上可以查到。",
    "number": "42",
    "json-string": '"just a string"',
    "empty": "",
    "blank": "  \n\t ",
    "think-then-prose": '<think>也许 {"name": "get_weather", "arguments": {</think>\n不需要调用。',
    "python-fence": "```python\nprint({'a': 1})\n```",
}


@pytest.mark.parametrize("case", list(NO_CALL_ANSWERS))
def test_answers_that_call_nothing_are_an_empty_call_list(case: str) -> None:
    assert parse_calls(NO_CALL_ANSWERS[case]) == ()


@pytest.mark.parametrize("case", list(PROSE))
def test_prose_is_no_call(case: str) -> None:
    assert parse_calls(PROSE[case]) == ()


MORE_CALL_TEXT = {
    "whole-json": ('[{"name": "get_time", "arguments": {"tz": "Asia/Shanghai"}}]', [TIME]),
    "json-then-prose": (
        '{"name": "get_time", "arguments": {"tz": "Asia/Shanghai"}} 完成。',
        [TIME],
    ),
    "empty-list-then-prose": ("[] 不需要调用工具。", []),
    "call-in-prose": (
        '好的，调用 {"name": "get_time", "arguments": {"tz": "Asia/Shanghai"}} 即可。',
        [TIME],
    ),
    "json-fence": (
        '调用如下：\n```json\n[{"name": "get_time", "arguments": {"tz": "Asia/Shanghai"}}]\n```',
        [TIME],
    ),
    "unlabelled-fence": ('```\n{"name": "list_devices", "arguments": {}}\n```', [NO_ARGS]),
    "think-then-tool-call": (
        '<think>用户问北京，也许 {"name": "get_time"}？不，查天气。</think>\n\n' + qwen_text([BJ]),
        [BJ],
    ),
    "tool-call-left-open": (
        '<tool_call>\n{"name": "get_time", "arguments": {"tz": "Asia/Shanghai"}}',
        [TIME],
    ),
    "mistral-prefix": (
        '[TOOL_CALLS] [{"name": "get_time", "arguments": {"tz": "Asia/Shanghai"}}]',
        [TIME],
    ),
    "chat-message-content-with-tool_call-text": (
        {"role": "assistant", "content": qwen_text([SH, BJ]), "tool_calls": None},
        [SH, BJ],
    ),
}


@pytest.mark.parametrize("case", list(MORE_CALL_TEXT))
def test_calls_in_model_text(case: str) -> None:
    value, calls = MORE_CALL_TEXT[case]
    assert parsed(value) == as_pairs(calls)


BROKEN = {
    "tool-call-bad-json": (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "北京"}\n</tool_call>',
        r"<tool_call> block 1 is not JSON",
    ),
    "second-tool-call-bad": (
        qwen_text([BJ]) + '\n<tool_call>\n{"name": "get_time", "arguments": {tz}}\n</tool_call>',
        r"<tool_call> block 2 is not JSON",
    ),
    "tool-call-empty": ("<tool_call></tool_call>", r"<tool_call> block 1 is not JSON"),
    "tool-call-a-number": ("<tool_call>5</tool_call>", r"<tool_call> block 1 holds int"),
    "name-key-in-prose": (
        '好的，我调用 {"name": "get_weather", "arguments": {"city": "北京"} 。',
        r"holds a function call that is not JSON",
    ),
    "single-quoted-call": (
        "Calling {'name': 'get_weather', 'arguments': {'city': 'Beijing'}} now.",
        r"holds a function call that is not JSON",
    ),
    "broken-json-fence": (
        '```json\n[{"name": "get_weather", "arguments": {"city": "北京"},]\n```',
        r"```json block is not JSON",
    ),
    "starts-like-an-object": ("{not json", r"starts like JSON but is not JSON"),
    "starts-like-a-list": ("[{city: 北京}]", r"starts like JSON but is not JSON"),
    "truncated-call": ('[{"name": "get_weather", ', r"holds a function call that is not JSON"),
    "list-of-numbers": ("[1, 2]", r"call 0 is not an object"),
    "object-without-name": ('{"arguments": {"city": "北京"}}', r'call 0 has no "name"'),
    "tool_calls-not-a-list": ({"tool_calls": "get_weather"}, r'"tool_calls" must be a list'),
    "no-choices": ({"object": "chat.completion", "choices": []}, r'"choices" must be'),
    "tool_use-input-a-list": (
        [{"type": "tool_use", "id": "t", "name": "get_weather", "input": [1]}],
        r"arguments must be an object",
    ),
    "a-number": (5, r"expected a list of calls, got int"),
    "content-a-number": ({"role": "assistant", "content": 5}, r'"content" must be text'),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_calls_do_not_parse_and_say_why(case: str) -> None:
    value, reason = BROKEN[case]
    with pytest.raises(ValueError, match=reason):
        parse_calls(value)


def test_an_item_type_that_is_not_text_does_not_crash() -> None:
    value = [{"type": ["function"], "name": "list_devices", "arguments": "{}"}]
    assert parsed(value) == as_pairs([NO_ARGS])


# --- end to end: a file that mixes the shapes --------------------------------------------------

BROKEN_QWEN = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "北京"\n</tool_call>'

# (id, gold, prediction as the model gave it, the prediction's calls written out by hand; None:
# it must not parse)
MIXED: list[tuple[str, list[CallDict], Any, list[CallDict] | None]] = [
    ("chat-completion", [BJ, TIME], chat_completion([TIME, BJ]), [TIME, BJ]),
    ("chat-null-abstains", [], chat_message([], "不需要调用工具。"), []),
    ("prose-abstains", [], "好的，我没有需要调用的工具。", []),
    ("prose-should-call", [BJ], "北京今天晴，不需要查询。", []),
    ("responses-wrong-city", [SH], responses_object([BJ]), [BJ]),
    ("responses-output", [BJ, SH], responses_output([SH, BJ], "查两个城市。"), [SH, BJ]),
    ("responses-message", [], responses_object([], "No tool needed."), []),
    ("anthropic-message", [BJ], anthropic_message([BJ], "我来查一下。"), [BJ]),
    ("anthropic-wrong-name", [TIME], anthropic_content([BJ], "查天气"), [BJ]),
    ("anthropic-text-only", [BJ], anthropic_content([], "It is sunny."), []),
    ("qwen-two", [BJ, SH], qwen_text([BJ, SH]), [BJ, SH]),
    (
        "qwen-one-of-two-right",
        [BJ, TIME],
        qwen_text([BJ, {"name": "get_time", "arguments": {"tz": "UTC"}}]),
        [BJ, {"name": "get_time", "arguments": {"tz": "UTC"}}],
    ),
    ("qwen-broken", [BJ], BROKEN_QWEN, None),
    ("prose-with-braces", [], "Sets like {1, 2} and templates like {name} are not calls.", []),
    ("plain-list", [NO_ARGS], [NO_ARGS], [NO_ARGS]),
    ("empty-gold-empty-pred", [], [], []),
]


def mixed_records() -> list[dict[str, Any]]:
    return [{"id": i, "gold_fn": g, "pred_fn": p} for i, g, p, _ in MIXED]


def expected_by_hand() -> dict[str, dict[str, float]]:
    """The reference's score_fn on the hand-written call lists; a prediction that does not parse is
    a wrong answer (0, 0); for the others also the reference's ROUGE/BLEU (fc_reference)."""
    out: dict[str, dict[str, float]] = {}
    for record_id, gold, _, calls in MIXED:
        if calls is None:
            out[record_id] = dict.fromkeys(METRICS, 0.0)
            continue
        name, whole = score_fn(gold, calls)
        seed = fc_reference([{"gold_fn": gold, "pred_fn": calls}]).records[0].values
        assert (seed["fn_acc_name"], seed["fn_acc_all"]) == (name, whole)
        out[record_id] = {m: float(seed[m]) for m in METRICS}
    return out


def test_the_hand_written_expectations() -> None:
    """What the mixed file is meant to show, in numbers (checks the table above, not pingce)."""
    want = expected_by_hand()
    pairs = {k: (v["fn_acc_name"], v["fn_acc_all"]) for k, v in want.items()}
    assert pairs["chat-null-abstains"] == pairs["prose-abstains"] == (1.0, 1.0)
    assert pairs["prose-should-call"] == pairs["anthropic-text-only"] == (0.0, 0.0)
    assert pairs["responses-wrong-city"] == (1.0, 0.0)
    assert pairs["qwen-one-of-two-right"] == (1.0, 0.5)
    assert pairs["qwen-broken"] == (0.0, 0.0)
    n = len(MIXED)
    assert sum(p[0] for p in pairs.values()) / n == 12 / 16
    assert sum(p[1] for p in pairs.values()) / n == 10.5 / 16


def _check_rows(rows: list[dict[str, Any]]) -> None:
    want = expected_by_hand()
    assert [row["id"] for row in rows] == [m[0] for m in MIXED]
    for row in rows:
        for name in METRICS:
            got = row["values"][name]
            assert got == pytest.approx(want[row["id"]][name], abs=TOL), (row["id"], name)


def test_mixed_shapes_through_evaluate() -> None:
    result = pingce.evaluate("function-call", mixed_records(), bootstrap=0)
    _check_rows(result.record_values())
    want = expected_by_hand()
    for name in METRICS:
        mean = sum(v[name] for v in want.values()) / len(MIXED)
        assert result.metrics[name].value == pytest.approx(mean, abs=TOL), name
    assert result.metrics["fn_acc_name"].value == pytest.approx(12 / 16, abs=1e-15)
    assert result.metrics["fn_acc_all"].value == pytest.approx(10.5 / 16, abs=1e-15)
    assert result.failures.parse == 1


def _write_jsonl(path: Path, records: list[Any]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            text = record if isinstance(record, str) else json.dumps(record, ensure_ascii=False)
            handle.write(text + "\n")


def test_mixed_shapes_through_the_cli(tmp_path: Path) -> None:
    data = tmp_path / "answers.jsonl"
    _write_jsonl(data, mixed_records())
    out = tmp_path / "out"
    proc = run_pingce(
        "run", "function-call", "--data", str(data), "--out", str(out), "--bootstrap", "0"
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["metrics"]["fn_acc_name"]["value"] == pytest.approx(12 / 16, abs=1e-15)
    assert results["metrics"]["fn_acc_all"]["value"] == pytest.approx(10.5 / 16, abs=1e-15)
    assert results["failures"]["parse"] == 1
    with open(out / "records.jsonl", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    _check_rows(rows)
    broken = next(row for row in rows if row["id"] == "qwen-broken")
    reason = broken["misses"]["fn_acc_all"]
    assert reason.startswith("prediction could not be parsed: <tool_call> block 1 is not JSON")
    for row in rows:  # no other record failed to parse (a wrong answer says what differs)
        if row["id"] != "qwen-broken":
            assert "could not be parsed" not in json.dumps(row.get("misses", {})), row


# --- abstention -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    ["好的，我没有需要调用的工具。", {"tool_calls": None}, anthropic_content([], "No.")],
    ids=["prose", "tool_calls-null", "anthropic-text"],
)
def test_abstention(answer: Any) -> None:
    records = [
        {"id": "right", "gold_fn": [], "pred_fn": answer},
        {"id": "wrong", "gold_fn": [BJ], "pred_fn": answer},
    ]
    assert score_fn([], []) == (1.0, 1.0) and score_fn([BJ], []) == (0.0, 0.0)
    result = pingce.evaluate("function-call", records, bootstrap=0)
    rows = {row["id"]: row["values"] for row in result.record_values()}
    assert (rows["right"]["fn_acc_name"], rows["right"]["fn_acc_all"]) == (1.0, 1.0)
    assert (rows["wrong"]["fn_acc_name"], rows["wrong"]["fn_acc_all"]) == (0.0, 0.0)
    assert result.failures.parse == 0


# --- gold: required, strict -------------------------------------------------------------------

GOLD_CASES = {
    "missing": ({"id": "b", "pred_fn": [BJ]}, "required field is missing"),
    "null": ({"id": "b", "gold_fn": None, "pred_fn": [BJ]}, "required field is null"),
}


@pytest.mark.parametrize("case", list(GOLD_CASES))
def test_missing_or_null_gold_is_an_input_error(case: str) -> None:
    """Old main scored such a record as gold "no call": fn_acc_all 0.5 for these two records."""
    bad, message = GOLD_CASES[case]
    records = [{"id": "a", "gold_fn": [BJ], "pred_fn": [BJ]}, bad]
    with pytest.raises(InputError) as info:
        pingce.evaluate("function-call", records, bootstrap=0)
    assert info.value.line == 2 and info.value.field == "gold_fn", str(info.value)
    assert message in str(info.value)


@pytest.mark.parametrize("case", list(GOLD_CASES))
def test_missing_or_null_gold_exits_2_naming_file_line_and_field(tmp_path: Path, case: str) -> None:
    bad, message = GOLD_CASES[case]
    data = tmp_path / "gold.jsonl"
    _write_jsonl(data, [{"id": "a", "gold_fn": [BJ], "pred_fn": [BJ]}, "", bad])
    out = tmp_path / "out"
    proc = run_pingce("run", "function-call", "--data", str(data), "--out", str(out))
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert re.search(r"gold\.jsonl:3: field 'gold_fn': " + message, proc.stderr), proc.stderr
    assert not out.exists()


def test_explicit_empty_gold_is_a_valid_abstention_gold() -> None:
    records = [
        {"id": "a", "gold_fn": [], "pred_fn": []},
        {"id": "b", "gold_fn": [], "pred_fn": [BJ]},
    ]
    result = pingce.evaluate("function-call", records, bootstrap=0)
    want = [score_fn([], [])[1], score_fn([], [BJ])[1]]
    assert [row["values"]["fn_acc_all"] for row in result.record_values()] == want == [1.0, 0.0]


GOLD_ITEM_FORMS = {
    "anthropic-tool_use": [
        {"type": "tool_use", "id": "t", "name": "get_weather", "input": BJ["arguments"]}
    ],
    "responses-function_call": responses_output([BJ])[1:],
    "openai-tool-call": chat_message([BJ])["tool_calls"],
}


@pytest.mark.parametrize("form", list(GOLD_ITEM_FORMS))
def test_gold_items_in_api_forms_read_as_calls(form: str) -> None:
    """A gold list may hold its calls in the item forms of the APIs (the arguments of an
    Anthropic ``tool_use`` are its ``input``)."""
    records = [{"id": "a", "gold_fn": GOLD_ITEM_FORMS[form], "pred_fn": [BJ]}]
    values = pingce.evaluate("function-call", records, bootstrap=0).record_values()[0]["values"]
    assert (values["fn_acc_name"], values["fn_acc_all"]) == score_fn([BJ], [BJ]) == (1.0, 1.0)


STRICT_GOLD = {
    "a-chat-message": (chat_message([BJ]), "must be a list of calls"),
    "a-chat-completion": (chat_completion([BJ]), "must be a list of calls"),
    "model-text": (qwen_text([BJ]), "must be a list of calls"),
    "prose": ("不需要调用", "must be a list of calls"),
    "a-text-block": (anthropic_content([BJ], "查一下"), 'call 0 is a "text" item, not a call'),
    "a-message-item": (responses_output([BJ], "hi")[1:], 'call 0 is a "message" item'),
}


@pytest.mark.parametrize("case", list(STRICT_GOLD))
def test_gold_stays_a_strict_list_of_calls(case: str) -> None:
    gold, message = STRICT_GOLD[case]
    records = [{"id": "a", "gold_fn": [BJ], "pred_fn": [BJ]}, {"id": "b", "gold_fn": gold}]
    with pytest.raises(InputError, match=re.escape(message)) as info:
        pingce.evaluate("function-call", records, bootstrap=0)
    assert info.value.line == 2 and info.value.field == "gold_fn"
