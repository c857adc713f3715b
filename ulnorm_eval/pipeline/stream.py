"""Bounded-memory evaluation of a run whose lines are grouped by query (``--stream``).

The file is read in blocks of whole queries; each block is parsed, ordered and scored exactly like
a whole run (the same pipeline, :mod:`.blocks`), and only per-query values are kept.  Per-query values do not
depend on the other queries (Monte Carlo draws are keyed by seed and query id, permutations.Keys), so
the result equals the in-memory path's to the last bit.  A query whose lines are not contiguous
is refused with its line number (NotGrouped).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.kernels import Ranking
from ..inputs.block_reader import BLOCK_BYTES, block_bounds, query_blocks, run_blocks  # noqa: F401 - re-exported
from ..inputs.trec import InputError, Qrels, check_duplicates, may_be_numeric, read_run
from .blocks import Options, RunResult, finish_run, metric_values, query_set, score_block
from .ordering import RankedRun, judgements, natural_order, qrels_queries, run_queries

__all__ = ["query_blocks", "evaluate_stream", "NotGrouped", "BlockOut", "score_query_block", "parse_block",
           "score_parsed", "block_bounds", "read_ahead", "evaluate_files"]


class NotGrouped(InputError):
    """A query's lines are not contiguous: the run cannot be evaluated block by block."""

# query_blocks, run_blocks and block_bounds (linear-time block reading, input limits) live in
# inputs/block_reader.py


def _shift(exc: InputError, offset: int, path: str) -> InputError:
    return InputError(path, None if exc.line is None else exc.line + offset - 1, exc.reason)


@dataclass
class BlockOut:
    """What one query block of a streamed run gives back: its queries' values and its counts.

    Small and picklable, so that a block can be scored in another process (pipeline.parallel);
    line numbers are relative to the block's first line.
    """

    name: str | None  # the run name this block gives (None: a block of comments only)
    qids: list  # the scored queries
    values: dict
    stderr: dict
    undefined: dict
    run_qids: list  # the block's run queries, in order of first appearance ...
    first_lines: list  # ... and the block-relative line of each one's first line
    lines: int  # newlines in the block
    skipped: int = 0
    extra: int = 0
    float32_ties: int = 0
    error: tuple | None = None  # (reason, block-relative line) of an error met after parsing
    tag: str | None = None  # the block's last line's tag (trec_eval's runid is the file's last)
    regrouped: tuple | None = None  # (qid, block-relative line) of a query back after other queries
    judged: tuple = (0, 0)  # (ranked documents, of which in the qrels)


def score_query_block(qrels: Qrels, path: str, data: bytes, metrics: list, options: Options,
                      name: str | None = None) -> BlockOut:
    """Parse and score one block of whole queries (errors name block-relative lines)."""
    run, lines = parse_block(path, data, name)
    return score_parsed(qrels, path, run, lines, metrics, options)


def parse_block(path: str, data: bytes, name: str | None = None, halves: bool = False, queries: bool = True,
                docids: bool = False):
    """(the block's :class:`Run`, or None for a block of comments only; the block's newline count).

    With ``queries`` (default), also computes the run's query encoding (cached on it), and with
    ``docids`` its string docids' fingerprints (:func:`..inputs.fingerprints.prepare`): like the
    parsing, work in numpy and Arrow that another thread can do while the previous block is scored
    (:func:`read_ahead`); without, the scorer computes them when it needs them (the same arrays).
    """
    try:
        run = read_run(path, name=name, data=data, halves=halves)
    except InputError as exc:
        if exc.reason.startswith("empty file"):  # a block of comments only
            return None, data.count(b"\n")
        raise
    if queries or docids:
        prepare_block(run, docids, queries)
    if run.line is None:
        # Arrow's parser took the block (run.line is None), which it does only when every line is
        # a data line: the rows are the lines, without a pass over the bytes (2 ms per 5 MB)
        return run, len(run) - (not data.endswith(b"\n"))
    return run, data.count(b"\n")


def prepare_block(run, docids: bool, queries: bool = True) -> None:
    """Make (and cache) the run's query encoding (``queries``) and, with ``docids``, its string
    docids' fingerprints and repeat check (:func:`..inputs.fingerprints.prepare`), the work the
    scorer would otherwise do first (rank_run)."""
    if queries:
        run_queries(run)
    if docids and not may_be_numeric(run.docid):  # (numeric docids are joined as numbers: no fingerprints)
        from ..inputs import fingerprints

        fingerprints.prepare(run.docid, run_queries(run)[1] if queries else None)


