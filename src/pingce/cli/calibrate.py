"""``pingce calibrate``: the similarity threshold that best reproduces human labels."""

from __future__ import annotations

import sys

import click

from .common import EXIT_JUDGE_FAILURES, consoles, fail, out_checked, progress
from .table import table_options

__all__ = ["calibrate"]


@click.command()
@click.option(
    "--pairs",
    "pairs",
    required=True,
    type=click.Path(dir_okay=False),
    help='JSONL of {"a", "b", "match": bool} labelled by people.',
)
@table_options("calibrate", last="similarity")
@click.option(
    "--out",
    "out",
    default=None,
    type=click.Path(dir_okay=False),
    help="Also write the result as JSON (signature, n_pairs, failures, auc, best, curve) here.",
)
@table_options("calibrate", first="base_url")
def calibrate(
    pairs: str,
    similarity: str,
    out: str | None,
    base_url: str | None,
    cache: str | None,
    no_cache: bool,
    no_progress: bool,
) -> None:
    """Choose the similarity threshold τ that best reproduces human match labels (max F1), and
    measure how well the backend ranks matches above non-matches (ROC AUC)."""
    from ..calibrate import calibrate as run_calibration
    from ..calibrate import write_calibration
    from ..errors import PingceError
    from ..report.console import print_calibration

    console, err_console = consoles()
    with out_checked(out, file=True):  # before any work
        try:
            with progress(err_console, enabled=not no_progress and err_console.is_terminal) as hook:
                result = run_calibration(
                    pairs,
                    similarity,
                    base_url=base_url,
                    cache=False if no_cache else cache,
                    progress=hook,
                )
            path = write_calibration(result, out) if out else None
        except PingceError as exc:
            fail(exc)
            return
    print_calibration(result, console)
    if path is not None:
        console.print(f"output: {path}")
    if result.failures:
        console.print(f"[red]{result.failures} pair(s) could not be scored and were left out[/red]")
        sys.exit(EXIT_JUDGE_FAILURES)
