"""BFCL's own AST checker (``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` of
github.com/ShishirPatil/gorilla), loaded for a benchmark peer, and BFCL-format records.

Nothing is downloaded. The checker comes from the installed ``bfcl_eval`` package, or from the
file ``$BFCL_AST_CHECKER`` names (a copy of ``ast_checker.py``, e.g. ``git show
HEAD:berkeley-function-call-leaderboard/bfcl_eval/eval_checker/ast_eval/ast_checker.py`` in a
clone). A file is run with small stand-ins for the four ``bfcl_eval`` modules it imports: the
``Language`` enum, a model table whose every model keeps dots in function names
(``underscore_to_dot`` false) and the Java/JavaScript converters, which Python records never
reach. :func:`bfcl_verdict` is then how BFCL's runner judges one record: the relevance rule for
``irrelevance`` (right when nothing is called), ``ast_checker`` for the rest."""

from __future__ import annotations

import enum
import importlib
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["bfcl_checker", "bfcl_record"]


class _Language(enum.Enum):
    PYTHON = "python"
    JAVA = "java"
    JAVASCRIPT = "javascript"


class _Models(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        return types.SimpleNamespace(underscore_to_dot=False)


def _unreached(*args: Any) -> Any:
    raise NotImplementedError("Java/JavaScript conversion is not part of this benchmark")


def _stand_ins() -> None:
    modules = {
        "bfcl_eval.constants.enums": {"Language": _Language},
        "bfcl_eval.constants.model_config": {"MODEL_CONFIG_MAPPING": _Models()},
        "bfcl_eval.constants.type_mappings": {
            "JAVA_TYPE_CONVERSION": {},
            "JS_TYPE_CONVERSION": {},
        },
        "bfcl_eval.eval_checker.ast_eval.type_convertor.java_type_converter": {
            "java_type_converter": _unreached
        },
        "bfcl_eval.eval_checker.ast_eval.type_convertor.js_type_converter": {
            "js_type_converter": _unreached
        },
    }
    for name, attributes in modules.items():
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        sys.modules.setdefault(name, module)


def bfcl_checker() -> Callable[[dict[str, Any]], bool] | None:
    """A function of one BFCL-format record (``function``, ``ground_truth``, ``pred``,
    ``category``) -> BFCL's verdict; None when BFCL's checker is neither installed nor named by
    ``$BFCL_AST_CHECKER``."""
    path = os.environ.get("BFCL_AST_CHECKER")
    if path:
        _stand_ins()
        namespace: dict[str, Any] = {"__name__": "bfcl_ast_checker"}
        code = compile(Path(path).read_text(encoding="utf-8"), path, "exec")
        exec(code, namespace)  # the copy of BFCL's checker the user named
        ast_checker, python = namespace["ast_checker"], _Language.PYTHON
    else:
        try:
            module = importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
        except ImportError:
            return None
        ast_checker = module.ast_checker
        python = importlib.import_module("bfcl_eval.constants.enums").Language.PYTHON

    def verdict(record: dict[str, Any]) -> bool:
        category = record["category"]
        if category == "irrelevance":
            return not record["pred"]
        found = ast_checker(
            record["function"], record["pred"], record["ground_truth"], python, category, "m"
        )
        return bool(found["valid"])

    return verdict


_TYPES = {"number": "float", "object": "dict"}


def _bfcl_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """A function doc as BFCL's data holds it (an OpenAI tool unwrapped, BFCL's type names,
    ``required`` always present)."""
    inner = doc.get("function", doc)
    parameters = inner["parameters"]
    properties = {}
    for name, spec in parameters["properties"].items():
        spec = dict(spec, type=_TYPES.get(spec["type"], spec["type"]))
        if isinstance(spec.get("items"), dict):
            items = spec["items"]
            spec["items"] = dict(items, type=_TYPES.get(items["type"], items["type"]))
        properties[name] = spec
    required = list(parameters.get("required", []))
    out = {"name": inner["name"], "description": inner.get("description", "")}
    out["parameters"] = {"type": "dict", "properties": properties, "required": required}
    return out


def _dict_params_given(call: dict[str, Any], kinds: dict[str, Any]) -> dict[str, Any]:
    """A gold call whose dict parameters accept only dicts where any is accepted (BFCL's
    ``dict_checker`` stops with an AttributeError on a text among them, ``""`` too)."""
    ((name, answers),) = call.items()
    props = kinds[name]
    out = {}
    for param, options in answers.items():
        if props[param]["type"] == "dict":
            options = [o for o in options if type(o) is dict] or options
        out[param] = options
    return {name: out}


def bfcl_record(
    i: int, docs: list[Any], gold: list[Any], pred: list[Any], question: str
) -> dict[str, Any]:
    """One record in BFCL's fields (``id``, ``question``, ``function``, ``ground_truth``,
    ``category``, the decoded ``pred``) from a random case of ``tests/test_tool_use.py``;
    predicted names written with ``_`` for ``.`` are given their dots back (BFCL compares names
    as the model's table says, pingce accepts both)."""
    functions = [_bfcl_doc(d) for d in docs]
    kinds = {f["name"]: f["parameters"]["properties"] for f in functions}
    gold = [_dict_params_given(call, kinds) for call in gold]
    names = {f["name"] for f in functions}
    undotted = {n.replace(".", "_"): n for n in names}
    calls = []
    for call in pred:
        ((name, args),) = call.items()
        calls.append({name if name in names else undotted.get(name, name): args})
    if not gold:
        category = "irrelevance"
    elif len(gold) == 1:
        category = "simple" if len(functions) == 1 else "multiple"
    else:
        category = "parallel" if len(functions) == 1 else "parallel_multiple"
    return {
        "id": f"{category}_{i}",
        "question": [[{"role": "user", "content": question}]],
        "function": functions,
        "ground_truth": gold,
        "pred": calls,
        "category": category,
    }
