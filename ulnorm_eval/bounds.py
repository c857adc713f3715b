"""Bounds of a measure over the permutations of a query's pool, and the variants built on them.

For each query the *pool* is the set of documents a random ranker permutes (``--pool``): the judged
documents (default; a property of the query, identical for every run), the run's retrieved
documents (unjudged = grade 0), or their union.  With n pool documents, P of them relevant at the
relevance level, R relevant judged documents, k the cutoff (none = n), m = min(k, n) and
H_m = sum_{i<=m} 1/i:

* IUB: the measure of the pool sorted by gain, descending; WLB: sorted ascending (seed 004 §3.1).
* E: the exact expectation under a uniformly random permutation (seed 000 RLB, seed 003 REB):

  - DCG@k: mean(gain) * sum_{i<=m} 1/log2(i+1) (linearity; seed 000 eq. 7 summed to m, not k);
    nDCG@k: that / IDCG@k;
  - SP@k: (P/n) H_m + P(P-1)/(n(n-1)) (m - H_m) (E[rel_i rel_j] = P(P-1)/(n(n-1)) for i != j;
    seed 000's k (P/n)^2 assumes precision independent of relevance and is only kept under
    ``expectation='paper'``); AP@k: E[SP@k] / R;
  - P@k: (P/n) m/k;  R@k: (P/n) m/R;  Rprec: (P/n) min(R, n)/R;
  - RR@k: sum_{i<=m} (1/i) C(n-P, i-1)/C(n, i-1) * P/(n-i+1);
  - RBP(p)@k: (1-p) mean(gain) sum_{i<=m} p^(i-1).

* DB: Pr[M(random permutation) <= A] (seed 004 eq. 3.12), by enumeration of the distinct
  arrangements when there are few (<= ``ENUMERATE_LIMIT``), otherwise Monte Carlo.
"""
from __future__ import annotations

import math

import numpy as np

from .measures import Judgements, Ranking, compute, discount, gains_for
from .normalise import NORMALISERS

__all__ = ["Pool", "make_pool", "expectation", "ideal", "worst", "variant_values", "ENUMERATE_LIMIT"]

ENUMERATE_LIMIT = 5040  # 7!: distinct arrangements enumerated exactly for DB
_MC_BATCH_ELEMENTS = 2_000_000


class Pool:
    """Per-query pool documents as grades grouped by query (order irrelevant)."""

    def __init__(self, row: np.ndarray, grade: np.ndarray, nq: int):
        order = np.argsort(row, kind="stable")
        self.row, self.grade, self.nq = row[order], grade[order], nq
        self.n = np.bincount(self.row, minlength=nq)[:nq].astype(np.float64)

    def rowsum(self, w) -> np.ndarray:
        return np.bincount(self.row, weights=w, minlength=self.nq)[: self.nq]

    def ordered(self, key: np.ndarray, descending: bool) -> Ranking:
        order = np.lexsort((-key if descending else key, self.row))
        return Ranking.from_sorted(self.row[order], self.grade[order], self.nq)


def make_pool(kind: str, rk: Ranking, J: Judgements) -> Pool:
    """The pool of every query: 'qrels' (judged documents), 'run' (retrieved) or 'union'."""
    if kind == "qrels":
        return Pool(J.row, J.grade, J.nq)
    if kind == "run":
        return Pool(rk.row, rk.grade, J.nq)
    if kind == "union":
        extra = ~rk.judged if rk.judged is not None else np.zeros(len(rk.row), bool)
        return Pool(np.concatenate([J.row, rk.row[extra]]), np.concatenate([J.grade, rk.grade[extra]]), J.nq)
    raise ValueError("pool must be 'qrels', 'run' or 'union'")


def _rel(m, rel_level):
    r = m.get("rel")
    return rel_level if r is None else r


def _m(pool: Pool, k) -> np.ndarray:
    return pool.n if k is None else np.minimum(pool.n, float(k))


def _disc_prefix(maxm: int) -> np.ndarray:
    """D[m] = sum_{i<=m} 1/log2(i+1), D[0] = 0."""
    return np.concatenate(([0.0], np.cumsum(discount(np.arange(max(maxm, 0))))))


def _harmonic(maxm: int) -> np.ndarray:
    return np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, max(maxm, 0) + 1))))


def _safe(num, den):
    out = np.zeros(np.shape(num))
    np.divide(num, den, out=out, where=den > 0)
    return out


