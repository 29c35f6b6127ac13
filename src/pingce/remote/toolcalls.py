"""The tool-call wire formats, built and read in one place: what pingce sends a model (OpenAI
``tools`` from a record's functions) and what it reads from a model's answer (its calls).

Sent: tools come as OpenAI tools (``{"type": "function", "function": {...}}``), as bare function
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

Read (:func:`parse_calls`): a list of calls ``{"name", "arguments"}`` or one call; an OpenAI
chat message (``tool_calls``; when null, its ``content`` text), a whole ``chat.completion`` (the
first choice's message); an OpenAI Responses object or its ``output`` list (``function_call``
items; ``message``/``reasoning`` items call nothing); an Anthropic message or its ``content``
(``tool_use`` blocks; ``text``/``thinking`` blocks call nothing); or model text, read by the rule
of :mod:`pingce.metrics.calls` (reasoning before ``</think>`` dropped; ``<tool_call>`` tags, JSON
fences and call keys must parse; prose calls nothing). An answer that calls nothing is ``()``.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

__all__ = [
    "BFCL_TYPES",
    "Call",
    "canonical_json",
    "openai_tools",
    "parse_calls",
    "read_calls",
    "restore_names",
]

# ------------------------------------------------------------------ sent: tools for the model

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


# ------------------------------------------------------------------ read: calls in the answer


def _json_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, sort_keys=True, ensure_ascii=False)`` as a function.

    ``json.dumps`` with options builds a new encoder on every call, which costs more than the
    encoding of a small object; this builds the C encoder once (what ``json.dumps`` runs inside).
    Without ``json.dumps``'s check for circular references (JSON read from a file cannot have
    any), a value that contains itself raises ``RecursionError`` instead of ``ValueError``.
    Falls back to ``json.dumps`` without the C module.
    """
    if c_make_encoder is None:  # pragma: no cover (CPython always has it)
        return functools.partial(json.dumps, sort_keys=True, ensure_ascii=False)
    options = json.JSONEncoder(sort_keys=True, ensure_ascii=False)

    encode = c_make_encoder(
        None, options.default, encode_basestring, None, ": ", ", ", True, False, True
    )

    def dumps(value: Any) -> str:
        return "".join(encode(value, 0))

    return dumps


canonical_json = _json_encoder()
"""``json.dumps(value, sort_keys=True, ensure_ascii=False)``, built once: a call's text."""


@dataclass(slots=True)
class Call:
    """One function call: a name and its arguments (a JSON object); treat it as immutable.

    A dataclass, so output writers serialise it as ``{"name", "arguments"}`` (orjson leaves out
    the ``_text`` cache, as it leaves out every field whose name starts with an underscore).
    """

    name: str
    arguments: Mapping[str, Any] | None
    """None only for a prediction whose arguments were JSON null (the reference keeps it as is)."""
    _text: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The reference's ``fn2str``: name + JSON of the arguments with sorted keys (made once)."""
        text = self._text
        if text is None:
            text = self._text = self.name + canonical_json(self.arguments)
        return text

    def serialize(self) -> str:
        """The reference's ``fn2str``: name + JSON of the arguments with sorted keys."""
        return self.text


_NOT_CALLS = frozenset(
    {"text", "thinking", "redacted_thinking", "reasoning", "message", "output_text", "refusal"}
)
"""``type`` of an answer's items that say something and call nothing: Anthropic ``text`` and
``thinking`` blocks, OpenAI Responses ``message`` and ``reasoning`` items and text parts."""

_THINK_END = "</think>"
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)
_FENCE = re.compile(r"```([A-Za-z0-9_+.-]*)(.*?)```", re.S)
_STARTS_LIKE_CALLS = re.compile(r"\{|\[\s*[{\]]")
_CALL_KEY = re.compile(
    r"""[{,]\s*["'](?:name|arguments|function|function_call|tool_calls)["']\s*:"""
)
_OPENING = re.compile(r"[{\[]")
_DECODER = json.JSONDecoder()