def score_parsed(qrels: Qrels, path: str, run, lines: int, metrics: list, options: Options) -> BlockOut:
    """Score a block parsed by :func:`parse_block` (errors name block-relative lines)."""
    import dataclasses

    block_opts = dataclasses.replace(options, run_queries_only=True)
    if run is None:
        return BlockOut(None, [], {}, {}, {}, [], [], lines)
    uniq, codes = run_queries(run)
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    first = starts[np.unique(codes[starts], return_index=True)[1]]  # codes number queries by first appearance
    first_lines = [int(run.line[i]) for i in first] if run.line is not None else [int(i) + 1 for i in first]
    regrouped = None
    i = _regrouped(codes, starts)  # within the block (a small file is one block)
    if i is not None:
        regrouped = (run.qid[i].as_py(), int(run.line[i]) if run.line is not None else i + 1)
    qids = query_set(qrels, run, block_opts)
    values = stderr = undefined = {}
    f32_ties, judged = 0, (0, 0)
    error = None
    if not qids:  # rank_run refuses duplicates; queries absent from the qrels too (as unstreamed)
        try:
            check_duplicates(run.qid, run.docid, path, run.line, "the run")
        except InputError as exc:
            error = (exc.reason, exc.line)
    if qids:
        try:
            b = score_block(qrels, run, qids, metrics, block_opts)
            values, stderr, undefined, f32_ties, judged = b.values, b.stderr, b.undefined, b.ranked.float32_ties, b.ranked.judged
        except InputError as exc:  # raised after the check that the block's queries are new
            error = (exc.reason, exc.line)
    return BlockOut(run.name, qids, values, stderr, undefined, uniq.to_pylist(), first_lines, lines, run.skipped,
                    run.meta.get("extra_fields", 0) or 0, f32_ties, error,
                    run.meta.get("last_tag", run.tag), regrouped, judged)


def evaluate_stream(qrels: Qrels, path: str, metrics: list, options: Options, warn=None, name: str | None = None,
                    block_bytes: int = BLOCK_BYTES, blocks=None) -> RunResult:
    """Evaluate a query-grouped run file block by block; returns the same RunResult as reading it
    whole (notes on ``RunResult.notes``; ``warn(msg)``, if given, also receives each).

    ``blocks``: the :class:`BlockOut` of each of the file's query blocks, in file order (scored
    elsewhere, e.g. in worker processes); default: read and score them here, one after the other.
    """
    ahead = None
    if blocks is None:
        # The first block is awaited with nothing else to do: both cores parse it.  A block's query
        # encoding and its string docids' fingerprints (with the repeat check: ~7 ms per 4 MiB) are
        # made by the reader only when the previous block left it idle (waiting for the scorer to take
        # a block) longer than they took it the last time: then the scorer sets the pace (the default
        # measures and variants) and gets that work off its thread.  Otherwise (a few plain measures:
        # the reader sets the pace) the scorer makes them when it needs them.  The same arrays either way.
        idle, cost = [0.0], [0.0]
        parsed = _parsed_blocks(path, name, block_bytes, idle if path != "-" else None, cost)
        # Standard input is read in this thread: a reader thread still blocked on it when the
        # command ends (an error, an interrupt) makes the interpreter abort its shutdown.
        if path != "-":
            parsed = ahead = read_ahead(parsed, idle)
        blocks = (score_parsed(qrels, path, run, lines, metrics, options) for run, lines in parsed)
    try:
        return _evaluate_blocks(qrels, path, metrics, options, warn, name, iter(blocks))
    finally:
        if ahead is not None:  # now, not when an error's traceback lets go of it (at exit: too late)
            ahead.close()


def _parsed_blocks(path: str, name, block_bytes: int, idle: list | None, cost: list):
    """:func:`parse_block` of each block of the file, the first in halves; with ``idle`` (the
    seconds :func:`read_ahead`'s thread waited before this block), each block's encodings are made
    here when ``idle[0]`` exceeds ``cost[0]``, the seconds they took the last time (updated)."""
    import time

    for k, (data, _) in enumerate(run_blocks(path, block_bytes)):
        run, lines = parse_block(path, data, name, halves=k == 0, queries=False)
        if run is not None and (idle is None or idle[0] > cost[0]):
            start = time.perf_counter()
            prepare_block(run, docids=idle is not None)
            cost[0] = time.perf_counter() - start
        yield run, lines


