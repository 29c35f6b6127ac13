"""promptfoo's ``promptfoo eval -o results.json``.

Each row of ``results.results`` (a test x a prompt x a provider) becomes a record: its test
(index, or description when the tests have them), prompt (label), provider (id), variables as
the input, the response's output, the test's metadata, and its scores: ``pass`` (the row's
``success``), ``score`` (the grading result's), each named score (an assertion's ``metric:``),
and ``assert_<type>`` (the share of the row's assertions of that type that passed). A row whose
provider failed (``error``; promptfoo counts it as a failure) has no scores here: it is left
out of every mean and counted in a note. promptfoo's own pass rate (``results.stats``) is what
``pass`` is checked against. The provider and the prompt are the slices, and either can be
the two sides of a comparison (``pingce compare results.json --by provider``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from ._base import SCORES, Score, ToolRun, tool_reader

__all__ = ["read_promptfoo"]


def _recognises(path: Path, head: bytes) -> bool:
    start = head.lstrip()[:65536]
    return (
        start.startswith(b"{")
        and b'"results"' in start
        and (b'"evalId"' in start or b'"promptIdx"' in start or b'"testIdx"' in start)
    )


def _provider(row: dict[str, Any]) -> str:
    provider = row.get("provider")
    if isinstance(provider, dict):
        return str(provider.get("label") or provider.get("id"))
    return str(provider)


def _prompt(row: dict[str, Any]) -> str:
    prompt = row.get("prompt") or {}
    if isinstance(prompt, dict):
        return str(prompt.get("label") or prompt.get("raw") or row.get("promptIdx"))
    return str(prompt)


def _test(row: dict[str, Any], described: bool) -> str:
    case = row.get("testCase") or {}
    if described and case.get("description"):
        return str(case["description"])
    return str(row.get("testIdx"))


def _scores(row: dict[str, Any]) -> dict[str, float]:
    grading = row.get("gradingResult") or {}
    out: dict[str, float] = {"pass": 1.0 if row.get("success") else 0.0}
    score = row.get("score", grading.get("score"))
    if isinstance(score, int | float) and not isinstance(score, bool):
        out["score"] = float(score)
    for name, value in (row.get("namedScores") or grading.get("namedScores") or {}).items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[_name(name)] = float(value)
    by_type: dict[str, list[float]] = {}
    for component in grading.get("componentResults") or []:
        assertion = component.get("assertion") or {}
        kind = assertion.get("type")
        if kind:
            by_type.setdefault(f"assert_{_name(str(kind))}", []).append(
                1.0 if component.get("pass") else 0.0
            )
    for name, passed in by_type.items():
        out[name] = sum(passed) / len(passed)
    return out


def _name(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in text)


@tool_reader("promptfoo", _recognises)
def read_promptfoo(path: Path) -> ToolRun:
    """A promptfoo results file's rows as pingce records (see the module)."""
    source = str(path)
    with open(path, "rb") as handle:
        data = json.load(handle)
    body = data.get("results")
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        raise InputError(
            "not a promptfoo results file: no results.results list (write it with "
            "`promptfoo eval -o results.json`)",
            source=source,
        )
    rows = body["results"]
    if not rows:
        raise InputError("the promptfoo results hold no rows", source=source)
    cases = [r.get("testCase") or {} for r in rows]
    descriptions = [c.get("description") for c in cases]
    described = all(descriptions) and len(set(descriptions)) == len(
        {r.get("testIdx") for r in rows}
    )
    records = []
    errors = 0
    names: dict[str, None] = {}
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise InputError("expected an object", source=source, line=number)
        record: dict[str, Any] = {
            "test": _test(row, described),
            "prompt": _prompt(row),
            "provider": _provider(row),
            "input": row.get("vars") or (row.get("testCase") or {}).get("vars"),
            "target": None,
            "output": (row.get("response") or {}).get("output"),
            "metadata": (row.get("testCase") or {}).get("metadata") or {},
        }
        record["id"] = f"{record['test']}/{record['prompt']}/{record['provider']}"
        if row.get("error") and not row.get("gradingResult"):
            errors += 1
            record["error"] = str(row["error"])
            record[SCORES] = {}
        else:
            record[SCORES] = _scores(row)
            names.update(dict.fromkeys(record[SCORES]))
        records.append(record)
    stats = body.get("stats") or {}
    done = [stats.get(k) for k in ("successes", "failures", "errors")]
    reported = None
    if all(isinstance(v, int) for v in done) and sum(done):  # type: ignore[arg-type]
        reported = done[0] / sum(done)  # type: ignore[operator,arg-type]
    scores = [
        Score(
            name,
            reported if name == "pass" else None,
            "its pass rate: successes over every row" if name == "pass" else "",
            True,
            (
                f"promptfoo counts the {errors} row(s) whose provider failed as failures; "
                "pingce leaves them out and counts them"
            )
            if name == "pass" and errors
            else None,
        )
        for name in names
    ]
    notes = []
    if errors:
        notes.append(
            f"{source}: {errors} row(s) whose provider failed (an error, no grading) are left "
            "out of every mean"
        )
    providers = {r["provider"] for r in records}
    prompts = {r["prompt"] for r in records}
    slices = [f for f, values in (("provider", providers), ("prompt", prompts)) if len(values) > 1]
    description = str((data.get("config") or {}).get("description") or "eval")
    return ToolRun(
        "promptfoo",
        source,
        "promptfoo-" + (_name(description)[:40].strip("_-") or "eval"),
        records,
        scores,
        slices,
        notes=notes,
        keys={"provider": ["test", "prompt"], "prompt": ["test", "provider"]},
    )
