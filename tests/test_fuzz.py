"""A fuzz of ``pingce run`` (issue 28, "never wrong silently"): mutated records, formats, options
and suite YAML for every built-in suite (and two generic suite files), with a bounded number of
examples, run in this process through click's runner (a run takes a tenth of a second).

What every run must do, whatever it was given:

1. no traceback: the exit status is 0, 2, 3 or 4, stderr has no ``Traceback``, an exit 2 says
   why on stderr;
2. no exit 0 with changed text: when a run exits 0, every text (and number, and boolean) that
   the suite read from a record is in ``records.jsonl`` as it was written (no mojibake from a
   wrongly guessed encoding, no number that lost digits, no record dropped without a word);
3. an exit 2 leaves nothing in ``--out`` (nor a staging folder beside it);
4. what must not change a metric does not: the same records as JSONL, JSON, CSV, TSV, gzip,
   Parquet, Excel or standard input, in UTF-8 with or without a byte-order mark, UTF-16 or
   GB18030, with their keys in any order, give the same values.

Inputs that are plainly invalid (a quoted boolean in a suite file, a negative --sample, a CSV
quote never closed, ...) must also not exit 0; a model's answer, whatever its text, is never
bad input (no exit 2); a credential in --base-url is written nowhere; the other commands
(``runs``, ``report``, ``view`` with a port out of range) never show a traceback either.

The properties: :func:`test_mutated_records` (records, formats, bytes, options),
:func:`test_mutated_suite_files`, :func:`test_same_records_same_values` (oracle 4),
:func:`test_outputs_store_and_map` (--out, --name, --store, --map, --base-url, ``runs``) and
:func:`test_model_answers_are_never_bad_input`. The suites: the built-in ones with their
packaged examples, and two generic suite files (README's ``ratings`` scale with a nested field,
and the text-overlap metrics).

The defects the fuzz found that are being mended are listed in :data:`KNOWN` by a tag of their
root cause: a failure that :func:`_known_cause` puts under a tag in :data:`KNOWN` is let through
(the property still checks everything else), and each tag has a minimal reproduction in
:data:`REPRODUCTIONS` run by ``test_known_defect``, an expected failure while its tag is in
KNOWN (strict: once the defect is mended the test fails until the tag is removed).

``PINGCE_FUZZ_EXAMPLES=N`` runs N examples per property instead of the CI default;
``PINGCE_FUZZ_FOUND=DIR`` keeps going after a failure and copies each failing case (its files and
command) into DIR instead of failing (for hunting, not for CI).
"""

from __future__ import annotations

import contextlib
import copy
import csv
import gzip
import io
import json
import math
import os
import re
import shutil
import tempfile
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import pingce
from pingce.cli import cli

# ------------------------------------------------------------------------------------ settings


def _examples(default: int) -> int:
    """The examples a property runs: PINGCE_FUZZ_EXAMPLES, else ``default`` (CI)."""
    return int(os.environ.get("PINGCE_FUZZ_EXAMPLES", "0")) or default


def _settings(default: int) -> Any:
    return settings(
        max_examples=_examples(default),
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        print_blob=False,
    )


_FOUND = os.environ.get("PINGCE_FUZZ_FOUND")
"""Hunting mode: a folder to copy failing cases into instead of failing."""

KNOWN: set[str] = set()
"""Root causes of issue 28 still being mended: a failure :func:`_known_cause` tags with one of
these is let through. Remove a tag when its fix is merged (``test_known_defect[tag]`` then
passes, and the fuzz checks those inputs again)."""

# ------------------------------------------------------------------------------------- suites

_EXAMPLES = Path(pingce.__file__).parent / "examples"
_SUITES_DIR = Path(pingce.__file__).parent / "suites"

_RATINGS_YAML = """\
name: ratings
id_field: item_id
labels:
  values: [5, 4, 3, 2, 1]
  aliases: {excellent: "5", poor: "1"}
inputs:
  gold: human.rating
  pred: model_rating
  latency: latency_sec
metrics:
  accuracy: {}
  weighted_accuracy: {}
  qwk: {}
  top2_recall: {metric: recall, positive: ["5", "4"]}
  macro_f1: {zero_division: 0}
  avg_latency_sec: {}
tables:
  confusion_matrix: {}
"""

_TEXT_YAML = """\
name: text-overlap
id_field: id
metrics:
  rouge_1: {metric: text_rouge_n, n: 1}
  rouge_l: {metric: text_rouge_l}
  bleu: {metric: text_bleu}
  corpus_bleu: {metric: text_corpus_bleu}
  chrf: {metric: text_chrf}
  ter: {metric: text_ter}
"""


def _ratings_records() -> list[dict[str, Any]]:
    pairs = [(5, 5), (4, 5), (3, 3), (1, 2), (2, 2), (5, 4), (4, 4), (1, 1), (3, 2), (2, 3)]
    notes = ["很好", "good", "一般般", "太差了😡", "ok", "不错", "fine", "差", "还行", "مقبول"]
    return [
        {
            "item_id": f"r{i:02d}",
            "human": {"rating": gold, "rater": f"标注员{i % 3}"},
            "model_rating": pred if i % 4 else str(pred),
            "latency_sec": round(0.1 + i * 0.37, 3),
            "comment": note,
        }
        for i, ((gold, pred), note) in enumerate(zip(pairs, notes, strict=True))
    ]


def _text_records() -> list[dict[str, Any]]:
    texts = [
        ("甲方应于三十日内付款。", "甲方应在三十日内支付款项。"),
        ("The cat sat on the mat.", ["The cat is on the mat.", "A cat sat on a mat."]),
        ("合同自双方签字之日起生效", "本合同自双方签字盖章之日起生效。"),
        ("乙方不得转包", ["乙方不得将工作转包给第三方。"]),
        ("Payment is due in 30 days.", "Payment is due within thirty days."),
        ("风寒表实证，恶寒无汗", "恶寒重，发热轻，无汗，辨为风寒表实证。"),
        ("", "空的预测"),
        ("hello 世界 🌏", "hello world 🌏"),
    ]
    return [
        {"id": f"t{i}", "pred_text": pred, "gold_text": gold, "source": "人工"}
        for i, (pred, gold) in enumerate(texts)
    ]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").split("\n") if line.strip()]


@dataclass(frozen=True)
class Suite:
    """A suite the fuzz runs: the built-in name or a suite file's text, its example records, and
    what the text oracle must know of its fields."""

    name: str
    records: tuple[dict[str, Any], ...]
    yaml_text: str | None = None
    """A generic suite's file; None for a built-in suite (its YAML is ``suites/<name>.yaml``)."""
    id_field: str | None = "id"
    normalised: frozenset[str] = frozenset()
    """Fields whose text the suite reads as something else (labels, Yes/No): not compared."""
    numbers: frozenset[str] = frozenset()
    """Number fields (read as float64): compared as floats."""
    slices: tuple[str, ...] = ()
    """Fields worth a --slice or --stratify (a list field among them)."""
    parsed: frozenset[str] = frozenset()
    """Fields the suite parses into a shape of its own (calls in several formats)."""
    answers: tuple[str, ...] = ()
    """Fields that hold the model's answer (any text there is an answer, never bad input)."""
    trimmed: frozenset[str] = frozenset()
    """Text fields read without the spaces around them (documented: diagnoses)."""
    values: frozenset[str] = frozenset()
    """Fields read as a value's text (a unit: any JSON scalar, kept as its text)."""
    inferred: frozenset[str] = frozenset()
    """Fields the suite fills in where a record has none (tool-use's category)."""

    @property
    def source_yaml(self) -> str:
        if self.yaml_text is not None:
            return self.yaml_text
        return (_SUITES_DIR / f"{self.name}.yaml").read_text("utf-8")


def _builtin(name: str, **kwargs: Any) -> Suite:
    folder = _EXAMPLES / name.replace("-", "_")
    return Suite(name, tuple(_jsonl(folder / "records.jsonl")), **kwargs)


_CALLS = frozenset({"gold_fn", "pred_fn"})

SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (
        _builtin(
            "contract-risk",
            normalised=frozenset({"gold_level", "pred_level"}),
            numbers=frozenset({"latency_sec"}),
            slices=("contract_type", "gold_level", "gold_rules", "evidence[0].law"),
            parsed=frozenset({"evidence"}),
            answers=("pred_level",),
        ),
        _builtin("function-call", slices=("query",), parsed=_CALLS, answers=("pred_fn",)),
        _builtin("function-call-hf", slices=("query",), parsed=_CALLS, answers=("pred_fn",)),
        _builtin(
            "function-points",
            normalised=frozenset({"gold", "pred"}),
            slices=("task", "gold_items"),
            answers=("pred",),
        ),
        _builtin(
            "tcm-dialogue",
            id_field=None,
            numbers=frozenset({"turn", "confidence"}),
            slices=("dialogue_id", "status", "ambiguous_terms"),
            answers=("pred_diagnosis", "pred_text"),
            trimmed=frozenset({"pred_diagnosis", "gt_diagnosis"}),
            values=frozenset({"dialogue_id"}),
        ),
        _builtin(
            "tool-use",
            slices=("category", "functions"),
            parsed=frozenset({"gold", "pred"}),
            answers=("pred",),
            inferred=frozenset({"category"}),
        ),
        Suite(
            "ratings",
            tuple(_ratings_records()),
            yaml_text=_RATINGS_YAML,
            id_field="item_id",
            normalised=frozenset({"gold", "pred", "model_rating", "human"}),
            numbers=frozenset({"latency_sec"}),
            slices=("comment", "human.rater"),
            answers=("model_rating",),
        ),
        Suite(
            "text-overlap",
            tuple(_text_records()),
            yaml_text=_TEXT_YAML,
            slices=("source",),
            answers=("pred_text",),
        ),
    )
}

# ------------------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Deep:
    """A JSON array nested ``depth`` deep, written as text (json.dumps would recurse)."""

    depth: int

    def text(self) -> str:
        return "[" * self.depth + "]" * self.depth


_TEXTS = (
    "评测：甲方应于三十日内付款。",
    "😀👍🏽 emoji 👨‍👩‍👧",
    "مرحبا שלום \u202eRTL",
    "nul\x00byte",
    "lone \ud800 surrogate",
    "zero\u200bwidth\u200d",
    "e\u0301 combining",
    "\ufeffBOM inside",
    "two\nlines\r\nCRLF",
    "ＦＵＬＬ　ＷＩＤＴＨ１２３",
    "\u2028sep\u2029",
    '"quoted", comma; semi\ttab|pipe',
    "  spaces around  ",
    "𠀀𪚥 astral CJK",
    "\\u4e2d escaped-looking",
    "=1+1",
    "null",
    "true",
    "NaN",
    "123",
    "-0",
    "1e400",
    "高",
    "HIGH",
    " 中 ",
    "Yes",
    "no",
    "DEFINITIVE",
    "[]",
    '{"a": 1}',
    "café naïve",
    "Ã©",  # what UTF-8 é looks like read as cp1252
)
"""Texts that a wrong encoding, a CSV writer or a parser would change."""

