"""``pingce report``: a run's reports written again from its files."""

from __future__ import annotations

from pathlib import Path

import click

from .common import fail, out_checked, store_path_option

__all__ = ["report"]


@click.command()
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--out",
    "out",
    default=None,
    type=click.Path(file_okay=False),
    help="Where report.html and report.md go [default: the run's own folder].",
)
@store_path_option
def report(run_ref: str, out: str | None, store: str | None) -> None:
    """Write the report.html and report.md of RUN again (a run name from `pingce runs`, or a
    run's output folder), from its results.json and records.jsonl; or, for a comparison's
    folder, its comparison.html and comparison.md from comparison.json. Nothing is evaluated
    again and no model is called."""
    from ..errors import PingceError
    from ..report.rewrite import rewrite_reports

    with out_checked(out):  # before reading the run
        try:
            from ..history import run_folder

            if (Path(run_ref) / "comparison.json").is_file():  # a comparison's folder
                from ..report.rewrite import rewrite_comparison

                paths = rewrite_comparison(run_ref, out)
            else:
                folder, _ = run_folder(run_ref, store=store)
                paths = rewrite_reports(folder, out)
        except PingceError as exc:
            fail(exc)
            return
    click.echo(f"wrote {', '.join(str(p) for p in paths)}")
