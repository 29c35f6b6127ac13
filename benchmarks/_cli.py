"""What every benchmark shares: run the ``pingce`` command line as users run it and measure it.

:func:`run_cli` starts ``pingce ARGS --profile`` as a child process (the ``pingce`` script next
to this interpreter, on this checkout's ``src``) and returns a :class:`CliRun`: wall clock from
just before the child is started to its exit, its peak RSS and CPU seconds, its output, and the
seconds per phase that ``--profile`` printed on stderr. The numbers to check are read from the
files the run wrote (``results.json``, ``records.jsonl``, ``comparison.json``).

Peak RSS needs care: on Linux a child's ``ru_maxrss`` (from ``wait4`` or ``RUSAGE_CHILDREN``)
starts from the high-water mark of the process it was forked from, kept through ``exec``; a
benchmark that holds the peer's data in memory would see its own size reported as pingce's. So the
command runs under a small trampoline interpreter (:data:`TRAMPOLINE`, ``python -S``, ~10 MB)
that starts it, waits for it with ``os.wait4`` and writes the wall clock and the ``rusage`` to a
file: the same idea as ``/usr/bin/time``, without depending on it.

:func:`phase_lines` turns a run into the lines every benchmark prints: each phase's share of the
wall time, where "start-up" is the wall time outside the profiled phases (interpreter, imports
before the first phase, exit), and whether issue 10's rule holds: no phase other than the
metrics' own arithmetic (``statistics``, ``intervals``) may be the largest.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "ARITHMETIC",
    "OUT_DIR",
    "ROOT",
    "CliRun",
    "import_seconds",
    "machine",
    "median_wall",
    "out_dir",
    "per_record",
    "phase_lines",
    "pingce_command",
    "print_checks",
    "print_table",
    "run_cli",
    "save_and_exit",
    "save_summary",
    "timed",
    "worst",
]

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
OUT_DIR = Path(__file__).parent / "out"
ARITHMETIC = ("statistics", "intervals")
STARTUP = "start-up"
T = TypeVar("T")

TRAMPOLINE = """
import json, os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as handle:
    json.dump({"wall_s": wall, "user_s": usage.ru_utime, "sys_s": usage.ru_stime,
               "maxrss_kb": usage.ru_maxrss, "returncode": os.waitstatus_to_exitcode(status)},
              handle)
"""
"""Runs the command in argv[2:], then writes its wall clock and rusage as JSON to argv[1]."""

_ROW = re.compile(r"^\s*[│|┃]\s*([a-z][\w-]*)\s*[│|┃]\s*([0-9]+(?:\.[0-9]+)?)\s*[│|┃]")


def pingce_command() -> list[str]:
    """The ``pingce`` script installed next to this interpreter (``python -m pingce`` if none)."""
    script = Path(sys.executable).with_name("pingce")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "pingce"]


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a child: this checkout's ``src`` first on the path, no colours, and
    bytecode cached as an installed package has it (with ``PYTHONDONTWRITEBYTECODE`` set, as
    some shells here do, every module of the checkout is compiled anew in every run: 0.38 s of
    a small run, measured on 2026-11-28)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    env["NO_COLOR"] = "1"
    env.pop("FORCE_COLOR", None)
    env.update(extra or {})
    return env


def out_dir(*parts: str) -> Path:
    """A fresh path under ``benchmarks/out/`` for a run's folder or file (what was there is
    removed first)."""
    path = OUT_DIR.joinpath(*parts)
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def parse_profile(stderr: str) -> dict[str, float]:
    """Seconds per phase from the table ``--profile`` prints (rows ``│ phase │ seconds │ ...``)."""
    phases: dict[str, float] = {}
    for line in stderr.splitlines():
        match = _ROW.match(line)
        if match and match.group(1) != "phase":
            phases[match.group(1)] = float(match.group(2))
    return phases


@dataclass
class CliRun:
    """One ``pingce`` command, timed from outside."""

    label: str
    argv: list[str]
    wall_s: float
    user_s: float
    sys_s: float
    peak_rss_mb: float
    returncode: int
    stdout: str
    stderr: str
    phases: dict[str, float]
    out: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def profiled_s(self) -> float:
        """The engine's phases, write and report (``--profile``'s own start-up row aside)."""
        return sum(v for k, v in self.phases.items() if k != STARTUP)

    @property
    def startup_s(self) -> float:
        """Wall time outside the engine's phases: interpreter start, imports (the row
        ``--profile`` prints as start-up), exit."""
        return max(0.0, self.wall_s - self.profiled_s)

    def seconds(self) -> dict[str, float]:
        """Every phase and the start-up, in seconds."""
        others = {k: v for k, v in self.phases.items() if k != STARTUP}
        return {STARTUP: self.startup_s, **others}

    def shares(self) -> dict[str, float]:
        """Every phase's share of the wall time (start-up included)."""
        return {k: v / self.wall_s for k, v in self.seconds().items()} if self.wall_s else {}

    def largest(self) -> tuple[str, float]:
        name, seconds = max(self.seconds().items(), key=lambda kv: kv[1])
        return name, seconds / self.wall_s if self.wall_s else 0.0

    def holds(self) -> bool:
        """Issue 10: the largest phase is the metrics' own arithmetic."""
        return self.largest()[0] in ARITHMETIC

    def results(self) -> dict[str, Any]:
        assert self.out is not None, "this run wrote no files"
        data: dict[str, Any] = json.loads((self.out / "results.json").read_text(encoding="utf-8"))
        return data

    def comparison(self) -> dict[str, Any]:
        assert self.out is not None, "this run wrote no files"
        path = self.out / "comparison.json"
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data

    def records(self) -> Iterator[dict[str, Any]]:
        """The lines of records.jsonl, one dictionary at a time."""
        assert self.out is not None, "this run wrote no files"
        with open(self.out / "records.jsonl", encoding="utf-8") as handle:
            for line in handle:
                yield json.loads(line)

    def metric(self, name: str) -> float | None:
        value: float | None = self.results()["metrics"][name]["value"]
        return value

    def summary(self) -> dict[str, Any]:
        """What the JSON summary of a benchmark keeps of this run."""
        return {
            "command": " ".join(["pingce", *self.argv]),
            "wall_s": self.wall_s,
            "startup_s": self.startup_s,
            "cpu_s": self.user_s + self.sys_s,
            "peak_rss_mb": self.peak_rss_mb,
            "phases_s": self.phases,
            "largest_phase": self.largest()[0],
            "issue10_holds": self.holds(),
            **self.extra,
        }


