"""Random and stratified sampling of records, seeded.

Stratified sampling draws equal numbers per stratum by default (the contract-review protocol's §3.1:
4/4/4 for N = 12 on three risk levels), the remainder going one each to the first strata in their
order; proportional allocation uses the largest-remainder rule. A stratum too small for its quota is
an error unless ``short="take-all"``, which takes all it has and says so in the results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from ._plain import PlainModel
from .errors import OptionError

__all__ = ["Allocation", "SamplingInfo", "Shortfall", "StratumCount", "sample_indices"]

Allocation = Literal["equal", "proportional"]
Shortfall = Literal["error", "take-all"]


class StratumCount(PlainModel):
    """How many records a stratum had and how many were drawn from it."""

    value: str
    population: int
    quota: int
    sampled: int


class SamplingInfo(PlainModel):
    """What sampling did, as reported in results.json and the report."""

    method: Literal["random", "stratified"]
    seed: int
    n_population: int
    n_requested: int
    n_sampled: int
    field: str | None = None
    allocation: Allocation | None = None
    unit: str | None = None
    """When set, the counts are of units (e.g. dialogues), each drawn with all its records."""
    strata: list[StratumCount] = []
    notes: list[str] = []


def _quotas(sizes: np.ndarray, n: int, allocation: Allocation) -> np.ndarray:
    strata = sizes.shape[0]
    if allocation == "equal":
        quotas = np.full(strata, n // strata, dtype=np.int64)
        quotas[: n % strata] += 1
        return np.asarray(quotas, dtype=np.int64)
    # Integer arithmetic: n * size / total as quotient and remainder, so equal fractions tie
    # exactly and the tie goes to the earlier stratum (floating point would decide it by noise).
    counts = np.asarray(sizes, dtype=np.int64)
    quotas, remainders = np.divmod(n * counts, int(counts.sum()))
    left = n - int(quotas.sum())
    order = np.lexsort((np.arange(strata), -remainders))  # largest remainder first, then order
    quotas[order[:left]] += 1
    return np.asarray(quotas, dtype=np.int64)


def sample_indices(
    keys: Sequence[str] | None,
    population: int,
    n: int,
    *,
    seed: int,
    allocation: Allocation = "equal",
    short: Shortfall = "error",
    field: str | None = None,
    order: Sequence[str] | None = None,
    noun: str = "records",
) -> tuple[np.ndarray, SamplingInfo]:
    """Indices (in record order) of a sample of ``n`` records, and what was done.

    ``keys`` holds each record's stratum (None for simple random sampling). ``order`` lists the
    strata in the order that receives remainders first (default: sorted).
    """
    if n <= 0:
        raise OptionError(f"--sample must be a positive number of {noun}, got {n}")
    if n > population:
        raise OptionError(f"--sample {n} asks for more {noun} than the {population} loaded")
    rng = np.random.default_rng([seed, 1])
    if keys is None:
        index = np.sort(rng.choice(population, size=n, replace=False))
        info = SamplingInfo(
            method="random", seed=seed, n_population=population, n_requested=n, n_sampled=n
        )
        return index, info

    values, inverse = np.unique(np.asarray(keys, dtype=object).astype(str), return_inverse=True)
    names = [str(v) for v in values]
    if order is not None:
        rank = {name: i for i, name in enumerate(order)}
        perm = sorted(range(len(names)), key=lambda i: (rank.get(names[i], len(rank)), names[i]))
    else:
        perm = list(range(len(names)))
    sizes = np.bincount(inverse, minlength=len(names))[perm]
    quotas = _quotas(sizes, n, allocation)
    strata: list[StratumCount] = []
    notes: list[str] = []
    short_strata = [
        f"{names[s]} has {int(sizes[i])}, needs {int(quotas[i])}"
        for i, s in enumerate(perm)
        if quotas[i] > sizes[i]
    ]
    if short_strata and short == "error":
        raise OptionError(
            f"--sample {n} --stratify {field}: too few records in stratum "
            + "; ".join(short_strata)
            + f" ({allocation} allocation over {len(names)} strata). Lower --sample, use "
            "--allocation proportional, or --short-strata take-all to take what there is."
        )
    chosen: list[np.ndarray] = []
    members_by_stratum = np.argsort(inverse, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(inverse, minlength=len(names)))])
    for i, s in enumerate(perm):
        members = members_by_stratum[bounds[s] : bounds[s + 1]]
        take = int(min(quotas[i], sizes[i]))
        if take:
            chosen.append(rng.choice(members, size=take, replace=False))
        strata.append(
            StratumCount(
                value=names[s], population=int(sizes[i]), quota=int(quotas[i]), sampled=take
            )
        )
        if take < quotas[i]:
            notes.append(
                f"stratum {names[s]} had only {int(sizes[i])} records of the {int(quotas[i])} "
                "asked for; all were taken"
            )
    index = np.sort(np.concatenate(chosen)) if chosen else np.empty(0, dtype=np.int64)
    info = SamplingInfo(
        method="stratified",
        seed=seed,
        n_population=population,
        n_requested=n,
        n_sampled=int(index.shape[0]),
        field=field,
        allocation=allocation,
        strata=strata,
        notes=notes,
    )
    return index, info
