"""A judge's answer read strictly: a value on the scale, or the reason there is none.

:func:`parse_answer` reads, in this order:

1. A reasoning model's ``<think>…</think>`` (or ``<thinking>``) is removed, and all before a
   ``</think>`` whose opening tag was in the prompt; an answer still thinking (an unclosed
   ``<think>``: cut by ``max_tokens``) has no value.
2. One surrounding Markdown fence (`````json … `````) is taken off.
3. An answer that starts with ``{`` is JSON or nothing: ``{"score": x}`` for a number,
   ``{"label": "..."}`` for a label, with ``"reasoning"`` (or ``"reason"``) kept as the judge's
   reasoning; JSON that does not parse (truncated, malformed) has no value, even when a number
   can be seen in it.
4. JSON objects inside text (``My grade: {"score": 4}``) count when they carry the key; several
   that disagree are ambiguous.
5. Otherwise the text. A number: a keyed one (``Score: 4``, ``评分：4分``, ``rating = 4``) if
   exactly one value is keyed, else the text's one number (``我给4分``); ``x/N`` and ``x out of
   N`` read as x when N is the scale's top (``4/5`` on 1-5). Two numbers are ambiguous, never
   the first or the last. A label: the whole answer is a label or its long name
   (``Partially correct.``), or one is keyed (``GRADE: C``, Inspect's pattern; ``Verdict:
   pass``; ``[[A]]``, MT-Bench's), compared without case, spaces or punctuation; a label is
   never searched for inside prose (``not correct`` contains ``correct``).
6. The value must be on the scale: a points scale refuses 3.5 and 7 on 1-5, a continuous one
   any number outside [low, high].

An answer with no value is a counted failure with its reason (``no score in the answer``,
``out of scale: 7 is not in 1-5``, ``ambiguous: two scores``, ``refusal``, ``unfinished
thinking``, ``truncated or malformed JSON``), never a score.

Where we are stricter than the peers (read November 2026):

- promptfoo's ``llm-rubric`` takes the first JSON object it can extract from the answer
  (``extractJsonObjects``); a missing ``pass`` counts as a pass, ``pass`` is coerced from text
  (``yes``, ``y``) and a non-numeric ``score`` from ``Number(score)`` or the pass flag; the
  score is not checked against a range. Here a missing key, a value off the scale or two
  disagreeing objects is a failure.
- DeepEval's ``GEval`` reads JSON with ``trimAndLoadJson``: the text from the first ``{`` to
  the last ``}``, a ``}`` appended when none closes it (a truncated answer repaired into a
  score) and trailing commas removed; the score is not checked against the rubric's range.
  Here truncated JSON is a failure.
- Inspect's ``model_graded_qa`` takes the first ``GRADE: X`` anywhere in the text and scores a
  missing grade as incorrect; here two different keyed grades are ambiguous and a missing grade
  is a failure, not an ``I``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from .scale import Scale

__all__ = ["Parsed", "parse_answer", "score_position"]


@dataclass(frozen=True)
class Parsed:
    """What a judge's answer says: ``value`` on the scale's own units (a label's value for a
    labels scale), ``label`` for a labels scale, or ``reason`` why there is no value;
    ``reasoning``: the judge's stated reasoning where its JSON carries one."""

    value: float | None
    label: str | None
    reason: str | None
    reasoning: str | None = None


@dataclass(frozen=True)
class _Read:
    """A parsed answer and where its score starts in the text (for the logprobs)."""

    parsed: Parsed
    start: int | None = None


_THINKING = re.compile(r"<(think|thinking)>.*?</\1>", re.S | re.I)
_UNFINISHED = re.compile(r"<think(?:ing)?>", re.I)
_CLOSING = re.compile(r"</think(?:ing)?>", re.I)
_FENCED = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)(?:```|\Z)", re.S)
_NUM = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)"
_NUMBER = re.compile(
    rf"(?<![A-Za-z0-9_.])(?P<x>{_NUM})(?![A-Za-z0-9_]|\.\d)"
    rf"(?:\s*(?:/|out\s+of|满分)\s*(?P<n>{_NUM})(?![A-Za-z0-9_]|\.\d))?",
    re.I,
)  # ASCII word edges only: 评分为4分 and 0.8。 are numbers against Chinese text
_ALTERNATIVE = re.compile(rf"\s*(?:or\b|to\b|-|–|~|或|到|至)\s*{_NUM}", re.I)
_SCORE_KEY = re.compile(
    r"(?:\b(?:score|rating|grade)\b|评分|得分|分数|打分|分值)[\"'*]*\s*(?:is\b|为|是)?\s*[:：=]?\s*[\"'*]*\s*",
    re.I,
)
_LABEL_KEY = re.compile(
    r"(?:\b(?:grade|label|verdict|judge?ment|winner|decision)\b|评级|判定|结论|等级|标签|胜者)"
    r"[\"'*]*\s*(?:is\b|为|是)?\s*[:：=]\s*",
    re.I,
)
_FIRST_WORD = re.compile(r"\s*[\"'*`]*([^\W_]+)[\"'*`]*\s*(?:\Z|[^\w\s])")
_BRACKETED = re.compile(r"\[\[\s*([^\[\]\n]{1,40}?)\s*\]\]")
_REFUSAL = re.compile(
    r"\b(?:I(?:['’]m| am) sorry|I (?:can(?:no|['’])t|am unable to|won['’]t|will not)|"
    r"as an AI\b)|抱歉|对不起|我无法|我不能|无法(?:提供|完成|评估|回答)",
    re.I,
)
_COUNTS = {2: "two", 3: "three", 4: "four"}


