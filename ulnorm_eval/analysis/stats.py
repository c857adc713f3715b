"""Paired significance tests over queries: compare's ``pairwise_*`` tests on a matrix of differences
(a row per pair of systems), every row at once with shared seeded resamples, and the gate's one-sided
:func:`worse`; corrections, Kendall's tau and its bootstrap
interval, tau_AP, PAD (Karmaker & Feng 2022 eq. 8), swap rates, and Kanoulas & Aslam 2009's
variance components, Eρ² and Φ.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["PairedTest", "pairwise_t", "pairwise_wilcoxon", "pairwise_randomization", "pairwise_bootstrap", "worse",
           "GATE_TESTS", "tukey_null", "pairwise_tukey", "PAIRWISE", "FAMILYWISE", "adjust", "CORRECTIONS",
           "kendall_tau", "tau_interval", "tau_ap", "pad", "split_half_swap_rate", "swap_rate_between",
           "VarianceComponents", "variance_components", "erho2", "phi", "topics_needed"]


_BATCH_ELEMENTS = 4_000_000  # bound on the temporaries of the resampling tests


@dataclass(kw_only=True)
class PairedTest:
    """A paired test's results, one entry per pair (arrays; floats for one pair): ``diff`` = mean(d), d = x - y;
    the test's ``statistic``; ``p``, two-sided (the achieved significance level); ``effect``, Cohen's
    d_z = mean(d) / sd(d); ``ci_low``, ``ci_high``: the (1 - alpha) interval of the mean difference."""

    diff: np.ndarray
    statistic: np.ndarray
    p: np.ndarray
    effect: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray

    def __post_init__(self):
        for name, value in vars(self).items():  # one pair in, plain floats out
            if np.ndim(value) == 0:
                setattr(self, name, float(value))


def _moments(diffs):
    """The differences as float64 (at least two queries: the last axis), n, mean, sd and Cohen's d_z."""
    diffs = np.asarray(diffs, dtype=np.float64)
    if diffs.ndim == 0 or diffs.shape[-1] < 2:
        raise ValueError("a paired test needs at least two queries")
    mean, std = diffs.mean(axis=-1), _sd(diffs)
    return diffs, diffs.shape[-1], mean, std, _ratio(mean, std)


def _sd(diffs):
    """Sample sd over the last axis, 0 when it is rounding noise (equal differences such as 0.2)."""
    std = diffs.std(axis=-1, ddof=1)
    return np.where(std <= 1e-12 * np.abs(diffs).max(axis=-1, initial=0.0), 0.0, std)


def _ratio(num, den):
    """num / den, with 0/0 = 0 and x/0 = +-inf (a constant non-zero difference is decisive)."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0),
                        np.where(num == 0, 0.0, np.copysign(np.inf, num)))


def _t_test(moments: tuple, statistic, p_value, alpha) -> PairedTest:
    """The PairedTest of ``moments`` (n, mean, sd, effect) with its Student t-interval of the mean
    difference, mean +- t_{1-alpha/2, n-1} sd / sqrt(n) (scipy.stats.t.ppf)."""
    from scipy import stats

    n, mean, std, effect = moments
    half = stats.t.ppf(1 - alpha / 2, n - 1) * std / math.sqrt(n)
    return PairedTest(diff=mean, statistic=statistic, p=p_value, effect=effect, ci_low=mean - half, ci_high=mean + half)


def pairwise_t(diffs, alpha: float = 0.05, alternative: str = "two-sided") -> PairedTest:
    """Student's paired t-test: t = mean(d) / (sd(d)/sqrt(n)), n - 1 degrees of freedom.

    ``diffs``: differences x - y, shape (..., n queries); every leading index is one pair.  t and p
    are scipy.stats.ttest_1samp's (d against 0, which is ttest_rel's; ``alternative`` as scipy's).
    Where every difference is 0 the test is defined as t = 0, p = 1 (scipy leaves it NaN).  The
    interval is mean(d) +- t_{1-alpha/2, n-1} sd(d)/sqrt(n).
    """
    from scipy import stats

    return _scipy_test(diffs, alpha, lambda rows: stats.ttest_1samp(rows, 0.0, axis=-1, alternative=alternative))


def pairwise_wilcoxon(diffs, alpha: float = 0.05) -> PairedTest:
    """Wilcoxon's signed-rank test, two-sided (Wilcoxon 1945), every pair at once: scipy.stats.wilcoxon
    with its defaults (zero differences dropped, 'wilcox'; the exact null distribution up to 50 non-zero
    differences without ties, else the normal approximation), so the p-values are scipy's.  ``statistic``
    is scipy's, the smaller of the two signed-rank sums.  Where every difference is 0 the test is
    defined as statistic 0, p = 1 (scipy leaves it NaN).  The interval is the t-interval of ``pairwise_t``.
    """
    from scipy import stats

    return _scipy_test(diffs, alpha, lambda rows: stats.wilcoxon(rows, axis=-1))


def _scipy_test(diffs, alpha, test) -> PairedTest:
    """scipy's ``test`` on every row of differences (a row of zeros: statistic 0, p = 1) and the t-interval."""
    import warnings

    diffs, n, mean, std, effect = _moments(diffs)
    zero = np.all(diffs == 0, axis=-1)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's notes on constant rows, few non-zero differences
        res = test(np.where(zero[..., None], 1.0, diffs))
    return _t_test((n, mean, std, effect), np.where(zero, 0.0, res.statistic), np.where(zero, 1.0, res.pvalue), alpha)


