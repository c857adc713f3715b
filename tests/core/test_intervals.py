"""core.intervals: the percentile bootstrap over queries of a statistic of the means (the 'all' row of a
normalisation under --norm-all means): its definition by hand, its chunking, and its coverage by
simulation from finite populations of queries whose true statistic is known."""
from __future__ import annotations

import numpy as np
import pytest

from ulnorm_eval.core import intervals
from ulnorm_eval.core.intervals import means_interval, means_intervals, resample_counts
from ulnorm_eval.core.normalise import ul2

from conftest import ROOT


def test_counts_are_resamples_of_n_draws_seeded():
    """Each row of the count matrix sums to n; the same seed and n give the same matrix and interval
    (the chunks of resamples depend on n only), another seed other ones."""
    c = resample_counts(7, 50, seed=3)
    assert c.shape == (50, 7) and (c.sum(axis=1) == 7).all() and (c >= 0).all()
    assert np.array_equal(c, resample_counts(7, 50, seed=3))
    assert not np.array_equal(c, resample_counts(7, 50, seed=4))
    x = np.linspace(0.0, 1.0, 7)
    assert means_interval([x], lambda a: a, seed=3) == means_interval([x], lambda a: a, seed=3)
    assert means_interval([x], lambda a: a, seed=3) != means_interval([x], lambda a: a, seed=4)


def test_count_matrix_is_kept_for_the_next_run_and_unchanged():
    """The last count matrix is kept (the runs of a command share their query set), read-only, and is
    the matrix drawn afresh; another n, seed or chunk is drawn and replaces it."""
    first = resample_counts(9, 40, seed=5)
    assert resample_counts(9, 40, seed=5) is first and not first.flags.writeable
    assert np.array_equal(first, intervals._draw_counts(9, 5, 0, 40))
    other = resample_counts(9, 40, seed=6)
    assert other is not first and np.array_equal(other, intervals._draw_counts(9, 6, 0, 40))
    assert np.array_equal(resample_counts(9, 40, seed=5, start=10, stop=20), intervals._draw_counts(9, 5, 10, 20))
    kept = resample_counts(9, 40, seed=5)
    assert np.array_equal(kept, first)
    big = intervals._KEPT_CELLS // 40 + 1  # a larger matrix is drawn each time, not held in memory
    assert resample_counts(big, 40, seed=5) is not resample_counts(big, 40, seed=5)
    assert resample_counts(9, 40, seed=5) is kept  # and the small one stays kept


