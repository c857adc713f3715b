"""trec_eval's graded families beyond nDCG (ndcg_rel, Rndcg, binG, G, rbp, rbp_resid), their gain
maps and ideal orderings, and the expectations of ndcg_rel (gains >= 0), Rndcg, binG, rbp and rbp_resid;
registered in :mod:`.trec`."""
from __future__ import annotations

from ..lazy import np

from ..kernels import Judgements, repeated_powers, spans
from .common import safe
from .trec_view import (codes, pool_counts, present_mask, rel_mask, rel_total, running_sum, trec_relevant_count,
                         UNJUDGED)


# --------------------------------------------------------------------------- gains

def _level_gain(code: np.ndarray, gains: dict | None) -> np.ndarray:
    """trec_eval's get_gain: a listed level takes its gain, another judged level (>= 0) gains its
    own value, anything else 0 (gain_init.c)."""
    g = np.where(code >= 0, code, 0.0)
    for lvl, val in (gains or {}).items():
        g = np.where(code == float(lvl), float(val), g)
    return g


def reads_gain(code, m, rel, max_grade=None):
    """What G and ndcg_rel read of a ranking (their records' ``reads``): its documents of nonzero
    level gain, their gains and ranks; the others add no term."""
    gains = m.get("gains")
    return _level_gain(code, dict(gains) if gains else None) != 0


def _ideal_sorted(J: Judgements, gains: dict | None):
    """Per query, the judged documents' gains sorted descending (row, gain, 0-based position)."""
    key = ("trec_ideal", tuple(sorted((gains or {}).items())))
    if key not in J._cache:
        code = np.where(J.grade < 0, UNJUDGED, J.grade)
        keep = code >= 0
        row, g = J.row[keep], _level_gain(code[keep], gains)
        order = np.lexsort((-g, row))
        row, g = row[order], g[order]
        starts = np.searchsorted(row, np.arange(J.nq + 1))
        pos = np.arange(len(row)) - starts[row]
        J._cache[key] = (row, g, pos)
    return J._cache[key]


def _disc(pos):
    return 1.0 / np.log2(pos + 2.0)


def _idcg(J, gains, k=None):
    key = ("trec_idcg", tuple(sorted((gains or {}).items())), k)
    if key not in J._cache:
        row, g, pos = _ideal_sorted(J, gains)
        w = np.where(g > 0, g * _disc(pos), 0.0)
        if k is not None:
            w = np.where(pos < k, w, 0.0)
        J._cache[key] = np.bincount(row, weights=w, minlength=J.nq)[: J.nq]
    return J._cache[key]


def _prefix_idcg(J, gains):
    """Per query the running ideal DCG over the positive ideal gains: (flat array, starts, counts)."""
    row, g, pos = _ideal_sorted(J, gains)
    keep = g > 0
    row, g, pos = row[keep], g[keep], pos[keep]
    c = np.cumsum(g * _disc(pos))
    st = np.searchsorted(row, np.arange(J.nq + 1))
    before = np.concatenate(([0.0], c))[st[:-1]]
    return c - before[row], st, np.diff(st), row, g


def _nonzero_gains(rk, gains):
    """The ranked documents of nonzero trec_eval gain: (positions, gains), once per ranking and gain
    map; the others add nothing to any DCG, or to G."""
    def make():
        g = _level_gain(codes(rk), gains)
        idx = np.flatnonzero(g)
        return idx, g[idx]
    return rk.memo(("trec nonzero gains", tuple(sorted((gains or {}).items()))), make)


def _gain_terms(rk, gains):
    """:func:`_nonzero_gains` and their DCG terms gain / log2(rank + 1): (positions, gains, terms)."""
    def make():
        idx, g = _nonzero_gains(rk, gains)
        return idx, g, g * _disc(rk.pos[idx])
    return rk.memo(("trec gain terms", tuple(sorted((gains or {}).items()))), make)


def _running_sparse_sum(rk, idx, w, rows=None):
    """The running sum of ``w`` (one weight per document of ``idx``) within each row: the running sum over the whole flat ranking
    less the sum before the row, as :func:`running_sum` forms it (the zero terms it adds change no bit).
    ``rows``: ``rk.row[idx]`` when the caller has it."""
    c = np.cumsum(w)
    before = np.concatenate(([0.0], c))[np.searchsorted(idx, rk.starts[:-1])]
    return c - before[rk.row[idx] if rows is None else rows]


