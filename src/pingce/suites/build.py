"""Loading a suite: a built-in name, a YAML file or a :class:`SuiteSpec`, with options laid over
its defaults, into the metric objects that run it.

Options overlay the suite: ``load_suite(suite, defaults={"zero_division": 0.0})`` replaces that
one default and keeps every other (``threshold``, ``normalize``, ``assignment``...). Suite
defaults apply to every metric that takes an argument of that name, unless the metric's own
entry sets it. Old metric names keep working and leave a note that says what to use instead.

A metric class may expand one entry into several metrics (``expand_arguments(args)`` returning
``(suffix, args)`` pairs, or None): ``bleu: {metric: text_bleu, weights: [[1], [0.5, 0.5]]}``
is the metrics ``bleu_1`` and ``bleu_2``, as nltk's BLEU with several weight tuples gives several
scores.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._constraints import ArgumentError
from ..errors import SuiteError, did_you_mean
from ..labels import LabelScale
from ..metrics import check_arguments
from ..metrics.protocol import Metric, TableMetric
from ..metrics.registry import (
    create_metric,
    create_table,
    metric_info,
    metric_registry,
    resolve_name,
    table_info,
    table_registry,
)
from ._parsed import builtin_names, kept_document
from .spec import DefaultsSpec, SuiteSpec

if TYPE_CHECKING:
    from ._yaml import KeyLines

__all__ = ["BuiltSuite", "builtin_suites", "load_suite"]


@dataclass
class BuiltSuite:
    """A suite ready to run: its spec (with any overlaid defaults), label scale and metric
    objects; ``notes`` are things to tell the user (deprecated names)."""

    spec: SuiteSpec
    source: str
    scale: LabelScale | None
    metrics: dict[str, Metric]
    tables: dict[str, TableMetric]
    notes: list[str] = field(default_factory=list)

    def items(self) -> dict[str, Metric | TableMetric]:
        """Every metric and table by result name."""
        return {**self.metrics, **self.tables}


def builtin_suites() -> dict[str, str]:
    """Built-in suite names and their one-line descriptions."""
    from ._yaml import load_yaml

    out = {}
    for name in builtin_names():
        text = (resources.files("pingce.suites") / f"{name}.yaml").read_text(encoding="utf-8")
        data = load_yaml(text) or {}
        out[name] = str(data.get("description", "")).strip()
    return out


def _format_loc(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _build(
    kind: str,
    name: str,
    entry: dict[str, Any],
    spec: SuiteSpec,
    scale: LabelScale | None,
    source: str,
    notes: list[str],
) -> list[Any]:
    """The metric (or table) of one suite entry, or the several an entry expands into."""
    args = dict(entry)
    given = args.pop("metric", name) if kind == "metric" else args.pop("table", name)
    key = f"{kind}s.{name}"
    registered = str(given)
    if kind == "metric":
        registered, note = resolve_name(registered)
        if note is not None:
            notes.append(f"{source}: {key}: {note}")
    info = metric_info(registered) if kind == "metric" else table_info(registered)
    if info is None:
        registry = metric_registry() if kind == "metric" else table_registry()
        raise SuiteError(
            f"unknown {kind} {given!r}; `pingce metrics` lists them: "
            + ", ".join(sorted(registry))
            + did_you_mean(str(given), registry),
            source=source,
            key=key,
        )
    params = info.parameters
    for param, path in spec.inputs.items():
        if param in params and param not in args:
            args[param] = path
    if "scale" in params:
        if "scale" in args:
            raise SuiteError(
                "the label scale is set by the suite's `labels`", source=source, key=key
            )
        if scale is None:
            raise SuiteError(
                f"{kind} {registered!r} needs the suite's `labels`", source=source, key=key
            )
        args["scale"] = scale
    defaults = {"zero_division": spec.defaults.zero_division, **(spec.defaults.model_extra or {})}
    takes_default = getattr(info.factory, "takes_default", None)
    from_defaults = set()
    for param, value in defaults.items():
        reaches = takes_default is None or takes_default(param, {**info.fixed, **args})
        if param in params and param not in args and reaches:
            args[param] = value
            from_defaults.add(param)
    expand = getattr(info.factory, "expand_arguments", None) if kind == "metric" else None
    variants = expand(args) if expand is not None else None
    items = []
    for suffix, variant in variants or [("", args)]:
        try:  # the registry checks them too: here the error names where a value came from
            check_arguments(info.factory, {k: v for k, v in variant.items() if k in params})
        except ArgumentError as exc:
            top = exc.name.split(".")[0]
            where = f"defaults.{top}" if top in from_defaults else key
            raise SuiteError(f"{kind} {registered!r}: {exc}", source=source, key=where) from None
        try:
            item = (create_metric if kind == "metric" else create_table)(registered, **variant)
        except SuiteError as exc:
            raise SuiteError(exc.reason, source=source, key=key) from None
        try:  # field arguments must be field paths: say so here, not in a traceback mid-run
            item.statistic().fields()
        except (ValueError, TypeError, AttributeError) as exc:
            raise SuiteError(f"{kind} {registered!r}: {exc}", source=source, key=key) from None
        item.name = f"{name}_{suffix}" if suffix else name
        item.args.pop("scale", None)
        items.append(item)
    return items


def _collect(
    kind: str,
    entries: dict[str, dict[str, Any]],
    spec: SuiteSpec,
    scale: LabelScale | None,
    source: str,
    notes: list[str],
) -> dict[str, Any]:
    """Every entry's metrics (or tables) by result name; an expanded name that another entry
    also gives is an error naming the entry."""
    out: dict[str, Any] = {}
    for name, entry in entries.items():
        for item in _build(kind, name, entry, spec, scale, source, notes):
            if item.name in out or (item.name != name and item.name in entries):
                raise SuiteError(
                    f"this entry makes the {kind} {item.name!r}, a name another entry has too",
                    source=source,
                    key=f"{kind}s.{name}",
                )
            out[item.name] = item
    return out


def _check_used(spec: SuiteSpec, taken: set[str], source: str) -> None:
    """A default or an input that no metric or table takes is a typo (or a stale line): say so
    rather than run without it."""
    for group, names in (("defaults", spec.defaults.model_extra or {}), ("inputs", spec.inputs)):
        for name in names:
            if name not in taken:
                raise SuiteError(
                    f"no metric or table of this suite takes an argument {name!r}, so this "
                    f"{group[:-1]} would be ignored; arguments taken: {sorted(taken)}",
                    source=source,
                    key=f"{group}.{name}",
                )


def _parse(suite: str | os.PathLike[str], lines: KeyLines) -> tuple[SuiteSpec, str]:
    """The suite file's spec and its name in messages; the line of each key into ``lines``."""
    text, source = _read(suite)
    kept = kept_document(os.fspath(suite), text)  # a built-in suite as read before: no YAML
    if kept is not None:  # and validated before: no pydantic
        lines.update(kept[1])
        return SuiteSpec.model_construct(**kept[2]), source
    data = _yaml_document(text, source, lines)
    if not isinstance(data, dict):
        raise SuiteError("a suite file must be a mapping of keys", source=source)
    from pydantic import ValidationError

    try:
        return SuiteSpec.model_validate(data), source
    except ValidationError as exc:
        first = exc.errors()[0]
        error = first.get("ctx", {}).get("error")
        if isinstance(error, ArgumentError):  # the one validator's: it names the inner key
            loc = [str(part) for part in first["loc"]]
            raise SuiteError(str(error), source=source, key=".".join([*loc, error.name])) from None
        if first["loc"][:2] == ("labels", "values") and isinstance(first.get("input"), bool):
            raise SuiteError(
                f"a label must be a string or an integer, got {first['input']!r}: YAML reads "
                "unquoted yes/no/true/false as booleans, so quote such labels",
                source=source,
                key=_format_loc(first["loc"][:3]),
            ) from None
        shown = "" if first["loc"][:1] == ("similarity",) else f" (got {first.get('input')!r})"
        if first["type"] == "value_error":  # a validator's own message, which shows the value
            message, shown = str(first.get("ctx", {}).get("error", first["msg"])), ""
        else:
            message = first["msg"]
        raise SuiteError(  # similarity options are not echoed: they may hold a key
            f"{message}{shown}" if first["type"] != "missing" else "required key is missing",
            source=source,
            key=_format_loc(first["loc"]),
        ) from None


