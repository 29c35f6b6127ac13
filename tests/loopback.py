"""A loopback OpenAI-compatible HTTP server for tests and benchmarks (127.0.0.1 only).

``POST /v1/chat/completions`` answers ``{"score": s}`` where ``s`` is the character Jaccard
similarity of the two texts fenced in the prompt as ``<x>\\n...\\n</x>`` and ``<y>\\n...\\n</y>``
(:func:`char_jaccard`), with usage ``prompt_tokens = len(prompt)`` and ``completion_tokens =
len(answer)`` (characters). Structured output (:attr:`LoopbackServer.formats`): a request's
``response_format`` is honoured (the answer is that JSON), refused with a 400 that names it (as
older vLLM and llama.cpp servers do) or a 422 (a FastAPI validator), or ignored; an answer that no
``response_format`` constrains may be prose (:attr:`LoopbackServer.prose`) that says ``s`` in
words. A chat request without fenced texts is the model under test (``--model``): it is answered
with the message :attr:`LoopbackServer.answer` makes for it (tool calls or text; a ``logprobs``
key it gives goes to the choice, as OpenAI's ``choices[0].logprobs``). ``POST
/v1/embeddings`` returns :func:`embed` vectors (character
counts hashed into ``dims`` buckets). Both rules are deterministic, so a test can compute every
expected value itself. ``GET /v1/stats`` returns the request count and the most requests in
flight at once (GET requests are not logged).

Faults are injected per request, first from a FIFO script (:meth:`LoopbackServer.script`), then
from a rule on the request (:attr:`LoopbackServer.rule`): added latency, 429 or 500 with
Retry-After, a reply delayed beyond the client's timeout, a truncated JSON body, a non-numeric
answer, an out-of-range score, a dropped connection. :meth:`LoopbackServer.hold_after` answers the
first N requests and holds the rest until :meth:`LoopbackServer.release` (to kill a client
halfway).

Every request is logged (path, headers with lower-case names, raw body, parsed JSON, fenced
texts, fault, status, times, usage) and the server counts the most requests in flight at once.

The server is one asyncio event loop in one thread (cheap per request, so a benchmark measures
the client, not the server). It is bounded: it binds 127.0.0.1 on a free port, stops itself after
``lifetime`` seconds, idle keep-alive connections time out, bodies are limited in size, and
:meth:`LoopbackServer.stop` cancels every handler (waits included), closes every connection,
closes the loop and joins the thread.

Standalone (the benchmarks run it in its own process): ``python -m tests.loopback --latency 0.05``
prints the base URL on one line and serves until stdin closes or the lifetime ends.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

__all__ = [
    "Fault",
    "LoopbackServer",
    "Request",
    "char_jaccard",
    "cosine",
    "embed",
    "fenced_texts",
    "keep_local",
]

FaultKind = Literal[
    "ok",  # answer normally (after `seconds` of extra latency)
    "429",  # 429 with Retry-After: `seconds` (no header when seconds < 0)
    "500",  # 500 with Retry-After: `seconds` (no header when seconds < 0)
    "400",  # 400 Bad Request with `text` as the error message (not worth retrying)
    "401",  # 401 Unauthorized (a wrong key: not worth retrying)
    "hang",  # answer only after `seconds` (beyond the client's timeout)
    "truncated",  # a 200 whose JSON body is cut in half
    "text",  # a 200 whose answer content is `text` (e.g. "I think they match"); on /rerank:
    # scores outside [0, 1] (4x - 2, like raw logits)
    "drop",  # close the connection without any response
]

_X = re.compile(r"<x>\n(.*)\n</x>", re.S)
_Y = re.compile(r"<y>\n(.*)\n</y>", re.S)
MAX_BODY = 16 * 1024 * 1024
MAX_HEAD = 64 * 1024
IDLE_TIMEOUT = 30.0
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}
_REASONS |= {413: "Payload Too Large", 422: "Unprocessable Entity"}
_REASONS |= {429: "Too Many Requests", 500: "Internal Server Error"}


@dataclass(frozen=True)
class Fault:
    """What the server does with one request."""

    kind: FaultKind = "ok"
    seconds: float = 0.0
    text: str = ""


@dataclass
class Request:
    """One logged request."""

    path: str
    """The request's path, without its query (:attr:`url_query`)."""
    headers: dict[str, str]
    """Header names in lower case."""
    body: bytes
    json: Any
    received: float
    """time.monotonic() when the request had been read."""
    url_query: str = ""
    """The query of the request's URL (after ``?``), as sent."""
    x: str | None = None
    y: str | None = None
    prompt: str | None = None
    inputs: list[str] | None = None
    query: str | None = None
    """A rerank request's query (its documents are in ``inputs``)."""
    response_format: Any = None
    """A chat request's ``response_format`` (None when it has none)."""
    content: str | None = None
    """The answer's content sent to a chat request."""
    status: int | None = None
    """Status sent; None if no response was sent (held, dropped or the server stopped)."""
    fault: Fault | None = None
    responded: float | None = None
    usage: dict[str, int] | None = None
    """Usage in the response as the client could read it (None when truncated or an error)."""

    @property
    def pair(self) -> tuple[str, str] | None:
        """The fenced (x, y) texts of a chat request."""
        return None if self.x is None or self.y is None else (self.x, self.y)

    @property
    def answered(self) -> bool:
        """Whether a 200 with a well-formed score (or vectors) was sent."""
        return self.status == 200 and (self.fault is None or self.fault.kind == "ok")


