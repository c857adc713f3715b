"""trec_eval 10's measures with its exact semantics, as family records: every measure of
``-m all_trec`` that the other family modules do not already compute (map, map_cut, P, recall,
recip_rank, Rprec, ndcg and ndcg_cut are AP, P, R, RR, Rprec and nDCG, bit-identical on the real
data), plus ERR, Judged and Compat as ir_measures defines them.

Each kernel here is a pure function ``k_x(ranking, judgements, param, ctx) -> values[rows]`` over the
flat :class:`~ulnorm_eval.core.kernels.Ranking` (rows in trec_eval's order: score descending,
docno descending, ``-M`` applied) and the query's :class:`~ulnorm_eval.core.kernels.Judgements`.
``param`` is the family's single parameter value (a cutoff, a multiplier, a gain map, ...),
``ctx`` a :class:`TrecContext` carrying trec_eval's flags; :func:`_family_kernel` turns it into a
record's ``kernel(ranking, judgements, measure, level)``.  No Python loop runs
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
* with ``-J -c``, a query the run did not retrieve for prints ``-nan`` for iprec_at_recall_0.00 and
  11pt_avg (0/0), which also makes their 'all' rows ``-nan``; we print 0, as trec_eval does without -J.
* without ``-c``, trec_eval 10 exits ("result qid ... not found") when a qrels query has no results
  (trec_eval.c); we evaluate the queries with both qrels and results, as trec_eval 9 did.
The expected files of trec_eval's test suite hold the values of the initialised reading of rbp
(gains divided by the query's largest grade when it exceeds 1); a local build prints garbage there.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..lazy import np

from ..kernels import Judgements, Ranking, rel_of
from ..records import Family, Param, TrecName, UnknownMeasure, register
from .common import RandomPool, binary_gain, safe
from .cumulative import GAINS_PARAM
from .cumulative import gain as graded_gain
from .precision import REL, TREC_CUTOFFS, e_ap, k_ap

__all__ = ["TrecContext", "judged_only", "codes", "trec_relevant_count", "relstring", "INFAP_EPSILON",
           "context"]

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



def k_relative_P(rk, J, k, ctx):
    """relative_P@k = relevant in the top k / min(k, R) (0 when R = 0)."""
    R = _R(rk, J, ctx)
    return safe(_at_depth(rk, _rel(rk, ctx), k), np.minimum(float(k), R))


def k_success(rk, J, k, ctx):
    """success@k = 1 if a relevant document is in the top k, else 0."""
    return (_at_depth(rk, _rel(rk, ctx), k) > 0).astype(np.float64)




def k_Rprec_mult(rk, J, x, ctx):
    """Precision at c = (long)(x R + 0.9) documents; when c > num_ret, num_rel_ret / c (m_Rprec_mult.c)."""
    R = _R(rk, J, ctx)
    c = np.floor(float(x) * R + 0.9)
    rel = _rel(rk, ctx)
    nrr = rk.rowsum(rel)
    beyond = c > rk.length
    return np.where(beyond, safe(nrr, c), safe(_at_depth(rk, rel, c), c))




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
    term = np.where(nb > 0, 1.0 - safe(np.minimum(nb, R), np.minimum(Nn, R)), 1.0)
    return safe(rk.rowsum(np.where(rel, term, 0.0)), _R(rk, J, ctx))


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
    return safe(rk.rowsum(np.where(rel, term, 0.0)), _R(rk, J, ctx))


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
    s = rk.rowsum(np.where(hit, safe(dcg, ideal), 0.0))
    full = _idcg(J, gains)[rk.base]
    final = rk.rowsum(g * _disc(rk.pos))
    nrel = npos[rk.base].astype(np.float64)
    s = s + (nrel - rk.rowsum(hit)) * safe(final, full)
    return np.where(s > 0, safe(s, nrel), 0.0)


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
    s = np.bincount(br, weights=safe(dcg_b, bi), minlength=rk.nrows)[: rk.nrows]
    cnt_b = np.bincount(br, minlength=rk.nrows)[: rk.nrows].astype(np.float64)
    bmax = np.zeros(rk.nrows)
    np.maximum.at(bmax, br, bb)
    final = rk.rowsum(g * _disc(rk.pos))
    full = _idcg(J, gains)[rk.base]
    extra = (rk.length >= bmax + 2) & (full > 0) & (cnt_b > 0)
    s = s + np.where(extra, safe(final, full), 0.0)
    cnt_b = cnt_b + extra
    return np.where(R > 0, safe(s, cnt_b), 0.0)


def k_binG(rk, J, param, ctx):
    """binG = (1/R) sum over relevant retrieved d of 1 / log2(2 + documents above d not relevant)."""
    rel = _rel(rk, ctx)
    above_non = rk.pos - (_cum(rk, rel) - rel)
    s = rk.rowsum(np.where(rel, 1.0 / np.log2(2.0 + above_non), 0.0))
    return safe(s, _R(rk, J, ctx))


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
    return safe(rk.rowsum(term), total)


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
    return safe(a, ret)


def k_set_recall(rk, J, param, ctx):
    """num_rel_ret / R."""
    ret, a, R = _set_counts(rk, J, ctx)
    return safe(a, R)


def k_set_relative_P(rk, J, param, ctx):
    """num_rel_ret / min(num_ret, R)."""
    ret, a, R = _set_counts(rk, J, ctx)
    return np.where((ret > 0) & (R > 0), safe(a, np.minimum(ret, R)), 0.0)


def k_set_map(rk, J, param, ctx):
    """num_rel_ret^2 / (num_ret R) (set precision times set recall)."""
    ret, a, R = _set_counts(rk, J, ctx)
    return safe(a * a, ret * R)


def k_set_F(rk, J, x, ctx):
    """(x+1) P R / (x P + R) with set P and R; x = 1 by default (m_set_F.c)."""
    x = 1.0 if x is None else float(x)
    ret, a, R = _set_counts(rk, J, ctx)
    P, Rc = safe(a, ret), safe(a, R)
    return np.where(a > 0, safe((x + 1.0) * P * Rc, x * P + Rc), 0.0)


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
        raise UnknownMeasure("ERR (gdeval) takes grades 0..4: a larger grade would make a probability exceed 1")
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
    return safe(_at_depth(rk, judged, kk), kk)


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
    norm = safe(1.0 - np.power(p, depth), 1.0 - p) if p != 1 else depth.astype(np.float64)
    score = safe(score, norm)
    if normalize:
        # RBO(ideal, ideal): document at ideal rank i has m = i, i < R'
        best = np.zeros(rk.nrows)
        maxr = int(Rq.max()) if len(Rq) else 0
        if maxr:
            Rr = Rq.astype(np.int64)
            # sum_{i<R'} (S[d] - S[i]) = R' S[d] - sum_{i<R'} S[i]
            cS = np.concatenate(([0.0], np.cumsum(S)))
            best = safe(Rr * S[depth] - cS[Rr], norm)
        score = np.where(best > 0, safe(score, best), score)
    return score


# --------------------------------------------------------------------------- expectations
#
# Expectations of trec_eval's measures under a uniformly random permutation of each query's pool,
# exact where a closed form exists, otherwise Monte Carlo with the native kernels.
#
# The pool (core/pools.py) is ranked whole: num_ret = n.  Each pool document has trec_eval's code
# (codes()): its grade when judged with grade >= 0, -2 when judged with a negative grade
# (pooled but unjudged), -1 when not judged (run/union pools).  Per query, with L = -l:
#
#   n pool size; P pool documents relevant (code >= L); Q judged nonrelevant (0 <= code < L);
#   U pooled-unjudged (-2); V not in the qrels (-1); R = trec_eval's num_rel from the qrels;
#   N judged nonrelevant in the qrels; m = min(k, n).
#
# Closed forms (each proven against every permutation of small pools in tests/test_trec_bounds.py):
#
# * P@k: (P/n) m/k;  recall@k: (P/n) m/R;  relative_P@k: (P/n) m/min(k, R)  (linearity).
# * success@k: 1 - C(n-P, m)/C(n, m)  (no relevant document among the first m).
# * Rprec: (P/n) min(R, n)/R.  Rprec_mult(x), c = (long)(x R + 0.9): 0 if c = 0; P/n if c <= n;
#   P/c if c > n (every pool document is retrieved).
# * map, map_cut@k, recip_rank, gm_map, P, recall, Rprec, ndcg, ndcg_cut: the AP, RR, P, R, Rprec
#   and nDCG records' expectations (precision.py, cumulative.py).
# * bpref (Buckley & Voorhees 2004): the judged nonrelevant documents above a given relevant one are
#   uniform on {0..Q} (its place among them is uniform), so
#   E = (P/R) (1 - E[min(X, R)]/min(N, R)), E[min(X, R)] = (t(t+1)/2 + (Q - t) R)/(Q + 1), t = min(Q, R)
#   (and P/R when min(N, R) = 0).
# * binG: the documents above a relevant one that are not relevant are uniform on {0..n-P}:
#   E = (P/R) (1/(n-P+1)) sum_{x=0}^{n-P} 1/log2(2 + x).
# * infAP (Yilmaz & Aslam 2006): above a given relevant document, the number s of judged documents
#   (K = P-1+Q others) is uniform on 0..K; given s, the number w of the W = U+V others above it is
#   beta-binomial BB(W; s+1, K+1-s) (its place among all is uniform); of those s, r are relevant with
#   E[r | s] = s (P-1)/K, and of those w, v are not in the qrels with E[v | w] = w V/W.  The term at
#   rank j = s + w, (1 + (j - v)(r + eps)/(s + 2 eps))/(j + 1), is linear in r and in v, which are
#   independent given (s, w), so E = (P/R) E_{s,w}[(1 + (s + w U/W)(E[r|s] + eps)/(s + 2 eps))/(s+w+1)]
#   (the j = 0 term is 1).
# * rbp(p): mean scaled gain * (1 - p^n) (Moffat & Zobel 2008).  rbp_resid(p): p^n + (W/n)(1 - p^n)
#   when W = U + V > 0, else 0.
#
# 'montecarlo' families (iprec_at_recall, 11pt_avg, G, ndcg_rel, Rndcg, ERR, Compat): the native
# kernel on seeded permutations (core/permutations.py, through core/expectations.py), with the
# standard error of the mean.


def pool_codes(pool) -> np.ndarray:
    """trec_eval's code of each pool document (as :func:`codes` of a ranking)."""
    return np.where(~pool.judged, NONPOOL, np.where(pool.grade < 0, UNJUDGED, pool.grade))




