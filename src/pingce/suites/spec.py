"""Suites are data: a YAML file names the fields, the label scale and the metrics with their
arguments. This module validates it (an error names the key that is wrong) and builds the metric
objects from the registry.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)

from ..errors import SuiteError
from ..labels import LabelScale
from ..metrics.base import (
    Metric,
    TableMetric,
    ZeroDivision,
    create_metric,
    create_table,
    metric_registry,
    table_registry,
)
from ..records import FieldSpec, parse_path

__all__ = ["BuiltSuite", "SuiteSpec", "builtin_suites", "load_suite"]


class LabelsSpec(BaseModel):
    """The ordered label scale of a suite."""

    model_config = ConfigDict(extra="forbid")

    values: list[StrictStr | StrictInt] = Field(min_length=2)
    aliases: dict[str, str] = {}
    case_insensitive: bool = True


class DefaultsSpec(BaseModel):
    """Defaults applied to every metric that takes a parameter of that name (``zero_division``,
    ``normalize``, ``assignment``, ...)."""

    model_config = ConfigDict(extra="allow")

    zero_division: ZeroDivision = None

    @field_validator("zero_division")
    @classmethod
    def _policy(cls, value: ZeroDivision) -> ZeroDivision:
        if value is not None and value not in (0.0, 1.0):
            raise ValueError("zero_division must be null, 0 or 1")
        return value


class SuiteSpec(BaseModel):
    """A suite file, validated."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    id_field: str = "id"
    unit: str | None = None
    """A field whose records belong together (a dialogue): the bootstrap resamples and
    ``--sample`` draws whole units, not single records."""
    match_by: list[str] | None = None
    """Fields that identify a record across two systems' outputs (``pingce compare``) when the
    records carry no id, e.g. ``[dialogue_id, turn]``."""
    labels: LabelsSpec | None = None
    inputs: dict[str, str] = {}
    defaults: DefaultsSpec = DefaultsSpec()
    metrics: dict[str, dict[str, Any]] = Field(min_length=1)
    tables: dict[str, dict[str, Any]] = {}
    similarity: dict[str, Any] = {}
    """Options of the similarity backend: judge ``template``/``system``, ``concurrency``,
    ``max_retries``, ``timeout``, ``price_prompt``/``price_completion`` (per 1k tokens)..."""

    @field_validator("id_field", "unit")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None:
            parse_path(value)
        return value

    @field_validator("match_by")
    @classmethod
    def _match_paths(cls, value: list[str] | None) -> list[str] | None:
        for path in value or ():
            parse_path(path)
        return value

    @field_validator("inputs")
    @classmethod
    def _paths(cls, value: dict[str, str]) -> dict[str, str]:
        for path in value.values():
            parse_path(path)
        return value

    @field_validator("similarity")
    @classmethod
    def _backend_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        from ..similarity import backend_options

        known = backend_options()
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValueError(
                f"unknown similarity option(s) {unknown}; known: {sorted(known)} (the endpoint, "
                "key and cache are set with --base-url, PINGCE_API_KEY and --cache)"
            )
        return value

    @field_validator("metrics", "tables", mode="before")
    @classmethod
    def _entries(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ({} if v is None else v) for k, v in value.items()}
        return value


@dataclass
class BuiltSuite:
    """A suite ready to run: its spec, scale, metric objects and the fields they read."""

    spec: SuiteSpec
    source: str
    scale: LabelScale | None
    metrics: dict[str, Metric]
    tables: dict[str, TableMetric]

    def items(self) -> dict[str, Metric | TableMetric]:
        """Every metric and table by result name."""
        return {**self.metrics, **self.tables}

    def fields(self) -> list[FieldSpec]:
        """Every field any metric or table reads, each once."""
        seen: dict[str, FieldSpec] = {}
        for item in self.items().values():
            for spec in item.statistic().fields():
                seen.setdefault(spec.path, spec)
        return list(seen.values())

    def label_fields(self) -> set[str]:
        """Paths of the fields read as labels."""
        return {f.path for f in self.fields() if f.kind == "label"}


