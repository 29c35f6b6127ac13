"""The LLM judge's output modes: JSON structured output where the server supports it, else the
answer's one number; against the loopback server (tests/loopback.py), which honours
``response_format``, refuses it as older vLLM and llama.cpp servers do (400) or as a FastAPI
validator does (422), and answers in prose when nothing constrains it. Every expected score is the
server's own rule (character Jaccard), computed here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pingce
from pingce.errors import OptionError
from pingce.similarity import SimilarityCache, make_backend
from pingce.similarity.judge import JudgeBackend, parse_score
from pingce.suites import load_suite

from .loopback import Fault, LoopbackServer, char_jaccard, keep_local

FAST: dict[str, Any] = {"backoff": 0.01, "max_backoff": 1.0, "timeout": 5.0}
SCHEMA_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "similarity",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}},
            "required": ["score"],
            "additionalProperties": False,
        },
    },
}
"""The response_format of the issue, written out here (not read from pingce)."""
PAIRS = [
    ("员工信息", "员工信息表"),
    ("订单", "订单明细"),
    ("Customer Account", "customer account"),
    ("合同", "合同条款"),
    ("考勤记录", "考勤"),
    ("Payroll", "payroll run"),
    ("入库单", "出库单"),
    ("客户", "供应商"),
    ("abc", "xyz"),
    ("甲方应于五日内付款", "乙方应于五日内付款"),
]
MORE = [("发票", "发票明细"), ("库存", "库存表"), ("x1", "x2")]
PROSE = {
    "zh": "两者相似度为{score}。",
    "en": "Both name the same data group, so I would rate them {score} overall.",
    "thinking": "<think>\nscore 0.5? no, look again: 0.25\n</think>\nSimilarity: {score}",
}


@pytest.fixture(autouse=True)
def _local_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No proxies (all traffic stays on 127.0.0.1), no stray keys, a private cache folder."""
    keep_local(monkeypatch, tmp_path / "default-cache")


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(lifetime=120) as srv:
        yield srv
    assert not srv.errors, srv.errors


def assert_meant(table: Any, pairs: list[tuple[str, str]]) -> None:
    """Every pair scored exactly what the server meant."""
    for a, b in pairs:
        assert table.get(a, b) == pytest.approx(char_jaccard(a, b), abs=1e-12), (a, b)


def suite_with(**similarity: Any) -> Any:
    spec = load_suite("function-points").spec
    return spec.model_copy(update={"similarity": similarity})


# reading an answer -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('<think>{"score":0.1}</think>{"score":0.9}', 0.9),
        ('<think>{"score": 0.1}</think>\n```json\n{"score": 0.9}\n```', 0.9),
        ('{"score": 0.9, "reason": "same table"}', 0.9),
        ('{"score":0}', 0.0),
        ('{"score": 1.2}', None),
        ('<think>{"score": 0.9}', None),  # still thinking: cut by max_tokens
        ("相似度 0.3，因为一个是入库一个是出库", 0.3),
    ],
)
def test_a_json_answer_is_read_after_thinking_and_fences(answer: str, expected: float) -> None:
    assert parse_score(answer) == expected


def test_a_reasoning_models_json_answer_through_the_server(server: LoopbackServer) -> None:
    server.script(Fault("text", text='<think>{"score":0.1}</think>{"score":0.9}'))
    backend = JudgeBackend("m", base_url=server.url, concurrency=1, **FAST)
    table, stats = backend.score([("订单", "客户")])
    assert table.get("订单", "客户") == 0.9
    assert (stats.requests, stats.retries, stats.failures) == (1, 0, 0)


# what is asked ---------------------------------------------------------------------------


def test_every_request_carries_the_schema_and_the_prompt_asks_for_json(
    server: LoopbackServer,
) -> None:
    server.prose = PROSE["en"]  # only an answer that no response_format constrains is prose
    backend = JudgeBackend("m", base_url=server.url, concurrency=4, **FAST)
    table, stats = backend.score(PAIRS)
    log = server.chat()
    assert len(log) == len(PAIRS) == stats.requests
    for request in log:
        assert request.json["response_format"] == SCHEMA_FORMAT
        assert request.prompt is not None and '{"score":' in request.prompt
        assert request.content is not None and set(json.loads(request.content)) == {"score"}
    assert_meant(table, PAIRS)
    assert (stats.retries, stats.failures) == (0, 0)