def pool_counts(pool, J, ctx):
    """n, P, Q, U, V, R, N per query (see the module docstring)."""
    c = pool_codes(pool)
    L = ctx.rel_level
    P = pool.rowsum(c >= L)
    Q = pool.rowsum((c >= 0) & (c < L))
    U = pool.rowsum(c == UNJUDGED)
    V = pool.rowsum(c == NONPOOL)
    R = trec_relevant_count(J, L)
    N = _nonrel_count(J, L)
    return pool.n, P, Q, U, V, R, N


def _m(n, k):
    return np.minimum(n, float(k))






def e_relative_P(pool, J, k, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    return safe(safe(P * _m(n, k), n), np.minimum(float(k), R))


def e_success(pool, J, k, ctx):
    """1 - C(n-P, m)/C(n, m) = 1 - prod_{i<m} (n-P-i)/(n-i)."""
    from scipy.special import gammaln

    n, P, *_ = pool_counts(pool, J, ctx)
    m = _m(n, k)
    none = np.zeros_like(n)
    ok = (n - P >= m) & (n > 0)
    none[ok] = np.exp(gammaln(n[ok] - P[ok] + 1) - gammaln(n[ok] - P[ok] - m[ok] + 1)
                      - gammaln(n[ok] + 1) + gammaln(n[ok] - m[ok] + 1))
    return np.where(n > 0, 1.0 - none, 0.0)




def e_Rprec_mult(pool, J, x, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    c = np.floor(float(x) * R + 0.9)
    return np.where(c == 0, 0.0, np.where(c > n, safe(P, c), safe(P, n)))










def e_bpref(pool, J, param, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    t = np.minimum(Q, R)
    emin = (t * (t + 1) / 2.0 + (Q - t) * R) / (Q + 1.0)
    denom = np.minimum(N, R)
    per = np.where(denom > 0, 1.0 - safe(emin, denom), 1.0)
    return safe(P * per, R)


def e_binG(pool, J, param, ctx):
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    K = (n - P).astype(np.int64)
    H = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(2.0 + np.arange(int(K.max()) + 1 if K.size else 0)))))
    mean = H[K + 1] / (K + 1.0)
    return safe(P * mean, R)


