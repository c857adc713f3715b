"""ERR@k (gdeval), Judged@k and Compat as ir_measures defines them, computed natively over the flat
ranking with trec_eval's view of documents; registered in :mod:`.trec`."""
from __future__ import annotations

from ..lazy import np

from ..records import UnknownMeasure
from .common import safe
from .trec_view import at_depth, codes, NONPOOL


# --------------------------------------------------------------------------- ir_measures families

def k_ERR(rk, J, k, ctx):
    """ERR@k as gdeval computes it (ir_measures' default provider; Chapelle et al. 2009):
    sum_{i<=k} R_i/i prod_{j<i} (1 - R_j), R_i = (2^g_i - 1) / 2^4, g_i the positive grade (else 0)."""
    g = np.where(codes(rk) > 0, codes(rk), 0.0)
    if len(g) and g.max() > 4:
        raise UnknownMeasure("ERR (gdeval) takes grades 0..4: a larger grade would make a probability exceed 1")
    r = (np.exp2(g) - 1.0) / 16.0
    if k is not None:
        r = np.where(rk.pos < k, r, 0.0)
    # prod_{j<i} (1 - R_j): a cumulative product along each row of a (rows x depth) matrix, exact
    # per row (a flat exp(cumsum(log)) would mix the rounding of all earlier rows into each one)
    inside = rk.pos < (rk.length.max() if k is None else int(k)) if len(r) else np.zeros(0, bool)
    width = int(rk.pos[inside].max()) + 1 if inside.any() else 1
    keep = np.ones((rk.nrows, width))
    keep[rk.row[inside], rk.pos[inside]] = 1.0 - r[inside]
    before = np.cumprod(np.concatenate([np.ones((rk.nrows, 1)), keep[:, :-1]], axis=1), axis=1)
    decay = np.zeros(len(r))
    decay[inside] = before[rk.row[inside], rk.pos[inside]]
    return rk.rowsum(r * decay / (rk.pos + 1.0))


def k_Judged(rk, J, k, ctx):
    """Judged@k = judged documents in the top k / min(k, num_ret) (ir_measures' judged provider)."""
    judged = codes(rk) != NONPOOL
    kk = rk.length if k is None else np.minimum(rk.length, int(k))
    return safe(at_depth(rk, judged, kk), kk)


def k_Compat(rk, J, param, ctx):
    """Compatibility (Clarke, Vtyurina & Smucker 2021 (TOIS)) as ir_measures computes it: RBO(p) of the run
    against the ideal ranking (relevant documents by grade descending, ties by the run's order,
    unretrieved ones last) to depth max(num_ret, R), normalised by RBO(ideal, ideal).  Relevant means
    grade >= -l (ir_measures: grade > 0, the same at the default -l 1 for integer grades).  param = (p, normalize), default (0.95, True).  The overlap at depth i counts the
    documents whose rank in both lists is <= i, so RBO is a per-document sum of a prefix table."""
    p, normalize = (0.95, True) if param is None else param
    c = codes(rk)
    L = ctx.rel_level
    relv = c >= L
    jrel = (J.grade >= L) & (J.grade >= 0)
    Rq = np.bincount(J.row, weights=jrel, minlength=J.nq)[: J.nq][rk.base]
    depth = np.maximum(rk.length, Rq).astype(np.int64)
    D = int(depth.max()) if len(depth) else 0
    S = np.concatenate(([0.0], np.cumsum(np.power(p, np.arange(D)) / (np.arange(D) + 1.0))))
    # ideal rank of each retrieved relevant document: documents of higher grade, then earlier
    # retrieved documents of the same grade
    idx = np.flatnonzero(relv)
    g = c[idx]
    qrow = rk.row[idx]
    # higher-grade relevant documents of the query (in the qrels, retrieved or not): composite
    # integer keys (query, grade code) searched in the sorted qrels keys
    pos_j = jrel
    levels, jcode = np.unique(J.grade[pos_j], return_inverse=True)
    nc = max(len(levels), 1)
    jkeys = np.sort(J.row[pos_j].astype(np.int64) * nc + jcode)
    qb = rk.base[qrow].astype(np.int64)
    key = qb * nc + np.searchsorted(levels, g)
    higher = np.searchsorted(jkeys, qb * nc + nc, "left") - np.searchsorted(jkeys, key, "right")
    o2 = np.lexsort((rk.pos[idx], g, qrow))
    same = np.zeros(len(idx), np.int64)
    if len(idx):
        key_r, key_g = qrow[o2], g[o2]
        newgrp = np.ones(len(o2), bool)
        newgrp[1:] = (key_r[1:] != key_r[:-1]) | (key_g[1:] != key_g[:-1])
        grp_start = np.maximum.accumulate(np.where(newgrp, np.arange(len(o2)), 0))
        same[o2] = np.arange(len(o2)) - grp_start
    rank_ideal = higher + same
    m = np.maximum(rk.pos[idx], rank_ideal)
    d = depth[qrow]
    score = np.bincount(qrow, weights=S[d] - S[np.minimum(m, d)], minlength=rk.nrows)[: rk.nrows]
    norm = safe(1.0 - np.power(p, depth), 1.0 - p) if p != 1 else depth.astype(np.float64)
    score = safe(score, norm)
    if normalize:
        # RBO(ideal, ideal): document at ideal rank i has m = i, i < R'
        best = np.zeros(rk.nrows)
        maxr = int(Rq.max()) if len(Rq) else 0
        if maxr:
            Rr = Rq.astype(np.int64)
            # sum_{i<R'} (S[d] - S[i]) = R' S[d] - sum_{i<R'} S[i]
            cS = np.concatenate(([0.0], np.cumsum(S)))
            best = safe(Rr * S[depth] - cS[Rr], norm)
        score = np.where(best > 0, safe(score, best), score)
    return score