def evaluate_files(qrels: Qrels, paths: list, metrics: list, options: Options, whole, stream: bool | None = None,
                   block_bytes: int = BLOCK_BYTES):
    """Yield :func:`evaluate_stream`'s RunResult of each regular run file, in order, with one reader
    thread for the whole sequence (:func:`read_ahead`): the next file's first block is read and
    parsed while the last block of this one is scored, so that many small files (a track's runs, a
    block each) keep both cores busy as the blocks of one large file do.

    Each item carries whether it is its file's last block (no end-of-file item, which would hold one
    of the reader's two slots and stall it).  The numbers, notes and errors are those of evaluating
    the files one after the other: a block's parse error is raised when its file is reached, and a
    file whose queries are not contiguous is evaluated by ``whole(path)``, reading it whole (refused
    with ``stream=True``).
    """
    def items():
        waited = True  # the caller waits for the first block with nothing else to do: both cores parse it
        for i, p in enumerate(paths):
            held = None
            for data, _ in run_blocks(p, block_bytes):
                if held is not None:
                    yield i, parse_block(p, held, halves=waited), False
                    waited = False
                held = data
            yield i, (None if held is None else parse_block(p, held, halves=waited)), True
            waited = False

    ahead = read_ahead(items())
    try:
        for p in paths:
            finished = [False]

            def blocks(p=p, finished=finished):
                for _, parsed, last in ahead:
                    finished[0] = last
                    if parsed is not None:
                        run, lines = parsed
                        yield score_parsed(qrels, p, run, lines, metrics, options)
                    if last:
                        return

            gen = blocks()
            try:
                res = _evaluate_blocks(qrels, p, metrics, options, None, None, iter(gen))
            except NotGrouped:
                gen.close()
                while not finished[0]:  # this file's other blocks are of no use now
                    finished[0] = next(ahead)[2]
                if stream:
                    raise
                res = whole(p)
            while not finished[0]:  # (every block is consumed; none is left for the next file)
                finished[0] = next(ahead)[2]
            yield res
    finally:
        ahead.close()


def _evaluate_blocks(qrels, path, metrics, options, warn, name, blocks) -> RunResult:
    import dataclasses

    all_qids = qrels_queries(qrels)
    in_qrels = set(all_qids)
    done_qids: list = []  # evaluated queries, block after block
    parts: dict = {}  # metric -> per-block value arrays, aligned with done_qids
    se_parts: dict = {}
    seen: set = set()
    ignored: set = set()
    f32_ties = skipped = extra = 0
    judged = (0, 0)
    undefined: dict = {}
    run_name = None  # the first block's: name, or the file's (its first tag for stdin)
    tag = None
    block_opts = dataclasses.replace(options, run_queries_only=True)
    first_line = 1
    while True:
        try:
            out = next(blocks, None)
        except InputError as exc:
            raise _shift(exc, first_line, path) from None
        if out is None:
            break
        if out.name is None:
            first_line += out.lines
            continue
        run_name = run_name or out.name
        skipped += out.skipped
        extra += out.extra
        tag = out.tag
        _refuse_regrouped(out, seen, path, first_line)
        if out.error:
            raise _shift(InputError(path, out.error[1], out.error[0]), first_line, path)
        seen.update(out.run_qids)
        ignored.update(q for q in out.run_qids if q not in in_qrels)
        first_line += out.lines
        if not out.qids:
            continue
        f32_ties += out.float32_ties
        judged = (judged[0] + out.judged[0], judged[1] + out.judged[1])
        _collect((done_qids, parts, se_parts, undefined), out.qids, out.values, out.stderr, out.undefined)
    if not seen:
        raise InputError(path, 1, "empty file: no ranked documents")

    qids = natural_order([q for q in all_qids if q in seen]) if options.run_queries_only else natural_order(all_qids)
    done = set(done_qids)
    missing_qids = [q for q in qids if q not in done]
    if missing_qids:  # scored against an empty ranking, as the in-memory path does
        values, stderr, und = _unranked_values(qrels, missing_qids, metrics, block_opts, name or path)
        _collect((done_qids, parts, se_parts, undefined), missing_qids, values, stderr, und)

    at = {q: i for i, q in enumerate(done_qids)}
    pick = np.asarray([at[q] for q in qids], dtype=np.int64)
    values = {m: np.concatenate(parts[m])[pick] if m in parts else np.zeros(0) for m in (*metrics, *parts)}
    stderr = {m: np.concatenate(se_parts[m])[pick] for m in se_parts}
    result = finish_run(run_name, path, qids, metrics, (values, stderr, undefined), options,
                        missing_qids=missing_qids, ignored_qids=natural_order(ignored), float32_ties=f32_ties, judged=judged,
                        skipped=skipped, extra=extra, tag=tag, qrels=qrels)
    for n in result.notes if warn else ():
        warn(n)
    return result


JOIN_TIMEOUT = 60.0  # seconds a stopped read-ahead thread is given to finish the item in hand