_INFAP_BLOCK = 4_000_000  # elements of one (queries x j x s) block


def e_infAP(pool, J, param, ctx):
    """Exact E[infAP]; see the module docstring.  Computed as a sum over s (judged documents above
    the scored relevant one: uniform on 0..K, K = P-1+Q, its place among the judged being uniform)
    and w (documents above it that are pooled-unjudged or not in the qrels: beta-binomial
    BB(W; s+1, K+1-s), W = U+V), of (1 + (s + w (1 - V/W)) (s (P-1)/K + eps)/(s + 2 eps)) / (s + w + 1):
    the infAP term at rank j = s + w with E[r | s] = s (P-1)/K and E[v | w] = w V/W."""
    from scipy.special import betaln

    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    eps = INFAP_EPSILON
    out = np.zeros(pool.nq)
    for q in np.flatnonzero((P > 0) & (R > 0)):  # one vectorised block per query (no per-document loop)
        PP, QQ, UU, VV = (int(x) for x in (P[q], Q[q], U[q], V[q]))
        K, W = PP - 1 + QQ, UU + VV
        s = np.arange(K + 1, dtype=np.float64)[:, None]
        w = np.arange(W + 1, dtype=np.float64)[None, :]
        if W:
            # log BB(w) = log BB(0) + sum_{t<w} log[(W-t)(t+s+1) / ((t+1)(W-t+K-s))]: table lookups
            # and one cumulative sum instead of special functions per element
            a, b = s + 1.0, K + 1.0 - s
            logn = np.log(np.arange(1, W + K + 2, dtype=np.float64))  # log(1 .. W+K+1)
            t = np.arange(W)[None, :]
            si = np.arange(K + 1)[:, None]
            step = (logn[W - t - 1] + logn[t + si]) - (logn[t] + logn[W - t + K - si - 1])
            log0 = betaln(a, W + b) - betaln(a, b)
            pw = np.exp(np.concatenate([log0, log0 + np.cumsum(step, axis=1)], axis=1))
        else:
            pw = np.ones((K + 1, 1))
        er = s * (PP - 1) / K if K else np.zeros_like(s)
        judged_above = s + w * (1.0 - (VV / W if W else 0.0))  # j - E[v]
        term = (1.0 + judged_above * (er + eps) / (s + 2 * eps)) / (s + w + 1.0)
        out[q] = PP * np.sum(pw * term) / (K + 1.0) / R[q]
    return out


