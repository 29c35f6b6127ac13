"""What a run's numbers came from, as digests (issue 35's decision record): the SHA-256 of the
suite's definition, of the data and gold files, of the model's and the judges' settings, and the
seed. results.json keeps them (``inputs``); a decision against a baseline (``pingce run
--baseline``, ``pingce compare RUN_A RUN_B --non-inferior``) holds both runs', so a verdict can
be traced to exactly the inputs it was made of and recomputed from the stored runs."""

from __future__ import annotations

import hashlib
import os
from typing import Any

from ._json import dumps

__all__ = ["file_digest", "input_digests", "text_digest"]

CHUNK = 1 << 20


def text_digest(text: str | bytes) -> str:
    """``sha256:`` and the hex digest of ``text`` (UTF-8)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return "sha256:" + hashlib.sha256(data).hexdigest()


def file_digest(path: str | os.PathLike[str]) -> str:
    """``sha256:`` and the hex digest of a file's bytes, read a megabyte at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


OUTPUT_OPTIONS = frozenset(
    {"records_format", "records_fields", "report_records", "ray_address", "ray_scratch", "cache"}
)
"""Options that change where and how outputs are written, not the numbers."""


def input_digests(
    spec: Any, data: Any, gold: str | None, signature: Any, options: Any
) -> dict[str, str | None]:
    """The digests of a run's inputs: ``suite`` (its definition as JSON, whatever file or
    object it came from), ``data`` and ``gold`` (the files' bytes; None for records given as
    objects, or several files), ``model`` and ``judge`` (their settings as the signature
    says them: model, endpoint without credentials, parameters, rubric, scale), ``options``
    (every option of the run but where its outputs go: ``--map``, ``--sample``, ``--slice``,
    the bootstrap, the gates...) and the ``seed``."""
    extra = signature.model_extra or {}
    single = isinstance(data, str | os.PathLike) and os.path.isfile(data)
    given = {k: v for k, v in options.recorded().items() if k not in OUTPUT_OPTIONS}
    return {
        "suite": text_digest(spec.model_dump_json()),
        "data": file_digest(data) if single else None,
        "gold": None if gold is None else file_digest(gold),
        "model": None if extra.get("model") is None else text_digest(str(extra["model"])),
        "judge": None if extra.get("judge") is None else text_digest(dumps(extra["judge"])),
        "options": text_digest(dumps(given, sort_keys=True, default=str)),
        "seed": str(options.seed),
    }