def _yaml_document(text: str, source: str, lines: KeyLines) -> Any:
    """The document of a suite file's ``text`` (:func:`._yaml.load_yaml`), its problems as
    :class:`SuiteError`."""
    import yaml

    from ._yaml import YamlProblem, load_yaml

    try:
        return load_yaml(text, lines)
    except YamlProblem as exc:
        raise SuiteError(str(exc), source=source, key=exc.key, line=exc.line) from None
    except yaml.YAMLError as exc:
        raise SuiteError(f"not valid YAML: {exc}", source=source) from None


def _overlay(spec: SuiteSpec, defaults: Mapping[str, Any]) -> SuiteSpec:
    """The spec with ``defaults`` replacing those defaults, one by one (never the block)."""
    if not defaults:
        return spec
    merged = {**spec.defaults.model_dump(), **defaults}
    return spec.model_copy(update={"defaults": DefaultsSpec.model_validate(merged)})


def load_suite(
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite,
    *,
    defaults: Mapping[str, Any] | None = None,
) -> BuiltSuite:
    """Load a built-in suite by name, a suite YAML file by path, or a :class:`SuiteSpec`, with
    ``defaults`` laid over the suite's own (an option replaces one default, never the block)."""
    if isinstance(suite, BuiltSuite):
        if not defaults:
            return suite
        spec, source = suite.spec, suite.source
    elif isinstance(suite, SuiteSpec):
        spec, source = suite, f"<suite {suite.name}>"
    else:
        lines: KeyLines = {}
        try:
            spec, source = _parse(suite, lines)
            return _built(spec, source, defaults)
        except SuiteError as exc:
            raise _with_line(exc, lines) from None
    return _built(spec, source, defaults)


