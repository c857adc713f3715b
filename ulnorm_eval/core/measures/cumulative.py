"""Discounted cumulative gain: DCG and nDCG (Järvelin & Kekäläinen 2002).

One section per family: gain, kernel, expectation, record.
"""
from __future__ import annotations

import numpy as np

from ..kernels import Judgements, Ranking, judged_only, rank_discount, rel_of
from ..holes import monotone, outside_written
from ..records import Family, Param, TrecName, register
from .common import JUDGED_ONLY, RandomPool, mapped_gains, reads_gain_of, safe
from .trec_gains import ideal_dcg as idcg

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default cutoffs (ndcg_cut, P, ...)

DCG_PARAM = Param(name="dcg", kind="str", default="log2", doc="gain/discount: 'log2' (gain = grade, trec_eval) or 'exp-log2' "
                  "(gain = 2^grade - 1, Karmaker & Feng 2022, Feng 2023)", choices=("log2", "exp-log2"))
DISCOUNT_PARAM = Param(name="discount", kind="discount", default="log2", doc="discount of ranks 1, 2, ...: 'log2' (1/log2(i+1)), 'zipf' (1/i), "
                       "'linear' ((k+1-i)/k, needs @k), or a list of factors, e.g. [1,0.63,0.5] (0 past its end; "
                       "what `ulnorm-eval stability` prints, Kanoulas & Aslam 2009).  The ideal ranking (IDCG, IUB) is "
                       "the gain-sorted one, the maximum only for a non-increasing discount",
                       choices=("log2", "zipf", "linear"))
# Karmaker & Feng 2022 eq. 1 and Feng 2023 eq. 3.1: DCG@k = sum (2^R_i - 1) / log_b(i + 1); what
# --expectation paper gives an nDCG or DCG that names neither dcg= nor gains=
PAPER_GAINS = (("dcg", "exp-log2"),)
GAINS_PARAM = Param(name="gains", kind="gains", default=None, doc="explicit gain for some grades, e.g. {0:0,1:1,2:3}; a grade not listed "
                    "keeps gain = grade (negative: 0), as trec_eval's ndcg.L=G and ir_measures do")


def gain(grade, measure, rel, max_grade):
    """grade (negative: 0), or 2^grade - 1 with dcg='exp-log2', or the explicit ``gains`` map."""
    gains = measure.get("gains")
    if gains is not None:
        return mapped_gains(grade, gains)
    g = np.maximum(grade, 0.0)
    return np.exp2(g) - 1.0 if measure.get("dcg") == "exp-log2" else g


def dcg(ranking: Ranking, measure, rel: float, max_grade: float) -> np.ndarray:
    """sum_{i<=k} gain(d_i) * discount(i) per row (discount 1/log2(i+1) by default)."""
    d = measure.get("discount")
    key = ("dcg", repr(measure.get("gains")), measure.get("dcg"), float(rel), float(max_grade))
    idx = ranking.memo(key, lambda: np.flatnonzero(judged_only(ranking, gain(ranking.grade, measure, rel, max_grade))))
    # the terms of documents with a nonzero gain only (the others add 0), shared by every cutoff
    weights = ranking.memo(key + (repr(d), measure.cutoff if d == "linear" else None),
                lambda: gain(ranking.grade[idx], measure, rel, max_grade) * rank_discount(measure, ranking.pos[idx]))
    return ranking.sum_within(idx, weights, measure.cutoff)


def ideal_dcg(judgements: Judgements, measure, rel: float) -> np.ndarray:
    """IDCG@k per query (:func:`~.trec_gains.ideal_dcg`): the judged documents of positive gain by gain."""
    trec = bool(getattr(rel, "trec_nan", False) and measure.get("gains"))
    return idcg(judgements, measure, ("dcg", repr(measure.get("gains")), measure.get("dcg"), float(rel), trec),
                lambda: np.maximum(gain(judgements.grade, measure, rel, judgements.max_grade), 0.0),
                measure.get("gains") if trec else None)


def k_dcg(ranking, judgements, measure, rel_level):
    """DCG@k = sum_{i<=k} gain(d_i) / log2(i+1)."""
    return dcg(ranking, measure, rel_of(measure, rel_level), judgements.max_grade)


def k_ndcg(ranking, judgements, measure, rel_level):
    """nDCG@k = DCG@k / IDCG@k, the ideal from the query's judged documents; 0 when IDCG = 0."""
    rel = rel_of(measure, rel_level)
    return safe(dcg(ranking, measure, rel, judgements.max_grade), ideal_dcg(judgements, measure, rel)[ranking.base])


