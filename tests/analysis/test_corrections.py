"""Every multiple-comparison correction `compare` offers, on real data, against implementations
that share no code with ``analysis.stats``: statsmodels' ``multipletests`` and the textbook loops below.

Robust 2003, all 17 runs (136 pairs per metric), 100 topics: the raw p-values of the t-test come from
scipy.stats.ttest_rel, so a wrong step-down factor, a wrong order or a missing running maximum in
``stats.adjust`` shows in ``p_adj`` and in ``significant``.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats as sps
from statsmodels.stats.multitest import multipletests

from ulnorm_eval import evaluate
from ulnorm_eval.analysis import stats
from ulnorm_eval.analysis.compare import compare

SM_METHOD = {"bonferroni": "bonferroni", "holm": "holm", "bh": "fdr_bh"}


def holm_by_hand(p):
    """Holm (1979): the i-th smallest p (1-based) times m - i + 1, capped at 1, then made non-decreasing."""
    m = len(p)
    order = sorted(range(m), key=lambda k: p[k])
    out, running = [0.0] * m, 0.0
    for i, k in enumerate(order, start=1):
        running = max(running, min(1.0, (m - i + 1) * p[k]))
        out[k] = running
    return out


def bh_by_hand(p):
    """Benjamini & Hochberg (1995): the i-th smallest p times m / i, made non-increasing from the largest."""
    m = len(p)
    order = sorted(range(m), key=lambda k: p[k])
    out, running = [0.0] * m, 1.0
    for i in range(m, 0, -1):
        k = order[i - 1]
        running = min(running, p[k] * m / i)
        out[k] = running
    return out


def bonferroni_by_hand(p):
    return [min(1.0, len(p) * x) for x in p]


BY_HAND = {"none": list, "bonferroni": bonferroni_by_hand, "holm": holm_by_hand, "bh": bh_by_hand}


@pytest.fixture(scope="module")
def robust(shared):
    d = shared / "robust03"
    runs = sorted(str(p) for p in (d / "runs").glob("input.*.gz"))
    assert len(runs) == 17
    return evaluate(str(d / "qrels.txt"), runs, ["AP", "nDCG@10"], variants=["UL2"])


def _pairs(cmp, metric):
    t = cmp.pairs[cmp.pairs["metric"] == metric]
    return t["run_a"].tolist(), t["run_b"].tolist(), t["p"].to_numpy(), t["p_adj"].to_numpy(), \
        t["significant"].to_numpy(dtype=bool)


@pytest.mark.parametrize("correction", stats.CORRECTIONS)
def test_t_test_corrections_on_robust03_match_statsmodels(robust, correction):
    cmp = compare(robust, correction=correction, swap_trials=10)
    names = [rr.name for rr in robust.runs]
    for m in robust.metrics:
        if m.variant in ("E", "IUB", "WLB"):
            continue
        a, b, p, p_adj, sig = _pairs(cmp, str(m))
        assert list(zip(a, b)) == list(itertools.combinations(names, 2)) and len(a) == 136
        vals = {rr.name: rr.values[m] for rr in robust.runs}
        raw = np.array([sps.ttest_rel(vals[x], vals[y]).pvalue for x, y in zip(a, b)])
        np.testing.assert_allclose(p, raw, rtol=1e-12, atol=0)
        expect = raw if correction == "none" else multipletests(raw, alpha=0.05, method=SM_METHOD[correction])[1]
        np.testing.assert_allclose(p_adj, expect, rtol=1e-12, atol=0)
        np.testing.assert_allclose(BY_HAND[correction](list(raw)), expect, rtol=1e-12, atol=0)
        assert (sig == (expect < 0.05)).all()
        if correction != "none":  # the data make the correction matter: some raw p < 0.05 are not significant
            assert ((raw < 0.05) & ~sig).any() and sig.any()


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_corrections_with_tied_p_values_match_statsmodels(robust, correction):
    """The randomization test's p-values tie a lot (counts over 10,000 flips, many at the floor 1/10,001)."""
    cmp = compare(robust, test="randomization", correction=correction, swap_trials=10)
    _, _, p, p_adj, sig = _pairs(cmp, "AP")
    assert len(np.unique(p)) < len(p) - 10
    expect = multipletests(p, alpha=0.05, method=SM_METHOD[correction])[1]
    np.testing.assert_allclose(p_adj, expect, rtol=1e-12, atol=0)
    np.testing.assert_allclose(BY_HAND[correction](list(p)), expect, rtol=1e-12, atol=0)
    assert (sig == (expect < 0.05)).all()


@pytest.mark.parametrize("correction", stats.CORRECTIONS)
def test_adjust_leaves_nan_out_of_the_family(correction):
    rng = np.random.default_rng(27)
    p = np.round(rng.random(40) ** 3, 3)  # rounded: ties
    p[[3, 17, 30]] = np.nan
    got = stats.adjust(p, correction)
    ok = ~np.isnan(p)
    assert np.isnan(got[~ok]).all()
    expect = p[ok] if correction == "none" else multipletests(p[ok], method=SM_METHOD[correction])[1]
    np.testing.assert_allclose(got[ok], expect, rtol=1e-12, atol=0)
