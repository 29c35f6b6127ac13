"""The metric registry: names -> metric classes with the arguments a suite may set.

Metric and table classes are dataclasses; their init fields are their arguments. A class is
registered under a name with :func:`register_metric` (or :func:`register_table`), optionally
with *fixed* arguments, so one class serves several names (``qwk`` is ``cohen_kappa`` with
``weights="quadratic"``; ``p95_latency_sec`` is ``latency_percentile`` with ``q=95``)::

    @register_metric("accuracy")
    @dataclass(eq=False)
    class Accuracy(ConfusionMetric): ...

    register_metric("qwk", weights="quadratic")(CohenKappa)

:func:`create_metric` refuses arguments the class does not take, builds it (the class checks
the arguments its type hints declare, :func:`pingce.metrics._args.check_fields`, as it does when
built in Python) and keeps them on the instance (``args``), so every number in a report traces
to ``name + args``. The built-in families are listed in :data:`BUILTIN_NAMES`, each with
the names it registers, so that a suite imports only the families it uses
(:func:`metric_info`); a listing of the registry (:func:`metric_registry`, ``pingce metrics``)
imports all of them. Nothing imports this package's families for their side effects anywhere
else; ``tests/test_engine.py`` checks that the table names what each family registers. Old
names kept for users' suite files are :data:`DEPRECATED` aliases: they still work, and the suite
loader says what to use instead.

Two optional class attributes refine what a suite may set: ``refused_arguments`` (a mapping of
argument names the class does not take to the reason, shown instead of "unknown argument":
``accuracy`` has no ``labels``) and a classmethod ``takes_default(param, args)`` saying whether
a suite default of ``param`` reaches the metric built with ``args`` (a default ``labels``
reaches averaged metrics, not binary ones); the suite loader asks it.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ..errors import SuiteError

__all__ = [
    "BUILTIN_MODULES",
    "BUILTIN_NAMES",
    "DEPRECATED",
    "REQUIRED",
    "MetricInfo",
    "create_metric",
    "create_table",
    "metric_info",
    "metric_registry",
    "register_metric",
    "register_table",
    "resolve_name",
    "table_info",
    "table_registry",
    "unregister",
]

BUILTIN_NAMES: dict[str, tuple[str, ...]] = {
    "classification": (
        *("accuracy", "weighted_accuracy", "cohen_kappa", "linear_kappa", "qwk"),
        *("precision", "recall", "f1", "fbeta"),
        *("macro_precision", "macro_recall", "macro_f1", "macro_fbeta"),
        *("micro_precision", "micro_recall", "micro_f1", "micro_fbeta"),
        *("weighted_precision", "weighted_recall", "weighted_f1", "weighted_fbeta"),
        *("confusion_matrix", "per_class"),
    ),
    "scores": ("mean_score", "mean_score_lower"),  # before timing, whose mean is one of its kind
    "timing": (
        *("avg_latency_sec", "latency_percentile"),
        *("p50_latency_sec", "p95_latency_sec", "p99_latency_sec"),
    ),
    "calls": (
        *("fn_acc_all", "fn_acc_args", "fn_acc_name"),
        *("rouge-1", "rouge-2", "rouge-l", "bleu-4"),
    ),
    "calls_hf": ("hf_rouge-1", "hf_rouge-2", "hf_rouge-l", "hf_bleu-4"),
    "sets": (
        *("set_precision", "set_recall", "set_f1"),
        *("sem_precision", "sem_recall", "sem_f1"),
        *("judge_accuracy", "judge_precision", "judge_recall", "judge_f1"),
    ),
    "dialogue": (
        *("ambiguity_resolution_rate", "critical_conflict_rate", "effective_recall"),
        *("funnel_adherence", "hybrid_semantic_accuracy", "incremental_hit_slope"),
        *("logic_weighted_f1", "rejection_precision", "structure_match", "turns_to_stability"),
    ),
    "overlap": (
        *("text_bleu", "text_corpus_bleu", "text_nltk_corpus_bleu", "text_chrf"),
        *("text_rouge_n", "text_rouge_l", "text_rouge_lsum"),
    ),
    "ter": ("text_ter",),
    "evidence": (
        *("clause_hallucination_rate", "altered_clause_rate", "law_hallucination_rate"),
        *("hallucination_rate", "task_success_rate"),
    ),
    "rules": (
        *("rule_recall", "rule_recall_macro", "rule_precision", "rule_precision_macro"),
        "rule_hit_at_k",
    ),
    "tools": ("tool_call_accuracy", "tool_name_accuracy", "tool_arg_f1", "tool_errors"),
    "agreement": ("krippendorff_alpha", "fleiss_kappa"),
    "judged": (
        *("rubric_score", "correctness", "score_length_correlation", "judge_agreement"),
        *("label_rate", "judge_fleiss_kappa", "win_rate", "position_bias"),
    ),
}
"""The built-in metric families, modules of :mod:`pingce.metrics`, each with the metric and
table names it registers: a name is looked up by importing its family alone (start-up pays only
for the families a suite uses)."""

BUILTIN_MODULES = tuple(BUILTIN_NAMES)
"""The built-in metric families, in the order a listing of the registry imports them."""

_HOME = {name: module for module, names in BUILTIN_NAMES.items() for name in names}

DEPRECATED: dict[str, str] = {
    "rouge_n": "text_rouge_n",
    "rouge_l": "text_rouge_l",
    "rouge_lsum": "text_rouge_lsum",
    "bleu": "text_bleu",
    "corpus_bleu": "text_corpus_bleu",
    "chrf": "text_chrf",
}
"""Old metric names and the names that replaced them (the generic text family was renamed so
that it no longer sits one character from the function-call reference's ``rouge-l``/``bleu-4``)."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The default of an argument that has none."""

Kind = Literal["metric", "table"]


@dataclass(frozen=True)
class MetricInfo:
    """A registry entry: the class, its fixed arguments, definition and parameters."""

    name: str
    factory: type
    definition: str
    parameters: dict[str, Any]
    """The arguments a suite may set, with their defaults (:data:`REQUIRED` if none)."""
    fixed: dict[str, Any]
    """Arguments this name sets for the class, not settable by a suite."""
    kind: Kind


_METRICS: dict[str, MetricInfo] = {}
_TABLES: dict[str, MetricInfo] = {}
_LOADED: list[bool] = []

C = TypeVar("C", bound=type)


def _parameters(cls: type, fixed: Mapping[str, Any]) -> dict[str, Any]:
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} must be a dataclass (its fields are its arguments)")
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.name in fixed:
            continue
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
        else:
            out[f.name] = REQUIRED
    unknown = sorted(set(fixed) - {f.name for f in dataclasses.fields(cls)})
    if unknown:
        raise TypeError(f"{cls.__name__} has no argument(s) {unknown}")
    return out