def k_ndcg_rel(rk, J, gains, ctx):
    """nDCG averaged over the relevant (positive-gain) documents: at each retrieved one, DCG so far
    / ideal DCG at the same rank (the ideal stops growing past its last positive gain); each one not
    retrieved contributes the final DCG / the full ideal DCG (m_ndcg_rel.c)."""
    idx, g, w = _gain_terms(rk, gains)
    dcg = _running_sparse_sum(rk, idx, w)
    pidcg, st, npos, _, _ = _prefix_idcg(J, gains)
    r = rk.row[idx]
    q = rk.base[r]
    n = npos[q]
    at = st[q] + np.minimum(rk.pos[idx], np.maximum(n - 1, 0))
    ideal = np.where(n > 0, pidcg[np.minimum(at, max(len(pidcg) - 1, 0))] if len(pidcg) else 0.0, 0.0)
    hit = g > 0
    s = rk.sum_within(idx[hit], safe(dcg, ideal)[hit])
    full = _idcg(J, gains)[rk.base]
    final = rk.sum_within(idx, w)
    nrel = npos[rk.base].astype(np.float64)
    s = s + (nrel - rk.count_within(idx[hit], np.inf)) * safe(final, full)
    return np.where(s > 0, safe(s, nrel), 0.0)


def e_ndcg_rel(pool, J, gains, ctx):
    """E[ndcg_rel] under a uniformly random ranking of the pool (exact) when every gain is >= 0 and
    no level below 0 gains anything (the record's ``exact_for``): then the documents of nonzero gain
    are those of positive gain, at most the query's nrel positive ideal gains (pool documents of
    positive gain are judged), so the sum s of :func:`k_ndcg_rel` is >= 0 and linear in its terms.

    The whole pool of n documents (gains g, S = sum g, Np of them positive) is ranked.  At 0-based
    rank p the term is 1[g(p) > 0] DCG(p) / ideal(p), DCG(p) = sum_{p' <= p} g(p') disc(p'); over a
    uniform permutation E[1[g(p) > 0] g(p)] = S/n and, for p' != p,
    E[1[g(p) > 0] g(p')] = sum_{d: g_d > 0} (S - g_d) / (n(n-1)) = (Np - 1) S / (n(n-1)), so
    E[term p] = (S/n disc(p) + (Np - 1) S/(n(n-1)) D(p)) / ideal(p), D(p) = sum_{p' < p} disc(p'),
    ideal(p) the ideal DCG to rank min(p, nrel - 1).  The nrel - Np positive ideal gains never
    ranked add (nrel - Np) E[DCG(n - 1)] / full = (nrel - Np) (S/n) D(n) / full; E = E[s] / nrel."""
    from .common import disc_prefix

    rk = pool.ordered(np.zeros(len(pool.row)), True)  # any order: only positions and gain sums are read
    g = _level_gain(codes(rk), gains)
    n = pool.n
    S, Np = rk.rowsum(g), rk.rowsum(g > 0)
    pidcg, st, nrel, _, _ = _prefix_idcg(J, gains)
    full = _idcg(J, gains)
    q, p = rk.row, rk.pos
    at = st[q] + np.minimum(p, np.maximum(nrel[q] - 1, 0))
    ideal = np.where(nrel[q] > 0, pidcg[np.minimum(at, max(len(pidcg) - 1, 0))] if len(pidcg) else 0.0, 0.0)
    D = disc_prefix(int(n.max()) if n.size else 0)
    mean, pair = safe(S, n), safe((Np - 1.0) * S, n * (n - 1.0))
    term = safe(mean[q] * _disc(p) + pair[q] * D[p], ideal)
    s = np.bincount(q, weights=term, minlength=J.nq)[: J.nq]
    s = s + (nrel - Np) * safe(mean * D[n.astype(np.int64)], full)
    return safe(s, nrel)


