"""The one route of an evaluation, behind every entry point: qrels, run sources, metrics, options and an
executor in, a :class:`~.blocks.RunResult` per run out, in run order (:func:`evaluate_runs`); its steps,
file by file: docs/architecture.md, "The route of one evaluation"."""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass

from ..inputs.checks import disjoint_error
from ..inputs.errors import InputError
from ..inputs.text import COMPRESSED_MAGIC, read_bytes  # COMPRESSED_MAGIC: gzip, bzip2, xz, read from the start only
from ..inputs.trec import Qrels, Run
from .blocks import Options, RunResult, letor_pool, prepare
from .evaluate import load_run, parse_run, with_runs_holes
from .ordering import qrels_queries
from .parallel import Sequential, unwrap
from .stream import BLOCK_BYTES, NotGrouped, block_bounds, merge_blocks, parse_block, read_ahead, run_blocks, score_parsed

__all__ = ["RunFile", "Unreadable", "Shipped", "How", "DisjointRun", "Evaluated", "evaluate_runs", "plan_source", "score_run", "run_task",
           "block_task", "tell"]


def _identity(path: str):
    """(device, inode, size, modification time in ns) of the file at ``path``; None if it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


@dataclass(frozen=True, kw_only=True)
class RunFile:
    """A regular run file as the plan saw it (its ``identity``): every read checks the file is still
    that one, before and after it reads."""

    path: str
    identity: tuple

    def check(self) -> None:
        if _identity(self.path) != self.identity:
            raise InputError(self.path, None, "changed while being read (replaced, moved or written to during the "
                                              "evaluation): evaluate a copy that stays put")

    def load(self, qrels: Qrels) -> Run:
        """The whole run (decompressed, parsed)."""
        self.check()
        run = load_run(self.path, qrels)
        self.check()
        return run

    def read(self, start: int = 0, stop: int | None = None) -> bytes:
        """Bytes [start, stop) of the file as stored (a query block of an uncompressed file)."""
        self.check()
        try:
            with open(self.path, "rb") as handle:
                handle.seek(start)
                data = handle.read(-1 if stop is None else stop - start)
        except OSError as exc:
            raise InputError(self.path, None, f"cannot read: {exc}") from None
        self.check()
        return data


@dataclass(frozen=True, kw_only=True)
class Shipped:
    """A run file's bytes (decompressed) or a query block's, sent to a Dask worker in place of the path
    (a worker elsewhere would read another file or none)."""

    path: str
    data: bytes


@dataclass(frozen=True, kw_only=True)
class Unreadable:
    """A run the plan could not open or read (a missing file, a pipe holding bad data): its error is
    raised in its place among the runs, after the results of those before it."""

    path: str
    error: InputError

    def load(self, qrels: Qrels):
        raise self.error


def plan_source(qrels: Qrels, given):
    """A run to evaluate as the plan holds it: a :class:`Run` as given, a regular file as a
    :class:`RunFile`, anything else read now, once (standard input, pipes, FIFOs, devices)."""
    if isinstance(given, (Run, RunFile)):
        return given
    path = os.fspath(given)
    identity = _identity(path) if path != "-" else None
    try:
        if identity is not None and os.path.isfile(path):
            try:
                os.close(os.open(path, os.O_RDONLY))
                return RunFile(path=path, identity=identity)
            except OSError:
                pass  # load_run names the reason
        return load_run(path, qrels)
    except InputError as exc:
        return Unreadable(path=path, error=exc)


@dataclass(frozen=True, kw_only=True)
class How:
    """How :func:`evaluate_runs` reads and what it keeps: ``stream`` True (files in query blocks, a run
    not grouped by query refused: ``--stream``), False (whole: ``--no-stream``) or None (in blocks, whole
    when not grouped); ``again``: blocks.score_block's (``RunResult.again``); ``ranked``: keep each run's
    ranking (``RunResult.ranked``; the run read whole); ``block_bytes``: a query block's size."""

    stream: bool | None = None
    again: tuple | None = None
    ranked: bool = False
    refuse_disjoint: bool = False  # a run sharing no query with the qrels is refused (DisjointRun)
    block_bytes: int = BLOCK_BYTES


class DisjointRun(InputError):
    """A run none of whose queries is in the qrels: almost always the wrong qrels (refused unless
    ``--allow-disjoint``; ``eval`` reports it alone, its notes would mislead)."""


def _shares_queries(result: RunResult, label: str, qrels: Qrels) -> None:
    if qrels.letor or (result.qids and result.missing < len(result.qids)):
        return
    exc = disjoint_error(label, qrels.path, list(result.ignored_qids), qrels_queries(qrels))
    raise DisjointRun(exc.path, exc.line, exc.reason)


def score_run(qrels: Qrels, run: Run, metrics: list, options: Options, how: How = How()) -> RunResult:
    """Per-query values of every metric for one run read whole: the pipeline on one block."""
    block = score_parsed(qrels, run.path, (run, 0), metrics, options, how.again, whole=True)
    result = merge_blocks(qrels, run.path, metrics, options, [block])
    result.ranked = block.ranked if how.ranked else None
    return result


def _streamed(qrels: Qrels, file: RunFile, metrics: list, options: Options, how: How) -> RunResult:
    """A run file read in query blocks, the next one read and parsed while this one is scored."""
    file.check()
    parsed = read_ahead(parse_block(file.path, data, halves=index == 0)
                        for index, (data, _) in enumerate(run_blocks(file.path, how.block_bytes)))
    try:
        result = merge_blocks(qrels, file.path, metrics, options,
                              (score_parsed(qrels, file.path, block, metrics, options, how.again) for block in parsed))
    finally:
        parsed.close()  # stops and joins the reader now, not when an error's traceback is freed
    file.check()
    return result


