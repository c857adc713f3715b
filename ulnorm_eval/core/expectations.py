"""Bounds of a measure over the permutations of a query's pool, and the variants built on them.

For each query the *pool* is the set of documents a random ranker permutes (``--pool``): the judged
documents (default; a property of the query, identical for every run), the run's retrieved
documents (unjudged ones gain nothing), or their union.  With n pool documents, gains g, P of them
relevant at the relevance level, R relevant judged documents, k the cutoff (none = n),
m = min(k, n) and H_m = sum_{i<=m} 1/i:

* IUB: the measure of the pool sorted by gain, descending; WLB: sorted ascending (seed 004 §3.1,
  eqs. 3.2 and 3.4 are WLB for DCG and AP).
* E: the exact expectation under a uniformly random permutation (seed 000 RLB, §4; seed 003 REB,
  §5.1).  Every formula below follows from linearity of expectation and
  Pr[rank i relevant] = P/n, Pr[ranks i != j both relevant] = P(P-1)/(n(n-1)):

  - DCG@k: mean(g) * sum_{i<=m} 1/log2(i+1) (seed 000 eq. 7 / seed 003 eq. 6.1, summed to m, not
    k: past the pool's end there are no documents); nDCG@k: that / IDCG@k (seed 004 eq. 3.7);
  - SP@k: (P/n) H_m + P(P-1)/(n(n-1)) (m - H_m).  Seed 000 §4.5.1 gets k (P/n)^2 by assuming
    precision independent of relevance, which is false (rank i's own relevance is part of P@i);
    AP@k = E[SP@k] / R (for P = R = n' this is seed 004 Table 3.3 and Bestgen's E[AP]);
  - P@k: (P/n) m/k;  R@k: (P/n) m/R;  Rprec: (P/n) min(R, n)/R;
  - RR@k: sum_{i<=m} (1/i) C(n-P, i-1)/C(n, i-1) * P/(n-i+1)  (first relevant at rank i);
  - RBP(p)@k: (1-p) mean(g) sum_{i<=m} p^(i-1) = mean(g) (1 - p^m)  (seed 004 eq. 2.4).

  ``expectation='paper'`` keeps the seeds' formulas verbatim to reproduce their tables:
  E[SP@k] = k (P/n)^2 and IUB[SP@k] = k (seed 000 §3.2, §4.5.1; AP@k = SP@k/R follows, so
  E[AP@k] = k (P/n)^2/R and IUB[AP@k] = k/R), and E[DCG@k] summed to k even when k > n (eq. 7).

* DB: Pr[M(random permutation) <= A] (seed 004 eq. 3.12, Algorithm 1: ties count as "lower"),
  exact by enumerating the distinct arrangements of the pool's gain classes when there are at most
  ``ENUMERATE_LIMIT``, otherwise Monte Carlo over ``permutations`` seeded shuffles, with the
  binomial standard error.
"""
from __future__ import annotations

import numpy as np

from .kernels import Judgements, compute, discount
from .normalise import NORMALISERS, undefined_mask
from .permutations import ENUMERATE_LIMIT, Keys, db_values, permutation_values
from .pools import Pool, make_pool, pool_gains, rel_of

__all__ = ["Pool", "make_pool", "expectation", "ideal", "worst", "expected_sp", "expected_rr",
           "permutation_values", "db_values", "variant_values", "ENUMERATE_LIMIT"]

_BATCH_ELEMENTS = 2_000_000  # memory bound of one vectorised block (expected_rr)


def _m(pool: Pool, k) -> np.ndarray:
    return pool.n if k is None else np.minimum(pool.n, float(k))


def _disc_prefix(maxm: int) -> np.ndarray:
    """D[m] = sum_{i<=m} 1/log2(i+1), D[0] = 0."""
    return np.concatenate(([0.0], np.cumsum(discount(np.arange(max(maxm, 0))))))


def _harmonic(maxm: int) -> np.ndarray:
    return np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, max(maxm, 0) + 1))))


