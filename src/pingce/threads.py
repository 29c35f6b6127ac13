"""One BLAS thread for the bootstrap's products (``counts @ rows``, one per dense block and
resample).

Threaded, OpenBLAS splits a long product between its threads and adds their partial sums, so the
last bits of a resampled sum, and through ties with the estimate a BCa interval, depended on the
number of threads; and on a busy two-core machine its threads, spinning after each call, took
the time of the numpy work between products (the contract-risk benchmark ran twice as long). On
one thread the product is the one OpenBLAS computes for small inputs, which it never threads:
small runs give the numbers they always gave, large ones the numbers of
``OPENBLAS_NUM_THREADS=1``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["one_blas_thread"]

_CONTROLLER: list[Any] = []


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the body with the BLAS libraries numpy loaded limited to one thread (restored after).

    threadpoolctl is imported on first use: runs without a bootstrap do not pay for it."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    with _CONTROLLER[0].limit(limits=1, user_api="blas"):
        yield
