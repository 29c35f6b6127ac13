"""The results of a run and of a comparison: plain data that reports only read.

``pingce.evaluate`` returns an :class:`EvaluationResult`; ``result.model_dump_json()`` is the
content of results.json. Values are full-precision floats or ``None`` (null)
with an ``undefined_reason``; nothing is rounded here, only in reports. The per-record values
and miss reasons (records.jsonl) are :class:`RecordRows`: arrays made by the engine in its one
pass over the statistics, never a callback into the metrics. ``pingce.compare`` returns a
:class:`ComparisonResult` (comparison.json). What a run or a comparison produced beside its
result (rows, saved statistics, the model's answers, shards) is not part of it: the result
holds one reference to it (``outputs``, :mod:`pingce.runfolder.outputs`), which its copies share
and :func:`pingce.report.write_outputs` finds; how the files are written and read back is
:mod:`pingce.runfolder`'s. ``to_pandas()`` and ``record_frame()`` give the same
numbers as pandas DataFrames (:mod:`pingce.frames`; pandas imported only then).

The result models are :class:`pingce._plain.PlainModel` classes: pydantic's API
(``model_dump_json``, ``model_validate_json``, ``model_copy``, ``model_fields``...), with
pydantic imported only when a method needs it (validating, the schema), never by a run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ._json import json_texts
from ._plain import Field, PlainModel, PrivateAttr
from .sampling import SamplingInfo

if TYPE_CHECKING:
    import pandas as pd

    from .runfolder.outputs import ComparisonOutputs, RunOutputs

__all__ = [
    "ComparisonResult",
    "ComparisonSlice",
    "DataInfo",
    "Decision",
    "DecisionGate",
    "EvaluationResult",
    "Failures",
    "MetricComparison",
    "MetricResult",
    "PairwiseComparison",
    "PairwiseSlice",
    "RecordRows",
    "Signature",
    "SignificanceTest",
    "SliceResult",
]


_Plain = PlainModel
"""The result models' base: data with pydantic's API, pydantic imported only when a method needs
it (:mod:`pingce._plain`); keys in a model's ``OMIT_WHEN_NONE`` are left out of its JSON when
None."""


class MetricResult(_Plain):
    """One metric's value, its confidence interval and the units it was computed over."""

    OMIT_WHEN_NONE = (
        "undefined_reason",
        "value_note",
        "ci_note",
        "failed_records",
        "model_failed_records",
        "n_records",
        "n_scored",
        "unparsed_records",
        "higher_is_better",
    )

    value: float | None = Field(
        description="The metric; null when undefined (see undefined_reason)."
    )
    ci_low: float | None = Field(default=None, description="Lower end of the bootstrap interval.")
    ci_high: float | None = Field(default=None, description="Upper end of the bootstrap interval.")
    n: int = Field(description="Units (records, predicted positives, ...) it was computed over.")
    undefined_reason: str | None = Field(default=None, description="Why the value is null.")
    value_note: str | None = Field(
        default=None,
        description="Where the value comes from a convention rather than the data (a 0/0 "
        "filled by the zero-division policy).",
    )
    ci_note: str | None = Field(default=None, description="Anything to know about the interval.")
    failed_records: int | None = Field(
        default=None,
        description="Records this metric needed that had failed similarity calls (judge, "
        "embedding endpoint, reranker) or a failed call to the model under test (--model): "
        "the value is null, or computed without them under --on-judge-failure skip.",
    )
    model_failed_records: int | None = Field(
        default=None,
        description="Of failed_records, those whose call to the model under test (--model) "
        "failed: they have no prediction, and are never scored as wrong.",
    )
    n_records: int | None = Field(
        default=None,
        description="Records the metric covers (the records of its task; all, for most).",
    )
    n_scored: int | None = Field(
        default=None,
        description="Records it was computed over: n_records less those left out after failed "
        "similarity calls.",
    )
    unparsed_records: int | None = Field(
        default=None,
        description="Records it covers whose prediction did not parse (never dropped: each "
        "suite's page in the documentation says how they score).",
    )
    higher_is_better: bool | None = Field(
        default=None,
        description="Whether a higher value is better (false: lower is, as for latencies and "
        "error rates); the metric's own direction, as comparisons and gates read it. Absent "
        "from a results.json written before it was recorded.",
    )

    def partial(self) -> str | None:
        """``scored/total`` when the metric was computed over fewer records than it covers."""
        if self.n_records is None or self.n_scored is None or self.n_scored >= self.n_records:
            return None
        return f"{self.n_scored}/{self.n_records}"

    def note(self) -> str:
        """The remarks a report shows beside the value (empty when there are none): why it is
        null or where it comes from, the interval's caveat, and unparsed predictions."""
        parts = [self.undefined_reason or self.value_note or self.ci_note or ""]
        if self.unparsed_records:
            covered = f" of {self.n_records}" if self.n_records is not None else ""
            parts.append(f"{self.unparsed_records}{covered} predictions did not parse")
        return "; ".join(part for part in parts if part)


