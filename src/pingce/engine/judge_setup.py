"""The judge of a run: the suite's ``judge:`` block with ``--judge``, ``--rubric`` and ``--scale``
laid over it, and what each request to a judge holds.

One home for the grading policy that is not the scale's or the prompts' own: which judges, which
template per task (the suite's, else the default in the suite's language), the request body
(temperature 0 unless the suite says otherwise, the answer's JSON schema with ``structured``:
``auto`` by default, left out by a judge whose endpoint refuses it, the score token's
probabilities with ``logprobs``) and the signature that names all of it, so a changed rubric,
template, scale, judge or parameter asks again (the answer cache is keyed by the whole request)
and an unchanged one never does. The run's scale (:func:`run_scale`) is read once more when the
run is planned, for the metrics laid out on it (:func:`grade_on_scale`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..errors import OptionError, SuiteError
from ..judged import (
    CORRECTNESS,
    CORRECTNESS_SCALE,
    PAIRWISE,
    PLACEHOLDERS,
    PREFERENCE_SCALE,
    Scale,
    check_template,
    parse_scale,
    rubric_template,
    scale_texts,
)
from ..remote.endpoint import Endpoint
from ..urls import public_url

if TYPE_CHECKING:
    from ..options import Judging
    from ..suites.build import BuiltSuite
    from ..suites.spec import JudgeSpec

__all__ = [
    "DEFAULT_PARAMETERS",
    "TASKS",
    "JudgeSetup",
    "Task",
    "grade_on_scale",
    "judge_setup",
    "run_scale",
]

Task = Literal["rubric", "correctness", "pairwise"]
TASKS: tuple[Task, ...] = ("rubric", "correctness", "pairwise")

DEFAULT_PARAMETERS: dict[str, Any] = {"temperature": 0, "max_tokens": 1024}
"""Request parameters of every judge call unless the suite's ``judge.parameters`` say otherwise."""

_NEEDED: dict[Task, tuple[str, ...]] = {
    "rubric": ("rubric", "output"),
    "correctness": ("output",),
    "pairwise": ("output_a", "output_b"),
}
"""The placeholders a suite's template of each task must hold (the others of the task's
default, :data:`pingce.judged.prompts.PLACEHOLDERS`, are optional)."""

PAIRWISE_CRITERION: dict[str, str] = {
    "en": "Which answer responds better to the question or task: correct, complete and to the "
    "point?",
    "zh": "哪个回答更好地回应了问题或任务：正确、完整、切题？",
}
"""The criterion of a pairwise preference when the run gives no rubric."""

TOP_LOGPROBS = 20
"""Alternatives asked for each answer token with ``logprobs`` (OpenAI's maximum)."""


@dataclass(frozen=True)
class JudgeSetup:
    """Who grades, on what, and how each request is made."""

    judges: tuple[str, ...]
    """The judges' model names at the endpoint (``gpt-4o-mini``), in the order given."""
    base_url: str
    """The endpoint (``--base-url``, else PINGCE_BASE_URL, else OPENAI_BASE_URL), checked."""
    rubric: str | None
    scale: Scale
    language: Literal["en", "zh"]
    templates: Mapping[str, str]
    system: str | None
    parameters: Mapping[str, Any]
    logprobs: bool
    structured: Literal["auto"] | bool
    """Send the answer's JSON schema (``auto``: until the endpoint refuses it)."""
    concurrency: int
    timeout: float
    max_retries: int
    price_prompt: float
    price_completion: float

    def task_scale(self, task: Task) -> Scale:
        """The scale a task's answers are read on: the run's for a rubric, correct / partially
        correct / incorrect (1, 0.5, 0) for correctness, A / B / tie (A's win 1, 0, 0.5) for a
        pairwise preference."""
        if task == "pairwise":
            return PREFERENCE_SCALE
        return self.scale if task == "rubric" else CORRECTNESS_SCALE

    def template(self, task: Task, reference: bool = False) -> str:
        """The task's prompt: the suite's, else the default in the suite's language (a rubric's
        with the reference answer when the metric reads one)."""
        if task in self.templates:
            return self.templates[task]
        if task == "rubric":
            return rubric_template(self.language, reference)
        if task == "pairwise":
            return PAIRWISE[self.language]
        return CORRECTNESS[self.language]

    def texts(self, task: Task) -> dict[str, str]:
        """The texts every prompt of the task is given besides the record's own: the rubric and
        the scale in words with the JSON form asked for."""
        if task == "correctness":
            return scale_texts(self.task_scale(task), self.language)
        if task == "pairwise":
            return {"rubric": self.rubric or PAIRWISE_CRITERION[self.language]}
        return {"rubric": self.rubric or "", **scale_texts(self.scale, self.language)}

    def body(self, judge: str, prompt: str, task: Task) -> dict[str, Any]:
        """The chat completion request of one prompt to one judge."""
        messages = []
        if self.system:
            messages.append({"role": "system", "content": self.system})
        messages.append({"role": "user", "content": prompt})
        body: dict[str, Any] = {"model": judge, "messages": messages, **self.parameters}
        if self.structured:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "grade",
                    "strict": True,
                    "schema": self.task_scale(task).schema(reasoning=True),
                },
            }
        if self.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = TOP_LOGPROBS
        return body

    def signature(self, tasks: tuple[Task, ...]) -> str:
        """The judges, the endpoint (never a key), a hash of what every prompt holds besides
        the record's texts (system, templates, rubric, scales and their schemas), the request
        parameters and the output modes: results.json's ``signature.judge``."""
        parts = [self.system or ""]
        for task in tasks:
            scale = self.task_scale(task)
            templates = {self.template(task, False), self.template(task, True)}
            parts += [
                task,
                *sorted(templates),
                scale.spec,
                json.dumps(scale.schema(reasoning=True)),
            ]
        parts.append(self.rubric or "")
        digest = hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:12]
        params = json.dumps(dict(self.parameters), sort_keys=True, ensure_ascii=False)
        judges = ",".join(f"openai:{j}" for j in self.judges)
        return (
            f"{judges}|url={public_url(self.base_url)}|prompt={digest}|scale={self.scale.spec}"
            f"|parameters={params}|logprobs={str(self.logprobs).lower()}"
            f"|structured={str(self.structured).lower()}"
        )


