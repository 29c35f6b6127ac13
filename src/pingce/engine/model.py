"""The model phase (``--model``): before the records are loaded for scoring, the model under
test answers every record, and its answers fill the suite's prediction field.

The suite's ``model:`` block (:class:`~pingce.suites.spec.ModelSpec`) names the prompt field,
the tools field(s) and the prediction field. The raw records are read once (every field kept, so
``predictions.jsonl`` is the input with the prediction filled); each becomes one request
(:mod:`pingce.predict.requests`); :class:`~pingce.predict.ChatModel` asks for all of them
through the cache; then the filled records go to the ordinary loader with their own file name
and line numbers, so every later error and every record row names the input line.

A record whose call failed after its retries has no prediction: it is never scored as a wrong
answer. :func:`mark_model_failures` leaves it out of every statistic that reads the prediction
(or the latency) field, with the reason, and the judge-failure policy (``--on-judge-failure``)
makes those metrics null with the count, or computes them over the other records.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, OptionError, SuiteError
from ..metrics.protocol import LEFT_OUT, MODEL_FAILED
from ..predict import AnswerCache, messages_of, openai_tools
from ..predict.client import DEFAULT_PARAMETERS
from ..predict.registry import provider_entry
from ..progress import ProgressHook
from ..readers import (
    Block,
    Reading,
    Wanted,
    frame_reading,
    is_frame,
    iterable_reading,
    path_reading,
)
from ..records import REPEAT_FIELDS, Table, parse_path
from ..remote.cache import cache_path
from ..remote.http import RetryPolicy
from ..remote.toolcalls import restore_names
from ..remote.usage import token_count
from ..suites.spec import ModelSpec
from .fields import field_map
from .plan import Plan, StatBlocks

__all__ = [
    "CALL_KEYS",
    "Answered",
    "ask_model",
    "call_columns",
    "mark_model_failures",
    "model_fields",
    "model_plan",
]

PREDICTIONS_FILE = "predictions.jsonl"

CALL_KEYS = (
    "messages",
    "tools",
    "answer",
    "error",
    "prompt_tokens",
    "completion_tokens",
    "latency_sec",
    "cached",
    "cost",
    "predictions_line",
)
"""What records.jsonl's ``"model"`` keeps of each record's call (``--model``): the messages
sent, the names of the tools sent, the whole answer (the ``chat.completion``: content, tool
calls, usage), why the call failed, the answer's prompt and completion tokens, the seconds it
took (for a cached answer: when first asked), whether the cache answered, its cost (only where
the suite's ``model:`` block sets a price: none by default) and the record's line in
predictions.jsonl. predictions.jsonl holds the input and the prediction field, but neither the
messages as sent nor the tokens, latency and cache of each call: records.jsonl keeps them, so
one line says what was asked and what was answered."""


@dataclass
class Answered:
    """The records with the model's answers, and what asking took."""

    label: str
    unit: str
    numbers: list[int]
    records: list[dict[str, Any]]
    """The input records, the prediction (and latency) filled; a failed record has no
    prediction and says why in ``model_error``."""
    failed: dict[Any, str]
    """Line (with ``--repeats``: line and repeat) -> why the call failed."""
    summary: dict[str, Any]
    signature: str
    notes: list[str] = field(default_factory=list)
    calls: dict[str, list[Any]] = field(default_factory=dict)
    """Each record's call by :data:`CALL_KEYS` (a column each, in the order of ``records``)."""
    repeats: list[int] | None = None
    """With ``--repeats``: each record's repeat (its line recurs)."""

    def reading(self) -> Reading:
        """The filled records for the loader (their file name and line numbers kept)."""
        numbers, records = self.numbers, self.records

        def blocks() -> Any:
            if records:
                yield Block(numbers, records)

        return Reading(self.label, blocks(), unit=self.unit, own_objects=False)  # type: ignore[arg-type]


def spec_of(plan: Plan) -> ModelSpec:
    """The suite's ``model:`` block, or an error saying the suite has none."""
    spec = plan.suite.spec.model
    if spec is None:
        raise OptionError(
            f"--model: suite {plan.suite.spec.name!r} has no `model:` block naming the prompt "
            "field, the tools field and the prediction field (copy the suite and add one, as the "
            "built-in function-call suite has it)"
        )
    return spec


def model_fields(plan: Plan) -> set[str]:
    """The suite fields the model's answers fill (prediction, latency)."""
    spec = spec_of(plan)
    return {spec.prediction, *([spec.latency] if spec.latency else [])}


def model_plan(plan: Plan) -> Plan:
    """The plan with the fields the model fills made optional: a record whose call failed has
    no prediction, and that is not an input error."""
    filled = model_fields(plan)
    fields = [
        dataclasses.replace(f, required=False) if f.path in filled and f.required else f
        for f in plan.fields
    ]
    return dataclasses.replace(plan, fields=fields)


def _get(record: Any, parts: Sequence[str | int]) -> Any:
    value = record
    for part in parts:
        if isinstance(part, int):
            if not isinstance(value, list) or not -len(value) <= part < len(value):
                return None
            value = value[part]
        elif isinstance(value, Mapping):
            value = value.get(part)
        else:
            return None
    return value


def _set(record: dict[str, Any], path: str, value: Any) -> None:
    parts = parse_path(path)
    target: Any = record
    for part in parts[:-1]:
        if isinstance(part, int) or not isinstance(target, dict):
            raise OptionError(f"--model writes to {path!r}: only object keys can be written")
        target = target.setdefault(part, {})
        if not isinstance(target, dict):
            raise OptionError(f"--model writes to {path!r}, but a record has a non-object there")
    last = parts[-1]
    if isinstance(last, int) or not isinstance(target, dict):
        raise OptionError(f"--model writes to {path!r}: only object keys can be written")
    target[last] = value


def _drop(record: dict[str, Any], path: str) -> None:
    parts = parse_path(path)
    parent = _get(record, parts[:-1]) if len(parts) > 1 else record
    if isinstance(parent, dict):
        parent.pop(str(parts[-1]), None)


def read_raw(
    data: Any, encoding: str | None, known: Sequence[str] = ()
) -> tuple[str, str, list[int], list[dict[str, Any]]]:
    """Every record of ``data`` whole (a columnar source: all its columns), with its line
    number; ``known``: fields the suite reads (a JSON object with one of them is a record)."""
    wanted = Wanted(_All(str(parse_path(path)[0]) for path in known), {})
    if isinstance(data, str | os.PathLike):
        reading = path_reading(data, wanted=wanted, encoding=encoding)
    elif is_frame(data):
        reading = frame_reading(data, wanted)
    else:
        reading = iterable_reading(data)
    numbers: list[int] = []
    records: list[dict[str, Any]] = []
    try:
        for block in reading.blocks:
            numbers.extend(block.numbers)
            if block.columns is not None:
                names = list(block.columns)
                for i in range(len(block.numbers)):
                    records.append({name: block.columns[name][i] for name in names})
            else:
                for number, record in zip(block.numbers, block.records, strict=True):
                    if not isinstance(record, Mapping):
                        raise InputError(
                            f"a record must be an object, got {type(record).__name__}",
                            source=reading.label,
                            line=number,
                            unit=reading.unit,
                        )
                    records.append(copy.deepcopy(dict(record)))
            if block.error is not None:
                raise block.error
    finally:
        reading.blocks.close()
    if not records:
        raise InputError("no records", source=reading.label)
    return reading.label, reading.unit, numbers, records


class _All(frozenset[str]):
    """Every column (a reader asked for these keeps all of a source's columns); its members
    are the suite's fields, for a reader that looks for them."""

    def __contains__(self, item: object) -> bool:
        return True


def _suite_tools(spec: ModelSpec, source: str) -> Any:
    """The suite's ``default_tools``: the list, or the JSON file it names (beside the suite)."""
    tools = spec.default_tools
    if not isinstance(tools, str):
        return tools
    path = Path(tools)
    if not path.is_absolute() and os.path.isfile(source):
        path = Path(source).parent / path
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SuiteError(f"default_tools {tools!r}: {exc}", source=source, key="model") from None


def _messages(
    record: Any, prompts: list[tuple[str, Any]], system: Any, where: dict[str, Any]
) -> Any:
    """The messages of a record's first prompt field that it has; an input error naming the
    record when it has none, or when the prompt is no text or list of messages."""
    found = [(path, _get(record, parts)) for path, parts in prompts]
    present = [(path, value) for path, value in found if value is not None]
    if not present:
        names = " or ".join(repr(p) for p, _ in prompts)
        raise InputError(f"no prompt: --model sends the field {names} to the model", **where)
    path, value = present[0]
    try:
        return messages_of(value, system)
    except ValueError as exc:
        raise InputError(str(exc), field=path, value=value, **where) from None


def _tools(
    record: Any, tool_paths: list[tuple[str, Any]], suite_tools: Any, where: dict[str, Any]
) -> tuple[list[dict[str, Any]] | None, dict[str, str]]:
    """The OpenAI tools of a record (its first tools field, else the suite's default tools)
    and the names changed for OpenAI; an input error naming the field when they do not read."""
    tools_value, tools_path = suite_tools, "model.default_tools"
    for path, parts in tool_paths:
        candidate = _get(record, parts)
        if candidate is not None:
            tools_value, tools_path = candidate, path
            break
    if tools_value is None:
        return None, {}
    try:
        return openai_tools(tools_value)
    except ValueError as exc:
        raise InputError(str(exc), field=tools_path, value=tools_value, **where) from None


def ask_model(
    plan: Plan,
    data: Any,
    progress: ProgressHook,
    lines: set[int] | None = None,
) -> Answered:
    """Ask the model for every record of ``data`` (only those at ``lines`` when given: a
    sample), and fill the prediction field with each answer."""
    options = plan.options
    call = options.model_call
    assert call is not None
    spec = spec_of(plan)
    known = [f.path for f in plan.fields] + spec.prompt + spec.tools
    label, unit, numbers, records = read_raw(data, options.encoding, known)
    if lines is not None:
        kept = [i for i, number in enumerate(numbers) if number in lines]
        numbers, records = [numbers[i] for i in kept], [records[i] for i in kept]
    numbers, records, repeats = _repeated(numbers, records, call.repeats, label, unit)
    mapping = field_map(plan.suite.spec.fields, options.field_map)
    prediction = mapping.get(spec.prediction, spec.prediction)
    latency = mapping.get(spec.latency, spec.latency) if spec.latency else None
    suite_tools = _suite_tools(spec, plan.suite.source)
    prompts = [(path, parse_path(path)) for path in spec.prompt]
    tool_paths = [(path, parse_path(path)) for path in spec.tools]
    cache = _open_cache(options.cache)
    try:
        client = provider_entry(call.provider).load()(
            call.name,
            base_url=call.base_url,
            api_key_env=call.api_key_env,
            parameters={**spec.parameters, **dict(call.params)},
            concurrency=call.concurrency or spec.concurrency,
            timeout=spec.timeout,
            policy=RetryPolicy(max_retries=spec.max_retries),
            price_prompt=spec.price_prompt,
            price_completion=spec.price_completion,
            cache=cache,
        )
    except BaseException:  # an option error: close the file the client would own
        if cache is not None:
            cache.close()
        raise
    try:
        bodies: list[dict[str, Any]] = []
        renames: list[dict[str, str]] = []
        for number, record in zip(numbers, records, strict=True):
            where: dict[str, Any] = {"source": label, "line": number, "unit": unit}
            messages = _messages(record, prompts, spec.system, where)
            tools, renamed = _tools(record, tool_paths, suite_tools, where)
            bodies.append(client.body(messages, tools))
            renames.append(renamed)
        signature = client.signature()
        advance = progress(f"model {call.name}", float(len(bodies)))
        if repeats is None:
            answers, stats = client.answer_all(bodies, advance)
        else:  # a provider's client takes each body's repeat (cached apart)
            answers, stats = client.answer_all(bodies, advance, repeats=repeats)
    finally:
        client.close()
    calls = _calls(bodies, answers, spec)
    failed: dict[Any, str] = {}
    replaced = 0
    prediction_parts = parse_path(prediction)
    keys: list[Any] = numbers if repeats is None else list(zip(numbers, repeats, strict=True))
    for key, record, answer, renamed in zip(keys, records, answers, renames, strict=True):
        if _get(record, prediction_parts) is not None:
            replaced += 1
        if answer.reply is None:
            _drop(record, prediction)
            if latency:
                _drop(record, latency)
            record["model_error"] = answer.error or "no answer"
            failed[key] = answer.error or "no answer"
            continue
        record.pop("model_error", None)
        _set(record, prediction, restore_names(answer.reply, renamed))
        if latency:
            _set(record, latency, answer.latency_sec)
    notes = []
    if replaced:
        notes.append(
            f"--model: {replaced} of {len(records)} records had a {prediction} of their own; "
            "the model's answer replaced it (predictions.jsonl holds the model's)"
        )
    cached = sum(1 for a in answers if a.cached)
    if cached and latency:
        notes.append(
            f"--model: {cached} of {len(records)} answers came from the cache; their {latency} "
            "is the latency measured when each was first asked"
        )
    if failed:
        notes.append(
            f"--model: {len(failed)} of {len(records)} records had failed model calls (no "
            "prediction; left out of the metrics that read it, never scored as wrong)"
        )
    if repeats is not None:
        notes.extend(_greedy_repeats(call, spec))
    summary = {
        "model": call.text,
        "signature": signature,
        "records": len(records),
        "repeats": call.repeats,
        "cached_answers": cached,
        **stats.summary(),
    }
    summary.pop("pairs", None)
    summary["requests_distinct"] = stats.pairs
    return Answered(
        label, unit, numbers, records, failed, summary, signature, notes, calls, repeats
    )


def _greedy_repeats(call: Any, spec: ModelSpec) -> list[str]:
    """The note of ``--repeats`` at temperature 0."""
    temperature = {**DEFAULT_PARAMETERS, **spec.parameters, **dict(call.params)}.get("temperature")
    if temperature != 0:
        return []
    return [
        f"--repeats {call.repeats} at temperature 0: the repeats differ only as much as the "
        "model's greedy decoding does (give --model-param temperature=0.7, say, to measure the "
        "spread of sampled answers)"
    ]


def _repeated(
    numbers: list[int], records: list[dict[str, Any]], k: int, label: str, unit: str
) -> tuple[list[int], list[dict[str, Any]], list[int] | None]:
    """``--repeats K``: each record K times in a row, its copies numbered ``repeat`` 1 … K (the
    records' line numbers kept); K = 1: the records as they are."""
    if k == 1:
        return numbers, records, None
    for number, record in zip(numbers, records, strict=True):
        for name in REPEAT_FIELDS:
            if name in record:
                raise InputError(
                    f"--repeats {k}: the records already have a {name} field (a file of "
                    "repeats is read as such without --model)",
                    source=label,
                    line=number,
                    field=name,
                    value=record[name],
                    unit=unit,
                )
    out_numbers = [number for number in numbers for _ in range(k)]
    out_records = [
        {**copy.deepcopy(record), "repeat": r} for record in records for r in range(1, k + 1)
    ]
    return out_numbers, out_records, [r for _ in records for r in range(1, k + 1)]


def _calls(
    bodies: list[dict[str, Any]], answers: list[Any], spec: ModelSpec
) -> dict[str, list[Any]]:
    """The columns of :data:`CALL_KEYS` of the requests and their answers (tool names as sent;
    the answer as the model gave it, before the names changed for OpenAI are restored)."""
    priced = spec.price_prompt > 0 or spec.price_completion > 0
    columns: dict[str, list[Any]] = {key: [] for key in CALL_KEYS}
    for k, (body, answer) in enumerate(zip(bodies, answers, strict=True)):
        usage = answer.reply.get("usage") if isinstance(answer.reply, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        tokens = [usage.get(key) for key in ("prompt_tokens", "completion_tokens")]
        known = [token_count(t) if t is not None else None for t in tokens]
        tools = body.get("tools") or None
        row = {
            "messages": body.get("messages"),
            "tools": None if tools is None else [_tool_name(t) for t in tools],
            "answer": answer.reply,
            "error": answer.error if answer.reply is None else None,
            "prompt_tokens": known[0],
            "completion_tokens": known[1],
            "latency_sec": answer.latency_sec,
            "cached": answer.cached,
            "cost": _cost(known, spec) if priced and answer.reply is not None else None,
            "predictions_line": k + 1,
        }
        for key in CALL_KEYS:
            columns[key].append(row[key])
    return columns


def _tool_name(tool: Any) -> Any:
    function = tool.get("function") if isinstance(tool, dict) else None
    return function.get("name") if isinstance(function, dict) else tool.get("name")


def _cost(tokens: list[int | None], spec: ModelSpec) -> float | None:
    """The call's cost at the suite's prices per 1,000 tokens, None without its usage."""
    if tokens[0] is None and tokens[1] is None:
        return None
    prompt, completion = (t or 0 for t in tokens)
    return prompt / 1000 * spec.price_prompt + completion / 1000 * spec.price_completion


def call_columns(
    answered: Answered, lines: Any, repeats: np.ndarray | None = None
) -> dict[str, list[Any]]:
    """:attr:`Answered.calls` in the order of the loaded rows at ``lines`` (each record by its
    line number, with ``--repeats`` by its line and ``repeats``, so every judge call of a row
    has its call; by position where the numbers are not one per record)."""
    numbers: list[Any] = answered.numbers
    keys: list[Any] = [int(line) for line in lines]
    if answered.repeats is not None and repeats is not None:
        numbers = list(zip(numbers, answered.repeats, strict=True))
        keys = list(zip(keys, [int(r) for r in repeats], strict=True))
    if len(set(numbers)) != len(numbers):
        return answered.calls if len(lines) == len(numbers) else {}
    at = {number: k for k, number in enumerate(numbers)}
    order = [at.get(key) for key in keys]
    return {
        key: [None if k is None else column[k] for k in order]
        for key, column in answered.calls.items()
    }


def _open_cache(option: str | bool | None) -> AnswerCache | None:
    path = cache_path(option)
    return None if path is None else AnswerCache(path)


def mark_model_failures(
    plan: Plan, table: Table, blocks: StatBlocks, failed: Mapping[Any, str]
) -> int:
    """Leave the records whose model call failed out of every statistic that reads a field the
    model fills: their rows count nowhere (NaN for raw rows) and the reason is in the
    ``left_out`` and ``model_failed`` columns. Returns how many of the table's records failed."""
    if not failed:
        return 0
    lines = np.asarray(table.lines)
    by_repeat = table.repeats is not None and any(isinstance(key, tuple) for key in failed)
    if by_repeat:  # with --repeats, a failure is a record's repeat's: line and repeat as one
        assert table.repeats is not None
        width = int(max(table.repeats.max(), max(r for _, r in failed))) + 1
        rows = lines * width + table.repeats
        wanted = np.fromiter((line * width + r for line, r in failed), np.int64, len(failed))
    else:
        rows, wanted = lines, np.fromiter(failed, dtype=np.int64, count=len(failed))
    rows_failed = np.isin(rows, wanted)
    if not rows_failed.any():
        return 0
    why = np.empty(table.n, dtype=object)
    repeats = table.repeats if by_repeat else None
    for i in np.flatnonzero(rows_failed):
        line = int(lines[i])
        why[i] = (
            f"model call failed: {failed[line if repeats is None else (line, int(repeats[i]))]}"
        )
    filled = model_fields(plan)
    for key, statistic in plan.statistics.items():
        if not {spec.path for spec in statistic.fields()} & filled:
            continue
        block = blocks[key]
        mask = rows_failed if block.scope is None else rows_failed & block.scope
        if not mask.any():
            continue
        if block.codes is not None:
            block.rows = block.per_record().copy()
            block.codes = None
        assert block.rows is not None
        rows = np.array(block.rows, dtype=np.float64, copy=True)
        rows[mask] = 0.0 if block.decomposable else np.nan
        block.rows = rows
        left = block.reasons.get(LEFT_OUT)
        left = np.empty(table.n, dtype=object) if left is None else left.copy()
        left[mask] = why[mask]
        block.reasons[LEFT_OUT] = left
        mine = np.empty(table.n, dtype=object)
        mine[mask] = why[mask]
        block.reasons[MODEL_FAILED] = mine
    return int(rows_failed.sum())
