"""Issue 12, "a failed judge never moves a number": a metric that needs a record whose similarity
calls failed is null with the count in words (``--on-judge-failure null``, the default), or is
computed over the other records with a note (``skip``); in runs, slices, comparisons and through
the command line. Metrics that need no similarity never change."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import pingce
from pingce.progress import show_note
from pingce.similarity.fake import FakeBackend
from tests.cli_run import run_pingce

RECORDS: list[dict[str, Any]] = [
    {
        "id": "a",
        "group": "x",
        "task": "selection",
        "gold_items": ["订单"],
        "pred_items": ["订单表"],
    },
    {"id": "b", "group": "x", "task": "selection", "gold_items": ["客户"], "pred_items": ["坏"]},
    {
        "id": "c",
        "group": "y",
        "task": "selection",
        "gold_items": ["员工"],
        "pred_items": ["员工表"],
    },
    {"id": "d", "group": "y", "task": "judge", "gold": True, "pred": "Yes"},
]
FAILING = {("坏", "客户")}
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "function_points" / "records.jsonl"


def backend() -> FakeBackend:
    return FakeBackend(lambda a, b: 0.9, fail=FAILING)


def test_default_is_null_with_the_count_and_no_interval() -> None:
    result = pingce.evaluate(
        "function-points", RECORDS, similarity=backend(), bootstrap=100, slice="group"
    )
    entry = result.metrics["sem_precision"]
    assert entry.value is None and entry.ci_low is None and entry.ci_high is None
    assert entry.failed_records == 1
    assert entry.undefined_reason == (
        "1 of 3 records had failed similarity calls (--on-judge-failure skip computes it over "
        "the others)"
    )
    # metrics that read no similarity keep their values
    assert result.metrics["set_precision"].value == 0.0
    assert result.metrics["judge_accuracy"].value == 1.0
    # a slice without the failed record has its value; the slice with it is null
    assert result.slices["group=y"].metrics["sem_precision"].value == pytest.approx(0.9)
    assert result.slices["group=x"].metrics["sem_precision"].value is None


def test_skip_computes_over_the_other_records_with_a_note() -> None:
    result = pingce.evaluate(
        "function-points", RECORDS, similarity=backend(), bootstrap=0, on_judge_failure="skip"
    )
    entry = result.metrics["sem_precision"]
    # a and c each score 0.9 (> τ 0.7) over one prediction; b is left out
    assert entry.value == pytest.approx(0.9) and entry.n == 2 and entry.failed_records == 1
    assert (
        entry.value_note == "1 of 3 records had failed similarity calls, left out "
        "(--on-judge-failure skip)"
    )
    # it covers the 3 selection records and was computed over 2 of them
    assert (entry.n_records, entry.n_scored, entry.partial()) == (3, 2, "2/3")
    # a metric that needs no similarity covers as many records as it scored
    exact = result.metrics["set_precision"]
    assert (exact.n_records, exact.n_scored, exact.partial()) == (3, 3, None)
    assert result.metrics["judge_accuracy"].n_records == 1


def test_compare_follows_the_policy() -> None:
    baseline = [dict(r, pred_items=["订单"]) if r["id"] == "a" else r for r in RECORDS]
    options: dict[str, Any] = {"similarity": backend(), "bootstrap": 0}
    default = pingce.compare("function-points", RECORDS, baseline, **options)
    entry = default.metrics["sem_precision"]
    assert entry.delta is None and entry.candidate is None
    assert "1 of 3 records had failed similarity calls" in str(entry.note)
    skip = pingce.compare("function-points", RECORDS, baseline, on_judge_failure="skip", **options)
    # candidate: a 0.9, c 0.9 over 2; baseline: a exact 1, c 0.9 over 2
    assert skip.metrics["sem_precision"].delta == pytest.approx(0.9 - 0.95)


def test_the_option_on_the_command_line(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS))
    bad = run_pingce("run", "function-points", "--data", str(data), "--on-judge-failure", "zero")
    assert bad.returncode == 2 and "--on-judge-failure" in bad.stderr
    good = run_pingce(
        "run",
        "function-points",
        "--data",
        str(data),
        "--on-judge-failure",
        "skip",
        "--bootstrap",
        "0",
        "--out",
        str(tmp_path / "o"),
    )
    assert good.returncode == 0, good.stderr


def test_scored_over_covered_is_shown_beside_the_metric_that_left_records_out(
    tmp_path: Path,
) -> None:
    """'n scored / n total' in the console, report.md and results.json, only where a metric
    was computed over fewer records than it covers."""
    from rich.console import Console

    from pingce.report import print_result, render_markdown, write_outputs

    result = pingce.evaluate(
        "function-points", RECORDS, similarity=backend(), bootstrap=0, on_judge_failure="skip"
    )
    console = Console(record=True, width=200)
    print_result(result, console)
    lines = console.export_text().splitlines()
    assert "scored" in next(line for line in lines if "metric" in line and "value" in line)
    assert "2/3" in next(line for line in lines if "sem_precision" in line)
    assert "2/3" not in next(line for line in lines if "set_precision" in line)
    report = render_markdown(result)
    md_row = next(line for line in report.splitlines() if line.startswith("| `sem_precision`"))
    assert "| 2/3 |" in md_row and "| scored |" in report
    write_outputs(result, tmp_path / "o")
    saved = json.loads((tmp_path / "o" / "results.json").read_text())["metrics"]["sem_precision"]
    assert (saved["n_records"], saved["n_scored"], saved["failed_records"]) == (3, 2, 1)
    # with nothing left out there is no such column
    whole = pingce.evaluate("function-points", RECORDS[:1] + RECORDS[2:], bootstrap=0)
    assert "| scored |" not in render_markdown(whole)


def closed_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("backend", "endpoint"),
    [("openai:m", "chat/completions"), ("embedding-api:m", "embeddings"), ("rerank:m", "rerank")],
)
def test_a_dead_endpoint_stops_the_run_at_once(tmp_path: Path, backend: str, endpoint: str) -> None:
    import time

    url = f"http://127.0.0.1:{closed_port()}/v1"
    started = time.monotonic()
    done = run_pingce(
        "run",
        "function-points",
        "--data",
        str(EXAMPLES),
        "--similarity",
        backend,
        "--base-url",
        url,
        "--no-cache",
        "--out",
        str(tmp_path / "o"),
    )
    assert done.returncode == 2, done.stderr
    assert time.monotonic() - started < 20  # before: 180 retries in 42 s
    assert f"cannot connect to {url}/{endpoint} (connection refused)" in done.stderr
    assert "--base-url" in done.stderr and done.stderr.count("\n") == 1  # one line
    assert not (tmp_path / "o").exists()


def test_a_dead_endpoint_stops_a_comparison(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    done = run_pingce(
        "compare",
        "function-points",
        "--data",
        str(EXAMPLES),
        "--baseline",
        str(EXAMPLES),
        "--similarity",
        "openai:m",
        "--base-url",
        url,
        "--no-cache",
        "--out",
        str(tmp_path / "c"),
    )
    assert done.returncode == 2 and "cannot connect to" in done.stderr, done.stderr
    assert not (tmp_path / "c").exists()


def test_endpoint_from_the_environment_with_the_documented_precedence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--base-url, then PINGCE_BASE_URL, then OPENAI_BASE_URL (as the OpenAI client reads it);
    the key likewise from PINGCE_API_KEY, then OPENAI_API_KEY."""
    from tests.loopback import LoopbackServer

    records = [r for r in RECORDS if r["id"] != "b"]
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    for name in ("PINGCE_BASE_URL", "OPENAI_BASE_URL", "PINGCE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with LoopbackServer(lifetime=60) as server:
        options: dict[str, Any] = {"similarity": "openai:m", "cache": False, "bootstrap": 0}
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
        alone = pingce.evaluate("function-points", records, **options)
        assert alone.metrics["sem_precision"].value is not None
        assert server.chat()[-1].headers["authorization"] == "Bearer sk-openai"
        monkeypatch.setenv("OPENAI_BASE_URL", dead)  # PINGCE_* wins over OPENAI_*
        monkeypatch.setenv("PINGCE_BASE_URL", server.url)
        monkeypatch.setenv("PINGCE_API_KEY", "pk-pingce")
        both = pingce.evaluate("function-points", records, **options)
        assert both.metrics["sem_precision"].value == alone.metrics["sem_precision"].value
        assert server.chat()[-1].headers["authorization"] == "Bearer pk-pingce"
        monkeypatch.setenv("PINGCE_BASE_URL", dead)  # and the argument wins over both
        flag = pingce.evaluate("function-points", records, base_url=server.url, **options)
        assert flag.metrics["sem_precision"].value == alone.metrics["sem_precision"].value


def test_tokens_and_cost_are_shown_in_the_console_and_report(tmp_path: Path) -> None:
    """Issue 12: what the judge cost, in the console and report.md as well as results.json;
    the loopback server counts prompt tokens as prompt characters, so the totals are known."""
    from tests.cli_run import ENV
    from tests.loopback import LoopbackServer

    suite = tmp_path / "fp.yaml"
    builtin = Path(pingce.__file__).parent / "suites" / "function-points.yaml"
    suite.write_text(
        builtin.read_text(encoding="utf-8").replace(
            "concurrency: 16", "concurrency: 4\n  price_prompt: 0.5\n  price_completion: 1.0"
        ),
        encoding="utf-8",
    )
    env = {k: v for k, v in ENV.items() if not k.upper().endswith("_PROXY")}
    env["NO_PROXY"] = "127.0.0.1,localhost"
    with LoopbackServer(lifetime=60) as server:
        import subprocess
        import sys

        args = [sys.executable, "-m", "pingce", "run", str(suite), "--data", str(EXAMPLES)]
        args += ["--similarity", "openai:m", "--base-url", server.url, "--no-cache"]
        args += ["--bootstrap", "0", "--out", str(tmp_path / "o")]
        done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
        prompt = sum((r.usage or {}).get("prompt_tokens", 0) for r in server.chat())
        completion = sum((r.usage or {}).get("completion_tokens", 0) for r in server.chat())
        requests = server.count()
    assert done.returncode == 0, done.stderr
    cost = prompt / 1000 * 0.5 + completion / 1000 * 1.0
    line = (
        f"similarity openai:m: {requests:,} pairs, {requests:,} requests, 0 from the cache, "
        f"{prompt:,} prompt + {completion:,} completion tokens, cost {cost:.4f}"
    )
    assert line in done.stdout, done.stdout
    report = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    assert "- S" + line[1:] in report


class NotedAdvance:
    """An advance that records the notes it was asked to show (as the command line's bar)."""

    def __init__(self) -> None:
        self.done = 0.0
        self.notes: list[str] = []

    def __call__(self, amount: float) -> None:
        self.done += amount

    def note(self, text: str) -> None:
        self.notes.append(text)


def test_while_calls_fail_the_progress_line_shows_the_count_and_the_last_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pingce.similarity.judge import JudgeBackend
    from tests.loopback import Fault, LoopbackServer

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with LoopbackServer(lifetime=60) as server:
        # the first pair fails for good (1 call + 2 retries), the second after one 429
        server.script(Fault("500", -1), Fault("500", -1), Fault("500", -1), Fault("429", 0))
        backend = JudgeBackend(
            "m", base_url=server.url, concurrency=1, backoff=0.01, max_retries=2, timeout=2.0
        )
        advance = NotedAdvance()
        table, stats = backend.score([("订单", "订单表"), ("客户", "客户信息")], advance)
    assert (stats.failures, stats.retries) == (1, 3)
    assert advance.done == 2  # a failed pair is done too: the bar reaches its end
    # the notes as they came (at most one each 0.1 s: the first is always shown)
    assert advance.notes[0] == "1 retried; last error: http 500"
    assert all("last error: http" in note for note in advance.notes)
    # the pair that failed for good is always shown, whatever the throttle: never a stale count
    assert any(note.startswith("1 failed") for note in advance.notes), advance.notes
    assert math.isnan(table.values[("订单", "订单表")])


def test_the_command_line_bar_shows_a_note_beside_its_description() -> None:
    import io

    from rich.console import Console

    from pingce.cli.common import progress as _progress

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=160)
    with _progress(console, enabled=True) as hook:
        advance = hook("similarity 2 pairs", 2.0)
        advance(1)
        show_note(advance, "1 failed, 3 retried; last error: http 500 [x]")
        console.file.flush()
        import time

        time.sleep(0.3)  # one refresh of the live display
    shown = buffer.getvalue()
    assert "similarity 2 pairs" in shown
    assert "(1 failed, 3 retried; last error: http 500 [x])" in shown  # markup escaped