_NUMBERS: tuple[int | float, ...] = (
    0,
    -1,
    1,
    2,
    2**31,
    2**53 + 1,
    2**63,
    2**64,
    2**64 + 1,
    -(2**64) - 1,
    10**30,
    0.5,
    -0.0,
    1e-320,
    1e308,
    -1e308,
    1.7976931348623157e308,
    math.nan,
    math.inf,
    -math.inf,
    3.14,
)

_OTHERS: tuple[Any, ...] = (
    None,
    True,
    False,
    [],
    {},
    [None],
    [[]],
    {"": ""},
    [1, "二", None, True],
    {"嵌套": {"更深": ["值", 1]}},
    Deep(64),
    Deep(1100),
    "长" * 20000,
    "x" * 100000,
)


def _fresh(value: Any) -> Any:
    """A copy of a drawn value: the fuzz's constants (``{}``, ``[]``) must not change when a
    later mutation adds to what a record holds (hypothesis replays draws)."""
    return copy.deepcopy(value)


def _values() -> st.SearchStrategy[Any]:
    scalar = st.one_of(
        st.sampled_from(_TEXTS),
        st.sampled_from(_NUMBERS),
        st.sampled_from(_OTHERS),
        st.text(max_size=12),
        st.integers(),
        st.floats(),
    )
    return st.one_of(
        scalar,
        st.lists(scalar, max_size=3),
        st.dictionaries(
            st.sampled_from((*_TEXTS[:8], "name", "arguments", "a")), scalar, max_size=3
        ),
    )


# ------------------------------------------------------------------------------------ mutations

Path_ = tuple[str | int, ...]


