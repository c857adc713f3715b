"""Random permutations of the pools: Monte Carlo estimates and the distribution-based DB, drawn from
:class:`Keys` (any batching gives the same estimates) by two exactly uniform samplers: a whole shuffle
(:func:`_shuffled`), or the ranks alone of the documents a kernel ``reads`` (:func:`placed`).
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import math

import numpy as np

from .draws import Keys, as_keys
from .kernels import Ranking
from .measures import compute
from .pools import Pool, pool_keys, pool_reads

__all__ = ["Keys", "as_keys", "placed", "placements", "permutation_values", "permutation_values_many", "db_values", "enumerated_bounds", "n_arrangements", "ENUMERATE_LIMIT",
           "monte_carlo_listener", "monte_carlo_unit"]

from .variants import DB_ENUMERATE_ELEMENTS as _ENUMERATE_ELEMENTS  # ... and at most this many (arrangements x pool size)
from .variants import DB_ENUMERATE_LIMIT as ENUMERATE_LIMIT  # 7!: at most this many distinct arrangements are enumerated for DB
_BATCH_ELEMENTS = 2_000_000  # memory bound of one vectorised block
# placed rankings in blocks of ~128k documents: their arrays (1 MiB of float64 each) stay in a
# core's cache between the sampler's and the kernels' many passes
_PLACED_ELEMENTS = 131_072


# Progress of the Monte Carlo work (the command line's bar): listeners hear units of work done, one
# unit = one query of one Monte Carlo bound or DB metric; batches report fractions of their unit.
_LISTENERS: list = []
_UNITS: list = []  # stack of [units of the computation under way, units reported so far]


@contextlib.contextmanager
def monte_carlo_listener(hear):
    """Call ``hear(units)`` as Monte Carlo work is done (units: query x metric); nothing is slowed
    when no listener is registered."""
    _LISTENERS.append(hear)
    try:
        yield
    finally:
        _LISTENERS.remove(hear)


@contextlib.contextmanager
def monte_carlo_unit(units: float):
    """Monte Carlo work worth ``units`` (the queries of one metric): batches inside report their share,
    the rest (enumerated, cached or empty queries) at the end."""
    if not _LISTENERS:
        yield
        return
    _UNITS.append([float(units), 0.0])
    try:
        yield
    finally:
        total, done = _UNITS.pop()
        _report(max(0.0, total - done))


def _report(units: float) -> None:
    for hear in _LISTENERS:
        hear(units)


def _share(fraction: float) -> None:
    """A batch did ``fraction`` of the computation under way."""
    if _UNITS:
        cur = _UNITS[-1]
        add = min(cur[0] - cur[1], cur[0] * fraction)
        if add > 0:
            cur[1] += add
            _report(add)


def _shuffled(grade, judged, n, base, reps: int, rng, depth=None, rep0: int = 0) -> Ranking:
    """``reps`` uniform shuffles (iid uniform keys sorted) of g pools given as padded (g x width) matrices:
    rows rep * g + i; with ``depth`` only the top ranks, drawn directly when d(d-1) <= n."""
    n_rows, width = grade.shape
    keys_of = as_keys(rng)
    rep_of_row = np.repeat(np.arange(rep0, rep0 + reps), n_rows)  # global repetition: batch-independent
    base_of_row = np.tile(np.asarray(base), reps)
    depth_used = width if depth is None else min(int(depth), width)
    if depth_used * (depth_used - 1) <= n.min():
        idx = _distinct_draws(n, reps, depth_used, keys_of, base_of_row, rep_of_row)
    else:
        keys = keys_of.rows(base_of_row, rep_of_row, width).reshape(reps, n_rows, width)
        keys += np.arange(width) >= n[:, None]
        keys = keys.reshape(reps * n_rows, width)
        if depth_used < width and width > max(64, 4 * depth_used):  # a full sort of short rows is faster than partitioning
            idx = np.argpartition(keys, depth_used - 1, axis=1)[:, :depth_used]
            idx = np.take_along_axis(idx, np.argsort(np.take_along_axis(keys, idx, axis=1), axis=1), axis=1)
        else:
            idx = np.argsort(keys, axis=1)[:, :depth_used]
    pool_of = np.tile(np.arange(n_rows), reps)
    count = np.minimum(n, depth_used)[pool_of]
    src = (idx + (pool_of * width)[:, None])[np.arange(depth_used) < count[:, None]]
    rows = np.repeat(np.arange(reps * n_rows), count)
    return Ranking(rows, grade.ravel()[src], reps * n_rows, np.tile(base, reps),
                   None if judged is None else judged.ravel()[src])


def _distinct_draws(n, reps: int, depth: int, keys: Keys, base_of_row, rep_of_row) -> np.ndarray:
    """(reps * g, d) indices: for row rep * g + i, the top d of a uniform permutation of pool i's n[i]
    documents: d iid draws, redrawn whole while they collide (accepted with probability > 0.6)."""
    high = np.tile(n, reps)[:, None]
    idx = np.minimum((keys.rows(base_of_row, rep_of_row, depth) * high).astype(np.int64), high - 1)
    todo = np.arange(len(high))
    attempt = 0
    while len(todo):
        sorted_idx = np.sort(idx[todo], axis=1)
        todo = todo[(sorted_idx[:, 1:] == sorted_idx[:, :-1]).any(axis=1)]
        attempt += 1
        uniforms = keys.rows(base_of_row[todo], rep_of_row[todo], depth, attempt)
        idx[todo] = np.minimum((uniforms * high[todo]).astype(np.int64), high[todo] - 1)
    return idx


def placements(cnt, n, base, reps: int, rng, rep0: int = 0):
    """For row rep * g + i (rep from ``rep0``): distinct ranks in [0, n[i]) of the cnt[i] documents of
    query ``base[i]``, uniform among the injections (docs/bounds.md, "How the Monte Carlo draws"): each
    draws u(seed, query, rep, document, attempt) * n, the larger of two on one rank again.  (rank, doc)
    matrices (reps * g, width) sorted by rank; entries past cnt[i] are padding (ranks >= n[i], last)."""
    keys = as_keys(rng)
    cnt = np.asarray(cnt, dtype=np.int64)
    n_groups = len(cnt)
    width = int(cnt.max()) if n_groups else 0
    bits = max(width - 1, 0).bit_length()  # a key is rank << bits | document: unique within a row
    low = np.int64((1 << bits) - 1)
    rep_of_row = np.repeat(np.arange(rep0, rep0 + reps), n_groups)
    base_of_row = np.tile(np.asarray(base), reps)
    high = np.tile(np.asarray(n, dtype=np.int64), reps)[:, None]
    cols = np.arange(width)
    uniforms = keys.rows(base_of_row, rep_of_row, width)
    uniforms *= high
    key = uniforms.astype(np.int64)
    np.minimum(key, high - 1, out=key)
    np.add(high, cols, out=key, where=cols >= np.tile(cnt, reps)[:, None])  # padding: distinct, past the end
    key <<= bits
    key |= cols
    key.sort(axis=1)
    rank = key >> bits
    dup = rank[:, 1:] == rank[:, :-1]
    todo = np.flatnonzero(dup.any(axis=1))
    dup = dup[todo]
    attempt = 0
    while len(todo):
        keys_todo = key[todo]
        dup_row, dup_col = np.nonzero(dup)  # sorted entry j + 1 shares its rank with entry j, of a smaller document
        doc = keys_todo[dup_row, dup_col + 1] & low
        attempt += 1
        rows = todo[dup_row]
        uniforms = keys.at(base_of_row[rows], rep_of_row[rows], doc, attempt)
        keys_todo[dup_row, dup_col + 1] = (np.minimum((uniforms * high[rows, 0]).astype(np.int64), high[rows, 0] - 1) << bits) | doc
        keys_todo.sort(axis=1)
        key[todo] = keys_todo
        rank = keys_todo >> bits
        dup = rank[:, 1:] == rank[:, :-1]
        hit = dup.any(axis=1)
        todo, dup = todo[hit], dup[hit]
    return key >> bits, key & low


def _support(pool: Pool, queries: np.ndarray, reads: np.ndarray):
    """Pool indices of the documents ``reads`` marks, per query of ``queries`` (sorted), in pool
    order as a padded (g x width) matrix, and their counts."""
    local = np.full(pool.nq, -1)
    local[queries] = np.arange(len(queries))
    sel = np.flatnonzero(reads & (local[pool.row] >= 0))
    rows = local[pool.row[sel]]  # non-decreasing: the pool is grouped by query, queries sorted
    cnt = np.bincount(rows, minlength=len(queries))[: len(queries)].astype(np.int64)
    idx = np.zeros((len(queries), int(cnt.max()) if len(cnt) else 0), dtype=np.int64)
    idx[rows, np.arange(len(sel)) - np.searchsorted(rows, rows)] = sel
    return idx, cnt


def placed(pool: Pool, reads: np.ndarray, queries, reps: int, rng, rep0: int = 0) -> Ranking:
    """``reps`` uniformly random permutations of the pools of ``queries`` (sorted), of which only the
    documents ``reads`` marks are held, at their ranks (:func:`placements`): a placed
    :class:`Ranking` (rows rep * g + i, each of length n), for kernels that read nothing else."""
    queries = np.asarray(queries, dtype=np.int64)
    idx, cnt = _support(pool, queries, reads)
    rank, doc = placements(cnt, pool.n[queries], queries, reps, rng, rep0)
    n_groups = len(queries)
    counts = np.tile(cnt, reps)
    keep = np.arange(idx.shape[1]) < counts[:, None]  # padding sorts last
    src = idx[np.tile(np.arange(n_groups), reps)[:, None], doc][keep]
    judged = pool.judged[src]
    return Ranking(np.repeat(np.arange(reps * n_groups), counts), pool.grade[src],
                   reps * n_groups, np.tile(queries, reps),
                   None if judged.all() else judged, at=rank[keep], size=np.tile(pool.n[queries].astype(np.int64), reps))


def _padded(pool: Pool, queries: np.ndarray):
    """Grades and judged flags of ``queries`` (sorted) as padded matrices, with their sizes."""
    n = pool.n[queries].astype(np.int64)
    width = int(n.max()) if len(n) else 0
    local = np.full(pool.nq, -1)
    local[queries] = np.arange(len(queries))
    sel = local[pool.row] >= 0
    rows, col = local[pool.row[sel]], pool.pos[sel]
    grade = np.zeros((len(queries), width))
    judged = np.zeros((len(queries), width), bool)
    grade[rows, col] = pool.grade[sel]
    judged[rows, col] = pool.judged[sel]
    return grade, (None if pool.judged[sel].all() and pool.extra is None else judged), n  # placeholders: unjudged


def _kept_depth(measure):
    """The ranks a shuffle scored by ``measure`` alone must keep: a native measure's cutoff, else all."""
    return measure.cutoff if measure.native else None