def _with_line(error: SuiteError, lines: KeyLines) -> SuiteError:
    """``error`` pointing at the line of its key in the file (of the nearest enclosing key the
    file writes: a default that a metric takes is the line of ``defaults.NAME``)."""
    if error.line is not None or not error.key or not lines:
        return error
    path = error.key
    while path not in lines and "." in path:
        path = path.rsplit(".", 1)[0]
    if path not in lines:
        return error
    return SuiteError(error.reason, source=error.source, key=error.key, line=lines[path])


def _built(spec: SuiteSpec, source: str, defaults: Mapping[str, Any] | None) -> BuiltSuite:
    """The suite of ``spec`` with ``defaults`` laid over its own, its metrics and tables made
    and checked."""
    spec = _overlay(spec, defaults or {})
    scale = None
    if spec.labels is not None:
        try:
            scale = LabelScale.from_spec(
                spec.labels.values, spec.labels.aliases, spec.labels.case_insensitive
            )
        except ValueError as exc:
            raise SuiteError(str(exc), source=source, key="labels") from None
    notes: list[str] = []
    metrics = _collect("metric", spec.metrics, spec, scale, source, notes)
    tables = _collect("table", spec.tables, spec, scale, source, notes)
    taken = {param for item in [*metrics.values(), *tables.values()] for param in item.args}
    _check_used(spec, taken - {"scale"}, source)
    for name, item in {**metrics, **tables}.items():
        needed = item.statistic().unit_field
        if needed is not None and spec.unit != needed:
            raise SuiteError(
                f"metric {item.registry_name!r} reads the records of one {needed!r} together, "
                f"so the suite must resample whole units of it: add `unit: {needed}`",
                source=source,
                key="unit" if spec.unit is not None else f"metrics.{name}",
            )
    if spec.unit is not None:
        for name, metric in metrics.items():
            if not metric.decomposable:
                raise SuiteError(
                    f"metric {metric.registry_name!r} does not add up over records, so it cannot "
                    f"be resampled by unit ({spec.unit!r}); drop `unit` or the metric",
                    source=source,
                    key=f"metrics.{name}",
                )
    return BuiltSuite(spec, source, scale, metrics, tables, notes)


def _read(suite: str | os.PathLike[str]) -> tuple[str, str]:
    text_name = os.fspath(suite)
    builtins = builtin_names()  # a run reads its own suite's file only
    if text_name in builtins:
        resource = resources.files("pingce.suites") / f"{text_name}.yaml"
        return resource.read_text(encoding="utf-8"), f"built-in suite {text_name}"
    path = Path(text_name)
    if path.is_file():
        try:
            return path.read_text(encoding="utf-8-sig"), text_name
        except UnicodeDecodeError as exc:
            raise SuiteError(
                f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}): "
                "save the suite file as UTF-8",
                source=text_name,
            ) from None
    raise SuiteError(
        f"no built-in suite or suite file {text_name!r}; built-in suites: {', '.join(builtins)}"
        + did_you_mean(text_name, builtins)
    )