def _safe(num, den):
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64))
    out = np.zeros(num.shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def expected_sp(n, P, m, paper: bool = False, k=None):
    """E[SP@k] for a random permutation of n documents, P relevant, m = min(k, n).

    Exact: sum_{i<=m} E[rel_i * (1/i) sum_{j<=i} rel_j] = (P/n) H_m + P(P-1)/(n(n-1)) (m - H_m).
    ``paper``: seed 000 §4.5.1's k (P/n)^2 (k = n without a cutoff).
    """
    n = np.asarray(n, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    p1 = _safe(P, n)
    if paper:
        kk = n if k is None else np.full_like(n, float(k))
        return kk * p1 ** 2
    H = _harmonic(int(m.max()) if m.size else 0)[m.astype(np.int64)]
    p2 = _safe(P * (P - 1.0), n * (n - 1.0))
    return p1 * H + p2 * (m - H)


def expected_rr(n, P, m):
    """E[RR@k] = sum_{i<=m} (1/i) Pr[first relevant at rank i].

    Pr[first relevant at rank i] = C(n-P, i-1)/C(n, i-1) * P/(n-i+1): the first i-1 ranks hold
    non-relevant documents, then a relevant one.  Ranks past n-P+1 cannot hold the first relevant
    document, so each query needs L = min(m, n-P+1) terms; the survival products are one cumprod
    over a (queries x max L) block, in memory-bounded chunks of queries.
    """
    n = np.asarray(n, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    L = np.where(P > 0, np.minimum(m, n - P + 1), 0).astype(np.int64)
    out = np.zeros(n.shape)
    width = int(L.max()) if L.size else 0
    if width == 0:
        return out
    rank = np.arange(1, width + 1, dtype=np.float64)
    step = max(1, _BATCH_ELEMENTS // width)
    for s in range(0, len(n), step):
        nn, PP, LL = n[s:s + step, None], P[s:s + step, None], L[s:s + step, None]
        inside = rank <= LL
        left = np.where(inside, nn - rank + 1.0, 1.0)  # documents not yet placed at rank i
        nonrel = np.where(inside, (left - PP) / left, 1.0)  # Pr[rank i non-relevant | first i-1 were]
        survive = np.cumprod(np.concatenate([np.ones((len(nn), 1)), nonrel[:, :-1]], axis=1), axis=1)
        terms = np.where(inside, survive * PP / left / rank, 0.0)
        # a sequential sum (cumsum), not np.sum's pairwise one, whose blocking depends on the
        # batch width: a query's E must not change with the other queries evaluated beside it
        out[s:s + step] = np.cumsum(terms, axis=1)[:, -1]
    return out


def expectation(pool: Pool, J: Judgements, m, rel_level, paper: bool = False) -> np.ndarray:
    """Exact E[M] per query for a native measure (see the module docstring for each formula)."""
    k = m.cutoff
    mm_ = _m(pool, k)
    fam = m.family
    rel = rel_of(m, rel_level)
    gain = pool_gains(pool, J, m, rel_level)
    if fam in ("DCG", "nDCG", "RBP"):
        mean_gain = _safe(pool.rowsum(gain), pool.n)
        if fam == "RBP":
            return mean_gain * (1.0 - np.power(m.get("p"), mm_))  # (1-p) sum_{i<=m} p^(i-1)
        depth = (np.full_like(pool.n, float(k)) if (paper and k is not None) else mm_).astype(np.int64)
        e = mean_gain * _disc_prefix(int(depth.max()) if depth.size else 0)[depth]
        return e if fam == "DCG" else _safe(e, J.ideal_dcg(m, rel))
    P = pool.rowsum(gain)  # binary families: gain = 1 for a relevant document
    R = J.n_relevant(rel)
    frac = _safe(P, pool.n)
    if fam == "SP":
        return expected_sp(pool.n, P, mm_, paper, k)
    if fam == "AP":
        return _safe(expected_sp(pool.n, P, mm_, paper, k), R)
    if fam == "P":
        return frac * mm_ / k
    if fam == "R":
        return _safe(frac * mm_, R)
    if fam == "Rprec":
        return _safe(frac * np.minimum(R, pool.n), R)
    if fam == "RR":
        return expected_rr(pool.n, P, mm_)
    raise KeyError(fam)


def ideal(pool: Pool, J: Judgements, m, rel_level, paper: bool = False) -> np.ndarray:
    """IUB: M of the pool sorted by gain, descending.

    ``paper``: IUB[SP@k] = k (seed 000 §3.2, "a precision value of 1.0 for every position"), and
    so IUB[AP@k] = k/R; exact only when the query has at least k relevant documents.
    """
    if paper and m.family in ("SP", "AP") and m.cutoff is not None:
        k = np.full(pool.nq, float(m.cutoff))
        return k if m.family == "SP" else _safe(k, J.n_relevant(rel_of(m, rel_level)))
    return compute(pool.ordered(pool_gains(pool, J, m, rel_level), True), J, m, rel_level)


def worst(pool: Pool, J: Judgements, m, rel_level) -> np.ndarray:
    """WLB: M of the pool sorted by gain, ascending (seed 004 §3.1, eqs. 3.2, 3.4)."""
    return compute(pool.ordered(pool_gains(pool, J, m, rel_level), False), J, m, rel_level)


# --------------------------------------------------------------------------- variants

def _rng(seed: int, J: Judgements) -> Keys:
    """The same keys for every metric: its Monte Carlo numbers do not depend on which other
    metrics were requested, and metrics on the same pool and depth see the same permutations
    (common random numbers), so DB(SP@k) = DB(AP@k) holds for the estimates too."""
    return Keys(seed, J.qids)


def variant_values(rr, J: Judgements, metrics: list, plain: dict, options):
    """Values of every requested variant metric for one ranked run.

    Returns (values, standard errors, undefined counts), each keyed by Metric.  A query is
    undefined for every normalisation when all rankings of its pool score alike (I = E = W), and
    for EB also when E = 0 (see :mod:`ulnorm_eval.normalise`); ``options.undefined`` then scores it
    0 ('zero') or leaves it NaN, out of the mean ('skip').
    """
    rel_level = options.rel_level
    paper = options.expectation == "paper"
    pool = make_pool(options.pool, rr.ranking, J)
    values, stderr, undefined = {}, {}, {}
    bounds = {}

    def need(meas):
        if meas not in bounds:
            if meas.native:
                bounds[meas] = {"E": expectation(pool, J, meas, rel_level, paper),
                                "IUB": ideal(pool, J, meas, rel_level, paper),
                                "WLB": worst(pool, J, meas, rel_level), "se": None}
            else:
                from .irm_adapter import foreign_bounds
                bounds[meas] = foreign_bounds(pool, J, meas, options, _rng(options.seed, J))
        return bounds[meas]

    for metric in metrics:
        meas, v = metric.measure, metric.variant
        A = plain[meas]
        b = need(meas)
        if v in ("E", "IUB", "WLB"):
            values[metric] = b[v]
            if v == "E" and b.get("se") is not None:
                stderr[metric] = b["se"]
            continue
        if v == "DB":
            scorer = None
            if not meas.native:
                from .irm_adapter import foreign_scorer
                scorer = foreign_scorer(J, meas, options)
            und = undefined_mask(b["IUB"], b["E"], b["WLB"])
            val, se = db_values(pool, J, meas, rel_level, A, options.permutations, _rng(options.seed, J),
                                scorer, active=~und)
            stderr[metric] = se
        else:
            val, und = NORMALISERS[v](A, b["IUB"], b["E"], b["WLB"])
        undefined[metric] = int(und.sum())
        values[metric] = np.where(und, 0.0 if options.undefined == "zero" else np.nan, val)
    return values, stderr, undefined
