"""The options of ``pingce run``, ``pingce compare`` and ``pingce calibrate``, declared once.

Each :class:`Option` says its name (the Python keyword and the click parameter), its type with
its constraint (``Literal`` choices, ``Annotated[int, Range(...)]`` ranges, ``bool`` flags), its
default, its help (per command where the commands read it differently), the commands it applies
to, the group it belongs to and whether ``--engine ray`` honours it. From this table alone come:

- the click options of every command (``pingce.cli.table.table_options``);
- the keywords that :func:`pingce.evaluate`, :func:`pingce.compare` and
  :func:`pingce.compare_runs` accept (:func:`keywords`, :func:`typed_dict`; the checks in
  :func:`pingce.options.run_options`);
- which options do not apply to two stored runs (:func:`stored_run_refusal`) and which the ray
  engine refuses (:func:`ray_refused`);
- the options reference (:func:`reference`, Markdown).

Commands: ``run`` (and :func:`pingce.evaluate`), ``compare`` (two record files, and
:func:`pingce.compare`), ``compare-runs`` (two stored runs, ``pingce compare RUN_A RUN_B`` and
:func:`pingce.compare_runs`) and ``calibrate``. This module imports nothing heavy: the command
line reads it before any work.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypedDict, get_args, get_origin

from ._constraints import Range
from ._defaults import BOOTSTRAP_METHODS, BOOTSTRAP_STREAMS, DEFAULT_SIMILARITY, OPTION_TYPES
from .predict.registry import model_help, model_metavar
from .similarity.registry import backend_help, remote_help

__all__ = [
    "COMMANDS",
    "OPTIONS",
    "CompareOptions",
    "CompareRunsOptions",
    "EvaluateOptions",
    "Option",
    "find",
    "keywords",
    "options_of",
    "ray_refused",
    "reference",
    "render_typed_dicts",
    "stored_run_refusal",
    "typed_dict",
]

Command = Literal["run", "compare", "compare-runs", "calibrate"]
COMMANDS: tuple[Command, ...] = ("run", "compare", "compare-runs", "calibrate")

Group = Literal[
    "scoring",
    "model",
    "judge",
    "sampling",
    "bootstrap",
    "policy",
    "inputs",
    "gates",
    "engine",
    "output",
]
"""What an option is about: ``scoring`` (the similarity backend: two stored runs were scored
already), ``inputs`` (how record files are read: two stored runs have none), ``model`` (the model
under test), ``judge`` (the models that grade answers: the judged metrics), ``sampling``,
``bootstrap``, ``policy`` (how metrics are computed), ``gates``, ``engine``, ``output`` (what the
command prints and records). The engine reads a group's options together, parsed, from
:class:`pingce.options.RunOptions` (``bootstrap``: ``resampling``, ``sampling``, ``inputs``,
``scoring``, ``model``: ``model_call``, ``judge``: ``judging``, ``engine``: ``executor``,
``gates``: ``gating``; ``tests/test_option_groups.py`` holds them to this table)."""

RUN_AND_COMPARE = frozenset({"run", "compare", "compare-runs"})
SCORED = frozenset({"run", "compare", "calibrate"})


@dataclass(frozen=True)
class Option:
    """One option, as the command line and the Python API take it."""

    name: str
    """The Python keyword (``pingce.evaluate(ci_level=0.9)``) and the click parameter."""
    type: Any
    """The value's type with its constraint: ``Literal[...]`` (choices), ``Annotated[int,
    Range(...)]`` (a number and its range), ``bool`` (a flag), ``str``."""
    help: str | Mapping[str, str]
    """The help text, or per command where they read it differently."""
    commands: frozenset[str]
    group: Group
    default: Any = None
    python: str | None = None
    """The keyword's type in the Python API, as written in a type hint; None: command line only."""
    flag: str | None = ""
    """The command-line flag; "" for ``--`` + the name with dashes, None for Python only."""
    metavar: str | None = None
    multiple: bool = False
    path: bool = False
    """A file's path (click's ``Path(dir_okay=False)``)."""
    show_default: bool = False
    aliases: tuple[str, ...] = ()
    """Other Python keywords for it (``slice`` for ``slices``)."""
    ray: bool = True
    """Whether ``--engine ray`` honours it (else giving it with ``--engine ray`` is an error)."""

    @property
    def option(self) -> str | None:
        """The flag as written on the command line (``--ci-level``), or None."""
        if self.flag is None:
            return None
        return self.flag or "--" + self.name.replace("_", "-")

    def help_for(self, command: str) -> str:
        if isinstance(self.help, str):
            return self.help
        return self.help.get(command) or self.help["run"]

    def choices(self) -> tuple[str, ...] | None:
        """The values of a ``Literal`` type, or None."""
        return get_args(self.type) if get_origin(self.type) is Literal else None

    def number_range(self) -> tuple[type, Range] | None:
        """The base type and range of an ``Annotated[int | float, Range]`` type, or None."""
        if get_origin(self.type) is not Annotated:
            return None
        base, *marks = get_args(self.type)
        bounds = next(m for m in marks if isinstance(m, Range))
        return base, bounds


