"""A model server's base URL: where it comes from, its one check, its credentials kept apart, and
the one form in which it may be shown.

A base URL may carry secrets: a user and password (``http://user:pass@host/v1``, sent as a basic
``Authorization`` header) and query parameters such as ``?api-key=...`` (Azure) or ``?sig=...``
(a signed URL), sent with every request. :func:`public_url` is the only form in which a base URL
leaves the process: in signatures (and so cache keys), results, predictions.jsonl, the run store,
the console and error messages. Standard library only: the run store and the option checks import
it before anything heavy.
"""

from __future__ import annotations

import base64
import os
import re
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from .errors import OptionError

__all__ = [
    "REDACTED",
    "base_url_source",
    "basic_authorization",
    "check_base_url",
    "join_path",
    "public_url",
    "request_base",
]

REDACTED = "***"
"""What a secret query value is shown as."""

_SECRET_NAME = re.compile(
    r"(?:^|[_\-.])(?:api[_\-.]?key|apikey|key|token|access[_\-.]?token|refresh[_\-.]?token|"
    r"id[_\-.]?token|secret|client[_\-.]?secret|password|passwd|pwd|pass|sig|signature|auth|"
    r"authorization|credentials?|session|code|jwt|bearer)(?:$|[_\-.])",
    re.I,
)
"""Query parameter names whose values are secrets: ``api-key``, ``api_key``, ``key``, ``token``,
``access_token``, ``sig`` (Azure SAS), ``x-api-key``, ``client_secret``... matched as a word of
the name, so ``keyword`` and ``monkey`` are not secrets."""

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def _secret(name: str) -> bool:
    return _SECRET_NAME.search(unquote(name)) is not None


def _redacted_query(query: str) -> str:
    """The query with the values of secret-looking parameters replaced by :data:`REDACTED` (the
    other parameters as they were written)."""
    if not query:
        return ""
    parts = []
    for item in query.split("&"):
        name, sep, _ = item.partition("=")
        parts.append(f"{name}={REDACTED}" if sep and _secret(name) else item)
    return "&".join(parts)


def public_url(url: str) -> str:
    """The URL as it may be shown: without a user and password, the values of secret-looking
    query parameters (:data:`_SECRET_NAME`) redacted, and without a fragment. The one form of a
    base URL in signatures, results, the run store, the console and messages. Text that is no
    URL at all (``user:pass@host/v1``, a typo) loses everything up to an ``@`` too."""
    text = str(url).strip()
    parts = urlsplit(text)
    if not _SCHEME.match(text):  # no netloc was recognised: a user info may hide in the path
        head, at, tail = text.partition("@")
        if at and "/" not in head:
            text = tail
        base, _, query = text.partition("?")
        query = query.partition("#")[0]
        return f"{base}?{_redacted_query(query)}" if query else base
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, _redacted_query(parts.query), ""))


def base_url_source(given: str | None, option: str = "--base-url") -> tuple[str, str] | None:
    """The base URL and where it came from: ``given`` (named ``option``), else
    ``PINGCE_BASE_URL``, else ``OPENAI_BASE_URL`` (as the OpenAI client reads it); None when none
    is set."""
    if given:
        return given, option
    for name in ("PINGCE_BASE_URL", "OPENAI_BASE_URL"):
        value = os.environ.get(name)
        if value:
            return value, name
    return None


def check_base_url(url: object, source: str) -> str:
    """``url`` stripped, when it is an http(s) URL with a host (and a port that is a number);
    else an :class:`OptionError` naming ``source`` (``--base-url``, ``PINGCE_BASE_URL``...) and
    the URL as it may be shown. Checked before any work: a malformed URL used to be retried
    for every request (216 requests in 45 s) before the run gave up."""
    example = "e.g. http://localhost:8000/v1"
    if not isinstance(url, str):
        raise OptionError(f"{source} must be a URL ({example}), got {type(url).__name__}")
    text = url.strip()
    parts = urlsplit(text)
    problem = None
    if parts.scheme.lower() not in ("http", "https"):
        problem = (
            f"the scheme {parts.scheme!r} is not http or https"
            if _SCHEME.match(text)
            else "not a URL: it must start with http:// or https://"
        )
    else:
        try:
            parts.port  # noqa: B018  (raises ValueError for a port that is no number)
        except ValueError:
            problem = "its port is not a number from 0 to 65535"
        else:
            host = parts.hostname or ""
            if not host or any(c.isspace() for c in parts.netloc):
                problem = "it has no host name"
    if problem is not None:
        raise OptionError(f"{source} {public_url(text)!r}: {problem} ({example})")
    return text


def request_base(url: str) -> str:
    """The URL requests are made from: without its user and password (sent as a header,
    :func:`basic_authorization`), a trailing slash of its path and a fragment; the query, which
    the server reads, is kept."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), parts.query, ""))


def basic_authorization(url: str) -> str | None:
    """The ``Authorization`` header value (``Basic ...``) of a user and password in the URL
    (percent-decoded, as a browser sends them), or None when it has none."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return None
    user, _, password = parts.netloc.rpartition("@")[0].partition(":")
    token = f"{unquote(user)}:{unquote(password)}".encode()
    return "Basic " + base64.b64encode(token).decode("ascii")


def join_path(url: str, path: str) -> str:
    """``path`` (``/chat/completions``) appended to the URL's path; its query kept after it
    (``http://h/v1?api-version=1`` -> ``http://h/v1/chat/completions?api-version=1``)."""
    parts = urlsplit(url)
    joined = parts.path.rstrip("/") + "/" + quote(path.lstrip("/"), safe="/")
    return urlunsplit((parts.scheme, parts.netloc, joined, parts.query, ""))
