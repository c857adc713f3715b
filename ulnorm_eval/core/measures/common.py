"""What every family module shares: the input of an expectation, gain maps, the random-ranking
sums that several closed forms use, and trec_eval's view of a ranking and of a random pool.

Notation (n, g, P, R, k, m, H_m: Karmaker & Feng 2022 §4; Feng 2023 §5.1) and the two facts every
closed form follows from: docs/bounds.md, "Expected values".

trec_eval's view: a retrieved document's *code* (form_res_rels.c: its grade when judged with grade
>= 0, -1 when the qrels do not list it, -2 when listed with a negative grade; relevant at level L:
code >= L), ``-J`` (:func:`judged_only`), R and the judged nonrelevant count, and the per-query
counts of a random pool that the closed-form expectations of trec_eval's families read.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels import Judgements, Level, Ranking, discount, rel_of
from ..records import Param

__all__ = ["JUDGED_ONLY", "RandomPool", "safe", "mapped_gains", "disc_prefix", "expected_sp", "expected_rr", "binary_gain",
           "reads_gain_of", "check_p", "codes", "context", "judged_only", "pool_codes", "pool_counts", "trec_relevant_count"]

_BATCH_ELEMENTS = 2_000_000  # memory bound of one vectorised block (expected_rr)


JUDGED_ONLY = Param(name="judged_only", kind="int", default=0, doc="1 (or True): trec_eval's -J for this measure alone, as ir_measures' "
                    "judged_only (through pytrec_eval): documents not in the qrels or judged with a negative grade "
                    "are removed from the ranking, and from the pool of its bounds", choices=(0, 1))


@dataclass(kw_only=True)
class RandomPool:
    """The input of a family's ``expectation``, one random ranking's pool per query: ``gain`` each pool
    document's gain under the measure (unjudged: 0), ``P`` its per-query sum, ``n`` and ``m`` = min(k, n)
    counting a 'qrels+N' pool's placeholders, ``pool`` holding them as rows (for the closed forms that read
    every document), ``paper`` the papers' verbatim formulas (``--expectation paper``)."""

    counted: object  # core.pools.Pool, placeholders counted (Pool.extra)
    J: Judgements
    measure: object
    rel: float
    gain: np.ndarray
    paper: bool = False

    @property
    def pool(self):
        return self.counted.whole()

    @property
    def n(self) -> np.ndarray:
        return self.counted.n

    @property
    def k(self):
        return self.measure.cutoff

    @property
    def m(self) -> np.ndarray:
        return self.n if self.k is None else np.minimum(self.n, float(self.k))

    @property
    def P(self) -> np.ndarray:
        return self.counted.rowsum(self.gain)

    @property
    def R(self) -> np.ndarray:
        return self.J.n_relevant(self.rel)

    @property
    def mean_gain(self) -> np.ndarray:
        return safe(self.P, self.n)


def safe(num, den):
    """num / den broadcast, 0 where den <= 0."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64))
    out = np.zeros(num.shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def mapped_gains(grade: np.ndarray, gains: dict) -> np.ndarray:
    """Listed grades take their gain; the rest keep gain = grade (0 if negative), as trec_eval's
    ndcg.L=G (gain_init.c) and ir_measures' nDCG(gains=...) both do."""
    keys = np.asarray(sorted(gains), dtype=np.float64)
    vals = np.asarray([gains[level] for level in sorted(gains)], dtype=np.float64)
    idx = np.searchsorted(keys, grade)
    idx = np.clip(idx, 0, len(keys) - 1)
    return np.where(keys[idx] == grade, vals[idx], np.maximum(grade, 0.0))


def disc_prefix(maxm: int) -> np.ndarray:
    """D[m] = sum_{i<=m} 1/log2(i+1), D[0] = 0."""
    return np.concatenate(([0.0], np.cumsum(discount(np.arange(max(maxm, 0))))))


def expected_sp(n, P, m, paper: bool = False, k=None):
    """E[SP@k] for a random permutation of n documents, P relevant, m = min(k, n).

    Exact: sum_{i<=m} E[rel_i * (1/i) sum_{j<=i} rel_j] = (P/n) H_m + P(P-1)/(n(n-1)) (m - H_m).
    ``paper``: Karmaker & Feng 2022 §4.5.1's k (P/n)^2 (k = n without a cutoff).
    """
    n = np.asarray(n, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    rel_share = safe(P, n)
    if paper:
        cutoff_or_n = n if k is None else np.full_like(n, float(k))
        return cutoff_or_n * rel_share ** 2
    H = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, (int(m.max()) if m.size else 0) + 1))))[m.astype(np.int64)]  # H_m
    pair_share = safe(P * (P - 1.0), n * (n - 1.0))
    return rel_share * H + pair_share * (m - H)


