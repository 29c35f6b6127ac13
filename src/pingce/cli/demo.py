"""``pingce demo``: every built-in suite on its bundled example records."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from .common import fail, out_checked

if TYPE_CHECKING:
    from rich.console import Console

    from ..results import EvaluationResult

__all__ = ["demo"]


@click.command()
@click.option(
    "--examples",
    "examples",
    default=None,
    type=click.Path(file_okay=False),
    help="Folder with <suite>/records.jsonl examples [default: the ones installed with pingce].",
)
@click.option(
    "--out",
    "out",
    default="demo-out",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where the outputs go.",
)
def demo(examples: str | None, out: str) -> None:
    """Run every built-in suite on its bundled example records (from any folder: the examples
    are installed with pingce)."""
    from rich.console import Console

    from ..engine import evaluate_suite
    from ..errors import PingceError
    from ..options import RunOptions
    from ..report import print_result, write_outputs
    from ..suites import builtin_suites

    if examples is None:
        examples = str(Path(__file__).resolve().parents[1] / "examples")
    console = Console()
    ran = 0
    with out_checked(out):  # before any work
        for name in builtin_suites():
            data = Path(examples) / name.replace("-", "_") / "records.jsonl"
            if not data.is_file():
                continue
            console.rule(f"[bold]{name}[/bold]: {data}")
            try:
                if _graded_without_a_judge(name):
                    result = _with_stand_in(name, data, console)
                else:
                    result = evaluate_suite(name, data, RunOptions())
                paths = write_outputs(result, Path(out) / name)
            except PingceError as exc:
                fail(exc)
                return
            print_result(result, console)
            console.print(f"outputs: {Path(out) / name}/ ({', '.join(paths)})\n")
            ran += 1
        if not ran:
            fail(f"no example records found under {examples}/<suite>/records.jsonl")
    console.print(f"ran {ran} example suite(s); outputs under {out}/")


def _graded_without_a_judge(name: str) -> bool:
    """Whether a built-in suite's metrics need a judge model and the suite names none (the
    demo calls no model)."""
    from ..suites import load_suite

    suite = load_suite(name)
    judged = any(m.statistic().needs_judge for m in suite.metrics.values())
    return judged and not (suite.spec.judge and suite.spec.judge.judges)


def _with_stand_in(name: str, data: Path, console: Console) -> EvaluationResult:
    """A judged suite run with the stand-in judge (:mod:`pingce.cli.stand_in`): a rule on
    loopback, not a model, so the example runs with none; said before and after the run."""
    import os

    from ..engine import evaluate_suite
    from ..judged import parse_scale
    from ..options import RunOptions
    from ..suites import load_suite
    from .stand_in import LENIENT, MODEL, RULE, serving

    block = load_suite(name).spec.judge
    rubric = data.parent / "rubric.txt"
    scale = parse_scale(block.scale if block is not None else "1-5")
    note = (
        f"{name}: graded by two stand-in judges that score by {RULE}: the numbers say "
        f"nothing about the answers. With a real judge: pingce run {name} --data {data} --judge "
        "openai:MODEL --base-url URL"
        + (f" --rubric {rubric}" if rubric.is_file() else "")
        + " (docs: how-to/judged)"
    )
    console.print(note)
    loopback = "127.0.0.1"
    no_proxy = os.environ.get("NO_PROXY") or os.environ.get("no_proxy") or ""
    if loopback not in no_proxy.split(","):
        os.environ["NO_PROXY"] = ",".join(filter(None, [no_proxy, loopback]))
    with serving(scale) as url:
        options = RunOptions(
            judges=(f"openai:{MODEL}", f"openai:{LENIENT}"),
            base_url=url,
            rubric=str(rubric) if rubric.is_file() else None,
            cache=False,
        )
        return evaluate_suite(name, data, options)
