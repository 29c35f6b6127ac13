"""Two systems' answers judged against each other (``pingce compare --pairwise``, issue 33).

For every paired record, each judge is asked which answer is better, the candidate's or the
baseline's, in both orders (the candidate's shown first, then the baseline's): the prompts, the
requests, the answer cache, the counted failures and the signature are the judge phase's
(:func:`pingce.engine.judgements.grade`, the ``pairwise`` task of the ``judged-pairwise``
suite), and the rows are :class:`pingce.metrics.judged.PairwiseStatistic`'s, the candidate as
``output_a``: a verdict counts when both orders agree, a tie otherwise. The candidate's win rate
and the judges' position bias then get their intervals from the comparison's bootstrap (its
resamples, seed, method, level, units and Poisson keys) as a run's metrics get theirs.

The answers are the field the suite's judged metrics grade (``output`` in the ``judged`` suite)
and the question their ``input``: read from both record files (:func:`pairs_of_tables`), or from
two stored runs' per-record rows, which keep them with ``--records-fields all``
(:func:`pairs_of_rows`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import OptionError
from ..metrics.judged import JudgedStatistic, PairwiseStatistic, PositionBias, WinRate
from ..metrics.protocol import LEFT_OUT, Context, Metric, StatBlock
from ..options import Resampling
from ..progress import ProgressHook
from ..records import Table
from ..results import MetricResult, PairwiseComparison, PairwiseSlice, RecordRows
from ..stats import bootstrap_intervals
from .groups import resampled_blocks
from .plan import Plan
from .slices import Slice, slice_seed
from .values import finalised_number, policed_result, with_intervals

if TYPE_CHECKING:
    from .judgements import Graded

__all__ = [
    "PairwiseFields",
    "judge_pairwise",
    "pairs_of_rows",
    "pairs_of_tables",
    "pairwise_fields",
]

CANDIDATE, BASELINE, QUESTION = "output_a", "output_b", "input"
"""The columns of the table of pairs: the candidate's answer is ``output_a`` of the pairwise
prompt (shown first in the first order), the baseline's ``output_b``."""


@dataclasses.dataclass(frozen=True)
class PairwiseFields:
    """The record fields a pairwise comparison reads: the answer, and the question if any."""

    output: str
    input: str | None


def pairwise_fields(plan: Plan) -> PairwiseFields:
    """The answer field the suite's judged metrics grade (and the question they give the judge):
    what ``--pairwise`` compares. An error before any work when the suite grades no answer with
    a judge, or grades two answer fields."""
    judged = [s for s in plan.statistics.values() if isinstance(s, JudgedStatistic)]
    outputs = list(dict.fromkeys(s.output for s in judged))
    name = plan.suite.spec.name
    if not outputs:
        pairwise = any(isinstance(s, PairwiseStatistic) for s in plan.statistics.values())
        also = (
            " (this suite already compares output_a with output_b in each record: run it with "
            "pingce run)"
            if pairwise
            else ""
        )
        raise OptionError(
            f"--pairwise compares the answers the suite's judged metrics grade (rubric_score, "
            f"correctness), and the suite {name} has none{also}: compare with the judged suite, "
            "or add a judged metric to the suite"
        )
    if len(outputs) > 1:
        raise OptionError(
            f"--pairwise compares one answer field, and the suite {name}'s judged metrics grade "
            f"{', '.join(repr(o) for o in outputs)}: give them one output field"
        )
    inputs = [s.input for s in judged if s.input is not None]
    return PairwiseFields(outputs[0], inputs[0] if inputs else None)


def _pairs(
    source: str,
    ids: Sequence[str | None],
    lines: np.ndarray,
    inputs: Sequence[Any] | None,
    candidate: Sequence[Any],
    baseline: Sequence[Any],
) -> Table:
    columns = {CANDIDATE: list(candidate), BASELINE: list(baseline)}
    if inputs is not None:
        columns[QUESTION] = list(inputs)
    return Table(source=source, ids=list(ids), lines=np.asarray(lines), columns=columns)


