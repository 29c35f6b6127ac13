"""The judge phase: every prompt of every judged statistic asked of every judge once (the answer
cache answers what was asked before), each answer read strictly on its task's scale.

A statistic that grades answers (``needs_judge``) says its task (``judge_task``: ``rubric`` or
``correctness``) and gives each record's texts (``judge_texts``: ``input``, ``output``,
``reference``); this phase renders the task's prompt per record (:mod:`pingce.judged.prompts`),
asks each judge through the client of the model under test (:class:`pingce.predict.ChatModel`:
one session, concurrency, retries with Retry-After, the dead-endpoint stop, the answer cache
keyed by the whole request), and reads each answer (:func:`pingce.judged.scale.parse_answer`;
with ``logprobs``, G-Eval's weighted score where the answer gives the probabilities). An answer
without a score on the scale, or a call that failed after its retries, is a counted failure
with the raw answer kept for records.jsonl, never a score.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..judged import (
    Scale,
    parse_answer,
    render,
    weighted_score,
)
from ..metrics.protocol import Statistic
from ..options import ModelCall
from ..predict.client import Answer, ChatModel, answer_together
from ..progress import ProgressHook
from ..records import Table
from ..remote.cache import cache_path
from ..remote.http import RetryPolicy
from ..remote.usage import BackendStats, answer_record, charge_usage
from .judge_setup import TASKS, JudgeSetup, Task, judge_setup
from .plan import Plan

__all__ = ["Counted", "Graded", "Judgements", "grade", "judged_statistics"]


@dataclass
class Graded:
    """One judged statistic's grades, per record and judge."""

    values: np.ndarray
    """``(n, judges)`` on the scale's own units; NaN where that judge gave no grade."""
    scale: Scale
    judges: tuple[str, ...]
    failures: np.ndarray
    """``(n, judges)`` object: why there is no grade (None where there is one)."""
    codes: np.ndarray
    """``(n, judges)``: the stated grade's place among the scale's declared values (its points
    or labels, :meth:`pingce.judged.Scale.code`); -1 where there is no grade or the scale is
    continuous. G-Eval's weighted score is a value, not a code: the code is the score the
    judge wrote."""
    entries: list[list[dict[str, Any]]]
    """Per record, per judge: what records.jsonl keeps (the grade, the raw answer, its reasoning,
    tokens, seconds, whether the cache answered)."""

    def normalized(self) -> np.ndarray:
        """The values mapped to [0, 1] by the scale (NaN stays NaN)."""
        low, high = self.scale.low, self.scale.high
        return (self.values - low) / (high - low) if high > low else self.values * 0.0


@dataclass
class Counted:
    """Answers counted while reading them, by judge: each answer by its ``id`` (one a distinct
    request, however many statistics read it)."""

    logprobs: bool = False
    """Whether G-Eval's weighted scores were asked for (``logprobs`` on a points scale)."""
    unparsed: dict[str, set[int]] = field(default_factory=dict)
    """The answers that came back without a grade on the scale."""
    fallbacks: dict[str, set[int]] = field(default_factory=dict)
    """With ``logprobs``: the graded answers without usable probabilities, graded by their
    stated score."""


