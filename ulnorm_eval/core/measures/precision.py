"""Binary measures over relevance at a level: AP, SP, P, R, Rprec, RR.

One section per family: kernel, expectation, record.  Their gain is 1 for a relevant document
(grade >= the level), so P = the relevant documents of the pool.
"""
from __future__ import annotations

from ..lazy import np

from ..kernels import Ranking, rel_of, relevant, safe_div, within_cutoff
from ..records import Family, Param, TrecName, register
from .common import RandomPool, binary_gain, expected_rr, expected_sp, safe
from .cumulative import TREC_CUTOFFS

OA, A = ("official", "all_trec"), ("all_trec",)  # trec_eval nicknames

REL = Param("rel", "int", None, "minimum grade counted relevant (default: -l/--rel-level, 1)")
AP_NORM = Param("norm", "str", "R", "denominator of AP@k: 'R' (the query's relevant judged documents: trec_eval, "
                "ir_measures) or 'k' (Karmaker & Feng 2022 eq. 3, AP@k = SP@k/k: their MAP@k tables; needs @k). "
                "The UL variants are the same under both (a per-query factor); plain AP@k is not",
                choices=("R", "k"))


def sum_precision(rk: Ranking, m, rel: float) -> np.ndarray:
    """sum_{i<=k, d_i relevant} P@i per row."""
    relv = relevant(rk, rel)
    csum = np.concatenate(([0], np.cumsum(relv)))
    within = csum[1:] - csum[rk.starts[rk.row]]  # relevant at or above each position
    w = np.where(relv, within / (rk.pos + 1.0), 0.0)
    cut = within_cutoff(rk, m)
    if cut is not None:
        w = w * cut
    return rk.rowsum(w)


# --------------------------------------------------------------------------- SP and AP

def k_sp(rk, J, m, rel_level):
    """SP@k = sum_{i<=k, d_i relevant} P@i (Karmaker & Feng 2022 eq. 4)."""
    return sum_precision(rk, m, rel_of(m, rel_level))


def k_ap(rk, J, m, rel_level):
    """AP@k = SP@k / R with R all relevant judged documents (trec_eval map, map_cut); 0 when R = 0.
    With norm='k', AP@k = SP@k / k (Karmaker & Feng 2022 eq. 3)."""
    rel = rel_of(m, rel_level)
    if m.get("norm") == "k":
        return sum_precision(rk, m, rel) / float(m.cutoff)
    return safe_div(sum_precision(rk, m, rel), J.n_relevant(rel)[rk.base])


def e_sp(rp: RandomPool) -> np.ndarray:
    """E[SP@k] = (P/n) H_m + P(P-1)/(n(n-1)) (m - H_m).  Karmaker & Feng 2022 §4.5.1 get k (P/n)^2 by
    assuming precision independent of relevance, which is false (``paper`` keeps theirs)."""
    return expected_sp(rp.n, rp.P, rp.m, rp.paper, rp.k)


def _ap_denominator(rp: RandomPool):
    return float(rp.k) if rp.measure.get("norm") == "k" else rp.R


def e_ap(rp: RandomPool) -> np.ndarray:
    """E[AP@k] = E[SP@k] / R (for P = R = n' Westerborg 2022 Table 3.3 and Bestgen's E[AP]);
    E[SP@k] / k with norm='k'."""
    return safe(e_sp(rp), _ap_denominator(rp))


def paper_ideal_sp(rp: RandomPool) -> np.ndarray:
    """IUB[SP@k] = k under ``--expectation paper`` (Karmaker & Feng 2022 §3.2, "a precision value of
    1.0 for every position"); exact only when the query has at least k relevant documents."""
    return np.full(rp.pool.nq, float(rp.k))


def paper_ideal_ap(rp: RandomPool) -> np.ndarray:
    """IUB[AP@k] = k/R under ``--expectation paper`` (AP@k = SP@k / R); 1 with norm='k'."""
    return safe(paper_ideal_sp(rp), _ap_denominator(rp))


def _validate_ap(params: dict, cutoff) -> str | None:
    if params.get("norm") == "k" and cutoff is None:
        return "AP(norm='k') is SP@k/k: give a cutoff, e.g. @10"
    return None


register(Family(
    "AP", (REL, AP_NORM), "optional", k_ap, binary_gain, "exact", e_ap,
    "SP@k / R, R = relevant judged documents of the query (trec_eval map / map_cut); SP@k / k with norm='k'",
    "E[SP@k] / R (exact; E[SP@k] / k with norm='k')", "Karmaker & Feng 2022 eq. 3-4; Westerborg 2022 §2", "rel",
    trec=(TrecName("map", nick=OA), TrecName("map_cut", "each", defaults=TREC_CUTOFFS, nick=A)), irm="AP", aliases=("MAP",),
    paper_ideal=paper_ideal_ap, examples=("AP", "AP(rel=2)", "AP@{k}", "AP(norm='k')@{k}"), validate=_validate_ap))

