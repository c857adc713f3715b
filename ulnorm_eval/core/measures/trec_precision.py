"""trec_eval's precision-like families beyond P, R, AP, Rprec and the counts of :func:`.precision.counted`
(yaap, iprec_at_recall, 11pt_avg), the incomplete-judgement ones (bpref, infAP, unj), and the closed-form
expectations of relative_P, success, Rprec_mult, bpref and infAP; registered in :mod:`.trec`."""
from __future__ import annotations

import math

import numpy as np

from .common import (codes, context, count_above, floats, nonrel_count, nonrel_index, pool_counts, present_mask, rel_index,
                     rel_total, safe, unjudged_index)
from .precision import relevant_docs, sum_precision

INFAP_EPSILON = 0.00001  # trec_eval.h
RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # iprec_at_recall, 11pt_avg


# --------------------------------------------------------------------------- precision family


def k_yaap(ranking, judgements, measure, level):
    """yaap = log((1 + S) / (1 + R - S)), S = sum over relevant retrieved documents of the precision
    at their rank (Robertson 2012, 'On Smoothing Average Precision'; m_yaap.c)."""
    idx, R = relevant_docs(ranking, judgements, measure, level, trec=True)
    S = sum_precision(ranking, idx, ("trec", context(measure, level).rel_level))
    return np.log((1.0 + S) / (1.0 + R - S))


def _recall_count(recall: float, R: np.ndarray, rounding: str) -> np.ndarray:
    values = float(recall) * R
    if rounding == "legacy":
        return np.floor(values + 0.9)
    return np.where(values >= 0, np.floor(values + 0.5), np.ceil(values - 0.5))  # C lround: half away from zero


def _iprec_table(ranking, ctx):
    """(rows x max relevant retrieved) interpolated precision at the j-th relevant document:
    max over relevant documents j' >= j of j' / rank(j') (Int_Prec(X) = max Prec(Y), Y >= X);
    built once per ranking and level for every recall point."""
    def make():
        idx = rel_index(ranking, ctx)
        row = ranking.row[idx]
        nrr = np.bincount(row, minlength=ranking.nrows)[: ranking.nrows]
        tab = np.zeros((ranking.nrows, max(int(nrr.max()) if len(nrr) else 0, 1)))
        if len(idx):
            rank_among_rel = np.arange(1, len(idx) + 1) - np.searchsorted(row, np.arange(ranking.nrows))[row]  # 1-based
            tab[row, rank_among_rel - 1] = rank_among_rel / (ranking.pos[idx] + 1.0)
            tab = np.maximum.accumulate(tab[:, ::-1], axis=1)[:, ::-1]
        return tab, nrr
    return ranking.memo(("iprec table", float(ctx.rel_level)), make)


def _nothing_ranked(ranking, ctx):
    """--trec-nan: the rows with nothing ranked (after -J; a -c placeholder survives unless -J drops
    it), whose precision num_rel_ret / num_ret trec_eval computes as 0/0."""
    return (ranking.length == 0) & (present_mask(ranking, ctx) | ctx.judged_only)


def k_iprec_at_recall(ranking, judgements, measure, level):
    """Interpolated precision at recall x: max precision at any rank at or after the c-th relevant
    document, c = lround(x R) (trec_eval 10; 'legacy' rounding: (long)(x R + 0.9)); 0 if c > num_rel_ret."""
    ctx = context(measure, level)
    tab, nrr = _iprec_table(ranking, ctx)
    count = _recall_count(measure.get("recall"), rel_total(ranking, judgements, ctx), ctx.rounding)
    # c = 0 takes the value at the first relevant document (the loop ends there, m_iprec_at_recall.c)
    col = np.clip(np.maximum(count, 1) - 1, 0, tab.shape[1] - 1).astype(np.int64)
    values = np.where((count <= nrr) & (nrr > 0), tab[np.arange(ranking.nrows), col], 0.0)
    return np.where(_nothing_ranked(ranking, ctx) & (count == 0), np.nan, values) if ctx.trec_nan else values