def _first_paragraph(text: str) -> str:
    """A metric's definition: the first paragraph of its text (a docstring), on one line. The
    first line alone would cut a sentence that goes on to the next one."""
    lines = []
    for line in text.strip().splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


def _register(
    store: dict[str, MetricInfo], kind: Kind, name: str, definition: str | None, fixed: Any
) -> Callable[[C], C]:
    def decorator(cls: C) -> C:
        if name in store:
            raise ValueError(f"{kind} {name!r} is registered twice")
        text = definition or getattr(cls, "definition", "") or (cls.__doc__ or "")
        store[name] = MetricInfo(
            name, cls, _first_paragraph(text), _parameters(cls, fixed), dict(fixed), kind
        )
        return cls

    return decorator


def register_metric(name: str, *, definition: str | None = None, **fixed: Any) -> Callable[[C], C]:
    """Register a metric class under ``name``; ``fixed`` arguments are set for this name."""
    return _register(_METRICS, "metric", name, definition, fixed)


def register_table(name: str, *, definition: str | None = None, **fixed: Any) -> Callable[[C], C]:
    """Register a table metric class under ``name``."""
    return _register(_TABLES, "table", name, definition, fixed)


def _load_builtins() -> None:
    if not _LOADED:
        for module in BUILTIN_MODULES:
            importlib.import_module(f"{__package__}.{module}")
        _LOADED.append(True)


