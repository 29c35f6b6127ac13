"""Metrics: the protocol (:mod:`.protocol`), the registry (:mod:`.registry`), the one
zero-division policy (:mod:`._policy`), the one check of arguments (:mod:`._args`) and one module
per family (classification, timing, calls, sets, dialogue, overlap), which the registry imports
on first use."""

from ._args import check_arguments
from ._policy import ZeroDivision, check_zero_division
from .protocol import Context, Metric, StatBlock, Statistic, TableMetric
from .registry import (
    MetricInfo,
    create_metric,
    create_table,
    metric_registry,
    register_metric,
    register_table,
    table_registry,
)

__all__ = [
    "Context",
    "Metric",
    "MetricInfo",
    "StatBlock",
    "Statistic",
    "TableMetric",
    "ZeroDivision",
    "check_arguments",
    "check_zero_division",
    "create_metric",
    "create_table",
    "metric_registry",
    "register_metric",
    "register_table",
    "table_registry",
]
