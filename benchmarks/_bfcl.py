"""BFCL's own AST checker (``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` of
github.com/ShishirPatil/gorilla) and its evaluation runner, loaded for benchmark peers, and
BFCL-format records.

Nothing is downloaded. The checker comes from the installed ``bfcl_eval`` package, from
``$BFCL_EVAL_DIR`` (a checkout's ``berkeley-function-call-leaderboard/bfcl_eval``), or from the
file ``$BFCL_AST_CHECKER`` names (a copy of ``ast_checker.py``, e.g. ``git show
HEAD:berkeley-function-call-leaderboard/bfcl_eval/eval_checker/ast_eval/ast_checker.py`` in a
clone). A file is run with small stand-ins for the four ``bfcl_eval`` modules it imports: the
``Language`` enum, a model table whose every model keeps dots in function names
(``underscore_to_dot`` false) and the Java/JavaScript converters, which Python records never
reach. :func:`bfcl_checker` is then how BFCL's runner judges one record: the relevance rule for
``irrelevance`` (right when nothing is called), ``ast_checker`` for the rest.
:func:`bfcl_runner` is BFCL's whole evaluation of a file (its runner's functions, taken from
the package's source), score files included."""

from __future__ import annotations

import ast
import contextlib
import enum
import importlib
import importlib.util
import json
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["bfcl_checker", "bfcl_failed_ids", "bfcl_record", "bfcl_runner"]


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


def _ast_checker() -> tuple[Callable[..., dict[str, Any]], Any] | None:
    """BFCL's ``ast_checker`` and its ``Language.PYTHON``: from the file ``$BFCL_AST_CHECKER``
    names, else from ``$BFCL_EVAL_DIR``'s ``eval_checker/ast_eval/ast_checker.py``, else from
    the installed ``bfcl_eval``; None when there is none."""
    path = os.environ.get("BFCL_AST_CHECKER")
    source = _source_dir()
    if not path and source is not None and os.environ.get("BFCL_EVAL_DIR"):
        path = str(source / "eval_checker" / "ast_eval" / "ast_checker.py")
    if path:
        _stand_ins()
        namespace: dict[str, Any] = {"__name__": "bfcl_ast_checker"}
        code = compile(Path(path).read_text(encoding="utf-8"), path, "exec")
        exec(code, namespace)  # the copy of BFCL's checker the user named
        return namespace["ast_checker"], _Language.PYTHON
    try:
        module = importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
    except ImportError:
        return None
    python = importlib.import_module("bfcl_eval.constants.enums").Language.PYTHON
    return module.ast_checker, python


def bfcl_checker() -> Callable[[dict[str, Any]], bool] | None:
    """A function of one BFCL-format record (``function``, ``ground_truth``, ``pred``,
    ``category``) -> BFCL's verdict; None when BFCL's checker is neither installed nor named by
    ``$BFCL_AST_CHECKER`` or ``$BFCL_EVAL_DIR``."""
    found = _ast_checker()
    if found is None:
        return None
    ast_checker, python = found

    def verdict(record: dict[str, Any]) -> bool:
        category = record["category"]
        if category == "irrelevance":
            return not record["pred"]
        found = ast_checker(
            record["function"], record["pred"], record["ground_truth"], python, category, "m"
        )
        return bool(found["valid"])

    return verdict


def _source_dir() -> Path | None:
    """BFCL's package directory (``bfcl_eval``): ``$BFCL_EVAL_DIR`` (a checkout's
    ``berkeley-function-call-leaderboard/bfcl_eval``), the checkout around the file
    ``$BFCL_AST_CHECKER`` names, or the installed package's; None without one holding the
    evaluation runner."""
    candidates = []
    if os.environ.get("BFCL_EVAL_DIR"):
        candidates.append(Path(os.environ["BFCL_EVAL_DIR"]))
    if os.environ.get("BFCL_AST_CHECKER"):
        candidates.append(Path(os.environ["BFCL_AST_CHECKER"]).resolve().parents[2])
    spec = importlib.util.find_spec("bfcl_eval") if "bfcl_eval" not in sys.modules else None
    if spec is not None and spec.submodule_search_locations:
        candidates.append(Path(next(iter(spec.submodule_search_locations))))
    for candidate in candidates:
        if (candidate / _RUNNER_FILES[0][0]).is_file():
            return candidate
    return None


