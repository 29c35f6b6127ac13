"""A reranker at a ``/rerank`` endpoint (the Cohere / Jina shape that vLLM, TEI and Xinference
also serve): ``{"model", "query", "documents": [...]}`` answered by
``{"results": [{"index", "relevance_score"}]}``.

A reranker is a cross-encoder: it reads both texts together, so it judges meaning more closely
than cosine of separate vectors and costs far less than an LLM judge. Pairs are grouped by their
first text (the query: a prediction), so one request scores a prediction against all its
candidate truths; ``batch_size`` caps the documents of one request. Scores must lie in [0, 1]
(most servers apply a sigmoid); for a server that returns raw logits set ``normalize: sigmoid``.
A score outside [0, 1] is a failure, never clipped silently.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ..errors import OptionError
from ..progress import Advance
from ..remote.http import Retry, RetryPolicy, Session, post_json, run_async, run_workers
from ..remote.limits import Backoff, BatchSize, Concurrency, Retries, Seconds, Wait
from ..remote.usage import token_count
from ..urls import public_url
from .base import BackendStats, Pair
from .cache import SimilarityCache
from .remote import RemoteBackend

__all__ = ["RerankBackend"]


class RerankBackend(RemoteBackend):
    """Scores pairs with a reranking model at an HTTP ``/rerank`` endpoint, cached by pair."""

    name = "rerank"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: BatchSize = 32,
        concurrency: Concurrency = 8,
        normalize: Literal["none", "sigmoid"] = "none",
        timeout: Seconds = 60.0,
        max_retries: Retries = 5,
        backoff: Backoff = 0.5,
        max_backoff: Wait = 30.0,
        max_retry_after: Wait = 300.0,
        cache: SimilarityCache | None = None,
    ):
        if batch_size < 1:
            raise OptionError(f"rerank batch_size must be at least 1, got {batch_size}")
        if normalize not in ("none", "sigmoid"):
            raise OptionError(f"rerank normalize must be none or sigmoid, got {normalize!r}")
        self._connect(
            "rerank",
            model,
            base_url,
            api_key,
            concurrency,
            timeout,
            RetryPolicy(max_retries, backoff, max_backoff, max_retry_after),
            cache,
        )
        self.batch_size = batch_size
        self.normalize = normalize

    def signature(self) -> str:
        return f"rerank:{self.model}|url={public_url(self.base_url)}|normalize={self.normalize}"

    def _url(self) -> str:
        return self.endpoint.url("/rerank", v1=False)

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None = None
    ) -> np.ndarray:
        scores, todo = self.from_cache(pairs, stats, progress)
        if todo:
            run_async(self._ask_all(pairs, todo, scores, stats, progress))
        return scores

    def _batches(self, pairs: Sequence[Pair], todo: list[int]) -> list[tuple[str, list[int]]]:
        """(query, pair indices) requests: pairs grouped by query, ``batch_size`` a request."""
        by_query: dict[str, list[int]] = {}
        for i in todo:
            by_query.setdefault(pairs[i][0], []).append(i)
        return [
            (query, members[start : start + self.batch_size])
            for query, members in by_query.items()
            for start in range(0, len(members), self.batch_size)
        ]

    def _score(self, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Retry("malformed response")
        score = float(value)
        if self.normalize == "sigmoid":
            score = 1.0 / (1.0 + math.exp(-score)) if score > -700 else 0.0
        return score

    async def _ask_all(
        self,
        pairs: Sequence[Pair],
        todo: list[int],
        scores: np.ndarray,
        stats: BackendStats,
        progress: Advance | None,
    ) -> None:
        pending, flush = self.writer(stats)
        url = self._url()

        async with Session(url, self.headers(), self.timeout, self.concurrency) as session:

            async def one(batch: tuple[str, list[int]]) -> None:
                query, members = batch

                def read(payload: Any) -> dict[int, float]:
                    try:
                        found = {
                            int(r["index"]): self._score(r["relevance_score"])
                            for r in payload["results"]
                        }
                    except (KeyError, TypeError, ValueError):
                        raise Retry("malformed response") from None
                    if set(found) != set(range(len(members))):
                        raise Retry("malformed response (results do not match the documents)")
                    usage = payload.get("usage")
                    if isinstance(usage, dict):
                        stats.prompt_tokens += token_count(usage.get("total_tokens"))
                    return found

                body = {
                    "model": self.model,
                    "query": query,
                    "documents": [pairs[i][1] for i in members],
                    "top_n": len(members),
                }
                found, reason = await post_json(session, url, body, read, self.policy, stats)
                for k, i in enumerate(members):
                    value = None if found is None else found[k]
                    if value is None:
                        stats.fail(reason or "no answer")
                    elif not 0.0 <= value <= 1.0:
                        stats.fail("score outside [0, 1] (a raw logit? set normalize: sigmoid)")
                    else:
                        scores[i] = value
                        pending.append((pairs[i], value, 0, 0))
                if progress is not None:
                    progress(len(members))

            await run_workers(self._batches(pairs, todo), one, self.concurrency, every=flush)
