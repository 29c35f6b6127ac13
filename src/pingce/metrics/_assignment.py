"""Optimal assignment (scipy's ``linear_sum_assignment``), imported on first use: importing
``scipy.optimize`` takes half a second, which ``pingce --help`` should not pay."""

from __future__ import annotations

import numpy as np

__all__ = ["max_weight_assignment"]


def max_weight_assignment(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of a maximum-weight matching of a (possibly rectangular) matrix."""
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(weight, maximize=True)
    return rows, cols
