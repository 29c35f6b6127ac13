"""Options of a run and of a comparison: one home for their defaults and their validation.

The command line and :func:`pingce.evaluate` / :func:`pingce.compare` build the same
:class:`RunOptions`; :meth:`RunOptions.validate` rejects bad values with a message that names the
option. The similarity-name grammar lives in :mod:`pingce.similarity.names` and the zero-division
policy in :mod:`pingce.metrics._policy`; both are only *called* from here.
"""

from __future__ import annotations

import codecs
import contextlib
import dataclasses
import enum
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from ._constraints import check_value
from ._defaults import DEFAULT_SIMILARITY, OPTION_TYPES
from ._halves import processes_setting
from .decisions import MarginGate, Multiplicity
from .errors import OptionError
from .gates import Gate, RegressionGate
from .metrics import ZeroDivision, check_zero_division
from .option_table import find, keywords, options_of
from .records import parse_path
from .sampling import Allocation, Shortfall
from .similarity.names import BackendName, parse_backend_name
from .urls import base_url_source, check_base_url

if TYPE_CHECKING:
    from .similarity.base import SimilarityBackend
    from .stats import BootstrapMethod, BootstrapStream, CIMethod

__all__ = [
    "KEEP_SUITE",
    "Executor",
    "Gating",
    "Inputs",
    "Judging",
    "KeepSuite",
    "ModelCall",
    "Resampling",
    "RunOptions",
    "Sampling",
    "Scoring",
    "command_line_options",
    "parse_map",
    "parse_model_params",
    "run_options",
]

JudgeFailure = Literal["null", "skip"]


class KeepSuite(enum.Enum):
    """An option left unset: the suite's own default stays (``zero_division``)."""

    KEEP = "suite"

    def __repr__(self) -> str:
        return "KEEP_SUITE"


KEEP_SUITE = KeepSuite.KEEP
"""``zero_division`` unset: the suite's own default stays (``"suite"`` in the Python API)."""


@dataclass(frozen=True)
class Resampling:
    """The ``bootstrap`` group: how the intervals (and a comparison's tests) resample."""

    resamples: int
    """``--bootstrap``: resamples (and randomisation trials); 0: no intervals."""
    method: BootstrapMethod
    """``--bootstrap-method``: ``multinomial`` (n records with replacement) or ``poisson`` (each
    record weighs Poisson(1), keyed on the seed, its id and the resample)."""
    interval_method: CIMethod
    """``--ci-method``: ``bca``, ``percentile`` or ``basic``."""
    level: float
    """``--ci-level``: the intervals' coverage (and 1 - the significance level)."""
    seed: int
    """``--seed``: the run's seed (a slice draws from its own: ``engine.slices.slice_seed``)."""
    stream: BootstrapStream = "per-block"
    """``--bootstrap-stream``: ``per-block`` (Multinomial counts of each statistic's distinct
    rows) or ``indices`` (n record indices shared by every statistic)."""

    @property
    def signature(self) -> str:
        """How the resamples were drawn, as results.json's signature names it."""
        if self.poisson:
            return "poisson"
        return "multinomial-per-block" if self.stream == "per-block" else "multinomial-indices"

    @property
    def poisson(self) -> bool:
        """Whether each resample weighs each record by its own keyed Poisson(1) weight."""
        return self.method == "poisson"


@dataclass(frozen=True)
class Sampling:
    """The ``sampling`` group: ``--sample N [--stratify FIELD]``."""

    size: int | None
    """``--sample``: records (or units) to draw; None: all of them."""
    stratify: str | None
    allocation: Allocation
    short_strata: Shortfall
    seed: int


@dataclass(frozen=True)
class Inputs:
    """The ``inputs`` group: how record files are read and joined."""

    encoding: str | None
    field_map: Mapping[str, str]
    gold: str | None
    allow_missing: bool
    context: tuple[str, ...] = ()
    """``--context``: record fields kept beside each record's values (added to the suite's
    ``context:``)."""


@dataclass(frozen=True)
class Scoring:
    """The ``scoring`` group: the similarity backend, parsed once (its name's grammar read when
    the options were made), and where a remote one is reached and cached."""

    backend: BackendName | SimilarityBackend
    """The parsed ``--similarity`` name, or the caller's instance (kept open by the caller)."""
    base_url: str | None
    cache: str | bool | None