def _permutation_batches(pool: Pool, reps: int, rng, scorer, queries, depth=None, reads=None):
    """Yield (first rep, queries, values[... x t x len(queries)]) over ``reps`` random permutations in
    memory-bounded batches, each batch's share of the work reported to the progress bar; ``depth``: the
    ranks kept (None: all); ``reads`` (:func:`pool_reads`): a query with at most half its pool read draws
    those ranks alone (:func:`placed`).  Buckets of similar size (less padding): placed queries by the
    documents read (within a factor of sqrt(2)), shuffled ones by pool size (within a factor of 2)."""
    work = max(1, reps * len(queries))
    n = pool.n[queries].astype(np.int64)
    placing = reads is not None and depth is None
    cnt = pool.rowsum(reads)[queries].astype(np.int64) if placing else n
    few = 2 * cnt <= n if placing else np.zeros(len(n), bool)
    bucket = np.where(few, -1 - np.ceil(2 * np.log2(np.maximum(cnt, 1))), np.ceil(np.log2(np.maximum(n, 1))))
    for bucket_id in np.unique(bucket):
        inside = bucket == bucket_id
        bucket_queries = np.sort(queries[inside])
        if bucket_id < 0:
            per = max(1, _PLACED_ELEMENTS // (max(1, int(cnt[inside].max())) * len(bucket_queries)))
            draw = functools.partial(placed, pool, reads, bucket_queries, rng=rng)
        else:
            grade, judged, sizes = _padded(pool, bucket_queries)
            per = max(1, _BATCH_ELEMENTS // (grade.shape[1] * len(bucket_queries)))
            draw = functools.partial(_shuffled, grade, judged, sizes, bucket_queries, rng=rng, depth=depth)
        for start in range(0, reps, per):
            count = min(per, reps - start)
            values = np.asarray(scorer(draw(reps=count, rep0=start)))
            if _LISTENERS:
                _share(count * len(bucket_queries) / work)
            yield start, bucket_queries, values.reshape(values.shape[:-1] + (count, len(bucket_queries)))


def permutation_values(pool: Pool, judgements, measure, rel_level, reps: int, rng,
                       scorer=None, queries=None) -> np.ndarray:
    """Values (reps x nq) of M on ``reps`` uniformly random permutations of every query's pool (of
    ``queries`` only when given, other columns NaN; an empty pool scores 0)."""
    if scorer is None:
        return permutation_values_many(pool, judgements, [measure], rel_level, reps, rng, queries, _kept_depth(measure),
                                       pool_reads(pool, judgements, measure, rel_level))[0]
    return _drawn(pool, lambda ranking: [scorer(ranking)], 1, reps, as_keys(rng, judgements.qids), queries,
                  _kept_depth(measure))[0]


def permutation_values_many(pool: Pool, judgements, measures: list, rel_level, reps: int, rng, queries=None,
                            depth=None, reads=None) -> list:
    """:func:`permutation_values` of several native measures (kept to the same ``depth``, reading the
    same documents ``reads``) on the same permutations, drawn once: each gets the values it gets alone."""
    def scorer(ranking):
        return [compute(ranking, judgements, measure, rel_level) for measure in measures]

    return _drawn(pool, scorer, len(measures), reps, as_keys(rng, judgements.qids), queries, depth, reads)


def _drawn(pool: Pool, scorer, count: int, reps: int, keys: Keys, queries, depth, reads=None) -> list:
    """``count`` arrays (reps x nq) of ``scorer``'s rows of values on ``reps`` random permutations (NaN
    outside ``queries``; an empty pool scores 0)."""
    out = np.full((count, reps, pool.nq), np.nan)
    queries = np.arange(pool.nq) if queries is None else np.asarray(queries, dtype=np.int64)
    empty = pool.n[queries] == 0
    out[:, :, queries[empty]] = 0.0
    for start, batch_queries, values in _permutation_batches(pool, reps, keys, scorer, queries[~empty], depth, reads):
        out[:, start:start + values.shape[1], batch_queries] = values
    return list(out)


@functools.lru_cache(maxsize=32)
def _class_patterns(counts: tuple) -> np.ndarray:
    """Every distinct arrangement of a multiset with ``counts[j]`` copies of class j, as a read-only
    matrix of class indices, one a row."""
    n = sum(counts)
    arr = np.full((1, n), len(counts) - 1, dtype=np.int64)
    free = np.ones((1, n), bool)
    for level, count in enumerate(counts[:-1]):
        n_free = int(free[0].sum())
        combos = np.asarray(list(itertools.combinations(range(n_free), count)), dtype=np.int64).reshape(-1, count)
        freepos = np.nonzero(free)[1].reshape(len(arr), n_free)
        pos = freepos[:, combos].reshape(-1, count)  # (rows x combos, c)
        arr = np.repeat(arr, len(combos), axis=0)
        free = np.repeat(free, len(combos), axis=0)
        row_index = np.arange(len(arr))[:, None]
        arr[row_index, pos] = level
        free[row_index, pos] = False
    arr = arr.astype(np.int8)  # at most 7 classes within the arrangement limit (7! = 5040): at most 1 MB kept
    arr.flags.writeable = False
    return arr


def n_arrangements(counts) -> int:
    """Distinct arrangements of a multiset: n! / prod(c_j!)."""
    out, left = 1, 0
    for count in counts:
        left += int(count)
        out *= math.comb(left, int(count))
    return out


def _enumerated(pool: Pool, judgements, measure, rel_level, active, limit: int, scorer):
    """Yield (queries, values[G x M]): M over every distinct arrangement of the pool's classes (documents
    its kernel does not tell apart, :func:`pool_keys`), for each active query with at most ``limit``."""
    pool = pool.whole()
    key = pool_keys(pool,
                    judgements, measure, rel_level) if measure.native else np.where(pool.judged, pool.grade, -np.inf)
    order = np.lexsort((key, pool.row))
    first = np.ones(len(order), bool)
    first[1:] = (pool.row[order][1:] != pool.row[order][:-1]) | (key[order][1:] != key[order][:-1])
    head = order[first]  # one representative document per (query, class)
    cls_q = pool.row[head]
    cls_n = np.diff(np.append(np.flatnonzero(first), len(order)))
    qs_, lo_ = np.unique(cls_q, return_index=True)
    sig: dict = {}  # class counts -> [(query, index of its first class)]: one pattern serves them all
    for query, low, high in zip(qs_, lo_, np.append(lo_[1:], len(cls_q))):
        if not active[query]:
            continue
        counts = tuple(int(count) for count in cls_n[low:high])
        M = n_arrangements(counts)
        if M <= limit and M * sum(counts) <= _ENUMERATE_ELEMENTS:
            sig.setdefault(counts, []).append((query, low))
    for counts, members in sig.items():
        pattern = _class_patterns(counts)  # (M, n) class indices
        M, n = pattern.shape
        step = max(1, _BATCH_ELEMENTS // (M * n))
        for start in range(0, len(members), step):
            queries = np.asarray([query for query, _ in members[start:start + step]])
            first_cls = np.asarray([low for _, low in members[start:start + step]])
            doc = head[first_cls[:, None, None] + pattern]  # (G, M, n): a representative per position
            n_queries = len(queries)
            ranking = Ranking(np.repeat(np.arange(n_queries * M), n), pool.grade[doc].ravel(), n_queries * M,
                         np.repeat(queries, M), pool.judged[doc].ravel())
            yield queries, scorer(ranking).reshape(n_queries, M)


def enumerated_bounds(pool: Pool, judgements, measure, rel_level):
    """Exact (mean, maximum, minimum) of native M over every ordering of each query's pool where its
    classes have at most ``ENUMERATE_LIMIT`` distinct arrangements (else NaN), and the mask of queries
    enumerated: the mean over distinct arrangements is the mean over all n! permutations (E exactly)."""
    n_queries = pool.nq
    mean, high, low = np.full(n_queries, np.nan), np.full(n_queries, np.nan), np.full(n_queries, np.nan)
    empty = pool.n == 0
    mean[empty] = high[empty] = low[empty] = 0.0  # an empty pool scores 0 (as permutation_values)
    done = empty.copy()
    scorer = functools.partial(compute, judgements=judgements, measure=measure, rel_level=rel_level)
    for queries, values in _enumerated(pool, judgements, measure, rel_level, ~empty, ENUMERATE_LIMIT, scorer):
        mean[queries], high[queries], low[queries] = values.mean(axis=1), values.max(axis=1), values.min(axis=1)
        done[queries] = True
    return mean, high, low, done


def db_values(pool: Pool, judgements, measure, rel_level, A, reps: int, rng, scorer=None, active=None,
              limit: int = ENUMERATE_LIMIT):
    """DB = Pr[M(random permutation) <= A] per query (Westerborg 2022 eq. 3.12), and its standard error:
    exact (0) over the pool's classes' arrangements (:func:`_enumerated`) up to ``limit``, else Monte
    Carlo over ``reps`` shuffles (sqrt(p(1-p)/reps)).  Queries outside ``active`` are left NaN."""
    reads = pool_reads(pool, judgements, measure, rel_level) if scorer is None else None
    scorer = scorer or (lambda ranking: compute(ranking, judgements, measure, rel_level))
    rng = as_keys(rng, judgements.qids)
    n_queries = pool.nq
    A = np.asarray(A, dtype=np.float64)
    active = np.ones(n_queries, bool) if active is None else np.asarray(active, bool)
    out = np.full(n_queries, np.nan)
    std_error = np.zeros(n_queries)
    enumerated = np.zeros(n_queries, bool)
    for queries, values in _enumerated(pool, judgements, measure, rel_level, active, limit, scorer):
        out[queries] = np.mean(values <= (A[queries] + _tol(A[queries]))[:, None], axis=1)
        enumerated[queries] = True
    big = np.flatnonzero(active & ~enumerated)
    empty = big[pool.n[big] == 0]
    out[empty] = 1.0  # every (empty) ranking scores alike
    big = big[pool.n[big] > 0]
    if len(big):
        below = np.zeros(n_queries)  # counted batch by batch: memory does not grow with reps
        for _, queries, values in _permutation_batches(pool, reps, rng, scorer, big, _kept_depth(measure), reads):
            below[queries] += np.sum(values <= A[queries] + _tol(A[queries]), axis=0)
        share = below[big] / reps
        out[big] = share
        std_error[big] = np.sqrt(share * (1 - share) / reps)
    return out, std_error


def _tol(values):
    return 1e-12 * np.maximum(1.0, np.abs(values))
