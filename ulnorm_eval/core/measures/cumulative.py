"""Discounted cumulative gain: DCG and nDCG (Järvelin & Kekäläinen 2002).

One section per family: gain, kernel, expectation, record.
"""
from __future__ import annotations

from ..lazy import np

from ..kernels import (Judgements, Ranking, discount, judged_only, rel_of, safe_div, vector_discount,
                       within_cutoff)
from ..records import Family, Param, TrecName, register
from .common import RandomPool, disc_prefix, mapped_gains, safe

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default cutoffs (ndcg_cut, P, ...)

DCG_PARAM = Param("dcg", "str", "log2", "gain/discount: 'log2' (gain = grade, trec_eval) or 'exp-log2' "
                  "(gain = 2^grade - 1, Karmaker & Feng 2022, Feng 2023)", choices=("log2", "exp-log2"))
DISCOUNT_PARAM = Param("discount", "discount", "log2", "discount of ranks 1, 2, ...: 'log2' (1/log2(i+1)), 'zipf' (1/i), "
                       "'linear' ((k+1-i)/k, needs @k), or a list of factors, e.g. [1,0.63,0.5] (0 past its end; "
                       "what `ulnorm-eval stability` prints, Kanoulas & Aslam 2009).  The ideal ranking (IDCG, IUB) is "
                       "the gain-sorted one, the maximum only for a non-increasing discount",
                       choices=("log2", "zipf", "linear"))
GAINS_PARAM = Param("gains", "gains", None, "explicit gain for some grades, e.g. {0:0,1:1,2:3}; a grade not listed "
                    "keeps gain = grade (negative: 0), as trec_eval's ndcg.L=G and ir_measures do")


def gain(grade, m, rel, max_grade):
    """grade (negative: 0), or 2^grade - 1 with dcg='exp-log2', or the explicit ``gains`` map."""
    gains = m.get("gains")
    if gains is not None:
        return mapped_gains(grade, gains)
    g = np.maximum(grade, 0.0)
    return np.exp2(g) - 1.0 if m.get("dcg") == "exp-log2" else g


def rank_discount(m, pos: np.ndarray) -> np.ndarray:
    """The discount of 0-based ranks ``pos``: 1/log2(i+1) (Järvelin & Kekäläinen 2002), 1/i (Zipfian),
    (k+1-i)/k (linear), or an explicit vector d_i, 0 past its end (Kanoulas & Aslam 2009 §2.3)."""
    d = m.get("discount")
    if d is None or d == "log2":
        return discount(pos)
    if d == "zipf":
        return 1.0 / (pos + 1.0)
    if d == "linear":
        k = float(m.cutoff)
        return np.maximum(k - pos, 0.0) / k
    return vector_discount(pos, d)


def dcg(rk: Ranking, m, rel: float, max_grade: float) -> np.ndarray:
    """sum_{i<=k} gain(d_i) * discount(i) per row (discount 1/log2(i+1) by default)."""
    w = judged_only(rk, gain(rk.grade, m, rel, max_grade)) * rank_discount(m, rk.pos)
    cut = within_cutoff(rk, m)
    if cut is not None:
        w = w * cut
    return rk.rowsum(w)


def ideal_dcg(J: Judgements, m, rel: float) -> np.ndarray:
    """IDCG@k per query from all judged documents sorted by gain (trec_eval's ideal)."""
    def make():
        g = gain(J.grade, m, rel, J.max_grade)
        order = np.lexsort((-g, J.row))
        return dcg(Ranking.from_sorted(J.row[order], J.grade[order], J.nq), m, rel, J.max_grade)

    return J.cached(("IDCG", str(m), rel), make)


def k_dcg(rk, J, m, rel_level):
    """DCG@k = sum_{i<=k} gain(d_i) / log2(i+1)."""
    return dcg(rk, m, rel_of(m, rel_level), J.max_grade)


def k_ndcg(rk, J, m, rel_level):
    """nDCG@k = DCG@k / IDCG@k, the ideal from the query's judged documents; 0 when IDCG = 0."""
    rel = rel_of(m, rel_level)
    return safe_div(dcg(rk, m, rel, J.max_grade), ideal_dcg(J, m, rel)[rk.base])


def e_dcg(rp: RandomPool) -> np.ndarray:
    """E[DCG@k] = mean(g) * sum_{i<=m} 1/log2(i+1) (Karmaker & Feng 2022 eq. 7, Feng 2023 eq. 6.1,
    summed to m, not k: past the pool's end there are no documents; ``paper``: summed to k)."""
    k = rp.k
    depth = (np.full_like(rp.n, float(k)) if (rp.paper and k is not None) else rp.m).astype(np.int64)
    top = int(depth.max()) if depth.size else 0
    if rp.measure.get("discount") in (None, "log2"):
        return rp.mean_gain * disc_prefix(top)[depth]
    # any discount: by linearity each rank holds the mean gain, E = mean(g) * sum_{i<=m} d_i
    prefix = np.concatenate(([0.0], np.cumsum(rank_discount(rp.measure, np.arange(top)))))
    return rp.mean_gain * prefix[depth]


