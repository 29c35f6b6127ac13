"""Issue 28, points 3 and 5: a base URL's secrets (a user and password, ``?api-key=...``) are sent
to the server and never stored or shown (:func:`pingce.urls.public_url` is the one form shown);
a malformed base URL is an option error before any work, not 216 retried requests."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import pingce
from pingce.errors import OptionError
from pingce.urls import public_url
from tests.cli_run import ENV
from tests.loopback import LoopbackServer

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "function_points" / "records.jsonl"
USER_SECRET = "pw-USER-SECRET"
QUERY_SECRET = "sk-QUERY-SECRET"
SECRETS = (USER_SECRET, QUERY_SECRET)


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A child's environment: no proxies, no endpoint or key but the ones given, a private cache
    and run store."""
    out = {
        k: v
        for k, v in ENV.items()
        if not k.upper().endswith("_PROXY") and not k.upper().startswith(("PINGCE_", "OPENAI_"))
    }
    out.update(
        NO_PROXY="127.0.0.1,localhost",
        PINGCE_CACHE_DIR=str(tmp_path / "cache"),
        PINGCE_STORE=str(tmp_path / "runs.db"),
    )
    out.update(extra)
    return out


def pingce_cli(environment: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pingce", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=environment,
        timeout=120,
        check=False,
    )


def secret_url(server: LoopbackServer) -> str:
    return (
        f"http://judge:{USER_SECRET}@127.0.0.1:{server.port}/v1"
        f"?api-version=2024-10&api-key={QUERY_SECRET}"
    )


def assert_no_secret(text: str | bytes, where: str) -> None:
    data = text.encode() if isinstance(text, str) else text
    for secret in SECRETS:
        assert secret.encode() not in data, f"{secret} in {where}"


# ------------------------------------------------------------------------- the shown form


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:p@h:8000/v1", "http://h:8000/v1"),
        ("https://h/v1?api-key=s&api-version=1", "https://h/v1?api-key=***&api-version=1"),
        ("https://h/v1?api_key=s&key=s&token=s", "https://h/v1?api_key=***&key=***&token=***"),
        ("https://h/o?access_token=s&sig=s&se=2030", "https://h/o?access_token=***&sig=***&se=2030"),
        ("https://h/v1?x-api-key=s&keyword=k", "https://h/v1?x-api-key=***&keyword=k"),
        ("https://h/v1?accessToken=s&subscription-key=s", "https://h/v1?accessToken=***&subscription-key=***"),
        ("http://h/v1#frag", "http://h/v1"),
        ("u:p@h:8000/v1?key=s", "h:8000/v1?key=***"),  # no scheme: not a URL, still no secret
    ],
)  # fmt: skip
def test_public_url_hides_the_user_and_secret_query_values(url: str, shown: str) -> None:
    assert public_url(url) == shown


# ------------------------------------------------------------- point 3: never stored or shown


def test_a_base_url_with_secrets_works_and_they_are_stored_and_shown_nowhere(
    tmp_path: Path,
) -> None:
    """The user and password go as a basic Authorization header, the query with every
    request; results.json, the outputs, the run store (its file, ``runs show``, ``runs --json``)
    and the console hold only the public URL."""
    out = tmp_path / "out"
    environment = env(tmp_path)
    with LoopbackServer(lifetime=120) as server:
        done = pingce_cli(
            environment,
            "run", "function-points", "--data", str(EXAMPLE), "--out", str(out),
            "--similarity", "openai:m", "--base-url", secret_url(server), "--bootstrap", "0",
            "--name", "secret-run",
        )  # fmt: skip
        log = server.chat()
        assert server.errors == []
    assert done.returncode == 0, done.stderr
    assert log and {r.path for r in log} == {"/v1/chat/completions"}
    assert {r.url_query for r in log} == {f"api-version=2024-10&api-key={QUERY_SECRET}"}
    import base64

    basic = "Basic " + base64.b64encode(f"judge:{USER_SECRET}".encode()).decode()
    assert {r.headers.get("authorization") for r in log} == {basic}
    shown = f"http://127.0.0.1:{server.port}/v1?api-version=2024-10&api-key=***"
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert f"url={shown}|" in saved["signature"]["similarity"]
    assert_no_secret(done.stdout + done.stderr, "the console")
    for path in out.iterdir():
        assert_no_secret(path.read_bytes(), path.name)
    for path in tmp_path.glob("runs.db*"):  # the store and its write-ahead log
        assert_no_secret(path.read_bytes(), path.name)
    listed = pingce_cli(environment, "runs", "--json")
    shown_run = pingce_cli(environment, "runs", "show", "secret-run")
    assert listed.returncode == 0 and shown_run.returncode == 0, listed.stderr + shown_run.stderr
    assert_no_secret(listed.stdout, "runs --json")
    assert_no_secret(shown_run.stdout, "runs show")
    (run,) = json.loads(listed.stdout)
    assert run["options"]["base_url"] == shown
    assert shown in shown_run.stdout