def _fail(reason: str) -> _Read:
    return _Read(Parsed(None, None, reason))


def _visible(text: str) -> tuple[str, str | None]:
    """The answer with thinking blanked out (spaces of the same length, so offsets still point
    into ``text``), or the reason it has no answer."""
    blanked = _THINKING.sub(lambda m: " " * len(m.group(0)), text)
    closing = list(_CLOSING.finditer(blanked))
    if closing:  # the opening tag was in the prompt (DeepSeek-R1's template): thinking before
        blanked = " " * closing[-1].end() + blanked[closing[-1].end() :]
    if _UNFINISHED.search(blanked):
        return blanked, "unfinished thinking"
    if not blanked.strip():
        return blanked, "empty answer"
    return blanked, None


def _several(n: int, what: str) -> str:
    return f"ambiguous: {_COUNTS.get(n, str(n))} {what}"


def _fmt(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def _on_scale(value: float, scale: Scale) -> str | None:
    """Why ``value`` is not on the scale, or None."""
    if not math.isfinite(value):
        return f"not a number: {json.dumps(value)}"
    span = f"{_fmt(scale.low)}-{_fmt(scale.high)}"
    if not scale.low <= value <= scale.high:
        return f"out of scale: {_fmt(value)} is not in {span}"
    if scale.kind == "points" and value not in scale.points:
        return f"out of scale: {_fmt(value)} is not a point of {span}"
    return None


def _number_value(raw: Any) -> float | None:
    """A JSON number, or a string that is exactly one (``"4"``); never a boolean."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return float(raw)
    if isinstance(raw, str) and re.fullmatch(rf"\s*{_NUM}\s*", raw):
        return float(raw)
    return None


def _reasoning(obj: dict[str, Any]) -> str | None:
    for key in ("reasoning", "reason"):
        if isinstance(obj.get(key), str):
            return str(obj[key])
    return None


def _from_object(obj: dict[str, Any], scale: Scale) -> Parsed:
    """A parsed JSON object's value (its ``score`` or ``label``), checked on the scale."""
    reasoning = _reasoning(obj)
    if scale.key not in obj:
        return Parsed(None, None, f"no {scale.key} in the answer", reasoning)
    raw = obj[scale.key]
    if scale.numeric:
        value = _number_value(raw)
        if value is None:
            return Parsed(None, None, f"not a number: {json.dumps(raw)}", reasoning)
        why = _on_scale(value, scale)
        return Parsed(None if why else value, None, why, reasoning)
    label = scale.find_label(raw) if isinstance(raw, str) else None
    if label is None:
        choices = ", ".join(scale.labels)
        return Parsed(
            None, None, f"not a label: {json.dumps(raw)} is not one of {choices}", reasoning
        )
    return Parsed(scale.value_of(label), label, None, reasoning)


_KEY_POSITION = r'(?<!\\)"{key}"\s*:\s*'


def _key_start(text: str, begin: int, end: int, key: str) -> int | None:
    """Where the value of the first ``"key":`` in ``text[begin:end]`` starts."""
    found = re.compile(_KEY_POSITION.format(key=key)).search(text, begin, end)
    return found.end() if found else None


def _whole_json(text: str, begin: int, scale: Scale) -> _Read:
    """The answer from ``begin`` on is JSON, or nothing (text after a complete object is read
    as text with objects inside, :func:`_embedded`)."""
    try:
        obj, end = json.JSONDecoder().raw_decode(text, begin)
    except ValueError:
        return _fail("truncated or malformed JSON")
    if text[end:].strip():
        return _embedded(text, scale) or _fail(f"no {scale.key} in the answer")
    if isinstance(obj, dict):
        parsed = _from_object(obj, scale)
        return _Read(parsed, _key_start(text, begin, len(text), scale.key))
    return _fail(f"no {scale.key} in the answer")


def _embedded(text: str, scale: Scale) -> _Read | None:
    """The JSON objects inside text that carry the scale's key: one value, or ambiguous."""
    decoder = json.JSONDecoder()
    found: list[tuple[Parsed, int | None]] = []
    at = text.find("{")
    while at >= 0:
        try:
            obj, end = decoder.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        if isinstance(obj, dict) and scale.key in obj:
            found.append((_from_object(obj, scale), _key_start(text, at, end, scale.key)))
        at = text.find("{", end)
    if not found:
        if f'"{scale.key}"' in text:
            return _fail("truncated or malformed JSON")
        return None
    answers = {(p.value, p.label, p.reason) for p, _ in found}
    if len(answers) > 1:
        return _fail(_several(len(answers), "answers"))
    parsed, start = found[0]
    return _Read(parsed, start)


def _numbers(
    text: str, scale: Scale, start: int = 0, only_first: bool = False
) -> list[tuple[float, int, str]]:
    """The numbers of ``text`` from ``start`` (each ``x/N`` one number): value, offset, and
    why it is not a score (``""`` when it may be one)."""
    found = []
    for matched in _NUMBER.finditer(text, start):
        value = float(matched.group("x"))
        why = ""
        if matched.group("n") is not None:
            top = float(matched.group("n"))
            if top != scale.high:
                span = f"{_fmt(scale.low)}-{_fmt(scale.high)}"
                why = f"out of scale: {matched.group(0).strip()} is not on {span}"
        elif _ALTERNATIVE.match(text, matched.end()):
            why = "ambiguous: two scores"  # Score: 3 or 4, Score: 3-4
        found.append((value, matched.start("x"), why))
        if only_first:
            break
    return found


def _text_score(text: str, scale: Scale) -> _Read:
    """A number from text: the keyed value if exactly one, else the text's one number."""
    keyed = []
    for key in _SCORE_KEY.finditer(text):
        after = _numbers(text, scale, key.end(), only_first=True)
        if after and after[0][1] == key.end():
            keyed.append(after[0])
    candidates = keyed or _numbers(text, scale)
    if not candidates:
        return _fail("no score in the answer")
    distinct = {(v, why) for v, _, why in candidates}
    if len(distinct) > 1:
        return _fail(_several(len(distinct), "scores"))
    value, start, why = candidates[0]
    why = why or (_on_scale(value, scale) or "")
    if why:
        return _fail(why)
    return _Read(Parsed(value, None, None), start)


def _text_label(text: str, scale: Scale) -> _Read:
    """A label from text: the whole answer, or a keyed one (``GRADE: C``, ``[[A]]``)."""
    whole = scale.find_label(text)
    if whole is not None:
        return _Read(Parsed(scale.value_of(whole), whole, None))
    named = set()
    keys = list(_LABEL_KEY.finditer(text))
    for i, keyed in enumerate(keys):
        stop = keys[i + 1].start() if i + 1 < len(keys) else len(text)
        rest = text[keyed.end() : stop].split("\n", 1)[0]
        label = scale.find_label(rest) or _first_word_label(rest, scale)
        if label is not None:
            named.add(label)
    for bracketed in _BRACKETED.finditer(text):
        label = scale.find_label(bracketed.group(1))
        if label is not None:
            named.add(label)
    if len(named) > 1:
        return _fail(_several(len(named), "labels"))
    if named:
        label = named.pop()
        return _Read(Parsed(scale.value_of(label), label, None))
    return _fail("no label in the answer")


def _first_word_label(rest: str, scale: Scale) -> str | None:
    """``GRADE: C.`` and ``GRADE: C (all facts present)``: the first word after the key, when
    it is a label and no other word follows it (``GRADE: I think…`` names no label)."""
    word = _FIRST_WORD.match(rest)
    return scale.find_label(word.group(1)) if word else None


def _json_start(blanked: str) -> tuple[int, int] | None:
    """Where the answer's JSON starts and ends when the answer is JSON: the whole answer when
    it starts with ``{``, else the one Markdown fence's content when that starts with ``{`` (a
    fence never closed runs to the end)."""
    first = len(blanked) - len(blanked.lstrip())
    if blanked.startswith("{", first):
        return first, len(blanked)
    fences = list(_FENCED.finditer(blanked))
    if len(fences) != 1:
        return None
    content = fences[0].group(1)
    inner = fences[0].start(1) + len(content) - len(content.lstrip())
    return (inner, fences[0].end(1)) if blanked.startswith("{", inner) else None


def _read(text: str, scale: Scale) -> _Read:
    blanked, failure = _visible(text)
    if failure:
        return _fail(failure)
    span = _json_start(blanked)
    if span is not None:
        return _whole_json(blanked[: span[1]], span[0], scale)
    read = _embedded(blanked, scale)
    if read is None:
        read = _text_score(blanked, scale) if scale.numeric else _text_label(blanked, scale)
    missing = read.parsed.reason in {"no score in the answer", "no label in the answer"}
    if missing and _REFUSAL.search(blanked):
        return _fail("refusal")
    return read


def parse_answer(text: str, scale: Scale) -> Parsed:
    """A judge's answer on ``scale``: its value (and label), or the reason it has none; never
    a guess. The rules are the module's."""
    return _read(text, scale).parsed


def score_position(text: str, scale: Scale) -> int | None:
    """Where, in ``text``, the score :func:`parse_answer` reads starts (the offset of its first
    character), or None when it reads no value or the value is a label found without a
    position."""
    read = _read(text, scale)
    return read.start if read.parsed.value is not None else None
