"""Expectations of trec_eval's measures under a uniformly random permutation of each query's pool,
exact where a closed form exists, otherwise Monte Carlo with the native kernels.

The pool (core/pools.py) is ranked whole: num_ret = n.  Each pool document has trec_eval's code
(trec_measures.codes): its grade when judged with grade >= 0, -2 when judged with a negative grade
(pooled but unjudged), -1 when not judged (run/union pools).  Per query, with L = -l:

  n pool size; P pool documents relevant (code >= L); Q judged nonrelevant (0 <= code < L);
  U pooled-unjudged (-2); V not in the qrels (-1); R = trec_eval's num_rel from the qrels;
  N judged nonrelevant in the qrels; m = min(k, n).

Closed forms (each proven against every permutation of small pools in tests/test_trec_bounds.py):

* P@k: (P/n) m/k;  recall@k: (P/n) m/R;  relative_P@k: (P/n) m/min(k, R)  (linearity).
* success@k: 1 - C(n-P, m)/C(n, m)  (no relevant document among the first m).
* Rprec: (P/n) min(R, n)/R.  Rprec_mult(x), c = (long)(x R + 0.9): 0 if c = 0; P/n if c <= n;
  P/c if c > n (every pool document is retrieved).
* map, map_cut@k, recip_rank, gm_map (per query): E[SP@m]/R and E[RR] of core/expectations.py
  (Karmaker & Feng 2022, corrected for the dependence of P@i on rank i's own relevance).
* ndcg / ndcg_cut@k: mean pool gain * sum_{i<=m} 1/log2(i+1) / IDCG (Jarvelin & Kekalainen 2002;
  linearity), trec_eval's gains and ideal.
* bpref (Buckley & Voorhees 2004): the judged nonrelevant documents above a given relevant one are
  uniform on {0..Q} (its place among them is uniform), so
  E = (P/R) (1 - E[min(X, R)]/min(N, R)), E[min(X, R)] = (t(t+1)/2 + (Q - t) R)/(Q + 1), t = min(Q, R)
  (and P/R when min(N, R) = 0).
* binG: the documents above a relevant one that are not relevant are uniform on {0..n-P}:
  E = (P/R) (1/(n-P+1)) sum_{x=0}^{n-P} 1/log2(2 + x).
* infAP (Yilmaz & Aslam 2006): above a given relevant document, the number s of judged documents
  (K = P-1+Q others) is uniform on 0..K; given s, the number w of the W = U+V others above it is
  beta-binomial BB(W; s+1, K+1-s) (its place among all is uniform); of those s, r are relevant with
  E[r | s] = s (P-1)/K, and of those w, v are not in the qrels with E[v | w] = w V/W.  The term at
  rank j = s + w, (1 + (j - v)(r + eps)/(s + 2 eps))/(j + 1), is linear in r and in v, which are
  independent given (s, w), so E = (P/R) E_{s,w}[(1 + (s + w U/W)(E[r|s] + eps)/(s + 2 eps))/(s+w+1)]
  (the j = 0 term is 1).
* rbp(p): mean scaled gain * (1 - p^n) (Moffat & Zobel 2008).  rbp_resid(p): p^n + (W/n)(1 - p^n)
  when W = U + V > 0, else 0.

'montecarlo' families (iprec_at_recall, 11pt_avg, G, ndcg_rel, Rndcg, ERR, Compat) use
:func:`montecarlo`: the native kernel on seeded permutations (core/permutations.py), with the
standard error of the mean.
"""
from __future__ import annotations

import numpy as np

from . import trec_measures as tm
from .expectations import expected_rr, expected_sp
from .pools import Pool

__all__ = ["judged_only_pool", "pool_codes", "pool_counts", "EXACT", "expectation", "montecarlo", "sort_key"]


def pool_codes(pool: Pool) -> np.ndarray:
    """trec_eval's code of each pool document (see the module docstring)."""
    return np.where(~pool.judged, tm.NONPOOL, np.where(pool.grade < 0, tm.UNJUDGED, pool.grade))


def sort_key(pool: Pool, ctx=None) -> np.ndarray:
    """Key whose descending order is the ideal ranking of the pool (grade, unjudged last) and
    ascending order the worst one, for IUB / WLB."""
    return pool_codes(pool)


def judged_only_pool(pool: Pool) -> Pool:
    """``-J`` for the bounds: the pool without documents trec_eval would drop (not in the qrels, or
    judged with a negative grade), so a random ranking is drawn from what -J keeps."""
    keep = pool_codes(pool) >= 0
    return Pool(pool.row[keep], pool.grade[keep], pool.nq, pool.judged[keep])


