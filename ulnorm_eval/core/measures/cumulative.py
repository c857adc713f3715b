"""Discounted cumulative gain: DCG and nDCG (Järvelin & Kekäläinen 2002).

One section per family: gain, kernel, expectation, record.
"""
from __future__ import annotations

import numpy as np

from ..kernels import Judgements, Ranking, discount, judged_only, rel_of, safe_div, within_cutoff
from ..records import Family, Param, TrecName, register
from .common import RandomPool, disc_prefix, mapped_gains, safe

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default cutoffs (ndcg_cut, P, ...)

DCG_PARAM = Param("dcg", "str", "log2", "gain/discount: 'log2' (gain = grade, trec_eval) or 'exp-log2' "
                  "(gain = 2^grade - 1, Karmaker & Feng 2022, Feng 2023)", choices=("log2", "exp-log2"))
GAINS_PARAM = Param("gains", "gains", None, "explicit gain for some grades, e.g. {0:0,1:1,2:3}; a grade not listed "
                    "keeps gain = grade (negative: 0), as trec_eval's ndcg.L=G and ir_measures do")


def gain(grade, m, rel, max_grade):
    """grade (negative: 0), or 2^grade - 1 with dcg='exp-log2', or the explicit ``gains`` map."""
    gains = m.get("gains")
    if gains is not None:
        return mapped_gains(grade, gains)
    g = np.maximum(grade, 0.0)
    return np.exp2(g) - 1.0 if m.get("dcg") == "exp-log2" else g


def dcg(rk: Ranking, m, rel: float, max_grade: float) -> np.ndarray:
    """sum_{i<=k} gain(d_i) / log2(i+1) per row."""
    w = judged_only(rk, gain(rk.grade, m, rel, max_grade)) * discount(rk.pos)
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

    return J.cached(("IDCG", str(m)), make)


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
    return rp.mean_gain * disc_prefix(int(depth.max()) if depth.size else 0)[depth]


def e_ndcg(rp: RandomPool) -> np.ndarray:
    """E[nDCG@k] = E[DCG@k] / IDCG@k (Westerborg 2022 eq. 3.7)."""
    return safe(e_dcg(rp), ideal_dcg(rp.J, rp.measure, rp.rel))


def browse_dcg(m):
    """seen(i) = 1/log2(i+1): the only discount that reproduces Table 1 of Normalized Residual Gain
    (SIGIR-AP 2024); N = 1."""
    return discount, _identity


def browse_ndcg(m):
    """As DCG, normalised by the ideal ranking of the judged documents by residual gain."""
    return discount, None


def _identity(raw):
    return raw


register(Family(
    "nDCG", (DCG_PARAM, GAINS_PARAM), "optional", k_ndcg, gain, "exact", e_ndcg,
    "DCG@k / IDCG@k, DCG@k = sum_{i<=k} gain(d_i) / log2(i+1); IDCG from the query's judged documents sorted by gain",
    "mean(gain over pool) * sum_{i<=min(k,n)} 1/log2(i+1) / IDCG@k (exact, linearity)",
    "Jarvelin & Kekalainen 2002; Karmaker & Feng 2022 eq. 1-2; Feng 2023 §2", "gains",
    trec=(TrecName("ndcg", "map", "gains", value_name="gain", nick=("all_trec",)),
          TrecName("ndcg_cut", "each", defaults=TREC_CUTOFFS, nick=("all_trec",))),
    irm="nDCG", aliases=("NDCG",),
    examples=("nDCG", "nDCG(dcg='exp-log2')", "nDCG(gains={0:0,1:1,2:5,3:11.5})", "nDCG@{k}"),
    browsing=browse_ndcg))

register(Family(
    "DCG", (DCG_PARAM, GAINS_PARAM), "optional", k_dcg, gain, "exact", e_dcg,
    "sum_{i<=k} gain(d_i) / log2(i+1)",
    "mean(gain over pool) * sum_{i<=min(k,n)} 1/log2(i+1) (exact, linearity)",
    "Jarvelin & Kekalainen 2002; Karmaker & Feng 2022 eq. 1", "gains", irm="DCG",
    examples=("DCG", "DCG(dcg='exp-log2')", "DCG@{k}", "DCG(dcg='exp-log2')@{k}",
              "DCG(gains={0:0,1:1,2:5,3:11.5})@{k}"), browsing=browse_dcg))