def _shown(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _text_items(text: str) -> list[Any]:
    """The call items of model text, by the rule of the module doc: prose is no call; text that
    tries to be a call (a ``<tool_call>`` tag, a JSON code block, text starting like a JSON
    object or a list of them, an object key ``"name":``/``"arguments":``/... ) must parse."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            value = json.loads(stripped)  # the common form: the whole text is JSON
        except ValueError:
            pass
        else:
            return value if type(value) is list else _answer_items(value)
    end = stripped.rfind(_THINK_END)
    if end >= 0:  # reasoning before the answer (Qwen3, DeepSeek-R1) is not the answer
        return _text_items(stripped[end + len(_THINK_END) :])
    if not stripped:
        return []
    if "<tool_call>" in stripped:
        return _tagged_items(stripped)
    fenced = _fenced_items(stripped)
    if fenced is not None:
        return fenced
    starts_like_calls = _STARTS_LIKE_CALLS.match(stripped) is not None
    values = _keyed_values(stripped, starts_like_calls)
    if values:
        return [item for value in values for item in _answer_items(value)]
    if starts_like_calls:
        try:
            json.loads(stripped)
        except ValueError as exc:
            raise ValueError(
                f"the text starts like JSON but is not JSON ({exc}): {_shown(stripped)}"
            ) from None
    return []  # prose: the model answered without calling a function


def _fenced_items(text: str) -> list[Any] | None:
    """The call items of the first JSON code block (labelled ``json``, or unlabelled and starting
    with ``{`` or ``[``), which must parse; None when the text has none."""
    for fence in _FENCE.finditer(text):
        label = fence.group(1)
        body = fence.group(2).strip()
        if label.lower() == "json" or (not label and body[:1] in ("{", "[")):
            try:
                value = json.loads(body)
            except ValueError as exc:
                raise ValueError(
                    f"the ```{label} block is not JSON ({exc}): {_shown(body)}"
                ) from None
            return _answer_items(value)
    return None


def _keyed_values(text: str, starts_like_calls: bool) -> list[Any]:
    """The JSON values of the text that hold a call key (and the JSON it starts with, followed
    by prose); a call key that no JSON value holds is an error."""
    values: list[Any] = []
    pos = 0
    if starts_like_calls:  # JSON followed by prose
        try:
            value, pos = _DECODER.raw_decode(text)
        except ValueError:
            pass
        else:
            values.append(value)
    for key in _CALL_KEY.finditer(text, pos):
        if key.start() < pos:
            continue  # inside a value already read
        value, pos = _holding_value(text, pos, key.start())
        values.append(value)
    return values


def _holding_value(text: str, pos: int, key: int) -> tuple[Any, int]:
    """The JSON value holding the call key at ``key``: the first one after ``pos`` that opens
    before it and ends after it, and where it ends; else the error saying why there is none."""
    for opening in _OPENING.finditer(text, pos, key + 1):
        try:
            value, end = _DECODER.raw_decode(text, opening.start())
        except ValueError:
            continue
        if end > key:
            return value, end
    start = text.rfind("{", pos, key + 1)
    start = key if start < 0 else start
    try:
        _DECODER.raw_decode(text, start)
        reason = "no JSON object holds its key"
    except ValueError as exc:
        reason = str(exc)
    raise ValueError(
        f"the text holds a function call that is not JSON ({reason}): {_shown(text[start:])}"
    )


def _tagged_items(text: str) -> list[Any]:
    """Qwen/Hermes calls: the JSON in each ``<tool_call>...</tool_call>`` block (the last may be
    left open, as when generation stops at the closing tag); text around them is not read."""
    items: list[Any] = []
    for number, block in enumerate(_TOOL_CALL.finditer(text), 1):
        body = block.group(1).strip()
        try:
            value = json.loads(body)
        except ValueError as exc:
            raise ValueError(
                f"<tool_call> block {number} is not JSON ({exc}): {_shown(body)}"
            ) from None
        if isinstance(value, dict):
            items.append(value)
        elif isinstance(value, list):
            items.extend(value)
        else:
            raise ValueError(
                f"<tool_call> block {number} holds {type(value).__name__}, not a call object"
            )
    return items


def _content_items(content: Any) -> list[Any]:
    """The call items of a message's ``content``: none, model text, or blocks/parts."""
    if content is None:
        return []
    if isinstance(content, str):
        return _text_items(content)
    if isinstance(content, list):
        return content
    raise ValueError(
        f'a message\'s "content" must be text, a list of blocks or null, got '
        f"{type(content).__name__}"
    )


def _dict_items(value: dict[str, Any]) -> list[Any]:
    """The call items of one JSON object: a chat message, a whole API response, or one call."""
    if "tool_calls" in value or "function_call" in value:  # an OpenAI chat message
        calls = value.get("tool_calls")
        legacy = value.get("function_call")
        if calls is not None and not isinstance(calls, list | tuple):
            raise ValueError(f'"tool_calls" must be a list or null, got {type(calls).__name__}')
        if legacy is not None and not isinstance(legacy, dict):
            raise ValueError(
                f'"function_call" must be an object or null, got {type(legacy).__name__}'
            )
        if calls:
            return list(calls)
        if legacy is not None:
            return [legacy]
        return _content_items(value.get("content"))  # no call: what it says
    if "choices" in value:  # an OpenAI chat.completion: its first choice
        choices = value["choices"]
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ValueError('"choices" must be a non-empty list of objects')
        choice = choices[0]
        if isinstance(choice.get("message"), dict):
            return _dict_items(choice["message"])
        if isinstance(choice.get("text"), str):  # the legacy completions API
            return _text_items(choice["text"])
        raise ValueError('choices[0] has no "message" object')
    if isinstance(value.get("output"), list) and "name" not in value:  # an OpenAI Responses object
        output: list[Any] = value["output"]
        return output
    if "content" in value and ("role" in value or value.get("type") == "message"):
        # an Anthropic message, a Responses message item or a chat message without tool_calls
        return _content_items(value["content"])
    return [value]


def _answer_items(value: Any) -> list[Any]:
    """The call items of a prediction in any accepted shape (items of other types included)."""
    if isinstance(value, str):
        return _text_items(value)
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, dict):
        return _dict_items(value)
    raise ValueError(f"expected a list of calls, got {type(value).__name__}")


def _call(item: Any, index: int, allow_null: bool, answer: bool) -> Call | None:
    """One call item; None for an answer's item that calls nothing (a text block, say)."""
    if not isinstance(item, dict):
        raise ValueError(f"call {index} is not an object")
    kind = item.get("type")
    if type(kind) is str and kind in _NOT_CALLS:
        if answer:
            return None
        raise ValueError(f'call {index} is a "{kind}" item, not a call')
    if kind == "tool_use":  # Anthropic {"type": "tool_use", "id", "name", "input": {...}}
        arguments = item.get("input", {})
    else:
        if isinstance(item.get("function"), dict) and "name" not in item:
            item = item["function"]  # OpenAI tool call {"type": "function", "function": {...}}
        arguments = item.get("arguments", {})
    name = item.get("name")
    if not isinstance(name, str):
        raise ValueError(f'call {index} has no "name" (a string)')
    if arguments is None and allow_null:
        return Call(name, None)
    if isinstance(arguments, str):
        if not arguments.strip():
            arguments = {}
        else:
            try:
                arguments = json.loads(arguments)
            except ValueError:
                raise ValueError(
                    f"call {index} ({name}): arguments are text that is not JSON"
                ) from None
    if not isinstance(arguments, dict):
        raise ValueError(
            f"call {index} ({name}): arguments must be an object or JSON text of one, "
            f"got {type(arguments).__name__}"
        )
    return Call(name, arguments)


def read_calls(items: Sequence[Any], *, allow_null: bool, answer: bool) -> tuple[Call, ...]:
    """The calls of a list of call items (``answer``: an item that calls nothing, a text block,
    is left out; else it is an error)."""
    out: list[Call] = []
    for i, item in enumerate(items):
        # the common form, {"name": str, "arguments": object}, without the checks of _call
        if type(item) is dict:
            name = item.get("name")
            arguments = item.get("arguments", _ABSENT)
            if type(name) is str and type(arguments) is dict:
                out.append(Call(name, arguments))
                continue
        call = _call(item, i, allow_null, answer)
        if call is not None:
            out.append(call)
    return tuple(out)


def parse_calls(value: Any, *, allow_null: bool = True) -> tuple[Call, ...]:
    """The calls of a model's answer in any accepted shape (the module doc lists them); an
    answer that calls nothing is ``()``. Raises ``ValueError`` saying what is wrong with an
    answer that tries to call and cannot be read.

    ``"arguments": null`` is kept as None (the reference serialises it as ``null`` and it equals no
    object) unless ``allow_null`` is False; a missing value (None) is no calls, as in the reference.
    """
    if type(value) is not list:
        value = _answer_items(value)
    return read_calls(value, allow_null=allow_null, answer=True)


_ABSENT = object()
