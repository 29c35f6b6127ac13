"""Two audited runs compared (issue 34): ``pingce audit sample RUN_A RUN_B`` draws one sheet over
both runs' pairs of the same records, and ``pingce compare RUN_A RUN_B --labels SHEET`` corrects
each run and their difference, paired on the records labelled in both.

Data: function-points selection records of two systems over the same gold sets, made here with
a known truth (a predicted item matches the gold item it was made from, whatever its language
or suffix), so the people's labels are exact and the lexical judge is wrong on translations.
Oracles: ``ppi_py.ppi_mean_ci`` on the per-record difference for a mean; the engine's own
statistics with the true labels as the similarity table for a fully labelled sheet; the runs'
own results.json for the judge-only values."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import numpy as np
import pytest

from pingce.audits.correct import (
    Design,
    Entry,
    Intervals,
    correct_entries,
    dense_rows,
    record_pairs,
)
from pingce.audits.paired import _Difference
from pingce.engine.phases import load, plan_run, statistics
from pingce.engine.similarities import Scored
from pingce.options import RunOptions
from pingce.progress import no_progress
from pingce.similarity import SimilarityTable

from .cli_run import run_pingce

ENTITIES = {
    "员工": "Employee",
    "部门": "Department",
    "考勤": "Attendance",
    "订单": "Order",
    "客户": "Customer",
    "物流": "Shipment",
    "合同": "Contract",
    "发票": "Invoice",
    "产品": "Product",
    "库存": "Stock",
}
SEM = ("sem_precision", "sem_recall", "sem_f1")


def _system(golds: list[list[str]], skill: float, seed: int, truth: set) -> list[dict]:
    """A system's records: each gold item found as itself (``skill``), with a suffix, in
    English, or missed; now and then an item that is in no gold set."""
    rng = random.Random(seed)
    rows = []
    for k, gold in enumerate(golds):
        pred = []
        for item in gold:
            r = rng.random()
            found = (
                item
                if r < skill
                else item + "信息表"
                if r < skill + 0.15
                else ENTITIES[item] + " Table"
                if r < skill + 0.3
                else None
            )
            if found is not None:
                pred.append(found)
                truth.add((found, item))
        if rng.random() < 0.3:
            pred.append(rng.choice(list(ENTITIES)) + "日志")
        rows.append(
            {"id": f"r{k:03d}", "task": "selection", "gold_items": gold, "pred_items": pred}
        )
    return rows


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("paired")
    rng = random.Random(7)
    golds = [rng.sample(list(ENTITIES), rng.randint(2, 4)) for _ in range(120)]
    truth: set = set()
    out = {"truth": truth, "folder": folder}
    for name, skill, seed in (("candidate", 0.55, 1), ("baseline", 0.35, 2)):
        data = folder / f"{name}.jsonl"
        rows = _system(golds, skill, seed, truth)
        data.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
        done = run_pingce(
            "run", "function-points", "--data", str(data), "--out", str(folder / name)
        )
        assert done.returncode == 0, done.stderr
        out[name] = folder / name
        out[f"{name}_data"] = data
    return out


def _fill(sheet: Path, truth: set, out: Path) -> list[dict[str, str]]:
    with open(sheet, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["human"] = str(int((row["a"], row["b"]) in truth))
    with open(out, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def _sample(runs: dict, budget: int, tmp_path: Path, *extra: str) -> Path:
    sheet = tmp_path / "sheet.csv"
    done = run_pingce(
        "audit",
        "sample",
        str(runs["candidate"]),
        str(runs["baseline"]),
        "--budget",
        str(budget),
        "--out",
        str(sheet),
        *extra,
    )
    assert done.returncode == 0, done.stderr
    assert "pingce compare" in done.stdout
    return sheet


def _compare(runs: dict, labels: Path, out: Path, *extra: str) -> dict:
    done = run_pingce(
        "compare",
        str(runs["candidate"]),
        str(runs["baseline"]),
        "--labels",
        str(labels),
        "--out",
        str(out),
        *extra,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    result: dict = json.loads((out / "audit_comparison.json").read_text(encoding="utf-8"))
    return result


def _pairs(data: Path) -> dict[str, set]:
    """Each record's pairs the judge decides (the engine's own list: the pairs left after
    exact matches)."""
    plan = plan_run("function-points", RunOptions(similarity="lexical", bootstrap=0))
    table = load(plan, data, no_progress)
    pairs = record_pairs(plan, table, np.arange(table.n))
    return {str(table.ids[i]): set(p) for i, p in enumerate(pairs)}


def test_one_sheet_holds_both_runs_pairs_of_the_drawn_records(runs: dict, tmp_path: Path) -> None:
    sheet = _sample(runs, 30, tmp_path)
    with open(sheet, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[:4] == ["id", "line", "stratum", "run"]
    assert {r["draw"] for r in rows} == {"budget=30 seed=0 strata=4 allocation=neyman runs=2"}
    ours, theirs = _pairs(runs["candidate_data"]), _pairs(runs["baseline_data"])
    drawn = {r["id"] for r in rows}
    assert len(drawn) == 30
    for record in drawn:  # every pair of both runs once, said whose
        on_sheet = {(r["a"], r["b"]): r["run"] for r in rows if r["id"] == record}
        assert set(on_sheet) == ours[record] | theirs[record]
        for pair, whose in on_sheet.items():
            want = {
                (True, True): "both",
                (True, False): "candidate",
                (False, True): "baseline",
            }[(pair in ours[record], pair in theirs[record])]
            assert whose == want
    again = tmp_path / "again.csv"
    run_pingce(
        "audit",
        "sample",
        str(runs["candidate"]),
        str(runs["baseline"]),
        "--budget",
        "30",
        "--out",
        str(again),
    )
    assert again.read_bytes() == sheet.read_bytes()


def _human_values(
    data: Path, labels: dict, suite: str = "function-points", metrics: tuple = SEM
) -> dict[str, float]:
    """The suite's ``metrics`` on the records of ``data`` with ``labels`` (by pair) as the
    judge's scores: the engine's own statistics."""
    plan = plan_run(suite, RunOptions(similarity="lexical", bootstrap=0))
    table = load(plan, data, no_progress)
    needed = set().union(*map(set, record_pairs(plan, table, np.arange(table.n))))
    values = {p: float(labels[p]) for p in needed}
    blocks = statistics(plan, table, Scored(SimilarityTable(values, "people"), None, "people"))  # type: ignore[arg-type]
    out = {}
    for metric in metrics:
        rows = dense_rows(blocks[plan.keys[metric]])
        assert rows is not None
        out[metric] = float(plan.metrics[metric].finalize(rows.sum(axis=0)))
    return out


def test_every_record_labelled_gives_the_true_difference(runs: dict, tmp_path: Path) -> None:
    sheet = _sample(runs, 1000, tmp_path)  # every record either run's judge decided for
    filled = tmp_path / "filled.csv"
    _fill(sheet, runs["truth"], filled)
    got = _compare(runs, filled, tmp_path / "out", "--lambda", "0", "--bootstrap", "0")
    with open(filled, encoding="utf-8", newline="") as handle:
        labels = {(r["a"], r["b"]): float(r["human"]) for r in csv.DictReader(handle)}
    ours = _human_values(runs["candidate_data"], labels)
    theirs = _human_values(runs["baseline_data"], labels)
    for metric in SEM:
        sides = got["metrics"][metric]
        assert sides["candidate"]["value"] == pytest.approx(ours[metric], abs=1e-12)
        assert sides["baseline"]["value"] == pytest.approx(theirs[metric], abs=1e-12)
        assert sides["difference"]["value"] == pytest.approx(
            ours[metric] - theirs[metric], abs=1e-12
        )
        assert sides["difference"]["unlabelled"] == 0


def test_the_corrected_difference_beside_the_runs_own_values(runs: dict, tmp_path: Path) -> None:
    sheet = _sample(runs, 40, tmp_path)
    filled = tmp_path / "filled.csv"
    rows = _fill(sheet, runs["truth"], filled)
    got = _compare(runs, filled, tmp_path / "ppi", "--lambda", "1", "--bootstrap", "0")
    results = {
        side: json.loads((runs[side] / "results.json").read_text(encoding="utf-8"))
        for side in ("candidate", "baseline")
    }
    for metric in SEM:
        sides = got["metrics"][metric]
        for side in ("candidate", "baseline"):  # the judge alone: the run's own value
            assert sides[side]["judge"] == pytest.approx(
                results[side]["metrics"][metric]["value"], abs=1e-12
            )
        d = sides["difference"]
        assert d["judge"] == pytest.approx(sides["candidate"]["judge"] - sides["baseline"]["judge"])
        # with one λ for all, the difference of the corrected means' values is the difference
        assert d["value"] == pytest.approx(
            sides["candidate"]["value"] - sides["baseline"]["value"], abs=1e-12
        )
        assert d["ci_low"] < d["value"] < d["ci_high"]
        assert d["labelled"] == 40
    assert got["metrics"]["set_f1"]["difference"]["depends_on_judge"] is False
    assert {v["id"] for v in got["verified"]} == {r["id"] for r in rows}
    # the default: PPI++ and a bootstrap interval, seeded
    boot = _compare(runs, filled, tmp_path / "boot")
    again = _compare(runs, filled, tmp_path / "again")
    assert boot == again
    d = boot["metrics"]["sem_f1"]["difference"]
    assert d["ci_low"] < d["value"] < d["ci_high"]


def test_a_regression_gate_judges_the_corrected_difference(runs: dict, tmp_path: Path) -> None:
    sheet = _sample(runs, 40, tmp_path)
    filled = tmp_path / "filled.csv"
    _fill(sheet, runs["truth"], filled)
    gate = ("--bootstrap", "0", "--fail-on-regression", "sem_recall:0.01")
    done = run_pingce(
        "compare", str(runs["candidate"]), str(runs["baseline"]), "--labels", str(filled), *gate
    )
    assert done.returncode == 0 and "1 gate(s) passed" in done.stdout, done.stderr
    done = run_pingce(  # the other way round: the better system is the baseline
        "compare", str(runs["baseline"]), str(runs["candidate"]), "--labels", str(filled), *gate
    )
    assert done.returncode == 4
    assert "gate failed: sem_recall: the interval of delta" in done.stderr
    done = run_pingce(
        "compare",
        str(runs["candidate"]),
        str(runs["baseline"]),
        "--labels",
        str(filled),
        "--fail-on-regression",
        "set_f1:0.01",
    )
    assert done.returncode == 2 and "set_f1 is not corrected by the audit" in done.stderr


def test_sheets_of_one_run_and_of_two_are_not_mixed_up(runs: dict, tmp_path: Path) -> None:
    one = tmp_path / "one.csv"
    done = run_pingce(
        "audit", "sample", str(runs["candidate"]), "--budget", "10", "--out", str(one)
    )
    assert done.returncode == 0, done.stderr
    filled_one = tmp_path / "one_filled.csv"
    _fill(one, runs["truth"], filled_one)
    done = run_pingce(
        "compare",
        str(runs["candidate"]),
        str(runs["baseline"]),
        "--labels",
        str(filled_one),
    )
    assert done.returncode == 2
    assert "drawn over one run" in done.stderr and "pingce audit sample RUN_A RUN_B" in done.stderr
    both = _sample(runs, 10, tmp_path)
    filled = tmp_path / "both_filled.csv"
    _fill(both, runs["truth"], filled)
    done = run_pingce("audit", str(runs["candidate"]), "--labels", str(filled))
    assert done.returncode == 2 and "drawn over two runs" in done.stderr
    done = run_pingce(  # --labels is for two stored runs
        "compare",
        "function-points",
        "--data",
        str(runs["candidate_data"]),
        "--baseline",
        str(runs["baseline_data"]),
        "--labels",
        str(filled),
    )
    assert done.returncode == 2 and "--labels and --lambda are for two stored runs" in done.stderr


def test_runs_of_other_records_are_refused_naming_one(runs: dict, tmp_path: Path) -> None:
    data = tmp_path / "fewer.jsonl"
    lines = runs["baseline_data"].read_text(encoding="utf-8").splitlines()
    data.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    out = tmp_path / "fewer"
    assert (
        run_pingce("run", "function-points", "--data", str(data), "--out", str(out)).returncode == 0
    )
    done = run_pingce(
        "audit",
        "sample",
        str(runs["candidate"]),
        str(out),
        "--budget",
        "10",
        "--out",
        str(tmp_path / "s.csv"),
    )
    assert done.returncode == 2 and "record 'r119'" in done.stderr, done.stderr
    assert not (tmp_path / "s.csv").exists()


class _Mean:
    """A mean of a per-record value: rows ``[y, 1]``."""

    measures_the_judge = False

    def finalize(self, total: np.ndarray) -> np.ndarray:
        total = np.asarray(total, dtype=np.float64)
        out: np.ndarray = total[..., 0] / total[..., 1]
        return out


@pytest.mark.parametrize("lam", [1.0, 0.5, None])
def test_the_difference_of_two_means_is_ppi_py_on_the_per_record_difference(
    lam: float | None,
) -> None:
    """A fixed λ: exactly ppi_py on ``y_A - y_B``. Tuned: pingce fits λ for each run's column
    (the metric's linearisation regressed on both judges' rows), a wider family than one λ for
    the difference, so its interval is no wider than ppi_py's PPI++ (whose estimate it need
    not equal)."""
    import ppi_py

    rng = np.random.default_rng(3)
    n, labelled_n = 3000, 300
    truth_a = rng.random(n) < 0.6
    truth_b = rng.random(n) < 0.5
    judge_a = np.where(rng.random(n) < 0.85, truth_a, ~truth_a).astype(float)
    judge_b = np.where(rng.random(n) < 0.8, truth_b, ~truth_b).astype(float)
    ones = np.ones(n)
    labelled = np.zeros(n, dtype=bool)
    labelled[rng.choice(n, labelled_n, replace=False)] = True
    judge = np.column_stack([judge_a, ones, judge_b, ones])
    human = np.column_stack([truth_a.astype(float), ones, truth_b.astype(float), ones])
    entry = Entry(_Difference(_Mean(), _Mean(), 2), judge, human, True)
    design = Design.of(labelled, np.zeros(n, dtype=bool), None, None)
    got = correct_entries({"d": entry}, design, lam=lam, ci=Intervals("normal"))["d"]
    y = (truth_a.astype(float) - truth_b)[labelled]
    yhat = (judge_a - judge_b)[labelled]
    rest = (judge_a - judge_b)[~labelled]
    point = ppi_py.ppi_mean_pointestimate(y, yhat, rest, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, yhat, rest, alpha=0.05, lam=lam)
    low, high = float(np.ravel(low)[0]), float(np.ravel(high)[0])
    assert got.value is not None and got.ci_low is not None and got.ci_high is not None
    if lam is None:
        assert got.ci_high - got.ci_low <= (high - low) * (1 + 1e-9)
        assert low < got.value < high
        return
    assert got.value == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
    assert got.ci_low == pytest.approx(low, abs=1e-9)
    assert got.ci_high == pytest.approx(high, abs=1e-9)


class _Ratio:
    """A ratio of two sums: rows ``[numerator, denominator]`` (a precision: true matches among
    the predicted ones)."""

    measures_the_judge = False

    def finalize(self, total: np.ndarray) -> np.ndarray:
        total = np.asarray(total, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out: np.ndarray = total[..., 0] / total[..., 1]
        return out


@pytest.mark.parametrize("metric", ["mean", "ratio"])
def test_the_corrected_difference_covers_the_true_one(metric: str) -> None:
    """400 audits of two synthetic systems scored by a judge that errs 15-20% of the time: the
    95% interval of the corrected difference covers the true difference (the systems' values
    on every record's true label) 92-98% of the time (400 draws: ±2.2 points at 95%)."""
    rng = np.random.default_rng(11)
    n, labelled_n, reps = 2000, 200, 400
    truth_a, truth_b = rng.random(n) < 0.6, rng.random(n) < 0.5
    predicted_a, predicted_b = rng.random(n) < 0.7, rng.random(n) < 0.8
    kind = _Mean if metric == "mean" else _Ratio

    def rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if metric == "mean":
            return np.column_stack([a, np.ones(n), b, np.ones(n)]).astype(float)
        return np.column_stack([a & predicted_a, predicted_a, b & predicted_b, predicted_b]).astype(
            float
        )

    human = rows(truth_a, truth_b)
    true = kind().finalize(human[:, :2].sum(axis=0)) - kind().finalize(human[:, 2:].sum(axis=0))
    covered = 0
    for _ in range(reps):
        judge_a = np.where(rng.random(n) < 0.85, truth_a, ~truth_a)
        judge_b = np.where(rng.random(n) < 0.8, truth_b, ~truth_b)
        labelled = np.zeros(n, dtype=bool)
        labelled[rng.choice(n, labelled_n, replace=False)] = True
        entry = Entry(_Difference(kind(), kind(), 2), rows(judge_a, judge_b), human, True)
        design = Design.of(labelled, np.zeros(n, dtype=bool), None, None)
        got = correct_entries({"d": entry}, design, ci=Intervals("normal"))["d"]
        assert got.ci_low is not None and got.ci_high is not None
        covered += got.ci_low <= true <= got.ci_high
    assert 0.92 <= covered / reps <= 0.98, covered / reps


def test_two_runs_graded_by_a_model_are_compared_on_the_people_s_grades(tmp_path: Path) -> None:
    """The judged example and a weaker system (every other answer replaced by "I do not know."),
    both graded by the demo's stand-in judge; the server is gone before the audit (its answers
    come from the cache). Every record labelled and λ 0: each run's corrected rubric score is
    the mean of the people's grades of its answers, and correctness the share they call C."""
    from pingce.cli.stand_in import MODEL, serving
    from pingce.judged import parse_scale

    from .cli_run import loopback_pingce

    pingce_cli = loopback_pingce(tmp_path)
    source = Path(__file__).resolve().parents[1] / "examples" / "judged"
    records = [json.loads(x) for x in (source / "records.jsonl").read_text("utf-8").splitlines()]
    weaker = [{**r, "output": "I do not know."} if k % 2 else r for k, r in enumerate(records)]
    runs = {}
    with serving(parse_scale("1-5")) as url:
        for name, rows in (("candidate", records), ("baseline", weaker)):
            data = tmp_path / f"{name}.jsonl"
            data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
            runs[name] = tmp_path / name
            done = pingce_cli(
                *("run", "judged", "--data", str(data), "--judge", f"openai:{MODEL}"),
                *("--base-url", url, "--rubric", str(source / "rubric.txt")),
                *("--out", str(runs[name])),
            )
            assert done.returncode == 0, done.stderr
    sheet = tmp_path / "sheet.csv"
    done = pingce_cli(
        *("audit", "sample", str(runs["candidate"]), str(runs["baseline"])),
        *("--budget", "12", "--strata", "1", "--out", str(sheet)),
    )
    assert done.returncode == 0, done.stderr
    with open(sheet, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 12 * 2 * 2  # records, tasks (rubric, correctness), runs
    weak_ids = {r["id"] for k, r in enumerate(records) if k % 2}
    grades: dict[str, list[float]] = {"candidate": [], "baseline": []}
    for row in rows:
        assert row["run"] in grades
        answer = row["output"]
        if row["run"] == "baseline" and row["id"] in weak_ids:
            assert answer == "I do not know."
        poor = answer == "I do not know."
        if row["task"] == "rubric":
            grade = 1 if poor else 4
            grades[row["run"]].append(grade)
            row["human"] = str(grade)
        else:
            row["human"] = "I" if poor else "C"
    with open(sheet, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    out = tmp_path / "out"
    done = pingce_cli(
        *("compare", str(runs["candidate"]), str(runs["baseline"]), "--labels", str(sheet)),
        *("--lambda", "0", "--bootstrap", "0", "--out", str(out)),
    )
    assert done.returncode == 0, done.stderr + done.stdout
    got = json.loads((out / "audit_comparison.json").read_text(encoding="utf-8"))
    results = {
        side: json.loads((runs[side] / "results.json").read_text(encoding="utf-8")) for side in runs
    }
    rubric, correctness = got["metrics"]["rubric_score"], got["metrics"]["correctness"]
    for side in ("candidate", "baseline"):
        want = results[side]["metrics"]["rubric_score"]["value"]
        assert rubric[side]["judge"] == pytest.approx(want, abs=1e-12)
        mean = float(np.mean(grades[side]))
        assert rubric[side]["value"] == pytest.approx(mean, abs=1e-12), side
    assert correctness["candidate"]["value"] == pytest.approx(1.0)
    assert correctness["baseline"]["value"] == pytest.approx(0.5)
    assert correctness["difference"]["value"] == pytest.approx(0.5)
    assert rubric["difference"]["value"] == pytest.approx(
        np.mean(grades["candidate"]) - np.mean(grades["baseline"]), abs=1e-12
    )
    assert "rubric (baseline)" in got["agreement"]["graded"]


def test_dialogues_are_paired_and_counted_as_units(tmp_path: Path) -> None:
    """tcm-dialogue's example and a copy with every third turn's text replaced: the sheet draws
    dialogues, and with all of them labelled and λ 0 the corrected semantic accuracy of each run
    is the engine's on the people's labels."""
    source = Path(__file__).resolve().parents[1] / "examples" / "tcm_dialogue" / "records.jsonl"
    rows = [json.loads(x) for x in source.read_text("utf-8").splitlines()]
    weaker = [{**r, "pred_text": "不详。"} if k % 3 == 0 else r for k, r in enumerate(rows)]
    data = {"candidate": source, "baseline": tmp_path / "baseline.jsonl"}
    data["baseline"].write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in weaker), encoding="utf-8"
    )
    for name, path in data.items():
        done = run_pingce("run", "tcm-dialogue", "--data", str(path), "--out", str(tmp_path / name))
        assert done.returncode == 0, done.stderr
    sheet = tmp_path / "sheet.csv"
    done = run_pingce(
        *("audit", "sample", str(tmp_path / "candidate"), str(tmp_path / "baseline")),
        *("--budget", "100", "--out", str(sheet)),
    )
    assert done.returncode == 0, done.stderr
    dialogues = len({r["dialogue_id"] for r in rows})
    assert f"drew {dialogues} of the {dialogues} units of dialogue_id" in done.stdout
    with open(sheet, encoding="utf-8", newline="") as handle:
        filled = list(csv.DictReader(handle))
    for row in filled:  # a person: the placeholder matches nothing, the rest by a rule
        row["human"] = "0" if row["a"] == "不详。" else str(int(float(row["judge_score"]) > 0.3))
    with open(sheet, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(filled[0]))
        writer.writeheader()
        writer.writerows(filled)
    labels = {(r["a"], r["b"]): float(r["human"]) for r in filled}
    out = tmp_path / "out"
    done = run_pingce(
        *("compare", str(tmp_path / "candidate"), str(tmp_path / "baseline")),
        *("--labels", str(sheet), "--lambda", "0", "--bootstrap", "0", "--out", str(out)),
    )
    assert done.returncode == 0, done.stderr + done.stdout
    got = json.loads((out / "audit_comparison.json").read_text(encoding="utf-8"))
    assert got["unit"] == "dialogue_id"
    metric = "hybrid_semantic_accuracy"
    sides = got["metrics"][metric]
    for name in ("candidate", "baseline"):
        want = _human_values(data[name], labels, "tcm-dialogue", (metric,))[metric]
        assert sides[name]["value"] == pytest.approx(want, abs=1e-12), name
        assert sides[name]["labelled"] == dialogues
    assert sides["difference"]["value"] == pytest.approx(
        sides["candidate"]["value"] - sides["baseline"]["value"], abs=1e-12
    )


def test_the_shipped_pair_sheet_is_the_draw_of_the_two_examples(tmp_path: Path) -> None:
    """examples/function_points/audit_sheet_pair.csv is the budget-4 draw over the example and
    its baseline, labelled by hand; the compare reads it, and the judge-only values are the
    runs' own."""
    examples = Path(__file__).resolve().parents[1] / "examples" / "function_points"
    runs = {}
    for name, data in (("run", "records.jsonl"), ("base", "baseline.jsonl")):
        runs[name] = tmp_path / name
        done = run_pingce(
            "run", "function-points", "--data", str(examples / data), "--out", str(runs[name])
        )
        assert done.returncode == 0, done.stderr
    sheet = tmp_path / "sheet.csv"
    done = run_pingce(
        *("audit", "sample", str(runs["run"]), str(runs["base"]), "--budget", "4"),
        *("--strata", "2", "--out", str(sheet)),
    )
    assert done.returncode == 0, done.stderr
    shipped = examples / "audit_sheet_pair.csv"
    with open(sheet, encoding="utf-8", newline="") as a, open(shipped, encoding="utf-8") as b:
        drawn, labelled = list(csv.DictReader(a)), list(csv.DictReader(b))
    keys = ("id", "line", "stratum", "run", "a", "b", "draw")
    assert [tuple(r[k] for k in keys) for r in drawn] == [
        tuple(r[k] for k in keys) for r in labelled
    ]
    assert all(r["human"] in ("0", "1") for r in labelled)
    out = tmp_path / "out"
    done = run_pingce(
        *("compare", str(runs["run"]), str(runs["base"]), "--labels", str(shipped)),
        *("--bootstrap", "0", "--out", str(out)),
    )
    assert done.returncode == 0, done.stderr
    got = json.loads((out / "audit_comparison.json").read_text(encoding="utf-8"))
    for name, side in (("run", "candidate"), ("base", "baseline")):
        results = json.loads((runs[name] / "results.json").read_text(encoding="utf-8"))
        assert got["metrics"]["sem_f1"][side]["judge"] == pytest.approx(
            results["metrics"]["sem_f1"]["value"], abs=1e-12
        )
    assert got["metrics"]["sem_f1"]["difference"]["labelled"] == 4


def test_the_python_api_gives_what_the_command_writes(runs: dict, tmp_path: Path) -> None:
    import pingce

    sheet = _sample(runs, 30, tmp_path)
    filled = tmp_path / "filled.csv"
    _fill(sheet, runs["truth"], filled)
    written = _compare(runs, filled, tmp_path / "cli", "--bootstrap", "0")
    result = pingce.audit(
        runs["candidate"],
        filled,
        baseline=runs["baseline"],
        ci_method="normal",
        out=tmp_path / "api",
    )
    on_disk = json.loads((tmp_path / "api" / "audit_comparison.json").read_text("utf-8"))
    assert on_disk == json.loads(json.dumps(result.to_dict()))
    for name in SEM:  # the delta method's interval, as --bootstrap 0
        assert on_disk["metrics"][name] == written["metrics"][name]