def run_cli(
    label: str,
    args: Sequence[str],
    *,
    out: Path | None = None,
    profile: bool = True,
    expect: Sequence[int] = (0,),
    env: dict[str, str] | None = None,
) -> CliRun:
    """Run ``pingce ARGS [--out OUT] [--profile]`` in a child process and measure it.

    ``out`` is emptied first. The child's stdout and stderr go to files (no pipe to fill);
    a status outside ``expect`` stops the benchmark with the child's stderr.
    """
    argv = [str(a) for a in args]
    if out is not None:
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        argv += ["--out", str(out)]
    if profile:
        argv.append("--profile")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pingce-bench-") as tmp:
        stdout_path, stderr_path = Path(tmp) / "stdout", Path(tmp) / "stderr"
        usage_path = Path(tmp) / "usage.json"
        with open(stdout_path, "wb") as so, open(stderr_path, "wb") as se:
            subprocess.run(
                [sys.executable, "-S", "-c", TRAMPOLINE, usage_path, *pingce_command(), *argv],
                stdin=subprocess.DEVNULL,
                stdout=so,
                stderr=se,
                env=child_env(env),
                cwd=OUT_DIR,
                check=False,
            )
        usage = json.loads(usage_path.read_text(encoding="utf-8"))
        stdout = stdout_path.read_text(encoding="utf-8", errors="replace")
        stderr = stderr_path.read_text(encoding="utf-8", errors="replace")
    run = CliRun(
        label=label,
        argv=argv,
        wall_s=usage["wall_s"],
        user_s=usage["user_s"],
        sys_s=usage["sys_s"],
        peak_rss_mb=usage["maxrss_kb"] / 1024,  # ru_maxrss is in kilobytes on Linux
        returncode=usage["returncode"],
        stdout=stdout,
        stderr=stderr,
        phases=parse_profile(stderr) if profile else {},
        out=out,
    )
    if run.returncode not in expect:
        tail = "\n".join(stderr.strip().splitlines()[-20:])
        raise SystemExit(f"`pingce {' '.join(argv)}` exited with {run.returncode}:\n{tail}")
    if profile and not run.phases:
        raise SystemExit(f"`pingce {' '.join(argv)}` printed no --profile table:\n{stderr}")
    return run


def median_wall(args: Sequence[str], repeat: int) -> tuple[float, list[float]]:
    """Median wall seconds of ``repeat`` runs of ``pingce ARGS`` (no profile), and all of them."""
    walls = [run_cli("", args, profile=False).wall_s for _ in range(repeat)]
    return statistics.median(walls), walls


