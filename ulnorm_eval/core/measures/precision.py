"""Binary measures over relevance at a level: AP, SP, P, R, Rprec, RR.

One section per family: kernel, expectation, record.  Their gain is 1 for a relevant document
(grade >= the level), so P = the relevant documents of the pool.
"""
from __future__ import annotations

from ..lazy import np

from ..holes import best_count, monotone, open_zero
from ..kernels import Ranking, rel_of, relevant, safe_div, within_cutoff
from ..records import SEEN_UNTIL_GAIN, Family, Param, TrecName, register
from .common import JUDGED_ONLY, RandomPool, binary_gain, expected_rr, expected_sp, safe
from .cumulative import TREC_CUTOFFS

OA, A = ("official", "all_trec"), ("all_trec",)  # trec_eval nicknames

REL = Param("rel", "int", None, "minimum grade counted relevant (default: -l/--rel-level, 1)")
AP_NORM = Param("norm", "str", "R", "denominator of AP@k: 'R' (the query's relevant judged documents: trec_eval, "
                "ir_measures) or 'k' (Karmaker & Feng 2022 eq. 3, AP@k = SP@k/k: their MAP@k tables; needs @k). "
                "The UL variants are the same under both (a per-query factor); plain AP@k is not",
                choices=("R", "k"))


def sum_precision(rk: Ranking, m, rel: float) -> np.ndarray:
    """sum_{i<=k, d_i relevant} P@i per row."""
    idx = rk.relevant_index(rel)
    # the terms of every cutoff come from one array over the relevant documents only
    w = rk.memo(("precision at relevant", float(rel)), lambda: _precision_at(rk, idx))
    return rk.sum_within(idx, w, m.cutoff)


def _precision_at(rk: Ranking, idx: np.ndarray) -> np.ndarray:
    """Precision at each relevant document: its 1-based number among the relevant ones of its row / rank."""
    r = rk.row[idx]
    within = np.arange(1, len(idx) + 1) - np.searchsorted(r, r)
    return within / (rk.pos[idx] + 1.0)


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


# --------------------------------------------------------------------------- judgment holes
# (docs/holes.md proves each strategy's assignments extreme; tests/test_holes.py enumerates them)

def holes_ap(h):
    """AP@k over the holes' relevance.  Holes past the cutoff only add to R: non-relevant for the
    maximum, relevant for the minimum.  For c relevant holes within the cutoff, R is fixed and SP
    is largest with the c highest-ranked holes relevant, smallest with the c lowest-ranked; the best
    c is searched exactly (SP for every c by running sums of the gain of each added hole).
    AP(norm='k') = SP@k/k has no R: monotone."""
    if h.forced or h.m.get("norm") == "k":
        return monotone(h)
    rk = h.rk
    inc = h.inc
    relj = h.judged_relevant & inc
    ui = h.unj & inc
    i1 = rk.pos + 1.0
    jr = h.running(relj)  # at a hole: judged relevant documents above it
    w = np.where(relj, 1.0 / i1, 0.0)
    tail = h.rowsum(w)[rk.row] - h.running(w)  # sum of 1/rank over judged relevant ones below
    sp = h.rowsum(np.where(relj, jr / i1, 0.0))
    R = h.J.n_relevant(h.rel)[rk.base]
    t = h.running(ui)  # 1-based index of a hole among the holes within the cutoff, from the top
    # the t-th hole from the top made relevant after the t-1 above it: its own precision, and one
    # more relevant document above every judged relevant one below it
    dmax = np.where(ui, (jr + t) / i1 + tail, 0.0)
    up = (sp[rk.row] + h.running(dmax)) / np.maximum(R[rk.row] + t, 1.0)
    cmax = best_count(rk, ui, t, up, safe_div(sp, R), True)
    hi = np.where(ui & (t <= cmax[rk.row]), h.g_hi, h.g_lo)
    V = h.rowsum(h.unj & ~inc)
    s = h.rowsum(ui)[rk.row] - t + 1  # 1-based index from the bottom
    uinv = np.where(ui, 1.0 / i1, 0.0)
    below = h.rowsum(uinv)[rk.row] - h.running(uinv)  # the holes below, all relevant already
    dmin = np.where(ui, (jr + 1.0) / i1 + tail + below, 0.0)
    from_bottom = h.rowsum(dmin)[rk.row] - h.running(dmin) + dmin
    down = (sp[rk.row] + from_bottom) / np.maximum(R[rk.row] + V[rk.row] + s, 1.0)
    cmin = best_count(rk, ui, s, down, safe_div(sp, R + V), False)
    lo = np.where((h.unj & ~inc) | (ui & (s <= cmin[rk.row])), h.g_hi, h.g_lo)
    return lo, hi


