"""What the ``pingce`` command tells its caller and reads from its environment, in one place:
its exit statuses and the environment variables pingce reads. The reference pages (exit codes,
environment variables) are made from these tables, and a test checks that every variable the
code reads is declared here."""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "EXIT_CODES",
    "EXIT_GATE",
    "EXIT_INPUT",
    "EXIT_INTERRUPTED",
    "EXIT_JUDGE_FAILURES",
    "VARIABLES",
    "ExitCode",
    "Variable",
]


class ExitCode(NamedTuple):
    """An exit status of ``pingce`` and when a command ends with it."""

    code: int
    meaning: str


class Variable(NamedTuple):
    """An environment variable pingce reads, what it sets and where it is read."""

    name: str
    meaning: str
    used_by: str


EXIT_INPUT = 2
EXIT_JUDGE_FAILURES = 3
EXIT_GATE = 4
EXIT_INTERRUPTED = 130
"""Ctrl+C (SIGINT): 128 + the signal's number, as shells report it."""

EXIT_CODES = (
    ExitCode(0, "Done: the outputs are written, every gate passed, nothing failed."),
    ExitCode(
        1,
        "An unexpected error (a bug: the traceback is printed), or the command was aborted.",
    ),
    ExitCode(
        EXIT_INPUT,
        "The input or an option is wrong (a file that does not exist or does not parse, an "
        "unknown suite, metric or option value, an --out that cannot be written): "
        "`pingce: error: ...` says what; nothing was evaluated. Usage errors that click "
        "reports (an unknown flag) exit 2 too.",
    ),
    ExitCode(
        EXIT_JUDGE_FAILURES,
        "The outputs are written, but similarity (judge) calls or model-under-test calls "
        "failed after their retries, a judge of the judged metrics failed or answered without "
        "a grade (counted in the result's `judge`), or `pingce calibrate` left pairs out: the "
        "counts are in the result's `failures`.",
    ),
    ExitCode(
        EXIT_GATE,
        "The outputs are written, and a gate failed (`--fail-under` or `--fail-over` of "
        "`pingce run`, `--fail-on-regression` of `pingce compare`): each failed gate is "
        "printed on stderr as `gate failed: ...`.",
    ),
    ExitCode(
        EXIT_INTERRUPTED,
        "Interrupted with Ctrl+C (SIGINT); partial outputs are removed and the caches kept.",
    ),
    ExitCode(
        143,
        "Stopped by SIGTERM (`kill`, a job scheduler): ended as Ctrl+C ends it.",
    ),
)
"""Every exit status, in order."""

VARIABLES = (
    Variable(
        "PINGCE_STORE",
        "The run store (an SQLite file) that `pingce run` records every run in and `pingce "
        "runs`, `pingce compare RUN_A RUN_B` and `pingce view` read; `--store` overrides it.",
        "run, runs, compare, view; `pingce.runs()`",
    ),
    Variable(
        "XDG_DATA_HOME",
        "Where the run store lives when PINGCE_STORE is not set: "
        "`$XDG_DATA_HOME/pingce/runs.db` (default `~/.local/share/pingce/runs.db`).",
        "run, runs, compare, view",
    ),
    Variable(
        "PINGCE_CACHE_DIR",
        "The folder of the similarity and model-answer cache (`similarity.sqlite3`; default "
        "`~/.cache/pingce`); `--cache` overrides it.",
        "run, compare, calibrate",
    ),
    Variable(
        "PINGCE_BASE_URL",
        "The OpenAI-compatible endpoint of a remote similarity backend (judge, rerank, remote "
        "embeddings) or of the model under test when `--base-url` is not given.",
        "run, compare, calibrate",
    ),
    Variable(
        "OPENAI_BASE_URL",
        "Read as PINGCE_BASE_URL when that is not set (as the OpenAI client reads it).",
        "run, compare, calibrate",
    ),
    Variable(
        "PINGCE_API_KEY",
        "The API key sent to the endpoint (`Authorization: Bearer ...`) when `--api-key-env` "
        "names no other variable.",
        "run, compare, calibrate",
    ),
    Variable(
        "OPENAI_API_KEY",
        "Read as PINGCE_API_KEY when that is not set.",
        "run, compare, calibrate",
    ),
    Variable(
        "PINGCE_PROCESSES",
        "`1`: never start a second process for the statistics; `2`: always; unset or empty: "
        "decide by the load. Any other value is an error.",
        "run, compare",
    ),
    Variable(
        "HTTPS_PROXY, HTTP_PROXY, NO_PROXY",
        "The proxy for remote calls, as usual (a `NO_PROXY` host is reached directly).",
        "run, compare, calibrate",
    ),
    Variable(
        "PYDANTIC_DISABLE_PLUGINS",
        "pydantic's own: the `pingce` command sets it to `__all__` when it is not set, so that "
        "pydantic does not look through every installed package for plugins on each start; "
        "set it (empty: every plugin) to have pydantic's plugins in a command.",
        "every command",
    ),
    Variable(
        "DISPLAY, WAYLAND_DISPLAY",
        "Whether `pingce view` opens a browser (with neither set it prints the address only).",
        "view",
    ),
)
"""Every environment variable pingce reads (a test finds the ones the code reads)."""
