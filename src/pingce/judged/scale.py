"""The scale a judge grades on: what its answer may be, how it reads, and how it is said.

A scale is plain data (:class:`Scale`), made once from a suite's ``scale:`` or ``--scale`` by
:func:`parse_scale`:

- ``0-1`` (or any range written with a decimal point, ``0.0-10.0``): continuous, any number in
  the range;
- an integer range, ``1-5``, ``0-10``, ``1-10`` (at most 101 points): the integers of the range;
- names separated by ``/`` (``pass/fail``, ``good/ok/bad``) or a list of names: labels valued
  evenly from 1 (the first) down to 0 (the last); a mapping of names to numbers gives each its
  own value;
- ``correctness`` (or ``CPI``): Inspect's ``C``/``P``/``I``, correct, partially correct and
  incorrect, valued 1, 0.5 and 0.

Its canonical text (:attr:`Scale.spec`) goes into the run's signature, so the same scale
written two ways (``1-5``, ``1 - 5``) asks the judge once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import OptionError, show_value

__all__ = [
    "CORRECTNESS_SCALE",
    "LANGUAGES",
    "MAX_POINTS",
    "PREFERENCE_SCALE",
    "Scale",
    "ScaleKind",
    "label_key",
    "parse_scale",
]

ScaleKind = Literal["continuous", "points", "labels"]
LANGUAGES: tuple[str, ...] = ("en", "zh")
"""The languages a scale (and a default prompt) is said in."""
MAX_POINTS = 101
"""The most points an integer range may have (``0-100``)."""

_ACCEPTED = (
    "a scale is 0-1 (any number between), an integer range such as 1-5, 0-10 or 1-10, "
    "names, best first, separated by / or , such as pass/fail or good,fair,poor (valued evenly "
    "from 1 down to 0), a list of names, "
    "a mapping of names to values, or correctness (Inspect's C/P/I)"
)
_RANGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:-|–|—|~|to)\s*(\d+(?:\.\d+)?)\s*$", re.I)
_CORRECTNESS_NAMES = frozenset({"correctness", "cpi", "c/p/i"})
_ZH_NAMES = {"correct": "正确", "partially correct": "部分正确", "incorrect": "错误"}
_LABEL_NOISE = re.compile(r"[\s\-_\"'`*.,;:!?。，；：！？、“”‘’（）()\[\]【】<>《》]+")


def label_key(text: str) -> str:
    """How a label is compared: case-folded, with spaces, hyphens, quotes and punctuation
    removed (``"Partially correct."`` and ``partially-correct`` are one label; Chinese labels
    are compared the same way)."""
    import unicodedata

    return _LABEL_NOISE.sub("", unicodedata.normalize("NFKC", text)).casefold()


def _number(value: float) -> str:
    """A number as the canonical text writes it: ``1`` for 1.0, else Python's shortest repr."""
    return str(int(value)) if value == int(value) and abs(value) < 2**53 else repr(value)


