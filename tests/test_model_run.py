"""``--model``: pingce runs the model under test (issue 15) against the loopback
OpenAI-compatible server, which answers as the model with tool calls or text; its faults (429
with Retry-After, 500, 400) are injected per request. No other network is used."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pingce
from pingce.errors import InputError, OptionError
from pingce.predict import messages_of, openai_tools, restore_names
from tests import cli_run
from tests.cli_run import run_pingce
from tests.loopback import Fault, LoopbackServer, Request, keep_local

SUITE_DIR = Path(__file__).resolve().parents[1] / "src" / "pingce" / "suites"

BFCL_FUNCTION = {
    "name": "math.triangle_area",
    "description": "Area of a triangle",
    "parameters": {
        "type": "dict",
        "properties": {
            "base": {"type": "float", "description": "base"},
            "sides": {"type": "tuple", "items": {"type": "integer"}},
            "extra": {"type": "any"},
            "unit": {"type": "string", "enum": ["cm", "m"]},
            "options": {"type": "dict", "properties": {"exact": {"type": "boolean"}}},
        },
        "required": ["base"],
    },
}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}

RECORDS: list[dict[str, Any]] = [
    {
        "id": "w1",
        "query": "北京今天天气怎么样？",
        "tools": [WEATHER_TOOL],
        "gold_fn": [{"name": "get_weather", "arguments": {"city": "北京"}}],
    },
    {
        "id": "w2",
        "query": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tools": [WEATHER_TOOL],
        "gold_fn": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
    },
    {
        "id": "t1",
        "query": "Area of a triangle with base 10?",
        "functions": [BFCL_FUNCTION],
        "gold_fn": [{"name": "math.triangle_area", "arguments": {"base": 10}}],
    },
    {
        "id": "n1",
        "query": "讲个笑话",
        "tools": [WEATHER_TOOL],
        "gold_fn": [],
    },
]

# what the loopback model answers to each prompt: tool calls (by the name it was sent) or text
CALLS: dict[str, list[tuple[str, dict[str, Any]]] | str] = {
    "北京今天天气怎么样？": [("get_weather", {"city": "北京"})],
    "What is the weather in Paris?": [("get_weather", {"city": "London"})],
    "Area of a triangle with base 10?": [("math_triangle_area", {"base": 10})],
    "讲个笑话": "从前有座山……",
}
# the same answers as plain prediction lists (names as the gold has them)
PREDICTIONS: dict[str, Any] = {
    "w1": [{"name": "get_weather", "arguments": {"city": "北京"}}],
    "w2": [{"name": "get_weather", "arguments": {"city": "London"}}],
    "t1": [{"name": "math.triangle_area", "arguments": {"base": 10}}],
    "n1": [],
}


def model_answer(request: Request) -> dict[str, Any]:
    """The loopback model: tool calls for known prompts, else text."""
    answer = CALLS.get(request.prompt or "", "I do not know.")
    if isinstance(answer, str):
        return {"content": answer}
    return {
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
            for i, (name, args) in enumerate(answer)
        ]
    }


@pytest.fixture(autouse=True)
def _local(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    keep_local(monkeypatch, tmp_path / "default-cache")
    monkeypatch.setitem(cli_run.ENV, "NO_PROXY", "127.0.0.1,localhost")
    for key in list(cli_run.ENV):
        if key.upper().endswith("_PROXY") and key.upper() != "NO_PROXY":
            monkeypatch.delitem(cli_run.ENV, key)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(lifetime=120) as srv:
        srv.answer = model_answer
        yield srv
        assert srv.errors == []


def with_predictions() -> list[dict[str, Any]]:
    return [{**r, "pred_fn": PREDICTIONS[r["id"]]} for r in RECORDS]


def values(result: pingce.EvaluationResult) -> dict[str, float | None]:
    return {name: m.value for name, m in result.metrics.items()}


def run_model(server: LoopbackServer, cache: Path, **options: Any) -> pingce.EvaluationResult:
    return pingce.evaluate(
        "function-call",
        RECORDS,
        model="openai:tiny-model",
        base_url=server.url,
        cache=str(cache),
        bootstrap=0,
        **options,
    )


# ------------------------------------------------------------------------- requests, tools


def test_bfcl_function_docs_become_openai_tools() -> None:
    tools, renamed = openai_tools([BFCL_FUNCTION, WEATHER_TOOL])
    function = tools[0]["function"]
    assert tools[0]["type"] == "function" and function["name"] == "math_triangle_area"
    assert renamed == {"math_triangle_area": "math.triangle_area"}
    params = function["parameters"]
    assert params["type"] == "object" and params["required"] == ["base"]
    props = params["properties"]
    assert props["base"] == {"type": "number", "description": "base"}
    assert props["sides"] == {"type": "array", "items": {"type": "integer"}}
    assert props["extra"] == {}  # any JSON value
    assert props["unit"] == {"type": "string", "enum": ["cm", "m"]}
    assert props["options"]["type"] == "object"
    assert tools[1] == WEATHER_TOOL  # an OpenAI tool passes unchanged
    assert BFCL_FUNCTION["parameters"]["type"] == "dict"  # the input is not changed
    with pytest.raises(ValueError, match='function 0 has no "name"'):
        openai_tools([{"description": "x"}])


def test_names_are_restored_in_the_answer() -> None:
    reply = {"choices": [{"message": {"tool_calls": [{"function": {"name": "a_b"}}]}}]}
    restored = restore_names(reply, {"a_b": "a.b"})
    assert restored["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "a.b"
    assert reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "a_b"


def test_messages_from_text_messages_and_bfcl_questions() -> None:
    assert messages_of("hi") == [{"role": "user", "content": "hi"}]
    nested = [[{"role": "user", "content": "hi"}]]  # BFCL's question: turns of messages
    assert messages_of(nested, system="be brief") == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]
    with pytest.raises(ValueError, match="a question of 2 turns"):
        messages_of([[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]])
    with pytest.raises(ValueError, match='message 0 has no "role"'):
        messages_of([{"content": "x"}])


def test_the_request_body(server: LoopbackServer, tmp_path: Path) -> None:
    run_model(server, tmp_path / "c.sqlite3", model_params={"max_tokens": 256, "seed": 7})
    bodies = {json.dumps(r.json["messages"], ensure_ascii=False): r.json for r in server.chat()}
    assert len(server.chat()) == 4
    first = bodies[
        json.dumps([{"role": "user", "content": "北京今天天气怎么样？"}], ensure_ascii=False)
    ]
    assert first["model"] == "tiny-model"
    assert first["tools"] == [WEATHER_TOOL]
    assert (first["temperature"], first["max_tokens"], first["seed"]) == (0, 256, 7)
    assert "stream" not in first
    bfcl = next(b for b in bodies.values() if b["messages"][0]["content"].startswith("Area"))
    assert bfcl["tools"] == openai_tools([BFCL_FUNCTION])[0]


# --------------------------------------------------------------------- values and the cache


def test_values_equal_scoring_the_same_answers_from_a_file(
    server: LoopbackServer, tmp_path: Path
) -> None:
    result = run_model(server, tmp_path / "c.sqlite3")
    expected = pingce.evaluate("function-call", with_predictions(), bootstrap=0)
    assert values(result) == values(expected)
    assert result.metrics["fn_acc_all"].value == pytest.approx(0.75)  # Paris != London
    assert result.failures.model == 0  # type: ignore[attr-defined]
    assert result.model is not None
    assert (result.model["requests"], result.model["cached_answers"]) == (4, 0)
    assert result.model["prompt_tokens"] > 0 and result.model["completion_tokens"] > 0
    assert result.signature.model.startswith("openai:tiny-model|url=")  # type: ignore[attr-defined]
    predictions = result.predictions
    assert predictions is not None and len(predictions) == 4
    t1 = next(p for p in predictions if p["id"] == "t1")
    # the whole chat.completion, with the BFCL name restored, and the call's latency
    assert t1["pred_fn"]["object"] == "chat.completion"
    call = t1["pred_fn"]["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] == "math.triangle_area"
    assert t1["latency_sec"] > 0


def test_a_rerun_is_answered_by_the_cache(server: LoopbackServer, tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite3"
    first = run_model(server, cache)
    asked = server.count()
    second = run_model(server, cache)
    assert server.count() == asked == 4  # not one request the second time
    assert values(first) == values(second)
    assert second.model is not None
    assert (second.model["requests"], second.model["cached_answers"]) == (0, 4)
    assert first.predictions == second.predictions  # latencies too: measured when first asked
    assert any("came from the cache" in note for note in second.notes)
    # a changed parameter is a different request: asked again
    run_model(server, cache, model_params={"temperature": 0.5})
    assert server.count() == 8


def test_equal_requests_are_asked_once(server: LoopbackServer, tmp_path: Path) -> None:
    """Two records with the same prompt, tools and parameters make one call, and both get its
    answer; the progress bar counts records, so it ends full."""
    from pingce.engine import evaluate_suite
    from pingce.options import run_options

    twins = [*RECORDS, {**RECORDS[0], "id": "w1-again"}, {**RECORDS[2], "id": "t1-again"}]
    bars, hook = _recorded_bars()

    options = run_options(
        {"model": "openai:m", "base_url": server.url, "cache": str(tmp_path / "c"), "bootstrap": 0}
    )
    result = evaluate_suite("function-call", twins, options, progress=hook)
    assert server.count() == 4  # 6 records, 4 distinct requests
    assert result.model is not None
    assert (result.model["records"], result.model["requests_distinct"]) == (6, 4)
    assert result.model["requests"] == 4
    assert bars["model m"] == [6.0, 6.0]
    predictions = {p["id"]: p["pred_fn"] for p in result.predictions or []}
    assert predictions["w1-again"] == predictions["w1"]
    assert predictions["t1-again"] == predictions["t1"]
    # a rerun: every record from the cache, not one call
    evaluate_suite("function-call", twins, options, progress=hook)
    assert server.count() == 4 and bars["model m"] == [6.0, 6.0]
    # without the cache the twins are still asked once
    pingce.evaluate(
        "function-call", twins, model="openai:m", base_url=server.url, cache=False, bootstrap=0
    )
    assert server.count() == 8


def test_retry_after_is_honoured(server: LoopbackServer, tmp_path: Path) -> None:
    server.script(Fault("429", 0.3), Fault("500", 0.0))
    started = time.monotonic()
    result = run_model(server, tmp_path / "c.sqlite3", model_concurrency=1)
    assert time.monotonic() - started >= 0.3
    assert result.model is not None
    assert (result.model["retries"], result.model["failures"]) == (2, 0)
    assert values(result) == values(
        pingce.evaluate("function-call", with_predictions(), bootstrap=0)
    )


# ------------------------------------------------------------------------------ failures


def fail_paris(request: Request) -> Fault | None:
    return Fault("400", text="model overloaded") if "Paris" in (request.prompt or "") else None


def test_a_failed_call_is_counted_never_a_wrong_answer(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.rule = fail_paris
    result = run_model(server, tmp_path / "c.sqlite3", slice="id")
    assert result.failures.model == 1  # type: ignore[attr-defined]
    entry = result.metrics["fn_acc_all"]
    assert entry.value is None and entry.failed_records == entry.model_failed_records == 1
    assert entry.undefined_reason == (
        "1 of 4 records had failed model calls (--on-judge-failure skip computes it over the "
        "others)"
    )
    assert result.slices["id=w1"].metrics["fn_acc_all"].value == 1.0
    rows = {r["id"]: r for r in result.record_values()}
    assert rows["w2"]["values"]["fn_acc_all"] is None
    w2 = next(p for p in result.predictions or [] if p["id"] == "w2")
    assert "pred_fn" not in w2 and w2["model_error"] == "http 400"
    assert server.count() == 4  # a 400 is not retried
    # skip: the value over the other records, equal to scoring those alone
    skipped = run_model(server, tmp_path / "c.sqlite3", on_judge_failure="skip")
    assert server.count() == 5  # a failure is never cached: only it is asked again
    assert skipped.model is not None and skipped.model["cached_answers"] == 3
    others = [r for r in with_predictions() if r["id"] != "w2"]
    alone = pingce.evaluate("function-call", others, bootstrap=0)
    assert values(skipped) == values(alone)
    assert skipped.metrics["fn_acc_all"].value == 1.0
    assert "1 of 4 records had failed model calls, left out" in (
        skipped.metrics["fn_acc_all"].value_note or ""
    )


def test_a_record_without_the_prompt_is_an_input_error(
    server: LoopbackServer, tmp_path: Path
) -> None:
    data = tmp_path / "cases.jsonl"
    lines = [dict(RECORDS[0]), {k: v for k, v in RECORDS[1].items() if k != "query"}]
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines) + "\n")
    with pytest.raises(InputError) as caught:
        pingce.evaluate(
            "function-call", str(data), model="openai:m", base_url=server.url, cache=False
        )
    assert f"{data}:2" in str(caught.value) and "'query'" in str(caught.value)
    assert server.count() == 0  # nothing asked before the input is valid


def test_no_endpoint_is_an_option_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --base-url, PINGCE_BASE_URL or OPENAI_BASE_URL: an error naming them (the
    endpoint found as the judge finds its own); OPENAI_BASE_URL alone is enough."""
    cache = tmp_path / "c.sqlite3"
    options = {"model": "openai:m", "cache": str(cache), "bootstrap": 0}
    with pytest.raises(OptionError, match="--model openai:m needs an endpoint: --base-url"):
        pingce.evaluate("function-call", RECORDS, **options)
    with LoopbackServer(lifetime=60) as srv:
        srv.answer = model_answer
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        result = pingce.evaluate("function-call", RECORDS, **options)
        assert srv.count() == 4 and result.failures.model == 0  # type: ignore[attr-defined]


