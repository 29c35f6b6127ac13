"""The documentation's examples run, and the reference pages come from the code.

Every example in ``docs/**/*.md`` and ``README.md`` is executed as the site's convention says
(parsed by Sybil: its Markdown code-block lexer and doctest parser, with a parser of our own
for ``console`` blocks):

- a ```` ```console ```` block is a shell session: each ``$ `` line is a command run from the
  repository root with this Python's ``bin`` first on PATH and ``PINGCE_STORE`` set to a file of
  the page's own; the lines after it are its output (stdout and stderr together). A line ``...``
  alone matches any number of lines, ``...`` within a line any text; everything else matches
  exactly (numbers too). A command must exit 0, or with the status of a trailing ``# exit N``;
- a ```` ```python ```` block of ``>>>`` lines is a doctest (ELLIPSIS, NORMALIZE_WHITESPACE),
  run from the repository root; the blocks of a page share their namespace, in order;
- a block right after ``<!-- not run: REASON -->`` is not executed.

A page is one test: its examples run in order (a command may read what an earlier one wrote).

``PINGCE_DOCS=write pytest tests/test_docs.py`` (a maintainer's mode, like ``PINGCE_GOLDEN``)
rewrites the expected output of every console command whose output differs with what it printed,
keeping each ``...`` line and each line with ``...`` that still matches (:func:`rewritten`);
review the change with ``git diff docs README.md``. Doctest blocks are not rewritten.
"""

from __future__ import annotations

import atexit
import difflib
import doctest
import importlib.util
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sybil = pytest.importorskip("sybil")

from sybil import Document, Example, Region  # noqa: E402
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
NOT_RUN = re.compile(r"<!--\s*not run:[^>]*-->\s*\Z")
EXIT = re.compile(r"\s+#\s*exit\s+(\d+)\s*$")
_STORES = tempfile.TemporaryDirectory(prefix="pingce-docs-stores-")
"""The pages' run stores (one a page), removed when the tests end."""
PAGE_SECONDS = 30.0
"""CPU seconds of a page's examples together, its commands' included (the aim is under 10 s;
CPU time, so that a busy machine does not fail the page)."""


def pages() -> list[Path]:
    """Every page whose examples run: docs/**/*.md and README.md."""
    found = sorted((ROOT / "docs").rglob("*.md")) if (ROOT / "docs").is_dir() else []
    return [p for p in [*found, ROOT / "README.md"] if p.is_file()]


# ------------------------------------------------------------------------------ console blocks


@dataclass(frozen=True)
class Command:
    """One ``$ `` line of a console block and the output written under it."""

    command: str
    expected: list[str]
    status: int


def commands(block: str) -> list[Command]:
    """The commands of a console block (lines before the first ``$ `` are ignored)."""
    found: list[Command] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            status = EXIT.search(line)
            found.append(Command(line[2:], [], int(status.group(1)) if status else 0))
        elif found:
            found[-1].expected.append(line)
    return found


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def output_pattern(expected: Iterable[str]) -> re.Pattern[str]:
    """The regular expression the shown output stands for: ``...`` alone any lines (none
    too), ``...`` in a line any text; the rest literally."""
    parts: list[str] = []
    for line in _lines("\n".join(expected)):
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.split("...")) + r"\n")
    return re.compile("".join(parts))


def matches(expected: list[str], output: str) -> bool:
    actual = "".join(line + "\n" for line in _lines(output))
    return output_pattern(expected).fullmatch(actual) is not None


WRITE = os.environ.get("PINGCE_DOCS") == "write"
"""Rewrite the pages' console outputs that differ (module docstring)."""


def _line_matches(expected: str, actual: str) -> bool:
    return output_pattern([expected]).fullmatch(actual + "\n") is not None


