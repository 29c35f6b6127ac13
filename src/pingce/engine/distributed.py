"""``--engine ray``: a run over shards on Ray Data, with the local engine's numbers.

The files (paths or globs) are cut into pieces (:mod:`.shards`). Ray Data maps the pieces
through a pool of actors, each of which plans the suite once and then reads, checks and scores
its pieces with the local engine's own functions (:func:`.merge.run_shard`). What a piece hands
back adds up (:mod:`.merge`): summed statistics, the Poisson bootstrap's replicate sums, the
rows of statistics that do not decompose (latency percentiles: one column each), counts and
notes. The driver adds them as they stream in and finalises once; its memory does not grow with
the number of records, but for those raw columns and the ids' 8-byte keys (the duplicate-id
check across shards). BCa on a dense statistic takes a second pass over the pieces' blocks,
kept in Ray's object store, for the jackknife's moments.

Intervals are the Poisson bootstrap's (a multinomial resample needs every record in one
place); they equal the local engine's ``--bootstrap-method poisson`` for any number of pieces.
"""

from __future__ import annotations

import codecs
import itertools
import os
import pickle
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import EmptyInputError, InputError, OptionError
from ..option_table import ray_refused
from ..options import RunOptions
from ..progress import no_progress
from ..results import EvaluationResult, Failures
from ..runfolder.layout import RECORD_SHARDS, STAT_SHARDS, part_file
from ..runfolder.outputs import RunOutputs, ShardFolder
from ..similarity.names import BackendName
from ..stats import record_keys
from .assembly import data_info, id_notes, run_result
from .context import RunContext
from .groups import bootstrap_keys
from .merge import (
    Merger,
    Shard,
    added_counts,
    duplicate_keys,
    finish,
    jackknife_pass,
    needs_jackknife_pass,
    raw_thetas,
    run_shard,
    scope_finalised_numbers,
)
from .phases import load, pairs_of, plan_run, signature
from .plan import Plan, check_records, unseen_context
from .shards import (
    PIECE_BYTES,
    Piece,
    count_lines,
    expand_paths,
    number_pieces,
    open_piece,
    plan_pieces,
)

__all__ = ["run_on_ray"]

if TYPE_CHECKING:
    from ..similarity.remote import RemoteBackend


def _import_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise OptionError("--engine ray needs Ray Data: pip install 'pingce[ray]'") from None
    return ray


def check_ray_options(options: RunOptions, plan: Plan | None = None) -> list[str]:
    """Reject what the distributed engine cannot do (with what to do instead); the notes the
    run should carry."""
    from ..similarity.base import SimilarityBackend

    if options.encoding is not None and codecs.lookup(options.encoding).name != "utf-8":
        raise OptionError(
            f"--encoding {options.encoding}: the ray engine reads UTF-8 files; convert them "
            "(iconv -f ENCODING -t UTF-8) or run them with the local engine"
        )
    for name in ray_refused(options.given()):
        raise OptionError(f"{name} is not available with --engine ray yet; run it locally")
    if isinstance(options.scoring.backend, SimilarityBackend):
        raise OptionError(
            "--engine ray builds its similarity backend in every worker: give it by name "
            "(similarity='embed:...'), not as an object"
        )
    notes = []
    if options.resampling.resamples > 0 and not options.resampling.poisson:
        notes.append(
            "--engine ray draws the Poisson bootstrap (--bootstrap-method poisson): a multinomial "
            "resample needs every record in one place"
        )
    if plan is not None:
        for name, metric in plan.metrics.items():
            if getattr(metric, "aggregate", "mean") == "bootstrap":
                raise OptionError(
                    f"metric {name}: aggregate: bootstrap reads every record's scores in one "
                    "process; use aggregate: mean (the exact mean) with --engine ray"
                )
    return notes


def _remote_backend(options: RunOptions, suite_options: dict[str, Any]) -> RemoteBackend:
    """The run's remote backend (``openai:``, ``embedding-api:``, ``rerank:``) as a worker opens
    it: by name, with the suite's options and the run's cache."""
    from ..similarity import make_backend
    from ..similarity.remote import RemoteBackend

    scoring = options.scoring
    assert isinstance(scoring.backend, BackendName)  # check_ray_options refuses an instance
    backend = make_backend(
        scoring.backend, base_url=scoring.base_url, cache=scoring.cache, options=suite_options
    )
    assert isinstance(backend, RemoteBackend)
    return backend


