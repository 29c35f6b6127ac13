"""Tool use judged as the Berkeley Function Calling Leaderboard's AST checker judges it
(the ``tool-use`` suite).

A record carries the functions offered to the model (BFCL function docs ``{"name",
"description", "parameters": {"type": "dict", "properties", "required"}}`` or OpenAI tools
``{"type": "function", "function": {...}}``), the gold calls (BFCL's possible answers
``[{"fname": {"param": [acceptable values]}}]``, ``""`` among them meaning "may be omitted", or
plain calls ``[{"name", "arguments"}]``, each value then the one acceptable value; ``[]``: the
right answer is no call) and the prediction (``[{"name", "arguments"}]``, BFCL's decoded shape
``[{"fname": {...}}]``, or any answer :func:`pingce.metrics.calls.parse_calls` reads, including
answers that call nothing). BFCL's own field names ``function`` and ``ground_truth`` are read
when ``functions`` and ``gold`` are absent.

The rules (learnt from BFCL's ``ast_checker.py``; this is pingce's own code):

* counts: a record with no gold call is right only when nothing is called; otherwise the
  prediction must make as many calls as the gold;
* a pair (gold call, predicted call) is valid when the names agree (a ``.`` in the gold name may
  be ``_`` in the prediction, as OpenAI-style tool names cannot hold dots), every required
  parameter is given, no parameter is unknown (to the schema or to the gold), every value has
  the declared type (``integer`` is accepted for ``float``; arrays check their element type;
  a value of the gold's own type is accepted as a "variable" where gold and schema disagree)
  and is among the acceptable values (strings after BFCL's standardisation: lower case, without
  spaces and ``,./-_*^``, ``'`` as ``"``; lists element-wise; dicts key by key), and every gold
  parameter without ``""`` among its values is given;
* several calls: valid when the calls can be paired one to one into valid pairs. pingce finds
  such a pairing whenever one exists (a bipartite perfect matching); BFCL takes, for each gold
  call in order, the first unused predicted call that is valid for it, which can miss a pairing
  that exists (``bfcl_compat: true`` does the same, for the leaderboard's verdicts);
* ``strict: true``: strings compared exactly, no integer for a float, names exactly.

Per record the statistic is ``[correct, 1, names right, arg TP, arg FP, arg FN, errors...]``
(one error column per :data:`ERROR_TYPES` entry, 1 for the record's error type), so accuracy,
name accuracy, argument F1 and the error counts all come from sums.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._collector import collector_paused
from .._json import dumps
from ..errors import InputError
from ..records import FieldSpec, ParseFailure, Table
from ..remote.toolcalls import Call, parse_calls
from ._policy import ZeroDivision, safe_divide
from .calls import no_whole_message
from .protocol import Context, Metric, StatBlock, Statistic, TableMetric, reason_column
from .registry import register_metric, register_table

__all__ = [
    "CATEGORIES",
    "ERROR_TYPES",
    "Function",
    "GoldCall",
    "Param",
    "ToolUseStatistic",
    "check_record",
    "infer_category",
    "parse_functions",
    "parse_gold",
    "parse_prediction",
    "standardize",
]

CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance")

ERROR_TYPES = (
    "parse_error",
    "unexpected_call",
    "no_call",
    "wrong_count",
    "wrong_name",
    "missing_required",
    "unexpected_param",
    "type_error",
    "nested_type_error",
    "wrong_value",
    "missing_optional",
)
"""Why a record is wrong, one type per record (the first error in BFCL's order)."""

_ERROR = {name: k for k, name in enumerate(ERROR_TYPES)}
_WRONG_NAME = _ERROR["wrong_name"]
_MISSING_REQUIRED = _ERROR["missing_required"]
_UNEXPECTED_PARAM = _ERROR["unexpected_param"]
_TYPE_ERROR = _ERROR["type_error"]
_NESTED_TYPE_ERROR = _ERROR["nested_type_error"]
_WRONG_VALUE = _ERROR["wrong_value"]
_MISSING_OPTIONAL = _ERROR["missing_optional"]
_BASE = 6  # correct, 1, names, tp, fp, fn
WIDTH = _BASE + len(ERROR_TYPES)

_TYPES: dict[str, type] = {
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
"""Declared types (BFCL's names and JSON Schema's) as the Python types of JSON values; BFCL
checks ``any`` as a string."""

_PUNCTUATION = re.compile(r"[ ,./\-_*^]")


def standardize(text: str) -> str:
    """BFCL's string standardisation: without spaces and ``,./-_*^``, lower case, ``'`` as
    ``"``."""
    return _PUNCTUATION.sub("", text).lower().replace("'", '"')


@dataclass(frozen=True, slots=True)
class Param:
    """One declared parameter: its type and, for arrays, the type of the elements (as declared;
    ``_type`` and ``_items`` are the Python types of JSON values they stand for)."""

    declared: str
    items_declared: str | None = None
    _type: type = field(init=False, repr=False, compare=False)
    _items: type | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_type", _TYPES[self.declared])
        items = None if self.items_declared is None else _TYPES[self.items_declared]
        object.__setattr__(self, "_items", items)


@dataclass(frozen=True, slots=True)
class Function:
    """One function offered to the model."""

    name: str
    params: Mapping[str, Param]
    required: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GoldCall:
    """One gold call: the function and, per parameter, the acceptable values (``""``: may be
    omitted)."""

    name: str
    answers: Mapping[str, list[Any]]


def _type_of(spec: Any, where: str) -> str:
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise ValueError(f'{where} has no "type" (a string)')
    declared: str = spec["type"]
    if declared not in _TYPES:
        raise ValueError(f"{where} has type {declared!r}; known types: {', '.join(_TYPES)}")
    return declared


def _function(doc: Any, index: int) -> Function:
    if isinstance(doc, dict) and isinstance(doc.get("function"), dict) and "name" not in doc:
        doc = doc["function"]  # an OpenAI tool {"type": "function", "function": {...}}
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
        raise ValueError(f'function {index} has no "name" (a string)')
    name = doc["name"]
    parameters = doc.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise ValueError(f'function {name!r}: "parameters" must be an object')
    properties = parameters.get("properties") or {}
    required = parameters.get("required") or []
    if not isinstance(properties, dict):
        raise ValueError(f'function {name!r}: "properties" must be an object')
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ValueError(f'function {name!r}: "required" must be a list of names')
    params: dict[str, Param] = {}
    for pname, spec in properties.items():
        where = f"function {name!r} parameter {pname!r}"
        declared = _type_of(spec, where)
        items_declared: str | None = None
        if declared in ("array", "tuple") and isinstance(spec.get("items"), dict):
            items_declared = _type_of(spec["items"], f"{where} items")
        params[pname] = Param(declared, items_declared)
    return Function(name, params, tuple(required))


_FUNCTIONS: dict[bytes, tuple[Function, ...]] = {}


def parse_functions(value: Any) -> tuple[Function, ...]:
    """The functions of a record: BFCL function docs or OpenAI tools (a list, or one object).
    Records sharing a schema share its parsed form (keyed by its JSON text; a schema holding an
    integer beyond 64 bits, which orjson cannot write, keyed by the json module's text)."""
    key = _schema_key(value)
    found = _FUNCTIONS.get(key)
    if found is not None:
        return found
    docs = value if isinstance(value, list) else [value]
    parsed = tuple(_function(doc, i) for i, doc in enumerate(docs))
    if len(_FUNCTIONS) < 100_000:
        _FUNCTIONS[key] = parsed
    return parsed


def _schema_key(value: Any) -> bytes:
    """The JSON text of ``value`` as a cache key (any integer written: ``_json.dumps``)."""
    return dumps(value)


_CALL_KEYS = frozenset({"name", "arguments", "function", "type", "input", "id"})


def _is_decoded(item: Any) -> bool:
    """BFCL's decoded call ``{"fname": {"param": value}}``."""
    if type(item) is not dict or len(item) != 1:
        return False
    ((key, value),) = item.items()
    return key not in _CALL_KEYS and type(value) is dict


def parse_gold(value: Any) -> tuple[GoldCall, ...]:
    """Gold calls: BFCL possible answers or plain calls; ``[]`` is "no call"."""
    no_whole_message(value)
    if not isinstance(value, list):
        raise ValueError(f"gold calls must be a list, got {type(value).__name__}")
    out: list[GoldCall] = []
    for i, item in enumerate(value):
        if _is_decoded(item):
            ((name, answers),) = item.items()
            for param, options in answers.items():
                if not isinstance(options, list):
                    raise ValueError(
                        f"gold call {i} ({name}) parameter {param!r}: acceptable values must "
                        f"be a list, got {type(options).__name__}"
                    )
            out.append(GoldCall(name, answers))
        else:
            (call,) = parse_calls([item], allow_null=False)
            arguments = call.arguments or {}
            out.append(GoldCall(call.name, {k: [v] for k, v in arguments.items()}))
    return tuple(out)


def _is_bfcl_result(item: Any) -> bool:
    """A call of a BFCL result file of a function-calling model, ``{"fname": "<JSON text of
    the arguments>"}``."""
    if type(item) is not dict or len(item) != 1:
        return False
    ((key, value),) = item.items()
    return key not in _CALL_KEYS and type(value) is str


def _result_arguments(name: str, text: str, index: int) -> dict[str, Any]:
    try:
        arguments = json.loads(text) if text.strip() else {}
    except ValueError:
        raise ValueError(f"call {index} ({name}): arguments are text that is not JSON") from None
    if not isinstance(arguments, dict):
        raise ValueError(f"call {index} ({name}): arguments must be JSON text of an object")
    return arguments


def parse_prediction(value: Any) -> tuple[Call, ...]:
    """Predicted calls: BFCL's decoded shape, a BFCL result's (each call's arguments as JSON
    text), or any answer ``parse_calls`` reads."""
    if type(value) is list and value and all(map(_is_decoded, value)):
        return tuple(Call(*next(iter(item.items()))) for item in value)
    if (
        type(value) is list
        and value
        and all(_is_decoded(item) or _is_bfcl_result(item) for item in value)
    ):
        calls = []
        for index, item in enumerate(value):
            ((name, arguments),) = item.items()
            if isinstance(arguments, str):
                arguments = _result_arguments(name, arguments, index)
            calls.append(Call(name, arguments))
        return tuple(calls)
    return parse_calls(value, allow_null=False)


def infer_category(gold: Sequence[GoldCall], n_functions: int) -> str:
    """BFCL's category of a record from its gold: none -> irrelevance; one call -> simple (one
    function offered) or multiple; several -> parallel (one function) or parallel_multiple."""
    if not gold:
        return "irrelevance"
    if len(gold) == 1:
        return "simple" if n_functions <= 1 else "multiple"
    return "parallel" if n_functions <= 1 else "parallel_multiple"


# ---------------------------------------------------------------------------------------------
# One (gold call, predicted call) pair


def _show(value: Any) -> str:
    return repr(value) if not isinstance(value, str) else "'" + value + "'"


def _shown_list(values: Sequence[Any]) -> str:
    return "[" + ", ".join(_show(v) for v in values) + "]"


class _Rules:
    """The checks of one pair, under ``strict``; strings standardised once each. A check says
    which error and on which parameter; the reason's text is written (:meth:`why`) only for the
    error a record's verdict reports."""

    def __init__(self, strict: bool):
        self.strict = strict
        self.cache: dict[str, str] = {}
        self.sets: dict[int, frozenset[str]] = {}

    def std(self, text: str) -> str:
        if self.strict:
            return text
        found = self.cache.get(text)
        if found is None:
            found = self.cache[text] = standardize(text)
        return found

    def strings(self, options: list[Any]) -> frozenset[str]:
        """The standardised strings among acceptable values (made once per list: the lists
        live as long as the records being checked, so their ids stay theirs)."""
        key = id(options)
        found = self.sets.get(key)
        if found is None:
            found = self.sets[key] = frozenset(self.std(o) for o in options if type(o) is str)
        return found

    def std_any(self, value: Any) -> Any:
        return self.std(value) if type(value) is str else value

    def name_ok(self, gold: str, pred: str) -> bool:
        if gold == pred:
            return True
        return not self.strict and "." in gold and gold.replace(".", "_") == pred

    # -- types ------------------------------------------------------------------------------

    @staticmethod
    def gold_type(options: list[Any]) -> type | None:
        """The type of the first acceptable value that is not ``""`` (None: there is none)."""
        for o in options:
            if not (type(o) is str and o == ""):
                return type(o)
        return None

    def type_code(self, p: Param, value: Any, options: list[Any]) -> int:
        """0 when the type is right, -1 when right as a "variable" (a value of the gold's own
        type), else the error code (``type_error`` or ``nested_type_error``)."""
        gold_type = self.gold_type(options)
        variable = gold_type is not None and gold_type is not p._type
        kind = type(value)
        if kind is p._type:
            if p._items is None:
                return -1 if variable else 0
            for option in options:
                if type(option) is not list or all(
                    self._element_ok(item, option, p._items) for item in value
                ):
                    return -1 if variable else 0
            if gold_type is not None and kind is gold_type:
                return _NESTED_TYPE_ERROR
        elif gold_type is not None and kind is gold_type:
            return -1
        return _TYPE_ERROR

    def _element_ok(self, item: Any, option: list[Any], items: type) -> bool:
        if type(item) is items:
            return True
        gold_type = self.gold_type(option)
        return gold_type is not None and type(item) is gold_type

    # -- values -----------------------------------------------------------------------------

    def value_ok(self, p: Param, value: Any, options: list[Any]) -> bool:
        if p._type is dict:
            return self.dict_ok(value, options)
        if p._type is list and p._items is dict:
            return self.list_dict_ok(value, options)
        if p._type is str:
            return self.std(value) in self.strings(options)
        if p._type is list:
            mine = [self.std_any(v) for v in value]
            for option in options:
                if isinstance(option, list | str) and mine == [self.std_any(o) for o in option]:
                    return True
            return False
        return value in options

    def dict_ok(self, value: Any, options: list[Any]) -> bool:
        if type(value) is not dict:
            return False
        for option in options:
            if type(option) is str and option == "":
                continue
            if type(option) is not dict:
                continue
            if self._dict_matches(value, option):
                return True
        return False

    def _dict_matches(self, value: dict[str, Any], option: dict[str, Any]) -> bool:
        for key, item in value.items():
            if key not in option:
                return False
            accepted = option[key]
            if not isinstance(accepted, list):
                return False
            if self.std_any(item) not in [self.std_any(a) for a in accepted]:
                return False
        return all(key in value or "" in accepted for key, accepted in option.items())

    def list_dict_ok(self, value: Any, options: list[Any]) -> bool:
        if type(value) is not list:
            return False
        for option in options:
            if not isinstance(option, list | str) or len(value) != len(option):
                continue
            if all(
                type(option[k]) is dict and self.dict_ok(value[k], [option[k]])
                for k in range(len(value))
            ):
                return True
        return False

    # -- a pair -----------------------------------------------------------------------------

    def _argument_code(self, p: Param, value: Any, options: list[Any]) -> int:
        """-1 when ``value`` is one the gold accepts, else BFCL's error code (a type error
        before a wrong value)."""
        kind: type = p._type
        if not self.strict and type(value) is int and kind is float:
            value = float(value)
        if type(value) is kind and p._items is None and options:
            first = options[0]  # the common case: a scalar of the gold's declared type
            if type(first) is kind and not (kind is str and first == ""):
                if kind is str:
                    ok = self.std(str(value)) in self.strings(options)
                elif kind is dict:
                    ok = self.dict_ok(value, options)
                else:
                    ok = value in options
                return -1 if ok else _WRONG_VALUE
        code = self.type_code(p, value, options)
        if code > 0:
            return code
        ok = (value in options) if code == -1 else self.value_ok(p, value, options)
        return -1 if ok else _WRONG_VALUE

    def check(self, fn: Function, gold: GoldCall, pred: Call) -> tuple[int, str, int, int]:
        """``(error code or -1, the parameter it is about or "", valid arguments, valid
        arguments the gold needs)`` of one pair, the error the first in BFCL's order: name,
        required, then each given argument (unknown, type, value), then gold parameters left
        out (:meth:`why` writes its reason)."""
        if not self.name_ok(gold.name, pred.name):
            return _WRONG_NAME, "", 0, 0
        args = pred.arguments or {}
        answers = gold.answers
        params = fn.params
        error = -1
        where = ""
        for param in fn.required:
            if param not in args:
                error, where = _MISSING_REQUIRED, param
                break
        valid = needed = 0
        for param, value in args.items():
            p = params.get(param)
            options = answers.get(param)
            if p is None or options is None:
                if error < 0:
                    error, where = _UNEXPECTED_PARAM, param
                continue
            code = self._argument_code(p, value, options)
            if code < 0:
                valid += 1
                if "" not in options:
                    needed += 1
            elif error < 0:
                error, where = code, param
        if error < 0:
            for param, options in answers.items():
                if param not in args and "" not in options:
                    error, where = _MISSING_OPTIONAL, param
                    break
        return error, where, valid, needed

    def why(self, fn: Function, gold: GoldCall, pred: Call, code: int, param: str) -> str:
        """The reason of the error :meth:`check` found (``code`` on parameter ``param``)."""
        if code == _WRONG_NAME:
            return f"function: expected '{gold.name}', got '{pred.name}'"
        if code == _MISSING_REQUIRED:
            return f"param '{param}': required, missing"
        if code == _UNEXPECTED_PARAM:
            where = "the function" if param not in fn.params else "the gold call"
            return f"param '{param}': not a parameter of {where}"
        options = gold.answers[param]
        if code == _MISSING_OPTIONAL:
            return f"param '{param}': omitted, but gold accepts only {_shown_list(options)}"
        p = fn.params[param]
        value = (pred.arguments or {})[param]
        if not self.strict and type(value) is int and p._type is float:
            value = float(value)
        if code == _NESTED_TYPE_ERROR:
            return (
                f"param '{param}': expected {p.declared} of {p.items_declared}, got {_show(value)}"
            )
        if code == _TYPE_ERROR:
            return f"param '{param}': expected {p.declared}, got {_json_type(value)} {_show(value)}"
        return f"param '{param}': value {_show(value)} not in {_shown_list(options)}"


def _json_type(value: Any) -> str:
    return {
        str: "string",
        int: "integer",
        float: "float",
        bool: "boolean",
        list: "array",
        dict: "dict",
    }.get(type(value), type(value).__name__)


def _needed(gold: Sequence[GoldCall]) -> int:
    """The gold parameters that must be given (without ``""`` among their values)."""
    needed = 0
    for call in gold:
        for options in call.answers.values():
            if "" not in options:
                needed += 1
    return needed


def _augment(ok: list[list[bool]], i: int, owner: list[int], seen: list[bool]) -> bool:
    for j, valid in enumerate(ok[i]):
        if valid and not seen[j]:
            seen[j] = True
            if owner[j] < 0 or _augment(ok, owner[j], owner, seen):
                owner[j] = i
                return True
    return False


def _first_unmatched(ok: list[list[bool]]) -> int:
    """The first row (gold call) that cannot be matched along with the rows before it (a
    bipartite matching grown row by row by augmenting paths); -1 when every row is matched,
    so -1 exactly when a perfect matching exists."""
    n_cols = len(ok[0]) if ok else 0
    owner = [-1] * n_cols
    for i in range(len(ok)):
        if not _augment(ok, i, owner, [False] * n_cols):
            return i
    return -1


def _greedy(ok: list[list[bool]]) -> int:
    """BFCL's pairing: each gold call in order takes the first unused valid predicted call;
    the first gold call left without one (-1: none)."""
    used: set[int] = set()
    for i, row in enumerate(ok):
        j = next((j for j, v in enumerate(row) if v and j not in used), -1)
        if j < 0:
            return i
        used.add(j)
    return -1


def _best_pairing(weight: list[list[int]]) -> list[tuple[int, int]]:
    """The pairs (row, column) of positive weight of a maximum-weight one-to-one pairing
    (every injection tried for up to 7 calls a side, else scipy's assignment)."""
    rows, cols = len(weight), len(weight[0])
    if max(rows, cols) > 7:
        from ._assignment import max_weight_assignment

        matrix = np.array(weight, dtype=np.float64)
        r, c = max_weight_assignment(matrix)
        pairs = zip(r.tolist(), c.tolist(), strict=True)
        return [(i, j) for i, j in pairs if weight[i][j] > 0]
    best: list[tuple[int, int]] = []
    best_value = -1
    if rows <= cols:
        for chosen in itertools.permutations(range(cols), rows):
            value = sum(weight[i][j] for i, j in enumerate(chosen))
            if value > best_value:
                best_value, best = value, list(enumerate(chosen))
    else:
        for chosen in itertools.permutations(range(rows), cols):
            value = sum(weight[i][j] for j, i in enumerate(chosen))
            if value > best_value:
                best_value, best = value, [(i, j) for j, i in enumerate(chosen)]
    return [(i, j) for i, j in best if weight[i][j] > 0]


_OTHER_FUNCTION = (_WRONG_NAME, "", 0, 0)


def _partners(names: list[list[bool]]) -> list[int] | None:
    """Each gold call's one predicted call of its function (-1: none), when no gold call has
    two and no two gold calls share one; else None."""
    partners: list[int] = []
    taken: set[int] = set()
    for row in names:
        columns = [j for j, same in enumerate(row) if same]
        if len(columns) > 1:
            return None
        j = columns[0] if columns else -1
        if j >= 0:
            if j in taken:
                return None
            taken.add(j)
        partners.append(j)
    return partners


def _one_to_one(
    by_name: Mapping[str, Function],
    gold: Sequence[GoldCall],
    pred: Sequence[Call],
    partners: list[int],
    rules: _Rules,
    needed: int,
    given: int,
) -> Verdict:
    """:func:`check_record` of several calls whose pairs of one function share no call: only
    those pairs are checked, they are the best pairing (all of them), and a gold call is matched
    exactly when its pair is valid, by either pairing rule (no pair matrix, no search)."""
    checks = [
        rules.check(by_name[g.name], g, pred[j]) if j >= 0 else _OTHER_FUNCTION
        for g, j in zip(gold, partners, strict=True)
    ]
    tp = sum(c[2] for c in checks)
    fp, fn_ = given - tp, needed - sum(c[3] for c in checks)
    name_ok = len(gold) == len(pred) and -1 not in partners
    if len(pred) != len(gold):
        reason = f"expected {len(gold)} call(s), got {len(pred)}"
        return _ERROR["wrong_count"], reason, name_ok, tp, fp, fn_
    unmatched = next((i for i, c in enumerate(checks) if c[0] >= 0), -1)
    if unmatched < 0:
        return -1, None, name_ok, tp, fp, fn_
    g, j = gold[unmatched], partners[unmatched]
    code, param = checks[unmatched][0], checks[unmatched][1]
    if j < 0:  # no call of its function: the first predicted call is named
        why = f"function: expected '{g.name}', got '{pred[0].name}'"
    else:
        why = rules.why(by_name[g.name], g, pred[j], code, param)
    reason = f"gold call {unmatched} ({g.name}) matches no predicted call: {why}"
    return code, reason, name_ok, tp, fp, fn_


Verdict = tuple[int, str | None, bool, int, int, int]
"""``(error code or -1, reason, names right, arg TP, arg FP, arg FN)`` of one record."""


def check_record(
    functions: Sequence[Function],
    gold: Sequence[GoldCall],
    pred: Sequence[Call] | ParseFailure,
    rules: _Rules,
    bfcl_compat: bool = False,
) -> Verdict:
    """The verdict of one record (see :data:`Verdict`). Every gold call must name one of
    ``functions`` (:meth:`ToolUseStatistic.check` says so before)."""
    if isinstance(pred, ParseFailure):
        needed = _needed(gold)
        reason = f"prediction could not be parsed: {pred.reason}"
        return _ERROR["parse_error"], reason, False, 0, 0, needed
    if not gold:
        if not pred:
            return -1, None, True, 0, 0, 0
        given = sum(len(c.arguments or {}) for c in pred)
        called = ", ".join(c.name for c in pred)
        return _ERROR["unexpected_call"], f"no call expected, got {called}", False, 0, given, 0
    needed = _needed(gold)
    if not pred:
        return _ERROR["no_call"], f"expected {len(gold)} call(s), got none", False, 0, 0, needed
    if len(gold) == 1 and len(pred) == 1:
        g, p = gold[0], pred[0]
        fn = next(f for f in functions if f.name == g.name)
        code, param, tp, found = rules.check(fn, g, p)
        said = rules.why(fn, g, p, code, param) if code >= 0 else None
        given = len(p.arguments or ())
        return code, said, code != _WRONG_NAME, tp, given - tp, needed - found
    given = sum(len(c.arguments or ()) for c in pred)
    by_name = {f.name: f for f in functions}
    names = [[rules.name_ok(g.name, p.name) for p in pred] for g in gold]
    partners = _partners(names)
    if partners is not None:
        return _one_to_one(by_name, gold, pred, partners, rules, needed, given)
    checks = [
        [
            rules.check(by_name[g.name], g, p) if same else _OTHER_FUNCTION
            for p, same in zip(pred, row, strict=True)
        ]
        for g, row in zip(gold, names, strict=True)
    ]
    weight = [
        [(c[2] + 1) if same else 0 for c, same in zip(row, same_row, strict=True)]
        for row, same_row in zip(checks, names, strict=True)
    ]
    pairs = _best_pairing(weight)
    tp = sum(checks[i][j][2] for i, j in pairs)
    found = sum(checks[i][j][3] for i, j in pairs)
    fp, fn_ = given - tp, needed - found
    name_ok = len(gold) == len(pred) and _first_unmatched(names) < 0
    if len(pred) != len(gold):
        reason = f"expected {len(gold)} call(s), got {len(pred)}"
        return _ERROR["wrong_count"], reason, name_ok, tp, fp, fn_
    ok = [[c[0] < 0 for c in row] for row in checks]
    unmatched = _greedy(ok) if bfcl_compat else _first_unmatched(ok)
    if unmatched < 0:
        return -1, None, name_ok, tp, fp, fn_
    row = checks[unmatched]
    same = [j for j, s in enumerate(names[unmatched]) if s]
    wrong = [j for j in range(len(pred)) if row[j][0] >= 0]
    j = next((j for j in same if row[j][0] >= 0), wrong[0] if wrong else 0)
    code = row[j][0]
    g = gold[unmatched]
    why = f"function: expected '{g.name}', got '{pred[j].name}'"
    if names[unmatched][j] and code >= 0:
        why = rules.why(by_name[g.name], g, pred[j], code, row[j][1])
    if code < 0:  # valid alone, but another gold call took it
        code = _ERROR["wrong_count"]
        why = f"predicted call {j} ({pred[j].name}) is the only match of two gold calls"
    reason = f"gold call {unmatched} ({gold[unmatched].name}) matches no predicted call: {why}"
    return code, reason, name_ok, tp, fp, fn_


# ---------------------------------------------------------------------------------------------
# The statistic and the metrics

_ALIASES = {"functions": "function", "gold": "ground_truth"}
"""BFCL's own field names, read where a record lacks pingce's."""


def _gold_or_none(value: Any) -> tuple[GoldCall, ...] | None:
    return None if value is None else parse_gold(value)


class ToolUseStatistic(Statistic):
    """Per record ``[correct, 1, names right, arg TP, arg FP, arg FN, one column per error
    type]``; reasons ``tool_use``: the record's error type and what is wrong."""

    def __init__(
        self,
        gold: str,
        pred: str,
        functions: str,
        category: str,
        strict: bool,
        bfcl_compat: bool,
    ):
        self.gold = gold
        self.pred = pred
        self.functions = functions
        self.category = category
        self.strict = strict
        self.bfcl_compat = bfcl_compat
        self.aliases = {
            name: _ALIASES[name] for name in ("functions", "gold") if getattr(self, name) == name
        }

    @property
    def key(self) -> Hashable:
        return (
            "tool-use",
            self.gold,
            self.pred,
            self.functions,
            self.category,
            self.strict,
            self.bfcl_compat,
        )

    def fields(self) -> list[FieldSpec]:
        specs = [
            FieldSpec(
                self.functions,
                "json",
                required="functions" not in self.aliases,
                parser=parse_functions,
                what="function schemas (BFCL docs or OpenAI tools)",
                echo=False,
            ),
            FieldSpec(
                self.gold,
                "json",
                required=False,  # a record of category irrelevance may leave it out
                parser=parse_gold,
                what="gold calls (BFCL possible answers or [{name, arguments}])",
            ),
            FieldSpec(
                self.pred,
                "json",
                required=False,
                parser=parse_prediction,
                lenient=True,
                what="function calls",
            ),
            FieldSpec(self.category, "string", required=False, choices=CATEGORIES),
        ]
        # BFCL's own names: the same fields, read where a record lacks pingce's (optional both)
        for k, name in ((0, "functions"), (1, "gold")):
            alias = self.aliases.get(name)
            if alias is not None:
                specs.append(dataclasses.replace(specs[k], path=alias, required=False))
        return specs

    def _column(self, table: Table, name: str) -> list[Any]:
        """A field's values, BFCL's name filling in where pingce's is absent."""
        values = list(table.column(getattr(self, name)))
        alias = self.aliases.get(name)
        if alias is not None and alias in table.columns:
            for i, other in enumerate(table.column(alias)):
                if values[i] is None:
                    values[i] = other
        return values

    def columns(self, table: Table) -> tuple[list[Any], list[Any], list[Any]]:
        """Functions, gold and predictions of every record (checked)."""
        found: tuple[list[Any], list[Any], list[Any]] = table.derived(
            ("tool-use", self.key), lambda: self._checked(table)
        )
        return found

    def _checked(self, table: Table) -> tuple[list[Any], list[Any], list[Any]]:
        functions = self._column(table, "functions")
        gold = self._column(table, "gold")
        categories = list(table.column(self.category))
        source = table.source
        for i, fns in enumerate(functions):
            if fns is None:
                alias = self.aliases.get("functions")
                said = f", under {self.functions} or BFCL's {alias}" if alias else ""
                need = f"every record needs the functions offered{said}"
                raise table.missing(i, self.functions, need)
        names_of: dict[int, set[str]] = {}
        for i, calls in enumerate(gold):
            if calls is None:
                if categories[i] == "irrelevance":
                    gold[i] = ()
                    continue
                alias = self.aliases.get("gold")
                said = f", under {self.gold} or BFCL's {alias}" if alias else ""
                need = (
                    f"a record needs its gold calls{said}; one whose right answer is no call has "
                    "gold [] or category irrelevance"
                )
                raise table.missing(i, self.gold, need)
            fns = functions[i]  # records sharing a schema share its parsed tuple
            offered = names_of.get(id(fns))
            if offered is None:
                offered = names_of[id(fns)] = {f.name for f in fns}
            for call in calls:
                if call.name not in offered:
                    raise InputError(
                        f"gold calls function {call.name!r}, which is not among the record's "
                        f"functions ({', '.join(sorted(offered)) or 'none'})",
                        source=source,
                        line=int(table.lines[i]),
                        field=self.gold,
                        value=call.name,
                    )
        preds = [() if p is None else p for p in table.column(self.pred)]
        return functions, gold, preds

    def check(self, table: Table) -> None:
        functions, gold, _ = self.columns(table)
        categories = list(table.column(self.category))
        for i, category in enumerate(categories):
            if category is None:
                categories[i] = infer_category(gold[i], len(functions[i]))
        table.columns[self.category] = categories  # slices see the inferred categories

    def column_names(self, width: int) -> list[str]:
        return ["correct", "records", "names right", "arg TP", "arg FP", "arg FN", *ERROR_TYPES]

    def compute(self, table: Table, context: Context) -> StatBlock:
        functions, gold, preds = self.columns(table)
        items = list(zip(functions, gold, preds, strict=True))
        parts = context.map_records(self.rows, items)
        rows = np.concatenate([part[0] for part in parts])
        reasons = reason_column(itertools.chain.from_iterable(p[1] for p in parts), table.n)
        return StatBlock(width=WIDTH, rows=rows, reasons={"tool_use": reasons})

    def rows(self, items: Sequence[tuple[Any, Any, Any]]) -> tuple[np.ndarray, list[str | None]]:
        """The statistic rows and reasons of ``(functions, gold, pred)`` items."""
        n = len(items)
        verdicts: list[Verdict] = []
        rules = _Rules(self.strict)
        compat = self.bfcl_compat
        with collector_paused():
            for fns, gold, pred in items:
                verdicts.append(check_record(fns, gold, pred, rules, compat))
        codes = np.fromiter((v[0] for v in verdicts), dtype=np.int64, count=n)
        numbers = np.array([v[2:] for v in verdicts], dtype=np.float64).reshape(n, 4)
        reasons = [None if v[0] < 0 else f"{ERROR_TYPES[v[0]]}: {v[1]}" for v in verdicts]
        out = np.zeros((n, WIDTH), dtype=np.float64)
        out[:, 0] = codes < 0
        out[:, 1] = 1.0
        out[:, 2:6] = numbers
        wrong = np.flatnonzero(codes >= 0)
        out[wrong, _BASE + codes[wrong]] = 1.0
        return out, reasons


@dataclass(eq=False)
class _ToolUseArgs:
    gold: str = "gold"
    pred: str = "pred"
    functions: str = "functions"
    category: str = "category"
    strict: bool = False
    bfcl_compat: bool = False

    def statistic(self) -> Statistic:
        return ToolUseStatistic(
            self.gold, self.pred, self.functions, self.category, self.strict, self.bfcl_compat
        )


@dataclass(eq=False)
class ToolUseMean(_ToolUseArgs, Metric):
    """Mean over records of a 0/1 column: the whole verdict or the names."""

    zero_division: ZeroDivision = None
    column: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        self.reason = "tool_use"

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        return safe_divide(summed[..., self.column], summed[..., 1], self.zero_division)

    def count(self, summed: np.ndarray) -> np.ndarray:
        counted: np.ndarray = np.asarray(summed, dtype=np.float64)[..., 1]
        return counted

    def undefined_reason(self, summed: np.ndarray) -> str:
        return "no records"


register_metric(
    "tool_call_accuracy",
    definition="share of records whose calls pass BFCL's AST check (right functions, "
    "parameters, types and acceptable values; no call where none is right).",
    column=0,
)(ToolUseMean)
register_metric(
    "tool_name_accuracy",
    definition="share of records whose predicted function names equal the gold names as a "
    "multiset (no call where none is right).",
    column=2,
)(ToolUseMean)


@register_metric("tool_arg_f1")
@dataclass(eq=False)
class ToolArgF1(_ToolUseArgs, Metric):
    """Micro F1 of arguments: 2·TP / (2·TP + FP + FN) over summed counts."""

    definition = (
        "micro F1 of arguments, 2TP/(2TP+FP+FN): TP valid predicted arguments on calls paired "
        "with a gold call of their function, FP other predicted arguments, FN gold parameters "
        'without "" not validly given.'
    )
    zero_division: ZeroDivision = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.reason = "tool_use"

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        tp = summed[..., 3]
        return safe_divide(2 * tp, 2 * tp + summed[..., 4] + summed[..., 5], self.zero_division)

    def count(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        counted: np.ndarray = summed[..., 3] + summed[..., 4] + summed[..., 5]
        return counted

    def undefined_reason(self, summed: np.ndarray) -> str:
        return "no arguments predicted or expected"


@register_table("tool_errors")
@dataclass(eq=False)
class ToolErrorsTable(_ToolUseArgs, TableMetric):
    """Records per error type (and correct), with their share of all records."""

    def build(self, summed: np.ndarray) -> dict[str, Any]:
        total = float(summed[1])
        counts = {"correct": round(float(summed[0]))}
        for k, name in enumerate(ERROR_TYPES):
            counts[name] = round(float(summed[_BASE + k]))
        return {
            "labels": list(counts),
            "counts": list(counts.values()),
            "share": [c / total if total else None for c in counts.values()],
        }
