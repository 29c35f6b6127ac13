"""The built-in suites read once: each suite file's document and the line of each key, kept as
JSON in ``parsed.json`` beside the files with the SHA-256 of the text they were read from, so a
run of a built-in suite neither imports PyYAML nor parses (13 ms of a 0.45 s run, issue 32).

A text whose digest differs (an edited file) is parsed as every suite file is, so the file can be
stale but never wrong; ``tests/test_suite_yaml.py`` holds it current, and :func:`write` writes
it again (``python -c "from pingce.suites._parsed import write; write()"``). A document that
JSON would not keep as it is (a key that is not a string, a date) is not kept.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._yaml import KeyLines

__all__ = ["FILE", "builtin_names", "kept_document", "snapshot", "write"]

FILE = "parsed.json"


def builtin_names() -> list[str]:
    """The built-in suites' names, sorted: the suite files of the package (not read)."""
    names = (entry.name for entry in resources.files("pingce.suites").iterdir())
    return sorted(name.removesuffix(".yaml") for name in names if name.endswith(".yaml"))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def kept_document(name: str, text: str) -> tuple[Any, KeyLines] | None:
    """The document and key lines of built-in suite ``name`` as read from ``text``; None when
    ``parsed.json`` keeps none for this text."""
    try:
        kept = json.loads((resources.files("pingce.suites") / FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    entry = kept.get(name)
    if entry is None or entry["sha256"] != _digest(text):
        return None
    return entry["document"], entry["lines"]


def snapshot() -> str:
    """What ``parsed.json`` holds: every built-in suite's document (in its keys' order) and key
    lines, read by the suite loader's YAML reader."""
    from ._yaml import load_yaml

    out: dict[str, Any] = {}
    for name in builtin_names():
        text = (resources.files("pingce.suites") / f"{name}.yaml").read_text(encoding="utf-8")
        lines: KeyLines = {}
        document = load_yaml(text, lines)
        try:
            same = json.dumps(json.loads(json.dumps(document))) == json.dumps(document)
        except (TypeError, ValueError):
            same = False
        if same:
            out[name] = {"sha256": _digest(text), "document": document, "lines": lines}
    return json.dumps(out, ensure_ascii=False, indent=1) + "\n"


def write() -> Path:
    """Write ``parsed.json`` of this checkout again; its path."""
    path = Path(__file__).with_name(FILE)
    path.write_text(snapshot(), encoding="utf-8")
    return path
