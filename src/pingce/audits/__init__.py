"""The human audit of a judge (issue 34): prediction-powered corrections of every metric that
depends on a judge, from a random sample of records labelled by people.

So far: :mod:`pingce.audits.ppi`, the estimator (PPI and PPI++ on a metric's statistic rows,
stratified, with the delta method through the metric's ``finalize``);
:mod:`pingce.audits.bootstrap`, its bootstrap intervals (labelled and unlabelled records
resampled separately in each stratum; percentile, basic or BCa, or the delta method's).
"""

from __future__ import annotations

from .bootstrap import AuditCIMethod, corrected_interval
from .ppi import Corrected, Stratum, corrected_mean, delta_interval, tuned_lambda

__all__ = [
    "AuditCIMethod",
    "Corrected",
    "Stratum",
    "corrected_interval",
    "corrected_mean",
    "delta_interval",
    "tuned_lambda",
]