def test_a_dead_endpoint_fails_fast(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(OptionError, match="cannot connect"):
        pingce.evaluate(
            "function-call",
            RECORDS,
            model="openai:m",
            base_url=f"http://127.0.0.1:{port}/v1",
            cache=False,
            bootstrap=0,
        )
    assert time.monotonic() - started < 10


def test_options_need_model_and_a_suite_block() -> None:
    with pytest.raises(OptionError, match="--model-param: needs --model"):
        pingce.evaluate("function-call", RECORDS, model_params={"temperature": 1})
    with pytest.raises(OptionError, match="expected openai:NAME"):
        pingce.evaluate("function-call", RECORDS, model="gpt-4o")
    with pytest.raises(OptionError, match="has no `model:` block"):
        pingce.evaluate(
            "contract-risk", [{"id": "a"}], model="openai:m", base_url="http://127.0.0.1:9/v1"
        )


def test_latency_feeds_the_latency_metrics(server: LoopbackServer, tmp_path: Path) -> None:
    suite = tmp_path / "timed.yaml"
    text = (SUITE_DIR / "function-call.yaml").read_text(encoding="utf-8")
    text = text.replace("metrics:\n", "metrics:\n  avg_latency_sec: {}\n  p95_latency_sec: {}\n", 1)
    suite.write_text(text, encoding="utf-8")
    server.latency = 0.02
    cache = tmp_path / "c.sqlite3"
    result = pingce.evaluate(
        str(suite), RECORDS, model="openai:m", base_url=server.url, cache=str(cache), bootstrap=0
    )
    latencies = [p["latency_sec"] for p in result.predictions or []]
    assert min(latencies) >= 0.02
    assert result.metrics["avg_latency_sec"].value == pytest.approx(sum(latencies) / 4)
    again = pingce.evaluate(
        str(suite), RECORDS, model="openai:m", base_url=server.url, cache=str(cache), bootstrap=0
    )
    assert again.metrics["avg_latency_sec"].value == result.metrics["avg_latency_sec"].value


# ------------------------------------------------------------------------ the command line


def test_command_line_end_to_end_and_predictions_rescored(
    server: LoopbackServer, tmp_path: Path
) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in RECORDS) + "\n", encoding="utf-8"
    )
    out = tmp_path / "out"
    done = run_pingce(
        "run", "function-call", "--data", str(data), "--out", str(out),
        "--model", "openai:tiny-model", "--base-url", server.url,
        "--cache", str(tmp_path / "c.sqlite3"), "--bootstrap", "0", "--no-store",
        "--model-param", "max_tokens=64",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved["model"]["requests"] == 4 and saved["failures"]["model"] == 0
    assert "model openai:tiny-model: 4 records, 4 requests, 0 answers from the cache" in done.stdout
    assert "Model under test: openai:tiny-model" in (out / "report.md").read_text(encoding="utf-8")
    assert server.chat()[0].json["max_tokens"] == 64
    expected = pingce.evaluate("function-call", with_predictions(), bootstrap=0)
    assert {k: v["value"] for k, v in saved["metrics"].items()} == values(expected)
    # predictions.jsonl is the input with the answers: scored again with no model, equal
    predictions = out / "predictions.jsonl"
    lines = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    assert [p["id"] for p in lines] == [r["id"] for r in RECORDS]
    assert lines[0]["query"] == RECORDS[0]["query"]
    again = run_pingce(
        "run", "function-call", "--data", str(predictions), "--out", str(tmp_path / "again"),
        "--bootstrap", "0", "--no-store",
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    rescored = json.loads((tmp_path / "again" / "results.json").read_text(encoding="utf-8"))
    assert rescored["metrics"] == saved["metrics"]
    assert server.count() == 4


def test_command_line_failed_calls_exit_3(server: LoopbackServer, tmp_path: Path) -> None:
    server.rule = fail_paris
    data = tmp_path / "cases.jsonl"
    data.write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in RECORDS) + "\n", encoding="utf-8"
    )
    out = tmp_path / "out"
    done = run_pingce(
        "run", "function-call", "--data", str(data), "--out", str(out),
        "--model", "openai:m", "--base-url", server.url, "--no-cache", "--bootstrap", "0",
        "--no-store",
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved["failures"]["model"] == 1
    assert saved["metrics"]["fn_acc_all"]["value"] is None
    assert "failed model calls" in done.stdout


def test_a_sample_asks_only_the_drawn_records(server: LoopbackServer, tmp_path: Path) -> None:
    result = run_model(server, tmp_path / "c.sqlite3", sample=2, seed=3)
    assert server.count() == 2 and result.n_records == 2
    assert result.sampling is not None and result.data is not None
    assert result.data.n_loaded == 4
    drawn = {p["id"] for p in result.predictions or []}
    expected = pingce.evaluate(
        "function-call", [r for r in with_predictions() if r["id"] in drawn], bootstrap=0
    )
    assert values(result) == values(expected)


def test_the_key_comes_from_the_named_variable_and_is_written_nowhere(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_MODEL_KEY", "sk-secret-123")
    out = tmp_path / "out"
    run_model(server, tmp_path / "c.sqlite3", api_key_env="MY_MODEL_KEY", out=str(out))
    assert {r.headers.get("authorization") for r in server.chat()} == {"Bearer sk-secret-123"}
    for path in out.iterdir():
        assert b"sk-secret-123" not in path.read_bytes(), path.name
    for path in tmp_path.glob("c.sqlite3*"):  # the database and its write-ahead log
        assert b"sk-secret-123" not in path.read_bytes(), path.name
    with pytest.raises(OptionError, match="--api-key-env NOT_SET_ANYWHERE: the variable is not"):
        run_model(server, tmp_path / "c.sqlite3", api_key_env="NOT_SET_ANYWHERE")


def test_the_model_base_url_s_secrets_are_sent_and_written_nowhere(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """Issue 28: a user and password in --model-base-url go as a basic Authorization header and
    its query with every request; predictions.jsonl's model block, results.json, the run store
    and the console show the public URL only."""
    import base64

    data = tmp_path / "cases.jsonl"
    data.write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in RECORDS) + "\n", encoding="utf-8"
    )
    url = f"http://me:pw-SECRET@127.0.0.1:{server.port}/v1?api-version=1&access_token=tk-SECRET"
    out, store = tmp_path / "out", tmp_path / "runs.db"
    done = run_pingce(
        "run", "function-call", "--data", str(data), "--out", str(out),
        "--model", "openai:m", "--model-base-url", url, "--no-cache", "--bootstrap", "0",
        "--store", str(store), "--name", "model-run",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    basic = "Basic " + base64.b64encode(b"me:pw-SECRET").decode()
    assert {(r.path, r.url_query, r.headers.get("authorization")) for r in server.chat()} == {
        ("/v1/chat/completions", "api-version=1&access_token=tk-SECRET", basic)
    }
    shown = f"http://127.0.0.1:{server.port}/v1?api-version=1&access_token=***"
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert f"url={shown}|" in saved["model"]["signature"]
    listed = run_pingce("runs", "--json", "--store", str(store))
    assert json.loads(listed.stdout)[0]["options"]["model_base_url"] == shown
    shown_run = run_pingce("runs", "show", "model-run", "--store", str(store))
    texts = [done.stdout, done.stderr, listed.stdout, shown_run.stdout]
    blobs = [path.read_bytes() for path in [*out.iterdir(), *tmp_path.glob("runs.db*")]]
    for blob in [t.encode() for t in texts] + blobs:
        assert b"pw-SECRET" not in blob and b"tk-SECRET" not in blob


def test_the_model_phase_has_a_progress_bar(server: LoopbackServer, tmp_path: Path) -> None:
    from pingce.engine import evaluate_suite
    from pingce.options import run_options

    bars, hook = _recorded_bars()

    options = run_options(
        {"model": "openai:m", "base_url": server.url, "cache": str(tmp_path / "c"), "bootstrap": 0}
    )
    evaluate_suite("function-call", RECORDS, options, progress=hook)
    assert bars["model m"] == [4.0, 4.0]
    evaluate_suite("function-call", RECORDS, options, progress=hook)  # from the cache
    assert bars["model m"] == [4.0, 4.0]


def test_a_suite_declares_its_fields_by_yaml(server: LoopbackServer, tmp_path: Path) -> None:
    """A BFCL-shaped suite (question as turns of messages, functions as BFCL docs, suite-level
    tools from a file, a system message) plugs in by its model: block alone."""
    text = (SUITE_DIR / "function-call.yaml").read_text(encoding="utf-8")
    head, _, _ = text.partition("model:")
    (tmp_path / "tools.json").write_text(json.dumps([WEATHER_TOOL]), encoding="utf-8")
    block = (
        "model:\n  prompt: [question, query]\n  tools: [function]\n"
        "  default_tools: tools.json\n  prediction: pred_fn\n  latency: null\n"
        "  system: Call a function.\n  parameters: {max_tokens: 32}\n"
    )
    suite = tmp_path / "bfcl.yaml"
    suite.write_text(head + block, encoding="utf-8")
    records = [
        {
            "id": "simple_0",
            "question": [[{"role": "user", "content": "Area of a triangle with base 10?"}]],
            "function": [BFCL_FUNCTION],
            "gold_fn": [{"name": "math.triangle_area", "arguments": {"base": 10}}],
        },
        {
            "id": "simple_1",
            "query": "北京今天天气怎么样？",  # no tools of its own: the suite's
            "gold_fn": [{"name": "get_weather", "arguments": {"city": "北京"}}],
        },
    ]
    result = pingce.evaluate(
        str(suite), records, model="openai:m", base_url=server.url, cache=False, bootstrap=0
    )
    assert result.metrics["fn_acc_all"].value == 1.0
    first, second = (r.json for r in server.chat())
    by_prompt = {b["messages"][-1]["content"]: b for b in (first, second)}
    bfcl = by_prompt["Area of a triangle with base 10?"]
    assert bfcl["messages"][0] == {"role": "system", "content": "Call a function."}
    assert bfcl["tools"] == openai_tools([BFCL_FUNCTION])[0] and bfcl["max_tokens"] == 32
    assert by_prompt["北京今天天气怎么样？"]["tools"] == [WEATHER_TOOL]
    assert all("latency_sec" not in p for p in result.predictions or [])
    # the messages sent travel with each record: the prompt's fields are its context
    rows = result.records
    assert rows is not None
    assert rows.context["question"][0] == records[0]["question"]
    assert rows.context["query"][1] == "北京今天天气怎么样？"


def test_function_call_hf_runs_the_model_too(server: LoopbackServer, tmp_path: Path) -> None:
    result = pingce.evaluate(
        "function-call-hf", RECORDS, model="openai:m", base_url=server.url, cache=False,
        bootstrap=0,
    )  # fmt: skip
    expected = pingce.evaluate("function-call-hf", with_predictions(), bootstrap=0)
    assert values(result) == values(expected) and server.count() == 4


@pytest.mark.parametrize("shape", ["array", "object"])
def test_json_files_are_read_whole(server: LoopbackServer, tmp_path: Path, shape: str) -> None:
    data = tmp_path / "cases.json"
    document: Any = RECORDS if shape == "array" else RECORDS[0]
    data.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    result = pingce.evaluate(
        "function-call", str(data), model="openai:m", base_url=server.url, cache=False,
        bootstrap=0,
    )  # fmt: skip
    assert result.n_records == (4 if shape == "array" else 1)
    assert all("query" in p and "pred_fn" in p for p in result.predictions or [])


def test_saved_statistics_keep_the_model_failures(server: LoopbackServer, tmp_path: Path) -> None:
    """stats.npz keeps which records the model did not answer: a stored run read back (as
    ``pingce compare RUN_A RUN_B`` does) says "failed model calls" as the run did."""
    from pingce.engine.phases import plan_run
    from pingce.engine.saved import saved_blocks
    from pingce.engine.values import policed_result
    from pingce.options import RunOptions

    server.rule = fail_paris
    result = run_model(server, tmp_path / "c.sqlite3")
    assert result.outputs is not None and result.outputs.stats is not None
    plan = plan_run("function-call", RunOptions(bootstrap=0))
    blocks = saved_blocks(result.outputs.stats, plan)
    again = policed_result(plan.metrics["fn_acc_all"], blocks[plan.keys["fn_acc_all"]], "null")
    assert again.undefined_reason == result.metrics["fn_acc_all"].undefined_reason
    assert again.model_failed_records == 1


def test_the_tool_use_suite_runs_the_model(server: LoopbackServer, tmp_path: Path) -> None:
    """tool-use plugs in by its model: block: BFCL questions and function docs (BFCL's own field
    names), the model's tool calls checked as BFCL does; an abstention where no call fits."""
    records = [
        {
            "id": "simple_0",
            "question": [[{"role": "user", "content": "Area of a triangle with base 10?"}]],
            "function": [BFCL_FUNCTION],
            "ground_truth": [{"math.triangle_area": {"base": [10.0], "unit": ["cm", ""]}}],
        },
        {
            "id": "simple_1",
            "query": "What is the weather in Paris?",
            "functions": [WEATHER_TOOL],
            "gold": [{"get_weather": {"city": ["Paris"]}}],
        },
        {"id": "irrelevance_0", "query": "讲个笑话", "functions": [WEATHER_TOOL], "gold": []},
    ]
    result = pingce.evaluate(
        "tool-use", records, model="openai:m", base_url=server.url, cache=False, bootstrap=0
    )
    assert server.count() == 3
    # base 10 (an integer) is right where float is declared; London is not among ['Paris'];
    # the joke is a correct abstention
    assert result.metrics["tool_call_accuracy"].value == pytest.approx(2 / 3)
    assert result.metrics["tool_name_accuracy"].value == 1.0
    sent = {r.json["messages"][-1]["content"]: r.json for r in server.chat()}
    assert sent["Area of a triangle with base 10?"]["tools"] == openai_tools([BFCL_FUNCTION])[0]


def _recorded_bars() -> tuple[dict[str, list[float]], Any]:
    """A progress hook that records each bar as ``[total, advanced so far]`` by description."""
    bars: dict[str, list[float]] = {}

    def hook(description: str, total: float | None) -> Any:
        bars[description] = [total or 0.0, 0.0]

        def advance(amount: float) -> None:
            bars[description][1] += amount

        return advance

    return bars, hook


def test_an_integer_beyond_64_bits_in_a_schema_is_sent_and_cached(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """A function doc may hold any JSON integer (``"maximum": 2**70``): the request carries it
    exactly (the standard library writes what orjson cannot), the answer is cached under it,
    and a rerun asks nothing (was a TypeError from orjson in the cache key)."""
    big = 2**70
    function = {**BFCL_FUNCTION, "parameters": {**BFCL_FUNCTION["parameters"], "maximum": big}}
    records = [
        {
            "id": "simple_0",
            "question": [[{"role": "user", "content": "Area of a triangle with base 10?"}]],
            "function": [function],
            "ground_truth": [{"math.triangle_area": {"base": [10.0], "unit": ["cm", ""]}}],
        }
    ]
    cache = tmp_path / "c.sqlite3"
    options = {"model": "openai:m", "base_url": server.url, "cache": str(cache), "bootstrap": 0}
    first = pingce.evaluate("tool-use", records, **options)
    assert server.count() == 1
    assert json.loads(server.chat()[0].body)["tools"][0]["function"]["parameters"]["maximum"] == big
    again = pingce.evaluate("tool-use", records, **options)
    assert server.count() == 1  # the rerun is answered by the cache
    assert again.metrics["tool_call_accuracy"].value == first.metrics["tool_call_accuracy"].value
    assert first.metrics["tool_call_accuracy"].value == 1.0