def pairs_of_tables(fields: PairwiseFields, candidate: Table, baseline: Table) -> Table:
    """The table of pairs from both sides' records (the baseline's in the candidate's order):
    the question is the candidate's."""
    return _pairs(
        candidate.source,
        candidate.ids,
        candidate.lines,
        None if fields.input is None else candidate.column(fields.input),
        candidate.column(fields.output),
        baseline.column(fields.output),
    )


def _column(rows: RecordRows | None, path: str, label: str, n: int) -> list[Any]:
    """A field's values from a stored run's per-record rows, or the error that says how to make
    a run keep them."""
    if rows is None or rows.n != n:
        raise OptionError(
            f"run {label}: its per-record rows (records.jsonl) could not be read back whole, and "
            "--pairwise needs every record's answer: compare the record files with pingce "
            "compare SUITE --data CANDIDATE --baseline BASELINE --pairwise"
        )
    for kept in (rows.fields, rows.context):
        if path in kept:
            return list(kept[path])
    raise OptionError(
        f"run {label} did not keep the field {path!r} in its records.jsonl, and --pairwise "
        "asks the judges about both runs' answers: run both with --records-fields all (the rows "
        "then keep every field the suite read), or compare the record files with pingce compare "
        "SUITE --data CANDIDATE --baseline BASELINE --pairwise"
    )


def pairs_of_rows(
    fields: PairwiseFields,
    rows: tuple[RecordRows | None, RecordRows | None],
    counts: tuple[int, int],
    index: tuple[np.ndarray, np.ndarray],
    labels: Sequence[str],
) -> Table:
    """The table of pairs from two stored runs' per-record rows (``counts``: each run's records;
    ``index``: the paired records' positions in each run, in the candidate's order)."""
    answers = [
        _column(side, fields.output, label, n)
        for side, label, n in zip(rows, labels, counts, strict=True)
    ]
    inputs = None
    if fields.input is not None:
        inputs = _column(rows[0], fields.input, labels[0], counts[0])
        inputs = [inputs[i] for i in index[0].tolist()]
    first = rows[0]
    assert first is not None  # _column checked it
    return _pairs(
        labels[0],
        [first.ids[i] for i in index[0].tolist()],
        first.lines[index[0]],
        inputs,
        [answers[0][i] for i in index[0].tolist()],
        [answers[1][i] for i in index[1].tolist()],
    )


def judge_pairwise(
    plan: Plan,
    fields: PairwiseFields,
    pairs: Table,
    units: np.ndarray | None,
    keys: np.ndarray | None,
    progress: ProgressHook,
    slice_rows: Sequence[Slice] = (),
) -> PairwiseComparison:
    """Ask the judges about every pair in both orders and compute the candidate's win rate and
    the judges' position bias, with their bootstrap intervals (``units``: a unit code per pair,
    resampled whole; ``keys``: the Poisson keys of the comparison; ``slice_rows``: the
    ``--slice`` values' records, each with its slice's seed as the comparison's slices)."""
    from .judgements import grade  # the HTTP client's imports: only when asked

    statistic = PairwiseStatistic(CANDIDATE, BASELINE, None if fields.input is None else QUESTION)
    judged = grade(
        dataclasses.replace(plan, statistics={statistic.key: statistic}), pairs, progress
    )
    assert judged is not None  # the statistic needs a judge
    computed = statistic.compute(pairs, Context(judged=judged.graded))
    verdicts = _verdicts(pairs, computed, judged.graded[statistic.key])
    block = computed.compact()
    metrics: dict[str, Metric] = {
        "win_rate": WinRate(CANDIDATE, BASELINE, statistic.input),
        "position_bias": PositionBias(CANDIDATE, BASELINE, statistic.input),
    }
    resampling = plan.options.resampling
    values = partial(_values, metrics, statistic.key, plan.options.on_judge_failure, resampling)
    results = values(block, units, keys, resampling.seed, progress, "")
    slices = {}
    for part in slice_rows:
        rows = part.rows
        seed = slice_seed(resampling.seed, part.key, poisson=keys is not None)
        found = values(
            block.take(rows),
            None if units is None else units[rows],
            None if keys is None else keys[rows],
            seed,
            progress,
            f" {part.key}",
        )
        slices[part.key] = PairwiseSlice(
            n_records=part.n,
            win_rate=found["win_rate"],
            position_bias=found["position_bias"],
            verdict=_verdict(found["win_rate"], resampling.level, resampling.resamples),
        )
    return PairwiseComparison(
        output=fields.output,
        input=fields.input,
        win_rate=results["win_rate"],
        position_bias=results["position_bias"],
        verdict=_verdict(results["win_rate"], resampling.level, resampling.resamples),
        judge=judged.summary(),
        signature=judged.signature,
        slices=slices or None,
    ).with_records(verdicts)