def pairwise_randomization(diffs, reps: int = 10_000, seed: int = 0, alpha: float = 0.05) -> PairedTest:
    """Fisher's randomization test, two-sided, statistic mean(d) (Smucker, Allan & Carterette 2007):
    p = #{s : |mean(s d)| >= |mean(d)|} / 2^n over every sign pattern s when 2^n <= ``reps``, else
    (1 + #{...}) / (1 + reps) over ``reps`` seeded patterns shared by all pairs: :func:`randomization`'s
    rule, vectorised over pairs.  The interval is the t-interval of ``pairwise_t``."""
    diffs, n, mean, std, effect = _moments(diffs)
    exact = 2 ** n <= reps
    if exact:
        signs = 1.0 - 2.0 * ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1)  # every pattern once
    else:
        signs = np.random.default_rng(seed).choice([-1.0, 1.0], size=(reps, n))
    flat = diffs.reshape(-1, n)
    obs = np.abs(flat.mean(axis=1))
    tol = 1e-12 * np.maximum(1.0, obs)  # equal sums must count as "as extreme" despite rounding
    count = np.zeros(len(flat))
    per = max(1, _BATCH_ELEMENTS // max(1, len(signs)))
    for start in range(0, len(flat), per):
        null = np.abs(flat[start:start + per] @ signs.T) / n
        count[start:start + per] = (null >= (obs - tol)[start:start + per, None]).sum(axis=1)
    p_value = count / len(signs) if exact else (1.0 + count) / (1.0 + len(signs))
    return _t_test((n, mean, std, effect), mean, p_value.reshape(diffs.shape[:-1]), alpha)


def pairwise_bootstrap(diffs, reps: int = 1000, seed: int = 0, alpha: float = 0.05,
                       alternative: str = "two-sided") -> PairedTest:
    """Sakai's paired bootstrap test (Sakai, SIGIR 2006; used by Karmaker & Feng 2022 §4.4.2 and Kanoulas & Aslam 2009 §3.5).

    t(z) = mean(z) / (sd(z)/sqrt(n)) on the differences z; the differences are centred,
    w = z - mean(z), so that the null hypothesis holds, and B = ``reps`` resamples w* of size n
    are drawn with replacement, the same for every pair.  The achieved significance level is
    ASL = #{b : |t(w*_b)| >= |t(z)|} / B, two-sided as in Sakai (``alternative='less'``, the gate's:
    #{b : t(w*_b) <= t(z)} / B).  0/0 counts as t = 0 and x/0 as infinite.  The interval is the percentile interval of mean(z*) = mean(z) + mean(w*).

    A resample is held as the multinomial counts c of each query (B x n), so mean(w*) = c.w/n
    and the sum of squares = c.w^2 are two matrix products over all pairs at once.
    """
    diffs, n, mean, std, effect = _moments(diffs)
    counts = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=reps).astype(np.float64)
    flat = diffs.reshape(-1, n)
    means = flat.mean(axis=1)
    side = np.abs if alternative == "two-sided" else np.negative  # 'less': -t against -t(z)
    observed = side(_ratio(means, _sd(flat) / math.sqrt(n)))
    centred = flat - means[:, None]
    scale = np.abs(flat).max(axis=1, initial=0.0)[:, None]
    asl, low, high = (np.empty(len(flat)) for _ in range(3))
    per = max(1, _BATCH_ELEMENTS // reps)
    for start in range(0, len(flat), per):
        block = slice(start, start + per)
        boot_means = centred[block] @ counts.T / n  # (pairs, reps)
        boot_squares = (centred[block] ** 2) @ counts.T - n * boot_means ** 2
        boot_statistic = side(_t_of(boot_means, boot_squares, n, scale[block]))
        bar = observed[block]  # ties count as extreme
        bar = np.subtract(bar, 1e-12 * np.abs(bar), out=bar.copy(), where=np.isfinite(bar))
        asl[block] = (boot_statistic >= bar[:, None]).mean(axis=1)
        quantiles = np.quantile(boot_means, [alpha / 2, 1 - alpha / 2], axis=1)
        low[block], high[block] = means[block] + quantiles[0], means[block] + quantiles[1]
    shape = diffs.shape[:-1]
    return PairedTest(diff=mean, statistic=_ratio(mean, std / math.sqrt(n)), p=asl.reshape(shape), effect=effect,
                      ci_low=low.reshape(shape), ci_high=high.reshape(shape))


def _t_of(mean, sum_squares, n: int, scale):
    """t = mean / (sd / sqrt(n)) from a mean and its sum of squared deviations; float noise must not turn
    a resample of equal values (sd 0) into a huge t: a sum of squares within 1e-12 n scale^2 is no spread,
    and then a mean within 1e-9 scale of 0 no difference (``scale``: the largest |difference|)."""
    flat = sum_squares <= 1e-12 * n * scale ** 2
    std = np.where(flat, 0.0, np.sqrt(np.maximum(sum_squares, 0.0) / (n - 1)))
    return _ratio(np.where(flat & (np.abs(mean) <= 1e-9 * scale), 0.0, mean), std / math.sqrt(n))


def worse(test: str, run_values, base_values, seed: int = 0) -> float:
    """The gate's one-sided p-value of "the run is worse than the baseline" (``--test``) on d = x - y,
    pairs with a NaN dropped (NaN with fewer than 2): :func:`pairwise_t` or :func:`pairwise_bootstrap`
    with ``alternative='less'``, or Fisher's randomization test by scipy.stats.permutation_test
    (``permutation_type='samples'``: every sign pattern when 2^n <= 10,000, else 10,000 seeded draws,
    p = (count + 1) / (B + 1); p = 1 when every difference is 0)."""
    from scipy import stats

    run, base = np.asarray(run_values, dtype=np.float64), np.asarray(base_values, dtype=np.float64)
    keep = ~(np.isnan(run) | np.isnan(base))
    run, base = run[keep], base[keep]
    if len(run) < 2:
        return math.nan
    if test != "randomization":
        return float(PAIRWISE[test](run - base, alternative="less", **({"seed": seed} if test == "bootstrap" else {})).p)
    if not np.any(run - base):
        return 1.0
    return float(stats.permutation_test((run, base), lambda a, b, axis: np.mean(a - b, axis=axis), vectorized=True,
                                        permutation_type="samples", alternative="less", n_resamples=10_000,
                                        random_state=np.random.default_rng(seed)).pvalue)


GATE_TESTS = ("t", "randomization", "bootstrap")  # the tests of :func:`worse`


def tukey_null(scores, reps: int = 10_000, seed: int = 0) -> tuple:
    """The permutation distribution of the randomised Tukey HSD test (Carterette 2012 §4.2; Sakai 2014):
    under H0 the system labels of each topic are exchangeable; the statistic of a permutation of every
    topic's labels is the largest difference of two systems' means, max_s mean_t(y*_st) - min_s mean_t(y*_st).

    ``scores``: systems x topics.  Permuting every topic by the same permutation permutes the means and
    keeps their range, so the first topic stays fixed: when (m!)^(n-1) <= ``reps`` every labelling is
    enumerated once (exact); otherwise ``reps`` seeded draws, each topic's labels shuffled independently.
    Returns (the sorted ranges, exact)."""
    import itertools

    scores = np.asarray(scores, dtype=np.float64)
    m, n = scores.shape
    topics = scores.T  # topics x systems
    # in logs first: (m!)^(n-1) of 150 runs and 50 topics has 13,000 digits
    if (n - 1) * math.lgamma(m + 1) <= math.log(reps) + 1e-9 and math.factorial(m) ** (n - 1) <= reps:
        orders = np.array(list(itertools.permutations(range(m))))
        codes = np.arange(len(orders) ** (n - 1))
        sums = np.broadcast_to(topics[0], (len(codes), m)).copy()
        for topic in range(1, n):
            sums += topics[topic][orders[codes // len(orders) ** (topic - 1) % len(orders)]]
        return np.sort(sums.max(axis=1) - sums.min(axis=1)) / n, True
    rng = np.random.default_rng(seed)
    per = max(1, _BATCH_ELEMENTS // (n * m))
    ranges = []
    for start in range(0, reps, per):
        means = rng.permuted(np.broadcast_to(topics, (min(per, reps - start), n, m)), axis=2).mean(axis=1)
        ranges.append(means.max(axis=1) - means.min(axis=1))
    return np.sort(np.concatenate(ranges)), False


def pairwise_tukey(diffs, null: tuple, alpha: float = 0.05) -> PairedTest:
    """The randomised Tukey HSD test of each pair, from the distribution ``null`` of :func:`tukey_null`
    over all the systems compared: p = #{b : range_b >= |mean(d)|} / B when enumerated, else
    (1 + #{...}) / (1 + B), as :func:`pairwise_randomization`.  The p-values are adjusted for every
    pair of every system by the test itself (one distribution of the largest difference), so no further
    correction applies (``compare``'s correction is 'inherent').  ``statistic``: the mean difference;
    the interval is the (uncorrected) t-interval of ``pairwise_t``."""
    diffs, n, mean, std, effect = _moments(diffs)
    ranges, exact = null
    observed = np.abs(mean)
    count = len(ranges) - np.searchsorted(ranges, observed - 1e-12 * np.maximum(1.0, observed), side="left")
    p_value = count / len(ranges) if exact else (1.0 + count) / (1.0 + len(ranges))
    return _t_test((n, mean, std, effect), mean, p_value, alpha)


PAIRWISE = {"t": pairwise_t, "wilcoxon": pairwise_wilcoxon, "randomization": pairwise_randomization,
            "bootstrap": pairwise_bootstrap, "tukey": pairwise_tukey}
FAMILYWISE = ("tukey",)  # tests whose p-values are adjusted for all pairs: their correction is 'inherent'


# --------------------------------------------------------------------------- multiple comparisons

def adjust(p_values, method: str = "holm") -> np.ndarray:
    """p-values adjusted for testing the whole family ``p_values`` (1-D; NaN entries are not counted).

    * ``none``: unchanged;
    * ``bonferroni``: min(1, m p_i) — controls the family-wise error rate;
    * ``holm``: with p sorted ascending, p~_(i) = max_{j<=i} min(1, (m - j + 1) p_(j)) (Holm 1979)
      — the same FWER control as Bonferroni, never less powerful;
    * ``bh``: Benjamini & Hochberg (1995), controls the false discovery rate
      (scipy.stats.false_discovery_control);
    * ``inherent``: unchanged, the p-values of a test that adjusts them itself (Tukey HSD, ``FAMILYWISE``).

    Holm's step-down is written here: scipy has none (docs/dependencies.md).
    """
    p_values = np.asarray(p_values, dtype=np.float64)
    out = p_values.copy()
    valid = ~np.isnan(p_values)
    valid_p = p_values[valid]
    n_tests = len(valid_p)
    if method in ("none", "inherent") or n_tests == 0:
        return out
    if method == "bonferroni":
        out[valid] = np.minimum(1.0, valid_p * n_tests)
    elif method == "holm":
        order = np.argsort(valid_p, kind="stable")
        stepped = np.maximum.accumulate(np.minimum(1.0, valid_p[order] * (n_tests - np.arange(n_tests))))
        res = np.empty(n_tests)
        res[order] = stepped
        out[valid] = res
    elif method == "bh":
        from scipy import stats
        out[valid] = stats.false_discovery_control(valid_p, method="bh")
    else:
        raise ValueError(f"unknown correction {method!r} (none, bonferroni, holm, bh)")
    return out


CORRECTIONS = ("none", "bonferroni", "holm", "bh")


# --------------------------------------------------------------------------- rankings

def kendall_tau(first, second) -> float:
    """Kendall's tau-b between the rankings the scores ``first`` and ``second`` induce (scipy.stats.kendalltau).

    Without ties it equals tau-a = 1 - 2 d / C(n, 2), d the discordant pairs (Karmaker & Feng 2022 Tables 6, 16;
    Kanoulas & Aslam 2009 Table 4).  NaN with a NaN score or when either ranking ties every pair.
    """
    import warnings

    from scipy import stats

    first, second = np.asarray(first, float), np.asarray(second, float)
    if first.shape != second.shape:
        raise ValueError("kendall_tau needs two score lists of equal length")
    if len(first) < 2 or np.isnan(first).any() or np.isnan(second).any():
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a constant ranking: NaN, said by the value
        tau = float(stats.kendalltau(first, second).statistic)
    return round(tau, 12)  # scipy's square roots leave 0.9999999999999999 for identical rankings


def tau_interval(first, second, kept=(None, None), reps: int = 1000, seed: int = 0, alpha: float = 0.05) -> tuple:
    """The (1 - ``alpha``) percentile bootstrap interval over topics of :func:`kendall_tau` between the
    systems' means under two metrics (Efron & Tibshirani 1993 ch. 13; topics resampled as Sakai 2006).

    ``first``, ``second``: systems x topics; ``kept``: each metric's mask of the topics its means average
    over (None: all), so that a resample's means are each metric's means over its drawn kept topics, as
    the point estimate's are.  ``reps`` resamples of the topics (core.intervals.resample_counts, seeded);
    a resample drawing no kept topic of a metric, or tying every pair, is left out.  (NaN, NaN) if all are."""
    from ..core.intervals import resample_counts

    first, second = np.asarray(first, np.float64), np.asarray(second, np.float64)
    n = first.shape[1]
    counts = resample_counts(n, reps, seed)
    means = []
    for scores, mask in zip((first, second), kept):
        mask = np.ones(n, bool) if mask is None else np.asarray(mask, bool)
        with np.errstate(invalid="ignore", divide="ignore"):
            means.append((np.where(mask, scores, 0.0) @ counts.T) / (counts @ mask))
    taus = np.array([kendall_tau(a, b) for a, b in zip(means[0].T, means[1].T)])
    taus = taus[np.isfinite(taus)]
    if not len(taus):
        return float("nan"), float("nan")
    low, high = np.quantile(taus, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def tau_ap(reference, compared) -> float:
    """AP correlation tau_AP of the ranking by ``compared`` against the ranking by ``reference`` (Yilmaz,
    Aslam & Robertson 2008, eq. 2):

        tau_AP = 2/(N - 1) sum_{i=2..N} C(i)/(i - 1) - 1,

    the items ordered by ``compared`` (descending), C(i) the items above rank i that ``reference`` also
    ranks above the item at rank i.  Disagreements near the top weigh more; it is not symmetric.  Ties
    (the paper assumes none): items ``compared`` ties are ordered as given (a stable sort), and an item
    above rank i that ``reference`` ties with it counts 1/2.  1 for the same order, -1 for the reverse.
    NaN for fewer than two items or a NaN score."""
    reference, compared = np.asarray(reference, np.float64), np.asarray(compared, np.float64)
    if reference.shape != compared.shape:
        raise ValueError("tau_ap needs two score lists of equal length")
    count = len(reference)
    if count < 2 or np.isnan(reference).any() or np.isnan(compared).any():
        return float("nan")
    ref = reference[np.argsort(-compared, kind="stable")]  # the reference's scores in the compared order
    above = np.triu(np.ones((count, count), bool), 1)  # above[j, i]: j is ranked above i
    correct = ((ref[:, None] > ref[None, :]) + 0.5 * (ref[:, None] == ref[None, :])) * above
    ranks = np.arange(1, count)
    return float(2.0 / (count - 1) * np.sum(correct.sum(axis=0)[1:] / ranks) - 1.0)


def pad(means) -> float:
    """Percentage absolute difference averaged over all pairs of systems (Karmaker & Feng 2022 eq. 8, Tables 9, 19).

    PAD(i, j) = |m_i - m_j| / max(|m_i|, |m_j|) * 100.  The paper divides by max(m_i, m_j); the
    absolute values agree with it for non-negative means and keep PAD in [0, 200] when a variant
    such as UL2 averages below 0 (the paper is silent on that case).  Pairs with both means 0 are
    left out.
    """
    means_array = np.asarray(means, dtype=np.float64)
    left, right = np.triu_indices(len(means_array), 1)
    den = np.maximum(np.abs(means_array[left]), np.abs(means_array[right]))
    valid = den > 0
    return float(np.mean(np.abs(means_array[left] - means_array[right])[valid] / den[valid]) * 100) if valid.any() else float("nan")


def swap_rate_between(means_a, means_b) -> tuple[float, int, int]:
    """The swap rate between two experiments: the share of system pairs ordered oppositely.

    ``means_a``, ``means_b``: each system's mean score in experiment A and B (the same systems, in
    the same order: two query sets, two datasets).  A pair (i, j) swaps when d_A d_B < 0, with
    d = mean_i - mean_j; a pair tied in either experiment does not swap.  Returns (rate, swaps,
    pairs): Karmaker & Feng 2022 Tables 10, 11, 20 and 21 (docs/comparing.md).
    """
    first, second = np.asarray(means_a, np.float64), np.asarray(means_b, np.float64)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError("swap_rate_between needs two score lists of equal length")
    left, right = np.triu_indices(len(first), 1)
    swaps = int(np.sum((first[left] - first[right]) * (second[left] - second[right]) < 0))
    return (swaps / len(left) if len(left) else float("nan")), swaps, len(left)


def split_half_swap_rate(score_matrix, trials: int = 1000, seed: int = 0, half: int | None = None):
    """Split-half swap rate (Voorhees & Buckley 2002; Sakai 2006): the share of (split, pair) events where
    two disjoint random halves of the queries (``trials`` seeded splits, ``half`` = floor(n/2) each)
    order a pair of systems oppositely, d1 d2 < 0.  Karmaker & Feng 2022 §4.4.4 compare two fixed
    experiments instead (:func:`swap_rate_between`).  ``score_matrix``: systems x queries.  Computed from
    each system's half means, one system's pairs at a time (memory linear in the systems); half means
    equal within 1e-12 of the largest |score| are a tie, which never swaps."""
    score_matrix = np.asarray(score_matrix, dtype=np.float64)
    n_systems, n = score_matrix.shape
    half = n // 2 if half is None else int(half)
    if half < 1 or 2 * half > n:
        raise ValueError(f"half must lie in 1..{n // 2} for {n} queries")
    rng = np.random.default_rng(seed)
    place = np.argsort(np.argsort(rng.random((trials, n)), axis=1), axis=1)  # each query's place in its shuffle
    weights1 = (place < half) / half
    weights2 = ((place >= half) & (place < 2 * half)) / half
    scale = np.abs(score_matrix).max(initial=0.0)
    unit = scale * 1e-12 if scale > 0 else 1.0
    # each system's mean on each half, as integers on the grid (|K| <= 1e12: exact in float64)
    ranks1 = np.rint((score_matrix @ weights1.T) / unit)  # (systems, trials)
    ranks2 = np.rint((score_matrix @ weights2.T) / unit)
    events = n_systems * (n_systems - 1) // 2 * trials
    return _discordant(ranks1.T, ranks2.T) / events if events else math.nan


def _discordant(A, B) -> int:
    """Pairs (i, j) with (A_i - A_j)(B_i - B_j) < 0 in each row of A, B (trials x systems), summed: each
    system against the later ones, every row at once (the product of two differences of whole numbers
    below 2^53 has the exact sign; a pair tied in either never counts)."""
    a, b = np.ascontiguousarray(A.T), np.ascontiguousarray(B.T)  # systems x trials
    return sum(int(np.count_nonzero((a[system + 1:] - a[system]) * (b[system + 1:] - b[system]) < 0))
               for system in range(a.shape[0] - 1))


# --------------------------------------------------------------------------- generalizability theory

@dataclass(frozen=True, kw_only=True)
class VarianceComponents:
    """Variance components of a system x topic design with one score per cell (Kanoulas & Aslam 2009 §2.2)."""

    system: float  # sigma^2(s): real differences between systems
    topic: float  # sigma^2(t): topic difficulty, shared by all systems
    residual: float  # sigma^2(s:t, e): system-topic interaction confounded with error
    n_topics: int
    ms_system: float
    ms_topic: float
    ms_residual: float


def variance_components(score_matrix) -> VarianceComponents:
    """Two-way crossed ANOVA (systems x topics, no replication), expected-mean-square estimators.

    MS_s = n_t sum_s (m_s - m)^2 / (n_s - 1), MS_t = n_s sum_t (m_t - m)^2 / (n_t - 1),
    MS_st = sum (y_st - m_s - m_t + m)^2 / ((n_s - 1)(n_t - 1));
    sigma^2(s:t) = MS_st, sigma^2(s) = (MS_s - MS_st)/n_t, sigma^2(t) = (MS_t - MS_st)/n_s, negative
    estimates set to 0 (Brennan 2001, whom Kanoulas & Aslam 2009 follows; the paper prints no estimator).
    A mean square at the level of rounding (<= 1e-12 of the mean square of Y) is 0: two runs with the
    same scores differ in their means only by rounding, which must not read as a stable system effect.
    """
    score_matrix = np.asarray(score_matrix, dtype=np.float64)
    n_systems, n_topics = score_matrix.shape
    if n_systems < 2 or n_topics < 2:
        raise ValueError("variance components need at least two systems and two topics")
    grand_mean = score_matrix.mean()
    ms_, mt_ = score_matrix.mean(axis=1), score_matrix.mean(axis=0)
    MSs = n_topics * ((ms_ - grand_mean) ** 2).sum() / (n_systems - 1)
    MSt = n_systems * ((mt_ - grand_mean) ** 2).sum() / (n_topics - 1)
    MSst = ((score_matrix - ms_[:, None] - mt_[None, :] + grand_mean) ** 2).sum() / ((n_systems - 1) * (n_topics - 1))
    tiny = 1e-12 * float(np.mean(score_matrix * score_matrix))
    MSs, MSt, MSst = (0.0 if value <= tiny else value for value in (MSs, MSt, MSst))
    return VarianceComponents(system=max((MSs - MSst) / n_topics, 0.0), topic=max((MSt - MSst) / n_systems, 0.0),
                              residual=float(MSst), n_topics=n_topics, ms_system=float(MSs), ms_topic=float(MSt),
                              ms_residual=float(MSst))


def erho2(components: VarianceComponents, n: int | None = None) -> float:
    """Generalizability coefficient, Kanoulas & Aslam 2009 eq. 1: sigma^2(s) / (sigma^2(s) + sigma^2(s:t)/n).

    ``n`` is the number of topics projected to (default: the number the components came from).
    Stability of the *ranking* (relative error).  0 when sigma^2(s) = 0.
    """
    n = components.n_topics if n is None else n
    den = components.system + components.residual / n
    return components.system / den if den > 0 else 0.0


def phi(components: VarianceComponents, n: int | None = None) -> float:
    """Dependability coefficient, Kanoulas & Aslam 2009 eq. 2: sigma^2(s) / (sigma^2(s) + (sigma^2(t) + sigma^2(s:t))/n).

    Stability of the *scores* (absolute error); never above Eρ².  0 when sigma^2(s) = 0.
    """
    n = components.n_topics if n is None else n
    den = components.system + (components.topic + components.residual) / n
    return components.system / den if den > 0 else 0.0


def topics_needed(components: VarianceComponents, target: float = 0.95) -> float:
    """Fewest topics n with Φ(n) >= target, eq. 2 solved for n:
    n = ceil(target (sigma^2(t) + sigma^2(s:t)) / ((1 - target) sigma^2(s))); inf when sigma^2(s) = 0; at least 1."""
    if not 0 < target < 1:
        raise ValueError("target must lie strictly between 0 and 1")
    if components.system <= 0:
        return math.inf
    n = math.ceil(target * (components.topic + components.residual) / ((1 - target) * components.system) - 1e-9)
    return max(n, 1)
