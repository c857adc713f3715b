"""ERR@k (gdeval), Judged@k and Compat as ir_measures defines them, computed natively over the flat
ranking with trec_eval's view of documents; registered in :mod:`.trec`."""
from __future__ import annotations

import numpy as np

from ..records import UnknownMeasure
from .common import codes, context, NONPOOL, safe


# --------------------------------------------------------------------------- ir_measures families

def k_ERR(ranking, judgements, measure, level):
    """ERR@k as gdeval computes it (ir_measures' default provider; Chapelle et al. 2009):
    sum_{i<=k} R_i/i prod_{j<i} (1 - R_j), R_i = (2^g_i - 1) / 2^4, g_i the positive grade (else 0)."""
    k = measure.cutoff
    g = np.where(codes(ranking) > 0, codes(ranking), 0.0)
    if len(g) and g.max() > 4:
        raise UnknownMeasure("ERR (gdeval) takes grades 0..4: a larger grade would make a probability exceed 1")
    stop_prob = (np.exp2(g) - 1.0) / 16.0
    if k is not None:
        stop_prob = np.where(ranking.pos < k, stop_prob, 0.0)
    # prod_{j<i} (1 - R_j): a cumulative product along each row of a (rows x depth) matrix, exact
    # per row (a flat exp(cumsum(log)) would mix the rounding of all earlier rows into each one)
    inside = ranking.pos < (ranking.length.max() if k is None else int(k)) if len(stop_prob) else np.zeros(0, bool)
    width = int(ranking.pos[inside].max()) + 1 if inside.any() else 1
    keep = np.ones((ranking.nrows, width))
    keep[ranking.row[inside], ranking.pos[inside]] = 1.0 - stop_prob[inside]
    before = np.cumprod(np.concatenate([np.ones((ranking.nrows, 1)), keep[:, :-1]], axis=1), axis=1)
    decay = np.zeros(len(stop_prob))
    decay[inside] = before[ranking.row[inside], ranking.pos[inside]]
    return ranking.rowsum(stop_prob * decay / (ranking.pos + 1.0))


def k_Judged(ranking, judgements, measure, level):
    """Judged@k = judged documents in the top k / min(k, num_ret) (ir_measures' judged provider)."""
    k = measure.cutoff
    depth = ranking.length if k is None else np.minimum(ranking.length, int(k))
    return safe(ranking.count_within(np.flatnonzero(codes(ranking) != NONPOOL), depth), depth)


def k_Compat(ranking, judgements, measure, level):
    """Compatibility (Clarke, Vtyurina & Smucker 2021 (TOIS)) as ir_measures computes it: RBO(p) of the run
    against the ideal ranking (relevant documents by grade descending, ties by the run's order,
    unretrieved ones last) to depth max(num_ret, R), normalised by RBO(ideal, ideal).  Relevant means
    grade >= -l (ir_measures: grade > 0, the same at the default -l 1 for integer grades).  param = (p, normalize), default (0.95, True).  The overlap at depth i counts the
    documents whose rank in both lists is <= i, so RBO is a per-document sum of a prefix table."""
    p, normalize = measure.get("p"), bool(measure.get("normalize"))
    code = codes(ranking)
    L = context(measure, level).rel_level
    relv = code >= L
    jrel = (judgements.grade >= L) & (judgements.grade >= 0)
    n_rel = np.bincount(judgements.row, weights=jrel, minlength=judgements.nq)[: judgements.nq][ranking.base]
    depth = np.maximum(ranking.length, n_rel).astype(np.int64)
    D = int(depth.max()) if len(depth) else 0
    S = np.concatenate(([0.0], np.cumsum(np.power(p, np.arange(D)) / (np.arange(D) + 1.0))))
    # ideal rank of each retrieved relevant document: documents of higher grade, then earlier
    # retrieved documents of the same grade
    idx = np.flatnonzero(relv)
    g = code[idx]
    qrow = ranking.row[idx]
    # higher-grade relevant documents of the query (in the qrels, retrieved or not): composite
    # integer keys (query, grade code) searched in the sorted qrels keys
    pos_j = jrel
    levels, jcode = np.unique(judgements.grade[pos_j], return_inverse=True)
    n_levels = max(len(levels), 1)
    jkeys = np.sort(judgements.row[pos_j].astype(np.int64) * n_levels + jcode)
    query_base = ranking.base[qrow].astype(np.int64)
    key = query_base * n_levels + np.searchsorted(levels, g)
    higher = np.searchsorted(jkeys, query_base * n_levels + n_levels, "left") - np.searchsorted(jkeys, key, "right")
    order = np.lexsort((ranking.pos[idx], g, qrow))
    same = np.zeros(len(idx), np.int64)
    if len(idx):
        key_r, key_g = qrow[order], g[order]
        newgrp = np.ones(len(order), bool)
        newgrp[1:] = (key_r[1:] != key_r[:-1]) | (key_g[1:] != key_g[:-1])
        grp_start = np.maximum.accumulate(np.where(newgrp, np.arange(len(order)), 0))
        same[order] = np.arange(len(order)) - grp_start
    rank_ideal = higher + same
    worse_rank = np.maximum(ranking.pos[idx], rank_ideal)
    depth_row = depth[qrow]
    score = np.bincount(qrow,
                        weights=S[depth_row] - S[np.minimum(worse_rank, depth_row)], minlength=ranking.nrows)[: ranking.nrows]
    norm = safe(1.0 - np.power(p, depth), 1.0 - p) if p != 1 else depth.astype(np.float64)
    score = safe(score, norm)
    if normalize:
        # RBO(ideal, ideal): document at ideal rank i has m = i, i < R'
        n_rel_int = n_rel.astype(np.int64)
        # sum_{i<R'} (S[d] - S[i]) = R' S[d] - sum_{i<R'} S[i]
        cum_S = np.concatenate(([0.0], np.cumsum(S)))
        best = safe(n_rel_int * S[depth] - cum_S[n_rel_int], norm)
        score = np.where(best > 0, safe(score, best), score)
    return score