def builtin_suites() -> dict[str, str]:
    """Built-in suite names and their one-line descriptions."""
    out = {}
    for entry in sorted(resources.files("pingce.suites").iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".yaml"):
            data = yaml.safe_load(entry.read_text(encoding="utf-8")) or {}
            out[entry.name[: -len(".yaml")]] = str(data.get("description", "")).strip()
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
) -> Any:
    args = dict(entry)
    registered = args.pop("metric", name) if kind == "metric" else args.pop("table", name)
    registry = metric_registry() if kind == "metric" else table_registry()
    info = registry.get(str(registered))
    key = f"{kind}s.{name}"
    if info is None:
        raise SuiteError(
            f"unknown {kind} {registered!r}; `pingce metrics` lists them: "
            + ", ".join(sorted(registry)),
            source=source,
            key=key,
        )
    params = inspect.signature(info.factory).parameters
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
    for param, value in defaults.items():
        if param in params and param not in args:
            args[param] = value
    try:
        item = (create_metric if kind == "metric" else create_table)(str(registered), **args)
    except SuiteError as exc:
        raise SuiteError(exc.reason, source=source, key=key) from None
    item.name = name
    item.args.pop("scale", None)
    return item


def load_suite(suite: str | os.PathLike[str] | SuiteSpec) -> BuiltSuite:
    """Load a built-in suite by name, a suite YAML file by path, or a :class:`SuiteSpec`."""
    if isinstance(suite, SuiteSpec):
        spec, source = suite, f"<suite {suite.name}>"
    else:
        text, source = _read(suite)
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise SuiteError(f"not valid YAML: {exc}", source=source) from None
        if not isinstance(data, dict):
            raise SuiteError("a suite file must be a mapping of keys", source=source)
        try:
            spec = SuiteSpec.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            if first["loc"][:2] == ("labels", "values") and isinstance(first.get("input"), bool):
                raise SuiteError(
                    f"a label must be a string or an integer, got {first['input']!r}: YAML reads "
                    "unquoted yes/no/true/false as booleans, so quote such labels",
                    source=source,
                    key=_format_loc(first["loc"][:3]),
                ) from None
            shown = "" if first["loc"][:1] == ("similarity",) else f" (got {first.get('input')!r})"
            raise SuiteError(  # similarity options are not echoed: they may hold a key
                f"{first['msg']}{shown}"
                if first["type"] != "missing"
                else "required key is missing",
                source=source,
                key=_format_loc(first["loc"]),
            ) from None
    scale = None
    if spec.labels is not None:
        try:
            scale = LabelScale.from_spec(
                spec.labels.values, spec.labels.aliases, spec.labels.case_insensitive
            )
        except ValueError as exc:
            raise SuiteError(str(exc), source=source, key="labels") from None
    metrics = {
        name: _build("metric", name, entry, spec, scale, source)
        for name, entry in spec.metrics.items()
    }
    tables = {
        name: _build("table", name, entry, spec, scale, source)
        for name, entry in spec.tables.items()
    }
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
    return BuiltSuite(spec=spec, source=source, scale=scale, metrics=metrics, tables=tables)


def _read(suite: str | os.PathLike[str]) -> tuple[str, str]:
    text_name = os.fspath(suite)
    builtins = builtin_suites()
    if text_name in builtins:
        resource = resources.files("pingce.suites") / f"{text_name}.yaml"
        return resource.read_text(encoding="utf-8"), f"built-in suite {text_name}"
    path = Path(text_name)
    if path.is_file():
        return path.read_text(encoding="utf-8"), text_name
    raise SuiteError(
        f"no built-in suite or suite file {text_name!r}; built-in suites: {', '.join(builtins)}"
    )