def _lookup(store: dict[str, MetricInfo], name: str) -> MetricInfo | None:
    """The entry of ``name``: registered already, else its built-in family imported (that
    family alone), else every family imported (a name no family lists is looked up in all)."""
    info = store.get(name)
    if info is None and not _LOADED:
        module = _HOME.get(name)
        if module is not None:
            importlib.import_module(f"{__package__}.{module}")
        else:
            _load_builtins()
        info = store.get(name)
    return info


def metric_info(name: str) -> MetricInfo | None:
    """The registered scalar metric ``name`` (not a deprecated alias), or None; imports only
    the family that registers it."""
    return _lookup(_METRICS, name)


def table_info(name: str) -> MetricInfo | None:
    """The registered table metric ``name``, or None; imports only the family that registers
    it."""
    return _lookup(_TABLES, name)


def metric_registry() -> dict[str, MetricInfo]:
    """Every registered scalar metric, by name."""
    _load_builtins()
    return dict(sorted(_METRICS.items()))


def table_registry() -> dict[str, MetricInfo]:
    """Every registered table metric, by name."""
    _load_builtins()
    return dict(sorted(_TABLES.items()))


def unregister(name: str) -> None:
    """Remove the metric or table registered as ``name`` (a test's or an example's own), as
    :func:`pingce.similarity.registry.unregister` does for a backend."""
    _METRICS.pop(name, None)
    _TABLES.pop(name, None)


def resolve_name(name: str) -> tuple[str, str | None]:
    """``(registered name, deprecation note or None)`` for a metric name or deprecated alias."""
    new = DEPRECATED.get(name)
    if new is None:
        return name, None
    return new, f"metric {name!r} is deprecated and will be removed: use {new!r} (same values)"


def _create(store: dict[str, MetricInfo], kind: Kind, name: str, args: dict[str, Any]) -> Any:
    info = _lookup(store, name)
    if info is None:
        _load_builtins()  # the message lists every registered name
        raise SuiteError(
            f"unknown {kind} {name!r}; registered {kind}s: {', '.join(sorted(store))}", key=name
        )
    unknown = sorted(set(args) - set(info.parameters))
    refused: Mapping[str, str] = getattr(info.factory, "refused_arguments", {})
    for arg in unknown:
        if arg in refused and arg not in info.fixed:
            raise SuiteError(f"{kind} {name!r} takes no {arg!r}: {refused[arg]}", key=name)
    if unknown:
        fixed = [a for a in unknown if a in info.fixed]
        detail = (
            f"argument(s) {fixed} are fixed for {name!r}"
            if fixed
            else f"unknown argument(s) {unknown}"
        )
        takes = [p for p in info.parameters if p != "scale"]  # the scale is the suite's labels
        raise SuiteError(f"{detail}; {kind} {name!r} takes {takes}", key=name)
    missing = [p for p, default in info.parameters.items() if default is REQUIRED and p not in args]
    if missing:
        raise SuiteError(f"{kind} {name!r} needs argument(s) {missing}", key=name)
    try:  # the class checks its arguments (protocol.Metric.__post_init__), once
        instance = info.factory(**info.fixed, **args)
    except (ValueError, TypeError) as exc:
        raise SuiteError(f"{kind} {name!r}: {exc}", key=name) from None
    instance.registry_name = name
    instance.definition = info.definition
    instance.args = {p: getattr(instance, p) for p in info.parameters}
    return instance


def create_metric(name: str, **args: Any) -> Any:
    """Instantiate a registered metric (a :class:`~pingce.metrics.protocol.Metric`),
    validating its arguments; a deprecated name gives the metric it now stands for."""
    return _create(_METRICS, "metric", resolve_name(name)[0], args)


def create_table(name: str, **args: Any) -> Any:
    """Instantiate a registered table metric, validating its arguments."""
    return _create(_TABLES, "table", name, args)
