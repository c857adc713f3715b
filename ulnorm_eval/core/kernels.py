"""Vectorised measure kernels over ranked grade lists.

A :class:`Ranking` holds many ranked lists at once ("rows" = queries, or query x permutation for
Monte Carlo) as flat arrays sorted by row then rank.  Every kernel is a pure function
``kernel(ranking, judgements, measure, rel_level) -> values[rows]`` with no Python loop over
documents: per-row sums are ``np.bincount`` over the row index.

Conventions (trec_eval's): an unjudged document has grade 0; a negative grade is judged with gain
0; relevance at level ``l`` means ``grade >= l``; normalisers (R, the ideal DCG) always come from
the qrels, never from the ranking being scored, so the same kernel scores a run, an ideal or worst
ordering of a pool, or a random permutation.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .registry import Measure

__all__ = ["Ranking", "Judgements", "compute", "gains_for", "discount"]


@dataclass
class Ranking:
    """Flat ranked lists: ``row[i]`` (non-decreasing), ``grade[i]`` in rank order within a row.

    ``base[r]`` maps row r to its query index in :class:`Judgements` (rows are queries for a run;
    query x repetition for permutations).
    """

    row: np.ndarray
    grade: np.ndarray
    nrows: int
    base: np.ndarray
    judged: np.ndarray | None = None

    @cached_property
    def starts(self) -> np.ndarray:
        return np.searchsorted(self.row, np.arange(self.nrows + 1))

    @cached_property
    def pos(self) -> np.ndarray:
        """0-based rank of each element within its row."""
        return np.arange(len(self.row)) - self.starts[self.row]

    @cached_property
    def length(self) -> np.ndarray:
        return np.diff(self.starts)

    def rowsum(self, weights: np.ndarray) -> np.ndarray:
        return np.bincount(self.row, weights=weights, minlength=self.nrows)[: self.nrows]

    @classmethod
    def from_sorted(cls, row, grade, nrows, judged=None):
        return cls(np.asarray(row, dtype=np.int64), np.asarray(grade, dtype=np.float64), nrows,
                   np.arange(nrows), judged)


@dataclass
class Judgements:
    """The qrels of the evaluated query set, grouped by query (grade descending within a query)."""

    qids: list
    row: np.ndarray
    grade: np.ndarray
    max_grade: float
    _cache: dict = field(default_factory=dict)

    @property
    def nq(self) -> int:
        return len(self.qids)

    def ranking(self) -> Ranking:
        return Ranking.from_sorted(self.row, self.grade, self.nq)

    def n_relevant(self, rel: float) -> np.ndarray:
        """R: relevant judged documents per query at level ``rel``."""
        key = ("R", rel)
        if key not in self._cache:
            self._cache[key] = np.bincount(self.row, weights=(self.grade >= rel), minlength=self.nq)
        return self._cache[key]

    def ideal_dcg(self, m: Measure, rel: float) -> np.ndarray:
        """IDCG@k per query from all judged documents sorted by gain (trec_eval's ideal)."""
        key = ("IDCG", str(m))
        if key not in self._cache:
            g = gains_for(self.grade, m, rel, self.max_grade)
            order = np.lexsort((-g, self.row))
            ideal = Ranking.from_sorted(self.row[order], self.grade[order], self.nq)
            self._cache[key] = _dcg(ideal, m, rel, self.max_grade)
        return self._cache[key]


def gains_for(grade: np.ndarray, m: Measure, rel: float, max_grade: float) -> np.ndarray:
    """Gain of each document under measure ``m`` (see the module docstring for conventions)."""
    gains = m.get("gains")
    if gains is not None:
        # listed grades take their gain; the rest keep gain = grade (0 if negative), as trec_eval's
        # ndcg.L=G (gain_init.c) and ir_measures' nDCG(gains=...) both do
        keys = np.asarray(sorted(gains), dtype=np.float64)
        vals = np.asarray([gains[k] for k in sorted(gains)], dtype=np.float64)
        idx = np.searchsorted(keys, grade)
        idx = np.clip(idx, 0, len(keys) - 1)
        return np.where(keys[idx] == grade, vals[idx], np.maximum(grade, 0.0))
    if m.family == "RBP":
        r = m.get("rel")
        if r is not None:
            return (grade >= r).astype(np.float64)
        return np.maximum(grade, 0.0) / max_grade if max_grade > 0 else np.zeros_like(grade)
    if m.family in ("nDCG", "DCG"):
        g = np.maximum(grade, 0.0)
        return np.exp2(g) - 1.0 if m.get("dcg") == "exp-log2" else g
    return (grade >= rel).astype(np.float64)


def discount(pos: np.ndarray) -> np.ndarray:
    """1/log2(i+1) for 1-based rank i (pos is 0-based)."""
    return 1.0 / np.log2(pos + 2.0)


def _cut(rk: Ranking, m: Measure) -> np.ndarray | None:
    return None if m.cutoff is None else rk.pos < m.cutoff


def _gains(rk: Ranking, m: Measure, rel: float, max_grade: float) -> np.ndarray:
    """gains_for the ranked documents; an unjudged document (grade 0 by convention) gains nothing
    even when grade 0 is given a gain or counts as relevant (rel <= 0), as in trec_eval."""
    g = gains_for(rk.grade, m, rel, max_grade)
    if rk.judged is not None:
        g = np.where(rk.judged, g, 0.0)
    return g


def _relevant(rk: Ranking, rel: float) -> np.ndarray:
    """grade >= rel; never for unjudged documents (trec_eval -l 0 counts judged grade-0 ones only)."""
    hit = rk.grade >= rel
    if rel <= 0 and rk.judged is not None:
        hit &= rk.judged
    return hit


def _dcg(rk: Ranking, m: Measure, rel: float, max_grade: float) -> np.ndarray:
    w = _gains(rk, m, rel, max_grade) * discount(rk.pos)
    cut = _cut(rk, m)
    if cut is not None:
        w = w * cut
    return rk.rowsum(w)


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros_like(num, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _rel_level(m: Measure, rel_level: float) -> float:
    r = m.get("rel")
    return rel_level if r is None else r


def _sum_precision(rk: Ranking, m: Measure, rel: float) -> np.ndarray:
    relv = _relevant(rk, rel)
    csum = np.concatenate(([0], np.cumsum(relv)))
    within = csum[1:] - csum[rk.starts[rk.row]]  # relevant at or above each position
    w = np.where(relv, within / (rk.pos + 1.0), 0.0)
    cut = _cut(rk, m)
    if cut is not None:
        w = w * cut
    return rk.rowsum(w)


def k_dcg(rk, J, m, rel_level):
    """DCG@k = sum_{i<=k} gain(d_i) / log2(i+1)."""
    return _dcg(rk, m, _rel_level(m, rel_level), J.max_grade)


def k_ndcg(rk, J, m, rel_level):
    """nDCG@k = DCG@k / IDCG@k, the ideal from the query's judged documents; 0 when IDCG = 0."""
    rel = _rel_level(m, rel_level)
    return _safe_div(_dcg(rk, m, rel, J.max_grade), J.ideal_dcg(m, rel)[rk.base])


def k_sp(rk, J, m, rel_level):
    """SP@k = sum_{i<=k, d_i relevant} P@i (seed 000 eq. 4)."""
    return _sum_precision(rk, m, _rel_level(m, rel_level))


def k_ap(rk, J, m, rel_level):
    """AP@k = SP@k / R with R all relevant judged documents (trec_eval map, map_cut); 0 when R = 0."""
    rel = _rel_level(m, rel_level)
    return _safe_div(_sum_precision(rk, m, rel), J.n_relevant(rel)[rk.base])


def k_p(rk, J, m, rel_level):
    """P@k = |relevant in top k| / k (k, not the number retrieved, as trec_eval)."""
    rel = _rel_level(m, rel_level)
    return rk.rowsum(_relevant(rk, rel) & (rk.pos < m.cutoff)) / m.cutoff


def k_r(rk, J, m, rel_level):
    """R@k = |relevant in top k| / R; 0 when R = 0."""
    rel = _rel_level(m, rel_level)
    return _safe_div(rk.rowsum(_relevant(rk, rel) & (rk.pos < m.cutoff)), J.n_relevant(rel)[rk.base])


def k_rprec(rk, J, m, rel_level):
    """Rprec = |relevant in top R| / R; 0 when R = 0."""
    rel = _rel_level(m, rel_level)
    R = J.n_relevant(rel)[rk.base]
    return _safe_div(rk.rowsum(_relevant(rk, rel) & (rk.pos < R[rk.row])), R)


def k_rr(rk, J, m, rel_level):
    """RR@k = 1 / rank of the first relevant document within the top k (0 if none)."""
    rel = _rel_level(m, rel_level)
    hit = _relevant(rk, rel)
    cut = _cut(rk, m)
    if cut is not None:
        hit &= cut
    idx = np.flatnonzero(hit)
    out = np.zeros(rk.nrows)
    if len(idx):
        rows, first = np.unique(rk.row[idx], return_index=True)
        out[rows] = 1.0 / (rk.pos[idx[first]] + 1.0)
    return out


def k_rbp(rk, J, m, rel_level):
    """RBP(p)@k = (1-p) sum_{i<=k} p^(i-1) gain(d_i)."""
    p = m.get("p")
    w = _gains(rk, m, _rel_level(m, rel_level), J.max_grade) * np.power(p, rk.pos)
    cut = _cut(rk, m)
    if cut is not None:
        w = w * cut
    return (1.0 - p) * rk.rowsum(w)


KERNELS = {"nDCG": k_ndcg, "DCG": k_dcg, "AP": k_ap, "SP": k_sp, "P": k_p, "R": k_r,
           "RR": k_rr, "Rprec": k_rprec, "RBP": k_rbp}


def compute(rk: Ranking, J: Judgements, m: Measure, rel_level: float = 1) -> np.ndarray:
    """Per-row values of a native measure."""
    return KERNELS[m.family](rk, J, m, rel_level)