def k_11pt_avg(ranking, judgements, measure, level):
    """Mean of iprec_at_recall over the recall points xs (default 0.0, 0.1, ..., 1.0).

    Summed as m_11pt_avg.c sums it, from the last point to the first: a point whose count
    c = lround(x R) lies above those its loop has left (points out of order, or c = 0) takes, with
    every point before it, the value at the first relevant document, and the last points with c above
    num_rel_ret add nothing (docs/trec_eval.md)."""
    recalls = floats(measure.get("points"), RECALL_POINTS)
    ctx = context(measure, level)
    tab, nrr = _iprec_table(ranking, ctx)
    R = rel_total(ranking, judgements, ctx)
    rows = np.arange(ranking.nrows)
    first = np.where(nrr > 0, tab[:, 0], 0.0)
    if ctx.trec_nan:
        first = np.where(_nothing_ranked(ranking, ctx), np.nan, first)
    reached, total = nrr.astype(np.float64), np.zeros(ranking.nrows)
    skipping, stuck = np.ones(ranking.nrows, dtype=bool), np.zeros(ranking.nrows, dtype=bool)
    for recall in reversed(list(recalls)):
        count = _recall_count(recall, R, ctx.rounding)
        skipping &= count > nrr
        taken = ~skipping & ~stuck & (count >= 1) & (count <= reached)
        stuck |= ~skipping & ~taken
        col = np.clip(count - 1, 0, tab.shape[1] - 1).astype(np.int64)
        total = total + np.where(taken, tab[rows, col], np.where(stuck, first, 0.0))
        reached = np.where(taken, count, reached)
    return total / len(recalls)


# --------------------------------------------------------------------------- incomplete judgements

def k_bpref(ranking, judgements, measure, level):
    """bpref = (1/R) sum over relevant retrieved r of 1 - min(n_r, R) / min(N, R), n_r the judged
    nonrelevant documents above r, N all judged nonrelevant (Buckley & Voorhees 2004; m_bpref.c)."""
    ctx = context(measure, level)
    # once per ranking, judgements and level (Bpref and GMBpref share it); terms at the relevant
    # retrieved documents only, summed in rank order as the whole ranking's row sum adds them

    def make():
        idx = rel_index(ranking, ctx)
        rows = ranking.row[idx]
        nonrel_above = count_above(ranking, idx, nonrel_index(ranking, ctx))  # judged nonrelevant above
        R = rel_total(ranking, judgements, ctx)[rows]
        n_nonrel = nonrel_count(judgements, ctx.rel_level)[ranking.base][rows]
        term = np.where(nonrel_above > 0, 1.0 - safe(np.minimum(nonrel_above, R), np.minimum(n_nonrel, R)), 1.0)
        return judgements, safe(ranking.sum_within(idx, term), rel_total(ranking, judgements, ctx))
    # the memo holds the Judgements too: while it does, no other object can take its id
    return ranking.memo(("trec bpref", float(ctx.rel_level), id(judgements)), make)[1]


def k_infAP(ranking, judgements, measure, level):
    """infAP (Yilmaz & Aslam 2006; m_infap.c): for a relevant document at 0-based rank j > 0,
    1/(j+1) + (j/(j+1)) ((r + n + u)/j) ((r + eps)/(r + n + 2 eps)) with r, n, u the relevant,
    judged nonrelevant and pooled-unjudged documents above it; 1 at rank 0; summed over / R."""
    ctx = context(measure, level)
    # (the docstring is the measure's formula in `ulnorm-eval measures`) Terms only at the relevant
    # documents, summed in rank order as the whole ranking's row sum adds them (the others' terms are 0.0)
    idx = rel_index(ranking, ctx)
    rel_above = count_above(ranking, idx, idx)
    nonrel_above = count_above(ranking, idx, nonrel_index(ranking, ctx))
    unjudged_above = count_above(ranking, idx, unjudged_index(ranking))
    position = ranking.pos[idx]
    above = position.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (above + 1.0) + (above / (above + 1.0)) * ((rel_above + nonrel_above + unjudged_above) / above) * \
            ((rel_above + INFAP_EPSILON) / (rel_above + nonrel_above + 2 * INFAP_EPSILON))
    term = np.where(position == 0, 1.0, term)
    return safe(ranking.sum_within(idx, term), rel_total(ranking, judgements, ctx))


def k_unj(ranking, judgements, measure, level):
    """Fraction of the top k that is unjudged (qrels-absent or negative grade), always over k."""
    k = measure.cutoff
    unjudged = ranking.memo(("trec code below 0",), lambda: np.flatnonzero(codes(ranking) < 0))  # every cutoff's
    values = ranking.count_within(unjudged, k) / float(k)
    return np.where(present_mask(ranking, context(measure, level)), values, 0.0)


def e_success(random_pool):
    """1 - C(n-P, m)/C(n, m) = 1 - prod_{i<m} (n-P-i)/(n-i)."""
    k = random_pool.measure.cutoff
    n, P, *_ = pool_counts(random_pool)
    m = np.minimum(n, float(k))
    none = np.zeros_like(n)
    possible = (n - P >= m) & (n > 0)
    others, total, depth = (n - P)[possible], n[possible], m[possible]
    none[possible] = np.exp(gammaln(others + 1) - gammaln(others - depth + 1) - gammaln(total + 1) + gammaln(total - depth + 1))
    return np.where(n > 0, 1.0 - none, 0.0)