def _rbp_pool_gains(pool, J, gains):
    rk = pool.ordered(np.zeros(len(pool.row)), True)
    return rk, _rbp_gains(rk, J, gains)


def e_rbp(pool, J, param, ctx):
    p, gains = _p_and_gains(param)
    rk, g = _rbp_pool_gains(pool, J, gains)
    return safe(rk.rowsum(g), pool.n) * (1.0 - np.power(p, pool.n))


def e_rbp_resid(pool, J, param, ctx):
    p, _ = _p_and_gains(param)
    n, P, Q, U, V, R, N = pool_counts(pool, J, ctx)
    W = U + V
    pn = np.power(p, n)
    return np.where(W > 0, pn + safe(W, n) * (1.0 - pn), 0.0)


# trec_eval base name -> exact expectation(pool, J, param, ctx) -> values[queries]


# --------------------------------------------------------------------------- relstring and runid (text)

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


def k_relstring(rk, J, length, ctx):
    """The relevance codes of the top ``length`` documents, quoted as trec_eval prints them."""
    return np.array([f"'{s}'" for s in relstring(rk, 10 if length is None else int(length))], dtype=object)


def k_runid(rk, J, param, ctx):
    """No per-query value: trec_eval prints the run's tag on the 'all' row only."""
    return np.full(rk.nrows, "", dtype=object)