def open_ap(h, lo):
    """AP divided by R: infimum 0 with unretrieved relevant documents; AP(norm='k') keeps its LB."""
    return np.full(h.rk.nrows, np.inf) if h.m.get("norm") == "k" else open_zero(h, lo)


def holes_recall(h):
    """R@k = (judged relevant in the top k + relevant holes there) / (R + relevant holes): holes within
    the cutoff relevant and those past it not for the maximum ((a+c)/(R+c) grows with c as a <= R),
    the reverse for the minimum."""
    if h.forced:
        return monotone(h)
    past = h.unj & ~h.inc
    return np.where(past, h.g_hi, h.g_lo), np.where(past, h.g_lo, h.g_hi)


def holes_rprec(h):
    """Rprec with c relevant holes: R = R_J + c, and the relevant documents in the top R are most with
    the c highest-ranked holes relevant, fewest with the c lowest-ranked; every c is searched."""
    if h.forced:
        return monotone(h)
    rk = h.rk
    unj, relj = h.unj, h.judged_relevant
    R = h.J.n_relevant(h.rel)[rk.base]
    jrc, uc = h.running(relj), h.running(unj)
    n, U = rk.length, h.rowsum(unj)

    def at(cum, depth, rows):  # the running count ``cum`` at ``depth`` in each row of ``rows``
        d = np.minimum(depth, n[rows]).astype(np.int64)
        idx = np.maximum(rk.starts[rows] + d - 1, 0)
        return np.where(d > 0, cum[idx] if len(cum) else 0.0, 0.0)

    rows = np.arange(rk.nrows)
    plain = safe_div(at(jrc, R, rows), R)
    t = uc
    depth = R[rk.row] + t
    utop = at(uc, depth, rk.row)
    jtop = at(jrc, depth, rk.row)
    up = (jtop + np.minimum(t, utop)) / np.maximum(depth, 1.0)
    cmax = best_count(rk, unj, t, up, plain, True)
    s = U[rk.row] - t + 1
    depth = R[rk.row] + s
    utop = at(uc, depth, rk.row)
    jtop = at(jrc, depth, rk.row)
    down = (jtop + np.maximum(0.0, s - (U[rk.row] - utop))) / np.maximum(depth, 1.0)
    cmin = best_count(rk, unj, s, down, plain, False)
    return (np.where(unj & (s <= cmin[rk.row]), h.g_hi, h.g_lo),
            np.where(unj & (t <= cmax[rk.row]), h.g_hi, h.g_lo))


def outside_rprec(h, extra):
    """(least, largest) Rprec when up to ``extra`` documents outside the ranking may be relevant too
    (Rprec is not monotone in them: a ranking non-relevant, relevant with R = 1 has Rprec 0, and 1/2
    once an outside document is relevant).  With R = R_J + c + e (c relevant holes, e relevant outside
    documents), for a fixed total T = R the relevant documents in the top T are fewest with the c
    lowest-ranked holes relevant and most with the c highest-ranked, and grow with c: the minimum
    takes c = max(0, T - R_J - extra), the maximum c = min(holes, T - R_J); every T in
    R_J..R_J + holes + extra is searched."""
    rk = h.rk
    unj, relj = h.unj, h.judged_relevant
    R = h.J.n_relevant(h.rel)[rk.base].astype(np.int64)
    U = h.rowsum(unj).astype(np.int64)
    K = np.asarray(extra, dtype=np.int64)
    jrc, uc = h.running(relj), h.running(unj)
    n = rk.length.astype(np.int64)
    width = U + K + 1
    row = np.repeat(np.arange(rk.nrows), width)
    T = R[row] + (np.arange(int(width.sum())) - np.repeat(np.cumsum(width) - width, width))
    d = np.minimum(T, n[row])
    idx = np.maximum(rk.starts[row] + d - 1, 0)
    jtop = np.where(d > 0, jrc[idx] if len(jrc) else 0.0, 0.0)
    utop = np.where(d > 0, uc[idx] if len(uc) else 0.0, 0.0)
    c = np.maximum(0, T - R[row] - K[row])
    lo = np.full(rk.nrows, np.inf)
    np.minimum.at(lo, row, safe_div(jtop + np.maximum(0.0, c - (U[row] - utop)), T.astype(np.float64)))
    c = np.minimum(U[row], T - R[row])
    hi = np.full(rk.nrows, -np.inf)
    np.maximum.at(hi, row, safe_div(jtop + np.minimum(c, utop), T.astype(np.float64)))
    return lo, hi


