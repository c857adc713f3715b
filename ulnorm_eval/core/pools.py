"""The pool of a query: the documents a random ranker permutes (``--pool``; docs/bounds.md): 'qrels'
its judged documents, 'run' the run's retrieved ones, 'union' both, 'qrels+N' the judged documents
and N unjudged placeholders.  Placeholders are a count per query (``Pool.extra``), never rows; what
reads every document of a pool is given :meth:`Pool.whole`, the placeholders as rows.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from .kernels import Judgements, Ranking, rel_of, row_counts
from .measures import FAMILIES
from .measures.common import binary_gain
from .measures.common import pool_codes

__all__ = ["Pool", "make_pool", "pool_gains", "pool_keys", "pool_codes", "pool_reads", "rel_of", "judged_only_pool",
           "placeholders", "rows_for"]


class Pool:
    """Per-query pool documents: grades (and whether judged), grouped by query, order irrelevant;
    ``extra``: per query, unjudged placeholder documents (gain 0, trec_eval's code -1) not held as rows."""

    def __init__(self, row: np.ndarray, grade: np.ndarray, n_queries: int, judged: np.ndarray | None = None,
                 extra: np.ndarray | None = None):
        # grouped by query (a ranking's rows, the run pool, are already)
        order = np.argsort(row, kind="stable") if len(row) > 1 and not (row[1:] >= row[:-1]).all() else slice(None)
        self.row, self.grade = np.array(row)[order], np.array(grade)[order]
        self.judged = np.ones(len(row), bool) if judged is None else np.array(judged, dtype=bool)[order]
        self.nq = n_queries
        self.n = np.bincount(self.row, minlength=n_queries)[:n_queries].astype(np.float64)
        self.extra = None if extra is None or not np.any(extra) else np.asarray(extra, np.int64)
        if self.extra is not None:
            self.n += self.extra
        self._whole = None
        self._gains: dict = {}  # (gain function, its parameters, rel, max_grade) -> (rel, gains): see pool_gains
        self._sums: dict = {}  # id of a read-only weight array -> (the array, its row sums): see rowsum
        self._ordered: dict = {}  # (descending, size, sum of the key's bits) -> [(key bits, Ranking)]: measures share gains

    def rowsum(self, weights) -> np.ndarray:
        """Per query, the sum of ``weights`` as :meth:`Ranking.rowsum` adds them (a boolean mask counted).
        A read-only array (pool_gains') is summed once: every measure sharing those gains asks for P."""
        shared = isinstance(weights, np.ndarray) and not weights.flags.writeable
        if shared:
            held = self._sums.get(id(weights))
            if held is not None and held[0] is weights:
                return held[1]
        if getattr(weights, "dtype", None) == bool and len(weights) == len(self.row) > 0:
            sums = row_counts(weights, self.starts)
        else:
            sums = np.bincount(self.row, weights=weights, minlength=self.nq)[: self.nq]
        if shared:
            sums.flags.writeable = False
            self._sums[id(weights)] = (weights, sums)  # the array is held: its id is not reused meanwhile
        return sums

    @cached_property
    def starts(self) -> np.ndarray:
        """Where each query's documents start (``row`` is sorted by the constructor), and the end."""
        return np.searchsorted(self.row, np.arange(self.nq + 1))

    @cached_property
    def pos(self) -> np.ndarray:
        """0-based rank of each document within its query in any ordering of the pool (Ranking.pos of
        every ordered ranking, which keeps the pool's rows)."""
        return np.arange(len(self.row)) - self.starts[self.row]

    def ordered(self, key: np.ndarray, descending: bool) -> Ranking:
        """The pool of every query sorted by ``key`` (one row per query), kept per key and per class split
        (:func:`_packed_classes`) for the measures sharing them (docs/performance.md, ``Pool.ordered``)."""
        key = np.ascontiguousarray(key, dtype=np.float64)
        # looked up by the key's bits (a sum, then the whole key compared as integers): no hash of its bytes
        memo = (descending, len(key), np.add.reduce(key.view(np.int64), dtype=np.uint64).item())
        bits = key.view(np.int64)
        for held, ranking in self._ordered.get(memo, ()):
            if np.array_equal(held, bits):
                return ranking
        if key.flags.writeable or key.base is not None:  # kept to compare later keys: a copy unless the
            bits = bits.copy()  # key cannot change (read-only, owning its memory: pool_gains' arrays)
        if self.extra is not None:  # the placeholders' key, 0, is part of the ordering
            self._ordered.setdefault(memo, []).append((bits, ranking := self._placed_order(key, descending)))
            return ranking
        packed = _packed_classes(self.row, self.nq, key, descending)
        if packed is None:
            order = np.lexsort((-key if descending else key, self.row))
        else:
            # keys splitting the pool into the same classes in the same order sort alike: one ranking
            classes = ("classes", len(packed), np.add.reduce(packed, dtype=np.uint64).item())
            for held, ranking in self._ordered.get(classes, ()):
                if np.array_equal(held, packed):
                    self._ordered.setdefault(memo, []).append((bits, ranking))
                    return ranking
            order = np.argsort(packed, kind="stable")
        # sorted within each query, the rows are this pool's own (sorted) rows
        ranking = Ranking(self.row, self.grade[order], self.nq, np.arange(self.nq), self.judged[order])
        ranking.__dict__["starts"] = self.starts
        ranking.__dict__["pos"] = self.pos
        self._ordered.setdefault(memo, []).append((bits, ranking))
        if packed is not None:
            self._ordered.setdefault(classes, []).append((packed, ranking))
        return ranking

    def _placed_order(self, key: np.ndarray, descending: bool) -> Ranking:
        """:meth:`ordered` of a pool with placeholders (key 0, after held documents of equal key): a placed
        :class:`Ranking` of the held documents at their ranks (``Family.reads`` never reads a placeholder)."""
        order = np.lexsort((-key if descending else key, self.row))
        after = (key[order] < 0) if descending else (key[order] > 0)
        ranks = self.pos + np.where(after, self.extra[self.row], 0)
        return Ranking(self.row, self.grade[order], self.nq, np.arange(self.nq), self.judged[order], at=ranks,
                       size=self.n.astype(np.int64))

    def whole(self) -> "Pool":
        """The pool with its placeholders as rows (itself when it has none), made once."""
        if self.extra is None:
            return self
        if self._whole is None:
            place = np.repeat(np.arange(self.nq), self.extra)
            self._whole = Pool(np.concatenate([self.row, place]), np.concatenate([self.grade, np.zeros(len(place))]),
                               self.nq, np.concatenate([self.judged, np.zeros(len(place), bool)]))
        return self._whole


_FEW_KEYS = 16  # distinct key values up to which a pool is ordered by one 16-bit radix sort


def _packed_classes(row: np.ndarray, n_queries: int, key: np.ndarray, descending: bool) -> np.ndarray | None:
    """Each document's (query, rank of its key among at most ``_FEW_KEYS`` distinct values, reversed
    for descending) packed into 16 bits, whose stable (radix) sort is
    ``np.lexsort((-key if descending else key, row))``; None when the key does not fit."""
    if not len(row) or row[0] < 0 or row[-1] >= n_queries:
        return None
    distinct: list = []
    rest = key
    while len(rest):  # one pass per distinct value (NaN never leaves: the limit sends it to lexsort)
        if len(distinct) == _FEW_KEYS:
            return None
        distinct.append(rest[0])
        rest = rest[rest != rest[0]]
    levels = len(distinct)
    if n_queries * levels > 1 << 16:
        return None
    code = np.zeros(len(key), np.uint16)
    for value in sorted(distinct)[1:]:  # rank among the distinct values, ascending
        code += (key < value) if descending else (key >= value)
    return row.astype(np.uint16) * np.uint16(levels) + code


# qrels+N: the expectations' closed forms sum over the pool's ranks (harmonic numbers, discount prefixes,
# RR's survival products) and DB permutes it, so time and memory grow with N (docs/errors.md)
MAX_PLACEHOLDERS = 1_000_000


def placeholders(kind: str) -> int | None:
    """N of a 'qrels+N' pool (None for another kind); ValueError past :data:`MAX_PLACEHOLDERS`."""
    head, plus, count = kind.partition("+")
    if not (head == "qrels" and plus and count.isdigit()):
        return None
    if len(count) > len(str(MAX_PLACEHOLDERS)) or int(count) > MAX_PLACEHOLDERS:  # no int() of 5,000 digits
        raise ValueError(f"pool {kind!r}: at most {MAX_PLACEHOLDERS:,} unjudged documents (qrels+N; TREC's "
                         "depth is 1,000): a random ranking's E sums over every rank of the pool")
    return int(count)


def make_pool(kind: str, ranking: Ranking, judgements: Judgements) -> Pool:
    """The pool of every query: 'qrels' (judged documents), 'qrels+N' (and N unjudged placeholders),
    'run' (retrieved) or 'union'."""
    if kind == "qrels" or placeholders(kind) is not None:
        return Pool(judgements.row, judgements.grade, judgements.nq,
                    extra=np.full(judgements.nq, placeholders(kind) or 0))
    judged = ranking.judged if ranking.judged is not None else np.ones(len(ranking.row), bool)
    if kind == "run":
        return Pool(ranking.row, ranking.grade, judgements.nq, judged)
    if kind == "union":
        extra = ~judged
        return Pool(np.concatenate([judgements.row, ranking.row[extra]]),
                    np.concatenate([judgements.grade, ranking.grade[extra]]), judgements.nq,
                    np.concatenate([np.ones(len(judgements.row), bool), np.zeros(int(extra.sum()), bool)]))
    raise ValueError("pool must be 'qrels', 'qrels+N', 'run' or 'union'")


def pool_gains(pool: Pool, judgements: Judgements, measure, rel_level) -> np.ndarray:
    """Each pool document's gain under ``measure`` (binary measures: 1 if relevant); unjudged gain 0
    (:func:`pool_keys` is the finer label of the measures that read more than the gains)."""
    rel = rel_of(measure, rel_level)
    # a gain reads the grade, rel, the largest grade and the measure's parameters, never its cutoff (and
    # a binary gain not even the parameters): P@5 .. P@1000 and every binary measure at one level share
    gain = FAMILIES[measure.family].gain
    given = None if gain is binary_gain else (measure.family, measure.params)
    key = (gain, given, float(rel), judgements.max_grade)
    held = pool._gains.get(key)
    if held is not None and held[0] is rel:  # E, IUB and WLB of a measure read the same gains
        return held[1]
    gains = np.where(pool.judged, gain(pool.grade, measure, rel, judgements.max_grade), 0.0)
    gains.flags.writeable = False  # shared: a kernel that wrote into it would fail, not change another's input
    pool._gains[key] = (rel, gains)
    return gains


def pool_keys(pool: Pool, judgements: Judgements, measure, rel_level) -> np.ndarray:
    """Each pool document's class under ``measure`` (documents with one key are interchangeable for the
    kernel): the family's ``order`` of the trec_eval codes when it has one, else :func:`pool_gains`.
    Sorting by it gives IUB/WLB ('sorted' extremes); DB enumerates its classes."""
    fam = FAMILIES[measure.family]
    if fam.order is not None:
        return np.asarray(fam.order(pool_codes(pool), measure, rel_of(measure, rel_level), judgements.max_grade), dtype=np.float64)
    return pool_gains(pool, judgements, measure, rel_level)


def pool_reads(pool: Pool, judgements: Judgements, measure, rel_level) -> np.ndarray | None:
    """The pool documents the kernel of native ``measure`` reads (its family's ``reads``), None
    when it reads every document (or is computed elsewhere): a Monte Carlo draws only their ranks."""
    fam = FAMILIES.get(measure.family) if getattr(measure, "native", False) else None
    if fam is None or fam.reads is None:
        return None
    codes = pool_codes(pool)
    if measure.get("judged_only") and ((codes < 0).any() or pool.extra is not None):
        return None  # -J closes up the ranks of the documents it drops: every rank depends on all of them
    rel = rel_of(measure, rel_level)
    if pool.extra is not None and fam.reads(np.array([-1.0]), measure, rel, judgements.max_grade)[0]:
        return None  # it reads the placeholders
    return np.asarray(fam.reads(codes, measure, rel, judgements.max_grade), dtype=bool)


def rows_for(pool: Pool, judgements: Judgements, measure, rel_level) -> Pool:
    """The pool as ``measure``'s IUB and WLB read it: ``pool`` itself when its kernel reads no
    placeholder (:func:`pool_reads`), else :meth:`Pool.whole`."""
    if pool.extra is None or pool_reads(pool, judgements, measure, rel_level) is not None:
        return pool
    return pool.whole()


def judged_only_pool(pool: Pool) -> Pool:
    """``-J`` for the bounds: the pool without the documents trec_eval's -J drops (not in the qrels,
    or judged with a negative grade), so a random ranking is drawn from what -J keeps."""
    keep = pool.judged & (pool.grade >= 0)
    return Pool(pool.row[keep], pool.grade[keep], pool.nq, pool.judged[keep])  # no placeholder: none is judged