# --------------------------------------------------------------------------- records

def context(m, level) -> TrecContext:
    """trec_eval's flags for measure ``m`` from the kernels' level (a float or a kernels.Level)."""
    return TrecContext(rel_level=float(rel_of(m, level)), num_docs=getattr(level, "num_docs", 0.0),
                       rounding=getattr(level, "rounding", "round"), present=getattr(level, "present", None))


def _cutoff(m):
    return m.cutoff


def _param(name):
    return lambda m: m.get(name)


def _floats(name, default):
    """A comma list of numbers given as text (``utility.2,-1,0,0``), or the default tuple."""
    def read(m):
        text = m.get(name)
        return default if text is None else tuple(float(x) for x in text.split(","))
    return read


def _rbp_param(m):
    gains = m.get("gains")
    return {"p": m.get("p"), **(dict(gains) if gains else {})}


def _family_kernel(fn, param=None):
    """``kernel(ranking, judgements, measure, level)`` of a record from a ``k_x(rk, J, param, ctx)``."""
    def kernel(rk, J, m, level):
        return fn(rk, J, param(m) if param else None, context(m, level))
    kernel.__doc__ = fn.__doc__
    kernel.__name__ = fn.__name__
    return kernel


def _family_expectation(fn, param=None):
    """``expectation(rp)`` of a record from a trec_expectations ``e_x(pool, J, param, ctx)``."""
    def expectation(rp: RandomPool):
        return fn(rp.pool, rp.J, param(rp.measure) if param else None, context(rp.measure, rp.rel))
    expectation.__doc__ = fn.__doc__
    return expectation


def trec_gain(grade, m, rel, max_grade):
    """Sort key of a pool for IUB/WLB: relevant (1) before judged nonrelevant (0) before documents
    judged with a negative grade (-1, trec_eval's pooled-but-unjudged), which bpref and infAP tell apart."""
    return np.where(grade >= rel, 1.0, np.where(grade >= 0, 0.0, -1.0))


def _sum_positive(J: Judgements, level) -> float:
    """trec_eval's num_rel 'all' row under -c: every qrels line with grade > 0, whatever -l (m_num_rel.c)."""
    return float(np.count_nonzero(J.grade > 0))


def _check_floats(name, count=None):
    def validate(params, cutoff):
        text = params.get(name)
        if text is None:
            return None
        try:
            vals = [float(x) for x in text.split(",")]
        except ValueError:
            return f"{name} must be comma-separated numbers, e.g. {name}='1,-1,0,0'"
        if count is not None and len(vals) != count:
            return f"{name} takes {count} numbers"
        return None
    return validate


def _check_p(params, cutoff):
    return None if 0 < params.get("p", 0.9) < 1 else "p must lie strictly between 0 and 1"


def _check_positive(name):
    def validate(params, cutoff):
        v = params.get(name)
        return None if v is None or v > 0 else f"{name} must be positive"
    return validate


O, S, A = "official", "set", "all_trec"
_RECALL = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_RMULT = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
_TE = "trec_eval 10 (m_{}.c)"
NO_BOUNDS = "none (no random-ranking bounds)"


def _doc(fn) -> str:
    return " ".join((fn.__doc__ or "").strip().split("\n\n")[0].split())


def _count(name, trec, fn, nick, *, level="rel", irm=None, per_query=True, complete_summary=None):
    register(Family(name, (), "none", _family_kernel(fn), binary_gain, "none", None, _doc(fn), NO_BOUNDS, _TE.format(trec),
                    level, summary="sum", trec=(TrecName(trec, nick=nick),), irm=irm, value="int",
                    per_query=per_query, complete_summary=complete_summary))


