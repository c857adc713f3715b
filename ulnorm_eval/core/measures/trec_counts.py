"""trec_eval's counting and set families (num_q, num_ret, num_rel, num_rel_ret,
num_nonrel_judged_ret; set_P, set_recall, set_relative_P, set_map, set_F; utility), and relstring and
runid, as record kernels ``k_x(ranking, judgements, measure, level)``; registered in :mod:`.trec`."""
from __future__ import annotations

import numpy as np

from ..kernels import Ranking
from .common import safe
from .trec_view import codes, context, floats, present_mask, rel_mask, rel_total


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


def k_num_rel_ret(ranking, judgements, measure, level):
    """Relevant documents retrieved."""
    return ranking.rowsum(rel_mask(ranking, context(measure, level)))


def k_num_nonrel_judged_ret(ranking, judgements, measure, level):
    """Judged nonrelevant documents retrieved: num_ret - unjudged - num_rel_ret."""
    code = codes(ranking)
    return ranking.rowsum((code >= 0) & (code < context(measure, level).rel_level))


# --------------------------------------------------------------------------- set measures

def _set_counts(ranking, judgements, measure, level):
    """(num_ret, num_rel_ret, R) per row."""
    ctx = context(measure, level)
    return ranking.length.astype(np.float64), ranking.rowsum(rel_mask(ranking, ctx)), rel_total(ranking, judgements, ctx).astype(np.float64)


def k_set_P(ranking, judgements, measure, level):
    """num_rel_ret / num_ret."""
    ret, rel_ret, R = _set_counts(ranking, judgements, measure, level)
    return safe(rel_ret, ret)


def k_set_recall(ranking, judgements, measure, level):
    """num_rel_ret / R."""
    ret, rel_ret, R = _set_counts(ranking, judgements, measure, level)
    return safe(rel_ret, R)


def k_set_relative_P(ranking, judgements, measure, level):
    """num_rel_ret / min(num_ret, R)."""
    ret, rel_ret, R = _set_counts(ranking, judgements, measure, level)
    return np.where((ret > 0) & (R > 0), safe(rel_ret, np.minimum(ret, R)), 0.0)


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
