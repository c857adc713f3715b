"""trec_eval's counting and set families (num_q, num_ret, num_rel, num_rel_ret,
num_nonrel_judged_ret; set_P, set_recall, set_relative_P, set_map, set_F; utility), and relstring and
runid, as kernels ``k_x(ranking, judgements, param, ctx)``; registered in :mod:`.trec`."""
from __future__ import annotations

from ..lazy import np

from ..kernels import Ranking
from .common import safe
from .trec_view import codes, NONPOOL, present_mask, rel_mask, rel_total


# --------------------------------------------------------------------------- counts

def k_num_q(rk, J, param, ctx):
    """1 per evaluated query (trec_eval prints only the sum: the number of queries averaged over)."""
    return np.ones(rk.nrows)


def k_num_ret(rk, J, rel, ctx):
    """Documents retrieved (after -M and -J); with ir_measures' rel=k only those of grade >= k."""
    if rel is None:
        return rk.length.astype(np.float64)
    return rk.rowsum(codes(rk) >= float(rel))


def k_num_rel(rk, J, param, ctx):
    """R: judged documents with grade >= -l."""
    return rel_total(rk, J, ctx).astype(np.float64)


def k_num_rel_ret(rk, J, param, ctx):
    """Relevant documents retrieved."""
    return rk.rowsum(rel_mask(rk, ctx))


def k_num_nonrel_judged_ret(rk, J, param, ctx):
    """Judged nonrelevant documents retrieved: num_ret - unjudged - num_rel_ret."""
    c = codes(rk)
    return rk.rowsum((c >= 0) & (c < ctx.rel_level))


# --------------------------------------------------------------------------- set measures

def _set_counts(rk, J, ctx):
    return rk.length.astype(np.float64), rk.rowsum(rel_mask(rk, ctx)), rel_total(rk, J, ctx).astype(np.float64)


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
    if ctx.trec_nan and coef is not None:
        # --trec-nan: trec_eval zeroes only a measure named exactly 'utility' for -c's placeholder
        # ranking (one document not in the qrels; none after -J), so utility.p1,p2,p3,p4 scores it
        ph = 0.0 if ctx.judged_only else 1.0
        leak = p2 * ph + p3 * R + p4 * (ctx.num_docs - ph - R)
        return np.where(present_mask(rk, ctx), v, leak)
    return np.where(present_mask(rk, ctx), v, 0.0)


# trec_eval base name -> exact expectation(pool, J, param, ctx) -> values[queries]


# --------------------------------------------------------------------------- relstring and runid (text)

def relstring(rk: Ranking, length: int = 10) -> list[str]:
    """Per row the codes of the first ``length`` documents as text: a digit for grade 0-9, '>' above,
    '-' not in the qrels, '.' pooled but unjudged (m_relstring.c)."""
    keep = rk.pos < length  # only the first ``length`` codes per row become text
    c, rows = codes(rk)[keep], rk.row[keep]
    # one byte per document from a lookup table ('0'-'9', '>' above 9, '-' not in the qrels, '.' judged
    # negative); codes are -2, -1 or a grade >= 0, whose whole part m_relstring.c prints
    table = np.frombuffer(b".-0123456789>", dtype="S1")
    chars = table[np.where(c > 9, 12, c + 2).astype(np.intp)].tobytes().decode("ascii")
    out = [""] * rk.nrows
    bounds = np.searchsorted(rows, np.arange(rk.nrows + 1))
    for r in np.flatnonzero(np.diff(bounds)):  # one slice per query, not per document
        out[r] = chars[bounds[r]:bounds[r + 1]]
    return out


def k_relstring(rk, J, length, ctx):
    """The relevance codes of the top ``length`` documents, quoted as trec_eval prints them."""
    out = np.array([f"'{s}'" for s in relstring(rk, 10 if length is None else int(length))], dtype=object)
    if ctx.trec_nan and length is not None and not ctx.judged_only:
        # --trec-nan: trec_eval clears only a measure named exactly 'relstring' for -c's placeholder
        # ranking, so relstring.N shows the placeholder: one document not in the qrels, '-'
        out = np.where(present_mask(rk, ctx), out, "'-'").astype(object)
    return out


def k_runid(rk, J, param, ctx):
    """No per-query value: trec_eval prints the run's tag on the 'all' row only."""
    return np.full(rk.nrows, "", dtype=object)
