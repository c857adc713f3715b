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

import itertools
import math

import numpy as np

from .measures import Judgements, Ranking, compute, discount, gains_for
from .normalise import NORMALISERS, undefined_mask

__all__ = ["Pool", "make_pool", "expectation", "ideal", "worst", "expected_sp", "expected_rr",
           "permutation_values", "db_values", "variant_values", "ENUMERATE_LIMIT"]

ENUMERATE_LIMIT = 5040  # 7!: at most this many distinct arrangements are enumerated for DB
_ENUMERATE_ELEMENTS = 1_000_000  # ... and at most this many (arrangements x pool size)
_BATCH_ELEMENTS = 2_000_000  # memory bound of one vectorised block


class Pool:
    """Per-query pool documents: grades (and whether judged), grouped by query, order irrelevant."""

    def __init__(self, row: np.ndarray, grade: np.ndarray, nq: int, judged: np.ndarray | None = None):
        order = np.argsort(row, kind="stable")
        self.row, self.grade, self.nq = row[order], grade[order], nq
        self.judged = np.ones(len(row), bool) if judged is None else np.asarray(judged, bool)[order]
        self.n = np.bincount(self.row, minlength=nq)[:nq].astype(np.float64)

    def rowsum(self, w) -> np.ndarray:
        return np.bincount(self.row, weights=w, minlength=self.nq)[: self.nq]

    def ordered(self, key: np.ndarray, descending: bool) -> Ranking:
        """The pool of every query sorted by ``key`` (one row per query)."""
        order = np.lexsort((-key if descending else key, self.row))
        return Ranking(self.row[order], self.grade[order], self.nq, np.arange(self.nq), self.judged[order])

    def subset(self, queries: np.ndarray) -> "Pool":
        """The same pool with every query outside ``queries`` emptied."""
        keep = np.isin(self.row, queries)
        return Pool(self.row[keep], self.grade[keep], self.nq, self.judged[keep])


def make_pool(kind: str, rk: Ranking, J: Judgements) -> Pool:
    """The pool of every query: 'qrels' (judged documents), 'run' (retrieved) or 'union'."""
    if kind == "qrels":
        return Pool(J.row, J.grade, J.nq)
    judged = rk.judged if rk.judged is not None else np.ones(len(rk.row), bool)
    if kind == "run":
        return Pool(rk.row, rk.grade, J.nq, judged)
    if kind == "union":
        extra = ~judged
        return Pool(np.concatenate([J.row, rk.row[extra]]), np.concatenate([J.grade, rk.grade[extra]]), J.nq,
                    np.concatenate([np.ones(len(J.row), bool), np.zeros(int(extra.sum()), bool)]))
    raise ValueError("pool must be 'qrels', 'run' or 'union'")


def _rel(m, rel_level):
    r = m.get("rel")
    return rel_level if r is None else r


def _gain(pool: Pool, J: Judgements, m, rel_level) -> np.ndarray:
    """Each pool document's gain under ``m`` (binary measures: 1 if relevant); unjudged gain 0.

    Every native measure depends on a ranking only through this sequence, so it is both the sort
    key of IUB/WLB and the class label of DB's enumeration.
    """
    return np.where(pool.judged, gains_for(pool.grade, m, _rel(m, rel_level), J.max_grade), 0.0)


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
    rel = _rel(m, rel_level)
    gain = _gain(pool, J, m, rel_level)
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
        return k if m.family == "SP" else _safe(k, J.n_relevant(_rel(m, rel_level)))
    return compute(pool.ordered(_gain(pool, J, m, rel_level), True), J, m, rel_level)


def worst(pool: Pool, J: Judgements, m, rel_level) -> np.ndarray:
    """WLB: M of the pool sorted by gain, ascending (seed 004 §3.1, eqs. 3.2, 3.4)."""
    return compute(pool.ordered(_gain(pool, J, m, rel_level), False), J, m, rel_level)


# --------------------------------------------------------------------------- permutations

_C1, _C2, _C3 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD1B54A32D192ED03), np.uint64(0x8CB92BA72F3D8DD7)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 arrays (wrapping arithmetic): a well-mixed 64-bit hash."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _hash_text(s: str) -> int:
    import hashlib

    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little")


