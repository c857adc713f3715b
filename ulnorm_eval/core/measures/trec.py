"""trec_eval 10's measures with its exact semantics, as family records: every measure of ``-m all_trec``
the other family modules do not compute, plus ERR, Judged and Compat as ir_measures defines them; here
the kernels of its counting, set and text families and of ERR, Judged and Compat.  The kernels read
trec_eval's codes and flags (:mod:`.common`); the departures from trec_eval 10 are in docs/trec_eval.md.
"""
from __future__ import annotations

import numpy as np

from ..holes import monotone, outside_by_r
from ..kernels import Judgements, Ranking
from ..records import Family, Param, register, TrecName, UnknownMeasure
from .common import (BINARY_EXACT, binary_gain, check_p, codes, context, floats, JUDGED_ONLY, judged_only,  # noqa: F401 - re-exported
                     NONPOOL, nonrel_index, present_mask, rel_index, rel_total, safe)
from .cumulative import gain as graded_gain, GAINS_PARAM
from .precision import counted, e_ap, expected_count, holes_ap, k_ap, REL, TREC_CUTOFFS
from .trec_gains import (e_binG, e_ndcg_rel, e_Rndcg, e_rbp, e_rbp_resid, k_binG, k_G, k_ideal_dcg, k_ndcg_rel, k_rbp, k_rbp_resid,
                         k_Rndcg, rbp_order, reads_gain, stale_ideal_dcg)
from .trec_precision import (e_bpref, e_infAP, e_Rprec_mult, e_success, k_11pt_avg, k_bpref,
                             k_infAP, k_iprec_at_recall, k_unj, k_yaap, RECALL_POINTS)

__all__ = ["judged_only", "codes", "relstring"]


# --------------------------------------------------------------------------- counts

def k_num_q(ranking, judgements, measure, level):
    """1 per evaluated query (trec_eval prints only the sum: the number of queries averaged over)."""
    return np.ones(ranking.nrows)


def k_num_ret(ranking, judgements, measure, level):
    """Documents retrieved (after -M and -J); with ir_measures' rel=k only those of grade >= k."""
    rel = dict(measure.params).get("rel")
    if rel is None:
        return ranking.length.astype(np.float64)
    return ranking.rowsum(codes(ranking) >= float(rel))


def k_num_rel(ranking, judgements, measure, level):
    """R: judged documents with grade >= -l."""
    return rel_total(ranking, judgements, context(measure, level)).astype(np.float64)


def k_num_nonrel_judged_ret(ranking, judgements, measure, level):
    """Judged nonrelevant documents retrieved: num_ret - unjudged - num_rel_ret."""
    return ranking.count_within(nonrel_index(ranking, context(measure, level)), np.inf)


# --------------------------------------------------------------------------- set measures

def _set_counts(ranking, judgements, measure, level):
    """(num_ret, num_rel_ret, R) per row."""
    ctx = context(measure, level)
    return ranking.length.astype(np.float64), ranking.count_within(rel_index(ranking, ctx), np.inf), rel_total(ranking, judgements, ctx).astype(np.float64)


def k_set_map(ranking, judgements, measure, level):
    """num_rel_ret^2 / (num_ret R) (set precision times set recall)."""
    ret, rel_ret, R = _set_counts(ranking, judgements, measure, level)
    return safe(rel_ret * rel_ret, ret * R)


def k_set_F(ranking, judgements, measure, level):
    """(x+1) P R / (x P + R) with set P and R; x = 1 by default (m_set_F.c)."""
    beta = 1.0 if measure.get("beta") is None else float(measure.get("beta"))
    ret, rel_ret, R = _set_counts(ranking, judgements, measure, level)
    precision, recall = safe(rel_ret, ret), safe(rel_ret, R)
    return np.where(rel_ret > 0, safe((beta + 1.0) * precision * recall, beta * precision + recall), 0.0)