def expected_rr(n, P, m):
    """E[RR@k] = sum_{i<=m} (1/i) C(n-P, i-1)/C(n, i-1) * P/(n-i+1) (first i-1 ranks nonrelevant, then a
    relevant one); only L = min(m, n-P+1) terms can be nonzero, their survival products one cumprod
    over a (queries x max L) block per memory-bounded chunk of queries."""
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
    for start in range(0, len(n), step):
        n_block, P_block, L_block = n[start:start + step, None], P[start:start + step, None], L[start:start + step, None]
        inside = rank <= L_block
        left = np.where(inside, n_block - rank + 1.0, 1.0)  # documents not yet placed at rank i
        nonrel = np.where(inside, (left - P_block) / left, 1.0)  # Pr[rank i non-relevant | first i-1 were]
        survive = np.cumprod(np.concatenate([np.ones((len(n_block), 1)), nonrel[:, :-1]], axis=1), axis=1)
        terms = np.where(inside, survive * P_block / left / rank, 0.0)
        # a sequential sum (cumsum), not np.sum's pairwise one, whose blocking depends on the
        # batch width: a query's E must not change with the other queries evaluated beside it
        out[start:start + step] = np.cumsum(terms, axis=1)[:, -1]
    return out


def check_p(params: dict, cutoff) -> str | None:
    """The ``validate`` of a persistence p (RBP, rbp, rbp_resid, Compat): 0 < p < 1."""
    return None if 0 < params.get("p", 0.5) < 1 else "p must lie strictly between 0 and 1"


def binary_gain(grade, measure, rel, max_grade):
    """Gain of a binary family: 1 for a relevant document (grade >= rel), else 0."""
    return (grade >= rel).astype(np.float64)


def reads_gain_of(gain):
    """The ``reads`` of a family whose kernel reads only the judged documents of nonzero ``gain``
    (their grades and ranks) and the ranking's length: nDCG, DCG, AP, SP, RBP.  By trec_eval's code
    (the grade when judged with grade >= 0, -2 when judged with a negative grade: read, its gain
    unknown here; -1 not in the qrels: never, an unjudged document gains nothing)."""
    def reads(code, measure, rel, max_grade):
        code = np.asarray(code, dtype=np.float64)
        return (code == -2) | ((code >= 0) & (gain(np.maximum(code, 0.0), measure, rel, max_grade) != 0))
    return reads


# a family that counts relevant documents at -l: binary gain, exact bounds, reads only those documents
BINARY_EXACT = {"gain": binary_gain, "bounds": "exact", "reads": reads_gain_of(binary_gain), "level": "rel"}


# --------------------------------------------------------------------------- trec_eval's view

NONPOOL, UNJUDGED = -1.0, -2.0


def context(measure, level) -> Level:
    """trec_eval's flags as the kernels see them (:class:`~ulnorm_eval.core.kernels.Level`: -N, the
    rounding of a recall fraction, which rows retrieved anything, --trec-nan, -J), from the kernels'
    level (a float or a Level), at ``measure``'s own level (``rel=``, else -l)."""
    return Level(rel_of(measure, level), getattr(level, "num_docs", 0.0), getattr(level, "rounding", "round"),
                 getattr(level, "present", None), getattr(level, "trec_nan", False), getattr(level, "judged_only", False))


def floats(text, default):
    """A comma list of numbers given as text (``utility.2,-1,0,0``), or ``default``."""
    return default if text is None else tuple(float(value) for value in text.split(","))


def codes(ranking: Ranking) -> np.ndarray:
    """trec_eval's relevance code of each ranked document (see the module docstring); computed once
    per ranking (a Ranking's arrays are never modified in place)."""
    return ranking.memo("trec codes", lambda: _code(ranking.grade, ranking.judged))


def _code(grade, judged) -> np.ndarray:
    """trec_eval's code of documents of ``grade`` (judged None: every one judged)."""
    code = np.where(grade < 0, UNJUDGED, grade)
    return code if judged is None else np.where(judged, code, NONPOOL)


def judged_only(ranking: Ranking) -> Ranking:
    """``-J``: the ranking without unjudged documents (qrels-absent or negative grade), ranks closed up
    (the ranking itself when it has none: a permutation of a pool -J already cleared)."""
    keep = codes(ranking) >= 0
    if keep.all():
        return ranking
    if ranking.at is not None:
        raise ValueError("-J cannot close up the ranks of a placed ranking (its other documents are not held)")
    return Ranking(ranking.row[keep], ranking.grade[keep], ranking.nrows, ranking.base,
                   None if ranking.judged is None else ranking.judged[keep])