def _set(name, trec, fn, nick, params=(), trec_name=None, param=None, validate=None, irm=None):
    register(Family(name, params, "none", _family_kernel(fn, param), binary_gain, "none", None, _doc(fn), NO_BOUNDS,
                    _TE.format(trec), "rel", trec=(trec_name or TrecName(trec, nick=nick),), irm=irm,
                    validate=validate))


register(Family(
    "runid", (), "none", _family_kernel(k_runid), binary_gain, "none", None, "the run's tag (text)", NO_BOUNDS,
    "trec_eval 10 (m_runid.c)", "gains", summary="run", trec=(TrecName("runid", nick=(O, S, A)),), value="text",
    per_query=False))
_count("NumQ", "num_q", k_num_q, (O, S, A), level="gains", irm="NumQ", per_query=False)
_count("NumRet", "num_ret", k_num_ret, (O, S, A), level="gains", irm="NumRet")
_count("NumRel", "num_rel", k_num_rel, (O, S, A), irm="NumRel", complete_summary=_sum_positive)
_count("NumRelRet", "num_rel_ret", k_num_rel_ret, (O, S, A), irm="NumRelRet")
_count("NumNonrelJudgedRet", "num_nonrel_judged_ret", k_num_nonrel_judged_ret, (A,))

register(Family(
    "GMAP", (REL,), "none", k_ap, binary_gain, "exact", e_ap, "AP per query; 'all' = geometric mean",
    "E[AP] per query (exact)", "Robertson 2006 (GMAP); trec_eval 10 (m_gm_map.c)", "rel", summary="gmean",
    trec=(TrecName("gm_map", nick=(O, A)),), per_query=False, examples=("GMAP",)))

register(Family(
    "Bpref", (REL,), "none", _family_kernel(k_bpref), trec_gain, "exact", _family_expectation(e_bpref),
    _doc(k_bpref), "(P/R)(1 - E[min(X, R)]/min(N, R)), X uniform on 0..Q judged nonrelevant above (exact)",
    "Buckley & Voorhees 2004", "rel", trec=(TrecName("bpref", nick=(O, A)),), irm="Bpref", examples=("Bpref",)))
register(Family(
    "GMBpref", (REL,), "none", _family_kernel(k_bpref), trec_gain, "exact", _family_expectation(e_bpref),
    "bpref per query; 'all' = geometric mean", "E[bpref] per query (exact)", "Buckley & Voorhees 2004; trec_eval 10",
    "rel", summary="gmean", trec=(TrecName("gm_bpref", nick=(A,)),), per_query=False, examples=("GMBpref",)))
register(Family(
    "infAP", (REL,), "none", _family_kernel(k_infAP), trec_gain, "exact", _family_expectation(e_infAP),
    _doc(k_infAP), "(P/R) E_{s,w}[(1 + (s + w U/W)(E[r|s] + eps)/(s + 2 eps))/(s+w+1)] (exact)",
    "Yilmaz & Aslam 2006", "rel", trec=(TrecName("infAP", nick=(A,)),), irm="infAP",
    examples=("infAP",)))

register(Family(
    "IPrec", (Param("recall", "float", 0.0, "recall level in [0, 1], written IPrec@0.2", always_show=True, at=True),
              REL), "none",
    _family_kernel(k_iprec_at_recall, _param("recall")), binary_gain, "montecarlo", None, _doc(k_iprec_at_recall),
    "Monte Carlo", "trec_eval 10 (m_iprec_at_recall.c)", "rel",
    trec=(TrecName("iprec_at_recall", "each", "recall", _RECALL, "float", fmt=".2f", nick=(O, A)),),
    irm="IPrec", validate=lambda p, c: None if 0 <= p.get("recall", 0) <= 1 else "recall must lie in [0, 1]"))
