"""``pingce runs`` (``show``, ``rm``): the run store."""

from __future__ import annotations

import click

from .common import consoles, fail, store_path_option
from .table import number_type

__all__ = ["runs"]


@click.group(invoke_without_command=True)
@click.option("--suite", default=None, help="Only the runs of this suite.")
@click.option("--name", "name", default=None, help="Only runs whose name contains this text.")
@click.option(
    "--limit",
    type=number_type("limit"),
    default=20,
    show_default=True,
    help="At most this many runs (0: all of them).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
@store_path_option
@click.pass_context
def runs(
    ctx: click.Context,
    suite: str | None,
    name: str | None,
    limit: int,
    as_json: bool,
    store: str | None,
) -> None:
    """List the recorded runs, newest first (show one with `pingce runs show NAME`, delete one
    with `pingce runs rm NAME`)."""
    ctx.obj = store
    if ctx.invoked_subcommand is not None:
        return
    from ..errors import PingceError
    from ..history import default_store_path
    from ..history import runs as recorded_runs
    from ..report.history import print_runs

    try:
        found = recorded_runs(suite=suite, name=name, limit=limit or None, store=store)
    except PingceError as exc:
        fail(str(exc))
        return
    if as_json:
        from .._json import dumps_indented

        click.echo(dumps_indented([r.to_dict() for r in found]))
        return
    console, _ = consoles()
    print_runs(found, store if store is not None else default_store_path(), console)


@runs.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
@store_path_option
@click.pass_context
def runs_show(ctx: click.Context, name: str, as_json: bool, store: str | None) -> None:
    """Print a recorded run: its metrics (and slices) with intervals, and where it came from."""
    from ..errors import PingceError
    from ..history import run_info
    from ..report.history import print_run

    try:
        info = run_info(name, store=store if store is not None else ctx.obj)
    except PingceError as exc:
        fail(str(exc))
        return
    if as_json:
        from .._json import dumps_indented

        click.echo(dumps_indented(info.to_dict()))
        return
    console, _ = consoles()
    print_run(info, console)


@runs.command("rm")
@click.argument("names", nargs=-1, required=True)
@store_path_option
@click.pass_context
def runs_rm(ctx: click.Context, names: tuple[str, ...], store: str | None) -> None:
    """Delete recorded runs from the store (their output folders stay where they are)."""
    from ..errors import PingceError
    from ..history import default_store_path, remove_run

    path = store if store is not None else ctx.obj
    for name in names:
        try:
            info = remove_run(name, store=path)
        except PingceError as exc:
            fail(str(exc))
            return
        where = path if path is not None else default_store_path()
        kept = f"; its output folder {info.out_dir} was left as it is" if info.out_dir else ""
        click.echo(f"removed run {info.name} from the run store {where}{kept}")
