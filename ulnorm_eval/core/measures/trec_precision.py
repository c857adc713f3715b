"""trec_eval's precision-like families beyond P, R, AP and Rprec (relative_P, success, Rprec_mult,
iprec_at_recall, 11pt_avg), the incomplete-judgement ones (bpref, infAP, unj), and their closed-form
expectations under a random ranking of the pool; registered in :mod:`.trec`."""
from __future__ import annotations

import math

from ..lazy import np

from .common import safe
from .trec_view import (at_depth, codes, depth_of, INFAP_EPSILON, nonrel_count, pool_counts, present_mask,
                        rel_index, rel_mask, rel_total, running_sum, UNJUDGED)


# --------------------------------------------------------------------------- precision family


def k_yaap(rk, J, param, ctx):
    """yaap = log((1 + S) / (1 + R - S)), S = sum over relevant retrieved documents of the precision
    at their rank (Robertson 2012, 'On Smoothing Average Precision'; m_yaap.c)."""
    rel = rel_mask(rk, ctx)
    S = rk.rowsum(np.where(rel, running_sum(rk, rel) / (rk.pos + 1.0), 0.0))
    return np.log((1.0 + S) / (1.0 + rel_total(rk, J, ctx) - S))


def k_relative_P(rk, J, k, ctx):
    """relative_P@k = relevant in the top k / min(k, R) (0 when R = 0)."""
    R = rel_total(rk, J, ctx)
    return safe(rk.count_within(rel_index(rk, ctx), k), np.minimum(float(k), R))


def k_success(rk, J, k, ctx):
    """success@k = 1 if a relevant document is in the top k, else 0."""
    return (rk.count_within(rel_index(rk, ctx), k) > 0).astype(np.float64)


def k_Rprec_mult(rk, J, x, ctx):
    """Precision at c = (long)(x R + 0.9) documents; when c > num_ret, num_rel_ret / c (m_Rprec_mult.c)."""
    R = rel_total(rk, J, ctx)
    c = np.floor(float(x) * R + 0.9)
    idx = rel_index(rk, ctx)
    nrr = rk.count_within(idx, np.inf)
    beyond = c > rk.length
    return np.where(beyond, safe(nrr, c), safe(rk.count_within(idx, c), c))


def _recall_count(x: float, R: np.ndarray, rounding: str) -> np.ndarray:
    v = float(x) * R
    if rounding == "legacy":
        return np.floor(v + 0.9)
    return np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5))  # C lround: half away from zero


def _iprec_table(rk, ctx):
    """(rows x max relevant retrieved) interpolated precision at the j-th relevant document:
    max over relevant documents j' >= j of j' / rank(j') (Int_Prec(X) = max Prec(Y), Y >= X);
    built once per ranking and level for every recall point."""
    return rk.memo(("iprec table", float(ctx.rel_level)), lambda: _make_iprec_table(rk, ctx))


def _make_iprec_table(rk, ctx):
    idx = rel_index(rk, ctx)
    r = rk.row[idx]
    nrr = np.bincount(r, minlength=rk.nrows)[: rk.nrows]
    width = int(nrr.max()) if len(nrr) else 0
    tab = np.zeros((rk.nrows, max(width, 1)))
    if len(idx):
        j = np.arange(1, len(idx) + 1) - np.searchsorted(r, np.arange(rk.nrows))[r]  # 1-based number of the relevant document
        tab[r, j - 1] = j / (rk.pos[idx] + 1.0)
        tab = np.maximum.accumulate(tab[:, ::-1], axis=1)[:, ::-1]
    return tab, nrr


def _iprec(rk, J, xs, ctx):
    tab, nrr = _iprec_table(rk, ctx)
    R = rel_total(rk, J, ctx)
    # --trec-nan: with nothing ranked (after -J; a -c placeholder survives unless -J drops it)
    # trec_eval's precision num_rel_ret / num_ret is 0/0, which it assigns to every point with c = 0
    empty = (rk.length == 0) & (present_mask(rk, ctx) | ctx.judged_only) if ctx.trec_nan else None
    out = []
    for x in xs:
        c = _recall_count(x, R, ctx.rounding)
        # c = 0 takes the value at the first relevant document (the loop ends there, m_iprec_at_recall.c)
        col = np.clip(np.maximum(c, 1) - 1, 0, tab.shape[1] - 1).astype(np.int64)
        v = tab[np.arange(rk.nrows), col]
        v = np.where((c <= nrr) & (nrr > 0), v, 0.0)
        out.append(v if empty is None else np.where(empty & (c == 0), np.nan, v))
    return out


def k_iprec_at_recall(rk, J, x, ctx):
    """Interpolated precision at recall x: max precision at any rank at or after the c-th relevant
    document, c = lround(x R) (trec_eval 10; 'legacy' rounding: (long)(x R + 0.9)); 0 if c > num_rel_ret."""
    return _iprec(rk, J, [x], ctx)[0]


def k_11pt_avg(rk, J, xs, ctx):
    """Mean of iprec_at_recall over the recall points xs (default 0.0, 0.1, ..., 1.0)."""
    vals = _iprec(rk, J, list(xs), ctx)
    return np.sum(vals, axis=0) / len(xs)


# --------------------------------------------------------------------------- incomplete judgements

