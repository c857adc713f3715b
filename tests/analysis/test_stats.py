"""The statistics behind `compare`: paired tests, corrections, tau, PAD, swap rate, G-theory.

Oracles: scipy (ttest_rel, its confidence interval, wilcoxon, kendalltau, permutation_test through
stats.worse), brute-force enumeration of sign flips, bootstrap resamples and Tukey HSD's
label permutations, a literal tau_AP, and hand-worked numbers (corrections, PAD, a two-way ANOVA
checked with exact fractions).
"""
from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats as sps

from ulnorm_eval.analysis import stats


def _pairs(Y):
    i, j = np.triu_indices(len(Y), 1)
    return i, j, Y[i] - Y[j]


@pytest.fixture(scope="module")
def scores():
    return np.random.default_rng(7).random((6, 25))


# --------------------------------------------------------------------------- t-test

def test_pairwise_t_equals_scipy_ttest_rel(scores):
    i, j, D = _pairs(scores)
    res = stats.pairwise_t(D)
    for k, (a, b) in enumerate(zip(i, j)):
        ref = sps.ttest_rel(scores[a], scores[b])
        assert res.p[k] == pytest.approx(ref.pvalue, rel=1e-12)
        assert res.statistic[k] == pytest.approx(ref.statistic, rel=1e-12)
        lo, hi = ref.confidence_interval(0.95)
        assert (res.ci_low[k], res.ci_high[k]) == pytest.approx((lo, hi), rel=1e-12)
        d = scores[a] - scores[b]
        assert res.effect[k] == pytest.approx(d.mean() / d.std(ddof=1))
        # and the CI gate's one-sided test agrees: half the two-sided p on the side of the difference
        p_less = stats.worse("t", scores[a], scores[b])
        assert p_less == pytest.approx(res.p[k] / 2 if d.mean() < 0 else 1 - res.p[k] / 2, rel=1e-12)


def test_pairwise_t_degenerate_differences():
    res = stats.pairwise_t(np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]))
    assert list(res.p) == [1.0, 0.0]
    assert res.statistic[0] == 0.0 and res.statistic[1] == math.inf
    one = stats.pairwise_t(np.array([0.1, 0.3, -0.1]))
    assert isinstance(one.p, float)


# --------------------------------------------------------------------------- randomization

def _brute_randomization(d):
    obs = abs(np.mean(d))
    flips = [abs(np.mean(np.array(s) * d)) for s in itertools.product((1, -1), repeat=len(d))]
    return sum(f >= obs - 1e-12 for f in flips) / len(flips)


def test_randomization_exact_by_hand():
    # d = (1, 2, 3): of the 8 sign patterns only +++ and --- reach |sum| = 6
    assert stats.pairwise_randomization(np.array([1.0, 2.0, 3.0])).p == 0.25
    # ties with the observed statistic count as extreme: (1, 1) -> ++, -- of 4
    assert stats.pairwise_randomization(np.array([1.0, 1.0])).p == 0.5


def test_randomization_exact_enumerates_all_sign_flips():
    rng = np.random.default_rng(3)
    D = rng.normal(0.05, 0.2, size=(5, 9))
    res = stats.pairwise_randomization(D, reps=10_000)  # 2^9 = 512 <= reps: exact
    for k in range(len(D)):
        assert res.p[k] == _brute_randomization(D[k])
        # scipy.stats.permutation_test, the CI gate's, counts the same patterns (one side: "less")
        less = sum(np.mean(np.array(s) * D[k]) <= D[k].mean() + 1e-12
                   for s in itertools.product((1, -1), repeat=9)) / 2 ** 9
        assert stats.worse("randomization", D[k], np.zeros(9)) == pytest.approx(less, abs=1e-12)


def test_randomization_monte_carlo_is_seeded_and_close_to_exact():
    d = np.random.default_rng(5).normal(0.08, 0.3, size=14)  # 2^14 = 16384 patterns
    exact = _brute_randomization(d)
    a = stats.pairwise_randomization(d, reps=4000, seed=11)
    b = stats.pairwise_randomization(d, reps=4000, seed=11)
    c = stats.pairwise_randomization(d, reps=4000, seed=12)
    assert a.p == b.p and a.p != c.p
    assert abs(a.p - exact) < 4 * math.sqrt(exact * (1 - exact) / 4000) + 1 / 4001


