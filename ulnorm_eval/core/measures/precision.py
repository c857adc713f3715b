"""Binary measures over relevance at a level: AP, SP, P, R, Rprec, RR.

One section per family: kernel, expectation, record.  Their gain is 1 for a relevant document
(grade >= the level), so P = the relevant documents of the pool.
"""
from __future__ import annotations

import numpy as np

from ..holes import best_count, monotone, outside_by_r
from ..kernels import Ranking, rel_of
from ..records import SEEN_UNTIL_GAIN, Family, Param, TrecName, register
from .common import (BINARY_EXACT, JUDGED_ONLY, RandomPool, context, expected_rr, expected_sp, pool_counts, rel_index, rel_total,
                     safe)
from .cumulative import TREC_CUTOFFS

NICK_OFFICIAL, NICK_ALL = ("official", "all_trec"), ("all_trec",)  # trec_eval nicknames

REL = Param(name="rel", kind="int", default=None, doc="minimum grade counted relevant (default: -l/--rel-level, 1)")
AP_NORM = Param(name="norm", kind="str", default="R", doc="denominator of AP@k: 'R' (the query's relevant judged documents: trec_eval, "
                "ir_measures) or 'k' (Karmaker & Feng 2022 eq. 3, AP@k = SP@k/k: their MAP@k tables; needs @k). "
                "The UL variants are the same under both (a per-query factor); plain AP@k is not",
                choices=("R", "k"))


def relevant_docs(ranking, judgements, measure, level, trec: bool = False):
    """(positions of the relevant ranked documents, R per row) at ``measure``'s level: grade >= rel,
    or with ``trec`` trec_eval's code >= rel and R at level max(rel, 0) (:mod:`.common`; the two
    differ only below level 0)."""
    if trec:
        ctx = context(measure, level)
        return rel_index(ranking, ctx), rel_total(ranking, judgements, ctx)
    rel = rel_of(measure, level)
    return ranking.relevant_index(rel), judgements.n_relevant(rel)[ranking.base]


def sum_precision(ranking: Ranking, idx, key, k=None) -> np.ndarray:
    """sum_{i<=k, d_i relevant} P@i per row, the relevant documents at positions ``idx`` (once per ``key``)."""
    # the terms of every cutoff come from one array over the relevant documents only
    weights = ranking.memo(("precision at relevant",) + key, lambda: _precision_at(ranking, idx))
    return ranking.sum_within(idx, weights, k)


def _precision_at(ranking: Ranking, idx: np.ndarray) -> np.ndarray:
    """Precision at each relevant document: its 1-based number among the relevant ones of its row / rank."""
    row = ranking.row[idx]  # sorted: where each row starts among idx, by searchsorted
    return (np.arange(1, len(idx) + 1) - np.searchsorted(row, np.arange(ranking.nrows))[row]) / (ranking.pos[idx] + 1.0)


# --------------------------------------------------------------------------- SP and AP

def k_sp(ranking, judgements, measure, rel_level):
    """SP@k = sum_{i<=k, d_i relevant} P@i (Karmaker & Feng 2022 eq. 4)."""
    idx, _ = relevant_docs(ranking, judgements, measure, rel_level)
    return sum_precision(ranking, idx, (float(rel_of(measure, rel_level)),), measure.cutoff)


def k_ap(ranking, judgements, measure, rel_level):
    """AP@k = SP@k / R with R all relevant judged documents (trec_eval map, map_cut); 0 when R = 0.
    With norm='k', AP@k = SP@k / k (Karmaker & Feng 2022 eq. 3)."""
    summed = k_sp(ranking, judgements, measure, rel_level)
    if measure.get("norm") == "k":
        return summed / float(measure.cutoff)
    return safe(summed, judgements.n_relevant(rel_of(measure, rel_level))[ranking.base])


def e_sp(random_pool: RandomPool) -> np.ndarray:
    """E[SP@k] = (P/n) H_m + P(P-1)/(n(n-1)) (m - H_m).  Karmaker & Feng 2022 §4.5.1 get k (P/n)^2 by
    assuming precision independent of relevance, which is false (``paper`` keeps theirs)."""
    return expected_sp(random_pool.n, random_pool.P, random_pool.m, random_pool.paper, random_pool.k)


def _ap_denominator(random_pool: RandomPool):
    return float(random_pool.k) if random_pool.measure.get("norm") == "k" else random_pool.R


