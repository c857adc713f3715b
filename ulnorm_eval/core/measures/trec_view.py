"""trec_eval's view of a ranking and of a random pool, shared by the trec_eval families (:mod:`.trec`):
a retrieved document's *code* (form_res_rels.c: its grade when judged with grade >= 0, -1 when the
qrels do not list it, -2 when listed with a negative grade; relevant at level L: code >= L), ``-J``
(:func:`judged_only`), running counts over the flat ranking, R and the judged nonrelevant count, and
the per-query counts of a random pool that the closed-form expectations read.
"""
from __future__ import annotations

import numpy as np

from ..kernels import Judgements, Level, Ranking, rel_of

INFAP_EPSILON = 0.00001  # trec_eval.h
RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # iprec_at_recall, 11pt_avg
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


# --------------------------------------------------------------------------- the trec_eval view

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


def at_depth(ranking: Ranking, mask, k) -> np.ndarray:
    """Per row: sum of ``mask`` over the first ``k`` documents (k scalar or per row)."""
    k = np.broadcast_to(np.asarray(k), (ranking.nrows,))
    inside = ranking.pos < k[ranking.row]
    if getattr(mask, "dtype", None) == bool:  # a count: rowsum counts a boolean mask without float sums
        return ranking.rowsum(inside & mask)
    return ranking.rowsum(np.where(inside, mask, 0.0))


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


def rel_mask(ranking, ctx):
    return codes(ranking) >= ctx.rel_level


def rel_index(ranking, ctx):
    """Positions of the documents :func:`rel_mask` marks, once per ranking and level."""
    return ranking.memo(("trec relevant", float(ctx.rel_level)), lambda: np.flatnonzero(rel_mask(ranking, ctx)))


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