# --------------------------------------------------------------------------- bootstrap

def _exact_bootstrap_asl(d):
    """Sakai's ASL with every one of the n^n equally likely resamples (0/0 = 0, x/0 = inf)."""
    n = len(d)
    w = d - d.mean()
    t0 = abs(d.mean() / (d.std(ddof=1) / math.sqrt(n)))
    hits = 0
    for idx in itertools.product(range(n), repeat=n):
        s = w[list(idx)]
        m, sd = s.mean(), s.std(ddof=1)
        if abs(m) < 1e-12:
            t = 0.0
        elif sd < 1e-12:
            t = math.inf
        else:
            t = abs(m / (sd / math.sqrt(n)))
        hits += t >= t0 - 1e-12
    return hits / n ** n


def test_bootstrap_matches_enumerated_resamples():
    # d = (1, 2, 3): w = (-1, 0, 1), t(z) = 2 sqrt(3); only (-1,-1,-1) and (1,1,1) are as extreme
    d = np.array([1.0, 2.0, 3.0])
    assert _exact_bootstrap_asl(d) == pytest.approx(2 / 27)
    d5 = np.array([0.3, -0.1, 0.4, 0.2, 0.05])
    exact5 = _exact_bootstrap_asl(d5)
    for dd, exact in ((d, 2 / 27), (d5, exact5)):
        reps = 100_000
        got = stats.pairwise_bootstrap(dd, reps=reps, seed=1).p
        assert abs(got - exact) < 4 * math.sqrt(exact * (1 - exact) / reps)


def test_bootstrap_is_reproducible_and_shares_resamples(scores):
    _, _, D = _pairs(scores)
    a = stats.pairwise_bootstrap(D, reps=500, seed=4)
    b = stats.pairwise_bootstrap(D, reps=500, seed=4)
    c = stats.pairwise_bootstrap(D, reps=500, seed=5)
    assert np.array_equal(a.p, b.p) and np.array_equal(a.ci_low, b.ci_low)
    assert not np.array_equal(a.p, c.p)
    # each row tested alone gets the same resamples, hence the same ASL
    assert stats.pairwise_bootstrap(D[3], reps=500, seed=4).p == a.p[3]
    assert np.all(a.ci_low <= a.diff) and np.all(a.diff <= a.ci_high)


def test_bootstrap_degenerate_differences():
    assert stats.pairwise_bootstrap(np.zeros(6), reps=200).p == 1.0
    assert stats.pairwise_bootstrap(np.full(6, 0.2), reps=200).p == 0.0


def test_bootstrap_interval_is_the_percentile_interval():
    d = np.random.default_rng(9).normal(0.1, 0.2, size=30)
    reps = 2000
    counts = np.random.default_rng(0).multinomial(30, np.full(30, 1 / 30), size=reps)
    means = counts @ d / 30
    res = stats.pairwise_bootstrap(d, reps=reps, seed=0)
    assert (res.ci_low, res.ci_high) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])), rel=1e-9)


# --------------------------------------------------------------------------- corrections

