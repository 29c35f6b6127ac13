"""promptfoo's ``-o results.json`` read as a pingce run (issue 36), on a file the promptfoo CLI
wrote (examples/other_tools/promptfoo: its config, the offline provider and how it was made):
two prompts x two providers x 11 tests, one provider failing on one test. The rows' scores
against promptfoo's own counts (its stats and each prompt's metrics), the provider failures left
out and said, and two providers in one file compared with McNemar's exact test as scipy
computes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest

import pingce
from pingce.errors import OptionError
from pingce.tool_logs import detect_tool, read_tool_file
from tests.cli_run import run_pingce

HERE = Path(pingce.__file__).parent / "examples" / "other_tools" / "promptfoo"
RESULTS = HERE / "results.json"


def _file() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(RESULTS.read_text("utf-8"))
    return loaded


def test_rows_are_promptfoos_counts() -> None:
    """Each prompt x provider's passes and named scores, summed over pingce's records, are the
    numbers promptfoo wrote in its prompts' metrics."""
    run = read_tool_file(RESULTS)
    body = _file()["results"]
    assert len(run.records) == len(body["results"]) == 44
    for prompt in body["prompts"]:
        label, provider = prompt["label"], prompt["provider"]
        rows = [r for r in run.records if r["prompt"] == label and r["provider"] == provider]
        metrics = prompt["metrics"]
        scored = [r for r in rows if r["scores"]]
        assert sum(r["scores"]["pass"] for r in scored) == metrics["testPassCount"]
        assert len(rows) - len(scored) == metrics["testErrorCount"]
        for name, total in metrics["namedScores"].items():  # promptfoo sums the rows' values
            values = [r["scores"][name] for r in scored if name in r["scores"]]
            assert len(values) == len(scored)
            assert sum(values) == pytest.approx(total, abs=1e-9)


def test_the_pass_rate_and_the_errors() -> None:
    stats = _file()["results"]["stats"]
    result = pingce.evaluate_log(RESULTS, bootstrap=200)
    scored = stats["successes"] + stats["failures"]
    assert result.metrics["pass"].value == pytest.approx(stats["successes"] / scored, abs=1e-12)
    assert result.metrics["pass"].n == scored
    note = next(n for n in result.notes if n.startswith("pass: promptfoo reported"))
    total = stats["successes"] + stats["failures"] + stats["errors"]
    assert f"{stats['successes'] / total:.6g}" in note
    assert f"the {stats['errors']} row(s) whose provider failed" in note
    assert any("left out of every mean" in n for n in result.notes)
    assert set(result.slices or {}) >= {"provider=echo", "provider=mock-answerer"}


def test_two_prompts_in_one_file_compare_by_test_and_provider() -> None:
    """``--by prompt``: each test x provider paired across the two prompts; McNemar's exact
    test on the pairs whose verdicts differ, as scipy's binomial test; the mock provider's
    failure on one test is missing on both sides alike."""
    compared = pingce.compare_logs(RESULTS, by="prompt=sentence,brief", bootstrap=300)
    rows = read_tool_file(RESULTS).records

    def passes(prompt: str) -> dict[tuple[str, str], float]:
        return {
            (r["test"], r["provider"]): r["scores"]["pass"]
            for r in rows
            if r["prompt"] == prompt and r["scores"]
        }

    c, b = passes("sentence"), passes("brief")
    assert c.keys() == b.keys() and len(c) == 21
    only_c = sum(c[k] == 1 and b[k] == 0 for k in c)
    only_b = sum(c[k] == 0 and b[k] == 1 for k in c)
    m = compared.metrics["pass"]
    assert m.delta == pytest.approx((sum(c.values()) - sum(b.values())) / 21, abs=1e-12)
    exact = next(t for t in m.tests if t.test == "mcnemar-exact")
    assert (exact.candidate_only, exact.baseline_only) == (only_c, only_b)
    assert exact.p_value == pytest.approx(binomtest(only_c, only_c + only_b).pvalue, abs=1e-12)
    assert compared.candidate.endswith("(prompt sentence)")
    by_provider = pingce.compare_logs(RESULTS, by="provider=mock-answerer,echo", bootstrap=0)
    pair = by_provider.metrics["pass"]  # the mock failed one test under both prompts
    assert (pair.n, pair.n_baseline) == (20, 22)


def test_by_needs_two_values_or_names_them() -> None:
    with pytest.raises(OptionError, match="not a value of provider"):
        pingce.compare_logs(RESULTS, by="provider=gpt,echo")
    with pytest.raises(OptionError, match="holds several systems by: provider, prompt"):
        pingce.compare_logs(RESULTS, by="lang")


def test_the_command_line(tmp_path: Path) -> None:
    done = run_pingce("run", str(RESULTS), "--out", str(tmp_path / "r"), "--no-store")
    assert done.returncode == 0, done.stderr
    saved = json.loads((tmp_path / "r" / "results.json").read_text("utf-8"))
    assert {"pass", "score", "accuracy", "conciseness"} <= set(saved["metrics"])
    done = run_pingce("compare", str(RESULTS), "--by", "prompt", "--out", str(tmp_path / "c"))
    assert done.returncode == 0, done.stderr
    saved = json.loads((tmp_path / "c" / "comparison.json").read_text("utf-8"))
    assert saved["n_records"] == 22  # each test x provider, paired across the two prompts
    assert saved["metrics"]["pass"]["n"] == 21  # less the failed provider's test
    assert detect_tool(RESULTS) == "promptfoo"
