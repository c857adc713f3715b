"""The two intervals of an 'all' row: against a random ordering (:func:`randomisation_interval`, the
table's "EM vs random"), and over the topics, ``eval --ci``: the percentile bootstrap (Efron &
Tibshirani 1993 ch. 13, topics resampled as Sakai 2006), t_b = f(the drawn queries' means) on B
resamples, [lo, hi] their (1 - level)/2 and (1 + level)/2 percentiles.  The resamples are a seeded
count matrix C (B x n) shared by a run's measures, each mean ``C @ x`` in whole numbers (docs/bounds.md).
"""
from __future__ import annotations

import functools
import math
from typing import Callable, Sequence

import numpy as np

__all__ = ["RESAMPLES", "LEVEL", "ORDERINGS", "resample_counts", "prepare_counts", "means_interval", "means_intervals",
           "aggregate_intervals", "min_queries", "randomisation_interval"]

RESAMPLES = 1000  # B: the percentiles' Monte Carlo error is about 0.01 of the interval's width at 1000
LEVEL = 0.95
ORDERINGS = 999  # K of the randomisation interval: (K + 1) 0.025 = 25, a whole number (an exact 95% test)
_CELLS = 4_000_000  # count-matrix entries per chunk of resamples (32 MB of float64)
_DRAW_CELLS = 1 << 18  # draws made (and counted) at a time within a chunk: 2 MB of int64
_KEPT_CELLS = 1 << 18  # kept only up to 2 MB: a larger one (2,000 queries: 16 MB) would stay in the peak memory


def resample_counts(n: int, resamples: int = RESAMPLES, seed: int = 0, start: int = 0, stop: int | None = None):
    """Rows ``start:stop`` of the B x n count matrix: how often each of ``n`` queries is drawn in each
    resample of n draws with replacement, from one generator keyed by (seed, start).  The last one of at
    most ``_KEPT_CELLS`` counts is kept, read-only: a command's runs share their query set."""
    stop = resamples if stop is None else stop
    if n * (stop - start) > _KEPT_CELLS:
        return _draw_counts(n, seed, start, stop)
    return _kept_counts(int(n), int(seed), int(start), int(stop))


@functools.lru_cache(maxsize=1)
def _kept_counts(n: int, seed: int, start: int, stop: int) -> np.ndarray:
    counts = _draw_counts(n, seed, start, stop)
    counts.flags.writeable = False
    return counts