class SliceResult(_Plain):
    """Metrics (and tables) over the records whose slice field has one value."""

    n_records: int
    """Records with this value of the slice field."""
    metrics: dict[str, MetricResult]
    tables: dict[str, dict[str, Any]] = {}


class Failures(_Plain):
    """Failures counted during the run; a failure is never turned into a score.

    ``judge``: similarity calls that failed after retries; ``parse``: records whose prediction
    could not be parsed (scored as wrong). Suites may add counts, such as ``empty_text``: records
    a reference-compatible text score set to 0 (the reference's library raises on them), and
    ``invalid_prediction`` (every suite with a label scale): records whose predicted label is
    off the scale, blank or null (scored as wrong; left out of the kappas, with a note).
    """

    EXTRA = "allow"

    judge: int = 0
    parse: int = 0


class Signature(_Plain):
    """Everything needed to reproduce the numbers."""

    EXTRA = "allow"

    seed: int
    """The seed of the bootstrap and of ``--sample``."""
    bootstrap: int
    """Bootstrap resamples (0: no intervals)."""
    ci_method: str
    """How the resamples become an interval (``bca``, ``percentile``...)."""
    ci_level: float
    """The intervals' confidence level (0.95)."""
    bootstrap_method: str = "multinomial"
    """``multinomial`` (n records drawn with replacement) or ``poisson`` (a Poisson(1) weight
    per record keyed on the record)."""
    resampling: str = "multinomial-indices"
    """How the resamples were drawn: ``multinomial-per-block`` (each statistic's own
    Multinomial counts of its distinct rows; the default since issue 32),
    ``multinomial-indices`` (n record indices shared by every statistic: ``--bootstrap-stream
    indices``, and every results.json written before) or ``poisson``."""
    similarity: str | None
    """The similarity backend and its model or settings (``lexical:char-1-3``), when a metric
    used one."""
    unit: str | None = None
    """The field whose values the bootstrap resamples (whole dialogues), or None for records."""
    zero_division: float | None
    """The value of 0/0 (null: undefined, with a reason)."""
    labels: list[str] | None
    """The label scale, in order."""
    metrics: dict[str, str]
    """Each metric with every argument it was computed with."""
    versions: dict[str, str]
    """pingce's, Python's and the numeric libraries' versions."""


class DataInfo(_Plain):
    """Where the records came from."""

    source: str
    """The records' file, as given (or what kind of object they were)."""
    n_loaded: int
    """Records read, before ``--sample``."""
    id_field: str
    """The field holding the records' ids."""
    field_map: dict[str, str] = {}
    """The data's column for each suite field read from another name (``--map``, ``fields:``)."""
    encoding: str | None = None
    """The text encoding the records were read in (``utf-8``, ``gb18030``, ...: detected, or
    ``--encoding``); None for a source that is not text (Parquet, Excel, a frame)."""


