"""``pingce compare RUN_A RUN_B`` (issue 13, "Comparison that says what it means"): two stored
runs, by name or by output folder, compared from their saved per-record statistics (stats.npz)
with nothing evaluated again and no model called. The oracle is the comparison of the record
files themselves (``pingce compare SUITE --data X --baseline Y``) with the same seed and
resamples: the same numbers, since both end in one code path."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
import pingce.report
from pingce.errors import OptionError
from pingce.similarity.fake import FakeBackend
from tests.cli_run import run_pingce

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
LEVELS = ["高", "中", "低"]


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    return path


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def contracts(n: int, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Two systems over the same contracts: the candidate right ~85 %, the baseline ~60 %."""
    rng = np.random.default_rng(seed)
    candidate, baseline = [], []
    for i in range(n):
        g = int(rng.integers(0, 3))
        a = g if rng.random() < 0.85 else int(rng.integers(0, 3))
        b = g if rng.random() < 0.6 else int(rng.integers(0, 3))
        base = {
            "id": f"c{i:03d}",
            "gold_level": LEVELS[g],
            "contract_type": ["租赁", "买卖"][i % 2],
        }
        candidate.append({**base, "pred_level": LEVELS[a]})
        baseline.append({**base, "pred_level": LEVELS[b]})
    return candidate, baseline