def k_utility(ranking, judgements, measure, level):
    """p1 a + p2 b + p3 c + p4 d over the contingency table (a relevant retrieved, b nonrelevant
    retrieved, c relevant missed, d = N + a - num_ret - R); 0 for -c's empty rankings (m_utility.c)."""
    coef = floats(measure.get("coef"), None)
    ctx = context(measure, level)
    coef_rel_ret, coef_nonrel_ret, coef_rel_missed, coef_nonrel_missed = (1.0, -1.0, 0.0, 0.0) if coef is None else map(float, coef)
    ret, rel_ret, R = _set_counts(ranking, judgements, measure, level)
    values = coef_rel_ret * rel_ret + coef_nonrel_ret * (ret - rel_ret) + coef_rel_missed * (R - rel_ret) + coef_nonrel_missed * (ctx.num_docs + rel_ret - ret - R)
    if ctx.trec_nan and coef is not None:
        # --trec-nan: trec_eval zeroes only a measure named exactly 'utility' for -c's placeholder
        # ranking (one document not in the qrels; none after -J), so utility.p1,p2,p3,p4 scores it
        present = 0.0 if ctx.judged_only else 1.0
        leak = coef_nonrel_ret * present + coef_rel_missed * R + coef_nonrel_missed * (ctx.num_docs - present - R)
        return np.where(present_mask(ranking, ctx), values, leak)
    return np.where(present_mask(ranking, ctx), values, 0.0)


# --------------------------------------------------------------------------- relstring and runid (text)

def relstring(ranking: Ranking, length: int = 10) -> list[str]:
    """Per row the codes of the first ``length`` documents as text: a digit for grade 0-9, '>' above,
    '-' not in the qrels, '.' pooled but unjudged (m_relstring.c)."""
    keep = ranking.pos < length  # only the first ``length`` codes per row become text
    code, rows = codes(ranking)[keep], ranking.row[keep]
    # one byte per document from a lookup table ('0'-'9', '>' above 9, '-' not in the qrels, '.' judged
    # negative); codes are -2, -1 or a grade >= 0, whose whole part m_relstring.c prints
    table = np.frombuffer(b".-0123456789>", dtype="S1")
    chars = table[np.where(code > 9, 12, code + 2).astype(np.intp)].tobytes().decode("ascii")
    out = [""] * ranking.nrows
    bounds = np.searchsorted(rows, np.arange(ranking.nrows + 1))
    for row in np.flatnonzero(np.diff(bounds)):  # one slice per query, not per document
        out[row] = chars[bounds[row]:bounds[row + 1]]
    return out


def k_relstring(ranking, judgements, measure, level):
    """The relevance codes of the top ``length`` documents, quoted as trec_eval prints them."""
    length = dict(measure.params).get("length")
    ctx = context(measure, level)
    out = np.array([f"'{string}'" for string in relstring(ranking, 10 if length is None else int(length))], dtype=object)
    if ctx.trec_nan and length is not None and not ctx.judged_only:
        # --trec-nan: trec_eval clears only a measure named exactly 'relstring' for -c's placeholder
        # ranking, so relstring.N shows the placeholder: one document not in the qrels, '-'
        out = np.where(present_mask(ranking, ctx), out, "'-'").astype(object)
    return out


def k_runid(ranking, judgements, measure, level):
    """No per-query value: trec_eval prints the run's tag on the 'all' row only."""
    return np.full(ranking.nrows, "", dtype=object)


# --------------------------------------------------------------------------- ir_measures' ERR, Judged, Compat (natively)

