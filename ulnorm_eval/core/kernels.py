"""What measure kernels read: a :class:`Ranking`, many ranked lists ("rows": queries, or query x
permutation) as flat arrays sorted by row then rank, and :class:`Judgements`.  trec_eval's conventions:
unjudged = grade 0, a negative grade gains 0, relevant = grade >= l, normalisers from the qrels only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

__all__ = ["Ranking", "segment_cumsum", "Judgements", "discount", "rank_discount", "power_at", "repeated_powers", "relevant", "within_cutoff", "judged_only",
           "rel_of", "Level", "spans", "row_counts"]


@dataclass
class Ranking:
    """Flat ranked lists: ``row[i]`` (non-decreasing), ``grade[i]`` in rank order within a row; ``base[r]``
    maps row r to its query in :class:`Judgements`.  A *placed* ranking holds only some documents, with
    their 0-based ranks ``at`` and each row's length ``size`` (permutations.placed; ``Family.reads``)."""

    row: np.ndarray
    grade: np.ndarray
    nrows: int
    base: np.ndarray
    judged: np.ndarray | None = None
    at: np.ndarray | None = None
    size: np.ndarray | None = None

    @cached_property
    def starts(self) -> np.ndarray:
        return np.searchsorted(self.row, np.arange(self.nrows + 1))

    @cached_property
    def pos(self) -> np.ndarray:
        """0-based rank of each element within its row."""
        if self.at is not None:
            return self.at
        return np.arange(len(self.row)) - self.starts[self.row]

    @cached_property
    def length(self) -> np.ndarray:
        """Documents ranked per row."""
        if self.size is not None:
            return self.size
        return np.diff(self.starts)

    def rowsum(self, weights: np.ndarray) -> np.ndarray:
        """Per row, the sum of ``weights`` (one per element) added in rank order from 0.0 (np.bincount's
        sequential sum: the rounding every printed value depends on); a boolean mask is counted."""
        if getattr(weights, "dtype", None) == bool and len(weights) == len(self.row) > 0 and self.row_sorted:
            return row_counts(weights, self.starts)
        return np.bincount(self.row, weights=weights, minlength=self.nrows)[: self.nrows]

    @cached_property
    def row_sorted(self) -> bool:
        """Whether ``row`` is non-decreasing (the class's invariant, checked once: the counts of
        :meth:`rowsum` read each row's elements as the span ``starts[r]:starts[r + 1]``)."""
        return bool((self.row[1:] >= self.row[:-1]).all())

    def running(self, values) -> np.ndarray:
        """Inclusive running sum of ``values`` within each row (:func:`segment_cumsum`)."""
        return segment_cumsum(values, self.starts)

    def memo(self, key, make):
        """``make()`` computed once per ranking and ``key`` (a ranking's arrays are never modified in place):
        trec_eval's codes, the relevant documents at a level, a measure's gains."""
        cache = self.__dict__.setdefault("_memo", {})
        if key not in cache:
            cache[key] = make()
        return cache[key]

    def relevant_index(self, rel: float) -> np.ndarray:
        """Positions of the relevant documents (:func:`relevant`), increasing; once per level."""
        return self.memo(("relevant", float(rel)), lambda: np.flatnonzero(relevant(self, rel)))

    def count_within(self, idx: np.ndarray, k) -> np.ndarray:
        """Per row, how many of the documents at positions ``idx`` rank within the top ``k`` (k a
        scalar, or one per row): the work is proportional to ``len(idx)``, not to the ranking."""
        rows, positions = self.row[idx], self.pos[idx]
        keep = positions < (k if np.ndim(k) == 0 else np.asarray(k)[rows])
        return np.bincount(rows[keep], minlength=self.nrows)[: self.nrows].astype(np.float64)

    def sum_within(self, idx: np.ndarray, weights: np.ndarray, k=None) -> np.ndarray:
        """Per row, the sum of ``weights`` (one per position of ``idx``) over the documents within the top
        ``k`` (all without k), in rank order: :meth:`rowsum`'s bits."""
        rows = self.row[idx]
        if k is not None:
            keep = self.pos[idx] < (k if np.ndim(k) == 0 else np.asarray(k)[rows])
            rows, weights = rows[keep], weights[keep]
        return np.bincount(rows, weights=weights, minlength=self.nrows)[: self.nrows]


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

    def n_relevant(self, rel: float) -> np.ndarray:
        """R: relevant judged documents per query at level ``rel``."""
        return self.cached(("R", rel), lambda: np.bincount(self.row, weights=(self.grade >= rel), minlength=self.nq))

    def cached(self, key, make):
        """A per-query array computed once for this query set (ideal DCG, ...): ``make()`` on a miss."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]


def row_counts(mask: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per span ``starts[r]:starts[r + 1]``, how many elements of a boolean ``mask`` are True, as
    float64 (np.bincount's values without its per-element float additions)."""
    nrows = max(len(starts) - 1, 0)
    out = np.zeros(nrows)
    if not nrows or not starts[-1]:
        return out
    mask = np.asarray(mask, dtype=bool)[: starts[-1]]  # reduceat's last span runs to the end
    # reduceat sums span i from index i to index i + 1; an empty span would yield its first element,
    # so the spans summed are the non-empty ones (the empty ones between them start where they end)
    full = np.flatnonzero(starts[1:] > starts[:-1])
    out[full] = np.add.reduceat(mask, starts[full], dtype=np.int64)
    return out


