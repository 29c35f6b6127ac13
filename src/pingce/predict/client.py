"""The model under test at an OpenAI-compatible ``/v1/chat/completions`` endpoint.

The remote layer the judge also uses (:mod:`pingce.remote`): one aiohttp session of ``concurrency``
connections, retries with exponential back-off and the server's ``Retry-After`` on 429/5xx,
timeouts and broken connections; a dead endpoint stops the run after a few refused connections.
A request that still has no answer after its retries is a failed call (counted by reason in
:class:`~pingce.remote.usage.BackendStats`), never an answer. Answers are cached
(:class:`~pingce.predict.cache.AnswerCache`) as soon as they arrive (every 0.2 s), so a killed run
keeps what it was given and a rerun asks only for the rest.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import OptionError
from ..progress import Advance
from ..remote.cache import buffered_writer
from ..remote.endpoint import Endpoint
from ..remote.http import Retry, RetryPolicy, Session, post_json, run_async, run_workers
from ..remote.structured import FormatFallback
from ..remote.usage import BackendStats, charge_usage, noting
from ..urls import public_url
from .cache import AnswerCache, CachedAnswer, request_key
from .registry import parse_model_name

__all__ = ["DEFAULT_PARAMETERS", "Answer", "ChatModel", "answer_together", "parse_model_name"]

DEFAULT_PARAMETERS: dict[str, Any] = {"temperature": 0}
"""Request parameters sent unless the suite's ``model.parameters`` or ``--model-param`` say
otherwise."""

_RESERVED = ("model", "messages", "tools", "stream")


@dataclass
class Answer:
    """The model's answer to one request."""

    reply: Any | None
    """The whole ``chat.completion``; None when the call failed."""
    latency_sec: float | None
    """Seconds of the attempt that was answered (for a cached answer: when first asked)."""
    cached: bool = False
    error: str | None = None
    """Why the call failed (after its retries)."""


