"""The HTTP server of ``pingce view`` (:mod:`pingce.viewer`): :class:`Viewer`'s pages behind a
stdlib :class:`~http.server.ThreadingHTTPServer`, loopback ``Host`` only on a loopback address,
GET and HEAD only, with the security headers; :func:`serve` runs it until interrupted."""

from __future__ import annotations

import contextlib
import io
import ipaddress
import os
import socket
import sys
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .._constraints import check_value
from .._defaults import OPTION_TYPES
from ..errors import OptionError
from .pages import Response, Viewer

__all__ = ["ViewerServer", "make_server", "serve"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


# --- the server ---------------------------------------------------------------------------------


def _loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Handler(BaseHTTPRequestHandler):
    server: ViewerServer
    server_version = "pingce-view"
    sys_version = ""

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def _answer(self, send_body: bool) -> None:
        if not self._host_allowed():
            response = Response(
                HTTPStatus.FORBIDDEN,
                b"pingce view answers only requests to localhost\n",
                "text/plain; charset=utf-8",
            )
        else:
            try:
                response = self.server.viewer.respond(self.path)
            except Exception as exc:  # a page that failed: said, and the server goes on
                self.log_error("%s failed: %r", self.path, exc)
                response = Response(
                    HTTPStatus.INTERNAL_SERVER_ERROR,
                    f"pingce view could not make this page: {exc!r}\n".encode(),
                    "text/plain; charset=utf-8",
                )
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(response.length))
        self.send_header("Content-Security-Policy", response.csp)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if not send_body:
            return
        try:
            self.wfile.write(response.body)
            if response.file is not None:
                _copy(response.file, response.skip, response.end, self.wfile)
        except (BrokenPipeError, ConnectionResetError):  # the browser went elsewhere
            self.close_connection = True

    def _host_allowed(self) -> bool:
        """On a loopback address, only a loopback ``Host`` (a page of another site that a DNS
        name was pointed at 127.0.0.1 for cannot read the store)."""
        if not self.server.loopback_only:
            return True
        host = self.headers.get("Host", "").strip().lower()
        # "[::1]:8000" or "localhost:8000"
        name = host[1:].partition("]")[0] if host.startswith("[") else host.partition(":")[0]
        return _loopback(name)

    def log_error(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"pingce view: {format % args}\n")

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.log is not None:
            self.server.log(f"{self.address_string()} {format % args}")


def _copy(path: Path, start: int, end: int, out: io.BufferedIOBase) -> None:
    """Bytes ``start`` to ``end`` of ``path`` into ``out``, a megabyte at a time (spaces for any
    that a file cut short meanwhile no longer has: the length was promised)."""
    left = end - start
    with open(path, "rb") as handle:
        handle.seek(start)
        while left > 0:
            chunk = handle.read(min(left, 1 << 20))
            if not chunk:
                chunk = b" " * min(left, 1 << 20)
            out.write(chunk)
            left -= len(chunk)


class ViewerServer(ThreadingHTTPServer):
    """The HTTP server of :class:`Viewer` (a thread per request)."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        viewer: Viewer,
        log: Callable[[str], None] | None = None,
    ) -> None:
        host = address[0]
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)
        self.viewer = viewer
        self.log = log
        self.loopback_only = _loopback(host)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port}/"


def make_server(
    store: str | os.PathLike[str] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    log: Callable[[str], None] | None = None,
) -> ViewerServer:
    """A server of the store's pages on ``host``:``port`` (0: a free port; see ``.url``), not yet
    serving: call ``serve_forever()`` (in a thread, for tests) and ``shutdown()``. A port
    outside 0..65535 is an :class:`OptionError` (the command line's ``--port`` range)."""
    try:
        check_value("port", port, OPTION_TYPES["port"])
    except ValueError as exc:
        raise OptionError(str(exc)) from None
    return ViewerServer((host, port), Viewer(store), log)


def serve(
    store: str | os.PathLike[str] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = True,
    echo: Callable[[str], None] = print,
    warn: Callable[[str], None] | None = None,
) -> None:
    """Serve the store's pages until interrupted (Ctrl+C), opening the list in a browser;
    ``echo`` says where, ``warn`` (default: standard error) warns of a non-loopback address."""
    server = make_server(store, host, port)
    with server:
        echo(f"pingce view: the run store {server.viewer.store} at {server.url} (Ctrl+C stops)")
        if not server.loopback_only:
            (warn or _stderr)(
                f"warning: serving on {host}, not only on this machine: anyone who can reach it "
                "can read the run store"
            )
        if open_browser and _has_browser():
            threading.Thread(target=_open, args=(server.url,), daemon=True).start()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            echo("pingce view: stopped")


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


def _has_browser() -> bool:
    """A graphical browser can be opened: on Linux and the BSDs only with a display (else
    :mod:`webbrowser` would start a text browser in this terminal)."""
    if sys.platform.startswith(("win", "darwin")):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _open(url: str) -> None:
    import webbrowser

    with contextlib.suppress(Exception):  # no browser is not an error: the URL was printed
        webbrowser.open(url)