register(Family(
    "Avg11pt", (Param("points", "str", None, "recall points as text, e.g. '.25,.5,.75' (default 0, .1, ..., 1)"),
                REL), "none",
    _family_kernel(k_11pt_avg, _floats("points", _RECALL)), binary_gain, "montecarlo", None, _doc(k_11pt_avg),
    "Monte Carlo", "trec_eval 10 (m_11pt_avg.c)", "rel", trec=(TrecName("11pt_avg", "raw", "points", nick=(A,)),),
    validate=_check_floats("points")))

register(Family(
    "relstring", (Param("length", "int", 10, "number of ranks shown"),), "none", _family_kernel(k_relstring, _param("length")),
    binary_gain, "none", None, _doc(relstring), NO_BOUNDS, "trec_eval 10 (m_relstring.c)", "gains", summary="none",
    trec=(TrecName("relstring", "one", "length", nick=(A,)),), value="text", validate=_check_positive("length")))

register(Family(
    "RprecMult", (Param("mult", "float", 1.0, "multiple of R", always_show=True), REL), "none",
    _family_kernel(k_Rprec_mult, _param("mult")), binary_gain, "exact", _family_expectation(e_Rprec_mult, _param("mult")),
    _doc(k_Rprec_mult), "0 if c = 0; P/n if c <= n; P/c if c > n (exact)", "trec_eval 10 (m_Rprec_mult.c)", "rel",
    trec=(TrecName("Rprec_mult", "each", "mult", _RMULT, "float", fmt=".2f", nick=(A,)),),
    validate=_check_positive("mult"), examples=("RprecMult(mult=0.2)", "RprecMult(mult=1.0)", "RprecMult(mult=3.5)")))

register(Family(
    "utility", (Param("coef", "str", None, "p1,p2,p3,p4 as text (default '1,-1,0,0')"), REL), "none",
    _family_kernel(k_utility, _floats("coef", (1.0, -1.0, 0.0, 0.0))), binary_gain, "none", None, _doc(k_utility), NO_BOUNDS,
    "trec_eval 10 (m_utility.c)", "rel", trec=(TrecName("utility", "raw", "coef", nick=(S, A)),),
    validate=_check_floats("coef", 4)))

register(Family(
    "binG", (REL,), "none", _family_kernel(k_binG), binary_gain, "exact", _family_expectation(e_binG),
    _doc(k_binG), "(P/R) (1/(n-P+1)) sum_{x=0}^{n-P} 1/log2(2 + x) (exact)", "trec_eval 10 (m_binG.c, experimental)",
    "rel", trec=(TrecName("binG", nick=(A,)),), examples=("binG",)))
register(Family(
    "G", (GAINS_PARAM,), "none", _family_kernel(k_G, _param("gains")), graded_gain, "montecarlo", None, _doc(k_G),
    "Monte Carlo", "trec_eval 10 (m_G.c, experimental)", "gains", trec=(TrecName("G", "map", "gains", value_name="gain",
                                                                                  nick=(A,)),)))
register(Family(
    "nDCG_rel", (GAINS_PARAM,), "none", _family_kernel(k_ndcg_rel, _param("gains")), graded_gain, "montecarlo", None,
    _doc(k_ndcg_rel), "Monte Carlo", "Jarvelin & Kekalainen 2002; trec_eval 10 (m_ndcg_rel.c)", "gains",
    trec=(TrecName("ndcg_rel", "map", "gains", value_name="gain", nick=(A,)),)))
register(Family(
    "Rndcg", (GAINS_PARAM, REL), "none", _family_kernel(k_Rndcg, _param("gains")), graded_gain, "montecarlo", None,
    _doc(k_Rndcg), "Monte Carlo", "Jarvelin & Kekalainen 2002; trec_eval 10 (m_Rndcg.c)", "gains",
    trec=(TrecName("Rndcg", "map", "gains", value_name="gain", nick=(A,)),)))

