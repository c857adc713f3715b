"""Native, vectorised kernels with trec_eval 10's exact semantics for every measure of ``-m all_trec``
(plus ERR, Judged and Compat as ir_measures defines them).

Every kernel is a pure function ``kernel(ranking, judgements, param, ctx) -> values[rows]`` over the
flat :class:`~ulnorm_eval.core.kernels.Ranking` (rows in trec_eval's order: score descending,
docno descending, ``-M`` applied) and the query's :class:`~ulnorm_eval.core.kernels.Judgements`.
``param`` is the family's single parameter value (a cutoff, a multiplier, a gain map, ...; see
:data:`FAMILIES`), ``ctx`` a :class:`TrecContext` carrying trec_eval's flags.  No Python loop runs
over documents: per-row sums are ``np.bincount`` and per-row running counts segmented cumsums.

trec_eval's view of a retrieved document (form_res_rels.c) is a *code*: its grade when judged with
grade >= 0; -1 (RELVALUE_NONPOOL) when the qrels do not list it; -2 (RELVALUE_UNJUDGED) when the
qrels list it with a negative grade ("in the pool but unjudged", as infAP's sampled pools do).
Relevant at level L means ``code >= L``.  ``R`` (num_rel) counts the query's judged documents with
grade >= max(L, 0); the nonrelevant judged count, 0 <= grade < L.  ``-J`` drops every document with
a negative code before anything is computed (:func:`judged_only`).

Deliberate departures from trec_eval 10, each a defect there:
* ``rbp`` reads its gain bounds uninitialised (m_rbp.c: ``double sum, min, max`` never set): we
  initialise them, so gains are left alone when all lie in [0, 1] and are otherwise scaled to
  (g - min) / (max - min) over the query's gain levels, as the code intends.
* gain levels are sorted with a comparator returning ``(int)(a - b)`` (gain_init.c), which treats
  gains less than 1 apart as equal; we sort by the true gain (identical for integer gains).
* without ``-c``, trec_eval 10 exits ("result qid ... not found") when a qrels query has no results
  (trec_eval.c); we evaluate the queries with both qrels and results, as trec_eval 9 did.
The expected files of trec_eval's test suite hold the values of the initialised reading of rbp
(gains divided by the query's largest grade when it exceeds 1); a local build prints garbage there.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .kernels import Judgements, Ranking

__all__ = ["TrecContext", "TrecFamily", "FAMILIES", "BY_TREC", "compute_trec", "judged_only", "codes",
           "trec_relevant_count", "summarise", "relstring", "MIN_GEO_MEAN", "INFAP_EPSILON"]

MIN_GEO_MEAN = 0.00001  # trec_eval.h: floor of a per-query value before its log (gm_map, gm_bpref)
INFAP_EPSILON = 0.00001  # trec_eval.h
NONPOOL, UNJUDGED = -1.0, -2.0


@dataclass(frozen=True)
class TrecContext:
    """trec_eval's flags as the kernels see them.

    rel_level: ``-l`` (relevant means grade >= rel_level).  num_docs: ``-N`` (collection size, for
    utility's 4th coefficient).  rounding: how iprec_at_recall / 11pt_avg turn a recall fraction x
    into a count of relevant documents: 'round' = lround(x R) (trec_eval 10), 'legacy' =
    (long)(x R + 0.9) (trec_eval <= 9.0.8, e.g. the DL-HARD published files).  present: per row,
    whether the run retrieved anything for the query before ``-J`` (False: ``-c``'s empty ranking,
    for which trec_eval zeroes utility, unj and rbp_resid); None means "every row with documents".
    """

    rel_level: float = 1.0
    num_docs: float = 0.0
    rounding: str = "round"
    present: np.ndarray | None = field(default=None, compare=False, hash=False)


# --------------------------------------------------------------------------- the trec_eval view

def codes(rk: Ranking) -> np.ndarray:
    """trec_eval's relevance code of each ranked document (see the module docstring); computed once
    per ranking (a Ranking's arrays are never modified in place)."""
    c = rk.__dict__.get("_trec_codes")
    if c is None:
        judged = np.ones(len(rk.row), bool) if rk.judged is None else rk.judged
        c = np.where(~judged, NONPOOL, np.where(rk.grade < 0, UNJUDGED, rk.grade))
        rk.__dict__["_trec_codes"] = c
    return c


def judged_only(rk: Ranking) -> Ranking:
    """``-J``: the ranking without unjudged documents (qrels-absent or negative grade), ranks closed up."""
    keep = codes(rk) >= 0
    return Ranking(rk.row[keep], rk.grade[keep], rk.nrows, rk.base,
                   None if rk.judged is None else rk.judged[keep])


def _present(rk: Ranking, ctx: TrecContext) -> np.ndarray:
    return rk.length > 0 if ctx.present is None else np.asarray(ctx.present, bool)


def _cum(rk: Ranking, x) -> np.ndarray:
    """Inclusive running sum of ``x`` within each row."""
    c = np.cumsum(np.asarray(x, dtype=np.float64))
    before = np.concatenate(([0.0], c))[rk.starts[:-1]]
    return c - before[rk.row]


def _at_depth(rk: Ranking, x, k) -> np.ndarray:
    """Per row: sum of ``x`` over the first ``k`` documents (k scalar or per row)."""
    k = np.broadcast_to(np.asarray(k), (rk.nrows,))
    return rk.rowsum(np.where(rk.pos < k[rk.row], x, 0.0))


def _div(a, b) -> np.ndarray:
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    out = np.zeros(a.shape)
    np.divide(a, b, out=out, where=b != 0)
    return out


def trec_relevant_count(J: Judgements, rel_level: float) -> np.ndarray:
    """R (num_rel) per query: judged documents with grade >= max(rel_level, 0) (form_res_rels.c)."""
    key = ("trecR", float(rel_level))
    if key not in J._cache:
        J._cache[key] = np.bincount(J.row, weights=(J.grade >= max(rel_level, 0.0)), minlength=J.nq)[: J.nq]
    return J._cache[key]


def _nonrel_count(J: Judgements, rel_level: float) -> np.ndarray:
    """Judged nonrelevant documents per query: 0 <= grade < rel_level (bpref's num_nonrel)."""
    key = ("trecN", float(rel_level))
    if key not in J._cache:
        w = (J.grade >= 0) & (J.grade < rel_level)
        J._cache[key] = np.bincount(J.row, weights=w, minlength=J.nq)[: J.nq]
    return J._cache[key]


def _R(rk, J, ctx):
    return trec_relevant_count(J, ctx.rel_level)[rk.base]


def _rel(rk, ctx):
    return codes(rk) >= ctx.rel_level


# --------------------------------------------------------------------------- counts

def k_num_q(rk, J, param, ctx):
    """1 per evaluated query (trec_eval prints only the sum: the number of queries averaged over)."""
    return np.ones(rk.nrows)


def k_num_ret(rk, J, param, ctx):
    """Documents retrieved (after -M and -J)."""
    return rk.length.astype(np.float64)


def k_num_rel(rk, J, param, ctx):
    """R: judged documents with grade >= -l."""
    return _R(rk, J, ctx).astype(np.float64)


def k_num_rel_ret(rk, J, param, ctx):
    """Relevant documents retrieved."""
    return rk.rowsum(_rel(rk, ctx))


def k_num_nonrel_judged_ret(rk, J, param, ctx):
    """Judged nonrelevant documents retrieved: num_ret - unjudged - num_rel_ret."""
    c = codes(rk)
    return rk.rowsum((c >= 0) & (c < ctx.rel_level))


# --------------------------------------------------------------------------- precision family

def _sum_prec(rk, ctx, k=None):
    rel = _rel(rk, ctx)
    w = np.where(rel, _cum(rk, rel) / (rk.pos + 1.0), 0.0)
    if k is not None:
        w = np.where(rk.pos < k, w, 0.0)
    return rk.rowsum(w)


def k_map(rk, J, param, ctx):
    """AP = sum over relevant retrieved d of P@rank(d), divided by R (Buckley & Voorhees 2005)."""
    return _div(_sum_prec(rk, ctx), _R(rk, J, ctx))


def k_map_cut(rk, J, k, ctx):
    """AP truncated at rank k, divided by the full R."""
    return _div(_sum_prec(rk, ctx, k), _R(rk, J, ctx))


def k_P(rk, J, k, ctx):
    """P@k = relevant in the top k / k (k, not num_ret)."""
    return _at_depth(rk, _rel(rk, ctx), k) / float(k)


def k_recall(rk, J, k, ctx):
    """recall@k = relevant in the top k / R (0 when R = 0)."""
    return _div(_at_depth(rk, _rel(rk, ctx), k), _R(rk, J, ctx))


def k_relative_P(rk, J, k, ctx):
    """relative_P@k = relevant in the top k / min(k, R) (0 when R = 0)."""
    R = _R(rk, J, ctx)
    return _div(_at_depth(rk, _rel(rk, ctx), k), np.minimum(float(k), R))


def k_success(rk, J, k, ctx):
    """success@k = 1 if a relevant document is in the top k, else 0."""
    return (_at_depth(rk, _rel(rk, ctx), k) > 0).astype(np.float64)


def k_Rprec(rk, J, param, ctx):
    """R-precision = relevant in the top min(R, num_ret) / R."""
    R = _R(rk, J, ctx)
    return _div(_at_depth(rk, _rel(rk, ctx), R), R)


def k_Rprec_mult(rk, J, x, ctx):
    """Precision at c = (long)(x R + 0.9) documents; when c > num_ret, num_rel_ret / c (m_Rprec_mult.c)."""
    R = _R(rk, J, ctx)
    c = np.floor(float(x) * R + 0.9)
    rel = _rel(rk, ctx)
    nrr = rk.rowsum(rel)
    beyond = c > rk.length
    return np.where(beyond, _div(nrr, c), _div(_at_depth(rk, rel, c), c))


def k_recip_rank(rk, J, param, ctx):
    """1 / rank of the first relevant document (0 if none retrieved)."""
    rel = _rel(rk, ctx)
    first = np.full(rk.nrows, np.inf)
    idx = np.flatnonzero(rel)
    np.minimum.at(first, rk.row[idx], rk.pos[idx] + 1.0)
    return np.where(np.isfinite(first), 1.0 / first, 0.0)


def _recall_count(x: float, R: np.ndarray, rounding: str) -> np.ndarray:
    v = float(x) * R
    if rounding == "legacy":
        return np.floor(v + 0.9)
    return np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5))  # C lround: half away from zero