def _bpref(rk, J, ctx):
    c = codes(rk)
    rel = c >= ctx.rel_level
    nonrel = (c >= 0) & (c < ctx.rel_level)
    nb = running_sum(rk, nonrel)  # nonrelevant judged at or above (a relevant doc is not one)
    R = rel_total(rk, J, ctx)[rk.row]
    Nn = nonrel_count(J, ctx.rel_level)[rk.base][rk.row]
    term = np.where(nb > 0, 1.0 - safe(np.minimum(nb, R), np.minimum(Nn, R)), 1.0)
    return safe(rk.rowsum(np.where(rel, term, 0.0)), rel_total(rk, J, ctx))


def k_bpref(rk, J, param, ctx):
    """bpref = (1/R) sum over relevant retrieved r of 1 - min(n_r, R) / min(N, R), n_r the judged
    nonrelevant documents above r, N all judged nonrelevant (Buckley & Voorhees 2004; m_bpref.c)."""
    return _bpref(rk, J, ctx)


def k_infAP(rk, J, param, ctx):
    """infAP (Yilmaz & Aslam 2006; m_infap.c): for a relevant document at 0-based rank j > 0,
    1/(j+1) + (j/(j+1)) ((r + n + u)/j) ((r + eps)/(r + n + 2 eps)) with r, n, u the relevant,
    judged nonrelevant and pooled-unjudged documents above it; 1 at rank 0; summed over / R."""
    c = codes(rk)
    rel = c >= ctx.rel_level
    r = running_sum(rk, rel) - rel
    n = running_sum(rk, (c >= 0) & (c < ctx.rel_level))
    u = running_sum(rk, c == UNJUDGED)
    fj = rk.pos.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r + n + u) / fj) * \
            ((r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON))
    term = np.where(rk.pos == 0, 1.0, term)
    return safe(rk.rowsum(np.where(rel, term, 0.0)), rel_total(rk, J, ctx))


def k_unj(rk, J, k, ctx):
    """Fraction of the top k that is unjudged (qrels-absent or negative grade), always over k."""
    v = at_depth(rk, codes(rk) < 0, k) / float(k)
    return np.where(present_mask(rk, ctx), v, 0.0)


def e_relative_P(pool, J, k, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    return safe(safe(P * depth_of(n, k), n), np.minimum(float(k), R))


def e_success(pool, J, k, ctx):
    """1 - C(n-P, m)/C(n, m) = 1 - prod_{i<m} (n-P-i)/(n-i)."""
    n, P, *_ = pool_counts(pool, J, ctx)
    m = depth_of(n, k)
    none = np.zeros_like(n)
    ok = (n - P >= m) & (n > 0)
    none[ok] = np.exp(gammaln(n[ok] - P[ok] + 1) - gammaln(n[ok] - P[ok] - m[ok] + 1)
                      - gammaln(n[ok] + 1) + gammaln(n[ok] - m[ok] + 1))  # math.lgamma: no scipy import
    return np.where(n > 0, 1.0 - none, 0.0)


def e_Rprec_mult(pool, J, x, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    c = np.floor(float(x) * R + 0.9)
    return np.where(c == 0, 0.0, np.where(c > n, safe(P, c), safe(P, n)))


def e_bpref(pool, J, param, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    t = np.minimum(Q, R)
    emin = (t * (t + 1) / 2.0 + (Q - t) * R) / (Q + 1.0)
    denom = np.minimum(N, R)
    per = np.where(denom > 0, 1.0 - safe(emin, denom), 1.0)
    return safe(P * per, R)


def gammaln(x):
    """log Gamma elementwise (math.lgamma over one value per query: no scipy import for it)."""
    return np.array([math.lgamma(v) for v in np.asarray(x, dtype=np.float64).ravel()]).reshape(np.shape(x))

_INFAP_BLOCK = 4_000_000  # elements of one (queries x j x s) block


def e_infAP(pool, J, param, ctx):
    """Exact E[infAP]; see the module docstring.  Computed as a sum over s (judged documents above
    the scored relevant one: uniform on 0..K, K = P-1+Q, its place among the judged being uniform)
    and w (documents above it that are pooled-unjudged or not in the qrels: beta-binomial
    BB(W; s+1, K+1-s), W = U+V), of (1 + (s + w (1 - V/W)) (s (P-1)/K + eps)/(s + 2 eps)) / (s + w + 1):
    the infAP term at rank j = s + w with E[r | s] = s (P-1)/K and E[v | w] = w V/W."""
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    eps = INFAP_EPSILON
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
            # log BB(0) = betaln(a, W + b) - betaln(a, b) = lgamma(W+b) - lgamma(b) - lgamma(K+2+W) + lgamma(K+2),
            # and with j = K - s: lgamma(W+1+j) - lgamma(1+j) = lgamma(W+1) + sum_{i<=j} log((i+W)/i)
            rise = math.lgamma(W + 1) + np.concatenate([[0.0], np.cumsum(np.log1p(W / np.arange(1.0, K + 1)))])
            log0 = (rise[::-1] - math.lgamma(K + 2 + W) + math.lgamma(K + 2))[:, None]
            pw = np.exp(np.concatenate([log0, log0 + np.cumsum(step, axis=1)], axis=1))
        else:
            pw = np.ones((K + 1, 1))
        er = s * (PP - 1) / K if K else np.zeros_like(s)
        judged_above = s + w * (1.0 - (VV / W if W else 0.0))  # j - E[v]
        term = (1.0 + judged_above * (er + eps) / (s + 2 * eps)) / (s + w + 1.0)
        out[q] = PP * np.sum(pw * term) / (K + 1.0) / R[q]
    return out