def k_ERR(ranking, judgements, measure, level):
    """ERR@k as gdeval computes it (ir_measures' default provider; Chapelle et al. 2009):
    sum_{i<=k} R_i/i prod_{j<i} (1 - R_j), R_i = (2^g_i - 1) / 2^4, g_i the positive grade (else 0)."""
    k = measure.cutoff
    g = np.where(codes(ranking) > 0, codes(ranking), 0.0)
    if len(g) and g.max() > 4:
        raise UnknownMeasure("ERR (gdeval) takes grades 0..4: a larger grade would make a probability exceed 1")
    inside = ranking.pos < (np.inf if k is None else k)
    stop_prob = np.where(inside, (np.exp2(g) - 1.0) / 16.0, 0.0)
    # prod_{j<i} (1 - R_j): a cumulative product along each row of a (rows x depth) matrix, exact
    # per row (a flat exp(cumsum(log)) would mix the rounding of all earlier rows into each one)
    width = int(ranking.pos[inside].max()) + 1 if inside.any() else 1
    keep = np.ones((ranking.nrows, width + 1))
    keep[ranking.row[inside], ranking.pos[inside] + 1] = 1.0 - stop_prob[inside]
    decay = np.where(inside, np.cumprod(keep, axis=1)[ranking.row, np.minimum(ranking.pos, width)], 0.0)
    return ranking.rowsum(stop_prob * decay / (ranking.pos + 1.0))


def k_Judged(ranking, judgements, measure, level):
    """Judged@k = judged documents in the top k / min(k, num_ret) (ir_measures' judged provider)."""
    k = measure.cutoff
    depth = ranking.length if k is None else np.minimum(ranking.length, int(k))
    return safe(ranking.count_within(np.flatnonzero(codes(ranking) != NONPOOL), depth), depth)


def k_Compat(ranking, judgements, measure, level):
    """Compatibility (Clarke, Vtyurina & Smucker 2021 (TOIS)) as ir_measures computes it: RBO(p) of the run
    against the ideal ranking (relevant documents by grade descending, ties by the run's order,
    unretrieved ones last) to depth max(num_ret, R), normalised by RBO(ideal, ideal).  Relevant means
    grade >= -l (ir_measures: grade > 0, the same at the default -l 1 for integer grades).  param = (p, normalize), default (0.95, True).  The overlap at depth i counts the
    documents whose rank in both lists is <= i, so RBO is a per-document sum of a prefix table."""
    # a document at rank i in one list and j in the other adds S[d] - S[max(i, j)], S[i] = sum_{t<i} p^t / (t+1)
    p = measure.get("p")
    code, L = codes(ranking), context(measure, level).rel_level
    jrel = (judgements.grade >= L) & (judgements.grade >= 0)
    n_rel = np.bincount(judgements.row, weights=jrel, minlength=judgements.nq)[: judgements.nq][ranking.base]
    depth = np.maximum(ranking.length, n_rel).astype(np.int64)
    D = int(depth.max()) if len(depth) else 0
    S = np.concatenate(([0.0], np.cumsum(np.power(p, np.arange(D)) / (np.arange(D) + 1.0))))
    # the ideal rank of each retrieved relevant document: the query's relevant documents of higher grade
    # (retrieved or not: composite keys (query, level) searched in the qrels' sorted keys), then the
    # retrieved ones of the same grade ranked above it
    idx = np.flatnonzero(code >= L)
    qrow = ranking.row[idx]
    levels, jlevel = np.unique(judgements.grade[jrel], return_inverse=True)
    n_levels = max(len(levels), 1)
    jkeys = np.sort(judgements.row[jrel].astype(np.int64) * n_levels + jlevel)
    query, level_of = ranking.base[qrow].astype(np.int64), np.searchsorted(levels, code[idx])
    higher = np.searchsorted(jkeys, (query + 1) * n_levels, "left") - np.searchsorted(jkeys, query * n_levels + level_of, "right")
    _, gcode = np.unique(code[idx], return_inverse=True)  # by code: with rel < 0 the -1s (not in the qrels) too
    group = qrow.astype(np.int64) * (int(gcode.max(initial=0)) + 1) + gcode
    order = np.lexsort((ranking.pos[idx], group))
    same = np.empty(len(idx), np.int64)
    same[order] = np.arange(len(idx)) - np.searchsorted(group[order], group[order])
    worse_rank, depth_row = np.maximum(ranking.pos[idx], higher + same), depth[qrow]
    score = np.bincount(qrow, weights=S[depth_row] - S[np.minimum(worse_rank, depth_row)], minlength=ranking.nrows)[: ranking.nrows]
    norm = safe(1.0 - np.power(p, depth), 1.0 - p)  # 0 < p < 1 (check_p)
    score = safe(score, norm)
    if measure.get("normalize"):
        # RBO(ideal, ideal): the document at ideal rank i < R adds S[d] - S[i]
        n_rel_int = n_rel.astype(np.int64)
        best = safe(n_rel_int * S[depth] - np.concatenate(([0.0], np.cumsum(S)))[n_rel_int], norm)
        score = np.where(best > 0, safe(score, best), score)
    return score