def _paths(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every place in a record (its fields, and what they hold)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield (*prefix, i)
            yield from _paths(item, (*prefix, i))


def _parent(record: Any, path: Path_) -> Any:
    for part in path[:-1]:
        record = record[part]  # type: ignore[index]
    return record


_MUTATIONS = (
    *("set",) * 3,
    *("number",) * 2,
    "drop",
    "rename",
    "wrap",
    "add",
    "text",
    "dup_id",
    "swap",
)


def _mutate(data: st.DataObject, records: list[Any], suite: Suite, columnar: bool) -> list[str]:
    """A mutation of one record of ``records`` (in place); its description."""
    kind = data.draw(st.sampled_from(_MUTATIONS + (() if columnar else ("not_object",))))
    i = data.draw(st.integers(0, len(records) - 1))
    record = records[i]
    if kind == "not_object":
        records[i] = data.draw(st.sampled_from([[], 1, "text", None, [record]]))
        return [f"record {i} replaced by {records[i]!r:.40}"]
    if not isinstance(record, dict):
        return []
    if kind == "dup_id":
        if suite.id_field and len(records) > 1 and isinstance(records[i - 1], dict):
            record[suite.id_field] = records[i - 1].get(suite.id_field)
            return [f"record {i}: id of record {i - 1}"]
        return []
    paths = list(_paths(record))
    if kind == "number":  # a number where a number is: huge, negative, NaN, 2**64
        paths = [p for p in paths if type(_parent(record, p)[p[-1]]) in (int, float)]
    if not paths:
        return []
    path = data.draw(st.sampled_from(paths))
    parent = _parent(record, path)
    last = path[-1]
    where = f"record {i} {'.'.join(map(str, path))}"
    if kind == "set":
        parent[last] = _fresh(data.draw(_values()))
        return [f"{where} = {parent[last]!r:.60}"]
    if kind == "number":
        parent[last] = data.draw(st.sampled_from(_NUMBERS))
        return [f"{where} = {parent[last]!r}"]
    if kind == "text":
        parent[last] = data.draw(st.sampled_from(_TEXTS))
        return [f"{where} = {parent[last]!r}"]
    if kind == "drop":
        del parent[last]
        return [f"{where} dropped"]
    if kind == "wrap":
        parent[last] = data.draw(st.sampled_from([[parent[last]], {"value": parent[last]}]))
        return [f"{where} wrapped"]
    if kind == "swap":  # the value's type changed, its content kept where it can be
        value = parent[last]
        parent[last] = _swapped(value, data.draw(st.integers(0, 5)))
        return [f"{where} {value!r:.30} -> {parent[last]!r:.30}"]
    if isinstance(parent, dict):
        if kind == "rename":
            new = data.draw(st.sampled_from((*_TEXTS[:6], "", " id", "ID", str(last).upper())))
            parent[new] = parent.pop(last)
            return [f"{where} renamed {new!r}"]
        if kind == "add":
            new = data.draw(st.sampled_from((*_TEXTS[:6], "extra", "_", "")))
            parent[new] = _fresh(data.draw(_values()))
            return [f"{where}: key {new!r} added"]
    return []


def _swapped(value: Any, to: int) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return [
        text,
        _number(text),
        [value],
        {"value": value},
        None,
        bool(value) if not isinstance(value, bool) else str(value).lower(),
    ][to]


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return len(text)


# -------------------------------------------------------------------------------------- formats


def _dump(value: Any, ascii_only: bool) -> str:
    """JSON text of ``value`` (NaN, Infinity and huge integers as Python writes them; a
    :class:`Deep` as its brackets)."""
    if isinstance(value, Deep):
        return value.text()
    if isinstance(value, dict):
        items = (
            f"{json.dumps(k, ensure_ascii=ascii_only)}: {_dump(v, ascii_only)}"
            for k, v in value.items()
        )
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_dump(v, ascii_only) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


def _cell(value: Any) -> str:
    """A CSV cell: text as it is, numbers and booleans as people write them, lists and objects
    as JSON text, null empty."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return _dump(value, ascii_only=False)


def _columns(records: Sequence[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for record in records:
        names.update(dict.fromkeys(record))
    return list(names)


def _csv_text(records: Sequence[Any], delimiter: str, newline: str, change: str = "none") -> str:
    """CSV (or TSV) of ``records``; ``change``: ``extra_cell`` gives the last row one cell
    more than the header, ``open_quote`` opens a quote in its last cell that never closes."""
    rows = [r if isinstance(r, dict) else {"": r} for r in records]
    names = _columns(rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator=newline)
    writer.writerow(names)
    for i, row in enumerate(rows):
        cells = [_cell(row.get(name)) for name in names]
        if i < len(rows) - 1 or change == "none":
            writer.writerow(cells)
        elif change == "extra_cell":
            writer.writerow([*cells, "surplus"])
        elif change == "open_quote":
            writer.writerow([*cells[:-1], "\x01"])
            text = buffer.getvalue()
            opened = '"' + cells[-1].replace('"', '""')
            return text[: text.rindex("\x01")] + opened + newline
    return buffer.getvalue()


_XLSX_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")


def _for_cells(value: Any) -> Any:
    """What a spreadsheet cell can hold of ``value`` (what the text oracle then expects)."""
    if isinstance(value, str):
        return _XLSX_ILLEGAL.sub("", value)[:32767]  # openpyxl cuts a cell there (Excel's limit)
    if isinstance(value, Deep):
        return value.text()
    if isinstance(value, dict):
        return {_for_cells(k): _for_cells(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_for_cells(v) for v in value]
    return value


def _write_xlsx(records: Sequence[dict[str, Any]], path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    names = _columns(records)
    sheet.append(names)
    for record in records:
        row = []
        for name in names:
            value = record.get(name)
            if isinstance(value, list | dict):
                value = _dump(value, ascii_only=False)
            elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**53:
                value = str(value)  # Excel keeps doubles: a long integer is text, as people type it
            row.append(value)
        sheet.append(row)
    book.save(path)


def _for_arrow(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, Deep):
        return value.text()
    if isinstance(value, dict):
        return {_for_arrow(k): _for_arrow(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_for_arrow(v) for v in value]
    return value


def _write_parquet(records: Sequence[dict[str, Any]], path: Path) -> None:
    """Each column as Arrow types it, or, where its values fit no Arrow type (calls whose
    arguments differ, a number among texts), as text (JSON text for lists and objects)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {}
    for name in _columns(records):
        values = [record.get(name) for record in records]
        try:
            columns[name] = pa.array(values)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            columns[name] = pa.array(
                [v if v is None or isinstance(v, str) else _dump(v, False) for v in values],
                type=pa.string(),
            )
    try:
        pq.write_table(pa.table(columns), path)
    except pa.ArrowException:  # an object without keys: Parquet has no empty struct
        pq.write_table(pa.table({n: _as_json_text(pa, c) for n, c in columns.items()}), path)


def _as_json_text(pa: Any, column: Any) -> Any:
    if not pa.types.is_nested(column.type):
        return column
    return pa.array(
        [None if v is None else _dump(v, False) for v in column.to_pylist()], type=pa.string()
    )


_TEXT_FORMATS = ("jsonl", "json", "csv", "tsv", "jsonl.gz", "csv.gz", "stdin-jsonl", "stdin-csv")
_FORMATS = (*_TEXT_FORMATS, "parquet", "xlsx")
_CELLS = ("csv", "tsv", "csv.gz", "stdin-csv", "xlsx")
"""Formats whose values are cells of text (or typed cells): a number may come back as text."""

_ENCODINGS = ("utf-8", "utf-8", "utf-8-sig", "utf-16", "gb18030", "gb18030!")
"""Encodings of text files; ``!``: passed as --encoding too."""

_BYTE_MUTATIONS = (
    *("none",) * 4,
    "bad_byte",
    "truncate",
    "crlf",
    "blank_lines",
    "nul",
    "extra_cell",
    "open_quote",
)


@dataclass
class Data:
    """Records written to a file (or standard input): what pingce is given, and what the text
    oracle expects it to read (``records``, as the format carries them)."""

    fmt: str
    records: list[Any]
    path: str
    stdin: bytes | None = None
    encoding: str | None = None
    changed_bytes: str = "none"
    written_in: str = "utf-8"
    """The encoding of the bytes (whether or not pingce was told)."""
    must_fail: list[str] = field(default_factory=list)
    """Why what was written cannot be read (a file cut short, a quote never closed, ...)."""
    notes: list[str] = field(default_factory=list)


def _text(records: Sequence[Any], fmt: str, ascii_only: bool, newline: str, change: str) -> str:
    if "jsonl" in fmt:
        return "".join(_dump(r, ascii_only) + newline for r in records)
    if fmt == "json":
        return "[" + ("," + newline).join(_dump(r, ascii_only) for r in records) + "]" + newline
    return _csv_text(records, "\t" if "tsv" in fmt else ",", newline, change)


def _write(
    data: st.DataObject, records: list[Any], fmt: str, folder: Path, *, benign: bool = False
) -> Data:
    """``records`` in format ``fmt`` under ``folder``; with ``benign``, only changes of bytes
    that must not change what is read (encodings with a mark or named, line ends)."""
    folder.mkdir(parents=True, exist_ok=True)
    if fmt in ("parquet", "xlsx"):
        path = folder / f"records.{fmt}"
        if fmt == "parquet":
            carried = [_for_arrow(r) for r in records]
            _write_parquet(carried, path)
        else:
            carried = [_for_cells(r) for r in records]
            _write_xlsx(carried, path)
        return Data(fmt, carried, str(path))
    ascii_only = data.draw(st.booleans())
    newline = data.draw(st.sampled_from(["\n", "\r\n"]))
    change = "none" if benign else data.draw(st.sampled_from(_BYTE_MUTATIONS))
    cells = "csv" in fmt or "tsv" in fmt
    csv_only = change in ("extra_cell", "open_quote")
    if (change in ("crlf", "nul") and cells) or (csv_only and not cells):
        change = "none"  # CRLF in a quoted cell is other text; the others are CSV's own
    text = _text(records, fmt.removeprefix("stdin-"), ascii_only, newline, change)
    must: list[str] = []
    if change in ("extra_cell", "open_quote"):
        must.append(
            {
                "extra_cell": "a row has more cells than the header",
                "open_quote": "a quoted cell never ends",
            }[change]
        )
    encodings = ("utf-8", "utf-8-sig", "utf-16", "gb18030!") if benign else _ENCODINGS
    encoding = data.draw(st.sampled_from(encodings))
    if fmt.startswith("stdin"):
        encoding = encoding.replace("utf-16", "utf-8")  # the mark of a pipe: seldom seen
    if "utf" not in encoding and re.search("[\ud800-\udfff]", text):
        encoding = "utf-8"  # GB18030 has no lone surrogates
    raw = text.encode(encoding.rstrip("!"), "surrogatepass")
    changed = _change_bytes(data, raw, change)
    if change == "nul":
        must.append("the file ends in NUL bytes")
    if change == "truncate" and not cells:
        kept, lost = changed, raw[len(changed) :]
        if lost.strip() and (fmt.removeprefix("stdin-") == "json" or not kept.endswith(b"\n")):
            must.append("the file is cut in the middle of a record")
    raw = changed
    result = Data(
        fmt, records, "", encoding=encoding.rstrip("!") if encoding.endswith("!") else None
    )
    result.must_fail = must
    result.changed_bytes = change
    result.written_in = encoding
    if fmt.startswith("stdin"):
        result.path = "-"
        result.stdin = raw
    else:
        path = folder / f"records.{fmt}"
        path.write_bytes(gzip.compress(raw, mtime=0) if fmt.endswith(".gz") else raw)
        result.path = str(path)
    return result


def _change_bytes(data: st.DataObject, raw: bytes, change: str) -> bytes:
    if change == "bad_byte" and raw:
        at = data.draw(st.integers(0, len(raw) - 1))
        return raw[:at] + b"\xff" + raw[at:]
    if change == "truncate" and raw:
        return raw[: len(raw) - data.draw(st.integers(1, min(len(raw), 40)))]
    if change == "crlf":
        return raw.replace(b"\n", b"\r\n")
    if change == "blank_lines":
        return b"\n\n" + raw.replace(b"\n", b"\n\n") + b"\n  \n"
    if change == "nul":
        return raw + b"\x00\x00"
    return raw


# ---------------------------------------------------------------------------------------- runs


@dataclass
class Outcome:
    """What a run did."""

    args: list[str]
    code: int
    stdout: str
    stderr: str
    traceback: str | None
    out: Path
    folder: Path

    def describe(self) -> str:
        shown = " ".join(a if len(a) < 200 else a[:200] + "..." for a in self.args)
        return (
            f"pingce {shown}\nexit {self.code}\nstderr: {self.stderr[-3000:]}\n"
            f"{self.traceback or ''}"
        )


def _invoke(
    args: list[str], folder: Path, stdin: bytes | None = None, out: Path | None = None
) -> Outcome:
    """``pingce ARGS`` in this process (click's runner); outputs in ``out`` [default:
    ``folder/outputs/out``]."""
    out = out or folder / "outputs" / "out"
    (folder / "outputs").mkdir(parents=True, exist_ok=True)
    full = [*args, "--out", str(out), "--no-progress", "--no-cache"]
    if args[:1] == ["run"]:  # records.jsonl with the input fields, which the checks read back
        full += ["--records-fields", "all"]
    if "--store" not in args and "--name" not in args:
        full.append("--no-store")
    with contextlib.chdir(folder), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the command shows them; pytest would make them errors
        result = CliRunner().invoke(cli, full, input=stdin, catch_exceptions=True)
    trace = None
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        trace = "".join(traceback.format_exception(*result.exc_info))  # type: ignore[misc]
    return Outcome(full, result.exit_code, result.stdout, result.stderr, trace, out, folder)


# -------------------------------------------------------------------------------------- oracle

Leaf = tuple[str, Any]


def _leaves(value: Any, into: set[Leaf], parsed: bool = False) -> None:
    """The texts (keys too), numbers and booleans in ``value``; ``parsed``: a field the suite
    parses into its own shape (calls): its values only, JSON text read as what it holds, and no
    ``"type": "function"`` (OpenAI's wrapping)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key and not parsed:
                into.add(("s", key))
            if not (parsed and key == "type" and item == "function"):
                _leaves(item, into, parsed)
    elif isinstance(value, list):
        for item in value:
            _leaves(item, into, parsed)
    elif isinstance(value, bool):
        into.add(("b", value))
    elif isinstance(value, int | float):
        if math.isfinite(value):
            into.add(("n", value))
    elif isinstance(value, str) and value:
        if parsed and value.lstrip()[:1] in ("[", "{"):
            with contextlib.suppress(ValueError, RecursionError):
                _leaves(json.loads(value), into, parsed)
                return
        into.add(("s", value))


def _field_lacks(
    name: str, value: Any, have: set[Leaf], suite: Suite, cells: bool, as_text: bool
) -> list[str]:
    """What an output record lacks of field ``name`` = ``value`` of an input record: every
    text, number and boolean in it. ``cells``: the format writes a value as a cell of text, and
    a list or object as its JSON text (which a text field keeps as text, and a JSON field
    reads back); ``as_text``: the field is read as a value's text (a slice)."""
    if name in suite.normalised or isinstance(value, Deep):
        return []
    ways = [value]
    if cells and isinstance(value, dict | list):
        ways.append(_dump(value, ascii_only=False))
    if cells and isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        with contextlib.suppress(ValueError, RecursionError):
            ways.append(json.loads(value))
    best: list[str] | None = None
    for way in ways:
        found: set[Leaf] = set()
        _leaves(way, found)
        scalar = not isinstance(way, dict | list)
        lacks = []
        for leaf in found:
            if leaf[0] == "s" and name in suite.trimmed and not leaf[1].strip():
                continue  # read as no diagnosis
            options = {leaf}
            if leaf[0] == "n" and name in suite.numbers:
                options.add(("f", float(leaf[1])))
            if scalar and (cells or as_text):  # read as text, or as its field's kind
                options |= _cell_readings(way)
            if leaf[0] == "s" and name in suite.trimmed:
                options.add(("s", leaf[1].strip()))
            if not options & have:
                lacks.append(f"{name}: {leaf[1]!r}")
        if not lacks:
            return []
        if best is None or len(lacks) < len(best):
            best = lacks
    return best or []


def _cell_readings(value: Any) -> set[Leaf]:
    text = _cell(value)
    options: set[Leaf] = {("s", text)}
    with contextlib.suppress(ValueError, OverflowError):
        number = float(text)
        if math.isfinite(number):
            options |= {("n", number), ("f", number)}
    if text.lower() in ("true", "false"):
        options.add(("b", text.lower() == "true"))
    if isinstance(value, int | float) and not isinstance(value, bool):
        options.add(("s", str(value)))
    return options


def _output_leaves(row: dict[str, Any]) -> set[Leaf]:
    found: set[Leaf] = set()
    _leaves(row.get("fields", {}), found)
    found |= {("f", float(v)) for kind, v in found if kind == "n"}
    if row.get("id") is not None:
        found.add(("s", row["id"]))
    return found


def _lines(path: Path) -> list[str]:
    """The lines of a JSONL file (at newlines only: U+0085 and U+2028 are text in JSON)."""
    return [line for line in path.read_text("utf-8").split("\n") if line]


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@dataclass
class Case:
    """One fuzzed run: the suite, the data, the options and what is expected of them."""

    suite: Suite
    data: Data
    options: list[str] = field(default_factory=list)
    must_fail: list[str] = field(default_factory=list)
    """Why the run must not exit 0 (a plainly invalid option or suite file), if it must not."""
    suite_arg: str = ""
    field_map: dict[str, str] = field(default_factory=dict)
    """--map FIELD=COLUMN given: the text oracle reads COLUMN of the records for FIELD."""
    sampled: bool = False
    explicit_encoding: bool = False
    """A --encoding the fuzz chose at random (the user asked: text may then change)."""
    mutations: list[str] = field(default_factory=list)
    as_text: set[str] = field(default_factory=set)
    """Fields read as a value's text (--slice, --stratify)."""
    slices: list[str] = field(default_factory=list)
    """The --slice fields."""


def _problems(case: Case, outcome: Outcome) -> list[str]:
    """What is wrong with a run (empty when nothing is)."""
    problems: list[str] = []
    if outcome.traceback is not None or "Traceback" in outcome.stderr:
        problems.append("traceback")
    if outcome.code not in (0, 2, 3, 4):
        problems.append(f"exit status {outcome.code}")
    if outcome.code == 2 and not outcome.stderr.strip():
        problems.append("exit 2 without a message")
    if outcome.code == 2:
        outputs = outcome.folder / "outputs"
        left = sorted(str(p.relative_to(outputs)) for p in outputs.rglob("*"))
        if left:
            problems.append(f"exit 2 left {left} in the outputs' folder")
    must = [*case.must_fail, *case.data.must_fail]
    if outcome.code == 0 and must:
        problems += [f"exit 0, but {reason}" for reason in must]
    if outcome.code in (0, 3, 4) and not problems:
        problems += _output_problems(case, outcome)
    return problems


def _output_problems(case: Case, outcome: Outcome) -> list[str]:
    try:
        results = _strict_json((outcome.out / "results.json").read_text("utf-8"))
        rows = [_strict_json(line) for line in _lines(outcome.out / "records.jsonl")]
    except (OSError, ValueError) as exc:
        return [f"outputs not readable as JSON: {exc}"]
    problems = []
    for name, metric in results.get("metrics", {}).items():
        value = metric.get("value")
        if value is not None and not (isinstance(value, int | float) and math.isfinite(value)):
            problems.append(f"metric {name} = {value!r}")
    if outcome.code != 0 or case.explicit_encoding:
        return problems
    inputs = [r for r in case.data.records if isinstance(r, dict)]
    problems += _slice_problems(case, results, inputs)
    cut = case.data.changed_bytes == "truncate"
    if cut:  # the last record lost its end: a CSV cannot tell (a JSON line can)
        rows = rows[:-1]
    elif not case.sampled and len(rows) != _expected_rows(case.data):
        problems.append(f"exit 0 with {len(rows)} records of {_expected_rows(case.data)} written")
    for row in rows:
        closest: list[str] | None = None
        for record in inputs:
            lacking = _lacking(row, record, case)
            if not lacking:
                break
            if closest is None or len(lacking) < len(closest):
                closest = lacking
        else:
            problems.append(
                f"exit 0 with changed text: records.jsonl line {row.get('line')} has "
                f"{_short(row.get('fields'))}; no input record matches (closest lacks "
                f"{(closest or ['(no input records)'])[:4]})"
            )
            break
    return problems


def _slice_problems(case: Case, results: dict[str, Any], inputs: list[Any]) -> list[str]:
    """Each slice of a --slice FIELD is named by a value the records have, as written (its
    text, or its JSON), or ``(missing)``."""
    problems = []
    for key in results.get("slices", {}):
        name, _, shown = key.partition("=")
        if name not in case.slices or name in case.suite.inferred or shown == "(missing)":
            continue
        if not re.fullmatch(r"\w+", name):  # a path: not looked into
            continue
        values = [r[name] for r in inputs if name in r]
        values += [e for v in values if isinstance(v, list) for e in v]  # a slice an element
        if shown in values:
            continue
        with contextlib.suppress(ValueError):
            if json.loads(shown) in values:
                continue
        if case.data.fmt in _CELLS and shown in map(_cell, values):
            continue
        problems.append(f"exit 0 with a slice {key!r}: no record has that value of {name}")
    return problems


def _expected_rows(data: Data) -> int:
    """The records a run of ``data`` reads: a row of cells all empty is skipped (as a blank
    line), every other record is read."""
    if data.fmt not in _CELLS:
        return len(data.records)
    rows = [r if isinstance(r, dict) else {"": r} for r in data.records]
    return sum(any(_cell(v) for v in row.values()) for row in rows)


def _lacking(row: dict[str, Any], record: dict[str, Any], case: Case) -> list[str]:
    """What output record ``row`` lacks of input ``record`` (empty when it was read from it):
    every text, number and boolean of a field read as it was written; of a field the suite parses
    (calls, in several formats and in text), every text and number it shows was in the input."""
    suite = case.suite
    fields = row.get("fields", {})
    have = _output_leaves(row)
    mapped = {
        f: record[case.field_map.get(f, f)] for f in fields if case.field_map.get(f, f) in record
    }
    cells = case.data.fmt in _CELLS or case.data.fmt == "parquet"
    lacking = []
    for name in fields:
        if name in mapped and name not in suite.parsed:
            as_text = name in case.as_text or name in suite.values
            lacking += _field_lacks(name, mapped[name], have, suite, cells, as_text)
    ident = record.get(suite.id_field) if suite.id_field else None
    if ((isinstance(ident, str) and ident) or type(ident) is int) and ("s", str(ident)) not in have:
        lacking.append(f"id {ident!r}")
    for name in suite.parsed & set(fields):
        given = mapped.get(name)
        strings: set[Leaf] = set()
        _leaves(given, strings, parsed=True)
        _leaves(given, strings)  # keys too
        text = "\x00".join(
            [_dump(given, ascii_only=False), *(str(v) for k, v in strings if k == "s")]
        )
        for kind, value in _shown(fields[name]):
            if kind == "n" and (("n", value) in strings or str(value) in text):
                continue
            if kind == "s" and value in text:
                continue
            lacking.append(f"{name}: {value!r} is not in the input")
    return lacking


_STRUCTURE = frozenset({"name", "arguments", "answers", "clause", "law"})


def _shown(value: Any) -> Iterator[Leaf]:
    """The texts and numbers a parsed field shows in records.jsonl (not the keys pingce gives
    calls, nor the text of an unparsed prediction's reason)."""
    if isinstance(value, dict):
        if "reason" in value:
            return
        for key, item in value.items():
            if key not in _STRUCTURE:
                yield ("s", key)
            yield from _shown(item)
    elif isinstance(value, list):
        for item in value:
            yield from _shown(item)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield ("n", value)
    elif isinstance(value, str) and value:
        yield ("s", value)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) < 400 else text[:400] + "..."