def e_dcg(random_pool: RandomPool) -> np.ndarray:
    """E[DCG@k] = mean(g) * sum_{i<=m} 1/log2(i+1) (Karmaker & Feng 2022 eq. 7, Feng 2023 eq. 6.1,
    summed to m, not k: past the pool's end there are no documents; ``paper``: summed to k)."""
    k = random_pool.k
    depth = (np.full_like(random_pool.n, float(k)) if (random_pool.paper and k is not None) else random_pool.m).astype(np.int64)
    top = int(depth.max()) if depth.size else 0
    # by linearity each rank holds the mean gain: E = mean(g) * sum_{i<=m} d_i, for any discount
    prefix = np.concatenate(([0.0], np.cumsum(rank_discount(random_pool.measure, np.arange(top)))))
    return random_pool.mean_gain * prefix[depth]


def e_ndcg(random_pool: RandomPool) -> np.ndarray:
    """E[nDCG@k] = E[DCG@k] / IDCG@k (Westerborg 2022 eq. 3.7)."""
    return safe(e_dcg(random_pool), ideal_dcg(random_pool.J, random_pool.measure, random_pool.rel))


def browse_dcg(measure):
    """seen(i) = 1/log2(i+1): the only discount that reproduces Table 1 of Normalized Residual Gain
    (SIGIR-AP 2024); N = 1.  An explicit ``discount`` is the measure's own browsing model."""
    return (lambda pos: rank_discount(measure, pos)), (lambda raw: raw)


def browse_ndcg(measure):
    """As DCG, normalised by the ideal ranking of the judged documents by residual gain."""
    return (lambda pos: rank_discount(measure, pos)), None


def _validate(params: dict, cutoff) -> str | None:
    if params.get("discount") == "linear" and cutoff is None:
        return "discount='linear' is (k+1-i)/k: give a cutoff, e.g. @10"
    return None


def _extremes(measure) -> str:
    """Sorting by gain gives the maximum (descending) and minimum (ascending) of sum_i gain_i d_i for
    any real gains when the discounts d_1 >= d_2 >= ... >= 0 (0 past the cutoff): the rearrangement
    inequality.  A discount vector that rises somewhere, or goes negative, is searched instead."""
    d = measure.get("discount")
    if d is None or isinstance(d, str):
        return "sorted"
    d = [float(step) for step in d]
    decreasing = all(earlier >= later for earlier, later in zip(d, d[1:])) and (not d or d[-1] >= 0)
    return "sorted" if decreasing else "search"


_EXTREMES_NOTE = ("a discount vector that is not non-increasing and non-negative makes the gain-sorted "
                  "orderings no extremes: IUB and WLB are the maximum and minimum over every arrangement "
                  "of the pool's gains, at most 5040 of them, and withheld beyond")


# --------------------------------------------------------------------------- judgment holes
# (docs/holes.md has the proofs; tests/core/test_holes.py checks every assignment of small queries)

def holes_check(measure) -> str | None:
    """nDCG's proofs need gains >= 0 and a non-increasing discount (then IDCG, the gain-sorted
    ideal, is the largest DCG of the judged documents and a convex function of their gains)."""
    gains = measure.get("gains")
    if gains and min(gains.values()) < 0:
        return "a negative gain: the extremes over the holes are not derived for it"
    d = measure.get("discount")
    if isinstance(d, tuple) and any(later > earlier for earlier, later in zip(d, d[1:])):
        return "the discount increases somewhere: the extremes over the holes are not derived for it"
    return None