def test_the_first_call_goes_alone_then_the_others_concurrently(server: LoopbackServer) -> None:
    """``auto`` learns whether the server takes response_format from one call before the others
    start, so a server that refuses it refuses one call, not one per connection."""
    server.latency = 0.1
    backend = JudgeBackend("m", base_url=server.url, concurrency=4, **FAST)
    backend.score(PAIRS)
    first, *rest = server.chat()
    assert first.responded is not None
    assert all(r.received >= first.responded for r in rest)
    assert server.max_in_flight == 4
    server.reset()
    backend.score(MORE)  # known now: no call goes alone
    received = [r.received for r in server.chat()]
    assert len(received) == len(MORE) and max(received) - min(received) < 0.09


@pytest.mark.parametrize(
    ("structured", "sent"),
    [
        ("json_schema", SCHEMA_FORMAT),
        ("json_object", {"type": "json_object"}),
        ("off", None),
    ],
)
def test_each_mode_sends_its_response_format(
    server: LoopbackServer, structured: str, sent: dict[str, Any] | None
) -> None:
    server.prose = PROSE["zh"]
    backend = JudgeBackend("m", base_url=server.url, structured=structured, **FAST)
    table, stats = backend.score(PAIRS)
    log = server.chat()
    assert len(log) == len(PAIRS) and stats.failures == 0
    assert all(r.json.get("response_format") == sent for r in log)
    assert all("response_format" not in r.json for r in log) == (sent is None)
    assert_meant(table, PAIRS)  # JSON when asked for, else the prose's one number


# a server that refuses response_format ---------------------------------------------------


@pytest.mark.parametrize("refusal", ["reject", "reject-422"])
@pytest.mark.parametrize("prose", [None, *PROSE])
def test_a_refused_response_format_is_asked_again_once_without_it(
    server: LoopbackServer, refusal: Any, prose: str | None
) -> None:
    server.formats = refusal
    server.prose = None if prose is None else PROSE[prose]
    backend = JudgeBackend("m", base_url=server.url, concurrency=4, **FAST)
    signature = backend.signature()
    table, stats = backend.score(PAIRS)
    first, again, *rest = server.chat()
    # the first call carried the schema and was refused ...
    assert first.json["response_format"] == SCHEMA_FORMAT
    assert first.status == (400 if refusal == "reject" else 422)
    # ... asked once more for the same pair without it, and no later call carried it
    assert again.pair == first.pair and "response_format" not in again.json
    assert all("response_format" not in r.json for r in rest)
    assert sorted(r.pair for r in [again, *rest] if r.pair) == sorted(PAIRS)
    assert all(r.status == 200 for r in [again, *rest])
    assert_meant(table, PAIRS)
    assert stats.failures == 0 and not stats.failure_reasons
    assert (stats.requests, stats.retries) == (len(PAIRS) + 1, 1)
    assert backend.format_refused and backend.signature() == signature
    # the backend remembers: its next pairs are asked without response_format at once
    server.reset()
    table, stats = backend.score(MORE)
    assert len(server.chat()) == len(MORE) == stats.requests
    assert all("response_format" not in r.json for r in server.chat())
    assert_meant(table, MORE)
    # a new backend learns it again, with one refused call
    server.reset()
    JudgeBackend("m", base_url=server.url, **FAST).score(MORE)
    assert [r.status for r in server.chat()].count(200) == len(MORE)
    assert len(server.chat()) == len(MORE) + 1


def test_a_refusing_server_costs_no_failure_in_a_run(server: LoopbackServer) -> None:
    """The same run against a server that honours response_format and one that refuses it (and
    answers in prose): the same numbers, no failed judge call."""
    records = [
        {"id": f"r{i}", "task": "selection", "gold_items": [b, "无关"], "pred_items": [a]}
        for i, (a, b) in enumerate(PAIRS)
    ]
    options: dict[str, Any] = {
        "similarity": "openai:m",
        "base_url": server.url,
        "cache": False,
        "bootstrap": 0,
    }
    honoured = pingce.evaluate(suite_with(**FAST), records, **options)
    server.formats, server.prose = "reject", PROSE["thinking"]
    server.reset()
    refused = pingce.evaluate(suite_with(**FAST), records, **options)
    assert refused.failures.judge == 0
    assert refused.similarity is not None and refused.similarity["failures"] == 0
    assert refused.similarity["requests"] == honoured.similarity["requests"] + 1  # type: ignore[index]
    for name in ("sem_precision", "sem_recall", "sem_f1"):
        assert refused.value(name) == honoured.value(name)
        assert refused.value(name) is not None
    assert refused.signature.similarity == honoured.signature.similarity
    assert sum(r.status == 400 for r in server.chat()) == 1