def run_scale(spec: JudgeSpec | None, judging: Judging) -> Scale:
    """The run's scale: ``--scale``, else the suite's ``judge.scale`` (1-5 by default); an
    error names which one is not a scale."""
    from ..suites.spec import JudgeSpec

    block = spec or JudgeSpec()
    try:
        return parse_scale(judging.scale if judging.scale is not None else block.scale)
    except OptionError as exc:
        where = "--scale" if judging.scale is not None else "judge.scale"
        raise OptionError(f"{where}: {exc}") from None


def grade_on_scale(suite: BuiltSuite, judging: Judging) -> None:
    """Give the run's scale to the metrics whose rows are laid out on it (a jury's agreement,
    :class:`pingce.metrics.judged.JuryAgreement`), when the run is planned: every run, side of
    a comparison and Ray piece planned with one scale lays them out alike, before any record
    is read. A metric that cannot read the scale is an error naming it."""
    from ..metrics.judged import JuryAgreement

    bound = {n: m for n, m in suite.metrics.items() if isinstance(m, JuryAgreement)}
    if not bound:
        return
    scale = run_scale(suite.spec.judge, judging)
    for name, metric in bound.items():
        try:
            metric.grade_on(scale)
        except ValueError as exc:
            raise SuiteError(str(exc), source=suite.source, key=f"metrics.{name}") from None


def judge_setup(
    spec: JudgeSpec | None, judging: Judging, base_url: str | None, tasks: tuple[Task, ...]
) -> JudgeSetup:
    """The run's judge: ``--judge``/``--rubric``/``--scale`` over the suite's ``judge:`` block.
    An error names what is missing (no judge; a rubric task without a rubric) or wrong (a scale,
    a template without a placeholder its task needs)."""
    from ..suites.spec import JudgeSpec

    block = spec or JudgeSpec()
    names = judging.judges or tuple(block.judges)
    if not names:
        raise OptionError(
            "the judged metrics need a judge: --judge openai:MODEL (repeatable for a jury) at "
            "--base-url, or the suite's judge.judges"
        )
    judges = []
    for name in names:
        provider, _, model = name.partition(":")
        if provider != "openai" or not model.strip():
            raise SuiteError(f"judge.judges: {name!r} is not openai:MODEL")
        judges.append(model.strip())
    rubric = judging.rubric if judging.rubric is not None else block.rubric
    if "rubric" in tasks and not (rubric and rubric.strip()):
        raise OptionError(
            "rubric_score grades on a rubric: give --rubric TEXT|FILE or the suite's judge.rubric"
        )
    scale = run_scale(block, judging)
    for task, template in block.templates.items():
        try:
            optional = set(PLACEHOLDERS[task]) | {"reference", "input", "scale", "form"}
            check_template(template, _NEEDED[task], optional - set(_NEEDED[task]))
        except OptionError as exc:
            raise SuiteError(f"judge.templates.{task}: {exc}") from None
    endpoint = Endpoint("--judge openai:MODEL", base_url)  # an error before any call
    return JudgeSetup(
        judges=tuple(dict.fromkeys(judges)),
        base_url=endpoint.base_url,
        rubric=rubric,
        scale=scale,
        language=block.language,
        templates={str(task): text for task, text in block.templates.items()},
        system=block.system,
        parameters={**DEFAULT_PARAMETERS, **block.parameters},
        logprobs=block.logprobs,
        structured=block.structured,
        concurrency=block.concurrency,
        timeout=block.timeout,
        max_retries=block.max_retries,
        price_prompt=block.price_prompt,
        price_completion=block.price_completion,
    )