@dataclass(frozen=True)
class Scale:
    """What a judge's answer may be.

    ``points``: the allowed values of a ``points`` scale, ascending; ``labels`` and ``values``:
    a ``labels`` scale's names in order and each one's value; ``names``: a longer name for each
    label where it has one (``C`` is ``correct``), also accepted in an answer. ``low`` and
    ``high``: the smallest and largest value, the ends :meth:`normalized` maps to 0 and 1.
    """

    kind: ScaleKind
    low: float
    high: float
    points: tuple[float, ...]
    labels: tuple[str, ...]
    values: tuple[float, ...]
    spec: str
    names: tuple[str, ...] = ()

    def normalized(self, value: float) -> float:
        """``value`` on [0, 1]: ``(value - low) / (high - low)``."""
        return (value - self.low) / (self.high - self.low)

    @property
    def numeric(self) -> bool:
        """Whether the answer is a number (``continuous`` or ``points``), not a label."""
        return self.kind != "labels"

    @property
    def level(self) -> Literal["nominal", "ordinal", "interval"]:
        """The scale's level of measurement, at which a jury's agreement is measured by
        default: ``ordinal`` for points (``1-5``: ordered, their distances not known to be
        equal), ``interval`` for a continuous range, ``nominal`` for labels."""
        if self.kind == "points":
            return "ordinal"
        return "interval" if self.kind == "continuous" else "nominal"

    @property
    def declared(self) -> tuple[float | str, ...]:
        """The values a grade may take, in the scale's order: the points, or the labels; ()
        for a continuous scale (any number in the range)."""
        return self.points if self.kind == "points" else self.labels

    def code(self, value: float | None, label: str | None) -> int:
        """A grade's place among :attr:`declared` (the label's, else the value's), or -1 when
        it is none of them (no grade, a continuous scale)."""
        found: float | str | None = label if self.kind == "labels" else value
        try:
            return self.declared.index(found) if found is not None else -1
        except ValueError:
            return -1

    @property
    def key(self) -> str:
        """The answer's JSON key: ``score`` for a number, ``label`` for a label."""
        return "score" if self.numeric else "label"

    def value_of(self, label: str) -> float:
        """The value of one of the scale's labels (as written in :attr:`labels`)."""
        return self.values[self.labels.index(label)]

    def find_label(self, text: str) -> str | None:
        """The label ``text`` names (a label, its long name or the long name's Chinese: ``C``,
        ``correct``, ``正确``), compared by :func:`label_key`, or None."""
        key = label_key(text)
        if not key:
            return None
        for i, label in enumerate(self.labels):
            names = (
                (label, self.names[i], _ZH_NAMES.get(self.names[i], "")) if self.names else (label,)
            )
            if any(key == label_key(name) for name in names if name):
                return label
        return None

    def describe(self, language: str = "en") -> str:
        """The scale in words, for a prompt: ``an integer from 1 to 5`` / ``1 到 5 的整数``."""
        _check_language(language)
        low, high = _number(self.low), _number(self.high)
        if self.kind == "continuous":
            if language == "zh":
                return f"{low} 到 {high} 之间的数（可以带小数）"
            return f"a number from {low} to {high} (decimals allowed)"
        if self.kind == "points":
            return (
                f"{low} 到 {high} 的整数"
                if language == "zh"
                else f"an integer from {low} to {high}"
            )
        return _describe_labels(self, language)

    def answer_form(self, language: str = "en", reasoning: bool = True) -> str:
        """The JSON a prompt asks for, reasoning first: ``{"reasoning": "...", "score": ...}``."""
        _check_language(language)
        if self.numeric:
            slot = "<分数>" if language == "zh" else "<the score>"
        else:
            slot = " | ".join(f'"{label}"' for label in self.labels)
        answer = f'"{self.key}": {slot}'
        if not reasoning:
            return "{" + answer + "}"
        why = (
            "<简短的理由，不超过三句>"
            if language == "zh"
            else "<a short reason, three sentences at most>"
        )
        return '{"reasoning": "' + why + '", ' + answer + "}"

    def schema(self, reasoning: bool = True) -> dict[str, Any]:
        """The JSON schema of an answer (``response_format``'s ``json_schema``): ``{"score":
        x}`` for a number (an integer among the points, or a number in [low, high]), ``{"label":
        name}`` for a label, with a ``reasoning`` string first when ``reasoning`` (a model writes
        the properties in order, so the score follows the reasoning)."""
        answer: dict[str, Any]
        if self.kind == "points":
            answer = {"type": "integer", "enum": [int(p) for p in self.points]}
        elif self.kind == "continuous":
            answer = {"type": "number", "minimum": self.low, "maximum": self.high}
        else:
            answer = {"type": "string", "enum": list(self.labels)}
        properties: dict[str, Any] = {}
        if reasoning:
            properties["reasoning"] = {"type": "string"}
        properties[self.key] = answer
        return {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }


def _check_language(language: str) -> None:
    if language not in LANGUAGES:
        raise OptionError(f"language {language!r}: one of {', '.join(LANGUAGES)}")


def _describe_labels(scale: Scale, language: str) -> str:
    """``one of "C" (correct), "P" (partially correct) or "I" (incorrect)`` and its Chinese."""
    shown = []
    for i, label in enumerate(scale.labels):
        name = scale.names[i] if scale.names else ""
        if name and language == "zh":
            shown.append(f'"{label}"（{_ZH_NAMES.get(name, name)}）')
        elif name:
            shown.append(f'"{label}" ({name})')
        else:
            shown.append(f'"{label}"')
    if language == "zh":
        return "、".join(shown[:-1]) + "或" + shown[-1] + "之一"
    return "one of " + ", ".join(shown[:-1]) + " or " + shown[-1]