def read_ahead(items, idle: list | None = None):
    """Iterate ``items`` in a background thread, one item ahead of the caller.

    ``idle``, if given, a one-item list: set, before each item is made, to the seconds the thread
    waited for the caller to take an item (0.0: it did not wait, the caller waits for it), for the
    producer of ``items`` to adapt to (:func:`evaluate_stream`).

    The next block (or, in compare, the next run) is read and parsed (file reads, Arrow's CSV parser: they release the GIL) while
    this one is scored, so a long streamed run keeps both cores of a small machine busy; items,
    and an exception raised while producing one, arrive in order.  The thread starts on an item
    only when the caller has finished with the one before the current one, so at most two parsed
    blocks are held at a time.  When the caller stops early (an error, a closed generator), the
    thread is told to stop, and it closes the file once it has finished the item in hand; the
    caller waits for that (at most ``JOIN_TIMEOUT`` seconds), so that no parse outlives the command.
    """
    import queue
    import threading
    import time

    box: queue.Queue = queue.Queue()
    slots = threading.Semaphore(2)  # the caller's current item and the one being produced
    stop = threading.Event()
    done = object()

    def produce():
        it = iter(items)
        try:
            while True:
                waited = 0.0
                if not slots.acquire(blocking=False):  # the caller holds two items: wait for it
                    start = time.perf_counter()
                    while not slots.acquire(timeout=0.1):
                        if stop.is_set():
                            return
                    waited = time.perf_counter() - start
                if stop.is_set():
                    return
                if idle is not None:
                    idle[0] = waited
                item = next(it, done)
                box.put((item, None))
                if item is done:
                    return
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, raised there
            box.put((None, exc))
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()

    worker = threading.Thread(target=produce, name="ulnorm-eval-read-ahead", daemon=True)
    worker.start()
    try:
        while True:
            item, exc = box.get()
            if exc is not None:
                raise exc
            if item is done:
                return
            yield item
            slots.release()
    finally:
        stop.set()  # the thread sees it within 0.1 s of finishing its item, then closes the source
        # Joined: a thread still inside Arrow's parser when the interpreter shuts down is ended
        # there by Python, and the process aborts (exit 134; inputs/trec.py: _released).  The wait
        # is the rest of one item's parse; bounded, for a thread blocked reading a FIFO nobody
        # writes to (blocked in a read, it never returns to Python: harmless at exit).
        worker.join(timeout=JOIN_TIMEOUT)


def _regrouped(codes: np.ndarray, starts: np.ndarray):
    """Row of the first line of a query that comes back after other queries' lines, else None.

    ``codes``: each row's query code (numbered in order of first appearance), ``starts``: the rows
    where the code changes.  Grouped queries give codes 0, 1, 2, ... at the starts.
    """
    c = codes[starts]
    back = np.flatnonzero(c[1:] <= np.maximum.accumulate(c)[:-1])
    return int(starts[back[0] + 1]) if len(back) else None


def _unranked_values(qrels, qids: list, metrics: list, options, name: str) -> tuple:
    """metric_values of queries the run has no line for: each scored against an empty ranking."""
    from ..inputs.arrow import string_array  # pa.array would import pandas

    J = judgements(qrels, qids)
    empty = Ranking(np.zeros(0, np.int64), np.zeros(0), len(qids), np.arange(len(qids)), np.zeros(0, bool))
    rr = RankedRun(name, empty, np.zeros(len(qids), bool), 0, 0, string_array([]), np.zeros(0, np.int64))
    return metric_values(rr, J, metrics, qrels, options)


def _refuse_regrouped(out, seen: set, path: str, first_line: int) -> None:
    """A block holding a query an earlier block had (or one its own lines regroup): --stream needs each
    query's lines together; the error names the first such line (``first_line``: the block's first)."""
    again = seen.intersection(out.run_qids)
    if not again and not out.regrouped:
        return
    if again:
        i = min(out.run_qids.index(q) for q in again)
        q, ln = out.run_qids[i], out.first_lines[i]
    else:
        q, ln = out.regrouped
    raise NotGrouped(path, ln + first_line - 1, f"query {q!r} appears again after other queries; --stream needs "
                                                "each query's lines together (sort the run, or drop --stream)")


def _collect(collected: tuple, qids, values, stderr, und) -> None:
    """Add a block's queries, values, standard errors and undefined counts to ``collected`` =
    (the queries done, metric -> value arrays, metric -> SE arrays, metric -> undefined count)."""
    done_qids, parts, se_parts, undefined = collected
    done_qids.extend(qids)
    for m in values:  # the metrics and their summary parts (blocks.summary_parts)
        parts.setdefault(m, []).append(values[m])
    for m in stderr:
        se_parts.setdefault(m, []).append(stderr[m])
    for m, n in und.items():
        undefined[m] = undefined.get(m, 0) + n
