"""What a record sends to the model: its messages, and its tools as OpenAI tools.

Tools come as OpenAI tools (``{"type": "function", "function": {...}}``), as bare function
definitions (OpenAI's legacy ``functions`` or the Berkeley Function Calling Leaderboard's
function docs ``{"name", "description", "parameters": {"type": "dict", ...}}``), or one such
object alone. BFCL's types are not JSON Schema's; :func:`openai_tools` maps them, at every depth
(``properties``, ``items``, ``additionalProperties``, ``anyOf``/``oneOf``/``allOf``):

====================  ==================================================================
BFCL type             JSON Schema sent
====================  ==================================================================
``dict``              ``object``
``float``             ``number`` (an integer is also a number, as BFCL's checker accepts)
``tuple``, ``list``   ``array`` (JSON has no tuple; its items keep their schema)
``any``               no ``type`` at all (any JSON value)
``str``/``int``/``bool``  ``string``/``integer``/``boolean``
====================  ==================================================================

Every other type is sent as it is. OpenAI allows function names of ``[a-zA-Z0-9_-]`` only (at
most 64); a BFCL name such as ``math.factorial`` is sent as ``math_factorial`` (as BFCL's own
OpenAI handler does), and :func:`restore_names` puts the original name back into the answer's
tool calls, so the prediction names the function the gold names.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["BFCL_TYPES", "messages_of", "openai_tools", "restore_names"]

BFCL_TYPES: dict[str, str | None] = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "list": "array",
    "any": None,
    "str": "string",
    "int": "integer",
    "bool": "boolean",
}
"""BFCL's parameter types and the JSON Schema type each is sent as (None: no ``type``)."""

_NESTED_ONE = ("items", "additionalProperties", "not", "contains")
_NESTED_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_BAD_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def _schema(value: Any) -> Any:
    """A JSON schema with BFCL's types mapped (a copy; the input is not changed)."""
    if not isinstance(value, Mapping):
        return copy.deepcopy(value)
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "type":
            if isinstance(item, str) and item in BFCL_TYPES:
                mapped = BFCL_TYPES[item]
                if mapped is not None:
                    out["type"] = mapped
            elif isinstance(item, list):
                kinds = [BFCL_TYPES.get(t, t) if isinstance(t, str) else t for t in item]
                if None not in kinds:
                    out["type"] = kinds
            else:
                out["type"] = copy.deepcopy(item)
        elif key == "properties" and isinstance(item, Mapping):
            out[key] = {name: _schema(sub) for name, sub in item.items()}
        elif key in _NESTED_ONE and isinstance(item, Mapping):
            out[key] = _schema(item)
        elif key in _NESTED_MANY and isinstance(item, list):
            out[key] = [_schema(sub) for sub in item]
        else:
            out[key] = copy.deepcopy(item)
    return out


def _api_name(name: str, taken: dict[str, str]) -> str:
    """The name OpenAI accepts for ``name`` (unique among ``taken``, which maps sent names to
    original ones)."""
    sent = _BAD_NAME.sub("_", name)[:64] or "function"
    base, k = sent, 2
    while sent in taken and taken[sent] != name:
        suffix = f"_{k}"
        sent, k = base[: 64 - len(suffix)] + suffix, k + 1
    return sent


def openai_tools(value: Any) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """OpenAI ``tools`` from a record's (or a suite's) functions, and the names changed on the
    way (sent name -> original name). Raises ``ValueError`` saying what is wrong."""
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, list):
        raise ValueError(f"expected a list of functions or tools, got {type(value).__name__}")
    tools: list[dict[str, Any]] = []
    renamed: dict[str, str] = {}
    taken: dict[str, str] = {}
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise ValueError(f"function {i} is not an object")
        if item.get("type") == "function" and isinstance(item.get("function"), Mapping):
            function = dict(item["function"])
        elif item.get("type") not in (None, "function"):
            raise ValueError(f"tool {i} has type {item.get('type')!r}; only functions are sent")
        else:
            function = dict(item)
            function.pop("type", None)
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f'function {i} has no "name" (a string)')
        parameters = function.get("parameters")
        if parameters is None:
            parameters = {"type": "object", "properties": {}}
        elif not isinstance(parameters, Mapping):
            raise ValueError(f'function {i} ({name}): "parameters" must be an object')
        function["parameters"] = _schema(parameters)
        if function["parameters"].get("type") is None:
            function["parameters"]["type"] = "object"
        sent = _api_name(name, taken)
        taken[sent] = name
        if sent != name:
            renamed[sent] = name
        function["name"] = sent
        tools.append({"type": "function", "function": function})
    return tools, renamed


def restore_names(reply: Any, renamed: Mapping[str, str]) -> Any:
    """The answer with the original function names in its tool calls (a copy when changed)."""
    if not renamed or not isinstance(reply, dict):
        return reply
    reply = copy.deepcopy(reply)
    for choice in reply.get("choices") or ():
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and function.get("name") in renamed:
                function["name"] = renamed[function["name"]]
        legacy = message.get("function_call")
        if isinstance(legacy, dict) and legacy.get("name") in renamed:
            legacy["name"] = renamed[legacy["name"]]
    return reply


def messages_of(value: Any, system: str | None = None) -> list[dict[str, Any]]:
    """Chat messages from a record's prompt: text (one user message), a list of messages
    ``{"role", "content"}``, or BFCL's question, a list of turns each a list of messages (one
    turn only: a later turn needs the model's answer to the earlier one, which a single request
    cannot hold). ``system`` is put first unless the messages have a system message. Raises
    ``ValueError`` saying what is wrong."""
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("the prompt is empty text")
        messages: list[Any] = [{"role": "user", "content": value}]
    elif isinstance(value, list):
        if value and all(isinstance(turn, list) for turn in value):
            turns = [turn for turn in value if turn]
            if len(turns) > 1:
                raise ValueError(
                    f"a question of {len(turns)} turns: a later turn needs the model's answer to "
                    "the earlier ones (multi-turn runs are not supported); give one turn"
                )
            messages = turns[0] if turns else []
        else:
            messages = value
        if not messages:
            raise ValueError("the prompt is an empty list of messages")
        for i, message in enumerate(messages):
            if not isinstance(message, Mapping):
                raise ValueError(f"message {i} is not an object")
            if not isinstance(message.get("role"), str):
                raise ValueError(f'message {i} has no "role" (a string)')
            if "content" not in message and "tool_calls" not in message:
                raise ValueError(f'message {i} has no "content"')
        messages = [dict(m) for m in messages]
    else:
        raise ValueError(f"expected text or a list of messages, got {type(value).__name__}")
    if system and not any(m.get("role") == "system" for m in messages):
        messages.insert(0, {"role": "system", "content": system})
    return messages