def _iprec_table(rk, ctx):
    """(rows x max relevant retrieved) interpolated precision at the j-th relevant document:
    max over relevant documents j' >= j of j' / rank(j') (Int_Prec(X) = max Prec(Y), Y >= X)."""
    rel = _rel(rk, ctx)
    idx = np.flatnonzero(rel)
    nrr = np.bincount(rk.row[idx], minlength=rk.nrows)[: rk.nrows]
    width = int(nrr.max()) if len(nrr) else 0
    tab = np.zeros((rk.nrows, max(width, 1)))
    if len(idx):
        j = _cum(rk, rel)[idx]  # 1-based number of the relevant document
        tab[rk.row[idx], (j - 1).astype(np.int64)] = j / (rk.pos[idx] + 1.0)
        tab = np.maximum.accumulate(tab[:, ::-1], axis=1)[:, ::-1]
    return tab, nrr


def _iprec(rk, J, xs, ctx):
    tab, nrr = _iprec_table(rk, ctx)
    R = _R(rk, J, ctx)
    out = []
    for x in xs:
        c = _recall_count(x, R, ctx.rounding)
        # c = 0 takes the value at the first relevant document (the loop ends there, m_iprec_at_recall.c)
        col = np.clip(np.maximum(c, 1) - 1, 0, tab.shape[1] - 1).astype(np.int64)
        v = tab[np.arange(rk.nrows), col]
        out.append(np.where((c <= nrr) & (nrr > 0), v, 0.0))
    return out


def k_iprec_at_recall(rk, J, x, ctx):
    """Interpolated precision at recall x: max precision at any rank at or after the c-th relevant
    document, c = lround(x R) (trec_eval 10; 'legacy' rounding: (long)(x R + 0.9)); 0 if c > num_rel_ret."""
    return _iprec(rk, J, [x], ctx)[0]