def test_corrections_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    assert stats.adjust(p, "none") == pytest.approx(p)
    assert stats.adjust(p, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.02])
    # Holm: sorted 0.005 .01 .03 .04 times 4 3 2 1 = .02 .03 .06 .04, running max .02 .03 .06 .06
    assert stats.adjust(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: sorted p * 4/rank = .02 .02 .04 .04, running min from the top
    assert stats.adjust(p, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert stats.adjust([0.5, 0.9], "bonferroni") == pytest.approx([1.0, 1.0])


def test_corrections_skip_nan():
    out = stats.adjust([0.01, float("nan"), 0.02], "bonferroni")
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)
    with pytest.raises(ValueError):
        stats.adjust([0.1], "sidak")


# --------------------------------------------------------------------------- rankings, PAD, swaps

def test_kendall_tau_equals_scipy_and_tau_a_without_ties():
    rng = np.random.default_rng(2)
    for _ in range(20):
        a, b = rng.random(8), rng.random(8)
        i, j = np.triu_indices(8, 1)
        disc = np.sum(np.sign(a[i] - a[j]) != np.sign(b[i] - b[j]))
        assert stats.kendall_tau(a, b) == pytest.approx(1 - 2 * disc / 28)
        assert stats.kendall_tau(a, b) == pytest.approx(sps.kendalltau(a, b).statistic)
    tied = [0.1, 0.1, 0.3, 0.2]
    assert stats.kendall_tau(tied, [1, 2, 3, 4]) == pytest.approx(sps.kendalltau(tied, [1, 2, 3, 4]).statistic)


def test_pad_by_hand():
    # pairs (.2,.4): 50%, (.2,.1): 50%, (.4,.1): 75%
    assert stats.pad([0.2, 0.4, 0.1]) == pytest.approx(175 / 3)
    assert stats.pad([-0.1, 0.1]) == pytest.approx(200.0)  # below-random means divide by |max|
    assert stats.pad([0.0, 0.0, 0.5]) == pytest.approx(100.0)  # the 0/0 pair is left out


def test_split_half_swap_rate_by_hand_and_seeded():
    # two systems, d = (1, 1, -1, -1): a split swaps iff a half holds both +1 (or both -1),
    # i.e. 2 of the C(4,2) = 6 equally likely halves
    Y = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
    rate = stats.split_half_swap_rate(Y, trials=20_000, seed=0)
    assert abs(rate - 1 / 3) < 4 * math.sqrt(2 / 9 / 20_000)
    assert stats.split_half_swap_rate(Y, trials=500, seed=3) == stats.split_half_swap_rate(Y, trials=500, seed=3)
    # a system better on every query never swaps
    assert stats.split_half_swap_rate(np.array([[0.5, 0.6, 0.7, 0.9], [0.1, 0.2, 0.3, 0.4]]), 200) == 0.0
    with pytest.raises(ValueError):
        stats.split_half_swap_rate(Y, half=3)


def _swap_rate_by_pairs(Y, trials, seed, half=None):
    """The definition, pair by pair: the same seeded splits, d1 d2 < 0 for each (split, pair)."""
    n = Y.shape[1]
    half = n // 2 if half is None else half
    perm = np.argsort(np.random.default_rng(seed).random((trials, n)), axis=1)
    swaps = 0
    for t in range(trials):
        h1, h2 = perm[t, :half], perm[t, half:2 * half]
        for i in range(len(Y)):
            for j in range(i + 1, len(Y)):
                d1 = Y[i, h1].mean() - Y[j, h1].mean()
                d2 = Y[i, h2].mean() - Y[j, h2].mean()
                swaps += (d1 * d2 < 0) and abs(d1) > 1e-12 and abs(d2) > 1e-12
    return swaps / (trials * len(Y) * (len(Y) - 1) // 2)


def test_split_half_swap_rate_equals_the_pairwise_definition():
    """Per-system half means (memory linear in systems) count the same swaps as the pairs x trials
    differences, on scores with ties (grades in steps of 1/4: exact sums) and without."""
    rng = np.random.default_rng(5)
    for Y in (rng.random((7, 9)), rng.integers(0, 5, (8, 10)) / 4.0, np.round(rng.random((6, 8)), 1)):
        for half in (None, 2):
            assert stats.split_half_swap_rate(Y, trials=60, seed=2, half=half) == _swap_rate_by_pairs(Y, 60, 2, half)
    # identical systems never swap
    Y = rng.random((2, 12))
    Y[1] = Y[0]
    assert stats.split_half_swap_rate(Y, trials=50) == 0.0


def test_discordant_pairs_equal_brute_force():
    """_discordant counts the pairs two rankings order oppositely (ties in either never count): it equals
    a loop over the pairs, on whole numbers with many ties (as split_half_swap_rate's grid gives them)
    and nearly none."""
    import itertools

    rng = np.random.default_rng(17)
    for n, trials, top in ((2, 3, 2), (5, 40, 3), (9, 25, 10**12), (30, 12, 4), (41, 7, 10**6)):
        A = rng.integers(-top, top + 1, (trials, n)).astype(np.float64)
        B = rng.integers(-top, top + 1, (trials, n)).astype(np.float64)
        B[:, : n // 2] = A[:, : n // 2]  # concordant pairs too
        brute = sum(int((A[t, i] - A[t, j]) * (B[t, i] - B[t, j]) < 0)
                    for t in range(trials) for i, j in itertools.combinations(range(n), 2))
        assert stats._discordant(A, B) == brute, n  # private: the counting kernel against brute force


# --------------------------------------------------------------------------- generalizability theory

Y_HAND = [[0.50, 0.30, 0.70, 0.20],
          [0.60, 0.35, 0.80, 0.40],
          [0.40, 0.10, 0.65, 0.30]]


def _anova_fractions(Y):
    """The two-way ANOVA mean squares with exact fractions and plain loops (no numpy)."""
    Y = [[Fraction(str(v)) for v in row] for row in Y]
    ns, nt = len(Y), len(Y[0])
    grand = sum(map(sum, Y)) / (ns * nt)
    ms = [sum(r) / nt for r in Y]
    mt = [sum(Y[s][t] for s in range(ns)) / ns for t in range(nt)]
    ss_s = nt * sum((m - grand) ** 2 for m in ms)
    ss_t = ns * sum((m - grand) ** 2 for m in mt)
    ss_e = sum((Y[s][t] - ms[s] - mt[t] + grand) ** 2 for s in range(ns) for t in range(nt))
    ss_total = sum((Y[s][t] - grand) ** 2 for s in range(ns) for t in range(nt))
    assert ss_total == ss_s + ss_t + ss_e
    return ss_s / (ns - 1), ss_t / (nt - 1), ss_e / ((ns - 1) * (nt - 1))


def test_variance_components_hand_worked_anova():
    MSs, MSt, MSe = _anova_fractions(Y_HAND)
    # by hand: system means .425 .5375 .3625, grand mean .4417; MS_s = 4 * 0.0157292 / 2
    assert float(MSs) == pytest.approx(0.031458333, abs=1e-9)
    assert float(MSt) == pytest.approx(0.135833333, abs=1e-9)
    assert float(MSe) == pytest.approx(0.003958333, abs=1e-9)
    vc = stats.variance_components(Y_HAND)
    assert (vc.ms_system, vc.ms_topic, vc.ms_residual) == pytest.approx((float(MSs), float(MSt), float(MSe)))
    assert vc.system == pytest.approx(float((MSs - MSe) / 4))  # (MS_s - MS_st) / n_t
    assert vc.topic == pytest.approx(float((MSt - MSe) / 3))  # (MS_t - MS_st) / n_s
    assert vc.residual == pytest.approx(float(MSe))


def test_variance_components_clip_negative_estimates():
    # identical systems: MS_s = 0 < MS_st, so sigma^2(s) would be negative
    Y = [[0.1, 0.5, 0.3], [0.1, 0.5, 0.3], [0.2, 0.4, 0.3]]
    vc = stats.variance_components(Y)
    assert vc.system == 0.0 and stats.phi(vc) == 0.0 and stats.topics_needed(vc) == math.inf


def test_erho2_phi_follow_kanoulas_aslam_2009_equations():
    vc = stats.variance_components(Y_HAND)
    s, t, e = vc.system, vc.topic, vc.residual
    for n in (1, 4, 50, 133):
        assert stats.erho2(vc, n) == pytest.approx(s / (s + e / n))  # eq. 1
        assert stats.phi(vc, n) == pytest.approx(s / (s + (t + e) / n))  # eq. 2
        assert stats.phi(vc, n) <= stats.erho2(vc, n)
    assert stats.phi(vc) == stats.phi(vc, 4)  # default: the topics the components came from
    assert round(stats.erho2(vc, 4), 4) == 0.8742 and round(stats.phi(vc, 4), 4) == 0.3646
    assert round(stats.phi(vc, 50), 4) == 0.8777


def test_topics_needed_is_the_smallest_sufficient_topic_count():
    vc = stats.variance_components(Y_HAND)
    for target in (0.5, 0.9, 0.95):
        n = stats.topics_needed(vc, target)
        assert stats.phi(vc, n) >= target and (n == 1 or stats.phi(vc, n - 1) < target)
    assert stats.topics_needed(vc, 0.95) == 133
    # Kanoulas & Aslam 2009's own numbers are consistent: n* topics for P = 0.9 means Phi(50) = 50r/(1+50r)
    n_star, target = 104, 0.9  # TREC 12, Zipfian discount (Table 1)
    r = target / ((1 - target) * n_star)
    synthetic = stats.VarianceComponents(system=r, topic=0.6, residual=0.4, n_topics=50, ms_system=0, ms_topic=0,
                                         ms_residual=0)  # sigma^2(t)+sigma^2(st) = 1
    assert stats.topics_needed(synthetic, target) == n_star
    assert stats.phi(synthetic, 50) == pytest.approx(0.812, abs=5e-4)


def test_identical_systems_have_no_system_variance_whatever_the_rounding():
    """Two runs with the same scores: the row means differ from the grand mean only by rounding
    (~1e-17), which once gave sigma^2(s) ~ 1e-33 against a residual of the same size, i.e. an
    Erho^2 of 0.98 for systems that cannot be told apart."""
    rng = np.random.default_rng(5)
    row = rng.random(51) * 0.3 - 0.35  # UL2-like values, negative, with inexact binary fractions
    Y = np.vstack([row, row])
    vc = stats.variance_components(Y)
    assert vc.system == 0.0 and vc.residual == 0.0
    assert stats.erho2(vc) == 0.0 and stats.phi(vc) == 0.0
    # a real, small difference still counts
    Y2 = np.vstack([row, row + 1e-4 * rng.random(51)])
    assert stats.variance_components(Y2).system > 0


# --------------------------------------------------------------------------- Wilcoxon

def test_wilcoxon_p_values_are_scipys_pair_by_pair():
    """Exact (small n, no ties), normal approximation (ties, zeros, n > 50) and a constant row: each pair's
    p and statistic are scipy.stats.wilcoxon's on that pair alone; all zeros: p = 1."""
    rng = np.random.default_rng(11)
    for D in (rng.normal(0.05, 0.2, (6, 12)), np.round(rng.normal(0, 0.3, (5, 30)), 1),
              rng.normal(0.02, 0.1, (4, 80)), np.vstack([np.zeros(9), np.full(9, 0.3), rng.normal(size=9)])):
        res = stats.pairwise_wilcoxon(D)
        for k, d in enumerate(D):
            if not d.any():
                assert res.p[k] == 1.0 and res.statistic[k] == 0.0
                continue
            ref = sps.wilcoxon(d)
            assert res.p[k] == pytest.approx(ref.pvalue, rel=1e-12)
            assert res.statistic[k] == ref.statistic


# --------------------------------------------------------------------------- Tukey HSD

def _brute_tukey(Y):
    """Every labelling of every topic (first topic included: (m!)^n), the largest difference of means
    for each; p of a pair = the share at least as large as the pair's |difference|."""
    m, n = Y.shape
    ranges = []
    for combo in itertools.product(itertools.permutations(range(m)), repeat=n):
        means = np.stack([Y[list(order), topic] for topic, order in enumerate(combo)], axis=1).mean(axis=1)
        ranges.append(means.max() - means.min())
    ranges = np.array(ranges)
    i, j = np.triu_indices(m, 1)
    return np.array([np.mean(ranges >= abs((Y[a] - Y[b]).mean()) - 1e-12) for a, b in zip(i, j)])


@pytest.mark.parametrize("shape", [(3, 3), (2, 6), (4, 2), (3, 4)])
def test_tukey_hsd_equals_enumeration_on_small_cases(shape):
    rng = np.random.default_rng(sum(shape))
    for Y in (rng.random(shape), rng.integers(0, 3, shape) / 2.0):  # with ties among the means
        null = stats.tukey_null(Y, reps=10_000)
        assert null[1]  # (m!)^(n-1) <= reps: every labelling once
        i, j, D = _pairs(Y)
        assert stats.pairwise_tukey(D, null).p == pytest.approx(_brute_tukey(Y), abs=1e-12)


def test_tukey_hsd_monte_carlo_is_seeded_and_close_to_exact():
    Y = np.random.default_rng(4).random((3, 7))  # 6^6 = 46,656 labellings
    exact = stats.pairwise_tukey(_pairs(Y)[2], stats.tukey_null(Y, reps=50_000)).p
    drawn = stats.tukey_null(Y, reps=20_000, seed=3)
    assert not drawn[1] and np.array_equal(drawn[0], stats.tukey_null(Y, reps=20_000, seed=3)[0])
    p = stats.pairwise_tukey(_pairs(Y)[2], drawn).p
    assert np.all(np.abs(p - exact) < 4 * np.sqrt(exact * (1 - exact) / 20_000) + 1 / 20_001)
    # never below the per-pair randomization test's p on the same pair: it is adjusted for all pairs
    assert np.all(p >= stats.pairwise_randomization(_pairs(Y)[2]).p - 0.02)


def test_tukey_hsd_family_wise_error_on_robust03_null_resamples(shared):
    """Robust 2003's 17 runs (AP per topic, 100 topics): each null resample permutes every topic's run
    labels, so no run differs from another; the share of resamples where Tukey HSD calls some pair
    significant at 0.05 is about 0.05 (benchmarks/tukey_fwer.py: more resamples, the figure in
    docs/comparing.md).  A per-pair test with no correction calls some pair of 136 in most of them."""
    import ulnorm_eval

    runs = sorted((shared / "robust03" / "runs").glob("input.*.gz"))
    result = ulnorm_eval.evaluate(shared / "robust03" / "qrels.txt", [str(r) for r in runs], ["AP"], variants=[])
    Y = np.array([np.asarray(rr.values[result.metrics[0]]) for rr in result.runs])
    rng = np.random.default_rng(2026)
    trials, errors, uncorrected = 300, 0, 0
    i, j = np.triu_indices(len(Y), 1)
    for trial in range(trials):
        Z = rng.permuted(Y, axis=0)
        p = stats.pairwise_tukey(Z[i] - Z[j], stats.tukey_null(Z, reps=400, seed=trial)).p
        errors += bool((p < 0.05).any())
        uncorrected += bool((stats.pairwise_t(Z[i] - Z[j]).p < 0.05).any())
    assert 0.015 <= errors / trials <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / trials)
    assert uncorrected / trials > 0.5


# --------------------------------------------------------------------------- tau_AP, tau's interval

def _brute_tau_ap(reference, compared):
    """Yilmaz, Aslam & Robertson 2008 eq. 2 read literally, item by item (ties as the docstring says)."""
    order = sorted(range(len(compared)), key=lambda item: -compared[item])  # stable: ties as given
    total = 0.0
    for rank in range(1, len(order)):
        item = order[rank]
        correct = sum(1.0 if reference[other] > reference[item] else 0.5 if reference[other] == reference[item] else 0.0
                      for other in order[:rank])
        total += correct / rank
    return 2.0 * total / (len(order) - 1) - 1.0


def test_tau_ap_equals_brute_force_on_random_orderings():
    rng = np.random.default_rng(8)
    for trial in range(300):
        n = int(rng.integers(2, 25))
        reference = rng.permutation(n).astype(float) if trial % 3 else rng.integers(0, 4, n).astype(float)
        compared = rng.permutation(n).astype(float) if trial % 2 else rng.integers(0, 5, n).astype(float)
        assert stats.tau_ap(reference, compared) == pytest.approx(_brute_tau_ap(reference, compared), abs=1e-12)
    assert stats.tau_ap([3, 2, 1], [3, 2, 1]) == 1.0 and stats.tau_ap([3, 2, 1], [1, 2, 3]) == -1.0
    # one swap costs more at the top than at the bottom (tau counts both alike)
    assert stats.tau_ap([4, 3, 2, 1], [3, 4, 2, 1]) < stats.tau_ap([4, 3, 2, 1], [4, 3, 1, 2])
    assert stats.kendall_tau([4, 3, 2, 1], [3, 4, 2, 1]) == stats.kendall_tau([4, 3, 2, 1], [4, 3, 1, 2])


def test_tau_interval_is_the_percentile_interval_of_resampled_taus():
    """Each resample's tau is scipy's between the two metrics' means over the drawn topics (a metric's
    left-out topics are left out of its means only), the interval the percentiles of those taus."""
    from ulnorm_eval.core.intervals import resample_counts

    rng = np.random.default_rng(6)
    first = rng.random((7, 30))
    second = first + rng.normal(0, 0.2, first.shape)
    kept = (np.ones(30, bool), rng.random(30) > 0.2)
    counts = resample_counts(30, 300, 5)
    taus = []
    for row in counts:
        a = (first * row).sum(axis=1) / row.sum()
        b = (second * row * kept[1]).sum(axis=1) / (row * kept[1]).sum()
        taus.append(sps.kendalltau(a, b).statistic)
    low, high = stats.tau_interval(first, second, kept, reps=300, seed=5, alpha=0.1)
    assert (low, high) == pytest.approx(tuple(np.quantile(taus, [0.05, 0.95])), abs=1e-12)
    assert stats.tau_interval(first, first, reps=200) == (1.0, 1.0)


def _t_cases():
    """200 matrices of paired differences: normal, rounded, many ties with constant rows, all pairs of 9 runs."""
    rng = np.random.default_rng(7)
    out = []
    for k in range(200):
        n = int(rng.integers(2, 120))
        kind = k % 4
        if kind == 0:
            d = rng.normal(size=(int(rng.integers(1, 40)), n))
        elif kind == 1:
            d = rng.random((int(rng.integers(1, 40)), n)).round(3) - rng.random((1, n)).round(3)
        elif kind == 2:
            d = rng.integers(0, 3, (int(rng.integers(1, 40)), n)) / 7.0  # many ties, constant rows
        else:
            y = rng.random((9, n))
            i, j = np.triu_indices(9, 1)
            d = y[i] - y[j]
        out.append(d)
    return out


def test_pairwise_t_equals_scipy_bit_for_bit():
    """The t statistics and p-values are scipy's to the bit; the interval is rebuilt from the sample standard
    deviation (scipy's ttest gives no interval to compare with)."""
    for d in _t_cases():
        res = stats.pairwise_t(d)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # scipy's note on constant rows
            ref = sps.ttest_1samp(d, 0.0, axis=-1)
        zero = np.all(d == 0, axis=-1)
        assert np.array_equal(res.statistic, np.where(zero, 0.0, ref.statistic), equal_nan=True)
        assert np.array_equal(res.p, np.where(zero, 1.0, ref.pvalue), equal_nan=True)
        n = d.shape[-1]
        sd = d.std(axis=-1, ddof=1)
        sd = np.where(sd <= 1e-12 * np.abs(d).max(axis=-1, initial=0.0), 0.0, sd)  # equal differences: sd 0
        half = sps.t.ppf(0.975, n - 1) * sd / np.sqrt(n)
        assert np.array_equal(res.ci_high - res.ci_low, (res.diff + half) - (res.diff - half))


def test_kendall_tau_equals_scipy():
    rng = np.random.default_rng(3)
    for k in range(300):
        n = int(rng.integers(2, 30))
        a = rng.integers(0, 1 + k % 7, n).astype(float) if k % 2 else rng.random(n)
        b = rng.integers(0, 1 + k % 5, n).astype(float) if k % 3 else rng.random(n)
        ref = float(sps.kendalltau(a, b).statistic)
        got = stats.kendall_tau(a, b)
        assert (np.isnan(ref) and np.isnan(got)) or got == round(ref, 12)
    assert stats.kendall_tau([1, 2, 3], [1, 2, 3]) == 1.0
    assert stats.kendall_tau([1, 2, 3], [3, 2, 1]) == -1.0
    # one discordant pair of three: (2 - 1) / 3
    assert stats.kendall_tau([1, 2, 3], [1, 3, 2]) == round(1 / 3, 12)