def test_an_explicit_mode_is_never_dropped(server: LoopbackServer) -> None:
    """``json_schema`` (or ``json_object``) insists: a refusal is a failed call that says what
    to change, and the request is not made again without it."""
    server.formats = "reject"
    backend = JudgeBackend("m", base_url=server.url, structured="json_schema", **FAST)
    table, stats = backend.score(PAIRS[:3])
    log = server.chat()
    assert len(log) == 3 and all(r.json["response_format"] == SCHEMA_FORMAT for r in log)
    assert all(table.failed(*pair) for pair in PAIRS[:3])
    assert stats.failures == 3 and stats.retries == 0
    ((reason, count),) = stats.failure_reasons.items()
    assert count == 3
    assert reason.startswith("http 400: the server refused response_format") and "auto" in reason


def test_another_400_is_a_failure_not_a_refusal(server: LoopbackServer) -> None:
    """A 400 that does not name response_format (a prompt beyond the context) is the pair's
    failure; the backend goes on asking for structured output."""
    server.script(Fault("400", text="This model's maximum context length is 4096 tokens."))
    backend = JudgeBackend("m", base_url=server.url, concurrency=4, **FAST)
    table, stats = backend.score(PAIRS)
    log = server.chat()
    assert len(log) == len(PAIRS)
    assert all(r.json["response_format"] == SCHEMA_FORMAT for r in log)
    assert stats.failures == 1 and stats.failure_reasons == {"http 400": 1}
    assert not backend.format_refused
    assert table.failed(*log[0].pair)  # type: ignore[misc]
    assert_meant(table, [p for p in PAIRS if p != log[0].pair])


def test_a_server_that_ignores_response_format_is_read_from_its_prose(
    server: LoopbackServer,
) -> None:
    server.formats, server.prose = "ignore", PROSE["thinking"]
    backend = JudgeBackend("m", base_url=server.url, **FAST)
    table, stats = backend.score(PAIRS)
    assert all(r.json["response_format"] == SCHEMA_FORMAT for r in server.chat())
    assert all(r.content and r.content.startswith("<think>") for r in server.chat())
    assert_meant(table, PAIRS)
    assert stats.failures == 0 and not backend.format_refused


# the cache key ---------------------------------------------------------------------------


def test_the_signature_names_the_mode_and_changes_with_the_prompt() -> None:
    url = "http://127.0.0.1:9/v1"
    default = JudgeBackend("m", base_url=url).signature()
    assert default == JudgeBackend("m", base_url=url, structured="auto").signature()
    assert default.startswith(f"openai:m|url={url}|template=")
    assert default.endswith("|temperature=0|max_tokens=1024|structured=auto")
    others = {
        JudgeBackend("m", base_url=url, structured=mode).signature()
        for mode in ("json_schema", "json_object", "off")
    }
    others.add(JudgeBackend("m", base_url=url, template="{a} vs {b}?").signature())
    others.add(JudgeBackend("m", base_url=url, system="You are an IFPUG expert.").signature())
    others.add(JudgeBackend("m", base_url=url, max_tokens=4096).signature())
    assert len(others) == 6 and default not in others


def test_a_rerun_of_the_same_configuration_is_free_and_another_mode_asks_again(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.formats, server.prose = "reject", PROSE["zh"]
    cache = SimilarityCache(tmp_path / "scores.sqlite3")
    try:
        first, _ = JudgeBackend("m", base_url=server.url, cache=cache, **FAST).score(PAIRS)
        assert server.count() == len(PAIRS) + 1
        server.reset()
        again, stats = JudgeBackend("m", base_url=server.url, cache=cache, **FAST).score(PAIRS)
        assert server.count() == 0 and stats.cache_hits == len(PAIRS)  # not even a probe
        assert again.values == first.values
        off = JudgeBackend("m", base_url=server.url, cache=cache, structured="off", **FAST)
        _, stats = off.score(PAIRS)
        assert server.count() == len(PAIRS) and stats.cache_hits == 0
    finally:
        cache.close()


# the option ------------------------------------------------------------------------------


def test_structured_is_a_suite_option(server: LoopbackServer) -> None:
    backend = make_backend(
        "openai:m", base_url=server.url, cache=False, options={"structured": "json_object"}
    )
    assert isinstance(backend, JudgeBackend) and backend.structured == "json_object"
    records = [{"id": "a", "task": "selection", "gold_items": ["订单"], "pred_items": ["订单表"]}]
    options: dict[str, Any] = {
        "similarity": "openai:m",
        "base_url": server.url,
        "cache": False,
        "bootstrap": 0,
    }
    result = pingce.evaluate(suite_with(structured="off"), records, **options)
    assert "response_format" not in server.chat()[-1].json
    assert result.signature.similarity is not None
    assert result.signature.similarity.endswith("|structured=off")
    with pytest.raises(OptionError, match="structured: 'yes'; one of auto, json_schema"):
        pingce.evaluate(suite_with(structured="yes"), records, **options)