def k_11pt_avg(rk, J, xs, ctx):
    """Mean of iprec_at_recall over the recall points xs (default 0.0, 0.1, ..., 1.0)."""
    vals = _iprec(rk, J, list(xs), ctx)
    return np.sum(vals, axis=0) / len(xs)


# --------------------------------------------------------------------------- incomplete judgements

def _bpref(rk, J, ctx):
    c = codes(rk)
    rel = c >= ctx.rel_level
    nonrel = (c >= 0) & (c < ctx.rel_level)
    nb = _cum(rk, nonrel)  # nonrelevant judged at or above (a relevant doc is not one)
    R = _R(rk, J, ctx)[rk.row]
    Nn = _nonrel_count(J, ctx.rel_level)[rk.base][rk.row]
    term = np.where(nb > 0, 1.0 - _div(np.minimum(nb, R), np.minimum(Nn, R)), 1.0)
    return _div(rk.rowsum(np.where(rel, term, 0.0)), _R(rk, J, ctx))


def k_bpref(rk, J, param, ctx):
    """bpref = (1/R) sum over relevant retrieved r of 1 - min(n_r, R) / min(N, R), n_r the judged
    nonrelevant documents above r, N all judged nonrelevant (Buckley & Voorhees 2004; m_bpref.c)."""
    return _bpref(rk, J, ctx)


def k_infAP(rk, J, param, ctx):
    """infAP (Yilmaz & Aslam 2006; m_infap.c): for a relevant document at 0-based rank j > 0,
    1/(j+1) + (j/(j+1)) ((r + n + u)/j) ((r + eps)/(r + n + 2 eps)) with r, n, u the relevant,
    judged nonrelevant and pooled-unjudged documents above it; 1 at rank 0; summed over / R."""
    c = codes(rk)
    rel = c >= ctx.rel_level
    r = _cum(rk, rel) - rel
    n = _cum(rk, (c >= 0) & (c < ctx.rel_level))
    u = _cum(rk, c == UNJUDGED)
    fj = rk.pos.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r + n + u) / fj) * \
            ((r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON))
    term = np.where(rk.pos == 0, 1.0, term)
    return _div(rk.rowsum(np.where(rel, term, 0.0)), _R(rk, J, ctx))


def k_unj(rk, J, k, ctx):
    """Fraction of the top k that is unjudged (qrels-absent or negative grade), always over k."""
    v = _at_depth(rk, codes(rk) < 0, k) / float(k)
    return np.where(_present(rk, ctx), v, 0.0)


# --------------------------------------------------------------------------- gains

def _level_gain(code: np.ndarray, gains: dict | None) -> np.ndarray:
    """trec_eval's get_gain: a listed level takes its gain, another judged level (>= 0) gains its
    own value, anything else 0 (gain_init.c)."""
    g = np.where(code >= 0, code, 0.0)
    for lvl, val in (gains or {}).items():
        g = np.where(code == float(lvl), float(val), g)
    return g


def _ideal_sorted(J: Judgements, gains: dict | None):
    """Per query, the judged documents' gains sorted descending (row, gain, 0-based position)."""
    key = ("trec_ideal", tuple(sorted((gains or {}).items())))
    if key not in J._cache:
        code = np.where(J.grade < 0, UNJUDGED, J.grade)
        keep = code >= 0
        row, g = J.row[keep], _level_gain(code[keep], gains)
        order = np.lexsort((-g, row))
        row, g = row[order], g[order]
        starts = np.searchsorted(row, np.arange(J.nq + 1))
        pos = np.arange(len(row)) - starts[row]
        J._cache[key] = (row, g, pos)
    return J._cache[key]


def _disc(pos):
    return 1.0 / np.log2(pos + 2.0)


def _idcg(J, gains, k=None):
    key = ("trec_idcg", tuple(sorted((gains or {}).items())), k)
    if key not in J._cache:
        row, g, pos = _ideal_sorted(J, gains)
        w = np.where(g > 0, g * _disc(pos), 0.0)
        if k is not None:
            w = np.where(pos < k, w, 0.0)
        J._cache[key] = np.bincount(row, weights=w, minlength=J.nq)[: J.nq]
    return J._cache[key]


def k_ndcg(rk, J, gains, ctx):
    """nDCG = sum_i gain(d_i)/log2(i+1) over all retrieved, / the same over the judged documents
    sorted by gain (positive gains only); gain = grade unless given as ndcg.L=G (Jarvelin &
    Kekalainen 2002; m_ndcg.c).  Independent of -l."""
    dcg = rk.rowsum(_level_gain(codes(rk), gains) * _disc(rk.pos))
    return _div(dcg, _idcg(J, gains)[rk.base])


def k_ndcg_cut(rk, J, k, ctx):
    """nDCG@k with gain = grade (positive only) and the ideal from the grade counts (m_ndcg_cut.c)."""
    g = np.maximum(codes(rk), 0.0)
    dcg = rk.rowsum(np.where(rk.pos < k, g * _disc(rk.pos), 0.0))
    return _div(dcg, _idcg(J, None, k)[rk.base])


def _prefix_idcg(J, gains):
    """Per query the running ideal DCG over the positive ideal gains: (flat array, starts, counts)."""
    row, g, pos = _ideal_sorted(J, gains)
    keep = g > 0
    row, g, pos = row[keep], g[keep], pos[keep]
    c = np.cumsum(g * _disc(pos))
    st = np.searchsorted(row, np.arange(J.nq + 1))
    before = np.concatenate(([0.0], c))[st[:-1]]
    return c - before[row], st, np.diff(st), row, g


