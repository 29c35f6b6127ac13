"""``pingce audit sample`` and ``pingce audit`` (issue 34) on the bundled function-points example
with the lexical judge: the sheet, the labels read back, audit.json equal to the in-process
correction with the same labels and strata, the run's own values as the judge's, and the errors
a user meets (a label that is not one, an empty sheet, a suite without a judge, a data file
changed since the run)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import pingce
from pingce.audits.correct import correct, record_pairs
from pingce.audits.runs import read_sheet, reopen
from pingce.audits.sample import allocate, draw

from .cli_run import run_pingce

EXAMPLES = Path(pingce.__file__).resolve().parent / "examples"
DATA = EXAMPLES / "function_points" / "records.jsonl"
SHEET = EXAMPLES / "function_points" / "audit_sheet.csv"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("audit")
    data = folder / "records.jsonl"
    shutil.copy(DATA, data)
    out = folder / "run"
    done = run_pingce("run", "function-points", "--data", str(data), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_sheet_is_the_drawn_records_pairs_and_is_seeded(run_dir: Path, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.csv"
    done = run_pingce(
        "audit", "sample", str(run_dir), "--budget", "4", "--strata", "2", "--out", str(sheet)
    )
    assert done.returncode == 0, done.stderr
    assert "drew 4 of the 6 records the judge decided" in done.stdout
    rows = _rows(sheet)
    assert list(rows[0]) == [
        "id",
        "line",
        "stratum",
        "a",
        "b",
        "judge_score",
        "judge_verdict",
        "human",
        "draw",
    ]
    assert {r["draw"] for r in rows} == {"budget=4 seed=0 strata=2 allocation=neyman"}
    assert len({r["id"] for r in rows}) == 4 and all(r["human"] == "" for r in rows)
    for row in rows:  # the verdict is the judge's score against τ = 0.7
        assert row["judge_verdict"] == str(int(float(row["judge_score"]) > 0.7))
    # the shipped example sheet is this draw, labelled by hand
    assert [(r["id"], r["a"], r["b"]) for r in rows] == [
        (r["id"], r["a"], r["b"]) for r in _rows(SHEET)
    ]
    again = tmp_path / "again.csv"
    run_pingce(
        "audit", "sample", str(run_dir), "--budget", "4", "--strata", "2", "--out", str(again)
    )
    assert again.read_bytes() == sheet.read_bytes()
    other = tmp_path / "other.jsonl"
    done = run_pingce(
        "audit",
        "sample",
        str(run_dir),
        "--budget",
        "4",
        "--strata",
        "2",
        "--seed",
        "9",
        "--out",
        str(other),
    )
    assert done.returncode == 0, done.stderr
    ids = {json.loads(line)["id"] for line in other.read_text(encoding="utf-8").splitlines()}
    assert len(ids) == 4


def test_audit_json_is_the_correction_of_the_sheet(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "audited"
    done = run_pingce("audit", str(run_dir), "--labels", str(SHEET), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "corrected by the audit" in done.stdout and "sem_f1" in done.stdout
    audited = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    run = reopen(run_dir)
    read = read_sheet(SHEET)
    labels, empty = read.labels, read.empty
    assert empty == 0 and len(labels) == 28
    # the strata and the drawn records from the draw itself (pingce.audits.sample.draw, tested
    # on its own), not from the sheet reader under test
    assert run.scored is not None
    pairs = record_pairs(run.plan, run.table, np.arange(run.table.n))
    decided = np.flatnonzero([bool(p) for p in pairs])
    scores = [np.array([run.scored.table.get(*p) for p in pairs[i]]) for i in decided]
    drawn = draw(scores, 4, seed=0, strata=2)
    codes = np.full(run.table.n, -1, dtype=np.intp)
    codes[decided] = drawn.codes
    on_sheet = np.isin(run.table.lines, [int(r["line"]) for r in _rows(SHEET)])
    assert on_sheet.sum() == 4 and set(np.flatnonzero(on_sheet)) == set(decided[drawn.indices])
    want = correct(run.plan, run.table, run.scored, labels, strata=codes, drawn=on_sheet)
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    for name, metric in audited["metrics"].items():
        assert metric["judge"] == pytest.approx(results["metrics"][name]["value"], abs=1e-12)
        assert metric["value"] == pytest.approx(want[name].value, abs=1e-12), name
        assert metric["depends_on_judge"] == name.startswith("sem_")
    f1 = audited["metrics"]["sem_f1"]
    page = (out / "audit.html").read_text(encoding="utf-8")
    table = (out / "audit.md").read_text(encoding="utf-8")
    for text in (page, table):
        assert f"{f1['value']:.4f}" in text and f"{f1['judge']:.4f}" in text
        assert "set_f1" in text  # listed among the metrics that read no judge
    assert f1["value"] > f1["judge"]  # the lexical judge misses the cross-language matches
    assert (f1["labelled"], f1["unlabelled"], f1["exact"]) == (4, 2, 14)
    checked = {r["id"] for r in _rows(SHEET)}
    assert {v["id"] for v in audited["verified"]} == checked and len(audited["verified"]) == 4
    agreement = audited["agreement"]
    scores = np.array([float(r["judge_score"]) for r in _rows(SHEET)])
    human = np.array([float(r["human"]) for r in _rows(SHEET)]) == 1
    assert agreement["accuracy"] == pytest.approx(np.mean((scores > 0.7) == human))
    from sklearn.metrics import cohen_kappa_score, roc_auc_score

    assert agreement["kappa"] == pytest.approx(cohen_kappa_score(human, scores > 0.7))
    assert agreement["roc_auc"] == pytest.approx(roc_auc_score(human, scores))


def test_what_a_user_gets_wrong_is_a_clear_error(run_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    rows = _rows(SHEET)
    rows[2]["human"] = "maybe"
    with open(bad, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    done = run_pingce("audit", str(run_dir), "--labels", str(bad))
    assert done.returncode == 2
    assert f"{bad}:4" in done.stderr and "'maybe' is not a label" in done.stderr
    empty = tmp_path / "empty.csv"
    for row in rows:
        row["human"] = ""
    with open(empty, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    done = run_pingce("audit", str(run_dir), "--labels", str(empty))
    assert done.returncode == 2 and "the sheet has no label yet" in done.stderr
    plain = tmp_path / "tool"
    tool = EXAMPLES / "tool_use" / "records.jsonl"
    assert run_pingce("run", "tool-use", "--data", str(tool), "--out", str(plain)).returncode == 0
    done = run_pingce(
        "audit", "sample", str(plain), "--budget", "3", "--out", str(tmp_path / "s.csv")
    )
    assert done.returncode == 2 and "nothing to audit" in done.stderr
    assert not (tmp_path / "s.csv").exists()


def test_a_changed_data_file_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "records.jsonl"
    shutil.copy(DATA, data)
    out = tmp_path / "run"
    assert (
        run_pingce("run", "function-points", "--data", str(data), "--out", str(out)).returncode == 0
    )
    lines = data.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[14])
    record["pred_items"] = record["pred_items"][:1]
    lines[14] = json.dumps(record, ensure_ascii=False)
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run_pingce("audit", str(out), "--labels", str(SHEET))
    assert done.returncode == 2 and "changed since the run" in done.stderr


@pytest.mark.parametrize(
    ("sizes", "spreads", "budget"),
    [
        ([100, 50, 10, 3], [0.1, 0.5, 0.5, 0.2], 40),
        ([100, 50, 10, 3], [1, 1, 1, 1], 40),
        ([5, 5], [1, 1], 3),
        ([7, 1, 30], [0.0, 0.0, 0.0], 12),
        ([4, 4, 4], [1, 9, 1], 12),
    ],
)
def test_allocation_spends_the_budget_within_each_stratum(
    sizes: list[int], spreads: list[float], budget: int
) -> None:
    quotas = allocate(np.array(sizes), np.array(spreads, dtype=float), budget)
    assert quotas.sum() == min(budget, sum(sizes))
    assert (quotas <= np.array(sizes)).all() and (quotas >= 0).all()
    if budget >= 2 * len(sizes):
        assert (quotas >= np.minimum(sizes, 2)).all()


def test_neyman_gives_more_to_the_uncertain_stratum() -> None:
    quotas = allocate(np.array([100, 100]), np.array([0.1, 0.4]), 52)
    # 2 each, then 48 split 1:4
    assert quotas.tolist() == [2 + round(48 * 0.2), 2 + round(48 * 0.8)]
    assert allocate(np.array([100, 100]), np.array([1.0, 1.0]), 52).tolist() == [26, 26]


# ---------------------------------------------------------------- answers graded by a model


def test_a_model_judged_run_is_audited_without_asking_the_judge_again(tmp_path: Path) -> None:
    """The judged example graded by the demo's stand-in judge; the server is gone before the
    audit (its answers come from the cache). People's grades on the sheet's scale (1-5, and
    C/P/I for correctness): audit.json equals the in-process correction with those grades, and
    the run's values are the judge's."""
    import os

    from pingce.cli.stand_in import MODEL, serving
    from pingce.judged import parse_scale

    from .cli_run import loopback_pingce

    pingce_cli = loopback_pingce(tmp_path)
    env = pingce_cli.env  # type: ignore[attr-defined]

    data = EXAMPLES / "judged" / "records.jsonl"
    run = tmp_path / "run"
    with serving(parse_scale("1-5")) as url:
        done = pingce_cli(
            "run",
            "judged",
            "--data",
            str(data),
            "--judge",
            f"openai:{MODEL}",
            "--base-url",
            url,
            "--rubric",
            str(EXAMPLES / "judged" / "rubric.txt"),
            "--out",
            str(run),
        )
        assert done.returncode == 0, done.stderr
    sheet = tmp_path / "sheet.csv"
    done = pingce_cli(
        "audit", "sample", str(run), "--budget", "8", "--strata", "2", "--out", str(sheet)
    )
    assert done.returncode == 0, done.stderr
    rows = _rows(sheet)
    assert {r["task"] for r in rows} == {"rubric", "correctness"}
    assert len({r["id"] for r in rows}) == 8 and all(r["output"] for r in rows)
    # a person's grades: one point above the judge's rubric score (capped), C for correctness
    for row in rows:
        if row["task"] == "rubric":
            row["human"] = str(min(5, round(float(row["judge_score"])) + 1))
        else:
            row["human"] = "C"
    with open(sheet, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    out = tmp_path / "audited"
    done = pingce_cli("audit", str(run), "--labels", str(sheet), "--out", str(out))
    assert done.returncode == 0, done.stderr
    audited = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    rubric = audited["metrics"]["rubric_score"]
    assert rubric["judge"] == pytest.approx(results["metrics"]["rubric_score"]["value"], abs=1e-12)
    assert rubric["value"] > rubric["judge"]  # the people grade one point higher
    assert (rubric["labelled"], rubric["unlabelled"]) == (8, 4)
    correctness = audited["metrics"]["correctness"]
    assert correctness["human"] == pytest.approx(1.0)  # all C
    assert audited["agreement"]["graded"]["correctness"]["records"] == 8
    for name in ("score_length_correlation", "judge_agreement"):  # of the judge: not corrected
        one = audited["metrics"][name]
        assert one["measures_the_judge"] and one["value"] is None
        assert one["judge"] == results["metrics"][name]["value"]
    # the same correction in process (reopen reads the judge from the cache too)
    from pingce.audits.runs import _resolved_grades

    old = {k: os.environ.get(k) for k in ("PINGCE_CACHE_DIR", "PINGCE_STORE")}
    os.environ["PINGCE_CACHE_DIR"], os.environ["PINGCE_STORE"] = (
        env["PINGCE_CACHE_DIR"],
        env["PINGCE_STORE"],
    )
    try:
        reopened = reopen(run)
        read = read_sheet(sheet)
        want = correct(
            reopened.plan,
            reopened.table,
            reopened.scored,
            read.labels,
            judged=reopened.judged,
            grades=_resolved_grades(reopened, read),
            strata=_judged_strata(reopened, 8, 2),
            drawn=np.isin(reopened.table.lines, [line for _, line in read.strata]),
        )
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    for name in ("rubric_score", "correctness"):
        assert audited["metrics"][name]["value"] == pytest.approx(want[name].value, abs=1e-12)
    # recorded in the run: each checked record's grades beside the judges' in records.jsonl,
    # the metrics of the judge itself marked as such in report.html
    done = pingce_cli("audit", str(run), "--labels", str(sheet))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in (run / "records.jsonl").read_text("utf-8").splitlines()]
    marks = {r["line"]: r["audit"] for r in lines if "audit" in r}
    assert len(marks) == 8 and set(marks) == {int(r["line"]) for r in rows}
    given = {(int(r["line"]), r["task"]): r for r in rows}
    for line, mark in marks.items():
        assert mark["verified"] and "pairs" not in mark
        assert mark["grades"]["correctness"]["human"] == 1.0
        rubric_row = given[(line, "rubric")]
        assert mark["grades"]["rubric"] == {
            "judge": pytest.approx(float(rubric_row["judge_score"])),
            "human": float(rubric_row["human"]),
        }
    page = (run / "report.html").read_text(encoding="utf-8")
    assert '<td class="audited mnote">of the judge itself</td>' in page
    assert "Of the judge itself, nothing to correct" in page


def test_the_python_api_gives_what_the_command_writes(run_dir: Path, tmp_path: Path) -> None:
    result = pingce.audit(run_dir, SHEET, out=tmp_path / "api")
    written = json.loads((tmp_path / "api" / "audit.json").read_text(encoding="utf-8"))
    assert written == json.loads(json.dumps(result.to_dict()))
    assert result.metrics["sem_f1"].value == pytest.approx(written["metrics"]["sem_f1"]["value"])
    fixed = pingce.audit(run_dir, SHEET, lam=0.0)
    assert fixed.metrics["sem_f1"].value == pytest.approx(fixed.metrics["sem_f1"].human)


def test_the_contract_risk_example_sheet_is_its_draw_and_audits(tmp_path: Path) -> None:
    """examples/contract_risk/audit_sheet.csv is `pingce audit sample --budget 4 --strata 2`
    of the example run, labelled by hand (the window a quote comes from, even when the quote
    altered it: the altered-clause check reads that; part of a two-clause quote is not)."""
    data = tmp_path / "records.jsonl"
    shutil.copy(EXAMPLES / "contract_risk" / "records.jsonl", data)
    out = tmp_path / "run"
    done = run_pingce("run", "contract-risk", "--data", str(data), "--out", str(out))
    assert done.returncode == 0, done.stderr
    sheet = tmp_path / "sheet.csv"
    done = run_pingce(
        "audit", "sample", str(out), "--budget", "4", "--strata", "2", "--out", str(sheet)
    )
    assert done.returncode == 0, done.stderr
    shipped = EXAMPLES / "contract_risk" / "audit_sheet.csv"
    assert [(r["id"], r["a"], r["b"]) for r in _rows(sheet)] == [
        (r["id"], r["a"], r["b"]) for r in _rows(shipped)
    ]
    result = pingce.audit(out, shipped)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for name, audited in result.metrics.items():
        assert audited.judge == pytest.approx(results["metrics"][name]["value"], abs=1e-12)
    judged = {k for k, m in result.metrics.items() if m.depends_on_judge}
    assert {"clause_hallucination_rate", "altered_clause_rate"} <= judged
    assert "accuracy" not in judged


# ------------------------------------------------------------- a judge behind a server


def test_a_remote_judge_is_read_from_the_cache_and_never_asked(tmp_path: Path) -> None:
    """function-points judged by an LLM judge on a loopback server: after the run the server
    is gone and the audit answers every pair from the cache; a run made with --no-cache
    cannot be audited (the error says why) instead of asking the judge again."""
    import subprocess

    from .loopback import LoopbackServer
    from .test_similarity import cli_env, judge_run_args

    env = cli_env(tmp_path / "cache", PINGCE_STORE=str(tmp_path / "runs.db"))
    kept, lost = tmp_path / "kept", tmp_path / "lost"
    with LoopbackServer(lifetime=120) as server:
        for out, extra in ((kept, []), (lost, ["--no-cache"])):
            args = [*judge_run_args(server.url, out), *extra]
            done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr
        asked = len(server.chat())
    assert asked > 0
    sheet = tmp_path / "sheet.csv"
    python = judge_run_args("x", kept)[0]
    command = [
        python,
        "-m",
        "pingce",
        "audit",
        "sample",
        str(kept),
        "--budget",
        "3",
        "--out",
        str(sheet),
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr  # no server: every answer from the cache
    rows = _rows(sheet)
    for row in rows:
        row["human"] = row["judge_verdict"]
    with open(sheet, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    audit = [python, "-m", "pingce", "audit", str(kept), "--labels", str(sheet)]
    done = subprocess.run(audit, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "sem_f1" in done.stdout
    # the run with --no-cache left nothing of its own (its pairs are cached by the first run
    # in this cache): with a cache of its own, nothing is found
    empty = {**env, "PINGCE_CACHE_DIR": str(tmp_path / "empty-cache")}
    audit = [python, "-m", "pingce", "audit", str(lost), "--labels", str(sheet)]
    done = subprocess.run(audit, env=empty, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "not in the answer cache" in done.stderr


def test_a_pairwise_preference_is_audited_and_position_bias_is_left_to_the_judge(
    tmp_path: Path,
) -> None:
    """judged-pairwise graded by the stand-in judge; people prefer answer A on every drawn
    pair: the labels-alone win rate is 1, the corrected one is the in-process correction, and
    the position bias (a measure of the judge) is reported as the run has it."""

    from pingce.cli.stand_in import MODEL, serving
    from pingce.judged import parse_scale

    from .cli_run import loopback_pingce

    pingce_cli = loopback_pingce(tmp_path)

    data = EXAMPLES / "judged_pairwise" / "records.jsonl"
    run = tmp_path / "run"
    with serving(parse_scale("1-5")) as url:
        done = pingce_cli(
            "run",
            "judged-pairwise",
            "--data",
            str(data),
            "--judge",
            f"openai:{MODEL}",
            "--base-url",
            url,
            "--out",
            str(run),
        )
        assert done.returncode == 0, done.stderr
    sheet = tmp_path / "sheet.csv"
    done = pingce_cli("audit", "sample", str(run), "--budget", "6", "--out", str(sheet))
    assert done.returncode == 0, done.stderr
    rows = _rows(sheet)
    assert {r["task"] for r in rows} == {"pairwise"} and len(rows) == 6
    originals = {
        json.loads(line)["id"]: json.loads(line)
        for line in data.read_text(encoding="utf-8").splitlines()
    }
    for row in rows:  # the sheet shows the answers as the judge first saw them: A is output_a
        assert row["output_a"] == originals[row["id"]]["output_a"]
        assert row["output_b"] == originals[row["id"]]["output_b"]
        row["human"] = "A"
    with open(sheet, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    out = tmp_path / "audited"
    done = pingce_cli("audit", str(run), "--labels", str(sheet), "--out", str(out))
    assert done.returncode == 0, done.stderr
    audited = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    win = audited["metrics"]["win_rate"]
    assert win["judge"] == pytest.approx(results["metrics"]["win_rate"]["value"], abs=1e-12)
    assert win["human"] == pytest.approx(1.0, abs=1e-12)
    assert (win["labelled"], win["unlabelled"]) == (6, 3)
    bias = audited["metrics"]["position_bias"]
    assert bias["measures_the_judge"] and bias["value"] is None
    assert bias["judge"] == results["metrics"]["position_bias"]["value"]
    assert "of the judge itself, nothing to correct: position_bias" in done.stdout


def _judged_strata(run: object, budget: int, strata: int) -> np.ndarray:
    """The draw's strata of a model-judged run, from pingce.audits.sample.draw on each record's
    grades mapped to [0, 1] (rubric 1-5 and correctness), not from the code under test."""
    graded = run.judged.graded  # type: ignore[attr-defined]
    per_task = []
    for one in graded.values():
        task = one.entries[0][0]["task"]
        if task in ("rubric", "correctness"):
            low, high = one.scale.low, one.scale.high
            per_task.append((task, (one.values.mean(axis=1) - low) / (high - low)))
    columns = list(dict(per_task).values())
    scores = [np.array(row) for row in np.stack(columns, axis=1)]
    return draw(scores, budget, seed=0, strata=strata).codes


def test_a_label_that_also_covers_an_undrawn_record_is_not_used_for_it(tmp_path: Path) -> None:
    """Three copies of every record (new ids): the same pairs recur in records that were not
    drawn. Only the drawn records count as labelled, as a random sample needs."""
    data = tmp_path / "records.jsonl"
    with open(data, "w", encoding="utf-8") as handle:
        for copy in range(3):
            for line in DATA.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                record["id"] = f"{record['id']}-{copy}"
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    out = tmp_path / "run"
    assert (
        run_pingce("run", "function-points", "--data", str(data), "--out", str(out)).returncode == 0
    )
    sheet = tmp_path / "sheet.csv"
    done = run_pingce("audit", "sample", str(out), "--budget", "4", "--out", str(sheet))
    assert done.returncode == 0, done.stderr
    rows = _rows(sheet)
    for row in rows:
        row["human"] = "1"
    with open(sheet, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = pingce.audit(out, sheet)
    drawn = {r["line"] for r in rows}
    assert len(drawn) == 4
    assert result.metrics["sem_f1"].labelled == 4  # not every record whose pairs recur
    assert {str(v["line"]) for v in result.verified} == drawn
    # the undrawn copies of each drawn record are covered whole by the same labels (as may be
    # other records whose pairs all recur on the sheet): said, counted, not used
    originals = {int(r["line"]) % 20 for r in rows}
    covered = [n for n in result.notes if "outside the draw have every pair labelled" in n]
    assert len(covered) == 1 and int(covered[0].split()[0]) >= 3 * len(originals) - 4


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("noline.csv", "id,stratum,a,b,human,draw\nx,0,a,b,1,d\n", "no column 'line'"),
        ("bad.jsonl", '{"line": 1\n', ":1: not JSON"),
        ("list.jsonl", "[1, 2]\n", "is not an object"),
        ("nodraw.csv", "id,line,stratum,a,b,human\nx,14,0,a,b,1\n", "no column 'draw'"),
        (
            "baddraw.csv",
            "id,line,stratum,a,b,human,draw\nx,14,0,a,b,1,everything\n",
            "is not how pingce audit sample writes a draw",
        ),
    ],
)
def test_a_malformed_sheet_is_an_error_naming_where(
    run_dir: Path, tmp_path: Path, name: str, content: str, message: str
) -> None:
    sheet = tmp_path / name
    sheet.write_text(content, encoding="utf-8")
    done = run_pingce("audit", str(run_dir), "--labels", str(sheet))
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_a_sheet_not_in_utf_8_or_of_another_draw_is_refused(run_dir: Path, tmp_path: Path) -> None:
    gbk = tmp_path / "gbk.csv"
    gbk.write_bytes(SHEET.read_text(encoding="utf-8").encode("gbk"))
    done = run_pingce("audit", str(run_dir), "--labels", str(gbk))
    assert done.returncode == 2 and "not UTF-8" in done.stderr
    rows = _rows(SHEET)
    for row in rows:
        if row["line"] == rows[0]["line"]:
            row["id"] = "bogus"
    other = tmp_path / "other.csv"
    with open(other, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    done = run_pingce("audit", str(run_dir), "--labels", str(other))
    assert done.returncode == 2 and "the sheet's id 'bogus' is not the record's" in done.stderr
    with pytest.raises(pingce.OptionError, match="ci_level 95"):
        pingce.audit(run_dir, SHEET, ci_level=95)
    with pytest.raises(pingce.OptionError, match="lam -3"):
        pingce.audit(run_dir, SHEET, lam=-3)


def test_bootstrap_intervals_of_the_corrected_values(run_dir: Path, tmp_path: Path) -> None:
    """--ci-method percentile or bca: the same corrected values, intervals from resampling the
    labelled and other records apart (seeded: the same twice); the command line gives the
    same as the API; the default is BCa's of 1,000 resamples."""
    normal = pingce.audit(run_dir, SHEET, ci_method="normal")
    default = pingce.audit(run_dir, SHEET, ci_method="bca", bootstrap=1000)
    assert default.to_dict() == pingce.audit(run_dir, SHEET).to_dict()
    boot = pingce.audit(run_dir, SHEET, ci_method="percentile", bootstrap=400)
    again = pingce.audit(run_dir, SHEET, ci_method="percentile", bootstrap=400)
    for name in ("sem_precision", "sem_recall", "sem_f1"):
        a, b = normal.metrics[name], boot.metrics[name]
        assert a.value == pytest.approx(b.value, abs=1e-12)
        assert b.ci_low is not None and b.ci_high is not None
        assert (b.ci_low, b.ci_high) == (again.metrics[name].ci_low, again.metrics[name].ci_high)
        assert (b.ci_low, b.ci_high) != (a.ci_low, a.ci_high)
    out = tmp_path / "boot"
    done = run_pingce(
        "audit",
        str(run_dir),
        "--labels",
        str(SHEET),
        "--ci-method",
        "percentile",
        "--bootstrap",
        "400",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    written = json.loads((out / "audit.json").read_text(encoding="utf-8"))["metrics"]["sem_f1"]
    assert written["ci_low"] == pytest.approx(boot.metrics["sem_f1"].ci_low, abs=1e-12)
    with pytest.raises(pingce.OptionError, match="ci_method 'wild'"):
        pingce.audit(run_dir, SHEET, ci_method="wild")
    with pytest.raises(pingce.OptionError, match="folds 0"):
        pingce.audit(run_dir, SHEET, folds=0)
    done = run_pingce("audit", str(run_dir), "--labels", str(SHEET), "--folds", "0")
    assert done.returncode == 2 and "--folds" in done.stderr
    # two labelled records a stratum: too few for two folds of two, λ tuned on both
    folds_1 = pingce.audit(run_dir, SHEET, folds=1).to_dict()
    assert folds_1 == pingce.audit(run_dir, SHEET).to_dict()
