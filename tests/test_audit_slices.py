"""``pingce audit sample --slice FIELD`` (issue 34): the records are stratified by the judge's
scores within each value of the field, so every slice gets labels; the draw is recorded on the
sheet (``slice=FIELD``) and made again by the audit."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from pingce.audits.sample import draw

from .cli_run import run_pingce

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_one_group_is_the_draw_without_groups() -> None:
    rng = np.random.default_rng(0)
    scores = [rng.random(int(rng.integers(1, 4))) for _ in range(300)]
    plain = draw(scores, 40, seed=3)
    grouped = draw(scores, 40, seed=3, groups=np.zeros(300, dtype=np.intp))
    assert np.array_equal(plain.indices, grouped.indices)
    assert np.array_equal(plain.codes, grouped.codes)


def test_every_group_gets_its_own_strata_and_labels() -> None:
    rng = np.random.default_rng(1)
    groups = rng.integers(0, 5, 400)
    groups[groups == 4] = 3  # four groups, one of them twice as large
    scores = [np.array([s]) for s in rng.random(400)]
    got = draw(scores, 40, seed=0, strata=4, groups=groups)
    assert got.groups is not None
    for h in range(got.sizes.size):  # a stratum lies in one group
        assert set(groups[got.codes == h].tolist()) == {int(got.groups[h])}
    drawn_groups = groups[got.indices]
    for g in range(4):
        assert (drawn_groups == g).sum() >= 2
    assert got.indices.size == 40


def test_a_sliced_sheet_is_drawn_per_slice_and_audits(tmp_path: Path) -> None:
    data = EXAMPLES / "contract_risk" / "records.jsonl"
    kinds = {}
    for n, line in enumerate(data.read_text(encoding="utf-8").splitlines(), 1):
        kinds[n] = json.loads(line)["contract_type"]
    run = tmp_path / "run"
    done = run_pingce(
        "run", "contract-risk", "--data", str(data), "--slice", "contract_type", "--out", str(run)
    )
    assert done.returncode == 0, done.stderr
    sheet = tmp_path / "sheet.csv"
    args = ("audit", "sample", str(run), "--budget", "8", "--slice", "contract_type")
    done = run_pingce(*args, "--out", str(sheet))
    assert done.returncode == 0, done.stderr
    with open(sheet, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["draw"] for r in rows} == {
        "budget=8 seed=0 strata=4 allocation=neyman slice=contract_type"
    }
    by_stratum: dict[str, set[str]] = {}
    for row in rows:
        by_stratum.setdefault(row["stratum"], set()).add(kinds[int(row["line"])])
    assert all(len(v) == 1 for v in by_stratum.values())  # a stratum is one slice's
    drawn_kinds = {kinds[int(r["line"])] for r in rows}
    listed = {kind for kind in set(kinds.values()) if f"(contract_type {kind})" in done.stdout}
    assert len(listed) >= 3  # the example's judged records span several contract types
    assert listed <= drawn_kinds  # every slice with a judged record got labels
    again = tmp_path / "again.csv"
    assert run_pingce(*args, "--out", str(again)).returncode == 0
    assert again.read_bytes() == sheet.read_bytes()
    for row in rows:  # a person's labels: by a rule, the test needs only some
        row["human"] = str(int(float(row["judge_score"] or 0) > 0.5))
    with open(sheet, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    done = run_pingce("audit", str(run), "--labels", str(sheet), "--out", str(tmp_path / "a"))
    assert done.returncode == 0, done.stderr
    audited = json.loads((tmp_path / "a" / "audit.json").read_text(encoding="utf-8"))
    assert {str(v["line"]) for v in audited["verified"]} == {r["line"] for r in rows}
    other = tmp_path / "other"
    assert (
        run_pingce("run", "contract-risk", "--data", str(data), "--out", str(other)).returncode == 0
    )
    done = run_pingce(
        "audit",
        "sample",
        str(other),
        "--budget",
        "8",
        "--slice",
        "contract_type",
        "--out",
        str(tmp_path / "x.csv"),
    )
    assert done.returncode == 2 and "the run did not read 'contract_type'" in done.stderr
    assert not (tmp_path / "x.csv").exists()