def test_a_run_recorded_before_is_shown_without_its_secrets(tmp_path: Path) -> None:
    """A store written by an older pingce may hold a URL with its secrets: read back, the
    options show the public URL."""
    from pingce.history import record_run, run_info

    result = pingce.evaluate("function-points", str(EXAMPLE), bootstrap=0)
    store = tmp_path / "runs.db"
    url = f"http://judge:{USER_SECRET}@h/v1?api-key={QUERY_SECRET}"
    record_run(result, name="r", store=store, options={"base_url": url})
    import sqlite3

    with sqlite3.connect(store) as db:  # as an older version stored it
        db.execute("UPDATE runs SET options = ?", (json.dumps({"model_base_url": url}),))
    assert run_info("r", store=store).options == {"model_base_url": "http://h/v1?api-key=***"}


def test_a_user_and_password_with_an_api_key_is_an_option_error(tmp_path: Path) -> None:
    """Both would be the Authorization header (aiohttp raised a ValueError traceback)."""
    out = tmp_path / "out"
    with LoopbackServer(lifetime=60) as server:
        done = pingce_cli(
            env(tmp_path, PINGCE_API_KEY="sk-key"),
            "run", "function-points", "--data", str(EXAMPLE), "--out", str(out),
            "--similarity", "openai:m", "--base-url", secret_url(server), "--bootstrap", "0",
        )  # fmt: skip
        assert server.count() == 0
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    shown = f"http://127.0.0.1:{server.port}/v1?api-version=2024-10&api-key=***"
    assert f"--base-url {shown!r} has a user and password, and PINGCE_API_KEY" in done.stderr
    assert_no_secret(done.stderr, "the message")
    assert not out.exists()


# -------------------------------------------------------- point 5: malformed, before any work

MALFORMED = [
    ("localhost:8000/v1", "not a URL: it must start with http:// or https://"),
    ("not a url", "not a URL: it must start with http:// or https://"),
    ("ftp://example.com/v1", "the scheme 'ftp' is not http or https"),
    ("http:///v1", "it has no host name"),
    ("http://127.0.0.1:port/v1", "its port is not a number"),
]


@pytest.mark.parametrize(("url", "problem"), MALFORMED)
def test_a_malformed_base_url_is_an_option_error_before_any_work(
    tmp_path: Path, url: str, problem: str
) -> None:
    started = time.monotonic()
    out = tmp_path / "out"
    done = pingce_cli(
        env(tmp_path),
        "run", "function-points", "--data", str(EXAMPLE), "--out", str(out),
        "--similarity", "openai:m", "--base-url", url, "--bootstrap", "0",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert time.monotonic() - started < 20  # before: 216 requests in 45 s, exit 3
    assert f"pingce: error: --base-url {url!r}: {problem}" in done.stderr
    assert done.stderr.count("\n") == 1 and not out.exists()


@pytest.mark.parametrize("variable", ["PINGCE_BASE_URL", "OPENAI_BASE_URL"])
def test_a_malformed_base_url_from_the_environment(tmp_path: Path, variable: str) -> None:
    secret = f"http://u:{USER_SECRET}@/v1?key={QUERY_SECRET}"
    done = pingce_cli(
        env(tmp_path, **{variable: secret}),
        "run", "function-points", "--data", str(EXAMPLE), "--out", str(tmp_path / "out"),
        "--similarity", "openai:m", "--bootstrap", "0",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"{variable} 'http:///v1?key=***': it has no host name" in done.stderr
    assert_no_secret(done.stderr, "the message")
    # a backend that calls no server does not read it
    offline = pingce_cli(
        env(tmp_path, **{variable: "localhost:8000/v1"}),
        "run", "function-points", "--data", str(EXAMPLE), "--out", str(tmp_path / "lexical"),
        "--bootstrap", "0", "--no-store",
    )  # fmt: skip
    assert offline.returncode == 0, offline.stderr


@pytest.mark.parametrize(
    "options",
    [
        {"similarity": "openai:m", "base_url": "localhost:8000/v1"},
        {"similarity": "rerank:m", "base_url": "ftp://h/v1"},
        {"model": "openai:m", "model_base_url": "not a url"},
    ],
)
def test_a_malformed_base_url_from_python(options: dict[str, Any]) -> None:
    with pytest.raises(OptionError, match=r"base-url '.*': "):
        pingce.evaluate("function-points", str(EXAMPLE), bootstrap=0, cache=False, **options)


def test_a_suite_cannot_set_the_base_url(tmp_path: Path) -> None:
    """The endpoint is never a suite's: a suite that names one is refused before any work."""
    builtin = Path(pingce.__file__).parent / "suites" / "function-points.yaml"
    suite = tmp_path / "fp.yaml"
    suite.write_text(
        builtin.read_text(encoding="utf-8").replace(
            "  concurrency: 16", "  concurrency: 16\n  base_url: localhost:8000/v1"
        ),
        encoding="utf-8",
    )
    done = pingce_cli(
        env(tmp_path),
        "run", str(suite), "--data", str(EXAMPLE), "--out", str(tmp_path / "out"),
        "--similarity", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
    )  # fmt: skip
    assert done.returncode == 2 and "unknown similarity option(s) ['base_url']" in done.stderr