def k_ndcg_rel(rk, J, gains, ctx):
    """nDCG averaged over the relevant (positive-gain) documents: at each retrieved one, DCG so far
    / ideal DCG at the same rank (the ideal stops growing past its last positive gain); each one not
    retrieved contributes the final DCG / the full ideal DCG (m_ndcg_rel.c)."""
    g = _level_gain(codes(rk), gains)
    dcg = _cum(rk, g * _disc(rk.pos))
    pidcg, st, npos, _, _ = _prefix_idcg(J, gains)
    q = rk.base[rk.row]
    n = npos[q]
    at = st[q] + np.minimum(rk.pos, np.maximum(n - 1, 0))
    ideal = np.where(n > 0, pidcg[np.minimum(at, max(len(pidcg) - 1, 0))] if len(pidcg) else 0.0, 0.0)
    hit = g > 0
    s = rk.rowsum(np.where(hit, _div(dcg, ideal), 0.0))
    full = _idcg(J, gains)[rk.base]
    final = rk.rowsum(g * _disc(rk.pos))
    nrel = npos[rk.base].astype(np.float64)
    s = s + (nrel - rk.rowsum(hit)) * _div(final, full)
    return np.where(s > 0, _div(s, nrel), 0.0)


def k_Rndcg(rk, J, gains, ctx):
    """nDCG averaged at the R levels: at b = the number of judged documents of gain >= each
    distinct positive gain, nDCG@b; plus nDCG over the whole ranking when it extends at least two
    documents past the last level (m_Rndcg.c's loop structure); 0 when R = 0."""
    R = _R(rk, J, ctx)
    g = _level_gain(codes(rk), gains)
    dcg_cum = _cum(rk, g * _disc(rk.pos))
    pidcg, st, npos, irow, ig = _prefix_idcg(J, gains)
    # boundaries: ends of runs of equal positive ideal gain
    last = np.ones(len(ig), bool)
    if len(ig):
        last[:-1] = (irow[1:] != irow[:-1]) | (ig[1:] != ig[:-1])
    bidx = np.flatnonzero(last)
    bq, bpos = irow[bidx], bidx - st[irow[bidx]] + 1  # boundary b (a prefix length)
    ideal_b = pidcg[bidx]
    # expand boundaries to ranking rows: every row whose base is the boundary's query (CSR over base)
    by_q = np.argsort(rk.base, kind="stable")
    q_st = np.searchsorted(rk.base[by_q], np.arange(J.nq + 1))
    rep = (q_st[1:] - q_st[:-1])[bq]
    first = np.repeat(q_st[bq], rep)
    k_in = np.arange(int(rep.sum())) - np.repeat(np.cumsum(rep) - rep, rep)
    br = by_q[first + k_in] if len(first) else np.zeros(0, np.int64)
    bb, bi = np.repeat(bpos, rep), np.repeat(ideal_b, rep)
    # DCG of the first b documents of the row (all of them when b >= num_ret)
    L = rk.length[br]
    take = np.minimum(bb, L)
    idx = rk.starts[br] + take - 1
    dcg_b = np.where(take > 0, dcg_cum[np.maximum(idx, 0)] if len(dcg_cum) else 0.0, 0.0)
    s = np.bincount(br, weights=_div(dcg_b, bi), minlength=rk.nrows)[: rk.nrows]
    cnt_b = np.bincount(br, minlength=rk.nrows)[: rk.nrows].astype(np.float64)
    bmax = np.zeros(rk.nrows)
    np.maximum.at(bmax, br, bb)
    final = rk.rowsum(g * _disc(rk.pos))
    full = _idcg(J, gains)[rk.base]
    extra = (rk.length >= bmax + 2) & (full > 0) & (cnt_b > 0)
    s = s + np.where(extra, _div(final, full), 0.0)
    cnt_b = cnt_b + extra
    return np.where(R > 0, _div(s, cnt_b), 0.0)


def k_binG(rk, J, param, ctx):
    """binG = (1/R) sum over relevant retrieved d of 1 / log2(2 + documents above d not relevant)."""
    rel = _rel(rk, ctx)
    above_non = rk.pos - (_cum(rk, rel) - rel)
    s = rk.rowsum(np.where(rel, 1.0 / np.log2(2.0 + above_non), 0.0))
    return _div(s, _R(rk, J, ctx))


def k_G(rk, J, gains, ctx):
    """G (m_G.c): sum_i gain(d_i) / log2(2 + C_i - S_i), S_i the run's gain to rank i, C_i the
    running sum of max(ideal gain at rank i, 1), divided by the total positive ideal gain."""
    g = _level_gain(codes(rk), gains)
    row, ig, pos = _ideal_sorted(J, gains)
    keep = ig > 0
    n_pos = np.bincount(row[keep], minlength=J.nq)[: J.nq]
    # ideal gain at rank i of the row: the i-th positive ideal gain, 0 past them (cost 1 each)
    q = rk.base[rk.row]
    st = np.searchsorted(row[keep], np.arange(J.nq + 1))
    inside = rk.pos < n_pos[q]
    igk = ig[keep]
    ideal_i = np.where(inside, igk[np.minimum(st[q] + rk.pos, max(len(igk) - 1, 0))] if len(igk) else 0.0, 0.0)
    cost = _cum(rk, np.maximum(ideal_i, 1.0))
    S = _cum(rk, g)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(g != 0, g / np.log2(2.0 + cost - S), 0.0)
    total = np.bincount(row[keep], weights=igk, minlength=J.nq)[: J.nq][rk.base]
    return _div(rk.rowsum(term), total)