register(Family(
    "RelP", (REL,), "required", _family_kernel(k_relative_P, _cutoff), binary_gain, "exact",
    _family_expectation(e_relative_P, _cutoff), _doc(k_relative_P), "(P/n) m / min(k, R) (exact)",
    "trec_eval 10 (m_relative_P.c)", "rel",
    trec=(TrecName("relative_P", "each", defaults=TREC_CUTOFFS, nick=(A,)),), examples=("RelP@{k}",)))
register(Family(
    "Success", (REL,), "required", _family_kernel(k_success, _cutoff), binary_gain, "exact",
    _family_expectation(e_success, _cutoff), _doc(k_success), "1 - C(n-P, m)/C(n, m), m = min(k, n) (exact)",
    "trec_eval 10 (m_success.c)", "rel", trec=(TrecName("success", "each", defaults=(1, 5, 10), nick=(A,)),),
    irm="Success", examples=("Success@{k}",)))

_set("SetP", "set_P", k_set_P, (S, A), irm="SetP")
_set("SetRelP", "set_relative_P", k_set_relative_P, (S, A))
_set("SetR", "set_recall", k_set_recall, (S, A), irm="SetR")
_set("SetAP", "set_map", k_set_map, (S, A))
_set("SetF", "set_F", k_set_F, (S, A), (Param("beta", "float", 1.0, "weight of recall"), REL),
     TrecName("set_F", "one", "beta", kind="float", nick=(S, A)), _param("beta"), _check_positive("beta"), irm="SetF")

_P = Param("p", "float", 0.9, "persistence", always_show=True)
register(Family(
    "RBP_trec", (_P, GAINS_PARAM), "none", _family_kernel(k_rbp, _rbp_param), graded_gain, "exact",
    _family_expectation(e_rbp, _rbp_param), _doc(k_rbp), "mean scaled gain * (1 - p^n) (exact)",
    "Moffat & Zobel 2008; trec_eval 10 (m_rbp.c)", "gains",
    trec=(TrecName("rbp", "map", "gains", value_name="gain", nick=(A,), keys=("p",)),), validate=_check_p,
    examples=("RBP_trec(p=0.9)", "RBP_trec(p=0.5)")))
register(Family(
    "RBP_resid", (_P,), "none", _family_kernel(k_rbp_resid, _rbp_param), binary_gain, "exact",
    _family_expectation(e_rbp_resid, _rbp_param), _doc(k_rbp_resid), "p^n + (W/n)(1 - p^n) when W > 0 (exact)",
    "Moffat & Zobel 2008; trec_eval 10 (m_rbp_resid.c)", "gains", trec=(TrecName("rbp_resid", "map", "gains", nick=(A,), keys=("p",)),),
    validate=_check_p, examples=("RBP_resid(p=0.9)", "RBP_resid(p=0.7)")))
register(Family(
    "Unjudged", (), "required", _family_kernel(k_unj, _cutoff), binary_gain, "none", None, _doc(k_unj), NO_BOUNDS,
    "trec_eval 10 (m_unj.c)", "gains", trec=(TrecName("unj", "each", defaults=(5, 10, 20), nick=(A,)),)))

# ir_measures' families, natively
register(Family(
    "ERR", (), "optional", _family_kernel(k_ERR, _cutoff), graded_gain, "montecarlo", None, _doc(k_ERR),
    "Monte Carlo", "Chapelle et al. 2009", "gains", irm="ERR"))
register(Family(
    "Judged", (), "optional", _family_kernel(k_Judged, _cutoff), binary_gain, "none", None, _doc(k_Judged), NO_BOUNDS,
    "ir_measures (judged)", "gains", irm="Judged"))
register(Family(
    "Compat", (Param("p", "float", 0.95, "RBO persistence"), Param("normalize", "int", 1, "1: divide by RBO(ideal, ideal)",
                                                               choices=(0, 1)), REL), "none",
    _family_kernel(k_Compat, lambda m: (m.get("p"), bool(m.get("normalize")))), binary_gain, "montecarlo", None,
    _doc(k_Compat), "Monte Carlo", "Clarke, Vtyurina & Smucker 2021 (TOIS)", "rel", irm="Compat", validate=_check_p))
