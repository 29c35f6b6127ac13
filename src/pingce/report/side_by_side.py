"""Both systems' records side by side, for comparison.html (and the viewer's paired page, which
is that page): for each paired record, the fields whose values differ between the two sides next
to each other, what changed marked (a text diff by :mod:`difflib` for text, path by path for
structured values: a function call argument by argument), the fields the two share folded below,
the record's context fields (``RecordRows.context``: the query, the question, the messages) above,
and per metric whether the candidate fixed the record, broke it, or both systems got it right or
wrong (by the per-record miss reasons). The page's small script (``report/assets/comparison.js``)
filters the records by that status and by metric; without it every record shows.

Every text is escaped here (:func:`~pingce.report.page.esc`); the script reads only the
``data-st`` attribute of each record and the two filters' values, never a record's text."""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Iterator, Mapping
from itertools import repeat
from typing import Any

import numpy as np

from .._json import dumps_indented, json_texts
from ..results import RecordRows
from .format import fmt_number, marked
from .page import direction, esc

__all__ = [
    "FIELDS_NOT_KEPT",
    "PAIRS_SHOWN",
    "STATUSES",
    "VALUE_CHARS",
    "diff_html",
    "flat_paths",
    "pairs_section",
    "statuses",
]

PAIRS_SHOWN = 500
"""Records shown side by side at most (the flipped ones first; every count stays complete)."""
VALUE_CHARS = 4000
"""Characters of a value diffed and shown (a longer one is cut, and says so)."""

STATUSES = {
    "f": "fixed",
    "b": "broken",
    "w": "both wrong",
    "r": "both right",
}
"""A record's status on a metric, by its code in the page's ``data-st`` (``-``: not judged)."""

_TOKENS = re.compile(r"[A-Za-z0-9_]+|\s+|.", re.S)


def _cut(text: str) -> tuple[str, bool]:
    return (text, False) if len(text) <= VALUE_CHARS else (text[:VALUE_CHARS], True)


def diff_html(before: str, after: str) -> tuple[str, str]:
    """``before`` with what the change removed in ``<del>``, and ``after`` with what it added in
    ``<ins>``, both escaped; words of Latin letters and digits are compared whole, every other
    character (a Chinese one, a space, a sign) on its own."""
    a, b = _TOKENS.findall(before), _TOKENS.findall(after)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    left: list[str] = []
    right: list[str] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        old, new = esc("".join(a[i1:i2])), esc("".join(b[j1:j2]))
        if op == "equal":
            left.append(old)
            right.append(new)
            continue
        if old:
            left.append(f"<del>{old}</del>")
        if new:
            right.append(f"<ins>{new}</ins>")
    return "".join(left), "".join(right)


def _text(value: Any) -> str:
    """A value as the page shows it: a text as it is, anything else as its JSON."""
    if isinstance(value, str):
        return value
    return json_texts([value])[0].decode("utf-8")