def _labels(
    labels: Sequence[str], values: Sequence[float], spec: Any, names: Sequence[str] = ()
) -> Scale:
    """A labels scale, checked: at least two names, distinct as compared, finite values that
    differ."""
    if len(labels) < 2:
        raise OptionError(f"judge scale {show_value(spec)}: at least two labels; {_ACCEPTED}")
    keys = [label_key(label) for label in labels]
    if not all(keys) or len(set(keys)) != len(keys):
        raise OptionError(
            f"judge scale {show_value(spec)}: labels must be distinct non-empty names "
            f"(compared without case, spaces or punctuation); {_ACCEPTED}"
        )
    if not all(math.isfinite(v) for v in values) or max(values) == min(values):
        raise OptionError(
            f"judge scale {show_value(spec)}: label values must be finite numbers, not all equal"
        )
    text = ",".join(f"{label}={_number(v)}" for label, v in zip(labels, values, strict=True))
    return Scale(
        "labels",
        float(min(values)),
        float(max(values)),
        (),
        tuple(labels),
        tuple(float(v) for v in values),
        f"labels:{text}",
        tuple(names),
    )


def _evenly(labels: Sequence[str], spec: Any) -> Scale:
    n = len(labels)
    values = [1.0 - i / (n - 1) for i in range(n)] if n > 1 else [1.0]
    return _labels(labels, values, spec)


def _range(low_text: str, high_text: str, spec: str) -> Scale:
    low, high = float(low_text), float(high_text)
    if not low < high:
        raise OptionError(f"judge scale {spec!r}: the range's low end must be below its high end")
    continuous = "." in low_text + high_text or (low, high) == (0.0, 1.0)
    if continuous:
        return Scale(
            "continuous", low, high, (), (), (), f"continuous:{_number(low)}-{_number(high)}"
        )
    if high - low + 1 > MAX_POINTS:
        raise OptionError(
            f"judge scale {spec!r}: at most {MAX_POINTS} points; write {_number(low)}.0-"
            f"{_number(high)}.0 for a continuous scale"
        )
    points = tuple(float(p) for p in range(int(low), int(high) + 1))
    return Scale("points", low, high, points, (), (), f"points:{_number(low)}-{_number(high)}")


def _from_text(spec: str) -> Scale:
    text = spec.strip()
    if text.casefold() in _CORRECTNESS_NAMES:
        return CORRECTNESS_SCALE
    matched = _RANGE.match(text)
    if matched:
        return _range(matched.group(1), matched.group(2), spec)
    for separator in ("/", ",", "，"):
        if separator in text:
            return _evenly([part.strip() for part in text.split(separator)], spec)
    raise OptionError(f"judge scale {spec!r}: not a scale; {_ACCEPTED}")


def parse_scale(spec: str | Sequence[str] | Mapping[str, float] | Scale) -> Scale:
    """A :class:`Scale` from its text (``0-1``, ``1-5``, ``pass/fail``, ``correctness``), a list
    of label names (valued evenly from 1 down to 0) or a mapping of names to values; anything
    else is an :class:`~pingce.errors.OptionError` naming the spec and what is accepted."""
    if isinstance(spec, Scale):
        return spec
    if isinstance(spec, str):
        return _from_text(spec)
    if isinstance(spec, Mapping):
        names = list(spec)
        values = list(spec.values())
        if not all(isinstance(n, str) for n in names) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values
        ):
            raise OptionError(
                f"judge scale {show_value(dict(spec))}: a mapping gives each label name a "
                f"number; {_ACCEPTED}"
            )
        return _labels(names, [float(v) for v in values], dict(spec))
    if isinstance(spec, Sequence) and all(isinstance(n, str) for n in spec):
        return _evenly([n.strip() for n in spec], list(spec))
    raise OptionError(f"judge scale {show_value(spec)}: not a scale; {_ACCEPTED}")


CORRECTNESS_SCALE = Scale(
    "labels",
    0.0,
    1.0,
    (),
    ("C", "P", "I"),
    (1.0, 0.5, 0.0),
    "correctness:C=1,P=0.5,I=0",
    ("correct", "partially correct", "incorrect"),
)
"""Inspect's ``model_graded_fact`` grades: correct, partially correct, incorrect."""

PREFERENCE_SCALE = Scale(
    "labels", 0.0, 1.0, (), ("A", "B", "tie"), (1.0, 0.0, 0.5), "preference:A=1,B=0,tie=0.5"
)
"""A pairwise verdict, valued as A's win: ``A`` 1, ``B`` 0, ``tie`` 0.5."""