@dataclass(frozen=True)
class ModelCall:
    """The ``model`` group: the model under test (``--model openai:NAME``), its name parsed."""

    text: str
    """``--model`` as given (``openai:qwen2.5-7b-instruct``)."""
    name: str
    """The model's name at its endpoint (``qwen2.5-7b-instruct``)."""
    base_url: str | None
    """``--model-base-url``, else ``--base-url``; None: the environment's (PINGCE_BASE_URL,
    then OPENAI_BASE_URL)."""
    api_key_env: str | None
    params: Mapping[str, Any]
    concurrency: int | None
    provider: str
    """The registered provider (``openai``: :mod:`pingce.predict.registry`) that answers."""
    repeats: int = 1
    """``--repeats``: how many times each record is asked."""


@dataclass(frozen=True)
class Judging:
    """The ``judge`` group: who grades the judged metrics' answers and on what."""

    judges: tuple[str, ...]
    """``--judge`` as given (``openai:NAME`` each); (): the suite's."""
    rubric: str | None
    """``--rubric``'s text (read from the file it names); None: the suite's."""
    scale: str | None
    """``--scale`` as given; None: the suite's."""
    pairwise: bool = False
    """``--pairwise`` (a comparison): the judges also asked which side's answer is better."""
    repeats: int = 1
    """``--judge-repeats``: how many times each judge is asked about each answer."""


@dataclass(frozen=True)
class Executor:
    """The ``engine`` group: which executor runs, and the Ray engine's cluster and scratch."""

    name: Literal["local", "ray"]
    ray_address: str | None
    ray_scratch: str | None


@dataclass(frozen=True)
class Gating:
    """The ``gates`` group: the gates checked on the result (exit 4 when one fails)."""

    gates: tuple[Gate, ...]
    regression_gates: tuple[RegressionGate, ...]
    on_interval: bool
    margin_gates: tuple[MarginGate, ...] = ()
    """``--non-inferior`` and ``--equivalent``: the decision (:mod:`pingce.decisions`)."""
    multiplicity: Multiplicity = "holm"
    """How the margin gates share their level (``--multiplicity``)."""
    baseline: Any = None
    """``pingce run --baseline RUN``: the stored run the margin gates decide against (a name or
    a folder as text; from Python also a result, :data:`pingce.compare_stored.RunRef`)."""