def flat_paths(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """A structured value (plain JSON data) as ``(path, text)`` pairs, one per scalar inside it:
    ``[0].name``, ``[0].arguments.room``; an empty list or object is one pair."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from flat_paths(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            yield from flat_paths(item, f"{path}[{i}]")
    else:
        yield path, _text(value)


def _context_text(value: Any) -> str:
    """A context value as the page shows it: a text as it is, anything else as indented JSON
    (messages a turn a block), cut at :data:`VALUE_CHARS` (saying so), escaped."""
    text = value if isinstance(value, str) else dumps_indented(value)
    shown, was_cut = _cut(text)
    return esc(shown) + ('<span class="cut">… (cut)</span>' if was_cut else "")


def _context_rows(context_c: dict[str, Any], context_b: dict[str, Any]) -> str:
    """The record's context fields (what was asked: the query, the question, the messages), a
    row each: one value when both sides read the same, else the baseline's and the
    candidate's."""
    rows = []
    for name in dict.fromkeys([*context_b, *context_c]):
        before, after = context_b.get(name), context_c.get(name)
        head = f'<th scope="row"><code>{esc(name)}</code></th>'
        if before == after:
            rows.append(f'<tr>{head}<td class="side" colspan="2">{_context_text(after)}</td></tr>')
            continue
        absent = '<span class="absent">(absent)</span>'
        old = absent if before is None else _context_text(before)
        new = absent if after is None else _context_text(after)
        rows.append(f'<tr>{head}<td class="side b">{old}</td><td class="side c">{new}</td></tr>')
    if not rows:
        return ""
    return (
        '<table class="sbs context"><caption>context</caption>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _structured(value: Any) -> bool:
    return isinstance(value, (dict, list))


def _value_cells(before: Any, after: Any) -> str:
    """The two cells of a changed scalar field: the baseline's text and the candidate's, diffed."""
    old, old_cut = _cut(_text(before))
    new, new_cut = _cut(_text(after))
    left, right = diff_html(old, new)
    more = '<span class="cut">… (cut)</span>'
    return (
        f'<td class="side b">{left}{more if old_cut else ""}</td>'
        f'<td class="side c">{right}{more if new_cut else ""}</td>'
    )


def _path_rows(field: str, before: Any, after: Any) -> str:
    """A changed structured field, a row per path (argument by argument): changed paths marked
    and diffed, the others shown plainly."""
    old = dict(flat_paths(before))
    new = dict(flat_paths(after))
    paths = list(dict.fromkeys([*old, *new]))
    rows = []
    for k, path in enumerate(paths):
        head = (
            f'<th scope="row" rowspan="{len(paths)}"><code>{esc(field)}</code></th>'
            if not k
            else ""
        )
        a, b = old.get(path), new.get(path)
        label = f'<code class="path">{esc(path)}</code> ' if path else ""
        if a == b:
            text = esc(_cut(a or "")[0])
            rows.append(
                f'<tr class="same">{head}<td class="side b">{label}{text}</td>'
                f'<td class="side c">{label}{text}</td></tr>'
            )
            continue
        left, right = diff_html(_cut(a or "")[0], _cut(b or "")[0])
        left = '<span class="absent">(absent)</span>' if a is None else left
        right = '<span class="absent">(absent)</span>' if b is None else right
        rows.append(
            f'<tr class="changed">{head}<td class="side b">{label}{left}</td>'
            f'<td class="side c">{label}{right}</td></tr>'
        )
    return "".join(rows)


def _field_rows(fields_c: dict[str, Any], fields_b: dict[str, Any]) -> tuple[str, str, int]:
    """The rows of the fields that differ (diffed) and of those the two sides share, and how
    many they share."""
    changed, same, n_same = [], [], 0
    for name in dict.fromkeys([*fields_b, *fields_c]):
        before, after = fields_b.get(name), fields_c.get(name)
        if before == after:
            n_same += 1
            text, was_cut = _cut(_text(before))
            same.append(
                f'<tr><th scope="row"><code>{esc(name)}</code></th><td class="side">{esc(text)}'
                + ('<span class="cut">… (cut)</span>' if was_cut else "")
                + "</td></tr>"
            )
        elif _structured(before) or _structured(after):
            changed.append(_path_rows(name, before, after))
        else:
            changed.append(
                f'<tr class="changed"><th scope="row"><code>{esc(name)}</code></th>'
                f"{_value_cells(before, after)}</tr>"
            )
    return "".join(changed), "".join(same), n_same


# --- statuses -----------------------------------------------------------------------------------


def _missed(rows: RecordRows, name: str) -> np.ndarray | None:
    column = rows.misses.get(name)
    if column is None:
        return None
    return np.fromiter(map(operator.is_not, column, repeat(None)), bool, rows.n)


def statuses(
    candidate: RecordRows, baseline: RecordRows, order: np.ndarray, metrics: list[str]
) -> dict[str, np.ndarray]:
    """Per metric judged record by record (one that has miss reasons on either side), each
    candidate record's status code (:data:`STATUSES`): fixed when the baseline missed it and the
    candidate did not, broken the reverse, both wrong, both right."""
    out: dict[str, np.ndarray] = {}
    for name in metrics:
        missed_c, missed_b = _missed(candidate, name), _missed(baseline, name)
        if missed_c is None and missed_b is None:
            continue
        none = np.zeros(candidate.n, dtype=bool)
        c = none if missed_c is None else missed_c
        b = none if missed_b is None else missed_b[order]
        codes = np.full(candidate.n, "r", dtype="<U1")
        codes[b & ~c] = "f"
        codes[c & ~b] = "b"
        codes[c & b] = "w"
        out[name] = codes
    return out


def _chosen(codes: dict[str, np.ndarray], n: int) -> np.ndarray:
    """The candidate positions shown: those flipped on some metric first, then the others, at
    most :data:`PAIRS_SHOWN`, in the records' order."""
    flipped = np.zeros(n, dtype=bool)
    for column in codes.values():
        flipped |= (column == "f") | (column == "b")
    first = np.flatnonzero(flipped)[:PAIRS_SHOWN]
    rest = np.flatnonzero(~flipped)[: PAIRS_SHOWN - len(first)]
    return np.sort(np.concatenate([first, rest]))


# --- the section --------------------------------------------------------------------------------


def _metric_lines(
    candidate: RecordRows,
    baseline: RecordRows,
    at: tuple[int, int],
    codes: dict[str, str],
    directions: Mapping[str, bool | None],
) -> str:
    """A record's metrics not right on both sides (``at``: its candidate and baseline
    positions): its status, the metric and its direction mark, both values and the reasons."""
    i, j = at
    out = []
    for name, code in codes.items():
        if code in "r-":
            continue
        values_c, values_b = candidate.values.get(name), baseline.values.get(name)
        vb = "—" if values_b is None else fmt_number(_finite(values_b[j]))
        vc = "—" if values_c is None else fmt_number(_finite(values_c[i]))
        why = _reasons(baseline.misses.get(name), j, candidate.misses.get(name), i)
        out.append(
            f'<li class="st-{code}"><span class="badge">{esc(STATUSES[code])}</span> '
            f"<code>{esc(name)}</code>{direction(directions.get(name))} {esc(vb)} → {esc(vc)}"
            f"{why}</li>"
        )
    return f'<ul class="mstat">{"".join(out)}</ul>' if out else ""


def _reasons(before: np.ndarray | None, j: int, after: np.ndarray | None, i: int) -> str:
    """Why each side missed a record (once when both missed it alike), escaped."""
    old = None if before is None else before[j]
    new = None if after is None else after[i]
    if old is None and new is None:
        return ""
    if old == new:
        text = f"both: {new}"
    else:
        text = "; ".join(
            f"{side}: {reason}"
            for side, reason in (("baseline", old), ("candidate", new))
            if reason is not None
        )
    return f' <span class="why">{esc(text)}</span>'


def _finite(value: Any) -> float | None:
    number = float(value)
    return number if math.isfinite(number) else None


FIELDS_NOT_KEPT = (
    "The {sides} per-record rows do not keep the input fields (a stored run's records.jsonl "
    "or records.parquet echoes them only when asked): its context, values and reasons are "
    "shown. Run with <code>--records-fields all</code> for the fields side by side, or "
    "compare the record files (<code>pingce compare SUITE --data CANDIDATE --baseline "
    "BASELINE</code>)."
)
"""What the section says when a side's rows hold no input fields (``{sides}``: whose)."""


def _without_fields(candidate: RecordRows, baseline: RecordRows) -> str:
    """Whose rows hold no input fields (``"baseline's"``, ``"candidate's"``, ``"two runs'"``),
    or "" when both hold them."""
    sides = (("baseline", baseline), ("candidate", candidate))
    missing = [side for side, rows in sides if not rows.fields]
    if len(missing) == 2:
        return "two runs'"
    return f"{missing[0]}'s" if missing else ""


def _pair(
    candidate: RecordRows,
    baseline: RecordRows,
    at: tuple[int, int],
    codes: dict[str, str],
    rows: tuple[dict[str, Any], dict[str, Any]],
    directions: Mapping[str, bool | None],
) -> str:
    """One record side by side (``at``: its candidate and baseline positions; ``rows``: both
    sides' :meth:`~pingce.results.RecordRows.iter_rows` rows): its id, context, statuses and
    the fields that changed (none when a side's rows do not keep them)."""
    i = at[0]
    key = candidate.ids[i]
    context = _context_rows(rows[0].get("context", {}), rows[1].get("context", {}))
    st = "".join(codes.values())
    if not (candidate.fields and baseline.fields):  # a stored run that kept no input fields
        ident = "" if key is None else f" · id <code>{esc(key)}</code>"
        return (
            f'<article class="pair" data-st="{esc(st)}"><h3>line {int(candidate.lines[i])}'
            f"{ident}</h3>{context}{_metric_lines(candidate, baseline, at, codes, directions)}"
            '<p class="hint no-fields">Input fields not kept (see above).</p></article>'
        )
    fields = (rows[0]["fields"], rows[1]["fields"])
    changed, same, n_same = _field_rows(*fields)
    table = (
        '<table class="sbs"><thead><tr><th>field</th><th>baseline</th><th>candidate</th></tr>'
        f"</thead><tbody>{changed}</tbody></table>"
        if changed
        else '<p class="hint">Every field is the same on both sides.</p>'
    )
    shared = (
        f'<details class="shared"><summary>{n_same} field(s) the same on both sides</summary>'
        f'<table class="sbs"><tbody>{same}</tbody></table></details>'
        if n_same
        else ""
    )
    ident = "" if key is None else f" · id <code>{esc(key)}</code>"
    return (
        f'<article class="pair" data-st="{esc(st)}"><h3>line {int(candidate.lines[i])}{ident}'
        f"</h3>{context}{_metric_lines(candidate, baseline, at, codes, directions)}{table}"
        f"{shared}</article>"
    )


def _counts_table(
    codes: dict[str, np.ndarray], verdicts: dict[str, str], directions: Mapping[str, bool | None]
) -> str:
    """Per metric judged record by record: its records by status, and the comparison's verdict
    beside them."""
    rows = []
    for name, column in codes.items():
        cells = "".join(
            f'<td class="num">{int(np.count_nonzero(column == code)):,}</td>' for code in STATUSES
        )
        rows.append(
            f'<tr><th scope="row"><code>{esc(name)}</code>{direction(directions.get(name))}</th>'
            f"{cells}"
            f"<td>{esc(verdicts.get(name, ''))}</td></tr>"
        )
    head = "".join(f"<th>{esc(label)}</th>" for label in STATUSES.values())
    return (
        f'<div class="wide"><table class="small statuses"><thead><tr><th>metric</th>{head}'
        f"<th>verdict</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _controls(metrics: list[str], directions: Mapping[str, bool | None]) -> str:
    status = "".join(
        f'<option value="{code}">{esc(label)}</option>'
        for code, label in [
            ("", "every record"),
            ("fb", "changed (fixed or broken)"),
            *STATUSES.items(),
        ]
    )
    metric = "".join(
        f'<option value="{k}">{esc(marked(name, directions.get(name)))}</option>'
        for k, name in enumerate(metrics)
    )
    return (
        '<div class="controls" id="sbs-controls" hidden>'
        f'<label>show <select id="sbs-status">{status}</select></label>'
        f'<label>on <select id="sbs-metric"><option value="">any metric</option>{metric}'
        '</select></label><span id="sbs-info" aria-live="polite"></span></div>'
    )


def pairs_section(
    candidate: RecordRows,
    baseline: RecordRows,
    order: np.ndarray,
    verdicts: dict[str, str],
    directions: Mapping[str, bool | None] | None = None,
) -> str:
    """The section of both systems' records side by side (``order``: each candidate record's
    position among the baseline's; ``verdicts``: the comparison's verdict of each metric, in
    the comparison's order; ``directions``: each metric's ``higher_is_better``, for its mark)."""
    directions = directions or {}
    codes = statuses(candidate, baseline, order, list(verdicts))
    names = list(codes)
    shown = _chosen(codes, candidate.n)
    rows_c = list(candidate.take(shown).iter_rows())
    rows_b = list(baseline.take(order[shown]).iter_rows())
    parts = [
        '<section id="pairs"><h2>Both systems, record by record</h2>',
        "<p class=\"hint\">For each record, the baseline's and the candidate's values of every "
        "field that differs, what changed marked (removed struck through, added underlined; "
        "a structured value path by path); the fields the two share are folded below, and the "
        "record's context fields (what it asked, which no metric reads) come first. A record "
        "is <b>fixed</b> on a metric when the baseline missed it and the candidate did not, "
        "<b>broken</b> the reverse (by the per-record miss reasons).</p>",
        _counts_table(codes, verdicts, directions),
        _controls(names, directions),
    ]
    sides = _without_fields(candidate, baseline)
    if sides:
        text = FIELDS_NOT_KEPT.format(sides=sides)
        parts.append(f'<p class="hint" id="sbs-no-fields">{text}</p>')
    if len(shown) < candidate.n:
        parts.append(
            f'<p class="hint">{len(shown):,} of the {candidate.n:,} records are shown here, '
            "those that flipped first.</p>"
        )
    for k, i in enumerate(shown.tolist()):
        record_codes = {name: str(codes[name][i]) for name in names}
        at = (i, int(order[i]))
        rows = (rows_c[k], rows_b[k])
        parts.append(_pair(candidate, baseline, at, record_codes, rows, directions))
    parts.append('<p class="empty" id="sbs-none" hidden>No record matches.</p></section>\n')
    return "".join(parts)