# issue 28: a failed judge leaves a record out of the metrics whose value needs its pairs only

CONTRACT = (
    "第一条 甲方应于每月五日前向乙方支付货款。乙方收到货款后三日内开具发票。\n"
    "第二条 乙方不得将本合同转让给第三方。违约金为合同总额的百分之五。"
)
FAILING_CLAUSE = "甲方应在每个月五号之前付款给乙方"


def evidence_record(i: str, evidence: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "id": i,
        "gold_level": "高",
        "pred_level": "高",
        "contract": CONTRACT,
        "evidence": evidence,
    }


EVIDENCE_RECORDS = [
    evidence_record(
        "a", [{"clause": FAILING_CLAUSE}, {"law": "《中华人民共和国民法典》第五百八十五条"}]
    ),
    evidence_record(
        "b", [{"clause": "乙方在收到货款三天内开发票"}, {"law": "《合同管理法》第十二条"}]
    ),
    evidence_record("c", [{"law": "民法典第1300条"}]),
]
CLAUSE_METRICS = (
    "clause_hallucination_rate",
    "altered_clause_rate",
    "hallucination_rate",
    "task_success_rate",
)


@pytest.mark.parametrize("policy", ["null", "skip"])
def test_a_failed_clause_score_leaves_the_law_rate_whole(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, policy: str
) -> None:
    """law_hallucination_rate never needs the judge: a record whose clause could not be scored
    keeps its law citations there (it used to be null with the clause metrics). The metrics that
    read the clause are null with the count, or computed without the record under skip."""
    from tests.loopback import Fault, LoopbackServer, keep_local

    keep_local(monkeypatch, tmp_path / "cache")
    options: dict[str, Any] = {"similarity": "openai:m", "cache": False, "bootstrap": 0}
    with LoopbackServer(lifetime=120) as server:
        options["base_url"] = server.url
        whole = pingce.evaluate("contract-risk", EVIDENCE_RECORDS, **options)
        others = pingce.evaluate("contract-risk", EVIDENCE_RECORDS[1:], **options)
        server.rule = lambda r: Fault("400") if r.x == FAILING_CLAUSE else None
        failed = pingce.evaluate(
            "contract-risk", EVIDENCE_RECORDS, on_judge_failure=policy, **options
        )
        assert server.errors == []
    assert whole.failures.judge == 0 and failed.failures.judge > 0
    law = failed.metrics["law_hallucination_rate"]
    assert law.value == whole.metrics["law_hallucination_rate"].value == pytest.approx(2 / 3)
    assert (law.failed_records, law.n_scored, law.value_note) == (None, 3, None)
    assert failed.record_values()[0]["values"]["law_hallucination_rate"] == 0.0
    for name in CLAUSE_METRICS:
        entry = failed.metrics[name]
        assert entry.failed_records == 1 and entry.n_scored == 2, name
        if policy == "null":
            assert entry.value is None, name
            assert entry.undefined_reason == (
                "1 of 3 records had failed similarity calls (--on-judge-failure skip computes "
                "it over the others)"
            )
        else:
            assert entry.value == others.metrics[name].value, name
            assert "left out (--on-judge-failure skip)" in str(entry.value_note)
