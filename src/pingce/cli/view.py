"""``pingce view``: the run store served on this machine."""

from __future__ import annotations

import click

from .common import fail, store_path_option
from .table import number_type

__all__ = ["view"]


@click.command()
@store_path_option
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (one that is not a loopback address lets others read the store).",
)
@click.option(
    "--port",
    type=number_type("port"),
    default=0,
    show_default=True,
    help="Port to listen on (0: a free one).",
)
@click.option("--no-browser", is_flag=True, help="Only print the address; open no browser.")
def view(store: str | None, host: str, port: int, no_browser: bool) -> None:
    """Serve the run store on this machine: the runs, each run's report, two runs compared, and
    a metric's trend across the runs of a suite (Ctrl+C stops)."""
    from ..viewer import serve

    try:
        serve(
            store,
            host,
            port,
            open_browser=not no_browser,
            echo=click.echo,
            warn=lambda text: click.echo(text, err=True),
        )
    except OSError as exc:
        fail(f"pingce view cannot listen on {host}:{port}: {exc.strerror or exc}")