class ChatModel:
    """Asks a model for chat completions, many at a time, through the cache."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        concurrency: int = 16,
        timeout: float = 120.0,
        policy: RetryPolicy | None = None,
        price_prompt: float = 0.0,
        price_completion: float = 0.0,
        cache: AnswerCache | None = None,
        format_fallback: bool = False,
    ):
        self.endpoint = Endpoint(f"--model openai:{model}", base_url, api_key, api_key_env)
        params = {**DEFAULT_PARAMETERS, **dict(parameters or {})}
        reserved = sorted(set(params) & set(_RESERVED))
        if reserved:
            raise OptionError(
                f"model parameter(s) {reserved}: set by pingce from the records and --model"
            )
        self.model = model
        self.base_url = self.endpoint.base_url
        self.parameters = params
        self.concurrency = max(1, int(concurrency))
        self.timeout = float(timeout)
        self.policy = policy or RetryPolicy()
        self.price_prompt = price_prompt
        self.price_completion = price_completion
        self.cache = cache
        self.format = FormatFallback() if format_fallback else None
        """With ``format_fallback``: a request's ``response_format`` is left out once the
        server refuses it (:mod:`pingce.remote.structured`; asked again at once without it, and
        never again by this client). The cache keeps the answer under the request as given, so
        a rerun asks nothing."""

    def close(self) -> None:
        """Close the cache (the client owns it)."""
        if self.cache is not None:
            self.cache.close()

    def signature(self) -> str:
        """Model, endpoint and parameters (never a key): what the predictions depend on besides
        each record's messages and tools."""
        params = json.dumps(self.parameters, sort_keys=True, ensure_ascii=False)
        return f"openai:{self.model}|url={public_url(self.base_url)}|parameters={params}"

    def url(self) -> str:
        """The chat completions URL (``/v1`` added unless the base URL ends with it)."""
        return self.endpoint.url("/chat/completions")

    def body(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        """The request of one record."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        body.update(self.parameters)
        return body

    def answer_all(
        self,
        bodies: Sequence[dict[str, Any]],
        progress: Advance | None = None,
        repeats: Sequence[int] | None = None,
    ) -> tuple[list[Answer], BackendStats]:
        """An answer to every request body (equal bodies are asked once), and what it took;
        ``repeats``: each body's repeat number (equal bodies of other repeats are asked
        apart)."""
        return answer_together([(self, bodies, progress)], [repeats])[0]

    def _asking(
        self,
        bodies: Sequence[dict[str, Any]],
        progress: Advance | None,
        repeats: Sequence[int] | None = None,
    ) -> _Asking:
        """The answers the cache has, and what is left to ask. A body's key is its request's
        (:func:`request_key`), and for a repeat after the first that request's again with the
        repeat's number: repeat 1 is the request a run without repeats asks, so its cached
        answer serves both, and every later repeat is an answer of its own."""
        stats = BackendStats()
        if progress is not None:
            stats.watch = noting(progress)
        identity = f"{self.model}\x00{public_url(self.base_url)}"
        if repeats is None:
            keys = [request_key(identity, body) for body in bodies]
        else:
            keys = [
                request_key(identity if r <= 1 else f"{identity}\x00repeat {r}", body)
                for body, r in zip(bodies, repeats, strict=True)
            ]
        records = Counter(keys)  # the progress bar counts records: a key answers all of its
        stats.pairs = len(records)
        asking = _Asking(self, keys, stats)
        if self.cache is not None:
            for key, (reply, latency, _pt, _ct) in self.cache.get_many(list(records)).items():
                asking.found[key] = Answer(reply, latency, cached=True)
            stats.cache_hits = len(asking.found)
            if progress is not None and asking.found:
                progress(sum(records[key] for key in asking.found))
        for key, body in zip(keys, bodies, strict=True):
            if key not in asking.found:
                asking.todo.setdefault(key, body)
        if progress is not None:
            asking.answered = lambda key: progress(records[key])
        return asking

    async def _ask_all(
        self,
        bodies: dict[str, dict[str, Any]],
        found: dict[str, Answer],
        stats: BackendStats,
        answered: Callable[[str], None] | None,
    ) -> None:
        """Ask for ``bodies`` (by key) and put each answer (or failure) in ``found``; then
        ``answered(key)``."""
        cache = self.cache

        def put(rows: list[tuple[str, CachedAnswer]]) -> None:
            if cache is not None:
                cache.put_many(rows)

        def failed() -> None:
            stats.cache_errors += 1

        pending, flush = buffered_writer(put, failed)
        url = self.url()

        def read(payload: Any) -> tuple[Any, int, int]:
            try:
                message = payload["choices"][0]["message"]
            except (KeyError, IndexError, TypeError):
                raise Retry("malformed response (no choices[0].message)") from None
            if not isinstance(message, dict):
                raise Retry("malformed response (choices[0].message is not an object)")
            pt, ct = charge_usage(payload, stats, self.price_prompt, self.price_completion)
            return payload, pt, ct

        async with Session(url, self.endpoint.headers(), self.timeout, self.concurrency) as session:

            async def one(key: str) -> None:
                timing: list[float] = []
                if self.format is None:
                    result, reason = await post_json(
                        session, url, bodies[key], read, self.policy, stats, timed=timing.append
                    )
                else:
                    result, reason = await self.format.post(
                        session, url, bodies[key], read, self.policy, stats, timing.append
                    )
                if result is None:
                    stats.fail(reason or "no answer")
                    found[key] = Answer(None, None, error=reason or "no answer")
                else:
                    reply, pt, ct = result
                    latency = timing[-1] if timing else 0.0
                    found[key] = Answer(reply, latency)
                    pending.append((key, (reply, latency, pt, ct)))
                if answered is not None:
                    answered(key)

            todo = list(bodies)
            if todo and self.format is not None and self.format.probing:
                # one request alone first: a server that refuses response_format refuses it
                # once, not once per connection of the first wave
                await one(todo.pop(0))
            await run_workers(todo, one, self.concurrency, every=flush)


@dataclass
class _Asking:
    """One client's requests: each body's key, the answers found so far by key, the bodies
    still to ask, the stats, and what to call as each key is answered."""

    client: ChatModel
    keys: list[str]
    stats: BackendStats
    found: dict[str, Answer] = field(default_factory=dict)
    todo: dict[str, dict[str, Any]] = field(default_factory=dict)
    answered: Callable[[str], None] | None = None

    def answers(self) -> tuple[list[Answer], BackendStats]:
        return [self.found[key] for key in self.keys], self.stats


def answer_together(
    jobs: Sequence[tuple[ChatModel, Sequence[dict[str, Any]], Advance | None]],
    repeats: Sequence[Sequence[int] | None] | None = None,
) -> list[tuple[list[Answer], BackendStats]]:
    """Each client's answers to its request bodies (with its progress), the clients asking at
    the same time (each with its own session and concurrency) in one event loop: a jury takes
    about as long as its slowest judge, not the sum. An error of one client (a dead endpoint)
    stops the others, after each wrote the answers it had to the cache."""
    numbers = repeats or [None] * len(jobs)
    askings = [
        client._asking(bodies, progress, r)
        for (client, bodies, progress), r in zip(jobs, numbers, strict=True)
    ]
    waiting = [a for a in askings if a.todo]
    if waiting:
        run_async(_ask_together(waiting))
    return [a.answers() for a in askings]


async def _ask_together(askings: Sequence[_Asking]) -> None:
    tasks = [
        asyncio.ensure_future(a.client._ask_all(a.todo, a.found, a.stats, a.answered))
        for a in askings
    ]
    try:
        await asyncio.gather(*tasks)
    finally:  # after an error in one, stop the others (they write what they have) first
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