# -------------------------------------------------------------------------------- known causes


@dataclass(frozen=True)
class Failure:
    """What :func:`_known_cause` looks at: the case, what the run printed, what was wrong."""

    case: Case
    outcome: Outcome
    problem: str
    """One of what :func:`_problems` (or the property) found wrong."""

    @property
    def trace(self) -> str:
        return self.outcome.traceback or ""

    @property
    def stderr(self) -> str:
        return self.outcome.stderr

    def changed_text(self) -> bool:
        return "exit 0 with changed text" in self.problem


CAUSES: dict[str, Callable[[Failure], bool]] = {
    # --- defects listed in issue 28
    "bad-byte-code-page": lambda f: (
        (f.changed_text() or "records of" in f.problem)
        and f.case.data.changed_bytes == "bad_byte"
        and not f.case.data.encoding
    ),
    "quoted-booleans": lambda f: "a boolean key holds the text" in f.problem,
    "base-url-credentials": lambda f: "credential in --base-url was written" in f.problem,
    "out-unwritable": lambda f: (
        "write_outputs" in f.trace
        and any(e in f.trace for e in ("NotADirectoryError", "FileExistsError", "PermissionError"))
    ),
    "deep-yaml": lambda f: "RecursionError" in f.trace and "/yaml/" in f.trace,
    "duplicate-yaml-keys": lambda f: (
        re.search(r"the suite file names \S+ twice", f.problem) is not None
    ),
    "tcm-csv-turn": lambda f: 'expected an integer turn index (got "' in f.stderr,
    "runs-limit-negative": lambda f: "pingce runs --limit -" in f.problem,
    "view-port-range": lambda f: (
        re.search(r"pingce view --port \d+ --no-browser: exit 1", f.problem) is not None
    ),
    "off-scale-prediction": lambda f: (
        "exit 2 on a model's answer" in f.problem and "unknown label" in f.stderr
    ),
    "similarity-concurrency": lambda f: "similarity.concurrency = " in f.problem,
    "top-k-huge": lambda f: (
        "defaults.top_k = " in f.problem
        or ("grounding/retrieval.py" in f.trace and "Maximum allowed dimension" in f.trace)
    ),
    "normalize-synonyms": lambda f: "defaults.normalize = {'synonyms'" in f.problem,
    "tool-use-huge-int": lambda f: (
        "Integer exceeds 64-bit range" in f.trace and "metrics/tools.py" in f.trace
    ),
    "slice-list-fields": lambda f: (
        re.search(r"exit 0 with a slice ['\"]\w+=\(", f.problem) is not None
    ),
    "latency-1e308": lambda f: "OverflowError" in f.trace and "report/html.py" in f.trace,
    "unterminated-csv-quote": lambda f: "a quoted cell never ends" in f.problem,
    "extra-csv-cells": lambda f: "a row has more cells than the header" in f.problem,
    # --- new: found by this fuzz, not in the list
    "utf16-without-mark": lambda f: "stream does not start with BOM" in f.trace,
    "json-mark-bad-byte": lambda f: "UnicodeDecodeError" in f.trace and "_json_document" in f.trace,
    "gb18030-misread": lambda f: (
        f.changed_text()
        and f.case.data.written_in == "gb18030"
        and f.case.data.changed_bytes == "none"
    ),
    "nested-field-in-cells": lambda f: (
        "where the same records as plain JSONL exit 0" in f.problem
        and re.search(r"field '\w+\.\w+': required field is missing", f.stderr) is not None
    ),
    "call-text-in-records": lambda f: "'_text' is not in the input" in f.problem,
    "suite-name-unchecked": lambda f: "name = '': not a value" in f.problem,
    "map-absent-column": lambda f: "--map names a column no record has" in f.problem,
    "tool-use-flags-unchecked": lambda f: (
        "unhashable type" in f.trace and "engine/plan.py" in f.trace
    ),
    "cell-json-long-int": lambda f: (
        (f.case.data.fmt in _CELLS or f.case.data.fmt == "parquet")
        and re.search(r"-?\d\.\d+e\+\d+ is not in the input", f.problem) is not None
    ),
}
"""Root causes of failures, each told by what its failures look like (the first that matches
names a failure)."""


def _known_cause(case: Case, outcome: Outcome, problem: str) -> str | None:
    """The tag of the root cause of one problem of a run, None when it is a new one."""
    failure = Failure(case, outcome, problem)
    return next((tag for tag, looks in CAUSES.items() if looks(failure)), None)


_found_count = 0


def _check(case: Case, outcome: Outcome, extra: Sequence[str] = ()) -> None:
    """Fail on a problem (of :func:`_problems`, or ``extra``) whose cause is not in
    :data:`KNOWN` (in hunting mode: keep the case)."""
    global _found_count
    problems = [*_problems(case, outcome), *extra]
    causes = {problem: _known_cause(case, outcome, problem) for problem in problems}
    note(f"causes: {sorted(set(map(str, causes.values())))}")
    problems = [problem for problem, cause in causes.items() if cause not in KNOWN]
    if not problems:  # none, or each of a known cause
        return
    cause = ", ".join(sorted({str(causes[p]) for p in problems}))
    report = (
        f"{problems}\nsuite {case.suite.name}, format {case.data.fmt}, encoding "
        f"{case.data.written_in}, bytes {case.data.changed_bytes}, mutations {case.mutations}\n"
        f"{outcome.describe()}"
    )
    if _FOUND:
        _found_count += 1
        keep = Path(_FOUND) / f"{os.getpid()}-{_found_count:04d}"
        shutil.copytree(
            outcome.folder, keep, dirs_exist_ok=True, ignore=shutil.ignore_patterns("outputs")
        )
        if case.data.stdin is not None:
            (keep / "stdin").write_bytes(case.data.stdin)
        (keep / "report.txt").write_text(f"cause: {cause}\n{report}", "utf-8", errors="replace")
        return
    raise AssertionError(report)


# ------------------------------------------------------------------------------------- options

_BAD_SLICE = "no_such_field_xyz"


