"""What a grading judge needs that calls no model: the scale it grades on (``scale.py``), its
answer read strictly (``answers.py``), G-Eval's probability-weighted score from its log
probabilities (``geval.py``) and the default prompts with the fencing that keeps texts data
(``prompts.py``). Pure functions of text and plain data."""

from __future__ import annotations

from .answers import Parsed, parse_answer, score_position
from .geval import token_logprobs, weighted_score
from .prompts import (
    CORRECTNESS,
    PAIRWISE,
    PLACEHOLDERS,
    RUBRIC,
    RUBRIC_WITH_REFERENCE,
    check_template,
    parse_preference,
    render,
    rubric_template,
    scale_texts,
)
from .scale import CORRECTNESS_SCALE, PREFERENCE_SCALE, Scale, label_key, parse_scale

__all__ = [
    "CORRECTNESS",
    "CORRECTNESS_SCALE",
    "PAIRWISE",
    "PLACEHOLDERS",
    "PREFERENCE_SCALE",
    "RUBRIC",
    "RUBRIC_WITH_REFERENCE",
    "Parsed",
    "Scale",
    "check_template",
    "label_key",
    "parse_answer",
    "parse_preference",
    "parse_scale",
    "render",
    "rubric_template",
    "scale_texts",
    "score_position",
    "token_logprobs",
    "weighted_score",
]