@dataclass
class RecordRows:
    """Per-record values and miss reasons, by column (what records.jsonl holds).

    ``ids`` are the records' ids (None for a record without one), ``lines`` their line numbers,
    ``fields`` the values of the fields the suite read (labels as their names), ``values`` one
    float array per metric (NaN where undefined), ``misses`` one object array per metric (the
    reason a record missed, None where it did not or nothing is known) and ``context`` the
    values of the context fields no statistic reads (the suite's ``context:``, ``--context``),
    as read, None where a record lacks the field; ``model`` (``--model`` only) the model call of
    each record by column (the messages sent, the answer, tokens, latency, whether it came from
    the cache, its cost where a price is set: records.jsonl's sparse ``"model"``); ``judge``
    (``--similarity judge`` only) what the LLM judge was asked and answered for each record's
    pairs (:func:`pingce.engine.similarities.judge_columns`: records.jsonl's sparse
    ``"judge"``); ``audit`` (a run audited by people, ``pingce audit RUN --labels``) the records
    they checked: ``verified`` (true) and their labels beside the judge's (``pairs``, ``grades``:
    records.jsonl's sparse ``"audit"``, :data:`pingce.runfolder.layout.RECORDS`)."""

    ids: list[str | None]
    lines: np.ndarray
    fields: dict[str, Any] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    misses: dict[str, np.ndarray] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    judge: dict[str, Any] = field(default_factory=dict)
    audit: dict[str, Any] = field(default_factory=dict)
    repeat: np.ndarray | None = None
    """With repeats: each row's repeat number (a row is a record's attempt; ids recur)."""
    flaky: np.ndarray | None = None
    """With repeats: whether the row's record is flagged flaky for some 0/1 metric
    (:mod:`pingce.repeats.summary`)."""
    judge_call: np.ndarray | None = None
    """With ``--judge-repeats``: each row's judge call (1 … J)."""

    CHUNK = 65536

    @property
    def n(self) -> int:
        """Number of records."""
        return len(self.ids)

    def take(self, index: np.ndarray) -> RecordRows:
        """The rows of the records at ``index`` (positions), in that order."""
        at = np.asarray(index, dtype=np.int64)
        positions = at.tolist()

        def pick(column: Any) -> Any:
            if isinstance(column, np.ndarray):
                return column[at]
            return [column[i] for i in positions]

        return RecordRows(
            [self.ids[i] for i in positions],
            np.asarray(self.lines)[at],
            {k: pick(v) for k, v in self.fields.items()},
            {k: v[at] for k, v in self.values.items()},
            {k: v[at] for k, v in self.misses.items()},
            {k: pick(v) for k, v in self.context.items()},
            {k: pick(v) for k, v in self.model.items()},
            {k: pick(v) for k, v in self.judge.items()},
            {k: pick(v) for k, v in self.audit.items()},
            None if self.repeat is None else np.asarray(self.repeat)[at],
            None if self.flaky is None else np.asarray(self.flaky)[at],
            None if self.judge_call is None else np.asarray(self.judge_call)[at],
        )

    def iter_rows(self) -> Iterator[dict[str, Any]]:
        """One dictionary per record: id, line, its context (when it has any), the fields
        read, values and miss reasons, as
        plain JSON data (what the record's records.jsonl line reads back as: an evidence item
        an object, a tuple a list, NaN None); made a chunk at a time, so a million records never
        sit in memory as a million dictionaries."""
        for start in range(0, self.n, self.CHUNK):
            stop = min(start + self.CHUNK, self.n)
            fields = [
                (path, _json_data(_plain(column[start:stop])))
                for path, column in self.fields.items()
            ]
            values = [(name, _plain(column[start:stop])) for name, column in self.values.items()]
            misses = [(name, column[start:stop]) for name, column in self.misses.items()]
            context = [
                (path, _json_data(list(column[start:stop])))
                for path, column in self.context.items()
            ]
            model, judge, audit = (
                [(name, _json_data(list(column[start:stop]))) for name, column in calls.items()]
                for calls in (self.model, self.judge, self.audit)
            )
            ids, lines = self.ids[start:stop], self.lines[start:stop].tolist()
            repeat = None if self.repeat is None else self.repeat[start:stop].tolist()
            flaky = None if self.flaky is None else self.flaky[start:stop].tolist()
            judged = None if self.judge_call is None else self.judge_call[start:stop].tolist()
            for i in range(stop - start):
                row: dict[str, Any] = {"id": ids[i], "line": lines[i]}
                if repeat is not None:
                    row["repeat"] = repeat[i]
                if judged is not None:
                    row["judge_call"] = judged[i]
                if flaky is not None:
                    row["flaky"] = flaky[i]
                shown = {path: column[i] for path, column in context if column[i] is not None}
                if shown:
                    row["context"] = shown
                call = {name: column[i] for name, column in model if column[i] is not None}
                if call:
                    row["model"] = call
                asked = {name: column[i] for name, column in judge if column[i] is not None}
                if asked:
                    row["judge"] = asked
                row["fields"] = {path: column[i] for path, column in fields}
                row["values"] = {name: column[i] for name, column in values}
                missed = {name: column[i] for name, column in misses if column[i] is not None}
                if missed:
                    row["misses"] = missed
                checked = {name: column[i] for name, column in audit if column[i] is not None}
                if checked:
                    row["audit"] = checked
                yield row