def _options(
    data: st.DataObject, suite: Suite, n: int
) -> tuple[list[str], list[str], dict[str, Any]]:
    """Random options for a run of ``suite`` on ``n`` records: the arguments, the reasons the
    run must fail (plainly invalid values), and facts the oracle needs."""
    args: list[str] = []
    must: dict[str, str] = {}
    """why the run must fail, by option (the last value of an option given twice wins)"""
    facts: dict[str, Any] = {"sampled": False, "encoding": False, "as_text": set(), "slices": []}
    bootstrap = data.draw(st.sampled_from([0, 0, 5, 20, -1, 2, 1]))
    args += ["--bootstrap", str(bootstrap)]
    if bootstrap < 0:
        must["--bootstrap"] = "--bootstrap is negative"
    for _ in range(data.draw(st.integers(0, 3))):
        option = data.draw(
            st.sampled_from(
                [
                    "sample",
                    "seed",
                    "slice",
                    "fail",
                    "encoding",
                    "ci",
                    "zero",
                    "method",
                    "similarity",
                    "stratify",
                    "laws",
                    "judge",
                ]
            )
        )
        if option == "sample":
            size = data.draw(st.sampled_from([1, 2, n, n + 1, 0, -1, 10**20]))
            args += ["--sample", str(size)]
            facts["sampled"] = True
            must.pop("--sample", None)
            if size < 0:
                must["--sample"] = "--sample is negative"
        elif option == "seed":
            args += ["--seed", str(data.draw(st.sampled_from([1, -1, 2**32, 2**64, -(2**70)])))]
        elif option == "slice":
            name = data.draw(st.sampled_from([*suite.slices, _BAD_SLICE, "id", "", "a[", "x..y"]))
            args += ["--slice", name]
            facts["as_text"].add(name)
            facts["slices"].append(name)
            if name == _BAD_SLICE:
                must["--slice"] = "--slice names a field no record has"
        elif option == "fail":
            which = data.draw(st.sampled_from(["--fail-under", "--fail-over"]))
            metric = data.draw(st.sampled_from(["accuracy", "no_such_metric", "rouge-1", ""]))
            bound = data.draw(
                st.sampled_from(["0.5", "0", "1", "abc", "nan", "inf", "-1", "1e400", ""])
            )
            args += [which, f"{metric}={bound}"]
            if metric == "no_such_metric":
                must[f"gate {metric}"] = "a gate names an unknown metric"
            if bound in ("abc", ""):
                must[f"bound {bound}"] = "a gate's bound is not a number"
        elif option == "encoding":
            name = data.draw(
                st.sampled_from(
                    ["utf-8", "gb18030", "utf-16", "latin-1", "no-such-codec", "", "utf-8-sig"]
                )
            )
            args += ["--encoding", name]
            facts["encoding"] = True
            must.pop("--encoding", None)
            if name == "no-such-codec":
                must["--encoding"] = "--encoding names no codec"
        elif option == "ci":
            level = data.draw(st.sampled_from(["0.9", "0.5", "1", "0", "1.5", "-0.5", "nan"]))
            args += ["--ci-level", level]
            must.pop("--ci-level", None)
            if level in ("1.5", "-0.5", "nan"):
                must["--ci-level"] = "--ci-level is outside (0, 1)"
        elif option == "zero":
            args += ["--zero-division", data.draw(st.sampled_from(["null", "0", "1"]))]
        elif option == "method":
            args += ["--ci-method", data.draw(st.sampled_from(["bca", "percentile", "basic"]))]
            args += ["--bootstrap-method", data.draw(st.sampled_from(["multinomial", "poisson"]))]
        elif option == "similarity":
            name = data.draw(
                st.sampled_from(
                    ["exact", "levenshtein", "lexical", "no_such_backend", "lexical:char-9-1"]
                )
            )
            args += ["--similarity", name]
            must.pop("--similarity", None)
            if name == "no_such_backend":
                must["--similarity"] = "--similarity names no backend"
        elif option == "stratify":
            name = data.draw(st.sampled_from([*suite.slices, _BAD_SLICE]))
            size = data.draw(st.sampled_from([2, n]))
            args += ["--sample", str(size), "--stratify", name]
            facts["as_text"].add(name)
            args += ["--short-strata", data.draw(st.sampled_from(["error", "take-all"]))]
            args += ["--allocation", data.draw(st.sampled_from(["equal", "proportional"]))]
            facts["sampled"] = True
            must.pop("--sample", None)
            must.pop("--stratify", None)
            if name == _BAD_SLICE:
                must["--stratify"] = "--stratify names a field no record has"
        elif option == "laws":
            args += ["--laws", data.draw(st.sampled_from(["builtin", "no/such/laws.csv"]))]
        elif option == "judge":
            args += ["--on-judge-failure", data.draw(st.sampled_from(["null", "skip"]))]
    return args, list(must.values()), facts


# ---------------------------------------------------------------------------------- properties


def _pick_records(data: st.DataObject, suite: Suite) -> list[Any]:
    records = [json.loads(json.dumps(r)) for r in suite.records]
    size = data.draw(st.integers(1, len(records)))
    start = data.draw(st.integers(0, len(records) - size))
    return records[start : start + size]


@_settings(1000)
@given(st.data())
def test_mutated_records(data: st.DataObject) -> None:
    """Records of every suite, mutated (fields dropped, retyped, renamed, huge, NaN, Chinese,
    emoji, RTL, NUL, lone surrogates, duplicate ids, deep nesting), in every format and encoding
    (bad bytes, truncated, blank lines), with random options: never a traceback, never exit 0 with
    changed text, nothing written on exit 2."""
    suite = SUITES[data.draw(st.sampled_from(sorted(SUITES)))]
    fmt = data.draw(st.sampled_from(_FORMATS))
    records = _pick_records(data, suite)
    mutations: list[str] = []
    for _ in range(data.draw(st.integers(0, 3))):
        mutations += _mutate(data, records, suite, columnar=fmt in ("parquet", "xlsx"))
    note(f"suite {suite.name}, format {fmt}, mutations {mutations}")
    options, must, facts = _options(data, suite, len(records))
    with tempfile.TemporaryDirectory(prefix="pingce-fuzz-") as tmp:
        folder = Path(tmp)
        written = _write(data, records, fmt, folder / "in")
        cut = written.changed_bytes == "truncate"  # the last record: what is left of it
        must += _invalid_records(written.records[:-1] if cut else written.records, suite, fmt)
        suite_arg = _suite_arg(suite, folder)
        args = ["run", suite_arg, "--data", written.path]
        if written.encoding:  # before the options: a random --encoding among them wins
            args += ["--encoding", written.encoding]
        args += options
        case = Case(
            suite,
            written,
            options,
            must,
            suite_arg,
            sampled=facts["sampled"],
            explicit_encoding=facts["encoding"],
            mutations=mutations,
            as_text=facts["as_text"],
            slices=facts["slices"],
        )
        _check(case, _invoke(args, folder, written.stdin))


def _invalid_records(records: list[Any], suite: Suite, fmt: str) -> list[str]:
    """Why ``records`` cannot be read whatever the suite: a record that is not an object (in
    JSON), two records with one id."""
    reasons = []
    if fmt not in _CELLS and not all(isinstance(r, dict) for r in records):
        reasons.append("a record is not a JSON object")
    ids = [
        str(r[suite.id_field])
        for r in records
        if isinstance(r, dict)
        and suite.id_field
        and (type(r.get(suite.id_field)) is int or isinstance(r.get(suite.id_field), str))
        and r.get(suite.id_field) != ""
    ]
    if len(ids) != len(set(ids)):
        reasons.append("two records have the same id")
    return reasons


def _suite_arg(suite: Suite, folder: Path) -> str:
    if suite.yaml_text is None:
        return suite.name
    path = folder / f"{suite.name}.yaml"
    path.write_text(suite.yaml_text, "utf-8")
    return str(path)


# ------------------------------------------------------------------------------- suite files

_DEEP_YAML = "__deep__"


def _yaml_places(value: Any, prefix: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every key of a suite file's document with its value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key), item
            yield from _yaml_places(item, (*prefix, key))


_YAML_VALUES: tuple[Any, ...] = (
    "abc",
    "评测",
    "",
    1e20,
    2**64,
    10**30,
    -1,
    0,
    0.5,
    -0.5,
    math.nan,
    math.inf,
    [],
    {},
    None,
    True,
    ["高", 1, None],
    {"a": {"b": {"c": 1}}},
    _DEEP_YAML,
)

_INJECTED: tuple[tuple[Path_, tuple[Any, ...], tuple[Any, ...]], ...] = (
    (("similarity", "concurrency"), ("many", -1, 0, 1.5, "4"), (10**6,)),
    (
        ("defaults", "normalize"),
        ({"synonyms": 5}, {"synonyms": {"开启": 5}}, "yes", {"strip": "false"}),
        ({"strip": True},),
    ),
    (("defaults", "top_k"), (1e20, -3, "5", 2**64, 0.5), (1,)),
    (("defaults", "k"), (0, -1, 1e20, "5"), (1,)),
    (("defaults", "threshold"), (-1, 2, "high", math.nan), (0.0, 1.0)),
    (("defaults", "window"), (-1, 1.5, "2"), (1,)),
    (("defaults", "seed"), (-1, "zero", 0.5), (2**64,)),
    (("defaults", "n_samples"), (0, -5, "10"), (1,)),
    (("defaults", "zero_division"), ("nan", 2, -1), ("null", "0")),
    (("defaults", "strict"), ("false", "no", 0, "true"), (True,)),
    (("id_field",), ("", 5, ["id"]), ("no_such",)),
    (("unit",), ("", ["dialogue_id"], 5), ("no_such",)),
    (("name",), ("", 5, ["x"]), ("../../escape", "评测")),
)
"""Keys (present or not) that suites read, with values outside what they take."""


def _quoted_boolean(value: Any) -> bool:
    if isinstance(value, dict):
        return any(map(_quoted_boolean, value.values()))
    return isinstance(value, str) and value.lower() in ("true", "false", "yes", "no")


def _bool_place(places: list[tuple[Path_, Any]]) -> list[Path_]:
    return [path for path, value in places if isinstance(value, bool)]


def _mutate_yaml(
    data: st.DataObject, doc: dict[str, Any]
) -> tuple[list[str], list[str], list[str]]:
    """A mutation of a suite file's document (in place): its description, why the run must
    fail, and lines of text to add to the file (duplicate keys)."""
    kind = data.draw(
        st.sampled_from(
            ["set", "set", "inject", "quoted_bool", "unknown", "drop", "duplicate", "deep"]
        )
    )
    places = list(_yaml_places(doc))
    if kind == "quoted_bool" and _bool_place(places):
        path = data.draw(st.sampled_from(_bool_place(places)))
        text = data.draw(st.sampled_from(["false", "true", "no", "yes", "off", "0", "False"]))
        _parent(doc, path)[path[-1]] = text
        return (
            [f"{'.'.join(map(str, path))}: {text!r} (quoted)"],
            [f"a boolean key holds the text {text!r}"],
            [],
        )
    if kind == "inject":
        path, invalid, other = data.draw(st.sampled_from(_INJECTED))
        value = _fresh(data.draw(st.sampled_from(invalid + other)))
        parent = doc
        for part in path[:-1]:
            if not isinstance(parent.get(part), dict):
                parent[part] = {}
            parent = parent[part]
        parent[path[-1]] = value
        where = ".".join(map(str, path))
        must = []
        if value in invalid:
            why = "a boolean key holds the text" if _quoted_boolean(value) else "not a value"
            must.append(f"{where} = {value!r}: {why}")
        return [f"{where} = {value!r}"], must, []
    if kind == "unknown":
        dicts = [(), *(p for p, v in places if isinstance(v, dict))]
        path = data.draw(st.sampled_from(dicts))
        target = _parent(doc, (*path, "")) if path else doc
        key = data.draw(st.sampled_from(["treshold", "metrcis", "评测", "positve", "x"]))
        target[key] = 1
        where = ".".join(map(str, (*path, key)))
        return [f"unknown key {where}"], [f"the suite file has an unknown key {where}"], []
    if kind == "duplicate":
        keys = [p for p, _ in places if len(p) == 1]
        key = data.draw(st.sampled_from(keys))
        return (
            [f"duplicate key {key[0]}"],
            [f"the suite file names {key[0]} twice"],
            [f"{key[0]}: null"],
        )
    if not places:
        return [], [], []
    path, _ = data.draw(st.sampled_from(places))
    parent = _parent(doc, path)
    if kind == "drop":
        del parent[path[-1]]
        return [f"{'.'.join(map(str, path))} dropped"], [], []
    if kind == "deep":
        parent[path[-1]] = _DEEP_YAML
        return (
            [f"{'.'.join(map(str, path))} nested 2000 deep"],
            [f"{'.'.join(map(str, path))} is nested 2000 deep"],
            [],
        )
    value = _fresh(data.draw(st.sampled_from(_YAML_VALUES)))
    parent[path[-1]] = value
    return [f"{'.'.join(map(str, path))} = {value!r:.40}"], [], []


def _yaml_text(doc: dict[str, Any], extra: list[str]) -> str:
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, default_flow_style=None)
    deep = "[" * 2000 + "]" * 2000
    text = text.replace(_DEEP_YAML, deep)
    return text + "".join(line + "\n" for line in extra)