def e_ap(random_pool: RandomPool) -> np.ndarray:
    """E[AP@k] = E[SP@k] / R (for P = R = n' Westerborg 2022 Table 3.3 and Bestgen's E[AP]);
    E[SP@k] / k with norm='k'."""
    return safe(e_sp(random_pool), _ap_denominator(random_pool))


def paper_ideal_sp(random_pool: RandomPool) -> np.ndarray:
    """IUB[SP@k] = k under ``--expectation paper`` (Karmaker & Feng 2022 §3.2, "a precision value of
    1.0 for every position"); exact only when the query has at least k relevant documents."""
    return np.full(random_pool.pool.nq, float(random_pool.k))


def paper_ideal_ap(random_pool: RandomPool) -> np.ndarray:
    """IUB[AP@k] = k/R under ``--expectation paper`` (AP@k = SP@k / R); 1 with norm='k'."""
    return safe(paper_ideal_sp(random_pool), _ap_denominator(random_pool))


def _validate_ap(params: dict, cutoff) -> str | None:
    if params.get("norm") == "k" and cutoff is None:
        return "AP(norm='k') is SP@k/k: give a cutoff, e.g. @10"
    return None


# --------------------------------------------------------------------------- judgment holes
# (docs/holes.md proves each strategy's assignments extreme; tests/core/test_holes.py enumerates them)

def holes_ap(holes):
    """AP@k over the holes' relevance (docs/holes.md): holes past the cutoff non-relevant for the
    maximum, relevant for the minimum; within it the c highest-ranked (lowest-ranked) holes relevant,
    every c searched by running sums.  AP(norm='k') = SP@k/k has no R: monotone."""
    if holes.forced or holes.m.get("norm") == "k":
        return monotone(holes)
    ranking = holes.rk
    inc = holes.inc
    relj = holes.judged_relevant & inc
    unjudged_inside = holes.unj & inc
    rank = ranking.pos + 1.0
    judged_rel_above = ranking.running(relj)  # at a hole: judged relevant documents above it
    weights = np.where(relj, 1.0 / rank, 0.0)
    tail = ranking.rowsum(weights)[ranking.row] - ranking.running(weights)  # sum of 1/rank over judged relevant ones below
    sum_precision = ranking.rowsum(np.where(relj, judged_rel_above / rank, 0.0))
    R = holes.R  # with documents outside the ranking relevant too (outside_by_r)
    hole_index = ranking.running(unjudged_inside)  # 1-based index of a hole among the holes within the cutoff, from the top
    # the t-th hole from the top made relevant after the t-1 above it: its own precision, and one
    # more relevant document above every judged relevant one below it
    dmax = np.where(unjudged_inside, (judged_rel_above + hole_index) / rank + tail, 0.0)
    upper = (sum_precision[ranking.row] + ranking.running(dmax)) / np.maximum(R[ranking.row] + hole_index, 1.0)
    cmax = best_count(ranking, unjudged_inside, hole_index, upper, safe(sum_precision, R), True)
    high = np.where(unjudged_inside & (hole_index <= cmax[ranking.row]), holes.g_hi, holes.g_lo)
    V = ranking.rowsum(holes.unj & ~inc)
    index_from_bottom = ranking.rowsum(unjudged_inside)[ranking.row] - hole_index + 1  # 1-based index from the bottom
    uinv = np.where(unjudged_inside, 1.0 / rank, 0.0)
    below = ranking.rowsum(uinv)[ranking.row] - ranking.running(uinv)  # the holes below, all relevant already
    dmin = np.where(unjudged_inside, (judged_rel_above + 1.0) / rank + tail + below, 0.0)
    from_bottom = ranking.rowsum(dmin)[ranking.row] - ranking.running(dmin) + dmin
    down = (sum_precision[ranking.row] + from_bottom) / np.maximum(R[ranking.row] + V[ranking.row] + index_from_bottom, 1.0)
    cmin = best_count(ranking, unjudged_inside, index_from_bottom, down, safe(sum_precision, R + V), False)
    low = np.where((holes.unj & ~inc) | (unjudged_inside & (index_from_bottom <= cmin[ranking.row])), holes.g_hi, holes.g_lo)
    return low, high