def _values(
    metrics: dict[str, Metric],
    key: Hashable,
    policy: str,
    resampling: Resampling,
    block: StatBlock,
    units: np.ndarray | None,
    keys: np.ndarray | None,
    seed: int | list[int],
    progress: ProgressHook,
    label: str,
) -> dict[str, MetricResult]:
    """The metrics over ``block`` under the judge-failure policy, with their intervals from the
    comparison's bootstrap settings (whole units; Poisson keys)."""
    results = {name: policed_result(m, block, policy) for name, m in metrics.items()}
    if resampling.resamples <= 0:
        return results
    resampled, keys = resampled_blocks({key: block}, units, keys)
    intervals = bootstrap_intervals(
        resampled,
        {name: (m, key) for name, m in metrics.items()},
        {name: finalised_number(m, block, results[name].value) for name, m in metrics.items()},
        resamples=resampling.resamples,
        seed=seed,
        method=resampling.interval_method,
        level=resampling.level,
        progress=progress(f"bootstrap pairwise{label}", float(resampling.resamples)),
        keys=keys,
        stream=resampling.stream,
    )
    return with_intervals(results, intervals)


SIDES = ("candidate", "baseline")


def _verdicts(pairs: Table, block: StatBlock, graded: Graded) -> list[dict[str, Any]]:
    """Each record's verdict (the judges' mean win of the candidate: above a half the
    candidate's answer, below it the baseline's, a half a tie or an order-dependent verdict;
    ``none`` for a record left out, with why) and what each judge said in each order."""
    assert block.rows is not None
    rows, left = block.rows, block.reasons.get(LEFT_OUT)
    out = []
    for i in range(pairs.n):
        answers = []
        for order in range(2):  # the candidate's answer shown first, then the baseline's
            shown = SIDES if order == 0 else SIDES[::-1]
            for entry in graded.entries[2 * i + order]:
                score = entry.get("score")
                said = entry.get("failure") or (
                    "tie" if score == 0.5 else f"{shown[0] if score == 1 else shown[1]}'s answer"
                )
                reason = f": {entry['reasoning']}" if entry.get("reasoning") else ""
                answers.append(f"{entry['judge']} ({shown[0]}'s answer first): {said}{reason}")
        if left is not None and left[i] is not None:
            verdict = "none"
        elif rows[i, 0] != 0.5:
            verdict = SIDES[0] if rows[i, 0] > 0.5 else SIDES[1]
        else:
            verdict = "order-dependent" if rows[i, 2] > 0 else "tie"
        out.append(
            {
                "id": pairs.ids[i],
                "line": int(pairs.lines[i]),
                "verdict": verdict,
                "answers": answers,
            }
        )
    return out


def _verdict(win: MetricResult, level: float, resamples: int) -> str | None:
    """The win rate in words: which answers the judges prefer, when its interval excludes 0.5
    (no preference)."""
    if win.value is None:
        return None
    if resamples <= 0 or win.ci_low is None or win.ci_high is None:
        return "not tested (--bootstrap 0)" if resamples <= 0 else "not tested"
    shown = f"{level:.0%} interval [{win.ci_low:.3g}, {win.ci_high:.3g}]"
    if win.ci_low > 0.5:
        return f"the judges prefer the candidate's answers ({shown} above 0.5)"
    if win.ci_high < 0.5:
        return f"the judges prefer the baseline's answers ({shown} below 0.5)"
    return f"no clear preference ({shown} holds 0.5)"