class _Pieces:
    """A Ray Data actor: plans the suite once, then reads and scores pieces. ``asked``: the
    judge phase has asked every pair of a remote backend, whose answers the pieces read from
    the cache alone (a pair that failed there fails here too, without another call)."""

    def __init__(
        self, suite: Any, options: RunOptions, shards_to: str, asked: bool, workers: int = 1
    ) -> None:
        self.plan = plan_run(suite, options)
        self.shards_to = shards_to
        self.workers = workers
        self.backend = None
        if asked:
            backend = _remote_backend(options, dict(self.plan.suite.spec.similarity or {}))
            backend.cache_only = True
            self.backend = backend
            self.plan = plan_run(suite, replace(options, similarity=backend))

    def __del__(self) -> None:
        if self.backend is not None:
            self.backend.close()

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        piece = Piece(**pickle.loads(row["piece"]))
        rows_to = part_file(os.path.join(self.shards_to, RECORD_SHARDS), row["i"], ".parquet")
        stats_to = part_file(os.path.join(self.shards_to, STAT_SHARDS), row["i"], ".npz")
        reading = open_piece(self.plan, piece)
        try:
            shard, blocks = run_shard(
                self.plan, reading, rows_to, stats_to, file=piece.file, judges_share=self.workers
            )
        except EmptyInputError:  # an empty file (or part of one) among others adds nothing
            shard, blocks = None, None
        return {
            "i": row["i"],
            "shard": pickle.dumps(shard, protocol=5),
            "blocks": pickle.dumps(blocks, protocol=5),
        }


class _Jackknife:
    """A Ray Data actor: the jackknife moments of the pieces' blocks against the run's sums."""

    def __init__(self, suite: Any, options: RunOptions, totals: Any, values: Any) -> None:
        self.plan = plan_run(suite, options)
        self.totals, self.values = totals, values

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        blocks = pickle.loads(row["blocks"])
        moments = jackknife_pass(self.plan, blocks, self.totals, self.values) if blocks else {}
        return {"moments": pickle.dumps(moments, protocol=5)}


JUDGE_BATCH = 4096
"""Pairs a judge actor takes at a time (its calls within a batch run concurrently)."""


class _PairsOf:
    """A Ray Data actor: the distinct pairs a piece's statistics need scored."""

    def __init__(self, suite: Any, options: RunOptions) -> None:
        self.plan = plan_run(suite, options)

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:

        piece = Piece(**pickle.loads(row["piece"]))
        try:
            table = load(self.plan, open_piece(self.plan, piece), no_progress)
        except EmptyInputError:
            return {"pairs": pickle.dumps([], protocol=5)}
        check_records(self.plan, table)  # a bad record stops the run before any model call
        return {"pairs": pickle.dumps(pairs_of(self.plan, table), protocol=5)}


class _Judge:
    """A Ray Data actor: scores batches of pairs with the run's backend (the cache consulted
    first, answers written back), ``concurrency`` calls at a time."""

    def __init__(self, options: RunOptions, suite_options: dict[str, Any], concurrency: int):
        self.backend = _remote_backend(options, {**suite_options, "concurrency": concurrency})

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        pairs = list(zip(batch["a"].tolist(), batch["b"].tolist(), strict=True))
        _, stats = self.backend.score(pairs)
        return {"stats": [pickle.dumps(stats.summary())]}

    def __del__(self) -> None:
        self.backend.close()