def run_task(qrels: Qrels, source, metrics: list, options: Options, how: How) -> RunResult:
    """Task: one run, evaluated whole (a :class:`Run`, a :class:`RunFile` or a :class:`Shipped` file)."""
    if isinstance(source, Shipped):
        source = parse_run(source.path, qrels, source.data)
    if isinstance(source, Run):
        return score_run(qrels, source, metrics, options, how)
    if not (how.ranked or how.stream is False or qrels.letor):
        try:
            return _streamed(qrels, source, metrics, options, how)
        except NotGrouped:
            if how.stream:
                raise
    return score_run(qrels, source.load(qrels), metrics, options, how)


def block_task(qrels: Qrels, piece, metrics: list, options: Options, how: How):
    """Task: one query block of a run file, ``piece`` = (RunFile, start, stop) or its :class:`Shipped`
    bytes: a :class:`.blocks.Block` (line numbers relative to the block)."""
    path, data = (piece.path, piece.data) if isinstance(piece, Shipped) else (piece[0].path, piece[0].read(*piece[1:]))
    return score_parsed(qrels, path, parse_block(path, data), metrics, options, how.again)


def _tasks(executor, source, metrics: list, options: Options, how: How) -> list:
    """The tasks of one run: its query blocks (``-j N`` on an uncompressed file larger than a block,
    read in blocks), else the run whole."""
    if isinstance(source, Unreadable):
        return []
    whole = [(run_task, (source, metrics, options, how))]
    if (executor.sequential or not isinstance(source, RunFile) or how.stream is False or how.ranked
            or executor.qrels.letor or source.read(0, 6).startswith(COMPRESSED_MAGIC)):
        return whole
    source.check()
    bounds = block_bounds(source.path, how.block_bytes)
    source.check()
    if len(bounds) <= 2:
        return whole
    return [(block_task, ((source, start, stop), metrics, options, how)) for start, stop in zip(bounds, bounds[1:])]


def _remote(task):
    """A task as a Dask worker gets it: the file it reads replaced by its bytes, read here."""
    function, (source, *rest) = task
    if function is block_task:
        file, start, stop = source
        return function, (Shipped(path=file.path, data=file.read(start, stop)), *rest)
    if isinstance(source, RunFile):
        source.check()
        data = read_bytes(source.path)
        source.check()
        source = Shipped(path=source.path, data=data)
    return function, (source, *rest)


def tell(result: RunResult, warn) -> RunResult:
    """Pass a run's notes on to ``warn``, in order: the one place where the notes of a command's runs
    go out (a caller that wants each note once per command changes this)."""
    for note in result.notes if warn is not None else ():
        warn(note)
    return result


class Evaluated:
    """What :func:`evaluate_runs` gives: ``options`` as evaluated, ``sources`` as planned, and each run's
    result in run order, evaluated as it is iterated."""

    def __init__(self, options: Options, sources: list, results):
        self.options, self.sources, self._results = options, sources, results

    def __iter__(self):
        return self._results

    def __next__(self):
        return next(self._results)


def evaluate_runs(qrels: Qrels, runs, metrics: list, options: Options, executor=None, *, warn=None,
                  **how) -> Evaluated:
    """Evaluate ``runs`` (paths, ``-``, or loaded :class:`Run` objects) against ``qrels``: every
    ``metric`` per query of each run, with its 'all' row and notes (``warn`` hears each run's notes
    as its result comes).  ``executor``: a parallel.py executor holding the same qrels (default:
    this process).  Keywords are :class:`How`'s fields."""
    how = How(**how)
    runs = list(runs)
    sources = [plan_source(qrels, run) for run in runs]
    options = letor_pool(with_runs_holes(options, qrels, sources, metrics), qrels)
    executor = executor if executor is not None else Sequential(qrels)
    # what an error calls each run: the path given, or the name of a run given in memory
    labels = [run.name if isinstance(run, Run) else getattr(run, "path", None) or os.fspath(run) for run in runs]
    return Evaluated(options, sources, _results(qrels, (sources, labels), (metrics, options, how), executor, warn))


def _results(qrels: Qrels, given: tuple, asked: tuple, executor, warn):
    (sources, labels), (metrics, options, how) = given, asked
    plans = [_tasks(executor, source, metrics, options, how) for source in sources]
    if getattr(executor, "forks", False) and len(sources) > 1:
        prepare(qrels, metrics, options)  # the qrels' tables of a track, built once before the workers fork
    tasks = (task for tasks in plans for task in tasks)
    outcomes = executor.imap(map(_remote, tasks) if getattr(executor, "remote", False) else list(tasks))
    for source, label, tasks in zip(sources, labels, plans):
        result = _result(qrels, source, tasks, outcomes, asked)
        if how.refuse_disjoint:
            _shares_queries(result, label, qrels)
        yield tell(result, warn)


def _result(qrels: Qrels, source, tasks: list, outcomes, asked: tuple) -> RunResult:
    """The result of one run from the outcomes of its ``tasks``: the run's, or its blocks' merged."""
    metrics, options, how = asked
    if not tasks:
        raise source.error
    if tasks[0][0] is run_task:
        return unwrap(next(outcomes))
    mine = itertools.islice(outcomes, len(tasks))  # this run's blocks
    try:
        return merge_blocks(qrels, source.path, metrics, options, map(unwrap, mine))
    except NotGrouped:
        for _ in mine:  # this run's other blocks are of no use now
            pass
        if how.stream:
            raise
    return score_run(qrels, source.load(qrels), metrics, options, how)