def _unlike(expected: str, actual: str) -> float:
    """The cost of replacing a line by another: 1, and up to 3 (a line dropped and another
    added) the less alike they are, so a changed number replaces its own line, not a
    neighbour."""
    return 3.0 - 2.0 * difflib.SequenceMatcher(None, expected, actual, autojunk=False).ratio()


def _alignment(expected: list[str], actual: list[str]) -> list[list[float]]:
    """Edit costs of aligning expected[i:] with actual[j:]: a line that matches costs 0, a line
    ``...`` takes any number of actual lines at no cost, a replaced line 1 to 3
    (:func:`_unlike`), a dropped or added one 3 (so a changed number replaces its line rather
    than falling into a ``...``)."""
    n, m = len(expected), len(actual)
    cost = [[0.0] * (m + 1) for _ in range(n + 1)]
    for j in range(m - 1, -1, -1):
        cost[n][j] = cost[n][j + 1] + 3
    for i in range(n - 1, -1, -1):
        wild = expected[i].strip() == "..."
        cost[i][m] = cost[i + 1][m] + (0 if wild else 3)
        for j in range(m - 1, -1, -1):
            if wild:
                cost[i][j] = min(cost[i + 1][j], cost[i][j + 1])
                continue
            same = 0.0 if _line_matches(expected[i], actual[j]) else _unlike(expected[i], actual[j])
            cost[i][j] = min(cost[i + 1][j + 1] + same, cost[i + 1][j] + 3, cost[i][j + 1] + 3)
    return cost


def rewritten(expected: list[str], output: str) -> list[str]:
    """The expected output made to match ``output`` with the fewest changed lines: a line
    ``...`` and a line that matches (its own ``...`` included) stay as they are; a line that does
    not is replaced by the printed one, and lines are dropped or added where the printed output
    has fewer or more."""
    want, actual = _lines("\n".join(expected)), _lines(output)
    cost = _alignment(want, actual)
    out: list[str] = []
    i = j = 0
    while i < len(want) or j < len(actual):
        here = cost[i][j]
        if i < len(want) and want[i].strip() == "...":
            if j < len(actual) and cost[i][j + 1] == here:
                j += 1  # the wildcard takes this line
            else:
                out.append(expected[i])
                i += 1
        elif (
            i < len(want)
            and j < len(actual)
            and _line_matches(want[i], actual[j])
            and (cost[i + 1][j + 1] == here)
        ):
            out.append(expected[i])  # as written, trailing spaces too
            i, j = i + 1, j + 1
        elif (
            i < len(want)
            and j < len(actual)
            and cost[i + 1][j + 1] + _unlike(want[i], actual[j]) == here
        ):
            out.append(actual[j])
            i, j = i + 1, j + 1
        elif i < len(want) and cost[i + 1][j] + 3 == here:
            i += 1
        else:
            out.append(actual[j])
            j += 1
    return out + expected[len(_lines("\n".join(expected))) :]


LOCAL_MODEL = "http://localhost:8000/v1"
"""The address the pages give a model server they serve themselves (``vllm serve``): in a command
the runner runs, it is the tests' loopback server (:mod:`tests.loopback`), started for the page,
which answers each query of the bundled function-call example with what that example's system
answered (its ``pred_fn``: calls as ``tool_calls``, text as text), so a page's ``--model`` run is
executed and its output compared like any other."""


def _stand_in_message(request: Any) -> dict[str, Any]:
    """The loopback model's message for a request: the example system's answer to its query."""
    answer = _EXAMPLE_ANSWERS.get(request.prompt or "", "")
    if isinstance(answer, str):
        return {"content": answer}
    calls = [c.get("function", c) for c in answer]
    return {
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call["arguments"], str)
                    else json.dumps(call["arguments"], ensure_ascii=False),
                },
            }
            for i, call in enumerate(calls)
        ]
    }


_EXAMPLE_ANSWERS: dict[str, Any] = {
    record["query"]: record["pred_fn"]
    for record in map(
        json.loads,
        (ROOT / "examples/function_call/records.jsonl").read_text(encoding="utf-8").splitlines(),
    )
}
_SERVERS: list[Any] = []