def prepare_counts(n: int, resamples: int = RESAMPLES, seed: int = 0) -> None:
    """Draw now the first chunk :func:`means_intervals` will ask for with ``n`` queries (kept when small,
    :func:`resample_counts`): a local pool's workers inherit it."""
    if n > 0:
        resample_counts(n, resamples, seed, 0, min(resamples, max(1, _CELLS // n)))


def _draw_counts(n: int, seed: int, start: int, stop: int) -> np.ndarray:
    """The count matrix's rows ``start:stop`` drawn (:func:`resample_counts`)."""
    rows = stop - start
    generator = np.random.default_rng([int(seed), int(start)])
    counts = np.empty((rows, n), np.float64)
    # drawn and counted a few rows at a time into the float matrix (peak memory: docs/performance.md);
    # the generator gives the same numbers drawn in pieces as in one call (tests/core/test_intervals.py)
    step = max(1, _DRAW_CELLS // max(n, 1))
    for first in range(0, rows, step):
        size = min(rows, first + step) - first
        idx = generator.integers(0, n, size=(size, n))
        idx += n * np.arange(size)[:, None]
        counts[first:first + size] = np.bincount(idx.ravel(), minlength=size * n).reshape(size, n)
    return counts


_EXPONENT_RANGE = 960  # values within 2**-960 .. 2**960: their limbs and sums stay normal floats


def _limbs(x: np.ndarray, bits: int):
    """``x`` as limbs: (float columns of whole numbers below 2**bits in magnitude, the power of two each
    stands for), ``x == sum(limb * unit)`` exactly; None for values outside 2**±960."""
    a = np.abs(x)
    live = a > 0
    if not live.any():
        return [], []
    _, exponent = np.frexp(a[live])  # a = m 2**e, m in [0.5, 1) of 53 bits: a multiple of 2**(e - 53), below 2**e
    top, low = int(exponent.max()), int(exponent.min()) - 53
    if top > _EXPONENT_RANGE or low < -_EXPONENT_RANGE:
        return None
    negative = x < 0
    limbs, units = [], []
    for index in range(-(-(top - low) // bits)):
        unit = 2.0 ** (top - (index + 1) * bits)
        whole = np.floor(a / unit)  # a / unit < 2**bits (a < the previous limb's unit): exact, as is what is left
        a = a - whole * unit
        limbs.append(np.where(negative, -whole, whole) + 0.0)  # + 0.0: no -0.0
        units.append(unit)
    return limbs, units


def _resampled_means_many(counts: np.ndarray, jobs: Sequence[tuple]) -> list:
    """For every (columns, valid) of ``jobs``, per column the mean over each resample's drawn queries where
    ``valid`` and the value is finite, from one matrix product whose bits depend neither on the BLAS nor
    on its threads (``C @ x`` rounds in the kernel's order): each column in limbs (:func:`_limbs`) so that
    every partial sum is a whole number below 2**53, the limbs' sums added from the largest."""
    bits = 53 - int(counts.sum(axis=1).max() if counts.size else 0).bit_length()
    blocks, plans = [], []
    width = 0
    for columns, valid in jobs:
        valid = np.asarray(valid, bool)
        plan = []
        for column in columns:
            column = np.asarray(column, dtype=np.float64)
            used = valid & np.isfinite(column)
            x = np.where(used, column, 0.0)
            limbs, units = _limbs(x, bits) or ([], None)  # None: summed by math.fsum
            plan.append((x, units, width))
            blocks += [used.astype(np.float64), *limbs]
            width += 1 + len(limbs)
        plans.append(plan)
    sums = counts @ np.column_stack(blocks) if blocks else np.zeros((len(counts), 0))
    out = []
    for plan in plans:
        means = []
        for x, units, at in plan:
            if units is None:
                total = _fsum_rows(counts, x)
            else:
                total = sums[:, at + 1] * units[0] if units else np.zeros(len(counts))
                for index in range(1, len(units)):
                    total = total + sums[:, at + 1 + index] * units[index]
            with np.errstate(invalid="ignore", divide="ignore"):
                means.append(total / sums[:, at])
        out.append(means)
    return out


def _fsum_rows(counts: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Each row's sum of ``x`` counted ``counts[b]`` times, correctly rounded (``math.fsum``): for values
    beyond 2**±960, where limbs would leave the normal floats."""
    return np.array([math.fsum(np.repeat(x, row.astype(np.int64)).tolist()) for row in counts])


def min_queries(level: float = LEVEL) -> int:
    """The fewest queries a percentile interval at ``level`` is taken from: the least n with n**-n below
    the tail (1 - level) / 2 (else its end is merely the sample's extreme): 4 at 95%."""
    n = 1
    while float(n) ** -n >= (1.0 - level) / 2:
        n += 1
    return n


def means_intervals(jobs: Sequence[tuple], n: int, resamples: int = RESAMPLES, seed: int = 0,
                    level: float = LEVEL) -> list:
    """The percentile bootstrap interval of several statistics of the means over the same resamples.
    ``jobs``: (columns, ok, statistic) each: per-query arrays of length ``n`` (A, I, E, W), the mask
    of the queries averaged over, and ``statistic(*means)`` -> values (NaN where undefined) or (values,
    undefined mask).  [(lo, hi)] in ``jobs`` order; (NaN, NaN) if undefined in every resample, or with
    fewer ``ok`` queries than :func:`min_queries`."""
    if n == 0 or not jobs:
        return [(float("nan"), float("nan"))] * len(jobs)
    stats = [[] for _ in jobs]
    step = max(1, _CELLS // n)
    for start in range(0, resamples, step):
        counts = resample_counts(n, resamples, seed, start, min(resamples, start + step))
        resampled = _resampled_means_many(counts, [(columns, valid) for columns, valid, _ in jobs])
        for index, ((columns, valid, statistic), means) in enumerate(zip(jobs, resampled)):
            with np.errstate(invalid="ignore", divide="ignore"):
                observed = statistic(*means)
            if isinstance(observed, tuple):
                observed, undefined = observed
                observed = np.where(np.asarray(undefined, bool), np.nan, observed)
            stats[index].append(np.asarray(observed, dtype=np.float64))
    out = []
    tail = (1.0 - level) / 2
    for draws, (_, valid, _) in zip(stats, jobs):
        draws = np.concatenate(draws)
        draws = draws[np.isfinite(draws)]
        if not len(draws) or np.count_nonzero(valid) < min_queries(level):
            out.append((float("nan"), float("nan")))
            continue
        low, high = np.quantile(draws, [tail, 1.0 - tail])
        out.append((float(low), float(high)))
    return out


def means_interval(columns: Sequence[np.ndarray], statistic: Callable, valid=None, resamples: int = RESAMPLES,
                   seed: int = 0, level: float = LEVEL) -> tuple:
    """:func:`means_intervals` for one statistic (``valid``: every query if None)."""
    n = len(columns[0])
    valid = np.ones(n, bool) if valid is None else np.asarray(valid, bool)
    return means_intervals([(columns, valid, statistic)], n, resamples, seed, level)[0]


def aggregate_intervals(columns: Sequence[np.ndarray], level: float = LEVEL, seed: int = 0) -> list:
    """The percentile bootstrap interval of each per-query column's mean over its finite values (the
    'all' row of ``eval --ci``), on :func:`means_intervals`' resamples.  [(lo, hi)] in ``columns`` order."""
    columns = [np.asarray(column, dtype=np.float64) for column in columns]
    jobs = [((column,), np.isfinite(column), lambda mean: mean) for column in columns]
    return means_intervals(jobs, len(columns[0]) if columns else 0, RESAMPLES, seed, level)


def randomisation_interval(T: float, null, level: float = LEVEL) -> tuple:
    """The randomisation interval of ``T`` (a run's 'all' row) against ``null``, its values on K random
    orderings of the pool: the exact Monte Carlo test inverted as a shift (Davison & Hinkley 1997, ch. 4),

        [T - t(K + 1 - k), T - t(k)],  t(i) the i-th smallest null value, k = floor((K + 1)(1 - level) / 2).

    It contains 0 exactly when the two-sided test does not reject at 1 - level (docs/bounds.md, "How
    far from random").  (NaN, NaN) for a NaN T, or too few finite null values for k >= 1."""
    null = np.sort(np.asarray(null, dtype=np.float64))
    null = null[np.isfinite(null)]
    k = int(np.floor((len(null) + 1) * (1.0 - level) / 2 + 1e-9))
    if k < 1 or not np.isfinite(T):
        return float("nan"), float("nan")
    return float(T - null[len(null) - k]), float(T - null[k - 1])
