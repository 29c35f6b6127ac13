"""Reports of a result: files (results.json, records.jsonl, report.md, report.html,
comparison.json, comparison.html) and console tables. Reports only read results; nothing here
calls into metrics or the engine.

Names are imported on first use (:mod:`pingce._lazy`), so a run, which prints and writes one
result, does not import the comparison pages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .comparison_html import render_comparison_html
    from .console import print_comparison, print_notes, print_profile, print_result
    from .files import write_comparison, write_outputs
    from .html import render_html
    from .markdown import render_comparison_markdown, render_markdown

__all__ = [
    "print_comparison",
    "print_notes",
    "print_profile",
    "print_result",
    "render_comparison_html",
    "render_comparison_markdown",
    "render_html",
    "render_markdown",
    "write_comparison",
    "write_outputs",
]

_LAZY = {
    "print_comparison": "console",
    "print_notes": "console",
    "print_profile": "console",
    "print_result": "console",
    "render_comparison_html": "comparison_html",
    "render_comparison_markdown": "markdown",
    "render_html": "html",
    "render_markdown": "markdown",
    "write_comparison": "files",
    "write_outputs": "files",
}

__getattr__ = lazy_exports(__name__, _LAZY, globals())
