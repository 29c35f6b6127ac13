"""Issue 28, point 12: a run stopped by SIGTERM or Ctrl+C (SIGINT) writes the answers it received
to the cache before it ends, so the rerun asks none of them again (after SIGKILL, at most the
last 0.2 s of answers are asked again: the documented bound). The process ends with the
conventional status and leaves nothing in --out."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.cli_run import ENV
from tests.loopback import LoopbackServer, Request

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "function_points" / "records.jsonl"
ANSWERED = 5
"""Requests the server answers before it holds every later one."""

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def child_env(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in ENV.items()
        if not k.upper().endswith("_PROXY") and not k.upper().startswith(("PINGCE_", "OPENAI_"))
    }
    env.update(NO_PROXY="127.0.0.1,localhost", PINGCE_STORE=str(tmp_path / "runs.db"))
    return env


def model_answer(request: Request) -> dict[str, object]:
    return {"content": f"answer to {request.prompt}"}


def judge_args(server: LoopbackServer, tmp_path: Path) -> tuple[list[str], int]:
    """A judge run of the function-points example (36 pairs; the suite's concurrency 16)."""
    args = ["run", "function-points", "--data", str(EXAMPLE), "--similarity", "openai:m"]
    return [*args, "--base-url", server.url], 16


def model_args(server: LoopbackServer, tmp_path: Path) -> tuple[list[str], int]:
    """A --model run of 30 records, 4 calls at a time."""
    data = tmp_path / "cases.jsonl"
    if not data.exists():
        lines = [
            json.dumps(
                {"id": f"r{i}", "query": f"问题 {i}", "tools": [WEATHER_TOOL], "gold_fn": []},
                ensure_ascii=False,
            )
            for i in range(30)
        ]
        data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["run", "function-call", "--data", str(data), "--model", "openai:m"]
    args += ["--base-url", server.url, "--model-concurrency", "4"]
    return args, 4


@pytest.mark.parametrize("kind", ["judge", "model"])
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_run_stopped_by_a_signal_keeps_every_answer_it_received(
    tmp_path: Path, kind: str, stop: signal.Signals
) -> None:
    make_args = judge_args if kind == "judge" else model_args
    cache = tmp_path / "cache.sqlite3"
    out = tmp_path / "out"
    with LoopbackServer(lifetime=120) as server:
        server.answer = model_answer
        args, concurrency = make_args(server, tmp_path)
        command = [sys.executable, "-m", "pingce", *args, "--cache", str(cache), "--bootstrap", "0"]
        server.hold_after(ANSWERED)
        child = subprocess.Popen(
            [*command, "--out", str(out)],
            env=child_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        try:
            # every worker that had an answer took it in and asked its next request: then all
            # ANSWERED answers are in the client's hands (waiting for the next cache write)
            deadline = time.monotonic() + 60
            while server.count() < ANSWERED + concurrency and child.poll() is None:
                assert time.monotonic() < deadline, "the run did not reach its held requests"
                time.sleep(0.005)
            child.send_signal(stop)
            stdout, stderr = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
        first = server.chat()
        answered = {r.prompt for r in first if r.answered}
        assert len(answered) == ANSWERED
        assert not out.exists(), sorted(p.name for p in out.iterdir())
        server.reset()
        server.release()
        # the rerun: the cache answers what the first run received, the rest is asked
        again = subprocess.run(
            [*command, "--no-store", "--out", str(tmp_path / "again")],
            env=child_env(tmp_path),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
        )
        asked = {r.prompt for r in server.chat()}
        assert server.errors == []
    assert again.returncode == 0, again.stderr
    assert answered & asked == set(), f"asked again: {len(answered & asked)} of {len(answered)}"
    assert asked | answered >= {r.prompt for r in first}
    conventional = (128 + stop, -stop)  # exit status 130 / 143, or ended by the signal itself
    assert child.returncode in conventional, (child.returncode, stdout, stderr)
    assert "Traceback" not in stderr, stderr


STOPPED_CALLS = """
import asyncio, os, signal, sys, threading
from pingce.remote.http import run_async
{install}
async def calls():
    try:
        await asyncio.sleep(30)
    finally:
        print("written", flush=True)  # where run_workers writes the answers to the cache
threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()
try:
    run_async(calls())
finally:
    print("unwound", flush=True)
"""


@pytest.mark.parametrize(
    ("install", "status", "lines"),
    [
        ("", -signal.SIGTERM, ["written"]),  # the default action, once the calls have unwound
        (  # a handler of the program's own (pingce's command line may end with 143): its
            # SystemExit is raised once the calls have unwound, and unwinds the rest
            "signal.signal(signal.SIGTERM, lambda n, f: sys.exit(128 + n))",
            128 + signal.SIGTERM,
            ["written", "unwound"],
        ),
        (  # a handler that lets the process live lets the calls go on (to their end, here)
            "signal.signal(signal.SIGTERM, lambda n, f: print('noted', flush=True))",
            0,
            ["noted", "written", "unwound"],
        ),
    ],
)
def test_the_handler_there_was_before_decides_after_the_calls_unwound(
    install: str, status: int, lines: list[str]
) -> None:
    from tests.cli_run import run_python

    script = STOPPED_CALLS.format(install=install)
    if status == 0:  # calls that end by themselves soon after the signal
        script = script.replace("asyncio.sleep(30)", "asyncio.sleep(1)")
    done = run_python("-c", script, timeout=60)
    assert done.returncode == status, done.stderr
    assert done.stdout.split() == lines and "Traceback" not in done.stderr


def test_ctrl_c_still_stops_pingce_view_with_status_0(tmp_path: Path) -> None:
    """pingce view serves until Ctrl+C, which is how it ends normally: status 0, not 130."""
    command = [sys.executable, "-m", "pingce", "view", "--store", str(tmp_path / "runs.db")]
    with subprocess.Popen(
        [*command, "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(tmp_path),
    ) as process:
        assert process.stdout is not None
        line = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line
        with urllib.request.urlopen(url.group(0), timeout=30) as response:  # it serves
            assert response.status == 200
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert "pingce view: stopped" in stdout + stderr