@_settings(120)
@given(st.data())
def test_mutated_suite_files(data: st.DataObject) -> None:
    """Suite files (every built-in suite's, and the generic ones) with keys of the wrong type,
    quoted booleans, unknown and duplicate keys, deep nesting and huge numbers, run on the
    suite's example records: never a traceback, nothing written on exit 2, and no exit 0 where
    the file is plainly wrong."""
    suite = SUITES[data.draw(st.sampled_from(sorted(SUITES)))]
    doc = yaml.safe_load(suite.source_yaml)
    described: list[str] = []
    must: list[str] = []
    extra: list[str] = []
    for _ in range(data.draw(st.integers(1, 2))):
        d, m, e = _mutate_yaml(data, doc)
        described += d
        must += m
        extra += e
        if m:  # the last: another mutation could undo what makes the file wrong
            break
    note(f"suite {suite.name}: {described}")
    with tempfile.TemporaryDirectory(prefix="pingce-fuzz-") as tmp:
        folder = Path(tmp)
        path = folder / "suite.yaml"
        path.write_text(_yaml_text(doc, extra), "utf-8")
        records = [json.loads(json.dumps(r)) for r in suite.records]
        written = _write(data, records, "jsonl", folder / "in", benign=True)
        args = ["run", str(path), "--data", written.path, "--bootstrap", "0"]
        if written.encoding:
            args += ["--encoding", written.encoding]
        named = doc.get("id_field", "id")  # the file's own (a mutation may drop or change it)
        read = replace(suite, id_field=named if isinstance(named, str) else None)
        case = Case(read, written, [], must, str(path), mutations=described)
        _check(case, _invoke(args, folder))


# --------------------------------------------------------------- what must not change a metric

_reference: dict[str, dict[str, Any]] = {}


def _values_of(out: Path) -> dict[str, Any]:
    """A run's metric values and per-record values (what a change of format must not change)."""
    results = json.loads((out / "results.json").read_text("utf-8"))
    rows = [json.loads(line) for line in _lines(out / "records.jsonl")]
    return {
        "metrics": {name: m.get("value") for name, m in results["metrics"].items()},
        "records": [row.get("values") for row in rows],
        "ids": [row.get("id") for row in rows],
    }


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (
            a == b
            or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
            or (math.isnan(a) and math.isnan(b))
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _cell_safe(suite: Suite) -> list[dict[str, Any]]:
    """The suite's example records but those with an empty text (an empty cell is a missing
    value: CSV and Excel cannot tell them apart)."""
    return [json.loads(json.dumps(r)) for r in suite.records if "" not in r.values()]


def _reference_values(suite: Suite) -> dict[str, Any]:
    """The suite's example records as plain JSONL: the values every other writing must give."""
    if suite.name not in _reference:
        with tempfile.TemporaryDirectory(prefix="pingce-fuzz-") as tmp:
            folder = Path(tmp)
            path = folder / "records.jsonl"
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _cell_safe(suite))
            path.write_text(text, "utf-8")
            outcome = _invoke(
                ["run", _suite_arg(suite, folder), "--data", str(path), "--bootstrap", "0"], folder
            )
            assert outcome.code == 0, outcome.describe()
            _reference[suite.name] = _values_of(outcome.out)
    return _reference[suite.name]


@_settings(250)
@given(st.data())
def test_same_records_same_values(data: st.DataObject) -> None:
    """The same records in another format (JSON, CSV, TSV, gzip, Parquet, Excel, standard
    input), encoding (a byte-order mark, UTF-16, GB18030 named), line ends, key order, an
    extra field no metric reads, or a column read through --map: exit 0 and the same values."""
    suite = SUITES[data.draw(st.sampled_from(sorted(SUITES)))]
    expected = _reference_values(suite)
    fmt = data.draw(st.sampled_from(_FORMATS))
    records = _cell_safe(suite)
    changes = []
    if data.draw(st.booleans()):
        order = data.draw(st.permutations(range(len(_columns(records)))))
        columns = _columns(records)
        records = [{columns[i]: r[columns[i]] for i in order if columns[i] in r} for r in records]
        changes.append("keys reordered")
    if data.draw(st.booleans()):
        for record in records:
            record["备注_unread"] = "与指标无关"
        changes.append("a field no metric reads")
    field_map: dict[str, str] = {}
    if data.draw(st.booleans()):
        name = data.draw(st.sampled_from(sorted(_read_fields(suite) - {suite.id_field})))
        for record in records:
            if name in record:
                record[f"col_{name}"] = record.pop(name)
        field_map[name] = f"col_{name}"
        changes.append(f"--map {name}=col_{name}")
    note(f"suite {suite.name}, format {fmt}, {changes}")
    with tempfile.TemporaryDirectory(prefix="pingce-fuzz-") as tmp:
        folder = Path(tmp)
        written = _write(data, records, fmt, folder / "in", benign=True)
        args = ["run", _suite_arg(suite, folder), "--data", written.path, "--bootstrap", "0"]
        args += [f"--map={f}={c}" for f, c in field_map.items()]
        if written.encoding:
            args += ["--encoding", written.encoding]
        case = Case(suite, written, [], [], field_map=field_map, mutations=changes)
        outcome = _invoke(args, folder, written.stdin)
        extra = []
        if outcome.code != 0:
            extra.append(f"exit {outcome.code}, where the same records as plain JSONL exit 0")
        elif not _problems(case, outcome):
            got = _values_of(outcome.out)
            if not _same(got, expected):
                diff = {
                    k: (expected["metrics"].get(k), v)
                    for k, v in got["metrics"].items()
                    if not _same(v, expected["metrics"].get(k))
                }
                extra.append(f"values differ from the plain JSONL run's: {diff or 'per record'}")
        _check(case, outcome, extra)


def _read_fields(suite: Suite) -> set[str]:
    return set().union(*(r.keys() for r in suite.records)) & set(
        _reference_fields.setdefault(suite.name, _fields_read(suite))
    )


_reference_fields: dict[str, set[str]] = {}


def _fields_read(suite: Suite) -> set[str]:
    with tempfile.TemporaryDirectory(prefix="pingce-fuzz-") as tmp:
        folder = Path(tmp)
        path = folder / "records.jsonl"
        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in suite.records), "utf-8"
        )
        outcome = _invoke(
            ["run", _suite_arg(suite, folder), "--data", str(path), "--bootstrap", "0"], folder
        )
        rows = _lines(outcome.out / "records.jsonl")
        return {name for line in rows for name in json.loads(line)["fields"]}


# ------------------------------------------------------------ outputs, run store, --map, secrets

_SECRET = "s3cr3t-token"


def _secret_problems(folder: Path) -> list[str]:
    """A credential given on the command line must be written nowhere (outputs, run store)."""
    found = []
    for path in folder.rglob("*"):
        if (
            path.is_file()
            and path.name != "records.jsonl"
            and _SECRET.encode() in path.read_bytes()
        ):
            found.append(str(path.relative_to(folder)))
    return [f"the credential in --base-url was written to {found}"] if found else []


@_settings(150)
@given(st.data())
def test_outputs_store_and_map(data: st.DataObject) -> None:
    """--out where it cannot be written, --name (twice, blank, odd), --store, --base-url with a
    credential (used by no backend here: written nowhere either way), --map (a column renamed,
    an unknown field, malformed, two fields from one column), ``pingce runs --limit``."""
    suite = SUITES[data.draw(st.sampled_from(sorted(SUITES)))]
    records = [json.loads(json.dumps(r)) for r in suite.records]
    must: list[str] = []
    field_map: dict[str, str] = {}
    args: list[str] = []
    with tempfile.TemporaryDirectory(prefix="pingce-fuzz-") as tmp:
        folder = Path(tmp)
        store = folder / "store" / "runs.db"
        args += ["--store", str(store)]
        mapping = data.draw(
            st.sampled_from(["none", "rename", "unknown", "malformed", "twice", "absent"])
        )
        read = sorted(_read_fields(suite) - {suite.id_field})
        if mapping == "rename":
            name = data.draw(st.sampled_from(read))
            for record in records:
                if name in record:
                    record["列 " + name] = record.pop(name)
            field_map[name] = "列 " + name
            args.append(f"--map={name}=列 {name}")
        elif mapping == "unknown":
            args.append("--map=no_such_field=id")
            must.append("--map names a field the suite does not read")
        elif mapping == "malformed":
            args.append("--map=" + data.draw(st.sampled_from(["x", "=y", "a=", "", "a=b=c"])))
            must.append("--map is not FIELD=COLUMN")
        elif mapping == "twice" and len(read) > 1:
            args += [f"--map={read[0]}=shared", f"--map={read[1]}=shared"]
            must.append("two fields are read from one column")
        elif mapping == "absent":
            args.append(f"--map={data.draw(st.sampled_from(read))}=no_such_column")
            must.append("--map names a column no record has")
        if data.draw(st.booleans()):
            args += ["--base-url", f"https://user:{_SECRET}@127.0.0.1:9/v1?key={_SECRET}"]
        out_kind = data.draw(st.sampled_from(["fresh", "fresh", "file", "under_file", "nested"]))
        name = data.draw(
            st.sampled_from([None, None, "fuzz-run", "", " ", "a/b", "评测 运行", "x" * 300])
        )
        if name is not None:
            args += ["--name", name]
            if not name.strip():
                must.append("--name is blank")
        written = _write(data, records, "jsonl", folder / "in", benign=True)
        run = ["run", _suite_arg(suite, folder), "--data", written.path, "--bootstrap", "0", *args]
        if written.encoding:
            run += ["--encoding", written.encoding]
        outputs = folder / "outputs"
        outputs.mkdir()
        if out_kind == "file":
            (outputs / "out").write_text("a file where the outputs' folder goes")
            must.append("--out is a file")
        elif out_kind == "under_file":
            (outputs / "out").write_text("a file")
            must.append("--out is under a file")
        case = Case(suite, written, args, must, field_map=field_map, mutations=[mapping, out_kind])
        out = {"nested": outputs / "a" / "b" / "out", "under_file": outputs / "out" / "sub"}.get(
            out_kind, outputs / "out"
        )
        outcome = _invoke(run, folder, out=out)
        if out_kind in ("file", "under_file") and outcome.code == 2:  # what the run was given
            (outputs / "out").unlink()
        extra = _secret_problems(folder)
        if name is not None and name.strip() and outcome.code == 0:
            again = _invoke(run, folder / "again")
            if again.code != 2:
                extra.append(f"the same --name twice: the second run exits {again.code}")
        limit = data.draw(st.sampled_from([-1, 0, 1, 5, 10**20]))
        listed = _invoke_plain(
            ["runs", "--limit", str(limit), "--store", str(store), "--json"], folder
        )
        if listed.traceback or listed.code not in (0, 2) or (limit < 0 and listed.code == 0):
            said = listed.traceback or listed.stderr
            extra.append(f"pingce runs --limit {limit}: exit {listed.code} {said}")
        extra += _other_command_problems(data, store, folder)
        _check(case, outcome, extra)


