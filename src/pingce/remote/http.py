"""Calls to a model server, shared by the LLM judge, the embeddings and rerank endpoints and the
model under test.

One aiohttp session (a connection pool of ``concurrency`` connections) and as many workers take
items from a queue: measured against the 50 ms loopback server, 20,000 calls at concurrency 64 take
1.08x the ideal with aiohttp, 1.27x with httpcore and 1.76x with httpx (benchmarks/README.md).

Every call goes through :func:`post_json`, which owns the retry policy: 429 waits as the server's
``Retry-After`` says (capped by ``max_retry_after``, not by the back-off cap); 5xx, timeouts,
broken connections and answers the caller's reader rejects are retried with exponential back-off
and jitter; other 4xx are not retried. A call that never succeeds returns None and is counted by
reason in :class:`BackendStats`; it is never read as a score. A 4xx that the caller's ``rejects``
recognises (the judge's ``response_format`` refused by a server that does not know it) raises
:class:`Rejected`, so the caller can ask again without that part of the request.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import random
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from .._json import dumps
from ..errors import OptionError
from ..urls import public_url
from .usage import BackendStats

__all__ = [
    "STOP_SIGNALS",
    "UNREACHABLE_AFTER",
    "Rejected",
    "Retry",
    "RetryPolicy",
    "Session",
    "parse_retry_after",
    "post_json",
    "run_async",
    "run_workers",
]

T = TypeVar("T")
Item = TypeVar("Item")

UNREACHABLE_AFTER = 3
"""Calls that could not connect (refused, no such host) before any call was answered, after
which the server is taken for down and the run stops: retrying a dead endpoint only delays the
message (180 retries in 42 s before)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry a call."""

    max_retries: int = 5
    """Retries after the first attempt (0: one attempt only)."""
    backoff: float = 0.5
    """First back-off in seconds; doubled on each retry, with jitter (50-100 %)."""
    max_backoff: float = 30.0
    """Cap of the exponential back-off."""
    max_retry_after: float = 300.0
    """Cap of a server's ``Retry-After`` (a server may ask for longer than the back-off cap)."""

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        base = min(self.max_backoff, self.backoff * 2.0 ** (attempt - 1))
        return base * (0.5 + random.random() / 2)


class Retry(Exception):
    """Raised by a reader (or here) for an answer worth asking again."""

    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class Rejected(Exception):
    """Raised by :func:`post_json` for a 4xx answer that the caller's ``rejects`` recognises: the
    server refused a part of the request the caller may leave out."""

    def __init__(self, status: int, message: str):
        super().__init__(f"http {status}: {message}")
        self.status = status
        self.message = message


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _proxy_for(url: str) -> tuple[str | None, dict[str, str] | None]:
    """The proxy the environment (``HTTPS_PROXY``, ``NO_PROXY``...) sets for ``url``, without its
    credentials, and the ``Proxy-Authorization`` header they make. Looked up once per session:
    aiohttp's ``trust_env`` does it in a thread on every request, which costs a third of the
    client's time at 64 calls in flight."""
    import base64
    import urllib.request

    from yarl import URL

    target = URL(url)
    proxy = urllib.request.getproxies().get(target.scheme or "http")
    if not proxy or (target.host and urllib.request.proxy_bypass(target.host)):
        return None, None
    parsed = URL(proxy)
    if parsed.user is None:
        return proxy, None
    token = base64.b64encode(f"{parsed.user}:{parsed.password or ''}".encode()).decode("ascii")
    return str(parsed.with_user(None)), {"Proxy-Authorization": f"Basic {token}"}