def _rng(name: str) -> Any:
    return OPTION_TYPES[name]


OPTIONS: list[Option] = [
    Option(
        "similarity",
        str,
        {
            "run": backend_help(),  # from the backends' registry
            "compare": "Similarity backend (the names of run --similarity).",
            "calibrate": "Backend to calibrate (names as for run: lexical, embedding, "
            "openai:<model>, ...).",
        },
        SCORED,
        "scoring",
        default=DEFAULT_SIMILARITY,
        python="str | SimilarityBackend",
        show_default=True,
    ),
    Option(
        "base_url",
        str,
        {
            "run": f"Endpoint for {remote_help()} backends (or PINGCE_BASE_URL).",  # registry
            "compare": "Endpoint of a remote similarity backend, and of the judges (--judge).",
            "calibrate": f"Endpoint for {remote_help()} backends.",
        },
        SCORED | {"compare-runs"},
        "scoring",
        python="str | None",
    ),
    Option(
        "model",
        str,
        model_help(),  # from the model providers' registry
        frozenset({"run"}),
        "model",
        python="str | None",
        metavar=model_metavar(),
        ray=False,
    ),
    Option(
        "model_base_url",
        str,
        "Endpoint of --model [default: --base-url, PINGCE_BASE_URL, OPENAI_BASE_URL].",
        frozenset({"run"}),
        "model",
        python="str | None",
    ),
    Option(
        "api_key_env",
        str,
        "Environment variable holding the key of --model [default: PINGCE_API_KEY, then "
        "OPENAI_API_KEY].",
        frozenset({"run"}),
        "model",
        python="str | None",
        metavar="VAR",
    ),
    Option(
        "model_params",
        str,
        "A request parameter of --model (VALUE read as JSON, else text), e.g. "
        "temperature=0.2, max_tokens=512, tool_choice=auto; repeatable [default: "
        "temperature=0].",
        frozenset({"run"}),
        "model",
        python="Mapping[str, Any]",
        flag="--model-param",
        metavar="KEY=VALUE",
        multiple=True,
    ),
    Option(
        "model_concurrency",
        _rng("model_concurrency"),
        "Calls to --model in flight at once [default: the suite's, 16].",
        frozenset({"run"}),
        "model",
        python="int | None",
    ),
    Option(
        "repeats",
        _rng("repeats"),
        "Ask --model each record K times (its parameters, e.g. temperature, as for one): the "
        "metrics over every record x repeat, intervals resampling records with their repeats, "
        "pass@k, variance shares and flaky records; each repeat cached apart, so a rerun asks "
        "nothing and a larger K only the new repeats.",
        frozenset({"run"}),
        "model",
        default=1,
        python="int",
        metavar="K",
        ray=False,
    ),
    Option(
        "target_se",
        _rng("target_se"),
        "With repeats: the standard error to plan for; each metric's report names the cheapest "
        "repeats reaching it and their calls.",
        frozenset({"run"}),
        "output",
        python="float | None",
        metavar="SE",
    ),
    Option(
        "judge_repeats",
        _rng("judge_repeats"),
        "Ask the judges J times about each answer (each call cached apart, as --repeats): the "
        "judge's share of the variance measured beside the records' and the repeats'.",
        frozenset({"run"}),
        "judge",
        default=1,
        python="int",
        metavar="J",
        ray=False,
    ),
    Option(
        "judges",
        str,
        "A model that grades the answers of the judged metrics (rubric_score, correctness), "
        "e.g. openai:gpt-4o-mini at --base-url; repeatable: a jury [default: the suite's "
        "judge.judges].",
        frozenset({"run", "compare", "compare-runs"}),
        "judge",
        default=(),
        python="Sequence[str]",
        flag="--judge",
        metavar="openai:MODEL",
        multiple=True,
    ),
    Option(
        "rubric",
        str,
        "What the judge grades the answers on: the text, or a file holding it [default: the "
        "suite's judge.rubric].",
        frozenset({"run", "compare", "compare-runs"}),
        "judge",
        python="str | None",
        metavar="TEXT|FILE",
    ),
    Option(
        "scale",
        str,
        "The judge's scale: 0-1, 1-5 (any integer range), pass/fail, or labels as "
        "'good,fair,poor' (best first) [default: the suite's judge.scale, 1-5].",
        RUN_AND_COMPARE,
        "judge",
        python="str | None",
        metavar="SCALE",
    ),
    Option(
        "pairwise",
        bool,
        "Also ask the judges (--judge), for every paired record, which side's answer is better, "
        "in both orders: the candidate's win rate over the baseline, with its interval, and the "
        "judges' position bias. The answers are the judged metrics' output field (stored runs: "
        "kept by --records-fields all).",
        frozenset({"compare", "compare-runs"}),
        "judge",
        default=False,
        python="bool",
    ),
    Option(
        "sample",
        _rng("sample"),
        "Evaluate N records drawn at random (seeded).",
        frozenset({"run"}),
        "sampling",
        python="int | None",
        ray=False,
    ),
    Option(
        "stratify",
        str,
        "Draw --sample N with equal numbers per value of this field.",
        frozenset({"run"}),
        "sampling",
        python="str | None",
    ),
    Option(
        "allocation",
        Literal["equal", "proportional"],
        "How --stratify splits N over strata.",
        frozenset({"run"}),
        "sampling",
        default="equal",
        python="Allocation",
        show_default=True,
    ),
    Option(
        "short_strata",
        Literal["error", "take-all"],
        "A stratum with fewer records than its quota: stop, or take all it has.",
        frozenset({"run"}),
        "sampling",
        default="error",
        python="Shortfall",
        show_default=True,
    ),
    Option(
        "seed",
        _rng("seed"),
        {
            "run": "Seed of every random choice (sampling, bootstrap).",
            "compare": "Seed of the bootstrap.",
        },
        RUN_AND_COMPARE,
        "bootstrap",
        default=0,
        python="int",
        show_default=True,
    ),
    Option(
        "bootstrap",
        _rng("bootstrap"),
        {
            "run": "Bootstrap resamples for intervals; 0 turns them off.",
            "compare": "Paired bootstrap resamples; 0 gives the differences only.",
        },
        RUN_AND_COMPARE,
        "bootstrap",
        default=1000,
        python="int",
        show_default=True,
    ),
    Option(
        "ci_method",
        Literal["bca", "percentile", "basic"],
        {"run": "Bootstrap interval method.", "compare": "Interval method for the differences."},
        RUN_AND_COMPARE,
        "bootstrap",
        default="bca",
        python="CIMethod",
        show_default=True,
    ),
    Option(
        "bootstrap_method",
        Literal[BOOTSTRAP_METHODS],
        "multinomial: n records drawn with replacement; poisson: a Poisson(1) weight per "
        "record keyed on its id (the same in every slice and shard, and on both sides of a "
        "comparison).",
        RUN_AND_COMPARE,
        "bootstrap",
        default=BOOTSTRAP_METHODS[0],
        python="BootstrapMethod",
        show_default=True,
    ),
    Option(
        "bootstrap_stream",
        Literal[BOOTSTRAP_STREAMS],
        "per-block: each statistic's resamples are Multinomial counts of its distinct rows "
        "(equal in law to drawing records; results.json's signature: multinomial-per-block); "
        "indices: n record indices shared by every statistic, the stream before the per-block "
        "draws (kept for one release). Poisson and --engine ray draw neither.",
        RUN_AND_COMPARE,
        "bootstrap",
        default=BOOTSTRAP_STREAMS[0],
        python="BootstrapStream",
        show_default=True,
    ),
    Option(
        "ci_level",
        _rng("ci_level"),
        {
            "run": "Confidence level of the intervals.",
            "compare": "Confidence level; a difference is significant when its Holm-adjusted "
            "p < 1 - level.",
        },
        RUN_AND_COMPARE,
        "bootstrap",
        default=0.95,
        python="float",
        show_default=True,
    ),
    Option(
        "slices",
        str,
        {
            "run": "Also report metrics per value of this field (repeatable).",
            "compare": "Compare within each value of this field too (repeatable); both sides "
            "must agree on it.",
        },
        RUN_AND_COMPARE,
        "policy",
        default=(),
        python="str | Sequence[str]",
        flag="--slice",
        multiple=True,
        aliases=("slice",),
    ),
    Option(
        "zero_division",
        Literal["null", "0", "1"],
        "Value of 0/0 ratios [default: the suite's, null].",
        RUN_AND_COMPARE,
        "policy",
        python="float | str | None",
    ),
    Option(
        "on_judge_failure",
        Literal["null", "skip"],
        "A metric that needs records whose judge (or embedding, reranker) calls failed: "
        "null with the count, or computed over the other records with a note.",
        RUN_AND_COMPARE,
        "policy",
        default="null",
        python="JudgeFailure",
        show_default=True,
    ),
    Option(
        "laws",
        str,
        "Law list for law citations: a CSV, JSONL or SQLite file, or 'builtin' [default: "
        "the suite's, the packaged list].",
        RUN_AND_COMPARE,
        "policy",
        python="str | None",
    ),
    Option(
        "field_map",
        str,
        "Read the suite's FIELD from the data's COLUMN (a path such as output.level); "
        "repeatable, e.g. --map pred_level=answer.",
        frozenset({"run", "compare"}),
        "inputs",
        python="Mapping[str, str]",
        flag="--map",
        metavar="FIELD=COLUMN",
        multiple=True,
    ),
    Option(
        "context",
        str,
        "Also keep this record field beside each record's values (records.jsonl's context, "
        "report.html's records table), added to the suite's context: fields (repeatable); "
        "no statistic reads it.",
        frozenset({"run", "compare"}),
        "inputs",
        default=(),
        python="str | Sequence[str]",
        metavar="FIELD",
        multiple=True,
    ),
    Option(
        "encoding",
        str,
        "Encoding of text record files (utf-8, gb18030, utf-16, ...) [default: detected].",
        frozenset({"run", "compare"}),
        "inputs",
        python="str | None",
    ),
    Option(
        "gold",
        str,
        "Gold records in a file of their own, joined to --data by id.",
        frozenset({"run", "compare"}),
        "inputs",
        python="str | PathLike[str] | None",
        path=True,
        ray=False,
    ),
    Option(
        "allow_missing",
        bool,
        "With --gold: leave out (and count) records on one side only instead of stopping.",
        frozenset({"run", "compare"}),
        "inputs",
        default=False,
        python="bool",
    ),
    Option(
        "fail_under",
        str,
        "Exit 4 when METRIC is below X (repeatable), e.g. --fail-under accuracy=0.8.",
        frozenset({"run"}),
        "gates",
        metavar="METRIC=X",
        multiple=True,
    ),
    Option(
        "fail_over",
        str,
        "Exit 4 when METRIC is above X (repeatable), e.g. --fail-over hallucination_rate=0.1.",
        frozenset({"run"}),
        "gates",
        metavar="METRIC=X",
        multiple=True,
    ),
    Option(
        "gates",
        str,
        "--fail-under and --fail-over as gates (pingce.gates.Gate).",
        frozenset({"run"}),
        "gates",
        default=(),
        python="Sequence[Gate]",
        flag=None,
    ),
    Option(
        "gate_on_interval",
        bool,
        "Gates read the pessimistic end of the bootstrap interval instead of the value.",
        frozenset({"run"}),
        "gates",
        default=False,
        python="bool",
    ),
    Option(
        "fail_on_regression",
        str,
        "Exit 4 when METRIC (or 'all') is significantly worse after Holm; with a margin, when "
        "the paired interval does not exclude a drop larger than MARGIN. Repeatable.",
        frozenset({"compare", "compare-runs"}),
        "gates",
        metavar="METRIC[:MARGIN]",
        multiple=True,
    ),
    Option(
        "non_inferior",
        str,
        "Decide: the candidate passes when METRIC is shown to be no worse than the baseline by "
        "more than MARGIN (the paired interval of delta above -MARGIN; below +MARGIN for a "
        "metric lower is better), the family of gates adjusted by --multiplicity; exit 4 when "
        "a gate fails. Repeatable.",
        frozenset({"run", "compare", "compare-runs"}),
        "gates",
        metavar="METRIC=MARGIN",
        multiple=True,
    ),
    Option(
        "equivalent",
        str,
        "Decide: the candidate passes when METRIC's difference is shown to lie within "
        "±MARGIN (two one-sided tests). Repeatable.",
        frozenset({"run", "compare", "compare-runs"}),
        "gates",
        metavar="METRIC=MARGIN",
        multiple=True,
    ),
    Option(
        "baseline",
        str,
        "A stored run (its name in the run store, or its output folder) to decide against: "
        "the run is compared with it record by record, as pingce compare RUN BASELINE does, "
        "and --non-inferior/--equivalent decide (results.json's decision; exit 4 when a gate "
        "fails).",
        frozenset({"run"}),
        "gates",
        python="str | PathLike[str] | EvaluationResult | None",
        metavar="RUN",
        ray=False,
    ),
    Option(
        "multiplicity",
        Literal["holm", "bh", "none"],
        "How the --non-inferior and --equivalent gates (every gated metric in every --slice "
        "value) share their level: holm (any false pass at most alpha), bh (the share of false "
        "passes at most alpha), none.",
        frozenset({"run", "compare", "compare-runs"}),
        "gates",
        default="holm",
        python="Multiplicity",
        show_default=True,
    ),
    Option(
        "margin_gates",
        str,
        "--non-inferior and --equivalent as gates (pingce.decisions.MarginGate); evaluate "
        "checks their metric names.",
        frozenset({"run", "compare", "compare-runs"}),
        "gates",
        default=(),
        python="Sequence[MarginGate]",
        flag=None,
    ),
    Option(
        "regression_gates",
        str,
        "--fail-on-regression as gates (pingce.gates.RegressionGate); evaluate checks their "
        "metric names.",
        RUN_AND_COMPARE,
        "gates",
        default=(),
        python="Sequence[RegressionGate]",
        flag=None,
    ),
    Option(
        "cache",
        str,
        {
            "run": "Similarity cache file [default: $PINGCE_CACHE_DIR or ~/.cache/pingce/].",
            "compare": "Cache file (similarity scores and the judges' answers).",
            "calibrate": "Similarity cache file.",
        },
        SCORED | {"compare-runs"},
        "scoring",
        python="str | bool | None",
        path=True,
    ),
    Option(
        "no_cache",
        bool,
        {
            "run": "Do not read or write the cache (similarity scores and the model's answers).",
            "compare": "Do not read or write the cache (similarity scores and the judges' "
            "answers).",
            "calibrate": "Do not read or write the similarity cache.",
        },
        SCORED | {"compare-runs"},
        "scoring",
        default=False,
    ),
    Option(
        "quiet",
        bool,
        "Print only where the outputs are.",
        frozenset({"run"}),
        "output",
        default=False,
    ),
    Option(
        "no_progress",
        bool,
        "Never show progress bars.",
        frozenset(COMMANDS),
        "output",
        default=False,
    ),
    Option(
        "records_format",
        Literal["jsonl", "parquet"],
        "How the run folder keeps the per-record rows: records.jsonl (JSON Lines), or "
        "records.parquet (Parquet, zstd; for runs too large for JSON Lines; pip install "
        "'pingce[files]').",
        frozenset({"run"}),
        "output",
        default="jsonl",
        python='Literal["jsonl", "parquet"]',
        flag="--records",
        show_default=True,
        ray=False,
    ),
    Option(
        "records_fields",
        Literal["none", "all"],
        "none: the per-record rows keep ids, lines, context fields, values and reasons, not the "
        "input fields the data file already holds; all: echo every field the suite read too "
        "(the field diff of pingce compare RUN_A RUN_B needs them).",
        frozenset({"run"}),
        "output",
        default="none",
        python='Literal["none", "all"]',
        show_default=True,
        ray=False,
    ),
    Option(
        "report_records",
        _rng("report_records"),
        "Records embedded in report.html, the first N (the page says where the rest are).",
        frozenset({"run"}),
        "output",
        default=2000,
        python="int",
        metavar="N",
        show_default=True,
    ),
    Option(
        "profile",
        bool,
        {
            "run": "Show the time spent in each phase of the run.",
            "compare": "Show the time spent in each phase.",
        },
        RUN_AND_COMPARE,
        "output",
        default=False,
    ),
    Option(
        "engine",
        Literal["local", "ray"],
        "ray: shards of --data (files or a glob such as 'shards/*.jsonl') on Ray Data, with "
        "the Poisson bootstrap (pip install 'pingce[ray]').",
        frozenset({"run"}),
        "engine",
        default="local",
        python='Literal["local", "ray"]',
        show_default=True,
    ),
    Option(
        "ray_address",
        str,
        "With --engine ray: the cluster to join (auto, ray://HOST:PORT) [default: a local one].",
        frozenset({"run"}),
        "engine",
        python="str | None",
        metavar="ADDRESS",
    ),
    Option(
        "ray_scratch",
        str,
        "With --engine ray: where the workers write their per-record shards until the outputs "
        "are written; on several machines, a folder they all share [default: a temporary "
        "folder].",
        frozenset({"run"}),
        "engine",
        python="str | None",
        metavar="DIR",
    ),
]
"""Every option, in the order the commands' help lists them."""