_JSON_SCALARS = {str, int, bool, type(None)}
"""Types that are plain JSON data as they are."""


def _json_data(values: list[Any]) -> list[Any]:
    """A column of field values as the plain JSON data a records.jsonl line holds: a value of
    another type (an evidence item, a tuple, a float, a numpy number) written as the line
    writes it (:func:`pingce._json.json_texts`) and read back by the standard library
    (which, unlike orjson, reads an integer beyond 64 bits as that integer)."""
    if set(map(type, values)) <= _JSON_SCALARS:
        return values
    texts = json_texts(values)
    pairs = zip(values, texts, strict=True)
    return [v if type(v) in _JSON_SCALARS else json.loads(t) for v, t in pairs]


def _plain(values: Any) -> list[Any]:
    """A column as a list: numeric arrays with NaN as None, object arrays as they are."""
    if not isinstance(values, np.ndarray):
        return list(values)
    out: list[Any] = values.tolist()
    if values.dtype.kind == "f":
        for i in np.flatnonzero(np.isnan(values)):
            out[i] = None
    return out


class EvaluationResult(_Plain):
    """The whole result of a run (the content of results.json)."""

    OMIT_WHEN_NONE = ("profile", "judge", "repeats", "inputs", "decision", "baseline")

    pingce_version: str
    """The pingce that made the result."""
    suite: str
    """The suite's name."""
    n_records: int
    """Records evaluated (after ``--sample``)."""
    metrics: dict[str, MetricResult]
    """Each metric by name, in the suite's order."""
    tables: dict[str, dict[str, Any]] = {}
    """Each table by name (a confusion matrix's labels and counts, per-class rows...)."""
    slices: dict[str, SliceResult] = {}
    """With ``--slice FIELD``: the metrics over the records of each value, keyed
    ``FIELD=value``."""
    failures: Failures = Failures()
    signature: Signature
    data: DataInfo
    sampling: SamplingInfo | None = None
    """With ``--sample``: how the records were drawn."""
    similarity: dict[str, Any] | None = None
    """What the similarity backend did: pairs, requests, cache hits, failures, tokens, cost,
    latency (present when a metric needed similarities)."""
    model: dict[str, Any] | None = None
    """What ``--model`` did: the model, requests, cached answers, failures, tokens, cost,
    latency (present when the model under test was run)."""
    judge: dict[str, Any] | None = None
    """What the judges of the judged metrics did, by judge: prompts, requests, cache hits,
    failed calls, answers without a grade, tokens, cost, latency (present only then)."""
    repeats: dict[str, Any] | None = None
    """With repeats (``--repeats K``, or records with a ``repeat`` field): the records, rows and
    repeats, and by metric its ``components`` (the variance of its per-record values split
    between records and repeats, each source's share of the mean's variance with an interval;
    with ``--target-se`` the cheapest ``plan`` of repeats reaching it), and for a 0/1 metric
    ``pass_k`` (pass@k and pass^k for k = 1 … K with intervals) and its flaky records
    (:func:`pingce.repeats.summary.summarise`)."""
    definitions: dict[str, str] = {}
    """Each metric's definition in words, as ``pingce metrics`` prints it."""
    inputs: dict[str, str | None] | None = None
    """The digests of what the numbers came from (:func:`pingce.provenance.input_digests`):
    the suite's definition, the data and gold files, the model's and judges' settings, the
    seed."""
    baseline: dict[str, Any] | None = None
    """With ``--baseline RUN``: the baseline run (``run``), the records paired (``records``)
    and the comparison's notes."""
    decision: Decision | None = None
    """With ``--baseline RUN`` and ``--non-inferior``/``--equivalent``: the release decision
    against the baseline, as ``pingce compare`` makes it of the two stored runs."""
    notes: list[str] = Field(
        default_factory=list, description="Things to know about this run (deprecated names...)."
    )
    profile: dict[str, float] | None = Field(
        default=None, description="Seconds spent in each phase of the run (with --profile)."
    )

    _outputs: RunOutputs | None = PrivateAttr(default=None)

    def value(self, name: str) -> float | None:
        """Shortcut: the value of metric ``name``."""
        return self.metrics[name].value

    def with_outputs(self, outputs: RunOutputs) -> EvaluationResult:
        """This result (a shallow copy) holding a reference to what its run produced beside it
        (the engine returns its result so: :mod:`pingce.runfolder.outputs`)."""
        linked = self.model_copy()
        linked._outputs = outputs
        return linked

    @property
    def outputs(self) -> RunOutputs | None:
        """What the run produced beside this result (per-record rows, saved statistics, the
        model's answers, ``--engine ray``'s shards: :class:`pingce.runfolder.outputs.
        RunOutputs`), shared by its copies; None for a result made from results.json alone."""
        return self._outputs

    @property
    def records(self) -> RecordRows | None:
        """Per-record values and miss reasons, by column (None for a result read from JSON)."""
        return None if self._outputs is None else self._outputs.records

    @property
    def predictions(self) -> list[dict[str, Any]] | None:
        """The records the model answered, its answers filled (predictions.jsonl; None when
        the run did not call the model)."""
        return None if self._outputs is None else self._outputs.predictions

    def record_values(self) -> list[dict[str, Any]]:
        """Per-record values and miss reasons (what records.jsonl holds with ``--records-fields
        all``; by default it leaves out their ``fields``), as dictionaries of plain JSON data:
        ``json.dumps`` writes them."""
        return list(self.record_values_iter())

    def record_values_iter(self) -> Iterator[dict[str, Any]]:
        """The rows of records.jsonl, one at a time."""
        rows = self.records
        return iter(()) if rows is None else rows.iter_rows()

    def to_json(self) -> str:
        """results.json text: indented, UTF-8 characters kept as they are."""
        return self.model_dump_json(indent=2)

    def to_pandas(self) -> pd.DataFrame:
        """The metrics as a pandas DataFrame, one row per metric, in results.json's order:
        ``metric``, ``value``, ``ci_low``, ``ci_high``, ``n``, ``n_records``, ``n_scored``,
        ``unparsed_records``, ``higher_is_better`` (nullable boolean), ``failed_records`` and
        ``model_failed_records`` (nullable integers), then ``undefined_reason``, ``value_note``
        and ``ci_note`` (text). A null value
        is NaN with its ``undefined_reason``. With slices, two text columns come first,
        ``slice`` (the field) and ``slice_value``, missing on the rows of all records, and each
        slice's metrics follow those rows (one slice value after another, as in results.json).
        Needs pandas (imported here, not by ``import pingce``)."""
        from .frames import entry_frame, split_slice_key

        rows: list[tuple[dict[str, Any], MetricResult]] = []
        for name, entry in self.metrics.items():
            rows.append(({"slice": None, "slice_value": None, "metric": name}, entry))
        for key, part in self.slices.items():
            field_name, value = split_slice_key(key)
            for name, entry in part.metrics.items():
                labels = {"slice": field_name, "slice_value": value, "metric": name}
                rows.append((labels, entry))
        leading = ["slice", "slice_value", "metric"] if self.slices else ["metric"]
        return entry_frame(
            "EvaluationResult.to_pandas()",
            rows,
            MetricResult.model_fields,
            leading,
            last=(
                "failed_records",
                "model_failed_records",
                "undefined_reason",
                "value_note",
                "ci_note",
            ),
        )

    def record_frame(self, *, fields: bool = False) -> pd.DataFrame:
        """Per-record values as a pandas DataFrame, one row per record in the input's order
        (records.jsonl's rows): ``id``, ``line``, then a float column per metric that has
        per-record values (named as the metric; NaN where records.jsonl has null) and, for the
        metrics whose records can miss with a reason, ``<metric>_reason`` (text, missing where the
        record did not miss). ``fields=True`` adds the fields the suite read, after ``line``,
        then its context fields (None where a record lacks one).
        The rows are the ones this result holds from :func:`pingce.evaluate`; a result built from
        results.json holds none (use ``pandas.read_json("records.jsonl", lines=True)``). Needs
        pandas."""
        from .frames import record_frame

        rows = self.records
        if rows is None:
            raise ValueError(
                "this result holds no per-record rows (results.json does not carry them): "
                "pingce.evaluate(...).record_frame() has them, or read records.jsonl with "
                'pandas.read_json("records.jsonl", lines=True)'
            )
        return record_frame("EvaluationResult.record_frame()", rows, fields)