# --------------------------------------------------------------------------- records

def reads_judged(code, measure, rel, max_grade):
    """The ``reads`` of bpref and infAP (core.pools.pool_reads): every judged document (code >= 0, or -2),
    never one outside the qrels (-1): their kernels count the judged documents above each relevant one."""
    return np.asarray(code, dtype=np.float64) != -1


def trec_gain(grade, measure, rel, max_grade):
    """Sort key of a pool for IUB/WLB: relevant (1) before judged nonrelevant (0) before documents
    judged with a negative grade (-1, trec_eval's pooled-but-unjudged), which bpref and infAP tell apart."""
    return np.where(grade >= rel, 1.0, np.where(grade >= 0, 0.0, -1.0))


def trec_order(code, measure, rel, max_grade):
    """Classes of bpref and infAP on trec_eval's codes: relevant (1), judged nonrelevant (0), judged with a
    negative grade (-1, pooled but unjudged) and not in the qrels (-2), which the gain alone would merge."""
    return np.where(code >= rel, 1.0, np.where(code >= 0, 0.0, np.where(code == -2.0, -1.0, -2.0)))


def resid_order(code, measure, rel, max_grade):
    """rbp_resid's classes: unjudged (trec_eval code < 0: a negative grade or not in the qrels), 1,
    against judged, 0; the grades of judged documents do not enter the residual."""
    return (code < 0).astype(np.float64)


def compat_order(code, measure, rel, max_grade):
    """Compat's classes: the grade of a relevant document (the ideal ranking orders them by grade),
    as code - rel + 1 >= 1, and 0 for every other document."""
    return np.where(code >= rel, code - rel + 1.0, 0.0)


def reads_relevant(code, measure, rel, max_grade=None):
    """What iprec_at_recall and 11pt_avg read of a ranking: the ranks of its relevant documents
    (code >= rel) and its length."""
    return code >= rel


def _nonneg_gains(measure) -> bool:
    gains = measure.get("gains")
    return gains is None or all(float(value) >= 0 for value in dict(gains).values())


def _gains_of_judged_levels(measure) -> bool:
    """Every gain >= 0, and none given to a level below 0 (a pooled-unjudged or unpooled document):
    the documents of positive gain are then judged ones, at most the query's positive ideal gains."""
    gains = measure.get("gains")
    return _nonneg_gains(measure) and all(float(level) >= 0 or float(value) == 0 for level, value in dict(gains or {}).items())


_SEARCHED = "IUB and WLB are the maximum and minimum over every arrangement of the pool's classes, at most 5040 of them, and withheld beyond"
_WLB_SEARCHED = "WLB is the minimum over every arrangement of the pool's classes, at most 5040 of them, and withheld beyond"


def _sum_positive(judgements: Judgements, level) -> float:
    """trec_eval's num_rel 'all' row under -c: every qrels line with grade > 0, whatever -l (m_num_rel.c)."""
    return float(np.count_nonzero(judgements.grade > 0))


def _check_floats(name, count=None):
    def validate(params, cutoff):
        try:
            vals = floats(params.get(name), None)
        except ValueError:
            return f"{name} must be comma-separated numbers, e.g. {name}='1,-1,0,0'"
        return f"{name} takes {count} numbers" if vals is not None and count is not None and len(vals) != count else None
    return validate


def _check_positive(name):
    def validate(params, cutoff):
        value = params.get(name)
        return None if value is None or value > 0 else f"{name} must be positive"
    return validate


OFFICIAL, SET, ALL_TREC = "official", "set", "all_trec"
_EVERY = (OFFICIAL, SET, ALL_TREC)
_RMULT = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


