"""What the backends that call a model server share: the endpoint, the key, the retry policy,
the cache lookup before the calls and the cache writes during them."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from ..cache import buffered_writer
from ..errors import OptionError
from ..progress import Advance
from ..urls import (
    base_url_source,
    basic_authorization,
    check_base_url,
    join_path,
    public_url,
    request_base,
)
from .base import BackendStats, Pair, SimilarityBackend
from .cache import SimilarityCache
from .http import RetryPolicy

__all__ = ["NOT_ANSWERED", "Endpoint", "RemoteBackend", "charge_usage", "token_count"]

NOT_ANSWERED = "no answer: its call failed when the run asked every pair first"
"""Why a pair failed that a backend answering from its cache alone did not find there."""


class Endpoint:
    """A model server's base URL and key, as every client of one finds them.

    The base URL from the argument, else ``PINGCE_BASE_URL``, else ``OPENAI_BASE_URL`` (as the
    OpenAI client reads it; :func:`pingce.urls.base_url_source`), checked before any call
    (:func:`pingce.urls.check_base_url`: http or https with a host). A user and password in it
    are sent as a basic ``Authorization`` header and kept out of :attr:`base_url`; the query is
    sent with every request. The key from the argument, else the variable ``api_key_env`` names
    (an error when it is not set), else ``PINGCE_API_KEY``, else ``OPENAI_API_KEY`` (never from a
    file that is written); a key with a user and password in the URL is an error (both would be
    the one ``Authorization`` header). ``user`` names what asks for the server in the error when
    there is none (``--similarity openai:MODEL``, ``--model openai:MODEL``). The URL is shown
    only as :func:`pingce.urls.public_url` makes it."""

    def __init__(
        self,
        user: str,
        base_url: str | None,
        api_key: str | None = None,
        api_key_env: str | None = None,
    ):
        found = base_url_source(base_url)
        if found is None:
            raise OptionError(
                f"{user} needs an endpoint: --base-url URL, PINGCE_BASE_URL or OPENAI_BASE_URL "
                "(e.g. http://localhost:8000/v1)"
            )
        url = check_base_url(*found)
        key_source = "api_key"
        if api_key is None and api_key_env:
            api_key = os.environ.get(api_key_env)
            key_source = f"--api-key-env {api_key_env}"
            if not api_key:
                raise OptionError(f"--api-key-env {api_key_env}: the variable is not set")
        for name in ("PINGCE_API_KEY", "OPENAI_API_KEY"):
            if api_key:
                break
            api_key, key_source = os.environ.get(name), name
        self._basic = basic_authorization(url)
        if self._basic is not None and api_key:
            raise OptionError(
                f"{found[1]} {public_url(url)!r} has a user and password, and {key_source} sets "
                "an API key: both would be the Authorization header; give one of them"
            )
        self.base_url = request_base(url)
        self._api_key = api_key or None

    def __repr__(self) -> str:
        return f"Endpoint({public_url(self.base_url)!r})"

    def url(self, path: str, *, v1: bool = True) -> str:
        """The URL of ``path`` (``/chat/completions``): ``/v1`` put before it unless the base URL's
        path ends with it (``v1=False``: the base URL and the path alone, as for ``/rerank``);
        the base URL's query after it."""
        if v1 and not urlsplit(self.base_url).path.rstrip("/").endswith("/v1"):
            path = "/v1" + path
        return join_path(self.base_url, path)

    def headers(self) -> dict[str, str]:
        """Request headers, with the key (or the URL's user and password) when there is one."""
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        elif self._basic is not None:
            headers["Authorization"] = self._basic
        return headers


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
        SIGINT or SIGTERM: :func:`pingce.cache.buffered_writer`)."""
        signature = self.signature()
        cache = self.cache

        def put(rows: list[tuple[Pair, float, int, int]]) -> None:
            if cache is not None:
                cache.put_many(signature, rows)

        def failed() -> None:
            stats.cache_errors += 1

        return buffered_writer(put, failed)


def token_count(value: Any) -> int:
    """A token count from a usage field; anything that is not a whole number counts 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(0, value)
    if isinstance(value, float) and value.is_integer():
        return max(0, int(value))
    return 0


def charge_usage(
    payload: Any, stats: BackendStats, price_prompt: float, price_completion: float
) -> tuple[int, int]:
    """The prompt and completion tokens of a chat completion's ``usage`` (0 where it has none),
    added to ``stats`` with their cost at the prices per 1,000 tokens."""
    usage = payload.get("usage") if isinstance(payload, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    pt = token_count(usage.get("prompt_tokens"))
    ct = token_count(usage.get("completion_tokens"))
    stats.prompt_tokens += pt
    stats.completion_tokens += ct
    stats.cost += pt / 1000 * price_prompt + ct / 1000 * price_completion
    return pt, ct