def char_jaccard(a: str, b: str) -> float:
    """|chars(a) ∩ chars(b)| / |chars(a) ∪ chars(b)| (1 for two empty texts)."""
    sa, sb = set(a), set(b)
    union = sa | sb
    return 1.0 if not union else len(sa & sb) / len(union)


def embed(text: str, dims: int = 32) -> list[float]:
    """The server's vector of a text: counts of its characters hashed into ``dims`` buckets."""
    vector = [0.0] * dims
    for char in text:
        vector[zlib.crc32(char.encode("utf-8")) % dims] += 1.0
    return vector


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine of two vectors (0 when one is zero)."""
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    na, nb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    return 0.0 if na == 0 or nb == 0 else float(va @ vb / (na * nb))


def fenced_texts(prompt: str) -> tuple[str | None, str | None]:
    """The texts between ``<x>\\n``/``\\n</x>`` and ``<y>\\n``/``\\n</y>`` of a prompt."""
    mx, my = _X.search(prompt), _Y.search(prompt)
    return (mx.group(1) if mx else None, my.group(1) if my else None)


class _Drop(Exception):
    """Close the connection without a response."""


class LoopbackServer:
    """The server; a context manager. ``url`` is the base URL (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self, *, latency: float = 0.0, dims: int = 32, lifetime: float = 300.0):
        self.latency = latency
        """Seconds added to every answer."""
        self.dims = dims
        self.lifetime = lifetime
        self.rule: Callable[[Request], Fault | None] | None = None
        """Fault for a request when the script is empty (None: answer normally)."""
        self.formats: Literal["honour", "reject", "reject-422", "ignore"] = "honour"
        """What a chat request's ``response_format`` gets: an answer in that JSON (``honour``);
        a 400 whose error names the field, as vLLM and llama.cpp servers that predate it send
        (``reject``); a FastAPI 422 (``reject-422``); or no notice (``ignore``)."""
        self.prose: str | None = None
        """The content of an answer that no honoured ``response_format`` constrains, with
        ``{score}`` replaced by the score's ``repr`` (e.g. ``"两者相似度为{score}。"``); None:
        ``{"score": s}`` as JSON."""
        self.answer: Callable[[Request], dict[str, Any]] | None = None
        """The model under test (``--model``): the assistant message (``content`` and/or
        ``tool_calls``) for a chat request without fenced ``<x>``/``<y>`` texts; None: such a
        request is a 400."""
        self.log: list[Request] = []
        self.errors: list[str] = []
        """Unexpected handler errors (a test should assert there are none)."""
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._hold_after: int | None = None
        self._admitted = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._released: asyncio.Event | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._port = 0
        self._ready = threading.Event()
        self._failure: BaseException | None = None

    # life cycle -----------------------------------------------------------------------------

    def start(self) -> LoopbackServer:
        self._thread = threading.Thread(target=self._run, name="loopback", daemon=False)
        self._thread.start()
        self._ready.wait(30)
        if self._failure is not None or not self._port:
            self.stop()
            raise RuntimeError(f"loopback server did not start: {self._failure!r}")
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._open())
            self._ready.set()
            expiry = loop.call_later(self.lifetime, loop.stop)
            loop.run_forever()
            expiry.cancel()
            loop.run_until_complete(self._close())
            loop.run_until_complete(loop.shutdown_asyncgens())
        except BaseException as exc:  # reported by start() or stop()
            self._failure = exc
            self._ready.set()
        finally:
            loop.close()

    async def _open(self) -> None:
        self._released = asyncio.Event()
        self._released.set()
        self._server = await asyncio.start_server(
            self._connection, "127.0.0.1", 0, backlog=1024, limit=MAX_HEAD
        )
        self._port = int(self._server.sockets[0].getsockname()[1])

    async def _close(self) -> None:
        assert self._server is not None
        self._server.close()
        handlers = list(self._handlers)
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        await self._server.wait_closed()

    def stop(self) -> None:
        """Stop serving: cancel every handler, close every connection, join the thread."""
        loop, thread = self._loop, self._thread
        if thread is None:
            return
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop already stopped (lifetime)
                loop.call_soon_threadsafe(loop.stop)
        thread.join()
        self._thread = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    # configuration --------------------------------------------------------------------------

    def script(self, *faults: Fault) -> None:
        """Queue faults for the next requests, in arrival order (one fault a request)."""
        with self._lock:
            self._script.extend(faults)

    def hold_after(self, n: int) -> None:
        """Answer the next ``n`` requests; hold every later one until :meth:`release`."""
        with self._lock:
            self._hold_after = n
            self._admitted = 0
        self._call(lambda: self._released.clear() if self._released else None)

    def release(self) -> None:
        """Stop holding: held requests and all later ones are answered."""
        with self._lock:
            self._hold_after = None
        self._call(lambda: self._released.set() if self._released else None)

    def _call(self, fn: Callable[[], Any]) -> None:
        """Run ``fn`` in the server's loop and wait for it."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        done = threading.Event()

        def run() -> None:
            try:
                fn()
            finally:
                done.set()

        loop.call_soon_threadsafe(run)
        done.wait(10)

    def reset(self) -> None:
        """Forget the log, the script and the in-flight maximum."""
        with self._lock:
            self.log.clear()
            self._script.clear()
            self.max_in_flight = self.in_flight

    # what happened --------------------------------------------------------------------------

    def requests(self, endpoint: str | None = None) -> list[Request]:
        """Logged requests, optionally only those whose path ends with ``endpoint``."""
        with self._lock:
            log = list(self.log)
        return [r for r in log if endpoint is None or r.path.endswith(endpoint)]

    def count(self, endpoint: str | None = None) -> int:
        return len(self.requests(endpoint))

    def chat(self) -> list[Request]:
        return self.requests("/chat/completions")

    # the handler ----------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while True:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_TIMEOUT)
                keep = await self._request(head, reader, writer)
                if not keep:
                    break
        except _Drop:
            writer.transport.abort()
        except (
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            asyncio.CancelledError,
            TimeoutError,
            ConnectionError,
        ):
            pass  # a client that went away, an idle connection, or the server stopping
        except Exception as exc:  # a bug in this server: the tests assert there is none
            self.errors.append(repr(exc))
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)

    async def _request(
        self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Serve one request; False when the connection should close."""
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = [*lines[0].split(" ", 2), "", ""][:3]
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
        keep = headers.get("connection", "").lower() != "close"
        length = int(headers.get("content-length") or 0)
        if length > MAX_BODY:
            await self._send(writer, 413, {"error": {"message": "body too large"}})
            return False
        body = await reader.readexactly(length) if length else b""
        if method == "GET":
            if path.rstrip("/").endswith("/stats"):
                with self._lock:
                    stats = {
                        "requests": len(self.log),
                        "in_flight": self.in_flight,
                        "max_in_flight": self.max_in_flight,
                    }
                await self._send(writer, 200, stats)
            else:
                await self._send(writer, 404, {"error": {"message": "not found"}})
            return keep
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        path, _, url_query = path.partition("?")
        entry = Request(
            path=path,
            headers=headers,
            body=body,
            json=payload,
            received=time.monotonic(),
            url_query=url_query,
        )
        with self._lock:
            self.log.append(entry)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await self._serve(entry, writer)
        finally:
            with self._lock:
                self.in_flight -= 1
        return keep

    async def _serve(self, entry: Request, writer: asyncio.StreamWriter) -> None:
        payload = entry.json
        if entry.path.endswith("/chat/completions"):
            try:
                prompt = payload["messages"][-1]["content"] or ""
            except (TypeError, KeyError, IndexError):
                await self._send(writer, 400, {"error": {"message": "no messages"}}, entry)
                return
            entry.prompt = prompt
            entry.x, entry.y = fenced_texts(prompt)
            entry.response_format = payload.get("response_format")
            if entry.response_format is not None and self.formats in ("reject", "reject-422"):
                await self._refuse_format(writer, entry)
                return
        elif entry.path.endswith("/embeddings"):
            inputs = payload.get("input") if isinstance(payload, dict) else None
            if isinstance(inputs, str):
                inputs = [inputs]
            if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
                message = {"error": {"message": "input must be a list of strings"}}
                await self._send(writer, 400, message, entry)
                return
            entry.inputs = inputs
        elif entry.path.endswith("/rerank"):
            query = payload.get("query") if isinstance(payload, dict) else None
            documents = payload.get("documents") if isinstance(payload, dict) else None
            if not isinstance(query, str) or not (
                isinstance(documents, list) and all(isinstance(d, str) for d in documents)
            ):
                message = {"error": {"message": "query must be a string, documents strings"}}
                await self._send(writer, 400, message, entry)
                return
            entry.query, entry.inputs = query, documents
        else:
            message = {"error": {"message": f"no route {entry.path}"}}
            await self._send(writer, 404, message, entry)
            return

        with self._lock:
            self._admitted += 1
            held = self._hold_after is not None and self._admitted > self._hold_after
        if held:
            assert self._released is not None
            await self._released.wait()  # cancelled when the server stops
        with self._lock:
            fault = self._script.popleft() if self._script else None
        if fault is None and self.rule is not None:
            fault = self.rule(entry)
        fault = fault or Fault()
        entry.fault = fault
        delay = self.latency + (fault.seconds if fault.kind in ("ok", "hang") else 0.0)
        if delay > 0:
            await asyncio.sleep(delay)
        if fault.kind == "drop":
            raise _Drop
        if fault.kind in ("400", "401", "429", "500"):
            retry = fault.kind in ("429", "500") and fault.seconds >= 0
            extra = {"Retry-After": f"{fault.seconds:g}"} if retry else {}
            status = int(fault.kind)
            message = {"error": {"message": fault.text or f"injected {status}"}}
            await self._send(writer, status, message, entry, extra)
            return
        if entry.query is not None and entry.inputs is not None:
            # Cohere / Jina / vLLM shape, best first; relevance = character Jaccard
            scored = [(i, char_jaccard(entry.query, d)) for i, d in enumerate(entry.inputs)]
            scored.sort(key=lambda item: -item[1])
            if fault.kind == "text":  # an out-of-range score (a raw logit), as some servers send
                scored = [(i, 4.0 * v - 2.0) for i, v in scored]
            results = [{"index": i, "relevance_score": v} for i, v in scored]
            tokens = len(entry.query) * len(entry.inputs) + sum(len(d) for d in entry.inputs)
            usage = {"total_tokens": tokens}
            entry.usage = usage
            answer = {"id": f"rerank-{id(entry):x}", "results": results, "usage": usage}
            await self._send(writer, 200, answer, entry)
            return
        if entry.inputs is not None:
            data = [
                {"object": "embedding", "index": i, "embedding": embed(t, self.dims)}
                for i, t in enumerate(entry.inputs)
            ]
            tokens = sum(len(t) for t in entry.inputs)
            usage = {"prompt_tokens": tokens, "total_tokens": tokens}
            entry.usage = usage
            await self._send(writer, 200, {"object": "list", "data": data, "usage": usage}, entry)
            return
        message: dict[str, Any] | None = None
        logprobs: Any = None
        if fault.kind == "text":
            content = fault.text
        elif (entry.x is None or entry.y is None) and self.answer is not None:
            made = dict(self.answer(entry))
            logprobs = made.pop("logprobs", None)  # the choice's, not the message's
            message = {"role": "assistant", "content": None, **made}
            content = json.dumps(message, ensure_ascii=False)
        elif entry.x is None or entry.y is None:
            message = {"error": {"message": "no fenced <x>/<y> texts"}}
            await self._send(writer, 400, message, entry)
            return
        else:
            score = char_jaccard(entry.x, entry.y)
            structured = entry.response_format is not None and self.formats == "honour"
            if self.prose is None or structured:
                content = json.dumps({"score": score})
            else:
                content = self.prose.replace("{score}", repr(score))
        entry.content = content
        assert entry.prompt is not None
        usage = {"prompt_tokens": len(entry.prompt), "completion_tokens": len(content)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        truncated = fault.kind == "truncated"
        entry.usage = None if truncated else usage
        answer = {
            "id": f"cmpl-{id(entry):x}",
            "object": "chat.completion",
            "model": payload.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": message or {"role": "assistant", "content": content},
                    "finish_reason": "tool_calls"
                    if message and message.get("tool_calls")
                    else "stop",
                    **({"logprobs": logprobs} if logprobs is not None else {}),
                }
            ],
            "usage": usage,
        }
        await self._send(writer, 200, answer, entry, truncate=truncated)

    async def _refuse_format(self, writer: asyncio.StreamWriter, entry: Request) -> None:
        """The answer of a server that does not know ``response_format``."""
        if self.formats == "reject-422":  # FastAPI's validation error
            detail = [
                {
                    "type": "extra_forbidden",
                    "loc": ["body", "response_format"],
                    "msg": "Extra inputs are not permitted",
                }
            ]
            await self._send(writer, 422, {"detail": detail}, entry)
            return
        asked = entry.response_format
        kind = asked.get("type") if isinstance(asked, dict) else asked
        message = {  # vLLM's shape; llama.cpp words it alike
            "object": "error",
            "message": f"response_format type {kind!r} is not supported; expected 'text'",
            "type": "BadRequestError",
            "param": "response_format",
            "code": 400,
        }
        await self._send(writer, 400, message, entry)

    @staticmethod
    async def _send(
        writer: asyncio.StreamWriter,
        status: int,
        payload: Any,
        entry: Request | None = None,
        headers: dict[str, str] | None = None,
        truncate: bool = False,
    ) -> None:
        data = json.dumps(payload).encode("utf-8")
        if truncate:
            data = data[: len(data) // 2]
        lines = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            "Content-Type: application/json",
            f"Content-Length: {len(data)}",
            *(f"{k}: {v}" for k, v in (headers or {}).items()),
        ]
        if entry is not None:  # logged before the bytes leave: a fast client may read the log
            entry.status = status  # as soon as it has the answer, before drain() returns here
            entry.responded = time.monotonic()
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data)
        await writer.drain()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--lifetime", type=float, default=600.0)
    args = parser.parse_args()
    with LoopbackServer(latency=args.latency, lifetime=args.lifetime) as server:
        print(server.url, flush=True)
        done = threading.Event()

        def watch_stdin() -> None:
            sys.stdin.read()
            done.set()

        threading.Thread(target=watch_stdin, daemon=True).start()
        done.wait(args.lifetime)
        summary = {"requests": server.count(), "max_in_flight": server.max_in_flight}
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()


def keep_local(monkeypatch: Any, cache: Path) -> None:
    """For a test that talks to a loopback server: no proxies (all traffic stays on 127.0.0.1),
    no stray endpoint or key settings (PINGCE_*, OPENAI_*; the test store stays), a private
    similarity cache folder."""
    for key in list(os.environ):
        upper = key.upper()
        stray = upper.startswith(("PINGCE_", "OPENAI_")) and upper != "PINGCE_STORE"
        if upper.endswith("_PROXY") or stray:
            monkeypatch.delenv(key)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("PINGCE_CACHE_DIR", str(cache))