def holes_ndcg(holes):
    """nDCG@k over the holes' grades (docs/holes.md).  Minimum: every hole at the least or the largest
    gain (DCG/IDCG is quasi-concave), the c at the largest past the cutoff and then lowest-ranked
    first, every c searched.  Maximum: gains falling with rank, T_l holes at or above each level
    l, the largest ratio by Dinkelbach's method (1967) over a dynamic programme on the levels."""
    if holes.forced:
        return monotone(holes)
    # the layer-cake form: per row the judged DCG, the prefix sums of the holes' discounts within the
    # cutoff, and IDCG as a function of how many holes have a gain above each gain level
    ranking, judgements, measure, rel = holes.rk, holes.J, holes.m, holes.rel
    S, first = np.unique(holes.cgain, return_index=True)  # gain levels s_0 < ... < s_L, a grade for each
    rep = holes.cands[first]
    unj, inc = holes.unj, holes.inc
    unjudged_inside = unj & inc
    disc = rank_discount(measure, ranking.pos)
    D_J = ranking.rowsum(np.where(~unj & inc, gain(ranking.grade, measure, rel, judgements.max_grade) * disc, 0.0))
    u = ranking.rowsum(unjudged_inside).astype(np.int64)
    V = ranking.rowsum(unj & ~inc).astype(np.int64)
    umax = int(u.max()) if len(u) else 0
    t = ranking.running(unjudged_inside).astype(np.int64) - 1  # 0-based index of a hole within the cutoff
    delta = np.zeros((ranking.nrows, umax + 1))
    delta[ranking.row[unjudged_inside], t[unjudged_inside] + 1] = disc[unjudged_inside]
    Delta = np.cumsum(delta, axis=1)  # Delta[r, T]: the T highest-ranked holes' discounts
    judged_gain = gain(judgements.grade, measure, rel, judgements.max_grade)
    P = np.unique(np.concatenate(([0.0], S, judged_gain)))
    hist = np.zeros((judgements.nq, len(P)), dtype=np.int64)
    np.add.at(hist, (judgements.row, np.searchsorted(P, judged_gain)), 1)
    at_least = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1]  # judged documents with gain >= P[j]
    n_judged_above = at_least[:, 1:][ranking.base]  # per segment [P_j, P_{j+1}): judged documents with gain > tau
    width = np.diff(P)
    nmax = int(at_least[:, 0].max() if judgements.nq else 0) + umax + int(V.max() if len(V) else 0) + 2
    discounts = rank_discount(measure, np.arange(nmax))
    if measure.cutoff is not None:
        discounts = np.where(np.arange(nmax) < measure.cutoff, discounts, 0.0)
    E = np.concatenate(([0.0], np.cumsum(discounts)))

    def Eat(n):
        return E[np.minimum(np.asarray(n, dtype=np.int64), len(E) - 1)]

    below, above, gap = P[1:] <= S[0], P[:-1] >= S[-1], np.searchsorted(S, P[1:], side="left")
    L = len(S) - 1
    rows = np.arange(ranking.nrows)
    T = np.arange(umax + 1)
    valid = T[None, :] <= u[:, None]
    A_0 = D_J + S[0] * Delta[rows, u]
    fixed_above = (width[above] * Eat(n_judged_above[:, above])).sum(axis=1)

    # minimum: the V holes past the cutoff and the c lowest-ranked within it at s_L, the rest at s_0
    B_0 = fixed_above + (width[below] * Eat(n_judged_above[:, below] + (u + V)[:, None])).sum(axis=1)
    idcg = B_0[:, None] + sum(width[segment] * Eat(n_judged_above[:, segment, None] + V[:, None] + T[None, :])
                              for segment in np.flatnonzero(~below & ~above))
    dcg = A_0[:, None] + (S[L] - S[0]) * (Delta[rows, u][:, None] - Delta[rows[:, None], np.maximum(u[:, None] - T, 0)])
    ratio = np.where(valid, safe(dcg, idcg), np.inf)
    cmin = np.argmin(ratio, axis=1)
    low = np.where((unj & ~inc) | (unjudged_inside & (t >= (u - cmin)[ranking.row])), rep[L], rep[0])

    # maximum: Dinkelbach over the chains u >= T_1 >= ... >= T_L >= 0
    A = [None] + [(S[l] - S[l - 1]) * Delta for l in range(1, L + 1)]
    B = [None] + [sum((width[segment] * Eat(n_judged_above[:, segment, None] + T[None, :]) for segment in np.flatnonzero(gap == l)
                       if not (below[segment] or above[segment])), np.zeros((ranking.nrows, len(T))))
                  for l in range(1, L + 1)]

    def value(counts):
        num = A_0 + sum(A[l][rows, counts[l - 1]] for l in range(1, L + 1))
        den = B_0 + sum(B[l][rows, counts[l - 1]] for l in range(1, L + 1))
        return safe(num, den)

    best = [np.zeros(ranking.nrows, np.int64) for _ in range(L)]
    lam = value(best)
    for _ in range(200):
        f = np.where(valid, A[L] - lam[:, None] * B[L], -np.inf)
        back = []
        for l in range(L - 1, 0, -1):
            running_max = np.maximum.accumulate(f, axis=1)
            back.append(np.maximum.accumulate(np.where(f >= running_max, T[None, :], 0), axis=1))
            f = np.where(valid, A[l] - lam[:, None] * B[l] + running_max, -np.inf)
        counts = [np.argmax(f, axis=1)]
        for step in reversed(back):
            counts.append(step[rows, counts[-1]])
        new = value(counts)
        better = new > lam + 1e-15 * np.maximum(1.0, np.abs(lam))
        if not better.any():
            break
        best = [np.where(better, candidate, incumbent) for candidate, incumbent in zip(counts, best)]
        lam = np.where(better, new, lam)
    level = sum((t >= 0) & (t < best[l - 1][ranking.row]) for l in range(1, L + 1))
    high = np.where(unjudged_inside, rep[np.asarray(level, dtype=np.int64)], rep[0])
    return low, high