class Session:
    """An aiohttp session for calls to one server: ``concurrency`` connections, the
    environment's proxy. Use as ``async with Session(...) as session``."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float, concurrency: int):
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.concurrency = concurrency
        self.proxy, self.proxy_headers = _proxy_for(url)
        if self.proxy_headers and not url.lower().startswith("https:"):
            # plain HTTP goes to the proxy as is: the credentials ride on the request itself
            # (aiohttp sends proxy headers only on the CONNECT of an HTTPS tunnel)
            self.headers = {**headers, **self.proxy_headers}
            self.proxy_headers = None
        self._session: Any = None
        self.answered = 0
        """Calls the server answered (with any HTTP status)."""
        self.unreachable = 0
        """Calls that could not connect."""

    async def __aenter__(self) -> Session:
        import aiohttp

        self._session = aiohttp.ClientSession(
            headers=self.headers,
            timeout=aiohttp.ClientTimeout(total=self.timeout),
            connector=aiohttp.TCPConnector(limit=self.concurrency, limit_per_host=self.concurrency),
            json_serialize=lambda obj: dumps(obj).decode(),
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._session.close()

    def post(self, url: str, body: dict[str, Any]) -> Any:
        """``session.post`` as an async context manager, through the proxy if there is one."""
        return self._session.post(
            url, json=body, proxy=self.proxy, proxy_headers=self.proxy_headers
        )


async def post_json(
    session: Session,
    url: str,
    body: dict[str, Any],
    read: Callable[[Any], T],
    policy: RetryPolicy,
    stats: BackendStats,
    rejects: Callable[[int, bytes], bool] | None = None,
    timed: Callable[[float], None] | None = None,
) -> tuple[T | None, str | None]:
    """POST ``body`` as JSON and return ``(read(payload), None)``, or ``(None, reason)`` after the
    retries are spent or on an error not worth retrying. ``read`` raises :class:`Retry` for a
    payload without the expected answer (it also counts tokens). A 4xx (not 429) for which
    ``rejects(status, body)`` is true raises :class:`Rejected` (the request counted, not
    retried). ``timed`` is called with the seconds of the attempt whose answer was read (the
    latency of the answer, without the failed attempts and the waits before it)."""
    import aiohttp

    attempt = 0
    while True:
        started = time.monotonic()
        stats.requests += 1
        try:
            try:
                async with session.post(url, body) as response:
                    status = response.status
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
                    raw = await response.read()
            except TimeoutError:
                raise Retry("timeout") from None
            except aiohttp.ClientConnectorError as exc:
                session.unreachable += 1
                if session.answered == 0 and session.unreachable >= UNREACHABLE_AFTER:
                    raise OptionError(
                        f"cannot connect to {public_url(url)} ({_connect_reason(exc)}) on "
                        f"{session.unreachable} calls, and none was answered: is the server "
                        "running, and is --base-url (or PINGCE_BASE_URL) right?"
                    ) from None
                raise Retry(f"connection error ({type(exc).__name__})") from None
            except aiohttp.ClientError as exc:
                raise Retry(f"connection error ({type(exc).__name__})") from None
            session.answered += 1
            elapsed = time.monotonic() - started
            stats.latency_sec.append(elapsed)
            if status == 429 or status >= 500:
                raise Retry(f"http {status}", retry_after)
            if status >= 400:
                if rejects is not None and rejects(status, raw):
                    raise Rejected(status, _error_message(raw))
                return None, f"http {status}"
            try:
                payload = orjson.loads(raw)
            except orjson.JSONDecodeError:
                raise Retry("malformed response") from None
            try:
                answer = read(payload)
            except Retry:
                raise
            except Exception as exc:  # an answer of a shape the reader did not expect
                raise Retry(f"malformed response ({type(exc).__name__})") from None
            if timed is not None:
                timed(elapsed)
            return answer, None
        except Retry as exc:
            attempt += 1
            if attempt > policy.max_retries:
                return None, exc.reason
            stats.retry(exc.reason)
            await asyncio.sleep(policy.delay(attempt, exc.retry_after))


def _error_message(raw: bytes, limit: int = 200) -> str:
    """The message of an error body (OpenAI's ``{"error": {"message": ...}}``, FastAPI's
    ``{"detail": ...}``, vLLM's ``{"message": ...}``), else its text, shortened."""
    try:
        payload = orjson.loads(raw)
    except orjson.JSONDecodeError:
        payload = None
    message: Any = None
    if isinstance(payload, dict):
        error = payload.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        message = message or payload.get("message") or payload.get("detail")
    text = (
        message
        if isinstance(message, str)
        else (raw.decode("utf-8", "replace") if message is None else orjson.dumps(message).decode())
    )
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _connect_reason(exc: Exception) -> str:
    """Why a connection failed, in words: the OS error's text (connection refused, name or
    service not known) when there is one."""
    import socket

    os_error = getattr(exc, "os_error", None)
    if isinstance(os_error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(os_error, socket.gaierror):
        return f"no such host: {os_error.strerror or os_error}"
    text = getattr(os_error, "strerror", None) or str(os_error or exc)
    return str(text) if text else type(exc).__name__


async def run_workers(
    items: Sequence[Item],
    handle: Callable[[Item], Awaitable[None]],
    concurrency: int,
    *,
    every: Callable[[], None] | None = None,
    interval: float = 0.2,
) -> None:
    """``handle`` every item with ``concurrency`` workers taking items from one queue; ``every``
    runs each ``interval`` seconds meanwhile and once at the end (even on error or cancel)."""
    queue: asyncio.Queue[Item] = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)

    async def worker() -> None:
        while True:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await handle(item)

    async def ticker() -> None:
        while True:
            await asyncio.sleep(interval)
            assert every is not None
            every()  # must not raise: a failing flush keeps its rows for the next tick

    tick = asyncio.create_task(ticker()) if every is not None else None
    workers = [asyncio.ensure_future(worker()) for _ in range(max(1, min(concurrency, len(items))))]
    try:
        await asyncio.gather(*workers)
    finally:
        for task in workers:  # after an error in one worker, stop the others before returning
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        if tick is not None:
            tick.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await tick
        if every is not None:
            every()


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion, also from inside a running event loop (a notebook).

    In the main thread, SIGINT (Ctrl+C) and SIGTERM stop the calls the way an error does
    (:func:`_stoppable`): the coroutine is cancelled, so :func:`run_workers` writes the answers
    received so far to the cache before the signal ends the process; the rerun asks none of them
    again."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        if threading.current_thread() is threading.main_thread():
            return _stoppable(coroutine)
        return asyncio.run(coroutine)
    result: list[T] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(coroutine))
        except BaseException as exc:  # re-raised in the caller's thread
            error.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a run's calls after the answers received are written (not SIGKILL,
