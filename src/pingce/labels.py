"""Ordered label scales: the risk levels 高/中/低, 5-point ratings, or any other ordinal scale.

A scale maps the raw labels found in records (including aliases such as ``high`` for ``高``) to
integer codes ``0 .. k-1`` in the declared order. Integer codes are what every classification
metric works on, so the mapping is done once, at load time.

A prediction off the scale (``"medium-high"``, an empty text, null) is a model's answer, not bad
input: a prediction field reads it as code ``k``, named :data:`INVALID`, and the metrics score
it as wrong. A gold label off the scale stays an input error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["INVALID", "RISK_LEVELS", "LabelScale"]

INVALID = "(invalid)"
"""The name of code ``k`` of a ``k``-label scale: a prediction that is not on the scale, or empty
(null, blank text). It counts in ``failures.invalid_prediction`` and is scored as wrong."""


def _key(raw: object) -> str | None:
    """The text form of a raw label: strings as they are, integers as digits; else None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str):
        return raw
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    return None


@dataclass(frozen=True)
class LabelScale:
    """An ordered set of labels with aliases.

    ``labels`` are in scale order (for risk levels: highest risk first). ``aliases`` map other
    spellings to a label; with ``case_insensitive`` (the default) aliases and labels also match
    in any letter case and with surrounding whitespace removed.
    """

    labels: tuple[str, ...]
    aliases: Mapping[str, str] = field(default_factory=dict)
    case_insensitive: bool = True

    def __post_init__(self) -> None:
        if len(self.labels) < 2:
            raise ValueError(f"a label scale needs at least 2 labels, got {list(self.labels)}")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"labels of a scale must be distinct, got {list(self.labels)}")
        if INVALID in self.labels:
            raise ValueError(f"{INVALID!r} names a prediction off the scale; it cannot be a label")
        for alias, target in self.aliases.items():
            if target not in self.labels:
                raise ValueError(
                    f"alias {alias!r} points to {target!r}, which is not one of {list(self.labels)}"
                )
        lookup: dict[str, int] = {}
        for code, label in enumerate(self.labels):
            lookup[label] = code
        for alias, target in self.aliases.items():
            lookup[alias] = self.labels.index(target)
        if self.case_insensitive:
            for name, code in list(lookup.items()):
                folded = name.strip().casefold()
                other = lookup.setdefault(folded, code)
                if other != code:
                    raise ValueError(
                        f"labels/aliases {name!r} and another one fold to the same text "
                        f"{folded!r} but mean different labels"
                    )
        object.__setattr__(self, "_lookup", lookup)

    @property
    def k(self) -> int:
        """Number of labels."""
        return len(self.labels)

    def code(self, raw: object) -> int | None:
        """The code of a raw label, or None when it is not on the scale."""
        lookup: dict[str, int] = self._lookup  # type: ignore[attr-defined]
        text = _key(raw)
        if text is None:
            return None
        code = lookup.get(text)
        if code is None and self.case_insensitive:
            code = lookup.get(text.strip().casefold())
            if code is not None:
                lookup[text] = code  # remember this spelling; lookups stay O(1)
        return code

    def describe(self) -> str:
        """The accepted labels, for error messages."""
        extra = f"; aliases {sorted(self.aliases)}" if self.aliases else ""
        return f"one of {list(self.labels)}{extra}"

    def names(self, codes: np.ndarray) -> list[str]:
        """Labels of an array of codes (code ``k``: :data:`INVALID`)."""
        labels = np.asarray((*self.labels, INVALID), dtype=object)
        return list(labels[codes])

    @classmethod
    def from_spec(
        cls,
        labels: Sequence[str | int],
        aliases: Mapping[str, str] | None = None,
        case_insensitive: bool = True,
    ) -> LabelScale:
        """Build a scale from suite-file values (integers become their digits)."""
        texts = []
        for raw in labels:
            text = _key(raw)
            if text is None:
                raise ValueError(f"a label must be a string or an integer, got {raw!r}")
            texts.append(text)
        return cls(tuple(texts), dict(aliases or {}), case_insensitive)


RISK_LEVELS = LabelScale(("高", "中", "低"), {"high": "高", "medium": "中", "low": "低"})
"""The contract-risk scale: 高 (high) > 中 (medium) > 低 (low)."""
