"""Suites are data: a YAML file names the fields, the label scale and the metrics with their
arguments. This module is the file's schema: validation only (by the pydantic model made from
these classes, :mod:`pingce._plain`, so a built-in suite, read already validated from
``parsed.json``, imports no pydantic); :mod:`.build` turns a valid spec into metric objects.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal, cast

from .._constraints import check_value, is_scalar, type_hints
from .._plain import Field, PlainModel, field_check, model_check
from ..metrics import ZeroDivision, check_zero_division
from ..records import parse_path
from ..remote.limits import Concurrency, Price, Retries, Seconds

if TYPE_CHECKING:  # pydantic's, in the pydantic model that validates a suite file (_plain.mirror)
    from pydantic import StrictInt, StrictStr

__all__ = ["DefaultsSpec", "JudgeSpec", "LabelsSpec", "ModelSpec", "SuiteSpec"]


class _Checked(PlainModel):
    """A block of a suite file whose booleans and numbers go through the one validator,
    :func:`pingce._constraints.check_value`, before pydantic reads them: pydantic would read the
    text ``"false"`` as false and ``"8"`` as 8, where YAML written so is a mistake to point out;
    the ranges are the ``Annotated`` ones of the fields. Made from keywords, a block is
    validated (by its pydantic model, :mod:`pingce._plain`); a built-in suite's spec, validated
    before, is made by ``model_construct``."""

    VALIDATE = True

    @model_check("before")
    @classmethod
    def _strict_scalars(cls, data: Any) -> Any:
        if isinstance(data, dict):  # cls: the pydantic model of the class (pingce._plain)
            hints = type_hints(cast(Any, cls))
            for name in cls.model_fields:
                if name in data and is_scalar(hints[name]):
                    check_value(name, data[name], hints[name])
        return data


class LabelsSpec(_Checked):
    """The ordered label scale of a suite."""

    EXTRA = "forbid"

    values: list[StrictStr | StrictInt] = Field(min_length=2)
    """The labels in scale order (the weighted kappas and weighted accuracy read the order)."""
    aliases: dict[str, str] = {}
    """Other spellings of a label in the data, each read as the label it names."""
    case_insensitive: bool = True
    """Whether ``High`` in the data is read as ``high``."""


class DefaultsSpec(PlainModel):
    """Defaults applied to every metric that takes a parameter of that name (``zero_division``,
    ``normalize``, ``assignment``, ...)."""

    VALIDATE = True

    EXTRA = "allow"

    zero_division: ZeroDivision = None

    @field_check("zero_division", mode="before")
    @classmethod
    def _policy(cls, value: object) -> ZeroDivision:
        return check_zero_division(value)


class ModelSpec(_Checked):
    """What ``--model`` sends and where the answer goes (the suite's ``model:`` block).

    ``prompt``: the field (or the first present of several) holding the text or the messages
    sent; ``tools``: the field(s) holding a record's functions (OpenAI tools or BFCL function
    docs), else ``default_tools`` (a list, or a JSON file of one, relative to the suite file);
    ``prediction``: the field the whole ``chat.completion`` is written to; ``latency``: the
    field the measured seconds are written to (null: none)."""

    EXTRA = "forbid"

    prompt: list[str] = ["query"]
    """The field (or the first present of several) holding the text or the messages sent."""
    tools: list[str] = []
    """The field(s) holding a record's functions (OpenAI tools or BFCL function docs)."""
    default_tools: list[dict[str, Any]] | str | None = None
    """The functions of a record without ``tools``: a list, or a JSON file of one (relative to
    the suite file)."""
    prediction: str
    """The field the whole ``chat.completion`` answer is written to."""
    latency: str | None = "latency_sec"
    """The field the measured seconds are written to (null: none)."""
    system: str | None = None
    """A system message sent before the prompt."""
    parameters: dict[str, Any] = {}
    """Request parameters (temperature, max_tokens, tool_choice...); ``--model-param`` is laid
    over them."""
    concurrency: Concurrency = 16
    """Requests in flight at once (``--model-concurrency`` overrides it)."""
    timeout: Seconds = 120.0
    """Seconds a request may take."""
    max_retries: Retries = 5
    """Retries of a failed request (with back-off, honouring Retry-After)."""
    price_prompt: Price = 0.0
    """Price per 1k prompt tokens (for ``cost``)."""
    price_completion: Price = 0.0
    """Price per 1k completion tokens (for ``cost``)."""

    @field_check("prompt", "tools", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_check("prompt", "tools")
    @classmethod
    def _paths(cls, value: list[str]) -> list[str]:
        for path in value:
            parse_path(path)
        return value

    @field_check("prediction", "latency")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None:
            parse_path(value)
        return value


class JudgeSpec(_Checked):
    """Who grades the answers of the judged metrics and how (the suite's ``judge:`` block;
    ``--judge``, ``--rubric`` and ``--scale`` are laid over it)."""

    EXTRA = "forbid"

    judges: list[str] = []
    """The grading models (``openai:NAME`` each, at ``--base-url``); several are a jury."""
    rubric: str | None = None
    """What the answers are graded on (the criterion, in words)."""
    scale: str | list[str] | dict[str, float] = "1-5"
    """``0-1``, an integer range (``1-5``), ``pass/fail``, labels best first (``[good, fair,
    poor]``) or labels with their values (``{good: 1, fair: 0.5, poor: 0}``)."""
    language: Literal["en", "zh"] = "en"
    """The language of the default prompts."""
    templates: dict[Literal["rubric", "correctness", "pairwise"], str] = {}
    """Prompts replacing the defaults, by task (placeholders ``{input}``, ``{output}``,
    ``{reference}``, ``{rubric}``, ``{scale}``, ``{form}``; pairwise: ``{output_a}``,
    ``{output_b}``; the texts are fenced as data)."""
    system: str | None = None
    """A system message sent before each prompt."""
    parameters: dict[str, Any] = {}
    """Request parameters (``temperature``, ``max_tokens``, ``seed``...) [default:
    temperature 0]."""
    logprobs: bool = False
    """Ask for the score token's probabilities and report G-Eval's probability-weighted score
    (points scales; the stated score where the endpoint gives none)."""
    structured: Literal["auto"] | bool = "auto"
    """Send the answer's JSON schema as ``response_format``: ``auto`` until the endpoint refuses
    it (a 400 naming response_format, or a 422: then each judge asks again without it, once,
    and never sends it again that run), ``true`` always (a refusal is a failed call),
    ``false`` never; the strict parser reads the answer either way."""
    concurrency: Concurrency = 16
    """Requests in flight at once, per judge."""
    timeout: Seconds = 120.0
    """Seconds a request may take."""
    max_retries: Retries = 5
    """Retries of a failed request (with back-off, honouring Retry-After)."""
    price_prompt: Price = 0.0
    """Price per 1k prompt tokens (for ``cost``)."""
    price_completion: Price = 0.0
    """Price per 1k completion tokens (for ``cost``)."""


_NAME = re.compile(r"[^\W_][\w.-]*")
"""A suite's name: a letter or digit (any script), then letters, digits, ``_``, ``.`` or ``-``."""
_NAME_LENGTH = 100


class SuiteSpec(_Checked):
    """A suite file, validated."""

    EXTRA = "forbid"

    name: str
    """The suite's name (in reports, the run store and the default output folder
    ``pingce-out/<name>-<time>``): a letter or digit, then letters, digits, ``-``, ``_``, ``.``."""
    description: str = ""
    """What the suite evaluates, as ``pingce suites`` lists it."""
    id_field: str = "id"
    """The field holding a record's id (records pair by it in comparisons and ``--gold``
    joins)."""
    unit: str | None = None
    """A field whose records belong together (a dialogue): the bootstrap resamples and
    ``--sample`` draws whole units, not single records."""
    match_by: list[str] | None = None
    """Fields that identify a record across two systems' outputs (``pingce compare``) when the
    records carry no id, e.g. ``[dialogue_id, turn]``."""
    labels: LabelsSpec | None = None
    """The label scale, for suites whose records carry labels."""
    inputs: dict[str, str] = {}
    """Record fields that feed the metric parameters of the same name (``gold: gold_level``)."""
    fields: dict[str, str] = {}
    """The data's name for a field the suite reads (``pred_level: answer``); ``--map`` is laid
    over it."""
    defaults: DefaultsSpec = DefaultsSpec.model_construct()
    """Arguments given to every metric that takes a parameter of that name."""
    metrics: dict[str, dict[str, Any]] = Field(min_length=1)
    """The metrics computed, each a registered metric's name (``pingce metrics``) with its
    arguments (``{}`` for none)."""
    tables: dict[str, dict[str, Any]] = {}
    """The tables computed (a confusion matrix, per-class rows), as ``metrics``."""
    context: list[str] = []
    """Record fields shown beside each record's values (the question, query, prompt, messages,
    contract text, entity: what was asked), in records.jsonl's ``context`` and report.html's
    records table; no statistic reads them. A path a record lacks is absent for that record;
    a path no record has is silent (``--context`` adds more, and names those no record has in a
    note)."""
    model: ModelSpec | None = None
    """How ``--model`` asks the model under test for this suite's predictions."""
    judge: JudgeSpec | None = None
    """Who grades the answers of the judged metrics (``rubric_score``, ``correctness``) and how."""
    similarity: dict[str, Any] = {}
    """Options of the similarity backend: judge ``template``/``system``, ``structured`` (the
    output mode), ``max_tokens``, ``concurrency``, ``max_retries``, ``timeout``,
    ``price_prompt``/``price_completion`` (per 1k tokens)... Each backend takes those it has
    (its class's parameters, with their types and ranges:
    :func:`pingce.similarity.registry.backend_options`); ``concurrency: many`` or
    ``timeout: -1`` is an error naming the option."""

    @field_check("name")
    @classmethod
    def _name(cls, value: str) -> str:
        """A name that is safe in a folder name and a run's name (the default output folder is
        ``pingce-out/<name>-<time>``): a letter or digit, then letters, digits, ``-``, ``_`` or
        ``.``; ``../../up`` would have put the outputs two folders above."""
        if not _NAME.fullmatch(value) or len(value) > _NAME_LENGTH:
            raise ValueError(
                f"a suite's name is a letter or digit followed by letters, digits, '-', '_' or "
                f"'.' (at most {_NAME_LENGTH} characters), as in my-suite or 合同风险; got "
                f"{value!r}"
            )
        return value

    @field_check("id_field", "unit")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None:
            parse_path(value)
        return value

    @field_check("match_by")
    @classmethod
    def _match_paths(cls, value: list[str] | None) -> list[str] | None:
        for path in value or ():
            parse_path(path)
        return value

    @field_check("context", mode="before")
    @classmethod
    def _context_names(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_check("context")
    @classmethod
    def _context_paths(cls, value: list[str]) -> list[str]:
        for path in value:
            parse_path(path)
        return value

    @field_check("inputs")
    @classmethod
    def _paths(cls, value: dict[str, str]) -> dict[str, str]:
        for path in value.values():
            parse_path(path)
        return value

    @field_check("fields")
    @classmethod
    def _mapped_paths(cls, value: dict[str, str]) -> dict[str, str]:
        for name, path in value.items():
            parse_path(name)
            parse_path(path)
        return value

    @field_check("similarity")
    @classmethod
    def _backend_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not value:
            return value
        from ..similarity.registry import backend_options

        known = backend_options()
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise ValueError(
                f"unknown similarity option(s) {unknown}; known: {sorted(known)} (the endpoint, "
                "key and cache are set with --base-url, PINGCE_API_KEY and --cache)"
            )
        for name, item in value.items():
            for hint in known[name].hints:
                check_value(name, item, hint)
        return value

    @field_check("metrics", "tables", mode="before")
    @classmethod
    def _entries(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ({} if v is None else v) for k, v in value.items()}
        return value