def pool_counts(pool: Pool, J, ctx):
    """n, P, Q, U, V, R, N per query (see the module docstring)."""
    c = pool_codes(pool)
    L = ctx.rel_level
    P = pool.rowsum(c >= L)
    Q = pool.rowsum((c >= 0) & (c < L))
    U = pool.rowsum(c == tm.UNJUDGED)
    V = pool.rowsum(c == tm.NONPOOL)
    R = tm.trec_relevant_count(J, L)
    N = tm._nonrel_count(J, L)
    return pool.n, P, Q, U, V, R, N


def _div(a, b):
    return tm._div(a, b)


def _m(n, k):
    return np.minimum(n, float(k))


def e_P(pool, J, k, ctx):
    n, P, *_ = pool_counts(pool, J, ctx)
    return _div(P * _m(n, k), n) / float(k)


def e_recall(pool, J, k, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    return _div(_div(P * _m(n, k), n), R)


def e_relative_P(pool, J, k, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    return _div(_div(P * _m(n, k), n), np.minimum(float(k), R))


def e_success(pool, J, k, ctx):
    """1 - C(n-P, m)/C(n, m) = 1 - prod_{i<m} (n-P-i)/(n-i)."""
    from scipy.special import gammaln

    n, P, *_ = pool_counts(pool, J, ctx)
    m = _m(n, k)
    none = np.zeros_like(n)
    ok = (n - P >= m) & (n > 0)
    none[ok] = np.exp(gammaln(n[ok] - P[ok] + 1) - gammaln(n[ok] - P[ok] - m[ok] + 1)
                      - gammaln(n[ok] + 1) + gammaln(n[ok] - m[ok] + 1))
    return np.where(n > 0, 1.0 - none, 0.0)


def e_Rprec(pool, J, param, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    return _div(_div(P, n) * np.minimum(R, n), R)


def e_Rprec_mult(pool, J, x, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    c = np.floor(float(x) * R + 0.9)
    return np.where(c == 0, 0.0, np.where(c > n, _div(P, c), _div(P, n)))


def e_map(pool, J, param, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    return _div(expected_sp(n, P, n), R)


def e_map_cut(pool, J, k, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    return _div(expected_sp(n, P, _m(n, k)), R)


def e_recip_rank(pool, J, param, ctx):
    n, P, *_ = pool_counts(pool, J, ctx)
    return expected_rr(n, P, n)


def _disc_sum(m):
    m = np.asarray(m, dtype=np.int64)
    D = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(np.arange(int(m.max()) if m.size else 0) + 2.0))))
    return D[m]


def e_ndcg(pool, J, gains, ctx):
    g = tm._level_gain(pool_codes(pool), gains)
    mean = _div(pool.rowsum(g), pool.n)
    return _div(mean * _disc_sum(pool.n), tm._idcg(J, gains))


def e_ndcg_cut(pool, J, k, ctx):
    g = np.maximum(pool_codes(pool), 0.0)
    mean = _div(pool.rowsum(g), pool.n)
    return _div(mean * _disc_sum(_m(pool.n, k)), tm._idcg(J, None, k))


def e_bpref(pool, J, param, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    t = np.minimum(Q, R)
    emin = (t * (t + 1) / 2.0 + (Q - t) * R) / (Q + 1.0)
    denom = np.minimum(N, R)
    per = np.where(denom > 0, 1.0 - _div(emin, denom), 1.0)
    return _div(P * per, R)


def e_binG(pool, J, param, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    K = (n - P).astype(np.int64)
    H = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(2.0 + np.arange(int(K.max()) + 1 if K.size else 0)))))
    mean = H[K + 1] / (K + 1.0)
    return _div(P * mean, R)


_INFAP_BLOCK = 4_000_000  # elements of one (queries x j x s) block


def e_infAP(pool, J, param, ctx):
    """Exact E[infAP]; see the module docstring.  Computed as a sum over s (judged documents above
    the scored relevant one: uniform on 0..K, K = P-1+Q, its place among the judged being uniform)
    and w (documents above it that are pooled-unjudged or not in the qrels: beta-binomial
    BB(W; s+1, K+1-s), W = U+V), of (1 + (s + w (1 - V/W)) (s (P-1)/K + eps)/(s + 2 eps)) / (s + w + 1):
    the infAP term at rank j = s + w with E[r | s] = s (P-1)/K and E[v | w] = w V/W."""
    from scipy.special import betaln

    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    eps = tm.INFAP_EPSILON
    out = np.zeros(pool.nq)
    for q in np.flatnonzero((P > 0) & (R > 0)):  # one vectorised block per query (no per-document loop)
        PP, QQ, UU, VV = (int(x) for x in (P[q], Q[q], U[q], V[q]))
        K, W = PP - 1 + QQ, UU + VV
        s = np.arange(K + 1, dtype=np.float64)[:, None]
        w = np.arange(W + 1, dtype=np.float64)[None, :]
        if W:
            # log BB(w) = log BB(0) + sum_{t<w} log[(W-t)(t+s+1) / ((t+1)(W-t+K-s))]: table lookups
            # and one cumulative sum instead of special functions per element
            a, b = s + 1.0, K + 1.0 - s
            logn = np.log(np.arange(1, W + K + 2, dtype=np.float64))  # log(1 .. W+K+1)
            t = np.arange(W)[None, :]
            si = np.arange(K + 1)[:, None]
            step = (logn[W - t - 1] + logn[t + si]) - (logn[t] + logn[W - t + K - si - 1])
            log0 = betaln(a, W + b) - betaln(a, b)
            pw = np.exp(np.concatenate([log0, log0 + np.cumsum(step, axis=1)], axis=1))
        else:
            pw = np.ones((K + 1, 1))
        er = s * (PP - 1) / K if K else np.zeros_like(s)
        judged_above = s + w * (1.0 - (VV / W if W else 0.0))  # j - E[v]
        term = (1.0 + judged_above * (er + eps) / (s + 2 * eps)) / (s + w + 1.0)
        out[q] = PP * np.sum(pw * term) / (K + 1.0) / R[q]
    return out


def _rbp_pool_gains(pool, J, gains):
    rk = pool.ordered(np.zeros(len(pool.row)), True)
    return rk, tm._rbp_gains(rk, J, gains)


def e_rbp(pool, J, param, ctx):
    p, gains = tm._p_and_gains(param)
    rk, g = _rbp_pool_gains(pool, J, gains)
    return _div(rk.rowsum(g), pool.n) * (1.0 - np.power(p, pool.n))


def e_rbp_resid(pool, J, param, ctx):
    p, _ = tm._p_and_gains(param)
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    W = U + V
    pn = np.power(p, n)
    return np.where(W > 0, pn + _div(W, n) * (1.0 - pn), 0.0)


# trec_eval base name -> exact expectation(pool, J, param, ctx) -> values[queries]
EXACT = {
    "P": e_P, "recall": e_recall, "relative_P": e_relative_P, "success": e_success, "Rprec": e_Rprec,
    "Rprec_mult": e_Rprec_mult, "map": e_map, "gm_map": e_map, "map_cut": e_map_cut,
    "recip_rank": e_recip_rank, "ndcg": e_ndcg, "ndcg_cut": e_ndcg_cut, "bpref": e_bpref,
    "gm_bpref": e_bpref, "binG": e_binG, "infAP": e_infAP, "rbp": e_rbp, "rbp_resid": e_rbp_resid,
}


def expectation(trec: str, pool: Pool, J, param=None, ctx=None) -> np.ndarray:
    """Exact E[measure] per query under a uniformly random permutation of the pool."""
    return EXACT[trec](pool, J, param, ctx or tm.TrecContext())


class _Shim:
    """What core.permutations reads of a measure: permute whole pools, or only the top ``cutoff``."""

    native = True

    def __init__(self, cutoff=None):
        self.cutoff = cutoff


def montecarlo(trec: str, pool: Pool, J, param=None, ctx=None, reps: int = 1000, seed: int = 0):
    """(mean, standard error) per query of the native kernel over ``reps`` seeded uniform
    permutations of each pool (counter-based draws: a query's estimate depends only on the seed
    and its id).  ERR@k and success-like measures only need the top k, so only that is drawn."""
    from .permutations import Keys, permutation_values

    ctx = ctx or tm.TrecContext()
    fam = tm.BY_TREC.get(trec) or tm.BY_NAME[trec]
    top_only = fam.name == "ERR" and param is not None
    scorer = lambda rk: fam.kernel(rk, J, param, ctx)  # noqa: E731
    vals = permutation_values(pool, J, _Shim(int(param) if top_only else None), ctx.rel_level, reps,
                              Keys(seed, J.qids), scorer)
    se = vals.std(axis=0, ddof=1) / np.sqrt(reps) if reps > 1 else np.zeros(pool.nq)
    return vals.mean(axis=0), se
