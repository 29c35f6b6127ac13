"""The tool-call wire formats in one module (:mod:`pingce.remote.toolcalls`): the OpenAI tools
built for the model and the calls read from its answer round-trip."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pingce.remote.toolcalls import Call, openai_tools, parse_calls, read_calls, restore_names

BFCL_FUNCTIONS = [
    {
        "name": "math.factorial",
        "description": "n!",
        "parameters": {"type": "dict", "properties": {"n": {"type": "int"}}, "required": ["n"]},
    },
    {
        "name": "weather.get",
        "parameters": {
            "type": "dict",
            "properties": {
                "city": {"type": "str"},
                "days": {"type": "list", "items": {"type": "float"}},
            },
        },
    },
    {"name": "math_factorial", "parameters": {"type": "dict", "properties": {}}},
]


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }


def _answer(tools: list[dict[str, Any]], calls: list[tuple[str, dict[str, Any]]]) -> Any:
    """A model's answer calling the tools it was sent, by their sent names, OpenAI style
    (arguments as JSON text)."""
    sent = {tool["function"]["name"] for tool in tools}
    tool_calls = []
    for i, (name, arguments) in enumerate(calls):
        assert name in sent, name  # the model can only call what it was given
        tool_calls.append(
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        )
    return _completion({"role": "assistant", "content": None, "tool_calls": tool_calls})


def test_openai_tool_calls_round_trip() -> None:
    tools, renamed = openai_tools(BFCL_FUNCTIONS)
    names = [tool["function"]["name"] for tool in tools]
    assert names == ["math_factorial", "weather_get", "math_factorial_2"]
    assert renamed == {
        "math_factorial": "math.factorial",
        "weather_get": "weather.get",
        "math_factorial_2": "math_factorial",
    }
    assert tools[1]["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "array", "items": {"type": "number"}},
        },
    }
    reply = _answer(
        tools,
        [
            ("math_factorial", {"n": 5}),
            ("weather_get", {"city": "北京", "days": [1.5]}),
            ("math_factorial_2", {}),
        ],
    )
    restored = restore_names(reply, renamed)
    assert (
        restored is not reply
        and reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "math_factorial"
    )  # the reply itself is left as it was
    assert parse_calls(restored) == (
        Call("math.factorial", {"n": 5}),
        Call("weather.get", {"city": "北京", "days": [1.5]}),
        Call("math_factorial", {}),
    )


def test_a_legacy_function_call_round_trips() -> None:
    tools, renamed = openai_tools(BFCL_FUNCTIONS[0])
    reply = _completion(
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": tools[0]["function"]["name"], "arguments": '{"n": 3}'},
        }
    )
    assert parse_calls(restore_names(reply, renamed)) == (Call("math.factorial", {"n": 3}),)


def test_an_answer_without_calls_and_calls_as_text() -> None:
    _, renamed = openai_tools(BFCL_FUNCTIONS)
    prose = _completion({"role": "assistant", "content": "5! is 120."})
    assert restore_names(prose, renamed) == prose
    assert parse_calls(prose) == ()
    tagged = _completion(
        {
            "role": "assistant",
            "content": '<think>…</think><tool_call>{"name": "math.factorial", '
            '"arguments": {"n": 4}}</tool_call>',
            "tool_calls": None,
        }
    )
    assert parse_calls(tagged) == (Call("math.factorial", {"n": 4}),)


def test_gold_items_are_read_strictly() -> None:
    gold = [{"type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]
    assert read_calls(gold, allow_null=False, answer=False) == (Call("f", {"a": 1}),)
    with pytest.raises(ValueError, match='"text" item, not a call'):
        read_calls([{"type": "text", "text": "hi"}], allow_null=False, answer=False)
    assert read_calls([{"type": "text", "text": "hi"}], allow_null=False, answer=True) == ()