@dataclass
class Judgements:
    """The judge phase's result: the grades by statistic key, what the calls did and cost, and
    the signature that names the judges, prompts, scale and parameters."""

    graded: dict[Hashable, Graded]
    stats: dict[str, BackendStats]
    """By judge (``openai:NAME``)."""
    signature: str
    counted: Counted = field(default_factory=Counted)
    """What the answers' reading counted, by judge."""

    def summary(self) -> dict[str, Any]:
        """results.json's ``judge``: per judge, requests, cache hits, failed calls, answers
        without a grade, tokens and cost; with ``logprobs`` on a points scale, the answers
        graded by their stated score for want of usable probabilities."""
        out: dict[str, Any] = {}
        for judge, stats in self.stats.items():
            one = stats.summary()
            one.pop("pairs", None)
            one["prompts"] = stats.pairs
            one["unparsed_answers"] = len(self.counted.unparsed.get(judge, ()))
            if self.counted.logprobs:
                one["stated_score_fallbacks"] = len(self.counted.fallbacks.get(judge, ()))
            out[judge] = one
        return out

    def self_preference(self, model: ModelCall | None) -> list[str]:
        """A note for each judge that is also the model under test (``--model``): a model tends
        to prefer its own answers (self-preference), so its grades of them need a second
        judge or a human check."""
        if model is None:
            return []
        return [
            f"self-preference: the judge {judge} is also the model under test (--model "
            f"{model.text}); models tend to grade their own answers higher: add another --judge "
            "or audit its grades"
            for judge in self.stats
            if judge.partition(":")[2] == model.name
        ]

    def column(self, n: int) -> dict[str, list[Any]]:
        """records.jsonl's ``judge.grades``: per record, every grade every judge gave it (None
        for a record no judged statistic asked about); a record's prompts of one statistic are
        consecutive (a pairwise preference asks two, one in each order). A prompt two
        statistics share (the rubric score and the jury's agreement) is listed once."""
        column: list[Any] = [None] * n
        seen: set[tuple[int, str]] = set()
        for graded in self.graded.values():
            per = max(1, len(graded.entries) // n) if n else 1
            for p, entries in enumerate(graded.entries):
                i = p // per
                fresh = [e for e in entries if (i, repr(e)) not in seen]
                seen.update((i, repr(e)) for e in entries)
                if fresh:
                    column[i] = [*(column[i] or []), *fresh]
        return {"grades": column} if any(c is not None for c in column) else {}


def judged_statistics(plan: Plan) -> list[Statistic]:
    """The run's statistics that grade answers with a judge."""
    return [s for s in plan.statistics.values() if s.needs_judge]


def grade(plan: Plan, table: Table, progress: ProgressHook, *, share: int = 1) -> Judgements | None:
    """Ask the judges about every record of every judged statistic; None when none is judged.
    ``share``: how many tables are graded at once (Ray's pieces), among which each judge's
    concurrency is divided."""
    needing = judged_statistics(plan)
    if not needing:
        return None
    tasks = tuple(dict.fromkeys(_task(s) for s in needing))
    options = plan.options
    setup = judge_setup(plan.suite.spec.judge, options.judging, options.base_url, tasks)
    if share > 1:
        setup = replace(setup, concurrency=max(1, setup.concurrency // share))
    prompts: dict[Hashable, tuple[Task, list[str]]] = {}
    for statistic in needing:
        task = _task(statistic)
        common = setup.texts(task)
        template = setup.template(task, statistic.judge_reference())
        texts = statistic.judge_texts(table)
        prompts[statistic.key] = (task, [render(template, **common, **t) for t in texts])
    answers, stats = _ask(setup, prompts, options.cache, progress, table.judge_calls)
    graded: dict[Hashable, Graded] = {}
    counted = Counted(logprobs=setup.logprobs and setup.scale.kind == "points")
    for key, (task, _) in prompts.items():
        graded[key] = _read(setup, task, [answers[j][key] for j in setup.judges], counted)
        if task == "pairwise":  # a record's two prompts: output_a shown first, then second
            for p, entries in enumerate(graded[key].entries):
                for entry in entries:
                    entry["order"] = "output_a first" if p % 2 == 0 else "output_b first"
    return Judgements(graded, stats, setup.signature(tasks), counted)


def _task(statistic: Statistic) -> Task:
    """A judged statistic's task, checked against the tasks the set-up knows."""
    task = statistic.judge_task
    if task not in TASKS:
        raise ValueError(f"statistic {statistic.key!r}: judge_task {task!r} is not one of {TASKS}")
    return task


def _ask(
    setup: JudgeSetup,
    prompts: dict[Hashable, tuple[Task, list[str]]],
    cache: str | bool | None,
    progress: ProgressHook,
    calls: np.ndarray | None = None,
) -> tuple[dict[str, dict[Hashable, list[Answer]]], dict[str, BackendStats]]:
    """Every judge's answers to every statistic's prompts (equal requests asked once), the
    judges asked at the same time, each through its own client (its concurrency, its progress
    bar); and each judge's stats by ``openai:NAME``. ``calls`` (``--judge-repeats``): each
    row's judge call, so that the calls after the first about an answer are asked (and
    cached) apart."""
    from ..predict.cache import AnswerCache

    path = cache_path(cache)  # --cache, --no-cache: the file the model's answers share
    jobs = []
    numbers: list[list[int] | None] = []
    spans: dict[Hashable, tuple[int, int]] = {}
    for judge in setup.judges:
        bodies: list[dict[str, Any]] = []
        repeats: list[int] = []
        for key, (task, texts) in prompts.items():
            start = len(bodies)
            bodies.extend(setup.body(judge, text, task) for text in texts)
            spans[key] = (start, len(bodies))
            repeats.extend(_call_numbers(calls, len(texts)))
        numbers.append(None if calls is None else repeats)
        client = ChatModel(
            judge,
            base_url=setup.base_url,
            concurrency=setup.concurrency,
            timeout=setup.timeout,
            policy=RetryPolicy(max_retries=setup.max_retries),
            price_prompt=setup.price_prompt,
            price_completion=setup.price_completion,
            cache=None if path is None else AnswerCache(path),
            format_fallback=setup.structured == "auto",
        )
        jobs.append((client, bodies, progress(f"judge {judge}", float(len(bodies)))))
    try:
        done = answer_together(jobs, numbers)
    finally:
        for client, _, _ in jobs:
            client.close()
    answers: dict[str, dict[Hashable, list[Answer]]] = {}
    stats: dict[str, BackendStats] = {}
    for judge, (found, judged) in zip(setup.judges, done, strict=True):
        answers[judge] = {key: found[a:b] for key, (a, b) in spans.items()}
        stats[f"openai:{judge}"] = judged
    return answers, stats


def _call_numbers(calls: np.ndarray | None, prompts: int) -> list[int]:
    """Each prompt's judge call: a row's (one prompt a row), each of a row's two (a pairwise
    prompt in both orders), or 1."""
    if calls is None:
        return [1] * prompts
    if prompts == calls.shape[0]:
        return [int(c) for c in calls.tolist()]
    if prompts == 2 * calls.shape[0]:
        return [int(c) for c in np.repeat(calls, 2).tolist()]
    return [1] * prompts


def _read(
    setup: JudgeSetup,
    task: Task,
    by_judge: Sequence[list[Answer]],
    counted: Counted,
) -> Graded:
    """Every judge's answers to one statistic's prompts, read on the task's scale."""
    scale = setup.task_scale(task)
    n, judges = len(by_judge[0]), len(by_judge)
    values = np.full((n, judges), np.nan)
    failures = np.full((n, judges), None, dtype=object)
    codes = np.full((n, judges), -1, dtype=np.intp)
    entries: list[list[dict[str, Any]]] = [[] for _ in range(n)]
    for j, (judge, answers) in enumerate(zip(setup.judges, by_judge, strict=True)):
        name = f"openai:{judge}"
        for i, answer in enumerate(answers):
            entry: dict[str, Any] = {"judge": name, "task": task}
            value, why = _value(answer, scale, setup, entry)
            if value is None:
                failures[i, j] = why
                entry["failure"] = why
                if answer.reply is not None:  # one answer of a request, whoever reads it
                    counted.unparsed.setdefault(name, set()).add(id(answer))
            else:
                values[i, j] = value
                codes[i, j] = scale.code(entry.get("score"), entry.get("label"))
                if entry.get("weighted") is False:
                    counted.fallbacks.setdefault(name, set()).add(id(answer))
            entries[i].append(entry)
    names = tuple(f"openai:{j}" for j in setup.judges)
    return Graded(values, scale, names, failures, codes, entries)


def _value(
    answer: Answer, scale: Scale, setup: JudgeSetup, entry: dict[str, Any]
) -> tuple[float | None, str | None]:
    """The grade of one answer (filling ``entry``), or None and why there is none."""
    if answer.reply is None:
        return None, f"judge call failed: {answer.error or 'no answer'}"
    choice = _choice(answer.reply)
    content = _content(choice)
    prices = (setup.price_prompt, setup.price_completion)
    tokens = charge_usage(answer.reply, BackendStats(), *prices)  # the counts, read as usual
    entry.update(answer_record(content, tokens, answer.latency_sec or 0.0, prices))
    if answer.latency_sec is None:
        del entry["latency_sec"]
    if answer.cached:
        entry["cached"] = True
    refusal = _refusal(choice)
    if refusal is not None:  # the model declined (OpenAI's message.refusal): never a score
        entry["refusal"] = refusal
        return None, f"refusal: {refusal}"
    parsed = parse_answer(content, scale)  # a preference too: its scale is A / B / tie
    if parsed.reasoning:
        entry["reasoning"] = parsed.reasoning
    if parsed.value is None:
        return None, parsed.reason or "the answer has no grade on the scale"
    if parsed.label is not None:
        entry["label"] = parsed.label
    entry["score"] = parsed.value
    if setup.logprobs and scale.kind == "points":
        return _weighted(choice, scale, parsed.value, entry), None
    return parsed.value, None


def _weighted(choice: dict[str, Any], scale: Scale, stated: float, entry: dict[str, Any]) -> float:
    """G-Eval's probability-weighted score of an answer, or its stated score when the answer
    gives no usable probabilities (then ``entry["weighted"]`` is False: counted, shown)."""
    weighted = weighted_score(choice.get("logprobs") if choice else None, scale)
    if weighted is None:
        entry["weighted"] = False
        return stated
    entry["weighted_score"] = weighted
    return weighted


def _refusal(choice: dict[str, Any]) -> str | None:
    """The model's refusal text (``message.refusal`` in OpenAI's API), or None."""
    message = choice.get("message")
    refusal = message.get("refusal") if isinstance(message, dict) else None
    return refusal if isinstance(refusal, str) and refusal.strip() else None


def _choice(reply: Any) -> dict[str, Any]:
    try:
        choice = reply["choices"][0]
    except (KeyError, IndexError, TypeError):
        return {}
    return choice if isinstance(choice, dict) else {}


def _content(choice: dict[str, Any]) -> str:
    """The answer's text (content parts joined)."""
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""