def outside_ap(holes, extra):
    """AP = SP / R (:func:`~ulnorm_eval.core.holes.outside_by_r`); AP(norm='k') = SP@k / k has no R:
    documents outside the ranking do not move it."""
    return (np.full(holes.rk.nrows, np.inf), None) if holes.m.get("norm") == "k" else outside_by_r(holes, extra)


def holes_recall(holes):
    """R@k = (judged relevant in the top k + relevant holes there) / (R + relevant holes): holes within
    the cutoff relevant and those past it not for the maximum ((a+c)/(R+c) grows with c as a <= R),
    the reverse for the minimum."""
    if holes.forced:
        return monotone(holes)
    past = holes.unj & ~holes.inc
    return np.where(past, holes.g_hi, holes.g_lo), np.where(past, holes.g_lo, holes.g_hi)


def holes_rprec(holes):
    """Rprec with c relevant holes: R = R_J + c, and the relevant documents in the top R are most with
    the c highest-ranked holes relevant, fewest with the c lowest-ranked; every c is searched."""
    if holes.forced:
        return monotone(holes)
    ranking = holes.rk
    unj, relj = holes.unj, holes.judged_relevant
    R = holes.J.n_relevant(holes.rel)[ranking.base]
    jrc, unjudged_above = ranking.running(relj), ranking.running(unj)
    n, U = ranking.length, ranking.rowsum(unj)

    def at(cum, depth, rows):  # the running count ``cum`` at ``depth`` in each row of ``rows``
        depth_cut = np.minimum(depth, n[rows]).astype(np.int64)
        idx = np.maximum(ranking.starts[rows] + depth_cut - 1, 0)
        return np.where(depth_cut > 0, cum[idx] if len(cum) else 0.0, 0.0)

    rows = np.arange(ranking.nrows)
    plain = safe(at(jrc, R, rows), R)
    hole_index = unjudged_above
    depth = R[ranking.row] + hole_index
    utop = at(unjudged_above, depth, ranking.row)
    jtop = at(jrc, depth, ranking.row)
    upper = (jtop + np.minimum(hole_index, utop)) / np.maximum(depth, 1.0)
    cmax = best_count(ranking, unj, hole_index, upper, plain, True)
    index_from_bottom = U[ranking.row] - hole_index + 1
    depth = R[ranking.row] + index_from_bottom
    utop = at(unjudged_above, depth, ranking.row)
    jtop = at(jrc, depth, ranking.row)
    down = (jtop + np.maximum(0.0, index_from_bottom - (U[ranking.row] - utop))) / np.maximum(depth, 1.0)
    cmin = best_count(ranking, unj, index_from_bottom, down, plain, False)
    return (np.where(unj & (index_from_bottom <= cmin[ranking.row]), holes.g_hi, holes.g_lo),
            np.where(unj & (hole_index <= cmax[ranking.row]), holes.g_hi, holes.g_lo))


def outside_rprec(holes, extra):
    """(least, largest) Rprec when up to ``extra`` documents outside the ranking may be relevant too
    (not monotone in them): for each total T = R the least value has c = max(0, T - R_J - extra) of
    the lowest-ranked holes relevant, the largest c = min(holes, T - R_J) of the highest-ranked; T
    runs up to the ranking's length and over the two values past it that can be extreme (docs/holes.md)."""
    ranking = holes.rk
    unj, relj = holes.unj, holes.judged_relevant
    R = holes.J.n_relevant(holes.rel)[ranking.base].astype(np.float64)
    U = ranking.rowsum(unj)
    K = np.asarray(extra, dtype=np.float64)
    jrc, unjudged_above = ranking.running(relj), ranking.running(unj)
    n = ranking.length.astype(np.float64)
    most = R + U + K
    inside = np.maximum(np.minimum(most, n) - R + 1, 0).astype(np.int64)  # the T within the ranking: R_J ..
    width = inside + 2
    row = np.repeat(np.arange(ranking.nrows), width)
    step = np.arange(int(width.sum())) - np.repeat(np.cumsum(width) - width, width)
    past = np.where(step == inside[row], (R + K)[row], (R + U)[row])
    # the two T past the ranking, clipped into n + 1 .. R_J + holes + extra (into the range when it ends within n)
    T = np.where(step < inside[row], R[row] + step, np.minimum(np.maximum(past, n[row] + 1), most[row]))
    index = np.minimum(T, n[row])
    idx = np.maximum(ranking.starts[row] + index.astype(np.int64) - 1, 0)
    jtop = np.where(index > 0, jrc[idx] if len(jrc) else 0.0, 0.0)
    utop = np.where(index > 0, unjudged_above[idx] if len(unjudged_above) else 0.0, 0.0)
    with np.errstate(invalid="ignore"):
        excess = np.maximum(0.0, T - R[row] - K[row])
        low_values = safe(jtop + np.maximum(0.0, excess - (U[row] - utop)), T)
        high_values = safe(jtop + np.minimum(np.minimum(U[row], T - R[row]), utop), T)
    low = np.full(ranking.nrows, np.inf)
    np.minimum.at(low, row, np.where(np.isfinite(T), low_values, 0.0))  # T without end: J_n / T -> 0
    high = np.full(ranking.nrows, -np.inf)
    np.maximum.at(high, row, np.where(np.isfinite(T), high_values, -np.inf))
    return low, high