def k_Rndcg(rk, J, gains, ctx):
    """nDCG averaged at the R levels: at b = the number of judged documents of gain >= each
    distinct positive gain, nDCG@b; plus nDCG over the whole ranking when it extends at least two
    documents past the last level (m_Rndcg.c's loop structure); 0 when R = 0."""
    R = rel_total(rk, J, ctx)
    gidx, _, w = _gain_terms(rk, gains)
    dcg_at = _running_sparse_sum(rk, gidx, w)
    pidcg, st, npos, irow, ig = _prefix_idcg(J, gains)
    # boundaries: ends of runs of equal positive ideal gain
    last = np.ones(len(ig), bool)
    if len(ig):
        last[:-1] = (irow[1:] != irow[:-1]) | (ig[1:] != ig[:-1])
    bidx = np.flatnonzero(last)
    bq, bpos = irow[bidx], bidx - st[irow[bidx]] + 1  # boundary b (a prefix length)
    ideal_b = pidcg[bidx]
    # expand boundaries to ranking rows: every row whose base is the boundary's query (CSR over base)
    by_q = np.argsort(rk.base, kind="stable")
    q_st = np.searchsorted(rk.base[by_q], np.arange(J.nq + 1))
    rep = (q_st[1:] - q_st[:-1])[bq]
    at = spans(q_st[bq], rep)[0]
    br = by_q[at] if len(at) else np.zeros(0, np.int64)
    bb, bi = np.repeat(bpos, rep), np.repeat(ideal_b, rep)
    # DCG of the first b documents of the row (all of them when b >= num_ret)
    L = rk.length[br]
    take = np.minimum(bb, L)
    # the DCG to the last document of nonzero gain within the first b (0 when there is none)
    last = np.searchsorted(gidx, rk.starts[br] + take) - 1
    inside = (take > 0) & (last >= 0)
    inside[inside] &= rk.row[gidx[last[inside]]] == br[inside]
    dcg_b = np.where(inside, dcg_at[np.maximum(last, 0)] if len(dcg_at) else 0.0, 0.0)
    s = np.bincount(br, weights=safe(dcg_b, bi), minlength=rk.nrows)[: rk.nrows]
    cnt_b = np.bincount(br, minlength=rk.nrows)[: rk.nrows].astype(np.float64)
    bmax = np.zeros(rk.nrows)
    np.maximum.at(bmax, br, bb)
    final = rk.sum_within(gidx, w)
    full = _idcg(J, gains)[rk.base]
    extra = (rk.length >= bmax + 2) & (full > 0) & (cnt_b > 0)
    s = s + np.where(extra, safe(final, full), 0.0)
    cnt_b = cnt_b + extra
    if ctx.trec_nan:  # --trec-nan: relevant documents but no positive gain: trec_eval divides 0 by 0
        return np.where(R > 0, np.where(cnt_b > 0, safe(s, cnt_b), np.nan), 0.0)
    return np.where(R > 0, safe(s, cnt_b), 0.0)


def e_Rndcg(pool, J, gains, ctx):
    """E[Rndcg] under a uniformly random ranking of the pool (exact).  Every term of Rndcg is a DCG@b
    at a depth b fixed by the qrels, or the DCG of the whole ranking, over a constant (the ideal DCG
    at b, the full ideal DCG), and the number of terms is fixed too (the ranking is the whole pool,
    of n documents).  By linearity each rank holds the pool's mean gain, so
    E[DCG@b] = mean(g) * sum_{i <= min(b, n)} 1/log2(i+1), and E[Rndcg] is Rndcg with every DCG
    replaced by its expectation; 0 when R = 0."""
    from .common import disc_prefix

    rk = pool.ordered(np.zeros(len(pool.row)), True)  # any order: only the mean gain is read
    n = pool.n
    mean = safe(rk.rowsum(_level_gain(codes(rk), gains)), n)
    pidcg, st, npos, irow, ig = _prefix_idcg(J, gains)
    last = np.ones(len(ig), bool)
    if len(ig):
        last[:-1] = (irow[1:] != irow[:-1]) | (ig[1:] != ig[:-1])
    bidx = np.flatnonzero(last)
    bq, bpos = irow[bidx], bidx - st[irow[bidx]] + 1
    D = disc_prefix(int(n.max()) if n.size else 0)
    take = np.minimum(bpos, n[bq]).astype(np.int64)
    s = np.bincount(bq, weights=safe(mean[bq] * D[take], pidcg[bidx]), minlength=J.nq)[: J.nq]
    cnt = np.bincount(bq, minlength=J.nq)[: J.nq].astype(np.float64)
    bmax = np.zeros(J.nq)
    np.maximum.at(bmax, bq, bpos)
    full = _idcg(J, gains)
    extra = (n >= bmax + 2) & (full > 0) & (cnt > 0)
    s = s + np.where(extra, safe(mean * D[n.astype(np.int64)], full), 0.0)
    return np.where(trec_relevant_count(J, ctx.rel_level) > 0, safe(s, cnt + extra), 0.0)


def k_ideal_dcg(rk, J, gains, ctx):
    """The ideal DCG of the query (m_ndcg.c's ideal_dcg): its judged documents of positive gain sorted
    by gain, sum_i gain_i / log2(i+1), whatever the run retrieved."""
    return _idcg(J, gains)[rk.base]


