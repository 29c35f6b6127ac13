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
to ``name + args``. The built-in families are listed in
:data:`BUILTIN_MODULES` and imported on first use of the registry; nothing imports this
package's families for their side effects anywhere else. Old names kept for users' suite files
are :data:`DEPRECATED` aliases: they still work, and the suite loader says what to use instead.

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
    "DEPRECATED",
    "REQUIRED",
    "MetricInfo",
    "create_metric",
    "create_table",
    "metric_registry",
    "register_metric",
    "register_table",
    "resolve_name",
    "table_registry",
    "unregister",
]

BUILTIN_MODULES = (
    "classification",
    "timing",
    "calls",
    "calls_hf",
    "sets",
    "dialogue",
    "overlap",
    "ter",
    "evidence",
    "rules",
    "tools",
)
"""The built-in metric families, modules of :mod:`pingce.metrics`."""

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
    _load_builtins()
    info = store.get(name)
    if info is None:
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