def _trec(name, base, kernel, *, nick=(ALL_TREC,), trec=None, params=(REL,), cite=None, **family):
    """Register a family trec_eval names ``base`` in the nicknames ``nick`` (``trec``: further
    :class:`TrecName` fields); by default parameter -l only, no cutoff, binary gain, no bounds, relevance
    level -l, cited as trec_eval 10's m_<base>.c; ``family``: further :class:`Family` fields."""
    family = {"cutoff": "none", "gain": binary_gain, "bounds": "none", "level": "rel", **family}
    register(Family(name=name, params=params, kernel=kernel, cite=cite or f"trec_eval 10 (m_{base}.c)",
                    trec=(TrecName(base=base, nick=nick, **(trec or {})),), **family))


def _count(name, base, kernel, *, nick=_EVERY, params=(), **family):
    """A trec_eval count: summed over queries, an integer."""
    _trec(name, base, kernel, nick=nick, params=params, summary="sum", value="int", **family)


# bpref and infAP: the pool's classes and what is read of a ranking are trec_eval's judged ones
_JUDGED = {"gain": trec_gain, "reads": reads_judged, "order": trec_order, "bounds": "exact"}
_MAP = dict(arg="map", param="gains", value_name="gain")  # trec_eval's ndcg.1=2,2=5: a level=gain map
_GAINS = {"trec": _MAP, "gain": graded_gain, "level": "gains", "params": (GAINS_PARAM,)}
_JK = "Jarvelin & Kekalainen 2002; trec_eval 10 (m_{}.c)"

_trec("runid", "runid", k_runid, nick=_EVERY, params=(), formula="the run's tag (text)", level="gains", summary="run",
      value="text", per_query=False)
_count("NumQ", "num_q", k_num_q, level="gains", irm="NumQ", per_query=False)
_count("NumRet", "num_ret", k_num_ret, level="gains", irm="NumRet",
       params=(Param(name="rel", kind="int", default=None, doc="ir_measures' NumRet(rel=k): count only retrieved documents of grade >= k "
                                        "(NumRet(rel=1) = NumRelRet); all retrieved documents when not given"),))
_count("NumRel", "num_rel", k_num_rel, irm="NumRel", complete_summary=_sum_positive)
_count("NumRelRet", "num_rel_ret", counted("all", "1", trec=True), irm="NumRelRet", params=(REL,),
       formula="Relevant documents retrieved.")
_count("NumNonrelJudgedRet", "num_nonrel_judged_ret", k_num_nonrel_judged_ret, nick=(ALL_TREC,))

_trec("GMAP", "gm_map", k_ap, nick=(OFFICIAL, ALL_TREC), bounds="exact", expectation=e_ap, formula="AP per query; 'all' = geometric mean",
      expectation_formula="E[AP] per query (exact); no variants: the 'all' row is a geometric mean (use those of AP)",
      cite="Robertson 2006 (GMAP); trec_eval 10 (m_gm_map.c)", summary="gmean", per_query=False, examples=("GMAP",), holes=holes_ap,
      holes_outside=outside_by_r)

_trec("Bpref", "bpref", k_bpref, nick=(OFFICIAL, ALL_TREC), **_JUDGED, expectation=e_bpref,
      expectation_formula="(P/R)(1 - E[min(X, R)]/min(N, R)), X uniform on 0..Q judged nonrelevant above (exact)",
      cite="Buckley & Voorhees 2004", irm="Bpref", examples=("Bpref",),
      extremes_note="each relevant document scores 1 - min(nonrelevant above, R)/min(N, R): every relevant one first "
                    "is the maximum, every judged nonrelevant one above every relevant one the minimum")
_trec("GMBpref", "gm_bpref", k_bpref, **_JUDGED, expectation=e_bpref, formula="bpref per query; 'all' = geometric mean",
      expectation_formula="E[bpref] per query (exact); no variants: the 'all' row is a geometric mean (use those of Bpref)",
      cite="Buckley & Voorhees 2004; trec_eval 10", summary="gmean", per_query=False, examples=("GMBpref",), extremes_note="as bpref")