which nothing can catch: then at most the last 0.2 s of answers are asked again)."""


class _Stop:
    """The SIGINT and SIGTERM handler of :func:`_stoppable`: the handlers there were before, the
    signal that came (and what its old handler raised), the task to cancel."""

    def __init__(self) -> None:
        self.main: asyncio.Task[Any] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopped: list[tuple[int, BaseException | None]] = []
        self.previous: dict[int, Any] = {
            int(number): signal.getsignal(number)
            for number in STOP_SIGNALS
            if signal.getsignal(number) not in (signal.SIG_IGN, None)
        }

    def install(self) -> None:
        for number in self.previous:
            signal.signal(number, self.handle)

    def restore(self) -> None:
        for number, handler in self.previous.items():
            signal.signal(number, handler)

    def handle(self, number: int, frame: Any) -> None:
        if self.stopped:  # a second signal: no more waiting
            self.restore()
            signal.raise_signal(number)
            return
        handler = self.previous[number]
        raised: BaseException | None = None
        if callable(handler):
            try:
                handler(number, frame)
            except BaseException as exc:  # KeyboardInterrupt, SystemExit: after the unwinding
                raised = exc
            else:
                return  # the handler let the process go on: so do the calls
        self.stopped.append((number, raised))
        if self.main is not None and self.loop is not None:
            self.loop.call_soon_threadsafe(self.main.cancel)


def _stoppable(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)`` in the main thread, with SIGINT and SIGTERM cancelling it
    instead of ending the process at once (SIGTERM's default killed it with up to 0.2 s of
    answers not yet in the cache). The handler there was before is run when the signal comes:
    what it raises (Ctrl+C's KeyboardInterrupt, a SystemExit) is raised again once the
    coroutine has unwound (its ``finally`` blocks, the cache writes among them, have run); when
    it is the default action (SIGTERM ends the process), the signal is sent again then, with that
    action back, so the process ends as it would have, with the signal's status. A handler that
    returns lets the calls go on. A second signal while unwinding ends the process at once."""
    stop = _Stop()

    async def guarded() -> T:
        stop.main, stop.loop = asyncio.current_task(), asyncio.get_running_loop()
        if stop.stopped:
            raise asyncio.CancelledError
        return await coroutine

    stop.install()
    try:
        try:
            result = asyncio.run(guarded())
        except asyncio.CancelledError:
            if not stop.stopped:
                raise
    finally:
        stop.restore()
        coroutine.close()  # never awaited when the signal came before it started
    if not stop.stopped:
        return result
    number, raised = stop.stopped[0]
    if raised is not None:
        raise raised
    signal.raise_signal(number)  # the default action: the process ends by the signal
    raise KeyboardInterrupt  # not reached unless the signal's action let the process live