def expected_sp(n, P, m, paper: bool = False, k=None):
    """E[SP@k] under a random permutation of n documents with P relevant, m = min(k, n).

    Exact: (P/n) H_m + P(P-1)/(n(n-1)) (m - H_m).  ``paper``: seed 000's k (P/n)^2.
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
    """E[RR@k] = sum_{i<=m} (1/i) Pr(first relevant at rank i), computed by a running product."""
    n = np.asarray(n, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    out = np.zeros_like(n)
    surv = (P > 0).astype(np.float64)  # Pr(no relevant in the first i-1), restricted to P > 0
    i = 1
    top = int(m.max()) if m.size else 0
    while i <= top and surv.any():
        left = n - (i - 1)
        hit = np.where((i <= m) & (left > 0), _safe(P, left), 0.0)
        out += surv * hit / i
        surv = surv * np.where(left > 0, _safe(left - P, left), 0.0)
        surv[i >= m] = 0.0
        i += 1
    return out


def expectation(pool: Pool, J: Judgements, m, rel_level, paper: bool = False) -> np.ndarray:
    """Exact E[M] per query for a native measure (see the module docstring for each formula)."""
    k = m.cutoff
    mm_ = _m(pool, k)
    fam = m.family
    rel = _rel(m, rel_level)
    if fam in ("DCG", "nDCG", "RBP"):
        mean_gain = _safe(pool.rowsum(gains_for(pool.grade, m, rel, J.max_grade)), pool.n)
        if fam == "RBP":
            p = m.get("p")
            return mean_gain * (1.0 - np.power(p, mm_))  # (1-p) sum_{i<=m} p^(i-1)
        depth = (np.full_like(pool.n, float(k)) if (paper and k is not None) else mm_).astype(np.int64)
        e = mean_gain * _disc_prefix(int(depth.max()) if depth.size else 0)[depth]
        return e if fam == "DCG" else _safe(e, J.ideal_dcg(m, rel))
    P = pool.rowsum(pool.grade >= rel)
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


def _sort_key(pool: Pool, J: Judgements, m, rel_level) -> np.ndarray:
    return gains_for(pool.grade, m, _rel(m, rel_level), J.max_grade)


def ideal(pool: Pool, J: Judgements, m, rel_level, paper: bool = False) -> np.ndarray:
    """IUB: M of the pool sorted by gain, descending (``paper``: IUB[SP@k] = k, seed 000 §3.2)."""
    if paper and m.family == "SP" and m.cutoff is not None:
        return np.full(pool.nq, float(m.cutoff))
    return compute(pool.ordered(_sort_key(pool, J, m, rel_level), True), J, m, rel_level)


def worst(pool: Pool, J: Judgements, m, rel_level) -> np.ndarray:
    """WLB: M of the pool sorted by gain, ascending (seed 004 §3.1)."""
    return compute(pool.ordered(_sort_key(pool, J, m, rel_level), False), J, m, rel_level)


# --------------------------------------------------------------------------- permutations

def _shuffled(pool: Pool, reps: int, rng, depth=None) -> Ranking:
    """``reps`` independent uniform shuffles of every query's pool, as rows rep*nq + query.

    Each query's pool is laid in a padded row and shuffled in place by ``Generator.permuted``
    (Fisher-Yates in C); the padding is then squeezed out, which keeps the shuffled order.  Only
    the first ``depth`` positions are kept when the measure looks no deeper.
    """
    nq = pool.nq
    n = pool.n.astype(np.int64)
    width = int(n.max()) if nq else 0
    starts = np.searchsorted(pool.row, np.arange(nq + 1))
    col = np.arange(len(pool.row)) - starts[pool.row]
    mat = np.full((nq, width), np.nan)
    mat[pool.row, col] = pool.grade
    big = rng.permuted(np.broadcast_to(mat, (reps, nq, width)).reshape(reps * nq, width), axis=1)
    keep = ~np.isnan(big)
    if depth is not None:
        keep &= np.cumsum(keep, axis=1) <= depth
    rows = np.broadcast_to(np.arange(reps * nq)[:, None], big.shape)[keep]
    return Ranking(rows, big[keep], reps * nq, np.tile(np.arange(nq), reps))


def permutation_values(pool: Pool, J, m, rel_level, reps: int, rng, scorer=None) -> np.ndarray:
    """Values (reps x nq) of M on random permutations of the pools, in memory-bounded batches."""
    scorer = scorer or (lambda rk: compute(rk, J, m, rel_level))
    width = int(pool.n.max()) if pool.nq else 0
    per = max(1, _MC_BATCH_ELEMENTS // max(1, width * pool.nq))
    out = []
    done = 0
    while done < reps:
        b = min(per, reps - done)
        out.append(scorer(_shuffled(pool, b, rng, m.cutoff)).reshape(b, pool.nq))
        done += b
    return np.concatenate(out, axis=0)


def _arrangements(values: np.ndarray):
    """Distinct arrangements of a multiset (each equally likely under a uniform permutation)."""
    vals, counts = np.unique(values, return_counts=True)
    counts = list(counts)
    n = len(values)
    cur = [0.0] * n

    def rec(i):
        if i == n:
            yield list(cur)
            return
        for j, c in enumerate(counts):
            if c:
                counts[j] -= 1
                cur[i] = vals[j]
                yield from rec(i + 1)
                counts[j] += 1

    return rec(0)


def n_arrangements(values: np.ndarray) -> int:
    _, counts = np.unique(values, return_counts=True)
    out = math.factorial(len(values))
    for c in counts:
        out //= math.factorial(int(c))
    return out


def db_values(pool: Pool, J, m, rel_level, A, reps: int, rng, scorer=None):
    """DB = Pr[M(random permutation) <= A] per query, with its Monte Carlo standard error (0 if exact)."""
    scorer = scorer or (lambda rk: compute(rk, J, m, rel_level))
    out = np.zeros(pool.nq)
    se = np.zeros(pool.nq)
    starts = np.searchsorted(pool.row, np.arange(pool.nq + 1))
    small = []
    for q in range(pool.nq):
        g = pool.grade[starts[q]:starts[q + 1]]
        if n_arrangements(g) <= ENUMERATE_LIMIT:
            small.append(q)
    big = np.setdiff1d(np.arange(pool.nq), small)
    for q in small:
        g = pool.grade[starts[q]:starts[q + 1]]
        if len(g) == 0:
            out[q] = 1.0  # every (empty) ranking scores alike; the caller marks it undefined
            continue
        arr = np.asarray(list(_arrangements(g)), dtype=np.float64).reshape(-1, len(g))
        reps_q = arr.shape[0]
        rk = Ranking(np.repeat(np.arange(reps_q), len(g)), arr.ravel(), reps_q, np.full(reps_q, q))
        v = scorer(rk)
        out[q] = np.mean(v <= A[q] + _tol(A[q]))
    if len(big):
        vals = permutation_values(pool, J, m, rel_level, reps, rng, scorer)[:, big]
        p = np.mean(vals <= A[big] + _tol(A[big]), axis=0)
        out[big] = p
        se[big] = np.sqrt(p * (1 - p) / reps)
    return out, se


def _tol(a):
    return 1e-12 * np.maximum(1.0, np.abs(a))


# --------------------------------------------------------------------------- variants

def variant_values(rr, J: Judgements, metrics: list, plain: dict, options):
    """Values of every requested variant metric for one ranked run.

    Returns (values, standard errors, undefined counts), each keyed by Metric.
    """
    rel_level = options.rel_level
    paper = options.expectation == "paper"
    pool = make_pool(options.pool, rr.ranking, J)
    values, stderr, undefined = {}, {}, {}
    bounds = {}
    rng = np.random.default_rng(options.seed)

    def need(meas):
        if meas in bounds:
            return bounds[meas]
        if meas.native:
            b = {"E": expectation(pool, J, meas, rel_level, paper), "IUB": ideal(pool, J, meas, rel_level, paper),
                 "WLB": worst(pool, J, meas, rel_level), "se": None}
        else:
            from .bridge import foreign_bounds
            b = foreign_bounds(pool, J, meas, options, rng)
        bounds[meas] = b
        return b

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
                from .bridge import foreign_scorer
                scorer = foreign_scorer(J, meas, options)
            val, se = db_values(pool, J, meas, rel_level, A, options.permutations, rng, scorer)
            und = np.abs(b["IUB"] - b["WLB"]) <= _tol(b["IUB"])
            val = np.where(und, np.nan, val)
            stderr[metric] = se
        else:
            val, und = NORMALISERS[v](A, b["IUB"], b["E"], b["WLB"])
        undefined[metric] = int(und.sum())
        if options.undefined == "zero":
            val = np.where(und, 0.0, val)
        values[metric] = val
    return values, stderr, undefined