_trec("infAP", "infAP", k_infAP, **_JUDGED, expectation=e_infAP,
      expectation_formula="(P/R) E_{s,w}[(1 + (s + w U/W)(E[r|s] + eps)/(s + 2 eps))/(s+w+1)] (exact)",
      cite="Yilmaz & Aslam 2006", irm="infAP", examples=("infAP",), extremes="search",
      extremes_note="no proof that sorting gives infAP's extremes (a document above a relevant one can raise or "
                    "lower its term depending on which unjudged kinds are above it): " + _SEARCHED)

_trec("IPrec", "iprec_at_recall", k_iprec_at_recall, nick=(OFFICIAL, ALL_TREC),
      trec=dict(arg="each", param="recall", defaults=RECALL_POINTS, kind="float", fmt=".2f"),
      params=(Param(name="recall", kind="float", default=0.0, doc="recall level in [0, 1], written IPrec@0.2", always_show=True, at=True),
              REL, JUDGED_ONLY), bounds="montecarlo", irm="IPrec",
      validate=lambda p, c: None if 0 <= p.get("recall", 0) <= 1 else "recall must lie in [0, 1]",
      examples=("IPrec@0.0", "IPrec@0.5", "IPrec@1.0"), reads=reads_relevant)
_trec("Avg11pt", "11pt_avg", k_11pt_avg, trec=dict(arg="raw", param="points"),
      params=(Param(name="points", kind="str", default=None, doc="recall points as text, e.g. '.25,.5,.75' (default 0, .1, ..., 1)"),
              REL), bounds="montecarlo", validate=_check_floats("points"), examples=("Avg11pt", "Avg11pt(points='.25,.5')"),
      reads=reads_relevant)

_trec("relstring", "relstring", k_relstring, trec=dict(arg="one", param="length"),
      params=(Param(name="length", kind="int", default=10, doc="number of ranks shown"),),
      formula=" ".join(relstring.__doc__.split()), level="gains", summary="none", value="text", validate=_check_positive("length"))

_trec("RprecMult", "Rprec_mult", counted("c", "c", trec=True),
      trec=dict(arg="each", param="mult", defaults=_RMULT, kind="float", fmt=".2f"),
      params=(Param(name="mult", kind="float", default=1.0, doc="multiple of R", always_show=True), REL),
      formula="Precision at c = (long)(x R + 0.9) documents; when c > num_ret, num_rel_ret / c (m_Rprec_mult.c).", **BINARY_EXACT,
      expectation=e_Rprec_mult, expectation_formula="0 if c = 0; P/n if c <= n; P/c if c > n (exact)",
      validate=_check_positive("mult"), examples=("RprecMult(mult=0.2)", "RprecMult(mult=1.0)", "RprecMult(mult=3.5)"))

_trec("utility", "utility", k_utility, nick=(SET, ALL_TREC), trec=dict(arg="raw", param="coef"),
      params=(Param(name="coef", kind="str", default=None, doc="p1,p2,p3,p4 as text (default '1,-1,0,0')"), REL),
      validate=_check_floats("coef", 4))

_trec("binG", "binG", k_binG, **BINARY_EXACT, expectation=e_binG,
      expectation_formula="(P/R) (1/(n-P+1)) sum_{x=0}^{n-P} 1/log2(2 + x) (exact)", cite="trec_eval 10 (m_binG.c, experimental)",
      examples=("binG",))
_trec("G", "G", k_G, **_GAINS, bounds="montecarlo", cite="trec_eval 10 (m_G.c, experimental)",
      examples=("G", "G(gains={1:3,2:1})", "G(gains={1:0.5,2:-1})"), reads=reads_gain,
      extremes=lambda m: "ideal" if _nonneg_gains(m) else "search",
      extremes_note="with gains >= 0 the gain-sorted ordering is G's maximum (its log2 arguments are the smallest "
                    "and non-decreasing; rearrangement) but the ascending one is not its minimum (pool 2,1,3,1: "
                    "0.7044 against 0.6891 at 1,1,3,2): " + _WLB_SEARCHED + "; with a negative gain " + _SEARCHED)
