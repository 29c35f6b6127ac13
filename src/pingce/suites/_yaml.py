"""Reading a suite file's YAML: PyYAML's safe loader, refusing what it would take silently or fail
on with a traceback.

* A key given twice in one mapping: YAML keeps the last one without a word, so a second
  ``metrics:`` block or a repeated option would override the first unseen. The error names the
  key (as a path, ``metrics.accuracy``) and both lines.
* Nesting deeper than :data:`MAX_DEPTH`: PyYAML composes nodes recursively, so ``[[[[...`` a
  few hundred levels deep is a ``RecursionError``. A suite file is a few levels deep (an inline
  JSON schema of tools a dozen).
* An alias inside the node it names (``a: &x [*x]``): a value that contains itself, which
  every later step (validation, JSON of the tools) would follow forever.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = ["MAX_DEPTH", "KeyLines", "YamlProblem", "load_yaml"]

MAX_DEPTH = 64
"""The deepest nesting of mappings and lists a suite file may have."""

_MERGE = "tag:yaml.org,2002:merge"

KeyLines = dict[str, int]
"""The line of each key of a document, by its dotted path (``metrics.accuracy.beta``)."""


class YamlProblem(ValueError):
    """What is wrong, the key (a dotted path, None for the whole file) and the line."""

    def __init__(self, message: str, key: str | None = None, line: int | None = None):
        self.key = key
        self.line = line
        super().__init__(message)


class _SuiteLoader(yaml.SafeLoader):
    """The safe loader, counting how deep the node being composed is."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                line = self.peek_event().start_mark.line + 1  # type: ignore[no-untyped-call]
                raise YamlProblem(
                    f"nested more than {MAX_DEPTH} levels deep: a suite file is a few levels of "
                    "mappings and lists",
                    line=line,
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _path(parent: str, key: Any) -> str:
    return f"{parent}.{key}" if parent else str(key)


def _check_nodes(root: Node, loader: _SuiteLoader, lines: KeyLines) -> None:
    """Every mapping's keys distinct, no node inside itself (walked without recursion); the
    line of every key into ``lines``."""
    stack: list[tuple[Node, str, frozenset[int]]] = [(root, "", frozenset())]
    done: set[int] = set()
    while stack:
        node, path, above = stack.pop()
        if id(node) in above:
            line = node.start_mark.line + 1
            raise YamlProblem(
                "an alias inside the value it names: the value would contain itself",
                path or None,
                line,
            )
        if id(node) in done:  # an alias of a node already checked
            continue
        done.add(id(node))
        inner = above | {id(node)}
        if isinstance(node, MappingNode):
            seen: dict[Any, int] = {}
            for key_node, value_node in node.value:
                if isinstance(key_node, ScalarNode) and key_node.tag != _MERGE:
                    key = loader.construct_object(key_node)
                    line = key_node.start_mark.line + 1
                    if key in seen:
                        where = _path(path, key)
                        raise YamlProblem(
                            f"key {key!r} is given twice in one mapping (lines {seen[key]} and "
                            f"{line}); YAML would keep the second silently: remove one",
                            where,
                            line,
                        )
                    seen[key] = line
                    lines.setdefault(_path(path, key), line)
                    stack.append((value_node, _path(path, key), inner))
                else:
                    stack.append((key_node, path, inner))
                    stack.append((value_node, path, inner))
        elif isinstance(node, SequenceNode):
            stack.extend((item, f"{path}[{i}]", inner) for i, item in enumerate(node.value))


def load_yaml(text: str, lines: KeyLines | None = None) -> Any:
    """The document in ``text``, as ``yaml.safe_load`` reads it; :class:`YamlProblem` for a key
    given twice, nesting deeper than :data:`MAX_DEPTH` or a value inside itself, and
    ``yaml.YAMLError`` for text that is not YAML. The line of each key goes into ``lines``
    when given (what an error about a key points at)."""
    loader = _SuiteLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _check_nodes(root, loader, {} if lines is None else lines)
        return loader.construct_document(root)
    finally:
        loader.dispose()