def segment_cumsum(values, starts) -> np.ndarray:
    """Inclusive running sum of ``values`` within each segment [starts[i], starts[i + 1]): np.cumsum of
    the segment alone, whose bits do not depend on the segments beside it."""
    out = np.array(values, dtype=np.float64)
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.diff(starts)
    if not len(out) or not len(lengths):
        return out
    width = np.frexp(np.maximum(lengths - 1, 0))[1]  # 2^width >= length
    for b in np.flatnonzero(np.bincount(width[lengths > 1])):  # (np.unique would import numpy.ma)
        seg = np.flatnonzero((width == b) & (lengths > 1))
        at = starts[:-1][seg, None] + np.arange(1 << int(b))
        inside = at < starts[1:][seg, None]
        out[at[inside]] = np.cumsum(np.where(inside, out[np.where(inside, at, 0)], 0.0), axis=1)[inside]
    return out


def spans(start: np.ndarray, size: np.ndarray) -> tuple:
    """(position, offset within its span) of every element of the spans ``[start, start + size)``,
    span after span: the flat index of a CSR selection without a Python loop."""
    off = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
    return np.repeat(start, size) + off, off


def discount(pos: np.ndarray) -> np.ndarray:
    """1/log2(i+1) for 1-based rank i (pos is 0-based)."""
    return 1.0 / np.log2(pos + 2.0)


def rank_discount(measure, pos: np.ndarray) -> np.ndarray:
    """The discount of 0-based ranks ``pos`` under ``measure``'s ``discount``: 1/log2(i+1) (Järvelin &
    Kekäläinen 2002; the default), 1/i ('zipf'), (k+1-i)/k ('linear'), or a vector d_i, 0 past its end
    (Kanoulas & Aslam 2009 §2.3)."""
    d = measure.get("discount")
    if d is None or d == "log2":
        return discount(pos)
    if d == "zipf":
        return 1.0 / (pos + 1.0)
    if d == "linear":
        k = float(measure.cutoff)
        return np.maximum(k - pos, 0.0) / k
    factors = np.asarray(d, dtype=np.float64)
    return np.where(pos < len(factors), factors[np.minimum(pos, len(factors) - 1)], 0.0)


def power_at(p: float, pos: np.ndarray) -> np.ndarray:
    """p**pos for 0-based ranks (RBP's weights p^(i-1), Moffat & Zobel 2008): p**0 .. p**max(pos)
    computed once and gathered, np.power's values element by element (tests/core/test_sparse_kernels.py)."""
    pos = np.asarray(pos)
    if pos.size == 0 or pos.dtype.kind not in "iu" or pos.max() >= pos.size or pos.min() < 0:
        return np.power(p, pos)
    return np.power(p, np.arange(int(pos.max()) + 1, dtype=pos.dtype))[pos]


def repeated_powers(p: float, top: int) -> np.ndarray:
    """p^0 .. p^top as trec_eval computes them (m_rbp.c: ``cur_p = cur_p * p`` once per rank), a
    sequential product whose last bits differ from pow's (0.9^4 = 0.6561000000000001)."""
    return np.cumprod(np.concatenate(([1.0], np.full(max(int(top), 0), float(p)))))


class Level(float):
    """``-l`` as kernels receive it, with trec_eval's other flags (docs/trec_eval.md): ``num_docs`` (-N),
    ``rounding`` of x R ('round': lround, trec_eval 10; 'legacy': (long)(x R + 0.9)), ``present`` (per
    row: retrieved something before -J), ``trec_nan`` (--trec-nan) and ``judged_only`` (-J)."""

    num_docs: float
    rounding: str
    present: object
    trec_nan: bool
    judged_only: bool

    def __new__(cls, value, num_docs: float = 0.0, rounding: str = "round", present=None, trec_nan: bool = False,
                judged_only: bool = False):
        self = super().__new__(cls, value)
        self.num_docs, self.rounding, self.present = float(num_docs or 0), rounding, present
        self.trec_nan, self.judged_only = bool(trec_nan), bool(judged_only)
        return self

    @property
    def rel_level(self) -> float:
        return float(self)

    @classmethod
    def of(cls, options, present=None, trec_nan: bool | None = None) -> "Level":
        """The level of an Options-like object (rel_level, num_docs, trec_version, trec_nan, judged_only);
        ``trec_nan=False`` overrides the options' (the random-ranking bounds never reproduce -nan)."""
        nan = getattr(options, "trec_nan", False) if trec_nan is None else trec_nan
        return cls(options.rel_level, getattr(options, "num_docs", 0) or 0,
                   "legacy" if str(getattr(options, "trec_version", "10")) == "9" else "round", present,
                   nan, getattr(options, "judged_only", False))


def rel_of(measure, rel_level: float) -> float:
    """The relevance level of ``measure``: its own ``rel=`` parameter, else ``-l``."""
    rel = measure.get("rel")
    return rel_level if rel is None else rel


def within_cutoff(ranking: Ranking, measure) -> np.ndarray | None:
    """rank <= k for ``measure``'s cutoff k (None without a cutoff)."""
    return None if measure.cutoff is None else ranking.pos < measure.cutoff


def judged_only(ranking: Ranking, gains: np.ndarray) -> np.ndarray:
    """Gains of the ranked documents with unjudged ones at 0, even where grade 0 has a gain (trec_eval)."""
    if ranking.judged is not None:
        gains = np.where(ranking.judged, gains, 0.0)
    return gains


def relevant(ranking: Ranking, rel: float) -> np.ndarray:
    """grade >= rel; never for unjudged documents (trec_eval -l 0 counts judged grade-0 ones only)."""
    hit = ranking.grade >= rel
    if rel <= 0 and ranking.judged is not None:
        hit &= ranking.judged
    return hit