_trec("IDCG", "ideal_dcg", k_ideal_dcg, nick=(), **_GAINS, cite=_JK.format("ndcg"), trec_stale=stale_ideal_dcg,
      expectation_formula="none (no random-ranking bounds): the same for every ordering")
_trec("nDCG_rel", "ndcg_rel", k_ndcg_rel, **_GAINS, bounds="exact", expectation=e_ndcg_rel,
      expectation_formula="(1/nrel) [sum_{p<n} (S/n d(p) + (Np-1) S/(n(n-1)) D(p)) / IDCG(min(p+1, nrel)) + (nrel-Np) (S/n) D(n) / IDCG], "
      "S the pool's total gain, Np its documents of positive gain, d(p) = 1/log2(p+2), D(p) = sum_{i<p} d(i) (exact, "
      "linearity) for gains >= 0, none to a level below 0; Monte Carlo otherwise", cite=_JK.format("ndcg_rel"),
      examples=("nDCG_rel", "nDCG_rel(gains={1:3,2:1})", "nDCG_rel(gains={0:1,2:5})", "nDCG_rel(gains={1:0.5,2:-1})"),
      exact_for=_gains_of_judged_levels, reads=reads_gain,
      extremes=lambda m: "ideal" if _nonneg_gains(m) else "search",
      extremes_note="with gains >= 0 the gain-sorted ordering is the maximum (the j-th relevant document's ratio "
                    "is at most the sorted one's) but no proof makes the ascending one the minimum: " + _WLB_SEARCHED)
_trec("Rndcg", "Rndcg", k_Rndcg, **{**_GAINS, "params": (GAINS_PARAM, REL)}, bounds="exact", expectation=e_Rndcg,
      expectation_formula="Rndcg with each DCG@b replaced by mean(g) sum_{i<=min(b,n)} 1/log2(i+1) (exact, linearity)",
      cite=_JK.format("Rndcg"), examples=("Rndcg", "Rndcg(gains={0:1,2:-2})"),
      extremes_note="a mean of DCG@b over fixed depths b: descending (ascending) gains maximise (minimise) every "
                    "DCG@b at once (rearrangement)")

_trec("RelP", "relative_P", counted("k", "min(k,R)", trec=True), trec=dict(arg="each", defaults=TREC_CUTOFFS), cutoff="required",
      formula="relative_P@k = relevant in the top k / min(k, R) (0 when R = 0).", **BINARY_EXACT,
      expectation=expected_count("k", "min(k,R)", trec=True), expectation_formula="(P/n) m / min(k, R) (exact)", examples=("RelP@{k}",))
_trec("Success", "success", counted("k", None, trec=True), trec=dict(arg="each", defaults=(1, 5, 10)), params=(REL, JUDGED_ONLY),
      cutoff="required", formula="success@k = 1 if a relevant document is in the top k, else 0.", **BINARY_EXACT,
      expectation=e_success, expectation_formula="1 - C(n-P, m)/C(n, m), m = min(k, n) (exact)",
      irm="Success", examples=("Success@{k}",), holes=monotone)

_trec("SetP", "set_P", counted("all", "ret", trec=True), nick=(SET, ALL_TREC), params=(REL, JUDGED_ONLY), irm="SetP",
      formula="num_rel_ret / num_ret.")
_trec("SetRelP", "set_relative_P", counted("all", "min(ret,R)", trec=True), nick=(SET, ALL_TREC), params=(),
      formula="num_rel_ret / min(num_ret, R).")
_trec("SetR", "set_recall", counted("all", "R", trec=True), nick=(SET, ALL_TREC), irm="SetR", formula="num_rel_ret / R.")
_trec("SetAP", "set_map", k_set_map, nick=(SET, ALL_TREC), params=(REL, JUDGED_ONLY))
_trec("SetF", "set_F", k_set_F, nick=(SET, ALL_TREC), trec=dict(arg="one", param="beta", kind="float"),
      params=(Param(name="beta", kind="float", default=1.0, doc="weight of recall"), REL, JUDGED_ONLY),
      validate=_check_positive("beta"), irm="SetF")

