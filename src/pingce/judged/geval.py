"""G-Eval's probability-weighted score (Liu et al. 2023, "G-Eval: NLG Evaluation using GPT-4
with Better Human Alignment", eq. 1): ``score = sum_i p(s_i) * s_i`` over the scale's points,
with each point's probability read from the judge's log probabilities at the token where it
wrote its score.

Where the score is written. The tokens' texts (``choices[0].logprobs.content[*].token``) are
joined into the answer's text, and :func:`~pingce.judged.answers.score_position` reads that text
exactly as :func:`~pingce.judged.answers.parse_answer` does (thinking blanked out; in JSON, the
value after the first ``"score":``, fenced or not; in text, the keyed or the one number) and
gives the offset of the score's first character. The token whose text covers that offset is the
score's token; the part of its text before the offset is its prefix (``" "`` in the token
``" 4"``, ``":"`` in ``":4"``). There is no weighted score when the answer has no value, when the
score's digits run on into the next token (a tokenizer that writes ``10`` as ``1``, ``0``: the
first token's alternatives would not be the points), or when the scale is not a points scale.

Which alternatives count. Each of that token's ``top_logprobs`` (and the sampled token itself,
when the list leaves it out) counts for point ``p`` when its text, after the same prefix
(compared without surrounding spaces), is ``p``'s digits, optionally with spaces before and
punctuation after (``"4"``, ``" 4"``, ``"4,"``, ``"4}"``, ``"4."``); alternatives naming the
same point add up. The probabilities ``exp(logprob)`` of the points present are renormalised
to sum to 1 and the weighted mean returned; a point absent from the list has probability 0.

There is no probability floor. DeepEval's ``calculate_weighted_summed_score`` drops
alternatives below 1%, takes the first token equal to the stated score anywhere in the answer
(a ``4`` in the reasoning can be taken for the score), counts any decimal token (points off the
scale too) and falls back to the stated score when it fails; here the position is the parsed
score's, only the scale's points count, and a failure is None.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .answers import score_position
from .scale import Scale

__all__ = ["token_logprobs", "weighted_score"]

_POINT = re.compile(r"\s*(\d+)(?:\.0+)?[\s,.;。，)）}\]\"'*]*")


def token_logprobs(logprobs: Any) -> list[Mapping[str, Any]] | None:
    """The list of token entries from a chat completion, its ``choices[0].logprobs`` or that
    object's ``content`` (each entry a mapping with a text ``token``), or None."""
    if isinstance(logprobs, Mapping) and "choices" in logprobs:
        try:
            logprobs = logprobs["choices"][0]["logprobs"]
        except (KeyError, IndexError, TypeError):
            return None
    if isinstance(logprobs, Mapping):
        logprobs = logprobs.get("content")
    if not isinstance(logprobs, Sequence) or isinstance(logprobs, str) or not logprobs:
        return None
    if not all(isinstance(t, Mapping) and isinstance(t.get("token"), str) for t in logprobs):
        return None
    return list(logprobs)


def _point(token: str, prefix: str, scale: Scale) -> float | None:
    """The point an alternative token writes after ``prefix``, or None."""
    head = prefix.strip()
    if head:
        token = token.lstrip()
        if not token.startswith(head):
            return None
        token = token[len(head) :]
    matched = _POINT.fullmatch(token)
    if matched is None:
        return None
    value = float(matched.group(1))
    return value if value in scale.points else None


def _logprob(entry: Mapping[str, Any]) -> float | None:
    value = entry.get("logprob")
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def _alternatives(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The token's ``top_logprobs``, with the sampled token added when they leave it out."""
    top = entry.get("top_logprobs") or []
    alternatives = [a for a in top if isinstance(a, Mapping) and isinstance(a.get("token"), str)]
    if entry["token"] not in {a["token"] for a in alternatives}:
        alternatives.append(entry)
    return alternatives


def weighted_score(logprobs: Any, scale: Scale) -> float | None:
    """G-Eval's ``sum_i p_i * point_i`` at the token where the judge wrote its score, the
    probabilities renormalised over the points among that token's ``top_logprobs``; None when
    the scale is not a points scale, the answer has no score, or no point is among them. How the
    token is found: the module's docstring."""
    if scale.kind != "points":
        return None
    tokens = token_logprobs(logprobs)
    if tokens is None:
        return None
    texts = [str(t["token"]) for t in tokens]
    text = "".join(texts)
    start = score_position(text, scale)
    if start is None:
        return None
    ends = list(itertools.accumulate(len(piece) for piece in texts))
    index = bisect.bisect_right(ends, start)
    begin = ends[index] - len(texts[index])
    if re.match(r"\d|\.\d", text[ends[index] :]):
        digits = re.match(r"\d*", text[start:])
        if digits is not None and start + digits.end() >= ends[index]:
            return None  # the score's digits run on into the next token
    prefix = texts[index][: start - begin]
    weights: dict[float, float] = {}
    for alternative in _alternatives(tokens[index]):
        point = _point(alternative["token"], prefix, scale)
        logprob = _logprob(alternative)
        if point is not None and logprob is not None:
            weights[point] = weights.get(point, 0.0) + math.exp(logprob)
    present = [p for p in scale.points if p in weights]
    if not present:
        return None
    mass = sum(weights[p] for p in present)
    return sum(weights[p] * p for p in present) / mass
