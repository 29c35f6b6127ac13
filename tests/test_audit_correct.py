"""Every metric of a run corrected by a human audit of its similarity judge
(:func:`pingce.audits.correct.correct`), on the bundled function-points records with the
lexical backend as the judge and planted human labels. Expected values come from the engine's
own statistics run with the human labels as the similarity table, or from ``ppi_py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pingce
from pingce.audits.correct import correct, dense_rows, record_pairs
from pingce.engine.phases import load, plan_run, similarities, statistics
from pingce.engine.similarities import Scored
from pingce.errors import InputError
from pingce.options import RunOptions
from pingce.progress import no_progress
from pingce.similarity import SimilarityTable

DATA = Path(pingce.__file__).resolve().parent / "examples" / "function_points" / "records.jsonl"
SEM = ("sem_precision", "sem_recall", "sem_f1")


@pytest.fixture(scope="module")
def run() -> tuple:
    plan = plan_run("function-points", RunOptions(similarity="lexical", bootstrap=0))
    table = load(plan, DATA, no_progress)
    scored = similarities(plan, [table], no_progress)
    assert scored is not None
    pairs = record_pairs(plan, table, np.arange(table.n))
    return plan, table, scored, pairs


def _human(scored: Scored, pairs: list, keep: np.ndarray, seed: int = 0) -> dict:
    """Labels for the records in ``keep``: the judge's verdict at 0.5, flipped 25% of the time."""
    rng = np.random.default_rng(seed)
    labels = {}
    for i in np.flatnonzero(keep).tolist():
        for pair in pairs[i]:
            agree = scored.table.get(*pair) > 0.5
            labels[pair] = float(agree ^ (rng.random() < 0.25))
    return labels


def test_every_record_labelled_with_lambda_0_is_the_run_on_the_human_labels(run: tuple) -> None:
    plan, table, scored, pairs = run
    decided = np.array([bool(p) for p in pairs])
    labels = _human(scored, pairs, decided)
    got = correct(plan, table, scored, labels, lam=0.0)
    values = {**scored.table.values, **labels}
    human = statistics(plan, table, Scored(SimilarityTable(values, "h"), scored.stats, "h"))
    for name in SEM:
        key = plan.keys[name]
        rows = dense_rows(human[key])
        assert rows is not None
        want = float(plan.metrics[name].finalize(rows.sum(axis=0)))
        assert got[name].value == pytest.approx(want, abs=1e-12), name
        assert got[name].human == pytest.approx(want, abs=1e-12), name
        assert got[name].depends_on_judge
        assert (got[name].labelled, got[name].unlabelled) == (int(decided.sum()), 0)
    judge_rows = dense_rows(statistics(plan, table, scored)[plan.keys["sem_f1"]])
    assert judge_rows is not None
    run_value = float(plan.metrics["sem_f1"].finalize(judge_rows.sum(axis=0)))
    assert got["sem_f1"].judge == pytest.approx(run_value, abs=1e-12)
    assert got["sem_f1"].value != pytest.approx(run_value)  # the labels disagree with the judge


def test_metrics_without_the_judge_are_unchanged(run: tuple) -> None:
    plan, table, scored, pairs = run
    decided = np.flatnonzero([bool(p) for p in pairs])
    keep = np.zeros(table.n, bool)
    keep[decided[::2]] = True
    got = correct(plan, table, scored, _human(scored, pairs, keep))
    result = pingce.evaluate("function-points", DATA, similarity="lexical", bootstrap=0)
    for name in ("judge_accuracy", "set_f1"):
        assert not got[name].depends_on_judge
        assert got[name].value == got[name].judge == pytest.approx(result.value(name), abs=1e-12)
        assert got[name].ci_low is None
    for name in SEM:
        assert got[name].judge == pytest.approx(result.value(name), abs=1e-12)
        audited = got[name]
        assert audited.labelled == keep.sum() and audited.unlabelled == len(decided) - keep.sum()
        assert audited.exact == table.n - len(decided)  # records the judge decided nothing for
        assert audited.ci_low is not None and audited.ci_high is not None
        assert audited.ci_low <= audited.value <= audited.ci_high