class SignificanceTest(_Plain):
    """One test of "no difference" between the two systems on one metric."""

    OMIT_WHEN_NONE = ("resamples", "candidate_only", "baseline_only")

    test: str = Field(
        description="paired-bootstrap-<method> (the p-value that inverts the interval), "
        "mcnemar-exact (accuracy-type metrics) or approximate-randomisation."
    )
    p_value: float | None = Field(description="Two-sided p-value; null when not computable.")
    resamples: int | None = Field(
        default=None, description="Bootstrap resamples or randomisation trials."
    )
    candidate_only: int | None = Field(
        default=None, description="McNemar: units right for the candidate only."
    )
    baseline_only: int | None = Field(
        default=None, description="McNemar: units right for the baseline only."
    )


class MetricComparison(_Plain):
    """One metric of both systems, their difference, its paired bootstrap interval, the tests
    of "no difference" and what they say."""

    OMIT_WHEN_NONE = ("note", "left_out", "margin_p_value")

    candidate: float | None = Field(description="The candidate's value (null when undefined).")
    baseline: float | None = Field(description="The baseline's value (null when undefined).")
    delta: float | None = Field(description="candidate - baseline; null if either is.")
    ci_low: float | None = Field(default=None, description="Lower end of the interval of delta.")
    ci_high: float | None = Field(default=None, description="Upper end of the interval of delta.")
    p_value: float | None = Field(
        default=None,
        description="Two-sided p-value of 'no difference' (p_method): the paired bootstrap's, "
        "which inverts the interval, so the interval excludes 0 exactly when "
        "p_value < 1 - ci_level.",
    )
    p_method: str | None = Field(default=None, description="The test p_value comes from.")
    p_holm: float | None = Field(
        default=None,
        description="p_value adjusted by Holm-Bonferroni across the comparison's metrics.",
    )
    significant: bool | None = Field(
        default=None, description="p_holm < 1 - ci_level; null when there is no p-value."
    )
    verdict: str | None = Field(default=None, description="What the test says, in words.")
    tests: list[SignificanceTest] = Field(
        default_factory=list, description="Every test run on this metric, p_method's first."
    )
    n: int = Field(description="Units the candidate's value was computed over.")
    n_baseline: int = Field(description="Units the baseline's value was computed over.")
    higher_is_better: bool = True
    left_out: int | None = Field(
        default=None,
        description="Records left out of this metric's comparison because their similarity "
        "calls failed on either side (under --on-judge-failure skip both values are computed "
        "without them; under null the metric has no difference to test).",
    )
    note: str | None = Field(
        default=None, description="Why a value is null, or about the interval."
    )
    margin_p_value: float | None = Field(
        default=None,
        description="With --non-inferior or --equivalent on this metric: the one-sided p-value "
        "of the difference lying at or beyond the margin (the paired bootstrap's, inverting "
        "the interval: the interval at ci_level clears the margin exactly when it is below "
        "(1 - ci_level) / 2).",
    )


