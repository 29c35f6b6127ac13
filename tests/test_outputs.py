"""Where commands write (issue 28): an ``--out`` that cannot be written stops the command before
any work (exit 2, the path and the system's reason, no traceback), a failure while writing leaves
nothing, and a run killed while it writes (SIGKILL, SIGTERM) leaves no staging folder behind for
good (pingce._outputs)."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import pingce
from pingce.report import write_outputs

from .cli_run import ENV, run_pingce, run_python
from .loopback import LoopbackServer

EXAMPLES = Path(pingce.__file__).resolve().parent / "examples"
CALLS = EXAMPLES / "function_call" / "records.jsonl"
POINTS = EXAMPLES / "function_points" / "records.jsonl"
STAGING_PREFIX = ".pingce-"
NAME_MAX = os.pathconf("/", "PC_NAME_MAX") if hasattr(os, "pathconf") else 255


def run_args(out: Path | str, *more: str) -> list[str]:
    return ["run", "function-call", "--data", str(CALLS), "--out", str(out), "--bootstrap", "0",
            "--no-store", *more]  # fmt: skip


def staging_left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(STAGING_PREFIX))


def assert_refused(done: subprocess.CompletedProcess[str], path: Path | str, reason: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert f"pingce: error: --out {path}: " in done.stderr, done.stderr
    assert reason in done.stderr, done.stderr


# ------------------------------------------------------------------------------ before any work


def test_an_out_under_a_file_stops_the_run_before_any_judge_call(tmp_path: Path) -> None:
    """The judge is never asked: the check comes before the work, not after it."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    out = blocker / "out"
    env = {**ENV, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
           "PINGCE_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
    with LoopbackServer(lifetime=60) as server:
        done = subprocess.run(
            [sys.executable, "-m", "pingce", "run", "function-points", "--data", str(POINTS),
             "--out", str(out), "--similarity", "openai:m", "--base-url", server.url,
             "--no-cache", "--bootstrap", "0", "--no-store"],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert server.count() == 0
    assert_refused(done, out, f"{blocker} is a file, not a folder")


def command_args(command: str, out: Path) -> list[str]:
    """The arguments of each command that writes, with ``--out`` ``out``."""
    return {
        "run": run_args(out),
        "compare": [
            "compare",
            "function-call",
            "--data",
            str(CALLS),
            "--baseline",
            str(CALLS),
            *("--bootstrap", "0", "--out", str(out)),
        ],
        "report": ["report", "no-such-run", "--out", str(out)],
        "demo": ["demo", "--out", str(out)],
        "calibrate": ["calibrate", "--pairs", "pairs.jsonl", "--out", str(out / "c.json")],
    }[command]


@pytest.mark.parametrize("command", ["run", "compare", "report", "demo", "calibrate"])
def test_every_command_that_writes_checks_its_out_first(tmp_path: Path, command: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    out = blocker / "sub"
    done = run_pingce(*command_args(command, out), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert f"{blocker} is a file, not a folder" in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_a_name_too_long_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    out = tmp_path / "made" / ("a" * (NAME_MAX + 1))
    done = run_pingce(*run_args(out), cwd=tmp_path)
    assert_refused(done, out, os.strerror(errno.ENAMETOOLONG))
    assert not (tmp_path / "made").exists()  # the folder made on the way is removed


def test_an_input_error_removes_the_folders_made_for_the_check(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1"}\n', encoding="utf-8")
    out = tmp_path / "new" / "out"
    done = run_pingce("run", "function-call", "--data", str(bad), "--out", str(out), "--no-store",
                      cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2 and "bad.jsonl:1" in done.stderr, done.stderr
    assert not (tmp_path / "new").exists()
    done = run_pingce("run", "function-call", "--data", str(bad), "--no-store", cwd=tmp_path)
    assert done.returncode == 2
    assert not (tmp_path / "pingce-out").exists()  # the default folder likewise


def _immutable(folder: Path) -> bool:
    """Make ``folder`` a folder nobody can write in (root included): chmod for a user, the
    immutable attribute (chattr +i) for root; False when neither can be done here."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return True
    if shutil.which("chattr") is None:
        return False
    done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False)
    if done.returncode != 0:
        return False
    try:
        (folder / "probe").write_text("x", encoding="utf-8")
    except PermissionError:
        return True
    (folder / "probe").unlink()
    subprocess.run(["chattr", "-i", str(folder)], check=False)
    return False


def _mutable(folder: Path) -> None:
    if os.geteuid() != 0:
        folder.chmod(0o755)
    else:
        subprocess.run(["chattr", "-i", str(folder)], check=False)


def test_no_permission_is_refused_before_the_work(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    if not _immutable(locked):
        pytest.skip("cannot make a folder that this user cannot write in (root without chattr)")
    try:
        inside = run_pingce(*run_args(locked / "out"), cwd=tmp_path)
        itself = run_pingce(*run_args(locked), cwd=tmp_path)
    finally:
        _mutable(locked)
    reasons = (os.strerror(errno.EACCES), os.strerror(errno.EPERM))
    assert_refused(inside, locked / "out", "cannot be written")
    assert any(r in inside.stderr for r in reasons), inside.stderr
    assert_refused(itself, locked, "cannot be written")
    assert any(r in itself.stderr for r in reasons), itself.stderr
    assert list(locked.iterdir()) == []


def test_a_read_only_file_system_is_refused_before_the_work(tmp_path: Path) -> None:
    source, mount = tmp_path / "src", tmp_path / "ro"
    source.mkdir()
    mount.mkdir()
    done = subprocess.run(["mount", "-o", "bind,ro", str(source), str(mount)],
                          capture_output=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"no read-only bind mount here: {done.stderr.decode(errors='replace')}")
    try:
        refused = run_pingce(*run_args(mount / "out"), cwd=tmp_path)
    finally:
        subprocess.run(["umount", str(mount)], check=False)
    assert_refused(refused, mount / "out", os.strerror(errno.EROFS))


# ------------------------------------------------------------------------------ while writing


FULL_DISK = textwrap.dedent(
    """
    import errno, sys
    import pingce.report.files as files

    def full(result, path, **_):  # the disk fills up while report.html is written
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    files.write_html = full
    sys.argv = ["pingce", *sys.argv[1:]]
    from pingce.cli import main
    main()
    """
)


def test_a_full_disk_while_writing_is_exit_2_and_leaves_nothing(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh" / "out"
    done = run_python("-c", FULL_DISK, *run_args(fresh), cwd=tmp_path)
    assert_refused(done, fresh, "No space left on device")
    assert f"{fresh / 'report.html'}" in done.stderr  # the file it was writing
    assert not (tmp_path / "fresh").exists()
    # a folder holding an earlier run: its files stay as they were, nothing is added
    kept = tmp_path / "kept"
    assert run_pingce(*run_args(kept), cwd=tmp_path).returncode == 0
    before = {p.name: p.read_bytes() for p in kept.iterdir()}
    done = run_python("-c", FULL_DISK, *run_args(kept, "--seed", "3"), cwd=tmp_path)
    assert_refused(done, kept, "No space left on device")
    assert {p.name: p.read_bytes() for p in kept.iterdir()} == before


def test_the_python_api_raises_an_output_error_and_leaves_nothing(tmp_path: Path) -> None:
    from pingce.errors import OutputError

    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        pingce.evaluate("function-call", CALLS, bootstrap=0, out=blocker / "out")
    result = pingce.evaluate("function-call", CALLS, bootstrap=0)
    too_long = tmp_path / "x" / ("b" * (NAME_MAX + 1))
    with pytest.raises(OutputError, match=os.strerror(errno.ENAMETOOLONG)):
        write_outputs(result, too_long)
    with pytest.raises(OutputError, match=os.strerror(errno.ENAMETOOLONG)):
        pingce.compare("function-call", CALLS, CALLS, bootstrap=0, out=too_long)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


# ------------------------------------------------------------------------------ killed


SLOW_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import pingce.report.files as files

    flag = Path(sys.argv[1])
    real = files.write_html

    def slow(result, path, **options):  # report.html written, then the writer stops here
        real(result, path, **options)
        flag.write_text("writing", encoding="utf-8")
        time.sleep(120)

    files.write_html = slow
    sys.argv = ["pingce", *sys.argv[2:]]
    from pingce.cli import main
    main()
    """
)


def start_slow_writer(tmp_path: Path, out: Path, *more: str) -> tuple[subprocess.Popen[str], Path]:
    flag = tmp_path / f"writing-{time.monotonic_ns()}"
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITER, str(flag), *run_args(out, *more)],
        env=ENV, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not flag.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return proc, flag


def test_sigkill_while_writing_then_a_rerun_leaves_no_staging_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc, _ = start_slow_writer(tmp_path, out)
    proc.kill()
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert staging_left(out)  # what a SIGKILL leaves: nothing can remove it then
    done = run_pingce(*run_args(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert staging_left(out) == []
    assert (out / "results.json").is_file() and (out / "report.html").is_file()


def test_sigterm_while_writing_leaves_nothing(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    proc, _ = start_slow_writer(tmp_path, fresh)
    proc.terminate()
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr, stderr
    assert not fresh.exists()
    # into a folder with an earlier run: that run's files stay, nothing is added
    kept = tmp_path / "kept"
    assert run_pingce(*run_args(kept), cwd=tmp_path).returncode == 0
    before = {p.name: p.read_bytes() for p in kept.iterdir()}
    proc, _ = start_slow_writer(tmp_path, kept, "--seed", "3")
    proc.terminate()
    proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert {p.name: p.read_bytes() for p in kept.iterdir()} == before


def test_only_staging_folders_of_dead_processes_are_removed(tmp_path: Path) -> None:
    """A live process's staging folder is left alone (another run writing there now), as is
    anything that is not pingce's; a dead one's, and one whose process id went to another
    process since, are removed."""
    from pingce._outputs import remove_stale
    from pingce._processes import Owner, this_process

    me = this_process()
    dead = Owner(me.host, 2**22 + 12345, 1)  # no such process id (above Linux's pid_max)
    reused = Owner(me.host, me.pid, me.start + 1)  # this pid, but a process started later
    live = tmp_path / f"{STAGING_PREFIX}{me.tag}-abc"
    for owner in (dead, reused):
        (tmp_path / f"{STAGING_PREFIX}{owner.tag}-xyz").mkdir()
        (tmp_path / f"{STAGING_PREFIX}{owner.tag}-xyz" / "results.json").write_text("{}")
    (tmp_path / f"{STAGING_PREFIX}{dead.tag}-probe").write_text("p")
    live.mkdir()
    (tmp_path / ".pingce-notes.txt").write_text("mine")
    removed = remove_stale(tmp_path)
    expected = {f"{STAGING_PREFIX}{dead.tag}-xyz", f"{STAGING_PREFIX}{dead.tag}-probe"}
    if me.start:  # where start times are known (Linux), a reused process id is told apart
        expected.add(f"{STAGING_PREFIX}{reused.tag}-xyz")
    assert set(removed) == expected
    assert live.is_dir() and (tmp_path / ".pingce-notes.txt").is_file()