@pytest.mark.parametrize("n, rows", [(1, 3), (7, 50), (2001, 300), (2000, 1000)])
def test_counts_drawn_in_pieces_are_those_of_one_draw(n, rows):
    """The matrix is drawn a few rows at a time (bounded memory): the same numbers as one draw of
    every row from the generator keyed by (seed, start), counted by bincount."""
    idx = np.random.default_rng([5, 40]).integers(0, n, size=(rows, n))
    idx += n * np.arange(rows)[:, None]
    want = np.bincount(idx.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
    assert np.array_equal(resample_counts(n, 40 + rows, seed=5, start=40), want)


def test_count_matrix_peak_memory_is_the_matrix():
    """2,000 queries x 1,000 resamples: the float matrix (16 MB) and a piece of draws, not the draws and
    their integer counts whole beside it (48 MB: the 'all' row's share of a 2M-line run's peak)."""
    import tracemalloc

    tracemalloc.start()
    try:
        counts = resample_counts(2000, 1000, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert counts.nbytes == 16_000_000 and peak < counts.nbytes + 6_000_000


def test_interval_is_the_percentiles_of_the_statistic_on_each_resample():
    """By hand: for each row of the count matrix, UL2 of the count-weighted means over the defined
    queries (a query drawn twice counts twice; the undefined one, I = E, never counts); the 2.5th and
    97.5th percentiles of those.  A withheld bound (NaN) is left out of its own mean only."""
    rng = np.random.default_rng(0)
    n = 30
    I = rng.uniform(0.5, 1.0, n)
    E = I * rng.uniform(0.05, 0.4, n)
    A = np.clip(E + rng.normal(0.05, 0.2, n), 0, I)
    I[4] = E[4] = A[4] = 0.3  # undefined: every ordering alike
    W = np.zeros(n)
    W[7] = np.nan
    ok = ~np.isclose(I, E)
    got = means_interval([A, I, E, W], ul2, ok, resamples=200, seed=11)
    c = resample_counts(n, 200, seed=11)
    stats = []
    for row in c:
        w = row * ok
        a, i, e = (np.sum(w * x) / w.sum() for x in (A, I, E))
        stats.append((a - e) / (i - e) if a >= e else (a - e) / e)
    assert got == pytest.approx(tuple(np.quantile(stats, [0.025, 0.975])), rel=1e-12)
    (lo, hi), = means_intervals([((A, I, E, W), ok, ul2)], n, 200, 11)
    assert (lo, hi) == got


def test_undefined_everywhere_gives_nan_and_no_queries_gives_nan():
    x = np.full(5, 0.2)
    assert all(np.isnan(v) for v in means_interval([x, x, x], ul2))  # I = E in every resample
    assert all(np.isnan(v) for v in means_intervals([(([], [], []), np.zeros(0, bool), ul2)], 0)[0])


def _random_population():
    """Queries of a random ranking, exactly: per (p, I), 20 queries with E = p I of which round(20 p)
    score I and the rest 0, so that the population's mean A equals its mean E and UL2 of its means is 0
    (at UL2's kink, the case of a shuffled run)."""
    A, E, I = [], [], []
    for p in (0.05, 0.1, 0.25, 0.5):
        for i in np.linspace(0.3, 1.0, 8):
            k = int(round(20 * p))
            A += [i] * k + [0.0] * (20 - k)
            E += [p * i] * 20
            I += [i] * 20
    return np.array(A), np.array(I), np.array(E)


def _good_population():
    """2,000 queries of a run better than random (UL2 of the means about 0.13), skewed and clipped to [0, I]."""
    rng = np.random.default_rng(5)
    I = rng.uniform(0.3, 1.0, 2000)
    E = I * rng.uniform(0.02, 0.3, 2000)
    A = np.clip(E + rng.normal(0.1, 0.2, 2000) * I, 0, I)
    return A, I, E


@pytest.mark.parametrize("population", [_random_population, _good_population])
def test_coverage_by_simulation(population):
    """400 samples of 50 queries (with replacement) from a finite population whose UL2 of the means is
    known: the 95% interval holds it for 91-98.5% of the samples.  With coverage 0.95 the count of 400 is
    binomial with standard deviation sqrt(400 * 0.95 * 0.05) = 4.4 (1.1 points), so the band is 3.6 of
    them below (the percentile interval is known to cover a little less than its level on small samples:
    Efron & Tibshirani 1993, ch. 14; 0.94-0.95 measured here) and 3.2 above.  An 80% interval covers
    74-86% (its level is honoured, not fixed at 95%)."""
    A, I, E = population()
    true = float(ul2(A.mean(), I.mean(), E.mean())[0][()])
    rng = np.random.default_rng(1)
    hit95 = hit80 = 0
    sims = 400
    for s in range(sims):
        q = rng.integers(0, len(A), 50)
        lo, hi = means_interval([A[q], I[q], E[q]], ul2, seed=s)
        hit95 += lo <= true <= hi
        lo, hi = means_interval([A[q], I[q], E[q]], ul2, seed=s, level=0.8)
        hit80 += lo <= true <= hi
    assert 0.91 <= hit95 / sims <= 0.985, hit95
    assert 0.74 <= hit80 / sims <= 0.86, hit80


def _fsum_means(counts, column, valid):
    """The plain reference: each resample's drawn values (a query drawn c times counts c times) added
    exactly and rounded once (math.fsum), divided by how many were drawn."""
    import math

    x = np.asarray(column, dtype=np.float64)
    used = np.asarray(valid, bool) & np.isfinite(x)
    picked = [np.repeat(np.where(used, x, 0.0), row.astype(np.int64)).tolist() for row in counts]
    sums = np.array([math.fsum(values) for values in picked])
    drawn = np.array([int(np.dot(row.astype(np.int64), used.astype(np.int64))) for row in counts], dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / drawn


def _exact_limb_means(counts, column, valid, bits):
    """The limbs' sums in exact integers (Python's), added from the largest as the product's are."""
    x = np.asarray(column, dtype=np.float64)
    used = np.asarray(valid, bool) & np.isfinite(x)
    limbs, units = intervals._limbs(np.where(used, x, 0.0), bits)
    total = np.zeros(len(counts))
    for index, (limb, unit) in enumerate(zip(limbs, units)):
        exact = np.array([float(sum(int(c) * int(v) for c, v in zip(row, limb))) for row in counts])
        total = exact * unit if index == 0 else total + exact * unit
    drawn = np.array([float(sum(int(c) for c, u in zip(row, used) if u)) for row in counts])
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / drawn


@pytest.mark.parametrize("seed", range(8))
def test_resampled_means_are_exact_sums_whatever_the_blas(seed):
    """Each resample's mean is the correctly rounded sum (math.fsum) of its drawn values over their
    count when a column's values span two limbs (nearly always), and otherwise the exact limb sums
    added from the largest: never a sum rounded in the BLAS kernel's order.  Random ragged inputs:
    1 to 300 queries, NaN and infinite values, invalid queries, negative values, zero columns,
    magnitudes from 1e-300 to 1e300."""
    rng = np.random.default_rng(seed)
    for _ in range(6):
        n = int(rng.integers(1, 300))
        counts = resample_counts(n, 40, int(rng.integers(0, 1000)))
        columns = []
        for kind in range(7):
            x = rng.random(n) * rng.choice([1.0, -1.0, 1e-3], n)
            if kind == 1:
                x[rng.random(n) < 0.2] = np.nan
                x[rng.random(n) < 0.05] = np.inf
            elif kind == 2:
                x = np.zeros(n)
            elif kind == 3:
                x = x * 10.0 ** rng.integers(-30, 3, n)  # many limbs
            elif kind == 4:
                x = x * 10.0 ** rng.choice([-300, 0, 300], n)  # beyond the limbs' range
            elif kind == 5:
                x = rng.integers(0, 2, n).astype(float)
            columns.append(x)
        valid = rng.random(n) < 0.9
        got = intervals._resampled_means_many(counts, [(columns[:4], valid), (columns[4:], ~valid)])
        bits = 53 - int(counts.sum(axis=1).max()).bit_length()
        for (cols, ok), means in zip(((columns[:4], valid), (columns[4:], ~valid)), got):
            for column, mean in zip(cols, means):
                x = np.where(ok & np.isfinite(column), column, 0.0)
                limbs = intervals._limbs(x, bits)
                if limbs is None or len(limbs[0]) <= 2:
                    want = _fsum_means(counts, column, ok)
                else:
                    want = _exact_limb_means(counts, column, ok, bits)
                assert mean.tobytes() == want.tobytes()


def test_interval_bytes_do_not_depend_on_blas_threads():
    """The library's interval (no command line to limit BLAS to one thread) has the same bytes with
    OPENBLAS_NUM_THREADS=1 and 2 (and OMP's), and they are those of the plain reference (each
    resample's sums by math.fsum)."""
    import os
    import subprocess
    import sys

    code = ("import numpy as np; from ulnorm_eval.core import intervals; from ulnorm_eval.core.normalise import ul2;"
            "rng = np.random.default_rng(5); n = 400;"
            "cols = [rng.random(n) * 10.0 ** rng.integers(-8, 1, n) for _ in range(4)];"
            "print(repr(intervals.means_interval(cols, ul2, resamples=2000)))")
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        outs.append(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout)
    assert outs[0] == outs[1]
    rng = np.random.default_rng(5)
    n = 400
    cols = [rng.random(n) * 10.0 ** rng.integers(-8, 1, n) for _ in range(4)]
    real = intervals._resampled_means_many
    intervals._resampled_means_many = lambda counts, jobs: [[_fsum_means(counts, c, v) for c in cs] for cs, v in jobs]
    try:
        want = repr(intervals.means_interval(cols, ul2, resamples=2000))
    finally:
        intervals._resampled_means_many = real
    assert outs[0].strip() == want


@pytest.fixture(scope="module")
def robust_values(request):
    """Per-topic AP and nDCG@10 of Robust 2003's 17 runs (100 topics each)."""
    import ulnorm_eval

    data = request.getfixturevalue("shared") / "robust03"
    result = ulnorm_eval.evaluate(data / "qrels.txt", sorted(str(path) for path in (data / "runs").glob("input.*.gz")),
                                  ["AP", "nDCG@10"], variants=[])
    return [np.asarray(rr.values[m]) for m in result.metrics for rr in result.runs]


def test_plain_mean_interval_covers_by_simulation(robust_values):
    """eval --ci's interval (aggregate_intervals, the mean of the per-query values) on samples of 50 topics
    drawn from a real run's 100 topic scores, whose mean is the target: over 150 samples of each of the 34
    (run, measure) populations (5,100; one call, so one set of resamples, per population), the 95% interval
    holds the target in >= 93% of them (0.935-0.941 over three seeds of 10,200 samples: the percentile
    interval covers a little less than its level on 50 queries, Efron & Tibshirani 1993 ch. 14; sd of the
    share here 0.34 points), the 80% one in 76-82%."""
    rng = np.random.default_rng(12)
    hits = {0.95: 0, 0.80: 0}
    for index, population in enumerate(robust_values):
        target = population.mean()
        samples = [rng.choice(population, 50) for _ in range(150)]
        for level in hits:
            ends = np.array(intervals.aggregate_intervals(samples, level, seed=index))
            hits[level] += int(((ends[:, 0] <= target) & (target <= ends[:, 1])).sum())
    sims = 150 * len(robust_values)
    assert 0.93 <= hits[0.95] / sims <= 0.97, hits[0.95] / sims
    assert 0.76 <= hits[0.80] / sims <= 0.82, hits[0.80] / sims


def test_aggregate_interval_is_the_percentiles_of_the_resampled_means():
    """The interval of a column is the percentiles of the mean of its finite values drawn over the
    resamples of means_intervals (RESAMPLES of them)."""
    x = np.array([0.1, np.nan, 0.4, 0.9, 0.3, 0.0, 0.7])
    counts = resample_counts(7, intervals.RESAMPLES, seed=2)
    ok = np.isfinite(x)
    means = (counts * np.where(ok, x, 0.0)).sum(axis=1) / (counts * ok).sum(axis=1)
    means = means[np.isfinite(means)]
    got = intervals.aggregate_intervals([x], 0.9, seed=2)
    assert got[0] == pytest.approx(tuple(np.quantile(means, [0.05, 0.95])), abs=1e-12)


def test_eval_ci_gives_every_plain_mean_its_interval_in_every_format():
    """eval --ci (--alpha 0.1: a 90% interval) on two bundled runs: each 'all' row that is a mean (plain
    measures and normalisations) has as interval aggregate_intervals of its per-query values in query-id
    order, seed --seed, in the table (a column after the value), tsv and csv (two fields per metric, filled
    on 'all' rows) and json ('ci'); the library's ci= keyword gives the same; --alpha alone is refused."""
    import io
    import json

    import pandas as pd

    import ulnorm_eval
    from conftest import cli

    root = ROOT / "examples"
    qrels, runs = root / "qrels" / "dlhard-passage.qrels.txt", [root / "runs" / "bm25.run.gz", root / "runs" / "bm25_rm3.run.gz"]
    result = ulnorm_eval.evaluate(qrels, runs, ["nDCG@10", "AP"], variants=["UL2"], ci=0.9, seed=3)
    want = {}
    for rr in result.runs:
        order = np.argsort(np.asarray(rr.qids, dtype=object), kind="stable")
        for m in result.metrics:
            want[(rr.name, str(m))] = intervals.aggregate_intervals([np.asarray(rr.values[m])[order]], 0.9, seed=3)[0]
            assert rr.ci[m] == want[(rr.name, str(m))]
    args = ["-m", "nDCG@10", "-m", "AP", "--norm", "ul2", "--ci", "--alpha", "0.1", "--seed", "3", qrels, *runs]
    tsv = pd.read_csv(io.StringIO(cli("-f", "tsv", *args).stdout), sep="\t")
    csv = pd.read_csv(io.StringIO(cli("-f", "csv", *args).stdout))
    doc = json.loads(cli("-f", "json", *args).stdout)
    table = cli("-f", "table", *args).stdout
    assert "90% CI" in table and "90% CI: the mean's 90% percentile bootstrap interval" in table
    for (run, metric), (lo, hi) in want.items():
        for frame in (tsv, csv):
            row = frame[(frame["run"] == run) & (frame["query"] == "all")].iloc[0]
            assert (row[f"{metric} 90% CI low"], row[f"{metric} 90% CI high"]) == (lo, hi)
            assert frame[(frame["run"] == run) & (frame["query"] != "all")][f"{metric} 90% CI low"].isna().all()
        entry = next(r for r in doc["runs"] if r["name"] == run)
        assert entry["ci"][metric] == [lo, hi]
        if "(" not in metric:  # the table shows the plain measures' (its normalisation column: 'vs random')
            assert f"[{lo:.4f}, {hi:.4f}]" in table
    assert "UL2(AP) 90% CI low" in tsv.columns and len(want) == 8
    plain = cli("-f", "tsv", qrels, *runs).stdout
    assert "CI" not in plain.splitlines()[0]
    assert "--alpha needs --baseline RUN or --ci" in cli("--alpha", "0.1", qrels, *runs, code=2).output


def test_randomisation_interval_is_the_shifted_null_order_statistics():
    """K = 999 null values 0.001 .. 0.999 (shuffled): k = 25, t(25) = 0.025, t(975) = 0.975."""
    null = np.random.default_rng(0).permutation(np.arange(1, 1000) / 1000)
    lo, hi = intervals.randomisation_interval(0.6, null)
    assert (lo, hi) == pytest.approx((0.6 - 0.975, 0.6 - 0.025), abs=1e-15)
    assert intervals.randomisation_interval(0.6, np.append(null, np.nan)) == (lo, hi)  # NaN values left out
    assert intervals.randomisation_interval(0.974, null)[0] < 0 < intervals.randomisation_interval(0.976, null)[0]
    # 19 values: k = floor(20 x 0.025) = 0, no interval; 39: k = 1, the extremes
    assert np.isnan(intervals.randomisation_interval(0.5, null[:19])).all()
    lo, hi = intervals.randomisation_interval(0.5, np.arange(1, 40) / 40)
    assert (lo, hi) == pytest.approx((0.5 - 39 / 40, 0.5 - 1 / 40))
    assert np.isnan(intervals.randomisation_interval(float("nan"), null)).all()


@pytest.mark.parametrize("shape", ["normal", "skewed", "ties"])
def test_randomisation_interval_covers_a_statistic_drawn_as_its_null(shape):
    """A statistic exchangeable with its K = 999 null values: its interval holds 0 with probability
    (K + 1 - 2k) / (K + 1) = 0.95 whatever the null's shape; 2,000 trials, within 4 binomial errors."""
    rng = np.random.default_rng(7)
    trials = 2000
    draw = {"normal": lambda size: rng.normal(size=size), "skewed": lambda size: rng.exponential(size=size) ** 3,
            "ties": lambda size: rng.integers(0, 4, size) / 4.0}[shape]
    values = draw((trials, intervals.ORDERINGS + 1))
    held = 0
    for row in values:
        lo, hi = intervals.randomisation_interval(row[0], row[1:])
        held += lo <= 0 <= hi
    assert abs(held / trials - 0.95) <= 4 * np.sqrt(0.95 * 0.05 / trials) or (shape == "ties" and held / trials > 0.95)