def e_Rprec_mult(random_pool):
    """c = (long)(x R + 0.9): 0 if c = 0; P/n if c <= n; P/c if c > n (every pool document retrieved)."""
    mult = random_pool.measure.get("mult")
    n, P, Q, U, V, R, N = pool_counts(random_pool)
    count = np.floor(float(mult) * R + 0.9)
    return np.where(count == 0, 0.0, np.where(count > n, safe(P, count), safe(P, n)))


def e_bpref(random_pool):
    """The judged nonrelevant documents above a relevant one are uniform on 0..Q (its place among them
    is), so E = (P/R)(1 - E[min(X, R)]/min(N, R)), E[min(X, R)] = (t(t+1)/2 + (Q-t)R)/(Q+1), t = min(Q, R)
    (Buckley & Voorhees 2004's bpref)."""
    n, P, Q, U, V, R, N = pool_counts(random_pool)
    n_counted = np.minimum(Q, R)
    emin = (n_counted * (n_counted + 1) / 2.0 + (Q - n_counted) * R) / (Q + 1.0)
    denom = np.minimum(N, R)
    per = np.where(denom > 0, 1.0 - safe(emin, denom), 1.0)
    return safe(P * per, R)


gammaln = np.vectorize(math.lgamma, otypes=[np.float64])  # log Gamma, one value per query: no scipy import for it


def reciprocal_rank_means(K: int, W: int) -> np.ndarray:
    """M(s) = E[1/X_s] for s = 0..K, X_s = s + 1 + w the 1-based rank of the (s+1)-th of K+1 judged
    documents shuffled uniformly with W others, w ~ BetaBinomial(W; s+1, K+1-s), by the recurrence
    (s+1)(W+s+2) M(s+1) = (s+1)(s-K) M(s) + K+1 from the pivot where forward and backward steps stop
    amplifying the error, summed directly there (derivation and stability: docs/bounds.md, "infAP")."""
    s = np.arange(K + 1, dtype=np.float64)
    if W == 0:
        return 1.0 / (s + 1.0)
    pivot = min(max(0, -(-(K - W - 2) // 2)), K)
    logf = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1.0, K + W + 2)))])  # log 0! .. log (K+W+1)!
    w = np.arange(W + 1)
    # BetaBinomial(w; W, pivot+1, K+1-pivot) = C(w+pivot, w) C(W-w+K-pivot, W-w) / C(W+K+1, W)
    log_pmf = (logf[w + pivot] - logf[pivot] - logf[w] + logf[W - w + K - pivot] - logf[K - pivot] - logf[W - w]
               - logf[W + K + 1] + logf[K + 1] + logf[W])
    out = np.empty(K + 1)
    out[pivot] = float(np.sum(np.exp(log_pmf) / (pivot + w + 1.0)))
    value = out[pivot]
    for index in range(pivot, K):  # forward: |s-K| <= W+s+2 from the pivot on
        value = ((index - K) * value + (K + 1) / (index + 1.0)) / (index + W + 2.0)
        out[index + 1] = value
    value = out[pivot]
    for index in range(pivot - 1, -1, -1):  # backward below it
        value = ((index + W + 2.0) * value - (K + 1) / (index + 1.0)) / (index - K)
        out[index] = value
    return out


def e_infAP(random_pool):
    """Exact E[infAP] under a uniformly random ranking of the pool (derivation: docs/bounds.md, "infAP"):
    (P/R) mean over s = 0..K of c e_s + (1 + e_s ((1-c) s - c)) M(s), K = P-1+Q, c = U/W (W = U+V),
    e_s = (s (P-1)/K + eps)/(s + 2 eps), M(s) = E[1/(s + w + 1) | s] (:func:`reciprocal_rank_means`)."""
    n, P, Q, U, V, R, N = pool_counts(random_pool)
    eps = INFAP_EPSILON
    out = np.zeros(len(n))
    for query in np.flatnonzero((P > 0) & (R > 0)):
        P_q, Q_q, U_q, V_q = (int(count) for count in (P[query], Q[query], U[query], V[query]))
        K, W = P_q - 1 + Q_q, U_q + V_q
        s = np.arange(K + 1, dtype=np.float64)
        precision = ((s * (P_q - 1) / K if K else 0.0) + eps) / (s + 2 * eps)  # e_s
        pooled = U_q / W if W else 0.0  # c
        mean = pooled * precision + (1.0 + precision * ((1.0 - pooled) * s - pooled)) * reciprocal_rank_means(K, W)
        out[query] = P_q * np.sum(mean) / (K + 1.0) / R[query]
    return out