def _other_command_problems(data: st.DataObject, store: Path, folder: Path) -> list[str]:
    """``pingce runs show|rm NAME``, ``report NAME``, ``view --port P`` (a port that cannot be
    bound: view would otherwise serve until stopped) on the run store: exit 0 or 2, no
    traceback."""
    name = data.draw(st.sampled_from(["fuzz-run", "no-such-run", "", "评测 运行", "%", "'; --"]))
    command = data.draw(
        st.sampled_from(
            [
                ["runs", "show", name],
                ["runs", "rm", name],
                ["report", name],
                ["view", "--port", data.draw(st.sampled_from(["99999", "65536"])), "--no-browser"],
            ]
        )
    )
    outcome = _invoke_plain([*command, "--store", str(store)], folder)
    if outcome.traceback or "Traceback" in outcome.stderr or outcome.code not in (0, 2):
        return [f"pingce {' '.join(command)}: exit {outcome.code} {outcome.traceback or ''}"]
    if command[0] == "view" and outcome.code != 2:
        return [f"pingce {' '.join(command)}: exit {outcome.code}, a port out of range"]
    if outcome.code == 2 and not outcome.stderr.strip():
        return [f"pingce {' '.join(command)}: exit 2 without a message"]
    return []


def _invoke_plain(args: list[str], folder: Path) -> Outcome:
    """A command other than run (no --out)."""
    with contextlib.chdir(folder), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = CliRunner().invoke(cli, args, catch_exceptions=True)
    trace = None
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        trace = "".join(traceback.format_exception(*result.exc_info))  # type: ignore[misc]
    return Outcome(args, result.exit_code, result.stdout, result.stderr, trace, folder, folder)


# ------------------------------------------------------------------------------ model answers


@_settings(200)
@given(st.data())
def test_model_answers_are_never_bad_input(data: st.DataObject) -> None:
    """Any text in a field that holds the model's answer (a label off the scale, a call that
    does not parse, emoji) is an answer to score, not bad input: never exit 2."""
    suite = SUITES[data.draw(st.sampled_from(sorted(SUITES)))]
    records = [json.loads(json.dumps(r)) for r in suite.records]
    holders = [
        (i, name)
        for i, r in enumerate(records)
        for name in suite.answers
        if r.get(name) is not None
    ]
    i, name = data.draw(st.sampled_from(holders))
    answer = data.draw(
        st.one_of(
            st.sampled_from([t for t in _TEXTS if not re.search("[\ud800-\udfff]", t)]),
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
        )
    )
    records[i][name] = answer
    note(f"suite {suite.name}: record {i} {name} = {answer!r}")
    with tempfile.TemporaryDirectory(prefix="pingce-fuzz-") as tmp:
        folder = Path(tmp)
        written = _write(data, records, "jsonl", folder / "in", benign=True)
        args = ["run", _suite_arg(suite, folder), "--data", written.path, "--bootstrap", "0"]
        if written.encoding:
            args += ["--encoding", written.encoding]
        case = Case(suite, written, mutations=[f"record {i} {name} = {answer!r}"])
        outcome = _invoke(args, folder)
        extra = [f"exit 2 on a model's answer ({name} = {answer!r})"] if outcome.code == 2 else []
        _check(case, outcome, extra)


# ------------------------------------------------------------------------ known defects, alone


def _examples_file(suite: str, folder: Path, n: int | None = None) -> Path:
    path = folder / "records.jsonl"
    records = SUITES[suite].records[:n]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


def _function_call_csv(n: int) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "gold_fn", "pred_fn"])
    for r in SUITES["function-call"].records[:n]:
        writer.writerow([r["id"], _dump(r["gold_fn"], False), _dump(r["pred_fn"], False)])
    return buffer.getvalue()


def _no_traceback_exit_2(outcome: Outcome) -> None:
    assert outcome.traceback is None, outcome.describe()
    assert outcome.code == 2 and outcome.stderr.strip(), outcome.describe()
    assert not any((outcome.folder / "outputs").iterdir()), outcome.describe()


def _suite_file(folder: Path, suite: str, edit: Callable[[str], str]) -> str:
    path = folder / "suite.yaml"
    path.write_text(edit((_SUITES_DIR / f"{suite}.yaml").read_text("utf-8")), "utf-8")
    return str(path)


def _repro_bad_byte_code_page(folder: Path) -> None:
    """A UTF-8 CSV with one byte 0xff: exit 2 naming the byte, not read as Cyrillic."""
    raw = _function_call_csv(3).encode()
    at = raw.index(b"seed-02")
    (folder / "records.csv").write_bytes(raw[:at] + b"\xff" + raw[at:])
    outcome = _invoke(["run", "function-call", "--data", str(folder / "records.csv")], folder)
    _no_traceback_exit_2(outcome)


def _repro_quoted_booleans(folder: Path) -> None:
    """``strict: "false"`` (a text) in a suite file: exit 2, not strict (a non-empty text)."""
    suite = _suite_file(folder, "tool-use", lambda t: t.replace("strict: false", 'strict: "false"'))
    data = _examples_file("tool-use", folder)
    _no_traceback_exit_2(_invoke(["run", suite, "--data", str(data)], folder))


def _repro_base_url_credentials(folder: Path) -> None:
    """A key in --base-url is not written to the run store."""
    data = _examples_file("function-points", folder)
    store = folder / "runs.db"
    url = f"https://user:{_SECRET}@127.0.0.1:9/v1"
    outcome = _invoke(
        ["run", "function-points", "--data", str(data), "--base-url", url, "--store", str(store)],
        folder,
    )
    assert outcome.code == 0, outcome.describe()
    assert _SECRET.encode() not in store.read_bytes()


def _repro_out_unwritable(folder: Path) -> None:
    """--out under a file: exit 2 with a message, no traceback."""
    data = _examples_file("function-points", folder)
    (folder / "outputs").mkdir()
    (folder / "outputs" / "file").write_text("a file")
    outcome = _invoke(
        ["run", "function-points", "--data", str(data)],
        folder,
        out=folder / "outputs" / "file" / "out",
    )
    assert outcome.traceback is None and outcome.code == 2, outcome.describe()


def _repro_deep_yaml(folder: Path) -> None:
    """A suite file nested 2000 deep: exit 2 with a message, no RecursionError."""
    deep = "[" * 2000 + "]" * 2000
    suite = _suite_file(
        folder,
        "function-points",
        lambda t: t.replace("judge_accuracy: {}", f"judge_accuracy: {deep}"),
    )
    data = _examples_file("function-points", folder)
    _no_traceback_exit_2(_invoke(["run", suite, "--data", str(data)], folder))


def _repro_duplicate_yaml_keys(folder: Path) -> None:
    """A key twice in a suite file (YAML keeps the last silently): exit 2."""
    suite = _suite_file(folder, "function-points", lambda t: t + "name: another-name\n")
    data = _examples_file("function-points", folder)
    _no_traceback_exit_2(_invoke(["run", suite, "--data", str(data)], folder))


def _repro_tcm_csv_turn(folder: Path) -> None:
    """tcm-dialogue's examples as CSV (turn a cell "1"): read as the JSONL is."""
    records = [dict(r) for r in SUITES["tcm-dialogue"].records]
    (folder / "records.csv").write_text(_csv_text(records, ",", "\n"), "utf-8")
    outcome = _invoke(["run", "tcm-dialogue", "--data", str(folder / "records.csv")], folder)
    assert outcome.code == 0, outcome.describe()


def _repro_runs_limit_negative(folder: Path) -> None:
    """``pingce runs --limit -1``: exit 2."""
    outcome = _invoke_plain(["runs", "--limit", "-1", "--store", str(folder / "runs.db")], folder)
    assert outcome.traceback is None and outcome.code == 2, outcome.describe()


def _repro_view_port_range(folder: Path) -> None:
    """``pingce view --port 99999``: exit 2 with a message, no OverflowError."""
    outcome = _invoke_plain(["view", "--port", "99999", "--no-browser"], folder)
    assert outcome.traceback is None and outcome.code == 2, outcome.describe()


def _repro_off_scale_prediction(folder: Path) -> None:
    """A predicted level off the scale is a wrong answer (the model's answer is never bad
    input), not exit 2."""
    records = [dict(r) for r in SUITES["contract-risk"].records]
    records[0]["pred_level"] = "超高"
    path = folder / "records.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    outcome = _invoke(["run", "contract-risk", "--data", str(path)], folder)
    assert outcome.code == 0, outcome.describe()


def _repro_slice_list_fields(folder: Path) -> None:
    """--slice on a field of lists: the slices are named by what the records hold (its
    elements, or its JSON), not by a Python tuple."""
    data = _examples_file("contract-risk", folder)
    outcome = _invoke(
        ["run", "contract-risk", "--data", str(data), "--slice", "gold_rules"], folder
    )
    assert outcome.code in (0, 2) and outcome.traceback is None, outcome.describe()
    if outcome.code == 0:
        slices = json.loads((outcome.out / "results.json").read_text("utf-8"))["slices"]
        assert not [key for key in slices if key.startswith("gold_rules=(")], list(slices)[:3]


def _repro_latency_1e308(folder: Path) -> None:
    """Latencies of 1e308 seconds: no OverflowError in report.html, no infinite mean, no silent
    null."""
    records = [dict(r) for r in SUITES["contract-risk"].records[:5]]
    for record in records:
        record["latency_sec"] = 1e308
    path = folder / "records.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    outcome = _invoke(["run", "contract-risk", "--data", str(path)], folder)
    assert outcome.traceback is None and outcome.code in (0, 2), outcome.describe()
    if outcome.code == 0:
        metrics = json.loads((outcome.out / "results.json").read_text("utf-8"))["metrics"]
        latency = metrics["avg_latency_sec"]
        # the mean of 1e308s is 1e308; a sum that overflows 64-bit floats may instead be null,
        # with the reason saying so, but never infinite and never a silent null
        if latency["value"] is None:
            assert "finite" in (latency.get("undefined_reason") or ""), latency
        else:
            assert math.isclose(latency["value"], 1e308), latency