def dialogues() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The tcm-dialogue examples (turns without ids: they pair by dialogue_id and turn) and a
    baseline that decides later and diagnoses less well."""
    candidate = read(EXAMPLES / "tcm_dialogue" / "records.jsonl")
    baseline = []
    for r in candidate:
        b = dict(r)
        if r["turn"] == 3 and r["status"] == "DEFINITIVE":
            b["status"], b["pred_diagnosis"], b["confidence"] = "INQUIRY_ONLY", None, 0.5
        if r["dialogue_id"] in ("d2", "d4"):
            b["pred_text"] = "需要进一步问诊。"
        baseline.append(b)
    return candidate, baseline


def run(suite: str, data: Path, out: Path, *args: str, name: str | None = None) -> None:
    named = ["--name", name] if name else ["--no-store"]
    done = run_pingce("run", suite, "--data", str(data), "--out", str(out), *named, *args)
    assert done.returncode == 0, done.stderr


def comparison(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "comparison.json").read_text(encoding="utf-8"))
    return data


def assert_same_comparison(stored: dict[str, Any], files: dict[str, Any]) -> None:
    """Metrics (values, deltas, intervals, p-values, tests, verdicts), slices, record count and
    signature (but the library versions of the runs' own environment) are equal."""
    assert stored["metrics"] == files["metrics"]
    assert stored.get("slices") == files.get("slices")
    assert stored["n_records"] == files["n_records"]
    assert stored["failures"] == files["failures"]
    assert stored["suite"] == files["suite"]
    assert stored["signature"] == files["signature"]


OPTIONS = ["--bootstrap", "300", "--seed", "5"]


Pair = tuple[Path, Path, Path, list[str]]
"""The candidate's and the baseline's record files, the folder of their runs, the slice option."""


@pytest.fixture(scope="module")
def stored_pair(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Pair]:
    """The suite's candidate and baseline, each run once and stored as ``<suite>-cand`` and
    ``<suite>-base`` (a run does not depend on the bootstrap method its comparisons use)."""
    made: dict[str, Pair] = {}

    def pair(suite: str) -> Pair:
        if suite not in made:
            folder = tmp_path_factory.mktemp(suite)
            if suite == "contract-risk":
                candidate, baseline = contracts(90, seed=2)
                sliced = ["--slice", "contract_type"]
            else:
                candidate, baseline = dialogues()
                sliced = []
            cand = write(folder / "cand.jsonl", candidate)
            base = write(folder / "base.jsonl", baseline)
            run(suite, cand, folder / "runs" / "cand", *sliced, name=f"{suite}-cand")
            run(suite, base, folder / "runs" / "base", *sliced, name=f"{suite}-base")
            made[suite] = (cand, base, folder / "runs", sliced)
        return made[suite]

    return pair


@pytest.mark.parametrize("method", ["multinomial", "poisson"])
@pytest.mark.parametrize("suite", ["contract-risk", "tcm-dialogue"])
def test_stored_runs_compare_as_their_record_files_do(
    tmp_path: Path, suite: str, method: str, stored_pair: Callable[[str], Pair]
) -> None:
    """Also with the paired Poisson bootstrap: its keys come from what pairs the records (ids,
    or the match_by values of records without one; a dialogue keyed by its first turn), which
    stored runs and record files know alike."""
    cand, base, runs, sliced = stored_pair(suite)
    args = [*OPTIONS, *sliced, "--bootstrap-method", method]
    by_name = run_pingce(
        "compare",
        f"{suite}-cand",
        f"{suite}-base",
        "--out",
        str(tmp_path / "n"),
        *args,
    )
    assert by_name.returncode == 0, by_name.stderr
    by_folder = run_pingce(
        "compare",
        str(runs / "cand"),
        str(runs / "base"),
        "--out",
        str(tmp_path / "f"),
        *args,
    )
    assert by_folder.returncode == 0, by_folder.stderr
    files = run_pingce(
        "compare", suite, "--data", str(cand), "--baseline", str(base), "--out",
        str(tmp_path / "d"), *args,
    )  # fmt: skip
    assert files.returncode == 0, files.stderr
    expected = comparison(tmp_path / "d")
    named, foldered = comparison(tmp_path / "n"), comparison(tmp_path / "f")
    assert_same_comparison(named, expected)
    assert_same_comparison(foldered, expected)
    assert expected["signature"]["bootstrap_method"] == method
    assert (named["candidate"], named["baseline"]) == (f"{suite}-cand", f"{suite}-base")
    assert foldered["candidate"] == str(runs / "cand")
    assert any("nothing evaluated again" in note for note in named["notes"])
    if suite == "tcm-dialogue":
        assert expected["signature"]["unit"] == "dialogue_id"
        assert any("paired by dialogue_id, turn" in note for note in named["notes"])
    # some metric differs for real, so the equality above is not one of empty comparisons
    assert any(m["delta"] not in (None, 0.0) and m["p_value"] for m in named["metrics"].values())
    printed = " ".join(by_name.stdout.split())
    assert f"candidate {suite}-cand vs baseline {suite}-base" in printed
    # the console's note is one line, cut at its width; comparison.md has it whole
    assert "note: compared from the runs' saved per-record statistics" in printed
    assert "nothing evaluated again" in (tmp_path / "n" / "comparison.md").read_text("utf-8")


def test_records_in_one_run_only_are_counted_listed_and_left_out(tmp_path: Path) -> None:
    candidate, baseline = contracts(60, seed=4)
    # the first eight only in the candidate, two (under other ids) only in the baseline
    only_b = [dict(r, id=f"x{i}") for i, r in enumerate(baseline[-2:])]
    cand = write(tmp_path / "cand.jsonl", candidate)
    base = write(tmp_path / "base.jsonl", baseline[8:] + only_b)
    run("contract-risk", cand, tmp_path / "c")
    run("contract-risk", base, tmp_path / "b")
    result = pingce.compare_runs(tmp_path / "c", tmp_path / "b", bootstrap=200, seed=1)
    assert result.n_records == 52
    notes = "\n".join(result.notes)
    assert "52 records in both runs (of the candidate's 60 and the baseline's 54)" in notes
    listed = "8 record(s) only in the candidate run, not compared: c000, c001, c002, c003, c004"
    assert listed in notes and "(3 more)" in notes
    assert "2 record(s) only in the baseline run, not compared: x0, x1" in notes
    # the common records compare as their files do
    common = {r["id"] for r in baseline[8:]}
    files = pingce.compare(
        "contract-risk",
        [r for r in candidate if r["id"] in common],
        baseline[8:],
        bootstrap=200,
        seed=1,
    )
    assert result.metrics == files.metrics


def test_a_dialogue_with_turns_in_one_run_only_is_left_out_whole(tmp_path: Path) -> None:
    candidate, baseline = dialogues()
    short = [r for r in baseline if not (r["dialogue_id"] == "d1" and r["turn"] == 4)]
    run("tcm-dialogue", write(tmp_path / "cand.jsonl", candidate), tmp_path / "c")
    run("tcm-dialogue", write(tmp_path / "base.jsonl", short), tmp_path / "b")
    result = pingce.compare_runs(tmp_path / "c", tmp_path / "b", bootstrap=200, seed=3)
    d1 = sum(r["dialogue_id"] == "d1" for r in candidate)
    assert result.n_records == len(candidate) - d1
    notes = "\n".join(result.notes)
    assert '1 record(s) only in the candidate run, not compared: dialogue_id="d1", turn=4' in notes
    assert f"1 dialogue_id(s) hold records in one run only: their {d1 - 1:,} records" in notes
    files = pingce.compare(
        "tcm-dialogue",
        [r for r in candidate if r["dialogue_id"] != "d1"],
        [r for r in baseline if r["dialogue_id"] != "d1"],
        bootstrap=200,
        seed=3,
    )
    assert result.metrics == files.metrics


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_no_model_is_called_and_the_similarity_options_are_said_unused(tmp_path: Path) -> None:
    """function-points runs scored with the lexical backend; the comparison is given a judge
    behind an endpoint that refuses every connection, and never asks it anything."""
    records = read(EXAMPLES / "function_points" / "records.jsonl")
    worse = [
        dict(r, pred_items=r["pred_items"][:1]) if r.get("task") == "selection" else r
        for r in records
    ]
    run("function-points", write(tmp_path / "c.jsonl", records), tmp_path / "c", name="fp-cand")
    run("function-points", write(tmp_path / "b.jsonl", worse), tmp_path / "b", name="fp-base")
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    done = run_pingce(
        "compare", "fp-cand", "fp-base", "--similarity", "openai:m", "--base-url", dead,
        "--no-cache", "--out", str(tmp_path / "o"), "--bootstrap", "200",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = comparison(tmp_path / "o")
    assert data["signature"]["similarity"].startswith("lexical")
    note = next(n for n in data["notes"] if "not used" in n)
    assert note.startswith("--similarity, --base-url, --no-cache not used")
    assert data["metrics"]["sem_recall"]["delta"] > 0  # the baseline kept one item each


def test_unknown_run_names_and_folders_without_a_run_are_errors(tmp_path: Path) -> None:
    records = write(tmp_path / "a.jsonl", contracts(3, seed=1)[0])
    run("contract-risk", records, tmp_path / "known", name="known-run")
    done = run_pingce("compare", "known-run", "no-such-run-b")
    assert done.returncode == 2 and "no run named 'no-such-run-b'" in done.stderr
    assert "Traceback" not in done.stderr
    (tmp_path / "empty").mkdir()
    done = run_pingce("compare", str(tmp_path / "empty"), "no-such-run-b")
    assert done.returncode == 2 and "not a run's output folder" in done.stderr
    # one argument and no --data: neither form
    done = run_pingce("compare", "contract-risk")
    assert done.returncode == 2 and "RUN_A RUN_B" in done.stderr
    # two record files: the other form, said so
    done = run_pingce("compare", str(records), str(records))
    assert done.returncode == 2 and "is a file, not a run" in done.stderr
    assert "--data CANDIDATE --baseline BASELINE" in done.stderr


def test_results_in_memory_and_slices_both_runs_kept(tmp_path: Path) -> None:
    """pingce.compare_runs takes results of pingce.evaluate too (their statistics attached in
    memory) and gives what their folders give; --slice needs a field both runs sliced by."""
    candidate, baseline = contracts(50, seed=6)
    a = pingce.evaluate("contract-risk", candidate, slice="contract_type", out=tmp_path / "a")
    b = pingce.evaluate("contract-risk", baseline, out=tmp_path / "b")
    in_memory = pingce.compare_runs(a, b, bootstrap=200, seed=9)
    from_folders = pingce.compare_runs(tmp_path / "a", tmp_path / "b", bootstrap=200, seed=9)
    assert in_memory.metrics == from_folders.metrics
    assert (in_memory.candidate, in_memory.baseline) == ("candidate", "baseline")
    with pytest.raises(OptionError, match="run baseline was not sliced by contract_type"):
        pingce.compare_runs(a, b, bootstrap=0, slice="contract_type")
    b = pingce.evaluate("contract-risk", baseline, slice="contract_type")
    sliced = pingce.compare_runs(a, b, bootstrap=200, slice="contract_type")
    files = pingce.compare(
        "contract-risk", candidate, baseline, bootstrap=200, slice="contract_type"
    )
    assert sliced.slices == files.slices and sliced.slices is not None
    with pytest.raises(OptionError, match="unknown option"):
        pingce.compare_runs(a, b, similarity="exact")


def test_runs_of_two_suites_or_other_metric_definitions_are_errors(tmp_path: Path) -> None:
    candidate, baseline = contracts(20, seed=1)
    run("contract-risk", write(tmp_path / "c.jsonl", candidate), tmp_path / "c")
    run("function-points", EXAMPLES / "function_points" / "records.jsonl", tmp_path / "fp")
    done = run_pingce("compare", str(tmp_path / "c"), str(tmp_path / "fp"))
    assert done.returncode == 2
    assert "of the suite 'contract-risk'" in done.stderr and "'function-points'" in done.stderr
    assert "two runs of one suite" in done.stderr
    base = write(tmp_path / "b.jsonl", baseline)
    run("contract-risk", base, tmp_path / "z", "--zero-division", "0")
    with pytest.raises(OptionError, match="define their metrics differently") as info:
        pingce.compare_runs(tmp_path / "c", tmp_path / "z")
    assert re.search(r"zero_division=None.* vs .*zero_division=0\.0", str(info.value))


def test_a_run_without_saved_statistics_is_an_error(tmp_path: Path) -> None:
    candidate, _ = contracts(10, seed=1)
    run("contract-risk", write(tmp_path / "c.jsonl", candidate), tmp_path / "c")
    run("contract-risk", write(tmp_path / "b.jsonl", candidate), tmp_path / "b")
    (tmp_path / "b" / "stats.npz").unlink()
    with pytest.raises(OptionError, match="no saved per-record statistics"):
        pingce.compare_runs(tmp_path / "c", tmp_path / "b")


def test_fail_on_regression_gates_a_comparison_of_stored_runs(tmp_path: Path) -> None:
    candidate, baseline = contracts(150, seed=7)
    run("contract-risk", write(tmp_path / "good.jsonl", candidate), tmp_path / "g")
    run("contract-risk", write(tmp_path / "bad.jsonl", baseline), tmp_path / "w")
    # the worse system as the candidate: a significant drop in accuracy
    done = run_pingce(
        "compare", str(tmp_path / "w"), str(tmp_path / "g"), "--fail-on-regression", "accuracy"
    )
    assert done.returncode == 4, done.stderr
    assert "gate failed: accuracy" in done.stderr
    done = run_pingce(
        "compare", str(tmp_path / "g"), str(tmp_path / "w"), "--fail-on-regression", "accuracy"
    )
    assert done.returncode == 0, done.stderr
    assert "no regression: 1 gate(s) passed" in done.stdout


def test_comparison_html_lists_the_records_that_flipped(tmp_path: Path) -> None:
    candidate, baseline = contracts(40, seed=3)
    fields = ("--records-fields", "all")  # the runs keep their fields: the same diff as the files'
    run("contract-risk", write(tmp_path / "c.jsonl", candidate), tmp_path / "c", *fields)
    run("contract-risk", write(tmp_path / "b.jsonl", baseline[5:]), tmp_path / "b", *fields)
    result = pingce.compare_runs(tmp_path / "c", tmp_path / "b", bootstrap=0, out=tmp_path / "o")
    assert result.records is not None
    rows_c, rows_b = result.records
    assert rows_c.ids == rows_b.ids == [r["id"] for r in candidate[5:]]
    page = (tmp_path / "o" / "comparison.html").read_text(encoding="utf-8")
    fixed = [
        c["id"]
        for c, b in zip(candidate[5:], baseline[5:], strict=True)
        if c["pred_level"] == c["gold_level"] and b["pred_level"] != b["gold_level"]
    ]
    assert fixed and "Records that flipped" in page
    assert f"{len(fixed):,} fixed by the candidate" in page
    for key in fixed:
        assert f"<td>{key}</td>" in page
    for key in (r["id"] for r in candidate[:5]):  # one-sided: never listed as flipped
        assert f"<td>{key}</td>" not in page
    # the comparison of the common records' files lists the same flips
    files = pingce.compare("contract-risk", candidate[5:], baseline[5:], bootstrap=0)
    pingce.report.write_comparison(files, tmp_path / "files")
    again = (tmp_path / "files" / "comparison.html").read_text(encoding="utf-8")
    assert flipped(again) == flipped(page)


def flipped(page: str) -> str:
    """The page's flipped records, without their line numbers (the run's file has five more
    records before them)."""
    section = page[page.index('<section id="flipped">') : page.index('<section id="signature">')]
    section = re.sub(r"<h3>line \d+", "<h3>", section)  # both systems side by side
    return re.sub(r'<tr><td class="num">\d+</td>', "<tr>", section)


def test_records_whose_judge_failed_on_either_side_are_left_out_of_that_metric(
    tmp_path: Path,
) -> None:
    """A judge that fails on one prediction of the candidate only: under skip, that record is
    left out of both sides of the semantic metrics (and counted); the comparison from the
    stored runs equals the one from the records, scored by the same judge."""
    records = read(EXAMPLES / "function_points" / "records.jsonl")
    selections = [r for r in records if r.get("task") == "selection"]
    failing = selections[0]["pred_items"][0]
    baseline = [
        dict(r, pred_items=[p + "表" for p in r["pred_items"]]) if r is selections[0] else r
        for r in records
    ]

    def judge() -> FakeBackend:
        return FakeBackend(
            lambda a, b: 0.9 if a[:2] == b[:2] else 0.2,
            fail={(failing, t) for t in selections[0]["gold_items"]},
        )

    pingce.evaluate("function-points", records, similarity=judge(), out=tmp_path / "c")
    pingce.evaluate("function-points", baseline, similarity=judge(), out=tmp_path / "b")
    options: dict[str, Any] = {"bootstrap": 200, "seed": 2, "on_judge_failure": "skip"}
    stored = pingce.compare_runs(tmp_path / "c", tmp_path / "b", **options)
    entry = stored.metrics["sem_precision"]
    assert entry.left_out == 1 and "1 record(s) left out" in str(entry.note)
    assert stored.metrics["set_precision"].left_out is None  # needs no judge
    files = pingce.compare("function-points", records, baseline, similarity=judge(), **options)
    assert stored.metrics == files.metrics
    # under null the metric has no difference to test, and the record is still counted
    null = pingce.compare_runs(tmp_path / "c", tmp_path / "b", bootstrap=0)
    assert null.metrics["sem_precision"].delta is None
    assert null.metrics["sem_precision"].left_out == 1


def test_a_suite_file_is_found_in_the_store_or_given_with_suite(tmp_path: Path) -> None:
    builtin = Path(pingce.__file__).parent / "suites" / "contract-risk.yaml"
    suite = tmp_path / "my-suite.yaml"
    suite.write_text(
        builtin.read_text(encoding="utf-8").replace("name: contract-risk", "name: my-contracts"),
        encoding="utf-8",
    )
    candidate, baseline = contracts(30, seed=8)
    run(str(suite), write(tmp_path / "c.jsonl", candidate), tmp_path / "c", name="mine-c")
    run(str(suite), write(tmp_path / "b.jsonl", baseline), tmp_path / "b", name="mine-b")
    by_name = run_pingce("compare", "mine-c", "mine-b", "--bootstrap", "0")  # the store knows
    assert by_name.returncode == 0, by_name.stderr
    folders = [str(tmp_path / "c"), str(tmp_path / "b")]
    alone = run_pingce("compare", *folders, "--bootstrap", "0")
    assert alone.returncode == 2 and "give its suite file with --suite FILE" in alone.stderr
    given = run_pingce("compare", *folders, "--suite", str(suite), "--bootstrap", "0")
    assert given.returncode == 0, given.stderr
    other = run_pingce("compare", *folders, "--suite", "contract-risk", "--bootstrap", "0")
    assert other.returncode == 2 and "is not the runs' suite 'my-contracts'" in other.stderr


def test_records_without_ids_cannot_be_paired_in_a_suite_without_match_by(tmp_path: Path) -> None:
    candidate, baseline = contracts(6, seed=2)
    kept = pingce.evaluate("contract-risk", candidate, bootstrap=0)
    anonymous = pingce.evaluate(
        "contract-risk", [{k: v for k, v in r.items() if k != "id"} for r in baseline], bootstrap=0
    )
    with pytest.raises(OptionError, match="the record on line 1 has no id"):
        pingce.compare_runs(kept, anonymous, bootstrap=0)
