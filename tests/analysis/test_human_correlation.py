"""Uncertainty of the summarisation correlations, and which level the dissertation's tables are at.

Oracles: scipy's correlations on every bootstrap resample in a plain loop; the k/66 grid of Kendall's
tau over 12 systems counted from the printed values.  Private name: ``human_correlation._corr_rows``,
the vectorised correlations, compared with scipy's in a plain loop.
"""
from __future__ import annotations


import numpy as np
import pytest
import scipy.stats as sps

from ulnorm_eval.analysis.human_correlation import bootstrap_correlations, correlate


def _loop(values, human, base, reps, seed, level, method):
    rng = np.random.default_rng(seed)
    D = next(iter(values.values())).shape[1]
    idx = rng.integers(0, D, size=(reps, D))
    out = {}
    for name, v in values.items():
        for dim, h in human.items():
            rs = []
            for cols in idx:
                if level == "summary":
                    cs = [correlate(v[:, d], h[:, d], method) for d in cols]
                    cs = [c for c in cs if np.isfinite(c)]
                    rs.append(np.mean(cs) if cs else np.nan)
                else:
                    rs.append(correlate(np.nanmean(v[:, cols], axis=1), np.nanmean(h[:, cols], axis=1), method))
            out[(name, dim)] = np.array(rs)
    res = {}
    for (name, dim), r in out.items():
        b = base.get(name)
        lo, hi = np.percentile(r[np.isfinite(r)], [2.5, 97.5])
        if b is None:
            res[(name, dim)] = (lo, hi, np.nan, np.nan)
            continue
        p0 = out[(b, dim)]
        pa = (r - p0) / np.abs(p0) * 100
        pa = pa[np.isfinite(pa)]
        res[(name, dim)] = (lo, hi, *np.percentile(pa, [2.5, 97.5]))
    return res


@pytest.mark.parametrize("level", ["summary", "system"])
@pytest.mark.parametrize("method", ["kendall", "spearman", "pearson"])
def test_bootstrap_intervals_equal_a_loop_over_resamples(level, method):
    rng = np.random.default_rng(3)
    S, D = 6, 9
    human = {"coh": rng.integers(1, 6, size=(S, D)).astype(float)}
    plain = rng.random((S, D))
    plain[2, 4] = np.nan  # a missing summary
    values = {"M": plain, "V(M)": plain ** 2 + 0.3 * rng.random((S, D))}
    base = {"V(M)": "M"}
    got = bootstrap_correlations(values, human, methods=(method,), levels=(level,), base=base, reps=60, seed=9)
    want = _loop(values, human, base, 60, 9, level, method)
    for (name, dim), w in want.items():
        g = got[(level, method, name, dim)]
        np.testing.assert_allclose(g[:2], w[:2], rtol=1e-10, atol=1e-12)
        if name in base:
            np.testing.assert_allclose(g[2:], w[2:], rtol=1e-9, atol=1e-9)
        else:
            assert np.isnan(g[2]) and np.isnan(g[3])


def test_vectorised_correlations_equal_scipy():
    # private: the vectorised correlation kernel against scipy, row by row
    from ulnorm_eval.analysis.human_correlation import _corr_rows

    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, size=(20, 12)).astype(float)  # many ties
    y = rng.random((20, 12))
    for method, f in (("kendall", sps.kendalltau), ("spearman", sps.spearmanr), ("pearson", sps.pearsonr)):
        got = _corr_rows(x, y, method)
        want = [f(a, b).statistic for a, b in zip(x, y)]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_which_dissertation_tables_are_system_level_kendall_over_12_systems():
    """Kendall's tau over 12 systems takes values k/66.  Six of the eleven three-decimal values printed
    in Feng 2023 Tables 8.1-8.3 are such values (about 7% of three-decimal numbers are); Table 9.1's
    two-decimal values 0.04, 0.1, 0.13 and 0.4 are not (3/66, 7/66, 9/66 and 26/66 print 0.05, 0.11,
    0.14 and 0.39), so they cannot be system-level Kendall over its 12 systems."""
    grid3 = {round(k / 66, 3) for k in range(-66, 67)}
    tables_8 = [-0.106, 0.167, 0.045, -0.198, -0.076, 0.351, 0.106, 0.151, 0.412, 0.303, -0.078]
    on = [v for v in tables_8 if round(v, 3) in grid3]
    assert on == [-0.106, 0.167, 0.045, -0.076, 0.106, 0.303]
    share = len(grid3) / 2001  # of the three-decimal numbers in [-1, 1]
    assert 0.06 < share < 0.07
    # the chance of 6 or more of 11 landing on the grid by accident
    p = sum(math_comb(11, j) * share ** j * (1 - share) ** (11 - j) for j in range(6, 12))
    assert p < 1e-4
    grid2 = {round(k / 66 + 1e-12, 2) for k in range(-66, 67)}
    table_9_1 = [0.08, 0.09, 0.04, 0.13, 0.08, 0.1, 0.04, 0.12, 0.08, 0.1, 0.4, 0.12]
    off = sorted({v for v in table_9_1 if v not in grid2})
    assert off == [0.04, 0.1, 0.13, 0.4]


def math_comb(n, k):
    import math

    return math.comb(n, k)
