"""Metrics: the protocol and registry (``base``) and one module per family."""

from . import calls, classification, dialogue, overlap, sets, timing
from .base import (
    Metric,
    MetricInfo,
    StatBlock,
    Statistic,
    TableMetric,
    create_metric,
    create_table,
    metric_registry,
    register_metric,
    register_table,
    table_registry,
)

__all__ = [
    "Metric",
    "MetricInfo",
    "StatBlock",
    "Statistic",
    "TableMetric",
    "calls",
    "classification",
    "create_metric",
    "create_table",
    "dialogue",
    "metric_registry",
    "overlap",
    "register_metric",
    "register_table",
    "sets",
    "table_registry",
    "timing",
]