register(Family(
    name="AP", params=(REL, AP_NORM, JUDGED_ONLY), cutoff="optional", kernel=k_ap, **BINARY_EXACT, expectation=e_ap,
    formula="SP@k / R, R = relevant judged documents of the query (trec_eval map / map_cut); SP@k / k with norm='k'",
    expectation_formula="E[SP@k] / R (exact; E[SP@k] / k with norm='k')", cite="Karmaker & Feng 2022 eq. 3-4; Westerborg 2022 §2",
    trec=(TrecName(base="map", nick=NICK_OFFICIAL), TrecName(base="map_cut", arg="each", defaults=TREC_CUTOFFS, nick=NICK_ALL)),
                irm="AP", aliases=("MAP",),
    paper_ideal=paper_ideal_ap, examples=("AP", "AP(rel=2)", "AP@{k}", "AP(norm='k')@{k}"), validate=_validate_ap,
    holes=holes_ap, holes_outside=outside_ap))

register(Family(
    name="SP", params=(REL,), cutoff="optional", kernel=k_sp, **BINARY_EXACT, expectation=e_sp,
    formula="sum_{i<=k, d_i relevant} P@i (sum of precision)",
    expectation_formula="(P/n) H_m + P(P-1)/(n(n-1)) (m - H_m), m = min(k, n) (exact; the papers' k(P/n)^2 with --expectation paper)",
    cite="Karmaker & Feng 2022 eq. 4", aliases=("SumP",), paper_ideal=paper_ideal_sp,
    examples=("SP", "SP@{k}"), holes=monotone))


# --------------------------------------------------------------------------- counts of relevant documents
# P, R and Rprec, and trec_eval's relative_P, success, Rprec_mult, num_rel_ret, set_P, set_recall and
# set_relative_P (registered in .trec): one kernel, the relevant documents within a depth over a
# denominator, each a function of (measure, R, num_ret) named in this table
SIZES = {"k": lambda measure, R, ret: measure.cutoff, "R": lambda measure, R, ret: R, "all": lambda measure, R, ret: np.inf,
         "ret": lambda measure, R, ret: ret, "1": lambda measure, R, ret: 1.0,
         "min(k,R)": lambda measure, R, ret: np.minimum(float(measure.cutoff), R),
         "min(ret,R)": lambda measure, R, ret: np.minimum(ret, R),
         "c": lambda measure, R, ret: np.floor(float(measure.get("mult")) * R + 0.9)}  # Rprec_mult's (long)(x R + 0.9)


def counted(depth: str, over: str | None, trec: bool = False):
    """The kernel |relevant in the top ``depth``| / ``over`` (:data:`SIZES`; 0 when it is 0; ``over``
    None: 1 if any, else 0), relevant as :func:`relevant_docs` with ``trec``."""
    def kernel(ranking, judgements, measure, level):
        idx, R = relevant_docs(ranking, judgements, measure, level, trec)
        ret = ranking.length.astype(np.float64)
        count = ranking.count_within(idx, SIZES[depth](measure, R, ret))
        return (count > 0).astype(np.float64) if over is None else safe(count, SIZES[over](measure, R, ret))
    return kernel