def present_mask(ranking: Ranking, ctx: Level) -> np.ndarray:
    return ranking.length > 0 if ctx.present is None else np.asarray(ctx.present, bool)


def trec_relevant_count(judgements: Judgements, rel_level: float) -> np.ndarray:
    """R (num_rel) per query: judged documents with grade >= max(rel_level, 0) (form_res_rels.c)."""
    return judgements.cached(("trecR", float(rel_level)), lambda: np.bincount(
        judgements.row, weights=(judgements.grade >= max(rel_level, 0.0)), minlength=judgements.nq)[: judgements.nq])


def nonrel_count(judgements: Judgements, rel_level: float) -> np.ndarray:
    """Judged nonrelevant documents per query: 0 <= grade < rel_level (bpref's num_nonrel)."""
    return judgements.cached(("trecN", float(rel_level)), lambda: np.bincount(
        judgements.row, weights=(judgements.grade >= 0) & (judgements.grade < rel_level), minlength=judgements.nq)[: judgements.nq])


def rel_total(ranking, judgements, ctx):
    return trec_relevant_count(judgements, ctx.rel_level)[ranking.base]


def rel_index(ranking, ctx):
    """Positions of the relevant documents (code >= -l), once per ranking and level."""
    return ranking.memo(("trec relevant", float(ctx.rel_level)), lambda: np.flatnonzero(codes(ranking) >= ctx.rel_level))


def nonrel_index(ranking, ctx):
    """Positions of the judged nonrelevant documents (0 <= code < -l), once per ranking and level."""
    def make():
        code = codes(ranking)
        return np.flatnonzero((code >= 0) & (code < ctx.rel_level))
    return ranking.memo(("trec nonrelevant", float(ctx.rel_level)), make)


def unjudged_index(ranking):
    """Positions of the pooled-unjudged documents (code -2: judged with a negative grade), once per ranking."""
    return ranking.memo(("trec pooled unjudged",), lambda: np.flatnonzero(codes(ranking) == UNJUDGED))


def count_above(ranking, idx, marked):
    """For each position of ``idx`` (increasing), how many of the positions ``marked`` (increasing) rank
    above it in its row, as float64: :meth:`Ranking.running` of the mask of ``marked``, read at ``idx``,
    less the element itself (whole numbers, so the same values as that float running sum)."""
    before_row = np.searchsorted(marked, ranking.starts[ranking.row[idx]])
    return (np.searchsorted(marked, idx) - before_row).astype(np.float64)


# --------------------------------------------------------------------------- expectations
#
# E under a uniformly random permutation of each query's pool, ranked whole (num_ret = n).  Per query,
# at level L = -l: n pool size; P pool documents relevant (code >= L); Q judged nonrelevant
# (0 <= code < L); U pooled-unjudged (-2); V not in the qrels (-1); R trec_eval's num_rel; N judged
# nonrelevant in the qrels; m = min(k, n).  Each family's closed form is its record's
# ``expectation_formula`` (its derivation in the expectation's docstring), checked against every
# permutation of small pools in tests/core/test_trec_bounds.py; the 'montecarlo' families are their
# native kernels on seeded permutations (core/permutations.py).


def pool_codes(pool) -> np.ndarray:
    """trec_eval's code of each pool document (as :func:`codes` of a ranking), computed once per pool
    (a pool's arrays are never modified)."""
    code = pool.__dict__.get("_trec_codes")
    if code is None:
        code = pool.__dict__["_trec_codes"] = _code(pool.grade, pool.judged)
        code.flags.writeable = False
    return code


def pool_counts(random_pool):
    """n, P, Q, U, V, R, N per query of a :class:`~.common.RandomPool` (see the comment above); the
    pool's four counts are made once per relevance level (every trec_eval family's expectation reads them)."""
    pool, judgements, L = random_pool.pool, random_pool.J, float(rel_of(random_pool.measure, random_pool.rel))
    counts = pool.__dict__.setdefault("_trec_counts", {})
    if L not in counts:
        code = pool_codes(pool)
        counts[L] = tuple(pool.rowsum(mask) for mask in (code >= L, (code >= 0) & (code < L), code == UNJUDGED,
                                                          code == NONPOOL))
        for count in counts[L]:
            count.flags.writeable = False  # shared by every family's expectation
    P, Q, U, V = counts[L]
    R = trec_relevant_count(judgements, L)
    N = nonrel_count(judgements, L)
    return pool.n, P, Q, U, V, R, N