def test_the_corrected_ratio_is_finalize_of_ppi_py_s_means(run: tuple) -> None:
    """With λ = 1, each component of the decided records' mean row is ``ppi_py``'s PPI
    estimate; the records the judge decided nothing for (no pair, or only exact matches) add
    their own rows, known exactly: the corrected ratio is ``finalize`` of the two together."""
    ppi_py = pytest.importorskip("ppi_py")
    plan, table, scored, pairs = run
    decided = np.array([bool(p) for p in pairs])
    keep = decided & (np.arange(table.n) % 3 != 0)
    labels = _human(scored, pairs, keep, seed=4)
    got = correct(plan, table, scored, labels, lam=1.0)
    values = {**scored.table.values, **labels}
    human_blocks = statistics(plan, table, Scored(SimilarityTable(values, "h"), scored.stats, "h"))
    judge_blocks = statistics(plan, table, scored)
    for name in SEM:
        key = plan.keys[name]
        human, judge = dense_rows(human_blocks[key]), dense_rows(judge_blocks[key])
        assert human is not None and judge is not None
        np.testing.assert_array_equal(human[~decided], judge[~decided])
        y, yhat, rest = human[keep], judge[keep], judge[decided & ~keep]
        means = np.squeeze(ppi_py.ppi_mean_pointestimate(y, yhat, rest, lam=1))
        sums = means * decided.sum() + judge[~decided].sum(axis=0)
        want = float(plan.metrics[name].finalize(sums))
        assert got[name].value == pytest.approx(want, abs=1e-12), name


def test_no_labelled_record_is_an_error(run: tuple) -> None:
    plan, table, scored, _ = run
    with pytest.raises(InputError, match="no record has a human label"):
        correct(plan, table, scored, {})


def test_the_planned_width_is_the_labels_alone_interval_the_audit_then_reports(
    tmp_path: Path,
) -> None:
    """The half-width printed before labelling predicts the labels-alone (λ = 0) interval that
    the audit reports once people have labelled the drawn records, when they agree with the
    judge: its mean over 300 draws of the same quotas from a 1,200-record set, within 10%."""
    import json

    from pingce.audits import Stratum, corrected_mean, delta_interval
    from pingce.audits.correct import planned_half_widths
    from pingce.audits.sample import draw

    lines = DATA.read_text(encoding="utf-8").splitlines()
    many = tmp_path / "many.jsonl"
    with open(many, "w", encoding="utf-8") as handle:
        for copy in range(60):
            for line in lines:
                record = json.loads(line)
                record["id"] = f"{record['id']}-{copy}"
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    plan = plan_run("function-points", RunOptions(similarity="lexical", bootstrap=0))
    table = load(plan, many, no_progress)
    scored = similarities(plan, [table], no_progress)
    assert scored is not None
    pairs = record_pairs(plan, table, np.arange(table.n))
    decided = np.flatnonzero([bool(p) for p in pairs])
    scores = [np.array([scored.table.get(*p) for p in pairs[i]]) for i in decided]
    drawn = draw(scores, 60, seed=0, strata=3)
    codes = np.full(table.n, -1, dtype=np.intp)
    codes[decided] = drawn.codes
    planned = planned_half_widths(plan, table, scored, None, codes, drawn.quotas)
    rows = dense_rows(statistics(plan, table, scored)[plan.keys["sem_f1"]])
    assert rows is not None
    metric = plan.metrics["sem_f1"]

    def finalize(m: np.ndarray) -> float:
        return float(metric.finalize(m * table.n))

    rng = np.random.default_rng(1)
    exact = rows[codes == -1]
    widths = []
    for _ in range(300):
        strata = [Stratum(exact, exact, np.empty((0, rows.shape[1])))]
        for h, quota in enumerate(drawn.quotas.tolist()):
            members = np.flatnonzero(codes == h)
            pick = rng.choice(members, size=quota, replace=False)
            rest = np.setdiff1d(members, pick)
            strata.append(Stratum(rows[pick], rows[pick], rows[rest]))
        _, low, high = delta_interval(finalize, corrected_mean(strata, 0.0))
        widths.append((high - low) / 2)
    assert planned["sem_f1"] == pytest.approx(float(np.mean(widths)), rel=0.10)