_RUNNER_FILES = [
    (
        "eval_checker/eval_runner.py",
        {
            "_evaluate_single_ast_entry",
            "_evaluate_single_relevance_entry",
            "ast_file_runner",
            "relevance_file_runner",
        },
    ),
    ("eval_checker/eval_runner_helper.py", {"save_eval_results"}),
    (
        "utils.py",
        {
            "load_file",
            "write_list_of_dicts_to_file",
            "make_json_serializable",
            "is_function_calling_format_output",
            "is_empty_output",
        },
    ),
]
"""The functions of BFCL's evaluation runner that ``bfcl evaluate`` runs for the AST and
irrelevance categories, by file of the ``bfcl_eval`` package."""


class _ReturnFormat(enum.Enum):
    PYTHON = "python"
    JAVA = "java"
    JAVASCRIPT = "javascript"


class _DecodedHandler:
    """A model handler for records that hold BFCL's decoded calls already: its ``decode_ast``
    gives them back as they are (the generous choice for BFCL: an FC handler would
    ``json.loads`` each call's arguments, a prompting handler parse Python source)."""

    def decode_ast(self, result: Any, language: Any = None, has_tool_call_tag: bool = False) -> Any:
        return result


def bfcl_runner() -> Callable[[Path, Path], float] | None:
    """BFCL's own evaluation of a BFCL-format file as ``bfcl evaluate`` runs each category:
    ``load_file`` (``json.loads`` of every line), then per category ``ast_file_runner`` (or
    ``relevance_file_runner`` for ``irrelevance``): each entry through
    ``_evaluate_single_ast_entry`` (the format check and ``ast_checker``), and
    ``save_eval_results`` writing the category's score file (a header, then every failing entry
    with its prompt, answer and error, through BFCL's ``make_json_serializable``). BFCL's
    functions are taken by name from its source files and run unchanged; what they import from
    the rest of ``bfcl_eval`` (enums, the score folder's layout, a file lock) is given small
    stand-ins. The function returned takes (data file, score folder) and returns the accuracy
    (:func:`bfcl_failed_ids` reads the failed entries back from the score files). None when
    BFCL's source is not here."""
    source = _source_dir()
    checker = _ast_checker()
    if source is None or checker is None:
        return None
    namespace: dict[str, Any] = {
        "__name__": "bfcl_eval_runner",
        "json": json,
        "os": os,
        "Language": _Language,
        "ReturnFormat": _ReturnFormat,
        "BaseHandler": object,
        "ast_checker": checker[0],
        "is_java": lambda category: False,
        "is_js": lambda category: False,
        "VERSION_PREFIX": "BFCL_v4",
        "get_directory_structure_by_category": lambda category: "",
        "_get_file_lock": lambda path: contextlib.nullcontext(),
    }
    for relative, names in _RUNNER_FILES:
        path = source / relative
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        body: list[ast.stmt] = [
            node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in names
        ]
        missing = names - {node.name for node in body if isinstance(node, ast.FunctionDef)}
        if missing:
            raise RuntimeError(f"{path} has no {sorted(missing)}: another BFCL version?")
        exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)

    def run(data: Path, score_dir: Path) -> float:
        entries = namespace["load_file"](str(data))
        by_category: dict[str, list[dict[str, Any]]] = {}
        for entry in entries:
            by_category.setdefault(entry["category"], []).append(entry)
        handler, correct, total = _DecodedHandler(), 0.0, 0
        for category, group in by_category.items():
            results = [{"id": e["id"], "result": e["pred"]} for e in group]
            prompts = [
                {"id": e["id"], "question": e["question"], "function": e["function"]} for e in group
            ]
            if category == "irrelevance":
                args = (handler, results, prompts, "m", category, score_dir)
                accuracy, count = namespace["relevance_file_runner"](*args)
            else:
                answers = [{"id": e["id"], "ground_truth": e["ground_truth"]} for e in group]
                args = (handler, results, prompts, answers, category, "m", score_dir)
                accuracy, count = namespace["ast_file_runner"](*args)
            correct += accuracy * count
            total += count
        return correct / total

    return run


def bfcl_failed_ids(score_dir: Path) -> set[str]:
    """The ids of the entries in BFCL's score files (each file's first line is its header)."""
    failed: set[str] = set()
    for path in score_dir.rglob("*_score.json"):
        with open(path, encoding="utf-8") as handle:
            next(handle)
            failed.update(json.loads(line)["id"] for line in handle)
    return failed


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
