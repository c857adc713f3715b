"""Expectations of trec_eval's measures (their records' expectation, or Monte Carlo) against brute force: the mean of
the native kernel over every permutation of small pools (relevant at several grades, judged
nonrelevant, pooled-unjudged and not-in-the-qrels documents, extra qrels documents outside the pool,
-l 1 and 2).  Closed forms must equal the mean over all n! orders to 1e-12; Monte Carlo estimates
must lie within 4 standard errors of it.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ulnorm_eval.core import expectations, registry
from ulnorm_eval.core.kernels import Judgements, Level, Ranking
from ulnorm_eval.core.measures import compute
from ulnorm_eval.core.measures.trec import judged_only
from ulnorm_eval.core.permutations import Keys, permutation_values
from ulnorm_eval.core.pools import Pool, judged_only_pool


def kernel(name, rk, J, L=1):
    return compute(rk, J, registry.parse(name).measure, Level(L))


def exact(name, pool, J, L=1):
    return expectations.expectation(pool, J, registry.parse(name).measure, Level(L))


def montecarlo(name, pool, J, reps, seed, L=1):
    vals = permutation_values(pool, J, registry.parse(name).measure, Level(L), reps, Keys(seed, J.qids))
    return vals.mean(axis=0), vals.std(axis=0, ddof=1) / np.sqrt(reps)


def make_case(seed: int):
    """A one-query pool of 3..7 documents and its qrels (pool's judged documents + 0..2 others)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8))
    kinds = rng.choice(["g0", "g1", "g2", "g3", "unj", "nonpool"], size=n, p=[.3, .25, .15, .1, .1, .1])
    grade = np.array([{"g0": 0, "g1": 1, "g2": 2, "g3": 3, "unj": -1, "nonpool": 0}[k] for k in kinds], float)
    judged = kinds != "nonpool"
    extra = rng.integers(0, 3, size=int(rng.integers(0, 3))).astype(float)  # judged, not in the pool
    jg = np.concatenate([grade[judged], extra])
    J = Judgements(["q"], np.zeros(len(jg), np.int64), np.sort(jg)[::-1].copy(), 3.0)
    pool = Pool(np.zeros(n, np.int64), grade, 1, judged)
    return pool, J


def all_orders(pool: Pool) -> Ranking:
    n = len(pool.row)
    perms = np.asarray(list(itertools.permutations(range(n))), dtype=np.int64)
    M = len(perms)
    return Ranking(np.repeat(np.arange(M), n), pool.grade[perms].ravel(), M, np.zeros(M, np.int64),
                   pool.judged[perms].ravel())


def exact_cases(n):
    ks = sorted({1, 3, n, n + 2})
    out = ["map", "gm_map", "Rprec", "recip_rank", "bpref", "gm_bpref", "infAP", "binG", "ndcg", "ndcg.1=3,2=9",
           "ndcg.0=-1,2=-2", "dcg", "dcg.0=-1,1=3",
           "rbp", "rbp.p=0.5", "rbp_resid", "rbp_resid.p=0.7", "Rndcg", "Rndcg.1=3,2=9", "Rndcg.0=1,2=-2",
           "ndcg_rel", "ndcg_rel.1=3,2=9", "ndcg_rel.0=1,2=5", "ndcg_rel.-2=0,1=0.5"]
    for k in ks:
        out += [f"{b}.{k}" for b in ("P", "recall", "relative_P", "success", "map_cut", "ndcg_cut")]
    out += [f"Rprec_mult.{x}" for x in (0.2, 0.4, 1.0, 2.0, 3.5)]
    return out


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("L", [1, 2])
def test_exact_expectations_equal_brute_force(seed, L):
    pool, J = make_case(seed)
    rk = all_orders(pool)
    cases = exact_cases(len(pool.row))
    trec_exact = {t.base for f in registry.FAMILIES.values() if f.bounds == "exact" for t in f.trec}
    assert trec_exact == {c.split(".")[0] for c in cases}  # every trec_eval family with a closed form
    for name in cases:
        brute = kernel(name, rk, J, L).mean()
        got = exact(name, pool, J, L)[0]
        assert got == pytest.approx(brute, rel=1e-12, abs=1e-12), (name, pool.grade, pool.judged, J.grade)


MC = ["iprec_at_recall.0.0", "iprec_at_recall.0.5", "11pt_avg", "G", "ndcg_rel.1=0.5,2=-1", "ndcg_rel.-1=2",
      "ERR@3", "ERR", "Compat", "map", "bpref"]


def test_montecarlo_within_4_se_of_brute_force():
    """Several queries at once (rows = query x repetition): every query's estimate within 4 SE."""
    cases = [make_case(s) for s in (3, 7, 11, 19, 23)]
    rows, grades, judged, jrow, jgrade = [], [], [], [], []
    for i, (p, J) in enumerate(cases):
        rows.append(np.full(len(p.row), i)), grades.append(p.grade), judged.append(p.judged)
        jrow.append(np.full(len(J.row), i)), jgrade.append(J.grade)
    pool = Pool(np.concatenate(rows), np.concatenate(grades), len(cases), np.concatenate(judged))
    Jall = Judgements([f"q{i}" for i in range(len(cases))], np.concatenate(jrow), np.concatenate(jgrade), 3.0)
    for name in MC:
        assert name in ("map", "bpref") or registry.parse_many(name)[0].measure.bounds == "montecarlo", name
        mean, se = montecarlo(name, pool, Jall, reps=4000, seed=5)
        for i, (p, J) in enumerate(cases):
            every = kernel(name, all_orders(p), J)
            assert abs(mean[i] - every.mean()) <= 4 * se[i] + 1e-12, (name, i, mean[i], every.mean(), se[i])
            assert se[i] > 0 or np.ptp(every) == 0


def test_ndcg_rel_closed_form_needs_its_condition():
    """E[ndcg_rel]'s closed form assumes the sum it averages is >= 0 and linear: a negative gain, or a
    positive one given to unpooled documents (level -1: more positive-gain documents than the ideal
    holds), breaks it, and the record leaves those measures to Monte Carlo (exact_for)."""
    from ulnorm_eval.core.measures.common import RandomPool
    from ulnorm_eval.core.measures.trec_gains import e_ndcg_rel

    off = 0
    for seed in range(40):
        pool, J = make_case(seed)
        rk = all_orders(pool)
        for name in ("ndcg_rel.1=0.5,2=-1", "ndcg_rel.-1=2"):
            m = registry.parse(name).measure
            assert m.bounds == "montecarlo"
            with pytest.raises(ValueError, match="no closed-form expectation"):
                exact(name, pool, J)
            forced = e_ndcg_rel(RandomPool(counted=pool, J=J, measure=m, rel=Level(1), gain=None))[0]
            off += abs(forced - kernel(name, rk, J).mean()) > 1e-6
    assert off >= 5  # the formula outside its condition is wrong on many of these pools


def test_infap_exact_on_a_large_pool_matches_montecarlo():
    """The hypergeometric sum on a 60-document pool with every kind of document, against 20,000 draws."""
    rng = np.random.default_rng(1)
    grade = rng.choice([0, 0, 0, 1, 2, -1], size=60).astype(float)
    judged = rng.random(60) > 0.15
    grade[~judged] = 0
    J = Judgements(["q"], np.zeros(int(judged.sum()), np.int64), np.sort(grade[judged])[::-1].copy(), 2.0)
    pool = Pool(np.zeros(60, np.int64), grade, 1, judged)
    mean, se = montecarlo("infAP", pool, J, reps=20000, seed=2)
    assert abs(mean[0] - exact("infAP", pool, J)[0]) <= 4 * se[0]


@pytest.mark.parametrize("K,W", [(0, 0), (0, 5), (6, 0), (3, 9), (9, 3), (14, 1), (1, 14), (20, 20), (27, 4)])
def test_reciprocal_rank_means_are_the_exact_sums(K, W):
    """E[1/X_s] for the (s+1)-th of K+1 judged documents among K+1+W shuffled, from E[infAP]'s
    recurrence (pivot, forward and backward steps), against the sum over every rank in rationals."""
    from fractions import Fraction
    from math import comb

    from ulnorm_eval.core.measures.trec_precision import reciprocal_rank_means

    n = K + 1 + W
    exact_means = [float(sum(Fraction(comb(x - 1, s) * comb(n - x, K - s), comb(n, K + 1) * x) for x in range(1, n + 1)))
                   for s in range(K + 1)]
    assert reciprocal_rank_means(K, W) == pytest.approx(exact_means, rel=1e-13, abs=0)


@pytest.mark.parametrize("seed", range(12))
def test_judged_only_bounds(seed):
    """-J: scoring the judged-only view of every permutation of the pool equals permuting the
    judged-only pool, so the closed forms apply to judged_only_pool(pool)."""
    pool, J = make_case(seed)
    rk = judged_only(all_orders(pool))
    jp = judged_only_pool(pool)
    if len(jp.row) == 0:
        return
    for name in ["map", "bpref", "infAP", "P.2", "success.2", "ndcg_cut.3", "rbp", "rbp_resid", "Rprec_mult.1.2"]:
        brute = kernel(name, rk, J).mean()
        assert exact(name, jp, J)[0] == pytest.approx(brute, rel=1e-12, abs=1e-12), name
