"""A run file in blocks of whole queries (every regular run file unless ``--no-stream``): each block
scored as a whole run (:mod:`.blocks`), the blocks merged (:func:`merge_blocks`) into the RunResult the
whole run gives, to the last bit.  A query whose lines are not contiguous raises NotGrouped: the
orchestrator then reads the run whole, or refuses it under ``--stream``."""
from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from ..inputs.arrow import string_array  # pa.array would import pandas
from ..inputs.block_reader import BLOCK_BYTES, block_bounds, query_blocks, run_blocks  # noqa: F401 - re-exported
from ..inputs.trec import InputError, Qrels, Run, check_duplicates, read_run
from .blocks import Block, Options, RunResult, finish_run, query_set, score_block
from .ordering import natural_order, qrels_queries, run_queries

__all__ = ["query_blocks", "run_blocks", "block_bounds", "BLOCK_BYTES", "NotGrouped", "parse_block",
           "score_parsed", "merge_blocks", "read_ahead"]


class NotGrouped(InputError):
    """A query's lines are not contiguous: the run cannot be evaluated block by block."""


def _shift(exc: InputError, offset: int, path: str) -> InputError:
    return InputError(path, None if exc.line is None else exc.line + offset - 1, exc.reason)


def parse_block(path: str, data: bytes, halves: bool = False):
    """(the block's :class:`Run`, or None for a block of comments only; the block's newline count)."""
    try:
        run = read_run(path, data=data, halves=halves)
    except InputError as exc:
        if exc.reason.startswith("empty file"):  # a block of comments only
            return None, data.count(b"\n")
        raise
    if run.line is None:
        # Arrow's parser took the block (run.line is None), which it does only when every line is
        # a data line: the rows are the lines, without a pass over the bytes
        return run, len(run) - (not data.endswith(b"\n"))
    return run, data.count(b"\n")


def score_parsed(qrels: Qrels, path: str, parsed: tuple, metrics: list, options: Options, again=None,
                 whole: bool = False) -> Block:
    """Score a block parsed by :func:`parse_block` (its errors kept, with block-relative lines), or a run
    read whole (``whole``: its ranking kept, its errors raised); ``again``: blocks.score_block's."""
    run, lines = parsed
    if run is None:
        return Block(lines=lines)
    uniq, codes = run_queries(run)
    starts = np.flatnonzero(np.diff(codes, prepend=-1))  # rows where the query changes
    heads = codes[starts]  # codes number queries by first appearance: a new one is above every code before it
    new = heads > np.maximum.accumulate(np.append(-1, heads[:-1]))
    first_lines = [int(run.line[i]) if run.line is not None else int(i) + 1 for i in starts[new]]
    back = np.flatnonzero(~new)  # a query back after other queries' lines, within the block
    i = None if whole or not len(back) else int(starts[back[0]])
    regrouped = None if i is None else (run.qid[i].as_py(), int(run.line[i]) if run.line is not None else i + 1)
    options = options if whole else replace(options, run_queries_only=True)
    qids = query_set(qrels, run, options)
    facts = dict(name=run.name, run_qids=uniq.to_pylist(), first_lines=first_lines, lines=lines, skipped=run.skipped,
                 extra=run.meta.get("extra_fields", 0) or 0, tag=run.meta.get("last_tag", run.tag), regrouped=regrouped)
    try:
        if not qids and not whole:  # rank_run refuses duplicates; queries absent from the qrels too
            check_duplicates(run.qid, run.docid, path, run.line, "the run")
            return Block(qids=qids, **facts)
        block = score_block(qrels, run, qids, metrics, options, again)
    except InputError as exc:  # raised after the check that the block's queries are new
        if whole:
            raise
        return Block(error=(exc.reason, exc.line), **facts)
    return replace(block, ranked=block.ranked if whole else None, **facts)


def _gather(blocks, path: str) -> list:
    """The :class:`~.blocks.Block` of each block holding data lines, in file order (refusing a query back
    after other queries, raising a block's error with the file's line number)."""
    got, seen, first_line = [], set(), 1
    blocks = iter(blocks)
    while True:
        try:
            out = next(blocks, None)
        except InputError as exc:
            raise _shift(exc, first_line, path) from None
        if out is None:
            return got
        if out.name is not None:
            _refuse_regrouped(out, seen, path, first_line)
            if out.error:
                raise _shift(InputError(path, out.error[1], out.error[0]), first_line, path)
            seen.update(out.run_qids)
            got.append(out)
        first_line += out.lines


