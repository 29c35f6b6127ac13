"""Reports of a result: files (results.json, records.jsonl, report.md), console tables."""

from .console import print_result
from .files import write_outputs
from .markdown import render_markdown

__all__ = ["print_result", "render_markdown", "write_outputs"]