class Keys:
    """Counter-based uniform numbers u(seed, query id, repetition, position, attempt).

    A query's Monte Carlo permutations depend only on the seed and its own id, not on which other
    queries are evaluated beside it, in what order, or in which block of a streamed run: the
    in-memory and streamed paths give the same estimates, and streamed blocks never reuse one
    another's random numbers.
    """

    def __init__(self, seed: int, qids=None):
        self.seed = np.uint64(int(seed) % 2 ** 64)
        self.qhash = None if qids is None else np.array([_hash_text(str(q)) for q in qids], dtype=np.uint64)

    def rows(self, base: np.ndarray, rep: np.ndarray, width: int, attempt: int = 0) -> np.ndarray:
        """(rows x width) uniforms in [0, 1); row r belongs to query ``base[r]``, repetition ``rep[r]``."""
        base = np.asarray(base, dtype=np.int64)
        q = self.qhash[base] if self.qhash is not None else _mix(base.astype(np.uint64) + _C3)
        salt = np.uint64(attempt * int(_C3) % 2 ** 64)  # Python ints: no numpy scalar overflow warning
        h = _mix(_mix(q ^ self.seed) + np.atleast_1d(np.asarray(rep, dtype=np.uint64)) * _C1 + salt)
        col = np.arange(1, width + 1, dtype=np.uint64) * _C2
        return (_mix(h[:, None] + col[None, :]) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def as_keys(rng, qids=None) -> Keys:
    """Keys from a Keys, a seed, or a numpy Generator (which then only draws the seed)."""
    if isinstance(rng, Keys):
        return rng
    if isinstance(rng, np.random.Generator):
        return Keys(int(rng.integers(0, 2 ** 63)), qids)
    return Keys(int(rng), qids)



def _shuffled(grade, judged, n, base, reps: int, rng, depth=None, rep0: int = 0) -> Ranking:
    """``reps`` uniform shuffles of g pools given as padded (g x width) matrices.

    Rows of the result are rep * g + i, with ``base`` mapping pool i to its query.  Each shuffle
    sorts iid uniform keys (padding gets keys >= 1 so it sorts last, which keeps the kept prefix
    contiguous); with ``depth`` only the top ``depth`` ranks are kept (for long pools found by
    argpartition, then a sort of those few).  When the depth d is small against every pool
    (d(d-1) <= n), the top d are drawn directly: see :func:`_distinct_draws`.
    """
    g, width = grade.shape
    keys_of = as_keys(rng)
    rep_of_row = np.repeat(np.arange(rep0, rep0 + reps), g)  # global repetition: batch-independent
    base_of_row = np.tile(np.asarray(base), reps)
    d = width if depth is None else min(int(depth), width)
    if d * (d - 1) <= n.min():
        idx = _distinct_draws(n, reps, d, keys_of, base_of_row, rep_of_row)
    else:
        keys = keys_of.rows(base_of_row, rep_of_row, width).reshape(reps, g, width)
        keys += np.arange(width) >= n[:, None]
        keys = keys.reshape(reps * g, width)
        if d < width and width > max(64, 4 * d):  # a full sort of short rows is faster than partitioning
            idx = np.argpartition(keys, d - 1, axis=1)[:, :d]
            idx = np.take_along_axis(idx, np.argsort(np.take_along_axis(keys, idx, axis=1), axis=1), axis=1)
        else:
            idx = np.argsort(keys, axis=1)[:, :d]
    pool_of = np.tile(np.arange(g), reps)
    count = np.minimum(n, d)[pool_of]
    src = (idx + (pool_of * width)[:, None])[np.arange(d) < count[:, None]]
    rows = np.repeat(np.arange(reps * g), count)
    return Ranking(rows, grade.ravel()[src], reps * g, np.tile(base, reps),
                   None if judged is None else judged.ravel()[src])


def _distinct_draws(n, reps: int, d: int, keys: Keys, base_of_row, rep_of_row) -> np.ndarray:
    """(reps * g, d) indices: for row rep * g + i, d distinct positions of pool i's n[i] documents,
    uniformly among ordered d-tuples, i.e. the top d of a uniform permutation.

    d iid uniform draws, redrawn whole while they collide: conditioned on being distinct, every
    ordered tuple is equally likely.  With d(d-1) <= n a row is accepted with probability > 0.6,
    and d draws replace sorting n keys (10 instead of 1,000 for nDCG@10 on a 1,000-document pool).
    """
    high = np.tile(n, reps)[:, None]
    idx = np.minimum((keys.rows(base_of_row, rep_of_row, d) * high).astype(np.int64), high - 1)
    todo = np.arange(len(high))
    attempt = 0
    while len(todo):
        s = np.sort(idx[todo], axis=1)
        todo = todo[(s[:, 1:] == s[:, :-1]).any(axis=1)]
        attempt += 1
        u = keys.rows(base_of_row[todo], rep_of_row[todo], d, attempt)
        idx[todo] = np.minimum((u * high[todo]).astype(np.int64), high[todo] - 1)
    return idx


def _padded(pool: Pool, queries: np.ndarray):
    """Grades and judged flags of ``queries`` (sorted) as padded matrices, with their sizes."""
    n = pool.n[queries].astype(np.int64)
    width = int(n.max()) if len(n) else 0
    starts = np.searchsorted(pool.row, np.arange(pool.nq + 1))
    local = np.full(pool.nq, -1)
    local[queries] = np.arange(len(queries))
    sel = local[pool.row] >= 0
    r = local[pool.row[sel]]
    col = np.flatnonzero(sel) - starts[pool.row[sel]]
    grade = np.zeros((len(queries), width))
    judged = np.zeros((len(queries), width), bool)
    grade[r, col] = pool.grade[sel]
    judged[r, col] = pool.judged[sel]
    return grade, (None if pool.judged[sel].all() else judged), n


def _permutation_batches(pool: Pool, J, m, rel_level, reps: int, rng, scorer, queries):
    """Yield (first rep, queries, values[t x len(queries)]) over ``reps`` random permutations.

    Queries are processed in buckets of similar pool size (within a factor of 2), so one long pool
    does not pad every other query to its length; each bucket in memory-bounded batches.
    """
    n = pool.n[queries].astype(np.int64)
    bucket = np.ceil(np.log2(n)).astype(np.int64) if len(n) else n
    depth = m.cutoff if m.native else None
    for b in np.unique(bucket):
        qs = np.sort(queries[bucket == b])
        grade, judged, nb = _padded(pool, qs)
        per = max(1, _BATCH_ELEMENTS // (grade.shape[1] * len(qs)))
        for s in range(0, reps, per):
            t = min(per, reps - s)
            yield s, qs, scorer(_shuffled(grade, judged, nb, qs, t, rng, depth, rep0=s)).reshape(t, len(qs))


def permutation_values(pool: Pool, J, m, rel_level, reps: int, rng, scorer=None, queries=None) -> np.ndarray:
    """Values (reps x nq) of M on ``reps`` uniformly random permutations of every query's pool.

    Only ``queries`` are computed when given (other columns NaN); an empty pool scores 0.
    """
    scorer = scorer or (lambda rk: compute(rk, J, m, rel_level))
    rng = as_keys(rng, J.qids)
    out = np.full((reps, pool.nq), np.nan)
    queries = np.arange(pool.nq) if queries is None else np.asarray(queries, dtype=np.int64)
    empty = pool.n[queries] == 0
    out[:, queries[empty]] = 0.0
    for s, qs, v in _permutation_batches(pool, J, m, rel_level, reps, rng, scorer, queries[~empty]):
        out[s:s + len(v), qs] = v
    return out


def _class_patterns(counts: tuple) -> np.ndarray:
    """Every distinct arrangement of a multiset with ``counts[j]`` copies of class j, as a matrix of
    class indices (one arrangement per row): the positions of class j are chosen among the positions
    left free by classes < j, for every earlier partial arrangement at once."""
    n = sum(counts)
    arr = np.full((1, n), len(counts) - 1, dtype=np.int64)
    free = np.ones((1, n), bool)
    for j, c in enumerate(counts[:-1]):
        f = int(free[0].sum())
        combos = np.asarray(list(itertools.combinations(range(f), c)), dtype=np.int64).reshape(-1, c)
        freepos = np.nonzero(free)[1].reshape(len(arr), f)
        pos = freepos[:, combos].reshape(-1, c)  # (rows x combos, c)
        arr = np.repeat(arr, len(combos), axis=0)
        free = np.repeat(free, len(combos), axis=0)
        r = np.arange(len(arr))[:, None]
        arr[r, pos] = j
        free[r, pos] = False
    return arr


def n_arrangements(counts) -> int:
    """Distinct arrangements of a multiset: n! / prod(c_j!)."""
    out, left = 1, 0
    for c in counts:
        left += int(c)
        out *= math.comb(left, int(c))
    return out


def db_values(pool: Pool, J, m, rel_level, A, reps: int, rng, scorer=None, active=None,
              limit: int = ENUMERATE_LIMIT):
    """DB = Pr[M(random permutation) <= A] per query (seed 004 eq. 3.12), with its standard error.

    Exact (standard error 0) when the pool's gain classes have at most ``limit`` distinct
    arrangements, each equally likely; otherwise a Monte Carlo estimate over ``reps`` shuffles,
    standard error sqrt(p(1-p)/reps).  Queries outside ``active`` are left NaN.
    """
    scorer = scorer or (lambda rk: compute(rk, J, m, rel_level))
    rng = as_keys(rng, J.qids)
    nq = pool.nq
    A = np.asarray(A, dtype=np.float64)
    active = np.ones(nq, bool) if active is None else np.asarray(active, bool)
    out = np.full(nq, np.nan)
    se = np.zeros(nq)
    # classes of documents that no measure can tell apart: equal gain (native), equal grade and
    # judged flag (ir_measures)
    key = _gain(pool, J, m, rel_level) if m.native else np.where(pool.judged, pool.grade, -np.inf)
    order = np.lexsort((key, pool.row))
    first = np.ones(len(order), bool)
    first[1:] = (pool.row[order][1:] != pool.row[order][:-1]) | (key[order][1:] != key[order][:-1])
    head = order[first]  # one representative document per (query, class)
    cls_q = pool.row[head]
    cls_n = np.diff(np.append(np.flatnonzero(first), len(order)))
    qs_, lo_ = np.unique(cls_q, return_index=True)
    sig: dict = {}  # class counts -> [(query, index of its first class)]: one pattern serves them all
    for q, lo, hi in zip(qs_, lo_, np.append(lo_[1:], len(cls_q))):
        if not active[q]:
            continue
        counts = tuple(int(c) for c in cls_n[lo:hi])
        M = n_arrangements(counts)
        if M <= limit and M * sum(counts) <= _ENUMERATE_ELEMENTS:
            sig.setdefault(counts, []).append((q, lo))
    enumerated = np.zeros(nq, bool)
    for counts, members in sig.items():
        pattern = _class_patterns(counts)  # (M, n) class indices
        M, n = pattern.shape
        step = max(1, _BATCH_ELEMENTS // (M * n))
        for s in range(0, len(members), step):
            qs = np.asarray([q for q, _ in members[s:s + step]])
            first_cls = np.asarray([lo for _, lo in members[s:s + step]])
            doc = head[first_cls[:, None, None] + pattern]  # (G, M, n): a representative per position
            G = len(qs)
            rk = Ranking(np.repeat(np.arange(G * M), n), pool.grade[doc].ravel(), G * M,
                         np.repeat(qs, M), pool.judged[doc].ravel())
            v = scorer(rk).reshape(G, M)
            out[qs] = np.mean(v <= (A[qs] + _tol(A[qs]))[:, None], axis=1)
            enumerated[qs] = True
    big = np.flatnonzero(active & ~enumerated)
    empty = big[pool.n[big] == 0]
    out[empty] = 1.0  # every (empty) ranking scores alike
    big = big[pool.n[big] > 0]
    if len(big):
        below = np.zeros(nq)  # counted batch by batch: memory does not grow with reps
        for _, qs, v in _permutation_batches(pool, J, m, rel_level, reps, rng, scorer, big):
            below[qs] += np.sum(v <= A[qs] + _tol(A[qs]), axis=0)
        p = below[big] / reps
        out[big] = p
        se[big] = np.sqrt(p * (1 - p) / reps)
    return out, se


def _tol(a):
    return 1e-12 * np.maximum(1.0, np.abs(a))


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
                from .bridge import foreign_bounds
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
                from .bridge import foreign_scorer
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
