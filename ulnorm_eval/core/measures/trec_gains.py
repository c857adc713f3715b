"""trec_eval's graded families beyond nDCG (ndcg_rel, Rndcg, binG, G, rbp, rbp_resid), their gain
maps and ideal orderings, and the expectations of ndcg_rel (gains >= 0), Rndcg, binG, rbp and rbp_resid;
registered in :mod:`.trec`."""
from __future__ import annotations

import numpy as np

from ..kernels import Judgements, discount, rank_discount, repeated_powers, segment_cumsum, spans
from .common import (codes, context, count_above, disc_prefix, mapped_gains, pool_counts, present_mask, rel_index, rel_total, safe,
                     trec_relevant_count)


# --------------------------------------------------------------------------- gains

def _level_gain(code: np.ndarray, gains: dict | None) -> np.ndarray:
    """trec_eval's get_gain (gain_init.c): a listed level takes its gain, another judged level (>= 0)
    gains its own value, anything else 0 (:func:`~.common.mapped_gains` of the codes)."""
    return mapped_gains(code, gains) if gains else np.where(code >= 0, code, 0.0)


def reads_gain(code, measure, rel, max_grade=None):
    """What G and ndcg_rel read of a ranking (their records' ``reads``): its documents of nonzero
    level gain, their gains and ranks; the others add no term."""
    gains = measure.get("gains")
    return _level_gain(code, dict(gains) if gains else None) != 0


