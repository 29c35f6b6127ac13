"""A model server's endpoint: its base URL and key, as every client of one finds them (the
judge, the embeddings and rerank endpoints, the model under test)."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from ..errors import OptionError
from ..urls import (
    base_url_source,
    basic_authorization,
    check_base_url,
    join_path,
    public_url,
    request_base,
)

__all__ = ["Endpoint"]


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