@dataclass(frozen=True)
class RunOptions:
    """Options of a run (the command line's, with the same defaults), parsed
    (:func:`run_options`, :func:`command_line_options`) and checked when they are made: a
    :class:`RunOptions` that exists is valid, and nothing changes it. The engine reads them by
    group (:attr:`resampling`, :attr:`sampling`, :attr:`inputs`, :attr:`scoring`,
    :attr:`model_call`, :attr:`executor`, :attr:`gating`): each built once, from the checked
    values, the similarity name parsed when it is checked."""

    similarity: str | SimilarityBackend = DEFAULT_SIMILARITY
    """A backend name (``--similarity``) or, from Python, a backend instance (the caller keeps
    it open and closes it)."""
    sample: int | None = None
    stratify: str | None = None
    allocation: Allocation = "equal"
    short_strata: Shortfall = "error"
    seed: int = 0
    bootstrap: int = 1000
    ci_method: CIMethod = "bca"
    bootstrap_method: BootstrapMethod = "multinomial"
    """``multinomial``: each resample draws n records with replacement; ``poisson``: each record
    weighs Poisson(1) in each resample, from a generator keyed on the seed, the record's id (or
    unit) and the resample, so that its weights are the same in any slice or shard."""
    bootstrap_stream: BootstrapStream = "per-block"
    """``per-block``: each statistic's resamples are Multinomial counts of its distinct rows
    (:mod:`pingce.block_draws`); ``indices``: n record indices shared by every statistic (the
    stream before issue 32, kept for one release)."""
    ci_level: float = 0.95
    slices: tuple[str, ...] = ()
    zero_division: ZeroDivision | KeepSuite | str = KEEP_SUITE
    """0/0 ratios: :data:`KEEP_SUITE` keeps the suite's default; None (null), 0 or 1 replace it
    (:func:`run_options` parses ``"suite"``, ``"null"``, ``"0"``, ``"1"``)."""
    on_judge_failure: JudgeFailure = "null"
    """A metric that needs a record whose similarity calls failed: ``null`` (its value is null
    with the count in words) or ``skip`` (computed over the other records, with a note)."""
    laws: str | None = None
    """A law list file (or ``"builtin"``) replacing the suite's ``laws`` (None keeps it)."""
    field_map: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """The suite's field names to the data's (``--map pred_level=answer``): the suite reads
    ``pred_level`` from the column ``answer``. Laid over the suite's own ``fields:`` map."""
    base_url: str | None = None
    cache: str | bool | None = None
    """Similarity cache: a path, None for the default file, False for none."""
    encoding: str | None = None
    """The encoding of text record files (``--encoding``); None detects it."""
    context: tuple[str, ...] = ()
    """Record fields kept beside each record's values (``--context``), added to the suite's
    ``context:``: records.jsonl's ``context``; no statistic reads them."""
    gates: tuple[Gate, ...] = ()
    """``--fail-under``/``--fail-over`` gates, checked on the result (exit 4 when one fails)."""
    regression_gates: tuple[RegressionGate, ...] = ()
    """``compare --fail-on-regression`` gates (exit 4 when one fails)."""
    margin_gates: tuple[MarginGate, ...] = ()
    """``compare --non-inferior`` / ``--equivalent`` gates: the decision (exit 4 when one
    fails)."""
    multiplicity: Multiplicity = "holm"
    """How the margin gates share their level (``--multiplicity``)."""
    baseline: Any = None
    """``pingce run --baseline RUN``: a stored run (name or output folder; from Python also an
    :class:`~pingce.EvaluationResult`) that the margin gates decide against (results.json's
    ``decision``)."""
    gate_on_interval: bool = False
    """Gates read the pessimistic end of the interval (``--gate-on-interval``)."""
    gold: str | None = None
    """A file of gold records joined to the predictions by id (``--gold``)."""
    allow_missing: bool = False
    """With ``gold``: records on one side only are left out and counted, not an error."""
    model: str | None = None
    """``openai:NAME``: ask this model for every record's prediction (the suite's ``model:``
    block says which fields)."""
    model_base_url: str | None = None
    """The model's endpoint (``--model-base-url``); None: ``base_url``, then PINGCE_BASE_URL,
    then OPENAI_BASE_URL."""
    api_key_env: str | None = None
    """The environment variable holding the model's key (None: PINGCE_API_KEY, then
    OPENAI_API_KEY)."""
    model_params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Request parameters laid over the suite's ``model.parameters`` (``--model-param``)."""
    model_concurrency: int | None = None
    """Requests in flight at once (None: the suite's ``model.concurrency``, 16)."""
    repeats: int = 1
    """``--repeats K``: each record asked of the model K times (records.jsonl's ``repeat``;
    the cache keyed by the repeat, so a rerun asks nothing and a larger K only the new ones)."""
    target_se: float | None = None
    """``--target-se``: with repeats, the standard error each metric's plan of repeats aims
    at (results.json's ``repeats.metrics.<name>.components.plan``)."""
    judge_repeats: int = 1
    """``--judge-repeats J``: each judge asked J times about each answer (records.jsonl's
    ``judge_call``; each call cached apart)."""
    judges: tuple[str, ...] = ()
    """``--judge openai:NAME`` (repeatable): the models that grade the answers of the judged
    metrics; () keeps the suite's ``judge.judges``."""
    rubric: str | None = None
    """``--rubric``: the criterion the judge grades on, as text or a file holding it; None keeps
    the suite's ``judge.rubric``."""
    scale: str | None = None
    """``--scale``: the judge's scale (``1-5``, ``0-1``, ``pass/fail``, ``good,fair,poor``);
    None keeps the suite's ``judge.scale``."""
    pairwise: bool = False
    """``--pairwise`` (``pingce compare``): the judges also asked, for every paired record,
    which side's answer is better (:mod:`pingce.engine.pairwise`)."""
    records_format: Literal["jsonl", "parquet"] = "jsonl"
    """How the run folder keeps the per-record rows (``--records``): records.jsonl or
    records.parquet."""
    records_fields: Literal["none", "all"] = "none"
    """Whether the per-record rows echo the input fields the suite read (``--records-fields
    all``); by default they keep ids, lines, context fields, values and reasons."""
    report_records: int = 2000
    """Records embedded in report.html, the first N (``--report-records``)."""
    engine: Literal["local", "ray"] = "local"
    """``local`` (one process) or ``ray`` (shards on Ray Data: ``pip install 'pingce[ray]'``)."""
    ray_address: str | None = None
    """``--engine ray``: the cluster to join (``auto``, ``ray://HOST:PORT``); None starts a local
    one when none is running in this process."""
    ray_scratch: str | None = None
    """``--engine ray``: the folder the workers write their per-record shards into until the
    outputs are written (on a cluster of several machines, a folder all of them share; None:
    the system's temporary folder)."""

    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Options the table declares (:mod:`pingce.option_table`) that have no field here yet."""

    def given(self) -> dict[str, Any]:
        """Every option by its name (the declared ones without a field too)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        del fields["extra"]
        return {**fields, **self.extra}

    def __post_init__(self) -> None:
        self.validate()

    @cached_property
    def resampling(self) -> Resampling:
        """``--bootstrap``, ``--bootstrap-method``, ``--ci-method``, ``--ci-level``, ``--seed``."""
        return Resampling(
            self.bootstrap,
            self.bootstrap_method,
            self.ci_method,
            self.ci_level,
            self.seed,
            self.bootstrap_stream,
        )

    @cached_property
    def sampling(self) -> Sampling:
        return Sampling(self.sample, self.stratify, self.allocation, self.short_strata, self.seed)

    @cached_property
    def inputs(self) -> Inputs:
        return Inputs(self.encoding, self.field_map, self.gold, self.allow_missing, self.context)

    @cached_property
    def scoring(self) -> Scoring:
        """The similarity backend parsed (here, once: :meth:`validate` reads it first; a name
        outside the grammar is a ``ValueError``), with its endpoint and cache."""
        from .similarity.base import SimilarityBackend

        given = self.similarity
        backend = given if isinstance(given, SimilarityBackend) else parse_backend_name(given)
        return Scoring(backend, self.base_url, self.cache)

    @cached_property
    def model_call(self) -> ModelCall | None:
        """The model under test, its name parsed (here, once: :meth:`validate` reads it first),
        or None (no ``--model``)."""
        if self.model is None:
            return None
        from .predict.registry import parse_model

        parsed = parse_model(self.model)
        return ModelCall(
            self.model,
            parsed.model,
            self.model_base_url or self.base_url,
            self.api_key_env,
            self.model_params,
            self.model_concurrency,
            parsed.provider,
            self.repeats,
        )

    @cached_property
    def judging(self) -> Judging:
        """The ``judge`` group: the judges named (``--judge``), the rubric (a file's text when
        ``--rubric`` names a file) and the scale, as given (the suite's ``judge:`` block fills in
        what they leave unset: :func:`pingce.engine.judge_setup.judge_setup`)."""
        rubric = self.rubric
        if rubric is not None and os.path.isfile(rubric):
            with open(rubric, encoding="utf-8") as handle:
                rubric = handle.read().strip()
        return Judging(tuple(self.judges), rubric, self.scale, self.pairwise, self.judge_repeats)

    @cached_property
    def executor(self) -> Executor:
        return Executor(self.engine, self.ray_address, self.ray_scratch)

    @cached_property
    def gating(self) -> Gating:
        return Gating(
            self.gates,
            self.regression_gates,
            self.gate_on_interval,
            tuple(self.margin_gates),
            self.multiplicity,
            self.baseline
            if self.baseline is None or not isinstance(self.baseline, str | os.PathLike)
            else os.fspath(self.baseline),
        )

    def recorded(self) -> dict[str, Any]:
        """The options as the run store records them (plain data; ``zero_division`` unset is
        ``"suite"``)."""
        kept = dataclasses.asdict(self)
        del kept["extra"]
        if self.zero_division is KEEP_SUITE:
            kept["zero_division"] = KEEP_SUITE.value
        return {**kept, **self.extra}

    def suite_defaults(self) -> dict[str, Any]:
        """The suite defaults these options replace (each one alone, never the block)."""
        out: dict[str, Any] = {}
        if self.zero_division is not KEEP_SUITE:
            out["zero_division"] = self.zero_division
        if self.laws is not None:
            out["laws"] = self.laws
        return out

    def validate(self) -> None:
        """Reject invalid options with a message naming the option (and the environment
        variable that sets the number of processes); changes nothing. The checks run in this
        order (the first error found is the one reported)."""
        self._validate_backend()
        self._validate_numbers()
        self._validate_choices()
        self._validate_inputs()
        self._validate_model()
        self._validate_judges()
        self._validate_files()
        self._validate_paths()

    def _validate_backend(self) -> None:
        """The processes setting, the similarity name's grammar (parsed, once: :attr:`scoring`)
        and the base URLs."""
        processes_setting()
        try:
            backend = self.scoring.backend
        except ValueError as exc:
            raise OptionError(f"--similarity {exc}") from None
        remote = isinstance(backend, BackendName) and backend.remote
        self._validate_urls(remote or self.model is not None or bool(self.judges))

    def _validate_numbers(self) -> None:
        """Numbers in their ranges (``OPTION_TYPES``) and the ones that need another."""
        _number("seed", self.seed)
        _number("bootstrap", self.bootstrap)
        if self.sample is not None:
            _number("sample", self.sample)
        if self.stratify is not None and self.sample is None:
            raise OptionError("--stratify needs --sample N (how many records to draw)")
        if self.bootstrap == 1:
            raise OptionError("--bootstrap 1 cannot give an interval; use 0 (off) or at least 2")
        _number("ci_level", self.ci_level)
        _number("report_records", self.report_records)
        if self.target_se is not None:
            _number("target_se", self.target_se)
        _number("judge_repeats", self.judge_repeats)

    def _validate_choices(self) -> None:
        """Every choice among its values (as the table declares them), and the ray options."""
        for name in (
            "ci_method",
            "bootstrap_method",
            "bootstrap_stream",
            "allocation",
            "short_strata",
            "on_judge_failure",
            "records_format",
            "records_fields",
            "engine",
        ):
            option = find(name)
            _choice(option.option or name, getattr(self, name), option.choices() or ())
        if self.ray_address is not None and self.engine != "ray":
            raise OptionError("--ray-address needs --engine ray")
        if self.ray_scratch is not None:
            if self.engine != "ray":
                raise OptionError("--ray-scratch needs --engine ray")
            if not os.path.isdir(self.ray_scratch):
                raise OptionError(f"--ray-scratch {self.ray_scratch}: no such folder")

    def _validate_inputs(self) -> None:
        """The zero-division policy, the gold file and the options that need another."""
        if self.zero_division is not KEEP_SUITE:
            _zero_division(self.zero_division)
        if self.gold is not None and not (
            isinstance(self.gold, str | os.PathLike) and os.path.isfile(self.gold)
        ):
            raise OptionError(f"--gold {self.gold!r}: no such file")
        if self.gate_on_interval and self.bootstrap == 0:
            raise OptionError("--gate-on-interval reads the intervals: it needs --bootstrap > 0")
        if self.allow_missing and self.gold is None:
            raise OptionError("--allow-missing needs --gold FILE (the records to join by id)")

    def _validate_files(self) -> None:
        """The text encoding and the law list."""
        if self.encoding is not None:
            try:
                codecs.lookup(self.encoding)
            except (LookupError, TypeError):
                raise OptionError(
                    f"--encoding {self.encoding!r}: no such encoding (for example utf-8, gb18030, "
                    "utf-16)"
                ) from None
        if self.laws not in (None, "builtin") and not (
            isinstance(self.laws, str) and os.path.isfile(self.laws)
        ):
            raise OptionError(f"--laws {self.laws!r}: no such file")

    def _validate_paths(self) -> None:
        """``--map``, ``--slice`` and ``--stratify``: field paths."""
        if not isinstance(self.field_map, Mapping):
            raise OptionError(f"--map must map field names to columns, got {self.field_map!r}")
        for suite_field, column in self.field_map.items():
            for path in (suite_field, column):
                try:
                    parse_path(path)
                except (ValueError, AttributeError):
                    raise OptionError(
                        f"--map {suite_field}={column}: {path!r} is not a field path (keys and "
                        "[index], e.g. answer or output.level)"
                    ) from None
        named = [("--slice", p) for p in self.slices]
        named += [("--stratify", self.stratify)] if self.stratify else []
        named += [("--context", p) for p in self.context]
        for option, path in named:
            try:
                parse_path(path)
            except (ValueError, AttributeError):
                raise OptionError(
                    f"{option} {path!r}: not a field path (keys and [index], e.g. meta.source "
                    "or evidence[0].law)"
                ) from None

    def _validate_urls(self, remote: bool) -> None:
        """Base URLs before any work (:func:`pingce.urls.check_base_url`): each one given, and the
        one from the environment (PINGCE_BASE_URL, OPENAI_BASE_URL) when a backend or the model
        will call it."""
        for option, value in (
            ("--base-url", self.base_url),
            ("--model-base-url", self.model_base_url),
        ):
            if value is not None:
                check_base_url(value, option)
        found = base_url_source(self.base_url)
        if remote and found is not None:
            check_base_url(*found)

    def _validate_judges(self) -> None:
        """``--judge`` names (``openai:NAME``), a rubric with text, a scale given as text."""
        for judge in self.judges:
            provider, sep, name = str(judge).partition(":")
            if not isinstance(judge, str) or provider != "openai" or not sep or not name.strip():
                raise OptionError(
                    f"--judge {judge!r}: expected openai:MODEL (a chat model at --base-url, "
                    "PINGCE_BASE_URL or OPENAI_BASE_URL)"
                )
        if self.rubric is not None and not (isinstance(self.rubric, str) and self.rubric.strip()):
            raise OptionError(f"--rubric {self.rubric!r}: give the criterion's text or a file")
        if self.scale is not None and not isinstance(self.scale, str):
            raise OptionError(f"--scale {self.scale!r}: a scale such as 1-5, 0-1 or pass/fail")

    def _validate_model(self) -> None:
        """The ``--model`` options: the name's grammar, and options that need ``--model``."""
        if self.model is None:
            given = [
                name
                for name, value in (
                    ("--model-base-url", self.model_base_url),
                    ("--api-key-env", self.api_key_env),
                    ("--model-param", self.model_params or None),
                    ("--model-concurrency", self.model_concurrency),
                    ("--repeats", None if self.repeats == 1 else self.repeats),
                )
                if value is not None
            ]
            if given:
                raise OptionError(f"{', '.join(given)}: needs --model openai:NAME")
            return
        if not isinstance(self.model, str):
            raise OptionError(f"--model must be a name such as openai:NAME, got {self.model!r}")
        _ = self.model_call  # its name parsed, once (an OptionError when it is not one)
        if not isinstance(self.model_params, Mapping):
            raise OptionError(f"--model-param must map names to values, got {self.model_params!r}")
        if self.model_concurrency is not None:
            _number("model_concurrency", self.model_concurrency)
        _number("repeats", self.repeats)
        if self.gold is not None:
            raise OptionError(
                "--model with --gold: put the gold in the records the model answers (one file "
                "with the prompts and the gold), or score predictions.jsonl with --gold later"
            )


