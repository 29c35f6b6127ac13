"""What the tests read out of a written page: the records' JSON that report.html embeds."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["embedded"]


def embedded(text: str) -> dict[str, Any]:
    """The JSON of report.html's ``pingce-data`` script element (the records the page shows)."""
    found = re.search(
        r'<script type="application/json" id="pingce-data">(.*?)</script>', text, re.S
    )
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data