def _repro_similarity_concurrency(folder: Path) -> None:
    """``similarity: {concurrency: many}`` (or -1): exit 2, whatever the backend."""
    suite = _suite_file(folder, "function-points", lambda t: t.replace("16", "many"))
    data = _examples_file("function-points", folder)
    _no_traceback_exit_2(_invoke(["run", suite, "--data", str(data)], folder))


def _repro_top_k_huge(folder: Path) -> None:
    """``top_k: 18446744073709551616``: exit 2 with a message, no numpy error."""
    suite = _suite_file(folder, "contract-risk", lambda t: t.replace("top_k: 5", f"top_k: {2**64}"))
    data = _examples_file("contract-risk", folder, 5)
    _no_traceback_exit_2(_invoke(["run", suite, "--data", str(data)], folder))


def _repro_normalize_synonyms(folder: Path) -> None:
    """``normalize: {synonyms: {开启: 5}}`` (a synonym that is not text): exit 2."""
    edit = lambda t: t.replace("normalize: null", "normalize: {synonyms: {开启: 5}}")  # noqa: E731
    suite = _suite_file(folder, "function-call", edit)
    data = _examples_file("function-call", folder)
    _no_traceback_exit_2(_invoke(["run", suite, "--data", str(data)], folder))


def _repro_tool_use_huge_int(folder: Path) -> None:
    """An integer beyond 64 bits in a tool-use record's functions: no traceback."""
    records = [json.loads(json.dumps(r)) for r in SUITES["tool-use"].records[:3]]
    records[0]["functions"][0]["parameters"]["properties"]["base"]["maximum"] = 2**64
    path = folder / "records.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    outcome = _invoke(["run", "tool-use", "--data", str(path)], folder)
    assert outcome.traceback is None and outcome.code in (0, 2), outcome.describe()


def _repro_suite_name_unchecked(folder: Path) -> None:
    """A suite's ``name`` is a name: empty is refused, and ``../../x`` does not put the
    default outputs outside pingce-out."""
    data = _examples_file("function-points", folder)
    empty = _suite_file(
        folder, "function-points", lambda t: t.replace("name: function-points", 'name: ""')
    )
    _no_traceback_exit_2(_invoke(["run", empty, "--data", str(data)], folder))
    up = _suite_file(
        folder, "function-points", lambda t: t.replace("name: function-points", "name: ../../up")
    )
    work = folder / "a" / "b"
    work.mkdir(parents=True)
    with contextlib.chdir(work), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = CliRunner().invoke(cli, ["run", up, "--data", str(data), "--no-store"])
    assert result.exit_code == 2 or not list(work.parent.glob("up-*")), result.output


def _repro_cell_json_long_int(folder: Path) -> None:
    """A call's argument 2**64 + 1 in a CSV cell's JSON: read as that integer (as JSONL reads
    it), not as the float 1.8446744073709552e+19."""
    records = [json.loads(json.dumps(r)) for r in SUITES["function-call"].records[:2]]
    for name in ("gold_fn", "pred_fn"):
        records[0][name][0]["arguments"]["room"] = 2**64 + 1
    rows = [{k: r[k] for k in ("id", "gold_fn", "pred_fn")} for r in records]
    (folder / "records.csv").write_text(_csv_text(rows, ",", "\n"), "utf-8")
    outcome = _invoke(["run", "function-call", "--data", str(folder / "records.csv")], folder)
    assert outcome.code in (0, 2) and outcome.traceback is None, outcome.describe()
    if outcome.code == 0:
        assert str(2**64 + 1) in (outcome.out / "records.jsonl").read_text("utf-8")


def _repro_map_absent_column(folder: Path) -> None:
    """``--map latency_sec=latency`` where no record has a column latency (a typo): exit 2,
    as --slice on a field no record has; not a null average latency."""
    data = _examples_file("contract-risk", folder, 5)
    args = ["run", "contract-risk", "--data", str(data), "--map", "latency_sec=latency"]
    _no_traceback_exit_2(_invoke(args, folder))


def _repro_tool_use_flags_unchecked(folder: Path) -> None:
    """``strict: []`` in a tool-use suite file: exit 2 naming the key, not a TypeError."""
    suite = _suite_file(folder, "tool-use", lambda t: t.replace("strict: false", "strict: []"))
    data = _examples_file("tool-use", folder)
    _no_traceback_exit_2(_invoke(["run", suite, "--data", str(data)], folder))


def _repro_unterminated_csv_quote(folder: Path) -> None:
    """A CSV whose last cell opens a quote that never closes: exit 2, not a label read with
    the line end in it."""
    records = [dict(r) for r in SUITES["function-points"].records[:3]]
    (folder / "records.csv").write_text(_csv_text(records, ",", "\n", "open_quote"), "utf-8")
    outcome = _invoke(["run", "function-points", "--data", str(folder / "records.csv")], folder)
    _no_traceback_exit_2(outcome)


def _repro_extra_csv_cells(folder: Path) -> None:
    """A CSV row with more cells than the header: exit 2, not the surplus dropped."""
    records = [dict(r) for r in SUITES["function-points"].records[:3]]
    (folder / "records.csv").write_text(_csv_text(records, ",", "\n", "extra_cell"), "utf-8")
    outcome = _invoke(["run", "function-points", "--data", str(folder / "records.csv")], folder)
    _no_traceback_exit_2(outcome)


def _repro_utf16_without_mark(folder: Path) -> None:
    """--encoding utf-16 on a file without a byte-order mark: exit 2, no traceback."""
    data = _examples_file("function-points", folder, 2)
    _no_traceback_exit_2(
        _invoke(["run", "function-points", "--data", str(data), "--encoding", "utf-16"], folder)
    )


def _repro_json_mark_bad_byte(folder: Path) -> None:
    """A JSON array with a UTF-8 byte-order mark and a byte 0xff: exit 2, no traceback."""
    text = json.dumps(list(SUITES["function-points"].records[:2]), ensure_ascii=False)
    raw = b"\xef\xbb\xbf" + text.encode()
    at = raw.index("临时".encode())
    (folder / "records.json").write_bytes(raw[:at] + b"\xff" + raw[at:])
    outcome = _invoke(["run", "function-points", "--data", str(folder / "records.json")], folder)
    _no_traceback_exit_2(outcome)


def _repro_gb18030_misread(folder: Path) -> None:
    """A short GB18030 CSV (Excel's on a Chinese Windows) is read as GB18030, not as Thai."""
    rows = _function_call_csv(2).splitlines(keepends=True)
    (folder / "records.csv").write_bytes((rows[0] + rows[2]).encode("gb18030"))
    outcome = _invoke(["run", "function-call", "--data", str(folder / "records.csv")], folder)
    assert outcome.code in (0, 2), outcome.describe()
    if outcome.code == 0:
        assert "卧室" in (outcome.out / "records.jsonl").read_text("utf-8")


def _repro_nested_field_in_cells(folder: Path) -> None:
    """A suite field with a path (the README's ``gold: human.rating``) can be given in a CSV:
    as a column of that name, or as the JSON text of its object."""
    suite = folder / "ratings.yaml"
    suite.write_text(_RATINGS_YAML, "utf-8")
    records = [dict(r) for r in SUITES["ratings"].records]
    flat = [
        {**{k: v for k, v in r.items() if k != "human"}, "human.rating": r["human"]["rating"]}
        for r in records
    ]
    codes = []
    for name, rows in (("flat.csv", flat), ("json.csv", records)):
        (folder / name).write_text(_csv_text(rows, ",", "\n"), "utf-8")
        codes.append(
            _invoke(["run", str(suite), "--data", str(folder / name)], folder / name[:4]).code
        )
    assert 0 in codes, codes


def _repro_call_text_in_records(folder: Path) -> None:
    """An argument beyond 64 bits: records.jsonl shows calls as {name, arguments} (no private
    ``_text``), the integer exact."""
    path = folder / "records.jsonl"
    call = {"name": "f", "arguments": {"x": 1}}
    big = {"name": "f", "arguments": {"x": -(2**64) - 1}}
    lines = [
        {"id": "a", "gold_fn": [call], "pred_fn": [call]},
        {"id": "b", "gold_fn": [call], "pred_fn": [big]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), "utf-8")
    outcome = _invoke(["run", "function-call", "--data", str(path)], folder)
    assert outcome.code == 0, outcome.describe()
    text = (outcome.out / "records.jsonl").read_text("utf-8")
    assert "_text" not in text and str(-(2**64) - 1) in text


REPRODUCTIONS: dict[str, Callable[[Path], None]] = {
    "bad-byte-code-page": _repro_bad_byte_code_page,
    "quoted-booleans": _repro_quoted_booleans,
    "base-url-credentials": _repro_base_url_credentials,
    "out-unwritable": _repro_out_unwritable,
    "deep-yaml": _repro_deep_yaml,
    "duplicate-yaml-keys": _repro_duplicate_yaml_keys,
    "tcm-csv-turn": _repro_tcm_csv_turn,
    "runs-limit-negative": _repro_runs_limit_negative,
    "view-port-range": _repro_view_port_range,
    "off-scale-prediction": _repro_off_scale_prediction,
    "slice-list-fields": _repro_slice_list_fields,
    "latency-1e308": _repro_latency_1e308,
    "similarity-concurrency": _repro_similarity_concurrency,
    "top-k-huge": _repro_top_k_huge,
    "normalize-synonyms": _repro_normalize_synonyms,
    "tool-use-huge-int": _repro_tool_use_huge_int,
    "suite-name-unchecked": _repro_suite_name_unchecked,
    "cell-json-long-int": _repro_cell_json_long_int,
    "map-absent-column": _repro_map_absent_column,
    "tool-use-flags-unchecked": _repro_tool_use_flags_unchecked,
    "unterminated-csv-quote": _repro_unterminated_csv_quote,
    "extra-csv-cells": _repro_extra_csv_cells,
    "utf16-without-mark": _repro_utf16_without_mark,
    "json-mark-bad-byte": _repro_json_mark_bad_byte,
    "gb18030-misread": _repro_gb18030_misread,
    "nested-field-in-cells": _repro_nested_field_in_cells,
    "call-text-in-records": _repro_call_text_in_records,
}
"""A minimal reproduction of each root cause the fuzz tells apart: it asserts what pingce must
do, so it fails while the defect is there."""


def test_every_cause_is_reproduced() -> None:
    assert set(CAUSES) == set(REPRODUCTIONS)
    assert set(CAUSES) >= KNOWN


@pytest.mark.parametrize(
    "tag",
    [
        pytest.param(
            tag,
            marks=pytest.mark.xfail(
                strict=True, reason=f"{tag}: in KNOWN; remove it from KNOWN once mended"
            ),
        )
        if tag in KNOWN
        else tag
        for tag in REPRODUCTIONS
    ],
)
def test_known_defect(tag: str, tmp_path: Path) -> None:
    """Each root cause alone: an expected failure while its tag is in :data:`KNOWN`; when it
    passes, the defect is mended and the tag must leave KNOWN (strict)."""
    REPRODUCTIONS[tag](tmp_path)