def _judge_phase(
    ray: Any, suite: Any, options: RunOptions, plan: Plan, pieces: list[Piece], workers: int
) -> dict[str, Any] | None:
    """Score every distinct pair of the whole data set once, before the pieces are scored (which
    then find every answer in the cache): the backend's counts, or None when the run's backend
    is not a remote one."""
    if not any(s.needs_similarity for s in plan.statistics.values()):
        return None
    backend = options.scoring.backend
    if not (isinstance(backend, BackendName) and backend.remote):
        return None
    if options.scoring.cache is False:
        raise OptionError(
            "--engine ray shares a remote backend's answers between its workers through the "
            "cache: leave the cache on (no --no-cache)"
        )
    found = (
        _dataset(ray, pieces)
        .map(
            _PairsOf,
            fn_constructor_kwargs={"suite": suite, "options": options},
            compute=ray.data.ActorPoolStrategy(size=workers),
        )
        .take_all()
    )
    distinct: dict[tuple[str, str], None] = {}
    for row in found:
        distinct.update(dict.fromkeys(pickle.loads(row["pairs"])))
    if not distinct:
        return None
    suite_options = dict(plan.suite.spec.similarity or {})
    limit = int(suite_options.get("concurrency", 16))
    batches = -(-len(distinct) // JUDGE_BATCH)
    actors = max(1, min(workers, batches, limit))
    items = [{"a": a, "b": b} for a, b in distinct]
    rows = (
        ray.data.from_items(items, override_num_blocks=max(1, batches))
        .map_batches(
            _Judge,
            batch_size=JUDGE_BATCH,
            fn_constructor_kwargs={
                "options": options,
                "suite_options": suite_options,
                "concurrency": max(1, limit // actors),  # one limit over all the actors
            },
            compute=ray.data.ActorPoolStrategy(size=actors),
        )
        .take_all()
    )
    summary: dict[str, Any] | None = None
    for row in rows:
        summary = added_counts(summary, pickle.loads(row["stats"]))
    if summary is not None:
        summary["pairs"] = len(distinct)
    return summary


def _lines(row: dict[str, Any]) -> dict[str, Any]:
    return {"i": row["i"], "lines": count_lines(Piece(**pickle.loads(row["piece"])))}


def _resampler(ray: Any, workers: int) -> Any:
    """The replicates of a statistic that does not decompose (latency percentiles: the one part
    of the intervals that needs every record's value), computed by Ray tasks over ranges of
    resamples: the rows and keys are put in the object store once, and each task draws the
    same keyed weights as the driver would (:func:`.merge.raw_thetas`)."""
    task = ray.remote(raw_thetas)

    def resample(
        metrics: Any, rows: np.ndarray, keys: np.ndarray, resamples: int, seed: Any
    ) -> np.ndarray:
        if workers < 2 or resamples < 2 * workers:
            return raw_thetas(metrics, rows, keys, resamples, seed)
        rows_ref, keys_ref = ray.put(rows), ray.put(keys)
        cuts = np.linspace(0, resamples, 2 * workers + 1).astype(int).tolist()
        parts = [
            task.remote(metrics, rows_ref, keys_ref, stop, seed, start)
            for start, stop in itertools.pairwise(cuts)
            if stop > start
        ]
        return np.concatenate(ray.get(parts), axis=1)

    return resample


def _connect(ray: Any, address: str | None) -> None:
    import logging

    for name in ("ray", "ray.data"):  # Ray Data's "execution finished" lines are not the run's
        logging.getLogger(name).setLevel(logging.ERROR)
    if ray.is_initialized():
        return
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")  # its C++ notices about actors
    ray.init(
        address=address,
        include_dashboard=False,
        log_to_driver=False,
        ignore_reinit_error=True,
        configure_logging=False,
    )


def _dataset(ray: Any, pieces: Sequence[Piece]) -> Any:
    items = [{"i": i, "piece": pickle.dumps(asdict(p))} for i, p in enumerate(pieces)]
    return ray.data.from_items(items, override_num_blocks=max(1, len(items)))


def _workers(ray: Any, pieces: int) -> int:
    cpus = int(ray.available_resources().get("CPU", 1)) or 1
    return max(1, min(pieces, cpus))


def run_on_ray(
    suite: Any, data: Any, context: RunContext, *, piece_bytes: int = PIECE_BYTES
) -> EvaluationResult:
    """The Ray executor: run ``suite`` over the files ``data`` (paths or globs) on Ray (a
    cluster at the options' ``ray_address``; a local one when none is running)."""
    options = context.options
    ray_address = options.executor.ray_address
    with context.phase("plan"):
        if not isinstance(data, str | os.PathLike | list | tuple):
            raise OptionError("--engine ray reads files (paths or globs), not records in memory")
        notes = check_ray_options(options)
        if options.resampling.resamples > 0:
            options = replace(options, bootstrap_method="poisson")
        plan = plan_run(suite, options)
        check_ray_options(options, plan)
        paths = expand_paths(data)
        # a running cluster's workers may work in another folder: they get absolute paths
        opened = [os.path.abspath(p) for p in paths] if ray_address else paths
        pieces = plan_pieces(opened, piece_bytes, whole_files=plan.unit is not None)
        if not pieces:  # 0-byte files only
            raise EmptyInputError("no records: every file is empty", source=", ".join(paths))
    ray = _import_ray()
    with context.phase("cluster"):
        _connect(ray, ray_address)
        data_context = ray.data.DataContext.get_current()
        data_context.enable_progress_bars = False
        data_context.print_on_execution_start = False
        # the pieces' shards and jackknife moments come back in piece order, whichever actor
        # finished first, so they are added in one order: the same sums, to the last bit, on
        # every run (in arrival order a sum could differ by one ulp, and an interval whose
        # resamples tie with the value could then move)
        data_context.execution_options.preserve_order = True
        workers = _workers(ray, len(pieces))
    with context.phase("load"):
        if any(p.kind == "jsonl" for p in pieces):
            counted = _dataset(ray, pieces).map(_lines).take_all()
            newlines = [row["lines"] for row in sorted(counted, key=lambda r: r["i"])]
            pieces = number_pieces(pieces, newlines)
    with context.phase("similarities"):
        judged = _judge_phase(ray, suite, options, plan, pieces, workers)
    advance = context.progress("scoring shards", float(len(pieces)))
    # the workers' shards: per-record values (records/*.parquet) and statistics (stats/*.npz),
    # linked (or copied) into the outputs when written (a cluster of several machines needs
    # this folder on a file system they share: --ray-scratch)
    shards = ShardFolder.make(options.executor.ray_scratch)
    try:
        result = _run(
            ray,
            suite,
            options,
            plan,
            pieces,
            paths,
            notes,
            workers,
            shards.path,
            advance,
            context,
            asked=judged is not None,
        )
        if judged is not None:  # what the judge phase did (the pieces read it from the cache)
            result.similarity = judged
            result.failures.judge = int(judged.get("failures", 0))  # distinct pairs, once
        # the shards live as long as the result's outputs (or a copy), or until release()
        outputs = RunOutputs.of_shards(shards, result.n_records)
    except BaseException:
        shards.remove()
        raise
    context.finish(result)
    return result.with_outputs(outputs)


def _run(
    ray: Any,
    suite: Any,
    options: RunOptions,
    plan: Plan,
    pieces: list[Piece],
    paths: list[str],
    notes: list[str],
    workers: int,
    shards_to: str,
    advance: Any,
    context: RunContext,
    *,
    asked: bool,
) -> EvaluationResult:
    with context.phase("statistics"):
        done = (
            _dataset(ray, pieces)
            .map(
                _Pieces,
                fn_constructor_kwargs={
                    "suite": suite,
                    "options": options,
                    "shards_to": shards_to,
                    "asked": asked,
                    "workers": workers,
                },
                compute=ray.data.ActorPoolStrategy(size=workers),
            )
            .materialize()
        )
        merger = Merger()
        for row in done.select_columns(["shard"]).iter_rows():
            shard = pickle.loads(row["shard"])
            if shard is not None:
                merger.add(shard)
            advance(1.0)
        if merger.merged is None:
            raise EmptyInputError("no records: every file is empty", source=", ".join(paths))
        merged = merger.result()
        _check_ids(ray, suite, options, plan, pieces, merged)
    moments: dict[tuple[str, str], np.ndarray] = {}
    with context.phase("intervals"):
        if needs_jackknife_pass(plan, merged):
            totals = {
                name: {k: b.total() for k, b in scope.blocks.items() if b.decomposable}
                for name, scope in merged.scopes.items()
            }
            values = {
                name: scope_finalised_numbers(plan, scope) for name, scope in merged.scopes.items()
            }
            rows = (
                done.select_columns(["blocks"])
                .map(
                    _Jackknife,
                    fn_constructor_kwargs={
                        "suite": suite,
                        "options": options,
                        "totals": totals,
                        "values": values,
                    },
                    compute=ray.data.ActorPoolStrategy(size=workers),
                )
                .iter_rows()
            )
            for row in rows:
                for key, value in pickle.loads(row["moments"]).items():
                    moments[key] = moments[key] + value if key in moments else value
        finished = finish(plan, merged, moments, _resampler(ray, workers))
    if merged.n == 0:
        raise InputError("no records", source=", ".join(paths))
    update: dict[str, Any] = {"similarity": merged.signature, "engine": "ray"}
    if merged.judge_signature is not None:
        update["judge"] = merged.judge_signature
    sig = signature(plan, None).model_copy(update=update)
    source = paths[0] if len(paths) == 1 else f"{len(paths)} files: {', '.join(paths)}"
    result = run_result(
        plan,
        finished,
        n_records=merged.n,
        failures=Failures(**merged.failures),
        signature=sig,
        data=data_info(plan, source, merged.n),
        notes=[
            *merged.notes,
            *id_notes(plan, merged.with_id, ", ".join(paths)),
            *unseen_context(plan, merged.context_found),
            *notes,
        ],
        similarity=merged.similarity,
    )
    if merged.judge is not None:
        result.judge = merged.judge
    return result


class _Finder:
    """A Ray Data actor: the records of a piece whose id (or, with ``unit``, whose unit) has
    one of ``keys``."""

    def __init__(self, suite: Any, options: RunOptions, keys: np.ndarray, unit: bool) -> None:
        self.plan = plan_run(suite, options)
        self.keys, self.unit = set(keys.tolist()), unit

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:

        piece = Piece(**pickle.loads(row["piece"]))
        try:
            table = load(self.plan, open_piece(self.plan, piece), no_progress)
        except EmptyInputError:
            return {"found": pickle.dumps([])}
        if self.unit and self.plan.unit is not None:
            column = table.column(self.plan.unit)
            names = [str(v) for v in column]
            keys = bootstrap_keys(table, self.plan.unit).tolist()
            positions = list(range(table.n))
        else:
            positions = [k for k, i in enumerate(table.ids) if i is not None]
            names = [str(table.ids[k]) for k in positions]
            keys = record_keys(names).tolist() if names else []
        found = []
        for k, name, key in zip(positions, names, keys, strict=True):
            if key in self.keys:
                found.append((name, table.source, int(table.lines[k])))
                if self.unit:
                    break  # one record of the unit names the shard
        return {"found": pickle.dumps(found)}


def _check_ids(
    ray: Any, suite: Any, options: RunOptions, plan: Plan, pieces: Sequence[Piece], merged: Shard
) -> None:
    """Ids must be unique across the shards, as within one file, and a unit (a dialogue) must
    be in one shard: the error names the id or unit and two places it is found."""
    for unit, keys in ((False, merged.id_keys), (True, merged.unit_keys)):
        repeated = duplicate_keys(keys)
        if not repeated.size:
            continue
        rows = (
            _dataset(ray, pieces)
            .map(
                _Finder,
                fn_constructor_kwargs={
                    "suite": suite,
                    "options": options,
                    "keys": repeated[:1],
                    "unit": unit,
                },
                compute=ray.data.ActorPoolStrategy(size=1),
            )
            .take_all()
        )
        found = sorted(f for row in rows for f in pickle.loads(row["found"]))
        field = plan.unit if unit else plan.suite.spec.id_field
        if len(found) < 2:
            raise InputError(f"{repeated.size} values of {field} are found in more than one shard")
        (name, first, line), (_, second, other) = found[0], found[1]
        if unit:
            message = (
                f"{field} {name!r} has records in two shards (also at {first}:{line}): a unit is "
                f"read whole, so keep each {field}'s records in one file"
            )
        else:
            message = f"duplicate id {name!r} (also at {first}:{line})"
        raise InputError(message, source=second, line=other, field=field, value=name)