def find(name: str) -> Option:
    """The option of that name."""
    return next(o for o in OPTIONS if o.name == name)


def options_of(command: str) -> Iterator[Option]:
    """The options of a command, in the table's order."""
    return (o for o in OPTIONS if command in o.commands)


def keywords(command: str) -> tuple[str, ...]:
    """The keywords the Python API takes for a command (``run``: :func:`pingce.evaluate`)."""
    return tuple(o.name for o in options_of(command) if o.python is not None)


def _typed_fields(command: str) -> dict[str, str]:
    return {
        name: o.python
        for o in options_of(command)
        if o.python is not None
        for name in (o.name, *o.aliases)
    }


def _typed_name(command: str) -> str:
    return {"run": "Evaluate"}.get(command, "".join(p.title() for p in command.split("-")))


def typed_dict(command: str) -> Any:
    """A ``TypedDict`` of the command's Python keywords (none of them required), derived from
    the table at the time of the call."""
    fields = {name: Any for name in _typed_fields(command)}
    return TypedDict(_typed_name(command) + "Options", fields, total=False)  # type: ignore[operator]


def render_typed_dicts() -> str:
    """The source of the ``TypedDict`` classes below (``EvaluateOptions``, ``CompareOptions``,
    ``CompareRunsOptions``) for type checkers, rendered from the table: a test checks that
    the classes are this text (after adding an option, paste its output over them)."""
    blocks = []
    for command in ("run", "compare", "compare-runs"):
        lines = [f"    class {_typed_name(command)}Options(TypedDict, total=False):"]
        lines += [f"        {name}: {text}" for name, text in _typed_fields(command).items()]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def stored_run_refusal(name: str) -> str | None:
    """Why an option of ``compare`` does not apply to two stored runs: ``"error"`` for what
    reads record files, ``"note"`` for what scores similarities (the runs were scored already),
    None when it applies."""
    option = find(name)
    if "compare-runs" in option.commands:
        return None
    return "error" if option.group == "inputs" else "note"