def _glibc_qsort(items: list, compare) -> list:
    """glibc's qsort of a small array (msort.c): a stable top-down merge sort, the first n // 2 items
    then the rest, taking from the first run while ``compare(a, b) <= 0``.  With a comparator that
    is not an order, the result is this algorithm's, which :func:`trec_ideal_rank` needs."""
    if len(items) <= 1:
        return list(items)
    left, right = _glibc_qsort(items[: len(items) // 2], compare), _glibc_qsort(items[len(items) // 2:], compare)
    out = []
    while left and right:
        out.append(left.pop(0) if compare(left[0], right[0]) <= 0 else right.pop(0))
    return out + left + right


def _trec_walk(levels: int, held: frozenset, gains: dict) -> dict:
    """{grade level: its place in trec_eval's ideal ranking} for a query of ``levels`` grade levels
    (0 .. levels - 1) of which ``held`` hold documents: the levels sorted as gain_init.c's qsort does,
    walked from the end as m_ndcg.c does (docs/trec_eval.md, "Gain levels are sorted")."""
    entries = [(int(level), float(gain)) for level, gain in gains.items() if float(level) == int(level)]
    listed = {level for level, _ in entries}
    entries += [(level, float(level)) for level in range(levels) if level not in listed]
    ordered = _glibc_qsort(entries, lambda first, second: int(first[1] - second[1]))
    walk: dict = {}
    if ordered and ordered[-1][1] > 0:
        for level, gain in reversed(ordered):
            if level in held and level < levels:
                if gain <= 0:
                    break
                walk.setdefault(level, len(walk))
    return walk


def trec_ideal_rank(judgements: Judgements, gains: dict) -> np.ndarray:
    """Per judgement of grade >= 0 (in ``judgements``' order), the place of its grade in trec_eval's
    ideal ranking under the gain map ``gains`` (:func:`_trec_walk`), -1 where that ranking never takes
    it; ``--trec-nan``'s ideal, which differs from the sort by gain only for gains less than 1 apart."""
    keep = judgements.grade >= 0
    row, level = judgements.row[keep], np.trunc(judgements.grade[keep]).astype(np.int64)
    rank = np.full(len(row), -1, dtype=np.int64)
    by_query = np.argsort(row, kind="stable")
    bounds = np.searchsorted(row[by_query], np.arange(judgements.nq + 1))
    for query in range(judgements.nq):
        mine = by_query[bounds[query]:bounds[query + 1]]
        if len(mine):
            held = frozenset(np.unique(level[mine]).tolist())
            walk = _trec_walk(max(held) + 1, held, gains)  # a sort of the few grade levels
            rank[mine] = [walk.get(lvl, -1) for lvl in level[mine].tolist()]
    return rank


def ideal_order(judgements: Judgements, key: tuple, gains_of, trec_gains=None):
    """Per query, the judged documents of positive gain sorted by gain, descending: trec_eval's ideal
    ranking (m_ndcg.c stops at the first gain <= 0: a negative gain lowers DCG, never IDCG), which
    ir_measures inherits; with ``trec_gains`` (``--trec-nan`` and a gain map) in trec_eval's order of
    the map's levels (:func:`trec_ideal_rank`).  (row, gain, 0-based position), once per ``key``;
    ``gains_of()``: every judgement's gain."""
    def make():
        g = gains_of()
        place = -g
        if trec_gains:
            place = np.full(len(g), -1.0)
            place[judgements.grade >= 0] = trec_ideal_rank(judgements, trec_gains)
            g = np.where(place >= 0, g, 0.0)
        keep = g > 0
        order = np.lexsort((place[keep], judgements.row[keep]))
        row, g = judgements.row[keep][order], g[keep][order]
        return row, g, np.arange(len(row)) - np.searchsorted(row, np.arange(judgements.nq + 1))[row]
    return judgements.cached(("ideal order",) + key, make)


def ideal_dcg(judgements: Judgements, measure, key: tuple, gains_of, trec_gains=None) -> np.ndarray:
    """IDCG@k per query: sum_i g_i d_i over :func:`ideal_order`, d the measure's discount (1/log2(i+1)
    by default), within its cutoff; the order is shared by every cutoff and discount."""
    def make():
        row, g, pos = ideal_order(judgements, key, gains_of, trec_gains)
        weights = g * rank_discount(measure, pos)
        if measure.cutoff is not None:
            weights = weights * (pos < measure.cutoff)
        return np.bincount(row, weights=weights, minlength=judgements.nq)[: judgements.nq]
    return judgements.cached(("IDCG", str(measure)) + key, make)


def _trec_ideal(judgements, gains, trec: bool = False) -> tuple:
    """:func:`ideal_order`'s key, gains and order for trec_eval's gains (``_level_gain`` of the grades >= 0)."""
    return (("trec", tuple(sorted((gains or {}).items())), bool(trec and gains)),
            lambda: np.where(judgements.grade >= 0, _level_gain(judgements.grade, gains), 0.0), gains if trec else None)


def _idcg(judgements, measure, trec: bool = False):
    return ideal_dcg(judgements, measure, *_trec_ideal(judgements, measure.get("gains"), trec))


def _ideal_prefix(judgements, gains, trec: bool = False, weight=lambda g, pos: g * discount(pos)):
    """Per query the running sum of ``weight(gain, 0-based position)`` (by default the ideal DCG) over
    its positive ideal gains in trec_eval's order: (flat sums, starts, rows, gains)."""
    row, g, pos = ideal_order(judgements, *_trec_ideal(judgements, gains, trec))
    starts = np.searchsorted(row, np.arange(judgements.nq + 1))
    return segment_cumsum(weight(g, pos), starts), starts, row, g


def _nonzero_gains(ranking, gains):
    """The ranked documents of nonzero trec_eval gain: (positions, gains), once per ranking and gain
    map; the others add nothing to any DCG, or to G."""
    def make():
        g = _level_gain(codes(ranking), gains)
        idx = np.flatnonzero(g)
        return idx, g[idx]
    return ranking.memo(("trec nonzero gains", tuple(sorted((gains or {}).items()))), make)


def _gain_terms(ranking, gains):
    """:func:`_nonzero_gains` and their DCG terms gain / log2(rank + 1): (positions, gains, terms)."""
    def make():
        idx, g = _nonzero_gains(ranking, gains)
        return idx, g, g * discount(ranking.pos[idx])
    return ranking.memo(("trec gain terms", tuple(sorted((gains or {}).items()))), make)


def _running_sparse_sum(ranking, idx, weights):
    """The running sum of ``weights`` (one weight per document of ``idx``) within each row, as
    :meth:`Ranking.running` forms it (the zero terms it adds change no bit)."""
    return segment_cumsum(weights, np.searchsorted(idx, ranking.starts))


def _ideal_at(judgements, gains, query, position, trec: bool = False):
    """The ideal DCG to rank min(position, nrel - 1) of ``query`` (0 when it has no positive ideal
    gain), ndcg_rel's denominators, and nrel per query."""
    pidcg, starts, _, _ = _ideal_prefix(judgements, gains, trec)
    npos = np.diff(starts)
    flat = starts[query] + np.minimum(position, np.maximum(npos[query] - 1, 0))
    return np.where(npos[query] > 0, pidcg[np.minimum(flat, max(len(pidcg) - 1, 0))] if len(pidcg) else 0.0, 0.0), npos


def k_ndcg_rel(ranking, judgements, measure, level):
    """nDCG averaged over the relevant (positive-gain) documents: at each retrieved one, DCG so far
    / ideal DCG at the same rank (the ideal stops growing past its last positive gain); each one not
    retrieved contributes the final DCG / the full ideal DCG (m_ndcg_rel.c)."""
    gains = measure.get("gains")
    idx, g, weights = _gain_terms(ranking, gains)
    dcg = _running_sparse_sum(ranking, idx, weights)
    trec = getattr(level, "trec_nan", False)
    ideal, npos = _ideal_at(judgements, gains, ranking.base[ranking.row[idx]], ranking.pos[idx], trec)
    hit = g > 0
    summed = ranking.sum_within(idx[hit], safe(dcg, ideal)[hit])
    full = _idcg(judgements, measure, trec)[ranking.base]
    final = ranking.sum_within(idx, weights)
    nrel = npos[ranking.base].astype(np.float64)
    summed = summed + (nrel - ranking.count_within(idx[hit], np.inf)) * safe(final, full)
    return np.where(summed > 0, safe(summed, nrel), 0.0)


def e_ndcg_rel(random_pool):
    """E[ndcg_rel] for gains >= 0, none given to a level below 0 (``exact_for``), by linearity:
    E[term at rank p] = (S/n disc(p) + (Np - 1) S/(n(n-1)) D(p)) / ideal(p), the nrel - Np positive ideal
    gains never ranked add (nrel - Np) (S/n) D(n) / full; E = E[sum] / nrel (notation: docs/bounds.md)."""
    pool, judgements = random_pool.pool, random_pool.J
    gains = random_pool.measure.get("gains")
    ranking = pool.ordered(np.zeros(len(pool.row)), True)  # any order: only positions and gain sums are read
    g = _level_gain(codes(ranking), gains)
    n = pool.n
    S, n_positive = ranking.rowsum(g), ranking.rowsum(g > 0)
    full = _idcg(judgements, random_pool.measure)
    query, position = ranking.row, ranking.pos
    ideal, nrel = _ideal_at(judgements, gains, query, position)
    D = disc_prefix(int(n.max()) if n.size else 0)
    mean, pair = safe(S, n), safe((n_positive - 1.0) * S, n * (n - 1.0))
    term = safe(mean[query] * discount(position) + pair[query] * D[position], ideal)
    summed = np.bincount(query, weights=term, minlength=judgements.nq)[: judgements.nq]
    summed = summed + (nrel - n_positive) * safe(mean * D[n.astype(np.int64)], full)
    return safe(summed, nrel)


def _boundaries(judgements, gains, trec: bool = False) -> tuple:
    """Rndcg's levels: the ends of the runs of equal positive ideal gain (query, prefix length b,
    ideal DCG at b)."""
    pidcg, starts, irow, ideal_gain = _ideal_prefix(judgements, gains, trec)
    last = np.ones(len(ideal_gain), bool)
    last[:-1] = (irow[1:] != irow[:-1]) | (ideal_gain[1:] != ideal_gain[:-1])
    bidx = np.flatnonzero(last)
    return irow[bidx], bidx - starts[irow[bidx]] + 1, pidcg[bidx]


def _rndcg_terms(rows, depth, dcg, ideal, length, final, full, nrows):
    """Rndcg's sum and number of terms per row (m_Rndcg.c): nDCG@b = ``dcg`` / ``ideal`` at each level
    b (``depth``) of a row, and ``final`` / ``full`` over the whole ranking when its ``length`` extends
    at least two documents past the last level."""
    summed = np.bincount(rows, weights=safe(dcg, ideal), minlength=nrows)[:nrows]
    count = np.bincount(rows, minlength=nrows)[:nrows].astype(np.float64)
    deepest = np.zeros(nrows)
    np.maximum.at(deepest, rows, depth)
    extra = (length >= deepest + 2) & (full > 0) & (count > 0)
    return summed + np.where(extra, safe(final, full), 0.0), count + extra


def k_Rndcg(ranking, judgements, measure, level):
    """nDCG averaged at the R levels: at b = the number of judged documents of gain >= each
    distinct positive gain, nDCG@b; plus nDCG over the whole ranking when it extends at least two
    documents past the last level (m_Rndcg.c's loop structure); 0 when R = 0."""
    gains = measure.get("gains")
    ctx = context(measure, level)
    R = rel_total(ranking, judgements, ctx)
    gidx, _, weights = _gain_terms(ranking, gains)
    dcg_at = _running_sparse_sum(ranking, gidx, weights)
    boundary_query, bpos, ideal_b = _boundaries(judgements, gains, ctx.trec_nan)
    # expand boundaries to ranking rows: every row whose base is the boundary's query (CSR over base)
    by_q = np.argsort(ranking.base, kind="stable")
    q_st = np.searchsorted(ranking.base[by_q], np.arange(judgements.nq + 1))
    rep = (q_st[1:] - q_st[:-1])[boundary_query]
    ideal_at = spans(q_st[boundary_query], rep)[0]
    boundary_row = by_q[ideal_at] if len(ideal_at) else np.zeros(0, np.int64)
    boundary_pos, boundary_ideal = np.repeat(bpos, rep), np.repeat(ideal_b, rep)
    # DCG of the first b documents of the row (all of them when b >= num_ret)
    L = ranking.length[boundary_row]
    take = np.minimum(boundary_pos, L)
    # the DCG to the last document of nonzero gain within the first b (0 when there is none)
    last = np.searchsorted(gidx, ranking.starts[boundary_row] + take) - 1
    inside = (take > 0) & (last >= 0)
    inside[inside] &= ranking.row[gidx[last[inside]]] == boundary_row[inside]
    dcg_b = np.where(inside, dcg_at[np.maximum(last, 0)] if len(dcg_at) else 0.0, 0.0)
    summed, cnt_b = _rndcg_terms(boundary_row, boundary_pos, dcg_b, boundary_ideal, ranking.length,
                                 ranking.sum_within(gidx, weights), _idcg(judgements, measure, ctx.trec_nan)[ranking.base], ranking.nrows)
    if ctx.trec_nan:  # --trec-nan: relevant documents but no positive gain: trec_eval divides 0 by 0
        return np.where(R > 0, np.where(cnt_b > 0, safe(summed, cnt_b), np.nan), 0.0)
    return np.where(R > 0, safe(summed, cnt_b), 0.0)


def e_Rndcg(random_pool):
    """E[Rndcg] under a uniformly random ranking of the pool (exact, by linearity: docs/bounds.md): Rndcg
    with each DCG@b replaced by mean(g) sum_{i <= min(b, n)} 1/log2(i+1); 0 when R = 0."""
    pool, judgements = random_pool.pool, random_pool.J
    gains = random_pool.measure.get("gains")
    ctx = context(random_pool.measure, random_pool.rel)
    ranking = pool.ordered(np.zeros(len(pool.row)), True)  # any order: only the mean gain is read
    n = pool.n
    mean = safe(ranking.rowsum(_level_gain(codes(ranking), gains)), n)
    boundary_query, bpos, ideal_b = _boundaries(judgements, gains)
    D = disc_prefix(int(n.max()) if n.size else 0)
    take = np.minimum(bpos, n[boundary_query]).astype(np.int64)
    summed, count = _rndcg_terms(boundary_query, bpos, mean[boundary_query] * D[take], ideal_b, n, mean * D[n.astype(np.int64)],
                                 _idcg(judgements, random_pool.measure), judgements.nq)
    return np.where(trec_relevant_count(judgements, ctx.rel_level) > 0, safe(summed, count), 0.0)


def k_ideal_dcg(ranking, judgements, measure, level):
    """The ideal DCG of the query (m_ndcg.c's ideal_dcg): its judged documents of positive gain sorted
    by gain, sum_i gain_i / log2(i+1), whatever the run retrieved."""
    return _idcg(judgements, measure, getattr(level, "trec_nan", False))[ranking.base]


def stale_ideal_dcg(values, judgements):
    """trec_eval 10's ideal_dcg (``--trec-nan``): a query judged only with negative grades prints the
    ideal DCG of the last query before it in qid byte order judged with a grade >= 0, 0 when there is
    none (form_res_rels.c's stale level counts: docs/trec_eval.md)."""
    values = np.asarray(values, dtype=np.float64)
    top = np.full(judgements.nq, -np.inf)
    np.maximum.at(top, judgements.row, judgements.grade)
    order = np.argsort(np.asarray(judgements.qids, dtype=object), kind="stable")  # str order = UTF-8 byte order
    fresh = top[order] >= 0
    last = np.maximum.accumulate(np.where(fresh, np.arange(judgements.nq), -1)) if judgements.nq else np.zeros(0, np.int64)
    carried = np.where(last >= 0, values[order][np.maximum(last, 0)], 0.0)
    out = values.copy()
    out[order] = carried
    return out


def k_binG(ranking, judgements, measure, level):
    """binG = (1/R) sum over relevant retrieved d of 1 / log2(2 + documents above d not relevant)."""
    ctx = context(measure, level)
    idx = rel_index(ranking, ctx)  # terms only at the relevant documents, summed in rank order
    above_non = ranking.pos[idx] - count_above(ranking, idx, idx)
    summed = ranking.sum_within(idx, 1.0 / np.log2(2.0 + above_non))
    return safe(summed, rel_total(ranking, judgements, ctx))


def _ideal_cost(judgements, gains, trec: bool = False):
    """Per query the running sum of max(ideal gain at rank i, 1) over its positive ideal gains (flat,
    with each query's start and count) and their total: the ranking-independent part of G."""
    def make():
        C, starts, rows, igk = _ideal_prefix(judgements, gains, trec, lambda g, pos: np.maximum(g, 1.0))
        return C, starts, np.diff(starts), np.bincount(rows, weights=igk, minlength=judgements.nq)[: judgements.nq]
    return judgements.cached(("trec G cost", tuple(sorted((gains or {}).items())), trec), make)


def k_G(ranking, judgements, measure, level):
    """G (m_G.c): sum_i gain(d_i) / log2(2 + C_i - S_i), S_i the run's gain to rank i, C_i the
    running sum of max(ideal gain at rank i, 1), divided by the total positive ideal gain."""
    gains = measure.get("gains")
    idx, g = _nonzero_gains(ranking, gains)  # only they add a term, and S_i runs over them alone
    C, starts, n_pos, total = _ideal_cost(judgements, gains, getattr(level, "trec_nan", False))
    query, position = ranking.base[ranking.row[idx]], ranking.pos[idx]
    n_positive = n_pos[query]
    # past the query's positive ideal gains (p >= n) the cost is the last one + 1 a rank; within
    # them, read from the ideal
    last = np.where(n_pos > 0, C[np.maximum(starts[:-1] + n_pos - 1, 0)] if len(C) else 0.0, 0.0)
    cost = last[query] + (position - n_positive + 1)
    inside = np.flatnonzero(position < n_positive)
    cost[inside] = C[starts[query[inside]] + position[inside]]
    S = _running_sparse_sum(ranking, idx, g)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = g / np.log2(2.0 + cost - S)
    return safe(ranking.sum_within(idx, term), total[ranking.base])


def _rbp_gains(ranking, judgements, gains):
    """Each ranked document's rbp gain scaled to [0, 1] over the query's gain levels (see module doc)."""
    code = codes(ranking)
    scaled = _scaled(judgements, gains, ranking.base[ranking.row], _level_gain(code, gains))
    # a document with no known level keeps get_gain's 0 (m_rbp.c rescales only the level table)
    known = (code >= 0) | np.isin(code, [float(level) for level in (gains or {})])
    return np.where(known, scaled, 0.0)


def _scaled(judgements, gains, query, g):
    """m_rbp.c's scaling of the gains ``g`` of documents of ``query``: kept when the query's levels'
    gains lie in [0, 1], else (g - min) / (max - min) over them (:func:`_rbp_levels`)."""
    lv_min, lv_max = _rbp_levels(judgements, gains)
    low, high = lv_min[query], lv_max[query]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((low < 0) | (high > 1), (g - low) / (high - low), g)


def _rbp_levels(judgements, gains):
    """Per query, the smallest and largest gain of its levels (m_rbp.c's scaling), once per query set
    and gain map: they depend on the qrels alone.  A query's levels: 0 .. its largest judged grade
    (gain = level unless listed), and every listed level."""
    def make():
        top = np.full(judgements.nq, -1.0)
        judged = judgements.grade >= 0
        np.maximum.at(top, judgements.row[judged], judgements.grade[judged])
        if not gains:
            return np.where(top >= 0, 0.0, np.inf), np.where(top >= 0, top, -np.inf)
        listed = {float(level): float(value) for level, value in gains.items()}
        lv_min, lv_max = np.full(judgements.nq, np.inf), np.full(judgements.nq, -np.inf)
        for level in range(int(top.max()) + 1 if len(top) else 0):
            value = listed.get(float(level), float(level))
            lv_min = np.where(top >= level, np.minimum(lv_min, value), lv_min)
            lv_max = np.where(top >= level, np.maximum(lv_max, value), lv_max)
        for value in listed.values():  # a listed level is a level of every query
            lv_min, lv_max = np.minimum(lv_min, value), np.maximum(lv_max, value)
        return lv_min, lv_max
    return judgements.cached(("rbp levels", tuple(sorted((gains or {}).items()))), make)


def rbp_order(code, measure, rel, max_grade):
    """rbp's classes of pool documents: the level gain (gain_init.c) of a known level (judged grade
    >= 0, or a listed one), which m_rbp.c's scaling keeps in order; -1 for any other document, which
    gains 0 whatever the scaling (below every known level when all gains are >= 0)."""
    _, gains = rbp_settings(measure)
    known = (code >= 0) | np.isin(code, [float(level) for level in (gains or {})])
    return np.where(known, _level_gain(code, gains), -1.0)


def rbp_settings(measure):
    """rbp's persistence ``p`` and its ``level=gain`` pairs (None: the grades), as ``rbp.p=0.8,1=2`` gives them."""
    gains = measure.get("gains")
    return float(measure.get("p")), (dict(gains) if gains else None)


def k_rbp(ranking, judgements, measure, level):
    """RBP(p) = (1-p) sum_i p^(i-1) gain(d_i), gains scaled to [0, 1] when they exceed it (Moffat &
    Zobel 2008; m_rbp.c, with its uninitialised bounds set)."""
    p, gains = rbp_settings(measure)
    powers = repeated_powers(p, int(ranking.pos.max()) if ranking.pos.size else 0)  # trec_eval's cur_p, bit for bit
    if gains:
        return (1.0 - p) * ranking.rowsum(_rbp_gains(ranking, judgements, gains) * powers[ranking.pos.astype(np.int64)])
    # without a gain map every level is >= 0, so a scaled gain g / max is nonzero only where g is: the
    # terms at those documents alone, in rank order (the 0.0 terms left out change no row sum)
    idx, g = _nonzero_gains(ranking, None)
    scaled = _scaled(judgements, None, ranking.base[ranking.row[idx]], g)
    return (1.0 - p) * ranking.sum_within(idx, scaled * powers[ranking.pos[idx].astype(np.int64)])


def k_rbp_resid(ranking, judgements, measure, level):
    """RBP residual: p^num_ret + (1-p) sum over unjudged d_i of p^(i-1), when any retrieved document
    is unjudged, else 0 (Moffat & Zobel 2008; m_rbp_resid.c)."""
    p, _ = rbp_settings(measure)
    ctx = context(measure, level)
    unj = codes(ranking) < 0
    # trec_eval's cur_p (repeated multiplication, not pow: the last bit shows in the 4th decimal of a
    # mean), summed in rank order (bincount adds in order), p^num_ret its value after the last rank
    powers = repeated_powers(p, int(ranking.length.max()) if ranking.length.size else 0)
    summed = ranking.rowsum(np.where(unj, powers[ranking.pos.astype(np.int64)], 0.0))
    values = powers[ranking.length.astype(np.int64)] + (1.0 - p) * summed
    present = present_mask(ranking, ctx)
    out = np.where((ranking.rowsum(unj) > 0) & present, values, 0.0)
    named = bool(getattr(measure, "typed", "")) or p != 0.9  # rbp_resid.p=0.5, or rbp_resid.p=0.9 as typed
    if ctx.trec_nan and named and not ctx.judged_only:
        # --trec-nan: trec_eval clears only a measure named exactly 'rbp_resid' for -c's placeholder ranking
        # (one document not in the qrels: unjudged at rank 1, so cur_p = p and the sum 1); none after -J
        out = np.where(present, out, p + (1.0 - p) * 1.0)
    return out


def e_binG(random_pool):
    """E[binG] = (P/R) (1/(n-P+1)) sum_{x=0}^{n-P} 1/log2(2 + x) (exact: docs/bounds.md)."""
    n, P, Q, U, V, R, N = pool_counts(random_pool)
    K = (n - P).astype(np.int64)
    H = disc_prefix(int(K.max()) + 1 if K.size else 0)  # H[x] = sum_{y<x} 1/log2(2 + y)
    mean = H[K + 1] / (K + 1.0)
    return safe(P * mean, R)


def e_rbp(random_pool):
    """Mean scaled gain * (1 - p^n) (Moffat & Zobel 2008), by linearity."""
    pool, judgements = random_pool.pool, random_pool.J
    p, gains = rbp_settings(random_pool.measure)
    ranking = pool.ordered(np.zeros(len(pool.row)), True)  # any order: only the gains' sum is read
    return safe(ranking.rowsum(_rbp_gains(ranking, judgements, gains)), pool.n) * (1.0 - np.power(p, pool.n))


def e_rbp_resid(random_pool):
    """p^n + (W/n)(1 - p^n) when W = U + V > 0, else 0."""
    p, gains = rbp_settings(random_pool.measure)
    n, P, Q, U, V, R, N = pool_counts(random_pool)
    W = U + V
    p_power_n = np.power(p, n)
    return np.where(W > 0, p_power_n + safe(W, n) * (1.0 - p_power_n), 0.0)
