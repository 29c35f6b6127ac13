"""The run store (pingce.history): every `pingce run` recorded in SQLite, listed, shown and
removed from the command line and from Python; two processes writing at once."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import pingce
from pingce import history
from pingce.results import EvaluationResult

from .cli_run import ENV, run_pingce, run_python

EXAMPLES = Path(pingce.__file__).resolve().parent / "examples"
CONTRACT = EXAMPLES / "contract_risk" / "records.jsonl"
CALLS = EXAMPLES / "function_call" / "records.jsonl"


@pytest.fixture(scope="module")
def contract_result() -> EvaluationResult:
    return pingce.evaluate("contract-risk", CONTRACT, bootstrap=50)


@pytest.fixture(scope="module")
def calls_result() -> EvaluationResult:
    return pingce.evaluate("function-call", CALLS, bootstrap=0)


def test_the_former_module_name_still_imports() -> None:
    """``pingce.store`` (the run history's name before) gives the same functions."""
    from pingce import store

    assert store.record_run is history.record_run and store.runs is history.runs
    assert sorted(store.__all__) == sorted(history.__all__)


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """One `pingce run` recorded under --name first (store, output folder, working folder)."""
    work = tmp_path_factory.mktemp("recorded")
    db, out = work / "runs.db", work / "out"
    done = run_pingce(
        "run", "contract-risk", "--data", str(CONTRACT), "--out", str(out), "--bootstrap", "50",
        "--slice", "contract_type", "--name", "first", "--store", str(db), cwd=work,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "run: first" in done.stdout
    return db, out, work


# ------------------------------------------------------------------------------ recording


def test_a_cli_run_is_recorded_with_what_reproduces_it(recorded_run: tuple[Path, Path, Path]):
    db, out, _ = recorded_run
    info = pingce.run_info("first", store=db)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert info.suite == "contract-risk" == results["suite"]
    assert info.n_records == results["n_records"] == 60
    assert info.signature == results["signature"]
    assert info.pingce_version == pingce.__version__
    assert info.out_dir == str(out.resolve())
    assert info.data_path == str(CONTRACT.resolve())
    assert info.data_sha256 == hashlib.sha256(CONTRACT.read_bytes()).hexdigest()
    assert info.options["bootstrap"] == 50 and info.options["slices"] == ["contract_type"]
    assert info.options["suite"] == "contract-risk"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", info.created)
    overall = [m for m in info.metrics if m.slice is None]
    assert [m.metric for m in overall] == list(results["metrics"])
    for row in overall:
        entry = results["metrics"][row.metric]
        assert (row.value, row.ci_low, row.ci_high, row.n) == (
            entry["value"], entry["ci_low"], entry["ci_high"], entry["n"],
        )  # fmt: skip
    for key, part in results["slices"].items():
        for metric, entry in part["metrics"].items():
            assert info.value(metric, key) == entry["value"]
    assert {m.slice for m in info.metrics} - {None} == set(results["slices"])


def test_the_store_is_versioned_and_in_wal_mode(recorded_run: tuple[Path, Path, Path]) -> None:
    db, _, _ = recorded_run
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == history.SCHEMA_VERSION
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        count = connection.execute(
            "SELECT count(*) FROM metrics JOIN runs ON runs.id = run_id WHERE name = 'first'"
        ).fetchone()[0]
    assert count == len(pingce.run_info("first", store=db).metrics)


def test_default_names_are_suite_and_time_made_unique(
    tmp_path: Path, contract_result: EvaluationResult
) -> None:
    db = tmp_path / "runs.db"
    when = time.mktime((2024, 5, 6, 7, 8, 9, 0, 0, -1))
    names = [history.record_run(contract_result, store=db, started=when).name for _ in range(3)]
    assert names == [
        "contract-risk-20240506-070809",
        "contract-risk-20240506-070809-2",
        "contract-risk-20240506-070809-3",
    ]
    assert history.default_name("my/suite.yaml", when) == "suite-20240506-070809"


def test_a_name_in_use_stops_the_run_before_it_starts(
    recorded_run: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    db, _, _ = recorded_run
    out = tmp_path / "again"
    done = run_pingce(
        "run", "contract-risk", "--data", str(CONTRACT), "--out", str(out), "--name", "first",
        "--store", str(db), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--name first" in done.stderr and "already" in done.stderr
    assert "pingce runs rm first" in done.stderr
    assert not out.exists()
    with pytest.raises(history.StoreError, match="already"):
        history.record_run(pingce.evaluate("contract-risk", CONTRACT, bootstrap=0), name="first",
                         store=db)  # fmt: skip


def test_an_unwritable_store_warns_and_the_run_succeeds(tmp_path: Path) -> None:
    """A store that cannot be written (here: its folder is a file, which stops root too)."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    db = blocker / "runs.db"
    out = tmp_path / "out"
    done = run_pingce(
        "run", "contract-risk", "--data", str(CONTRACT), "--out", str(out), "--bootstrap", "0",
        "--store", str(db), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (out / "results.json").is_file()
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and str(db) in warnings[0], done.stderr
    assert "run:" not in done.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_store_folder_warns(tmp_path: Path) -> None:  # pragma: no cover (root CI)
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        done = run_pingce(
            "run", "contract-risk", "--data", str(CONTRACT), "--out", str(tmp_path / "o"),
            "--bootstrap", "0", "--store", str(folder / "runs.db"), cwd=tmp_path,
        )  # fmt: skip
    finally:
        folder.chmod(0o755)
    assert done.returncode == 0
    assert str(folder / "runs.db") in done.stderr


def test_a_failed_run_and_no_store_are_not_recorded(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1"}\n', encoding="utf-8")
    done = run_pingce("run", "contract-risk", "--data", str(bad), "--store", str(db), cwd=tmp_path)
    assert done.returncode == 2
    assert pingce.runs(store=db) == []
    done = run_pingce(
        "run", "contract-risk", "--data", str(CONTRACT), "--bootstrap", "0", "--store", str(db),
        "--no-store", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not db.exists()


def test_the_store_path_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PINGCE_STORE", str(tmp_path / "a.db"))
    assert history.default_store_path() == tmp_path / "a.db"
    monkeypatch.delenv("PINGCE_STORE")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert history.default_store_path() == tmp_path / "xdg" / "pingce" / "runs.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert history.default_store_path() == Path.home() / ".local" / "share" / "pingce" / "runs.db"


def test_tests_never_write_to_the_users_store(tmp_path: Path) -> None:
    """tests/conftest.py points PINGCE_STORE (and XDG_DATA_HOME) at a throwaway folder before
    any test runs; a child process started the usual way (tests/cli_run.py) records there."""
    home = Path.home() / ".local" / "share"
    assert not history.default_store_path().is_relative_to(home)
    assert not Path(ENV["PINGCE_STORE"]).is_relative_to(home)
    done = run_python("-c", "from pingce.history import default_store_path as p; print(p())")
    assert Path(done.stdout.strip()) == Path(os.environ["PINGCE_STORE"])


def test_the_env_store_is_used_without_store(tmp_path: Path) -> None:
    db = tmp_path / "env.db"
    env = {**ENV, "PINGCE_STORE": str(db)}
    args = [sys.executable, "-m", "pingce", "run", "function-call", "--data", str(CALLS)]
    args += ["--bootstrap", "0", "--out", str(tmp_path / "o"), "--name", "via-env"]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [r.name for r in pingce.runs(store=db)] == ["via-env"]


# ------------------------------------------------------------------------------ git


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=folder, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def test_the_git_commit_of_the_datas_repository_is_recorded(
    tmp_path: Path, calls_result: EvaluationResult
) -> None:
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    data = repo / "data" / "records.jsonl"
    data.write_bytes(CALLS.read_bytes())
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "data")
    head = _git(repo, "rev-parse", "HEAD")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    db = tmp_path / "runs.db"
    done = run_pingce(
        "run", "function-call", "--data", str(data), "--bootstrap", "0", "--out",
        str(outside / "o"), "--store", str(db), "--name", "in-git", cwd=outside,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert pingce.run_info("in-git", store=db).git_commit == head
    assert history.git_commit(data) == head
    # records from memory, in a folder outside any repository: no data, hash or commit
    in_a_repo = subprocess.run(["git", "rev-parse", "HEAD"], cwd=outside, capture_output=True)
    cwd = Path.cwd()
    os.chdir(outside)
    try:
        info = history.record_run(calls_result, store=db, name="in-memory")
    finally:
        os.chdir(cwd)
    assert info.data_path is None and info.data_sha256 is None
    if in_a_repo.returncode != 0:
        assert info.git_commit is None and history.git_commit(outside, None) is None


# ------------------------------------------------------------------------------ listing


@pytest.fixture()
def filled(
    tmp_path: Path, contract_result: EvaluationResult, calls_result: EvaluationResult
) -> Path:
    db = tmp_path / "runs.db"
    start = time.time() - 1000
    for k in range(4):
        history.record_run(contract_result, store=db, name=f"contract-{k}", started=start + 10 * k,
                         data=CONTRACT, out=tmp_path / f"c{k}")  # fmt: skip
    for k in range(2):
        history.record_run(calls_result, store=db, name=f"calls-{k}", started=start + 5 + 10 * k,
                         data=CALLS, out=tmp_path / f"f{k}")  # fmt: skip
    return db


def test_the_data_of_a_glob_is_hashed_as_the_files_joined(
    tmp_path: Path, contract_result: EvaluationResult
) -> None:
    """A run of shards (``--engine ray --data 'shards/*.jsonl'``) records the sha256 of its files
    one after the other, in the run's order: that of the file ``cat`` joins them into, so the
    run viewer says "same data" beside a local run of the joined file."""
    lines = CONTRACT.read_bytes().splitlines(keepends=True)
    shards = tmp_path / "shards"
    shards.mkdir()
    for k in range(3):
        (shards / f"part-{k}.jsonl").write_bytes(b"".join(lines[k::3]))
    joined = tmp_path / "all.jsonl"
    joined.write_bytes(b"".join((shards / f"part-{k}.jsonl").read_bytes() for k in range(3)))
    db = tmp_path / "runs.db"
    on_shards = history.record_run(contract_result, store=db, data=str(shards / "*.jsonl"))
    on_joined = history.record_run(contract_result, store=db, data=joined)
    assert on_shards.data_sha256 == hashlib.sha256(joined.read_bytes()).hexdigest()
    assert on_shards.data_sha256 == on_joined.data_sha256
    assert on_shards.data_path == str((shards / "*.jsonl").resolve())
    nothing = history.record_run(contract_result, store=db, data=str(shards / "*.parquet"))
    assert nothing.data_sha256 is None  # no file matches: nothing to hash


def test_python_lists_newest_first_and_filters(filled: Path) -> None:
    names = [r.name for r in pingce.runs(store=filled)]
    assert names == ["contract-3", "contract-2", "calls-1", "contract-1", "calls-0", "contract-0"]
    assert [r.name for r in pingce.runs(store=filled, suite="function-call")] == [
        "calls-1",
        "calls-0",
    ]
    assert [r.name for r in pingce.runs(store=filled, name="CONTRACT-", limit=2)] == [
        "contract-3",
        "contract-2",
    ]
    assert all(m.slice is None for r in pingce.runs(store=filled) for m in r.metrics)
    assert pingce.runs(store=filled / "none.db") == []
    info = pingce.runs(store=filled, limit=1)[0]
    assert isinstance(info, pingce.RunInfo)
    assert json.loads(json.dumps(info.to_dict()))["name"] == "contract-3"


def test_cli_lists_filters_and_shows(filled: Path, tmp_path: Path) -> None:
    done = run_pingce("runs", "--store", str(filled), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.index("contract-3") < text.index("calls-1") < text.index("contract-0")
    assert "accuracy" in text
    done = run_pingce("runs", "--store", str(filled), "--suite", "function-call", cwd=tmp_path)
    assert "calls-0" in done.stdout and "contract-" not in done.stdout
    done = run_pingce("runs", "--store", str(filled), "--name", "ct-1", "--json", cwd=tmp_path)
    assert [r["name"] for r in json.loads(done.stdout)] == ["contract-1"]
    done = run_pingce("runs", "--store", str(filled), "--limit", "1", cwd=tmp_path)
    assert "contract-3" in done.stdout and "contract-2" not in done.stdout
    done = run_pingce("runs", "show", "contract-2", "--store", str(filled), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "weighted_accuracy" in done.stdout and hashlib.sha256(
        CONTRACT.read_bytes()
    ).hexdigest() in done.stdout.replace("\n", "")
    done = run_pingce("runs", "--store", str(filled), "show", "calls-1", "--json", cwd=tmp_path)
    assert json.loads(done.stdout)["suite"] == "function-call"
    done = run_pingce("runs", "show", "nope", "--store", str(filled), cwd=tmp_path)
    assert done.returncode == 2 and "no run named 'nope'" in done.stderr


def _strict_json(text: str) -> object:
    """JSON as other readers take it: ``NaN`` and ``Infinity`` are errors."""

    def refuse(constant: str) -> object:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_a_nan_in_a_stored_run_is_null_in_every_json_output(
    tmp_path: Path, contract_result: EvaluationResult
) -> None:
    """One JSON policy (pingce._json): a NaN in a recorded run's options or metrics is written
    null by the history and by ``pingce runs --json`` (before: ``NaN``, invalid JSON)."""
    import sqlite3

    db = tmp_path / "runs.db"
    nan = float("nan")
    metrics = dict(contract_result.metrics)
    name = next(iter(metrics))
    metrics[name] = metrics[name].model_copy(update={"value": nan})
    result = contract_result.model_copy(update={"metrics": metrics})
    history.record_run(result, store=db, name="nan", options={"level": nan, "n": [1.0, nan]})
    with sqlite3.connect(db) as connection:
        (options,) = connection.execute("SELECT options FROM runs").fetchone()
    assert _strict_json(options) == {"level": None, "n": [1.0, None]}
    listed = run_pingce("runs", "--store", str(db), "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    shown = run_pingce("runs", "show", "nan", "--store", str(db), "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    for text in (listed.stdout, shown.stdout):
        data = _strict_json(text)
        run = data[0] if isinstance(data, list) else data
        assert isinstance(run, dict) and run["options"]["level"] is None
        assert next(m for m in run["metrics"] if m["metric"] == name)["value"] is None
    with pytest.raises(ValueError, match="not JSON: NaN"):  # the check can fail
        _strict_json(json.dumps({"level": nan}))


def test_the_list_reads_at_80_columns_with_whole_names(tmp_path: Path, contract_result) -> None:
    db = tmp_path / "runs.db"
    long_name = "a-rather-long-run-name-for-the-new-prompt-v2-with-retrieval-and-reranking"
    history.record_run(contract_result, store=db, name=long_name, out=tmp_path / ("o" * 30))
    env = {**ENV, "COLUMNS": "80"}
    args = [sys.executable, "-m", "pingce", "runs", "--store", str(db)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert long_name in done.stdout.splitlines()
    assert all(len(line) <= 80 for line in done.stdout.splitlines())
    args = [sys.executable, "-m", "pingce", "runs", "show", long_name, "--store", str(db)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert "weighted_accuracy" in done.stdout and "clause_hallucination_rate" in done.stdout
    assert all(len(line) <= 80 for line in done.stdout.splitlines())


def test_rm_deletes_the_run_but_not_its_folder(filled: Path, tmp_path: Path) -> None:
    folder = tmp_path / "c1"
    folder.mkdir()
    done = run_pingce("runs", "rm", "contract-1", "--store", str(filled), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "removed run contract-1" in done.stdout and "left as it is" in done.stdout
    assert folder.is_dir()
    assert "contract-1" not in [r.name for r in pingce.runs(store=filled)]
    removed = pingce.remove_run("calls-0", store=filled)
    assert removed.name == "calls-0"
    with pytest.raises(pingce.OptionError, match="no run named 'calls-0'"):
        pingce.run_info("calls-0", store=filled)
    with sqlite3.connect(filled) as connection:  # the metrics went with the runs
        orphans = connection.execute(
            "SELECT count(*) FROM metrics WHERE run_id NOT IN (SELECT id FROM runs)"
        ).fetchone()[0]
    assert orphans == 0
    done = run_pingce("runs", "rm", "contract-1", "--store", str(filled), cwd=tmp_path)
    assert done.returncode == 2


# ------------------------------------------------------------------------------ schema


def test_migrations_take_an_old_store_forward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls_result: EvaluationResult
) -> None:
    db = tmp_path / "runs.db"
    history.record_run(calls_result, store=db, name="old")

    def add_column(connection: sqlite3.Connection) -> None:
        connection.execute("ALTER TABLE runs ADD COLUMN note TEXT")

    current = history.SCHEMA_VERSION
    monkeypatch.setattr(history, "SCHEMA_VERSION", current + 1)
    monkeypatch.setitem(history.MIGRATIONS, current + 1, add_column)
    history.record_run(calls_result, store=db, name="new")
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == current + 1
        columns = [row[1] for row in connection.execute("PRAGMA table_info(runs)")]
    assert "note" in columns
    assert [r.name for r in pingce.runs(store=db)] == ["new", "old"]
    monkeypatch.setattr(history, "SCHEMA_VERSION", current)
    with pytest.raises(history.StoreError, match="newer pingce"):
        pingce.runs(store=db)


def test_a_store_of_schema_2_gains_the_directions(
    tmp_path: Path, calls_result: EvaluationResult
) -> None:
    """A store written before directions were kept (schema 2: no column): opened by this pingce,
    its metrics get the column, NULL, read as the metric registry's direction; a run recorded
    now keeps its own."""
    db = tmp_path / "runs.db"
    history.record_run(calls_result, store=db, name="old")
    with sqlite3.connect(db) as connection:  # as pingce of schema 2 left it
        connection.execute("ALTER TABLE metrics DROP COLUMN higher_is_better")
        connection.execute("PRAGMA user_version = 2")
    old = pingce.run_info("old", store=db)
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == history.SCHEMA_VERSION
        stored = connection.execute("SELECT DISTINCT higher_is_better FROM metrics").fetchall()
    assert stored == [(None,)]
    assert {m.higher_is_better for m in old.metrics} == {True}  # function-call's: the registry's
    history.record_run(calls_result, store=db, name="new")
    new = pingce.run_info("new", store=db)
    assert [m.higher_is_better for m in new.metrics] == [m.higher_is_better for m in old.metrics]


# ------------------------------------------------------------------------------ concurrency


WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from pingce.results import EvaluationResult
    from pingce.history import record_run

    results, db, go, tag, count = sys.argv[1:6]
    result = EvaluationResult.model_validate_json(Path(results).read_text(encoding="utf-8"))
    while not Path(go).exists():
        time.sleep(0.005)
    for k in range(int(count)):
        record_run(result, store=db, name=f"{tag}-{k}")
        record_run(result, store=db)  # default names: the same second in both processes
    print("done")
    """
)


def test_two_processes_writing_at_once_both_succeed(
    tmp_path: Path, calls_result: EvaluationResult
) -> None:
    results = tmp_path / "results.json"
    results.write_text(calls_result.to_json(), encoding="utf-8")
    db, go = tmp_path / "new" / "runs.db", tmp_path / "go"  # the store does not exist yet
    count = 40
    pipe = subprocess.PIPE
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(results), str(db), str(go), tag, str(count)],
            env=ENV,
            stdout=pipe,
            stderr=pipe,
            text=True,
        )
        for tag in ("a", "b")
    ]
    time.sleep(1.0)  # both started and waiting
    go.write_text("", encoding="utf-8")
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        assert out.strip() == "done"
    found = pingce.runs(store=db)
    names = {r.name for r in found}
    assert len(found) == len(names) == 4 * count
    assert {f"{tag}-{k}" for tag in "ab" for k in range(count)} <= names
    per_run = len(calls_result.metrics)
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT count(*) FROM metrics").fetchone()[0] == (
            4 * count * per_run
        )