def outside_ndcg(holes, extra):
    """Documents outside the ranking at the largest gain enter nDCG's ideal: written into the
    judgements, at most as many as the ideal reads (the cutoff k, or a discount vector's length)."""
    d = holes.m.get("discount")
    return outside_written(holes, extra, holes.m.cutoff if holes.m.cutoff is not None else
                           (len(d) if isinstance(d, tuple) else None))


# what nDCG and DCG share: graded gains (the papers' under --expectation paper), exact bounds, one ideal
_DCG = {"cutoff": "optional", "gain": gain, "bounds": "exact", "reads": reads_gain_of(gain), "level": "gains", "paper_params": PAPER_GAINS,
        "paper_unless": ("gains",), "validate": _validate, "extremes": _extremes, "extremes_note": _EXTREMES_NOTE}
_LINEAR = "the default here is linear (trec_eval's), dcg='exp-log2' or --expectation paper gives theirs"

register(Family(
    name="nDCG", params=(DCG_PARAM, GAINS_PARAM, DISCOUNT_PARAM, JUDGED_ONLY), kernel=k_ndcg, **_DCG, expectation=e_ndcg,
    formula="DCG@k / IDCG@k, DCG@k = sum_{i<=k} gain(d_i) / log2(i+1); IDCG from the query's judged documents of positive "
    "gain sorted by gain (trec_eval's and ir_measures' ideal: a negative gain lowers DCG, never IDCG)",
    expectation_formula="mean(gain over pool) * sum_{i<=min(k,n)} 1/log2(i+1) / IDCG@k (exact, linearity)",
    cite="Jarvelin & Kekalainen 2002; Karmaker & Feng 2022 eq. 1-2 and Feng 2023 eq. 3.1-3.2 use 2^R - 1 gains; " + _LINEAR,
    trec=(TrecName(base="ndcg", arg="map", param="gains", value_name="gain", nick=("all_trec",)),
          TrecName(base="ndcg_cut", arg="each", defaults=TREC_CUTOFFS, nick=("all_trec",))),
    irm="nDCG", aliases=("NDCG",),
    examples=("nDCG", "nDCG(dcg='exp-log2')", "nDCG(gains={0:0,1:1,2:5,3:11.5})", "nDCG@{k}",
              "nDCG(discount=[1,0.7,0.7,0.2])@{k}", "nDCG(discount='zipf')@{k}", "nDCG(discount='linear')@{k}"),
    browsing=browse_ndcg, holes=holes_ndcg, holes_outside=outside_ndcg, holes_check=holes_check))

register(Family(
    name="DCG", params=(DCG_PARAM, GAINS_PARAM, DISCOUNT_PARAM), kernel=k_dcg, **_DCG, expectation=e_dcg,
    formula="sum_{i<=k} gain(d_i) / log2(i+1)",
    expectation_formula="mean(gain over pool) * sum_{i<=min(k,n)} 1/log2(i+1) (exact, linearity)",
    cite="Jarvelin & Kekalainen 2002; Karmaker & Feng 2022 eq. 1 and Feng 2023 eq. 3.1 use 2^R - 1 gains; " + _LINEAR, irm="DCG",
    trec=(TrecName(base="dcg", arg="map", param="gains", value_name="gain"),),
    examples=("DCG", "DCG(dcg='exp-log2')", "DCG@{k}", "DCG(dcg='exp-log2')@{k}",
              "DCG(gains={0:0,1:1,2:5,3:11.5})@{k}", "DCG(gains={0:0,1:1,2:3,3:4}, discount=[1,0.5,0.25])@{k}",
              "DCG(discount='zipf')", "DCG(discount=[0.5,1,0.2])@{k}"), browsing=browse_dcg, holes=monotone))
