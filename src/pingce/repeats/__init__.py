"""Repeated attempts and repeated judging (issue 35): pass@k and pass^k (:mod:`.passk`), the
variance of a metric split between records, generations and judge calls, and the repeats a
target precision needs (:mod:`.components`)."""

from .components import Components, Plan, decompose, plan_repeats
from .passk import PassK, pass_at_k, pass_curves, pass_hat_k

__all__ = [
    "Components",
    "PassK",
    "Plan",
    "decompose",
    "pass_at_k",
    "pass_curves",
    "pass_hat_k",
    "plan_repeats",
]