def test_a_stratum_without_a_labelled_record_is_an_error_that_says_what_to_do(run: tuple) -> None:
    plan, table, scored, pairs = run
    decided = np.flatnonzero([bool(p) for p in pairs])
    keep = np.zeros(table.n, bool)
    keep[decided[:2]] = True
    strata = np.zeros(table.n, dtype=np.intp)
    strata[decided[3:]] = 1  # stratum 1 has no labelled record
    with pytest.raises(
        InputError, match=r"stratum 1 of the sheet has 0 record\(s\) labelled whole"
    ):
        correct(plan, table, scored, _human(scored, pairs, keep), strata=strata)


def test_a_dialogue_suite_is_audited_by_dialogue(tmp_path: Path) -> None:
    """tcm-dialogue (unit: dialogue_id): the draw takes whole dialogues, a dialogue counts as
    labelled when all its judged turns are, and with every dialogue labelled and λ = 0 the
    corrected value is the run's statistics on the labels (units only group the rows)."""
    from pingce.audits.runs import read_sheet, reopen, sample_sheet

    from .cli_run import run_pingce

    data = Path(pingce.__file__).resolve().parent / "examples" / "tcm_dialogue" / "records.jsonl"
    out = tmp_path / "run"
    assert run_pingce("run", "tcm-dialogue", "--data", str(data), "--out", str(out)).returncode == 0
    run = reopen(out)
    assert run.plan.unit == "dialogue_id"
    sheet = tmp_path / "sheet.csv"
    drawn = sample_sheet(run, 4, sheet, strata=2)
    assert drawn["unit"] == "dialogue_id" and drawn["records"] == 4
    read = read_sheet(sheet)
    lines = {int(line) for line in read.strata}
    units = run.table.column("dialogue_id")
    pairs = record_pairs(run.plan, run.table, np.arange(run.table.n))
    drawn_units = {units[i] for i, line in enumerate(run.table.lines) if int(line) in lines}
    assert len(drawn_units) == 4
    for i, unit in enumerate(units):  # every judged turn of a drawn dialogue is on the sheet
        if unit in drawn_units and pairs[i]:
            assert int(run.table.lines[i]) in lines
    assert run.scored is not None
    decided = np.array([bool(p) for p in pairs])
    labels = _human(run.scored, pairs, decided, seed=2)
    got = correct(run.plan, run.table, run.scored, labels, lam=0.0)
    values = {**run.scored.table.values, **labels}
    human = statistics(
        run.plan, run.table, Scored(SimilarityTable(values, "h"), run.scored.stats, "h")
    )
    key = run.plan.keys["hybrid_semantic_accuracy"]
    rows = dense_rows(human[key])
    assert rows is not None
    want = float(run.plan.metrics["hybrid_semantic_accuracy"].finalize(rows.sum(axis=0)))
    audited = got["hybrid_semantic_accuracy"]
    assert audited.value == pytest.approx(want, abs=1e-12)
    decided_units = {units[i] for i in np.flatnonzero(decided)}
    assert audited.labelled == len(decided_units) and audited.unlabelled == 0


def test_an_audit_with_fewer_labels_than_the_study_trusts_says_so() -> None:
    """Below FAIR_LABELLED labelled records (the simulation study's fair regime) the audit
    notes it; from there on, nothing; metrics that read no judge do not count."""
    from pingce.audits.correct import FAIR_LABELLED, AuditedMetric, regime_notes

    def one(labelled: int, **kw: bool) -> AuditedMetric:
        return AuditedMetric(0.5, 0.5, 0.5, 0.4, 0.6, labelled, 1_000, **kw)

    (note,) = regime_notes({"f1": one(40), "accuracy": one(0, depends_on_judge=False)})
    assert note.startswith("40 labelled records:") and str(FAIR_LABELLED) in note
    assert regime_notes({"f1": one(FAIR_LABELLED)}) == []
    assert regime_notes({"accuracy": one(3, depends_on_judge=False)}) == []