class ComparisonSlice(_Plain):
    """The comparison over the records whose slice field has one value."""

    n_records: int
    metrics: dict[str, MetricComparison]


class PairwiseSlice(_Plain):
    """The pairwise preference over the records whose ``--slice`` field has one value."""

    n_records: int
    win_rate: MetricResult
    position_bias: MetricResult
    verdict: str | None = None


class PairwiseComparison(_Plain):
    """comparison.json's ``pairwise`` (``--pairwise``): for every paired record, the judges
    asked which of the two answers is better, in both orders (the candidate's shown first, then
    the baseline's); a verdict counts when both orders agree, a tie otherwise."""

    OMIT_WHEN_NONE = ("input", "slices")

    output: str = Field(description="The answer field compared (the judged metrics' output).")
    input: str | None = Field(
        default=None, description="The field the prompts give as the question."
    )
    win_rate: MetricResult = Field(
        description="The share of records where the judges prefer the candidate's answer (a "
        "tie, or a verdict that flips with the order, counts a half), with its bootstrap "
        "interval: 0.5 is no preference."
    )
    position_bias: MetricResult = Field(
        description="The share of records whose verdict changed when the answers swapped "
        "places (0: the order never swayed the judges)."
    )
    verdict: str | None = Field(
        default=None, description="What the win rate's interval says, in words."
    )
    judge: dict[str, Any] = Field(
        default_factory=dict,
        description="Per judge: prompts, requests, cache hits, failed calls, answers without "
        "a grade, tokens and cost.",
    )
    signature: str = Field(
        description="The judges, the endpoint, a hash of the prompts, the parameters."
    )
    slices: dict[str, PairwiseSlice] | None = Field(
        None, description="Per --slice value: the same over that value's records."
    )

    _records: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    def with_records(self, records: list[dict[str, Any]]) -> PairwiseComparison:
        """This result holding each record's verdict (``id``, ``line``, ``verdict``: candidate,
        baseline, tie, order-dependent or none; ``answers``: what each judge said in each
        order), which comparison.html lists and comparison.json leaves out."""
        self._records = records
        return self

    @property
    def records(self) -> list[dict[str, Any]]:
        """Each record's verdict (empty for a result read from comparison.json)."""
        return self._records