def _local_model(env: dict[str, str]) -> str:
    """The loopback model server's URL (started once; stopped when the tests end), with the
    page's environment made local: no proxy, no stray endpoint or key, its own cache."""
    if not _SERVERS:
        from tests.loopback import LoopbackServer

        server = LoopbackServer(lifetime=600).start()
        server.answer = _stand_in_message
        _SERVERS.append(server)
        atexit.register(server.stop)
    for key in list(env):
        upper = key.upper()
        if upper.endswith("_PROXY") or upper.startswith(("OPENAI_", "PINGCE_BASE_URL")):
            del env[key]
    env["NO_PROXY"] = "127.0.0.1,localhost"
    env.setdefault("PINGCE_CACHE_DIR", tempfile.mkdtemp(dir=_STORES.name))
    return str(_SERVERS[0].url)


def environment(store: Path) -> dict[str, str]:
    """The commands' environment: this Python's bin first on PATH, the page's run store, no
    terminal width or colour of the caller's (rich then prints 80 columns, plain)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PINGCE_STORE"] = str(store)
    return env


def run_command(command: Command, env: dict[str, str]) -> str | None:
    """None when the command exits as expected with the output shown, else what differed."""
    line = command.command
    if LOCAL_MODEL in line:
        line = line.replace(LOCAL_MODEL, _local_model(env))
    done = subprocess.run(
        line,
        shell=True,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    problems = []
    if done.returncode != command.status:
        problems.append(f"exit status {done.returncode}, expected {command.status}")
    if command.expected and not matches(command.expected, done.stdout):
        if WRITE:
            command.expected[:] = rewritten(command.expected, done.stdout)
        else:
            problems.append("the output differs from the page")
    if not problems:
        return None
    shown = "\n".join(command.expected)
    return (
        f"$ {command.command}\n{'; '.join(problems)}\n"
        f"--- on the page\n{shown}\n--- printed\n{done.stdout}"
    )


def evaluate_console(example: Example) -> str | None:
    env = example.namespace.setdefault("__console_env__", None)
    if env is None:
        store = Path(tempfile.mkdtemp(dir=_STORES.name)) / "runs.db"
        env = example.namespace["__console_env__"] = environment(store)
    found = commands(example.parsed)
    for command in found:
        failed = run_command(command, env)
        if failed is not None:
            return failed
    if WRITE:
        _write_block(example, found)
    return None


def _write_block(example: Example, found: list[Command]) -> None:
    """Put the commands' (rewritten) outputs back into the page, in place of the block's text."""
    old: str = example.parsed
    lines: list[str] = []
    for line in old.splitlines():  # what comes before the first command stays
        if line.startswith("$ "):
            break
        lines.append(line)
    for command in found:
        lines.append("$ " + command.command)
        lines.extend(command.expected)
    new = "\n".join(lines) + ("\n" if old.endswith("\n") else "")
    if new == old:
        return
    path = Path(example.path)
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise AssertionError(f"{path}: the block to rewrite is not found once:\n{old}")
    path.write_text(text.replace(old, new), encoding="utf-8")


def _run(document: Document, start: int) -> bool:
    """Whether the block starting at ``start`` runs (no ``<!-- not run: ... -->`` before it)."""
    before = document.text[:start]
    fence = before.rfind("```")
    head = before[: fence if fence >= 0 and before[fence:].count("\n") == 0 else len(before)]
    return NOT_RUN.search(head) is None


class ConsoleParser(CodeBlockParser):
    """```` ```console ```` blocks, evaluated by :func:`evaluate_console`."""

    def __init__(self) -> None:
        super().__init__("console", evaluate_console)

    def __call__(self, document: Document) -> Iterator[Region]:
        for region in super().__call__(document):
            if _run(document, region.start):
                yield region


class DoctestParser(PythonCodeBlockParser):
    """```` ```python ```` blocks in doctest form (``>>>``); other Python blocks are shown, not
    run."""

    def __init__(self) -> None:
        super().__init__(doctest_optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)

    def __call__(self, document: Document) -> Iterator[Region]:
        for block in self.codeblock_parser(document):
            source = block.parsed
            if source.startswith(">>>") and _run(document, block.start):
                for region in self.doctest_parser(source, document.path):
                    region.adjust(block, source)
                    yield region


PARSERS = (ConsoleParser(), DoctestParser())


def examples(path: Path) -> tuple[Document, list[Example]]:
    document = Document.parse(str(path), *PARSERS)
    return document, list(document.examples())


def run_page(path: Path) -> None:
    """Evaluate every example of the page in order (a SybilFailure at the first that fails)."""
    _, found = examples(path)
    for example in found:
        example.evaluate()


def _registered() -> tuple[set[str], set[str], set[str]]:
    """The names in the metric, backend and model-provider registries."""
    from pingce.metrics.registry import metric_registry, table_registry
    from pingce.predict.registry import provider_entries
    from pingce.similarity.registry import backend_entries

    return (
        set(metric_registry()) | set(table_registry()),
        {e.kind for e in backend_entries()},
        {e.name for e in provider_entries()},
    )


@pytest.fixture
def registries_kept() -> Iterator[None]:
    """What a page registers (the add-a-metric and add-a-backend guides register their worked
    examples) is removed after it, so that no later test sees it."""
    from pingce.metrics.registry import unregister as unregister_metric
    from pingce.predict.registry import unregister as unregister_provider
    from pingce.similarity.registry import unregister as unregister_backend

    before = _registered()
    try:
        yield
    finally:
        after = _registered()
        for undo, old, new in zip(
            (unregister_metric, unregister_backend, unregister_provider), before, after, strict=True
        ):
            for name in new - old:
                undo(name)


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples(page: Path, monkeypatch: pytest.MonkeyPatch, registries_kept: None) -> None:
    monkeypatch.chdir(ROOT)
    started = _cpu_seconds()
    run_page(page)
    assert _cpu_seconds() - started < PAGE_SECONDS
    if page.name == "add-a-metric.md":  # the guide's metric registered, then removed by the fixture
        assert "fast_share" in _registered()[0]


def test_a_page_s_registrations_do_not_outlive_it() -> None:
    """The add-a-metric guide registers ``fast_share``; after its test (or before it) the
    registry does not hold it, whatever the order the tests ran in."""
    assert "fast_share" not in _registered()[0]


def _cpu_seconds() -> float:
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# ------------------------------------------------------------------------------ the runner itself

RUN = (
    "$ pingce run contract-risk --data examples/contract_risk/records.jsonl --no-store "
    "--bootstrap 0 --out {out}\n"
)


def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_output_pattern() -> None:
    assert matches(["a", "...", "d"], "a\nb\nc\nd\n")
    assert matches(["a", "...", "b"], "a\nb\n")
    assert matches(["took ... s"], "took 1.5 s\n")
    assert matches(["x  "], "x\n\n")
    assert not matches(["a", "d"], "a\nb\nd\n")
    assert not matches(["0.8333"], "0.8334\n")
    assert not matches(["n 60"], "n 600\n")


def test_console_examples_pass_and_fail_on_a_changed_number(tmp_path: Path) -> None:
    """The runner passes a page whose output is the real one, and fails it when one number of
    the output differs (accuracy 0.8333 shown as 0.8334)."""
    out = tmp_path / "out"
    good = (
        "```console\n" + RUN.format(out=out) + "contract-risk: 60 records\n...\n"
        "│ accuracy ... │ 0.8333 │ ...\n...\n```\n"
    )
    run_page(_page(tmp_path, good))
    with pytest.raises(AssertionError, match=r"0\.8334"):
        run_page(_page(tmp_path, good.replace("0.8333", "0.8334")))


def test_exit_status_and_not_run(tmp_path: Path) -> None:
    page = "```console\n$ pingce run no-such-suite --data x.jsonl  # exit 2\n...\n```\n"
    run_page(_page(tmp_path, page))
    with pytest.raises(AssertionError, match="exit status 2, expected 0"):
        run_page(_page(tmp_path, page.replace("  # exit 2", "")))
    skipped = "<!-- not run: needs a server -->\n```console\n$ false\n```\n"
    assert examples(_page(tmp_path, skipped))[1] == []


def test_doctest_blocks_share_a_namespace_and_fail_on_a_changed_number(tmp_path: Path) -> None:
    text = (
        "```python\n>>> import pingce\n>>> r = pingce.evaluate('contract-risk', "
        "'examples/contract_risk/records.jsonl', bootstrap=0)\n```\n\ntext\n\n"
        "```python\n>>> round(r.metrics['accuracy'].value, 4)\n0.8333\n```\n"
        "```python\nnot_a_doctest()\n```\n"
    )
    run_page(_page(tmp_path, text))
    with pytest.raises(AssertionError, match=r"0\.8334"):
        run_page(_page(tmp_path, text.replace("0.8333\n", "0.8334\n")))


# ------------------------------------------------------------------------------ reference pages


def _reference() -> Any:
    """docs/hooks/reference.py, the MkDocs hook that makes the reference pages."""
    name = "pingce_docs_reference"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "docs/hooks/reference.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


def test_every_reference_page_in_the_nav_is_generated() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r"reference/([\w-]+\.md)", nav))
    assert listed == set(_reference().PAGES)
    assert not (ROOT / "docs" / "reference").exists()  # never written by hand


def test_a_new_metric_appears_on_the_metrics_page(monkeypatch: pytest.MonkeyPatch) -> None:
    from pingce.metrics import registry

    page = _reference().metrics_page()
    for name in [*registry.metric_registry(), *registry.table_registry()]:
        assert f"| `{name}` |" in page
    planted = dict(registry.metric_registry())
    info = next(iter(planted.values()))
    planted["planted_rate"] = info
    monkeypatch.setattr(registry, "metric_registry", lambda: planted)
    assert "| `planted_rate` |" in _reference().metrics_page()


def test_a_new_option_appears_on_the_options_page(monkeypatch: pytest.MonkeyPatch) -> None:
    from pingce import option_table

    planted = option_table.Option(
        "planted_knob", int, "A planted option.", frozenset({"run"}), "output", python="int"
    )
    monkeypatch.setattr(option_table, "OPTIONS", (*option_table.OPTIONS, planted))
    page = _reference().options_page()
    assert "| `--planted-knob` | `planted_knob` |" in page and "A planted option." in page


def test_every_option_and_command_is_documented() -> None:
    from mkdocs_click._docs import make_command_docs

    from pingce.cli import COMMANDS, cli
    from pingce.option_table import OPTIONS

    options = _reference().options_page()
    for option in OPTIONS:
        assert option.option is None or f"`{option.option}`" in options
    ctx_lines = "\n".join(make_command_docs("pingce", cli, depth=1, style="table"))
    for name in COMMANDS:
        assert f"pingce {name}" in ctx_lines


def test_the_model_pages_list_every_field() -> None:
    """The suite-yaml, results-json, run-folder and exit-codes pages hold every key of the
    models and tables they are made from (a new field appears without editing a page)."""
    from pingce.cli.environment import EXIT_CODES
    from pingce.results import ComparisonResult, EvaluationResult, MetricComparison, MetricResult
    from pingce.runfolder import layout
    from pingce.similarity.registry import backend_options
    from pingce.suites.spec import JudgeSpec, LabelsSpec, ModelSpec, SuiteSpec

    reference = _reference()
    pages = {
        reference.suite_yaml_page(): [SuiteSpec, LabelsSpec, ModelSpec, JudgeSpec],
        reference.results_json_page(): [
            EvaluationResult,
            MetricResult,
            ComparisonResult,
            MetricComparison,
        ],
    }
    for page, models in pages.items():
        for model in models:
            for name in model.model_fields:
                assert f"| `{name}` |" in page, (model.__name__, name)
    yaml = reference.suite_yaml_page()
    assert all(f"| `{name}` |" in yaml for name in backend_options())
    folder = reference.run_folder_page()
    files = [getattr(layout, n) for n in layout.__all__ if isinstance(getattr(layout, n), str)]
    assert all(f"| `{name}` |" in folder for name in files)
    codes = reference.exit_codes_page()
    assert all(f"| {e.code} |" in codes for e in EXIT_CODES)


def test_every_environment_variable_read_is_declared() -> None:
    """A variable the code reads (``os.environ.get("X")``, ``environ["X"]``, ``getenv``) is in
    pingce.cli.environment.VARIABLES, so the environment page lists it."""
    from pingce.cli.environment import VARIABLES

    declared = {name.strip() for v in VARIABLES for name in v.name.split(",")}
    read = re.compile(r"""(?:environ\.get|environ\[|getenv)\(?\s*["']([A-Z_]+)["']""")
    constants = re.compile(r"""^[A-Z_]+_VARIABLE\s*=\s*["']([A-Z_]+)["']""", re.MULTILINE)
    found: set[str] = set()
    for path in (ROOT / "src" / "pingce").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        found |= set(read.findall(text)) | set(constants.findall(text))
        found |= set(re.findall(r'for name in \(("[A-Z_]+"(?:, "[A-Z_]+")*)\)', text))
    names = {n.strip('" ') for group in found for n in group.split(",")}
    assert names - declared == set()


def test_the_readme_links_files_that_exist() -> None:
    """Every relative link of README.md names a file of the repository (the generated reference
    exists only in the built site, so the README does not link into it)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)", text)
    local = [t for t in targets if "://" not in t]
    assert len(local) > 30
    assert [t for t in local if not (ROOT / t).exists()] == []


def test_rewritten_keeps_wildcards_and_takes_the_printed_numbers() -> None:
    expected = ["contract-risk: 60 records", "...", "│ accuracy ... │ 0.83 │ [0.70, 0.91] │", "end"]
    printed = "contract-risk: 60 records\nrun 1\nrun 2\n│ accuracy x │ 0.83 │ [0.71, 0.92] │\nend\n"
    new = rewritten(expected, printed)
    assert new == [
        "contract-risk: 60 records",
        "...",
        "│ accuracy x │ 0.83 │ [0.71, 0.92] │",
        "end",
    ]
    assert matches(new, printed)
    assert rewritten(["a", "took ... s", "b"], "a\ntook 2 s\nc\n") == ["a", "took ... s", "c"]
    assert rewritten(["a"], "a\nb\n") == ["a", "b"]
    assert rewritten(["a", "b", "c"], "a\nc\n") == ["a", "c"]
    # a line gone: dropped, not its neighbours shifted; a changed row after a `...` is its own
    expected = ["│ t │", "qwk: 1 undefined", "top2: 73 undefined", "..."]
    assert rewritten(expected, "│ t │\ntop2: 72 undefined\nconfusion_matrix\n") == [
        "│ t │",
        "top2: 72 undefined",
        "...",
    ]
    expected = ["run v2", "...", "│ accuracy │ 0.83 │ [0.7165, 0.9167] │", "..."]
    printed = "run v2\noutput  /tmp/h2\n│ accuracy │ 0.83 │ [0.7167, 0.9167] │\nend\n"
    assert rewritten(expected, printed)[2] == "│ accuracy │ 0.83 │ [0.7167, 0.9167] │"
