"""What the similarity backends that call a model server share, on the remote layer
(:mod:`pingce.remote`: endpoint, retry policy, usage, cache): the cache lookup before the calls
and the cache writes during them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..progress import Advance
from ..remote.cache import buffered_writer
from ..remote.endpoint import Endpoint
from ..remote.http import RetryPolicy
from .base import BackendStats, Pair, SimilarityBackend
from .cache import SimilarityCache

__all__ = ["NOT_ANSWERED", "RemoteBackend"]

NOT_ANSWERED = "no answer: its call failed when the run asked every pair first"
"""Why a pair failed that a backend answering from its cache alone did not find there."""


class RemoteBackend(SimilarityBackend):
    """A backend behind an HTTP endpoint. Subclasses call :meth:`_connect` from ``__init__``."""

    model: str
    endpoint: Endpoint
    base_url: str
    concurrency: int
    timeout: float
    policy: RetryPolicy
    cache: SimilarityCache | None
    cache_only: bool = False
    """Answer from the cache alone: a pair not in it fails (:data:`NOT_ANSWERED`) without a
    call. ``--engine ray`` scores its pieces so, once its judge phase has asked every distinct
    pair of the data set: a pair that failed there is not asked again."""

    def _connect(
        self,
        spec: str,
        model: str,
        base_url: str | None,
        api_key: str | None,
        concurrency: int,
        timeout: float,
        policy: RetryPolicy,
        cache: SimilarityCache | None,
    ) -> None:
        """The endpoint (:class:`Endpoint`), and what every call needs."""
        self.endpoint = Endpoint(f"--similarity {spec}:{model}", base_url, api_key)
        self.model = model
        self.base_url = self.endpoint.base_url
        self.concurrency = max(1, int(concurrency))
        self.timeout = timeout
        self.policy = policy
        self.cache = cache

    def close(self) -> None:
        """Close the cache (the backend owns it)."""
        if self.cache is not None:
            self.cache.close()

    def headers(self) -> dict[str, str]:
        """Request headers, with the key when there is one."""
        return self.endpoint.headers()

    def from_cache(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None
    ) -> tuple[np.ndarray, list[int]]:
        """Scores of the cached pairs (NaN elsewhere) and the indices still to ask."""
        scores = np.full(len(pairs), np.nan)
        if self.cache is None:
            return scores, list(range(len(pairs)))
        cached = self.cache.get_many(self.signature(), pairs)
        stats.cache_hits += len(cached)
        todo = []
        for i, pair in enumerate(pairs):
            if pair in cached:
                scores[i] = cached[pair]
            else:
                todo.append(i)
        if progress is not None and cached:
            progress(len(cached))
        if self.cache_only and todo:
            for _ in todo:
                stats.fail(NOT_ANSWERED)
            if progress is not None:
                progress(len(todo))
            return scores, []
        return scores, todo

    def writer(
        self, stats: BackendStats
    ) -> tuple[list[tuple[Pair, float, int, int]], Callable[[], None]]:
        """A list to append answered ``(pair, score, prompt tokens, completion tokens)`` to, and
        the function that commits it to the cache (run every 0.2 s and at the end, also after
        SIGINT or SIGTERM: :func:`pingce.remote.cache.buffered_writer`)."""
        signature = self.signature()
        cache = self.cache

        def put(rows: list[tuple[Pair, float, int, int]]) -> None:
            if cache is not None:
                cache.put_many(signature, rows)

        def failed() -> None:
            stats.cache_errors += 1

        return buffered_writer(put, failed)