def stale_ideal_dcg(values, J):
    """trec_eval 10's ideal_dcg (``--trec-nan``): a query judged only with negative grades prints the
    ideal DCG of the last query before it, in trec_eval's query order (qid byte order), judged with a
    grade >= 0 (0 when there is none).  form_res_rels.c sets the query's number of grade levels only
    from grades >= 0 and zeroes its level counts only up to its highest grade, so setup_gains reads
    both as the earlier query left them; ndcg and the rest are 0 there all the same (their DCG is)."""
    values = np.asarray(values, dtype=np.float64)
    top = np.full(J.nq, -np.inf)
    np.maximum.at(top, J.row, J.grade)
    order = np.argsort(np.asarray(J.qids, dtype=object), kind="stable")  # str order = UTF-8 byte order
    fresh = top[order] >= 0
    last = np.maximum.accumulate(np.where(fresh, np.arange(J.nq), -1)) if J.nq else np.zeros(0, np.int64)
    carried = np.where(last >= 0, values[order][np.maximum(last, 0)], 0.0)
    out = values.copy()
    out[order] = carried
    return out


def k_binG(rk, J, param, ctx):
    """binG = (1/R) sum over relevant retrieved d of 1 / log2(2 + documents above d not relevant)."""
    rel = rel_mask(rk, ctx)
    above_non = rk.pos - (running_sum(rk, rel) - rel)
    s = rk.rowsum(np.where(rel, 1.0 / np.log2(2.0 + above_non), 0.0))
    return safe(s, rel_total(rk, J, ctx))


def _ideal_cost(J, gains):
    """Per query the running sum of max(ideal gain at rank i, 1) over its positive ideal gains (flat,
    with each query's start and count) and their total: the ranking-independent part of G."""
    def make():
        row, ig, _ = _ideal_sorted(J, gains)
        keep = ig > 0  # the positive ideal gains lead each query's list (sorted descending)
        r, igk = row[keep], ig[keep]
        n_pos = np.bincount(r, minlength=J.nq)[: J.nq]
        st = np.searchsorted(r, np.arange(J.nq + 1))
        c = np.cumsum(np.maximum(igk, 1.0))
        C = c - np.concatenate(([0.0], c))[st[:-1]][r]  # within each query, from its first rank
        total = np.bincount(r, weights=igk, minlength=J.nq)[: J.nq]
        return C, st, n_pos, total
    return J.cached(("trec G cost", tuple(sorted((gains or {}).items()))), make)


def k_G(rk, J, gains, ctx):
    """G (m_G.c): sum_i gain(d_i) / log2(2 + C_i - S_i), S_i the run's gain to rank i, C_i the
    running sum of max(ideal gain at rank i, 1), divided by the total positive ideal gain.

    Only documents of nonzero gain add a term: C_i is read from the query's ideal (past its positive
    gains each rank costs 1), S_i is the running gain over those documents alone."""
    idx, g = _nonzero_gains(rk, gains)
    C, st, n_pos, total = _ideal_cost(J, gains)
    r = rk.row[idx]
    q = rk.base[r]
    p = rk.pos[idx]
    n = n_pos[q]
    # past the query's positive ideal gains (p >= n) the cost is the last one + 1 a rank; within
    # them, read from the ideal
    last = np.where(n_pos > 0, C[np.maximum(st[:-1] + n_pos - 1, 0)] if len(C) else 0.0, 0.0)
    cost = last[q] + (p - n + 1)
    inside = np.flatnonzero(p < n)
    cost[inside] = C[st[q[inside]] + p[inside]]
    S = _running_sparse_sum(rk, idx, g, r)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = g / np.log2(2.0 + cost - S)
    return safe(np.bincount(r, weights=term, minlength=rk.nrows)[: rk.nrows], total[rk.base])  # as rk.sum_within


