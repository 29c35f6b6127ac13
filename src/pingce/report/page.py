"""What every HTML page pingce writes or serves shares: the escaping of text, the head of a page,
and the style sheets and script, which are package files (``report/assets/report.css``,
``report/assets/report.js``; the viewer's ``viewer/assets/viewer.css``) read with
:mod:`importlib.resources`, so that they are edited, linted and shipped as what they are.

A page embeds them (it makes no network request): a ``<style>`` or ``<script>`` element holds a
newline and then the file's text, so the script's hash in a page's Content-Security-Policy is the
hash of exactly that text.
"""

from __future__ import annotations

import base64
import hashlib
import html
from functools import cache
from importlib.resources import files

from .format import direction_mark, direction_words

__all__ = [
    "STYLE",
    "asset",
    "direction",
    "esc",
    "head",
    "script",
    "script_hash",
    "short",
    "style",
]

STYLE = "report.css"
"""The pages' style sheet (report/assets/; also under the viewer's pages, so that they look
alike)."""


def esc(value: object) -> str:
    """Text for HTML (element content and quoted attributes alike)."""
    return html.escape(str(value), quote=True)


def direction(higher: bool | None) -> str:
    """The mark beside a metric's name on a page: ↑ when a higher value is better, ↓ when a
    lower one is (latencies, error rates), its words as its title and aria-label
    (:data:`~pingce.report.format.BETTER`); nothing when the direction is not known."""
    if higher is None:
        return ""
    words = esc(direction_words(higher))
    return (
        f'<span class="better" title="{words}" aria-label="{words}">'
        f"{esc(direction_mark(higher))}</span>"
    )


def short(text: str, limit: int) -> str:
    """``text``, or its first ``limit - 1`` characters and an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@cache
def asset(name: str, package: str = __package__ or "pingce.report") -> str:
    """The text of the file ``assets/NAME`` of ``package`` (by default ``pingce.report``), read
    once (UTF-8, newlines as ``\\n`` whatever the checkout wrote)."""
    return (files(package) / "assets" / name).read_text(encoding="utf-8")


def style(*sheets: str) -> str:
    """The text of a page's ``<style>`` element: each sheet after a newline."""
    return "".join("\n" + sheet for sheet in sheets)


def script(name: str) -> str:
    """The text of a page's ``<script>`` element: a newline, then report/assets' ``name``."""
    return "\n" + asset(name)


def script_hash(name: str) -> str:
    """The Content-Security-Policy source of :func:`script` ``(name)``: ``'sha256-…'``."""
    digest = hashlib.sha256(script(name).encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def head(title: str, csp: str, sheets: str, *, no_referrer: bool = False) -> str:
    """A page up to and including ``<body>``: its Content-Security-Policy, the viewport, (for
    the viewer) no referrer, the title and the style sheets (``sheets``: :func:`style`'s)."""
    referrer = '<meta name="referrer" content="no-referrer">\n' if no_referrer else ""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"{referrer}<title>{esc(title)}</title>\n<style>{sheets}</style>\n</head>\n<body>\n"
    )
