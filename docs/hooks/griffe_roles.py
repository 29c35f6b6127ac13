"""A griffe extension for the Python API page (mkdocstrings): pingce's docstrings cite names
with reST roles (:func:`evaluate`, :class:`pingce.EvaluationResult`), which Markdown would show
as they are written; here they become code (``evaluate``)."""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


class ReSTRoles(Extension):
    """Each docstring's reST roles as Markdown code."""

    def on_object(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(r"`\1`", obj.docstring.value)