def _rbp_gains(rk, J, gains):
    """Each ranked document's rbp gain scaled to [0, 1] over the query's gain levels (see module doc)."""
    code = codes(rk)
    g = _level_gain(code, gains)
    # the query's levels: 0 .. its largest judged grade, plus any listed level
    top = np.full(J.nq, -1.0)
    ok = J.grade >= 0
    np.maximum.at(top, J.row[ok], J.grade[ok])
    lv_min = np.where(top >= 0, 0.0, np.inf)
    lv_max = np.where(top >= 0, top, -np.inf)
    if gains:
        # listed levels are levels too; the default levels 0..top take gain = level unless listed
        base_vals = {}
        for lvl, val in gains.items():
            base_vals[float(lvl)] = float(val)
        lv_min = np.full(J.nq, np.inf)
        lv_max = np.full(J.nq, -np.inf)
        maxtop = int(top.max()) if len(top) else -1
        for lvl in range(0, maxtop + 1):
            val = base_vals.get(float(lvl), float(lvl))
            has = top >= lvl
            lv_min = np.where(has, np.minimum(lv_min, val), lv_min)
            lv_max = np.where(has, np.maximum(lv_max, val), lv_max)
        for lvl, val in base_vals.items():
            if not (0 <= lvl <= maxtop and float(lvl).is_integer()):
                lv_min, lv_max = np.minimum(lv_min, val), np.maximum(lv_max, val)
            else:
                lv_min = np.where(top < lvl, np.minimum(lv_min, val), lv_min)
                lv_max = np.where(top < lvl, np.maximum(lv_max, val), lv_max)
    lo, hi = lv_min[rk.base][rk.row], lv_max[rk.base][rk.row]
    scale = (lo < 0) | (hi > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(scale, (g - lo) / (hi - lo), g)
    # a document with no known level keeps get_gain's 0 (m_rbp.c rescales only the level table)
    known = (code >= 0) | np.isin(code, [float(k) for k in (gains or {})])
    return np.where(known, scaled, 0.0)


def rbp_order(code, m, rel, max_grade):
    """rbp's classes of pool documents: the level gain (gain_init.c) of a known level (judged grade
    >= 0, or a listed one), which m_rbp.c's scaling keeps in order; -1 for any other document, which
    gains 0 whatever the scaling (below every known level when all gains are >= 0)."""
    gains = m.get("gains")
    gains = dict(gains) if gains else None
    known = (code >= 0) | np.isin(code, [float(k) for k in (gains or {})])
    return np.where(known, _level_gain(code, gains), -1.0)


def _p_and_gains(param):
    """rbp's pair parameters: ``p=0.8`` and ``level=gain`` pairs (default p = 0.9)."""
    param = dict(param or {})
    p = float(param.pop("p", 0.9))
    return p, {k: v for k, v in param.items() if not isinstance(k, str)} or None


def k_rbp(rk, J, param, ctx):
    """RBP(p) = (1-p) sum_i p^(i-1) gain(d_i), gains scaled to [0, 1] when they exceed it (Moffat &
    Zobel 2008; m_rbp.c, with its uninitialised bounds set); param {'p': 0.9, level: gain, ...}."""
    p, gains = _p_and_gains(param)
    weights = repeated_powers(p, int(rk.pos.max()) if rk.pos.size else 0)[rk.pos.astype(np.int64)]  # trec_eval's cur_p, bit for bit
    return (1.0 - p) * rk.rowsum(_rbp_gains(rk, J, gains) * weights)


def k_rbp_resid(rk, J, param, ctx):
    """RBP residual: p^num_ret + (1-p) sum over unjudged d_i of p^(i-1), when any retrieved document
    is unjudged, else 0 (Moffat & Zobel 2008; m_rbp_resid.c)."""
    p, _ = _p_and_gains(param)
    unj = codes(rk) < 0
    # trec_eval's cur_p (repeated multiplication, not pow: the last bit shows in the 4th decimal of a
    # mean), summed in rank order (bincount adds in order), p^num_ret its value after the last rank
    powers = repeated_powers(p, int(rk.length.max()) if rk.length.size else 0)
    s = rk.rowsum(np.where(unj, powers[rk.pos.astype(np.int64)], 0.0))
    v = powers[rk.length.astype(np.int64)] + (1.0 - p) * s
    present = present_mask(rk, ctx)
    out = np.where((rk.rowsum(unj) > 0) & present, v, 0.0)
    if ctx.trec_nan and (param or {}).get("named") and not ctx.judged_only:
        # --trec-nan: trec_eval clears only a measure named exactly 'rbp_resid' for -c's placeholder ranking
        # (one document not in the qrels: unjudged at rank 1, so cur_p = p and the sum 1); none after -J
        out = np.where(present, out, p + (1.0 - p) * 1.0)
    return out


def e_binG(pool, J, param, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    K = (n - P).astype(np.int64)
    H = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(2.0 + np.arange(int(K.max()) + 1 if K.size else 0)))))
    mean = H[K + 1] / (K + 1.0)
    return safe(P * mean, R)


def _rbp_pool_gains(pool, J, gains):
    rk = pool.ordered(np.zeros(len(pool.row)), True)
    return rk, _rbp_gains(rk, J, gains)


def e_rbp(pool, J, param, ctx):
    p, gains = _p_and_gains(param)
    rk, g = _rbp_pool_gains(pool, J, gains)
    return safe(rk.rowsum(g), pool.n) * (1.0 - np.power(p, pool.n))


def e_rbp_resid(pool, J, param, ctx):
    p, _ = _p_and_gains(param)
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    W = U + V
    pn = np.power(p, n)
    return np.where(W > 0, pn + safe(W, n) * (1.0 - pn), 0.0)