class DecisionGate(_Plain):
    """One gated metric (in one slice) of a decision."""

    OMIT_WHEN_NONE = ("slice",)

    metric: str
    slice: str | None = Field(default=None, description="The --slice value; absent: all.")
    test: str = Field(description="non-inferiority or equivalence.")
    margin: float = Field(description="δ, in the metric's units.")
    delta: float | None = Field(description="candidate - baseline.")
    p_value: float | None = Field(description="The one-sided p-value (margin_p_value).")
    p_adjusted: float | None = Field(
        description="p_value adjusted across the decision's gates (multiplicity)."
    )
    passed: bool
    reason: str = Field(description="The gate's outcome in words.")
    power: float | None = Field(
        default=None,
        description="The chance this gate passes a candidate exactly as good as the baseline "
        "with this many records: from the paired interval's standard error and the gate's level "
        "(alpha / gates under holm and bh, so a lower bound there).",
    )
    detectable: float | None = Field(
        default=None,
        description="The margin this gate would clear with 80% power at this many records.",
    )


class Decision(_Plain):
    """A release decision (``--non-inferior``, ``--equivalent``): the candidate passes when
    every gated metric (in every slice) clears its margin, at level ``alpha`` (one-sided)
    with the family's multiplicity controlled."""

    OMIT_WHEN_NONE = ("inputs",)

    passed: bool
    alpha: float = Field(description="The one-sided level, (1 - ci_level) / 2.")
    multiplicity: str = Field(description="holm, bh or none, across every gate.")
    gates: list[DecisionGate]
    inputs: dict[str, dict[str, str | None] | None] | None = Field(
        default=None,
        description="Of two stored runs: each side's input digests (results.json's inputs: "
        "suite, data, gold, model, judge, seed), what the verdict was made of.",
    )


