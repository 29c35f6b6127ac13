"""Structured output with a fallback: the answer asked for as JSON (``response_format``) until
the server refuses it, then without it for the rest of the client's life (one home for the
policy: the similarity judge's ``structured: auto`` and the grading judges' use it).

A server refuses ``response_format`` with a 422 (a schema validator that does not know the
field) or a 400 whose error names it (vLLM, llama.cpp and OpenAI word it so:
``response_format``, ``json_schema``, ``json_object``, ``guided_json``). With the fallback on,
the refused request is asked again at once without the field (counted as a retry, not a failed
call) and no later request carries it; with the fallback off, the refusal is a failed call.
The first request of a client is asked alone (:attr:`FormatFallback.probing`), so a server
that refuses refuses once, not once per connection of the first wave.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from .http import Rejected, RetryPolicy, Session, post_json
from .usage import BackendStats

__all__ = ["FormatFallback", "refuses_format"]

T = TypeVar("T")

_REFUSAL = re.compile(rb"response[_ -]?format|json[_ -]?schema|json_object|guided_json", re.I)


def refuses_format(status: int, body: bytes) -> bool:
    """Whether a 4xx answer refuses ``response_format``: a 422, or a 400 whose error names
    it."""
    return status == 422 or (status == 400 and _REFUSAL.search(body) is not None)


class FormatFallback:
    """One client's state of ``response_format``: whether the server refused it (then it is
    left out of every later request) and whether an answer came with it."""

    def __init__(self, fallback: bool = True, refused_hint: str = ""):
        self.fallback = fallback
        """Ask again without ``response_format`` when it is refused (else a failed call)."""
        self.refused_hint = refused_hint
        """Said after a refusal that is a failed call (what to set instead)."""
        self.refused = False
        """Whether the server refused ``response_format`` (with the fallback on)."""
        self.answered = False
        """Whether a request carrying ``response_format`` was answered."""

    @property
    def probing(self) -> bool:
        """Whether the next request should be asked alone first: the fallback is on and the
        server has neither refused nor answered a request with ``response_format``."""
        return self.fallback and not (self.refused or self.answered)

    async def post(
        self,
        session: Session,
        url: str,
        body: dict[str, Any],
        read: Callable[[Any], T],
        policy: RetryPolicy,
        stats: BackendStats,
        timed: Callable[[float], None] | None = None,
    ) -> tuple[T | None, str | None]:
        """:func:`~pingce.remote.http.post_json` of ``body``, without its ``response_format``
        once the server refused it."""
        if "response_format" not in body:
            return await post_json(session, url, body, read, policy, stats, timed=timed)
        plain = {k: v for k, v in body.items() if k != "response_format"}
        if self.refused:
            return await post_json(session, url, plain, read, policy, stats, timed=timed)
        try:
            answer = await post_json(session, url, body, read, policy, stats, refuses_format, timed)
        except Rejected as exc:
            if not self.fallback:
                hint = f" ({self.refused_hint})" if self.refused_hint else ""
                return None, f"http {exc.status}: the server refused response_format{hint}"
            self.refused = True  # not a failed call: asked again without it, once
            stats.retries += 1
            return await post_json(session, url, plain, read, policy, stats, timed=timed)
        if answer[0] is not None:
            self.answered = True
        return answer
