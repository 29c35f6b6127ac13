"""Every metric of a run corrected by a human audit of its similarity judge
(:func:`pingce.audits.correct.correct`), on the bundled function-points records with the
lexical backend as the judge and planted human labels. Expected values come from the engine's
own statistics run with the human labels as the similarity table, or from ``ppi_py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    assert drawn["expected_half_width"]["hybrid_semantic_accuracy"] > 0  # per dialogue
    read = read_sheet(sheet)
    lines = {line for _, line in read.strata}
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


@pytest.mark.parametrize(
    ("suite", "folder"),
    [
        ("function-points", "function_points"),
        ("contract-risk", "contract_risk"),
        ("tcm-dialogue", "tcm_dialogue"),
    ],
)
def test_the_pairs_of_every_record_at_once_are_each_record_s_alone(suite: str, folder: str) -> None:
    """record_pairs reads every record at once (each statistic's indexed_pairs); the pairs are
    those of each record read alone (a table of one record: the protocol's default
    indexed_pairs), in the same order, and a subset of the records gives theirs."""
    from pingce.metrics.protocol import Statistic

    data = Path(pingce.__file__).resolve().parent / "examples" / folder / "records.jsonl"
    plan = plan_run(suite, RunOptions(bootstrap=0))
    table = load(plan, data, no_progress)
    needing = [s for s in plan.statistics.values() if s.needs_similarity]
    alone = []
    for i in range(table.n):
        one = table.take(np.array([i]))
        alone.append(list(dict.fromkeys(p for s in needing for p in s.pairs(one) if p[0] != p[1])))
    assert sum(map(len, alone)) > 10
    assert record_pairs(plan, table, np.arange(table.n)) == alone
    some = np.array([5, 0, 3])
    assert record_pairs(plan, table, some) == [alone[i] for i in some]
    for statistic in needing:  # the protocol's default, one record at a time, agrees
        assert list(Statistic.indexed_pairs(statistic, table)) == list(
            statistic.indexed_pairs(table)
        )
        assert [p for _, p in statistic.indexed_pairs(table)] == list(statistic.pairs(table))


def test_the_planned_width_of_a_dialogue_suite_is_per_dialogue(tmp_path: Path) -> None:
    """tcm-dialogue (unit: dialogue_id), its dialogues copied 30 times: the planned half-width
    is computed over dialogues (each dialogue's rows summed, in its stratum), as a direct
    computation gives it: the stratified variance of the mean dialogue row, Σ share² · cov / n,
    through the metric's gradient (central differences), times z."""
    import json

    from scipy.stats import norm

    from pingce.audits.correct import planned_half_widths
    from pingce.audits.sample import draw
    from pingce.engine.groups import unit_codes

    source = Path(pingce.__file__).resolve().parent / "examples" / "tcm_dialogue" / "records.jsonl"
    many = tmp_path / "many.jsonl"
    with open(many, "w", encoding="utf-8") as handle:
        for copy in range(30):
            for line in source.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                record["dialogue_id"] = f"{record['dialogue_id']}-{copy}"
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    plan = plan_run("tcm-dialogue", RunOptions(similarity="lexical", bootstrap=0))
    table = load(plan, many, no_progress)
    scored = similarities(plan, [table], no_progress)
    assert scored is not None
    units = unit_codes(table, plan.unit)
    assert units is not None
    pairs = record_pairs(plan, table, np.arange(table.n))
    by_unit: dict[int, list[float]] = {}
    for i, one in enumerate(pairs):
        for pair in one:
            by_unit.setdefault(int(units[i]), []).append(scored.table.get(*pair))
    keys = sorted(by_unit)
    drawn = draw([np.array(by_unit[k]) for k in keys], 20, seed=0, strata=2)
    unit_stratum = {k: int(c) for k, c in zip(keys, drawn.codes, strict=True)}
    codes = np.array([unit_stratum.get(int(u), -1) for u in units], dtype=np.intp)
    planned = planned_half_widths(plan, table, scored, None, codes, drawn.quotas, units=units)
    blocks = statistics(plan, table, scored)
    checked = 0
    for name, metric in plan.metrics.items():
        statistic = plan.statistics[plan.keys[name]]
        rows = dense_rows(blocks[plan.keys[name]])
        if not statistic.needs_similarity or rows is None:
            assert name not in planned
            continue
        count = int(units.max()) + 1
        sums = np.zeros((count, rows.shape[1]))
        for i in range(table.n):
            sums[units[i]] += rows[i]
        stratum = np.array([unit_stratum.get(u, -1) for u in range(count)])
        mean = sums.mean(axis=0)
        variance = np.zeros((rows.shape[1], rows.shape[1]))
        for h in sorted(set(stratum.tolist())):
            part = sums[stratum == h]
            n = part.shape[0] if h < 0 else int(drawn.quotas[h])
            share = part.shape[0] / count
            variance += share**2 * np.atleast_2d(np.cov(part, rowvar=False)) / n

        def value(m: np.ndarray, metric: Any = metric, count: int = count) -> float:
            return float(metric.finalize(m * count))

        step = 1e-6
        gradient = np.array(
            [
                (value(mean + step * e) - value(mean - step * e)) / (2 * step)
                for e in np.eye(rows.shape[1])
            ]
        )
        want = norm.ppf(0.975) * float(np.sqrt(gradient @ variance @ gradient))
        assert planned[name] == pytest.approx(want, rel=1e-5), name
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize(
    ("suite", "folder"),
    [
        ("function-points", "function_points"),
        ("contract-risk", "contract_risk"),
        ("tcm-dialogue", "tcm_dialogue"),
    ],
)
def test_the_labelled_records_rows_computed_alone_are_the_whole_table_s(
    suite: str, folder: str
) -> None:
    """The correction computes the human rows of the labelled records on those records alone
    (each statistic's rows being each record's own, which it checks with the judge's rows): they
    equal the rows of a computation over every record with the labels in place."""
    from pingce.audits.correct import _human_rows

    data = Path(pingce.__file__).resolve().parent / "examples" / folder / "records.jsonl"
    plan = plan_run(suite, RunOptions(similarity="lexical", bootstrap=0))
    table = load(plan, data, no_progress)
    scored = similarities(plan, [table], no_progress)
    assert scored is not None
    pairs = record_pairs(plan, table, np.arange(table.n))
    decided = np.flatnonzero([bool(p) for p in pairs])
    checked = np.sort(np.random.default_rng(4).choice(decided, decided.size // 2, replace=False))
    keep = np.zeros(table.n, dtype=bool)
    keep[checked] = True
    labels = _human(scored, pairs, keep, seed=4)
    human = Scored(SimilarityTable({**scored.table.values, **labels}, "h"), scored.stats, "h")
    blocks = statistics(plan, table, scored)
    got = _human_rows(plan, table, blocks, (scored, human), checked, None)
    whole = statistics(plan, table, human)
    compared = 0
    for key, statistic in plan.statistics.items():
        want = dense_rows(whole[key])
        if want is None:
            assert got[key] is None
            continue
        rows = got[key]
        assert rows is not None
        assert np.array_equal(rows[checked], want[checked], equal_nan=True), key
        compared += statistic.needs_similarity
    assert compared >= 1


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