_trec("yaap", "yaap", k_yaap, nick=(), bounds="montecarlo", cite="Robertson 2012; trec_eval 10 (m_yaap.c)", examples=("yaap",),
      extremes_note="an increasing function of SP (the sum of precisions at the relevant documents): SP's extremes, "
                    "relevant documents first and last")

_RBP_P = Param(name="p", kind="float", default=0.9, doc="persistence", always_show=True)
_trec("RBP_trec", "rbp", k_rbp, **{**_GAINS, "trec": dict(_MAP, keys=("p",), since=10), "params": (_RBP_P, GAINS_PARAM)}, bounds="exact",
      expectation=e_rbp, expectation_formula="mean scaled gain * (1 - p^n) (exact)",
      cite="Moffat & Zobel 2008; trec_eval 10 (m_rbp.c)", validate=check_p,
      examples=("RBP_trec(p=0.9)", "RBP_trec(p=0.5)"), order=rbp_order,
      extremes=lambda m: "sorted" if _nonneg_gains(m) else "search",
      extremes_note="linear in the scaled gains with weights p^(i-1), decreasing: sorted by gain is the maximum and "
                    "minimum (rearrangement); a negative gain makes unlisted and listed levels scale differently: "
                    + _SEARCHED)
_trec("RBP_resid", "rbp_resid", k_rbp_resid, trec=dict(arg="map", param="gains", keys=("p",), since=10), params=(_RBP_P,),
      bounds="exact", expectation=e_rbp_resid, expectation_formula="p^n + (W/n)(1 - p^n) when W > 0 (exact)",
      cite="Moffat & Zobel 2008; trec_eval 10 (m_rbp_resid.c)", level="gains",
      validate=check_p, examples=("RBP_resid(p=0.9)", "RBP_resid(p=0.7)"), order=resid_order, better="lower",
      extremes_note="p^n + (1-p) sum over unjudged d_i of p^(i-1), weights decreasing: unjudged documents first is "
                    "the maximum, last the minimum (rearrangement); judged grades, -1 or 0 alike, do not enter it")
_trec("Unjudged", "unj", k_unj, trec=dict(arg="each", defaults=(5, 10, 20), since=10), params=(), cutoff="required", level="gains",
      better="lower")

# ir_measures' families, natively
register(Family(
    name="ERR", params=(), cutoff="optional", kernel=k_ERR, gain=graded_gain, bounds="montecarlo", cite="Chapelle et al. 2009",
    level="gains", irm="ERR", examples=("ERR", "ERR@{k}"),
    extremes_note="swapping adjacent documents into descending gain raises ERR by (R_a - R_b)(1/i - 1/(i+1)) >= 0: "
                  "sorted descending is the maximum, ascending the minimum"))
register(Family(
    name="Judged", params=(), cutoff="optional", kernel=k_Judged, gain=binary_gain, bounds="none", cite="ir_measures (judged)",
    level="gains", irm="Judged"))
register(Family(
    name="Compat", params=(Param(name="p", kind="float", default=0.95, doc="RBO persistence"), Param(name="normalize", kind="int", default=1, doc="1: divide by RBO(ideal, ideal)",
                                                               choices=(0, 1)), REL), cutoff="none",
    kernel=k_Compat, gain=binary_gain, bounds="montecarlo", cite="Clarke, Vtyurina & Smucker 2021 (TOIS)", level="rel",
    irm="Compat", validate=check_p,
    order=compat_order, extremes="ideal", examples=("Compat", "Compat(p=0.8)", "Compat(normalize=0)"),
    extremes_note="the ideal ranking (relevant documents by grade) agrees with itself at every depth, the most any "
                  "ranking can: it is the maximum; no proof makes any ordering the minimum: " + _WLB_SEARCHED))