def expected_count(depth: str, over: str, trec: bool = False):
    """E[:func:`counted`] = (P/n) min(depth, n) / over: each rank holds a relevant document with chance
    P/n (linearity); ``trec``: P and R as trec_eval counts them (:func:`~.common.pool_counts`)."""
    def expectation(random_pool: RandomPool) -> np.ndarray:
        measure = random_pool.measure
        if trec:  # (P min(k, n) / n) / min(k, R): relative_P's, in this order
            n, P, _, _, _, R, _ = pool_counts(random_pool)
            return safe(safe(P * np.minimum(n, SIZES[depth](measure, R, n)), n), SIZES[over](measure, R, n))
        n, R = random_pool.n, random_pool.R
        return safe(random_pool.mean_gain * np.minimum(n, SIZES[depth](measure, R, n)), SIZES[over](measure, R, n))
    return expectation


def browse_p(measure):
    """seen(i) = 1 within K, N = K."""
    k = measure.cutoff
    return (lambda pos: np.ones(len(pos))), (lambda raw: raw / k)


register(Family(
    name="P", params=(REL, JUDGED_ONLY), cutoff="required", kernel=counted("k", "k"), **BINARY_EXACT, expectation=expected_count("k", "k"),
    formula="|relevant in top k| / k", expectation_formula="(P/n) * min(k, n) / k (exact)", cite="trec_eval P",
    trec=(TrecName(base="P", arg="each", defaults=TREC_CUTOFFS, nick=NICK_OFFICIAL),), irm="P", examples=("P@{k}",), browsing=browse_p,
    unique=True, holes=monotone))

register(Family(
    name="R", params=(REL, JUDGED_ONLY), cutoff="required", kernel=counted("k", "R"), **BINARY_EXACT, expectation=expected_count("k", "R"),
    formula="|relevant in top k| / R", expectation_formula="(P/n) * min(k, n) / R (exact)", cite="trec_eval recall",
    trec=(TrecName(base="recall", arg="each", defaults=TREC_CUTOFFS, nick=NICK_ALL),), irm="R", aliases=("Recall",),
    examples=("R@{k}",), holes=holes_recall, holes_outside=outside_by_r))


# --------------------------------------------------------------------------- RR and Rprec

def k_rr(ranking, judgements, measure, rel_level):
    """RR@k = 1 / rank of the first relevant document within the top k (0 if none)."""
    idx = ranking.relevant_index(rel_of(measure, rel_level))
    if measure.cutoff is not None:
        idx = idx[ranking.pos[idx] < measure.cutoff]
    out = np.zeros(ranking.nrows)
    if len(idx):
        rows, first = np.unique(ranking.row[idx], return_index=True)
        out[rows] = 1.0 / (ranking.pos[idx[first]] + 1.0)
    return out


def browse_rr(measure):
    """RR in eq. 1 of Normalized Residual Gain (SIGIR-AP 2024), through its App. A correspondence with
    C/W/L: G(d_i) = r_i, seen(i) = V(i) = prod_{j<i} (1 - r_j) (the searcher stops at the first
    relevant item), N = V+ = the ranks seen; RR = r_f / f = 1/f."""
    return SEEN_UNTIL_GAIN, None


def e_rr(random_pool: RandomPool) -> np.ndarray:
    """E[RR@k] = sum_{i<=m} (1/i) C(n-P, i-1)/C(n, i-1) * P/(n-i+1) (first relevant at rank i)."""
    return expected_rr(random_pool.n, random_pool.P, random_pool.m)


register(Family(
    name="RR", params=(REL, JUDGED_ONLY), cutoff="optional", kernel=k_rr, **BINARY_EXACT, expectation=e_rr,
    formula="1 / rank of the first relevant document (0 if none in the top k)",
    expectation_formula="sum_{i<=m} (1/i) C(n-P, i-1)/C(n, i-1) * P/(n-i+1) (exact)", cite="trec_eval recip_rank",
    trec=(TrecName(base="recip_rank", nick=NICK_OFFICIAL),), irm="RR", aliases=("MRR",), examples=("RR", "RR@{k}"),
    browsing=browse_rr, holes=monotone))

register(Family(
    name="Rprec", params=(REL, JUDGED_ONLY), cutoff="none", kernel=counted("R", "R"), **BINARY_EXACT, expectation=expected_count("R", "R"),
    formula="|relevant in top R| / R", expectation_formula="(P/n) * min(R, n) / R (exact)", cite="trec_eval Rprec",
    trec=(TrecName(base="Rprec", nick=NICK_OFFICIAL),), irm="Rprec", examples=("Rprec",), holes=holes_rprec,
    holes_outside=outside_rprec))