def _joined(chunks: list, pick: np.ndarray, of, lacking) -> dict:
    """Per metric, the arrays ``of(chunk)`` (a dict, or None) of the ``chunks`` joined, in query order
    (``pick``); a chunk without the metric's gives ``lacking(chunk, metric)``."""
    joined = {}
    for m in dict.fromkeys(m for chunk in chunks for m in of(chunk) or ()):
        parts = [(of(chunk) or {}).get(m) for chunk in chunks]
        joined[m] = np.concatenate([lacking(chunk, m) if part is None else part for chunk, part in zip(chunks, parts)])[pick]
    return joined


def merge_blocks(qrels: Qrels, path: str, metrics: list, options: Options, blocks) -> RunResult:
    """The RunResult of a run from the :class:`~.blocks.Block` of each of its query blocks, in file order
    (a run read whole: one block), notes on ``RunResult.notes``."""
    all_qids = qrels_queries(qrels)
    got = _gather(blocks, path)
    if not got:  # no block held a data line (a run read whole, even empty, is one)
        raise InputError(path, 1, "empty file: no ranked documents")
    seen = [q for block in got for q in block.run_qids]
    qids = natural_order(set(seen).intersection(all_qids) if options.run_queries_only else all_qids)
    chunks = [block for block in got if block.qids]
    done = {q for chunk in chunks for q in chunk.qids}
    unscored = [q for q in qids if q not in done]
    if unscored:  # scored against an empty ranking, as in a run read whole
        empty = Run(qid=string_array([]), docid=string_array([]), score=np.zeros(0), rank=None, name=path, path=path)
        chunks.append(score_block(qrels, empty, unscored, metrics, replace(options, run_queries_only=True)))
    at = {q: i for i, q in enumerate(q for chunk in chunks for q in chunk.qids)}
    joined = functools.partial(_joined, chunks, np.asarray([at[q] for q in qids], dtype=np.int64))
    again = joined(lambda c: c.again, lambda c, m: c.values[m]) if any(c.again is not None for c in chunks) else None
    run = Block(name=got[0].name, qids=qids, values={m: np.zeros(0) for m in metrics} | joined(lambda c: c.values, None),
                stderr=joined(lambda c: c.stderr, lambda c, m: np.full(len(c.qids), np.nan)),
                undefined=joined(lambda c: c.undefined, lambda c, m: np.zeros(len(c.qids), bool)), again=again,
                run_qids=seen, tag=got[-1].tag, float32_ties=sum(c.float32_ties for c in chunks),
                judged=tuple(sum(c.judged[i] for c in chunks) for i in (0, 1)), skipped=sum(b.skipped for b in got),
                extra=sum(b.extra for b in got))
    return finish_run(qrels, path, metrics, options, run)


def read_ahead(items):
    """Iterate ``items`` one ahead of the caller, in one other thread: the next block is read and parsed
    (the GIL released) while this one is scored (docs/performance.md, "Reading ahead"); items and errors
    arrive in order, two held at most.  A caller that stops early has the thread joined, then ``items``
    closed: a thread still inside Arrow's parser at interpreter shutdown aborts the process."""
    from concurrent.futures import ThreadPoolExecutor

    done = object()
    source = iter(items)
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="ulnorm-eval-read-ahead") as reader:
            coming = reader.submit(next, source, done)
            while (item := coming.result()) is not done:
                coming = reader.submit(next, source, done)
                yield item
    finally:
        getattr(source, "close", lambda: None)()


def _refuse_regrouped(out, seen: set, path: str, first_line: int) -> None:
    """A block holding a query an earlier block had (or one its own lines regroup): --stream needs each
    query's lines together; the error names the first such line (``first_line``: the block's first)."""
    again = [index for index, qid in enumerate(out.run_qids) if qid in seen]
    if again or out.regrouped:
        qid, line = (out.run_qids[again[0]], out.first_lines[again[0]]) if again else out.regrouped
        raise NotGrouped(path, line + first_line - 1, f"query {qid!r} appears again after other queries; --stream "
                                                      "needs each query's lines together (sort the run, or drop --stream)")
