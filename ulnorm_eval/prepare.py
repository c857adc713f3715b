"""From parsed files to rankings: the query set, trec_eval's ordering, depth, and the qrels join."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .io import InputError, Qrels, Run
from .measures import Judgements, Ranking

__all__ = ["natural_order", "judgements", "rank_run", "RankedRun"]


def _natural_key(s: str):
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.findall(r"\d+|\D+", s))


def natural_order(qids) -> list:
    """Query ids in natural order: digit runs compare as numbers (2 < 10), the rest as text."""
    return sorted(qids, key=lambda s: (_natural_key(s), s))


def judgements(qrels: Qrels, qids: list) -> Judgements:
    """Group the qrels of ``qids`` by query, grades descending (the ideal ordering)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    qset = pa.array(qids, pa.string())
    qi = pc.index_in(qrels.qid, value_set=qset)
    keep = pc.is_valid(qi).to_numpy(zero_copy_only=False)
    row = qi.to_numpy(zero_copy_only=False)
    row = np.where(keep, np.nan_to_num(row.astype(np.float64), nan=-1), -1).astype(np.int64)[keep]
    grade = qrels.grade[keep]
    order = np.lexsort((-grade, row))
    max_grade = float(qrels.grade.max()) if len(qrels.grade) else 0.0
    return Judgements(list(qids), row[order], grade[order], max_grade)


@dataclass
class RankedRun:
    """A run ordered and joined to the qrels: one row of the ranking per query of the query set."""

    name: str
    ranking: Ranking
    docid: object  # pyarrow strings in ranking order (for NRG and the ir_measures bridge)
    present: np.ndarray  # bool per query: the run retrieved something for it
    ignored_queries: int  # distinct run queries absent from the qrels
    float32_ties: int = 0  # adjacent pairs that tie only after rounding scores to float32


def rank_run(run: Run, qrels: Qrels, qids: list, *, ties: str = "score", score_precision: str = "float64",
             depth: int | None = None) -> RankedRun:
    """Order a run as trec_eval does and join it to the qrels.

    ties='score' (default): score descending, then docid descending in byte order (trec_eval);
    the rank column is ignored.  ties='rank': rank column ascending, then file order.
    ties='file': file order.  score_precision='float32' first rounds scores to single precision,
    as trec_eval <= 9.0.8, pytrec_eval and ir_measures do (which creates ties).
    ``depth`` keeps the top ``depth`` documents per query after ordering (trec_eval -M).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    qset = pa.array(qids, pa.string())
    qi = pc.index_in(run.qid, value_set=qset)
    valid = pc.is_valid(qi).to_numpy(zero_copy_only=False)
    n_ignored = 0
    if not valid.all():
        n_ignored = pc.count_distinct(pc.filter(run.qid, pa.array(~valid))).as_py()
    idx_keep = np.flatnonzero(valid)
    q = qi.to_numpy(zero_copy_only=False)
    if not valid.all():
        q = q[idx_keep]
    q = q.astype(np.int64)
    docid = run.docid if valid.all() else run.docid.take(pa.array(idx_keep))

    score = run.score if valid.all() else run.score[idx_keep]
    f32_ties = 0
    if score_precision == "float32":
        score = score.astype(np.float32).astype(np.float64)
    elif score_precision != "float64":
        raise ValueError("score_precision must be 'float64' or 'float32'")

    if ties == "score":
        table = pa.table({"q": q, "s": score, "d": docid})
        order = pc.sort_indices(table, sort_keys=[("q", "ascending"), ("s", "descending"),
                                                  ("d", "descending")]).to_numpy()
    elif ties == "rank":
        if run.rank is None:
            raise InputError(run.path, None, "--ties rank needs an integer rank column")
        rank = run.rank if valid.all() else run.rank[idx_keep]
        order = np.lexsort((np.arange(len(q)), rank, q))
    elif ties == "file":
        order = np.argsort(q, kind="stable")
    else:
        raise ValueError("ties must be 'score', 'rank' or 'file'")

    q = q[order]
    docid = docid.take(pa.array(order))
    if score_precision == "float32" and ties == "score":
        s = score[order]
        s64 = (run.score if valid.all() else run.score[idx_keep])[order]
        same = (q[1:] == q[:-1]) & (s[1:] == s[:-1]) & (s64[1:] != s64[:-1])
        f32_ties = int(same.sum())

    nq = len(qids)
    starts = np.searchsorted(q, np.arange(nq + 1))
    pos = np.arange(len(q)) - starts[q]
    if depth is not None:
        keep = pos < depth
        if not keep.all():
            q, pos = q[keep], pos[keep]
            docid = docid.filter(pa.array(keep))

    # join to the qrels on (query, document)
    rkeys = pc.binary_join_element_wise(pa.array(qids, pa.string()).take(pa.array(q)), docid, "\x1f")
    qkeys = pc.binary_join_element_wise(qrels.qid, qrels.docid, "\x1f")
    hit = pc.index_in(rkeys, value_set=qkeys)
    judged = pc.is_valid(hit).to_numpy(zero_copy_only=False)
    hidx = pc.fill_null(hit, 0).to_numpy(zero_copy_only=False)
    grade = np.where(judged, qrels.grade[hidx], 0.0)

    present = np.bincount(q, minlength=nq)[:nq] > 0
    rk = Ranking(q, grade, nq, np.arange(nq), judged)
    return RankedRun(run.name, rk, docid, present, n_ignored, f32_ties)