def e_ndcg(rp: RandomPool) -> np.ndarray:
    """E[nDCG@k] = E[DCG@k] / IDCG@k (Westerborg 2022 eq. 3.7)."""
    return safe(e_dcg(rp), ideal_dcg(rp.J, rp.measure, rp.rel))


def browse_dcg(m):
    """seen(i) = 1/log2(i+1): the only discount that reproduces Table 1 of Normalized Residual Gain
    (SIGIR-AP 2024); N = 1.  An explicit ``discount`` is the measure's own browsing model."""
    return _seen(m), _identity


def browse_ndcg(m):
    """As DCG, normalised by the ideal ranking of the judged documents by residual gain."""
    return _seen(m), None


def _seen(m):
    if m.get("discount") in (None, "log2"):
        return discount
    return lambda pos: rank_discount(m, pos)


def _validate(params: dict, cutoff) -> str | None:
    if params.get("discount") == "linear" and cutoff is None:
        return "discount='linear' is (k+1-i)/k: give a cutoff, e.g. @10"
    return None


def _extremes(m) -> str:
    """Sorting by gain gives the maximum (descending) and minimum (ascending) of sum_i gain_i d_i for
    any real gains when the discounts d_1 >= d_2 >= ... >= 0 (0 past the cutoff): the rearrangement
    inequality.  A discount vector that rises somewhere, or goes negative, is searched instead."""
    d = m.get("discount")
    if d is None or isinstance(d, str):
        return "sorted"
    d = [float(x) for x in d]
    ok = all(a >= b for a, b in zip(d, d[1:])) and (not d or d[-1] >= 0)
    return "sorted" if ok else "search"


_EXTREMES_NOTE = ("a discount vector that is not non-increasing and non-negative makes the gain-sorted "
                  "orderings no extremes: IUB and WLB are the maximum and minimum over every arrangement "
                  "of the pool's gains, at most 5040 of them, and withheld beyond")


def _identity(raw):
    return raw


register(Family(
    "nDCG", (DCG_PARAM, GAINS_PARAM, DISCOUNT_PARAM), "optional", k_ndcg, gain, "exact", e_ndcg,
    "DCG@k / IDCG@k, DCG@k = sum_{i<=k} gain(d_i) / log2(i+1); IDCG from the query's judged documents sorted by gain",
    "mean(gain over pool) * sum_{i<=min(k,n)} 1/log2(i+1) / IDCG@k (exact, linearity)",
    "Jarvelin & Kekalainen 2002; Karmaker & Feng 2022 eq. 1-2; Feng 2023 §2", "gains",
    trec=(TrecName("ndcg", "map", "gains", value_name="gain", nick=("all_trec",)),
          TrecName("ndcg_cut", "each", defaults=TREC_CUTOFFS, nick=("all_trec",))),
    irm="nDCG", aliases=("NDCG",),
    examples=("nDCG", "nDCG(dcg='exp-log2')", "nDCG(gains={0:0,1:1,2:5,3:11.5})", "nDCG@{k}",
              "nDCG(discount=[1,0.7,0.7,0.2])@{k}", "nDCG(discount='zipf')@{k}", "nDCG(discount='linear')@{k}"),
    browsing=browse_ndcg, validate=_validate, extremes=_extremes, extremes_note=_EXTREMES_NOTE))

register(Family(
    "DCG", (DCG_PARAM, GAINS_PARAM, DISCOUNT_PARAM), "optional", k_dcg, gain, "exact", e_dcg,
    "sum_{i<=k} gain(d_i) / log2(i+1)",
    "mean(gain over pool) * sum_{i<=min(k,n)} 1/log2(i+1) (exact, linearity)",
    "Jarvelin & Kekalainen 2002; Karmaker & Feng 2022 eq. 1", "gains", irm="DCG",
    examples=("DCG", "DCG(dcg='exp-log2')", "DCG@{k}", "DCG(dcg='exp-log2')@{k}",
              "DCG(gains={0:0,1:1,2:5,3:11.5})@{k}", "DCG(gains={0:0,1:1,2:3,3:4}, discount=[1,0.5,0.25])@{k}",
              "DCG(discount='zipf')", "DCG(discount=[0.5,1,0.2])@{k}"), browsing=browse_dcg, validate=_validate,
    extremes=_extremes, extremes_note=_EXTREMES_NOTE))