def parse_model_params(values: Iterable[str]) -> dict[str, Any]:
    """``--model-param KEY=VALUE`` values as a map; VALUE is read as JSON when it is JSON
    (``temperature=0.2``, ``stop=["\\n"]``), else as text (``tool_choice=auto``)."""
    import json

    out: dict[str, Any] = {}
    for value in values:
        name, sep, text = value.partition("=")
        name = name.strip()
        if not sep or not name:
            raise OptionError(
                f"--model-param {value!r}: expected KEY=VALUE, e.g. --model-param temperature=0.2"
            )
        try:
            out[name] = json.loads(text)
        except ValueError:
            out[name] = text
    return out


def parse_map(values: Iterable[str]) -> dict[str, str]:
    """``--map FIELD=COLUMN`` values as a map (a field given twice is an error)."""
    out: dict[str, str] = {}
    for value in values:
        name, sep, column = value.partition("=")
        name, column = name.strip(), column.strip()
        if not sep or not name or not column:
            raise OptionError(
                f"--map {value!r}: expected FIELD=COLUMN, e.g. --map pred_level=answer"
            )
        if name in out and out[name] != column:
            raise OptionError(f"--map {name} is given twice ({out[name]!r} and {column!r})")
        out[name] = column
    return out


def _number(name: str, value: object) -> None:
    """A number option checked against its declared type and range (``OPTION_TYPES``, which the
    command line declares as click ranges): an :class:`OptionError` naming ``--option``."""
    option = "--" + name.replace("_", "-")
    try:
        check_value(option, value, OPTION_TYPES[name])
    except ValueError as exc:
        raise OptionError(str(exc)) from None


