"""``pingce audit``: check a run's judge against people, and correct its metrics.

``pingce audit sample RUN --budget N --out sheet.csv`` draws the records a human should check;
``pingce audit RUN --labels sheet.csv`` reports the judge's agreement with the labels and every
metric that depends on the judge corrected (prediction-powered inference).
"""

from __future__ import annotations

from typing import Any

import click

from .common import fail, out_checked, store_path_option

__all__ = ["audit"]


class _DefaultToCorrect(click.Group):
    """``audit sample ...`` is the sampler; anything else (``audit RUN --labels ...``) is the
    correction, the group's default command."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] in self.commands:
            return super().resolve_command(ctx, args)
        return "correct", self.commands["correct"], args


@click.group(
    cls=_DefaultToCorrect,
    context_settings={"help_option_names": ["-h", "--help"]},
    invoke_without_command=False,
)
def audit() -> None:
    """Check a run's similarity judge against human labels and correct its metrics.

    \b
    1. pingce audit sample RUN --budget 200 --out sheet.csv   (the pairs to label)
    2. fill in the sheet's human column (1 a match, 0 not, or a score in [0, 1])
    3. pingce audit RUN --labels sheet.csv [--out DIR]        (agreement, corrected metrics)

    RUN is a stored run's name (pingce runs) or a run's output folder. Step 3 records the audit
    in the run's folder (audit.json, the checked records marked in records.jsonl, report.html's
    Audit section; pingce view shows it), or writes it to --out DIR alone."""


@audit.command("sample")
@click.argument("run_refs", metavar="RUN [RUN_B]", nargs=-1, required=True)
@click.option("--budget", type=click.IntRange(1), required=True, help="Records to label.")
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False),
    help="The sheet to write: .csv, or .jsonl for JSON Lines.",
)
@click.option(
    "--seed", type=click.IntRange(0), default=0, show_default=True, help="Seed of the draw."
)
@click.option(
    "--strata",
    type=click.IntRange(1, 50),
    default=4,
    show_default=True,
    help="Strata of the records by the judge's score: a score many records share (the judge's "
    "point masses) alone, quantile bins of the rest.",
)
@click.option(
    "--allocation",
    type=click.Choice(["neyman", "uniform"]),
    default="neyman",
    show_default=True,
    help="neyman: more labels where the judge is least sure; uniform: every record equally likely.",
)
@click.option(
    "--slice",
    "slice_field",
    default=None,
    metavar="FIELD",
    help="Also stratify by this field's values (each value its own strata), so that every "
    "slice gets labels. The run must have read the field (run --slice or --context).",
)
@store_path_option
def sample(
    run_refs: tuple[str, ...],
    budget: int,
    out: str,
    seed: int,
    strata: int,
    allocation: Any,
    slice_field: str | None,
    store: str | None,
) -> None:
    """Draw the records of RUN a human should check and write their pairs to a sheet.

    With two runs of one suite over the same records (RUN a candidate, RUN_B a baseline), one
    sheet over both: every pair of both runs on the drawn records, for pingce compare RUN RUN_B
    --labels SHEET."""
    from ..audits.paired import sample_pair_sheet
    from ..audits.runs import reopen, sample_sheet
    from ..errors import PingceError

    if len(run_refs) > 2:
        fail("pingce audit sample takes one run, or two runs to compare (RUN RUN_B)")
        return
    with out_checked(out, file=True):
        try:
            runs = [reopen(ref, store=store) for ref in run_refs]
            if len(runs) == 2:
                drawn = sample_pair_sheet(
                    runs[0],
                    runs[1],
                    budget,
                    out,
                    seed=seed,
                    strata=strata,
                    allocation=allocation,
                    slice=slice_field,
                )
            else:
                drawn = sample_sheet(
                    runs[0],
                    budget,
                    out,
                    seed=seed,
                    strata=strata,
                    allocation=allocation,
                    slice=slice_field,
                )
        except PingceError as exc:
            fail(exc)
            return
    what = "records" if drawn["unit"] is None else f"units of {drawn['unit']}"
    click.echo(
        f"drew {drawn['records']} of the {drawn['decided_records']} {what} the judge decided "
        f"({drawn['pairs']} pairs, {allocation} allocation, seed {seed}) into {out}"
    )
    for stratum in drawn["strata"]:
        where = f" ({slice_field} {stratum['slice']})" if "slice" in stratum else ""
        click.echo(
            f"  stratum {stratum['stratum']}{where}: judge score "
            f"{stratum['judge_score_from']:.3f}-{stratum['judge_score_to']:.3f}, "
            f"{stratum['drawn']} of {stratum['records']} {what}"
        )
    if drawn["expected_half_width"]:
        widths = ", ".join(f"{k} ±{v:.3f}" for k, v in drawn["expected_half_width"].items())
        click.echo(
            f"expected 95% interval with these labels alone (were the people to agree with the "
            f"judge): {widths}; the correction narrows it as far as the judge agrees with them"
        )
    how = (
        "a grade on the judge's scale, or A / B / tie for a preference"
        if drawn["graded"]
        else "1 a match, 0 not, or a score in [0, 1]"
    )
    then = (
        f"pingce compare {' '.join(run_refs)} --labels {out}"
        if len(run_refs) == 2
        else f"pingce audit {run_refs[0]} --labels {out}"
    )
    click.echo(f"then fill in its human column ({how}) and run: {then}")


@audit.command("correct", hidden=True)
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--labels",
    "labels",
    required=True,
    type=click.Path(dir_okay=False),
    help="The filled sheet (from pingce audit sample).",
)
@click.option(
    "--lambda",
    "lam",
    type=click.FloatRange(0, 1),
    default=None,
    help="The weight of the judge's scores: 1 classic PPI, 0 the labels alone [default: tuned "
    "for each metric, PPI++, cross-fitted over --folds].",
)
@click.option(
    "--folds",
    type=click.IntRange(1, 50),
    default=5,
    show_default=True,
    help="The tuned λ of each labelled record comes from the other folds of the labelled "
    "records (cross-fitting: no bias from tuning on the records it corrects); 1 tunes it on "
    "all of them (PPI++, ppi-python's for a mean).",
)
@click.option(
    "--ci-method",
    type=click.Choice(["bca", "percentile", "normal"]),
    default="bca",
    show_default=True,
    help="bca or percentile: a bootstrap resampling the labelled and the other records apart "
    "in each stratum; normal: the delta method's interval.",
)
@click.option(
    "--bootstrap",
    "resamples",
    type=click.IntRange(100, 1_000_000),
    default=1000,
    show_default=True,
    help="Resamples of --ci-method percentile or bca.",
)
@click.option(
    "--ci-level",
    type=click.FloatRange(0.5, 1, max_open=True),
    default=0.95,
    show_default=True,
    help="Level of the intervals.",
)
@click.option(
    "--out",
    "out",
    default=None,
    type=click.Path(file_okay=False),
    help="Write audit.json, audit.html and audit.md here instead, and leave the run's folder "
    "as it is [default: record the audit in the run's folder: audit.json, audit.md, the checked "
    "records marked in records.jsonl, report.html and report.md with an Audit section; a later "
    "audit replaces it].",
)
@store_path_option
def correct(
    run_ref: str,
    labels: str,
    lam: float | None,
    folds: int,
    ci_method: Any,
    resamples: int,
    ci_level: float,
    out: str | None,
    store: str | None,
) -> None:
    """Agreement of RUN's judge with the labels, and every metric that depends on the judge
    corrected by them, recorded in RUN's folder (or written to --out DIR)."""
    from ..audits.correct import Intervals
    from ..audits.recorded import record_audit
    from ..audits.runs import audit_run, reopen, write_audit
    from ..errors import PingceError
    from ..report.console import print_audit

    with out_checked(out):
        try:
            run = reopen(run_ref, store=store)
            ci = Intervals(ci_method, resamples, folds=folds)
            result = audit_run(run, labels, lam=lam, level=ci_level, ci=ci)
            if out:
                path = write_audit(result, out, ci_level)
                said = f"outputs: {path.parent}/ (audit.json, audit.html, audit.md)"
            else:
                names = [p.name for p in record_audit(result, run.folder)]
                said = f"recorded in the run's folder {run.folder}/ ({', '.join(names)})"
        except PingceError as exc:
            fail(exc)
            return
    from rich.console import Console

    console = Console()
    print_audit(result, console, ci_level)
    console.print(said, soft_wrap=True)
