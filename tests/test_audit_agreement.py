"""The judge's agreement with people and its bootstrap intervals (issue 34,
:mod:`pingce.audits.agreement`): every resample's accuracy, kappa, true and false positive rates
and ROC AUC equal scikit-learn's on the pairs that resample draws (expanded by their counts),
and the interval is those values' percentiles; audit.json, the console and audit.md show it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score, confusion_matrix, roc_auc_score

from pingce.audits.agreement import agreement_intervals, agreement_resamples

from .cli_run import run_pingce

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_each_resample_is_scikit_learn_on_the_pairs_it_draws() -> None:
    rng = np.random.default_rng(4)
    n = 60
    human = rng.random(n) < 0.4
    scores = np.clip(np.where(human, 0.65, 0.35) + rng.normal(0, 0.2, n), 0, 1).round(2)
    scores[:5] = 0.5  # ties, for the AUC's halves
    counts = rng.multinomial(n, np.full(n, 1 / n), size=25)
    got = agreement_resamples(scores, human, 0.5, counts)
    for b in range(counts.shape[0]):
        drawn = np.repeat(np.arange(n), counts[b])
        y, s = human[drawn], scores[drawn]
        said = s > 0.5
        tn, fp, fn, tp = confusion_matrix(y, said, labels=[False, True]).ravel()
        assert got["accuracy"][b] == pytest.approx(accuracy_score(y, said), abs=1e-12)
        assert got["kappa"][b] == pytest.approx(cohen_kappa_score(y, said), abs=1e-12)
        assert got["true_positive_rate"][b] == pytest.approx(tp / (tp + fn), abs=1e-12)
        assert got["false_positive_rate"][b] == pytest.approx(fp / (fp + tn), abs=1e-12)
        assert got["roc_auc"][b] == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_the_interval_is_the_resamples_percentiles() -> None:
    rng = np.random.default_rng(5)
    n = 80
    human = rng.random(n) < 0.5
    scores = np.where(human, rng.uniform(0.4, 1, n), rng.uniform(0, 0.6, n))
    got = agreement_intervals(scores, human, 0.5, level=0.9, resamples=500, seed=3)
    again = np.random.default_rng(3).multinomial(n, np.full(n, 1 / n), size=500)
    values = agreement_resamples(scores, human, 0.5, again)
    for key, interval in got.items():
        assert interval == pytest.approx(
            [np.quantile(values[key], 0.05), np.quantile(values[key], 0.95)]
        )
    assert got["accuracy"][0] < float(np.mean((scores > 0.5) == human)) < got["accuracy"][1]
    one_class = agreement_intervals(scores, np.ones(n, bool), 0.5)
    assert one_class["roc_auc"] is None and one_class["false_positive_rate"] is None


def test_audit_json_and_its_pages_show_the_intervals(tmp_path: Path) -> None:
    run = tmp_path / "run"
    data = EXAMPLES / "function_points" / "records.jsonl"
    done = run_pingce("run", "function-points", "--data", str(data), "--out", str(run))
    assert done.returncode == 0, done.stderr
    out = tmp_path / "audit"
    sheet = EXAMPLES / "function_points" / "audit_sheet.csv"
    done = run_pingce("audit", str(run), "--labels", str(sheet), "--out", str(out))
    assert done.returncode == 0, done.stderr
    agreement = json.loads((out / "audit.json").read_text(encoding="utf-8"))["agreement"]
    low, high = agreement["intervals"]["accuracy"]
    assert low <= agreement["accuracy"] <= high
    shown = f"accuracy {agreement['accuracy']:.4f} [{low:.4f}, {high:.4f}]"
    assert shown in " ".join(done.stdout.split())
    page = (out / "audit.md").read_text(encoding="utf-8")
    assert f"[{low:.4f}, {high:.4f}]" in page