def phase_lines(run: CliRun, note: str = "") -> list[str]:
    """Each phase's share of the run's wall time, and whether issue 10's rule holds."""
    shares = run.shares()
    parts = [f"{name} {share:.1%}" for name, share in shares.items()]
    name, share = run.largest()
    verdict = "holds" if run.holds() else "does NOT hold"
    arithmetic = " + ".join(f"{k} {shares.get(k, 0.0):.1%}" for k in ARITHMETIC)
    lines = [
        f"  phases of {run.label} ({run.wall_s:.2f} s wall, {run.startup_s:.2f} s outside the "
        f"profile): " + ", ".join(parts),
        f"  issue 10 (largest phase must be statistics or intervals): largest is {name} "
        f"({share:.1%}; {arithmetic}): {verdict}" + (f" - {note}" if note else ""),
    ]
    return lines


def print_checks(
    runs: Iterable[CliRun], problems: Sequence[str], ok: str, mismatch: str = "MISMATCH"
) -> None:
    """Each run's phase lines, then the verdict of the number checks: the problems found under
    ``mismatch``, or ``ok`` (what was checked) when there are none."""
    for run in runs:
        for line in phase_lines(run):
            print(line)
    if problems:
        print(f"{mismatch}:\n  " + "\n  ".join(problems))
    else:
        print(ok)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> None:
    """A plain-text table: the first column left-aligned, the others right-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(str(h)), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    if title:
        print(title)

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.ljust(w) if i == 0 else v.rjust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ).rstrip()

    print(line([str(h) for h in headers]))
    print(line(["-" * w for w in widths]))
    for row in cells:
        print(line(row))
    sys.stdout.flush()


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()`` and its wall seconds."""
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def machine(packages: Sequence[str] = ()) -> dict[str, Any]:
    """Date, CPU, cores, memory, load average and versions: the README's "machine of record"."""
    cpu = platform.processor() or platform.machine()
    memory = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo", encoding="utf-8") as handle:
            kb = int(handle.readline().split()[1])
            memory = f"{kb / 1024**2:.0f} GB"
    except OSError:
        pass
    versions = {"python": platform.python_version()}
    for name in ("pingce", "numpy", *packages):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    info = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": memory,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "versions": versions,
        "pingce_command": " ".join(pingce_command()),
        "pingce_source": str(SRC),
    }
    print(
        f"machine: {info['date']}, {info['cores']} x {cpu}, {memory}, load average "
        f"{' '.join(str(x) for x in info['load_average'])}; "
        + ", ".join(f"{k} {v}" for k, v in versions.items())
    )
    print(f"pingce: {info['pingce_command']} with PYTHONPATH={SRC}", flush=True)
    return info


def save_summary(name: str, summary: dict[str, Any]) -> Path:
    """Print the summary as JSON and keep it in ``benchmarks/out/<name>.json``."""
    text = json.dumps(summary, indent=2, ensure_ascii=False, default=str)
    print(text)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"{name}.json"
    path.write_text(text + "\n", encoding="utf-8")
    print(f"summary written to {path}", flush=True)
    return path


def save_and_exit(name: str, summary: dict[str, Any], problems: Sequence[str]) -> None:
    """:func:`save_summary`, then exit with status 1 when a number check found problems."""
    save_summary(name, summary)
    if problems:
        raise SystemExit(1)


def import_seconds(statement: str, repeat: int = 3) -> float:
    """What ``statement`` adds to a fresh interpreter's start (best of ``repeat``): a peer
    library's import and set-up time, measured apart because generating the data may have
    imported it (jieba, its dictionary loaded) in this process already."""

    def best(code: str) -> float:
        return min(
            timed(lambda: subprocess.run([sys.executable, "-c", code], check=True))[1]
            for _ in range(repeat)
        )

    return max(0.0, best(statement) - best("pass"))


def per_record(run: CliRun, names: Sequence[str]) -> dict[str, np.ndarray]:
    """The per-record values of ``names`` from the run's records.jsonl."""
    columns: dict[str, list[float]] = {name: [] for name in names}
    for row in run.records():
        for name in names:
            columns[name].append(row["values"][name])
    return {name: np.asarray(values, dtype=np.float64) for name, values in columns.items()}


def worst(ours: Any, theirs: Any) -> float:
    """The largest absolute difference of two arrays of values (0 when empty)."""
    diff = np.abs(np.asarray(ours, dtype=np.float64) - np.asarray(theirs, dtype=np.float64))
    return float(diff.max()) if diff.size else 0.0