def _rbp_gains(rk, J, gains):
    """Each ranked document's rbp gain scaled to [0, 1] over the query's gain levels (see module doc)."""
    code = codes(rk)
    g = _level_gain(code, gains)
    # the query's levels: 0 .. its largest judged grade, plus any listed level
    top = np.full(J.nq, -1.0)
    ok = J.grade >= 0
    np.maximum.at(top, J.row[ok], J.grade[ok])
    lv_min = np.where(top >= 0, 0.0, np.inf)
    lv_max = np.where(top >= 0, top, -np.inf)
    if gains:
        # listed levels are levels too; the default levels 0..top take gain = level unless listed
        base_vals = {}
        for lvl, val in gains.items():
            base_vals[float(lvl)] = float(val)
        lv_min = np.full(J.nq, np.inf)
        lv_max = np.full(J.nq, -np.inf)
        maxtop = int(top.max()) if len(top) else -1
        for lvl in range(0, maxtop + 1):
            val = base_vals.get(float(lvl), float(lvl))
            has = top >= lvl
            lv_min = np.where(has, np.minimum(lv_min, val), lv_min)
            lv_max = np.where(has, np.maximum(lv_max, val), lv_max)
        for lvl, val in base_vals.items():
            if not (0 <= lvl <= maxtop and float(lvl).is_integer()):
                lv_min, lv_max = np.minimum(lv_min, val), np.maximum(lv_max, val)
            else:
                lv_min = np.where(top < lvl, np.minimum(lv_min, val), lv_min)
                lv_max = np.where(top < lvl, np.maximum(lv_max, val), lv_max)
    lo, hi = lv_min[rk.base][rk.row], lv_max[rk.base][rk.row]
    scale = (lo < 0) | (hi > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(scale, (g - lo) / (hi - lo), g)
    # a document with no known level keeps get_gain's 0 (m_rbp.c rescales only the level table)
    known = (code >= 0) | np.isin(code, [float(k) for k in (gains or {})])
    return np.where(known, scaled, 0.0)


def _p_and_gains(param):
    """rbp's pair parameters: ``p=0.8`` and ``level=gain`` pairs (default p = 0.9)."""
    param = dict(param or {})
    p = float(param.pop("p", 0.9))
    return p, {k: v for k, v in param.items() if not isinstance(k, str)} or None


def k_rbp(rk, J, param, ctx):
    """RBP(p) = (1-p) sum_i p^(i-1) gain(d_i), gains scaled to [0, 1] when they exceed it (Moffat &
    Zobel 2008; m_rbp.c, with its uninitialised bounds set); param {'p': 0.9, level: gain, ...}."""
    p, gains = _p_and_gains(param)
    return (1.0 - p) * rk.rowsum(_rbp_gains(rk, J, gains) * np.power(p, rk.pos))


def k_rbp_resid(rk, J, param, ctx):
    """RBP residual: p^num_ret + (1-p) sum over unjudged d_i of p^(i-1), when any retrieved document
    is unjudged, else 0 (Moffat & Zobel 2008; m_rbp_resid.c)."""
    p, _ = _p_and_gains(param)
    unj = codes(rk) < 0
    s = rk.rowsum(np.where(unj, np.power(p, rk.pos), 0.0))
    v = np.power(p, rk.length) + (1.0 - p) * s
    return np.where((rk.rowsum(unj) > 0) & _present(rk, ctx), v, 0.0)


# --------------------------------------------------------------------------- set measures

def _set_counts(rk, J, ctx):
    return rk.length.astype(np.float64), rk.rowsum(_rel(rk, ctx)), _R(rk, J, ctx).astype(np.float64)


def k_set_P(rk, J, param, ctx):
    """num_rel_ret / num_ret."""
    ret, a, R = _set_counts(rk, J, ctx)
    return _div(a, ret)


def k_set_recall(rk, J, param, ctx):
    """num_rel_ret / R."""
    ret, a, R = _set_counts(rk, J, ctx)
    return _div(a, R)


def k_set_relative_P(rk, J, param, ctx):
    """num_rel_ret / min(num_ret, R)."""
    ret, a, R = _set_counts(rk, J, ctx)
    return np.where((ret > 0) & (R > 0), _div(a, np.minimum(ret, R)), 0.0)


def k_set_map(rk, J, param, ctx):
    """num_rel_ret^2 / (num_ret R) (set precision times set recall)."""
    ret, a, R = _set_counts(rk, J, ctx)
    return _div(a * a, ret * R)


def k_set_F(rk, J, x, ctx):
    """(x+1) P R / (x P + R) with set P and R; x = 1 by default (m_set_F.c)."""
    x = 1.0 if x is None else float(x)
    ret, a, R = _set_counts(rk, J, ctx)
    P, Rc = _div(a, ret), _div(a, R)
    return np.where(a > 0, _div((x + 1.0) * P * Rc, x * P + Rc), 0.0)


def k_utility(rk, J, coef, ctx):
    """p1 a + p2 b + p3 c + p4 d over the contingency table (a relevant retrieved, b nonrelevant
    retrieved, c relevant missed, d = N + a - num_ret - R); 0 for -c's empty rankings (m_utility.c)."""
    p1, p2, p3, p4 = (1.0, -1.0, 0.0, 0.0) if coef is None else map(float, coef)
    ret, a, R = _set_counts(rk, J, ctx)
    v = p1 * a + p2 * (ret - a) + p3 * (R - a) + p4 * (ctx.num_docs + a - ret - R)
    return np.where(_present(rk, ctx), v, 0.0)


# --------------------------------------------------------------------------- ir_measures families

def k_ERR(rk, J, k, ctx):
    """ERR@k as gdeval computes it (ir_measures' default provider; Chapelle et al. 2009):
    sum_{i<=k} R_i/i prod_{j<i} (1 - R_j), R_i = (2^g_i - 1) / 2^4, g_i the positive grade (else 0)."""
    g = np.where(codes(rk) > 0, codes(rk), 0.0)
    if len(g) and g.max() > 4:
        raise ValueError("ERR (gdeval) takes grades 0..4: a larger grade would make a probability exceed 1")
    r = (np.exp2(g) - 1.0) / 16.0
    if k is not None:
        r = np.where(rk.pos < k, r, 0.0)
    # prod_{j<i} (1 - R_j): a cumulative product along each row of a (rows x depth) matrix, exact
    # per row (a flat exp(cumsum(log)) would mix the rounding of all earlier rows into each one)
    inside = rk.pos < (rk.length.max() if k is None else int(k)) if len(r) else np.zeros(0, bool)
    width = int(rk.pos[inside].max()) + 1 if inside.any() else 1
    keep = np.ones((rk.nrows, width))
    keep[rk.row[inside], rk.pos[inside]] = 1.0 - r[inside]
    before = np.cumprod(np.concatenate([np.ones((rk.nrows, 1)), keep[:, :-1]], axis=1), axis=1)
    decay = np.zeros(len(r))
    decay[inside] = before[rk.row[inside], rk.pos[inside]]
    return rk.rowsum(r * decay / (rk.pos + 1.0))


def k_Judged(rk, J, k, ctx):
    """Judged@k = judged documents in the top k / min(k, num_ret) (ir_measures' judged provider)."""
    judged = codes(rk) != NONPOOL
    kk = rk.length if k is None else np.minimum(rk.length, int(k))
    return _div(_at_depth(rk, judged, kk), kk)


def k_Compat(rk, J, param, ctx):
    """Compatibility (Clarke, Vtyurina & Smucker 2021 (TOIS)) as ir_measures computes it: RBO(p) of the run
    against the ideal ranking (relevant documents by grade descending, ties by the run's order,
    unretrieved ones last) to depth max(num_ret, R), normalised by RBO(ideal, ideal).  Relevant means
    grade >= -l (ir_measures: grade > 0, the same at the default -l 1 for integer grades).  param = (p, normalize), default (0.95, True).  The overlap at depth i counts the
    documents whose rank in both lists is <= i, so RBO is a per-document sum of a prefix table."""
    p, normalize = (0.95, True) if param is None else param
    c = codes(rk)
    L = ctx.rel_level
    relv = c >= L
    jrel = (J.grade >= L) & (J.grade >= 0)
    Rq = np.bincount(J.row, weights=jrel, minlength=J.nq)[: J.nq][rk.base]
    depth = np.maximum(rk.length, Rq).astype(np.int64)
    D = int(depth.max()) if len(depth) else 0
    S = np.concatenate(([0.0], np.cumsum(np.power(p, np.arange(D)) / (np.arange(D) + 1.0))))
    # ideal rank of each retrieved relevant document: documents of higher grade, then earlier
    # retrieved documents of the same grade
    idx = np.flatnonzero(relv)
    g = c[idx]
    qrow = rk.row[idx]
    # higher-grade relevant documents of the query (in the qrels, retrieved or not): composite
    # integer keys (query, grade code) searched in the sorted qrels keys
    pos_j = jrel
    levels, jcode = np.unique(J.grade[pos_j], return_inverse=True)
    nc = max(len(levels), 1)
    jkeys = np.sort(J.row[pos_j].astype(np.int64) * nc + jcode)
    qb = rk.base[qrow].astype(np.int64)
    key = qb * nc + np.searchsorted(levels, g)
    higher = np.searchsorted(jkeys, qb * nc + nc, "left") - np.searchsorted(jkeys, key, "right")
    o2 = np.lexsort((rk.pos[idx], g, qrow))
    same = np.zeros(len(idx), np.int64)
    if len(idx):
        key_r, key_g = qrow[o2], g[o2]
        newgrp = np.ones(len(o2), bool)
        newgrp[1:] = (key_r[1:] != key_r[:-1]) | (key_g[1:] != key_g[:-1])
        grp_start = np.maximum.accumulate(np.where(newgrp, np.arange(len(o2)), 0))
        same[o2] = np.arange(len(o2)) - grp_start
    rank_ideal = higher + same
    m = np.maximum(rk.pos[idx], rank_ideal)
    d = depth[qrow]
    score = np.bincount(qrow, weights=S[d] - S[np.minimum(m, d)], minlength=rk.nrows)[: rk.nrows]
    norm = _div(1.0 - np.power(p, depth), 1.0 - p) if p != 1 else depth.astype(np.float64)
    score = _div(score, norm)
    if normalize:
        # RBO(ideal, ideal): document at ideal rank i has m = i, i < R'
        best = np.zeros(rk.nrows)
        maxr = int(Rq.max()) if len(Rq) else 0
        if maxr:
            Rr = Rq.astype(np.int64)
            # sum_{i<R'} (S[d] - S[i]) = R' S[d] - sum_{i<R'} S[i]
            cS = np.concatenate(([0.0], np.cumsum(S)))
            best = _div(Rr * S[depth] - cS[Rr], norm)
        score = np.where(best > 0, _div(score, best), score)
    return score


# --------------------------------------------------------------------------- relstring (text)

def relstring(rk: Ranking, length: int = 10) -> list[str]:
    """Per row the codes of the first ``length`` documents as text: a digit for grade 0-9, '>' above,
    '-' not in the qrels, '.' pooled but unjudged (m_relstring.c)."""
    c = codes(rk)
    ch = np.where(c > 9, ">", np.where(c >= 0, np.char.mod("%d", np.clip(c, 0, 9).astype(np.int64)),
                                        np.where(c == NONPOOL, "-", ".")))
    keep = rk.pos < length
    out = [""] * rk.nrows
    rows, chars = rk.row[keep], ch[keep]
    bounds = np.searchsorted(rows, np.arange(rk.nrows + 1))
    for r in np.flatnonzero(np.diff(bounds)):  # one join per query, not per document
        out[r] = "".join(chars[bounds[r]:bounds[r + 1]].tolist())
    return out


# --------------------------------------------------------------------------- summaries

def summarise(trec: str, values: np.ndarray, *, J_all: Judgements | None = None, complete: bool = False) -> float:
    """trec_eval's summary ("all") of one measure's per-query values (meas_avg.c).

    ``values`` holds the averaged queries: with ``-c`` every qrels query (absent ones scored on an
    empty ranking), otherwise the queries with both qrels and results.  'sum' families add up
    (num_q is then the number of queries); gm_* take exp(mean(log(max(v, MIN_GEO_MEAN))));
    the rest the arithmetic mean.  num_rel under ``-c`` is trec_eval's count of every qrels line
    with grade > 0, whatever ``-l`` (m_num_rel.c), which needs ``J_all`` (all qrels queries).
    """
    fam = BY_TREC[trec]
    v = np.asarray(values, dtype=np.float64)
    if fam.summary == "sum":
        if trec == "num_rel" and complete:
            if J_all is None:
                raise ValueError("num_rel under -c needs the judgements of every qrels query")
            return float(np.count_nonzero(J_all.grade > 0))
        return float(v.sum())
    if not len(v):
        return 0.0
    if fam.summary == "gmean":
        return float(math.exp(np.sum(np.log(np.maximum(v, MIN_GEO_MEAN))) / len(v)))
    if fam.summary == "mean":
        return float(v.sum() / len(v))
    raise ValueError(f"{trec} has no numeric summary")


# --------------------------------------------------------------------------- the declarative table

@dataclass(frozen=True)
class TrecFamily:
    """One measure family in the terms of the registry's records.

    name: canonical (ir_measures-style) name, or the trec_eval name where ir_measures has none.
    trec: trec_eval's base name; param: how its ``-m base.PARAMS`` parameter reads:
      'none'; 'cutoffs' (comma list of positive integers, sorted, one column each: ``P.5,10``);
      'fractions' (comma list of floats, sorted, one column each, named ``%3.2f``:
      ``iprec_at_recall.0.10``, ``Rprec_mult.0.2``); 'float_list' (one column named by the raw text:
      ``11pt_avg..25,.5``, ``utility.1,-1,0,0``, ``set_F.0.5``); 'gains' (``level=gain`` pairs, one
      column named by the raw text: ``ndcg.1=3,2=9``; rbp/rbp_resid also take ``p=0.8``); 'length'
      (relstring.20: ``relstring_20``).
    default: trec_eval's default parameter (what ``-m base`` alone means).
    summary: 'mean' | 'sum' | 'gmean' | 'none' (text).  bounds: 'exact' (closed form in
    trec_expectations) | 'montecarlo' (native kernel on permuted rankings) | 'none'.
    uses_rel: reads -l.  per_query: printed per query with -q.  nick: trec_eval nicknames it is in.
    """

    name: str
    trec: str
    kernel: object
    param: str
    default: object
    summary: str
    bounds: str
    uses_rel: bool
    per_query: bool
    nick: tuple
    cite: str
    formula: str


_C = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_RMULT = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
_O, _S, _A = "official", "set", "all_trec"
_TE = "trec_eval 10 (Buckley, m_{}.c)"


def _f(name, trec, kernel, param, default, summary, bounds, uses_rel, nick, cite, per_query=True):
    return TrecFamily(name, trec, kernel, param, default, summary, bounds, uses_rel, per_query, nick,
                      cite, (kernel.__doc__ or "").strip().split("\n\n")[0] if kernel else "")


# trec_eval's table order (measures.c te_trec_measures): output follows it
FAMILIES: tuple[TrecFamily, ...] = (
    _f("runid", "runid", None, "none", None, "none", "none", False, (_O, _S, _A), "trec_eval", per_query=False),
    _f("NumQ", "num_q", k_num_q, "none", None, "sum", "none", False, (_O, _S, _A), "trec_eval", per_query=False),
    _f("NumRet", "num_ret", k_num_ret, "none", None, "sum", "none", False, (_O, _S, _A), "trec_eval"),
    _f("NumRel", "num_rel", k_num_rel, "none", None, "sum", "none", True, (_O, _S, _A), "trec_eval"),
    _f("NumRelRet", "num_rel_ret", k_num_rel_ret, "none", None, "sum", "none", True, (_O, _S, _A), "trec_eval"),
    _f("AP", "map", k_map, "none", None, "mean", "exact", True, (_O, _A), "Buckley & Voorhees 2005"),
    _f("gm_map", "gm_map", k_map, "none", None, "gmean", "exact", True, (_O, _A), "Robertson 2006 (GMAP); trec_eval",
       per_query=False),
    _f("Rprec", "Rprec", k_Rprec, "none", None, "mean", "exact", True, (_O, _A), "Buckley & Voorhees 2005"),
    _f("Bpref", "bpref", k_bpref, "none", None, "mean", "exact", True, (_O, _A), "Buckley & Voorhees 2004"),
    _f("RR", "recip_rank", k_recip_rank, "none", None, "mean", "exact", True, (_O, _A), "trec_eval"),
    _f("IPrec", "iprec_at_recall", k_iprec_at_recall, "fractions", _RECALL, "mean", "montecarlo", True, (_O, _A),
       "trec_eval"),
    _f("P", "P", k_P, "cutoffs", _C, "mean", "exact", True, (_O, _A), "trec_eval"),
    _f("relstring", "relstring", None, "length", 10, "none", "none", False, (_A,), "trec_eval"),
    _f("R", "recall", k_recall, "cutoffs", _C, "mean", "exact", True, (_A,), "trec_eval"),
    _f("infAP", "infAP", k_infAP, "none", None, "mean", "exact", True, (_A,), "Yilmaz & Aslam 2006"),
    _f("gm_bpref", "gm_bpref", k_bpref, "none", None, "gmean", "exact", True, (_A,), "Buckley & Voorhees 2004",
       per_query=False),
    _f("Rprec_mult", "Rprec_mult", k_Rprec_mult, "fractions", _RMULT, "mean", "exact", True, (_A,), "trec_eval"),
    _f("utility", "utility", k_utility, "float_list", (1.0, -1.0, 0.0, 0.0), "mean", "none", True, (_S, _A),
       "trec_eval"),
    _f("11pt_avg", "11pt_avg", k_11pt_avg, "float_list", _RECALL, "mean", "montecarlo", True, (_A,), "trec_eval"),
    _f("binG", "binG", k_binG, "none", None, "mean", "exact", True, (_A,), "trec_eval (experimental, 2008)"),
    _f("G", "G", k_G, "gains", None, "mean", "montecarlo", False, (_A,), "trec_eval (experimental, 2008)"),
    _f("nDCG", "ndcg", k_ndcg, "gains", None, "mean", "exact", False, (_A,), "Jarvelin & Kekalainen 2002"),
    _f("ndcg_rel", "ndcg_rel", k_ndcg_rel, "gains", None, "mean", "montecarlo", False, (_A,),
       "Jarvelin & Kekalainen 2002; trec_eval"),
    _f("Rndcg", "Rndcg", k_Rndcg, "gains", None, "mean", "montecarlo", True, (_A,),
       "Jarvelin & Kekalainen 2002; trec_eval"),
    _f("nDCG@k", "ndcg_cut", k_ndcg_cut, "cutoffs", _C, "mean", "exact", False, (_A,), "Jarvelin & Kekalainen 2002"),
    _f("AP@k", "map_cut", k_map_cut, "cutoffs", _C, "mean", "exact", True, (_A,), "Buckley & Voorhees 2005"),
    _f("relative_P", "relative_P", k_relative_P, "cutoffs", _C, "mean", "exact", True, (_A,), "trec_eval"),
    _f("Success", "success", k_success, "cutoffs", (1, 5, 10), "mean", "exact", True, (_A,), "trec_eval"),
    _f("SetP", "set_P", k_set_P, "none", None, "mean", "none", True, (_S, _A), "trec_eval"),
    _f("SetRelP", "set_relative_P", k_set_relative_P, "none", None, "mean", "none", True, (_S, _A), "trec_eval"),
    _f("SetR", "set_recall", k_set_recall, "none", None, "mean", "none", True, (_S, _A), "trec_eval"),
    _f("SetAP", "set_map", k_set_map, "none", None, "mean", "none", True, (_S, _A), "trec_eval"),
    _f("SetF", "set_F", k_set_F, "float_list", (1.0,), "mean", "none", True, (_S, _A), "trec_eval"),
    _f("NumNonrelJudgedRet", "num_nonrel_judged_ret", k_num_nonrel_judged_ret, "none", None, "sum", "none", True,
       (_A,), "trec_eval"),
    _f("RBP_trec", "rbp", k_rbp, "gains", None, "mean", "exact", False, (_A,), "Moffat & Zobel 2008"),
    _f("RBP_resid", "rbp_resid", k_rbp_resid, "gains", None, "mean", "exact", False, (_A,), "Moffat & Zobel 2008"),
    _f("Unjudged", "unj", k_unj, "cutoffs", (5, 10, 20), "mean", "none", False, (_A,), "trec_eval 10"),
    # ir_measures families computed natively (not in all_trec)
    _f("ERR", None, k_ERR, "cutoffs", None, "mean", "montecarlo", False, (), "Chapelle et al. 2009 (gdeval)"),
    _f("Judged", None, k_Judged, "cutoffs", None, "mean", "none", False, (), "ir_measures"),
    _f("Compat", None, k_Compat, "none", (0.95, True), "mean", "montecarlo", True, (),
       "Clarke, Vtyurina & Smucker 2021 (TOIS)"),
)
BY_TREC = {f.trec: f for f in FAMILIES if f.trec}
BY_NAME = {f.name: f for f in FAMILIES}


def compute_trec(trec: str, rk: Ranking, J: Judgements, param=None, ctx: TrecContext | None = None) -> np.ndarray:
    """Per-row values of the trec_eval measure ``trec`` (base name) for one parameter value."""
    fam = BY_TREC.get(trec) or BY_NAME[trec]
    if fam.kernel is None:
        raise ValueError(f"{trec} is text, not a number (see relstring / the run's name)")
    return fam.kernel(rk, J, param, ctx or TrecContext())


# --------------------------------------------------------------------------- trec_eval's -m syntax

INTEGER_VALUED = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"})  # printed %ld
NICKNAMES = {nick: [f.trec for f in FAMILIES if nick in f.nick] for nick in (_O, _S, _A)}


class TrecSyntaxError(ValueError):
    """A ``-m`` argument trec_eval would refuse (the message is one line, for ``ulnorm-eval: ...``)."""


def expand_nickname(text: str) -> list[str]:
    """``all_trec`` / ``official`` / ``set`` -> their measures in trec_eval's order; anything else -> [text]."""
    return list(NICKNAMES.get(text, [text]))


def parse_trec_measure(text: str):
    """One trec_eval ``-m`` argument -> (family, [(output name, kernel parameter), ...]).

    ``P.5,10`` -> P_5, P_10 (cutoffs: integers, atol-truncated as trec_eval does, sorted, > 0);
    ``iprec_at_recall..10,.5`` -> iprec_at_recall_0.10, _0.50 (fractions, sorted, named %3.2f);
    ``utility.2,-1,0,0`` / ``11pt_avg..25,.5`` / ``set_F.0.5`` -> one column named base_PARAMS;
    ``ndcg.1=3,2=9`` / ``rbp.p=0.8`` -> one column named base_PARAMS with a {level: gain, 'p': p} map;
    ``relstring.20`` -> relstring_20.  Without parameters, trec_eval's defaults and plain names.
    """
    base, _, arg = text.strip().partition(".")
    fam = BY_TREC.get(base)
    if fam is None:
        raise TrecSyntaxError(f"unknown trec_eval measure {base!r}")
    if fam.param == "none":
        if arg:
            raise TrecSyntaxError(f"{text}: {base} takes no parameters")
        return fam, [(base, None)]
    items = arg.split(",") if arg else None

    def num(v, kind=float):
        try:
            return kind(v)
        except ValueError:
            raise TrecSyntaxError(f"{text}: {v!r} is not a number") from None

    if fam.param == "cutoffs":
        vals = [int(num(v)) for v in items] if items else list(fam.default)
        if min(vals) <= 0:
            raise TrecSyntaxError(f"{text}: cutoffs must be positive")
        if len(set(vals)) != len(vals):
            raise TrecSyntaxError(f"{text}: duplicate cutoff")
        return fam, [(f"{base}_{v}", v) for v in sorted(vals)]
    if fam.param == "fractions":
        vals = sorted(num(v) for v in items) if items else list(fam.default)
        return fam, [(f"{base}_{v:3.2f}", v) for v in vals]
    if fam.param == "float_list":
        vals = tuple(num(v) for v in items) if items else fam.default
        want = {"utility": 4, "set_F": 1}.get(base)
        if want is not None and len(vals) != want:
            raise TrecSyntaxError(f"{text}: {base} takes {want} number{'s' * (want > 1)}")
        return fam, [(f"{base}_{arg}" if arg else base, vals[0] if base == "set_F" else vals)]
    if fam.param == "gains":
        d = None
        if items:
            d = {}
            for pair in items:
                k, eq, v = pair.partition("=")
                if not eq:
                    raise TrecSyntaxError(f"{text}: expected level=gain pairs, e.g. {base}.1=3,2=9")
                if k == "p" and base in ("rbp", "rbp_resid"):
                    d["p"] = num(v)
                    if not 0 < d["p"] < 1:
                        raise TrecSyntaxError(f"{text}: p must lie strictly between 0 and 1")
                else:
                    d[num(k, int)] = num(v)
        return fam, [(f"{base}_{arg}" if arg else base, d)]
    if fam.param == "length":
        n = int(num(items[0])) if items else fam.default
        return fam, [(f"{base}_{arg}" if arg else base, n)]
    raise AssertionError(fam.param)
