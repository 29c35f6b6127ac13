"""An independent per-record checker of tool calls, written from the rules BFCL's AST checker
documents (README "Suite: tool-use"), record by record in plain Python and in BFCL's own
structure: a result dict per check, strings standardised every time they are compared. It is
the oracle of ``tests/test_tool_use.py`` and the peer of ``benchmarks/bench_tool_use.py``; it
shares no code with :mod:`pingce.metrics.tools`.

Input: raw JSON as in the records: function docs (BFCL or OpenAI tools), possible answers
``[{"fname": {"param": [values]}}]`` and decoded calls ``[{"fname": {"param": value}}]``.
"""

from __future__ import annotations

import re
from typing import Any

TYPE_NAMES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "number": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "object": dict,
    "any": str,
}


def std(text: str, strict: bool) -> str:
    if strict:
        return text
    return re.sub(r"[ ,./\-_*^]", "", text).lower().replace("'", '"')


def _first_type(options: list[Any]) -> type | None:
    for option in options:
        if option != "" or type(option) is not str:
            return type(option)
    return None


def _fail(kind: str, message: str = "") -> dict[str, Any]:
    return {"valid": False, "error_type": kind, "error": message}


OK: dict[str, Any] = {"valid": True, "error_type": None, "error": ""}


def check_type(value: Any, options: list[Any], kind: type, inner: type | None) -> dict[str, Any]:
    expected = _first_type(options)
    variable = expected is not None and expected is not kind
    if type(value) is kind:
        if inner is None:
            return {**OK, "variable": variable}
        for option in options:
            good = True
            if type(option) is list:
                for item in value:
                    item_expected = _first_type(option)
                    if not (
                        type(item) is inner
                        or (item_expected is not None and type(item) is item_expected)
                    ):
                        good = False
                        break
            if good:
                return {**OK, "variable": variable}
        if expected is not None and type(value) is expected:
            return _fail("type_error:nested")
        return _fail("type_error:simple")
    if expected is not None and type(value) is expected:
        return {**OK, "variable": True}
    return _fail("type_error:simple")


def check_dict(value: Any, options: list[Any], strict: bool) -> bool:
    for option in options:
        if option == "" or not isinstance(option, dict) or not isinstance(value, dict):
            continue
        good = True
        for key, item in value.items():
            if key not in option or not isinstance(option[key], list):
                good = False
                break
            mine = std(item, strict) if type(item) is str else item
            allowed = [std(a, strict) if type(a) is str else a for a in option[key]]
            if mine not in allowed:
                good = False
                break
        if good:
            for key, allowed in option.items():
                if key not in value and "" not in allowed:
                    good = False
                    break
        if good:
            return True
    return False


def check_value(
    value: Any, options: list[Any], kind: type, inner: type | None, strict: bool
) -> bool:
    if kind is dict:
        return check_dict(value, options, strict)
    if kind is list and inner is dict:
        for option in options:
            if not isinstance(option, list | str) or len(option) != len(value):
                continue
            if all(
                isinstance(option[k], dict) and check_dict(value[k], [option[k]], strict)
                for k in range(len(value))
            ):
                return True
        return False
    if kind is str:
        return std(value, strict) in [std(o, strict) for o in options if type(o) is str]
    if kind is list:
        mine = [std(v, strict) if type(v) is str else v for v in value]
        for option in options:
            if not isinstance(option, list | str):
                continue
            if mine == [std(o, strict) if type(o) is str else o for o in option]:
                return True
        return False
    return value in options


def doc_of(doc: dict[str, Any]) -> dict[str, Any]:
    if "function" in doc and "name" not in doc:
        return dict(doc["function"])
    return doc


def same_name(expected: str, got: str, strict: bool) -> bool:
    return got == expected or (not strict and got == expected.replace(".", "_"))


def check_call(
    doc: dict[str, Any], output: dict[str, Any], answer: dict[str, Any], strict: bool
) -> dict[str, Any]:
    """One decoded call ``{name: args}`` against one possible answer ``{name: answers}``."""
    doc = doc_of(doc)
    ((out_name, args),) = output.items()
    ((_, answers),) = answer.items()
    if not same_name(doc["name"], out_name, strict):
        return _fail("simple_function_checker:wrong_func_name")
    parameters = doc.get("parameters") or {}
    properties = parameters.get("properties") or {}
    for name in parameters.get("required") or []:
        if name not in args:
            return _fail("simple_function_checker:missing_required")
    for name, value in args.items():
        if name not in properties or name not in answers:
            return _fail("simple_function_checker:unexpected_param")
        spec = properties[name]
        kind = TYPE_NAMES[spec["type"]]
        inner = None
        if spec["type"] in ("array", "tuple") and isinstance(spec.get("items"), dict):
            inner = TYPE_NAMES[spec["items"]["type"]]
        if not strict and kind is float and type(value) is int:
            value = float(value)
        typed = check_type(value, answers[name], kind, inner)
        if not typed["valid"]:
            return typed
        if typed["variable"]:
            if value not in answers[name]:
                return _fail("value_error:others")
        elif not check_value(value, answers[name], kind, inner, strict):
            return _fail("value_error")
    for name, allowed in answers.items():
        if name not in args and "" not in allowed:
            return _fail("simple_function_checker:missing_optional")
    return OK


def check_record(
    docs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    answers: list[dict[str, Any]],
    *,
    strict: bool = False,
    greedy: bool = False,
) -> dict[str, Any]:
    """One record: BFCL's verdict (greedy) or one from an exhaustive search for a pairing."""
    if not answers:
        return OK if not outputs else _fail("irrelevance")
    if len(outputs) != len(answers):
        return _fail("wrong_count")
    by_name = {doc_of(d)["name"]: d for d in docs}

    def result(i: int, j: int) -> dict[str, Any]:
        name = next(iter(answers[i]))
        return check_call(by_name[name], outputs[j], answers[i], strict)

    if len(answers) == 1:
        return result(0, 0)
    if greedy:
        used: list[int] = []
        for i in range(len(answers)):
            found = False
            for j in range(len(outputs)):
                if j in used:
                    continue
                if result(i, j)["valid"]:
                    used.append(j)
                    found = True
                    break
            if not found:
                return _fail("cannot_find_match")
        return OK
    import itertools

    for order in itertools.permutations(range(len(outputs))):
        if all(result(i, j)["valid"] for i, j in enumerate(order)):
            return OK
    return _fail("cannot_find_match")
