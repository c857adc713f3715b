"""Paired significance tests over queries (the CI gate's --test, reusable by `compare`).

Both take per-query values of two systems on the same queries, ``x`` (the run) and ``y`` (the
baseline), and test the mean of the differences ``d = x - y``.  ``alternative`` follows scipy:
'less' asks whether x is worse than y (the gate's one-sided question), 'greater' the opposite,
'two-sided' either.  Pairs with a NaN on either side (an undefined query left out with
``--undefined skip``) are dropped first.  When every difference is 0 the p-value is 1: there is
no evidence of any difference (scipy would return NaN).
"""
from __future__ import annotations

import numpy as np

__all__ = ["paired", "paired_t", "randomization"]


def paired(x, y) -> tuple[np.ndarray, np.ndarray]:
    """The two value arrays as float64 with NaN pairs removed."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"paired tests need equal lengths, got {x.shape} and {y.shape}")
    ok = ~(np.isnan(x) | np.isnan(y))
    return x[ok], y[ok]


def paired_t(x, y, alternative: str = "two-sided") -> tuple[float, float]:
    """Student's paired t-test: (t, p) with t = mean(d) / (sd(d) / sqrt(n)), n - 1 degrees of freedom.

    scipy.stats.ttest_rel; NaN p-value when fewer than 2 pairs remain.
    """
    from scipy import stats

    x, y = paired(x, y)
    if len(x) < 2:
        return float("nan"), float("nan")
    d = x - y
    if not np.any(d != d[0]):  # constant differences: sd = 0, the t statistic is undefined
        if d[0] == 0:
            return 0.0, 1.0
        # a constant non-zero shift is as strong as evidence gets
        worse = d[0] < 0
        p = 0.0 if alternative == "two-sided" or (alternative == "less") == worse else 1.0
        return (-np.inf if worse else np.inf), p
    res = stats.ttest_rel(x, y, alternative=alternative)
    return float(res.statistic), float(res.pvalue)


def randomization(x, y, alternative: str = "two-sided", n_resamples: int = 10_000,
                  seed: int | None = 0) -> tuple[float, float]:
    """Paired randomization (sign-flip) test of mean(d): (mean difference, p).

    Under H0 each query's pair is exchangeable, so the sign of each d_i is flipped at random;
    p is the share of the flipped means at least as extreme as the observed one (Fisher's
    randomization test; Smucker, Allan & Carterette, CIKM 2007).  scipy.stats.permutation_test
    with ``permutation_type='samples'``: exact enumeration of all 2^n sign patterns when
    2^n <= n_resamples, otherwise ``n_resamples`` seeded draws with the (count + 1) / (B + 1)
    correction.
    """
    from scipy import stats

    x, y = paired(x, y)
    if len(x) == 0:
        return float("nan"), float("nan")
    d = x - y
    if not np.any(d):
        return 0.0, 1.0

    def mean_diff(a, b, axis):
        return np.mean(a - b, axis=axis)

    res = stats.permutation_test((x, y), mean_diff, permutation_type="samples", vectorized=True,
                                 alternative=alternative, n_resamples=n_resamples,
                                 random_state=np.random.default_rng(seed))
    return float(res.statistic), float(res.pvalue)