register(Family(
    "SP", (REL,), "optional", k_sp, binary_gain, "exact", e_sp,
    "sum_{i<=k, d_i relevant} P@i (sum of precision)",
    "(P/n) H_m + P(P-1)/(n(n-1)) (m - H_m), m = min(k, n) (exact; the papers' k(P/n)^2 with --expectation paper)",
    "Karmaker & Feng 2022 eq. 4", "rel", aliases=("SumP",), paper_ideal=paper_ideal_sp,
    examples=("SP", "SP@{k}")))


# --------------------------------------------------------------------------- P and R

def k_p(rk, J, m, rel_level):
    """P@k = |relevant in top k| / k (k, not the number retrieved, as trec_eval)."""
    rel = rel_of(m, rel_level)
    return rk.rowsum(relevant(rk, rel) & (rk.pos < m.cutoff)) / m.cutoff


def k_r(rk, J, m, rel_level):
    """R@k = |relevant in top k| / R; 0 when R = 0."""
    rel = rel_of(m, rel_level)
    return safe_div(rk.rowsum(relevant(rk, rel) & (rk.pos < m.cutoff)), J.n_relevant(rel)[rk.base])


def e_p(rp: RandomPool) -> np.ndarray:
    """E[P@k] = (P/n) m/k."""
    return rp.mean_gain * rp.m / rp.k


def e_r(rp: RandomPool) -> np.ndarray:
    """E[R@k] = (P/n) m/R."""
    return safe(rp.mean_gain * rp.m, rp.R)


def browse_p(m):
    """seen(i) = 1 within K, N = K."""
    k = m.cutoff
    return (lambda pos: np.ones(len(pos))), (lambda raw: raw / k)


register(Family(
    "P", (REL,), "required", k_p, binary_gain, "exact", e_p, "|relevant in top k| / k",
    "(P/n) * min(k, n) / k (exact)", "trec_eval P", "rel",
    trec=(TrecName("P", "each", defaults=TREC_CUTOFFS, nick=OA),), irm="P", examples=("P@{k}",), browsing=browse_p,
    unique=True))

register(Family(
    "R", (REL,), "required", k_r, binary_gain, "exact", e_r, "|relevant in top k| / R",
    "(P/n) * min(k, n) / R (exact)", "trec_eval recall", "rel",
    trec=(TrecName("recall", "each", defaults=TREC_CUTOFFS, nick=A),), irm="R", aliases=("Recall",),
    examples=("R@{k}",)))


# --------------------------------------------------------------------------- RR and Rprec

def k_rr(rk, J, m, rel_level):
    """RR@k = 1 / rank of the first relevant document within the top k (0 if none)."""
    rel = rel_of(m, rel_level)
    hit = relevant(rk, rel)
    cut = within_cutoff(rk, m)
    if cut is not None:
        hit &= cut
    idx = np.flatnonzero(hit)
    out = np.zeros(rk.nrows)
    if len(idx):
        rows, first = np.unique(rk.row[idx], return_index=True)
        out[rows] = 1.0 / (rk.pos[idx[first]] + 1.0)
    return out


def k_rprec(rk, J, m, rel_level):
    """Rprec = |relevant in top R| / R; 0 when R = 0."""
    rel = rel_of(m, rel_level)
    R = J.n_relevant(rel)[rk.base]
    return safe_div(rk.rowsum(relevant(rk, rel) & (rk.pos < R[rk.row])), R)


def e_rr(rp: RandomPool) -> np.ndarray:
    """E[RR@k] = sum_{i<=m} (1/i) C(n-P, i-1)/C(n, i-1) * P/(n-i+1) (first relevant at rank i)."""
    return expected_rr(rp.n, rp.P, rp.m)


def e_rprec(rp: RandomPool) -> np.ndarray:
    """E[Rprec] = (P/n) min(R, n)/R."""
    return safe(rp.mean_gain * np.minimum(rp.R, rp.n), rp.R)


register(Family(
    "RR", (REL,), "optional", k_rr, binary_gain, "exact", e_rr,
    "1 / rank of the first relevant document (0 if none in the top k)",
    "sum_{i<=m} (1/i) C(n-P, i-1)/C(n, i-1) * P/(n-i+1) (exact)", "trec_eval recip_rank", "rel",
    trec=(TrecName("recip_rank", nick=OA),), irm="RR", aliases=("MRR",), examples=("RR", "RR@{k}"),
    browsing_note="its seen(i) depends on the relevance above rank i"))

register(Family(
    "Rprec", (REL,), "none", k_rprec, binary_gain, "exact", e_rprec, "|relevant in top R| / R",
    "(P/n) * min(R, n) / R (exact)", "trec_eval Rprec", "rel",
    trec=(TrecName("Rprec", nick=OA),), irm="Rprec", examples=("Rprec",)))
