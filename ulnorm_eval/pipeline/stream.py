"""Bounded-memory evaluation of a run whose lines are grouped by query (``--stream``).

The file is read in blocks of whole queries; each block is parsed, ordered and scored exactly like
a whole run (the same pipeline, :mod:`.blocks`), and only per-query values are kept.  Per-query values do not
depend on the other queries (Monte Carlo draws are keyed by seed and query id, permutations.Keys), so
the result equals the in-memory path's to the last bit.  A query whose lines are not contiguous
is refused with its line number (NotGrouped).
"""
from __future__ import annotations

import numpy as np

from ..inputs.blocks import query_blocks, run_blocks  # noqa: F401 - query_blocks re-exported
from ..inputs.trec import InputError, Qrels, check_duplicates, read_run
from ..core.kernels import Ranking
from .blocks import Options, RunResult, finish_run, metric_values, query_set, score_block
from .ordering import RankedRun, judgements, natural_order, qrels_queries

__all__ = ["query_blocks", "evaluate_stream", "NotGrouped"]


class NotGrouped(InputError):
    """A query's lines are not contiguous: the run cannot be evaluated block by block."""

BLOCK_BYTES = 8 << 20


# query_blocks (linear-time block reading with input limits) lives in inputs/blocks.py


def _shift(exc: InputError, offset: int, path: str) -> InputError:
    return InputError(path, None if exc.line is None else exc.line + offset - 1, exc.reason)


def evaluate_stream(qrels: Qrels, path: str, metrics: list, options: Options, warn=None, name: str | None = None,
                    block_bytes: int = BLOCK_BYTES) -> RunResult:
    """Evaluate a query-grouped run file block by block; returns the same RunResult as reading it
    whole (notes on ``RunResult.notes``; ``warn(msg)``, if given, also receives each)."""
    import dataclasses

    import pyarrow as pa
    import pyarrow.compute as pc

    all_qids = qrels_queries(qrels)
    in_qrels = set(all_qids)
    done_qids: list = []  # evaluated queries, block after block
    parts: dict = {}  # metric -> per-block value arrays, aligned with done_qids
    se_parts: dict = {}
    seen: set = set()
    ignored: set = set()
    f32_ties = skipped = extra = 0
    undefined: dict = {}
    run_name = None  # the first block's: name, or the file's (its first tag for stdin)
    tag = None
    block_opts = dataclasses.replace(options, run_queries_only=True)
    for data, first_line in run_blocks(path, block_bytes):
        try:
            run = read_run(path, name=name, data=data)
        except InputError as exc:
            if exc.reason.startswith("empty file"):
                continue  # a block of comments only
            raise _shift(exc, first_line, path) from None
        run_name = run_name or run.name
        tag = run.meta.get("last_tag", run.tag)  # trec_eval's runid: the last line's tag
        skipped += run.skipped
        extra += run.meta.get("extra_fields", 0) or 0
        block_q = pc.unique(run.qid).to_pylist()
        again = seen.intersection(block_q)
        i = _regrouped(run.qid)  # within the block (a small file is one block)
        if again or i is not None:
            if again:
                q = min(again, key=block_q.index)
                i = pc.index(run.qid, q).as_py()
            q = run.qid[i].as_py()
            ln = (int(run.line[i]) if run.line is not None else i + 1) + first_line - 1
            raise NotGrouped(path, ln, f"query {q!r} appears again after other queries; --stream needs "
                                       "each query's lines together (sort the run, or drop --stream)")
        seen.update(block_q)
        ignored.update(q for q in block_q if q not in in_qrels)
        qids = query_set(qrels, run, block_opts)
        if not qids:  # rank_run refuses duplicates; queries absent from the qrels too (as unstreamed)
            try:
                check_duplicates(run.qid, run.docid, path, run.line, "the run")
            except InputError as exc:
                raise _shift(exc, first_line, path) from None
            continue
        try:
            b = score_block(qrels, run, qids, metrics, block_opts)
        except InputError as exc:
            raise _shift(exc, first_line, path) from None
        f32_ties += b.ranked.float32_ties
        _collect(done_qids, parts, se_parts, undefined, qids, b.values, b.stderr, b.undefined, metrics)
    if not seen:
        raise InputError(path, 1, "empty file: no ranked documents")

    qids = natural_order([q for q in all_qids if q in seen]) if options.run_queries_only else natural_order(all_qids)
    done = set(done_qids)
    missing_qids = [q for q in qids if q not in done]
    if missing_qids:  # scored against an empty ranking, as the in-memory path does
        J = judgements(qrels, missing_qids)
        empty = Ranking(np.zeros(0, np.int64), np.zeros(0), len(missing_qids), np.arange(len(missing_qids)),
                        np.zeros(0, bool))
        rr = RankedRun(name or path, empty, np.zeros(len(missing_qids), bool), 0, 0, pa.array([], pa.string()),
                       np.zeros(0, np.int64))
        values, stderr, und = metric_values(rr, J, metrics, qrels, block_opts)
        _collect(done_qids, parts, se_parts, undefined, missing_qids, values, stderr, und, metrics)

    at = {q: i for i, q in enumerate(done_qids)}
    pick = np.asarray([at[q] for q in qids], dtype=np.int64)
    values = {m: np.concatenate(parts[m])[pick] if parts else np.zeros(0) for m in metrics}
    stderr = {m: np.concatenate(se_parts[m])[pick] for m in se_parts}
    result = finish_run(run_name, path, qids, metrics, values, stderr, undefined, options,
                        missing_qids=missing_qids, ignored_qids=natural_order(ignored), float32_ties=f32_ties,
                        skipped=skipped, extra=extra, tag=tag, qrels=qrels)
    for n in result.notes if warn else ():
        warn(n)
    return result


def _regrouped(qid):
    """Row of the first line of a query that comes back after other queries' lines, else None."""
    import pyarrow.compute as pc

    codes = pc.dictionary_encode(qid).indices.to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    c = codes[starts]  # codes number queries in order of first appearance: grouped = 0, 1, 2, ...
    back = np.flatnonzero(c[1:] <= np.maximum.accumulate(c)[:-1])
    return int(starts[back[0] + 1]) if len(back) else None


def _collect(done_qids, parts, se_parts, undefined, qids, values, stderr, und, metrics):
    done_qids.extend(qids)
    for m in metrics:
        parts.setdefault(m, []).append(values[m])
    for m in stderr:
        se_parts.setdefault(m, []).append(stderr[m])
    for m, n in und.items():
        undefined[m] = undefined.get(m, 0) + n
