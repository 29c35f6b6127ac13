"""The built-in suites read once: each suite file's document, the line of each key and the
validated spec (:class:`pingce.suites.spec.SuiteSpec`'s data), kept as JSON in ``parsed.json``
beside the files with the SHA-256 of the text they were read from, so a run of a built-in suite
neither imports PyYAML nor parses (13 ms of a 0.45 s run, issue 32) nor validates (pydantic is
not imported: about 0.08 s).

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


def kept_document(name: str, text: str) -> tuple[Any, KeyLines, dict[str, Any]] | None:
    """The document, key lines and validated spec's data of built-in suite ``name`` as read
    from ``text``; None when ``parsed.json`` keeps none for this text."""
    try:
        kept = json.loads((resources.files("pingce.suites") / FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    entry = kept.get(name)
    if entry is None or entry["sha256"] != _digest(text):
        return None
    return entry["document"], entry["lines"], entry["spec"]


def snapshot() -> str:
    """What ``parsed.json`` holds: every built-in suite's document (in its keys' order) and key
    lines, read by the suite loader's YAML reader, and its spec validated."""
    from ._yaml import load_yaml
    from .spec import SuiteSpec

    out: dict[str, Any] = {}
    for name in builtin_names():
        text = (resources.files("pingce.suites") / f"{name}.yaml").read_text(encoding="utf-8")
        lines: KeyLines = {}
        document = load_yaml(text, lines)
        spec = SuiteSpec.model_validate(document).model_dump()
        if _kept_as_is(document) and _kept_as_is(spec):
            entry = {"document": document, "lines": lines, "spec": spec}
            out[name] = {"sha256": _digest(text), **entry}
    return json.dumps(out, ensure_ascii=False, indent=1) + "\n"


def _kept_as_is(data: Any) -> bool:
    """Whether JSON keeps ``data`` as it is."""
    try:
        return json.dumps(json.loads(json.dumps(data))) == json.dumps(data)
    except (TypeError, ValueError):
        return False


def write() -> Path:
    """Write ``parsed.json`` of this checkout again; its path."""
    path = Path(__file__).with_name(FILE)
    path.write_text(snapshot(), encoding="utf-8")
    return path