class ComparisonResult(_Plain):
    """The content of comparison.json."""

    OMIT_WHEN_NONE = ("profile", "slices", "pairwise", "decision")

    pingce_version: str
    suite: str
    n_records: int
    """Records paired (by id, or ``match_by``)."""
    candidate: str
    """The candidate's records or run, as given."""
    baseline: str
    """The baseline's records or run, as given."""
    metrics: dict[str, MetricComparison]
    failures: dict[str, Failures] = Field(
        default_factory=dict,
        description="Per side: parse failures, failed judge calls, records left out.",
    )
    signature: Signature
    slices: dict[str, ComparisonSlice] | None = Field(
        default=None,
        description="Per --slice value; Holm runs across every metric of every slice at once.",
    )
    pairwise: PairwiseComparison | None = Field(
        default=None,
        description="With --pairwise: the judges' preference between the two sides' answers.",
    )
    decision: Decision | None = Field(
        default=None,
        description="With --non-inferior or --equivalent: the decision and each gate's test.",
    )
    notes: list[str] = Field(default_factory=list)
    profile: dict[str, float] | None = None

    _outputs: ComparisonOutputs | None = PrivateAttr(default=None)

    def with_outputs(self, outputs: ComparisonOutputs) -> ComparisonResult:
        """This result (a shallow copy) holding a reference to both sides' per-record rows
        (:class:`pingce.runfolder.outputs.ComparisonOutputs`; the engine returns it so)."""
        linked = self.model_copy()
        linked._outputs = outputs
        return linked

    @property
    def outputs(self) -> ComparisonOutputs | None:
        """Both sides' per-record rows, paired, as the comparison made them (None for a result
        read from comparison.json)."""
        return self._outputs

    @property
    def records(self) -> tuple[RecordRows, RecordRows] | None:
        """The candidate's and the baseline's per-record rows, paired (None when the comparison
        made none, as for a result read from comparison.json)."""
        return None if self._outputs is None else self._outputs.records

    def to_json(self) -> str:
        """comparison.json text: indented, UTF-8 characters kept as they are."""
        return self.model_dump_json(indent=2)

    def to_pandas(self) -> pd.DataFrame:
        """The comparison as a pandas DataFrame, one row per metric in comparison.json's order:
        ``metric``, ``candidate``, ``baseline``, ``delta`` (candidate - baseline), ``ci_low``,
        ``ci_high`` (its paired interval), ``p_value``, ``p_method``, ``p_holm``,
        ``significant``, ``verdict``, ``n``, ``n_baseline``, ``higher_is_better``, ``left_out``
        (nullable integer), ``note`` (text); the list of ``tests`` stays in the result. Null
        values are NaN, with the note saying why. Needs pandas (imported here, not by
        ``import pingce``)."""
        from .frames import entry_frame

        rows = [({"metric": name}, entry) for name, entry in self.metrics.items()]
        return entry_frame(
            "ComparisonResult.to_pandas()",
            rows,
            {k: v for k, v in MetricComparison.model_fields.items() if k != "tests"},
            ["metric"],
            last=("note",),
        )