def _zero_division(value: object) -> ZeroDivision:
    """The zero-division policy from a value of the Python API or the command line."""
    try:
        return check_zero_division(value)
    except ValueError:
        raise OptionError(f"--zero-division must be null, 0 or 1, got {value!r}") from None


def _choice(option: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise OptionError(
            f"{option} must be {', '.join(choices[:-1])} or {choices[-1]}, got {value!r}"
        )


def run_options(options: Mapping[str, Any], command: str = "run") -> RunOptions:
    """:class:`RunOptions` from the keyword arguments of :func:`pingce.evaluate` (``command``
    ``run``), :func:`pingce.compare` (``compare``) or :func:`pingce.compare_runs`
    (``compare-runs``): ``slice`` or ``slices`` as a name or a list of names; a name the table
    (:mod:`pingce.option_table`) does not give the command is an :class:`OptionError`."""
    given = dict(options)
    for option in options_of(command):
        for alias in option.aliases:
            if alias in given:
                given[option.name] = given.pop(alias)
    for name in ("slices", "context", "judges"):
        if isinstance(given.get(name), str):
            given[name] = (given[name],)
        elif name in given:
            given[name] = tuple(given[name])
    known = set(keywords(command))
    unknown = sorted(set(given) - known)
    if unknown:
        raise OptionError(f"unknown option(s) {unknown}; known: {sorted(known)}")
    return _options(given)


def command_line_options(command: str, values: Mapping[str, Any]) -> RunOptions:
    """:class:`RunOptions` from a command's click parameters (named as the table names them):
    ``--map`` and ``--model-param`` read, the gates parsed, ``--no-cache`` and an unset
    ``--zero-division`` made what the Python API takes."""
    from .gates import parse_gates, parse_regression_gates

    given = {name: values[name] for name in keywords(command) if name in values}
    if "field_map" in given:
        given["field_map"] = parse_map(given["field_map"])
    if "fail_under" in values:
        given["gates"] = parse_gates(values["fail_under"], values["fail_over"])
    if "model_params" in given:
        given["model_params"] = parse_model_params(given["model_params"])
    if "fail_on_regression" in values:
        given["regression_gates"] = parse_regression_gates(values["fail_on_regression"])
    if "non_inferior" in values or "equivalent" in values:
        from .decisions import parse_margin_gates

        given["margin_gates"] = parse_margin_gates(
            values.get("non_inferior") or (), values.get("equivalent") or ()
        )
    if values.get("no_cache"):
        given["cache"] = False
    if given.get("zero_division", KEEP_SUITE) is None:
        given["zero_division"] = KEEP_SUITE
    return _options(given)


def _options(given: Mapping[str, Any]) -> RunOptions:
    """The options of the dataclass's fields, and the declared options it has no field for
    (``RunOptions.extra``); the zero-division policy parsed (``"suite"`` or none given: unset)."""
    given = dict(given)
    value = given.get("zero_division", KEEP_SUITE)
    if value is KEEP_SUITE or value == KEEP_SUITE.value:
        given["zero_division"] = KEEP_SUITE
    else:  # a value the policy refuses stays as given: RunOptions refuses it, in its turn
        with contextlib.suppress(ValueError):
            given["zero_division"] = check_zero_division(value)
    fields = {f.name for f in dataclasses.fields(RunOptions)}
    extra = {name: value for name, value in given.items() if name not in fields}
    return RunOptions(**{k: v for k, v in given.items() if k in fields}, extra=extra)