register(Family(
    "AP", (REL, AP_NORM, JUDGED_ONLY), "optional", k_ap, binary_gain, "exact", e_ap,
    "SP@k / R, R = relevant judged documents of the query (trec_eval map / map_cut); SP@k / k with norm='k'",
    "E[SP@k] / R (exact; E[SP@k] / k with norm='k')", "Karmaker & Feng 2022 eq. 3-4; Westerborg 2022 §2", "rel",
    trec=(TrecName("map", nick=OA), TrecName("map_cut", "each", defaults=TREC_CUTOFFS, nick=A)), irm="AP", aliases=("MAP",),
    paper_ideal=paper_ideal_ap, examples=("AP", "AP(rel=2)", "AP@{k}", "AP(norm='k')@{k}"), validate=_validate_ap,
    holes=holes_ap, holes_open=open_ap))

register(Family(
    "SP", (REL,), "optional", k_sp, binary_gain, "exact", e_sp,
    "sum_{i<=k, d_i relevant} P@i (sum of precision)",
    "(P/n) H_m + P(P-1)/(n(n-1)) (m - H_m), m = min(k, n) (exact; the papers' k(P/n)^2 with --expectation paper)",
    "Karmaker & Feng 2022 eq. 4", "rel", aliases=("SumP",), paper_ideal=paper_ideal_sp,
    examples=("SP", "SP@{k}"), holes=monotone))


# --------------------------------------------------------------------------- P and R

def k_p(rk, J, m, rel_level):
    """P@k = |relevant in top k| / k (k, not the number retrieved, as trec_eval)."""
    rel = rel_of(m, rel_level)
    return rk.count_within(rk.relevant_index(rel), m.cutoff) / m.cutoff


def k_r(rk, J, m, rel_level):
    """R@k = |relevant in top k| / R; 0 when R = 0."""
    rel = rel_of(m, rel_level)
    return safe_div(rk.count_within(rk.relevant_index(rel), m.cutoff), J.n_relevant(rel)[rk.base])


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
    "P", (REL, JUDGED_ONLY), "required", k_p, binary_gain, "exact", e_p, "|relevant in top k| / k",
    "(P/n) * min(k, n) / k (exact)", "trec_eval P", "rel",
    trec=(TrecName("P", "each", defaults=TREC_CUTOFFS, nick=OA),), irm="P", examples=("P@{k}",), browsing=browse_p,
    unique=True, holes=monotone))

register(Family(
    "R", (REL, JUDGED_ONLY), "required", k_r, binary_gain, "exact", e_r, "|relevant in top k| / R",
    "(P/n) * min(k, n) / R (exact)", "trec_eval recall", "rel",
    trec=(TrecName("recall", "each", defaults=TREC_CUTOFFS, nick=A),), irm="R", aliases=("Recall",),
    examples=("R@{k}",), holes=holes_recall, holes_open=open_zero))


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
    return safe_div(rk.count_within(rk.relevant_index(rel), R), R)


def browse_rr(m):
    """RR in eq. 1 of Normalized Residual Gain (SIGIR-AP 2024), through its App. A correspondence with
    C/W/L: G(d_i) = r_i, seen(i) = V(i) = prod_{j<i} (1 - r_j) (the searcher stops at the first
    relevant item), N = V+ = the ranks seen; RR = r_f / f = 1/f."""
    return SEEN_UNTIL_GAIN, None


def e_rr(rp: RandomPool) -> np.ndarray:
    """E[RR@k] = sum_{i<=m} (1/i) C(n-P, i-1)/C(n, i-1) * P/(n-i+1) (first relevant at rank i)."""
    return expected_rr(rp.n, rp.P, rp.m)


def e_rprec(rp: RandomPool) -> np.ndarray:
    """E[Rprec] = (P/n) min(R, n)/R."""
    return safe(rp.mean_gain * np.minimum(rp.R, rp.n), rp.R)


register(Family(
    "RR", (REL, JUDGED_ONLY), "optional", k_rr, binary_gain, "exact", e_rr,
    "1 / rank of the first relevant document (0 if none in the top k)",
    "sum_{i<=m} (1/i) C(n-P, i-1)/C(n, i-1) * P/(n-i+1) (exact)", "trec_eval recip_rank", "rel",
    trec=(TrecName("recip_rank", nick=OA),), irm="RR", aliases=("MRR",), examples=("RR", "RR@{k}"),
    browsing=browse_rr, holes=monotone))

register(Family(
    "Rprec", (REL, JUDGED_ONLY), "none", k_rprec, binary_gain, "exact", e_rprec, "|relevant in top R| / R",
    "(P/n) * min(R, n) / R (exact)", "trec_eval Rprec", "rel",
    trec=(TrecName("Rprec", nick=OA),), irm="Rprec", examples=("Rprec",), holes=holes_rprec,
    holes_open=open_zero, holes_outside=outside_rprec))
