"""Reports of a result: files (results.json, records.jsonl, report.md, report.html,
comparison.json, comparison.html) and console tables. Reports only read results; nothing here
calls into metrics or the engine."""

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