def ray_refused(values: Mapping[str, Any]) -> list[str]:
    """The flags of the options given (not at their default) that ``--engine ray`` does not
    honour."""
    return [
        o.option or o.name
        for o in OPTIONS
        if not o.ray and o.name in values and values[o.name] not in (None, o.default)
    ]


def _type_text(option: Option) -> str:
    choices = option.choices()
    if choices is not None:
        return " \\| ".join(f"`{c}`" for c in choices)
    ranged = option.number_range()
    if ranged is not None:
        base, bounds = ranged
        return f"{base.__name__} {bounds.text(base is int)}"
    if option.type is bool:
        return "flag"
    return "path" if option.path else "text"


def reference() -> str:
    """The options reference as Markdown: one row per option (flag, Python keyword, type,
    default, commands, whether ``--engine ray`` honours it, help)."""
    lines = [
        "| option | Python | type | default | commands | ray | help |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in OPTIONS:
        flag = f"`{o.option}`" if o.option else ""
        python = f"`{o.name}`" if o.python is not None else ""
        default = "" if o.default in (None, (), False) else f"`{o.default}`"
        commands = ", ".join(c for c in COMMANDS if c in o.commands)
        helps = o.help.values() if not isinstance(o.help, str) else [o.help]
        text = " / ".join(dict.fromkeys(helps)).replace("|", "\\|")
        ray = "yes" if o.ray else "no"
        lines.append(
            f"| {flag} | {python} | {_type_text(o)} | {default} | {commands} | {ray} | {text} |"
        )
    return "\n".join(lines) + "\n"


if TYPE_CHECKING:
    from collections.abc import Sequence
    from os import PathLike

    from .decisions import MarginGate, Multiplicity
    from .gates import Gate, RegressionGate
    from .options import JudgeFailure
    from .results import EvaluationResult
    from .sampling import Allocation, Shortfall
    from .similarity.base import SimilarityBackend
    from .stats import BootstrapMethod, BootstrapStream, CIMethod

    # The keywords of pingce.evaluate, pingce.compare and pingce.compare_runs, for type
    # checkers: render_typed_dicts()'s text (tests/test_option_table.py checks it).
    class EvaluateOptions(TypedDict, total=False):
        similarity: str | SimilarityBackend
        base_url: str | None
        model: str | None
        model_base_url: str | None
        api_key_env: str | None
        model_params: Mapping[str, Any]
        model_concurrency: int | None
        repeats: int
        target_se: float | None
        judge_repeats: int
        judges: Sequence[str]
        rubric: str | None
        scale: str | None
        sample: int | None
        stratify: str | None
        allocation: Allocation
        short_strata: Shortfall
        seed: int
        bootstrap: int
        ci_method: CIMethod
        bootstrap_method: BootstrapMethod
        bootstrap_stream: BootstrapStream
        ci_level: float
        slices: str | Sequence[str]
        slice: str | Sequence[str]
        zero_division: float | str | None
        on_judge_failure: JudgeFailure
        laws: str | None
        field_map: Mapping[str, str]
        context: str | Sequence[str]
        encoding: str | None
        gold: str | PathLike[str] | None
        allow_missing: bool
        gates: Sequence[Gate]
        gate_on_interval: bool
        baseline: str | PathLike[str] | EvaluationResult | None
        multiplicity: Multiplicity
        margin_gates: Sequence[MarginGate]
        regression_gates: Sequence[RegressionGate]
        cache: str | bool | None
        records_format: Literal["jsonl", "parquet"]
        records_fields: Literal["none", "all"]
        report_records: int
        engine: Literal["local", "ray"]
        ray_address: str | None
        ray_scratch: str | None

    class CompareOptions(TypedDict, total=False):
        similarity: str | SimilarityBackend
        base_url: str | None
        judges: Sequence[str]
        rubric: str | None
        scale: str | None
        pairwise: bool
        seed: int
        bootstrap: int
        ci_method: CIMethod
        bootstrap_method: BootstrapMethod
        bootstrap_stream: BootstrapStream
        ci_level: float
        slices: str | Sequence[str]
        slice: str | Sequence[str]
        zero_division: float | str | None
        on_judge_failure: JudgeFailure
        laws: str | None
        field_map: Mapping[str, str]
        context: str | Sequence[str]
        encoding: str | None
        gold: str | PathLike[str] | None
        allow_missing: bool
        multiplicity: Multiplicity
        margin_gates: Sequence[MarginGate]
        regression_gates: Sequence[RegressionGate]
        cache: str | bool | None

    class CompareRunsOptions(TypedDict, total=False):
        base_url: str | None
        judges: Sequence[str]
        rubric: str | None
        scale: str | None
        pairwise: bool
        seed: int
        bootstrap: int
        ci_method: CIMethod
        bootstrap_method: BootstrapMethod
        bootstrap_stream: BootstrapStream
        ci_level: float
        slices: str | Sequence[str]
        slice: str | Sequence[str]
        zero_division: float | str | None
        on_judge_failure: JudgeFailure
        laws: str | None
        multiplicity: Multiplicity
        margin_gates: Sequence[MarginGate]
        regression_gates: Sequence[RegressionGate]
        cache: str | bool | None
else:

    def __getattr__(name: str) -> Any:
        """``EvaluateOptions``, ``CompareOptions``, ``CompareRunsOptions`` at run time: derived
        from the table when first asked for (``import pingce`` stays fast)."""
        commands = {"EvaluateOptions": "run", "CompareOptions": "compare"}
        command = commands.get(name, "compare-runs" if name == "CompareRunsOptions" else None)
        if command is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return typed_dict(command)