SAME_NAME = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import pingce.engine as engine

    go = Path(sys.argv[1])
    evaluate = engine.evaluate_suite

    def slow(*args, **kwargs):  # the run's work takes a while: the other starts meanwhile
        time.sleep(4)
        return evaluate(*args, **kwargs)

    engine.evaluate_suite = slow
    sys.argv = ["pingce", *sys.argv[2:]]
    while not go.exists():
        time.sleep(0.005)
    from pingce.cli import main
    main()
    """
)


def test_the_same_name_started_twice_at_once_runs_once(tmp_path: Path) -> None:
    """Issue 28: both exited 0 and one was silently not recorded. The name is reserved in the
    store before any work: the second stops at once (exit 2, the name, "in progress")."""
    db, go = tmp_path / "runs.db", tmp_path / "go"

    def start(side: str) -> subprocess.Popen[str]:
        args = ["run", "function-call", "--data", str(CALLS), "--out", str(tmp_path / side),
                "--bootstrap", "0", "--name", "twice", "--store", str(db)]  # fmt: skip
        return subprocess.Popen(
            [sys.executable, "-c", SAME_NAME, str(go), *args],
            env=ENV, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    procs = [start("a"), start("b")]
    time.sleep(1.0)  # both started and waiting
    go.write_text("", encoding="utf-8")
    ended = []
    for proc in procs:
        _, err = proc.communicate(timeout=240)
        ended.append((proc.returncode, err))
    assert sorted(code for code, _ in ended) == [0, 2], ended
    loser = next(err for code, err in ended if code == 2)
    assert "--name twice: a run of that name is in progress" in loser, loser
    assert "Traceback" not in loser
    assert [r.name for r in pingce.runs(store=db)] == ["twice"]
    winner = "ab"[[code for code, _ in ended].index(0)]
    assert pingce.run_info("twice", store=db).out_dir == str(tmp_path / winner)
    assert not (tmp_path / ("b" if winner == "a" else "a")).exists()  # no work, no folder
    with sqlite3.connect(db) as connection:  # the reservation went with the recording
        assert connection.execute("SELECT count(*) FROM reservations").fetchone()[0] == 0


def test_a_name_reserved_by_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    """A run killed before it could give its name back (here: a process that reserved it and
    ended) does not hold the name for ever; a live one does, for Python's record_run too; a
    failed run gives its name back."""
    db = tmp_path / "runs.db"
    reserve = (
        "import sys; from pingce.history import reserve_name as r; r(sys.argv[1], sys.argv[2])"
    )
    done = run_python("-c", reserve + "; print('reserved')", "left", str(db))
    assert done.returncode == 0 and "reserved" in done.stdout, done.stderr
    run = run_pingce(
        "run", "function-call", "--data", str(CALLS), "--out", str(tmp_path / "o"),
        "--bootstrap", "0", "--name", "left", "--store", str(db), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert [r.name for r in pingce.runs(store=db)] == ["left"]
    with subprocess.Popen(
        [sys.executable, "-c", reserve + "; print('reserved', flush=True); input()", "held",
         str(db)],
        env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    ) as holder:  # fmt: skip
        assert holder.stdout is not None and holder.stdout.readline().strip() == "reserved"
        with pytest.raises(history.StoreError, match="held: a run of that name is in progress"):
            history.record_run(pingce.evaluate("function-call", CALLS, bootstrap=0), name="held",
                             store=db)  # fmt: skip
        holder.communicate("\n", timeout=30)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1"}\n', encoding="utf-8")
    failed = run_pingce("run", "function-call", "--data", str(bad), "--name", "again", "--store",
                        str(db), cwd=tmp_path)  # fmt: skip
    assert failed.returncode == 2
    with sqlite3.connect(db) as connection:
        names = [row[0] for row in connection.execute("SELECT name FROM reservations")]
    assert names == ["held"]  # left by a process that ended; "again" was given back


# ------------------------------------------------------------------------------ stats.npz


@pytest.mark.parametrize(
    ("suite", "data", "options"),
    [
        ("contract-risk", CONTRACT, {"slices": ("contract_type",), "bootstrap": 200}),
        ("function-call", CALLS, {"bootstrap": 200, "seed": 3}),
        ("tcm-dialogue", EXAMPLES / "tcm_dialogue" / "records.jsonl", {"similarity": "exact"}),
        ("function-points", EXAMPLES / "function_points" / "records.jsonl", {}),
    ],
)
def test_stats_npz_gives_back_the_blocks_values_and_intervals(
    tmp_path: Path, suite: str, data: Path, options: dict
) -> None:
    """The saved blocks, made back into blocks for the same suite and options, give the same
    values and the same bootstrap intervals (same seed) as the run: nothing to evaluate again."""
    import numpy as np

    from pingce.engine.local import Run
    from pingce.engine.phases import plan_run
    from pingce.engine.saved import saved_blocks
    from pingce.options import run_options
    from pingce.progress import no_progress
    from pingce.runfolder.stats import SavedStats

    result = pingce.evaluate(suite, data, out=tmp_path, **options)
    saved = SavedStats.load(tmp_path / "stats.npz")
    assert saved.manifest["n"] == result.n_records
    assert saved.ids() == result.records.ids
    assert saved.arrays["lines"].tolist() == result.records.lines.tolist()
    plan = plan_run(suite, run_options(options))
    blocks = saved_blocks(saved, plan)
    assert set(saved.manifest["metrics"]) == set(plan.keys) >= set(plan.metrics)  # and tables
    units = saved.arrays.get("units")
    assert (units is not None) == (plan.unit is not None)
    run = Run(plan, None, blocks, units, no_progress)  # type: ignore[arg-type]
    metrics, tables = run.values(blocks, plan.options.seed, "", units)
    assert metrics == result.metrics
    assert tables == result.tables
    for path in plan.options.slices:
        codes, values = saved.arrays[f"slice.{path}"], saved.manifest["slices"][path]
        for key, part in result.slices.items():
            rows = np.flatnonzero(codes == values.index(key.split("=", 1)[1]))
            assert rows.size == part.n_records
            sub = {k: b.take(rows) for k, b in blocks.items()}
            assert {m: r.value for m, r in run.values(sub, 0, "", None)[0].items()} == {
                m: r.value for m, r in part.metrics.items()
            }


def test_stats_npz_is_compact_plain_and_the_same_for_the_same_run(tmp_path: Path) -> None:
    import numpy as np

    first = pingce.evaluate("contract-risk", CONTRACT, out=tmp_path / "a", bootstrap=0)
    pingce.evaluate("contract-risk", CONTRACT, out=tmp_path / "b", bootstrap=0)
    a, b = (tmp_path / side / "stats.npz" for side in "ab")
    assert a.read_bytes() == b.read_bytes()
    with np.load(a, allow_pickle=False) as archive:  # no object arrays anywhere
        kinds = {archive[name].dtype.kind for name in archive.files}
        codes = [archive[n] for n in archive.files if n.endswith(".codes")]
    assert "O" not in kinds
    assert codes and all(c.dtype.itemsize <= 2 for c in codes)
    assert a.stat().st_size < 20 * first.n_records * len(first.metrics)
    # a result read from results.json has no blocks: no stats.npz, and never a stale one
    again = EvaluationResult.model_validate_json((tmp_path / "a" / "results.json").read_text())
    from pingce.report import write_outputs

    paths = write_outputs(again, tmp_path / "a")
    assert "stats.npz" not in paths and not a.exists()


def test_statistics_the_same_for_every_record_are_kept_once_with_the_same_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On level-only contract records (no evidence, no rules) the evidence and rules statistics
    are the same row for every record: the run keeps that row once (``.row`` in stats.npz) and
    every number, interval, slice and records.jsonl line is what the run without that saving
    gives; compare reads the saved run back."""
    import numpy as np

    from pingce.metrics.protocol import StatBlock

    levels = tmp_path / "levels.jsonl"
    keep = ("id", "contract_type", "gold_level", "pred_level", "latency_sec")
    rows = [json.loads(line) for line in CONTRACT.read_text(encoding="utf-8").splitlines()]
    levels.write_text(
        "".join(json.dumps({k: r[k] for k in keep if k in r}) + "\n" for r in rows),
        encoding="utf-8",
    )
    options = {"slices": ("contract_type",), "bootstrap": 300, "seed": 5}
    kept = pingce.evaluate("contract-risk", levels, out=tmp_path / "kept", **options)
    with monkeypatch.context() as patch:
        patch.setattr(StatBlock, "compact", lambda self: self)
        full = pingce.evaluate("contract-risk", levels, out=tmp_path / "full", **options)
    assert kept.metrics == full.metrics
    assert kept.slices == full.slices
    assert kept.failures == full.failures
    for name in ("records.jsonl",):
        assert (tmp_path / "kept" / name).read_bytes() == (tmp_path / "full" / name).read_bytes()
    with np.load(tmp_path / "kept" / "stats.npz", allow_pickle=False) as archive:
        shared = [name for name in archive.files if name.endswith(".row")]
    with np.load(tmp_path / "full" / "stats.npz", allow_pickle=False) as archive:
        assert not [name for name in archive.files if name.endswith(".row")]
    assert shared  # the saving happened, so the equalities above say something
    out = tmp_path / "cmp"
    done = run_pingce("compare", str(tmp_path / "kept"), str(tmp_path / "full"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    compared = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    deltas = [m["delta"] for m in compared["metrics"].values() if m["delta"] is not None]
    assert deltas and all(d == 0 for d in deltas)


def test_stats_npz_of_earlier_versions_with_text_ids_is_still_read(tmp_path: Path) -> None:
    import numpy as np

    from pingce.runfolder.stats import SavedStats

    pingce.evaluate("contract-risk", CONTRACT, out=tmp_path, bootstrap=0)
    saved = SavedStats.load(tmp_path / "stats.npz")
    ids = saved.ids()
    assert ids and all(isinstance(i, str) for i in ids)
    old = dict(saved.arrays)
    del old["ids_json"]
    old["ids"] = np.array(ids, dtype=str)
    assert SavedStats(saved.manifest, old).ids() == ids


def test_the_history_tables_read_plain_data_not_the_history() -> None:
    """report/history.py renders any value with the attributes it declares (``StoredRun``)."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from pingce.report.history import print_run, print_runs

    row = SimpleNamespace(
        metric="accuracy", slice=None, value=0.5, ci_low=0.25, ci_high=0.75, n=4,
        higher_is_better=False,
    )  # fmt: skip
    run = SimpleNamespace(
        name="plain", suite="s", created="2026-01-02T03:04:05+00:00", n_records=4,
        data_path=None, data_sha256=None, git_commit=None, pingce_version="0", out_dir=None,
        signature={}, options={}, failures={}, metrics=[row],
    )  # fmt: skip
    out = io.StringIO()
    console = Console(file=out, width=120)
    print_runs([run], "runs.db", console)
    print_run(run, console)
    text = out.getvalue()
    assert "plain" in text and "2026-01-02 03:04" in text and "accuracy" in text and "0.75" in text
    assert "accuracy ↓" in text and "↓ lower is better" in text  # the direction the row says
